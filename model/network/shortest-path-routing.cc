/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "shortest-path-routing.h"

// GCC 12 reports a false maybe-uninitialized inside Boost's edge iterator (used by Dijkstra's
// negative-weight check) when the graph is a member; the code is Boost's own.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/dijkstra_shortest_paths.hpp>
#pragma GCC diagnostic pop

#include <algorithm>
#include <cmath>
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

/** The surviving links as a Boost graph, weighted by LinkWeight. */
struct ShortestPathRouting::Graph
{
    /** The graph type. */
    using Type = boost::adjacency_list<boost::vecS,
                                       boost::vecS,
                                       boost::directedS,
                                       boost::no_property,
                                       boost::property<boost::edge_weight_t, double>>;
    Type g; //!< the graph
};

ShortestPathRouting::ShortestPathRouting() = default;
ShortestPathRouting::~ShortestPathRouting() = default;

namespace {
constexpr double kUnreachable = std::numeric_limits<double>::max(); // Boost's infinity
/** Cached distance entries (nodes x sources) above which the cache starts over. */
constexpr std::size_t kCacheEntries = std::size_t(1) << 25;
} // namespace

void
ShortestPathRouting::Refresh(const Topology& t)
{
    if (m_cachedTopology == t.GetUid() && m_cachedVersion == t.GetVersion())
    {
        return;
    }
    m_cachedTopology = t.GetUid();
    m_cachedVersion = t.GetVersion();
    m_dist.clear();
    const uint32_t n = t.GetNodeCount();
    m_graph = std::make_unique<Graph>();
    m_graph->g = Graph::Type(n);
    m_weight.assign(t.GetLinkCount(), 0.0);
    m_in.assign(n, {});
    for (uint32_t l = 0; l < t.GetLinkCount(); ++l)
    {
        const auto& link = t.GetLink(l);
        if (link.IsAlive())
        {
            m_weight[l] = LinkWeight(t, l);
            boost::add_edge(link.src, link.dst, m_weight[l], m_graph->g);
            m_in[link.dst].push_back(l);
        }
    }
}

const std::vector<double>&
ShortestPathRouting::Distances(const Topology& t, uint32_t src)
{
    auto it = m_dist.find(src);
    if (it != m_dist.end())
    {
        return it->second;
    }
    if ((m_dist.size() + 1) * t.GetNodeCount() > kCacheEntries)
    {
        m_dist.clear(); // bounded memory on very large fabrics; results do not depend on it
    }
    std::vector<double> dist(t.GetNodeCount());
    Graph::Type& g = m_graph->g;
    boost::dijkstra_shortest_paths(g,
                                   src,
                                   boost::distance_map(boost::make_iterator_property_map(
                                       dist.begin(), boost::get(boost::vertex_index, g))));
    return m_dist.emplace(src, std::move(dist)).first->second;
}

bool
ShortestPathRouting::RoutesPerFlow() const
{
    return false;
}

bool
ShortestPathRouting::RoutesSymmetrically(const Topology& topology) const
{
    return HasOneMinimalPath(topology);
}

std::vector<uint32_t>
ShortestPathRouting::DoRoute(const Topology& t, uint32_t src, uint32_t dst, uint64_t flowId)
{
    Refresh(t);
    const std::vector<double>& dist = Distances(t, src);
    if (dist[dst] == kUnreachable)
    {
        return {};
    }
    // Walk back from the destination over links on a shortest path (dist[u] + w = dist[v]);
    // where there are several, the D-mod-k rule of the class comment picks one.
    const bool endpoint = dst < t.GetEndpointCount();
    std::vector<uint64_t> divisor(t.GetDimensionCount(), 1);
    std::vector<uint32_t> path;
    std::vector<uint32_t> candidates;
    for (uint32_t v = dst; v != src;)
    {
        candidates.clear();
        const double tolerance = 1e-12 * dist[v];
        for (uint32_t l : m_in[v])
        {
            const uint32_t u = t.GetLink(l).src;
            if (dist[u] != kUnreachable && std::abs(dist[u] + m_weight[l] - dist[v]) <= tolerance)
            {
                candidates.push_back(l);
            }
        }
        if (candidates.empty())
        {
            return {}; // cannot happen: v is reachable, so some link realizes its distance
        }
        uint32_t chosen = candidates[0];
        if (candidates.size() > 1)
        {
            const auto k = static_cast<uint64_t>(candidates.size());
            const uint32_t d = t.GetLink(candidates[0]).dimension;
            bool oneDimension = endpoint;
            for (uint32_t l : candidates)
            {
                oneDimension = oneDimension && t.GetLink(l).dimension == d;
            }
            if (oneDimension)
            {
                chosen = candidates[(t.GetCoordinate(dst, d) / divisor[d]) % k];
                divisor[d] = std::min<uint64_t>(divisor[d] * k, uint64_t(1) << 32);
            }
            else
            {
                chosen = candidates[dst % k];
            }
        }
        path.push_back(chosen);
        v = t.GetLink(chosen).src;
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
