/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_DIRECT_COLLECTIVE_H
#define RAPIDLLM_DIRECT_COLLECTIVE_H

#include "collective-algorithm.h"

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief Direct sends ("direct"): every rank sends each peer its block at once (reduce-scatter,
 * all-gather, all-to-all; all-reduce as reduce-scatter then all-gather), broadcast and reduce
 * as a star around the root. The default on fully connected dimensions, the only all-to-all.
 * Its fluid form is its messages, one stream per pair and phase (they already run at once).
 */
class DirectCollective : public CollectiveAlgorithm
{
  public:
    /** \brief Register this type. \return the TypeId */
    static TypeId GetTypeId();

    bool Supports(CollectiveOp op, uint32_t ranks, std::string& why) const override;
    void AddMessages(ScheduleBuilder& b, const CollectiveCall& call) const override;
    void AddFluid(ScheduleBuilder& b, const CollectiveCall& call) const override;
    uint64_t CountMessages(const ScheduleBuilder& b, const CollectiveCall& call) const override;

    /**
     * \brief The order in which each member issues its sends to the others, as NCCL schedules
     * grouped point-to-point operations: member i's r-th send goes to member (i + delta_r) mod
     * k, so that in every round each member receives from exactly one sender.
     * \param k the members \return delta_1 .. delta_{k-1}, a permutation of 1 .. k-1
     */
    static std::vector<uint32_t> PeerDeltas(uint32_t k);

    /**
     * \brief One message per ordered pair: reduce-scatter and all-to-all send block j to member
     * j, all-gather sends the sender's own block; reduce-scatter then reduces what arrived. Each
     * member issues its sends in PeerDeltas order.
     * \param op REDUCE_SCATTER, ALL_GATHER or ALL_TO_ALL
     */
    static void AddPairwise(ScheduleBuilder& b,
                            const std::vector<uint32_t>& members,
                            uint64_t bytes,
                            CollectiveOp op);
    /** \brief Broadcast (root sends to all) or (\p reduce) reduce (all send to the root). */
    static void AddStar(ScheduleBuilder& b,
                        const std::vector<uint32_t>& members,
                        uint32_t root,
                        uint64_t bytes,
                        bool reduce);
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_DIRECT_COLLECTIVE_H
