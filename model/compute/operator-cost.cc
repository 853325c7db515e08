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

} // namespace rapidllm
} // namespace ns3
