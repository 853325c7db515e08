/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_GPU_KERNEL_COMMON_H
#define RAPIDLLM_GPU_KERNEL_COMMON_H

#include "ns3/data-type.h"
#include "ns3/gpu-spec.h"
#include "operator-cost.h"

#include <algorithm>
#include <cstdint>
#include <limits>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief What every kernel model of the GPU compute model shares (GEMM, attention, decode
 * attention, element-wise): SM occupancy, the wave schedule of thread blocks over the SMs, the
 * bandwidth of each memory level, the matmul peak of a data type and the bounding level.
 *
 * One definition each, so that the kernel models count occupancy and traffic the same way.
 */
namespace kernel {

/** \return ceil(\p a / \p b) for positive integers */
inline uint64_t
CeilDiv(uint64_t a, uint64_t b)
{
    return (a + b - 1) / b;
}

/**
 * \brief Wave schedule of equal thread blocks over the SMs: full waves run \p perSm blocks on
 * every SM; the busiest SM of a partial last wave runs ceil(R / SMs) blocks.
 * \param tiles thread blocks
 * \param sms SMs
 * \param perSm resident blocks per SM
 * \param tileWork one block's time with the SM to itself
 * \return the time of the busiest SM
 */
inline double
WaveTime(uint64_t tiles, uint32_t sms, uint32_t perSm, double tileWork)
{
    uint64_t slots = uint64_t(sms) * perSm;
    uint64_t full = tiles / slots;
    uint64_t rest = tiles % slots;
    return (double(full) * perSm + double(CeilDiv(rest, sms))) * tileWork;
}

/**
 * \brief Occupancy: how many blocks of a kernel are resident on one SM, the least of what its
 * shared memory, registers, threads and block slots allow.
 * \param g the GPU
 * \param smemPerBlock shared memory of one block, bytes (at least 1)
 * \param registersPerThread 32-bit registers of one thread; 0 when registers do not limit it
 * \param threads threads per block
 * \return resident blocks per SM (0 if the block does not fit)
 */
inline uint32_t
BlocksPerSm(const GpuSpec& g, uint64_t smemPerBlock, uint32_t registersPerThread, uint32_t threads)
{
    const uint64_t bySmem = g.sharedMemoryPerSmBytes / smemPerBlock;
    const uint64_t byRegs = registersPerThread > 0
                                ? g.registersPerSm / (uint64_t(registersPerThread) * threads)
                                : std::numeric_limits<uint64_t>::max();
    const uint64_t byThreads = g.maxThreadsPerSm / threads;
    return static_cast<uint32_t>(
        std::min<uint64_t>({bySmem, byRegs, byThreads, uint64_t(g.maxBlocksPerSm)}));
}

/**
 * \brief The matmul peak of \p type: tensor cores if the GPU has them for the type, else the
 * CUDA cores' rate for a type the GPU lists.
 * \param g the GPU
 * \param type operand type
 * \param tensor set to whether the peak is the tensor cores'
 * \return FLOP/s of the whole GPU; throws SpecError when the GPU has no rate for the type
 */
double MatmulPeak(const GpuSpec& g, DataType type, bool& tensor);

/** \return one SM's calibrated matmul rate: \p peak / SMs x the tensor efficiency of \p type
 *  (or the vector efficiency) */
inline double
PerSmMatmulRate(const GpuSpec& g, double peak, bool tensor, DataType type)
{
    return peak / g.smCount * (tensor ? g.efficiency.Tensor(type) : g.efficiency.vector);
}

/**
 * CUDA-core operations that dequantize one element loaded in a narrower type (an fp8 or int8
 * KV cache, int4 weights): a conversion and a multiply by its scale (vLLM's scaled_convert in
 * its attention kernels; Marlin's unpack and scale of its weights).
 */
constexpr double kDequantizeOps = 2.0;

/** \return one SM's calibrated fp32 CUDA-core rate */
inline double
PerSmVectorRate(const GpuSpec& g)
{
    return g.VectorFlops(DataType::FP32) / g.smCount * g.efficiency.vector;
}

/** \return one SM's calibrated shared-memory bandwidth, bytes/s */
inline double
SmemRate(const GpuSpec& g)
{
    return g.smemBytesPerClockPerSm * g.clockHz * g.efficiency.smem;
}

/** \return the fraction of the SMs \p blocks thread blocks occupy (at most 1) */
inline double
SmShare(const GpuSpec& g, uint64_t blocks)
{
    return double(std::min<uint64_t>(blocks, g.smCount)) / g.smCount;
}

/**
 * \return the calibrated L2 bandwidth \p blocks thread blocks can draw: the SMs they occupy
 * (at most all) get their share of the L2
 */
inline double
L2Rate(const GpuSpec& g, uint64_t blocks)
{
    const double active = double(std::min<uint64_t>(blocks, g.smCount));
    return g.l2BandwidthBps * g.efficiency.l2 * active / g.smCount;
}

/**
 * \return the calibrated device-memory bandwidth seen through an L2 share of \p l2Rate (HBM
 * traffic passes the L2, so it is no faster)
 */
inline double
HbmRate(const GpuSpec& g, double l2Rate)
{
    return std::min(g.hbmBandwidthBps * g.efficiency.hbm, l2Rate);
}

/**
 * \brief Sets \p c.bound: the level with the longest time, or LAUNCH if the fixed overhead
 * exceeds every level's time.
 * \param c the cost
 */
void ApplyBound(OperatorCost& c);

} // namespace kernel
} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_GPU_KERNEL_COMMON_H
