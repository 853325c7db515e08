/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// A researcher's own routing policy, written and registered in this file only: Valiant load
// balancing (L. G. Valiant, "A scheme for fast parallel communication", SIAM J. Comput. 1982)
// sends each flow to a pseudo-random intermediate GPU first and from there to its destination,
// each leg by dimension-order routing. It is registered under the name "valiant".
//
// It does not override RoutingPolicy::RoutesSymmetrically, and must not: the intermediate GPU
// depends on the flow id (the message id), which differs between a replay that folds symmetric
// copies and one that replays every rank, so a translated pair does not take the translated
// path. The default (false) makes every replay under it simulate every rank. A policy of your
// own returns true only if a translation of the cluster moves each of its paths along, for any
// flow id (dimension-order routing does; see doc/network-model.md, "Routing").
//
// Built two ways from this one file: into examples/custom-routing-example.cc, and as the shared
// library lib/libvaliant-routing.so that every command loads by name:
//
//   build/bin/rapid-llm run --load=build/lib/libvaliant-routing.so --routing=valiant ...

#include "ns3/routing-policy.h"
#include "ns3/topology.h"

namespace ns3 {
namespace example {

/**
 * \brief Valiant routing: two dimension-order legs through an intermediate endpoint chosen by
 * a hash of the flow.
 */
class ValiantRouting : public rapidllm::RoutingPolicy
{
  public:
    /** \brief Register this type. \return the TypeId */
    static TypeId
    GetTypeId()
    {
        static TypeId tid = TypeId("ns3::example::ValiantRouting")
                                .SetParent<rapidllm::RoutingPolicy>()
                                .AddConstructor<ValiantRouting>();
        return tid;
    }

  protected:
    std::vector<uint32_t>
    DoRoute(const rapidllm::Topology& t, uint32_t src, uint32_t dst, uint64_t flowId) override
    {
        if (!m_leg)
        {
            m_leg = rapidllm::RoutingPolicy::Create("dimension-order");
        }
        auto middle =
            static_cast<uint32_t>(rapidllm::FlowHash(src, dst, flowId) % t.GetEndpointCount());
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
    Ptr<rapidllm::RoutingPolicy> m_leg; //!< routes each leg
};

// One line makes the policy available by name everywhere (hardware files, --routing=...).
static rapidllm::RoutingPolicyRegistrar g_valiant("valiant", ValiantRouting::GetTypeId());

} // namespace example
} // namespace ns3
