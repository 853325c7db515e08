/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "hierarchical-collective.h"

#include "collective-algorithms.h"
#include "ns3/log.h"
#include "ns3/network-view.h"
#include "ns3/spec-error.h"

#include <algorithm>
#include <map>

namespace ns3 {
namespace rapidllm {

NS_LOG_COMPONENT_DEFINE("RapidLlmHierarchicalCollective");
NS_OBJECT_ENSURE_REGISTERED(HierarchicalCollective);

static TypeRegistrar<CollectiveAlgorithm> g_hierarchical("hierarchical",
                                                         HierarchicalCollective::GetTypeId());

namespace {
/**
 * \return the sub-groups of \p members along dimension \p d: the members that share every
 * other coordinate, ordered by their coordinate in \p d
 */
std::vector<std::vector<uint32_t>>
SubGroups(const NetworkView& view,
          const std::vector<uint32_t>& members,
          const std::vector<uint32_t>& endpoints,
          uint32_t d)
{
    std::map<std::vector<uint32_t>, std::vector<std::pair<uint32_t, uint32_t>>> groups;
    for (uint32_t i = 0; i < members.size(); ++i)
    {
        std::vector<uint32_t> key;
        for (uint32_t e = 0; e < view.GetDimensionCount(); ++e)
        {
            key.push_back(e == d ? 0 : view.GetCoordinate(endpoints[i], e));
        }
        groups[key].push_back({view.GetCoordinate(endpoints[i], d), members[i]});
    }
    std::vector<std::vector<uint32_t>> out;
    for (auto& [key, sub] : groups)
    {
        std::sort(sub.begin(), sub.end());
        std::vector<uint32_t> m;
        for (auto& p : sub)
        {
            m.push_back(p.second);
        }
        out.push_back(m);
    }
    return out;
}
} // namespace

TypeId
HierarchicalCollective::GetTypeId()
{
    static TypeId tid = TypeId("ns3::rapidllm::HierarchicalCollective")
                            .SetParent<CollectiveAlgorithm>()
                            .SetGroupName("RapidLlm")
                            .AddConstructor<HierarchicalCollective>();
    return tid;
}

bool
HierarchicalCollective::Supports(CollectiveOp op, uint32_t ranks, std::string& why) const
{
    if (op != CollectiveOp::ALL_REDUCE && op != CollectiveOp::REDUCE_SCATTER
        && op != CollectiveOp::ALL_GATHER)
    {
        why = "hierarchical runs all-reduce, reduce-scatter and all-gather, not " + ToString(op);
        return false;
    }
    return true;
}

uint32_t
HierarchicalCollective::GetDefaultChunks(CollectiveOp op, uint64_t bytes) const
{
    return PipelineChunks(bytes, 8);
}

uint32_t
HierarchicalCollective::GetSmCount(const ScheduleBuilder& b, const CollectiveCall& call) const
{
    bool grid = false;
    const auto spanned = SpannedDimensions(b.GetView(), b.GetEndpoints(call.members), grid);
    if (spanned.empty())
    {
        return 0;
    }
    const auto n = static_cast<uint32_t>(call.members.size());
    return b.GetDimensionAlgorithm(spanned.back(), call.op, n).GetSmCount(b, call);
}

bool
HierarchicalCollective::ComposesDimensions() const
{
    return true;
}

std::string
HierarchicalCollective::Describe(const std::string& name,
                                 const ScheduleBuilder& b,
                                 const CollectiveCall& call) const
{
    // What each dimension runs: the inner ones reduce-scatter and all-gather, the outermost
    // the call's op (a dimension's algorithm that cannot run an op runs it as ring).
    bool grid = false;
    const std::vector<uint32_t> endpoints = b.GetEndpoints(call.members);
    const auto spanned = SpannedDimensions(b.GetView(), endpoints, grid);
    std::string text = name + "(";
    for (std::size_t i = 0; i < spanned.size(); ++i)
    {
        const auto k = static_cast<uint32_t>(
            SubGroups(b.GetView(), call.members, endpoints, spanned[i]).front().size());
        const CollectiveOp op = i + 1 < spanned.size() && call.op == CollectiveOp::ALL_REDUCE
                                    ? CollectiveOp::REDUCE_SCATTER
                                    : call.op;
        text += (i ? "," : "") + b.GetView().GetDimension(spanned[i]).name + ":"
                + b.GetDimensionAlgorithmName(spanned[i], op, k);
    }
    return text + ")";
}

void
HierarchicalCollective::AddMessages(ScheduleBuilder& b, const CollectiveCall& call) const
{
    Compose(b, call, false);
}

void
HierarchicalCollective::AddFluid(ScheduleBuilder& b, const CollectiveCall& call) const
{
    Compose(b, call, true);
}

void
HierarchicalCollective::ForEachPhase(const ScheduleBuilder& b,
                                     const CollectiveCall& call,
                                     const PhaseVisitor& visit) const
{
    Check(call.op, static_cast<uint32_t>(call.members.size()), "algorithm");
    const NetworkView& view = b.GetView();
    const std::vector<uint32_t> endpoints = b.GetEndpoints(call.members);
    bool grid = false;
    const std::vector<uint32_t> spanned = SpannedDimensions(view, endpoints, grid);
    if (!grid)
    {
        throw SpecError("collective",
                        "algorithm",
                        "hierarchical needs a group that is a full grid over the network "
                        "dimensions it spans (e.g. whole nodes); use ring");
    }
    if (spanned.empty())
    {
        return; // one rank: nothing to send
    }
    NS_LOG_LOGIC("hierarchical " << ToString(call.op) << " of " << call.bytes << " B among "
                                 << call.members.size() << " ranks over " << spanned.size()
                                 << " dimensions");
    // Per dimension: its sub-groups, their size, and the share of the data each phase moves.
    const std::size_t last = spanned.size() - 1;
    std::vector<std::vector<std::vector<uint32_t>>> subgroups;
    std::vector<uint64_t> sizes(spanned.size());
    std::vector<uint64_t> wholeSizes(spanned.size()); // the same for the whole of a piece's
    uint64_t size = call.bytes;
    uint64_t whole = call.wholeBytes;
    for (std::size_t i = 0; i < spanned.size(); ++i)
    {
        subgroups.push_back(SubGroups(view, call.members, endpoints, spanned[i]));
        sizes[i] = size;
        wholeSizes[i] = whole;
        size /= subgroups[i].front().size();
        whole /= subgroups[i].front().size();
    }
    auto phase = [&](std::size_t i, CollectiveOp op)
    {
        const uint32_t d = spanned[i];
        const auto k = static_cast<uint32_t>(subgroups[i].front().size());
        const CollectiveAlgorithm& algorithm = b.GetDimensionAlgorithm(d, op, k);
        algorithm.Check(op, k, "network.dimensions." + view.GetDimension(d).name + ".collective");
        CollectiveCall sub;
        sub.op = op;
        sub.bytes = sizes[i];
        sub.wholeBytes = wholeSizes[i];
        visit(algorithm, sub, subgroups[i]);
    };
    if (call.op == CollectiveOp::ALL_REDUCE)
    {
        for (std::size_t i = 0; i < last; ++i)
        {
            phase(i, CollectiveOp::REDUCE_SCATTER);
        }
        phase(last, CollectiveOp::ALL_REDUCE);
        for (std::size_t i = last; i-- > 0;)
        {
            phase(i, CollectiveOp::ALL_GATHER);
        }
    }
    else if (call.op == CollectiveOp::REDUCE_SCATTER)
    {
        for (std::size_t i = 0; i <= last; ++i)
        {
            phase(i, CollectiveOp::REDUCE_SCATTER);
        }
    }
    else
    {
        for (std::size_t i = last + 1; i-- > 0;)
        {
            phase(i, CollectiveOp::ALL_GATHER);
        }
    }
}

void
HierarchicalCollective::Compose(ScheduleBuilder& b, const CollectiveCall& call, bool fluid) const
{
    ForEachPhase(b,
                 call,
                 [&b, fluid](const CollectiveAlgorithm& algorithm,
                             CollectiveCall sub,
                             const std::vector<std::vector<uint32_t>>& groups)
                 {
                     for (const auto& m : groups)
                     {
                         sub.members = m;
                         if (fluid)
                         {
                             algorithm.AddFluid(b, sub);
                         }
                         else
                         {
                             algorithm.AddMessages(b, sub);
                         }
                     }
                 });
}

uint64_t
HierarchicalCollective::CountMessages(const ScheduleBuilder& b, const CollectiveCall& call) const
{
    uint64_t count = 0;
    ForEachPhase(b,
                 call,
                 [&b, &count](const CollectiveAlgorithm& algorithm,
                              CollectiveCall sub,
                              const std::vector<std::vector<uint32_t>>& groups)
                 {
                     sub.members = groups.front();
                     // The sub-groups of a phase have one size, so one count serves them all
                     // (at most 2 k^2 per group of k: far from wrapping for 2^24 ranks).
                     count += algorithm.CountMessages(b, sub) * groups.size();
                 });
    return count;
}

} // namespace rapidllm
} // namespace ns3
