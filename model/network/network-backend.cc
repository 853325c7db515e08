/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "network-backend.h"

#include "ns3/network-error.h"
#include "ns3/simulator.h"
#include "ns3/spec-error.h"
#include "ns3/trace-source-accessor.h"

namespace ns3 {
namespace rapidllm {

NS_OBJECT_ENSURE_REGISTERED(NetworkBackend);

TypeId
NetworkBackend::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::rapidllm::NetworkBackend")
            .SetParent<Object>()
            .SetGroupName("RapidLlm")
            .AddTraceSource("MessageDelivered",
                            "A message's last byte arrived (id, src, dst, bytes, latency in s).",
                            MakeTraceSourceAccessor(&NetworkBackend::m_deliveredTrace),
                            "ns3::rapidllm::NetworkBackend::MessageTracedCallback");
    return tid;
}

NetworkBackend::NetworkBackend() = default;
NetworkBackend::~NetworkBackend() = default;

void
NetworkBackend::SetTopology(Ptr<Topology> topology)
{
    m_topology = topology;
}

Ptr<Topology>
NetworkBackend::GetTopology() const
{
    return m_topology;
}

const NetworkView&
NetworkBackend::GetView() const
{
    if (!m_topology)
    {
        throw NetworkError("the network backend has no topology yet");
    }
    return *m_topology;
}

void
NetworkBackend::SetRouting(Ptr<RoutingPolicy> routing)
{
    m_routing = routing;
}

Ptr<RoutingPolicy>
NetworkBackend::GetRouting() const
{
    return m_routing;
}

void
NetworkBackend::NotifySent(uint64_t id, uint32_t src, uint32_t dst, uint64_t bytes)
{
    ++m_sent;
    if (!m_deliveredTrace.IsEmpty())
    {
        m_inFlight[id] = {src, dst, bytes, Simulator::Now().GetSeconds()};
    }
}

void
NetworkBackend::NotifyDelivered(uint64_t id)
{
    ++m_delivered;
    auto it = m_inFlight.find(id);
    if (it != m_inFlight.end())
    {
        const InFlight m = it->second;
        m_inFlight.erase(it);
        m_deliveredTrace(id, m.src, m.dst, m.bytes, Simulator::Now().GetSeconds() - m.sentAt);
    }
}

uint64_t
NetworkBackend::GetSentCount() const
{
    return m_sent;
}

uint64_t
NetworkBackend::GetDeliveredCount() const
{
    return m_delivered;
}

void
NetworkBackend::DoDispose()
{
    m_topology = nullptr;
    m_routing = nullptr;
    Object::DoDispose();
}

std::vector<uint32_t>
NetworkBackend::RoutePath(uint32_t src, uint32_t dst, uint64_t id)
{
    if (!m_topology || !m_routing)
    {
        throw SpecError("network", "", "the network backend has no topology or routing policy");
    }
    if (src >= m_topology->GetEndpointCount() || dst >= m_topology->GetEndpointCount())
    {
        throw SpecError("network",
                        "",
                        "endpoint " + std::to_string(std::max(src, dst))
                            + " does not exist (the topology has "
                            + std::to_string(m_topology->GetEndpointCount()) + " endpoints)");
    }
    return m_routing->Route(*m_topology, src, dst, id);
}

} // namespace rapidllm
} // namespace ns3
