/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "gpu-power-model.h"

#include "ns3/log.h"

#include <algorithm>

namespace ns3 {
namespace rapidllm {

NS_LOG_COMPONENT_DEFINE("RapidLlmGpuPowerModel");

const char*
ToString(ClockPolicy policy)
{
    return policy == ClockPolicy::BOOST ? "boost" : "sustained";
}

namespace kernel {

namespace {
/**
 * Sets the clock, energy and board power of \p c, evaluated at \p clockHz: its dynamic energy,
 * and the idle power at that clock, which is lower than the waiting board's (at its top clock)
 * where the power limit holds the kernel below it; its energy is what it adds to the waiting
 * board's.
 */
void
Annotate(const GpuSpec& g, double clockHz, DataType type, OperatorCost& c)
{
    c.clockHz = clockHz;
    const double idleW = g.power.IdleWAt(clockHz);
    const double waitingW = g.power.WaitingW();
    const double dynamicJ = DynamicEnergy(g, c, clockHz, type);
    c.energyJ = dynamicJ + (idleW - waitingW) * c.timeS;
    c.powerW = idleW + (c.timeS > 0 ? dynamicJ / c.timeS : 0.0);
}
} // namespace

double
DynamicEnergy(const GpuSpec& g, const OperatorCost& c, double clockHz, DataType type)
{
    if (!g.power.Has())
    {
        return 0.0;
    }
    const double rated = g.ratedClockHz > 0 ? g.ratedClockHz : g.clockHz;
    const double v2 = (clockHz / rated) * (clockHz / rated);
    const double perFlop = c.tensorCores ? g.TensorJoulesPerFlop(type) : g.power.vectorJPerFlop;
    return v2 * perFlop * c.flops + g.power.hbmJPerByte * c.hbmBytes;
}

OperatorCost
RunAtClock(const GpuSpec& g,
           ClockPolicy policy,
           DataType type,
           const std::function<OperatorCost(const GpuSpec&)>& eval)
{
    if (!g.power.Has())
    {
        return eval(g);
    }
    const double boost = g.power.TopClockHz(); // the boost clock, or a lock below it
    OperatorCost c = eval(g.AtClock(boost));
    Annotate(g, boost, type, c);
    if (policy == ClockPolicy::BOOST || c.powerW <= g.power.limitW)
    {
        return c;
    }
    // Board power rises with the clock (more FLOPs per second, each costing more energy), so
    // the highest clock within the limit is found by bisection. The floor is a quarter of the
    // boost clock, far below any power-limited clock of a data-centre GPU.
    double lo = 0.25 * boost;
    double hi = boost;
    OperatorCost best = eval(g.AtClock(lo));
    Annotate(g, lo, type, best);
    if (best.powerW > g.power.limitW)
    {
        // Even the floor draws more than the limit: the HBM's traffic does not slow with the
        // SMs' clock (a memory-bound kernel under a 200 W cap on an H100). The board holds the
        // limit by slowing the kernel as a whole: the same dynamic energy over a longer time,
        // beside the floor's idle power.
        const double idleW = g.power.IdleWAt(lo);
        if (g.power.limitW > idleW)
        {
            const double dynamicJ = DynamicEnergy(g, best, lo, type);
            best.timeS = std::max(best.timeS, dynamicJ / (g.power.limitW - idleW));
            Annotate(g, lo, type, best);
        }
        return best;
    }
    for (int i = 0; i < 16; ++i) // (0.75 x boost) / 2^16: ~20 kHz
    {
        const double mid = 0.5 * (lo + hi);
        OperatorCost m = eval(g.AtClock(mid));
        Annotate(g, mid, type, m);
        if (m.powerW > g.power.limitW)
        {
            hi = mid;
        }
        else
        {
            lo = mid;
            best = m;
        }
    }
    NS_LOG_LOGIC(c.kind << ": " << c.powerW << " W at " << boost / 1e6 << " MHz exceeds "
                        << g.power.limitW << " W; runs at " << best.clockHz / 1e6 << " MHz");
    return best;
}

} // namespace kernel
} // namespace rapidllm
} // namespace ns3
