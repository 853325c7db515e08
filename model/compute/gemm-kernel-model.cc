/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "gemm-kernel-model.h"

#include "gpu-kernel-common.h"
#include "ns3/log.h"
#include "ns3/spec-error.h"

#include <algorithm>
#include <cmath>

namespace ns3 {
namespace rapidllm {
namespace kernel {

NS_LOG_COMPONENT_DEFINE("RapidLlmGemmKernelModel");

namespace {

/** The numbers of one evaluated GEMM tiling (a POD, cheap to copy during the search). */
struct GemmEval
{
    double timeS = 0;         //!< total time
    double smemBytes = 0;     //!< shared-memory bytes
    double l2Bytes = 0;       //!< L2 bytes
    double hbmBytes = 0;      //!< HBM bytes
    double computeTimeS = 0;  //!< compute time
    double smemTimeS = 0;     //!< shared-memory time
    double l2TimeS = 0;       //!< L2 time
    double hbmTimeS = 0;      //!< HBM time
    double overheadTimeS = 0; //!< overhead
    KernelTiling tiling;      //!< the tiling with occupancy
    uint64_t tiles = 0;       //!< blocks
    double waves = 0;         //!< waves
    uint32_t kernels = 1;     //!< kernels
    double smUtilization = 0; //!< SM utilization
};

/**
 * Evaluates one GEMM tiling on \p g at the matmul rate \p peak (tensor cores if \p tensor);
 * returns false if the tiling does not fit an SM. Fills a POD so that the search over
 * candidates does no allocation.
 */
bool
EvaluateGemmTiling(const GpuSpec& g,
                   double peak,
                   bool tensor,
                   uint64_t m,
                   uint64_t n,
                   uint64_t k,
                   DataType type,
                   uint64_t batch,
                   KernelTiling t,
                   GemmEval& c)
{
    const GpuEfficiency& e = g.efficiency;
    // A and C in the multiply's type; B, the weights, in their own (int4: half a byte and the
    // group scales, dequantized in registers after the load).
    const DataType mma = MmaTypeOf(type);
    const double b = BytesOf(mma);
    const double bw = WeightBytesOf(type);
    const uint32_t sms = g.smCount;
    if (t.blockM == 0 || t.blockN == 0 || t.blockK == 0 || t.stages < 2 || t.splitK == 0)
    {
        return false;
    }

    // Occupancy: shared memory (the multi-stage operand buffers), registers (fp32 accumulators
    // plus fragments and addresses), threads and the block limit.
    t.smemPerBlock =
        uint64_t(std::ceil((t.blockM * b + t.blockN * bw) * t.blockK)) * uint64_t(t.stages);
    if (t.smemPerBlock > g.sharedMemoryPerBlockBytes)
    {
        return false;
    }
    t.threads = std::clamp<uint32_t>(t.blockM * t.blockN / 64, 128, 256);
    uint32_t regs = CeilDiv(uint64_t(t.blockM) * t.blockN, t.threads) + 64;
    if (regs > 255)
    {
        return false;
    }
    t.blocksPerSm = BlocksPerSm(g, t.smemPerBlock, regs, t.threads);
    if (t.blocksPerSm == 0)
    {
        return false;
    }

    const double perSmRate = PerSmMatmulRate(g, peak, tensor, mma);
    const double smemRate = SmemRate(g);
    const double latency = g.memoryLatencyS;

    const uint64_t kSlice = CeilDiv(k, t.splitK);
    const uint64_t kIters = CeilDiv(kSlice, t.blockK);
    const uint64_t tm = CeilDiv(m, t.blockM);
    const uint64_t tn = CeilDiv(n, t.blockN);
    const uint64_t tiles = tm * tn * batch * t.splitK;
    const uint64_t slots = uint64_t(sms) * t.blocksPerSm;

    // One main-loop step of one block: MMA time, and shared-memory traffic: the A and B slabs
    // written once (cp.async/TMA) and read by every warp (or warpgroup) that needs them.
    const double stepFlops = 2.0 * t.blockM * t.blockN * t.blockK;
    // Weight-only int4: the block dequantizes its B slab on the CUDA cores, beside the tensor
    // cores' MMAs (Marlin, Frantar et al. 2024, overlaps the two).
    const double dequantStep =
        IsWeightOnly(type) ? kDequantizeOps * t.blockN * t.blockK / PerSmVectorRate(g) : 0.0;
    const double cStep = std::max(stepFlops / perSmRate, dequantStep);
    const uint32_t wm = std::min(t.blockM, g.mmaTileM);
    const uint32_t wn = std::min(t.blockN, g.mmaTileN);
    const double aSlab = double(t.blockM) * t.blockK * b;
    const double bSlab = double(t.blockN) * t.blockK * bw;
    const double smemStep =
        aSlab + bSlab + aSlab * CeilDiv(t.blockN, wn) + bSlab * CeilDiv(t.blockM, wm);
    const double sStep = smemStep / smemRate;

    // Wave schedule. A block's step cannot be shorter than the memory latency divided by the
    // loads in flight ((stages - 1) per block): Little's law for the software pipeline.
    const uint64_t full = tiles / slots;
    const uint64_t rest = tiles % slots;
    const uint64_t lastPerSm = CeilDiv(rest, sms);
    const double x = std::max(cStep, sStep);
    const double fill = latency / (t.stages - 1);
    double tSm = double(full) * kIters * std::max(t.blocksPerSm * x, fill);
    if (rest > 0)
    {
        tSm += double(kIters) * std::max(lastPerSm * x, fill);
    }
    const double tCompute = WaveTime(tiles, sms, t.blocksPerSm, kIters * cStep);
    const double tSmem = WaveTime(tiles, sms, t.blocksPerSm, kIters * sStep);

    // L2 <-> SM traffic: every tile streams its A and B slabs; C (or fp32 partials) written.
    // With thread-block clusters (Hopper), TMA multicasts the larger slab from one L2 read to
    // the cluster's blocks that share it.
    const double partials = t.splitK > 1 ? double(m) * n * batch * t.splitK * 4.0 : 0.0;
    // fp8 GEMMs take fp8 A and B and write a 16-bit C (cuBLASLt's fp8 kernels; Transformer
    // Engine asks for bf16 outputs); int4 ones write the activations' fp16.
    const double cb = type == DataType::FP8 ? 2.0 : b;
    const double cBytes = double(m) * n * batch * cb;
    const double shared = std::max(aSlab, bSlab);
    const double l2Step = aSlab + bSlab - shared * (1.0 - 1.0 / g.clusterMulticast);
    const double l2Bytes = double(tiles) * kIters * l2Step + (t.splitK > 1 ? partials : cBytes);
    const double l2Rate = L2Rate(g, tiles);
    const double tL2 = l2Bytes / l2Rate;

    // HBM traffic: compulsory A, B, C, plus re-reads when the operands do not stay in L2. The
    // blocks in flight cover a near-square patch of r x c tiles (swizzled raster); A's row
    // panels are reused across a sweep if they fit in half the L2, else re-read per sweep.
    const double aOne = double(m) * k * b;
    const double bOne = double(k) * n * bw;
    const double l2Half = 0.5 * double(g.l2Bytes);
    double aReads = 1;
    double bReads = 1;
    if (aOne + bOne > l2Half)
    {
        uint64_t inFlight = std::min<uint64_t>(tm * tn, slots);
        uint64_t r =
            std::min<uint64_t>(tm, std::max<uint64_t>(1, uint64_t(std::sqrt(double(inFlight)))));
        uint64_t cc = std::min<uint64_t>(tn, std::max<uint64_t>(1, CeilDiv(inFlight, r)));
        aReads = double(r) * t.blockM * k * b <= l2Half ? 1.0 : double(CeilDiv(tn, cc));
        bReads = bOne <= l2Half ? 1.0 : double(CeilDiv(tm, r));
    }
    double hbmBytes = (aOne * aReads + bOne * bReads) * batch + (t.splitK > 1 ? partials : cBytes);
    const double hbmRate = HbmRate(g, l2Rate);
    double tHbm = hbmBytes / hbmRate;

    // Not overlapped with the main loop, per wave: the first loads' latency (pipeline fill),
    // staging the fp32 accumulators through shared memory, and the burst of C stores. The
    // stores land in the L2 (write-back: one wave's C tiles are a fraction of it) at the L2
    // rate; their HBM write is part of the compulsory HBM traffic, overlapped with the next
    // waves. In warp-specialized kernels (Hopper) a producer warp loads the next tile's operands
    // while the consumer warp groups run the epilogue, so the pipeline fill is paid once per
    // kernel, and the C tile leaves shared memory by an asynchronous TMA store that overlaps the
    // next tile: only staging the accumulators stops the tensor cores once per wave. On Ampere
    // the block writes C through the SM's load/store path before it retires.
    const uint64_t waves = CeilDiv(tiles, slots);
    const double outBytes = t.splitK > 1 ? 4.0 : cb;
    const double concurrent = double(std::min<uint64_t>(tiles, slots));
    // An SM stages the accumulators of the blocks it holds in each wave: blocksPerSm in a full
    // wave, fewer in a last one that does not fill the GPU (slots no block takes cost nothing).
    const double staging =
        2.0 * double(full * t.blocksPerSm + lastPerSm) * t.blockM * t.blockN * 4.0 / smemRate;
    const double burst = concurrent * t.blockM * t.blockN * outBytes / l2Rate;
    double overhead = g.launchOverheadS + staging
                      + (g.warpSpecialized ? latency : double(waves) * (latency + burst));

    uint32_t kernels = 1;
    if (t.splitK > 1)
    {
        // A separate reduction kernel reads the fp32 partials and writes C.
        double bytes = partials + cBytes;
        hbmBytes += bytes;
        double tReduce = bytes / (g.hbmBandwidthBps * e.hbm);
        tHbm += tReduce;
        overhead += g.launchOverheadS + latency;
        kernels = 2;
    }

    double body = std::max({tSm, tL2, tHbm});
    c.timeS = overhead + body;
    c.smemBytes = double(tiles) * kIters * smemStep;
    c.l2Bytes = l2Bytes;
    c.hbmBytes = hbmBytes;
    c.computeTimeS = tCompute;
    c.smemTimeS = tSmem;
    c.l2TimeS = tL2;
    // A pipeline too shallow for the latency waits on memory: charge that wait to HBM.
    c.hbmTimeS = tSm > std::max(tCompute, tSmem) * (1 + 1e-9) ? std::max(tHbm, tSm) : tHbm;
    c.overheadTimeS = overhead;
    c.tiling = t;
    c.tiles = tiles;
    c.waves = double(tiles) / double(slots);
    c.kernels = kernels;
    c.smUtilization = tCompute > 0 ? double(tiles) * kIters * cStep / (sms * tCompute) : 0.0;
    return true;
}

/** Fills an OperatorCost from an evaluated GEMM tiling. */
void
FillGemmCost(uint64_t m,
             uint64_t n,
             uint64_t k,
             uint64_t batch,
             double peak,
             bool tensor,
             const GemmEval& e,
             OperatorCost& c)
{
    c.kind = "gemm";
    c.timeS = e.timeS;
    c.flops = 2.0 * m * n * k * batch;
    c.smemBytes = e.smemBytes;
    c.l2Bytes = e.l2Bytes;
    c.hbmBytes = e.hbmBytes;
    c.computeTimeS = e.computeTimeS;
    c.smemTimeS = e.smemTimeS;
    c.l2TimeS = e.l2TimeS;
    c.hbmTimeS = e.hbmTimeS;
    c.overheadTimeS = e.overheadTimeS;
    c.tensorCores = tensor;
    c.utilization = c.flops / c.timeS / peak;
    c.tiling = e.tiling;
    c.tiles = e.tiles;
    c.waves = e.waves;
    c.kernels = e.kernels;
    c.smUtilization = e.smUtilization;
    ApplyBound(c);
}

} // namespace

bool
GemmCostWithTiling(const GpuSpec& g,
                   uint64_t m,
                   uint64_t n,
                   uint64_t k,
                   DataType type,
                   uint64_t batch,
                   const KernelTiling& tiling,
                   OperatorCost& cost)
{
    bool tensor = false;
    const double peak = MatmulPeak(g, MmaTypeOf(type), tensor);
    GemmEval e;
    if (!EvaluateGemmTiling(g, peak, tensor, m, n, k, type, batch, tiling, e))
    {
        return false;
    }
    FillGemmCost(m, n, k, batch, peak, tensor, e, cost);
    return true;
}

OperatorCost
BestGemmCost(const GpuSpec& g,
             uint64_t m,
             uint64_t n,
             uint64_t k,
             DataType type,
             uint64_t batch,
             const GemmSearchOptions& options)
{
    // Candidate tilings, in a fixed order (ties keep the first): block tiles of 16..256 rows
    // (small ones only for skinny M, like cuBLAS's GEMV-like kernels), 64..256 columns, K
    // steps of 64 or 128 bytes per row, 2..5 pipeline stages, and split-K for GEMMs with fewer
    // tiles than SMs.
    static const uint32_t kBlockM[] = {256, 128, 64, 32, 16};
    static const uint32_t kBlockN[] = {256, 128, 64};
    static const uint32_t kStepBytes[] = {128, 64};
    static const uint32_t kSplits[] = {1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64};
    const uint32_t bytes = BytesOf(MmaTypeOf(type));
    const uint32_t sms = g.smCount;
    bool tensor = false;
    const double peak = MatmulPeak(g, MmaTypeOf(type), tensor);

    GemmEval best;
    bool found = false;
    GemmEval c;
    for (size_t i = 0; i < sizeof(kBlockM) / sizeof(kBlockM[0]); ++i)
    {
        const uint32_t bm = kBlockM[i];
        if (bm < 64 && m > 2 * uint64_t(bm))
        {
            continue; // a small tile only pays off when M itself is small
        }
        if (bm > 16 && i + 1 < sizeof(kBlockM) / sizeof(kBlockM[0]) && kBlockM[i + 1] >= m)
        {
            continue; // a smaller tile already covers M with less padding
        }
        for (uint32_t bn : kBlockN)
        {
            uint64_t outTiles = CeilDiv(m, bm) * CeilDiv(n, bn) * batch;
            for (uint32_t stepBytes : kStepBytes)
            {
                uint32_t bk = std::max<uint32_t>(8, stepBytes / bytes);
                for (uint32_t split : kSplits)
                {
                    if (split > 1
                        && (!options.splitK || split > options.maxSplitK
                            || outTiles * split > 2 * uint64_t(sms)
                            || CeilDiv(k, split) < 2 * uint64_t(bk)))
                    {
                        break;
                    }
                    // Deepest pipeline first, so that a tie keeps the deeper one (it hides
                    // more latency jitter than the model's mean latency shows).
                    for (uint32_t stages = 5; stages >= 2; --stages)
                    {
                        KernelTiling t;
                        t.blockM = bm;
                        t.blockN = bn;
                        t.blockK = bk;
                        t.stages = stages;
                        t.splitK = split;
                        if (!EvaluateGemmTiling(g, peak, tensor, m, n, k, type, batch, t, c))
                        {
                            continue; // too much shared memory; fewer stages may fit
                        }
                        if (!found || c.timeS < best.timeS * (1 - 1e-12))
                        {
                            best = c;
                            found = true;
                        }
                    }
                }
            }
        }
    }
    if (!found)
    {
        throw SpecError(g.Origin(),
                        "gpu.shared_memory_per_block_kib",
                        "no GEMM tiling fits this GPU's SM: its shared_memory_per_block_kib, "
                        "registers_per_sm and max_threads_per_sm hold no block tile of "
                        "16..256 x 64..256 with 2..5 pipeline stages");
    }
    NS_LOG_LOGIC("gemm " << m << "x" << n << "x" << k << " batch " << batch << " " << ToString(type)
                         << ": " << best.tiling.blockM << "x" << best.tiling.blockN << "x"
                         << best.tiling.blockK << " stages " << best.tiling.stages << " split-K "
                         << best.tiling.splitK << ", " << best.timeS << " s");
    OperatorCost cost;
    FillGemmCost(m, n, k, batch, peak, tensor, best, cost);
    return cost;
}

} // namespace kernel
} // namespace rapidllm
} // namespace ns3
