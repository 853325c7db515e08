/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "replay-job.h"

#include "ns3/workload-trace.h"

namespace ns3 {
namespace rapidllm {

namespace {
/** The parallel axes a peer can differ along (EDP is the outer data-parallel axis). */
const GroupKind kAxes[] = {
    GroupKind::TP, GroupKind::CP, GroupKind::EP, GroupKind::EDP, GroupKind::PP};
} // namespace

ReplayJob
ReplayJob::FromTraceSet(TraceSet set)
{
    ReplayJob job;
    job.m_groups = std::move(set.groups);
    for (uint32_t r = 0; r < set.ranks.size(); ++r)
    {
        auto graph = std::make_shared<ExecutionTrace>(std::move(set.ranks[r]));
        graph->BuildChildIndex();
        job.m_graphs.push_back(graph);
        job.m_graphOf.push_back(r);
    }
    return job;
}

ReplayJob
ReplayJob::FromWorkload(const Workload& w)
{
    ReplayJob job;
    job.m_groups = WorkloadCommGroups(w);
    job.m_layout = std::make_shared<ParallelLayout>(w.layout);
    job.m_graphOf.resize(w.layout.Ranks());
    std::map<uint32_t, uint32_t> graphOfStage;
    for (uint32_t r = 0; r < w.layout.Ranks(); ++r)
    {
        uint32_t stage = w.layout.Stage(r);
        auto it = graphOfStage.find(stage);
        if (it == graphOfStage.end())
        {
            auto graph = std::make_shared<ExecutionTrace>(RankTrace(w, r));
            graph->BuildChildIndex();
            it = graphOfStage.emplace(stage, job.m_graphs.size()).first;
            job.m_graphs.push_back(graph);
            job.m_representative.push_back(r);
            for (GroupKind kind : kGroupKinds)
            {
                job.m_groupKind[w.layout.GroupId(r, kind)] = kind;
            }
        }
        job.m_graphOf[r] = it->second;
    }
    for (const auto& stage : w.stages)
    {
        for (const WorkNode& n : stage.nodes)
        {
            job.m_tensorPeers |= (n.kind == WorkNodeKind::SEND || n.kind == WorkNodeKind::RECV)
                                 && n.group == GroupKind::TP;
        }
    }
    return job;
}

uint32_t
ReplayJob::GetRankCount() const
{
    return static_cast<uint32_t>(m_graphOf.size());
}

const ExecutionTrace&
ReplayJob::GetGraph(uint32_t rank) const
{
    return *m_graphs[m_graphOf[rank]];
}

uint32_t
ReplayJob::GetGraphIndex(uint32_t rank) const
{
    return m_graphOf[rank];
}

double
ReplayJob::SentBytes() const
{
    // Ranks sharing a graph send alike: each distinct graph once, times its ranks, its groups'
    // sizes read from its first rank.
    std::vector<uint32_t> ranks(m_graphs.size(), 0);
    std::vector<uint32_t> first(m_graphs.size(), 0);
    for (uint32_t r = GetRankCount(); r-- > 0;)
    {
        ++ranks[m_graphOf[r]];
        first[m_graphOf[r]] = r;
    }
    double total = 0;
    for (std::size_t g = 0; g < m_graphs.size(); ++g)
    {
        double sent = 0;
        for (const TraceNode& n : m_graphs[g]->GetNodes())
        {
            if (n.type == TraceNodeType::COMM_SEND)
            {
                sent += double(n.bytes);
                continue;
            }
            if (n.type != TraceNodeType::COMM_COLL)
            {
                continue;
            }
            const uint32_t group = BindGroup(first[g], n.group);
            const double size = group == kWorldGroup || !GetGroups().Has(group)
                                    ? double(GetRankCount())
                                    : double(GetGroups().Get(group).size());
            const double share = size > 1 ? (size - 1) / size : 0;
            switch (n.commType)
            {
                case CollectiveType::ALL_REDUCE:
                    sent += 2 * share * double(n.bytes);
                    break;
                case CollectiveType::BROADCAST:
                case CollectiveType::REDUCE:
                    sent += size > 1 ? double(n.bytes) : 0;
                    break;
                case CollectiveType::BARRIER:
                    break;
                default:
                    sent += share * double(n.bytes);
            }
        }
        total += sent * ranks[g];
    }
    return total;
}

uint32_t
ReplayJob::GetGraphCount() const
{
    return static_cast<uint32_t>(m_graphs.size());
}

uint32_t
ReplayJob::BindGroup(uint32_t rank, uint32_t group) const
{
    if (!m_layout)
    {
        return group;
    }
    auto it = m_groupKind.find(group);
    return it == m_groupKind.end() ? group : m_layout->GroupId(rank, it->second);
}

uint32_t
ReplayJob::BindPeer(uint32_t rank, uint32_t peer) const
{
    if (!m_layout)
    {
        return peer;
    }
    // Move \p rank by the coordinate offsets that lead from the representative to \p peer.
    const uint32_t rep = m_representative[m_graphOf[rank]];
    uint32_t bound = rank;
    for (GroupKind axis : kAxes)
    {
        const uint32_t size = m_layout->AxisSize(axis);
        const uint32_t delta =
            (m_layout->Coord(peer, axis) + size - m_layout->Coord(rep, axis)) % size;
        bound = m_layout->WithCoord(bound, axis, (m_layout->Coord(rank, axis) + delta) % size);
    }
    return bound;
}

const CommGroups&
ReplayJob::GetGroups() const
{
    return m_groups;
}

bool
ReplayJob::IsPipelineTransfer(uint32_t rank, uint32_t peer) const
{
    return !m_layout || m_layout->Stage(peer) != m_layout->Stage(rank);
}

SymmetryPlan
ReplayJob::PlanSymmetry(const NetworkView& view, bool serializeGroups, bool fold) const
{
    if (!m_layout)
    {
        return SymmetryPlan(GetRankCount());
    }
    return SymmetryPlan::ForLayout(m_layout, view, serializeGroups, fold, m_tensorPeers);
}

SymmetryPlan
ReplayJob::PlanSymmetry(
    const NetworkView& view, bool serializeGroups, bool fold, bool faulty, bool innerSpared) const
{
    if (!m_layout)
    {
        return SymmetryPlan(GetRankCount());
    }
    return SymmetryPlan::ForLayout(
        m_layout, view, serializeGroups, fold, faulty, innerSpared, m_tensorPeers);
}

ExecutionTrace
ReplayJob::BoundGraph(uint32_t rank) const
{
    ExecutionTrace bound = GetGraph(rank);
    bound.SetRank(rank);
    for (uint32_t i = 0; i < bound.GetNNodes(); ++i)
    {
        TraceNode& n = bound.GetMutableNode(i);
        if (IsCommunication(n.type) && n.group != kWorldGroup)
        {
            n.group = BindGroup(rank, n.group);
        }
        if (n.type == TraceNodeType::COMM_SEND || n.type == TraceNodeType::COMM_RECV)
        {
            n.commSrc = static_cast<int32_t>(BindPeer(rank, n.commSrc));
            n.commDst = static_cast<int32_t>(BindPeer(rank, n.commDst));
        }
    }
    return bound;
}

} // namespace rapidllm
} // namespace ns3
