/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "workload-graph.h"

#include <algorithm>
#include <cctype>
#include <cmath>

namespace ns3 {
namespace rapidllm {

void
WorkNode::SetEnergyShare(double share)
{
    energyShareUnits = static_cast<uint16_t>(
        std::lround(std::clamp(share, 0.0, 65535.0 / kShareUnit) * kShareUnit));
}

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
        case Phase::WEIGHT:
            return "weight";
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

std::string
StageGraph::LabelOf(std::string_view name)
{
    // phase "." "mb" digits [ "." "L" digits ] "." label
    auto digits = [&name](std::size_t at)
    {
        std::size_t end = at;
        while (end < name.size() && std::isdigit(static_cast<unsigned char>(name[end])))
        {
            ++end;
        }
        return end > at ? end : std::string_view::npos;
    };
    const std::size_t dot = name.find('.');
    if (dot == std::string_view::npos || name.compare(dot + 1, 2, "mb") != 0)
    {
        return std::string(name);
    }
    const std::string_view phase = name.substr(0, dot);
    bool known = false;
    for (Phase p : {Phase::FORWARD,
                    Phase::BACKWARD,
                    Phase::RECOMPUTE,
                    Phase::OPTIMIZER,
                    Phase::PREFILL,
                    Phase::DECODE,
                    Phase::WEIGHT})
    {
        known = known || phase == ToString(p);
    }
    std::size_t at = known ? digits(dot + 3) : std::string_view::npos;
    if (at != std::string_view::npos && name.compare(at, 2, ".L") == 0)
    {
        at = digits(at + 2);
    }
    if (at == std::string_view::npos || at + 1 >= name.size() || name[at] != '.')
    {
        return std::string(name);
    }
    return std::string(name.substr(at + 1));
}

uint32_t
StageGraph::InternOperator(const OperatorDesc& op)
{
    auto it = m_opIndex.find(op);
    if (it == m_opIndex.end())
    {
        it = m_opIndex.emplace(op, static_cast<uint32_t>(ops.size())).first;
        ops.push_back(op);
    }
    return it->second;
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
