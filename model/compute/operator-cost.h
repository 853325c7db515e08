/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_OPERATOR_COST_H
#define RAPIDLLM_OPERATOR_COST_H

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief The part of the GPU that limits an operator: the level whose time is the longest.
 */
enum class BoundLevel
{
    COMPUTE, //!< tensor-core or CUDA-core arithmetic
    SMEM,    //!< shared-memory bandwidth of the SMs
    L2,      //!< L2 cache bandwidth
    HBM,     //!< device-memory bandwidth (or latency, for pipelines too shallow to hide it)
    LAUNCH   //!< the fixed per-kernel overhead exceeds every level's time
};

/** \return the lower-case name of \p level ("compute", "smem", "l2", "hbm", "launch") */
std::string ToString(BoundLevel level);

/**
 * \brief Prints the level's name (for logs and test messages).
 * \param os the stream
 * \param level the level
 * \return os
 */
std::ostream& operator<<(std::ostream& os, BoundLevel level);

/**
 * \ingroup rapid-llm
 * \brief The thread-block tiling of a tiled kernel: what the model (like cuBLAS's heuristic)
 * picked, so that a report can say why an operator takes the time it does.
 */
struct KernelTiling
{
    uint32_t blockM = 0;       //!< rows of the output tile one thread block computes
    uint32_t blockN = 0;       //!< columns of the output tile
    uint32_t blockK = 0;       //!< depth of one main-loop step (elements of K)
    uint32_t stages = 0;       //!< shared-memory pipeline depth (multi-stage cp.async / TMA)
    uint32_t splitK = 1;       //!< slices K is split into (partial sums reduced afterwards)
    uint32_t threads = 0;      //!< threads per block
    uint32_t blocksPerSm = 0;  //!< resident blocks per SM (occupancy)
    uint64_t smemPerBlock = 0; //!< shared memory per block, bytes
};

/**
 * \ingroup rapid-llm
 * \brief What one operator costs on one GPU, and why: its time, the work and traffic at each
 * level of the memory hierarchy, the level that bounds it and how well it uses the machine.
 */
struct OperatorCost
{
    std::string kind;         //!< "gemm", "attention_fwd", "rmsnorm", ...
    double timeS = 0;         //!< predicted kernel time, seconds (all kernels of the op)
    double flops = 0;         //!< useful floating-point operations
    double smemBytes = 0;     //!< shared-memory traffic (writes + reads)
    double l2Bytes = 0;       //!< L2 <-> SM traffic
    double hbmBytes = 0;      //!< device-memory traffic
    double computeTimeS = 0;  //!< arithmetic time, scheduled over waves
    double smemTimeS = 0;     //!< shared-memory time, scheduled over waves
    double l2TimeS = 0;       //!< L2 time
    double hbmTimeS = 0;      //!< device-memory time (bandwidth or latency limited)
    double overheadTimeS = 0; //!< launch, pipeline fill and epilogue time not overlapped
    BoundLevel bound = BoundLevel::COMPUTE; //!< the level with the longest time
    double utilization = 0;   //!< achieved FLOP/s over the peak of the unit used (tensor or vector)
    bool tensorCores = false; //!< whether the arithmetic runs on tensor cores
    KernelTiling tiling;      //!< the tiling chosen (zero for untiled elementwise kernels)
    uint64_t tiles = 0;       //!< thread blocks launched
    double waves = 0;         //!< tiles / (SMs x blocks per SM); the last wave may be partial
    uint32_t kernels = 1;     //!< kernels launched (2 for split-K with a separate reduction)
    double smUtilization = 0; //!< busy SM-time over available SM-time (wave quantization)
    double clockHz = 0;       //!< SM clock the kernel runs at (0: the GPU has no power model)
    double energyJ = 0;       //!< energy beyond the idle board's at its top clock (FLOPs, HBM
                              //!< bytes; less the idle power a power-limited clock saves), J
    double powerW = 0;        //!< board power while it runs (waiting idle + energy / time), W
    /**
     * Share of the time that grows as 1 / SMs when a concurrent kernel (a NCCL collective's
     * CTAs) holds some of the SMs: 1 for a kernel bound by its SMs' arithmetic or shared memory,
     * 0 for one bound by device memory (set by the workload's coster; 0 = not known)
     */
    double smScaling = 0;

    /** \return achieved FLOP/s (flops / timeS), 0 for a zero time */
    double FlopRate() const;

    /**
     * \return the slowest hardware level (compute, smem, l2 or hbm), ignoring the fixed
     * overhead: what limits the kernel's body even when \c bound is LAUNCH
     */
    BoundLevel SlowestLevel() const;
};

/**
 * \brief The cost of kernels run one after another (an operator that launches several): times,
 * work, traffic, compute, HBM and overhead times, energies and kernel counts summed in order;
 * clock and power are the time-weighted means of the parts'.
 * \param kind the operator's name
 * \param parts the kernels, in launch order
 * \return the sum (its bound, tiling and utilization are left at their defaults)
 */
OperatorCost Sequential(const std::string& kind, const std::vector<OperatorCost>& parts);

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_OPERATOR_COST_H
