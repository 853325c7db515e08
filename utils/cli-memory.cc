/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// rapid-llm memory: the per-GPU memory-feasibility verdict of a job.

#include "cli-commands.h"
#include "cli-job-options.h"
#include "ns3/job-echo.h"
#include "ns3/memory-alternatives.h"
#include "ns3/memory-model.h"
#include "ns3/report-json.h"
#include "ns3/report-output.h"
#include "ns3/workload.h"

#include <algorithm>
#include <cstdio>
#include <iostream>

namespace ns3 {
namespace rapidllm {

namespace {
std::string
Gib(uint64_t bytes)
{
    char buffer[32];
    std::snprintf(buffer, sizeof(buffer), "%8.2f GiB", bytes / double(1ull << 30));
    return buffer;
}
} // namespace

int
RunMemoryCommand(const CliArgs& args)
{
    ResolvedJob job = ReadJobOptions(args);
    MemoryReport report = AnalyzeMemory(job.model, job.run, job.hardware.gpu);
    // The verdict in full either way; a job that does not fit says so in its exit status too
    // (and on stderr, after the report).
    auto status = [&]()
    {
        return report.feasible ? 0 : DoesNotFit("memory", report.reason);
    };
    // Only a job that does not fit has changes to list (a fitting one is not built again).
    const auto alternatives = report.feasible
                                  ? std::vector<MemoryAlternative>()
                                  : MemoryAlternatives(job.model, job.run, job.hardware.gpu);
    if (args.Flag("json"))
    {
        // The "memory" object of `rapid-llm run --json`, with what the text adds (the largest
        // batch, the single changes) and the job's input beside it (as run echoes it, without a
        // network backend or routing: nothing runs on the network).
        Json j = report;
        if (job.run.mode == RunMode::INFERENCE)
        {
            j["largest_batch"] = LargestFittingBatch(job.model, job.run, job.hardware.gpu);
        }
        if (!report.feasible)
        {
            j["alternatives"] = Json::array();
            for (const MemoryAlternative& a : alternatives)
            {
                j["alternatives"].push_back({{"option", a.option},
                                             {"peak_bytes", a.report.worst.peak},
                                             {"fits", a.report.feasible},
                                             {"assumption", a.report.assumption}});
            }
        }
        j["input"] = JobInputJson(job, "", "");
        std::cout << DumpJson(j);
        return status();
    }
    if (args.Flag("csv"))
    {
        std::cout << MemoryReportCsv(report,
                                     job.run.mode == RunMode::INFERENCE ? int64_t(
                                         LargestFittingBatch(job.model, job.run, job.hardware.gpu))
                                                                        : -1);
        return status();
    }
    const RankMemory& m = report.worst;
    std::cout << job.model.name << " " << ToString(job.run.mode) << " on "
              << job.run.parallel.Gpus() << " x " << job.hardware.GpuLabel() << "\n"
              << "Peak memory per GPU (pipeline stage " << m.stage << ", the highest):\n"
              << "  weights      " << Gib(m.weights) << "\n"
              << "  gradients    " << Gib(m.gradients) << "\n"
              << "  optimizer    " << Gib(m.optimizer) << "\n"
              << "  activations  " << Gib(m.activations) << "\n"
              << "  kv cache     " << Gib(m.kvCache) << "\n"
              << "  framework    " << Gib(m.framework) << "\n"
              << "  peak         " << Gib(m.peak) << " of " << Gib(report.capacity) << "\n"
              << (report.feasible ? "Fits." : "Does not fit: " + report.reason) << "\n";
    if (!alternatives.empty())
    {
        std::cout << "One change at a time (the rest as given):\n";
        for (const MemoryAlternative& a : alternatives)
        {
            char line[96];
            std::snprintf(line,
                          sizeof(line),
                          "  %-22s %s  %s\n",
                          a.option.c_str(),
                          Gib(a.report.worst.peak).c_str(),
                          a.report.feasible ? "fits" : "does not fit");
            std::cout << line;
        }
        // A change of ZeRO stage can change the framework (DeepSpeed's or FSDP's layout for
        // ZeRO-2 and -3, not Megatron-LM's 18 bytes a parameter): its peak is of that layout.
        for (const MemoryAlternative& a : alternatives)
        {
            if (a.report.assumption != report.assumption)
            {
                std::cout << "  (" << a.option << " assumes " << a.report.assumption << ")\n";
            }
        }
    }
    if (job.run.mode == RunMode::INFERENCE)
    {
        const uint32_t largest = LargestFittingBatch(job.model, job.run, job.hardware.gpu);
        const uint64_t tokens = uint64_t(job.run.promptTokens) + job.run.generatedTokens;
        if (largest == 0)
        {
            const uint32_t fewest = std::max<uint32_t>(1, job.run.inflightBatches);
            std::cout << (fewest > 1 ? "Not even " + std::to_string(fewest)
                                           + " requests (one for each batch in flight) of "
                                     : std::string("Not even one request of "))
                      << tokens << " tokens " << (fewest > 1 ? "fit" : "fits") << ".\n";
        }
        else
        {
            std::cout << "Fits up to batch " << largest << ": requests of " << tokens
                      << " tokens (prompt + generated"
                      << (job.run.sharedPrefix
                              ? ", the first " + std::to_string(job.run.cachedPrefix)
                                    + " shared and cached once"
                          : job.run.prefixGroups > 0
                              ? ", the first " + std::to_string(job.run.cachedPrefix)
                                    + " cached once for each of "
                                    + std::to_string(job.run.prefixGroups) + " groups"
                              : std::string())
                      << ") held at once per replica.\n";
        }
    }
    std::cout << "Assumed: " << report.assumption << "\n" << JobInputText(job, "", "");
    return status();
}

static CliCommandRegistrar g_memoryCommand(
    "memory",
    "per-GPU peak memory of a job and whether it fits",
    "Reports each GPU's peak memory (weights, gradients, optimizer state, activations from a "
    "liveness walk of the schedule, KV cache) and whether the job fits; one that does not exits "
    "with status 3.",
    RunMemoryCommand);

} // namespace rapidllm
} // namespace ns3
