/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_CLI_JOB_OPTIONS_H
#define RAPIDLLM_CLI_JOB_OPTIONS_H

#include "cli-args.h"
#include "ns3/gpu-compute-model.h"
#include "ns3/job-options.h"
#include "ns3/rapid-llm-helper.h"
#include "ns3/report-json.h"
#include "ns3/spec-override.h"

#include <functional>

namespace ns3 {
namespace rapidllm {

/** What a command's --dtype is for: which types it offers where the GPU runs them. */
enum class TypeUse
{
    INFERENCE, //!< an inference job's weights (every type; its cache has --kv-cache-dtype)
    TRAINING,  //!< a training job (no int8 or int4)
    GEMM,      //!< one GEMM's operands (every type)
    ATTENTION  //!< one attention's tensors (no weight-only int4)
};

/** \return the types \p gpu runs that \p use takes, "fp32, tf32, ..." */
std::string RunnableTypes(const GpuSpec& gpu, TypeUse use);

/**
 * \brief Refuses \p dtype as --dtype's error where \p gpu lists no rate for it, naming the types
 * it runs that \p use takes (not as a fault of the hardware file, \p hardwareSource)
 */
void RefuseUnrunnableType(const GpuSpec& gpu,
                          DataType dtype,
                          const std::string& hardwareSource,
                          TypeUse use);

/**
 * \brief The compute model gemm and attention cost one kernel with: \p hw's GPU at the clock
 * --clock names (sustained or boost); notes a gpu.sm_count among \p overrides given without
 * the GPU's rates, as run does
 */
Ptr<GpuComputeModel> KernelModel(const CliArgs& args,
                                 const HardwareSpec& hw,
                                 const std::vector<SpecOverride>& overrides);

/**
 * \brief The job the job commands (memory, trace, run) describe with their shared options,
 * resolved by the library's JobOptions (the same parsing a scenario script's CommandLine gets):
 * the model (preset or file, with shape overrides), the hardware, the parallel layout and the
 * run settings, validated. Throws SpecError naming the option (or the field it sets); options
 * of the other run mode are an error.
 * \param args the command's checked options
 * \return the job
 */
ResolvedJob ReadJobOptions(const CliArgs& args);

/**
 * \brief Says \p job's notes on stderr, as the command's: ResolvedJob::Notes, and where the
 * command replays it (all but memory) ResolvedJob::ReplayNotes.
 */
void NoteJob(const CliArgs& args, const ResolvedJob& job);

/**
 * \brief The job options a command was given, unresolved (for commands that vary them, as
 * `study hardware`).
 * \param args the command's checked options
 * \return the options
 */
JobOptions ReadJobOptionValues(const CliArgs& args);

/**
 * \brief The backend and routing a job command runs with: the command line's, else the job
 * file's (--run), else the defaults (flow; the hardware's routing, ""). The command's
 * `--packet` attributes, if any, are checked against that backend and applied here, before
 * anything runs (ApplyPacketAttributesFor).
 * \param args the command's options \param job the resolved job
 * \param[out] backend the backend \param[out] routing the routing ("" = the hardware's)
 */
void JobBackendAndRouting(const CliArgs& args,
                          const ResolvedJob& job,
                          std::string& backend,
                          std::string& routing);

/**
 * \brief Runs \p replay (the helper's Run or Replay) with progress on stderr (a terminal, or
 * --progress; a clean stop on an interrupt) and, with --timeline=FILE, the trace-event timeline
 * written to FILE (checked writable before the run).
 * \param args the command's options \param command its name, for the progress line
 * \param helper the helper that runs it \param replay runs it
 * \return the report
 */
RunReport RunObserved(const CliArgs& args,
                      const std::string& command,
                      Ptr<RapidLlmHelper> helper,
                      const std::function<RunReport()>& replay);

/**
 * \brief The machine a command without a model runs on (replay, collective, gemm, attention):
 * --hardware with its --set overrides, which may name gpu. and network. paths only (a model
 * path would change nothing, silently).
 * \param args the command's options
 * \param why what the command takes instead of a model, for the error (e.g. "a trace fixes
 * the model's operators")
 * \param[out] overrides the --set overrides, in order
 * \param source the hardware to load in place of --hardware's value ("": --hardware's)
 * \return the hardware
 */
HardwareSpec LoadHardwareWithSet(const CliArgs& args,
                                 const std::string& why,
                                 std::vector<SpecOverride>& overrides,
                                 const std::string& source = "");

/**
 * \return whether `replay` takes an override of \p path: network. paths and gpu.sm_count (the
 * SMs collectives share with the compute); a trace fixes its kernels' times and the model
 */
bool ReplayTakesSet(const std::string& path);

/** \return \p overrides as given ("gpu.hbm_gib=160", ...), for an output's input echo */
Json OverridesJson(const std::vector<SpecOverride>& overrides);

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_CLI_JOB_OPTIONS_H
