/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_GPU_SPEC_H
#define RAPIDLLM_GPU_SPEC_H

#include "data-type.h"

#include <cstdint>
#include <map>
#include <string>

namespace ns3 {
namespace rapidllm {

class SpecReader;

/**
 * \ingroup rapid-llm
 * \brief Calibration of one GPU: the fraction of each peak that real kernels reach.
 *
 * One set per hardware preset, the same for every workload; each value's source is written next
 * to it in the preset file.
 */
struct GpuEfficiency
{
    double tensor = 1.0; //!< fraction of tensor-core peak a well-tiled GEMM main loop sustains
    double vector = 1.0; //!< fraction of the vector (CUDA-core) peak
    double hbm = 1.0;    //!< fraction of HBM bandwidth a streaming kernel sustains
    double l2 = 1.0;     //!< fraction of L2 bandwidth
    double smem = 1.0;   //!< fraction of shared-memory bandwidth
};

/**
 * \ingroup rapid-llm
 * \brief One GPU's compute and memory hierarchy, as the tile-based compute model needs it.
 */
struct GpuSpec
{
    std::string name;                       //!< marketing name, for reports
    uint32_t smCount = 0;                   //!< streaming multiprocessors
    double clockHz = 0;                     //!< SM clock used with the peak rates
    std::map<DataType, double> tensorFlops; //!< dense tensor-core FLOP/s of the whole GPU
    std::map<DataType, double> vectorFlops; //!< CUDA-core FLOP/s of the whole GPU
    uint32_t registersPerSm = 0;            //!< 32-bit registers per SM
    uint32_t maxThreadsPerSm = 0;           //!< resident threads per SM
    uint32_t maxBlocksPerSm = 0;            //!< resident thread blocks per SM
    uint64_t sharedMemoryPerSmBytes = 0;    //!< shared memory a kernel can use per SM
    uint64_t sharedMemoryPerBlockBytes = 0; //!< shared memory one block can use (opt-in)
    double smemBytesPerClockPerSm = 0;      //!< shared-memory bandwidth per SM per clock
    uint64_t l2Bytes = 0;                   //!< L2 cache size
    double l2BandwidthBps = 0;              //!< L2 bandwidth, bytes/s
    uint64_t hbmBytes = 0;                  //!< device memory size
    double hbmBandwidthBps = 0;             //!< device memory bandwidth, bytes/s
    double launchOverheadS = 0;             //!< per-kernel launch and tail overhead, seconds
    double memoryLatencyS = 0; //!< loaded device-memory access latency, seconds (optional key)
    uint32_t mmaTileM = 64;    //!< rows of C one warp (or warpgroup) computes from shared memory
    uint32_t mmaTileN = 64;    //!< columns of C one warp (or warpgroup) computes
    uint32_t clusterMulticast = 1; //!< GEMM blocks sharing one L2 read of a slab (TMA multicast)
    GpuEfficiency efficiency;      //!< calibration

    /** \return dense tensor-core FLOP/s for \p type, or 0 if the GPU has none */
    double TensorFlops(DataType type) const;
    /** \return vector FLOP/s for \p type (falls back to fp32) */
    double VectorFlops(DataType type) const;
    /**
     * \return the highest FLOP/s the GPU reaches in \p type, on tensor or vector units (fp32
     * also on TF32 tensor cores); its highest rate of any type when it lists none for \p type.
     * The bound no kernel or report may exceed.
     */
    double PeakFlops(DataType type) const;

    /**
     * \brief Reads the "gpu" mapping of a hardware file.
     * \param reader the mapping
     * \return the spec; throws SpecError on bad input
     */
    static GpuSpec Read(SpecReader& reader);
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_GPU_SPEC_H
