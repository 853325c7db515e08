/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_EXECUTION_TRACE_H
#define RAPIDLLM_EXECUTION_TRACE_H

#include "name-table.h"
#include "trace-node.h"

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief A read-only view of a contiguous list of node indices (a node's parents or children).
 */
class NodeIndexRange
{
  public:
    /**
     * \param begin first element
     * \param size number of elements
     */
    NodeIndexRange(const uint32_t* begin, size_t size)
        : m_begin(begin)
        , m_size(size)
    {}

    /** \return iterator to the first index */
    const uint32_t*
    begin() const
    {
        return m_begin;
    }

    /** \return iterator past the last index */
    const uint32_t*
    end() const
    {
        return m_begin + m_size;
    }

    /** \return number of indices */
    size_t
    size() const
    {
        return m_size;
    }

    /** \return true when there is no index */
    bool
    empty() const
    {
        return m_size == 0;
    }

    /**
     * \param i position
     * \return the i-th index
     */
    uint32_t
    operator[](size_t i) const
    {
        return m_begin[i];
    }

  private:
    const uint32_t* m_begin; //!< first element
    size_t m_size;           //!< element count
};

/**
 * \ingroup rapid-llm
 * \brief The execution graph of one rank: what it runs in one iteration and in which order.
 *
 * The workload layer fills it, the Chakra writer stores it, the reader rebuilds it and the
 * replayer walks it. Nodes live in one vector and are addressed by their index (0..n-1);
 * each keeps its Chakra id (written to the file). Dependencies are node indices kept in one
 * flat array (4 bytes per edge), names are interned (4 bytes per node), so a node costs 64
 * bytes plus its edges. Children are derived on demand (BuildChildIndex) for a replayer
 * that releases a node's children when it finishes.
 */
class ExecutionTrace
{
  public:
    /** Index returned by FindById when no node has the id. */
    static constexpr uint32_t kNotFound = UINT32_MAX;

    /** \param rank the rank this graph belongs to */
    explicit ExecutionTrace(uint32_t rank = 0);

    /** \brief Copies the graph. */
    ExecutionTrace(const ExecutionTrace&) = default;

    /**
     * \brief Copies the graph.
     * \return this
     */
    ExecutionTrace& operator=(const ExecutionTrace&) = default;

    /** \brief Moves the graph. */
    ExecutionTrace(ExecutionTrace&&) = default;

    /**
     * \brief Moves the graph.
     * \return this
     */
    ExecutionTrace& operator=(ExecutionTrace&&) = default;

    /** \return the rank */
    uint32_t GetRank() const;
    /** \param rank the rank this graph belongs to (a shared graph may be re-labelled) */
    void SetRank(uint32_t rank);
    /**
     * \return the hardware whose compute model costed its kernels ("" when not recorded): a
     * replay on other hardware keeps these kernel times but not that machine's network
     */
    const std::string& GetHardware() const;
    /** \param hardware the hardware spec's name its kernels were costed for */
    void SetHardware(const std::string& hardware);
    /**
     * \brief Records an inference request's tokens (Chakra metadata first_token_node,
     * generated_tokens and requests), so that a replay reports its first token's time and the
     * time per later token as `run` does.
     * \param node the node whose end gives the first token (UINT32_MAX: this rank samples
     * none) \param generatedTokens tokens each request generates \param requests requests the
     * whole job serves (every data-parallel replica's batch)
     */
    void SetTokens(uint32_t node, uint32_t generatedTokens, uint64_t requests);
    /** \return the node that gives the first token (UINT32_MAX: none, or not recorded) */
    uint32_t GetFirstTokenNode() const;
    /** \return tokens each request generates (0: not an inference trace, or not recorded) */
    uint32_t GetGeneratedTokens() const;
    /** \return requests the whole job serves (0: not recorded) */
    uint64_t GetRequests() const;

    /**
     * \brief Adds a compute kernel; its id is the next free id (one more than the largest).
     * \param name operator name (interned)
     * \param durationNs exact time on the GPU, ns
     * \param numOps floating-point operations
     * \param tensorBytes bytes read and written (Chakra tensor_size)
     * \param deps indices of nodes that must finish first (already added)
     * \return the new node's index
     */
    uint32_t AddCompute(const std::string& name,
                        uint64_t durationNs,
                        uint64_t numOps,
                        uint64_t tensorBytes,
                        std::initializer_list<uint32_t> deps = {});
    /** \copydoc AddCompute */
    uint32_t AddCompute(const std::string& name,
                        uint64_t durationNs,
                        uint64_t numOps,
                        uint64_t tensorBytes,
                        const std::vector<uint32_t>& deps);
    /** \copydoc AddCompute */
    uint32_t AddCompute(const std::string& name,
                        uint64_t durationNs,
                        uint64_t numOps,
                        uint64_t tensorBytes,
                        NodeIndexRange deps);

    /**
     * \brief Adds a collective over a communicator group.
     * \param name operator name
     * \param type which collective
     * \param bytes Chakra comm_size, bytes, as nccl-tests sizes it: each rank's buffer for
     *        all-reduce, broadcast and reduce and its send buffer for all-to-all; the whole
     *        (every rank's share) for all-gather's output and reduce-scatter's input
     * \param group communicator group id (a CommGroups key), or kWorldGroup for all ranks
     * \param deps indices of nodes that must finish first
     * \return the new node's index
     */
    uint32_t AddCollective(const std::string& name,
                           CollectiveType type,
                           uint64_t bytes,
                           uint32_t group,
                           const std::vector<uint32_t>& deps = {});
    /** \copydoc AddCollective */
    uint32_t AddCollective(const std::string& name,
                           CollectiveType type,
                           uint64_t bytes,
                           uint32_t group,
                           NodeIndexRange deps);

    /**
     * \brief Adds a point-to-point send from this rank to dst.
     * \param name operator name
     * \param dst receiving rank
     * \param tag matching tag (the receive names the same)
     * \param bytes message size, bytes
     * \param deps indices of nodes that must finish first
     * \param group the communicator that carries it (pg_name), whose library's kernel holds
     * SMs while it runs; kWorldGroup: none named (copy engines, or not known)
     * \return the new node's index
     */
    uint32_t AddSend(const std::string& name,
                     uint32_t dst,
                     int32_t tag,
                     uint64_t bytes,
                     const std::vector<uint32_t>& deps = {},
                     uint32_t group = kWorldGroup);
    /** \copydoc AddSend */
    uint32_t AddSend(const std::string& name,
                     uint32_t dst,
                     int32_t tag,
                     uint64_t bytes,
                     NodeIndexRange deps,
                     uint32_t group = kWorldGroup);

    /**
     * \brief Adds a point-to-point receive on this rank from src.
     * \param name operator name
     * \param src sending rank
     * \param tag matching tag
     * \param bytes message size, bytes
     * \param deps indices of nodes that must finish first
     * \param group the communicator that carries it, as AddSend's
     * \return the new node's index
     */
    uint32_t AddRecv(const std::string& name,
                     uint32_t src,
                     int32_t tag,
                     uint64_t bytes,
                     const std::vector<uint32_t>& deps = {},
                     uint32_t group = kWorldGroup);
    /** \copydoc AddRecv */
    uint32_t AddRecv(const std::string& name,
                     uint32_t src,
                     int32_t tag,
                     uint64_t bytes,
                     NodeIndexRange deps,
                     uint32_t group = kWorldGroup);

    /**
     * \brief Sets how the host issues node \p index (Chakra attributes host_ns and host_sync;
     * kept beside the nodes, which stay one cache line).
     * \param index the node \param hostNs host time to issue it, ns \param sync whether the
     * host waits for it before issuing the next node
     */
    void SetHost(uint32_t index, uint64_t hostNs, bool sync);
    /** \return the host time to issue node \p index, ns (0 unless SetHost gave one) */
    uint64_t GetHostNs(uint32_t index) const;
    /** \return whether the issuing host waits for node \p index */
    bool IsHostSync(uint32_t index) const;
    /** \return whether any node has a host time or a host wait */
    bool HasHost() const;

    /**
     * \brief Sets how compute node \p index shares the GPU's SMs (Chakra attribute
     * sm_scaling): the share of its time that grows as 1 / SMs when a collective's kernels hold
     * some of them (SmScaling in compute-coster.h). \param index the node \param share in [0, 1]
     */
    void SetSmScaling(uint32_t index, float share);
    /** \return the share SetSmScaling gave compute node \p index (0: its time does not change) */
    float GetSmScaling(uint32_t index) const;
    /**
     * \brief Sets the SMs collective node \p index holds while it runs, where the software
     * fixes them (Chakra attribute sm_count). \param index the node \param sms the SMs
     */
    void SetCommSms(uint32_t index, uint32_t sms);
    /** \return the SMs SetCommSms gave collective \p index (0: its algorithm's) */
    uint32_t GetCommSms(uint32_t index) const;

    /**
     * \brief Adds a node of any type. Its firstDep/numDeps and name fields are set here.
     * Dependencies must name nodes already added, so graphs built this way are acyclic.
     * \param node the node (its id must be unused)
     * \param name operator name
     * \param deps indices of nodes that must finish first; duplicates are dropped
     * \param numDeps number of dependency indices
     * \return the new node's index
     */
    uint32_t AddNode(TraceNode node, const std::string& name, const uint32_t* deps, size_t numDeps);

    /**
     * \brief Adds a node whose dependencies may name indices not added yet (for readers that
     * meet a node before its parents). Call Validate() once all nodes are in.
     * \param node the node
     * \param name operator name
     * \param deps dependency indices
     * \param numDeps number of dependency indices
     * \return the new node's index
     */
    uint32_t AppendNode(TraceNode node,
                        const std::string& name,
                        const uint32_t* deps,
                        size_t numDeps);

    /**
     * \brief Makes node depend on dep as well (for orderings found after both were added).
     * May create a cycle, which Validate() reports.
     * \param node index of the dependent node
     * \param dep index of the node it waits for
     */
    void AddDependency(uint32_t node, uint32_t dep);

    /** \return number of nodes */
    size_t GetNNodes() const;
    /** \return number of dependency edges */
    size_t GetNEdges() const;

    /**
     * \param index a node index
     * \return the node
     */
    const TraceNode& GetNode(uint32_t index) const;
    /**
     * \param index a node index
     * \return the node, writable (do not change id, firstDep or numDeps)
     */
    TraceNode& GetMutableNode(uint32_t index);
    /** \return all nodes in index order */
    const std::vector<TraceNode>& GetNodes() const;

    /**
     * \param index a node index
     * \return the node's name
     */
    std::string_view GetName(uint32_t index) const;

    /**
     * \param index a node index
     * \return indices of the nodes it waits for
     */
    NodeIndexRange GetDeps(uint32_t index) const;

    /**
     * \param id a Chakra node id
     * \return its index, or kNotFound
     */
    uint32_t FindById(uint64_t id) const;

    /** \return true when node ids increase with the index (always so for graphs built here) */
    bool IsSortedById() const;

    /**
     * \brief Computes each node's children (nodes that depend on it); needed by GetChildren.
     * Invalidated by any later change to the graph.
     */
    void BuildChildIndex();

    /**
     * \param index a node index
     * \return indices of the nodes waiting for it, ascending (after BuildChildIndex)
     */
    NodeIndexRange GetChildren(uint32_t index) const;

    /**
     * \brief Checks that every dependency names an existing node and that there is no cycle.
     * \param file the file name used in the error
     * \throws TraceError naming the node (and, for a cycle, the ids along it)
     */
    void Validate(const std::string& file) const;

    /**
     * \return node indices in an order where every node comes after its dependencies
     * (Kahn's algorithm, smallest index first, so the order is deterministic)
     * \throws TraceError when there is a cycle
     */
    std::vector<uint32_t> TopologicalOrder() const;

    /** \brief Reserves room for nodes and edges when their number is known. */
    void Reserve(size_t nodes, size_t edges);

    /**
     * \brief Stores every name added from now on as given, without looking it up: for a caller
     * whose names are all distinct (a workload's), where sharing saves nothing and the lookup
     * costs a hash per node (a quarter of a long generation's run).
     */
    void SetDistinctNames();

    /**
     * \param other another trace
     * \return true when both have the same rank and the same nodes, names and dependencies
     * index by index
     */
    bool operator==(const ExecutionTrace& other) const;

    /**
     * \param other another trace
     * \return the opposite of operator==
     */
    bool operator!=(const ExecutionTrace& other) const;

  private:
    /**
     * \brief Common part of AddNode and AppendNode.
     * \param node the node
     * \param name its name
     * \param deps dependency indices
     * \param numDeps how many
     * \param checkOrder require dependencies to be already added
     * \return the new index
     */
    uint32_t Insert(TraceNode node,
                    const std::string& name,
                    const uint32_t* deps,
                    size_t numDeps,
                    bool checkOrder);

    /**
     * \return Kahn's order of the nodes; shorter than the graph when there is a cycle
     * \throws TraceError when a dependency index is out of range
     */
    std::vector<uint32_t> KahnOrder() const;

    /**
     * \param index a node index
     * \throws std::out_of_range when it is not one
     */
    void CheckIndex(uint32_t index) const;

    /** \brief Marks derived data (child index) stale. */
    void Invalidate();

    uint32_t m_rank;                    //!< rank of this graph
    std::string m_hardware;             //!< the hardware its kernels were costed for ("" unknown)
    uint32_t m_firstToken = UINT32_MAX; //!< the node giving the first token (SetTokens)
    uint32_t m_generated = 0;           //!< tokens each request generates (0: unknown)
    uint64_t m_requests = 0;            //!< requests the job serves (0: unknown)
    std::vector<TraceNode> m_nodes;     //!< nodes by index
    std::vector<uint64_t> m_host;       //!< per node: host ns | sync bit 63 (empty: no host data)
    std::vector<float> m_sm;            //!< per node: SmScaling or CommSms (empty: none)
    std::vector<uint32_t> m_deps;       //!< dependency lists, flat
    size_t m_nEdges;                    //!< live edges in m_deps
    NameTable m_names;                  //!< node names
    bool m_sortedById;                  //!< ids increase with index
    uint64_t m_nextId;                  //!< one more than the largest id
    std::unordered_map<uint64_t, uint32_t> m_idIndex; //!< id -> index when not sorted
    std::vector<uint32_t> m_childBegin;               //!< child lists, CSR offsets
    std::vector<uint32_t> m_children;                 //!< child lists, flat
    bool m_childrenValid;                             //!< child index is current
    bool m_distinctNames; //!< names are stored unshared (SetDistinctNames)
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_EXECUTION_TRACE_H
