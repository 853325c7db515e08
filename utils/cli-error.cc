/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "cli-error.h"

#include "cli-args.h"
#include "ns3/spec-error.h"

namespace ns3 {
namespace rapidllm {

std::string
DescribeError(const std::string& command, const Error& e, const CliArgs* args)
{
    const auto* spec = dynamic_cast<const SpecError*>(&e);
    if (!spec || spec->GetField().empty())
    {
        return e.what();
    }
    // Only values that came from the command line (the command's own checks say so; model/
    // says nothing about where a field came from, so it must be an option of this command
    // with a value, not e.g. the hardware file's routing).
    const bool fromCommandLine = spec->GetFile() == kCommandLine;
    // The workload checks the run settings again as it builds (their graphs' size against the
    // host's memory): an option given for the field is what to change.
    const bool settings = spec->GetFile() == "run settings";
    if (!fromCommandLine && !spec->GetFile().empty() && !settings)
    {
        return e.what();
    }
    for (const auto& option : GetCliOptions())
    {
        const bool named = option.name == spec->GetField() || option.field == spec->GetField();
        if (!named || !option.TakenBy(command))
        {
            continue;
        }
        if (fromCommandLine || (args && args->HasValue(option.name)))
        {
            return "option --" + option.name + ": " + spec->GetMessage();
        }
    }
    if (fromCommandLine)
    {
        return "option --" + spec->GetField() + ": " + spec->GetMessage(); // e.g. ns-3's own
    }
    return e.what();
}

} // namespace rapidllm
} // namespace ns3
