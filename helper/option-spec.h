/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_OPTION_SPEC_H
#define RAPIDLLM_OPTION_SPEC_H

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief What an option's value is, and so how it is checked.
 */
enum class OptionKind
{
    FLAG,   //!< true or false; given alone it means true
    COUNT,  //!< a whole number in [minimum, maximum]
    REAL,   //!< a finite number in [low, high]
    SIZE,   //!< bytes with an optional unit (4K, 256MiB, 1GB), in [minimum, maximum]
    CHOICE, //!< one of choices()
    TEXT    //!< any non-empty text (a name, a path, a list the command parses)
};

/**
 * \ingroup rapid-llm
 * \brief One option of a job or a command, declared once: its name, help, the kind of value
 * with its range or choices, its default and the run mode it applies to. The job options
 * (JobOptions) and the `rapid-llm` command's own options are declared with it, so a script's
 * CommandLine, the command's `--help`, the value checks and the error messages all derive
 * from one row, e.g. `OptionSpec::Count("tp", "tensor parallel degree", 1, kMaxGpus, "1")`.
 */
struct OptionSpec
{
    std::string name;                                  //!< without "--"
    std::string help;                                  //!< one line; the allowed values follow
    OptionKind kind = OptionKind::TEXT;                //!< how the value is checked
    std::string fallback;                              //!< default value ("" = none)
    uint64_t minimum = 0;                              //!< COUNT, SIZE: smallest value
    uint64_t maximum = 0;                              //!< COUNT, SIZE: largest value
    double low = 0;                                    //!< REAL: smallest value
    double high = 0;                                   //!< REAL: largest value
    std::function<std::vector<std::string>()> choices; //!< CHOICE: allowed; TEXT: names for help
    std::string field; //!< the spec field it sets, if not its own name (for error messages)
    std::string mode;  //!< "training" or "inference": applies in that run mode only
    std::string unit;  //!< REAL: the unit its number is in ("ms"), named in errors

    /** \return a FLAG option */
    static OptionSpec Flag(const std::string& name,
                           const std::string& help,
                           const std::string& fallback);
    /** \return a COUNT option */
    static OptionSpec Count(const std::string& name,
                            const std::string& help,
                            uint64_t minimum,
                            uint64_t maximum,
                            const std::string& fallback);
    /** \return a REAL option */
    static OptionSpec Real(const std::string& name,
                           const std::string& help,
                           double low,
                           double high,
                           const std::string& fallback);
    /** \return a SIZE option */
    static OptionSpec Size(const std::string& name,
                           const std::string& help,
                           uint64_t minimum,
                           uint64_t maximum,
                           const std::string& fallback);
    /** \return a CHOICE option whose allowed values \p choices returns (the model's own list) */
    static OptionSpec Choice(const std::string& name,
                             const std::string& help,
                             std::function<std::vector<std::string>()> choices,
                             const std::string& fallback);
    /** \return a TEXT option; \p names (optional) lists known names in the help */
    static OptionSpec Text(const std::string& name,
                           const std::string& help,
                           const std::string& fallback,
                           std::function<std::vector<std::string>()> names = nullptr);

    /** \return a copy that reports errors about spec field \p name as this option */
    OptionSpec Field(const std::string& name) const;
    /** \return a copy that applies only in run mode \p runMode */
    OptionSpec Mode(const std::string& runMode) const;
    /** \return a copy whose number is in \p name ("ms"): errors name it, and a value written
     * with it ("30ms") is told to drop it */
    OptionSpec Unit(const std::string& name) const;

    /** \return the allowed values in words, e.g. "a whole number from 1 to 16777216" */
    std::string Allowed() const;
    /**
     * \brief The help line: \p text with the allowed values and notes in parentheses.
     * \param text the help (this option's or a command's own wording)
     * \param list whether the value is a comma-separated list of such values
     * \param modeNote whether to say which run mode it applies to (where mode is an option)
     * \param required whether to say that a value is required
     * \return e.g. "micro-batch size (sequences) (a whole number from 1 to 4294967295;
     *         --mode=training only)"
     */
    std::string HelpText(const std::string& text, bool list, bool modeNote, bool required) const;
    /**
     * \brief Checks one value (one item of a list).
     * \param item the value
     * \return "" when \p item is allowed, else why not, to follow the quoted value in a
     *         message: "is not allowed; give a whole number from 1 to 16777216"
     */
    std::string Check(const std::string& item) const;
};

/** \return whether \p text is a whole number (digits only) that fits 64 bits, in \p value */
bool ParseWholeNumber(const std::string& text, uint64_t& value);
/** \return whether \p text is a finite number, in \p value */
bool ParseFiniteNumber(const std::string& text, double& value);
/** \return whether \p text names a GPU as the network does, gpu<i>, with i in \p index */
bool ParseGpuName(const std::string& text, uint64_t& index);
/** \return whether \p text is true, false, 1 or 0, in \p value */
bool ParseBoolean(const std::string& text, bool& value);
/**
 * \brief Parses a size: a number and an optional unit, B, K/KiB, KB, M/MiB, MB, G/GiB, GB,
 * T/TiB, TB (K/M/G/T alone are binary, as in nccl-tests).
 * \param text the value \param[out] bytes the size, rounded to a whole byte
 * \return "" when \p text is a size, else why not ("is not a size", "has an unknown unit",
 *         "is too large")
 */
std::string ParseByteSize(const std::string& text, uint64_t& bytes);

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_OPTION_SPEC_H
