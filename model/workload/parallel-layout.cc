/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "parallel-layout.h"

#include <algorithm>
#include <sstream>
#include <string>

namespace ns3 {
namespace rapidllm {

const std::vector<GroupKind> kGroupKinds = {
    GroupKind::TP, GroupKind::CP, GroupKind::EP, GroupKind::DP, GroupKind::EDP, GroupKind::PP};

const char*
ToString(GroupKind kind)
{
    switch (kind)
    {
        case GroupKind::TP:
            return "tp";
        case GroupKind::CP:
            return "cp";
        case GroupKind::EP:
            return "ep";
        case GroupKind::DP:
            return "dp";
        case GroupKind::EDP:
            return "edp";
        case GroupKind::PP:
            return "pp";
    }
    return "?";
}

int
ParallelLayout::Axis(GroupKind kind)
{
    switch (kind)
    {
        case GroupKind::TP:
            return 0;
        case GroupKind::CP:
            return 1;
        case GroupKind::EP:
            return 2;
        case GroupKind::DP:
        case GroupKind::EDP:
            return 3;
        case GroupKind::PP:
            return 4;
    }
    return 0;
}

const std::vector<int>&
ParallelLayout::Spans(GroupKind kind) const
{
    static const std::vector<int> tp{0};
    static const std::vector<int> cp{1};
    static const std::vector<int> ep{2};
    static const std::vector<int> dp{1, 2, 3};
    static const std::vector<int> edp{1, 3};
    static const std::vector<int> pp{4};
    static const std::vector<int> foldedEp{0, 1, 2};
    static const std::vector<int> foldedEdp{3};
    if (m_folded && (kind == GroupKind::EP || kind == GroupKind::EDP))
    {
        return kind == GroupKind::EP ? foldedEp : foldedEdp;
    }
    switch (kind)
    {
        case GroupKind::TP:
            return tp;
        case GroupKind::CP:
            return cp;
        case GroupKind::EP:
            return ep;
        case GroupKind::DP:
            return dp;
        case GroupKind::EDP:
            return edp;
        case GroupKind::PP:
            return pp;
    }
    return tp;
}

ParallelLayout::ParallelLayout(const ParallelSpec& p)
{
    m_folded = p.FoldedExperts();
    // The EP axis: the part of dp an expert group spans.
    const uint32_t epAxis = m_folded ? p.ep / (p.tp * p.cp) : p.ep;
    m_sizes = {p.tp, p.cp, epAxis, p.dp / epAxis, p.pp};
    // Strides follow the rank order, fastest first.
    std::istringstream order(p.rankOrder);
    std::string token;
    uint32_t stride = 1;
    while (std::getline(order, token, '-'))
    {
        int axis = token == "tp"   ? 0
                   : token == "cp" ? 1
                   : token == "ep" ? 2
                   : token == "dp" ? 3
                                   : 4;
        m_strides[axis] = stride;
        stride *= m_sizes[axis];
    }
    m_ranks = stride;
    // Group ids: kinds in enum order, groups in order of their lowest member.
    uint32_t next = 1;
    for (int k = 0; k < 6; ++k)
    {
        m_idBase[k] = next;
        next += m_ranks / GroupSize(static_cast<GroupKind>(k));
    }
}

uint32_t
ParallelLayout::Ranks() const
{
    return m_ranks;
}

uint32_t
ParallelLayout::Coord(uint32_t rank, GroupKind kind) const
{
    int a = Axis(kind);
    return (rank / m_strides[a]) % m_sizes[a];
}

uint32_t
ParallelLayout::Stage(uint32_t rank) const
{
    return Coord(rank, GroupKind::PP);
}

uint32_t
ParallelLayout::WithCoord(uint32_t rank, GroupKind kind, uint32_t value) const
{
    int a = Axis(kind);
    return rank - Coord(rank, kind) * m_strides[a] + value * m_strides[a];
}

uint32_t
ParallelLayout::GroupSize(GroupKind kind) const
{
    uint32_t size = 1;
    for (int a : Spans(kind))
    {
        size *= m_sizes[a];
    }
    return size;
}

uint32_t
ParallelLayout::AxisSize(GroupKind kind) const
{
    return m_sizes[Axis(kind)];
}

std::vector<uint32_t>
ParallelLayout::Group(uint32_t rank, GroupKind kind) const
{
    // The rank with every spanned coordinate 0, then the members in mixed radix over the
    // spanned axes, the first fastest.
    uint32_t base = rank;
    for (int a : Spans(kind))
    {
        base -= ((rank / m_strides[a]) % m_sizes[a]) * m_strides[a];
    }
    const uint32_t size = GroupSize(kind);
    std::vector<uint32_t> members;
    members.reserve(size);
    for (uint32_t i = 0; i < size; ++i)
    {
        uint32_t member = base;
        uint32_t rest = i;
        for (int a : Spans(kind))
        {
            member += (rest % m_sizes[a]) * m_strides[a];
            rest /= m_sizes[a];
        }
        members.push_back(member);
    }
    return members;
}

uint32_t
ParallelLayout::IndexInGroup(uint32_t rank, GroupKind kind) const
{
    uint32_t index = 0;
    uint32_t scale = 1;
    for (int a : Spans(kind))
    {
        index += ((rank / m_strides[a]) % m_sizes[a]) * scale;
        scale *= m_sizes[a];
    }
    return index;
}

uint32_t
ParallelLayout::GroupId(uint32_t rank, GroupKind kind) const
{
    // Index the group by the coordinates of the axes it does not span, in axis order.
    const std::vector<int>& spans = Spans(kind);
    uint32_t index = 0;
    uint32_t scale = 1;
    for (int a = 0; a < 5; ++a)
    {
        bool spanned = std::find(spans.begin(), spans.end(), a) != spans.end();
        if (!spanned)
        {
            index += ((rank / m_strides[a]) % m_sizes[a]) * scale;
            scale *= m_sizes[a];
        }
    }
    return m_idBase[static_cast<int>(kind)] + index;
}

GroupKind
ParallelLayout::KindOf(uint32_t id) const
{
    int kind = 0;
    for (int k = 1; k < 6; ++k)
    {
        if (id >= m_idBase[k])
        {
            kind = k;
        }
    }
    return static_cast<GroupKind>(kind);
}

std::map<uint32_t, std::vector<uint32_t>>
ParallelLayout::Groups(const std::vector<GroupKind>& kinds) const
{
    std::map<uint32_t, std::vector<uint32_t>> groups;
    for (auto kind : kinds)
    {
        for (uint32_t r = 0; r < m_ranks; ++r)
        {
            uint32_t id = GroupId(r, kind);
            if (groups.count(id) == 0)
            {
                groups[id] = Group(r, kind);
            }
        }
    }
    return groups;
}

} // namespace rapidllm
} // namespace ns3
