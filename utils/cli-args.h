/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_CLI_ARGS_H
#define RAPIDLLM_CLI_ARGS_H

#include "cli-options.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ns3 {
namespace rapidllm {

/**
 * \brief The options of one command as given on its command line, every value checked against
 * its declaration (cli-options.cc) before the command runs.
 *
 * Parsing rejects, with a SpecError naming the option (exit code 2): an option the command does
 * not take, a missing value (`--tp`, `--tp=`), a value of the wrong kind or out of range
 * (`--gpus=abc`, `--gpus=-4`, `--json=maybe`), a choice not in the model's list, and an option
 * given twice. `--help` prints the command's ns-3 CommandLine help, built from the same
 * declarations, and exits 0 (as do ns-3's own `--PrintAttributes=TYPE` and the like).
 */
class CliArgs
{
  public:
    /**
     * \param command the command's name \param usage its --help description
     * \param argc argument count \param argv arguments (argv[0] is the program name)
     */
    CliArgs(const std::string& command, const std::string& usage, int argc, char** argv);

    /** \return the command's name */
    const std::string& Command() const;
    /** \return whether \p name was given on the command line */
    bool Has(const std::string& name) const;
    /** \return whether \p name has a value (given, or a non-empty default) */
    bool HasValue(const std::string& name) const;
    /** \return the value as given, else the default ("" when neither) */
    std::string Text(const std::string& name) const;
    /**
     * \return the items of a TEXT option's value separated by \p separator: at least one,
     * each non-empty and, unless \p distinct is false, none given twice (else an error naming
     * the option and the item)
     */
    std::vector<std::string> Items(const std::string& name,
                                   char separator,
                                   bool distinct = true) const;
    /**
     * \return the message for \p item given twice in the list \p value: "'2' is given twice
     * in '2,2'; give each value once"
     */
    static std::string Repeated(const std::string& item, const std::string& value);
    /** \return every value given for a repeatable option, in order */
    std::vector<std::string> Texts(const std::string& name) const;
    /** \return a FLAG's value */
    bool Flag(const std::string& name) const;
    /** \return a COUNT's value; throws if it has none (see Require) */
    uint64_t Count(const std::string& name) const;
    /** \return a COUNT list's values (a command where the option takes a list) */
    std::vector<uint64_t> Counts(const std::string& name) const;
    /** \return a COUNT list's values as 32-bit numbers (for lists declared within 32 bits) */
    std::vector<uint32_t> Counts32(const std::string& name) const;
    /** \return a REAL's value */
    double Real(const std::string& name) const;
    /** \return a SIZE's value in bytes */
    uint64_t Size(const std::string& name) const;
    /** \return a CHOICE list's values (a command where the option takes a list) */
    std::vector<std::string> Choices(const std::string& name) const;

    /** \brief Throws "option --NAME is required" unless \p name has a value. */
    void Require(const std::string& name) const;

  private:
    /** \return the declaration of \p name, which this command must take */
    const CliOption& Option(const std::string& name) const;
    /** Checks one value of \p option; throws naming the option, the value and what is allowed */
    void CheckValue(const CliOption& option, const std::string& value) const;
    /** \return the value's items (one unless the option takes a list in this command) */
    std::vector<std::string> Items(const CliOption& option, const std::string& value) const;
    /**
     * Hands --help (or ns-3's --PrintAttributes=... and the like) to an ns-3 CommandLine
     * holding the command's options, which prints it, and exits 0.
     */
    [[noreturn]] void PrintHelp(const std::string& program,
                                const std::string& usage,
                                const std::vector<std::string>& ns3Args) const;

    std::string m_command;                                   //!< the command
    std::map<std::string, std::vector<std::string>> m_given; //!< option -> values given
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_CLI_ARGS_H
