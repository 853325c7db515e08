/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "flow-network.h"

#include "ns3/log.h"
#include "ns3/network-error.h"
#include "ns3/simulator.h"
#include "ns3/type-registry.h"

#include <algorithm>
#include <cmath>

namespace ns3 {
namespace rapidllm {

NS_LOG_COMPONENT_DEFINE("RapidLlmFlowNetwork");
NS_OBJECT_ENSURE_REGISTERED(FlowNetwork);

/** The backend's short name. */
static TypeRegistrar<NetworkBackend> g_flowBackend("flow", FlowNetwork::GetTypeId());

TypeId
FlowNetwork::GetTypeId()
{
    static TypeId tid = TypeId("ns3::rapidllm::FlowNetwork")
                            .SetParent<NetworkBackend>()
                            .SetGroupName("RapidLlm")
                            .AddConstructor<FlowNetwork>();
    return tid;
}

FlowNetwork::FlowNetwork() = default;
FlowNetwork::~FlowNetwork() = default;

void
FlowNetwork::DoDispose()
{
    m_event.Cancel();
    m_transfers.clear();
    m_completions.Clear();
    m_solver.Reset(0);
    m_linkUse.clear();
    NetworkBackend::DoDispose();
}

double
FlowNetwork::Now()
{
    return Simulator::Now().GetSeconds();
}

void
FlowNetwork::SetTopology(Ptr<Topology> topology)
{
    if (m_solver.GetFlowCount() > 0)
    {
        throw NetworkError("cannot change the topology while flows are in flight");
    }
    NetworkBackend::SetTopology(topology);
    m_solver.Reset(topology->GetLinkCount());
    m_transfers.clear();
    m_completions.Clear();
    m_linkUse.assign(topology->GetLinkCount(), LinkUse());
    m_topologyVersion = topology->GetVersion();
    for (uint32_t l = 0; l < topology->GetLinkCount(); ++l)
    {
        m_solver.SetCapacity(l, topology->GetLink(l).Bandwidth());
    }
}

bool
FlowNetwork::SupportsFluid() const
{
    return true;
}

void
FlowNetwork::SyncCapacities()
{
    if (m_topology->GetVersion() == m_topologyVersion)
    {
        return;
    }
    m_topologyVersion = m_topology->GetVersion();
    for (uint32_t l = 0; l < m_topology->GetLinkCount(); ++l)
    {
        m_solver.SetCapacity(l, m_topology->GetLink(l).Bandwidth());
    }
    NS_LOG_LOGIC("link capacities re-read (topology version " << m_topologyVersion << ")");
}

void
FlowNetwork::DoSend(uint64_t id,
                    uint32_t src,
                    uint32_t dst,
                    uint64_t bytes,
                    const std::vector<uint32_t>& path,
                    const DeliveryCallback& onDelivered)
{
    const double latency = m_topology->PathLatency(path) * GetLatencyCount();
    if (bytes == 0)
    {
        Simulator::Schedule(Seconds(latency),
                            [this, id, onDelivered]()
                            {
                                Deliver(id, onDelivered);
                            });
        return;
    }
    const double now = Now();
    const uint32_t f = m_solver.AddFlow(path);
    if (f >= m_transfers.size())
    {
        m_transfers.resize(f + 1);
    }
    Transfer& t = m_transfers[f];
    t.remaining = static_cast<double>(bytes);
    t.lastUpdate = now;
    t.latency = latency;
    t.bytes = bytes;
    t.id = id;
    t.callback = onDelivered;
    for (uint32_t l : path)
    {
        if (m_solver.GetLinkFlowCount(l) == 1)
        {
            m_linkUse[l].busySince = now;
        }
    }
    NS_LOG_DEBUG("flow " << f << " carries message " << id << " over "
                         << m_topology->DescribePath(path));
    RequestUpdate();
}

void
FlowNetwork::RequestUpdate()
{
    if (!m_updatePending)
    {
        m_updatePending = true;
        Simulator::ScheduleNow(&FlowNetwork::Update, this);
    }
}

void
FlowNetwork::Update()
{
    m_updatePending = false;
    const double now = Now();
    // Completions: the event fires at the first nanosecond at or after the earliest end, so
    // every flow ending up to now is done (10 ps slack absorbs rounding of the seconds value).
    while (!m_completions.IsEmpty())
    {
        const IndexedMinHeap::Entry top = m_completions.Top();
        if (top.key > now + 1e-11)
        {
            break;
        }
        m_completions.Erase(top.item);
        Finish(top.item, now);
    }
    SyncCapacities();
    Solve(now);
    ScheduleNext();
}

void
FlowNetwork::Finish(uint32_t f, double now)
{
    Transfer& t = m_transfers[f];
    const uint32_t* path = m_solver.GetPath(f);
    for (uint32_t i = 0; i < m_solver.GetPathLength(f); ++i)
    {
        LinkUse& use = m_linkUse[path[i]];
        use.bytes += static_cast<double>(t.bytes);
        if (m_solver.GetLinkFlowCount(path[i]) == 1)
        {
            use.busyTime += now - use.busySince; // the link falls idle
        }
    }
    m_solver.RemoveFlow(f);
    const uint64_t id = t.id;
    DeliveryCallback cb = t.callback;
    t.callback = DeliveryCallback();
    NS_LOG_DEBUG("flow " << f << " (message " << id << ") transmitted; delivery in " << t.latency
                         << " s");
    Simulator::Schedule(Seconds(t.latency),
                        [this, id, cb]()
                        {
                            Deliver(id, cb);
                        });
}

void
FlowNetwork::Solve(double now)
{
    const std::vector<MaxMinSolver::RateChange>& changed = m_solver.Solve();
    // Bring the bytes left up to date at the old rates, and move the transmission end of
    // every flow whose rate changed.
    for (const auto& c : changed)
    {
        Transfer& t = m_transfers[c.flow];
        t.remaining = std::max(0.0, t.remaining - c.oldRate * (now - t.lastUpdate));
        t.lastUpdate = now;
        const double rate = m_solver.GetRate(c.flow);
        if (rate != c.oldRate)
        {
            if (rate > 0)
            {
                m_completions.Set(c.flow, now + t.remaining / rate);
            }
            else
            {
                // A flow at rate 0 (its link died under it) waits for RefreshRates().
                m_completions.Erase(c.flow);
            }
        }
    }
    if (!changed.empty())
    {
        NS_LOG_LOGIC("t=" << now << " s: " << changed.size() << " of " << m_solver.GetFlowCount()
                          << " flows recomputed");
    }
}

void
FlowNetwork::ScheduleNext()
{
    if (m_completions.IsEmpty())
    {
        m_event.Cancel();
        m_eventTime = -1;
        return;
    }
    const double ns = std::ceil(m_completions.Top().key * 1e9);
    if (m_event.IsRunning() && m_eventTime == ns)
    {
        return;
    }
    m_event.Cancel();
    Time at = NanoSeconds(static_cast<int64_t>(ns));
    Time delay = at > Simulator::Now() ? at - Simulator::Now() : Time(0);
    m_event = Simulator::Schedule(delay, &FlowNetwork::Update, this);
    m_eventTime = ns;
}

void
FlowNetwork::RefreshRates()
{
    SyncCapacities();
    m_solver.Invalidate();
    if (m_solver.NeedsSolve())
    {
        RequestUpdate();
    }
}

double
FlowNetwork::GetFlowRate(uint64_t messageId) const
{
    for (uint32_t f = 0; f < m_solver.GetHandleBound(); ++f)
    {
        if (m_solver.IsActive(f) && m_transfers[f].id == messageId)
        {
            return m_solver.GetRate(f);
        }
    }
    return 0.0;
}

uint32_t
FlowNetwork::GetActiveFlowCount() const
{
    return m_solver.GetFlowCount();
}

uint64_t
FlowNetwork::GetSolveCount() const
{
    return m_solver.GetSolveCount();
}

uint64_t
FlowNetwork::GetSolvedFlowCount() const
{
    return m_solver.GetSolvedFlowCount();
}

void
FlowNetwork::DoGetStats(NetworkStats& stats) const
{
    stats.solves = m_solver.GetSolveCount();
    stats.solvedFlows = m_solver.GetSolvedFlowCount();
    const double now = Now();
    for (uint32_t l = 0; l < m_linkUse.size() && l < stats.links.size(); ++l)
    {
        const LinkUse& use = m_linkUse[l];
        stats.links[l].bytes = use.bytes;
        stats.links[l].busyTimeS =
            use.busyTime + (m_solver.GetLinkFlowCount(l) == 0 ? 0.0 : now - use.busySince);
    }
}

} // namespace rapidllm
} // namespace ns3
