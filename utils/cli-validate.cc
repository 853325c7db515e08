/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// rapid-llm validate: predicts every published measurement in data/validation/ and prints
// published, predicted and error per row, with the mean and largest error per table.

#include "cli-commands.h"
#include "ns3/command-line.h"
#include "ns3/json-writer.h"
#include "ns3/validation-suite.h"

#include <cmath>
#include <cstdio>
#include <iostream>

namespace ns3 {
namespace rapidllm {

int
RunValidateCommand(int argc, char** argv)
{
    std::string data = ValidationSuite::DataDir();
    bool quick = false;
    bool json = false;
    CommandLine cmd("rapid-llm validate");
    cmd.Usage("Predicts the published measurements in data/validation/ (Megatron-LM SC21 Table 1 "
              "training, lmdeploy Llama-2 inference on A100-80GB) with one efficiency set and "
              "prints published, predicted and error per row.");
    cmd.AddValue("data", "folder of the published tables", data);
    cmd.AddValue("quick", "only rows up to 256 GPUs and 128 generated tokens", quick);
    cmd.AddValue("json", "print the rows as a JSON list", json);
    CheckOptions(argc, argv, {"data", "quick", "json"});
    cmd.Parse(argc, argv);

    auto rows = ValidationSuite::RunTraining(data + "/megatron-sc21-table1.csv", quick ? 256 : 0);
    auto inference =
        ValidationSuite::RunInference(data + "/lmdeploy-llama2-a100.csv", quick ? 128 : 0);
    rows.insert(rows.end(), inference.begin(), inference.end());
    if (json)
    {
        JsonWriter out;
        out.BeginArray();
        for (const auto& r : rows)
        {
            out.BeginObject()
                .Value("set", r.set)
                .Value("config", r.label)
                .Value("metric", r.metric)
                .Value("published", r.published)
                .Value("predicted", r.predicted)
                .Value("error", r.Error())
                .Value("wall_time_s", r.wallS)
                .EndObject();
        }
        out.EndArray();
        std::cout << out.Str();
        return 0;
    }
    std::printf("%-14s %-34s %-14s %11s %11s %8s\n",
                "set",
                "configuration",
                "metric",
                "published",
                "predicted",
                "error");
    for (const auto& r : rows)
    {
        std::printf("%-14s %-34s %-14s %11.4f %11.4f %+7.1f%%\n",
                    r.set.c_str(),
                    r.label.c_str(),
                    r.metric.c_str(),
                    r.published,
                    r.predicted,
                    100 * r.Error());
    }
    for (const ValidationBar& bar : ValidationSuite::Bars())
    {
        ValidationSummary s = ValidationSuite::Summarize(rows, bar.metric);
        if (s.rows > 0)
        {
            std::printf("%-14s mean |error| %5.1f%%, largest %5.1f%% over %u rows (bar %.0f%% / "
                        "%.0f%%: %s)\n",
                        bar.metric.c_str(),
                        100 * s.mean,
                        100 * s.worst,
                        s.rows,
                        100 * bar.mean,
                        100 * bar.worst,
                        s.Meets(bar) ? "met" : "not met");
        }
    }
    return 0;
}

static CliCommandRegistrar g_validateCommand("validate",
                                             "compare predictions with published measurements",
                                             RunValidateCommand);

} // namespace rapidllm
} // namespace ns3
