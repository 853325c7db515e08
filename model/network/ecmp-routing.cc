/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "ecmp-routing.h"

#include <deque>
#include <limits>

namespace ns3 {
namespace rapidllm {

NS_OBJECT_ENSURE_REGISTERED(EcmpRouting);

static RoutingPolicyRegistrar g_ecmp("ecmp", EcmpRouting::GetTypeId());

TypeId
EcmpRouting::GetTypeId()
{
    static TypeId tid = TypeId("ns3::rapidllm::EcmpRouting")
                            .SetParent<RoutingPolicy>()
                            .SetGroupName("RapidLlm")
                            .AddConstructor<EcmpRouting>();
    return tid;
}

bool
EcmpRouting::RoutesSymmetrically(const Topology& topology) const
{
    return HasOneMinimalPath(topology);
}

std::vector<uint32_t>
EcmpRouting::DoRoute(const Topology& t, uint32_t src, uint32_t dst, uint64_t flowId)
{
    constexpr uint32_t kFar = std::numeric_limits<uint32_t>::max();
    if (m_cachedTopology != t.GetUid() || m_cachedVersion != t.GetVersion())
    {
        m_hops.clear();
        m_in.assign(t.GetNodeCount(), {});
        for (uint32_t l = 0; l < t.GetLinkCount(); ++l)
        {
            if (t.GetLink(l).IsAlive())
            {
                m_in[t.GetLink(l).dst].push_back(l);
            }
        }
        m_cachedTopology = t.GetUid();
        m_cachedVersion = t.GetVersion();
    }
    auto it = m_hops.find(dst);
    if (it == m_hops.end())
    {
        // Breadth-first search backwards from the destination: hops to reach it.
        std::vector<uint32_t> hops(t.GetNodeCount(), kFar);
        std::deque<uint32_t> queue{dst};
        hops[dst] = 0;
        while (!queue.empty())
        {
            uint32_t v = queue.front();
            queue.pop_front();
            for (uint32_t l : m_in[v])
            {
                uint32_t u = t.GetLink(l).src;
                if (hops[u] == kFar)
                {
                    hops[u] = hops[v] + 1;
                    queue.push_back(u);
                }
            }
        }
        it = m_hops.emplace(dst, std::move(hops)).first;
    }
    const auto& hops = it->second;
    if (hops[src] == kFar)
    {
        return {};
    }
    std::vector<uint32_t> path;
    std::vector<uint32_t> candidates;
    for (uint32_t u = src; u != dst;)
    {
        candidates.clear();
        for (uint32_t l : t.GetOutLinks(u))
        {
            const auto& link = t.GetLink(l);
            if (link.IsAlive() && hops[link.dst] + 1 == hops[u])
            {
                candidates.push_back(l);
            }
        }
        uint32_t chosen = candidates[FlowHash(src, dst, flowId, path.size()) % candidates.size()];
        path.push_back(chosen);
        u = t.GetLink(chosen).dst;
    }
    return path;
}

} // namespace rapidllm
} // namespace ns3
