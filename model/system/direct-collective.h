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
     * \brief One message per ordered pair: reduce-scatter and all-to-all send block j to member
     * j, all-gather sends the sender's own block; reduce-scatter then reduces what arrived.
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
