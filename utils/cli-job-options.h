/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_CLI_JOB_OPTIONS_H
#define RAPIDLLM_CLI_JOB_OPTIONS_H

#include "cli-args.h"
#include "ns3/job-options.h"

namespace ns3 {
namespace rapidllm {

/**
 * \brief The job the job commands (memory, trace, run) describe with their shared options,
 * resolved by the library's JobOptions (the same parsing a scenario script's CommandLine gets):
 * the model (preset or file, with shape overrides), the hardware, the parallel layout and the
 * run settings, validated. Throws SpecError naming the option (or the field it sets); options
 * of the other run mode are an error.
 * \param args the command's checked options
 * \return the job
 */
ResolvedJob ReadJobOptions(const CliArgs& args);

/**
 * \brief The job options a command was given, unresolved (for commands that vary them, as
 * `study hardware`).
 * \param args the command's checked options
 * \return the options
 */
JobOptions ReadJobOptionValues(const CliArgs& args);

/**
 * \brief The backend and routing a job command runs with: the command line's, else the job
 * file's (--run), else the defaults (flow; the hardware's routing, "").
 * \param args the command's options \param job the resolved job
 * \param[out] backend the backend \param[out] routing the routing ("" = the hardware's)
 */
void JobBackendAndRouting(const CliArgs& args,
                          const ResolvedJob& job,
                          std::string& backend,
                          std::string& routing);

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_CLI_JOB_OPTIONS_H
