/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_PARALLEL_LAYOUT_H
#define RAPIDLLM_PARALLEL_LAYOUT_H

#include "ns3/run-spec.h"

#include <array>
#include <cstdint>
#include <map>
#include <vector>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief The axes of the parallel layout, and the communication groups built from them.
 *
 * Expert parallelism subdivides data parallelism (as in Megatron-LM): the dp ranks of a
 * pipeline stage are ep x (dp / ep). The dense gradient group (DP) spans the context-parallel
 * ranks and both parts of dp (they hold the same weights and see different tokens), the expert
 * group (EP) the first part, and the expert-gradient group (EDP) the context-parallel ranks and
 * the second part. With folded expert groups (ParallelSpec::FoldedExperts, etp 1) the EP axis is
 * the ep / (tp x cp) part of dp and an expert group spans the tensor- and context-parallel
 * ranks too (Megatron-core's MoE parallel folding: consecutive ranks of a stage); the EDP group
 * is then the outer part of dp alone.
 */
enum class GroupKind : uint8_t
{
    TP,  //!< tensor parallel group
    CP,  //!< context parallel group
    EP,  //!< expert parallel group
    DP,  //!< data parallel group (dense parameters)
    EDP, //!< expert data parallel group (expert parameters)
    PP   //!< the pipeline
};

/** \return "tp", "cp", "ep", "dp", "edp" or "pp" */
const char* ToString(GroupKind kind);

/** Every group kind, in enum order (the order of ParallelLayout's group ids). */
extern const std::vector<GroupKind> kGroupKinds;

/**
 * \ingroup rapid-llm
 * \brief Maps global ranks to coordinates on each parallel axis and enumerates the groups.
 *
 * Ranks are numbered in the order of ParallelSpec::rankOrder, fastest first; Megatron-LM's
 * default "tp-cp-ep-dp-pp" puts tensor parallel ranks on neighbouring GPUs (inside a node).
 */
class ParallelLayout
{
  public:
    /** \param parallel the layout (validated) */
    explicit ParallelLayout(const ParallelSpec& parallel);

    /** \return the number of ranks */
    uint32_t Ranks() const;
    /**
     * \return the coordinate of \p rank along the axis of \p kind (TP, CP, EP, PP; DP and EDP:
     * the outer dp / ep part)
     */
    uint32_t Coord(uint32_t rank, GroupKind kind) const;
    /** \return the pipeline stage of \p rank */
    uint32_t Stage(uint32_t rank) const;
    /** \return the rank with the same coordinates as \p rank except \p kind set to \p value */
    uint32_t WithCoord(uint32_t rank, GroupKind kind, uint32_t value) const;

    /** \return the ranks of \p rank's group of \p kind, in coordinate order */
    std::vector<uint32_t> Group(uint32_t rank, GroupKind kind) const;
    /** \return the members of a group of \p kind */
    uint32_t GroupSize(GroupKind kind) const;
    /**
     * \return the extent of the axis of \p kind (Coord's range): a move along it (WithCoord)
     * is what symmetric copies and peer offsets translate by; GroupSize for TP, CP, EP and PP
     */
    uint32_t AxisSize(GroupKind kind) const;
    /** \return the position of \p rank inside its group of \p kind */
    uint32_t IndexInGroup(uint32_t rank, GroupKind kind) const;

    /**
     * \brief A stable id (>= 1) for \p rank's group of \p kind: equal for all members, distinct
     * across groups and kinds; a fixed function of the layout, so traces are reproducible.
     * \param rank a rank
     * \param kind the group kind
     * \return the id
     */
    uint32_t GroupId(uint32_t rank, GroupKind kind) const;

    /** \return the kind of the group with id \p id (as GroupId numbers them) */
    GroupKind KindOf(uint32_t id) const;

    /** \return every group (id -> members) of the kinds in \p kinds, sorted by id */
    std::map<uint32_t, std::vector<uint32_t>> Groups(const std::vector<GroupKind>& kinds) const;

  private:
    /** Axis index inside m_sizes/m_strides: TP, CP, EP, DP (outer part), PP. */
    static int Axis(GroupKind kind);
    /** \return the axes a group of \p kind spans, its members' fastest-varying first */
    const std::vector<int>& Spans(GroupKind kind) const;

    std::array<uint32_t, 5> m_sizes;   //!< extent per axis
    std::array<uint32_t, 5> m_strides; //!< rank stride per axis
    uint32_t m_ranks;                  //!< total ranks
    bool m_folded;                     //!< expert groups span the TP and CP axes
    std::array<uint32_t, 6> m_idBase;  //!< first group id per kind
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_PARALLEL_LAYOUT_H
