/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_SPEC_BOUNDS_CHECK_H
#define RAPIDLLM_SPEC_BOUNDS_CHECK_H

// Physical bounds every accepted spec must keep, whatever its text was: the property the
// mutation fuzz test (test/spec-fuzz-test-suite.cc) and the libFuzzer target
// (test/fuzz/spec-reader-fuzz.cc) check on each input the readers accept. Header-only so that
// both include it.

#include "ns3/hardware-spec.h"
#include "ns3/model-spec.h"
#include "ns3/run-spec.h"

#include <cmath>
#include <string>

namespace ns3 {
namespace rapidllm {
namespace bounds {

/** \return whether \p x is finite and above 0 */
inline bool
Positive(double x)
{
    return std::isfinite(x) && x > 0;
}

/** \return whether \p x is finite and at least 0 */
inline bool
NonNegative(double x)
{
    return std::isfinite(x) && x >= 0;
}

/** \return whether \p x is in (0, 1] */
inline bool
Fraction(double x)
{
    return std::isfinite(x) && x > 0 && x <= 1;
}

/** \return "" when the model is physically meaningful, else the first broken bound */
inline std::string
CheckModel(const ModelSpec& m)
{
    if (m.layers == 0 || m.hidden == 0 || m.heads == 0 || m.kvHeads == 0 || m.headDim == 0
        || m.ffn == 0 || m.vocab == 0 || m.maxSequence == 0)
    {
        return "a zero size";
    }
    if (m.heads % m.kvHeads != 0)
    {
        return "heads not a multiple of kv_heads";
    }
    if (m.IsMoe() && (m.topK == 0 || m.topK > m.experts || m.expertFfn == 0))
    {
        return "bad mixture of experts";
    }
    if (!m.IsMoe() && m.experts > 1)
    {
        return "experts without MoE";
    }
    // Validate() keeps the estimate within 2^56 parameters: the exact count must not wrap.
    const long double estimate =
        (long double) m.MoeLayers() * m.LayerParameters(true)
        + (long double) (m.layers - m.MoeLayers()) * m.LayerParameters(false);
    if (m.ParameterCount() == 0 || estimate > std::ldexp(1.0L, 58)
        || (long double) m.ParameterCount() < estimate)
    {
        return "parameter count out of range or wrapped";
    }
    return "";
}

/** \return "" when the hardware is physically meaningful, else the first broken bound */
inline std::string
CheckHardware(const HardwareSpec& h)
{
    const GpuSpec& g = h.gpu;
    if (g.smCount == 0 || !Positive(g.clockHz) || g.registersPerSm == 0 || g.maxThreadsPerSm == 0
        || g.maxBlocksPerSm == 0 || g.mmaTileM == 0 || g.mmaTileN == 0 || g.clusterMulticast == 0)
    {
        return "a zero GPU count or clock";
    }
    if (g.tensorFlops.empty() || g.vectorFlops.empty())
    {
        return "no FLOP rates";
    }
    for (const auto& rates : {g.tensorFlops, g.vectorFlops})
    {
        for (const auto& [type, rate] : rates)
        {
            if (!Positive(rate))
            {
                return "a FLOP rate not positive and finite";
            }
        }
    }
    if (g.sharedMemoryPerSmBytes == 0 || g.sharedMemoryPerBlockBytes == 0
        || g.sharedMemoryPerBlockBytes > g.sharedMemoryPerSmBytes || g.l2Bytes == 0
        || g.hbmBytes == 0)
    {
        return "a zero memory size";
    }
    if (!Positive(g.smemBytesPerClockPerSm) || !Positive(g.l2BandwidthBps)
        || !Positive(g.hbmBandwidthBps) || !NonNegative(g.launchOverheadS)
        || !NonNegative(g.memoryLatencyS))
    {
        return "a bandwidth or latency out of range";
    }
    const auto& e = g.efficiency;
    if (!Fraction(e.tensor) || !Fraction(e.vector) || !Fraction(e.hbm) || !Fraction(e.l2)
        || !Fraction(e.smem))
    {
        return "an efficiency outside (0, 1]";
    }
    const auto& dims = h.network.dimensions;
    if (dims.empty())
    {
        return "no network dimension";
    }
    for (std::size_t i = 0; i < dims.size(); ++i)
    {
        const auto& d = dims[i];
        if ((d.size == 0 && i + 1 != dims.size()) || !Positive(d.bandwidthBps)
            || !NonNegative(d.latencyS) || !NonNegative(d.switchLatencyS)
            || !Fraction(d.wireEfficiency) || !std::isfinite(d.oversubscription)
            || d.oversubscription < 1)
        {
            return "network dimension " + d.name + " out of range";
        }
        if (!d.shape.empty())
        {
            uint64_t product = 1;
            for (auto e : d.shape)
            {
                product *= e;
            }
            if (product != d.size)
            {
                return "mesh shape does not multiply to the size";
            }
        }
    }
    for (const auto& f : h.network.faults)
    {
        if (!std::isfinite(f.factor) || f.factor < 0 || f.factor > 1)
        {
            return "a fault factor outside [0, 1]";
        }
    }
    return "";
}

/** \return "" when the run settings are physically meaningful, else the first broken bound */
inline std::string
CheckRun(const RunSpec& r)
{
    const auto& p = r.parallel;
    if (p.tp == 0 || p.pp == 0 || p.dp == 0 || p.cp == 0 || p.ep == 0 || p.virtualStages == 0
        || p.zeroStage > 3)
    {
        return "a zero parallel degree or bad ZeRO stage";
    }
    if (r.microBatch == 0 || r.globalBatch == 0 || r.sequence == 0 || r.batch == 0
        || r.promptTokens == 0 || r.GradBucketBytes() == 0)
    {
        return "a zero batch, sequence or bucket";
    }
    if (!(r.moeImbalance >= 1.0) || (p.firstStageLayers > 0 && p.pp < 2)
        || (p.lastStageLayers > 0 && p.pp < 2) || (p.SplitExtraLayers() > 0 && p.pp < 2))
    {
        return "an MoE imbalance below 1 or uneven stages without a pipeline";
    }
    return "";
}

} // namespace bounds
} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_SPEC_BOUNDS_CHECK_H
