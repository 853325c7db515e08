/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// A routing policy built out of tree as a plugin: a subclass with a TypeId and one registration
// line. Loaded into any command, it is known by its name:
//
//   rapid-llm run --load=./liboot-routing.so --routing=oot-dimension-order --model=gpt-1.7b \
//       --gpus=16 --tp=2 --gbs=16
//
// It routes as the built-in dimension-order policy does (so a run with it matches a run with
// that one exactly); a policy of your own replaces DoRoute.

#include "ns3/routing-policy.h"
#include "ns3/topology.h"

namespace ns3 {
namespace oot {

/** \brief Dimension-order routing, registered from a plugin. */
class OotDimensionOrderRouting : public rapidllm::RoutingPolicy
{
  public:
    /** \brief Register this type. \return the TypeId */
    static TypeId
    GetTypeId()
    {
        static TypeId tid = TypeId("ns3::oot::OotDimensionOrderRouting")
                                .SetParent<rapidllm::RoutingPolicy>()
                                .AddConstructor<OotDimensionOrderRouting>();
        return tid;
    }

    /**
     * \brief Like the policy it follows, this one moves every path with its ranks, so a replay
     * may fold symmetric copies. A policy that does not declare it is replayed in full.
     * \return true
     */
    bool
    RoutesSymmetrically(const rapidllm::Topology& /* topology */) const override
    {
        return true;
    }

  protected:
    std::vector<uint32_t>
    DoRoute(const rapidllm::Topology& t, uint32_t src, uint32_t dst, uint64_t flowId) override
    {
        if (!m_inner)
        {
            m_inner = rapidllm::RoutingPolicy::Create("dimension-order");
        }
        return m_inner->Route(t, src, dst, flowId);
    }

  private:
    Ptr<rapidllm::RoutingPolicy> m_inner; //!< the built-in policy it follows
};

static rapidllm::RoutingPolicyRegistrar g_oot("oot-dimension-order",
                                              OotDimensionOrderRouting::GetTypeId());

} // namespace oot
} // namespace ns3
