/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_CLI_COMMANDS_H
#define RAPIDLLM_CLI_COMMANDS_H

#include <functional>
#include <string>
#include <vector>

namespace ns3 {
namespace rapidllm {

/**
 * \brief One subcommand of the rapid-llm tool.
 */
struct CliCommand
{
    std::string name;                    //!< first word on the command line
    std::string summary;                 //!< one line for the usage text
    std::function<int(int, char**)> run; //!< parses its options and runs; returns exit code
};

/** \return every subcommand, sorted by name */
const std::vector<CliCommand>& GetCliCommands();

/**
 * \brief Registers a subcommand at static-initialization time, so that each command lives in
 * its own cli-<name>.cc and adding one touches no shared file:
 * `static CliCommandRegistrar g_x("name", "summary", RunXCommand);`
 */
class CliCommandRegistrar
{
  public:
    /**
     * \param name the first word on the command line
     * \param summary one line for the usage text
     * \param run the command's entry point
     */
    CliCommandRegistrar(const std::string& name,
                        const std::string& summary,
                        std::function<int(int, char**)> run);
};

/**
 * \brief Parses ns-3 CommandLine options strictly: an unknown option is a SpecError (ns-3's own
 * CommandLine would print usage and exit(1), which we also accept for --help).
 * Used by every subcommand so that they all reject unknown options the same way.
 * \param argc argument count (argv[0] is the program name)
 * \param argv the arguments
 * \param known the option names the command accepts (without "--")
 */
void CheckOptions(int argc, char** argv, const std::vector<std::string>& known);

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_CLI_COMMANDS_H
