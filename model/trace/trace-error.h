/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_TRACE_ERROR_H
#define RAPIDLLM_TRACE_ERROR_H

#include "ns3/rapidllm-error.h"

#include <cstdint>
#include <string>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief A damaged or inconsistent execution trace: names the file, the rank, the node id (when
 * the problem is in one node) and what is wrong.
 *
 * A kind of its own beside SpecError (bad input the user typed): both derive from Error, so
 * every entry point reports it the same way (clear message, exit code 2), and code that handles
 * bad specs (e.g. a sweep skipping layouts that do not validate) never swallows a damaged trace.
 */
class TraceError : public Error
{
  public:
    /** Marks "no rank" / "no node" in the constructor and the getters. */
    static constexpr int64_t kNone = -1;

    /**
     * \param file the trace file (or other label) the problem is in
     * \param rank the rank of that file, or kNone
     * \param nodeId the id of the offending node, or kNone
     * \param message what is wrong (and what is allowed, where that helps)
     */
    TraceError(const std::string& file, int64_t rank, int64_t nodeId, const std::string& message);

    /** \return the trace file (or other label) the problem is in */
    const std::string& GetFile() const;
    /** \return the rank, or kNone */
    int64_t GetRank() const;
    /** \return the offending node's id, or kNone (ids above 2^63 are reported in the text only) */
    int64_t GetNodeId() const;

  private:
    std::string m_file; //!< trace file
    int64_t m_rank;     //!< rank of the file
    int64_t m_nodeId;   //!< offending node id
};

/**
 * \brief Throws a TraceError unless \p path is a regular file (or does not exist: opening it
 * reports that): a FIFO would block the read until a writer comes, a device never ends.
 * \param path the file
 * \param rank its rank, or TraceError::kNone
 */
void RequireRegularFile(const std::string& path, int64_t rank);

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_TRACE_ERROR_H
