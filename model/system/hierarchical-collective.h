/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_HIERARCHICAL_COLLECTIVE_H
#define RAPIDLLM_HIERARCHICAL_COLLECTIVE_H

#include "collective-algorithm.h"

#include <functional>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief The hierarchical composition ("hierarchical"): one phase per network dimension the
 * group spans, each run by that dimension's own algorithm among the sub-groups that differ only
 * there. All-reduce is reduce-scatter from the innermost dimension outwards, all-reduce on the
 * outermost, all-gather back in; reduce-scatter and all-gather are their halves. The group must
 * be a full grid over the dimensions it spans (e.g. whole nodes). Pipelined in 1 MiB pieces, at
 * most 8. Its fluid form is the same phases, each the dimension algorithm's fluid form.
 */
class HierarchicalCollective : public CollectiveAlgorithm
{
  public:
    /** \brief Register this type. \return the TypeId */
    static TypeId GetTypeId();

    bool Supports(CollectiveOp op, uint32_t ranks, std::string& why) const override;
    uint32_t GetDefaultChunks(CollectiveOp op, uint64_t bytes) const override;
    void AddMessages(ScheduleBuilder& b, const CollectiveCall& call) const override;
    void AddFluid(ScheduleBuilder& b, const CollectiveCall& call) const override;
    uint64_t CountMessages(const ScheduleBuilder& b, const CollectiveCall& call) const override;
    std::string Describe(const std::string& name,
                         const ScheduleBuilder& b,
                         const CollectiveCall& call) const override;
    /**
     * \brief The SMs of the collective as one communicator runs it (NCCL does not split it by
     * dimension): what the outermost spanned dimension's algorithm says for the whole call.
     */
    uint32_t GetSmCount(const ScheduleBuilder& b, const CollectiveCall& call) const override;
    bool ComposesDimensions() const override;

  private:
    /**
     * One phase: the dimension's algorithm, the call it runs (op and size; no members yet)
     * and the sub-groups that each run it.
     */
    using PhaseVisitor = std::function<void(const CollectiveAlgorithm& algorithm,
                                            CollectiveCall call,
                                            const std::vector<std::vector<uint32_t>>& groups)>;

    /**
     * \brief Calls \p visit for each phase of \p call in order (all-reduce: reduce-scatter
     * inward, all-reduce on the outermost dimension, all-gather outward); throws SpecError
     * when the group is not a full grid or a dimension's algorithm cannot run its phase.
     */
    void ForEachPhase(const ScheduleBuilder& b,
                      const CollectiveCall& call,
                      const PhaseVisitor& visit) const;
    /** \brief Writes the phases of \p call: each dimension's messages, or its fluid form. */
    void Compose(ScheduleBuilder& b, const CollectiveCall& call, bool fluid) const;
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_HIERARCHICAL_COLLECTIVE_H
