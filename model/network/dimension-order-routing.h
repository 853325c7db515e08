/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_DIMENSION_ORDER_ROUTING_H
#define RAPIDLLM_DIMENSION_ORDER_ROUTING_H

#include "ns3/routing-policy.h"

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief Dimension-order routing: corrects the coordinates one network dimension at a time,
 * innermost first (XY routing on a mesh or torus), taking the shorter direction around each
 * ring or torus dimension (ties go the positive way).
 *
 * On a fat tree the spine is chosen by destination modulo the spine count (D-mod-k).
 * It is oblivious to load. Its only fault handling is the detours that keep dimension order:
 * if the shorter direction of a ring contains a dead link it goes the other way around, and a
 * fat-tree flow skips spines behind dead links. Where no such detour exists (a dead NIC link)
 * but the pair is still connected, Route() throws a NetworkError naming the pair, the dead link
 * and the policies that route around it (fault-aware, shortest-path). Named "dimension-order".
 */
class DimensionOrderRouting : public RoutingPolicy
{
  public:
    /** \brief Register this type. \return the TypeId */
    static TypeId GetTypeId();

    /** \return true: each dimension is crossed on its own links, detours stay inside it */
    bool KeepsDimensions() const override;
    /** \return true: coordinates alone choose every path (ties the positive way, D-mod-k) */
    bool RoutesSymmetrically(const Topology& topology) const override;
    /** \return false: one path per pair (the flow id is not used) */
    bool RoutesPerFlow() const override;

  protected:
    std::vector<uint32_t> DoRoute(const Topology& topology,
                                  uint32_t src,
                                  uint32_t dst,
                                  uint64_t flowId) override;

  private:
    /**
     * \brief Route inside one instance of dimension d between endpoints that differ only there.
     * \param t the topology
     * \param d the dimension
     * \param from the source endpoint
     * \param to the destination endpoint
     * \param flowId the flow (spine choice on fat trees)
     * \param[out] path links are appended here
     * \param[in,out] dead the first dead link met (left alone if one is already recorded)
     * \return false if the dimension offers no surviving path
     */
    bool RouteDimension(const Topology& t,
                        uint32_t d,
                        uint32_t from,
                        uint32_t to,
                        uint64_t flowId,
                        std::vector<uint32_t>& path,
                        uint32_t& dead) const;

    /** \return whether any path of surviving links leads from \p src to \p dst */
    static bool Reachable(const Topology& t, uint32_t src, uint32_t dst);
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_DIMENSION_ORDER_ROUTING_H
