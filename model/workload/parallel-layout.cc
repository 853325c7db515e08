/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "parallel-layout.h"

#include <sstream>
#include <string>

namespace ns3 {
namespace rapidllm {

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

ParallelLayout::ParallelLayout(const ParallelSpec& p)
{
    m_sizes = {p.tp, p.cp, p.ep, p.dp / p.ep, p.pp};
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
    if (kind == GroupKind::DP)
    {
        return m_sizes[2] * m_sizes[3];
    }
    return m_sizes[Axis(kind)];
}

std::vector<uint32_t>
ParallelLayout::Group(uint32_t rank, GroupKind kind) const
{
    std::vector<uint32_t> members;
    if (kind == GroupKind::DP)
    {
        // Dense data parallelism spans the expert axis and the outer data-parallel axis.
        uint32_t base = WithCoord(WithCoord(rank, GroupKind::EP, 0), GroupKind::EDP, 0);
        for (uint32_t d = 0; d < m_sizes[3]; ++d)
        {
            for (uint32_t e = 0; e < m_sizes[2]; ++e)
            {
                members.push_back(base + e * m_strides[2] + d * m_strides[3]);
            }
        }
        return members;
    }
    uint32_t base = WithCoord(rank, kind, 0);
    int a = Axis(kind);
    for (uint32_t i = 0; i < m_sizes[a]; ++i)
    {
        members.push_back(base + i * m_strides[a]);
    }
    return members;
}

uint32_t
ParallelLayout::IndexInGroup(uint32_t rank, GroupKind kind) const
{
    if (kind == GroupKind::DP)
    {
        return Coord(rank, GroupKind::EDP) * m_sizes[2] + Coord(rank, GroupKind::EP);
    }
    return Coord(rank, kind);
}

uint32_t
ParallelLayout::GroupId(uint32_t rank, GroupKind kind) const
{
    // Index the group by the coordinates of the axes it does not span, in axis order.
    uint32_t index = 0;
    uint32_t scale = 1;
    for (int a = 0; a < 5; ++a)
    {
        bool spanned = a == Axis(kind) || (kind == GroupKind::DP && a == 2);
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
