/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "hardware-study.h"

#include "job-echo.h"
#include "ns3/boolean.h"
#include "ns3/memory-alternatives.h"
#include "ns3/spec-error.h"
#include "ns3/spec-override.h"
#include "rapid-llm-helper.h"
#include "report-output.h"
#include "staged-output-dir.h"
#include "study-plot.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace ns3 {
namespace rapidllm {

namespace {

/** \return whether the row is an inference request */
bool
Inference(const HardwareStudyRow& r)
{
    return r.job.run.mode == RunMode::INFERENCE;
}

} // namespace

std::vector<std::string>
ParseVary(const std::string& text, std::string& field)
{
    const std::size_t eq = text.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 >= text.size())
    {
        throw SpecError("command line",
                        "vary",
                        "'" + text
                            + "': use FIELD=V1,V2,... with FIELD as --set names it, e.g. "
                              "--vary=gpu.hbm_gib=0.5x,0.75x,1x,2x");
    }
    field = text.substr(0, eq);
    // Commas inside a list or map value ("network.nvlink.shape=[8],[2,4]") belong to it.
    std::vector<std::string> values;
    for (const std::string& v : SpecOverride::SplitTopLevel(text.substr(eq + 1)))
    {
        if (v.empty())
        {
            throw SpecError("command line", "vary", "an empty value in '" + text + "'");
        }
        // Each value must make a well-formed override (a value or a scale).
        try
        {
            SpecOverride::Parse(field + "=" + v, "command line");
        }
        catch (const SpecError& e)
        {
            throw SpecError("command line", "vary", e.GetMessage());
        }
        if (std::find(values.begin(), values.end(), v) != values.end())
        {
            throw SpecError("command line",
                            "vary",
                            "'" + v + "' is given twice in '" + text + "'; give each value once");
        }
        values.push_back(v);
    }
    return values;
}

std::vector<HardwareStudyRow>
RunHardwareStudy(const JobOptions& options,
                 const std::string& field,
                 const std::vector<std::string>& values,
                 const std::string& backend,
                 const std::string& routing,
                 bool symmetry)
{
    // The model's shape options are applied after the spec overrides, so a field one of them
    // also sets would keep the option's value in every row, whatever the row's label says.
    const std::vector<std::pair<std::string, std::vector<std::string>>> shape = {
        {"layers", {"model.layers"}},
        {"hidden", {"model.hidden"}},
        {"heads", {"model.heads", "model.kv_heads"}},
        {"kv-heads", {"model.kv_heads"}},
        {"ffn", {"model.ffn", "model.moe.expert_ffn"}},
        {"vocab", {"model.vocab"}},
    };
    for (const auto& [option, fields] : shape)
    {
        const std::string given = options.Get(option);
        if (given.empty())
        {
            continue;
        }
        // Every shape option also sets the head dimension (hidden / heads).
        if (field == "model.head_dim"
            || std::find(fields.begin(), fields.end(), field) != fields.end())
        {
            throw SpecError("command line",
                            "vary",
                            "'" + field + "' is also set by --" + option + "=" + given
                                + ", which would override every varied value; drop --" + option
                                + " (or vary another field)");
        }
    }
    // Every variant resolved first: two values that give the same job (700, 1x, 7e2) would be
    // the same row twice.
    std::vector<HardwareStudyRow> rows;
    std::vector<JobOptions> variants;
    for (const auto& value : values)
    {
        HardwareStudyRow row;
        row.value = value;
        row.set = field + "=" + value;
        JobOptions variant = options;
        const std::string set = options.Get("set");
        variant.Set("set", set.empty() ? row.set : set + "," + row.set);
        try
        {
            row.job = variant.ToSpecs();
        }
        catch (const SpecError& e)
        {
            // Which variant: a --fault that names a node of the base network can miss in a
            // variant of another shape (network.nvlink.size=4).
            throw SpecError(e.GetFile(),
                            e.GetField(),
                            e.GetMessage() + " (in the variant " + row.set + ")",
                            e.GetLine());
        }
        for (const HardwareStudyRow& earlier : rows)
        {
            if (earlier.job.model == row.job.model && earlier.job.hardware == row.job.hardware
                && earlier.job.run == row.job.run)
            {
                throw SpecError("command line",
                                "vary",
                                "'" + earlier.value + "' and '" + value + "' give " + field
                                    + " the same value; give each value once");
            }
        }
        rows.push_back(row);
        variants.push_back(variant);
    }
    for (std::size_t i = 0; i < rows.size(); ++i)
    {
        HardwareStudyRow& row = rows[i];
        const JobOptions& variant = variants[i];
        Ptr<RapidLlmHelper> helper = CreateObject<RapidLlmHelper>();
        helper->SetBackend(backend.empty() ? "flow" : backend);
        if (!routing.empty())
        {
            helper->SetRoutingPolicy(routing);
        }
        helper->SetReplayerAttribute("Symmetry", BooleanValue(symmetry));
        variant.Apply(helper);
        row.report = helper->Run();
        helper->Dispose();
        if (!row.report.feasible && row.job.run.mode == RunMode::INFERENCE)
        {
            // What the variant holds instead: the question its user asks next.
            row.largestBatch =
                LargestFittingBatch(row.job.model, row.job.run, row.job.hardware.gpu);
            row.report.reason += "; " + LargestBatchText(row.largestBatch);
        }
    }
    return rows;
}

std::string
HardwareStudyCsv(const std::string& field, const std::vector<HardwareStudyRow>& rows)
{
    std::ostringstream os;
    os << "field,value,fits,step_time_s,ttft_s,tpot_s,tflops_per_gpu,mfu,compute_s,"
          "exposed_comm_s,bubble_s,energy_j,energy_per_token_j,avg_power_w,peak_memory_gib,"
          "capacity_gib,reason,host_s,tokens_per_s_per_gpu\n";
    for (const auto& r : rows)
    {
        const RunReport& p = r.report;
        os << CsvField(field) << "," << CsvField(r.value) << "," << (p.feasible ? "true" : "false")
           << ",";
        // A variant that does not fit is predicted all the same (as run's CSV and the JSON
        // report: the times of a job that could not run), its fits column false.
        os << FormatNumber(p.stepTimeS) << "," << (Inference(r) ? FormatNumber(p.ttftS) : "") << ","
           << (Inference(r) && p.tpotDefined ? FormatNumber(p.tpotS) : "") << ","
           << (Inference(r) ? "" : FormatNumber(p.tflopsPerGpu)) << ","
           << (Inference(r) ? "" : FormatNumber(p.mfu)) << "," << FormatNumber(p.computeS) << ","
           << FormatNumber(p.exposedCommS) << "," << FormatNumber(p.bubbleS) << ",";
        // As run's CSV: empty without a power model, energy per token in inference only.
        auto energy = [&p](double v, bool applies = true)
        {
            return p.haveEnergy && applies ? FormatNumber(v) : std::string();
        };
        os << energy(p.energyJ) << "," << energy(p.energyPerTokenJ, Inference(r)) << ","
           << energy(p.avgPowerW) << ",";
        os << FormatNumber(ToGib(p.memory.peak)) << "," << FormatNumber(ToGib(p.capacityBytes))
           << ",";
        os << CsvField(p.feasible ? "" : p.reason) << "," << FormatNumber(p.hostWaitS) << ","
           << (Inference(r) && p.haveTokens ? FormatNumber(p.tokensPerSPerGpu) : "") << "\n";
    }
    return os.str();
}

Json
HardwareStudyJson(const std::string& field,
                  const std::vector<HardwareStudyRow>& rows,
                  const std::string& backend,
                  const std::string& routing,
                  const std::string& packet)
{
    Json j;
    j["version"] = RapidLlmVersion();
    j["field"] = field;
    Json list = Json::array();
    for (const auto& r : rows)
    {
        list.push_back({{"value", r.value},
                        {"set", r.set},
                        {"input", JobInputJson(r.job, backend, routing, packet)},
                        {"report", Json(r.report)}});
    }
    j["rows"] = list;
    return j;
}

bool
WriteHardwareStudy(const std::string& dir,
                   const std::string& field,
                   const std::vector<HardwareStudyRow>& rows,
                   const std::string& backend,
                   const std::string& routing,
                   const std::string& packet)
{
    StagedOutputDir staged(dir);
    const std::filesystem::path out(staged.GetPath());
    WriteOutputFiles({{(out / "results.csv").string(), HardwareStudyCsv(field, rows)},
                      {(out / "results.json").string(),
                       DumpJson(HardwareStudyJson(field, rows, backend, routing, packet))}});

    if (rows.empty())
    {
        staged.Commit();
        return false;
    }
    const bool inference = Inference(rows.front());
    PlotSpec time;
    time.title = rows.front().job.model.name + " on " + rows.front().job.hardware.name + ": "
                 + field + " varied";
    time.xLabel = field;
    time.yLabel = inference ? "time per output token (ms)" : "step time (s)";
    time.y2Label = "time to first token (ms)";
    PlotSpec memory;
    memory.title = rows.front().job.model.name + ": peak memory per GPU as " + field + " varies";
    memory.xLabel = field;
    memory.yLabel = "GiB per GPU";
    PlotSeries main{inference ? "time per output token" : "step time", {}};
    PlotSeries first{"time to first token (right axis)", {}, true};
    // Training: the energy of a step beside its time, where the GPU has a power model.
    PlotSeries energy{"energy a step (right axis)", {}, true};
    PlotSeries peak{"peak memory", {}};
    PlotSeries capacity{"capacity", {}};
    for (std::size_t i = 0; i < rows.size(); ++i)
    {
        const RunReport& p = rows[i].report;
        const double x = double(i);
        time.xLabels.push_back({x, rows[i].value});
        memory.xLabels.push_back({x, rows[i].value});
        if (p.feasible && (!inference || p.tpotDefined))
        {
            main.points.push_back({x, inference ? p.tpotS * 1e3 : p.stepTimeS});
            first.points.push_back({x, p.ttftS * 1e3});
            if (p.haveEnergy)
            {
                energy.points.push_back({x, p.energyJ / 1e3});
            }
        }
        peak.points.push_back({x, ToGib(p.memory.peak)});
        capacity.points.push_back({x, ToGib(p.capacityBytes)});
    }
    if (!inference)
    {
        time.y2Label = "energy a step, all GPUs (kJ)";
    }
    for (const auto& s :
         inference ? std::vector<PlotSeries>{main, first} : std::vector<PlotSeries>{main, energy})
    {
        if (!s.points.empty())
        {
            time.series.push_back(s);
        }
    }
    memory.series = {peak, capacity};
    if (!time.series.empty())
    {
        WritePlotPng((out / "step-time.png").string(), time);
    }
    WritePlotPng((out / "memory.png").string(), memory);
    staged.Commit();
    return !time.series.empty();
}

} // namespace rapidllm
} // namespace ns3
