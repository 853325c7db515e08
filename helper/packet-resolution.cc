/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "packet-resolution.h"

#include "ns3/config.h"
#include "ns3/nstime.h"
#include "ns3/rapidllm-error.h"
#include "ns3/trace-replayer.h"

namespace ns3 {
namespace rapidllm {

namespace {
/** Whether this library has started a simulation in the process. */
bool g_simulated = false;
} // namespace

void
NoteSimulation()
{
    g_simulated = true;
}

void
UsePicoseconds()
{
    if (Time::GetResolution() == Time::PS)
    {
        return;
    }
    if (g_simulated)
    {
        // ns-3 dereferences its list of Time values to convert, which the simulator's start
        // freed: a segmentation fault.
        throw Error("UsePicoseconds() comes after this process's first simulation: call it "
                    "before any Run(), Install() or other simulation (ns-3 converts the Time "
                    "values to a new resolution only until the simulator starts)");
    }
    // (Nothing here may touch the simulator: creating it ends the conversion of Time values.)
    TypeId::AttributeInformation info;
    TraceReplayer::GetTypeId().LookupAttributeByName("MaxSimulatedTime", &info);
    const auto limit = DynamicCast<const TimeValue>(info.initialValue);
    if (limit && limit->Get() > Seconds(1e6))
    {
        Config::SetDefault("ns3::rapidllm::TraceReplayer::MaxSimulatedTime",
                           TimeValue(Seconds(1e6)));
    }
    Time::SetResolution(Time::PS);
}

} // namespace rapidllm
} // namespace ns3
