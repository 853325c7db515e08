/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_JOB_ECHO_H
#define RAPIDLLM_JOB_ECHO_H

#include "job-options.h"
#include "ns3/report-json.h"

#include <map>
#include <string>

namespace ns3 {
namespace rapidllm {

/** \return the version of RAPID-LLM (the CMake project's VERSION) */
std::string RapidLlmVersion();

/**
 * \brief What a spec source's contents were, so that two records of one file path that was
 * edited in between differ.
 * \param source a preset name or a YAML file \return "fnv1a64 HEX" (FNV-1a of the file's
 * bytes) for a file, "preset NAME" otherwise
 */
std::string SpecSourceDigest(const std::string& source);

/**
 * \brief The machine as every output echoes it: its source, name, GPU, HBM, network dimensions
 * and faults (those present from the start, then \p timedFaults with their start), and the slow
 * GPUs where there are any; a file's `digest` (SpecSourceDigest).
 * \param hardware the machine (overrides applied) \param source --hardware: preset name or file
 * \param timedFaults the faults that start mid-run
 * \param slowGpus GPU -> the share of its compute speed left (--slow-gpus)
 * \return the "hardware" object of an input echo
 */
Json HardwareInputJson(const HardwareSpec& hardware,
                       const std::string& source,
                       const std::vector<ScheduledFault>& timedFaults,
                       const std::map<uint32_t, double>& slowGpus = {});

/**
 * \brief The full input of a job as every output echoes it: version, model (source and
 * shape), hardware (source, GPU and network with its faults), layout, software settings, the
 * overrides and faults given, the job file, backend and routing, and the packet network's
 * attributes when any were set (`--packet`).
 * \param job the resolved job \param backend the network backend \param routing the routing
 *        policy in force ("" = the hardware's) \param packet the packet network's attributes
 *        as given, NAME=VALUE[,...] ("" = none, not echoed)
 * \return the "input" object
 */
Json JobInputJson(const ResolvedJob& job,
                  const std::string& backend,
                  const std::string& routing,
                  const std::string& packet = "");

/**
 * \brief Echoes ns-3's attribute defaults from the environment (NS_ATTRIBUTE_DEFAULT) into
 * \p input as "ns_attribute_default" when set: they change what runs (a replayer's collective
 * algorithm, the packet network's MTU), so an echo without them does not say all.
 */
void EchoAttributeDefaults(Json& input);

/**
 * \brief The same input as text for a person, a few lines each starting with "# ".
 * \param job the job \param backend the backend \param routing the routing ("" = hardware's)
 * \param packet the packet network's attributes ("" = none)
 * \return the lines
 */
std::string JobInputText(const ResolvedJob& job,
                         const std::string& backend,
                         const std::string& routing,
                         const std::string& packet = "");

/**
 * \brief An input echo (JobInputJson's object, or a study's with lists in its layout) as text
 * for a person, as JobInputText prints it.
 * \param input the "input" object \return the lines
 */
std::string InputText(const Json& input);

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_JOB_ECHO_H
