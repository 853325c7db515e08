/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_TRACE_SET_H
#define RAPIDLLM_TRACE_SET_H

#include "comm-groups.h"
#include "execution-trace.h"

#include <string>
#include <vector>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief Everything one job's traces hold: one ExecutionTrace per rank (ranks[r].GetRank() ==
 * r) and the communicator groups their collectives name. What the writer stores as
 * <prefix>.<rank>.et + <prefix>.comm_groups.json and the reader loads back.
 */
struct TraceSet
{
    std::vector<ExecutionTrace> ranks; //!< one graph per rank, by rank
    CommGroups groups;                 //!< group id -> ranks
    std::string groupsFile;            //!< the groups file read ("" when there was none)
    std::string prefix; //!< the files' prefix as read (a folder given resolved to its set's)
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_TRACE_SET_H
