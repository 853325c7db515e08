/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_TRACE_NODE_H
#define RAPIDLLM_TRACE_NODE_H

#include <cstdint>
#include <limits>
#include <string>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief What a trace node does; the values are Chakra's NodeType (et_def.proto), so that they
 * go to and from the file unchanged.
 */
enum class TraceNodeType : uint8_t
{
    INVALID = 0,    //!< INVALID_NODE: a no-op placeholder (ASTRA-sim skips it)
    METADATA = 1,   //!< METADATA_NODE: bookkeeping, no cost
    MEM_LOAD = 2,   //!< MEM_LOAD_NODE: load of bytes from remote/host memory
    MEM_STORE = 3,  //!< MEM_STORE_NODE: store of bytes to remote/host memory
    COMP = 4,       //!< COMP_NODE: a kernel with a duration
    COMM_SEND = 5,  //!< COMM_SEND_NODE: point-to-point send to a peer rank
    COMM_RECV = 6,  //!< COMM_RECV_NODE: point-to-point receive from a peer rank
    COMM_COLL = 7,  //!< COMM_COLL_NODE: a collective over a communicator group
    STORAGE = 8,    //!< STORAGE_NODE: file-system / storage operation
    BATCH = 9,      //!< BATCH_NODE
    CHECKPOINT = 10 //!< CHECKPOINT_NODE
};

/** Largest valid TraceNodeType value. */
constexpr uint8_t kMaxTraceNodeType = 10;

/**
 * \ingroup rapid-llm
 * \brief The collective of a COMM_COLL node; the values are Chakra's CollectiveCommType.
 */
enum class CollectiveType : uint8_t
{
    ALL_REDUCE = 0,           //!< every rank ends with the reduction of all buffers
    REDUCE = 1,               //!< one rank ends with the reduction
    ALL_GATHER = 2,           //!< every rank ends with every rank's shard
    GATHER = 3,               //!< one rank ends with every rank's shard
    SCATTER = 4,              //!< one rank's buffer is split across the ranks
    BROADCAST = 5,            //!< one rank's buffer is copied to all
    ALL_TO_ALL = 6,           //!< every rank sends a distinct shard to every other
    REDUCE_SCATTER = 7,       //!< every rank ends with one shard of the reduction
    REDUCE_SCATTER_BLOCK = 8, //!< reduce-scatter with equal blocks (MPI_Reduce_scatter_block)
    BARRIER = 9               //!< synchronization only
};

/** Largest valid CollectiveType value. */
constexpr uint8_t kMaxCollectiveType = 9;

/** Group id meaning "no pg_name": the collective spans every rank of the trace set. */
constexpr uint32_t kWorldGroup = std::numeric_limits<uint32_t>::max();

/**
 * \ingroup rapid-llm
 * \brief One operation of one rank, kept to 64 bytes because a workload may hold millions.
 *
 * Which fields are meaningful depends on the type: COMP uses durationNs, numOps and bytes
 * (Chakra's tensor_size); MEM_* uses bytes; COMM_COLL uses commType, bytes (comm_size) and
 * group; COMM_SEND/COMM_RECV use commSrc, commDst, commTag, bytes and group (the communicator
 * whose kernel carries it; kWorldGroup when none is named). The name is an index
 * into the owning ExecutionTrace's name table; dependencies are held by the ExecutionTrace.
 */
struct TraceNode
{
    uint64_t id = 0;              //!< Chakra node id, unique within the rank
    uint64_t durationNs = 0;      //!< exact duration in nanoseconds (COMP; 0 for comm)
    uint64_t numOps = 0;          //!< floating-point operations (COMP)
    uint64_t bytes = 0;           //!< tensor_size (COMP, MEM_*) or comm_size (COMM_*), bytes
    uint32_t name = 0;            //!< index into ExecutionTrace's name table
    uint32_t group = kWorldGroup; //!< communicator group id (pg_name) of a COMM_* node
    int32_t commSrc = -1;         //!< sending rank of COMM_SEND/COMM_RECV
    int32_t commDst = -1;         //!< receiving rank of COMM_SEND/COMM_RECV
    int32_t commTag = 0;          //!< matching tag of COMM_SEND/COMM_RECV
    TraceNodeType type = TraceNodeType::COMP;             //!< what the node does
    CollectiveType commType = CollectiveType::ALL_REDUCE; //!< collective of a COMM_COLL node
    uint32_t firstDep = 0; //!< managed by ExecutionTrace: offset of the dependency list
    uint32_t numDeps = 0;  //!< managed by ExecutionTrace: length of the dependency list
};

/**
 * \param type a node type
 * \return Chakra's enum name, e.g. "COMP_NODE"
 */
std::string ToString(TraceNodeType type);

/**
 * \param type a collective type
 * \return Chakra's enum name, e.g. "ALL_REDUCE"
 */
std::string ToString(CollectiveType type);

/** \return "ALL_REDUCE=0, REDUCE=1, ...": the allowed collective values, for error messages */
std::string AllowedCollectiveTypes();

/** \return true for COMM_SEND, COMM_RECV and COMM_COLL */
bool IsCommunication(TraceNodeType type);

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_TRACE_NODE_H
