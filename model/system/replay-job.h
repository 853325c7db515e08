/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_REPLAY_JOB_H
#define RAPIDLLM_REPLAY_JOB_H

#include "ns3/comm-groups.h"
#include "ns3/execution-trace.h"
#include "ns3/trace-set.h"
#include "ns3/workload.h"
#include "symmetry-plan.h"

#include <map>
#include <memory>
#include <vector>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief What the trace replayer executes: one Chakra execution graph per rank.
 *
 * Ranks that are alike by symmetry may share one graph (a workload's pipeline stage): the
 * shared graph is a real rank's trace (its representative), and the job rebinds its group ids
 * and peer ranks for every other rank, so that each rank replays exactly the trace that
 * RankTrace() would write for it.
 */
class ReplayJob
{
  public:
    /**
     * \brief A job of traces read from files (or built by another tool): no sharing.
     * \param set one graph per rank and the communicator groups
     * \return the job
     */
    static ReplayJob FromTraceSet(TraceSet set);

    /**
     * \brief A job of a workload: one graph per pipeline stage, rebound per rank.
     * \param workload the workload (its compute nodes costed)
     * \return the job
     */
    static ReplayJob FromWorkload(const Workload& workload);

    /** \return the number of ranks */
    uint32_t GetRankCount() const;
    /** \return the (possibly shared) graph \p rank executes */
    const ExecutionTrace& GetGraph(uint32_t rank) const;
    /** \return the index of \p rank's graph among the distinct graphs */
    uint32_t GetGraphIndex(uint32_t rank) const;
    /** \return the number of distinct graphs */
    uint32_t GetGraphCount() const;
    /** \return the group a collective of \p rank's graph naming \p group means for \p rank */
    uint32_t BindGroup(uint32_t rank, uint32_t group) const;
    /** \return the peer a send/receive of \p rank's graph naming \p peer means for \p rank */
    uint32_t BindPeer(uint32_t rank, uint32_t peer) const;
    /** \return the communicator groups */
    const CommGroups& GetGroups() const;
    /**
     * \return the bytes every rank together sends over the network in one run, as the
     * collectives' bandwidth terms count them (all-reduce 2(n-1)/n of its buffer, gather,
     * scatter and all-to-all kinds (n-1)/n, broadcast and reduce the buffer, a send its bytes):
     * what a packet-level network carries in frames, for an estimate of its cost before it runs
     */
    double SentBytes() const;

    /**
     * \brief Whether waiting for a transfer between \p rank and \p peer is a pipeline bubble:
     * the two sit in different pipeline stages (a context-parallel ring's transfer is
     * communication). A trace set knows no stages: every transfer counts as pipeline.
     * \param rank the waiting rank \param peer the other rank
     * \return whether the transfer crosses pipeline stages
     */
    bool IsPipelineTransfer(uint32_t rank, uint32_t peer) const;

    /**
     * \brief The symmetry reduction this job allows on a network (see SymmetryPlan): a
     * workload job folds its symmetric copies, a trace set simulates every rank.
     * \param view the network \param serializeGroups whether a group runs one collective at a
     * time \param fold whether to fold copies (false: every rank simulated; a workload job's
     * tensor collectives are still timed once where that is exact)
     * \return the plan
     */
    SymmetryPlan PlanSymmetry(const NetworkView& view,
                              bool serializeGroups,
                              bool fold = true) const;

    /**
     * \brief As the other overload, on a network whose faults the caller knows (see
     * SymmetryPlan::ForLayout): \p faulty turns folding off, \p innerSpared keeps timing
     * tensor collectives once where their links are untouched.
     */
    SymmetryPlan PlanSymmetry(const NetworkView& view,
                              bool serializeGroups,
                              bool fold,
                              bool faulty,
                              bool innerSpared) const;

    /**
     * \brief The trace \p rank executes, with groups and peers bound (what a file would hold).
     * \param rank the rank
     * \return the trace
     */
    ExecutionTrace BoundGraph(uint32_t rank) const;

  private:
    std::vector<std::shared_ptr<ExecutionTrace>> m_graphs; //!< distinct graphs (children built)
    std::vector<uint32_t> m_graphOf;                       //!< rank -> graph index
    CommGroups m_groups;                                   //!< group id -> ranks
    // Rebinding of shared graphs (workload jobs only).
    std::shared_ptr<ParallelLayout> m_layout;  //!< rank coordinates; null for trace sets
    std::vector<uint32_t> m_representative;    //!< graph index -> the rank it was written for
    std::map<uint32_t, GroupKind> m_groupKind; //!< a representative's group id -> its kind
    bool m_tensorPeers = false; //!< a workload sends point-to-point inside tensor groups
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_REPLAY_JOB_H
