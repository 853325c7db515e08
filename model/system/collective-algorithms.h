/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_COLLECTIVE_ALGORITHMS_H
#define RAPIDLLM_COLLECTIVE_ALGORITHMS_H

#include "collective-algorithm.h"
#include "collective-op.h"
#include "collective-schedule.h"
#include "ns3/network-spec.h"
#include "ns3/ptr.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ns3 {
namespace rapidllm {

class NetworkView;

/**
 * \return the algorithm names a request may use: "auto" (the selection policy) and every
 * registered CollectiveAlgorithm
 */
std::vector<std::string> CollectiveAlgorithmNames();
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
    uint32_t chunks = 0;             //!< pipeline pieces; 0 = the algorithm's GetDefaultChunks()
    double reduceBytesPerSecond = 0; //!< local reduction rate (from the compute model); 0 = free
    bool fluid = false; //!< build the fluid form (streams per phase) instead of the messages
    /**
     * A name of this collective that does not depend on when it runs (the replayer's: its
     * group and its index on the group). Each message's flow id for routing is derived from it
     * and the message's step, so a multipath policy routes the same message alike on every
     * backend (NetworkBackend::Send). Unset: the message ids.
     */
    std::optional<uint64_t> flow;
};

/**
 * \ingroup rapid-llm
 * \brief A built collective: its dependency graph (messages, or with CollectiveRequest::fluid
 * the fluid form's streams) and the algorithm actually used.
 */
struct CollectivePlan
{
    CollectiveSchedule schedule; //!< the messages
    std::string algorithm;       //!< e.g. "ring" or "hierarchical(nvlink:ring,infiniband:ring)"
    /** The messages the algorithm counted before building (CountMessages() x pieces); 0 for
     * the fluid form or an algorithm that does not count */
    uint64_t countedMessages = 0;
    /** The fluid form's message floor: its local step (-1: none) */
    int64_t floorStep = -1;
    /** With a floor: the messages it walked (what a slowed run walks again) */
    std::shared_ptr<CollectiveSchedule> messages;
};

/**
 * \ingroup rapid-llm
 * \brief Turns collective requests into message schedules over one network: resolves each
 * dimension's algorithm once, applies the "auto" policy, and runs the chosen
 * CollectiveAlgorithm.
 *
 * "auto" runs all-to-all direct; all-reduce, reduce-scatter and all-gather hierarchically (one
 * phase per network dimension the group spans) when the group is a full grid over several
 * dimensions; everything else with the algorithm of the outermost dimension the group spans.
 * A dimension's algorithm is its `collective` field, else DefaultCollectiveAlgorithm() of its
 * kind; where it cannot run an op (the tree's reduce-scatter, halving-doubling on a group that
 * is not a power of two) that op runs as ring, as NCCL uses its trees for all-reduce only.
 */
class CollectivePlanner
{
  public:
    /**
     * \brief Resolves every dimension's algorithm; throws SpecError naming
     * `network.dimensions.<name>.collective` and the registered names if one is unknown.
     * \param view the network (must outlive the planner)
     */
    explicit CollectivePlanner(const NetworkView& view);

    /**
     * \brief Builds the message graph of a collective. Bad requests and algorithm choices
     * throw SpecError saying what is allowed.
     * \param request what to run
     * \return the plan
     */
    CollectivePlan Build(const CollectiveRequest& request) const;

    /**
     * \brief The SMs each member's kernels hold while \p request runs, as the algorithm Build
     * would run it says (CollectiveAlgorithm::GetSmCount; 0 for a send-receive).
     * \param request what would run (endpoints valid, as Build checks them)
     * \return the SMs per member
     */
    uint32_t GetSmCount(const CollectiveRequest& request) const;

    /**
     * \brief The SMs a send or receive of \p request's bytes holds on a communicator of
     * \p request's endpoints (CollectiveAlgorithm::GetP2pSmCount of the named algorithm, or
     * of the outermost dimension the communicator spans). \param request the communicator
     * and message \return the SMs of each end's kernel
     */
    uint32_t GetP2pSmCount(const CollectiveRequest& request) const;

    /**
     * \brief The algorithm registered as \p name (created once and kept).
     * \param name a short name or TypeId name \param field where the name came from, for errors
     * \return the algorithm; throws SpecError naming \p field and CollectiveAlgorithmNames()
     */
    Ptr<CollectiveAlgorithm> GetAlgorithm(const std::string& name, const std::string& field) const;

    /**
     * \brief Checks a request's algorithm name: "auto" or a registered one; throws SpecError
     * naming \p field and CollectiveAlgorithmNames() otherwise.
     * \param name the name \param field where it came from
     */
    void CheckName(const std::string& name, const std::string& field) const;

    /**
     * \brief Gives the planner each endpoint pair's rate and latency alone on the network as
     * it is (the engine passes its backend's, NetworkBackend::GetIdlePath). With it, a
     * pipelined fluid form also lasts at least as long as its messages take on the otherwise
     * idle network (Build).
     * \param timing (bytes/s, seconds) of a message between two endpoints alone
     */
    void SetPairTiming(CollectiveSchedule::PairTiming timing);
    /** \return the endpoint pairs' idle timing (SetPairTiming), or an empty function */
    const CollectiveSchedule::PairTiming& GetPairTiming() const;

    /** \return the network */
    const NetworkView& GetView() const;
    /** \return dimension \p d's configured algorithm name (its field, or the kind's default) */
    const std::string& GetDimensionAlgorithmName(uint32_t d) const;
    /**
     * \return the algorithm dimension \p d runs \p op among \p ranks with: its configured one
     * where that supports it, else ring
     */
    const CollectiveAlgorithm& GetDimensionAlgorithm(uint32_t d,
                                                     CollectiveOp op,
                                                     uint32_t ranks) const;
    /** \return the name of the algorithm GetDimensionAlgorithm gives */
    const std::string& DimensionChoice(uint32_t d, CollectiveOp op, uint32_t ranks) const;

  private:
    /**
     * \brief The algorithm a request runs with: its own, or the "auto" policy's.
     * \param request the request (not a send-receive) \param[out] name the name it was chosen by
     * \return the algorithm, checked for the op and group size
     */
    Ptr<CollectiveAlgorithm> Resolve(const CollectiveRequest& request, std::string& name) const;
    /**
     * \return whether \p op over the \p spanned dimensions (a grid) runs as NCCL's flat rings
     * rather than composed per dimension: an all-gather or reduce-scatter where every one runs
     * nccl
     */
    bool FlatNcclRings(CollectiveOp op, const std::vector<uint32_t>& spanned) const;

    const NetworkView* m_view;                          //!< the network
    std::vector<std::string> m_dimensionNames;          //!< per dimension: configured algorithm
    std::vector<Ptr<CollectiveAlgorithm>> m_dimensions; //!< per dimension: that algorithm
    mutable std::map<std::string, Ptr<CollectiveAlgorithm>> m_byName; //!< created so far
    CollectiveSchedule::PairTiming m_timing; //!< endpoint pairs' idle timing, or empty
};

/**
 * \brief The dimensions a group spans (where its members' coordinates differ), innermost first,
 * and whether the group is a full grid over them (e.g. whole nodes).
 * \param view the network \param endpoints the group \param[out] grid whether it is a full grid
 * \return the spanned dimensions
 */
std::vector<uint32_t> SpannedDimensions(const NetworkView& view,
                                        const std::vector<uint32_t>& endpoints,
                                        bool& grid);

/**
 * \brief Builds the message graph of a collective over a network (a CollectivePlanner for one
 * request; callers with many requests keep a planner).
 * \param request what to run \param view the network (ranks' coordinates, dimension kinds and
 * algorithms) \return the plan
 */
CollectivePlan BuildCollective(const CollectiveRequest& request, const NetworkView& view);

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_COLLECTIVE_ALGORITHMS_H
