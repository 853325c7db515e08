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
 *
 * Fluid form: a pass is one stream per ring edge carrying every block the edge sends, with the
 * pass's n-1 latencies (all-reduce: both passes, 2(n-1)/n S and 2(n-1) latencies per edge); a
 * chain is one phase per hop (pipelined by the builder).
 */
class RingCollective : public CollectiveAlgorithm
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

    /*
     * The writers below take \p reduced: 0 where nothing is reduced, else the share of each
     * message's bytes that is data to reduce at the reduction rate (1; a protocol that puts
     * more bytes on the wire than it carries, NCCL's LL, less).
     */
    /**
     * \brief The fluid form of \p passes passes around the ring (1: reduce-scatter or
     * all-gather, 2: all-reduce) of \p bytes among \p members; the first pass reduces where
     * \p reduced > 0.
     */
    static void AddFluidPasses(ScheduleBuilder& b,
                               const std::vector<uint32_t>& members,
                               uint64_t bytes,
                               uint32_t passes,
                               double reduced);

    /**
     * \brief One pass around the ring: reduce-scatter (\p reduced > 0) or all-gather of \p bytes
     * among \p members in members.size()-1 steps, member i sending to member i+1. A step
     * waits only for what the member received in the step before; the member's messages to
     * its neighbour follow each other on their ordered connection, across passes too (an
     * all-reduce's reduce-scatter and all-gather, as NCCL's ring runs its 2(n-1) steps on one
     * connection), several in flight at once as NCCL's step slots allow.
     */
    static void AddPass(ScheduleBuilder& b,
                        const std::vector<uint32_t>& members,
                        uint64_t bytes,
                        double reduced);
    /**
     * \brief A chain along the members' order: broadcast from \p root, or (\p reduced > 0) reduce
     * toward it, the whole \p bytes per hop.
     */
    static void AddChain(ScheduleBuilder& b,
                         const std::vector<uint32_t>& members,
                         uint32_t root,
                         uint64_t bytes,
                         double reduced);
    /**
     * \brief A chain that forwards its bytes as they arrive (NCCL's LL and LL128 protocols,
     * whose receivers poll a flag per 8- or 128-byte line): every hop streams the whole
     * \p bytes at once, each starting when the first line reached its sender (a zero-byte
     * message, one path latency after the hop upstream started), and a member holds its bytes
     * once its hop and every hop upstream delivered them. Its time is the hops' latencies plus
     * the slowest hop's bytes, where AddChain's is every hop's bytes.
     */
    static void AddCutThroughChain(ScheduleBuilder& b,
                                   const std::vector<uint32_t>& members,
                                   uint32_t root,
                                   uint64_t bytes,
                                   double reduced);
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_RING_COLLECTIVE_H
