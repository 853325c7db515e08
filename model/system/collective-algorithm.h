/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_COLLECTIVE_ALGORITHM_H
#define RAPIDLLM_COLLECTIVE_ALGORITHM_H

#include "collective-op.h"
#include "ns3/object.h"
#include "ns3/type-registry.h"
#include "schedule-builder.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief One collective for an algorithm to write: the op over some ranks of the schedule.
 *
 * At the top level the members are the whole group (0..n-1) and the bytes the request's; a
 * composing algorithm (hierarchical) calls other algorithms with sub-groups and their share.
 */
struct CollectiveCall
{
    CollectiveOp op = CollectiveOp::ALL_REDUCE; //!< what
    std::vector<uint32_t> members; //!< schedule ranks taking part, in the algorithm's order
    uint64_t bytes = 0;            //!< size, as CollectiveRequest::bytes (nccl-tests' convention)
    uint32_t root = 0;             //!< broadcast / reduce root (index into members)
    /**
     * The whole collective's size at this call's level when the call is one of its pipelined
     * pieces (0: the call is whole). A library that picks its protocol by size (NCCL) picks it
     * for the whole: the pieces overlap their latencies, which a piece's own estimate does not.
     */
    uint64_t wholeBytes = 0;

    /** \return the whole collective's size at this call's level */
    uint64_t
    WholeBytes() const
    {
        return wholeBytes > 0 ? wholeBytes : bytes;
    }
};

/**
 * \ingroup rapid-llm
 * \brief A collective algorithm (ring, direct, halving-doubling, double binary tree,
 * hierarchical, or a researcher's own): which ops and group sizes it runs, how finely it
 * pipelines by default, and the messages it sends.
 *
 * It writes its messages into a CollectiveSchedule through a ScheduleBuilder, above the
 * NetworkBackend interface, so the flow and packet networks run the very same messages.
 * Algorithms are chosen by name: one file holds the subclass (an ns-3 Object with a TypeId)
 * and one registration line,
 * \code
 *   static TypeRegistrar<CollectiveAlgorithm> g_mine("my-ring", MyRing::GetTypeId());
 * \endcode
 * after which "my-ring" is accepted by CollectiveRequest::algorithm, the TraceReplayer's
 * CollectiveAlgorithm attribute, `rapid-llm collective --algorithm` and a hardware file's
 * `network.dimensions.<name>.collective`. Algorithms hold no state between builds (attributes
 * only), so one object serves every collective.
 *
 * Two granularities (issue 11): AddMessages() is the message form, every step of the algorithm,
 * which the packet backend needs and which validates the rest. AddFluid() is the fluid form:
 * the concurrent streams the algorithm keeps busy, phase by phase (ScheduleBuilder::FluidPhase:
 * source, destination, bytes, and the phase's latency term, the message steps on its critical
 * path), which the flow backend shares max-min with everything else in flight. The base
 * derives a default fluid form from AddMessages() (each pair's messages merged into one stream,
 * the latency term the longest chain of messages), so an algorithm written with AddMessages()
 * alone has both; the built-in ones override it with their closed forms (a ring all-reduce:
 * one stream per ring edge of 2(n-1)/n S and 2(n-1) latencies), and hierarchical composes the
 * per-dimension fluid forms phase by phase as it composes their messages.
 */
class CollectiveAlgorithm : public Object
{
  public:
    /** \brief Register this type. \return the TypeId */
    static TypeId GetTypeId();

    CollectiveAlgorithm();
    ~CollectiveAlgorithm() override;

    /**
     * \brief Whether this algorithm runs \p op among \p ranks ranks.
     * \param op the op \param ranks the group size
     * \param[out] why when it does not: what it runs instead, for the user ("halving-doubling
     * runs all-reduce, reduce-scatter and all-gather, not broadcast")
     * \return true if it can
     */
    virtual bool Supports(CollectiveOp op, uint32_t ranks, std::string& why) const = 0;

    /**
     * \brief Throws SpecError naming \p field and saying what is allowed, unless Supports().
     * \param op the op \param ranks the group size \param field the field or option that chose
     * this algorithm ("algorithm", "network.dimensions.nvlink.collective")
     */
    void Check(CollectiveOp op, uint32_t ranks, const std::string& field) const;

    /**
     * \brief The pieces a collective is pipelined in when the request leaves it open
     * (CollectiveRequest::chunks == 0). The default is 1 (no pipelining).
     * \param op the op \param bytes the request's size
     * \return at least 1
     */
    virtual uint32_t GetDefaultChunks(CollectiveOp op, uint64_t bytes) const;
    /**
     * \brief The size of the GetDefaultChunks pieces: whole pieces of this size and a shorter
     * last one, or 0 (the default) for pieces of equal size.
     * \param op the op \param bytes the request's size
     * \return the piece size, or 0
     */
    virtual uint64_t GetPieceBytes(CollectiveOp op, uint64_t bytes) const;

    /**
     * \brief Writes the messages (and local reductions) of \p call: each member waits for
     * b.GetReady(member) before its first message and leaves b.SetReady(member, its last step).
     * Called only for ops Supports() accepts; once per pipeline piece.
     * \param b the schedule being written \param call what to write
     */
    virtual void AddMessages(ScheduleBuilder& b, const CollectiveCall& call) const = 0;

    /**
     * \brief Writes the fluid form of \p call with ScheduleBuilder::FluidPhase (readiness as
     * AddMessages()). Called only for ops Supports() accepts, once per call (pipelining is
     * the builder's). The default derives one phase from AddMessages(): one stream per
     * (source, destination) pair carrying all its messages' bytes, the latency count the
     * longest chain of messages, the local time the longest chain of local steps.
     * \param b the (fluid) schedule being written \param call what to write
     */
    virtual void AddFluid(ScheduleBuilder& b, const CollectiveCall& call) const;

    /**
     * \brief How many messages AddMessages() writes for \p call (one pipeline piece), so that
     * a collective too large to hold is refused before it is built, with its size; a count
     * also gives the fluid form its message floor (doc/network-model.md), which is right where
     * no two of one step's messages share a link. The default, 0, means not known: no floor,
     * and the schedule's own limit still stops a collective as it grows.
     * \param b the builder (for the network view) \param call the call
     * \return the message count, 0 if not known
     */
    virtual uint64_t CountMessages(const ScheduleBuilder& b, const CollectiveCall& call) const;

    /**
     * \brief What ran, for plans and reports. The default is \p name.
     * \param name the name the algorithm was chosen by
     * \param b the builder (for the network view) \param call the top-level call
     * \return e.g. "ring" or "hierarchical(nvlink:ring,infiniband:ring)"
     */
    virtual std::string Describe(const std::string& name,
                                 const ScheduleBuilder& b,
                                 const CollectiveCall& call) const;

    /**
     * \brief The SMs each member's kernels hold while \p call runs (one CTA per channel, each
     * on an SM of its own: NCCL's kernels do not share an SM with a GEMM's), which the
     * compute kernels that run beside the collective do not get (TraceReplayer's SmCount).
     * The default is 0: the algorithm does not say, and takes none.
     * \param b the builder (for the network view) \param call the top-level call
     * \return the SMs per member
     */
    virtual uint32_t GetSmCount(const ScheduleBuilder& b, const CollectiveCall& call) const;

    /**
     * \brief The SMs a send or receive on a communicator holds while it runs (the library's
     * point-to-point kernel), as GetSmCount for collectives. The default is 0.
     * \param b the builder \param communicator its members (the whole communicator, not the
     * pair) and bytes (the message) \return the SMs of the rank's kernel
     */
    virtual uint32_t GetP2pSmCount(const ScheduleBuilder& b,
                                   const CollectiveCall& communicator) const;

    /**
     * \brief Whether the algorithm spans several network dimensions by running other
     * algorithms per dimension (hierarchical does). Such an algorithm cannot be a dimension's
     * own `collective`. The default is false.
     * \return true if it composes dimensions
     */
    virtual bool ComposesDimensions() const;

  protected:
    /**
     * \return NCCL-like pipelining for trees and chains: 1 MiB pieces, at least 1 and at most
     * \p maxChunks (NCCL pipelines its trees in chunks of this order)
     */
    static uint32_t PipelineChunks(uint64_t bytes, uint32_t maxChunks);
    /**
     * \return the pieces of \p bytes in whole pieces of \p piece bytes and a shorter last one,
     * at least 1 and at most \p most (WholePieceBytes)
     */
    static uint32_t WholePieces(uint64_t bytes, uint64_t piece, uint64_t most);
    /**
     * \return the size of WholePieces' pieces: \p piece, the last one less; 0 (equal pieces)
     * above \p most of them. Whole pieces and a short last one keep a pipelined collective's
     * time growing with its size, where one piece per whole \p piece jumps at each multiple.
     */
    static uint64_t WholePieceBytes(uint64_t bytes, uint64_t piece, uint64_t most);
    /**
     * \return the pieces a chain (broadcast, reduce) pipelines \p bytes in: whole steps of
     * NCCL's Simple protocol, 512 KiB (init.cc: DEFAULT_BUFFSIZE 4 MiB over NCCL_STEPS 8), the
     * last one what is left, at most 64 pieces (ChainPieceBytes)
     */
    static uint32_t ChainChunks(uint64_t bytes);
    /**
     * \return the size of a chain's pieces (ChainChunks): 512 KiB, the last one less; 0 (equal
     * pieces) above 64 of them. Whole pieces and a short last one keep a chain's time growing
     * with its size: equal pieces of 1 MiB forwarded a 1.5 MiB broadcast whole from GPU to GPU,
     * slower than a 2 MiB one in two pieces.
     */
    static uint64_t ChainPieceBytes(uint64_t bytes);
};

/** \brief The registry of collective algorithms (short names "ring", "direct", ...). */
using CollectiveAlgorithmRegistry = TypeRegistry<CollectiveAlgorithm>;

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_COLLECTIVE_ALGORITHM_H
