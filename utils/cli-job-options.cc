/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "cli-job-options.h"

namespace ns3 {
namespace rapidllm {

JobOptions
ReadJobOptionValues(const CliArgs& args)
{
    JobOptions job;
    for (const OptionSpec& option : JobOptions::GetDeclarations())
    {
        // Job options a command does not take (--fault for memory and trace) stay unset.
        const CliOption* declared = FindCliOption(option.name, args.Command());
        if (declared && declared->TakenBy(args.Command()) && args.Has(option.name))
        {
            job.Set(option.name, args.Text(option.name));
        }
    }
    return job;
}

ResolvedJob
ReadJobOptions(const CliArgs& args)
{
    return ReadJobOptionValues(args).ToSpecs();
}

void
JobBackendAndRouting(const CliArgs& args,
                     const ResolvedJob& job,
                     std::string& backend,
                     std::string& routing)
{
    const CliOption* b = FindCliOption("backend", args.Command());
    const CliOption* r = FindCliOption("routing", args.Command());
    backend = b && b->TakenBy(args.Command()) && args.Has("backend") ? args.Text("backend")
              : !job.backend.empty()                                 ? job.backend
                                                                     : "flow";
    routing =
        r && r->TakenBy(args.Command()) && args.Has("routing") ? args.Text("routing") : job.routing;
}

} // namespace rapidllm
} // namespace ns3
