/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "attention-tiling.h"

#include "gpu-kernel-common.h"

#include <algorithm>

namespace ns3 {
namespace rapidllm {
namespace kernel {

/** Records a FlashAttention kernel's tiling (two-stage, \p br x \p bc blocks) and its waves. */
void
SetFlashTiling(OperatorCost& c,
               uint32_t br,
               uint32_t bc,
               uint32_t headDim,
               uint32_t threads,
               uint32_t perSm,
               uint64_t smem,
               uint64_t ctas,
               uint32_t sms)
{
    c.tiling.blockM = br;
    c.tiling.blockN = bc;
    c.tiling.blockK = headDim;
    c.tiling.stages = 2;
    c.tiling.threads = threads;
    c.tiling.blocksPerSm = perSm;
    c.tiling.smemPerBlock = smem;
    c.tiles = ctas;
    c.waves = double(ctas) / (double(sms) * perSm);
}

double
ScoredPairs(const AttentionShape& s)
{
    const uint64_t offset = s.kvLen - s.queryLen;
    if (!s.causal)
    {
        return double(s.queryLen) * s.kvLen;
    }
    // Query j (0-based over the kvLen tokens) sees keys 0..j, within a window the last w of them:
    // min(j + 1, w) keys for j = offset .. kvLen - 1, i.e. min(m, w) for m = first .. last.
    auto seen = [](double upTo) // 1 + 2 + ... + upTo
    {
        return upTo * (upTo + 1) / 2.0;
    };
    const double first = double(offset) + 1;
    const double last = double(s.kvLen);
    if (s.window == 0 || s.window >= s.kvLen)
    {
        return seen(last) - seen(first - 1);
    }
    const double w = double(s.window);
    if (w <= first)
    {
        return double(s.queryLen) * w;
    }
    return (seen(w) - seen(first - 1)) + (last - w) * w;
}

/**
 * The block pairs of one head with \p br x \p bc blocks: every key/value block, or under a
 * causal mask only those at or left of the diagonal (the queries are the last queryLen of
 * the kvLen tokens).
 */
BlockPairs
VisitedBlocks(const AttentionShape& s, uint32_t br, uint32_t bc)
{
    const uint64_t offset = s.kvLen - s.queryLen;
    BlockPairs p;
    p.queryBlocks = CeilDiv(s.queryLen, br);
    p.kvBlocks = CeilDiv(s.kvLen, bc);
    for (uint64_t i = 0; i < p.queryBlocks; ++i)
    {
        uint64_t visited = p.kvBlocks;
        if (s.causal)
        {
            uint64_t lastKey = offset + std::min<uint64_t>((i + 1) * br, s.queryLen) - 1;
            visited = std::min<uint64_t>(p.kvBlocks, lastKey / bc + 1);
            if (s.window > 0)
            {
                // The block's first query sees keys from firstQuery - window + 1 on.
                const uint64_t firstQuery = offset + i * br;
                const uint64_t firstKey = firstQuery + 1 > s.window ? firstQuery + 1 - s.window : 0;
                visited -= std::min<uint64_t>(visited, firstKey / bc);
            }
        }
        p.total += double(visited);
        p.most = std::max(p.most, visited);
    }
    return p;
}

/** \return the rates of \p s in \p type on \p g */
FusedAttentionIo
FusedAttentionIoOf(const AttentionShape& s, double bh, double d, double b)
{
    FusedAttentionIo io;
    io.q = bh * s.queryLen * d * b;
    io.kv = 2.0 * s.batch * s.kvHeads * s.kvLen * d * b;
    io.lse = bh * s.queryLen * 4.0;
    io.forward = 2 * io.q + io.lse + io.kv;
    io.backward = 2 * io.q + bh * s.queryLen * 8.0 + io.kv + io.kv + io.q / b * 4.0;
    io.pre = 2 * io.q + io.lse;
    io.post = io.q / b * 4.0 + io.q;
    return io;
}

FlashRates
RatesOf(const GpuSpec& g, const AttentionShape& s, DataType type, bool warpMma)
{
    FlashRates r;
    r.b = BytesOf(type);
    r.d = double(s.headDim);
    r.bh = double(s.batch) * s.heads;
    r.tensor = false;
    r.peak = MatmulPeak(g, type, r.tensor);
    r.perSmRate =
        PerSmMatmulRate(g, r.peak, r.tensor, type) * (warpMma && r.tensor ? g.mmaSyncFraction : 1);
    r.perSmVector = PerSmVectorRate(g);
    r.smemRate = SmemRate(g);
    return r;
}

OperatorCost
FusedAttentionCost(const FusedAttentionParts& p, bool tensor, double peak)
{
    OperatorCost c;
    c.kind = p.kind;
    c.timeS = p.overheadS + p.sideS + std::max({p.tSm, p.tL2, p.tHbm});
    c.flops = p.flops;
    c.smemBytes = p.smemBytes;
    c.l2Bytes = p.l2Bytes;
    c.hbmBytes = p.hbmBytes;
    c.computeTimeS = p.computeS;
    c.smemTimeS = p.smemS;
    c.l2TimeS = p.tL2;
    c.hbmTimeS = p.tHbm + p.sideS;
    c.overheadTimeS = p.overheadS;
    c.tensorCores = tensor;
    c.utilization = c.flops / c.timeS / peak;
    return c;
}

} // namespace kernel
} // namespace rapidllm
} // namespace ns3
