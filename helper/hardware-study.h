/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_HARDWARE_STUDY_H
#define RAPIDLLM_HARDWARE_STUDY_H

#include "job-options.h"
#include "ns3/report-json.h"
#include "ns3/run-report.h"

#include <string>
#include <vector>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief One variant of a hardware (or model) study: the job with one spec field set to one
 * value, and its prediction.
 */
struct HardwareStudyRow
{
    std::string value; //!< the value as given ("0.5x", "160")
    std::string set;   //!< the override it stands for ("gpu.hbm_gib=0.5x")
    ResolvedJob job;   //!< the job with the override applied
    RunReport report;  //!< its prediction (step time, breakdown, memory verdict)
    /**
     * inference that does not fit: the most requests that do (LargestFittingBatch; the
     * report's reason says so too)
     */
    uint32_t largestBatch = 0;
};

/**
 * \brief Parses the `--vary` option: FIELD=V1,V2,... (FIELD as --set names it, each value a
 * value or a scale such as 0.5x).
 * \param text the option's value
 * \param[out] field the field path
 * \return the values, in order; throws SpecError (field "vary") on malformed text
 */
std::vector<std::string> ParseVary(const std::string& text, std::string& field);

/**
 * \brief Runs a job once per value of one spec field (the job's own --set overrides apply
 * first, then FIELD=VALUE).
 * \param options the job's options \param field the spec field path
 * \param values the values \param backend the network backend
 * \param routing the routing policy ("" = the hardware's) \param symmetry the replayer's
 *        Symmetry
 * \return the rows, in the order of \p values; throws SpecError on bad input
 */
std::vector<HardwareStudyRow> RunHardwareStudy(const JobOptions& options,
                                               const std::string& field,
                                               const std::vector<std::string>& values,
                                               const std::string& backend,
                                               const std::string& routing,
                                               bool symmetry);

/**
 * \return the study as results.json holds it: the field and every row with its full input and
 * report (\p packet: the packet network's attributes as given, "" = none)
 */
Json HardwareStudyJson(const std::string& field,
                       const std::vector<HardwareStudyRow>& rows,
                       const std::string& backend,
                       const std::string& routing,
                       const std::string& packet = "");

/** \return the rows as CSV: field,value,fits,step_time_s,... */
std::string HardwareStudyCsv(const std::string& field, const std::vector<HardwareStudyRow>& rows);

/**
 * \brief Writes DIR/results.csv, DIR/results.json (each row with its full input), DIR/step-time.png
 * (the step time, or time per output token for inference, of the variants that fit) and
 * DIR/memory.png (peak memory per GPU against the capacity).
 * \param dir the directory (created) \param field the field \param rows the rows
 * \param backend the backend \param routing the routing ("" = the hardware's)
 * \param packet the packet network's attributes as given ("" = none)
 * \return whether DIR/step-time.png was drawn (not when no variant fits)
 */
bool WriteHardwareStudy(const std::string& dir,
                        const std::string& field,
                        const std::vector<HardwareStudyRow>& rows,
                        const std::string& backend,
                        const std::string& routing,
                        const std::string& packet = "");

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_HARDWARE_STUDY_H
