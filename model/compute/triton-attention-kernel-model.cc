/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "triton-attention-kernel-model.h"

#include "attention-tiling.h"
#include "gpu-kernel-common.h"
#include "ns3/log.h"
#include "ns3/spec-error.h"

#include <algorithm>

namespace ns3 {
namespace rapidllm {
namespace kernel {

NS_LOG_COMPONENT_DEFINE("RapidLlmTritonAttentionKernelModel");

namespace {

/** flash_attn_triton.py: BLOCK_M = BLOCK_N = 128 forward and backward. */
constexpr uint32_t kBlock = 128;

/** \return the head dimension the kernel tiles: the next power of two, at least 16 */
uint32_t
PaddedHeadDim(const GpuSpec& g, uint64_t headDim)
{
    if (headDim > 128)
    {
        // The run's choice of kernel (option or key attention), not the hardware, is at fault.
        throw SpecError("",
                        "attention",
                        "triton2022, the Triton attention kernel, supports head dimensions up to "
                        "128, not "
                            + std::to_string(headDim) + "; choose another kernel");
    }
    uint32_t p = 16;
    while (p < headDim)
    {
        p *= 2;
    }
    return p;
}

/** \return one program's share of the L2 bandwidth when \p ctas programs run */
double
L2PerProgram(const GpuSpec& g, uint64_t ctas, uint32_t perSm)
{
    const double active = double(std::min<uint64_t>(ctas, g.smCount));
    return L2Rate(g, ctas) / active / perSm;
}

/**
 * \return the SM time of one block pair when \p perSm programs share an SM: a program's serial
 * chain (\p serial) divided among them, but never less than the SM's compute \p x
 */
double
PairSmTime(double x, double serial, uint32_t perSm)
{
    return std::max(x, serial / perSm);
}

} // namespace

OperatorCost
TritonAttentionForward(const GpuSpec& g, const AttentionShape& s, DataType type)
{
    const uint32_t sms = g.smCount;
    const auto [b, dReal, bh, tensor, peak, perSmRate, perSmVector, smemRate] =
        RatesOf(g, s, type, true);
    const double d = PaddedHeadDim(g, s.headDim);
    const uint32_t br = kBlock;
    const uint32_t bc = kBlock;
    const uint32_t warps = s.headDim <= 64 ? 4 : 8;
    const uint32_t threads = 32 * warps;
    // num_stages=1: one Q, one K and one V tile, no second buffer.
    const uint64_t smem = uint64_t((br * d + 2.0 * bc * d) * b);
    if (smem > g.sharedMemoryPerBlockBytes)
    {
        throw SpecError(g.Origin(),
                        "attention",
                        "the Triton attention tiles do not fit head dimension "
                            + std::to_string(s.headDim));
    }
    // The O accumulator and the S block in fp32 registers; beyond 255 the kernel spills.
    const uint32_t regs = std::min<uint32_t>(255, CeilDiv(uint64_t(br) * (d + bc), threads) + 48);
    const uint32_t perSm = std::max<uint32_t>(1, BlocksPerSm(g, smem, regs, threads));
    const BlockPairs visited = VisitedBlocks(s, br, bc);
    const uint64_t ctas = uint64_t(bh) * visited.queryBlocks;
    const double totalPairs = visited.total * bh;
    const double avgPairs = totalPairs / double(ctas);
    const double pairs = ScoredPairs(s);

    // Per block pair, as FlashAttention-2: Q K^T and P V on tensor cores, the online softmax on
    // the CUDA cores, K and V read from shared memory by every warp.
    const double cPair = 4.0 * br * bc * d / perSmRate + 12.0 * br * bc / perSmVector;
    const double smemPair = 2.0 * bc * d * b * (1 + warps);
    const double sPair = smemPair / smemRate;
    const double x = std::max(cPair, sPair);
    // ...but the loads are not overlapped with the matmuls: the K tile, the rescale factor
    // stored to and reloaded from global memory (the file's compiler-bug workaround) and the V
    // tile each wait one memory latency, the tiles at the program's L2 share.
    const double l2Program = L2PerProgram(g, ctas, perSm);
    const double tileBytes = double(bc) * d * b;
    const double tLoad = 3 * g.memoryLatencyS + 2 * tileBytes / l2Program;
    const double serial = x + tLoad;
    const double pairSm = PairSmTime(x, serial, perSm);
    const double tCompute =
        std::max(WaveTime(ctas, sms, perSm, avgPairs * cPair), double(visited.most) * cPair);
    const double tSmem =
        std::max(WaveTime(ctas, sms, perSm, avgPairs * sPair), double(visited.most) * sPair);
    const double tSm =
        std::max(WaveTime(ctas, sms, perSm, avgPairs * pairSm), double(visited.most) * serial);
    const FusedAttentionIo io = FusedAttentionIoOf(s, bh, d, b);
    const double l2Bytes = 2 * io.q + io.lse + totalPairs * (2.0 * tileBytes + 2.0 * br * 4.0);
    const double l2Rate = L2Rate(g, ctas);
    const double hbmBytes = io.forward;
    const double tL2 = l2Bytes / l2Rate;
    const double tHbm = hbmBytes / HbmRate(g, l2Rate);
    const double waves = double(CeilDiv(ctas, uint64_t(sms) * perSm));
    const double overhead = g.launchOverheadS + waves * g.memoryLatencyS;

    OperatorCost c = FusedAttentionCost({"attention_fwd",
                                         overhead,
                                         0.0,
                                         tSm,
                                         tL2,
                                         tHbm,
                                         tCompute,
                                         tSmem,
                                         4.0 * s.batch * s.heads * dReal * pairs,
                                         totalPairs * smemPair,
                                         l2Bytes,
                                         hbmBytes},
                                        tensor,
                                        peak);
    SetFlashTiling(c, br, bc, uint32_t(d), threads, perSm, smem, ctas, sms);
    c.tiling.stages = 1;
    c.smUtilization = tCompute > 0 ? totalPairs * cPair / (sms * tCompute) : 0.0;
    ApplyBound(c);
    NS_LOG_LOGIC("triton forward " << s.batch << "x" << s.heads << " heads, " << s.queryLen << "/"
                                   << s.kvLen << " tokens: " << perSm << " per SM, pair " << x * 1e6
                                   << " us compute + " << tLoad * 1e6 << " us loads, " << c.timeS
                                   << " s");
    return c;
}

OperatorCost
TritonAttentionBackward(const GpuSpec& g, const AttentionShape& s, DataType type)
{
    const OperatorCost fwd = TritonAttentionForward(g, s, type);
    const GpuEfficiency& e = g.efficiency;
    const uint32_t sms = g.smCount;
    const auto [b, dReal, bh, tensor, peak, perSmRate, perSmVector, smemRate] =
        RatesOf(g, s, type, true);
    const double d = PaddedHeadDim(g, s.headDim);
    const uint32_t br = kBlock;
    const uint32_t bc = kBlock;
    const uint32_t threads = 256; // num_warps=8 in both autotuned configs
    // K and V resident, one Q and one dO tile (one stage), dS staged for the transposed matmul.
    const uint64_t smem = uint64_t((2.0 * bc * d + 2.0 * br * d) * b + double(br) * bc * b);
    // dK and dV accumulators and the S/P block in fp32 registers, at most 255 (spilling).
    const uint32_t regs =
        std::min<uint32_t>(255, CeilDiv(2 * uint64_t(bc) * d + uint64_t(br) * bc, threads) + 48);
    const uint32_t perSm = std::max<uint32_t>(
        1, BlocksPerSm(g, std::min<uint64_t>(smem, g.sharedMemoryPerSmBytes), regs, threads));
    const BlockPairs visited = VisitedBlocks(s, br, bc);
    const double totalPairs = visited.total * bh;
    // Per pair: S, dV, dP, dK, dQ block matmuls and the softmax gradient, as FlashAttention-2.
    const double cPair = 10.0 * br * bc * d / perSmRate + 16.0 * br * bc / perSmVector;
    const double smemPair = (2.0 * br * d * b) * (1 + threads / 32.0) + 2.0 * br * bc * b;
    const double sPair = smemPair / smemRate;
    const double x = std::max(cPair, sPair);
    const double qTile = double(br) * d * b;
    const double dqTile = double(br) * d * 4.0;
    const FusedAttentionIo io = FusedAttentionIoOf(s, bh, d, b);
    const double hbmMain = io.backward;

    struct Variant
    {
        double timeS;
        double tSm;
        double tCompute;
        double tSmem;
        double tL2;
        double tHbm;
        double l2Bytes;
        double overhead;
        uint64_t ctas;
    };

    // One program's serial chain per pair: the Q tile (one latency), the log-sum-exp with the
    // dO tile (one), D (one) and, without atomics, the fp32 dQ tile read back (one), each tile
    // at the program's L2 share; the dQ store or atomic add is not waited for.
    auto variant = [&](bool sequenceParallel)
    {
        Variant v;
        v.ctas = sequenceParallel ? uint64_t(bh) * visited.kvBlocks : uint64_t(bh);
        const double l2Program = L2PerProgram(g, v.ctas, perSm);
        const double loads = sequenceParallel ? 3 : 4;
        const double bytes = 2 * qTile + br * 8.0 + (sequenceParallel ? 0.0 : dqTile);
        const double tLoad = loads * g.memoryLatencyS + bytes / l2Program;
        const double serial = x + tLoad;
        const double pairSm = PairSmTime(x, serial, perSm);
        // K and V loaded once per key block, dK and dV stored.
        const double kvBlock = g.memoryLatencyS + 4.0 * bc * d * b / l2Program;
        const double blocks = double(visited.kvBlocks) * bh;
        const double avgPairs = totalPairs / double(v.ctas);
        const double avgBlocks = blocks / double(v.ctas);
        const double mostPairs = sequenceParallel ? double(visited.queryBlocks) : visited.total;
        const double mostBlocks = sequenceParallel ? 1.0 : double(visited.kvBlocks);
        v.tCompute = WaveTime(v.ctas, sms, perSm, avgPairs * cPair);
        v.tSmem = WaveTime(v.ctas, sms, perSm, avgPairs * sPair);
        v.tSm = std::max(WaveTime(v.ctas, sms, perSm, avgPairs * pairSm + avgBlocks * kvBlock),
                         mostPairs * serial + mostBlocks * kvBlock);
        // Q and dO per pair; dQ in fp32 per pair, read and written or added atomically; K, V in
        // and dK, dV out once per key block.
        v.l2Bytes = totalPairs * (2.0 * qTile + br * 8.0 + 2.0 * dqTile) + 2.0 * io.kv;
        const double l2Rate = L2Rate(g, v.ctas);
        v.tL2 = v.l2Bytes / l2Rate;
        v.tHbm = hbmMain / HbmRate(g, l2Rate);
        const double waves = double(CeilDiv(v.ctas, uint64_t(sms) * perSm));
        v.overhead = g.launchOverheadS + waves * g.memoryLatencyS;
        v.timeS = v.overhead + std::max({v.tSm, v.tL2, v.tHbm});
        return v;
    };
    const Variant perHead = variant(false);
    const Variant parallel = variant(true);
    const Variant& best = parallel.timeS < perHead.timeS ? parallel : perHead;

    // Three streaming kernels around it: zero the fp32 dQ accumulator, D = rowsum(O * dO), and
    // copy the accumulator into dQ.
    const double zero = io.q / b * 4.0;
    const double side = (zero + io.pre + io.post) / (g.hbmBandwidthBps * e.hbm);
    const double overhead = best.overhead + 3 * (g.launchOverheadS + g.memoryLatencyS);

    OperatorCost c = FusedAttentionCost({"attention_bwd",
                                         overhead,
                                         side,
                                         best.tSm,
                                         best.tL2,
                                         best.tHbm,
                                         best.tCompute,
                                         best.tSmem,
                                         2.5 * fwd.flops,
                                         totalPairs * smemPair,
                                         best.l2Bytes + zero + io.pre + io.post,
                                         hbmMain + zero + io.pre + io.post},
                                        tensor,
                                        peak);
    SetFlashTiling(c, br, bc, uint32_t(d), threads, perSm, smem, best.ctas, sms);
    c.tiling.stages = 1;
    c.kernels = 4;
    c.smUtilization = best.tCompute > 0 ? totalPairs * cPair / (sms * best.tCompute) : 0.0;
    ApplyBound(c);
    NS_LOG_LOGIC("triton backward: per head " << perHead.timeS << " s, sequence parallel "
                                              << parallel.timeS << " s");
    return c;
}

} // namespace kernel
} // namespace rapidllm
} // namespace ns3
