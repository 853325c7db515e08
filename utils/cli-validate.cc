/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// rapid-llm validate: predicts every published measurement in data/validation/ and prints
// published, predicted and error per row, with the mean and largest error per table.

#include "cli-commands.h"
#include "ns3/job-echo.h"
#include "ns3/report-output.h"
#include "ns3/spec-error.h"
#include "ns3/study-json.h"
#include "ns3/validation-suite.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <iostream>

namespace ns3 {
namespace rapidllm {

namespace {

/** One published table as validate runs it: its file and the row limit it runs under. */
struct ValidationTable
{
    std::string file;  //!< the file in the data folder
    std::string limit; //!< what the limit counts ("max_gpus", "max_generated"; "" = none)
    uint32_t value;    //!< the limit (0 = every row)
    std::function<std::vector<ValidationRow>(const std::string&, uint32_t)> run; //!< runs it
};

/** \return the tables validate runs, with the limits of --quick or of the full run */
std::vector<ValidationTable>
ValidationTables(bool quick)
{
    return {
        {"megatron-sc21-table1.csv", "max_gpus", quick ? 256u : 0u, ValidationSuite::RunTraining},
        {"lmdeploy-llama2-a100.csv",
         "max_generated",
         quick ? 128u : 0u,
         ValidationSuite::RunInference},
        {"mlenergy-llama2-energy.csv",
         "",
         0,
         [](const std::string& csv, uint32_t)
         {
             return ValidationSuite::RunEnergy(csv);
         }},
        {"nemo-h100-training.csv", "max_gpus", quick ? 64u : 1024u, ValidationSuite::RunNemoH100},
        {"nemo-h100-training.csv",
         "max_gpus",
         quick ? 64u : 1024u,
         ValidationSuite::RunNemoH100Moe},
        {"llmfoundry-h100-bf16-training.csv",
         "max_gpus",
         quick ? 8u : 0u,
         [](const std::string& csv, uint32_t maxGpus)
         {
             return ValidationSuite::RunFoundry(csv, "h100", maxGpus);
         }},
        {"llmfoundry-a100-bf16-training.csv",
         "max_gpus",
         quick ? 8u : 0u,
         [](const std::string& csv, uint32_t maxGpus)
         {
             return ValidationSuite::RunFoundry(csv, "a100", maxGpus);
         }},
        {"xla-h100-collectives.csv",
         "",
         0,
         [](const std::string& csv, uint32_t)
         {
             return ValidationSuite::RunCollectives(csv);
         }},
        {"nccl-tests-h100-4gpu-allreduce.csv",
         "",
         0,
         [](const std::string& csv, uint32_t)
         {
             return ValidationSuite::RunNcclTests(csv);
         }},
        {"nccl-tests-h100-hgx-slices.csv",
         "",
         0,
         [](const std::string& csv, uint32_t)
         {
             return ValidationSuite::RunNcclTestsSlices(csv);
         }},
        {"flash-attention-h100.csv",
         "",
         0,
         [](const std::string& csv, uint32_t)
         {
             return ValidationSuite::RunAttentionKernels(csv);
         }}};
}

} // namespace

int
RunValidateCommand(const CliArgs& args)
{
    const std::string data = args.Text("data");
    const bool quick = args.Flag("quick");
    const std::string only = args.Text("only");
    std::vector<ValidationTable> tables;
    std::string names;
    for (const ValidationTable& table : ValidationTables(quick))
    {
        // One file may feed more than one table (nemo-h100-training.csv: dense and MoE).
        if (names.find(table.file) == std::string::npos)
        {
            names += (names.empty() ? "" : ", ") + table.file;
        }
        if (table.file.find(only) != std::string::npos)
        {
            tables.push_back(table);
        }
    }
    if (tables.empty())
    {
        throw SpecError(kCommandLine,
                        "only",
                        "no table's file name contains '" + only + "'; the tables: " + names);
    }
    std::vector<ValidationRow> rows;
    // The input echo: what shapes the run (the tables and the limits they run under).
    Json input = {{"version", RapidLlmVersion()},
                  {"data", data},
                  {"quick", quick},
                  {"tables", Json::array()}};
    if (!only.empty())
    {
        input["only"] = only; // only here, so the echo of a whole run stays as it was
    }
    EchoAttributeDefaults(input);
    for (const ValidationTable& table : tables)
    {
        auto part = table.run(data + "/" + table.file, table.value);
        rows.insert(rows.end(), part.begin(), part.end());
        // The sets its rows belong to: one file may feed more than one (nemo-h100, -moe).
        std::vector<std::string> sets;
        for (const ValidationRow& r : part)
        {
            if (std::find(sets.begin(), sets.end(), r.set) == sets.end())
            {
                sets.push_back(r.set);
            }
        }
        Json t = {{"file", table.file}, {"sets", sets}, {"rows", part.size()}};
        if (!table.limit.empty())
        {
            t[table.limit] = table.value;
        }
        input["tables"].push_back(t);
    }
    // Each metric's summary against its bar, as the text prints it.
    Json summaries = Json::array();
    for (const ValidationBar& bar : ValidationSuite::Bars())
    {
        const ValidationSummary s = ValidationSuite::Summarize(rows, bar.metric);
        if (s.rows > 0)
        {
            summaries.push_back({{"metric", bar.metric},
                                 {"rows", s.rows},
                                 {"mean_abs_error", s.mean},
                                 {"largest_abs_error", s.worst},
                                 {"largest_row", s.worstLabel},
                                 {"bar_mean", bar.mean},
                                 {"bar_largest", bar.worst},
                                 {"met", s.Meets(bar)},
                                 {"enforced", bar.pending.empty()},
                                 {"note", bar.pending},
                                 {"rows_not_fitting", s.notFitting}});
        }
    }
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
        std::cout << DumpJson(Json{{"input", input}, {"rows", out}, {"summaries", summaries}});
        return 0;
    }
    if (args.Flag("csv"))
    {
        std::vector<std::string> header = {
            "set", "config", "metric", "published", "predicted", "error"};
        if (args.Flag("timing"))
        {
            header.push_back("wall_time_s");
        }
        std::cout << CsvLine(header);
        for (const auto& r : rows)
        {
            std::vector<std::string> line = {r.set,
                                             r.label,
                                             r.metric,
                                             FormatNumber(r.published),
                                             FormatNumber(r.predicted),
                                             FormatNumber(r.Error())};
            if (args.Flag("timing"))
            {
                line.push_back(FormatNumber(r.wallS));
            }
            std::cout << CsvLine(line);
        }
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
        // An error that rounds to 0.0% is printed +0.0%, not -0.0%.
        double percent = std::round(1000 * r.Error()) / 10;
        percent = percent == 0 ? 0.0 : percent;
        std::printf("%-14s %-34s %-26s %11.5g %11.5g %+7.1f%%",
                    r.set.c_str(),
                    r.label.c_str(),
                    r.metric.c_str(),
                    r.published,
                    r.predicted,
                    percent);
        if (timing)
        {
            std::printf(" %7.3fs", r.wallS);
        }
        // The measured configuration ran; a memory model that refuses it is wrong there.
        std::printf("%s\n", r.fits ? "" : "  (memory model: does not fit)");
    }
    for (const ValidationBar& bar : ValidationSuite::Bars())
    {
        ValidationSummary s = ValidationSuite::Summarize(rows, bar.metric);
        if (s.rows > 0)
        {
            // The bars are the full tables': --quick's smaller jobs are a subset, whose errors
            // can sit either side of them.
            std::printf("%-26s mean |error| %5.1f%%, largest %5.1f%% over %u rows%s (bar %.0f%% / "
                        "%.0f%%%s: %s%s)\n",
                        bar.metric.c_str(),
                        100 * s.mean,
                        100 * s.worst,
                        s.rows,
                        s.notFitting > 0 ? (", " + std::to_string(s.notFitting)
                                            + " of them refused by the memory model")
                                               .c_str()
                                         : "",
                        100 * bar.mean,
                        100 * bar.worst,
                        quick ? " of the full table; on this --quick subset" : "",
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
    "pre-training, FP8; MosaicML LLM Foundry MPT training on H100 and A100, BF16 FSDP; XLA's "
    "measured NCCL all-reduce and all-gather among 2, 4 and 8 H100; nccl-tests' 4x H100 "
    "all-reduce; nccl-tests' all-reduce and all-gather on 2-, 4- and 6-GPU slices of an 8x H100 "
    "node; FlashAttention-3's published FlashAttention-2, cuDNN and FlashAttention-3 kernel rates "
    "on "
    "one H100) "
    "with one efficiency set per GPU and prints published, predicted and error per row.",
    RunValidateCommand);

} // namespace rapidllm
} // namespace ns3
