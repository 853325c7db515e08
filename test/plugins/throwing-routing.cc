/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// A routing policy with a defect, loaded by the command-line tests: its DoRoute throws, as an
// extension's bug would. The tool must name the loaded library in its internal error, since
// the exception crosses from the extension's code into the command.

#include "ns3/routing-policy.h"

#include <stdexcept>

namespace ns3 {
namespace test {

/** \brief Throws on every route: stands for an extension's own bug. */
class ThrowingRouting : public rapidllm::RoutingPolicy
{
  public:
    /** \brief Register this type. \return the TypeId */
    static TypeId
    GetTypeId()
    {
        static TypeId tid = TypeId("ns3::test::ThrowingRouting")
                                .SetParent<rapidllm::RoutingPolicy>()
                                .AddConstructor<ThrowingRouting>();
        return tid;
    }

  protected:
    std::vector<uint32_t>
    DoRoute(const rapidllm::Topology&, uint32_t, uint32_t, uint64_t) override
    {
        throw std::runtime_error("throwing-routing: no route table");
    }
};

static rapidllm::RoutingPolicyRegistrar g_throwing("throwing", ThrowingRouting::GetTypeId());

} // namespace test
} // namespace ns3
