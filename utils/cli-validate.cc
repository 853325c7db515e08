/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// rapid-llm validate: predicts every published measurement in data/validation/ and prints
// published, predicted and error per row, with the mean and largest error per table.

#include "cli-commands.h"
#include "ns3/study-json.h"
#include "ns3/validation-suite.h"

#include <cmath>
#include <cstdio>
#include <iostream>

namespace ns3 {
namespace rapidllm {

int
RunValidateCommand(const CliArgs& args)
{
    const std::string data = args.Text("data");
    const bool quick = args.Flag("quick");
    auto rows = ValidationSuite::RunTraining(data + "/megatron-sc21-table1.csv", quick ? 256 : 0);
    auto inference =
        ValidationSuite::RunInference(data + "/lmdeploy-llama2-a100.csv", quick ? 128 : 0);
    rows.insert(rows.end(), inference.begin(), inference.end());
    auto energy = ValidationSuite::RunEnergy(data + "/mlenergy-llama2-energy.csv");
    rows.insert(rows.end(), energy.begin(), energy.end());
    auto nemo = ValidationSuite::RunNemoH100(data + "/nemo-h100-training.csv", quick ? 64 : 512);
    rows.insert(rows.end(), nemo.begin(), nemo.end());
    auto collectives = ValidationSuite::RunCollectives(data + "/xla-h100-collectives.csv");
    rows.insert(rows.end(), collectives.begin(), collectives.end());
    if (args.Flag("json"))
    {
        Json out = Json::array();
        for (const auto& r : rows)
        {
            Json row = r;
            if (args.Flag("timing"))
            {
                row["wall_time_s"] = r.wallS;
            }
            out.push_back(row);
        }
        std::cout << DumpJson(out);
        return 0;
    }
    const bool timing = args.Flag("timing");
    std::printf("%-14s %-34s %-26s %11s %11s %8s%s\n",
                "set",
                "configuration",
                "metric",
                "published",
                "predicted",
                "error",
                timing ? "     wall" : "");
    for (const auto& r : rows)
    {
        std::printf("%-14s %-34s %-26s %11.4f %11.4f %+7.1f%%",
                    r.set.c_str(),
                    r.label.c_str(),
                    r.metric.c_str(),
                    r.published,
                    r.predicted,
                    100 * r.Error());
        if (timing)
        {
            std::printf(" %7.3fs", r.wallS);
        }
        std::printf("\n");
    }
    for (const ValidationBar& bar : ValidationSuite::Bars())
    {
        ValidationSummary s = ValidationSuite::Summarize(rows, bar.metric);
        if (s.rows > 0)
        {
            std::printf("%-26s mean |error| %5.1f%%, largest %5.1f%% over %u rows (bar %.0f%% / "
                        "%.0f%%: %s%s)\n",
                        bar.metric.c_str(),
                        100 * s.mean,
                        100 * s.worst,
                        s.rows,
                        100 * bar.mean,
                        100 * bar.worst,
                        s.Meets(bar) ? "met" : "not met",
                        bar.pending.empty() ? "" : ("; not enforced: " + bar.pending).c_str());
        }
    }
    return 0;
}

static CliCommandRegistrar g_validateCommand(
    "validate",
    "compare predictions with published measurements",
    "Predicts the published measurements in data/validation/ (Megatron-LM SC21 Table 1 training, "
    "lmdeploy Llama-2 inference on A100-80GB, ML.ENERGY Llama-2 energy per token on A100; NeMo "
    "DGX-H100 "
    "pre-training, FP8; XLA's measured NCCL all-reduce and all-gather among 2, 4 and 8 H100) "
    "with one efficiency set per GPU and prints published, predicted and error per row.",
    RunValidateCommand);

} // namespace rapidllm
} // namespace ns3
