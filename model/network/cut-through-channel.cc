/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "cut-through-channel.h"

#include "ns3/node.h"
#include "ns3/point-to-point-net-device.h"
#include "ns3/simulator.h"

#include <algorithm>

namespace ns3 {
namespace rapidllm {

NS_OBJECT_ENSURE_REGISTERED(CutThroughChannel);

TypeId
CutThroughChannel::GetTypeId()
{
    static TypeId tid = TypeId("ns3::rapidllm::CutThroughChannel")
                            .SetParent<PointToPointChannel>()
                            .SetGroupName("RapidLlm")
                            .AddConstructor<CutThroughChannel>();
    return tid;
}

void
CutThroughChannel::SetCutThrough(std::size_t device, double portBps)
{
    m_portBps.at(device) = portBps;
}

bool
CutThroughChannel::TransmitStart(Ptr<const Packet> p, Ptr<PointToPointNetDevice> src, Time txTime)
{
    const std::size_t wire = src == GetSource(0) ? 0 : 1;
    Ptr<PointToPointNetDevice> dst = GetDestination(wire);
    Time arrival = txTime + GetDelay();
    if (m_portBps[wire] > 0)
    {
        const Time resend = Seconds(p->GetSize() * 8.0 / m_portBps[wire]);
        arrival = GetDelay() + std::max(Time(0), txTime - resend);
    }
    Simulator::ScheduleWithContext(
        dst->GetNode()->GetId(), arrival, &PointToPointNetDevice::Receive, dst, p->Copy());
    return true;
}

} // namespace rapidllm
} // namespace ns3
