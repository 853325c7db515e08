/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "dimension-order-routing.h"

#include "ns3/network-error.h"

#include <limits>

namespace ns3 {
namespace rapidllm {

NS_OBJECT_ENSURE_REGISTERED(DimensionOrderRouting);

static RoutingPolicyRegistrar g_dimensionOrder("dimension-order",
                                               DimensionOrderRouting::GetTypeId());

TypeId
DimensionOrderRouting::GetTypeId()
{
    static TypeId tid = TypeId("ns3::rapidllm::DimensionOrderRouting")
                            .SetParent<RoutingPolicy>()
                            .SetGroupName("RapidLlm")
                            .AddConstructor<DimensionOrderRouting>();
    return tid;
}

namespace {
constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();

/**
 * \brief Appends the link a->b if it exists and is alive; a dead one is recorded in \p dead
 * (the first met). \return success
 */
bool
Hop(const Topology& t, uint32_t a, uint32_t b, std::vector<uint32_t>& path, uint32_t& dead)
{
    uint32_t l = t.FindLink(a, b);
    if (l == kNone || !t.GetLink(l).IsAlive())
    {
        if (l != kNone && dead == kNone)
        {
            dead = l;
        }
        return false;
    }
    path.push_back(l);
    return true;
}

/**
 * \brief Walks along one ring-like line of endpoints: position x -> y on a line of `extent`
 * members, member(i) giving the endpoint; wraps when `wrap`. Shorter direction first, then the
 * other if the first crosses a dead link.
 */
template<typename Member>
bool
WalkLine(const Topology& t,
         uint32_t x,
         uint32_t y,
         uint32_t extent,
         bool wrap,
         Member member,
         std::vector<uint32_t>& path,
         uint32_t& dead)
{
    if (x == y)
    {
        return true;
    }
    int dirs[2];
    int count = 0;
    if (!wrap)
    {
        dirs[count++] = y > x ? 1 : -1;
    }
    else
    {
        uint32_t fwd = (y + extent - x) % extent;
        uint32_t bwd = extent - fwd;
        dirs[count++] = fwd <= bwd ? 1 : -1;
        if (extent > 2)
        {
            dirs[count++] = -dirs[0];
        }
    }
    for (int i = 0; i < count; ++i)
    {
        std::size_t mark = path.size();
        bool ok = true;
        for (uint32_t c = x; c != y;)
        {
            uint32_t n = (c + extent + dirs[i]) % extent;
            if (!Hop(t, member(c), member(n), path, dead))
            {
                ok = false;
                break;
            }
            c = n;
        }
        if (ok)
        {
            return true;
        }
        path.resize(mark);
    }
    return false;
}
} // namespace

bool
DimensionOrderRouting::RouteDimension(const Topology& t,
                                      uint32_t d,
                                      uint32_t from,
                                      uint32_t to,
                                      uint64_t flowId,
                                      std::vector<uint32_t>& path,
                                      uint32_t& dead) const
{
    const auto& dim = t.GetDimension(d);
    uint32_t a = t.GetCoordinate(from, d);
    uint32_t b = t.GetCoordinate(to, d);
    auto member = [&](uint32_t c)
    {
        return t.WithCoordinate(from, d, c);
    };
    switch (dim.kind)
    {
        case TopologyKind::RING:
            return WalkLine(t, a, b, dim.size, true, member, path, dead);
        case TopologyKind::FULLY_CONNECTED:
            return Hop(t, from, to, path, dead);
        case TopologyKind::SWITCH:
        {
            uint32_t sw = t.GetInstanceSwitches(d, t.GetInstance(from, d)).at(0);
            return Hop(t, from, sw, path, dead) && Hop(t, sw, to, path, dead);
        }
        case TopologyKind::MESH:
        case TopologyKind::TORUS:
        {
            // Sub-dimension by sub-dimension (X, then Y, then Z).
            uint32_t sub = 1;
            uint32_t cur = a;
            for (uint32_t ext : dim.shape)
            {
                uint32_t x = (cur / sub) % ext;
                uint32_t y = (b / sub) % ext;
                uint32_t base = cur - x * sub;
                auto line = [&](uint32_t i)
                {
                    return member(base + i * sub);
                };
                if (!WalkLine(t, x, y, ext, dim.kind == TopologyKind::TORUS, line, path, dead))
                {
                    return false;
                }
                cur = base + y * sub;
                sub *= ext;
            }
            return true;
        }
        case TopologyKind::FAT_TREE:
        {
            const auto& sws = t.GetInstanceSwitches(d, t.GetInstance(from, d));
            uint32_t leaves = t.GetLeafCount(d);
            uint32_t la = sws.at(a / t.GetLeafSize(d));
            uint32_t lb = sws.at(b / t.GetLeafSize(d));
            if (!Hop(t, from, la, path, dead))
            {
                return false;
            }
            if (la != lb)
            {
                auto spines = static_cast<uint32_t>(sws.size() - leaves);
                // D-mod-k: the spine is the destination's position modulo the spine count, which
                // spreads shift permutations and all-to-all evenly over the spines (Zahavi,
                // "D-Mod-K Routing Providing Non-Blocking Traffic for Shift Permutations on Real
                // Life Fat Trees", 2010).
                uint64_t first = b % spines;
                bool found = false;
                for (uint32_t i = 0; i < spines && !found; ++i)
                {
                    uint32_t s = sws[leaves + (first + i) % spines];
                    std::size_t mark = path.size();
                    found = Hop(t, la, s, path, dead) && Hop(t, s, lb, path, dead);
                    if (!found)
                    {
                        path.resize(mark);
                    }
                }
                if (!found)
                {
                    return false;
                }
            }
            return Hop(t, lb, to, path, dead);
        }
    }
    return false;
}

bool
DimensionOrderRouting::KeepsDimensions() const
{
    return true;
}

bool
DimensionOrderRouting::RoutesSymmetrically(const Topology& /* topology */) const
{
    return true;
}

bool
DimensionOrderRouting::RoutesPerFlow() const
{
    return false;
}

std::vector<uint32_t>
DimensionOrderRouting::DoRoute(const Topology& t, uint32_t src, uint32_t dst, uint64_t flowId)
{
    if (src >= t.GetEndpointCount() || dst >= t.GetEndpointCount())
    {
        throw NetworkError("dimension-order routes between endpoints only, not "
                           + t.GetNode(src).name + " to " + t.GetNode(dst).name);
    }
    std::vector<uint32_t> path;
    uint32_t cur = src;
    uint32_t dead = kNone;
    for (uint32_t d = 0; d < t.GetDimensionCount(); ++d)
    {
        uint32_t c = t.GetCoordinate(dst, d);
        if (t.GetCoordinate(cur, d) == c)
        {
            continue;
        }
        uint32_t next = t.WithCoordinate(cur, d, c);
        dead = kNone; // name the dead link of the dimension that fails, not a detoured one
        if (!RouteDimension(t, d, cur, next, flowId, path, dead))
        {
            if (dead != kNone && Reachable(t, src, dst))
            {
                throw NetworkError(
                    "dimension-order routing has no path from " + t.GetNode(src).name + " to "
                    + t.GetNode(dst).name + " " + SimulatedTimeText()
                    + ": its path needs the dead link " + t.DescribeLink(dead)
                    + " and dimension order offers no detour around it (only the other way "
                      "round a ring and another fat-tree spine); the policies 'fault-aware' and "
                      "'shortest-path' route around dead links (network.routing or --routing)");
            }
            return {};
        }
        cur = next;
    }
    return path;
}

bool
DimensionOrderRouting::Reachable(const Topology& t, uint32_t src, uint32_t dst)
{
    std::vector<bool> seen(t.GetNodeCount(), false);
    std::vector<uint32_t> stack{src};
    seen[src] = true;
    while (!stack.empty())
    {
        const uint32_t v = stack.back();
        stack.pop_back();
        if (v == dst)
        {
            return true;
        }
        for (uint32_t l : t.GetOutLinks(v))
        {
            const auto& link = t.GetLink(l);
            if (link.IsAlive() && !seen[link.dst])
            {
                seen[link.dst] = true;
                stack.push_back(link.dst);
            }
        }
    }
    return false;
}

} // namespace rapidllm
} // namespace ns3
