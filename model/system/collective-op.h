/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_COLLECTIVE_OP_H
#define RAPIDLLM_COLLECTIVE_OP_H

#include "ns3/trace-node.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief The collective operations the system layer executes.
 *
 * Three layers name collectives, each for its own reason, and each boundary has exactly one
 * mapping:
 * - the workload issues `CollectiveKind` (the five it needs, model/workload/workload-graph.h);
 * - the trace layer writes it as Chakra's `CollectiveType` (the file format's enum, which also
 *   has gather, scatter and barrier), in `ToCollectiveType` of model/trace/workload-trace.cc;
 * - the system layer runs `CollectiveOp`, mapped from any Chakra file (ours or another tool's)
 *   by ToCollectiveOp() below, the only place the system reads a `CollectiveType`.
 * The layer order (workload < trace < system) lets each map only what lies below it.
 */
enum class CollectiveOp
{
    ALL_REDUCE,     //!< every rank ends with the sum of all buffers
    REDUCE_SCATTER, //!< rank i ends with the sum of block i
    ALL_GATHER,     //!< every rank ends with every rank's block
    ALL_TO_ALL,     //!< rank i sends block j to rank j
    BROADCAST,      //!< the root's buffer reaches every rank
    REDUCE,         //!< the root ends with the sum of all buffers
    SEND_RECV       //!< point to point, from the group's first rank to its second
};

/** \return the name used on the command line ("all-reduce") */
std::string ToString(CollectiveOp op);
/** \return every op's name */
std::vector<std::string> CollectiveOpNames();
/**
 * \brief Parses an op name; throws SpecError naming \p field and the allowed names.
 * \param name the name \param field the option or field, for errors
 * \return the op
 */
CollectiveOp ParseCollectiveOp(const std::string& name, const std::string& field);

/**
 * \brief The one mapping from a Chakra collective (a trace's COMM_COLL node) to the op the
 * system runs: ALL_REDUCE, REDUCE, ALL_GATHER, BROADCAST and ALL_TO_ALL map to themselves,
 * REDUCE_SCATTER and REDUCE_SCATTER_BLOCK to REDUCE_SCATTER, BARRIER to ALL_REDUCE (of the
 * node's comm_size, normally 0 bytes: a synchronization). GATHER and SCATTER have no
 * algorithm here.
 * \param type the trace's collective \param[out] op the op, when there is one
 * \return false when the system cannot run \p type
 */
bool ToCollectiveOp(CollectiveType type, CollectiveOp& op);

/**
 * \return why a collective of \p type cannot be replayed, for errors: "collective type GATHER
 * cannot be replayed (replay runs ALL_REDUCE, ...)" (ToCollectiveOp is false for it)
 */
std::string UnreplayableCollective(CollectiveType type);

/**
 * \return nccl-tests' bus bandwidth factor (busbw = algbw x factor): 2(n-1)/n for all-reduce,
 * (n-1)/n for reduce-scatter, all-gather and all-to-all, 1 otherwise (nccl-tests
 * doc/PERFORMANCE.md)
 */
double BusBandwidthFactor(CollectiveOp op, uint32_t ranks);

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_COLLECTIVE_OP_H
