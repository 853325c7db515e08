/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_CLI_OPTIONS_H
#define RAPIDLLM_CLI_OPTIONS_H

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace ns3 {
namespace rapidllm {

/** \brief What an option's value is, and so how it is checked. */
enum class CliKind
{
    FLAG,   //!< true or false; given alone it means true
    COUNT,  //!< a whole number in [minimum, maximum]
    REAL,   //!< a finite number in [low, high]
    SIZE,   //!< bytes with an optional unit (4K, 256MiB, 1GB), in [minimum, maximum]
    CHOICE, //!< one of choices()
    TEXT    //!< any non-empty text (a name, a path, a list the command parses)
};

/**
 * \brief One command-line option, declared once for every command that takes it. Each
 * command's ns-3 CommandLine (and so its --help), its known-name check and the value check
 * derive from this declaration; the choices of a CHOICE option are the model's own list.
 *
 * Options are declared in the table of cli-options.cc with the builders below, e.g.
 * `Count("tp", "tensor parallel degree", 1, kMaxGpus, "1").For(kJob).ListIn("sweep", "1,2,4,8")`.
 */
struct CliOption
{
    std::string name;                                  //!< without "--"
    std::string help;                                  //!< one line; the allowed values follow
    CliKind kind = CliKind::TEXT;                      //!< how the value is checked
    std::string fallback;                              //!< default value ("" = none)
    uint64_t minimum = 0;                              //!< COUNT, SIZE: smallest value
    uint64_t maximum = 0;                              //!< COUNT, SIZE: largest value
    double low = 0;                                    //!< REAL: smallest value
    double high = 0;                                   //!< REAL: largest value
    std::function<std::vector<std::string>()> choices; //!< CHOICE: allowed; TEXT: names for help
    std::set<std::string> commands;                    //!< commands that take it ("*": all)
    std::string field;       //!< the spec field it sets, if not its own name (for error messages)
    std::string mode;        //!< "training" or "inference": applies in that --mode only
    bool repeatable = false; //!< may be given more than once (--load)
    std::set<std::string> requiredIn;              //!< commands that need a value
    std::map<std::string, std::string> fallbackIn; //!< per-command default
    std::map<std::string, std::string> helpIn;     //!< per-command help
    std::map<std::string, std::string> listIn;     //!< commands taking a comma-separated list,
                                                   //!< with their default list

    /** \return a copy taken by \p commands ("*" = every command) */
    CliOption For(const std::set<std::string>& commands) const;
    /** \return a copy that reports errors about spec field \p name as this option */
    CliOption Field(const std::string& name) const;
    /** \return a copy that applies only in run mode \p runMode */
    CliOption Mode(const std::string& runMode) const;
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
    /** \return the allowed values in words, e.g. "a whole number from 1 to 16777216" */
    std::string Allowed() const;
};

/** \return a FLAG option */
CliOption Flag(const std::string& name, const std::string& help, const std::string& fallback);
/** \return a COUNT option */
CliOption Count(const std::string& name,
                const std::string& help,
                uint64_t minimum,
                uint64_t maximum,
                const std::string& fallback);
/** \return a REAL option */
CliOption Real(const std::string& name,
               const std::string& help,
               double low,
               double high,
               const std::string& fallback);
/** \return a SIZE option */
CliOption Size(const std::string& name,
               const std::string& help,
               uint64_t minimum,
               uint64_t maximum,
               const std::string& fallback);
/** \return a CHOICE option whose allowed values \p choices returns (the model's own list) */
CliOption Choice(const std::string& name,
                 const std::string& help,
                 std::function<std::vector<std::string>()> choices,
                 const std::string& fallback);
/** \return a TEXT option; \p names (optional) lists known names in the help */
CliOption Text(const std::string& name,
               const std::string& help,
               const std::string& fallback,
               std::function<std::vector<std::string>()> names = nullptr);

/** \return every option of every command, in the order --help lists them */
const std::vector<CliOption>& GetCliOptions();

/** \return the option called \p name, or nullptr */
const CliOption* FindCliOption(const std::string& name);

/**
 * \brief Parses a size: a number and an optional unit, B, K/KiB, KB, M/MiB, MB, G/GiB, GB,
 * T/TiB, TB (K/M/G/T alone are binary, as in nccl-tests).
 * \param text the value \param[out] bytes the size, rounded to a whole byte
 * \return "" when \p text is a size, else why not ("not a size", "unknown unit", "too large")
 */
std::string ParseByteSize(const std::string& text, uint64_t& bytes);

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_CLI_OPTIONS_H
