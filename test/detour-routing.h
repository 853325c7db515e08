/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_DETOUR_ROUTING_H
#define RAPIDLLM_DETOUR_ROUTING_H

#include "ns3/routing-policy.h"
#include "ns3/topology.h"

#include <vector>

namespace ns3 {
namespace rapidllm {

/**
 * \brief A test routing policy that sends each flow through an intermediate endpoint (Valiant
 * style), each leg by dimension-order routing; straight there when the intermediate is an end.
 * Subclasses choose the intermediate.
 */
class DetourRouting : public RoutingPolicy
{
  protected:
    /**
     * \param t the network \param src source \param dst destination \param flowId the flow
     * \return the endpoint the flow passes through
     */
    virtual uint32_t Middle(const Topology& t, uint32_t src, uint32_t dst, uint64_t flowId) = 0;

    std::vector<uint32_t>
    DoRoute(const Topology& t, uint32_t src, uint32_t dst, uint64_t flowId) override
    {
        if (!m_leg)
        {
            m_leg = RoutingPolicy::Create("dimension-order");
        }
        const uint32_t middle = Middle(t, src, dst, flowId);
        if (middle == src || middle == dst)
        {
            return m_leg->Route(t, src, dst, flowId);
        }
        std::vector<uint32_t> path = m_leg->Route(t, src, middle, flowId);
        std::vector<uint32_t> second = m_leg->Route(t, middle, dst, flowId);
        path.insert(path.end(), second.begin(), second.end());
        return path;
    }

  private:
    Ptr<RoutingPolicy> m_leg; //!< routes each leg
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_DETOUR_ROUTING_H
