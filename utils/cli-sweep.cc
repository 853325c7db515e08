/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// rapid-llm sweep: predicts every training layout of a job on a fixed number of GPUs and ranks
// them by step time (the ones that fit in memory) and peak memory (the ones that do not).

#include "cli-commands.h"
#include "ns3/hardware-spec.h"
#include "ns3/layout-sweep.h"
#include "ns3/model-spec.h"
#include "ns3/spec-error.h"
#include "ns3/study-json.h"

#include <cstdio>
#include <iostream>

namespace ns3 {
namespace rapidllm {

namespace {
/** \return a list option's whole numbers as 32-bit values (declared within 32 bits) */
std::vector<uint32_t>
Counts32(const CliArgs& args, const std::string& name)
{
    std::vector<uint32_t> out;
    for (uint64_t v : args.Counts(name))
    {
        out.push_back(static_cast<uint32_t>(v));
    }
    return out;
}
} // namespace

int
RunSweepCommand(const CliArgs& args)
{
    ModelSpec m = ModelSpec::Load(args.Text("model"));
    HardwareSpec h = HardwareSpec::Load(args.Text("hardware"));
    RunSpec base;
    base.globalBatch = static_cast<uint32_t>(args.Count("gbs"));
    base.sequence = static_cast<uint32_t>(args.Count("seq"));
    ParseDataType(args.Text("dtype"), base.dtype);
    base.flashAttention = args.Text("attention") == "flash";
    base.parallel.sequenceParallel = args.Flag("sp");
    base.parallel.zeroStage = static_cast<uint32_t>(args.Count("zero"));
    // What holds for every layout (the sequence against the model's positions, sizes) is an
    // error here, before the sweep would rule out each layout in turn.
    base.Validate(m, kCommandLine);
    SweepSpace space;
    space.gpus = static_cast<uint32_t>(args.Count("gpus"));
    space.tp = Counts32(args, "tp");
    if (args.HasValue("pp"))
    {
        space.pp = Counts32(args, "pp");
    }
    space.microBatch = Counts32(args, "mbs");
    space.virtualStages = Counts32(args, "vpp");
    space.recompute.clear();
    for (const auto& name : args.Choices("recompute"))
    {
        space.recompute.emplace_back();
        ParseRecompute(name, space.recompute.back());
    }
    const uint64_t shown = args.Count("top");

    LayoutSweep sweep(m, h, base, space, args.Text("backend"));
    std::vector<SweepPoint> points = sweep.Run();
    uint32_t fitting = 0;
    for (const auto& p : points)
    {
        fitting += p.report.feasible ? 1 : 0;
    }
    if (args.Flag("json"))
    {
        std::cout << DumpJson(points);
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
    uint64_t rank = 0;
    uint64_t unfitShown = 0;
    for (const auto& p : points)
    {
        if (p.report.feasible ? (shown > 0 && rank >= shown) : (shown > 0 && unfitShown >= shown))
        {
            continue;
        }
        const double gib = p.report.memory.peak / double(1ull << 30);
        if (p.report.feasible)
        {
            std::printf("%4llu %4u %4u %5u %4u %4u %-10s %10.4f %8.1f %5.1f%% %9.2f\n",
                        static_cast<unsigned long long>(++rank),
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

static CliCommandRegistrar g_sweepCommand(
    "sweep",
    "rank every training layout of a job on N GPUs",
    "Predicts every training layout (tp x pp x dp = GPUs, micro-batch, interleaving, "
    "recomputation) of a job and ranks them: the layouts that fit in memory by step time, then "
    "the others by peak memory. Lists are comma-separated.",
    RunSweepCommand);

} // namespace rapidllm
} // namespace ns3
