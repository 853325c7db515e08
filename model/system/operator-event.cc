/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "operator-event.h"

namespace ns3 {
namespace rapidllm {

std::string
ToString(OperatorKind kind)
{
    switch (kind)
    {
        case OperatorKind::COMPUTE:
            return "compute";
        case OperatorKind::COLLECTIVE:
            return "collective";
        case OperatorKind::SEND:
            return "send";
        case OperatorKind::RECV:
            return "recv";
        case OperatorKind::OTHER:
            return "other";
    }
    return "other";
}

OperatorKind
ToOperatorKind(TraceNodeType type)
{
    switch (type)
    {
        case TraceNodeType::COMP:
            return OperatorKind::COMPUTE;
        case TraceNodeType::COMM_COLL:
            return OperatorKind::COLLECTIVE;
        case TraceNodeType::COMM_SEND:
            return OperatorKind::SEND;
        case TraceNodeType::COMM_RECV:
            return OperatorKind::RECV;
        case TraceNodeType::INVALID:
        case TraceNodeType::METADATA:
        case TraceNodeType::MEM_LOAD:
        case TraceNodeType::MEM_STORE:
        case TraceNodeType::STORAGE:
        case TraceNodeType::BATCH:
        case TraceNodeType::CHECKPOINT:
            return OperatorKind::OTHER;
    }
    return OperatorKind::OTHER;
}

} // namespace rapidllm
} // namespace ns3
