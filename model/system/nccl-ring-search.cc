/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "nccl-ring-search.h"

#include <algorithm>
#include <cmath>

namespace ns3 {
namespace rapidllm {

namespace {
// NCCL 2.20.3 src/graph/search.cc: speedArrayIntra (Ampere and older) and sm90SpeedArrayIntra.
const std::vector<double> kSm80SpeedsGBps = {
    40.0, 30.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0, 7.0, 6.0, 5.0, 4.0, 3.0};
const std::vector<double> kSm90SpeedsGBps = {
    60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 15.0, 12.0, 6.0, 3.0};
// The ring search's channel limit: MAXCHANNELS / 2 (src/init.cc, ringGraph.maxChannels).
const uint32_t kMaxSearchChannels = 16;

/** \return the channels of \p speedGBps that \p gpuGBps carries (each takes it once a GPU) */
uint32_t
Fit(double gpuGBps, double speedGBps)
{
    // A hair of slack: 12 x 20 GB/s must fit a 240 GB/s link given as 300 x 0.8.
    const double n = std::floor(gpuGBps / speedGBps * (1 + 1e-9));
    return static_cast<uint32_t>(std::min<double>(n, kMaxSearchChannels));
}
} // namespace

const std::vector<double>&
NcclIntraSpeedsGBps(uint32_t sm)
{
    return sm >= 90 ? kSm90SpeedsGBps : kSm80SpeedsGBps;
}

NcclRingGraph
SearchNcclRing(uint32_t sm, double gpuBps)
{
    const std::vector<double>& speeds = NcclIntraSpeedsGBps(sm);
    const double gpuGBps = gpuBps / 1e9;
    // First pass: from the fastest speed the GPU's link takes, down while the next speed is
    // more than 0.49 of the best found; keep the largest channels x speed (the first on a tie),
    // and stop once it fills the link.
    size_t i = 0;
    while (i + 1 < speeds.size() && speeds[i] > gpuGBps)
    {
        ++i;
    }
    NcclRingGraph best;
    for (; i < speeds.size(); ++i)
    {
        if (best.channels > 0 && speeds[i] / (best.channelBps / 1e9) <= 0.49)
        {
            break;
        }
        const uint32_t n = Fit(gpuGBps, speeds[i]);
        if (n > 0 && n * speeds[i] > best.channels * best.channelBps / 1e9)
        {
            best.channels = n;
            best.channelBps = speeds[i] * 1e9;
        }
        if (best.channels * best.channelBps / 1e9 >= gpuGBps * (1 - 1e-9))
        {
            break;
        }
    }
    if (best.channels == 0)
    {
        // A link below the slowest speed: NCCL falls back to one ring; here at the link's rate.
        best.channels = 1;
        best.channelBps = std::min(gpuGBps, speeds.back()) * 1e9;
        return best;
    }
    // ncclTopoDupChannels: twice the channels at the speed split as many ways, from 25 GB/s a
    // channel, except on Hopper and later below 50 GB/s with more than 4 channels.
    const double speed = best.channelBps / 1e9;
    if (speed >= 25.0 && !(sm > 80 && speed < 50.0 && best.channels > 4))
    {
        const uint32_t dup = std::min(2 * best.channels, kMaxSearchChannels);
        const uint32_t split = (dup + best.channels - 1) / best.channels;
        best.channelBps /= split;
        best.channels = dup;
    }
    // Second pass: each faster speed with at least these channels, kept where its total is larger.
    const NcclRingGraph found = best;
    for (double s : speeds)
    {
        const uint32_t n = Fit(gpuGBps, s);
        if (s * 1e9 > found.channelBps && n >= found.channels
            && n * s > best.channels * best.channelBps / 1e9)
        {
            best.channels = n;
            best.channelBps = s * 1e9;
        }
    }
    return best;
}

NcclRingGraph
RingGraphOf(const NetworkDimensionSpec& dim)
{
    NcclRingGraph g;
    if (dim.nccl.ringChannels > 0)
    {
        g.channels = dim.nccl.ringChannels;
        g.channelBps = dim.nccl.channelBps;
    }
    else if (dim.nccl.sm > 0)
    {
        g = SearchNcclRing(dim.nccl.sm, dim.bandwidthBps * dim.wireEfficiency);
    }
    return g;
}

} // namespace rapidllm
} // namespace ns3
