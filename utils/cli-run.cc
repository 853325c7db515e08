/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// rapid-llm run: predicts one training iteration or inference request of a job on a cluster.

#include "cli-commands.h"
#include "cli-job-options.h"
#include "ns3/boolean.h"
#include "ns3/job-echo.h"
#include "ns3/rapid-llm-helper.h"
#include "ns3/report-output.h"
#include "ns3/spec-error.h"
#include "ns3/workload-trace.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>

namespace ns3 {
namespace rapidllm {

namespace {

/**
 * \return the report as JSON text, with every rank when --per-rank asks for it and the wall
 * time when --timing does
 */
std::string
ReportJson(const RunReport& report, bool perRank, bool timing, const Json& input)
{
    Json j = report;
    if (perRank)
    {
        j["ranks"] = report.ranks;
    }
    if (timing)
    {
        j["wall_time_s"] = report.wallTimeS;
    }
    j["input"] = input;
    return DumpJson(j);
}

} // namespace

int
RunRunCommand(const CliArgs& args)
{
    ResolvedJob job = ReadJobOptions(args);
    {
        // run times the batch as one static batch; vLLM's scheduler would not (study serving
        // times its steps).
        const RunSpec& run = job.run;
        const uint64_t promptTokens =
            uint64_t(run.promptTokens - std::min(run.promptTokens, run.cachedPrefix)) * run.batch;
        const uint32_t budget = run.mode == RunMode::INFERENCE && run.engine == "vllm"
                                    ? run.ProfileTokensOn(job.hardware.gpu)
                                    : 0;
        if (budget > 0 && promptTokens > budget)
        {
            std::cerr << "rapid-llm run: note: the batch's " << promptTokens
                      << " prompt tokens are prefilled in one forward, where vLLM's scheduler "
                         "runs at most its "
                      << budget
                      << "-token budget a step (the memory verdict counts a step of the "
                         "budget): study serving --batching=continuous or chunked times vLLM's "
                         "steps\n";
        }
    }
    const bool timing = args.Flag("timing");
    const bool perRank = args.Flag("per-rank");
    std::string backend;
    std::string routing;
    JobBackendAndRouting(args, job, backend, routing);
    const std::string packet = args.Text("packet");
    Ptr<RapidLlmHelper> helper = CreateObject<RapidLlmHelper>();
    helper->SetBackend(backend);
    if (!routing.empty())
    {
        helper->SetRoutingPolicy(routing);
    }
    helper->SetReplayerAttribute("Symmetry", BooleanValue(args.Flag("symmetry")));
    helper->SetModel(job.model);
    helper->SetHardware(job.hardware);
    helper->SetRun(job.run);
    helper->SetTimedFaults(job.timedFaults);
    helper->SetSlowGpus(job.slowGpus);
    helper->SetGpuVariants(job.gpuVariants);
    // The output directory first: a --timeline inside it is checked before the run.
    const std::string out = args.Text("out");
    std::optional<NewOutputDir> outDir;
    if (!out.empty())
    {
        outDir.emplace(out);
    }
    RunReport report = RunObserved(args,
                                   "run",
                                   helper,
                                   [&]()
                                   {
                                       return helper->Run();
                                   });
    // A fault timed after the step ended changed nothing: said, as a mistyped time would be
    // (a bare number is seconds; --fault=...@2 where 2ms was meant runs a healthy step).
    for (const ScheduledFault& f : job.timedFaults)
    {
        if (f.factor < 1 && f.start.GetSeconds() >= report.stepTimeS)
        {
            std::cerr << "rapid-llm run: note: the fault on " << f.selector << " starts at "
                      << FormatNumber(f.start.GetSeconds()) << " s, after the "
                      << (report.haveTokens ? "request" : "step") << " ended ("
                      << FormatNumber(report.stepTimeS)
                      << " s): it changed nothing (a time without a unit is seconds: @2ms for "
                         "milliseconds)\n";
        }
    }
    Json input = JobInputJson(job, backend, routing, packet);
    // How the network runs the collectives and whether symmetric copies are folded: both can
    // move the figures.
    input["granularity"] = args.HasValue("granularity") ? args.Text("granularity") : "auto";
    input["symmetry"] = args.Flag("symmetry");
    if (!out.empty())
    {
        WriteWorkloadTraces(helper->BuildWorkload(),
                            (std::filesystem::path(out) / "trace").string(),
                            false,
                            job.CostedFor());
        WriteOutputFile((std::filesystem::path(out) / "report.json").string(),
                        ReportJson(report, perRank, timing, input));
        WriteBreakdownPng((std::filesystem::path(out) / "breakdown.png").string(),
                          report,
                          job.model.name + " " + report.mode
                              + (report.haveTokens ? " request on " : " step on ")
                              + std::to_string(report.gpus) + " x " + job.hardware.GpuLabel());
        outDir->Keep();
    }
    // The report in full either way; a job that does not fit says so in its exit status too
    // (and on stderr, after the report).
    auto status = [&]()
    {
        return report.feasible ? 0 : DoesNotFit("run", report.reason);
    };
    if (args.Flag("json"))
    {
        std::cout << ReportJson(report, perRank, timing, input);
        return status();
    }
    if (args.Flag("csv"))
    {
        std::cout << RunReportCsv(report, perRank);
        return status();
    }
    // The layout's axes: tp, pp and dp always, cp and ep where they split the job; a pipeline
    // schedule other than 1F1B.
    const ParallelSpec& p = job.run.parallel;
    std::cout << job.model.name << " " << report.mode << " on " << report.gpus << " x "
              << job.hardware.GpuLabel() << " (tp " << p.tp << ", pp " << p.pp << ", dp " << p.dp
              << (p.cp > 1 ? ", cp " + std::to_string(p.cp) : "")
              << (p.ep > 1 ? ", ep " + std::to_string(p.ep) : "")
              << (p.etp != 0 ? ", etp " + std::to_string(p.etp) : "")
              << (p.ZeroBubble() ? ", " + p.schedule : "") << ")\n"
              << report.ToText() << (perRank ? report.RanksToText() : "")
              << (report.haveMemory && !report.feasible
                      ? job.run.mode == RunMode::TRAINING
                            ? "  (rapid-llm memory with the same options gives the peak after "
                              "each single change: ZeRO, recomputation, micro-batch)\n"
                            : "  (rapid-llm memory with the same options gives the largest batch "
                              "that fits and the peak after each single change: batch, tp, pp, "
                              "weights' and KV cache's types)\n"
                      : "")
              << InputText(input);
    if (timing)
    {
        std::printf("  %-24s %.3f s\n", "wall time", report.wallTimeS);
    }
    return status();
}

static CliCommandRegistrar g_runCommand(
    "run",
    "predict a job's step time on a cluster, and why",
    "Predicts the step time of a job (one training iteration of the global batch, or one "
    "inference request) by replaying every rank's operator graph on the cluster network, with "
    "the memory verdict and a breakdown. A job that does not fit in GPU memory is still "
    "reported, and exits with status 3.",
    RunRunCommand);

} // namespace rapidllm
} // namespace ns3
