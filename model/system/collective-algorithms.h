/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_COLLECTIVE_ALGORITHMS_H
#define RAPIDLLM_COLLECTIVE_ALGORITHMS_H

#include "ns3/collective-schedule.h"
#include "ns3/network-spec.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ns3 {
namespace rapidllm {

class Topology;

/**
 * \ingroup rapid-llm
 * \brief The collective operations.
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
/** \return the algorithm names: auto, ring, direct, halving-doubling, double-binary-tree,
 * hierarchical */
std::vector<std::string> CollectiveAlgorithmNames();
/**
 * \return nccl-tests' bus bandwidth factor (busbw = algbw x factor): 2(n-1)/n for all-reduce,
 * (n-1)/n for reduce-scatter, all-gather and all-to-all, 1 otherwise (nccl-tests
 * doc/PERFORMANCE.md)
 */
double BusBandwidthFactor(CollectiveOp op, uint32_t ranks);
/** \return the default algorithm of a dimension kind: direct on fully connected, else ring */
std::string DefaultCollectiveAlgorithm(TopologyKind kind);

/**
 * \ingroup rapid-llm
 * \brief A collective to run: the op, the group (endpoints, in rank order), the size and how.
 *
 * `bytes` follows nccl-tests: the per-rank buffer for all-reduce, broadcast and reduce; the
 * total (input for reduce-scatter, output for all-gather, per-rank send buffer for
 * all-to-all).
 */
struct CollectiveRequest
{
    CollectiveOp op = CollectiveOp::ALL_REDUCE; //!< what
    std::vector<uint32_t> endpoints;            //!< the group, in rank order
    uint64_t bytes = 0;                         //!< size (see above)
    std::string algorithm = "auto";             //!< one of CollectiveAlgorithmNames()
    uint32_t root = 0;                          //!< broadcast / reduce root (group index)
    uint32_t chunks = 0; //!< pipeline pieces; 0 = algorithm default (1 for ring and direct)
    double reduceBytesPerSecond = 0; //!< local reduction rate (from the compute model); 0 = free
};

/**
 * \ingroup rapid-llm
 * \brief A built collective: its dependency graph and the algorithm actually used.
 */
struct CollectivePlan
{
    CollectiveSchedule schedule; //!< the messages
    std::string algorithm;       //!< e.g. "ring" or "hierarchical(nvlink:ring,infiniband:ring)"
};

/**
 * \brief Builds the message graph of a collective over a topology.
 *
 * "auto" runs hierarchically (one phase per network dimension the group spans: reduce-scatter
 * inward-out, the all-reduce on the outermost, all-gather back) when the group is a full grid
 * over several dimensions, and otherwise the spanned dimension's algorithm (its `collective`
 * field, else DefaultCollectiveAlgorithm). Halving-doubling needs a power-of-two group except
 * for all-reduce (Rabenseifner's fold); the double binary tree (NCCL 2.4's) is for all-reduce. Bad
 * choices throw SpecError. \param request what to run \param topology the network (for the ranks'
 * coordinates and dimension kinds) \return the plan
 */
CollectivePlan BuildCollective(const CollectiveRequest& request, const Topology& topology);

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_COLLECTIVE_ALGORITHMS_H
