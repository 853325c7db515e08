/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "flow-network.h"

#include "ns3/log.h"
#include "ns3/simulator.h"
#include "ns3/spec-error.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

namespace ns3 {
namespace rapidllm {

NS_LOG_COMPONENT_DEFINE("RapidLlmFlowNetwork");
NS_OBJECT_ENSURE_REGISTERED(FlowNetwork);

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
    m_flows.clear();
    m_links.clear();
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
    if (m_active > 0)
    {
        throw SpecError("network", "", "cannot change the topology while flows are in flight");
    }
    NetworkBackend::SetTopology(topology);
    m_links.assign(topology->GetLinkCount(), LinkState());
}

uint64_t
FlowNetwork::Send(uint32_t src, uint32_t dst, uint64_t bytes, DeliveryCallback onDelivered)
{
    const uint64_t id = m_nextId++;
    NotifySent(id, src, dst, bytes);
    const double now = Now();
    if (m_firstSend < 0)
    {
        m_firstSend = now;
    }
    std::vector<uint32_t> path = RoutePath(src, dst, id);
    const double latency = m_topology->PathLatency(path);
    if (path.empty() || bytes == 0)
    {
        Simulator::Schedule(Seconds(latency),
                            [this, id, onDelivered]()
                            {
                                NotifyDelivered(id);
                                onDelivered(id);
                            });
        return id;
    }
    uint32_t f;
    if (!m_freeFlows.empty())
    {
        f = m_freeFlows.back();
        m_freeFlows.pop_back();
    }
    else
    {
        f = static_cast<uint32_t>(m_flows.size());
        m_flows.emplace_back();
        m_heapPos.push_back(kNotQueued);
        m_hot.emplace_back();
        m_mark.push_back(0);
    }
    Flow& flow = m_flows[f];
    flow.id = id;
    HotFlow& hot = m_hot[f];
    hot.remaining = static_cast<double>(bytes);
    hot.rate = 0;
    hot.lastUpdate = now;
    hot.count = static_cast<uint32_t>(path.size());
    std::copy_n(path.begin(), std::min<std::size_t>(path.size(), kInlineLinks), hot.links);
    flow.latency = latency;
    flow.bytes = bytes;
    flow.links = std::move(path);
    flow.pos.resize(flow.links.size());
    flow.callback = onDelivered;
    for (uint32_t i = 0; i < flow.links.size(); ++i)
    {
        LinkState& link = m_links[flow.links[i]];
        flow.pos[i] = static_cast<uint32_t>(link.flows.size());
        link.flows.emplace_back(f, i);
        if (link.flows.size() == 1)
        {
            link.busySince = now;
        }
        MarkDirty(flow.links[i]);
    }
    ++m_active;
    m_byId[id] = f;
    m_fullSolve = true;
    if (!m_updatePending)
    {
        m_updatePending = true;
        Simulator::ScheduleNow(&FlowNetwork::Update, this);
    }
    return id;
}

void
FlowNetwork::MarkDirty(uint32_t link)
{
    m_dirty.push_back(link);
}

void
FlowNetwork::Update()
{
    m_updatePending = false;
    const double now = Now();
    // Completions: the event fires at the first nanosecond at or after the earliest end, so
    // every flow ending up to now is done (10 ps slack absorbs rounding of the seconds value).
    while (!m_completions.empty())
    {
        const Completion top = m_completions.front();
        if (top.time > now + 1e-11)
        {
            break;
        }
        HeapErase(top.flow);
        Finish(top.flow, now);
    }
    Solve(now);
    ScheduleNext();
}

void
FlowNetwork::Finish(uint32_t f, double now)
{
    Flow& flow = m_flows[f];
    for (uint32_t i = 0; i < flow.links.size(); ++i)
    {
        const uint32_t l = flow.links[i];
        LinkState& link = m_links[l];
        const uint32_t p = flow.pos[i];
        const auto last = link.flows.back();
        link.flows[p] = last;
        m_flows[last.first].pos[last.second] = p;
        link.flows.pop_back();
        link.bytes += static_cast<double>(flow.bytes);
        if (link.flows.empty())
        {
            link.busyTime += now - link.busySince;
        }
        MarkDirty(l);
    }
    --m_active;
    HeapErase(f);
    m_minRemovedRate = std::min(m_minRemovedRate, m_hot[f].rate);
    m_byId.erase(flow.id);
    const uint64_t id = flow.id;
    DeliveryCallback cb = flow.callback;
    flow.callback = DeliveryCallback();
    flow.links.clear();
    flow.pos.clear();
    m_hot[f].rate = 0;
    m_hot[f].count = 0;
    m_freeFlows.push_back(f);
    Simulator::Schedule(Seconds(flow.latency),
                        [this, id, cb]()
                        {
                            NotifyDelivered(id);
                            cb(id);
                        });
}

void
FlowNetwork::Solve(double now)
{
    if (m_dirty.empty())
    {
        return;
    }
    ++m_solves;
    // Marks: a flow is in the component when m_mark >= base, and has its rate when
    // m_mark == base + 1 (dense, so the searches below touch 4 bytes per flow visit).
    if (++m_stamp >= (1u << 30))
    {
        // Generation counter about to wrap: clear every mark once.
        for (auto& l : m_links)
        {
            l.stamp = 0;
        }
        std::fill(m_mark.begin(), m_mark.end(), 0);
        m_stamp = 1;
    }
    const uint32_t base = 2 * m_stamp;
    // 1. The flows whose rates can change: the connected component(s) of flows and links
    //    reachable from the dirty links. When flows only left since the last recomputation,
    //    every flow slower than the slowest of them keeps its rate: in progressive filling a
    //    departed flow of rate r never sat on a link that was a bottleneck below level r, and
    //    without it the links it crossed only get larger shares, so every step below r
    //    happens as before. Such flows are frozen: their rates are subtracted from the links'
    //    capacities and the search does not pass through them. Arrivals (or capacity changes)
    //    recompute the whole component. Bytes left are brought up to date on the way.
    const double threshold = m_fullSolve ? -1.0 : m_minRemovedRate * (1 - 1e-9);
    m_fullSolve = false;
    m_minRemovedRate = std::numeric_limits<double>::infinity();
    m_componentFlows.clear();
    m_componentLinks.clear();
    for (uint32_t l : m_dirty)
    {
        if (m_links[l].stamp != m_stamp)
        {
            m_links[l].stamp = m_stamp;
            m_componentLinks.push_back(l);
        }
    }
    m_dirty.clear();
    for (std::size_t next = 0; next < m_componentLinks.size(); ++next)
    {
        const uint32_t l = m_componentLinks[next];
        LinkState& link = m_links[l];
        double frozen = 0;
        uint32_t unfixed = 0;
        for (const auto& entry : link.flows)
        {
            if (m_mark[entry.first] >= base)
            {
                ++unfixed;
                continue;
            }
            HotFlow& hot = m_hot[entry.first];
            if (hot.rate < threshold)
            {
                frozen += hot.rate;
                continue;
            }
            ++unfixed;
            m_mark[entry.first] = base;
            m_componentFlows.push_back(entry.first);
            hot.remaining = std::max(0.0, hot.remaining - hot.rate * (now - hot.lastUpdate));
            hot.lastUpdate = now;
            const uint32_t* path = PathOf(entry.first);
            for (uint32_t i = 0; i < hot.count; ++i)
            {
                const uint32_t l2 = path[i];
                if (m_links[l2].stamp != m_stamp)
                {
                    m_links[l2].stamp = m_stamp;
                    m_componentLinks.push_back(l2);
                }
            }
        }
        link.remaining = m_topology->GetLink(l).Bandwidth() - frozen;
        link.unfixed = unfixed;
    }
    m_solvedFlows += m_componentFlows.size();
    // 2. Progressive filling: repeatedly take the link with the smallest fair share
    //    (remaining capacity / unfixed flows), give that share to its unfixed flows and remove
    //    their rates from the other links they cross. Fixing a flow at the minimum share can
    //    only raise another link's share ((R - s) / (u - 1) >= R / u when s <= R / u), so heap
    //    keys are lower bounds: a popped link whose share has grown is pushed back with its
    //    current share instead of updating the heap on every change.
    using Entry = std::pair<double, uint32_t>; // share, link
    m_heap.clear();
    for (uint32_t l : m_componentLinks)
    {
        const LinkState& link = m_links[l];
        if (link.unfixed > 0)
        {
            m_heap.emplace_back(link.remaining / link.unfixed, l);
        }
    }
    auto cmp = std::greater<Entry>();
    std::make_heap(m_heap.begin(), m_heap.end(), cmp);
    while (!m_heap.empty())
    {
        std::pop_heap(m_heap.begin(), m_heap.end(), cmp);
        const Entry e = m_heap.back();
        m_heap.pop_back();
        const uint32_t l = e.second;
        LinkState& link = m_links[l];
        if (link.unfixed == 0)
        {
            continue;
        }
        const double current = std::max(link.remaining, 0.0) / link.unfixed;
        if (current > e.first)
        {
            m_heap.emplace_back(current, l);
            std::push_heap(m_heap.begin(), m_heap.end(), cmp);
            continue;
        }
        const double capacity = m_topology->GetLink(l).Bandwidth();
        const double share = std::max(current, capacity * 1e-12);
        for (const auto& entry : link.flows)
        {
            if (m_mark[entry.first] != base)
            {
                continue; // frozen, or already given its rate
            }
            m_mark[entry.first] = base + 1;
            HotFlow& hot = m_hot[entry.first];
            const uint32_t* path = PathOf(entry.first);
            for (uint32_t i = 0; i < hot.count; ++i)
            {
                const uint32_t l2 = path[i];
                LinkState& other = m_links[l2];
                other.remaining -= share;
                --other.unfixed;
            }
            if (share != hot.rate)
            {
                hot.rate = share;
                if (share > 0)
                {
                    HeapSet(entry.first, now + hot.remaining / share);
                }
                else
                {
                    // A flow at rate 0 (its link died under it) waits for RefreshRates().
                    HeapErase(entry.first);
                }
            }
        }
    }
}

void
FlowNetwork::ScheduleNext()
{
    if (m_completions.empty())
    {
        m_event.Cancel();
        m_eventTime = -1;
        return;
    }
    const double ns = std::ceil(m_completions.front().time * 1e9);
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

bool
FlowNetwork::Before(const Completion& a, const Completion& b)
{
    return a.time != b.time ? a.time < b.time : a.flow < b.flow;
}

void
FlowNetwork::HeapPlace(uint32_t i, Completion c)
{
    m_completions[i] = c;
    m_heapPos[c.flow] = i;
}

void
FlowNetwork::HeapSiftUp(uint32_t i)
{
    const Completion c = m_completions[i];
    while (i > 0)
    {
        uint32_t parent = (i - 1) / 2;
        if (!Before(c, m_completions[parent]))
        {
            break;
        }
        HeapPlace(i, m_completions[parent]);
        i = parent;
    }
    HeapPlace(i, c);
}

void
FlowNetwork::HeapSiftDown(uint32_t i)
{
    const Completion c = m_completions[i];
    const auto n = static_cast<uint32_t>(m_completions.size());
    while (true)
    {
        uint32_t child = 2 * i + 1;
        if (child >= n)
        {
            break;
        }
        if (child + 1 < n && Before(m_completions[child + 1], m_completions[child]))
        {
            ++child;
        }
        if (!Before(m_completions[child], c))
        {
            break;
        }
        HeapPlace(i, m_completions[child]);
        i = child;
    }
    HeapPlace(i, c);
}

void
FlowNetwork::HeapSet(uint32_t flow, double time)
{
    uint32_t i = m_heapPos[flow];
    if (i == kNotQueued)
    {
        m_completions.push_back({time, flow});
        HeapSiftUp(static_cast<uint32_t>(m_completions.size() - 1));
        return;
    }
    const double old = m_completions[i].time;
    m_completions[i].time = time;
    if (time < old)
    {
        HeapSiftUp(i);
    }
    else
    {
        HeapSiftDown(i);
    }
}

void
FlowNetwork::HeapErase(uint32_t flow)
{
    uint32_t i = m_heapPos[flow];
    if (i == kNotQueued)
    {
        return;
    }
    m_heapPos[flow] = kNotQueued;
    const Completion last = m_completions.back();
    m_completions.pop_back();
    if (i < m_completions.size())
    {
        HeapPlace(i, last);
        HeapSiftUp(i);
        HeapSiftDown(m_heapPos[last.flow]);
    }
}

void
FlowNetwork::RefreshRates()
{
    m_fullSolve = true;
    for (uint32_t l = 0; l < m_links.size(); ++l)
    {
        if (!m_links[l].flows.empty())
        {
            MarkDirty(l);
        }
    }
    if (!m_updatePending && !m_dirty.empty())
    {
        m_updatePending = true;
        Simulator::ScheduleNow(&FlowNetwork::Update, this);
    }
}

double
FlowNetwork::GetFlowRate(uint64_t messageId) const
{
    auto it = m_byId.find(messageId);
    return it == m_byId.end() ? 0.0 : m_hot[it->second].rate;
}

uint32_t
FlowNetwork::GetActiveFlowCount() const
{
    return m_active;
}

uint64_t
FlowNetwork::GetSolveCount() const
{
    return m_solves;
}

uint64_t
FlowNetwork::GetSolvedFlowCount() const
{
    return m_solvedFlows;
}

LinkStats
FlowNetwork::GetLinkStats(uint32_t link) const
{
    LinkStats s;
    s.link = link;
    const LinkState& state = m_links.at(link);
    const double now = Now();
    s.bytes = state.bytes;
    s.busyTimeS = state.busyTime + (state.flows.empty() ? 0.0 : now - state.busySince);
    const double window = m_firstSend < 0 ? 0.0 : now - m_firstSend;
    const double bw = m_topology->GetLink(link).Bandwidth();
    s.utilization = window > 0 && bw > 0 ? state.bytes / (bw * window) : 0.0;
    return s;
}

std::vector<LinkStats>
FlowNetwork::GetMostLoadedLinks(uint32_t count) const
{
    std::vector<LinkStats> all;
    for (uint32_t l = 0; l < m_links.size(); ++l)
    {
        if (m_links[l].bytes > 0)
        {
            all.push_back(GetLinkStats(l));
        }
    }
    std::stable_sort(all.begin(),
                     all.end(),
                     [](const LinkStats& a, const LinkStats& b)
                     {
                         return a.bytes > b.bytes;
                     });
    if (all.size() > count)
    {
        all.resize(count);
    }
    return all;
}

} // namespace rapidllm
} // namespace ns3
