/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_WORKLOAD_GRAPH_H
#define RAPIDLLM_WORKLOAD_GRAPH_H

#include "dep-list.h"
#include "operator-desc.h"
#include "parallel-layout.h"
#include "pipeline-schedule.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace ns3 {
namespace rapidllm {

/** \brief The four kinds of node a rank executes. */
enum class WorkNodeKind : uint8_t
{
    COMPUTE,    //!< a kernel on the GPU's compute stream
    COLLECTIVE, //!< a collective over one parallel group
    SEND,       //!< a point-to-point send to a peer
    RECV        //!< a point-to-point receive from a peer
};

/** \brief Collective operations the workload issues. */
enum class CollectiveKind : uint8_t
{
    ALL_REDUCE,
    ALL_GATHER,
    REDUCE_SCATTER,
    ALL_TO_ALL,
    BROADCAST
};

/** \return "all_reduce", "all_gather", ... */
const char* ToString(CollectiveKind kind);

/** \brief Where in the step a node belongs, for breakdowns and memory accounting. */
enum class Phase : uint8_t
{
    FORWARD,
    BACKWARD,
    RECOMPUTE,
    OPTIMIZER,
    PREFILL,
    DECODE,
    WEIGHT //!< a zero-bubble schedule's deferred weight gradients (its weight passes)
};

/** \return "forward", "backward", ... */
const char* ToString(Phase phase);

/**
 * \ingroup rapid-llm
 * \brief One node of a rank's execution graph.
 *
 * Communication names its group by kind (TP, DP, ...) rather than by id, so that all ranks that
 * are identical by symmetry share one graph; ParallelLayout resolves the ids per rank.
 */
struct WorkNode
{
    // Ordered by size so that nothing is padded: 120 bytes (a long decode holds millions).
    uint32_t id = 0;                           //!< index in the graph, in program order
    WorkNodeKind kind = WorkNodeKind::COMPUTE; //!< node kind
    Phase phase = Phase::FORWARD;              //!< phase
    bool hostSync = false;   //!< the host waits for this node before issuing the next
    bool copyEngine = false; //!< SEND/RECV: moved by copy engines (userbuffers), on no SMs
    const char* label = "";  //!< operator label (static), e.g. "qkv"
    DepList deps;            //!< ids this node waits for
    uint32_t microBatch = 0; //!< micro-batch (training) or decode step
    int32_t layer = -1;      //!< global layer index, -1 outside layers

    uint32_t op = 0;        //!< COMPUTE: the operator, an index into StageGraph::ops
    float smScaling = 0;    //!< COMPUTE: share of its time that scales as 1 / SMs (SmScaling)
    int32_t peerOffset = 0; //!< SEND/RECV: peer = own coordinate + offset
    uint32_t tag = 0;       //!< SEND/RECV: matching tag
    uint16_t kernels = 1;   //!< COMPUTE: kernels the operator launches (a few: kMaxKernels)
    /** The average rank's share of this node's work over the timed rank's, in 1/kShareUnit
     * (routed experts: the graph times the busiest rank, the step's energy counts every
     * rank's own work; ExpertRouting::energyShare). Fixed point so that the node stays 120
     * bytes; see EnergyShare(). */
    uint16_t energyShareUnits = kShareUnit;
    CollectiveKind collective = CollectiveKind::ALL_REDUCE; //!< COLLECTIVE: operation
    uint8_t commSms = 0; //!< COLLECTIVE: SMs its kernels hold (0: the collective algorithm's)
    GroupKind group = GroupKind::TP; //!< COLLECTIVE: group; SEND/RECV: peer axis

    double durationS = 0;      //!< COMPUTE: cost from the compute model
    double modelFlops = 0;     //!< COMPUTE: FLOPs as the papers count them
    uint64_t tensorBytes = 0;  //!< COMPUTE: device-memory bytes moved
    double hostS = 0;          //!< host time to issue this node (ApplyHostDispatch)
    uint64_t commBytes = 0;    //!< COLLECTIVE/SEND/RECV: bytes (whole buffer)
    int64_t memDelta = 0;      //!< bytes that stay allocated after this node (negative frees)
    uint64_t memTransient = 0; //!< extra bytes alive only while this node runs

    static constexpr uint16_t kShareUnit = 32768;  //!< energyShareUnits of a share of 1
    static constexpr uint32_t kMaxKernels = 65535; //!< the most kernels a node counts

    /** \return energyShareUnits as a share (0 to 2) */
    double
    EnergyShare() const
    {
        return double(energyShareUnits) / kShareUnit;
    }

    /** \brief Sets energyShareUnits. \param share the share, held to 0 to 2 (less one unit) */
    void SetEnergyShare(double share);
};

static_assert(sizeof(WorkNode) <= 120, "WorkNode is ordered to leave no padding");

/**
 * \ingroup rapid-llm
 * \brief The nodes a training stage emitted for one step of its pipeline schedule, or for a
 * part of it (the weight passes that end a zero-bubble step are emitted layer by layer).
 */
struct PassSpan
{
    ScheduleStep step;  //!< the step
    uint32_t begin = 0; //!< its first node
    uint32_t end = 0;   //!< one past its last node
};

/**
 * \ingroup rapid-llm
 * \brief The execution graph shared by every rank of one symmetry class (a pipeline stage).
 */
struct StageGraph
{
    uint32_t stage = 0;            //!< pipeline stage
    std::vector<WorkNode> nodes;   //!< in program order; deps point backwards
    std::vector<PassSpan> passes;  //!< training: the schedule's steps, in program order
    std::vector<OperatorDesc> ops; //!< the distinct operators of its compute nodes, in the
                                   //!< order they first appear, added by InternOperator (a
                                   //!< graph repeats a few dozen shapes over millions of nodes)

    /**
     * \param op an operator \return its index in ops, added if it is not there yet
     */
    uint32_t InternOperator(const OperatorDesc& op);

    /** \param node a compute node of this graph \return its operator */
    const OperatorDesc&
    OpOf(const WorkNode& node) const
    {
        return ops[node.op];
    }

    /** \return a readable name, e.g. "fwd.mb3.L12.qkv" */
    std::string NameOf(const WorkNode& node) const;

    /**
     * \brief The operator label inside a name NameOf wrote ("backward.mb3.L7.ar_fc2" gives
     * "ar_fc2"), to add up an operator's figures over micro-batches and layers.
     * \param name a node name
     * \return the label, or \p name itself when it is not of NameOf's form (other tools' traces)
     */
    static std::string LabelOf(std::string_view name);
    /**
     * Label of the receive of the tied embedding's gradient exchange between the first and the
     * last pipeline stage: a reduction, which waits for the other stage's data-parallel one,
     * not a pipeline transfer (the replay counts its wait as communication, not bubble).
     */
    static constexpr const char* kEmbeddingGradRecv = "recv_embedding_grad";
    /** \return the sum of compute durations, seconds */
    double ComputeSeconds() const;
    /** \return the sum of model FLOPs of the compute nodes */
    double ModelFlops() const;

  private:
    std::unordered_map<OperatorDesc, uint32_t, OperatorDescHash> m_opIndex; //!< ops -> index
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_WORKLOAD_GRAPH_H
