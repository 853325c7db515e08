/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// rapid-llm sweep: predicts every training layout of a job on a fixed number of GPUs and ranks
// them by step time (the ones that fit in memory) and peak memory (the ones that do not).

#include "cli-commands.h"
#include "cli-job-options.h"
#include "ns3/command-line.h"
#include "ns3/json-writer.h"
#include "ns3/layout-sweep.h"
#include "ns3/network-backend.h"
#include "ns3/spec-error.h"
#include "ns3/spec-reader.h"

#include <cstdio>
#include <iostream>
#include <sstream>

namespace ns3 {
namespace rapidllm {

namespace {
/** Parses "1,2,4" into positive numbers; throws SpecError naming the option. */
std::vector<uint32_t>
ParseCounts(const std::string& option, const std::string& text)
{
    std::vector<uint32_t> out;
    std::stringstream ss(text);
    std::string item;
    while (std::getline(ss, item, ','))
    {
        try
        {
            std::size_t used = 0;
            const unsigned long v = std::stoul(item, &used);
            if (used != item.size() || v == 0 || v > 1000000)
            {
                throw std::invalid_argument(item);
            }
            out.push_back(static_cast<uint32_t>(v));
        }
        catch (const std::exception&)
        {
            throw SpecError("command line",
                            "--" + option,
                            "'" + item
                                + "' is not a positive whole number; give a list like 1,2,4");
        }
    }
    if (out.empty())
    {
        throw SpecError("command line", "--" + option, "empty list; give a list like 1,2,4");
    }
    return out;
}

/** Parses "none,full" into recomputation modes. */
std::vector<Recompute>
ParseRecomputeList(const std::string& text)
{
    std::vector<Recompute> out;
    std::stringstream ss(text);
    std::string item;
    while (std::getline(ss, item, ','))
    {
        out.emplace_back();
        ParseRecompute(Choice("recompute", item, RecomputeNames()), out.back());
    }
    if (out.empty())
    {
        throw SpecError("command line", "--recompute", "empty list; e.g. none,selective,full");
    }
    return out;
}

/** Parses a whole number option. */
uint32_t
ParseCount(const std::string& option, const std::string& text)
{
    std::vector<uint32_t> v = ParseCounts(option, text);
    if (v.size() != 1)
    {
        throw SpecError("command line", "--" + option, "one number, not a list");
    }
    return v[0];
}
} // namespace

int
RunSweepCommand(int argc, char** argv)
{
    std::string model = "gpt3-175b";
    std::string hardware = "a100-sxm-80gb";
    std::string gpus;
    std::string gbs;
    std::string seq = "2048";
    std::string dtype = "bf16";
    std::string attention = "flash";
    std::string sp = "false";
    std::string zero = "0";
    std::string tp = "1,2,4,8";
    std::string pp;
    std::string mbs = "1,2,4";
    std::string vpp = "1";
    std::string recompute = "full";
    std::string backend = "flow";
    std::string top = "10";
    bool json = false;
    CommandLine cmd("rapid-llm sweep");
    cmd.Usage("Predicts every training layout (tp x pp x dp = GPUs, micro-batch, interleaving, "
              "recomputation) of a job and ranks them: the layouts that fit in memory by step "
              "time, then the others by peak memory. Lists are comma-separated.");
    cmd.AddValue("model", "model preset name or YAML file", model);
    cmd.AddValue("hardware", "hardware preset name or YAML file", hardware);
    cmd.AddValue("gpus", "GPUs of the job (required)", gpus);
    cmd.AddValue("gbs", "global batch size in sequences (required)", gbs);
    cmd.AddValue("seq", "sequence length (tokens)", seq);
    cmd.AddValue("dtype", "compute type: fp32, tf32, fp16, bf16, fp8, int8", dtype);
    cmd.AddValue("attention", "attention kernels: flash or standard", attention);
    cmd.AddValue("sp", "sequence parallelism where tp > 1: true or false", sp);
    cmd.AddValue("zero", "ZeRO stage 0-3", zero);
    cmd.AddValue("tp", "tensor parallel degrees to try", tp);
    cmd.AddValue(
        "pp", "pipeline degrees to try (default: every divisor of the layers and GPUs)", pp);
    cmd.AddValue("mbs", "micro-batch sizes to try", mbs);
    cmd.AddValue("vpp", "virtual pipeline stages per rank to try", vpp);
    cmd.AddValue("recompute", "recomputation modes to try: none, selective, full", recompute);
    cmd.AddValue("backend", "network backend: " + JoinNames(NetworkBackend::Names()), backend);
    cmd.AddValue("top", "layouts to print of each kind (0: all)", top);
    cmd.AddValue("json", "print every layout as a JSON list", json);
    CheckOptions(argc,
                 argv,
                 {"model",
                  "hardware",
                  "gpus",
                  "gbs",
                  "seq",
                  "dtype",
                  "attention",
                  "sp",
                  "zero",
                  "tp",
                  "pp",
                  "mbs",
                  "vpp",
                  "recompute",
                  "backend",
                  "top",
                  "json"});
    cmd.Parse(argc, argv);
    if (gpus.empty() || gbs.empty())
    {
        throw SpecError("command line", gpus.empty() ? "--gpus" : "--gbs", "required");
    }
    Choice("sp", sp, {"true", "false"});
    Choice("attention", attention, {"flash", "standard"});
    Choice("zero", zero, {"0", "1", "2", "3"});
    Choice("dtype", dtype, DataTypeNames());

    ModelSpec m = ModelSpec::Load(model);
    HardwareSpec h = HardwareSpec::Load(hardware);
    RunSpec base;
    base.globalBatch = ParseCount("gbs", gbs);
    base.sequence = ParseCount("seq", seq);
    ParseDataType(dtype, base.dtype);
    base.flashAttention = attention == "flash";
    base.parallel.sequenceParallel = sp == "true";
    base.parallel.zeroStage = static_cast<uint32_t>(std::stoul(zero));
    SweepSpace space;
    space.gpus = ParseCount("gpus", gpus);
    space.tp = ParseCounts("tp", tp);
    if (!pp.empty())
    {
        space.pp = ParseCounts("pp", pp);
    }
    space.microBatch = ParseCounts("mbs", mbs);
    space.virtualStages = ParseCounts("vpp", vpp);
    space.recompute = ParseRecomputeList(recompute);
    const uint32_t shown = top == "0" ? 0 : ParseCount("top", top);

    LayoutSweep sweep(m, h, base, space, backend);
    std::vector<SweepPoint> points = sweep.Run();
    uint32_t fitting = 0;
    for (const auto& p : points)
    {
        fitting += p.report.feasible ? 1 : 0;
    }
    if (json)
    {
        JsonWriter out;
        out.BeginArray();
        for (const auto& p : points)
        {
            out.BeginObject()
                .Value("tp", p.run.parallel.tp)
                .Value("pp", p.run.parallel.pp)
                .Value("dp", p.run.parallel.dp)
                .Value("vpp", p.run.parallel.virtualStages)
                .Value("mbs", p.run.microBatch)
                .Value("recompute", ToString(p.run.recompute))
                .Value("feasible", p.report.feasible)
                .Value("reason", p.report.reason)
                .Value("peak_bytes", p.report.memory.peak);
            if (p.report.feasible)
            {
                out.Value("step_time_s", p.report.stepTimeS)
                    .Value("tflops_per_gpu", p.report.tflopsPerGpu)
                    .Value("mfu", p.report.mfu);
            }
            out.EndObject();
        }
        out.EndArray();
        std::cout << out.Str();
        return 0;
    }
    std::printf("%s training on %u x %s, global batch %u, sequence %u: %zu layouts, %u fit in "
                "memory, %u ruled out by the model or batch\n",
                m.name.c_str(),
                space.gpus,
                h.gpu.name.c_str(),
                base.globalBatch,
                base.sequence,
                points.size(),
                fitting,
                sweep.GetSkipped());
    std::printf("%4s %4s %4s %5s %4s %4s %-10s %10s %8s %6s %9s\n",
                "rank",
                "tp",
                "pp",
                "dp",
                "vpp",
                "mbs",
                "recompute",
                "step_s",
                "TFLOP/s",
                "MFU",
                "peak_GiB");
    uint32_t rank = 0;
    uint32_t unfitShown = 0;
    for (const auto& p : points)
    {
        if (p.report.feasible ? (shown > 0 && rank >= shown) : (shown > 0 && unfitShown >= shown))
        {
            continue;
        }
        const double gib = p.report.memory.peak / double(1ull << 30);
        if (p.report.feasible)
        {
            std::printf("%4u %4u %4u %5u %4u %4u %-10s %10.4f %8.1f %5.1f%% %9.2f\n",
                        ++rank,
                        p.run.parallel.tp,
                        p.run.parallel.pp,
                        p.run.parallel.dp,
                        p.run.parallel.virtualStages,
                        p.run.microBatch,
                        ToString(p.run.recompute).c_str(),
                        p.report.stepTimeS,
                        p.report.tflopsPerGpu,
                        100 * p.report.mfu,
                        gib);
        }
        else
        {
            if (unfitShown++ == 0)
            {
                std::printf("does not fit (lowest peak first):\n");
            }
            std::printf("%4s %4u %4u %5u %4u %4u %-10s %10s %8s %6s %9.2f\n",
                        "-",
                        p.run.parallel.tp,
                        p.run.parallel.pp,
                        p.run.parallel.dp,
                        p.run.parallel.virtualStages,
                        p.run.microBatch,
                        ToString(p.run.recompute).c_str(),
                        "-",
                        "-",
                        "-",
                        gib);
        }
    }
    return 0;
}

static CliCommandRegistrar g_sweepCommand("sweep",
                                          "rank every training layout of a job on N GPUs",
                                          RunSweepCommand);

} // namespace rapidllm
} // namespace ns3
