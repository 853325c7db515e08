/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "symmetry-plan.h"

#include "ns3/log.h"
#include "ns3/network-view.h"
#include "ns3/trace-node.h"

#include <algorithm>
#include <set>

namespace ns3 {
namespace rapidllm {

NS_LOG_COMPONENT_DEFINE("RapidLlmSymmetryPlan");

SymmetryPlan::SymmetryPlan(uint32_t ranks)
    : m_ranks(ranks)
{}

SymmetryPlan
SymmetryPlan::ForLayout(std::shared_ptr<const ParallelLayout> layout,
                        const NetworkView& view,
                        bool serializeGroups,
                        bool fold,
                        bool tensorPeers)
{
    const bool faulty = view.HasFaults();
    return ForLayout(layout, view, serializeGroups, fold, faulty, !faulty, tensorPeers);
}

SymmetryPlan
SymmetryPlan::ForLayout(std::shared_ptr<const ParallelLayout> layout,
                        const NetworkView& view,
                        bool serializeGroups,
                        bool fold,
                        bool faulty,
                        bool innerSpared,
                        bool tensorPeers)
{
    SymmetryPlan plan(layout->Ranks());
    // Timing a group's collective once is exact only if the group runs one at a time and
    // nothing else changes on its links: no other traffic (it owns them) and no fault on them.
    // Point-to-point messages inside tensor groups share those links: not then.
    const bool tensor = layout->GroupSize(GroupKind::TP) > 1;
    const bool tensorPrivate = tensor && innerSpared && TensorGroupsOwnLinks(*layout, view);
    const bool tensorOnce = serializeGroups && !tensorPeers && tensorPrivate;
    if (faulty)
    {
        NS_LOG_DEBUG("no symmetry reduction: the network has a degraded or dead link"
                     << (tensorOnce ? "; tensor collectives timed once (faults elsewhere)" : ""));
        if (tensorOnce)
        {
            plan.m_layout = layout;
            plan.m_tensorOnce = true;
        }
        return plan; // copies would differ: replay every rank
    }
    std::vector<GroupKind> axes = {GroupKind::EP, GroupKind::EDP};
    // Context-parallel copies fold where a move along the context axis maps the network onto
    // itself; their ring messages to folded peers match the representative's receives.
    if (layout->GroupSize(GroupKind::CP) > 1
        && AxisTranslationSymmetric(*layout, view, GroupKind::CP, true))
    {
        axes.push_back(GroupKind::CP);
    }
    // Messages to a folded tensor peer match its representative's receives (InFrameOf).
    if (tensor && AxisTranslationSymmetric(*layout, view, GroupKind::TP, false))
    {
        axes.push_back(GroupKind::TP);
    }
    uint32_t copies = 1;
    for (GroupKind axis : axes)
    {
        // A move along the axis shifts the ranks by its stride; across a ring, torus or mesh it
        // must be one of the wiring's own cyclic shifts (ShiftMapsRings).
        if (fold && layout->AxisSize(axis) > 1
            && ShiftMapsRings(view, layout->WithCoord(0, axis, 1), layout->AxisSize(axis)))
        {
            plan.m_foldedAxes.push_back(axis);
            copies *= layout->AxisSize(axis);
        }
    }
    if (plan.m_foldedAxes.empty())
    {
        if (tensorOnce)
        {
            // Every rank simulated; each tensor group still times its repeats.
            plan.m_layout = layout;
            plan.m_tensorOnce = true;
        }
        return plan;
    }
    plan.m_layout = layout;
    plan.m_tensorOnce = tensorOnce;
    plan.m_tensorPrivate = tensorPrivate;
    // Every non-zero combination of offsets along the folded axes, in mixed radix.
    for (uint32_t index = 1; index < copies; ++index)
    {
        std::vector<uint32_t> offsets;
        bool tensorOnly = true;
        uint32_t rest = index;
        for (GroupKind axis : plan.m_foldedAxes)
        {
            offsets.push_back(rest % layout->AxisSize(axis));
            tensorOnly = tensorOnly && (axis == GroupKind::TP || offsets.back() == 0);
            rest /= layout->AxisSize(axis);
        }
        plan.m_allCopies.push_back(index - 1);
        if (tensorOnly)
        {
            plan.m_tensorCopies.push_back(index - 1);
        }
        plan.m_translations.push_back(offsets);
    }
    plan.m_simulated.assign(layout->Ranks(), 0);
    for (uint32_t r = 0; r < layout->Ranks(); ++r)
    {
        plan.m_simulated[r] = plan.RepresentativeOf(r) == r;
    }
    NS_LOG_DEBUG("symmetry reduction: " << plan.GetSimulatedCount() << " of " << plan.m_ranks
                                        << " ranks simulated, " << copies << " copies each"
                                        << (tensorOnce ? ", tensor collectives timed once" : ""));
    return plan;
}

bool
SymmetryPlan::IsReduced() const
{
    return !m_simulated.empty();
}

bool
SymmetryPlan::IsSimulated(uint32_t rank) const
{
    return m_simulated.empty() || m_simulated[rank];
}

uint32_t
SymmetryPlan::GetSimulatedCount() const
{
    return m_simulated.empty()
               ? m_ranks
               : static_cast<uint32_t>(std::count(m_simulated.begin(), m_simulated.end(), 1));
}

uint32_t
SymmetryPlan::RepresentativeOf(uint32_t rank) const
{
    for (GroupKind axis : m_foldedAxes)
    {
        rank = m_layout->WithCoord(rank, axis, 0);
    }
    return rank;
}

uint32_t
SymmetryPlan::InFrameOf(uint32_t rank, uint32_t frame) const
{
    for (GroupKind axis : m_foldedAxes)
    {
        const uint32_t size = m_layout->AxisSize(axis);
        const uint32_t shifted =
            (m_layout->Coord(rank, axis) + size - m_layout->Coord(frame, axis)) % size;
        rank = m_layout->WithCoord(rank, axis, shifted);
    }
    return rank;
}

uint32_t
SymmetryPlan::GetTranslationCount() const
{
    return static_cast<uint32_t>(m_translations.size());
}

uint32_t
SymmetryPlan::Translate(uint32_t rank, uint32_t t) const
{
    for (std::size_t a = 0; a < m_foldedAxes.size(); ++a)
    {
        const GroupKind axis = m_foldedAxes[a];
        const uint32_t size = m_layout->AxisSize(axis);
        rank = m_layout->WithCoord(
            rank, axis, (m_layout->Coord(rank, axis) + m_translations[t][a]) % size);
    }
    return rank;
}

const std::vector<uint32_t>&
SymmetryPlan::GhostCopies(uint32_t src, uint32_t dst, bool everyCopy) const
{
    const bool insideTensorGroup =
        !everyCopy && m_tensorPrivate
        && m_layout->GroupId(src, GroupKind::TP) == m_layout->GroupId(dst, GroupKind::TP);
    return insideTensorGroup ? m_tensorCopies : m_allCopies;
}

bool
SymmetryPlan::TimesTensorOnce() const
{
    return m_tensorOnce;
}

bool
SymmetryPlan::IsTimedOnce(uint32_t group) const
{
    return m_tensorOnce && group != kWorldGroup && m_layout->KindOf(group) == GroupKind::TP;
}

std::vector<uint32_t>
SymmetryPlan::GetGhostGroups(uint32_t group, const CommGroups& groups, bool everyCopy) const
{
    std::vector<uint32_t> ghosts;
    if (!IsReduced() || group == kWorldGroup)
    {
        return ghosts;
    }
    const GroupKind kind = m_layout->KindOf(group);
    if (kind == GroupKind::TP && m_tensorPrivate && !everyCopy)
    {
        return ghosts; // its copies run on links no simulated rank uses
    }
    const uint32_t first = groups.Get(group).front();
    std::set<uint32_t> launched{group};
    for (uint32_t t = 0; t < m_translations.size(); ++t)
    {
        const uint32_t image = m_layout->GroupId(Translate(first, t), kind);
        if (!launched.insert(image).second || !groups.Has(image))
        {
            continue;
        }
        const auto& members = groups.Get(image);
        if (std::any_of(members.begin(),
                        members.end(),
                        [this](uint32_t r)
                        {
                            return IsSimulated(r);
                        }))
        {
            continue; // a simulated member launches it
        }
        ghosts.push_back(image);
    }
    return ghosts;
}

bool
SymmetryPlan::AxisTranslationSymmetric(const ParallelLayout& layout,
                                       const NetworkView& view,
                                       GroupKind axis,
                                       bool apartToo)
{
    const TopologyKind inner = view.GetDimension(0).kind;
    if (inner != TopologyKind::SWITCH && inner != TopologyKind::FULLY_CONNECTED)
    {
        return false; // paths inside the dimension depend on the members' positions
    }
    // Groups inside one instance of dimension 0: a move along the axis changes only
    // coordinates in dimension 0, the same way on every instance (any permutation of a
    // switch's or a full mesh's members maps it onto itself, and the outer dimensions'
    // instances, indexed by the other coordinates, onto each other). With apartToo, every
    // member in an instance of its own also does: the move permutes whole instances, as a
    // data-parallel move does. A group with some members together and some apart has hops of
    // both kinds: its members differ.
    enum Placement
    {
        INSIDE,
        APART,
        NONE
    };
    Placement all = NONE;
    for (uint32_t r = 0; r < layout.Ranks(); ++r)
    {
        if (layout.IndexInGroup(r, axis) != 0)
        {
            continue;
        }
        std::set<uint32_t> instances;
        const auto members = layout.Group(r, axis);
        for (uint32_t m : members)
        {
            instances.insert(view.GetInstance(m, 0));
        }
        const Placement here = instances.size() == 1                            ? INSIDE
                               : apartToo && instances.size() == members.size() ? APART
                                                                                : NONE;
        if (here == NONE || (all != NONE && here != all))
        {
            return false;
        }
        all = here;
    }
    return true;
}

bool
SymmetryPlan::ShiftMapsRings(const NetworkView& view, uint64_t stride, uint32_t size)
{
    // Ranks are endpoints, the innermost dimension's coordinate fastest: a move along an axis of
    // stride s and size k cycles the digit [s, s k) of the endpoint index. A switch, a fully
    // connected dimension or a fat tree is taken to map onto itself under it (their members are
    // interchangeable; a fat tree's partial leaves make that approximate, doc/rapid-llm.md). A
    // ring or a torus extent maps onto itself only where the digit is the top of the extent, so
    // that it shifts the extent's coordinate cyclically; a mesh under no shift at all.
    uint64_t below = 1; // endpoints per step of dimension d's coordinate
    for (uint32_t d = 0; d < view.GetDimensionCount(); ++d)
    {
        const NetworkDimensionSpec& dim = view.GetDimension(d);
        const uint64_t above = below * dim.size;
        const bool wired = dim.kind == TopologyKind::RING || dim.kind == TopologyKind::TORUS
                           || dim.kind == TopologyKind::MESH;
        if (wired && stride < above && stride * size > below)
        {
            if (dim.kind == TopologyKind::MESH)
            {
                return false;
            }
            const std::vector<uint32_t> extents =
                dim.kind == TopologyKind::RING ? std::vector<uint32_t>{dim.size} : dim.shape;
            bool shifts = false;
            uint64_t step = below;
            for (uint32_t extent : extents)
            {
                const uint64_t top = step * extent;
                shifts = shifts || (stride >= step && stride % step == 0 && stride * size == top);
                step = top;
            }
            if (!shifts)
            {
                return false;
            }
        }
        below = above;
    }
    return true;
}

bool
SymmetryPlan::TensorGroupsOwnLinks(const ParallelLayout& layout, const NetworkView& view)
{
    const TopologyKind inner = view.GetDimension(0).kind;
    if (inner != TopologyKind::SWITCH && inner != TopologyKind::FULLY_CONNECTED)
    {
        return false; // paths inside the dimension may cross other endpoints' links
    }
    const uint32_t ranks = layout.Ranks();
    auto instance = [&view](uint32_t r)
    {
        return view.GetInstance(r, 0);
    };
    for (uint32_t r = 0; r < ranks; ++r)
    {
        if (layout.IndexInGroup(r, GroupKind::TP) == 0)
        {
            for (uint32_t m : layout.Group(r, GroupKind::TP))
            {
                if (instance(m) != instance(r))
                {
                    return false; // the group spans several switches
                }
            }
        }
    }
    // No other group or pipeline neighbour may have two members behind the same switch.
    for (GroupKind kind : {GroupKind::CP, GroupKind::EP, GroupKind::DP, GroupKind::EDP})
    {
        if (layout.GroupSize(kind) == 1)
        {
            continue;
        }
        for (uint32_t r = 0; r < ranks; ++r)
        {
            if (layout.IndexInGroup(r, kind) != 0)
            {
                continue;
            }
            std::set<uint32_t> seen;
            for (uint32_t m : layout.Group(r, kind))
            {
                if (!seen.insert(instance(m)).second)
                {
                    return false;
                }
            }
        }
    }
    const uint32_t pp = layout.GroupSize(GroupKind::PP);
    for (uint32_t r = 0; pp > 1 && r < ranks; ++r)
    {
        const uint32_t next =
            layout.WithCoord(r, GroupKind::PP, (layout.Coord(r, GroupKind::PP) + 1) % pp);
        if (instance(next) == instance(r))
        {
            return false;
        }
    }
    return true;
}

} // namespace rapidllm
} // namespace ns3
