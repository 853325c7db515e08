/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "network-backend.h"

#include "ns3/log.h"
#include "ns3/network-error.h"
#include "ns3/simulator.h"
#include "ns3/trace-source-accessor.h"
#include "ns3/type-registry.h"

#include <algorithm>

namespace ns3 {
namespace rapidllm {

NS_LOG_COMPONENT_DEFINE("RapidLlmNetworkBackend");
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

NetworkBackend::~NetworkBackend()
{
    if (m_faults)
    {
        m_faults->Disarm(); // its events call back into this backend
    }
}

Ptr<NetworkBackend>
NetworkBackend::Create(const std::string& name)
{
    return TypeRegistry<NetworkBackend>::Create(name, "backend", "network backend");
}

std::vector<std::string>
NetworkBackend::Names()
{
    return TypeRegistry<NetworkBackend>::Names();
}

void
NetworkBackend::SetTopology(Ptr<Topology> topology)
{
    m_topology = topology;
    m_routes.clear();
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
NetworkBackend::SetFaultSchedule(Ptr<FaultSchedule> schedule)
{
    if (!m_topology)
    {
        throw NetworkError("the network backend has no topology for the fault schedule");
    }
    if (m_faults)
    {
        m_faults->Disarm();
    }
    for (EventId& e : m_faultBreaks)
    {
        e.Cancel();
    }
    m_faultBreaks.clear();
    m_faults = schedule;
    if (m_faults)
    {
        m_faults->Check(*m_topology);
        // Reservations on a fault's links break just before it applies (scheduled first, so
        // run first at that instant): the owners' streams then take the paths they had, as
        // transfers in flight keep theirs.
        for (const ScheduledFault& f : m_faults->GetFaults())
        {
            m_faultBreaks.push_back(
                Simulator::Schedule(f.start,
                                    [this, selector = f.selector, source = f.source]()
                                    {
                                        if (m_reservations.empty())
                                        {
                                            return;
                                        }
                                        for (uint32_t l : m_topology->SelectLinks(selector, source))
                                        {
                                            if (l < m_linkOwner.size() && m_linkOwner[l] != 0)
                                            {
                                                Break(m_linkOwner[l]);
                                            }
                                        }
                                    }));
        }
        m_faults->Arm(m_topology,
                      Callback<void, const std::vector<uint32_t>&>(
                          [this](const std::vector<uint32_t>& links)
                          {
                              // What ran alone on a changed link no longer runs as measured.
                              for (uint32_t l : links)
                              {
                                  if (l < m_linkOwner.size() && m_linkOwner[l] != 0)
                                  {
                                      Break(m_linkOwner[l]);
                                  }
                              }
                              DoApplyFault(links);
                          }));
    }
}

Ptr<FaultSchedule>
NetworkBackend::GetFaultSchedule() const
{
    return m_faults;
}

void
NetworkBackend::DoApplyFault(const std::vector<uint32_t>& links)
{}

bool
NetworkBackend::MayHaveFaults() const
{
    return GetView().HasFaults() || (m_faults && !m_faults->IsEmpty());
}

bool
NetworkBackend::RoutesSymmetrically() const
{
    GetView(); // throws without a topology
    return !m_routing || m_routing->RoutesSymmetrically(*m_topology);
}

bool
NetworkBackend::FaultsSpareDimension(uint32_t d) const
{
    if (!MayHaveFaults())
    {
        return true;
    }
    if (!m_routing || !m_routing->KeepsDimensions())
    {
        return false;
    }
    for (uint32_t l = 0; l < m_topology->GetLinkCount(); ++l)
    {
        const TopologyLink& link = m_topology->GetLink(l);
        if (link.factor != 1.0 && link.dimension == d)
        {
            return false;
        }
    }
    if (m_faults)
    {
        for (const ScheduledFault& f : m_faults->GetFaults())
        {
            for (uint32_t l : m_topology->SelectLinks(f.selector, f.source))
            {
                if (m_topology->GetLink(l).dimension == d)
                {
                    return false;
                }
            }
        }
    }
    return true;
}

void
NetworkBackend::SetRouting(Ptr<RoutingPolicy> routing)
{
    m_routing = routing;
    m_routes.clear();
}

Ptr<RoutingPolicy>
NetworkBackend::GetRouting() const
{
    return m_routing;
}

uint64_t
NetworkBackend::Send(uint32_t src,
                     uint32_t dst,
                     uint64_t bytes,
                     DeliveryCallback onDelivered,
                     uint32_t latencies,
                     uint64_t reservation,
                     bool ordered,
                     bool logged,
                     std::optional<uint64_t> flow)
{
    if (latencies != 1 && !SupportsFluid())
    {
        throw NetworkError("this network backend carries messages only (a latency count of "
                           + std::to_string(latencies) + " needs a backend with fluid streams)");
    }
    const uint64_t id = m_nextId;
    const uint64_t flowId = flow.value_or(id);
    const std::vector<uint32_t> path = RoutePath(src, dst, flowId); // throws before counting
    ++m_nextId;
    ++m_sent;
    const double now = Simulator::Now().GetSeconds();
    if (m_firstSend < 0)
    {
        m_firstSend = now;
    }
    if (!m_deliveredTrace.IsEmpty())
    {
        m_inFlight[id] = {src, dst, bytes, now};
    }
    NS_LOG_DEBUG("send " << id << ": " << src << " > " << dst << ", " << bytes << " bytes, "
                         << path.size() << " links");
    if (path.empty())
    {
        // src == dst: nothing crosses the network.
        Simulator::ScheduleNow(
            [this, id, onDelivered]()
            {
                Deliver(id, onDelivered);
            });
        return id;
    }
    if (!m_reservations.empty() && bytes > 0)
    {
        // An intruder breaks the reservations it reaches (their owners may send from the
        // callback: those messages take later ids and join the links before this one); a
        // message of a reservation that leaves its links breaks its own.
        for (uint32_t l : path)
        {
            const uint64_t owner = m_linkOwner[l];
            if (owner != 0 && owner != reservation)
            {
                Break(owner);
            }
        }
        if (reservation != 0 && m_reservations.count(reservation) != 0)
        {
            for (uint32_t l : path)
            {
                if (m_linkOwner[l] != reservation)
                {
                    Break(reservation);
                    break;
                }
            }
        }
    }
    m_latencies = latencies;
    m_reservation = reservation;
    m_ordered = ordered;
    m_logged = logged;
    m_flow = flowId;
    DoSend(id, src, dst, bytes, path, onDelivered);
    m_latencies = 1;
    m_reservation = 0;
    m_ordered = false;
    m_logged = false;
    m_flow = 0;
    return id;
}

bool
NetworkBackend::SupportsReservations() const
{
    return false;
}

bool
NetworkBackend::IsLinkBusy(uint32_t link) const
{
    return false;
}

NetworkBackend::LinkLoad
NetworkBackend::GetLinkLoad(uint32_t link) const
{
    return DoGetLinkLoad(link);
}

std::vector<double>
NetworkBackend::GetPendingBytes(const std::vector<uint32_t>& links) const
{
    return std::vector<double>(links.size(), 0.0);
}

std::vector<uint32_t>
NetworkBackend::ReservableLinks(const std::vector<EndpointPair>& pairs)
{
    std::vector<uint32_t> links;
    if (!SupportsReservations() || !m_routing || m_routing->RoutesPerFlow())
    {
        return links;
    }
    for (const EndpointPair& p : pairs)
    {
        if (p.first == p.second)
        {
            continue;
        }
        const std::vector<uint32_t> path = RoutePath(p.first, p.second, m_nextId);
        links.insert(links.end(), path.begin(), path.end());
    }
    std::sort(links.begin(), links.end());
    links.erase(std::unique(links.begin(), links.end()), links.end());
    return links;
}

uint64_t
NetworkBackend::Reserve(const std::vector<uint32_t>& links, BrokenCallback onBroken, bool measure)
{
    if (links.empty() || !SupportsReservations() || !m_topology)
    {
        return 0;
    }
    if (m_linkOwner.size() != m_topology->GetLinkCount())
    {
        m_linkOwner.assign(m_topology->GetLinkCount(), 0);
    }
    for (uint32_t l : links)
    {
        if (l >= m_linkOwner.size() || m_linkOwner[l] != 0 || IsLinkBusy(l))
        {
            return 0;
        }
    }
    const uint64_t id = ++m_nextReservation;
    for (uint32_t l : links)
    {
        m_linkOwner[l] = id;
    }
    std::vector<LinkLoad> before;
    if (measure)
    {
        before.reserve(links.size());
        for (uint32_t l : links)
        {
            before.push_back(DoGetLinkLoad(l));
        }
    }
    m_reservations.emplace(id, Reservation{links, onBroken, std::move(before)});
    NS_LOG_LOGIC("reservation " << id << " of " << links.size() << " links");
    return id;
}

void
NetworkBackend::Release(uint64_t reservation)
{
    auto it = m_reservations.find(reservation);
    if (it == m_reservations.end())
    {
        return;
    }
    for (uint32_t l : it->second.links)
    {
        m_linkOwner[l] = 0;
    }
    m_reservations.erase(it);
}

void
NetworkBackend::Break(uint64_t reservation)
{
    auto it = m_reservations.find(reservation);
    if (it == m_reservations.end())
    {
        return;
    }
    const BrokenCallback onBroken = it->second.onBroken;
    Release(reservation);
    ++m_broken;
    NS_LOG_LOGIC("reservation " << reservation << " broken");
    if (!onBroken.IsNull())
    {
        onBroken(reservation);
    }
}

void
NetworkBackend::BreakAllReservations()
{
    while (!m_reservations.empty())
    {
        Break(m_reservations.begin()->first);
    }
}

std::vector<NetworkBackend::LinkLoad>
NetworkBackend::GetReservedLoad(uint64_t reservation) const
{
    std::vector<LinkLoad> load;
    auto it = m_reservations.find(reservation);
    if (it == m_reservations.end())
    {
        return load;
    }
    const Reservation& r = it->second;
    load.reserve(r.before.size());
    for (std::size_t i = 0; i < r.before.size(); ++i)
    {
        const LinkLoad now = DoGetLinkLoad(r.links[i]);
        load.push_back({now.bytes - r.before[i].bytes, now.busyS - r.before[i].busyS});
    }
    return load;
}

void
NetworkBackend::AddLinkLoad(const std::vector<uint32_t>& links, const std::vector<LinkLoad>& load)
{
    for (std::size_t i = 0; i < links.size() && i < load.size(); ++i)
    {
        DoAddLinkLoad(links[i], load[i]);
    }
}

void
NetworkBackend::AddPathBytes(uint32_t src, uint32_t dst, double bytes)
{
    if (bytes <= 0 || src == dst)
    {
        return;
    }
    for (uint32_t l : RoutePath(src, dst, m_nextId))
    {
        DoAddLinkLoad(l, {bytes, 0.0});
    }
}

std::vector<uint32_t>
NetworkBackend::GetIdleRoute(uint32_t src, uint32_t dst)
{
    return RoutePath(src, dst, m_nextId);
}

std::pair<double, double>
NetworkBackend::GetIdlePath(uint32_t src, uint32_t dst)
{
    const std::vector<uint32_t> path = GetIdleRoute(src, dst);
    double rate = 0;
    for (uint32_t l : path)
    {
        const double r = m_topology->GetLink(l).Bandwidth();
        rate = rate == 0 ? r : std::min(rate, r);
    }
    return {rate, m_topology->PathLatency(path)};
}

NetworkBackend::LinkLoad
NetworkBackend::DoGetLinkLoad(uint32_t link) const
{
    return {};
}

void
NetworkBackend::DoAddLinkLoad(uint32_t link, const LinkLoad& load)
{}

uint32_t
NetworkBackend::GetReservationCount() const
{
    return static_cast<uint32_t>(m_reservations.size());
}

uint64_t
NetworkBackend::GetBrokenCount() const
{
    return m_broken;
}

uint64_t
NetworkBackend::GetReservation() const
{
    return m_reservation;
}

bool
NetworkBackend::IsOrdered() const
{
    return m_ordered;
}

bool
NetworkBackend::IsLogged() const
{
    return m_logged;
}

std::vector<std::pair<double, double>>
NetworkBackend::TakeProgress(uint64_t message)
{
    return {};
}

bool
NetworkBackend::SupportsFluid() const
{
    return false;
}

uint64_t
NetworkBackend::GetFlow() const
{
    return m_flow;
}

uint32_t
NetworkBackend::GetLatencyCount() const
{
    return m_latencies;
}

bool
NetworkBackend::PreparesPairs() const
{
    return false;
}

void
NetworkBackend::Prepare(const std::vector<EndpointPair>& pairs, Callback<void> ready)
{
    if (!ready.IsNull())
    {
        Simulator::ScheduleNow(ready);
    }
}

void
NetworkBackend::Deliver(uint64_t id, const DeliveryCallback& onDelivered)
{
    ++m_delivered;
    m_lastDelivery = Simulator::Now().GetSeconds();
    NS_LOG_DEBUG("deliver " << id);
    auto it = m_inFlight.find(id);
    if (it != m_inFlight.end())
    {
        const InFlight m = it->second;
        m_inFlight.erase(it);
        m_deliveredTrace(id, m.src, m.dst, m.bytes, Simulator::Now().GetSeconds() - m.sentAt);
    }
    if (!onDelivered.IsNull())
    {
        onDelivered(id);
    }
}

NetworkStats
NetworkBackend::GetStats() const
{
    return CollectStats(true);
}

NetworkStats
NetworkBackend::GetCounters() const
{
    return CollectStats(false);
}

NetworkStats
NetworkBackend::CollectStats(bool links) const
{
    NetworkStats stats;
    stats.messagesSent = m_sent;
    stats.messagesDelivered = m_delivered;
    // To now while the simulator runs; after it was destroyed (a helper's Run() returned, Now()
    // reads 0 again), to the last delivery.
    const double now = std::max(Simulator::Now().GetSeconds(), m_lastDelivery);
    stats.windowS = m_firstSend < 0 ? 0.0 : std::max(0.0, now - m_firstSend);
    if (!links)
    {
        return stats; // (a backend's DoGetStats may take the per-link entries as given)
    }
    if (m_topology)
    {
        stats.links.resize(m_topology->GetLinkCount());
        for (uint32_t l = 0; l < stats.links.size(); ++l)
        {
            stats.links[l].link = l;
            stats.links[l].name = m_topology->DescribeLink(l);
        }
    }
    DoGetStats(stats);
    for (auto& s : stats.links)
    {
        const double bw = m_topology->GetLink(s.link).Bandwidth();
        s.utilization = stats.windowS > 0 && bw > 0 ? s.bytes / (bw * stats.windowS) : 0.0;
    }
    return stats;
}

void
NetworkBackend::DoGetStats(NetworkStats& stats) const
{}

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
    if (m_faults)
    {
        m_faults->Disarm();
        m_faults = nullptr;
    }
    m_topology = nullptr;
    m_routing = nullptr;
    m_inFlight.clear();
    m_reservations.clear();
    m_linkOwner.clear();
    for (EventId& e : m_faultBreaks)
    {
        e.Cancel();
    }
    m_faultBreaks.clear();
    Object::DoDispose();
}

std::vector<uint32_t>
NetworkBackend::RoutePath(uint32_t src, uint32_t dst, uint64_t id)
{
    if (!m_topology || !m_routing)
    {
        throw NetworkError("the network backend has no topology or routing policy");
    }
    if (src >= m_topology->GetEndpointCount() || dst >= m_topology->GetEndpointCount())
    {
        throw NetworkError("endpoint " + std::to_string(std::max(src, dst))
                           + " does not exist (the topology has "
                           + std::to_string(m_topology->GetEndpointCount()) + " endpoints)");
    }
    if (m_routing->RoutesPerFlow())
    {
        return m_routing->Route(*m_topology, src, dst, id);
    }
    // One path per pair whatever the flow (RoutesPerFlow): asked again only when the links
    // change (a fault moves the topology's version).
    const uint64_t version = m_topology->GetVersion();
    if (version != m_routesVersion)
    {
        m_routes.clear();
        m_routesVersion = version;
    }
    const uint64_t key = (uint64_t(src) << 32) | dst;
    const auto cached = m_routes.find(key);
    if (cached != m_routes.end())
    {
        return cached->second;
    }
    std::vector<uint32_t> path = m_routing->Route(*m_topology, src, dst, id);
    if (m_routes.size() < kCachedRoutes)
    {
        m_routes.emplace(key, path);
    }
    return path;
}

} // namespace rapidllm
} // namespace ns3
