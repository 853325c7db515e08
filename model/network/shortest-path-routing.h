/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_SHORTEST_PATH_ROUTING_H
#define RAPIDLLM_SHORTEST_PATH_ROUTING_H

#include "ns3/routing-policy.h"

#include <map>
#include <vector>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief Shortest path over the surviving links (Boost.Graph Dijkstra): fewest hops, ties
 * broken by lower latency. One shortest-path tree per source, cached until the topology's
 * faults change. Named "shortest-path".
 */
class ShortestPathRouting : public RoutingPolicy
{
  public:
    /** \brief Register this type. \return the TypeId */
    static TypeId GetTypeId();

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
    uint64_t m_cachedTopology = 0;                         //!< uid of the topology the cache is for
    uint64_t m_cachedVersion = 0;                          //!< its fault version
    std::map<uint32_t, std::vector<uint32_t>> m_predLinks; //!< per source: link into each node
};

/**
 * \ingroup rapid-llm
 * \brief Fault-aware routing: shortest path over the surviving links where a degraded link
 * weighs 1/factor hops, so traffic detours around slow links when a detour is cheaper.
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
