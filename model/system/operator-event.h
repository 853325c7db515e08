/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_OPERATOR_EVENT_H
#define RAPIDLLM_OPERATOR_EVENT_H

#include "collective-op.h"
#include "ns3/nstime.h"
#include "ns3/trace-node.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief What kind of operator a replayed trace node is, for scenario scripts.
 */
enum class OperatorKind : uint8_t
{
    COMPUTE,    //!< a kernel on a compute stream (Chakra COMP_NODE)
    COLLECTIVE, //!< a collective over a communicator group (COMM_COLL_NODE)
    SEND,       //!< a point-to-point send (COMM_SEND_NODE)
    RECV,       //!< a point-to-point receive (COMM_RECV_NODE)
    OTHER       //!< metadata, memory and other nodes, which cost nothing in the replay
};

/** \return "compute", "collective", "send", "recv" or "other" */
std::string ToString(OperatorKind kind);
/** \return the operator kind of a trace node type */
OperatorKind ToOperatorKind(TraceNodeType type);

/**
 * \ingroup rapid-llm
 * \brief One operator starting or ending in a replay, as the TraceReplayer's OperatorStart and
 * OperatorEnd trace sources report it: everything a scenario script needs without parsing
 * node names.
 *
 * Events fire for simulated ranks only (with the symmetry reduction, a rank's copies follow
 * their representative and fire nothing). Communication starts when it is put on the network:
 * a collective once every member has joined and the group is free, a transfer once both the
 * send and the receive are posted. OTHER nodes fire OperatorEnd only.
 */
struct OperatorEvent
{
    uint32_t rank = 0;                       //!< the rank
    uint32_t node = 0;                       //!< the node's index in the rank's graph
    std::string_view name;                   //!< the node's name (valid during the callback)
    OperatorKind kind = OperatorKind::OTHER; //!< what it is
    Time time;                               //!< simulation time of the start or end
    /**
     * Compute: the kernel's duration (start and end). Communication: zero at the start, the
     * time since it started at the end. OTHER: zero.
     */
    Time duration;
    uint64_t flops = 0; //!< COMPUTE: floating-point operations
    uint64_t bytes = 0; //!< COMPUTE: tensor bytes; communication: its size in bytes
    CollectiveOp collective = CollectiveOp::ALL_REDUCE; //!< COLLECTIVE: the op
    uint32_t group = kWorldGroup; //!< COLLECTIVE: the group id (kWorldGroup: every rank)
    uint32_t peer = UINT32_MAX;   //!< SEND / RECV: the other rank
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_OPERATOR_EVENT_H
