/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "critical-path.h"

#include "ns3/workload-graph.h"
#include "operator-event.h"

namespace ns3 {
namespace rapidllm {

uint64_t
CriticalPathRecorder::Key(uint32_t rank, uint32_t node)
{
    return (uint64_t(rank) << 32) | node;
}

void
CriticalPathRecorder::Reset(uint32_t ranks, int64_t startNs)
{
    Clear();
    m_ranks.resize(ranks);
    m_startNs = startNs;
}

void
CriticalPathRecorder::Clear()
{
    m_ranks.clear();
    m_gaps.clear();
    m_commIndexOf.clear();
}

void
CriticalPathRecorder::Track(uint32_t rank,
                            const ExecutionTrace* graph,
                            const uint8_t* kinds,
                            const std::vector<int64_t>* issueNs)
{
    Rank& r = m_ranks[rank];
    r.graph = graph;
    r.kinds = kinds;
    r.issue = issueNs;
    r.endNs.assign(graph->GetNNodes(), 0);
    r.after.assign(graph->GetNNodes(), kNone);
    auto known = m_commIndexOf.find(graph);
    if (known == m_commIndexOf.end())
    {
        std::vector<uint32_t> index(graph->GetNNodes(), kNone);
        uint32_t comm = 0;
        for (uint32_t n = 0; n < graph->GetNNodes(); ++n)
        {
            const auto kind = static_cast<OperatorKind>(kinds[n]);
            if (kind == OperatorKind::COLLECTIVE || kind == OperatorKind::SEND
                || kind == OperatorKind::RECV)
            {
                index[n] = comm++;
            }
        }
        known = m_commIndexOf.emplace(graph, std::make_pair(std::move(index), comm)).first;
    }
    r.commIndex = &known->second.first;
    r.commNodes = known->second.second;
    r.launches.clear();
}

void
CriticalPathRecorder::Started(
    uint32_t rank, uint32_t node, int64_t nowNs, uint32_t by, uint32_t previous)
{
    Rank& r = m_ranks[rank];
    // What ended (or was issued) exactly now held it back; a dependency first, as it leads
    // furthest back.
    uint32_t after = kNone;
    int64_t since = m_startNs;
    if (by != kNone && r.endNs[by] == nowNs)
    {
        after = by;
        since = nowNs;
    }
    else if (by == kNone && nowNs == m_startNs)
    {
        since = nowNs;
    }
    else if (r.issue && (*r.issue)[node] == nowNs)
    {
        after = kHost;
        since = nowNs;
    }
    else if (previous != kNone && r.endNs[previous] == nowNs)
    {
        after = previous;
        since = nowNs;
    }
    else if (by != kNone)
    {
        after = by;
        since = r.endNs[by];
    }
    r.after[node] = after;
    if (since != nowNs)
    {
        m_gaps[Key(rank, node)] = nowNs - since;
    }
}

void
CriticalPathRecorder::Ended(uint32_t rank, uint32_t node, int64_t nowNs)
{
    m_ranks[rank].endNs[node] = nowNs;
}

void
CriticalPathRecorder::Launched(
    uint32_t rank, uint32_t node, uint32_t byRank, uint32_t byNode, int64_t nowNs, bool posted)
{
    Rank& r = m_ranks[rank];
    const uint32_t slot = r.commIndex ? (*r.commIndex)[node] : kNone;
    if ((byRank != rank || byNode != node) && slot != kNone)
    {
        if (r.launches.empty())
        {
            r.launches.resize(r.commNodes);
        }
        r.launches[slot] = {byRank, byNode, nowNs, posted};
    }
}

int64_t
CriticalPathRecorder::LaunchedAt(uint32_t rank, uint32_t node) const
{
    const Launch* launched = FindLaunch(rank, node);
    return launched ? launched->atNs : -1;
}

const CriticalPathRecorder::Launch*
CriticalPathRecorder::FindLaunch(uint32_t rank, uint32_t node) const
{
    if (rank >= m_ranks.size())
    {
        return nullptr;
    }
    const Rank& r = m_ranks[rank];
    const uint32_t slot = r.commIndex ? (*r.commIndex)[node] : kNone;
    if (slot == kNone || slot >= r.launches.size() || r.launches[slot].atNs < 0)
    {
        return nullptr;
    }
    return &r.launches[slot];
}

int64_t
CriticalPathRecorder::StartOf(uint32_t rank, uint32_t node) const
{
    const Rank& r = m_ranks[rank];
    const uint32_t after = r.after[node];
    int64_t at = after == kNone ? m_startNs : after == kHost ? (*r.issue)[node] : r.endNs[after];
    const auto gap = m_gaps.find(Key(rank, node));
    return gap == m_gaps.end() ? at : at + gap->second;
}

CriticalPath
CriticalPathRecorder::Walk(uint32_t rank, uint32_t node) const
{
    CriticalPath path;
    if (rank >= m_ranks.size() || !m_ranks[rank].graph)
    {
        return path;
    }
    // Each step charges one operator's part of the path, [its start, t], then moves to what its
    // start waited for. Every step moves to an earlier end or to an earlier node of the same host,
    // so the walk ends; the bound guards against a record that would say otherwise.
    uint64_t steps = 0;
    uint64_t bound = 16;
    for (const Rank& r : m_ranks)
    {
        bound += 2 * r.endNs.size();
    }
    uint32_t at = rank;
    int64_t t = m_ranks[rank].endNs[node];
    bool charge = true; // false: the node was reached at its start (it launched a collective)
    while (++steps < bound)
    {
        const Rank& r = m_ranks[at];
        const auto kind = OperatorKind(r.kinds[node]);
        if (charge)
        {
            int64_t begin = StartOf(at, node);
            const Launch* launched = FindLaunch(at, node);
            if (kind != OperatorKind::COMPUTE && kind != OperatorKind::OTHER && launched)
            {
                // It moved data from when the node that let it did so: the time before was
                // spent waiting for that node, whose own path continues the walk.
                const Launch& l = *launched;
                begin = std::min(t, l.atNs);
                path.communicationS += 1e-9 * double(t - begin);
                path.communicationByOp[StageGraph::LabelOf(r.graph->GetName(node))] +=
                    1e-9 * double(t - begin);
                at = l.rank;
                node = l.node;
                t = begin;
                charge = !l.posted;
                continue;
            }
            const double seconds = 1e-9 * double(std::max<int64_t>(0, t - begin));
            switch (kind)
            {
                case OperatorKind::COMPUTE:
                    path.computeS += seconds;
                    path.computeByRank[at] += seconds;
                    break;
                case OperatorKind::OTHER:
                    path.otherS += seconds;
                    break;
                default:
                    path.communicationS += seconds;
                    path.communicationByOp[StageGraph::LabelOf(r.graph->GetName(node))] += seconds;
                    break;
            }
        }
        charge = true;
        const auto gap = m_gaps.find(Key(at, node));
        if (gap != m_gaps.end())
        {
            path.unexplainedS += 1e-9 * double(gap->second);
        }
        const uint32_t after = r.after[node];
        if (after == kNone)
        {
            break; // the step's start (a gap before it is counted above)
        }
        if (after != kHost)
        {
            node = after;
            t = r.endNs[node];
            continue;
        }
        // The host issued it: back along the host's issues, each its host time, to the node
        // whose end the host waited for (a sync) or to the start.
        const std::vector<int64_t>& issue = *r.issue;
        uint32_t y = node;
        bool done = true;
        while (true)
        {
            const int64_t from = issue[y] - int64_t(r.graph->GetHostNs(y));
            path.hostS += 1e-9 * double(issue[y] - from);
            if (y == 0)
            {
                path.unexplainedS += 1e-9 * double(from - m_startNs);
                break;
            }
            if (issue[y - 1] == from)
            {
                --y;
                continue;
            }
            if (r.graph->IsHostSync(y - 1) && r.endNs[y - 1] == from)
            {
                node = y - 1;
                t = from;
                done = false;
                break;
            }
            // Not expected: the host went on from its previous issue.
            path.unexplainedS += 1e-9 * double(from - issue[y - 1]);
            --y;
        }
        if (done)
        {
            break;
        }
    }
    return path;
}

} // namespace rapidllm
} // namespace ns3
