/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "packet-resolution.h"

#include "ns3/config.h"
#include "ns3/nstime.h"
#include "ns3/trace-replayer.h"

namespace ns3 {
namespace rapidllm {

void
UsePicoseconds()
{
    if (Time::GetResolution() == Time::PS)
    {
        return;
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
