/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_SYMMETRY_PLAN_H
#define RAPIDLLM_SYMMETRY_PLAN_H

#include "ns3/comm-groups.h"
#include "ns3/parallel-layout.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace ns3 {
namespace rapidllm {

class NetworkView;

/**
 * \ingroup rapid-llm
 * \brief Which ranks of a job a replay simulates, and how the others follow them: the symmetry
 * reduction of a workload job, made by ReplayJob::PlanSymmetry and used by the TraceReplayer.
 *
 * The ranks of one pipeline stage run the same graph, so one rank can stand for all its copies
 * along the expert and outer data-parallel axes, and along the tensor axis wherever the network
 * looks the same from every member of a tensor group (each tensor group inside one instance of a
 * switch or fully connected innermost dimension: moving along the tensor axis then only permutes
 * the GPUs of that instance, rails and all), and along the context axis wherever a move along it
 * maps the network onto itself (AxisTranslationSymmetric): it is simulated, its copies are
 * not. Its collectives still run over their whole groups (the copies are ghost members,
 * executing on the network), and every message and collective it issues is also issued by each
 * copy (ghost traffic, translated by GetTranslationCount() offsets), so the network carries the
 * full job's load; a message to a folded peer is received by that peer's representative
 * (InFrameOf).
 * When every tensor-parallel group owns its links (a switch or fully connected innermost
 * dimension that holds whole tensor groups and no two members of any other group or pipeline
 * neighbour), each tensor group's collectives of one kind and size run once and are then timed
 * from that measurement (exact: nothing else can share those links), folded or not. The rest
 * assumes that copies advance in step, as they do on a symmetric network: a network with a
 * degraded or dead link gets no reduction.
 *
 * A plan made by the default constructor simulates every rank and times nothing once (trace
 * sets).
 */
class SymmetryPlan
{
  public:
    /** \param ranks the job's ranks, every one simulated */
    explicit SymmetryPlan(uint32_t ranks = 0);

    /**
     * \brief Plans the reduction of a workload job on a network.
     * \param layout the job's parallel layout (rank coordinates, group ids)
     * \param view the network: any fault turns the reduction off (and timing tensor
     * collectives once, as the other overload with faulty = innerSpared' = HasFaults()); the
     * innermost dimension decides whether tensor groups own their links
     * \param serializeGroups whether a group runs one collective at a time (timing a tensor
     * group's collective once is exact only then)
     * \param fold whether to fold copies at all (false: every rank simulated, tensor
     * collectives still timed once where exact)
     * \param tensorPeers whether the job sends point-to-point inside tensor groups (Transformer
     * Engine's userbuffers ring): its tensor collectives are then not timed once (the ring
     * shares their links); the tensor axis still folds
     * \return the plan (no reduction when nothing folds)
     */
    static SymmetryPlan ForLayout(std::shared_ptr<const ParallelLayout> layout,
                                  const NetworkView& view,
                                  bool serializeGroups,
                                  bool fold = true,
                                  bool tensorPeers = false);

    /**
     * \brief Plans the reduction of a workload job on a network whose faults the caller knows
     * (those present and those scheduled to start during the run, see
     * NetworkBackend::MayHaveFaults and NetworkBackend::FaultsSpareDimension).
     *
     * Any fault turns folding off: copies would differ. A tensor-parallel group that owns its
     * links still times each repeat once when the faults spare the innermost dimension (fault
     * locality: nothing on its links changes, so each repeat takes the time of the first).
     * \param layout the job's parallel layout \param view the network
     * \param serializeGroups whether a group runs one collective at a time
     * \param fold whether to fold copies at all
     * \param faulty whether any link is degraded or dead, now or later in the run
     * \param innerSpared whether the faults leave the innermost dimension as a healthy
     * network would (no fault on its links, no path detoured onto them)
     * \param tensorPeers whether the job sends point-to-point inside tensor groups
     * \return the plan
     */
    static SymmetryPlan ForLayout(std::shared_ptr<const ParallelLayout> layout,
                                  const NetworkView& view,
                                  bool serializeGroups,
                                  bool fold,
                                  bool faulty,
                                  bool innerSpared,
                                  bool tensorPeers = false);

    /** \return whether some ranks are not simulated */
    bool IsReduced() const;
    /** \return whether \p rank is simulated */
    bool IsSimulated(uint32_t rank) const;
    /** \return the number of simulated ranks */
    uint32_t GetSimulatedCount() const;
    /** \return the simulated rank that stands for \p rank (itself if simulated) */
    uint32_t RepresentativeOf(uint32_t rank) const;
    /**
     * \brief \p rank moved by the translation that takes \p frame to RepresentativeOf(frame):
     * where a message from \p rank to \p frame is seen from the simulated rank standing for
     * \p frame (a point-to-point message to a folded rank matches that rank's receive).
     * \param rank the rank to move \param frame the rank whose representative is the origin
     * \return the moved rank (\p rank itself without a reduction)
     */
    uint32_t InFrameOf(uint32_t rank, uint32_t frame) const;
    /** \return the number of copies of each simulated rank besides itself */
    uint32_t GetTranslationCount() const;
    /**
     * \brief The copies (translation indices) of a message \p src -> \p dst of a simulated rank
     * that must load the network: every copy, except for a message inside a tensor group that
     * owns its links, whose copies in other tensor groups run on links no simulated rank uses
     * (max-min rates, and packets, on disjoint links do not interact): only its moves along the
     * tensor axis then.
     * \param src the sender \param dst the receiver
     * \param everyCopy every copy regardless (a trace must see all the job's traffic)
     * \return the indices, ascending
     */
    const std::vector<uint32_t>& GhostCopies(uint32_t src, uint32_t dst, bool everyCopy) const;
    /** \return \p rank moved to its copy number \p t (0 <= t < GetTranslationCount()) */
    uint32_t Translate(uint32_t rank, uint32_t t) const;
    /** \return whether tensor-parallel collectives are timed once per group, kind and size */
    bool TimesTensorOnce() const;
    /** \return whether \p group's collectives are timed once (a tensor group, TimesTensorOnce) */
    bool IsTimedOnce(uint32_t group) const;
    /**
     * \brief The copies of \p group whose collectives run as ghost load when \p group's run:
     * its images under every translation that exist and hold no simulated rank, each once;
     * none for a tensor group that owns its links (its copies' traffic stays on theirs).
     * \param group a group with simulated members \param groups the job's groups
     * \param everyCopy the copies of a tensor group that owns its links too
     * \return the group ids, in translation order (empty without a reduction)
     */
    std::vector<uint32_t> GetGhostGroups(uint32_t group,
                                         const CommGroups& groups,
                                         bool everyCopy) const;

  private:
    /**
     * \return whether moving ranks along an axis of \p stride ranks and \p size steps maps
     * every ring, torus and mesh dimension of \p view onto itself (a cyclic shift of one of its
     * extents, or none of them touched)
     */
    static bool ShiftMapsRings(const NetworkView& view, uint64_t stride, uint32_t size);
    /** \return whether every tensor-parallel group owns its links (see the class comment) */
    static bool TensorGroupsOwnLinks(const ParallelLayout& layout, const NetworkView& view);
    /**
     * \return whether moving along \p axis maps the network onto itself: every group of \p axis
     * inside one instance of a switch or fully connected innermost dimension, or, with
     * \p apartToo, every member of every group in an instance of its own
     */
    static bool AxisTranslationSymmetric(const ParallelLayout& layout,
                                         const NetworkView& view,
                                         GroupKind axis,
                                         bool apartToo);

    uint32_t m_ranks = 0;                              //!< ranks of the job
    std::shared_ptr<const ParallelLayout> m_layout;    //!< null: no reduction
    std::vector<uint8_t> m_simulated;                  //!< per rank; empty: all simulated
    std::vector<GroupKind> m_foldedAxes;               //!< axes whose copies are not simulated
    std::vector<std::vector<uint32_t>> m_translations; //!< per copy: offset per folded axis
    bool m_tensorOnce = false;                         //!< tensor collectives timed once
    bool m_tensorPrivate = false;                      //!< tensor groups own their links
    std::vector<uint32_t> m_allCopies;                 //!< 0 .. GetTranslationCount() - 1
    std::vector<uint32_t> m_tensorCopies;              //!< copies moving along the tensor axis only
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_SYMMETRY_PLAN_H
