/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_RING_COLLECTIVE_H
#define RAPIDLLM_RING_COLLECTIVE_H

#include "collective-algorithm.h"

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief The ring ("ring"): reduce-scatter and all-gather in n-1 steps of S/n around the
 * members' order, all-reduce as the two in turn (as NCCL's ring); broadcast and reduce as a
 * chain from or to the root, pipelined in 1 MiB pieces. No all-to-all.
 */
class RingCollective : public CollectiveAlgorithm
{
  public:
    /** \brief Register this type. \return the TypeId */
    static TypeId GetTypeId();

    bool Supports(CollectiveOp op, uint32_t ranks, std::string& why) const override;
    uint32_t GetDefaultChunks(CollectiveOp op, uint64_t bytes) const override;
    void AddMessages(ScheduleBuilder& b, const CollectiveCall& call) const override;

    /**
     * \brief One pass around the ring: reduce-scatter (\p reduce) or all-gather of \p bytes
     * among \p members in members.size()-1 steps, member i sending to member i+1.
     */
    static void AddPass(ScheduleBuilder& b,
                        const std::vector<uint32_t>& members,
                        uint64_t bytes,
                        bool reduce);
    /**
     * \brief A chain along the members' order: broadcast from \p root, or (\p reduce) reduce
     * toward it, the whole \p bytes per hop.
     */
    static void AddChain(ScheduleBuilder& b,
                         const std::vector<uint32_t>& members,
                         uint32_t root,
                         uint64_t bytes,
                         bool reduce);
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_RING_COLLECTIVE_H
