/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_WORKLOAD_TRACE_H
#define RAPIDLLM_WORKLOAD_TRACE_H

#include "comm-groups.h"
#include "execution-trace.h"
#include "ns3/workload.h"

#include <string>

namespace ns3 {
namespace rapidllm {

/**
 * \brief One rank's execution trace from the workload: the rank's stage graph with its group
 * kinds resolved to group ids and its pipeline/context peers to ranks.
 *
 * Collectives carry the whole buffer as comm_size (NCCL's convention: the all-gather's output,
 * the reduce-scatter's input), durations the compute model's time in nanoseconds.
 * \param workload the workload
 * \param rank the rank
 * \return the trace
 */
ExecutionTrace RankTrace(const Workload& workload, uint32_t rank);

/**
 * \brief Every communication group the workload's traces name, id -> ranks.
 * \param workload the workload
 * \return the groups
 */
CommGroups WorkloadCommGroups(const Workload& workload);

/**
 * \brief Writes <prefix>.<rank>.et for every rank and <prefix>.comm_groups.json, each rank built
 * and encoded in turn so that memory stays at one rank's trace.
 * \param workload the workload
 * \param prefix path prefix
 * \param gzip compress the .et files
 * \param hardware the hardware spec's name that costed the kernels, recorded in each file's
 * metadata ("" for none)
 */
void WriteWorkloadTraces(const Workload& workload,
                         const std::string& prefix,
                         bool gzip = false,
                         const std::string& hardware = "");

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_WORKLOAD_TRACE_H
