/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "operator-cost.h"

namespace ns3 {
namespace rapidllm {

std::string
ToString(BoundLevel level)
{
    switch (level)
    {
        case BoundLevel::COMPUTE:
            return "compute";
        case BoundLevel::SMEM:
            return "smem";
        case BoundLevel::L2:
            return "l2";
        case BoundLevel::HBM:
            return "hbm";
        case BoundLevel::LAUNCH:
            return "launch";
    }
    return "compute";
}

std::ostream&
operator<<(std::ostream& os, BoundLevel level)
{
    return os << ToString(level);
}

double
OperatorCost::FlopRate() const
{
    return timeS > 0 ? flops / timeS : 0.0;
}

BoundLevel
OperatorCost::SlowestLevel() const
{
    BoundLevel level = BoundLevel::COMPUTE;
    double worst = computeTimeS;
    if (smemTimeS > worst)
    {
        worst = smemTimeS;
        level = BoundLevel::SMEM;
    }
    if (l2TimeS > worst)
    {
        worst = l2TimeS;
        level = BoundLevel::L2;
    }
    if (hbmTimeS > worst)
    {
        level = BoundLevel::HBM;
    }
    return level;
}

OperatorCost
Sequential(const std::string& kind, const std::vector<OperatorCost>& parts)
{
    OperatorCost total;
    total.kind = kind;
    total.kernels = 0;
    for (const auto& p : parts)
    {
        total.timeS += p.timeS;
        total.flops += p.flops;
        total.smemBytes += p.smemBytes;
        total.l2Bytes += p.l2Bytes;
        total.hbmBytes += p.hbmBytes;
        total.computeTimeS += p.computeTimeS;
        total.hbmTimeS += p.hbmTimeS;
        total.overheadTimeS += p.overheadTimeS;
        total.kernels += p.kernels;
        total.energyJ += p.energyJ;
        total.clockHz += p.clockHz * p.timeS;
        total.powerW += p.powerW * p.timeS;
    }
    if (total.timeS > 0)
    {
        total.clockHz /= total.timeS;
        total.powerW /= total.timeS;
    }
    return total;
}

} // namespace rapidllm
} // namespace ns3
