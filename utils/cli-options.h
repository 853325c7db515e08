/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_CLI_OPTIONS_H
#define RAPIDLLM_CLI_OPTIONS_H

#include "ns3/job-options.h"
#include "ns3/option-spec.h"

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace ns3 {
namespace rapidllm {

/**
 * \brief One command-line option of the `rapid-llm` command: its declaration (OptionSpec:
 * name, help, kind, range or choices, default, run mode) and which commands take it, with
 * their per-command default, help or list form. Each command's ns-3 CommandLine (and so its
 * --help), its known-name check and the value check derive from it.
 *
 * The job options are declared once in the library (JobOptions, helper/job-options.cc, which
 * scenario scripts use too) and taken here by the memory, run and trace commands; the table of
 * cli-options.cc adds the commands that share them (e.g. sweep, with lists) and the commands'
 * own options, e.g. `Count("top", "layouts to print", 0, kMaxCount, "10").For({"sweep"})`.
 */
struct CliOption : public OptionSpec
{
    /** \param spec the declaration (taken by no command yet) */
    CliOption(const OptionSpec& spec = OptionSpec());

    std::set<std::string> commands;                //!< commands that take it ("*": all)
    bool repeatable = false;                       //!< may be given more than once (--load)
    std::set<std::string> requiredIn;              //!< commands that need a value
    std::map<std::string, std::string> fallbackIn; //!< per-command default
    std::map<std::string, std::string> helpIn;     //!< per-command help
    std::map<std::string, std::string> listIn;     //!< commands taking a comma-separated list,
                                                   //!< with their default list

    /** \return a copy taken by \p commands ("*" = every command) */
    CliOption For(const std::set<std::string>& commands) const;
    /** \return a copy whose default for \p command is \p value */
    CliOption DefaultIn(const std::string& command, const std::string& value) const;
    /** \return a copy whose help for \p command is \p text */
    CliOption HelpIn(const std::string& command, const std::string& text) const;
    /** \return a copy that takes a comma-separated list in \p command (default \p value) */
    CliOption ListIn(const std::string& command, const std::string& value) const;
    /** \return a copy that may be given more than once */
    CliOption Repeatable() const;
    /** \return a copy that \p commands require (a value, given or by default) */
    CliOption RequiredIn(const std::set<std::string>& commands) const;

    /** \return whether \p command takes this option */
    bool TakenBy(const std::string& command) const;
    /** \return the default value in \p command */
    std::string DefaultFor(const std::string& command) const;
    /** \return the help line in \p command, with the allowed values */
    std::string HelpFor(const std::string& command) const;
};

/** \return every option of every command, in the order --help lists them */
const std::vector<CliOption>& GetCliOptions();

/**
 * \return the option called \p name (the one \p command takes, where two commands declare
 * options of one name with different meanings, as --links), or nullptr
 */
const CliOption* FindCliOption(const std::string& name, const std::string& command = "");

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_CLI_OPTIONS_H
