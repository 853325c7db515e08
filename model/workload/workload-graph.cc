/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "workload-graph.h"

namespace ns3 {
namespace rapidllm {

const char*
ToString(CollectiveKind kind)
{
    switch (kind)
    {
        case CollectiveKind::ALL_REDUCE:
            return "all_reduce";
        case CollectiveKind::ALL_GATHER:
            return "all_gather";
        case CollectiveKind::REDUCE_SCATTER:
            return "reduce_scatter";
        case CollectiveKind::ALL_TO_ALL:
            return "all_to_all";
        case CollectiveKind::BROADCAST:
            return "broadcast";
    }
    return "?";
}

const char*
ToString(Phase phase)
{
    switch (phase)
    {
        case Phase::FORWARD:
            return "forward";
        case Phase::BACKWARD:
            return "backward";
        case Phase::RECOMPUTE:
            return "recompute";
        case Phase::OPTIMIZER:
            return "optimizer";
        case Phase::PREFILL:
            return "prefill";
        case Phase::DECODE:
            return "decode";
    }
    return "?";
}

std::string
StageGraph::NameOf(const WorkNode& node) const
{
    std::string name = ToString(node.phase);
    name += ".mb" + std::to_string(node.microBatch);
    if (node.layer >= 0)
    {
        name += ".L" + std::to_string(node.layer);
    }
    return name + "." + node.label;
}

double
StageGraph::ComputeSeconds() const
{
    double total = 0;
    for (const auto& n : nodes)
    {
        if (n.kind == WorkNodeKind::COMPUTE)
        {
            total += n.durationS;
        }
    }
    return total;
}

double
StageGraph::ModelFlops() const
{
    double total = 0;
    for (const auto& n : nodes)
    {
        total += n.modelFlops;
    }
    return total;
}

} // namespace rapidllm
} // namespace ns3
