/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "cli-commands.h"

#include <algorithm>
#include <iostream>

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

int
DoesNotFit(const std::string& command, const std::string& reason)
{
    std::cout.flush();
    std::cerr << "rapid-llm " << command << ": the job does not fit in GPU memory (" << reason
              << "); exit status " << kExitDoesNotFit << "\n";
    return kExitDoesNotFit;
}

const std::vector<CliCommand>&
GetCliCommands()
{
    return Commands();
}

CliCommandRegistrar::CliCommandRegistrar(const std::string& name,
                                         const std::string& summary,
                                         const std::string& usage,
                                         std::function<int(const CliArgs&)> run)
{
    auto& commands = Commands();
    CliCommand command{name, summary, usage, std::move(run)};
    auto it = std::lower_bound(commands.begin(),
                               commands.end(),
                               command,
                               [](const CliCommand& a, const CliCommand& b)
                               {
                                   return a.name < b.name;
                               });
    commands.insert(it, command);
}

} // namespace rapidllm
} // namespace ns3
