/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "trace-error.h"

namespace ns3 {
namespace rapidllm {

namespace {
std::string
Where(int64_t rank, int64_t nodeId, const std::string& message)
{
    std::string text;
    if (rank != TraceError::kNone)
    {
        text += "rank " + std::to_string(rank) + ": ";
    }
    if (nodeId != TraceError::kNone)
    {
        text += "node " + std::to_string(nodeId) + ": ";
    }
    return text + message;
}
} // namespace

TraceError::TraceError(const std::string& file,
                       int64_t rank,
                       int64_t nodeId,
                       const std::string& message)
    : SpecError(file, "", Where(rank, nodeId, message))
    , m_rank(rank)
    , m_nodeId(nodeId)
{}

int64_t
TraceError::GetRank() const
{
    return m_rank;
}

int64_t
TraceError::GetNodeId() const
{
    return m_nodeId;
}

} // namespace rapidllm
} // namespace ns3
