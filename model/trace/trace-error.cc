/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "trace-error.h"

#include <filesystem>

namespace ns3 {
namespace rapidllm {

namespace {
std::string
Where(const std::string& file, int64_t rank, int64_t nodeId, const std::string& message)
{
    std::string text = file.empty() ? std::string() : file + ": ";
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
    : Error(Where(file, rank, nodeId, message))
    , m_file(file)
    , m_rank(rank)
    , m_nodeId(nodeId)
{}

const std::string&
TraceError::GetFile() const
{
    return m_file;
}

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

void
RequireRegularFile(const std::string& path, int64_t rank)
{
    std::error_code ec;
    if (std::filesystem::exists(path, ec) && !std::filesystem::is_regular_file(path, ec))
    {
        throw TraceError(path,
                         rank,
                         TraceError::kNone,
                         "not a regular file (a directory, FIFO, socket or device)");
    }
}

} // namespace rapidllm
} // namespace ns3
