/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "shortest-path-routing.h"

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/dijkstra_shortest_paths.hpp>

#include <algorithm>
#include <limits>

namespace ns3 {
namespace rapidllm {

NS_OBJECT_ENSURE_REGISTERED(ShortestPathRouting);
NS_OBJECT_ENSURE_REGISTERED(FaultAwareRouting);

static RoutingPolicyRegistrar g_shortestPath("shortest-path", ShortestPathRouting::GetTypeId());
static RoutingPolicyRegistrar g_faultAware("fault-aware", FaultAwareRouting::GetTypeId());

TypeId
ShortestPathRouting::GetTypeId()
{
    static TypeId tid = TypeId("ns3::rapidllm::ShortestPathRouting")
                            .SetParent<RoutingPolicy>()
                            .SetGroupName("RapidLlm")
                            .AddConstructor<ShortestPathRouting>();
    return tid;
}

double
ShortestPathRouting::LinkWeight(const Topology& topology, uint32_t link) const
{
    // One per hop; latency (seconds, << 1) only breaks ties between equal hop counts.
    const auto& l = topology.GetLink(link);
    return 1.0 + l.latencyS + topology.GetNode(l.dst).switchLatencyS;
}

namespace {
using Graph = boost::adjacency_list<boost::vecS,
                                    boost::vecS,
                                    boost::directedS,
                                    boost::no_property,
                                    boost::property<boost::edge_weight_t, double>>;
constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();
} // namespace

std::vector<uint32_t>
ShortestPathRouting::DoRoute(const Topology& t, uint32_t src, uint32_t dst, uint64_t flowId)
{
    if (m_cachedTopology != t.GetUid() || m_cachedVersion != t.GetVersion())
    {
        m_predLinks.clear();
        m_cachedTopology = t.GetUid();
        m_cachedVersion = t.GetVersion();
    }
    auto it = m_predLinks.find(src);
    if (it == m_predLinks.end())
    {
        const uint32_t n = t.GetNodeCount();
        Graph g(n);
        std::vector<uint32_t> edgeLink;
        for (uint32_t l = 0; l < t.GetLinkCount(); ++l)
        {
            const auto& link = t.GetLink(l);
            if (link.IsAlive())
            {
                boost::add_edge(link.src, link.dst, LinkWeight(t, l), g);
                edgeLink.push_back(l);
            }
        }
        // Edge index = insertion order (vecS out-edge lists keep it via this map).
        std::map<std::pair<uint32_t, uint32_t>, uint32_t> linkOf;
        for (uint32_t l : edgeLink)
        {
            const auto& link = t.GetLink(l);
            linkOf.emplace(std::make_pair(link.src, link.dst), l);
        }
        std::vector<Graph::vertex_descriptor> pred(n);
        std::vector<double> dist(n);
        boost::dijkstra_shortest_paths(
            g,
            src,
            boost::predecessor_map(
                boost::make_iterator_property_map(pred.begin(), boost::get(boost::vertex_index, g)))
                .distance_map(boost::make_iterator_property_map(
                    dist.begin(), boost::get(boost::vertex_index, g))));
        std::vector<uint32_t> predLink(n, kNone);
        for (uint32_t v = 0; v < n; ++v)
        {
            if (pred[v] != v)
            {
                predLink[v] = linkOf.at(std::make_pair(static_cast<uint32_t>(pred[v]), v));
            }
        }
        it = m_predLinks.emplace(src, std::move(predLink)).first;
    }
    const auto& predLink = it->second;
    std::vector<uint32_t> path;
    for (uint32_t v = dst; v != src;)
    {
        uint32_t l = predLink[v];
        if (l == kNone || path.size() > t.GetNodeCount())
        {
            return {};
        }
        path.push_back(l);
        v = t.GetLink(l).src;
    }
    std::reverse(path.begin(), path.end());
    return path;
}

TypeId
FaultAwareRouting::GetTypeId()
{
    static TypeId tid = TypeId("ns3::rapidllm::FaultAwareRouting")
                            .SetParent<ShortestPathRouting>()
                            .SetGroupName("RapidLlm")
                            .AddConstructor<FaultAwareRouting>();
    return tid;
}

double
FaultAwareRouting::LinkWeight(const Topology& topology, uint32_t link) const
{
    // A link at half bandwidth costs two hops: its per-byte time relative to a healthy link.
    const auto& l = topology.GetLink(link);
    return 1.0 / l.factor + l.latencyS + topology.GetNode(l.dst).switchLatencyS;
}

} // namespace rapidllm
} // namespace ns3
