/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "attention-kernel-model.h"

#include "attention-tiling.h"
#include "gpu-compute-model.h"
#include "gpu-kernel-common.h"
#include "ns3/log.h"
#include "ns3/spec-error.h"

#include <algorithm>
#include <vector>

namespace ns3 {
namespace rapidllm {
namespace kernel {

NS_LOG_COMPONENT_DEFINE("RapidLlmAttentionKernelModel");

OperatorCost
FlashAttentionForward(const GpuSpec& g, const AttentionShape& s, DataType type)
{
    const uint32_t sms = g.smCount;
    const auto [b, d, bh, tensor, peak, perSmRate, perSmVector, smemRate] =
        RatesOf(g, s, type, true);

    // Useful work: the query-key pairs the mask keeps.
    const double pairs = ScoredPairs(s);
    OperatorCost best;
    bool found = false;
    static const uint32_t kBr[] = {128, 64};
    static const uint32_t kBc[] = {128, 64, 32};
    for (uint32_t br : kBr)
    {
        for (uint32_t bc : kBc)
        {
            // Q tile resident; K and V double-buffered. One warp per 16 query rows.
            uint64_t smem = uint64_t((br * d + 2.0 * 2 * bc * d) * b);
            uint32_t threads = 32 * br / 16;
            uint32_t regs = CeilDiv(uint64_t(br) * (s.headDim + bc), threads) + 48;
            if (smem > g.sharedMemoryPerBlockBytes || regs > 255)
            {
                continue;
            }
            uint32_t perSm = BlocksPerSm(g, smem, regs, threads);
            if (perSm == 0)
            {
                continue;
            }
            const BlockPairs visited = VisitedBlocks(s, br, bc);
            const uint64_t maxPairs = visited.most;
            uint64_t ctas = uint64_t(bh) * visited.queryBlocks;
            double totalPairs = visited.total * bh;
            double avgPairs = totalPairs / double(ctas);
            // Per block pair: QK^T and PV on tensor cores, then the online softmax (exp counted
            // as ~8 FLOP, plus max, scale, sum) on the CUDA cores, not overlapped (FA2).
            double cPair = 4.0 * br * bc * d / perSmRate + 12.0 * br * bc / perSmVector;
            double warps = threads / 32.0;
            double smemPair = 2.0 * bc * d * b * (1 + warps);
            double sPair = smemPair / smemRate;
            double x = std::max(cPair, sPair);
            double tCompute =
                std::max(WaveTime(ctas, sms, perSm, avgPairs * cPair), double(maxPairs) * cPair);
            double tSmem =
                std::max(WaveTime(ctas, sms, perSm, avgPairs * sPair), double(maxPairs) * sPair);
            double tSm = std::max(WaveTime(ctas, sms, perSm, avgPairs * x), double(maxPairs) * x);
            const FusedAttentionIo io = FusedAttentionIoOf(s, bh, d, b);
            double l2Bytes = 2 * io.q + io.lse + totalPairs * 2.0 * bc * d * b;
            double l2Rate = L2Rate(g, ctas);
            double hbmBytes = io.forward;
            double tL2 = l2Bytes / l2Rate;
            double tHbm = hbmBytes / HbmRate(g, l2Rate);
            double waves = double(CeilDiv(ctas, uint64_t(sms) * perSm));
            double overhead = g.launchOverheadS + waves * g.memoryLatencyS;
            OperatorCost c = FusedAttentionCost({"attention_fwd",
                                                 overhead,
                                                 0.0,
                                                 tSm,
                                                 tL2,
                                                 tHbm,
                                                 tCompute,
                                                 tSmem,
                                                 4.0 * s.batch * s.heads * d * pairs,
                                                 totalPairs * smemPair,
                                                 l2Bytes,
                                                 hbmBytes},
                                                tensor,
                                                peak);
            SetFlashTiling(c, br, bc, s.headDim, threads, perSm, smem, ctas, sms);
            c.smUtilization = tCompute > 0 ? totalPairs * cPair / (sms * tCompute) : 0.0;
            ApplyBound(c);
            if (!found || c.timeS < best.timeS * (1 - 1e-12))
            {
                best = c;
                found = true;
            }
        }
    }
    if (!found)
    {
        throw SpecError(g.Origin(),
                        "attention",
                        "no fused (flash) attention tiling fits head dimension "
                            + std::to_string(s.headDim)
                            + " in this GPU's shared memory and registers (shared_memory_per_"
                              "block_kib, registers_per_sm); a smaller head_dim, or the "
                              "unfused kernel (--attention=standard)");
    }
    NS_LOG_LOGIC("flash forward " << s.batch << "x" << s.heads << " heads, " << s.queryLen << "/"
                                  << s.kvLen << " tokens, d " << s.headDim
                                  << (s.causal ? " causal: " : ": ") << best.tiling.blockM << "x"
                                  << best.tiling.blockN << " blocks, " << best.tiling.blocksPerSm
                                  << " per SM, " << best.timeS << " s, " << best.bound << " bound");
    return best;
}

OperatorCost
FlashAttentionBackward(const GpuSpec& g, const AttentionShape& s, DataType type)
{
    // Same block structure as the forward pass, parallel over key/value blocks: five block
    // matmuls per pair (S, dP, dV, dK, dQ) instead of two, dQ accumulated in fp32 through L2.
    OperatorCost fwd = FlashAttentionForward(g, s, type);
    const GpuEfficiency& e = g.efficiency;
    const uint32_t sms = g.smCount;
    const auto [b, d, bh, tensor, peak, perSmRate, perSmVector, smemRate] =
        RatesOf(g, s, type, true);
    const uint32_t br = 64;
    const uint32_t bc = fwd.tiling.blockN >= 128 && s.headDim <= 64 ? 128 : 64;

    const BlockPairs visited = VisitedBlocks(s, br, bc);
    uint64_t ctas = uint64_t(bh) * visited.kvBlocks;
    double totalPairs = visited.total * bh;
    // K, V, dK, dV tiles resident; Q and dO double-buffered.
    uint64_t smem = uint64_t((2.0 * bc * d + 2 * 2.0 * br * d) * b + double(br) * bc * b);
    uint32_t threads = 256;
    // Registers do not limit this kernel's occupancy; at least one block runs.
    uint32_t perSm = std::max<uint32_t>(1, BlocksPerSm(g, std::max<uint64_t>(smem, 1), 0, threads));
    double cPair = 10.0 * br * bc * d / perSmRate + 16.0 * br * bc / perSmVector;
    double smemPair = (2.0 * br * d * b) * (1 + threads / 32.0) + 2.0 * br * bc * b;
    double sPair = smemPair / smemRate;
    double avgPairs = totalPairs / double(ctas);
    double tCompute = WaveTime(ctas, sms, perSm, avgPairs * cPair);
    double tSmem = WaveTime(ctas, sms, perSm, avgPairs * sPair);
    double tSm = WaveTime(ctas, sms, perSm, avgPairs * std::max(cPair, sPair));
    const FusedAttentionIo io = FusedAttentionIoOf(s, bh, d, b);
    // Q and dO per pair, dQ fp32 read-modify-write per pair, K/V once per block, dK/dV out.
    double l2Bytes = totalPairs * (2.0 * br * d * b + 2.0 * br * d * 4.0) + 2.0 * io.kv;
    double l2Rate = L2Rate(g, ctas);
    double hbmMain = io.backward;
    double tL2 = l2Bytes / l2Rate;
    double tHbm = hbmMain / HbmRate(g, l2Rate);
    // Preprocessing D = rowsum(dO * O) and the dQ fp32 -> type conversion: two streaming
    // kernels.
    double side = (io.pre + io.post) / (g.hbmBandwidthBps * e.hbm);
    double waves = double(CeilDiv(ctas, uint64_t(sms) * perSm));
    double overhead = 3 * (g.launchOverheadS + g.memoryLatencyS) + waves * g.memoryLatencyS;

    OperatorCost c = FusedAttentionCost({"attention_bwd",
                                         overhead,
                                         side,
                                         tSm,
                                         tL2,
                                         tHbm,
                                         tCompute,
                                         tSmem,
                                         2.5 * fwd.flops,
                                         totalPairs * smemPair,
                                         l2Bytes + io.pre + io.post,
                                         hbmMain + io.pre + io.post},
                                        tensor,
                                        peak);
    SetFlashTiling(c, br, bc, s.headDim, threads, perSm, smem, ctas, sms);
    c.kernels = 3;
    c.smUtilization = tCompute > 0 ? totalPairs * cPair / (sms * tCompute) : 0.0;
    ApplyBound(c);
    NS_LOG_LOGIC("flash backward " << br << "x" << bc << " blocks, " << perSm << " per SM, "
                                   << c.timeS << " s, " << c.bound << " bound");
    return c;
}

OperatorCost
UnfusedAttention(GpuComputeModel& model, const AttentionShape& s, DataType type, bool backward)
{
    // The s x s probabilities are written by the softmax; in training with dropout, PyTorch's
    // dropout kernel writes them again with a 1-byte mask, and its backward reads both back.
    const uint32_t eb = BytesOf(type);
    const uint64_t heads = s.batch * s.heads;
    const uint64_t d = s.headDim;
    const uint64_t q = s.queryLen;
    const uint64_t kv = s.kvLen;
    const double scoreCount = double(heads) * q * kv;
    OperatorCost scores = model.Gemm(q, kv, d, type, heads);
    OperatorCost values = model.Gemm(q, d, kv, type, heads);
    OperatorCost softmax = model.Softmax(heads * q, kv, type);
    if (!backward)
    {
        std::vector<OperatorCost> parts{scores, softmax};
        if (s.dropout)
        {
            // Philox random numbers: ~10 integer operations per element.
            parts.push_back(model.Elementwise(
                "attention_dropout", 10 * scoreCount, scoreCount * eb, scoreCount * (eb + 1)));
        }
        parts.push_back(values);
        return Sequential("attention_unfused", parts);
    }
    // dP = dO V^T, dV = P^T dO, dropout', dS = softmax'(dP), dQ = dS K, dK = dS^T Q.
    std::vector<OperatorCost> parts{scores, model.Gemm(kv, d, q, type, heads)};
    if (s.dropout)
    {
        parts.push_back(model.Elementwise(
            "attention_dropout_bwd", scoreCount, scoreCount * (eb + 1), scoreCount * eb));
    }
    parts.push_back(model.ElementwiseBackward(softmax, scoreCount, type));
    parts.push_back(values);
    parts.push_back(model.Gemm(kv, d, q, type, heads));
    return Sequential("attention_unfused_bwd", parts);
}

} // namespace kernel
} // namespace rapidllm
} // namespace ns3
