/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "flow-network.h"

#include "ns3/boolean.h"
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
    static TypeId tid =
        TypeId("ns3::rapidllm::FlowNetwork")
            .SetParent<NetworkBackend>()
            .SetGroupName("RapidLlm")
            .AddConstructor<FlowNetwork>()
            .AddAttribute("FlowClasses",
                          "Merge messages sent at one instant with the same path and size into "
                          "one weighted flow class (same rates and times, less work); false "
                          "gives every message a flow of its own.",
                          BooleanValue(true),
                          MakeBooleanAccessor(&FlowNetwork::m_flowClasses),
                          MakeBooleanChecker());
    return tid;
}

namespace {
/**
 * Flows ending later than this (ns) schedule no event: the simulator's clock is a signed
 * 64-bit count of nanoseconds (Time::Max() = 9.22e18 ns, 292 years).
 */
constexpr double kHorizonNs = 9.0e18;

/** \return a hash of a flow class's identity: its path and message size */
uint64_t
ClassHash(const uint32_t* path, uint32_t length, uint64_t bytes)
{
    uint64_t h = bytes * 0x9E3779B97F4A7C15ull + length;
    for (uint32_t i = 0; i < length; ++i)
    {
        h = (h ^ path[i]) * 0xBF58476D1CE4E5B9ull;
        h ^= h >> 29;
    }
    return h;
}
} // namespace

FlowNetwork::FlowNetwork() = default;
FlowNetwork::~FlowNetwork() = default;

void
FlowNetwork::DoDispose()
{
    m_event.Cancel();
    m_transfers.clear();
    m_memberLists.clear();
    m_freeMemberLists.clear();
    m_table.clear();
    m_tableUsed.clear();
    m_completions.Clear();
    m_solver.Reset(0);
    m_linkUse.clear();
    m_logs.clear();
    m_freeLogs.clear();
    m_doneLogs.clear();
    m_connections.clear();
    m_orderedFlows.clear();
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
    m_messages = 0;
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

bool
FlowNetwork::SupportsReservations() const
{
    return true;
}

bool
FlowNetwork::IsLinkBusy(uint32_t link) const
{
    return m_solver.GetLinkFlowCount(link) > 0;
}

std::vector<double>
FlowNetwork::GetPendingBytes(const std::vector<uint32_t>& links) const
{
    std::vector<double> pending(links.size(), 0.0);
    if (links.empty() || m_solver.GetFlowCount() == 0)
    {
        return pending;
    }
    // Each link's own flows (a collective's floor asks for hundreds of links while thousands of
    // flows are active elsewhere), added in flow order as a walk over every flow would.
    const double now = Now();
    std::vector<uint32_t> flows;
    for (std::size_t i = 0; i < links.size(); ++i)
    {
        if (links[i] >= m_solver.GetLinkCount())
        {
            continue;
        }
        flows.clear();
        for (const auto& entry : m_solver.GetLinkFlows(links[i]))
        {
            flows.push_back(entry.first);
        }
        std::sort(flows.begin(), flows.end());
        for (uint32_t f : flows)
        {
            const Transfer& t = m_transfers[f];
            pending[i] += std::max(0.0, t.remaining - m_solver.GetRate(f) * (now - t.lastUpdate))
                          * m_solver.GetWeight(f);
        }
    }
    return pending;
}

NetworkBackend::LinkLoad
FlowNetwork::DoGetLinkLoad(uint32_t link) const
{
    if (link >= m_linkUse.size())
    {
        return {};
    }
    const LinkUse& use = m_linkUse[link];
    return {use.bytes,
            use.busyTime + (m_solver.GetLinkFlowCount(link) == 0 ? 0.0 : Now() - use.busySince)};
}

void
FlowNetwork::DoAddLinkLoad(uint32_t link, const LinkLoad& load)
{
    if (link < m_linkUse.size())
    {
        m_linkUse[link].bytes += load.bytes;
        m_linkUse[link].busyTime += load.busyS;
    }
}

std::vector<std::pair<double, double>>
FlowNetwork::TakeProgress(uint64_t message)
{
    auto it = m_doneLogs.find(message);
    if (it == m_doneLogs.end())
    {
        return {};
    }
    std::vector<std::pair<double, double>> log = std::move(it->second);
    m_doneLogs.erase(it);
    return log;
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
    if (bytes == 0)
    {
        Simulator::Schedule(Seconds(m_topology->PathLatency(path) * GetLatencyCount()),
                            [this, id, onDelivered]()
                            {
                                Deliver(id, onDelivered);
                            });
        return;
    }
    uint64_t connection = 0;
    if (IsOrdered())
    {
        // One connection per pair carries its ordered messages one after the other: behind a
        // message still transmitting, this one waits for its turn (Finish starts it).
        connection = (uint64_t(src) << 32 | dst) + 1;
        auto [it, idle] = m_connections.try_emplace(connection);
        if (!idle)
        {
            it->second.push_back({id,
                                  bytes,
                                  path,
                                  onDelivered,
                                  GetLatencyCount(),
                                  GetReservation(),
                                  Now(),
                                  IsLogged()});
            NS_LOG_DEBUG("message " << id << " waits behind " << it->second.size()
                                    << " on its connection");
            return;
        }
    }
    StartFlow(
        {id, bytes, path, onDelivered, GetLatencyCount(), GetReservation(), Now(), IsLogged()},
        connection);
    RequestUpdate();
}

void
FlowNetwork::StartFlow(const Queued& m, uint64_t connection)
{
    const std::vector<uint32_t>& path = m.path;
    const uint64_t bytes = m.bytes;
    ++m_messages;
    const double latency = m_topology->PathLatency(path) * m.latencies;
    const auto hash = static_cast<uint32_t>(
        ClassHash(path.data(), static_cast<uint32_t>(path.size()), bytes) >> 32);
    // Fluid streams (a latency count other than 1), reserved and logged messages (their
    // progress is recorded one by one) and ordered ones (one at a time per connection) keep flows
    // of their own.
    const bool logged = m.reservation != 0 || m.logged;
    const bool classes = m_flowClasses && m.latencies == 1 && !logged && connection == 0;
    const uint32_t joined = classes ? FindClass(hash, path, bytes) : kNoClass;
    if (joined != kNoClass)
    {
        // A later member of a class of this instant (its weight is set by Update()).
        Transfer& t = m_transfers[joined];
        if (t.others == 0)
        {
            uint32_t list;
            if (m_freeMemberLists.empty())
            {
                list = static_cast<uint32_t>(m_memberLists.size());
                m_memberLists.emplace_back();
            }
            else
            {
                list = m_freeMemberLists.back();
                m_freeMemberLists.pop_back();
            }
            t.others = list + 1;
        }
        m_memberLists[t.others - 1].push_back({m.id, m.callback});
        NS_LOG_DEBUG("message " << m.id << " joins flow " << joined);
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
    t.first = {m.id, m.callback};
    t.others = 0;
    t.log = 0;
    if (logged)
    {
        if (m_freeLogs.empty())
        {
            m_logs.emplace_back();
            t.log = static_cast<uint32_t>(m_logs.size());
        }
        else
        {
            t.log = m_freeLogs.back() + 1;
            m_freeLogs.pop_back();
        }
        // From its send: a message that waited for its connection kept all its bytes.
        m_logs[t.log - 1].assign(1, {m.sentAt, t.remaining});
        if (now > m.sentAt)
        {
            m_logs[t.log - 1].emplace_back(now, t.remaining);
        }
    }
    if (connection != 0)
    {
        m_orderedFlows[f] = connection;
    }
    for (uint32_t l : path)
    {
        if (m_solver.GetLinkFlowCount(l) == 1)
        {
            m_linkUse[l].busySince = now;
        }
    }
    if (classes)
    {
        OpenClass(hash, f);
    }
    NS_LOG_DEBUG("flow " << f << " carries message " << m.id << " over "
                         << m_topology->DescribePath(path));
}

uint32_t
FlowNetwork::FindClass(uint32_t hash, const std::vector<uint32_t>& path, uint64_t bytes) const
{
    if (m_table.empty())
    {
        return kNoClass;
    }
    const uint32_t mask = static_cast<uint32_t>(m_table.size() - 1);
    for (uint32_t slot = hash & mask; m_table[slot].flow != 0; slot = (slot + 1) & mask)
    {
        if (m_table[slot].hash != hash)
        {
            continue; // another class (the usual case): no need to look at its flow
        }
        const uint32_t f = m_table[slot].flow - 1;
        if (m_transfers[f].bytes == bytes && m_solver.GetPathLength(f) == path.size()
            && std::equal(path.begin(), path.end(), m_solver.GetPath(f)))
        {
            return f;
        }
    }
    return kNoClass;
}

void
FlowNetwork::OpenClass(uint32_t hash, uint32_t flow)
{
    // Open addressing, kept at most half full.
    if (2 * (m_tableUsed.size() + 1) > m_table.size())
    {
        std::vector<ClassSlot> old;
        old.reserve(m_tableUsed.size());
        for (uint32_t slot : m_tableUsed)
        {
            old.push_back(m_table[slot]);
        }
        m_table.assign(std::max<std::size_t>(64, 2 * m_table.size()), ClassSlot());
        m_tableUsed.clear();
        for (const ClassSlot& c : old)
        {
            Insert(c.hash, c.flow - 1);
        }
    }
    Insert(hash, flow);
}

void
FlowNetwork::Insert(uint32_t hash, uint32_t flow)
{
    const uint32_t mask = static_cast<uint32_t>(m_table.size() - 1);
    uint32_t slot = hash & mask;
    while (m_table[slot].flow != 0)
    {
        slot = (slot + 1) & mask;
    }
    m_table[slot] = {flow + 1, hash};
    m_tableUsed.push_back(slot);
}

void
FlowNetwork::CloseClasses()
{
    // The classes of this instant are complete: each flow weighs as many messages as it has.
    for (uint32_t slot : m_tableUsed)
    {
        const uint32_t f = m_table[slot].flow - 1;
        m_table[slot] = ClassSlot();
        const Transfer& t = m_transfers[f];
        if (t.others != 0)
        {
            m_solver.SetWeight(f, 1 + static_cast<uint32_t>(m_memberLists[t.others - 1].size()));
        }
    }
    m_tableUsed.clear();
}

void
FlowNetwork::RequestUpdate()
{
    // Also the transmission-end event: the Update() runs after the events already queued for
    // this instant, so that messages they send join the same solve as the departures.
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
    const double nowNs = static_cast<double>(Simulator::Now().GetNanoSeconds());
    CloseClasses();
    // Completions: the event fires at the first nanosecond at or after the earliest end, so
    // every flow ending up to now is done (10 ps slack absorbs rounding of the seconds value;
    // the nanosecond test matches ScheduleNext exactly, so no event can fire without finding
    // its flow due, however late in simulated time).
    m_due.clear();
    while (!m_completions.IsEmpty())
    {
        const IndexedMinHeap::Entry top = m_completions.Top();
        if (top.key > now + 1e-11 && std::ceil(top.key * 1e9) > nowNs)
        {
            break;
        }
        m_completions.Erase(top.item);
        m_due.push_back(top.item);
    }
    if (!m_orderedFlows.empty() && m_due.size() > 1)
    {
        // Ordered messages ending at one instant complete in the order they were sent, so what
        // their deliveries send next joins the connections in an order that does not depend on
        // the solver's handles (unordered flows keep theirs, first).
        auto key = [this](uint32_t f)
        {
            return m_orderedFlows.count(f) != 0 ? m_transfers[f].first.id + 1 : 0;
        };
        std::stable_sort(m_due.begin(),
                         m_due.end(),
                         [&key](uint32_t a, uint32_t b)
                         {
                             return key(a) < key(b);
                         });
    }
    for (uint32_t f : m_due)
    {
        uint64_t connection = 0;
        if (!m_orderedFlows.empty())
        {
            auto ordered = m_orderedFlows.find(f);
            if (ordered != m_orderedFlows.end())
            {
                connection = ordered->second;
                m_orderedFlows.erase(ordered);
            }
        }
        Finish(f, now);
        if (connection != 0)
        {
            // Its last byte has left: the next message of its connection starts now, in the
            // solve of this instant.
            auto it = m_connections.find(connection);
            if (it->second.empty())
            {
                m_connections.erase(it);
            }
            else
            {
                // A short queue (a few pieces' messages): taken from the front.
                const Queued next = std::move(it->second.front());
                it->second.erase(it->second.begin());
                StartFlow(next, connection);
            }
        }
    }
    SyncCapacities();
    Solve(now);
    ScheduleNext();
}

void
FlowNetwork::Finish(uint32_t f, double now)
{
    Transfer& t = m_transfers[f];
    const uint32_t weight = m_solver.GetWeight(f);
    const uint32_t* path = m_solver.GetPath(f);
    for (uint32_t i = 0; i < m_solver.GetPathLength(f); ++i)
    {
        LinkUse& use = m_linkUse[path[i]];
        use.bytes += static_cast<double>(t.bytes) * weight;
        if (m_solver.GetLinkFlowCount(path[i]) == 1)
        {
            use.busyTime += now - use.busySince; // the link falls idle
        }
    }
    if (t.log != 0)
    {
        // The transmission's true end (the event fires at the nanosecond after it).
        const double rate = m_solver.GetRate(f);
        const double end = rate > 0 ? std::min(now, t.lastUpdate + t.remaining / rate) : now;
        std::vector<std::pair<double, double>>& log = m_logs[t.log - 1];
        log.emplace_back(std::max(end, log.back().first), 0.0);
        m_doneLogs[t.first.id] = std::move(log);
        log = std::vector<std::pair<double, double>>();
        m_freeLogs.push_back(t.log - 1);
        t.log = 0;
    }
    m_solver.RemoveFlow(f);
    m_messages -= weight;
    NS_LOG_DEBUG("flow " << f << " (" << weight << " messages from " << t.first.id
                         << ") transmitted; delivery in " << t.latency << " s");
    // One delivery event per class: its members are delivered in the order sent, as
    // consecutive events of one instant would be.
    const Member first{t.first.id, std::move(t.first.callback)};
    t.first.callback = DeliveryCallback();
    if (t.others == 0)
    {
        Simulator::Schedule(Seconds(t.latency),
                            [this, first]()
                            {
                                Deliver(first.id, first.callback);
                            });
        return;
    }
    std::vector<Member> others = std::move(m_memberLists[t.others - 1]);
    m_memberLists[t.others - 1] = std::vector<Member>();
    m_freeMemberLists.push_back(t.others - 1);
    t.others = 0;
    Simulator::Schedule(Seconds(t.latency),
                        [this, first, others = std::move(others)]()
                        {
                            Deliver(first.id, first.callback);
                            for (const Member& m : others)
                            {
                                Deliver(m.id, m.callback);
                            }
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
            if (t.log != 0)
            {
                m_logs[t.log - 1].emplace_back(now, t.remaining);
            }
            if (rate > 0)
            {
                m_completions.Set(c.flow, now + t.remaining / rate);
            }
            else
            {
                // A flow at rate 0 (its link died under it) waits for the link to come back.
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
    if (!(ns < kHorizonNs))
    {
        // Every remaining end lies beyond the simulator's clock: nothing can finish, so no
        // event; the run ends unless something else changes the rates.
        m_event.Cancel();
        m_eventTime = -1;
        NS_LOG_WARN("t=" << Now() << " s: " << m_completions.GetSize()
                         << " flows cannot finish within the simulator's clock (earliest end "
                         << m_completions.Top().key << " s)");
        return;
    }
    if (m_event.IsRunning() && m_eventTime == ns)
    {
        return;
    }
    m_event.Cancel();
    Time at = NanoSeconds(static_cast<int64_t>(ns));
    Time delay = at > Simulator::Now() ? at - Simulator::Now() : Time(0);
    m_event = Simulator::Schedule(delay, &FlowNetwork::RequestUpdate, this);
    m_eventTime = ns;
}

void
FlowNetwork::RefreshRates()
{
    // Capacities may have changed anywhere: nothing reserved runs as measured any more.
    BreakAllReservations();
    SyncCapacities();
    m_solver.Invalidate();
    if (m_solver.NeedsSolve())
    {
        RequestUpdate();
    }
}

void
FlowNetwork::DoApplyFault(const std::vector<uint32_t>& links)
{
    // Only the changed capacities mark their links dirty: the re-solve at this instant covers
    // the flows connected to them.
    SyncCapacities();
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
        if (!m_solver.IsActive(f))
        {
            continue;
        }
        const Transfer& t = m_transfers[f];
        bool member = t.first.id == messageId;
        if (!member && t.others != 0)
        {
            for (const Member& m : m_memberLists[t.others - 1])
            {
                member = member || m.id == messageId;
            }
        }
        if (member)
        {
            return m_solver.GetRate(f);
        }
    }
    return 0.0;
}

uint32_t
FlowNetwork::GetActiveFlowCount() const
{
    return m_messages;
}

uint32_t
FlowNetwork::GetFlowClassCount() const
{
    return m_solver.GetFlowCount();
}

uint32_t
FlowNetwork::GetStalledCount() const
{
    uint32_t stalled = 0;
    for (uint32_t f = 0; f < m_solver.GetHandleBound(); ++f)
    {
        if (m_solver.IsActive(f)
            && (!m_completions.Contains(f)
                || !(std::ceil(m_completions.GetKey(f) * 1e9) < kHorizonNs)))
        {
            stalled += m_solver.GetWeight(f);
        }
    }
    return stalled;
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
