/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_GRAPH_EMITTER_H
#define RAPIDLLM_GRAPH_EMITTER_H

#include "workload-graph.h"

#include <cstdint>
#include <vector>

namespace ns3 {
namespace rapidllm {

struct WeightGradientStore;

/**
 * \ingroup rapid-llm
 * \brief Appends nodes to a stage graph in program order, keeping the compute stream's order.
 *
 * Compute nodes, blocking collectives and receives form the stream: each depends on the
 * previous stream node. Asynchronous collectives and sends hang off a given node and delay
 * nothing until something depends on them.
 */
class GraphEmitter
{
  public:
    static constexpr uint32_t NONE = UINT32_MAX; //!< "no node"

    /** \param graph the graph to append to */
    explicit GraphEmitter(StageGraph& graph);

    /** \brief Sets the phase, micro-batch and layer of the nodes that follow. */
    void SetContext(Phase phase, uint32_t microBatch, int32_t layer);
    /** \brief Sets only the phase of the nodes that follow. */
    void SetPhase(Phase phase);
    /** \return the current micro-batch */
    uint32_t MicroBatch() const;
    /** \return the current layer */
    int32_t Layer() const;
    /** \return the current phase */
    Phase GetPhase() const;
    /**
     * \brief Sets WorkNode::energyShareUnits of the nodes that follow (1 again to end it): the
     * average rank's share of their work where the graph times the busiest rank's.
     */
    void SetEnergyShare(float share);
    /** \return the energy share of the nodes that follow */
    float EnergyShare() const;
    /**
     * \brief Scales the model FLOPs of the compute nodes that follow (1 again to end it): the
     * share of their work that is the model's, where the tensor-parallel ranks repeat it (KV
     * heads fewer than the ranks, a router or latent down-projection on every rank's rows).
     */
    void SetModelShare(double share);
    /** \return the model share of the nodes that follow */
    double ModelShare() const;

    /**
     * \brief A compute node on the stream.
     * \param label operator label (a string literal)
     * \param op the operator
     * \param saved bytes it leaves allocated for the backward pass
     * \return its id
     */
    uint32_t Compute(const char* label, const OperatorDesc& op, int64_t saved = 0);

    /** \brief A collective the stream waits for (e.g. tensor-parallel all-reduce). */
    uint32_t Blocking(const char* label, CollectiveKind kind, GroupKind group, uint64_t bytes);

    /**
     * \brief Sets the SMs collective \p id holds while it runs, where the software fixes them
     * (Transformer Engine's userbuffers num_sm) instead of the collective algorithm (NCCL's
     * channels). \param id a collective \param sms the SMs
     */
    void SetCommSms(uint32_t id, uint8_t sms);

    /**
     * \brief A collective that runs beside the stream once \p after is done.
     * \return its id; the stream does not wait for it
     */
    uint32_t Async(
        const char* label, CollectiveKind kind, GroupKind group, uint64_t bytes, uint32_t after);

    /** \brief A send to the peer at \p offset along \p axis, after node \p after. */
    uint32_t Send(const char* label,
                  GroupKind axis,
                  int32_t offset,
                  uint32_t tag,
                  uint64_t bytes,
                  uint32_t after);

    /** \brief A receive the stream waits for. */
    uint32_t Recv(const char* label, GroupKind axis, int32_t offset, uint32_t tag, uint64_t bytes);

    /**
     * \brief A receive posted beside the stream once \p after is done (an irecv issued with its
     * send before the kernel it overlaps); the stream waits for it only where StreamWaitsFor
     * says. \return its id
     */
    uint32_t RecvBeside(const char* label,
                        GroupKind axis,
                        int32_t offset,
                        uint32_t tag,
                        uint64_t bytes,
                        uint32_t after);

    /** \brief Makes the next stream node also wait for \p id. */
    void StreamWaitsFor(uint32_t id);
    /** \brief Makes the next stream node also wait for each of \p ids. */
    void StreamWaitsFor(const std::vector<uint32_t>& ids);

    /** \brief Adds \p bytes to the allocation change of node \p id. */
    void AddMemory(uint32_t id, int64_t bytes);

    /**
     * \brief A tag for a point-to-point exchange whose two ends run this same graph in the same
     * order (a context-parallel ring step): the n-th call gives n on every rank of the stage, so
     * sender and receiver agree, and tags never repeat within the graph.
     * \return the tag
     */
    uint32_t NextPeerTag();

    /** \return the last stream node, or NONE */
    uint32_t LastStream() const;

    /**
     * \brief Starts a second chain of the stream after \p node (a stream node, or NONE): the
     * next stream node waits for \p node instead of the last one, so what follows and what was
     * emitted since \p node are independent and share the compute stream as each is ready.
     * \param node where the new chain starts
     */
    void BranchFrom(uint32_t node);

    /**
     * \brief Where the weight-gradient GEMMs that follow go: into \p store, to be emitted later
     * by a zero-bubble schedule's weight pass, or (nullptr, the default) on the stream.
     * \param store the store, or nullptr
     */
    void DeferWeightGradients(WeightGradientStore* store);

    /** \return the store weight gradients are deferred to, or nullptr */
    WeightGradientStore* DeferredWeightGradients() const;

    /** \return the graph */
    StageGraph& Graph();

  private:
    /** Appends a node with the current context and returns a reference to it. */
    WorkNode& Append(WorkNodeKind kind, const char* label);
    /** Makes \p node a stream node: it waits for the previous one and the extra waits. */
    void JoinStream(WorkNode& node);
    /** Makes \p node run beside the stream once \p after (NONE: at once) is done. */
    void Beside(WorkNode& node, uint32_t after);
    /** Appends a send or receive with its peer (axis, offset), tag and bytes. */
    WorkNode& Peer(WorkNodeKind kind,
                   const char* label,
                   GroupKind axis,
                   int32_t offset,
                   uint32_t tag,
                   uint64_t bytes);

    StageGraph& m_graph;                       //!< target
    uint32_t m_lastStream = NONE;              //!< last stream node
    std::vector<uint32_t> m_extraWait;         //!< extra dependencies of the next stream node
    Phase m_phase = Phase::FORWARD;            //!< context
    uint32_t m_microBatch = 0;                 //!< context
    int32_t m_layer = -1;                      //!< context
    float m_energyShare = 1;                   //!< context
    double m_modelShare = 1;                   //!< context
    uint32_t m_peerTags = 0;                   //!< tags NextPeerTag() gave
    WeightGradientStore* m_deferred = nullptr; //!< where weight gradients go, or nullptr
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_GRAPH_EMITTER_H
