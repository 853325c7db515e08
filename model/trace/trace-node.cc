/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "trace-node.h"

namespace ns3 {
namespace rapidllm {

static_assert(sizeof(TraceNode) == 64, "TraceNode should stay one cache line");

std::string
ToString(TraceNodeType type)
{
    static const char* const names[] = {"INVALID_NODE",
                                        "METADATA_NODE",
                                        "MEM_LOAD_NODE",
                                        "MEM_STORE_NODE",
                                        "COMP_NODE",
                                        "COMM_SEND_NODE",
                                        "COMM_RECV_NODE",
                                        "COMM_COLL_NODE",
                                        "STORAGE_NODE",
                                        "BATCH_NODE",
                                        "CHECKPOINT_NODE"};
    auto value = static_cast<uint8_t>(type);
    return value <= kMaxTraceNodeType ? names[value] : "NodeType(" + std::to_string(value) + ")";
}

std::string
ToString(CollectiveType type)
{
    static const char* const names[] = {"ALL_REDUCE",
                                        "REDUCE",
                                        "ALL_GATHER",
                                        "GATHER",
                                        "SCATTER",
                                        "BROADCAST",
                                        "ALL_TO_ALL",
                                        "REDUCE_SCATTER",
                                        "REDUCE_SCATTER_BLOCK",
                                        "BARRIER"};
    auto value = static_cast<uint8_t>(type);
    return value <= kMaxCollectiveType ? names[value]
                                       : "CollectiveCommType(" + std::to_string(value) + ")";
}

std::string
AllowedCollectiveTypes()
{
    std::string text;
    for (uint8_t v = 0; v <= kMaxCollectiveType; ++v)
    {
        text +=
            (v ? ", " : "") + ToString(static_cast<CollectiveType>(v)) + "=" + std::to_string(v);
    }
    return text;
}

bool
IsCommunication(TraceNodeType type)
{
    return type == TraceNodeType::COMM_SEND || type == TraceNodeType::COMM_RECV
           || type == TraceNodeType::COMM_COLL;
}

} // namespace rapidllm
} // namespace ns3
