/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "workload-trace.h"

#include "chakra-trace-writer.h"

#include <cmath>

namespace ns3 {
namespace rapidllm {

namespace {
CollectiveType
ToCollectiveType(CollectiveKind kind)
{
    switch (kind)
    {
        case CollectiveKind::ALL_REDUCE:
            return CollectiveType::ALL_REDUCE;
        case CollectiveKind::ALL_GATHER:
            return CollectiveType::ALL_GATHER;
        case CollectiveKind::REDUCE_SCATTER:
            return CollectiveType::REDUCE_SCATTER;
        case CollectiveKind::ALL_TO_ALL:
            return CollectiveType::ALL_TO_ALL;
        case CollectiveKind::BROADCAST:
            return CollectiveType::BROADCAST;
    }
    return CollectiveType::ALL_REDUCE;
}

/** The rank at \p offset along \p axis from \p rank (wrapping around). */
uint32_t
PeerOf(const ParallelLayout& layout, uint32_t rank, GroupKind axis, int32_t offset)
{
    const int64_t size = layout.AxisSize(axis);
    const int64_t coord = layout.Coord(rank, axis);
    const int64_t peer = ((coord + offset) % size + size) % size;
    return layout.WithCoord(rank, axis, static_cast<uint32_t>(peer));
}

/** \return whether \p n is a send or receive NCCL carries on its axis' communicator */
bool
IsNcclPeer(const WorkNode& n)
{
    return (n.kind == WorkNodeKind::SEND || n.kind == WorkNodeKind::RECV) && !n.copyEngine;
}

/**
 * \return the communicator of send or receive \p n (its axis' group, whose NCCL kernel holds
 * SMs), or kWorldGroup where copy engines move it
 */
uint32_t
P2pGroup(const ParallelLayout& layout, uint32_t rank, const WorkNode& n)
{
    return IsNcclPeer(n) ? layout.GroupId(rank, n.group) : kWorldGroup;
}
} // namespace

ExecutionTrace
RankTrace(const Workload& w, uint32_t rank)
{
    const StageGraph& g = w.GraphOf(rank);
    ExecutionTrace trace(rank);
    std::size_t edges = 0;
    for (const auto& n : g.nodes)
    {
        edges += n.deps.size();
    }
    trace.SetDistinctNames(); // NameOf tells a graph's nodes apart: nothing to share
    trace.Reserve(g.nodes.size(), edges);
    for (const auto& n : g.nodes)
    {
        const std::string name = g.NameOf(n);
        const uint32_t before = static_cast<uint32_t>(trace.GetNodes().size());
        switch (n.kind)
        {
            case WorkNodeKind::COMPUTE:
                trace.AddCompute(name,
                                 static_cast<uint64_t>(std::llround(n.durationS * 1e9)),
                                 static_cast<uint64_t>(n.modelFlops),
                                 n.tensorBytes,
                                 NodeIndexRange(n.deps.data(), n.deps.size()));
                break;
            case WorkNodeKind::COLLECTIVE:
                trace.AddCollective(name,
                                    ToCollectiveType(n.collective),
                                    n.commBytes,
                                    w.layout.GroupId(rank, n.group),
                                    NodeIndexRange(n.deps.data(), n.deps.size()));
                break;
            case WorkNodeKind::SEND:
                trace.AddSend(name,
                              PeerOf(w.layout, rank, n.group, n.peerOffset),
                              static_cast<int32_t>(n.tag),
                              n.commBytes,
                              NodeIndexRange(n.deps.data(), n.deps.size()),
                              P2pGroup(w.layout, rank, n));
                break;
            case WorkNodeKind::RECV:
                trace.AddRecv(name,
                              PeerOf(w.layout, rank, n.group, n.peerOffset),
                              static_cast<int32_t>(n.tag),
                              n.commBytes,
                              NodeIndexRange(n.deps.data(), n.deps.size()),
                              P2pGroup(w.layout, rank, n));
                break;
        }
        if (n.hostS > 0 || n.hostSync)
        {
            trace.SetHost(before, static_cast<uint64_t>(std::llround(n.hostS * 1e9)), n.hostSync);
        }
        if (n.kind == WorkNodeKind::COMPUTE && n.smScaling > 0)
        {
            trace.SetSmScaling(before, n.smScaling);
        }
        if (n.kind == WorkNodeKind::COLLECTIVE && n.commSms > 0)
        {
            trace.SetCommSms(before, n.commSms);
        }
    }
    if (w.run.mode == RunMode::INFERENCE)
    {
        // The node ids are the graph's (one trace node per work node, in order).
        trace.SetTokens(w.FirstTokenNode(w.layout.Stage(rank)),
                        w.run.generatedTokens,
                        uint64_t(w.run.batch) * w.run.parallel.dp);
    }
    return trace;
}

CommGroups
WorkloadCommGroups(const Workload& w)
{
    // Name only the groups some node uses.
    std::vector<GroupKind> used;
    for (GroupKind kind : kGroupKinds) // every kind the collectives and NCCL's peers use
    {
        bool found = false;
        for (const auto& g : w.stages)
        {
            for (const auto& n : g.nodes)
            {
                found =
                    found
                    || ((n.kind == WorkNodeKind::COLLECTIVE || IsNcclPeer(n)) && n.group == kind);
            }
        }
        if (found)
        {
            used.push_back(kind);
        }
    }
    CommGroups groups;
    for (const auto& [id, ranks] : w.layout.Groups(used))
    {
        groups.Add(id, ranks);
    }
    return groups;
}

void
WriteWorkloadTraces(const Workload& w,
                    const std::string& prefix,
                    bool gzip,
                    const std::string& hardware)
{
    ChakraTraceWriter::WriteTraceSet(
        prefix,
        w.layout.Ranks(),
        [&w, &hardware](uint32_t rank)
        {
            ExecutionTrace t = RankTrace(w, rank);
            t.SetHardware(hardware);
            return t;
        },
        WorkloadCommGroups(w),
        gzip);
}

} // namespace rapidllm
} // namespace ns3
