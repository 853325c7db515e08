/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "max-min-solver.h"

#include "ns3/abort.h"
#include "ns3/log.h"

#include <algorithm>
#include <functional>

namespace ns3 {
namespace rapidllm {

NS_LOG_COMPONENT_DEFINE("RapidLlmMaxMinSolver");

MaxMinSolver::MaxMinSolver() = default;

void
MaxMinSolver::Reset(uint32_t links)
{
    m_slots.clear();
    m_tags.clear();
    m_free.clear();
    m_long.clear();
    m_freeLong.clear();
    m_links.assign(links, Link());
    m_dirty.clear();
    m_fullSolve = false;
    m_minRemovedRate = std::numeric_limits<double>::infinity();
    m_stamp = 0;
    m_active = 0;
}

uint32_t
MaxMinSolver::GetLinkCount() const
{
    return static_cast<uint32_t>(m_links.size());
}

void
MaxMinSolver::SetCapacity(uint32_t link, double capacity)
{
    NS_ABORT_MSG_IF(!(capacity >= 0), "MaxMinSolver: capacity of link " << link << " < 0");
    Link& l = m_links.at(link);
    if (l.capacity == capacity)
    {
        return;
    }
    l.capacity = capacity;
    if (!l.flows.empty())
    {
        m_dirty.push_back(link);
        m_fullSolve = true;
    }
}

double
MaxMinSolver::GetCapacity(uint32_t link) const
{
    return m_links.at(link).capacity;
}

uint32_t
MaxMinSolver::AddFlow(const std::vector<uint32_t>& links, uint32_t weight)
{
    const auto count = static_cast<uint32_t>(links.size());
    NS_ABORT_MSG_IF(count == 0, "MaxMinSolver: a flow crosses at least one link");
    NS_ABORT_MSG_IF(weight == 0, "MaxMinSolver: a flow's weight is at least 1");
    uint32_t f;
    if (!m_free.empty())
    {
        f = m_free.back();
        m_free.pop_back();
    }
    else
    {
        f = static_cast<uint32_t>(m_slots.size());
        m_slots.emplace_back();
        m_tags.emplace_back();
    }
    Slot& s = m_slots[f];
    s.rate = 0;
    s.count = count;
    uint32_t* path = s.links;
    uint32_t* pos = s.pos;
    if (count > kInlineLinks)
    {
        if (m_freeLong.empty())
        {
            s.overflow = static_cast<uint32_t>(m_long.size());
            m_long.emplace_back();
        }
        else
        {
            s.overflow = m_freeLong.back();
            m_freeLong.pop_back();
        }
        std::vector<uint32_t>& ext = m_long[s.overflow];
        ext.resize(2 * count);
        path = ext.data();
        pos = ext.data() + count;
    }
    m_tags[f].mark = 0;
    m_tags[f].weight = weight;
    std::copy_n(links.begin(), count, path);
    for (uint32_t i = 0; i < count; ++i)
    {
        NS_ABORT_MSG_IF(links[i] >= m_links.size(), "MaxMinSolver: no link " << links[i]);
        Link& link = m_links[links[i]];
        pos[i] = static_cast<uint32_t>(link.flows.size());
        link.flows.emplace_back(f, i);
        m_dirty.push_back(links[i]);
    }
    ++m_active;
    m_fullSolve = true;
    NS_LOG_LOGIC("add flow " << f << ": " << count << " links, weight " << weight);
    return f;
}

void
MaxMinSolver::SetWeight(uint32_t f, uint32_t weight)
{
    NS_ABORT_MSG_IF(!IsActive(f), "MaxMinSolver: flow " << f << " does not exist");
    NS_ABORT_MSG_IF(weight == 0, "MaxMinSolver: a flow's weight is at least 1");
    if (m_tags[f].weight == weight)
    {
        return;
    }
    m_tags[f].weight = weight;
    const uint32_t* path = GetPath(f);
    m_dirty.insert(m_dirty.end(), path, path + m_slots[f].count);
    m_fullSolve = true;
    NS_LOG_LOGIC("flow " << f << " weighs " << weight);
}

void
MaxMinSolver::RemoveFlow(uint32_t f)
{
    NS_ABORT_MSG_IF(!IsActive(f), "MaxMinSolver: flow " << f << " does not exist");
    Slot& s = m_slots[f];
    const uint32_t* path = GetPath(f);
    const uint32_t* pos = PosOf(f);
    for (uint32_t i = 0; i < s.count; ++i)
    {
        const uint32_t l = path[i];
        Link& link = m_links[l];
        const uint32_t p = pos[i];
        const auto last = link.flows.back();
        link.flows[p] = last;
        PosOf(last.first)[last.second] = p;
        link.flows.pop_back();
        m_dirty.push_back(l);
    }
    --m_active;
    m_minRemovedRate = std::min(m_minRemovedRate, s.rate);
    if (s.count > kInlineLinks)
    {
        m_freeLong.push_back(s.overflow);
    }
    s.rate = 0;
    s.count = 0;
    m_tags[f].weight = 0;
    m_free.push_back(f);
    NS_LOG_LOGIC("remove flow " << f);
}

void
MaxMinSolver::Invalidate()
{
    m_fullSolve = true;
    for (uint32_t l = 0; l < m_links.size(); ++l)
    {
        if (!m_links[l].flows.empty())
        {
            m_dirty.push_back(l);
        }
    }
}

bool
MaxMinSolver::NeedsSolve() const
{
    return !m_dirty.empty();
}

const std::vector<MaxMinSolver::RateChange>&
MaxMinSolver::Solve()
{
    m_changes.clear();
    if (m_dirty.empty())
    {
        return m_changes;
    }
    ++m_solves;
    // Marks: a flow is in the component when its mark >= base, and has its rate when
    // mark == base + 1 (dense, so the searches below touch 8 bytes per flow visit).
    if (++m_stamp >= (1u << 30))
    {
        // Generation counter about to wrap: clear every mark once.
        for (auto& l : m_links)
        {
            l.stamp = 0;
        }
        for (auto& t : m_tags)
        {
            t.mark = 0;
        }
        m_stamp = 1;
    }
    const uint32_t base = 2 * m_stamp;
    // 1. The flows whose rates can change: the connected component(s) of flows and links
    //    reachable from the dirty links, frozen flows excepted (see the header). Arrivals and
    //    capacity changes recompute the whole component.
    const bool full = m_fullSolve;
    const double threshold = m_fullSolve ? -1.0 : m_minRemovedRate * (1 - 1e-9);
    m_fullSolve = false;
    m_minRemovedRate = std::numeric_limits<double>::infinity();
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
    uint32_t frozenFlows = 0;
    for (std::size_t next = 0; next < m_componentLinks.size(); ++next)
    {
        const uint32_t l = m_componentLinks[next];
        Link& link = m_links[l];
        double frozen = 0;
        uint64_t unfixed = 0;
        for (const auto& entry : link.flows)
        {
            Tag& tag = m_tags[entry.first];
            if (tag.mark >= base)
            {
                unfixed += tag.weight;
                continue;
            }
            const Slot& s = m_slots[entry.first];
            if (s.rate < threshold)
            {
                frozen += s.rate * tag.weight;
                ++frozenFlows;
                continue;
            }
            unfixed += tag.weight;
            tag.mark = base;
            m_changes.push_back({entry.first, s.rate});
            const uint32_t* path = GetPath(entry.first);
            for (uint32_t i = 0; i < s.count; ++i)
            {
                const uint32_t l2 = path[i];
                if (m_links[l2].stamp != m_stamp)
                {
                    m_links[l2].stamp = m_stamp;
                    m_componentLinks.push_back(l2);
                }
            }
        }
        link.remaining = link.capacity - frozen;
        link.unfixed = unfixed;
    }
    m_solvedFlows += m_changes.size();
    // 2. Progressive filling: repeatedly take the link with the smallest unit share
    //    (remaining capacity / unfixed weight), give that share to its unfixed flows and take
    //    their rates off the other links they cross. Fixing flows at the minimum share can
    //    only raise another link's share ((R - ws) / (u - w) >= R / u when s <= R / u), so
    //    heap keys are lower bounds: a popped link whose share has grown is pushed back with
    //    its current share instead of updating the heap on every change.
    using Entry = std::pair<double, uint32_t>; // share, link
    m_heap.clear();
    for (uint32_t l : m_componentLinks)
    {
        const Link& link = m_links[l];
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
        Link& link = m_links[l];
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
        const double share = std::max(current, link.capacity * 1e-12);
        for (const auto& entry : link.flows)
        {
            Tag& tag = m_tags[entry.first];
            if (tag.mark != base)
            {
                continue; // frozen, or already given its rate
            }
            tag.mark = base + 1;
            Slot& s = m_slots[entry.first];
            const double load = share * tag.weight;
            const uint32_t* path = GetPath(entry.first);
            for (uint32_t i = 0; i < s.count; ++i)
            {
                Link& other = m_links[path[i]];
                other.remaining -= load;
                other.unfixed -= tag.weight;
            }
            s.rate = share;
        }
    }
    NS_LOG_LOGIC("solve " << m_solves << (full ? " (full)" : " (departures)") << ": "
                          << m_componentLinks.size() << " links, " << m_changes.size()
                          << " flows recomputed, " << frozenFlows << " frozen visits, " << m_active
                          << " flows in all");
    return m_changes;
}

bool
MaxMinSolver::IsActive(uint32_t flow) const
{
    return flow < m_tags.size() && m_tags[flow].weight > 0;
}

uint32_t
MaxMinSolver::GetFlowCount() const
{
    return m_active;
}

uint32_t
MaxMinSolver::GetHandleBound() const
{
    return static_cast<uint32_t>(m_slots.size());
}

uint32_t
MaxMinSolver::GetLinkFlowCount(uint32_t link) const
{
    return static_cast<uint32_t>(m_links.at(link).flows.size());
}

const std::vector<std::pair<uint32_t, uint32_t>>&
MaxMinSolver::GetLinkFlows(uint32_t link) const
{
    return m_links.at(link).flows;
}

uint64_t
MaxMinSolver::GetSolveCount() const
{
    return m_solves;
}

uint64_t
MaxMinSolver::GetSolvedFlowCount() const
{
    return m_solvedFlows;
}

} // namespace rapidllm
} // namespace ns3
