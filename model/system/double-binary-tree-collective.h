/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_DOUBLE_BINARY_TREE_COLLECTIVE_H
#define RAPIDLLM_DOUBLE_BINARY_TREE_COLLECTIVE_H

#include "collective-algorithm.h"

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief NCCL's double binary tree all-reduce ("double-binary-tree"; NCCL 2.4, Sanders et al.
 * 2009): two binary trees, each rank a leaf in one and inner in the other (for even n); each
 * tree reduces half the data up to its root and broadcasts it back down, pipelined in 1 MiB
 * pieces. All-reduce only.
 *
 * Fluid form: the levels of both trees as phases, reduce up from the deepest level and
 * broadcast down, each a stream per tree edge of half the data (pipelined by the builder).
 */
class DoubleBinaryTreeCollective : public CollectiveAlgorithm
{
  public:
    /** \brief Register this type. \return the TypeId */
    static TypeId GetTypeId();

    bool Supports(CollectiveOp op, uint32_t ranks, std::string& why) const override;
    uint32_t GetDefaultChunks(CollectiveOp op, uint64_t bytes) const override;
    uint64_t GetPieceBytes(CollectiveOp op, uint64_t bytes) const override;
    void AddMessages(ScheduleBuilder& b, const CollectiveCall& call) const override;
    void AddFluid(ScheduleBuilder& b, const CollectiveCall& call) const override;
    uint64_t CountMessages(const ScheduleBuilder& b, const CollectiveCall& call) const override;
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_DOUBLE_BINARY_TREE_COLLECTIVE_H
