/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "cli-commands.h"

#include "ns3/spec-error.h"
#include "ns3/spec-reader.h"

#include <algorithm>

namespace ns3 {
namespace rapidllm {

namespace {
std::vector<CliCommand>&
Commands()
{
    static std::vector<CliCommand> commands;
    return commands;
}
} // namespace

const std::vector<CliCommand>&
GetCliCommands()
{
    return Commands();
}

CliCommandRegistrar::CliCommandRegistrar(const std::string& name,
                                         const std::string& summary,
                                         std::function<int(int, char**)> run)
{
    auto& commands = Commands();
    CliCommand command{name, summary, std::move(run)};
    auto it = std::lower_bound(commands.begin(),
                               commands.end(),
                               command,
                               [](const CliCommand& a, const CliCommand& b)
                               {
                                   return a.name < b.name;
                               });
    commands.insert(it, command);
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
            throw SpecError(
                "command line", arg, "unexpected argument; options take the form --name=value");
        }
        std::string name = arg.substr(
            2, arg.find('=') == std::string::npos ? std::string::npos : arg.find('=') - 2);
        bool found = false;
        for (const auto& k : known)
        {
            found = found || k == name;
        }
        if (!found)
        {
            throw SpecError(
                "command line",
                "--" + name,
                "unknown option; options: "
                    + (known.empty() ? std::string("(none)") : "--" + JoinNames(known)));
        }
    }
}

} // namespace rapidllm
} // namespace ns3
