/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "cli-job-options.h"

#include "cli-ns3-checks.h"
#include "ns3/progress-line.h"
#include "ns3/report-output.h"
#include "ns3/run-progress.h"
#include "ns3/spec-error.h"
#include "ns3/timeline-recorder.h"

#include <filesystem>
#include <fstream>
#include <iostream>

namespace ns3 {
namespace rapidllm {

JobOptions
ReadJobOptionValues(const CliArgs& args)
{
    JobOptions job;
    for (const OptionSpec& option : JobOptions::GetDeclarations())
    {
        // Job options a command does not take (--fault for memory and trace) stay unset.
        const CliOption* declared = FindCliOption(option.name, args.Command());
        // A list (the sweep's or a study's degrees) is the command's to read, not one value.
        if (declared && declared->TakenBy(args.Command()) && args.Has(option.name)
            && declared->listIn.count(args.Command()) == 0)
        {
            job.Set(option.name, args.Text(option.name));
        }
    }
    return job;
}

std::string
RunnableTypes(const GpuSpec& gpu, TypeUse use)
{
    const bool training = use == TypeUse::TRAINING;
    std::string allowed;
    for (DataType t : {DataType::FP32,
                       DataType::TF32,
                       DataType::FP16,
                       DataType::BF16,
                       DataType::FP8,
                       DataType::INT8,
                       DataType::INT4})
    {
        // Training takes no inference type (int8, int4), attention no weight-only int4: not
        // offered where they would be refused.
        const bool taken = !(training && (t == DataType::INT8 || t == DataType::INT4))
                           && !(use == TypeUse::ATTENTION && t == DataType::INT4);
        if (gpu.Runs(t) && taken)
        {
            allowed += (allowed.empty() ? "" : ", ") + ToString(t);
        }
    }
    return allowed;
}

void
RefuseUnrunnableType(const GpuSpec& gpu,
                     DataType dtype,
                     const std::string& hardwareSource,
                     TypeUse use)
{
    if (gpu.Runs(dtype))
    {
        return;
    }
    // Said as the option's error for every command (memory gave a verdict for a job run cannot
    // cost), not as a fault of the hardware file.
    const bool training = use == TypeUse::TRAINING;
    const std::string allowed = RunnableTypes(gpu, use);
    throw SpecError(
        kCommandLine,
        "dtype",
        ToString(dtype) + ": the " + gpu.name + " (" + hardwareSource + ") lists no rate for "
            + ToString(dtype) + " multiplies, so no kernel can be costed; allowed on it"
            + (training ? " for training: " : ": ") + allowed
            + (use == TypeUse::INFERENCE ? " (a cache in fp8 is --kv-cache-dtype=fp8)" : ""));
}

Ptr<GpuComputeModel>
KernelModel(const CliArgs& args, const HardwareSpec& hw, const std::vector<SpecOverride>& overrides)
{
    std::vector<std::string> texts;
    for (const SpecOverride& o : overrides)
    {
        texts.push_back(o.GetText());
    }
    const std::string sms = SmCountNote(texts);
    if (!sms.empty())
    {
        std::cerr << "rapid-llm " << args.Command() << ": note: " << sms << "\n";
    }
    Ptr<GpuComputeModel> model = CreateObject<GpuComputeModel>();
    model->SetGpu(hw.gpu);
    model->SetClockPolicy(args.Text("clock") == "boost" ? ClockPolicy::BOOST
                                                        : ClockPolicy::SUSTAINED);
    return model;
}

ResolvedJob
ReadJobOptions(const CliArgs& args)
{
    ResolvedJob job = ReadJobOptionValues(args).ToSpecs();
    RefuseUnrunnableType(job.hardware.gpu,
                         job.run.dtype,
                         job.hardwareSource,
                         job.run.mode == RunMode::TRAINING ? TypeUse::TRAINING
                                                           : TypeUse::INFERENCE);
    NoteJob(args, job);
    return job;
}

void
NoteJob(const CliArgs& args, const ResolvedJob& job)
{
    std::vector<std::string> notes = job.Notes();
    if (args.Command() != "memory")
    {
        const std::vector<std::string> replay = job.ReplayNotes();
        notes.insert(notes.end(), replay.begin(), replay.end());
    }
    for (const std::string& note : notes)
    {
        std::cerr << "rapid-llm " << args.Command() << ": note: " << note << "\n";
    }
}

void
JobBackendAndRouting(const CliArgs& args,
                     const ResolvedJob& job,
                     std::string& backend,
                     std::string& routing)
{
    const CliOption* b = FindCliOption("backend", args.Command());
    const CliOption* r = FindCliOption("routing", args.Command());
    backend = b && b->TakenBy(args.Command()) && args.Has("backend") ? args.Text("backend")
              : !job.backend.empty()                                 ? job.backend
                                                                     : "flow";
    routing =
        r && r->TakenBy(args.Command()) && args.Has("routing") ? args.Text("routing") : job.routing;
    const CliOption* p = FindCliOption("packet", args.Command());
    if (p && p->TakenBy(args.Command()))
    {
        ApplyPacketAttributesFor(args.Text("packet"), backend);
    }
}

RunReport
RunObserved(const CliArgs& args,
            const std::string& command,
            Ptr<RapidLlmHelper> helper,
            const std::function<RunReport()>& replay)
{
    const bool terminal = ProgressLine::StderrIsTerminal();
    RunProgress progress(
        command, args.Has("progress") ? args.Flag("progress") : terminal, terminal);
    progress.Attach(helper);
    TimelineRecorder timeline;
    const bool recording = args.HasValue("timeline");
    if (recording)
    {
        CheckOutputFile(args.Text("timeline"), "timeline"); // before the run, which may be long
        timeline.Attach(helper);
    }
    RunReport report = replay();
    progress.Finish();
    if (recording)
    {
        timeline.Write(args.Text("timeline"));
    }
    return report;
}

HardwareSpec
LoadHardwareWithSet(const CliArgs& args,
                    const std::string& why,
                    std::vector<SpecOverride>& overrides,
                    const std::string& source)
{
    overrides = args.HasValue("set") ? SpecOverride::ParseList(args.Text("set"), kCommandLine)
                                     : std::vector<SpecOverride>();
    for (const SpecOverride& o : overrides)
    {
        if (o.GetTarget() == SpecOverride::Target::MODEL)
        {
            throw SpecError(kCommandLine,
                            "set",
                            "'" + o.GetText() + "': " + why
                                + ", so it takes gpu. and network. paths only (run and trace "
                                  "take model. ones)");
        }
    }
    return HardwareSpec::Load(source.empty() ? args.Text("hardware") : source, overrides);
}

bool
ReplayTakesSet(const std::string& path)
{
    return path.rfind("network.", 0) == 0 || path == "gpu.sm_count";
}

Json
OverridesJson(const std::vector<SpecOverride>& overrides)
{
    Json list = Json::array();
    for (const SpecOverride& o : overrides)
    {
        list.push_back(o.GetText());
    }
    return list;
}

} // namespace rapidllm
} // namespace ns3
