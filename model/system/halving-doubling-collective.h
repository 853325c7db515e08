/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_HALVING_DOUBLING_COLLECTIVE_H
#define RAPIDLLM_HALVING_DOUBLING_COLLECTIVE_H

#include "collective-algorithm.h"

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief Recursive halving and doubling ("halving-doubling"; Thakur, Rabenseifner, Gropp,
 * IJHPCA 2005): reduce-scatter by recursive halving, all-gather by recursive doubling, each in
 * log2 n steps, all-reduce as the two. Reduce-scatter and all-gather need a power-of-two group;
 * all-reduce on other sizes uses Rabenseifner's fold.
 *
 * Fluid form: its messages (one per rank and step is already as few flows as a fluid form
 * could keep while holding one flow per rank at a time, as the messages do).
 */
class HalvingDoublingCollective : public CollectiveAlgorithm
{
  public:
    /** \brief Register this type. \return the TypeId */
    static TypeId GetTypeId();

    bool Supports(CollectiveOp op, uint32_t ranks, std::string& why) const override;
    void AddMessages(ScheduleBuilder& b, const CollectiveCall& call) const override;
    void AddFluid(ScheduleBuilder& b, const CollectiveCall& call) const override;
    uint64_t CountMessages(const ScheduleBuilder& b, const CollectiveCall& call) const override;

    /**
     * \brief Recursive halving reduce-scatter (\p reduce) or recursive doubling all-gather of
     * \p bytes among \p members (a power of two of them).
     */
    static void AddRecursive(ScheduleBuilder& b,
                             const std::vector<uint32_t>& members,
                             uint64_t bytes,
                             bool reduce);
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_HALVING_DOUBLING_COLLECTIVE_H
