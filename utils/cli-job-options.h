/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_CLI_JOB_OPTIONS_H
#define RAPIDLLM_CLI_JOB_OPTIONS_H

#include "ns3/command-line.h"
#include "ns3/hardware-spec.h"
#include "ns3/model-spec.h"
#include "ns3/run-spec.h"

#include <map>
#include <string>
#include <vector>

namespace ns3 {
namespace rapidllm {

/**
 * \brief Checks a command-line value against the allowed ones.
 * \param name the option (without "--") \param text its value \param allowed the choices
 * \return \p text; throws SpecError naming the option and the allowed values otherwise
 */
std::string Choice(const std::string& name,
                   const std::string& text,
                   const std::vector<std::string>& allowed);

/**
 * \brief The options every job command (memory, trace, run) shares: the model (preset or file,
 * with shape overrides), the hardware, the parallel layout and the run settings, named the same
 * everywhere.
 */
class JobOptions
{
  public:
    /** \brief Registers the options on \p cmd (values are read as text and checked later). */
    void AddTo(CommandLine& cmd);

    /** \return the option names, for CheckOptions */
    std::vector<std::string> Names() const;

    /**
     * \brief The arguments with the on/off options given bare (--sp, --fsdp) spelled out as
     * --sp=true, so that both forms work. The returned pointers live as long as this object.
     * \param argc argument count \param argv arguments
     * \return the arguments to parse
     */
    std::vector<char*> WithFlagValues(int argc, char** argv);

    /** \brief Loads the specs and validates the layout; throws SpecError naming the option. */
    void Resolve();

    ModelSpec model;       //!< after Resolve()
    HardwareSpec hardware; //!< after Resolve()
    RunSpec run;           //!< after Resolve()

  private:
    /** Parses a whole-number option (empty = absent). */
    bool Count(const std::string& name, uint32_t minimum, uint32_t& out) const;

    std::map<std::string, std::string> m_values; //!< option name -> text
    std::vector<std::string> m_args;             //!< storage for WithFlagValues
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_CLI_JOB_OPTIONS_H
