/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_CLI_COMMANDS_H
#define RAPIDLLM_CLI_COMMANDS_H

#include "cli-args.h"

#include <functional>
#include <string>
#include <vector>

namespace ns3 {
namespace rapidllm {

/**
 * \brief One subcommand of the rapid-llm tool. Its options are declared in cli-options.cc;
 * the tool parses and checks them (CliArgs) before it calls run.
 */
struct CliCommand
{
    std::string name;                       //!< first word on the command line
    std::string summary;                    //!< one line for the usage text
    std::string usage;                      //!< what the command does, for --help
    std::function<int(const CliArgs&)> run; //!< runs with checked options; returns exit code
};

/**
 * \brief Exit status of `run` and `memory` when the job does not fit in GPU memory: the report
 * is printed in full (the verdict, and for run the predicted time of a job that could not run),
 * but a script must not take it for a job that runs. 0 is a job that fits, 1 an internal fault,
 * 2 bad input, 4 a check that missed its bar (kExitMissedBar), 5 an output that could not be
 * written (OutputError), 130 an interrupt.
 */
constexpr int kExitDoesNotFit = 3;
/** Exit status of a check (xval) whose rows miss their bar: the check ran and failed. */
constexpr int kExitMissedBar = 4;
/** Exit status of an output that could not be written (OutputError): the run itself was fine. */
constexpr int kExitOutputError = 5;

/**
 * \brief Tells stderr that the job does not fit (stdout holds the report) and returns the exit
 * status that says so.
 * \param command the command's name \param reason why it does not fit
 * \return kExitDoesNotFit
 */
int DoesNotFit(const std::string& command, const std::string& reason);

/** \return every subcommand, sorted by name */
const std::vector<CliCommand>& GetCliCommands();

/**
 * \brief Registers a subcommand at static-initialization time, so that each command lives in
 * its own cli-<name>.cc: `static CliCommandRegistrar g_x("name", "summary", "usage", RunX);`
 */
class CliCommandRegistrar
{
  public:
    /**
     * \param name the first word on the command line
     * \param summary one line for the usage text
     * \param usage what the command does, for --help
     * \param run the command's entry point
     */
    CliCommandRegistrar(const std::string& name,
                        const std::string& summary,
                        const std::string& usage,
                        std::function<int(const CliArgs&)> run);
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_CLI_COMMANDS_H
