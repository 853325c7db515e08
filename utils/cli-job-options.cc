/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "cli-job-options.h"

namespace ns3 {
namespace rapidllm {

ResolvedJob
ReadJobOptions(const CliArgs& args)
{
    JobOptions job;
    for (const OptionSpec& option : JobOptions::GetDeclarations())
    {
        if (args.Has(option.name))
        {
            job.Set(option.name, args.Text(option.name));
        }
    }
    return job.ToSpecs();
}

} // namespace rapidllm
} // namespace ns3
