/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_ECMP_ROUTING_H
#define RAPIDLLM_ECMP_ROUTING_H

#include "ns3/routing-policy.h"

#include <map>
#include <vector>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief Equal-cost multipath: among all minimum-hop paths over the surviving links, each
 * hop picks one of the equal next hops by a hash of the flow (source, destination, flow id),
 * as switches hash flows onto ECMP groups. Named "ecmp".
 */
class EcmpRouting : public RoutingPolicy
{
  public:
    /** \brief Register this type. \return the TypeId */
    static TypeId GetTypeId();

    /**
     * \param topology the network
     * \return HasOneMinimalPath(topology): only without a choice among shortest paths does a
     * translated pair hash onto the translated path
     */
    bool RoutesSymmetrically(const Topology& topology) const override;

  protected:
    std::vector<uint32_t> DoRoute(const Topology& topology,
                                  uint32_t src,
                                  uint32_t dst,
                                  uint64_t flowId) override;

  private:
    uint64_t m_cachedTopology = 0;                    //!< uid of the topology the cache is for
    uint64_t m_cachedVersion = 0;                     //!< its fault version
    std::map<uint32_t, std::vector<uint32_t>> m_hops; //!< per destination: hops from each node
    std::vector<std::vector<uint32_t>> m_in;          //!< surviving in-links per node
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_ECMP_ROUTING_H
