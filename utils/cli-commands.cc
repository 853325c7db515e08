/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "cli-commands.h"

#include "ns3/spec-error.h"
#include "ns3/spec-reader.h"

namespace ns3
{
namespace rapidllm
{

int RunPresetsCommand(int argc, char** argv);

const std::vector<CliCommand>&
GetCliCommands()
{
    static const std::vector<CliCommand> commands = {
        {"presets", "list the built-in model and hardware presets", RunPresetsCommand},
    };
    return commands;
}

void
CheckOptions(int argc, char** argv, const std::vector<std::string>& known)
{
    for (int i = 1; i < argc; ++i)
    {
        std::string arg = argv[i];
        if (arg == "--help" || arg == "-h" || arg == "--PrintHelp")
        {
            continue;
        }
        if (arg.rfind("--", 0) != 0)
        {
            throw SpecError("command line",
                            arg,
                            "unexpected argument; options take the form --name=value");
        }
        std::string name = arg.substr(2, arg.find('=') == std::string::npos ? std::string::npos
                                                                             : arg.find('=') - 2);
        bool found = false;
        for (const auto& k : known)
        {
            found = found || k == name;
        }
        if (!found)
        {
            throw SpecError("command line",
                            "--" + name,
                            "unknown option; options: " +
                                (known.empty() ? std::string("(none)") : "--" + JoinNames(known)));
        }
    }
}

} // namespace rapidllm
} // namespace ns3
