/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_SHORTEST_PATH_ROUTING_H
#define RAPIDLLM_SHORTEST_PATH_ROUTING_H

#include "ns3/routing-policy.h"

#include <map>
#include <memory>
#include <vector>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief Shortest path over the surviving links (Boost.Graph Dijkstra): fewest hops, ties
 * broken by lower latency, spread over the equal-cost shortest paths by destination.
 * Named "shortest-path".
 *
 * Where several shortest paths exist (the spines of a fat tree, the minimal paths of a torus)
 * the path is chosen deterministically by a D-mod-k rule on the destination: walking back from
 * the destination, a node reached by k equal-cost links takes link (c / m) mod k, c being the
 * destination's coordinate in those links' dimension and m the product of the earlier choices'
 * k in that dimension (links of different dimensions: the destination's index mod k). On a
 * two-tier fat tree this is exactly D-mod-k (spine = destination mod spines, Zahavi 2010), so
 * all-to-all loads every spine evenly, as dimension-order routing does. One distance table per
 * source, cached until the topology's faults change.
 */
class ShortestPathRouting : public RoutingPolicy
{
  public:
    /** \brief Register this type. \return the TypeId */
    static TypeId GetTypeId();

    ShortestPathRouting();
    ~ShortestPathRouting() override;

    /** \return false: one path per pair (the flow id is not used) */
    bool RoutesPerFlow() const override;

    /**
     * \param topology the network
     * \return HasOneMinimalPath(topology): where there is a choice, the spreading by endpoint
     * index picks other spines for translated pairs
     */
    bool RoutesSymmetrically(const Topology& topology) const override;

  protected:
    std::vector<uint32_t> DoRoute(const Topology& topology,
                                  uint32_t src,
                                  uint32_t dst,
                                  uint64_t flowId) override;

    /**
     * \brief The Dijkstra weight of a surviving link; subclasses change what "shortest" means.
     * \param topology the network
     * \param link the link
     * \return a positive weight
     */
    virtual double LinkWeight(const Topology& topology, uint32_t link) const;

  private:
    /** \brief Rebuilds the graph of surviving links if the topology or its faults changed. */
    void Refresh(const Topology& topology);
    /** \return the distances from \p src to every node (cached) */
    const std::vector<double>& Distances(const Topology& topology, uint32_t src);

    struct Graph; //!< the Boost graph of the surviving links (kept out of this header)

    uint64_t m_cachedTopology = 0;                  //!< uid of the topology the cache is for
    uint64_t m_cachedVersion = 0;                   //!< its fault version
    std::unique_ptr<Graph> m_graph;                 //!< surviving links
    std::vector<double> m_weight;                   //!< per link: LinkWeight (dead: 0, unused)
    std::vector<std::vector<uint32_t>> m_in;        //!< per node: surviving links into it
    std::map<uint32_t, std::vector<double>> m_dist; //!< per source: distance to each node
};

/**
 * \ingroup rapid-llm
 * \brief Fault-aware routing: shortest path over the surviving links where a degraded link
 * weighs 1/factor hops, so traffic detours around slow links when a detour is cheaper; equal-cost
 * paths are spread as ShortestPathRouting spreads them (without faults it routes the same).
 * Named "fault-aware".
 */
class FaultAwareRouting : public ShortestPathRouting
{
  public:
    /** \brief Register this type. \return the TypeId */
    static TypeId GetTypeId();

  protected:
    double LinkWeight(const Topology& topology, uint32_t link) const override;
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_SHORTEST_PATH_ROUTING_H
