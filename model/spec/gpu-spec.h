/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_GPU_SPEC_H
#define RAPIDLLM_GPU_SPEC_H

#include "data-type.h"
#include "dvfs-curve.h"
#include "host-spec.h"

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
    /** the same for 8-bit operands, fp8 and int8 (0: as tensor); Hopper's 8-bit main loop does
     *  twice the MMA work per step from the same slabs and issue slots, and issues at a lower
     *  fraction of its doubled peak than bf16 does of its own */
    double tensorFp8 = 0.0;
    double vector = 1.0; //!< fraction of the vector (CUDA-core) peak
    double hbm = 1.0;    //!< fraction of HBM bandwidth a streaming kernel sustains
    double l2 = 1.0;     //!< fraction of L2 bandwidth
    double smem = 1.0;   //!< fraction of shared-memory bandwidth

    /** \return the tensor-core main-loop efficiency for operands of \p type */
    double Tensor(DataType type) const;

    /** \return true when every field is equal */
    bool operator==(const GpuEfficiency& other) const;
};

/**
 * \ingroup rapid-llm
 * \brief Power and energy of one GPU: the board power limit that sets its clock under
 * sustained load, and the energy of each kind of work.
 *
 * Board power while a kernel runs is idle power plus dynamic power: energy per tensor or vector
 * FLOP (at the rated clock; it scales with the square of the clock, as CMOS switching energy
 * C V^2 does when the voltage follows the clock), plus energy per HBM byte. When that exceeds
 * the limit, the GPU lowers its clock until it does not (the power-limited sustained clock). The
 * idle power is the board's at the clock it runs at (lower under a clock lock or a power limit,
 * where a measured DVFS curve gives it).
 * Each value's source or derivation is written next to it in the preset file. A GPU without a
 * "power" section has no power model: kernels run at the rated clock and report no energy.
 */
struct GpuPower
{
    double boostClockHz = 0; //!< highest SM clock (0: no power model)
    double clockLockHz = 0;  //!< SM clock locked below the boost clock (nvidia-smi -lgc; 0: none)
    double limitW = 0;       //!< board power limit, W
    double idleW = 0;        //!< board power with no kernel running at the boost clock, W
    std::map<DataType, double> tensorJPerFlop; //!< tensor-core energy per FLOP at the rated clock
    double vectorJPerFlop = 0;  //!< CUDA-core fp32 energy per FLOP at the rated clock
    double hbmJPerByte = 0;     //!< energy per byte moved to or from HBM
    double nvlinkJPerByte = 0;  //!< energy per byte a GPU sends over NVLink
    double networkJPerByte = 0; //!< energy per byte a GPU sends over the network
    DvfsCurve dvfs;             //!< measured idle power per clock (empty: none)

    /** \return whether the GPU has a power model */
    bool
    Has() const
    {
        return boostClockHz > 0;
    }

    /** \return the highest clock a kernel runs at: the boost clock, or the lock below it */
    double
    TopClockHz() const
    {
        return clockLockHz > 0 && clockLockHz < boostClockHz ? clockLockHz : boostClockHz;
    }

    /**
     * \return the board power with no kernel running at \p clockHz: idleW (at the boost clock)
     * less the fall the DVFS curve measures from the boost clock to \p clockHz (without a curve,
     * idleW at every clock)
     */
    double IdleWAt(double clockHz) const;

    /** \return the power of the board waiting between kernels: idle at its top clock */
    double
    WaitingW() const
    {
        return IdleWAt(TopClockHz());
    }

    /** \return true when every field is equal */
    bool operator==(const GpuPower& other) const;
};

/**
 * \ingroup rapid-llm
 * \brief One GPU's compute and memory hierarchy, as the tile-based compute model needs it.
 */
struct GpuSpec
{
    std::string name; //!< marketing name, for reports
    /** The hardware file (or preset) it was read from, for errors; not compared (==) */
    std::string source;
    uint32_t smCount = 0;                   //!< streaming multiprocessors
    double clockHz = 0;                     //!< SM clock the peak rates are quoted at
    std::map<DataType, double> tensorFlops; //!< dense tensor-core FLOP/s of the whole GPU
    std::map<DataType, double> vectorFlops; //!< CUDA-core FLOP/s of the whole GPU
    uint32_t registersPerSm = 0;            //!< 32-bit registers per SM
    uint32_t maxThreadsPerSm = 0;           //!< resident threads per SM
    uint32_t maxBlocksPerSm = 0;            //!< resident thread blocks per SM
    uint64_t sharedMemoryPerSmBytes = 0;    //!< shared memory a kernel can use per SM
    uint64_t sharedMemoryPerBlockBytes = 0; //!< shared memory one block can use (opt-in)
    double smemBytesPerClockPerSm = 0;      //!< shared-memory bandwidth per SM per clock
    uint32_t sfuOpsPerClockPerSm = 0;       //!< special-function results (exp2) per SM per clock
                                            //!< (optional; 0: not given)
    uint64_t l2Bytes = 0;                   //!< L2 cache size
    double l2BandwidthBps = 0;              //!< L2 bandwidth, bytes/s
    uint64_t hbmBytes = 0;                  //!< device memory size
    double hbmBandwidthBps = 0;             //!< device memory bandwidth, bytes/s
    double launchOverheadS = 0;             //!< per-kernel launch and tail overhead, seconds
    double memoryLatencyS = 0; //!< loaded device-memory access latency, seconds (optional key)
    uint32_t mmaTileM = 64;    //!< rows of C one warp (or warpgroup) computes from shared memory
    uint32_t mmaTileN = 64;    //!< columns of C one warp (or warpgroup) computes
    uint32_t clusterMulticast = 1; //!< GEMM blocks sharing one L2 read of a slab (TMA multicast)
    double ratedClockHz = 0;       //!< the clock the rates are quoted at (clockHz after AtClock)
    bool warpSpecialized = false;  //!< GEMM kernels are warp-specialized (Hopper): the next tile
                                   //!< loads during the epilogue, C leaves by async TMA store
    double mmaSyncFraction = 1.0;  //!< share of the dense tensor peak that warp-level mma.sync
                                   //!< reaches (Hopper's full rate needs warpgroup wgmma)
    GpuEfficiency efficiency;      //!< calibration
    GpuPower power;                //!< power model (optional)
    HostSpec host;                 //!< the host thread that issues its kernels (optional)

    /** \return dense tensor-core FLOP/s for \p type (int4: fp16's, MmaTypeOf), or 0 if none */
    double TensorFlops(DataType type) const;

    /** \return what an error about this GPU names: its file (or preset), else its name */
    const std::string& Origin() const;
    /** \return vector FLOP/s for \p type (falls back to fp32) */
    double VectorFlops(DataType type) const;
    /**
     * \return whether the GPU lists a rate (tensor or vector) for the multiplies of \p type
     * (MmaTypeOf): a GEMM in it can run (an A100 has no fp8 rate)
     */
    bool Runs(DataType type) const;
    /**
     * \return a note that GEMMs in \p type run on the CUDA cores, where the GPU runs the type
     * but lists no tensor rate for it ("" otherwise): a prediction 9x slower than a tensor-core
     * one is said, not left to look like a slow tensor core
     */
    std::string CudaCoreNote(DataType type) const;
    /** \return "fp32, tf32, fp16, bf16, int8": the types the GPU lists a rate for */
    std::string ListedTypes() const;
    /**
     * \return the highest FLOP/s the GPU reaches in \p type, on tensor or vector units (fp32
     * also on TF32 tensor cores); its highest rate of any type when it lists none for \p type.
     * The bound no kernel or report may exceed.
     */
    double PeakFlops(DataType type) const;

    /**
     * \return tensor-core energy per FLOP of \p type (int4: fp16's, MmaTypeOf) at the rated clock:
     * the listed value, or for an unlisted type with a tensor rate, fp16's (else bf16's) scaled by
     * the ratio of the two peaks (equal tensor-core power at each type's peak); 0 without a power
     * model
     */
    double TensorJoulesPerFlop(DataType type) const;

    /**
     * \brief The same GPU with its SM clock at \p clockHz: tensor and vector rates and the L2
     * bandwidth (quoted at the rated clock) scale with the clock; HBM, latencies and launch
     * overhead do not.
     * \param clockHz the SM clock
     * \return the GPU at that clock
     */
    GpuSpec AtClock(double clockHz) const;

    /**
     * \brief Reads the "gpu" mapping of a hardware file.
     * \param reader the mapping
     * \return the spec; throws SpecError on bad input
     */
    static GpuSpec Read(SpecReader& reader);

    /** \return true when every field is equal (add new fields to it) */
    bool operator==(const GpuSpec& other) const;
    /** \return true when a field differs */
    bool operator!=(const GpuSpec& other) const;
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_GPU_SPEC_H
