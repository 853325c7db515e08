/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_CLI_JOB_OPTIONS_H
#define RAPIDLLM_CLI_JOB_OPTIONS_H

#include "cli-args.h"
#include "ns3/hardware-spec.h"
#include "ns3/model-spec.h"
#include "ns3/run-spec.h"

namespace ns3 {
namespace rapidllm {

/**
 * \brief The job the job commands (memory, trace, run) describe with their shared options: the
 * model (preset or file, with shape overrides), the hardware, the parallel layout and the run
 * settings, resolved into specs and validated.
 */
class JobOptions
{
  public:
    /**
     * \brief Loads the specs and validates the layout against the model. Throws SpecError
     * naming the option (or the field it sets); options of the other run mode are an error.
     * \param args the command's checked options
     */
    explicit JobOptions(const CliArgs& args);

    ModelSpec model;       //!< the model, overrides applied
    HardwareSpec hardware; //!< the machine
    RunSpec run;           //!< the layout and run settings
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_CLI_JOB_OPTIONS_H
