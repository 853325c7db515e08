/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "decode-attention-kernel-model.h"

#include "gpu-kernel-common.h"
#include "ns3/log.h"

#include <algorithm>

namespace ns3 {
namespace rapidllm {
namespace kernel {

NS_LOG_COMPONENT_DEFINE("RapidLlmDecodeAttentionKernelModel");

namespace {
/**
 * \return the vector operations that turn \p elements cached elements of \p cacheBits bits
 * into the compute type of \p bytes bytes: none for a cache in that type (cacheBits 0 says so)
 */
double
DequantizeFlops(uint32_t cacheBits, double bytes, double elements)
{
    return cacheBits > 0 && cacheBits != 8 * bytes ? kDequantizeOps * elements : 0.0;
}
} // namespace

OperatorCost
SplitKvDecodeAttention(const GpuSpec& g,
                       uint64_t batch,
                       uint64_t heads,
                       uint64_t kvHeads,
                       uint64_t kvLen,
                       uint64_t headDim,
                       DataType type,
                       uint64_t valueDim,
                       bool latent,
                       uint32_t cacheBits)
{
    const GpuEfficiency& e = g.efficiency;
    const uint32_t sms = g.smCount;
    const double b = BytesOf(type);
    const double d = double(headDim);
    bool tensor = false;
    const double peak = MatmulPeak(g, type, tensor);
    const double groups = double(batch) * kvHeads;
    // The query heads sharing a KV head form the rows of one small MMA (padded to 16 rows).
    const double rows = std::max<double>(16.0, double(heads / kvHeads));
    const double dv = valueDim > 0 ? double(valueDim) : d;
    // Each cached token holds a key and a value, or under MLA one latent both are read from.
    const double kvElements = groups * kvLen * (latent ? d : d + dv);
    const double kvBytes = kvElements * (cacheBits > 0 ? cacheBits / 8.0 : b);
    const double dequant = DequantizeFlops(cacheBits, b, kvElements);
    OperatorCost best;
    bool found = false;
    for (uint32_t split = 1; split <= 256; split *= 2)
    {
        if (split > 1 && CeilDiv(kvLen, split) < 64)
        {
            break;
        }
        uint64_t ctas = uint64_t(groups) * split;
        double share = SmShare(g, ctas);
        double partials = split > 1 ? double(batch) * heads * split * (dv + 2) * 4.0 : 0.0;
        double out = double(batch) * heads * dv * b;
        double hbmBytes = kvBytes + out + double(batch) * heads * d * b + partials;
        double l2Rate = g.l2BandwidthBps * e.l2 * share;
        double tHbm = hbmBytes / HbmRate(g, l2Rate);
        double tL2 = hbmBytes / l2Rate;
        double tCompute = 2.0 * groups * rows * kvLen * (d + dv) / (peak * e.Tensor(type) * share)
                          + (12.0 * batch * heads * kvLen + dequant)
                                / (g.VectorFlops(DataType::FP32) * e.vector * share);
        double overhead = g.launchOverheadS + g.memoryLatencyS;
        double combine = 0;
        if (split > 1)
        {
            combine = partials / (g.hbmBandwidthBps * e.hbm);
            overhead += g.launchOverheadS + g.memoryLatencyS;
        }
        OperatorCost c;
        c.kind = "decode_attention";
        c.timeS = overhead + combine + std::max({tCompute, tHbm, tL2});
        c.flops = 2.0 * batch * heads * kvLen * (d + dv);
        c.l2Bytes = hbmBytes + partials;
        c.hbmBytes = hbmBytes + partials;
        c.smemBytes = kvBytes;
        c.computeTimeS = tCompute;
        c.l2TimeS = tL2;
        c.hbmTimeS = tHbm + combine;
        c.overheadTimeS = overhead;
        c.tensorCores = tensor;
        c.utilization = c.flops / c.timeS / peak;
        c.tiling.blockM = static_cast<uint32_t>(rows);
        c.tiling.blockN = static_cast<uint32_t>(CeilDiv(kvLen, split));
        c.tiling.blockK = headDim;
        c.tiling.splitK = split;
        c.tiling.threads = 128;
        c.tiles = ctas;
        c.waves = double(ctas) / sms;
        c.kernels = split > 1 ? 2 : 1;
        c.smUtilization = share;
        ApplyBound(c);
        if (!found || c.timeS < best.timeS * (1 - 1e-12))
        {
            best = c;
            found = true;
        }
    }
    NS_LOG_LOGIC("split-KV decode " << batch << " sequences, " << heads << "/" << kvHeads
                                    << " heads, " << kvLen << " cached: split "
                                    << best.tiling.splitK << ", " << best.timeS << " s, "
                                    << best.bound << " bound");
    return best;
}

OperatorCost
PerHeadDecodeAttention(const GpuSpec& g,
                       uint64_t batch,
                       uint64_t heads,
                       uint64_t kvHeads,
                       uint64_t kvLen,
                       uint64_t headDim,
                       DataType type,
                       uint64_t valueDim,
                       bool latent,
                       uint32_t cacheBits)
{
    const GpuEfficiency& e = g.efficiency;
    const double b = BytesOf(type);
    const double d = double(headDim);
    const double dv = valueDim > 0 ? double(valueDim) : d;
    const uint64_t ctas = batch * heads;
    const double share = SmShare(g, ctas);
    const double perHeadElements = kvLen * (latent ? d : d + dv); // K and V of one head
    const double perHead = perHeadElements * (cacheBits > 0 ? cacheBits / 8.0 : b);
    const double io = batch * heads * (d + dv) * b; // the query in, the output out
    const double hbmBytes = double(batch) * kvHeads * perHead + io;
    const double l2Bytes = double(ctas) * perHead + io;
    const double l2Rate = g.l2BandwidthBps * e.l2 * share;
    const double tHbm = hbmBytes / HbmRate(g, l2Rate);
    const double tL2 = l2Bytes / l2Rate;
    // Q K^T and P V as fp32 FMAs, plus the softmax (max, exp, sum, scale).
    const double flops = 2.0 * ctas * kvLen * (d + dv);
    const double tCompute = (flops + 12.0 * ctas * kvLen
                             + DequantizeFlops(cacheBits, b, double(ctas) * perHeadElements))
                            / (g.VectorFlops(DataType::FP32) * e.vector * share);
    OperatorCost c;
    c.kind = "decode_attention";
    c.overheadTimeS = g.launchOverheadS + g.memoryLatencyS;
    c.timeS = c.overheadTimeS + std::max({tCompute, tHbm, tL2});
    c.flops = flops;
    c.hbmBytes = hbmBytes;
    c.l2Bytes = l2Bytes;
    c.smemBytes = 0;
    c.computeTimeS = tCompute;
    c.l2TimeS = tL2;
    c.hbmTimeS = tHbm;
    c.tensorCores = false;
    c.utilization = c.flops / c.timeS / g.VectorFlops(DataType::FP32);
    c.tiling.blockM = 1;
    c.tiling.blockN = static_cast<uint32_t>(kvLen);
    c.tiling.blockK = static_cast<uint32_t>(headDim);
    c.tiling.splitK = 1;
    c.tiling.threads = kvLen < 2048 ? 128 : 256;
    c.tiles = ctas;
    c.waves = double(ctas) / g.smCount;
    c.kernels = 1;
    c.smUtilization = share;
    ApplyBound(c);
    return c;
}

} // namespace kernel
} // namespace rapidllm
} // namespace ns3
