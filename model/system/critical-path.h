/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_CRITICAL_PATH_H
#define RAPIDLLM_CRITICAL_PATH_H

#include "ns3/execution-trace.h"

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief What a replayed step's time was spent on along its critical path: the chain of
 * operators, across ranks, each of which began when the one before it ended, from the step's
 * start to the last rank's finish. A rank's own breakdown says what it waited for; here a wait
 * is replaced by its cause (a later stage's bubble by the earlier stages' kernels and the
 * transfers between them; a collective's wait for a member by that member's work), so the
 * parts add up to the step and say what would shorten it.
 */
struct CriticalPath
{
    double computeS = 0;       //!< kernels on the path
    double communicationS = 0; //!< collectives and transfers, from when their last member posted
    double hostS = 0;          //!< hosts issuing operators (launch costs, engine steps, syncs)
    double otherS = 0;         //!< other timed nodes (memory copies a trace gives)
    double unexplainedS = 0;   //!< time no recorded cause accounts for (0 unless a bug)
    std::map<uint32_t, double> computeByRank;        //!< of computeS, by (simulated) rank
    std::map<std::string, double> communicationByOp; //!< of communicationS, by operator label
};

/**
 * \ingroup rapid-llm
 * \brief Records, during a replay, when each operator ended and what its start waited for
 * last (a dependency, the host's issue, the kernel before it on the stream, or the last member
 * of its collective or transfer), then walks back from the last operator to the start:
 * the step's CriticalPath. Its state is 12 bytes a node (kBytesPerNode) and an entry per
 * communication operator (what let it start), kept in arrays (a map of them rehashed millions
 * of entries when every rank of a 1,024-GPU job was replayed).
 */
class CriticalPathRecorder
{
  public:
    /** Per-node state, bytes: an end time and what the start waited for. */
    static constexpr uint32_t kBytesPerNode = 12;
    /** "Waited for nothing": a node no other node, host or stream held back. */
    static constexpr uint32_t kNone = UINT32_MAX;

    /** \brief Forgets any earlier replay. \param ranks the job's ranks \param startNs its start */
    void Reset(uint32_t ranks, int64_t startNs);
    /**
     * \brief Records the nodes of a simulated rank.
     * \param rank the rank \param graph its graph \param kinds per node, its OperatorKind
     * \param issueNs per node, when its host issued it (null: the trace has no host costs)
     */
    void Track(uint32_t rank,
               const ExecutionTrace* graph,
               const uint8_t* kinds,
               const std::vector<int64_t>* issueNs);
    /**
     * \brief Node \p node of \p rank starts (a kernel) or is posted (anything else) at \p nowNs.
     * \param by the dependency whose end released it (kNone: none)
     * \param previous the kernel that last ended on the rank (kNone: none), for a kernel that
     *        waited for a stream
     */
    void Started(uint32_t rank, uint32_t node, int64_t nowNs, uint32_t by, uint32_t previous);
    /** \brief Node \p node of \p rank ended at \p nowNs. */
    void Ended(uint32_t rank, uint32_t node, int64_t nowNs);
    /**
     * \brief Communication node \p node of \p rank, posted earlier, starts moving data at
     * \p nowNs because another node let it: \p byNode of \p byRank, which posted its side then
     * (\p posted true: the last member of a collective, the later side of a transfer) or ended
     * then (\p posted false: the collective before it on a group that runs one at a time).
     */
    void Launched(
        uint32_t rank, uint32_t node, uint32_t byRank, uint32_t byNode, int64_t nowNs, bool posted);
    /**
     * \return when communication node \p node of \p rank started moving data because another
     * node let it (Launched), in ns; -1 if it started when it was posted
     */
    int64_t LaunchedAt(uint32_t rank, uint32_t node) const;
    /**
     * \brief Walks back from the end of node \p node of \p rank (the step's last) to the start.
     * \return the path's parts
     */
    CriticalPath Walk(uint32_t rank, uint32_t node) const;
    /** \brief Frees the recorded state. */
    void Clear();

  private:
    /** A node's start waited for its host's issue. */
    static constexpr uint32_t kHost = UINT32_MAX - 1;

    /** What let a communication node start moving data (Launched). */
    struct Launch
    {
        uint32_t rank = 0;   //!< the rank of the node that let it
        uint32_t node = 0;   //!< that node
        int64_t atNs = -1;   //!< when (-1: no other node let it)
        bool posted = false; //!< the node was posted then (else: it ended then)
    };

    /** One simulated rank's record. */
    struct Rank
    {
        const ExecutionTrace* graph = nullptr;       //!< its graph
        const uint8_t* kinds = nullptr;              //!< per node: OperatorKind
        const std::vector<int64_t>* issue = nullptr; //!< per node: host issue time, or null
        std::vector<int64_t> endNs;                  //!< per node: when it ended
        std::vector<uint32_t> after;                 //!< per node: what its start waited for
        /** per node: its index among the graph's communication nodes (kNone: not one) */
        const std::vector<uint32_t>* commIndex = nullptr;
        uint32_t commNodes = 0;       //!< the graph's communication nodes
        std::vector<Launch> launches; //!< per communication node (allocated at the first)
    };

    /** \return what let node \p node of \p rank start, or null (it started when posted) */
    const Launch* FindLaunch(uint32_t rank, uint32_t node) const;

    /** \return when node \p node of \p rank started, or was posted */
    int64_t StartOf(uint32_t rank, uint32_t node) const;
    /** \return the key of node \p node of \p rank in the maps */
    static uint64_t Key(uint32_t rank, uint32_t node);

    std::vector<Rank> m_ranks;                    //!< per rank (empty: not simulated)
    std::unordered_map<uint64_t, int64_t> m_gaps; //!< starts no cause explains: the gap
    int64_t m_startNs = 0;                        //!< the replay's start
    /** per tracked graph (shared by ranks), Rank::commIndex and Rank::commNodes */
    std::unordered_map<const ExecutionTrace*, std::pair<std::vector<uint32_t>, uint32_t>>
        m_commIndexOf;
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_CRITICAL_PATH_H
