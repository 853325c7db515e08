/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// rapid-llm sweep: predicts every training layout of a job on a fixed number of GPUs and ranks
// them by step time (the ones that fit in memory) and peak memory (the ones that do not). The
// layouts run on worker processes (one ns-3 simulator each); with --out each row is appended to
// DIR/results.csv as it finishes, so an interrupted sweep keeps its rows and --resume goes on.

#include "cli-commands.h"
#include "cli-ns3-checks.h"
#include "ns3/caught-signal.h"
#include "ns3/fault-options.h"
#include "ns3/hardware-spec.h"
#include "ns3/job-echo.h"
#include "ns3/layout-sweep.h"
#include "ns3/model-spec.h"
#include "ns3/progress-line.h"
#include "ns3/report-output.h"
#include "ns3/routing-policy.h"
#include "ns3/spec-error.h"
#include "ns3/spec-override.h"
#include "ns3/study-json.h"
#include "ns3/sweep-dir.h"
#include "ns3/sweep-plot.h"
#include "ns3/sweep-table.h"
#include "ns3/worker-pool.h"

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <numeric>
#include <set>

namespace ns3 {
namespace rapidllm {

namespace {

/** Set by SIGINT or SIGTERM: the sweep stops, keeping its rows. */
volatile std::sig_atomic_t g_stop = 0;

/** The signal handler. */
void
OnStop(int)
{
    g_stop = 1;
}

/** \return --shard=I/N as (I, N); (1, 1) when not given */
std::pair<uint64_t, uint64_t>
ParseShard(const std::string& text)
{
    if (text.empty())
    {
        return {1, 1};
    }
    const std::size_t slash = text.find('/');
    const std::string i = text.substr(0, slash);
    const std::string n = slash == std::string::npos ? "" : text.substr(slash + 1);
    auto number = [](const std::string& s) -> uint64_t
    {
        if (s.empty() || s.size() > 9 || s.find_first_not_of("0123456789") != std::string::npos)
        {
            return 0;
        }
        return std::stoull(s);
    };
    const uint64_t index = number(i);
    const uint64_t count = number(n);
    if (index == 0 || count == 0 || index > count)
    {
        throw SpecError(
            kCommandLine, "shard", "'" + text + "' is not I/N with 1 <= I <= N (e.g. --shard=2/8)");
    }
    return {index, count};
}

/**
 * \return how layout \p run splits the layers over its stages, as `run` takes it: "-" (evenly),
 * "12/14" (--first-stage-layers, --last-stage-layers; 0 for an even share) or "emb+loss"
 * (--embedding-in-pipeline-split --loss-in-pipeline-split)
 */
std::string
SplitText(const RunSpec& run)
{
    const ParallelSpec& p = run.parallel;
    if (p.embeddingInSplit || p.lossInSplit)
    {
        return std::string(p.embeddingInSplit ? "emb" : "")
               + (p.embeddingInSplit && p.lossInSplit ? "+" : "") + (p.lossInSplit ? "loss" : "");
    }
    if (p.UnevenStages())
    {
        return std::to_string(p.firstStageLayers) + "/" + std::to_string(p.lastStageLayers);
    }
    return "-";
}

/**
 * The table's columns of what the sweep varies besides the layout: the machine, the GPU count
 * and the compute type, each shown where the sweep tries more than one.
 */
struct VariantColumns
{
    std::size_t hardware = 0; //!< the machine column's width (0: not shown)
    bool gpus = false;        //!< whether the GPU count column is shown
    bool dtype = false;       //!< whether the compute type column is shown
    bool schedule = false;    //!< whether the pipeline schedule column is shown

    /** \return the row's cells, each with its space (the headings with \p r null) */
    std::string
    Cells(const SweepRow* r) const
    {
        return (hardware > 0 ? TableCell(r ? r->hardware : "hardware", hardware) : "")
               + (gpus ? TableCell(r ? std::to_string(r->Gpus()) : "gpus", 5) : "")
               + (dtype ? TableCell(r ? r->dtype : "dtype", 5) : "")
               + (schedule ? TableCell(r ? r->schedule : "schedule", 8) : "");
    }
};

/**
 * Prints the ranked table (--top of each kind); \p candidates give each row's stage split,
 * \p variant the machine and compute type columns.
 */
void
PrintTable(const std::vector<SweepRow>& rows,
           const std::vector<RunSpec>& candidates,
           uint64_t shown,
           const VariantColumns& variant)
{
    auto split = [&](const SweepRow& r)
    {
        return r.layout < candidates.size() ? SplitText(candidates[r.layout]) : std::string("?");
    };
    std::printf("%4s %s%4s %4s %5s %3s %3s %4s %4s %-10s %-8s %10s %8s %6s %9s %9s %9s %9s\n",
                "rank",
                variant.Cells(nullptr).c_str(),
                "tp",
                "pp",
                "dp",
                "cp",
                "ep",
                "vpp",
                "mbs",
                "recompute",
                "split",
                "step_s",
                "TFLOP/s",
                "MFU",
                "compute_s",
                "exp_comm",
                "bubble_s",
                "peak_GiB");
    uint64_t rank = 0;
    uint64_t unfitShown = 0;
    for (const auto& r : rows)
    {
        if (r.fits ? (shown > 0 && rank >= shown) : (shown > 0 && unfitShown >= shown))
        {
            continue;
        }
        const double gib = r.peakBytes / double(1ull << 30);
        if (r.fits)
        {
            std::printf("%4llu %s%4u %4u %5u %3u %3u %4u %4u %-10s %-8s %10.4f %8.1f %5.1f%% %9.4f "
                        "%9.4f %9.4f %9.2f\n",
                        static_cast<unsigned long long>(++rank),
                        variant.Cells(&r).c_str(),
                        r.tp,
                        r.pp,
                        r.dp,
                        r.cp,
                        r.ep,
                        r.vpp,
                        r.mbs,
                        r.recompute.c_str(),
                        split(r).c_str(),
                        r.stepTimeS,
                        r.tflopsPerGpu,
                        100 * r.mfu,
                        r.computeS,
                        r.exposedCommS,
                        r.bubbleS,
                        gib);
            continue;
        }
        if (unfitShown++ == 0)
        {
            std::printf("does not fit (lowest peak first):\n");
        }
        std::printf("%4s %s%4u %4u %5u %3u %3u %4u %4u %-10s %-8s %10s %8s %6s %9s %9s %9s %9.2f\n",
                    "-",
                    variant.Cells(&r).c_str(),
                    r.tp,
                    r.pp,
                    r.dp,
                    r.cp,
                    r.ep,
                    r.vpp,
                    r.mbs,
                    r.recompute.c_str(),
                    split(r).c_str(),
                    "-",
                    "-",
                    "-",
                    "-",
                    "-",
                    "-",
                    gib);
    }
}

/**
 * \return the first-ranked of \p ranked on machine \p source, \p gpus GPUs, compute type
 * \p dtype and pipeline schedule \p schedule (null when there is none), and in \p rank its rank
 * among the fitting rows
 */
const SweepRow*
BestOf(const std::vector<SweepRow>& ranked,
       const std::string& source,
       uint32_t gpus,
       const std::string& dtype,
       const std::string& schedule,
       uint64_t& rank)
{
    rank = 0;
    for (const SweepRow& r : ranked)
    {
        rank += r.fits ? 1 : 0;
        if (r.hardware == source && r.Gpus() == gpus && r.dtype == dtype && r.schedule == schedule)
        {
            return &r;
        }
    }
    return nullptr;
}

/** \return every (compute type, pipeline schedule) pair, in the sweep's order */
std::vector<std::pair<DataType, std::string>>
VariantPairs(const std::vector<DataType>& dtypes, const std::vector<std::string>& schedules)
{
    std::vector<std::pair<DataType, std::string>> pairs;
    for (DataType type : dtypes)
    {
        for (const std::string& schedule : schedules)
        {
            pairs.emplace_back(type, schedule);
        }
    }
    return pairs;
}

/**
 * Prints, under the table, the first-ranked row of each machine, GPU count, compute type and
 * pipeline schedule the sweep tries (those a GPU cannot run are noted on stderr) with its step,
 * rate, peak memory and energy: the answer without reading the table. Where it tries several GPU
 * counts, each count's best says how far it scales from the smallest count's that fits (strong
 * scaling: the same global batch).
 */
void
PrintBestOfEach(const std::vector<SweepRow>& ranked,
                const std::vector<std::string>& sources,
                const std::vector<uint32_t>& gpuCounts,
                const std::vector<DataType>& dtypes,
                const std::vector<std::string>& schedules,
                const VariantColumns& variant)
{
    std::printf("Best of each:\n");
    for (const std::string& source : sources)
    {
        // Each type and schedule's best on the fewest GPUs.
        std::map<std::pair<DataType, std::string>, const SweepRow*> smallest;
        for (uint32_t gpus : gpuCounts)
        {
            for (const auto& [type, schedule] : VariantPairs(dtypes, schedules))
            {
                uint64_t rank = 0;
                const SweepRow* best = BestOf(ranked, source, gpus, ToString(type), schedule, rank);
                if (!best)
                {
                    continue; // ruled out (noted), or not in this shard
                }
                const std::string layout =
                    "tp " + std::to_string(best->tp) + " pp " + std::to_string(best->pp) + " dp "
                    + std::to_string(best->dp) + " cp " + std::to_string(best->cp) + " ep "
                    + std::to_string(best->ep) + " vpp " + std::to_string(best->vpp) + " mbs "
                    + std::to_string(best->mbs) + " " + best->recompute;
                if (!best->fits)
                {
                    std::printf("  %s no layout fits (lowest peak %.2f GiB: %s)\n",
                                variant.Cells(best).c_str(),
                                best->peakBytes / double(1ull << 30),
                                layout.c_str());
                    continue;
                }
                char energy[64] = "";
                if (best->haveEnergy)
                {
                    std::snprintf(energy,
                                  sizeof(energy),
                                  ", %.2f kJ a step (%.0f W a GPU)",
                                  best->energyJ / 1e3,
                                  best->avgPowerW);
                }
                char scaling[96] = "";
                const SweepRow* base =
                    smallest.emplace(std::make_pair(type, schedule), best).first->second;
                if (base != best)
                {
                    const double speedup = base->stepTimeS / best->stepTimeS;
                    std::snprintf(scaling,
                                  sizeof(scaling),
                                  ", %.2fx the %llu-GPU best (%.0f%% scaling)",
                                  speedup,
                                  static_cast<unsigned long long>(base->Gpus()),
                                  100 * speedup * double(base->Gpus()) / double(gpus));
                }
                std::printf("  %s rank %llu: %s, %.4f s, %.1f TFLOP/s per GPU, %.1f GiB%s%s\n",
                            variant.Cells(best).c_str(),
                            static_cast<unsigned long long>(rank),
                            layout.c_str(),
                            best->stepTimeS,
                            best->tflopsPerGpu,
                            best->peakBytes / double(1ull << 30),
                            energy,
                            scaling);
            }
        }
    }
}

} // namespace

int
RunSweepCommand(const CliArgs& args)
{
    // --set (model., gpu. and network. paths) and --fault apply to every layout, as in run.
    const std::vector<SpecOverride> overrides =
        args.HasValue("set") ? SpecOverride::ParseList(args.Text("set"), kCommandLine)
                             : std::vector<SpecOverride>();
    ModelSpec m = ModelSpec::Load(args.Text("model"), overrides);
    // The GPU counts, each with every layout ("8/16/32" in the headings).
    const std::vector<uint32_t> gpuCounts = args.Counts32("gpus");
    const std::string gpuText = SweepGpuCountText(gpuCounts);
    // The machines, as given (presets or files): a row names its machine so.
    const std::vector<std::string> sources = args.Choices("hardware");
    std::vector<std::string> names = sources; // the rows' machines (SweepDir::SpeltMachines)
    std::vector<HardwareSpec> machines;
    for (const std::string& source : sources)
    {
        machines.push_back(HardwareSpec::Load(source, overrides));
        for (const std::string& note : machines.back().network.Notes())
        {
            std::cerr << "rapid-llm sweep: note: " << source << ": " << note << "\n";
        }
        for (uint32_t gpus : gpuCounts)
        {
            const NetworkSpec& network = machines.back().network;
            CheckHardwareFaults(network, network.faults.size(), gpus, machines.back().name, source);
        }
    }
    // Whether --routing names what every machine routes by anyway (the same sweep as without it).
    bool ownRouting = true;
    if (args.HasValue("routing"))
    {
        // Every layout routes so (as run --routing): an unknown name is an error now.
        RoutingPolicy::Create(args.Text("routing"));
        for (HardwareSpec& h : machines)
        {
            ownRouting = ownRouting && h.network.routing == args.Text("routing");
            h.network.routing = args.Text("routing");
        }
    }
    if (args.HasValue("fault"))
    {
        const std::vector<FaultOption> faults = ParseFaultOption(args.Text("fault"), kCommandLine);
        for (const FaultOption& f : faults)
        {
            if (f.timed)
            {
                throw SpecError(kCommandLine,
                                "fault",
                                "sweep takes faults present from the start only; drop @TIME (run "
                                "and replay take timed faults)");
            }
        }
        // Every layout runs on the network of all the GPUs: a selector that names no link of it
        // is an error of --fault here, not of the hardware file in the first layout that runs.
        for (HardwareSpec& h : machines)
        {
            for (uint32_t gpus : gpuCounts)
            {
                CheckFaultSelectors(faults, h.network, gpus, h.name, kCommandLine, "fault");
            }
            Ptr<FaultSchedule> schedule;
            AddFaults(faults, h.network, schedule, kCommandLine);
        }
    }
    RunSpec base;
    base.globalBatch = static_cast<uint32_t>(args.Count("gbs"));
    base.sequence = static_cast<uint32_t>(args.Count("seq"));
    // The compute types to try (the first the base's).
    std::vector<DataType> dtypes;
    for (const std::string& name : args.Choices("dtype"))
    {
        ParseDataType(name, dtypes.emplace_back());
    }
    base.dtype = dtypes.front();
    // As run: fp8 scaling and fp8 weights mean nothing without fp8 GEMMs, and a sweep that
    // ignored them would hide a mistyped job.
    for (const char* fp8Only : {"fp8-scaling", "fp8-params"})
    {
        if (args.Has(fp8Only)
            && std::find(dtypes.begin(), dtypes.end(), DataType::FP8) == dtypes.end())
        {
            throw SpecError(kCommandLine,
                            fp8Only,
                            "applies to --dtype=fp8 only (dtype is " + args.Text("dtype")
                                + "); drop it or use --dtype=fp8");
        }
    }
    base.SetAttention(args.Text("attention"));
    base.fp8Scaling = args.Text("fp8-scaling");
    base.fp8Params = args.Flag("fp8-params");
    base.mainGrads = args.Text("main-grads");
    base.paramGather = args.Text("param-gather");
    base.parallel.sequenceParallel = args.Flag("sp");
    base.parallel.zeroStage = static_cast<uint32_t>(args.Count("zero"));
    if (args.HasValue("etp"))
    {
        // One expert tensor-parallel choice for every layout; the layouts its rules do not fit
        // (with 1 and tp > 1: ep a multiple of tp x cp) are ruled out like any other.
        base.parallel.etp = static_cast<uint32_t>(args.Count("etp"));
        if (base.parallel.etp != 1)
        {
            throw SpecError(kCommandLine,
                            "etp",
                            std::to_string(base.parallel.etp)
                                + " is not allowed in a sweep: give 1 (whole experts, expert "
                                  "groups folded over the tensor-parallel ranks) or leave it out "
                                  "(experts sharded over each layout's tp)");
        }
        if (!base.parallel.sequenceParallel)
        {
            throw SpecError(kCommandLine,
                            "etp",
                            "1 folds the expert groups over the tensor-parallel ranks, which "
                            "needs sequence parallelism: give --sp");
        }
        if (!m.IsMoe())
        {
            // As run refuses it; not a reason to rule out every layout with tp > 1.
            throw SpecError(kCommandLine,
                            "etp",
                            "expert tensor parallelism needs a mixture-of-experts model (" + m.name
                                + " has no experts)");
        }
    }
    base.moeImbalance = args.Real("moe-imbalance");
    if (base.moeImbalance != 1.0 && !m.IsMoe())
    {
        throw SpecError(kCommandLine,
                        "moe-imbalance",
                        "weighs the busiest expert: " + m.name + " has no experts");
    }
    // What holds for every layout (the sequence against the model's positions, sizes, a compute
    // type training takes) is an error here, before the sweep would rule out each layout in
    // turn.
    for (DataType dtype : dtypes)
    {
        TypedRun(base, dtype).Validate(m, kCommandLine);
    }
    base.moeA2aOverlap = args.Flag("moe-a2a-overlap");
    if (base.moeA2aOverlap && !m.IsMoe())
    {
        throw SpecError(kCommandLine,
                        "moe-a2a-overlap",
                        "overlaps the expert all-to-alls: " + m.name + " has no experts");
    }
    base.tpCommOverlap = args.Text("tp-comm-overlap");
    if (base.tpCommOverlap != "none" && !base.parallel.sequenceParallel)
    {
        throw SpecError(kCommandLine,
                        "tp-comm-overlap",
                        base.tpCommOverlap
                            + " overlaps sequence parallelism's communication: "
                              "give --sp, or use none");
    }
    if (base.paramGather != "auto" && (base.parallel.zeroStage < 1 || base.parallel.zeroStage > 2))
    {
        throw SpecError(kCommandLine,
                        "param-gather",
                        base.paramGather + " applies to --zero=1 or 2 (zero is "
                            + std::to_string(base.parallel.zeroStage) + "); drop it or use auto");
    }
    SweepSpace space;
    if (dtypes.size() > 1)
    {
        space.dtypes = dtypes;
    }
    space.gpus = gpuCounts.front();
    if (gpuCounts.size() > 1)
    {
        space.gpuCounts = gpuCounts;
    }
    // Each list in ascending order, once: the layouts (and their ids in results.csv) do not
    // depend on how a list was written, and a resume given --tp=8,4,2,1 is the same sweep.
    auto ascending = [&args](const std::string& name)
    {
        std::vector<uint32_t> v = args.Counts32(name);
        std::sort(v.begin(), v.end());
        v.erase(std::unique(v.begin(), v.end()), v.end());
        return v;
    };
    space.tp = ascending("tp");
    if (args.HasValue("pp"))
    {
        space.pp = ascending("pp");
    }
    space.cp = ascending("cp");
    space.ep = ascending("ep");
    // A degree no layout could take is a mistake in the list, not a layout to skip.
    for (uint32_t cp : space.cp)
    {
        if (cp > 1 && base.sequence % (2 * cp) != 0)
        {
            throw SpecError(kCommandLine,
                            "cp",
                            std::to_string(cp) + " does not divide the sequence ("
                                + std::to_string(base.sequence)
                                + " tokens) into 2 x cp equal chunks: context parallelism's "
                                  "load-balanced split needs them");
        }
    }
    for (uint32_t ep : space.ep)
    {
        if (ep != 1 && !m.IsMoe())
        {
            throw SpecError(kCommandLine,
                            "ep",
                            std::to_string(ep)
                                + ": expert parallelism needs a mixture-of-experts "
                                  "model ("
                                + m.name + " has no experts); allowed: 1");
        }
        if (m.IsMoe() && m.experts % ep != 0)
        {
            throw SpecError(kCommandLine,
                            "ep",
                            std::to_string(ep) + " does not divide the experts ("
                                + std::to_string(m.experts) + ")");
        }
    }
    space.pipelineSplit = ParsePipelineSplit(args.Text("pipeline-split"));
    space.microBatch = ascending("mbs");
    space.virtualStages = ascending("vpp");
    space.recompute.clear();
    for (const auto& name : args.Choices("recompute"))
    {
        space.recompute.emplace_back();
        ParseRecompute(name, space.recompute.back());
    }
    std::sort(space.recompute.begin(), space.recompute.end());
    space.recompute.erase(std::unique(space.recompute.begin(), space.recompute.end()),
                          space.recompute.end());
    space.schedules = args.Choices("pp-schedule");
    const uint64_t shown = args.Count("top");
    const auto [shardIndex, shardCount] = ParseShard(args.Text("shard"));
    const std::string out = args.Text("out");
    if (out.empty())
    {
        for (const char* needsOut : {"resume", "plot"})
        {
            if (args.Flag(needsOut))
            {
                throw SpecError(kCommandLine,
                                needsOut,
                                "needs --out=DIR (the folder of the sweep's results.csv)");
            }
        }
    }

    ApplyPacketAttributesFor(args.Text("packet"), args.Text("backend"));
    RefusePacketCaptures(args.Text("packet"), "a sweep runs a network per layout");
    LayoutSweep sweep(m, machines, base, space, args.Text("backend"));
    // The same GPUs in every layout: each must be a GPU of the smallest count.
    const uint32_t fewest = *std::min_element(gpuCounts.begin(), gpuCounts.end());
    if (args.HasValue("slow-gpus"))
    {
        sweep.SetSlowGpus(ParseSlowGpus(args.Text("slow-gpus"), fewest, kCommandLine));
    }
    if (args.HasValue("gpu-set"))
    {
        // Each machine's GPU with the GPU's own overrides after the sweep's.
        std::vector<std::map<uint32_t, GpuSpec>> variants(machines.size());
        for (const auto& [gpu, items] : ParseGpuSets(args.Text("gpu-set"), fewest, kCommandLine))
        {
            std::vector<SpecOverride> all = overrides;
            all.insert(all.end(), items.begin(), items.end());
            for (std::size_t k = 0; k < machines.size(); ++k)
            {
                variants[k][gpu] = GpuVariantOf(sources[k], all, gpu, kCommandLine);
            }
        }
        sweep.SetGpuVariants(variants);
    }
    const std::vector<RunSpec> candidates = sweep.Candidates();
    const uint32_t skipped = sweep.GetSkipped();
    const auto ruledOut = sweep.GetRuledOut();
    for (const auto& [machine, dtype] : ruledOut)
    {
        const GpuSpec& gpu = machines[machine].gpu;
        const std::string why = gpu.name + " lists no rate for " + ToString(dtype) + " (it lists "
                                + gpu.ListedTypes() + ")";
        if (ruledOut.size() == machines.size() * dtypes.size())
        {
            // Nothing runs: the machine (or each) cannot compute in the type asked for.
            throw SpecError(sources[machine], "gpu.tensor_tflops", why + ": --dtype needs one");
        }
        std::fprintf(stderr,
                     "note: %s: %s; its %s layouts are not tried\n",
                     sources[machine].c_str(),
                     why.c_str(),
                     ToString(dtype).c_str());
    }
    if (!candidates.empty() && gpuCounts.size() > 1)
    {
        // A GPU count of the list that no layout fits is said, with its reasons, not dropped.
        for (uint32_t gpus : gpuCounts)
        {
            SweepSpace alone = space;
            alone.gpuCounts = {gpus};
            LayoutSweep one(m, machines, base, alone, args.Text("backend"));
            if (one.Candidates().empty())
            {
                std::fprintf(stderr,
                             "rapid-llm sweep: note: no layout of the lists is valid on %u GPUs "
                             "(%s)\n",
                             gpus,
                             one.GetSkipReasons().c_str());
            }
        }
    }
    if (candidates.empty())
    {
        // Nothing to run is a mistake in the lists, as in `study serving`: the option every
        // layout was refused on, when the user gave it, else the GPU count.
        // The run spec's field as its option names it (global_batch: --gbs), where the sweep
        // takes that option.
        std::string option = sweep.GetSkipField();
        for (const auto& o : JobOptions::GetDeclarations())
        {
            option = !option.empty() && o.field == option ? o.name : option;
        }
        std::replace(option.begin(), option.end(), '_', '-');
        const CliOption* taken = option.empty() ? nullptr : FindCliOption(option, "sweep");
        throw SpecError(kCommandLine,
                        taken && taken->TakenBy("sweep") && args.Has(option) ? option : "gpus",
                        "no layout of the lists is valid for the model on " + gpuText + " GPUs ("
                            + sweep.GetSkipReasons() + ")");
    }

    // The inputs, echoed in DIR/sweep.json; a resumed or merged sweep must have the same.
    Json inputs = Json::object();
    inputs["command"] = "sweep";
    inputs["model"] = args.Text("model");
    inputs["hardware"] = args.Text("hardware");
    inputs["set"] = args.Text("set");
    // The specs' contents: an edited file is another sweep, the same file spelt otherwise not.
    inputs["model_digest"] = SweepDir::Digests({args.Text("model")});
    inputs["hardware_digest"] = SweepDir::Digests(sources);
    inputs["fault"] = args.Text("fault");
    if (args.HasValue("slow-gpus"))
    {
        inputs["slow_gpus"] = args.Text("slow-gpus"); // only when given, so older sweeps resume
    }
    if (args.HasValue("gpu-set"))
    {
        inputs["gpu_set"] = args.Text("gpu-set"); // only when given, so older sweeps resume
    }
    // A number with one count, as older sweeps kept it (so they resume), else the list.
    inputs["gpus"] = gpuCounts.size() > 1 ? Json(gpuCounts) : Json(space.gpus);
    inputs["gbs"] = base.globalBatch;
    inputs["seq"] = base.sequence;
    inputs["dtype"] = args.Text("dtype");
    inputs["attention"] = args.Text("attention");
    // Each only when it is not the default, so that older sweeps still resume.
    if (base.dtype == DataType::FP8)
    {
        inputs["fp8_scaling"] = base.fp8Scaling;
    }
    if (!base.fp8Params)
    {
        inputs["fp8_params"] = false;
    }
    if (base.mainGrads != "auto")
    {
        inputs["main_grads"] = base.mainGrads;
    }
    if (base.tpCommOverlap != "none")
    {
        inputs["tp_comm_overlap"] = base.tpCommOverlap;
    }
    if (base.paramGather != "auto")
    {
        inputs["param_gather"] = base.paramGather;
    }
    if (base.moeA2aOverlap)
    {
        inputs["moe_a2a_overlap"] = true; // only when set, so that older sweeps resume
    }
    if (base.moeImbalance != 1.0)
    {
        inputs["moe_imbalance"] = base.moeImbalance; // the same
    }
    inputs["sp"] = base.parallel.sequenceParallel;
    inputs["zero"] = base.parallel.zeroStage;
    inputs["backend"] = args.Text("backend");
    if (args.HasValue("packet"))
    {
        inputs["packet"] = args.Text("packet"); // only when given, so older sweeps resume
    }
    // The routing only when given and not every machine's own, so that older sweeps resume
    // and naming the default is the same sweep.
    if (args.HasValue("routing") && !ownRouting)
    {
        inputs["routing"] = args.Text("routing");
    }
    // auto, the default, as older sweeps stored it.
    inputs["granularity"] =
        args.Text("granularity") == "auto" ? std::string() : args.Text("granularity");
    EchoAttributeDefaults(inputs); // only when set, so that older sweeps resume
    inputs["tp"] = Json(space.tp);
    inputs["pp"] = Json(space.pp);
    inputs["mbs"] = Json(space.microBatch);
    inputs["vpp"] = Json(space.virtualStages);
    // Only when swept, so that older sweeps (without these degrees) still resume.
    if (space.cp != std::vector<uint32_t>{1})
    {
        inputs["cp"] = Json(space.cp);
    }
    if (space.ep != std::vector<uint32_t>{1})
    {
        inputs["ep"] = Json(space.ep);
    }
    if (base.parallel.etp != 0)
    {
        inputs["etp"] = base.parallel.etp;
    }
    if (space.pipelineSplit != PipelineSplit::EVEN)
    {
        inputs["pipeline_split"] = args.Text("pipeline-split");
    }
    std::vector<std::string> recompute;
    for (Recompute mode : space.recompute)
    {
        recompute.push_back(ToString(mode));
    }
    inputs["recompute"] = recompute;
    if (space.schedules != SweepSpace().schedules)
    {
        inputs["pp_schedule"] = space.schedules; // only when swept, so that older sweeps resume
    }
    inputs["layouts"] = candidates.size();
    inputs["skipped"] = skipped;

    std::vector<uint64_t> mine;
    for (uint64_t i = 0; i < candidates.size(); ++i)
    {
        if (i % shardCount == shardIndex - 1)
        {
            mine.push_back(i);
        }
    }
    std::map<uint64_t, SweepRow> rows;
    std::unique_ptr<SweepDir> dir;
    // A sweep that starts its folder and then fails before any layout finished takes back what
    // it wrote (a re-run would otherwise be refused as "already holds a sweep"); a resumed one,
    // or one with finished layouts (hours of work, kept for --resume), keeps it.
    const bool fresh = !out.empty() && !args.Flag("resume");
    const bool hadDir = !out.empty() && std::filesystem::exists(out);
    bool started = false;
    auto takeBack = [&]()
    {
        if (!started || !rows.empty())
        {
            return;
        }
        dir.reset(); // closes results.csv
        std::error_code ec;
        for (const char* file : {"results.csv", "sweep.json", "sweep.png"})
        {
            std::filesystem::remove(std::filesystem::path(out) / file, ec);
        }
        if (!hadDir)
        {
            std::filesystem::remove(out, ec); // only if empty
        }
    };
    if (!out.empty())
    {
        dir = std::make_unique<SweepDir>(out, inputs, shardIndex, shardCount);
        const std::vector<SweepRow> before = dir->Open(args.Flag("resume"));
        // A resumed folder names its machines as it did (the same files, its digests say),
        // so that its rows and sweep.json read alike whatever spelling this run was given.
        const std::vector<std::string> spelt = SweepDir::SpeltMachines(dir->GetInputs());
        if (spelt.size() == names.size())
        {
            names = spelt;
        }
        started = fresh;
        for (const SweepRow& r : before)
        {
            if (r.layout >= candidates.size() || r.layout % shardCount != shardIndex - 1)
            {
                throw SpecError(dir->CsvPath(),
                                "layout",
                                std::to_string(r.layout) + " is not a layout of this sweep"
                                    + (shardCount > 1 ? " shard" : ""));
            }
            // A row names its layout twice, by index and by degrees: they must agree (a row
            // edited, or copied from another sweep, would be ranked as another layout).
            const RunSpec& c = candidates[r.layout];
            if (r.tp != c.parallel.tp || r.pp != c.parallel.pp || r.dp != c.parallel.dp
                || r.cp != c.parallel.cp || r.ep != c.parallel.ep
                || r.vpp != c.parallel.virtualStages || r.mbs != c.microBatch
                || r.recompute != ToString(c.recompute) || r.schedule != c.parallel.schedule
                || ((r.firstStageLayers > 0 || r.lastStageLayers > 0)
                    && (r.firstStageLayers != c.parallel.firstStageLayers
                        || r.lastStageLayers != c.parallel.lastStageLayers))
                || (!r.dtype.empty() && r.dtype != ToString(c.dtype)))
            {
                throw SpecError(
                    dir->CsvPath(),
                    "layout",
                    std::to_string(r.layout) + " is tp " + std::to_string(c.parallel.tp) + ", pp "
                        + std::to_string(c.parallel.pp) + ", dp " + std::to_string(c.parallel.dp)
                        + ", cp " + std::to_string(c.parallel.cp) + ", ep "
                        + std::to_string(c.parallel.ep) + ", vpp "
                        + std::to_string(c.parallel.virtualStages) + ", mbs "
                        + std::to_string(c.microBatch) + ", recompute " + ToString(c.recompute)
                        + ", " + c.parallel.schedule + ", " + ToString(c.dtype)
                        + " in this sweep, and its row says otherwise: the row was "
                          "edited or comes from another sweep");
            }
            rows[r.layout] = r;
            // A row of a sweep from before the split's columns: its layout's split.
            if (r.firstStageLayers == 0 && r.lastStageLayers == 0)
            {
                rows[r.layout].firstStageLayers = c.parallel.firstStageLayers;
                rows[r.layout].lastStageLayers = c.parallel.lastStageLayers;
            }
            // A row of a sweep from before the columns: the type it ran in. The machine is
            // named as the folder names it (the file's contents are the same, sweep.json's
            // digest says, however it is spelt).
            if (r.dtype.empty())
            {
                rows[r.layout].dtype = ToString(candidates[r.layout].dtype);
            }
            rows[r.layout].hardware = names[sweep.GetMachine(r.layout)];
        }
    }
    std::vector<uint64_t> left;
    for (uint64_t i : mine)
    {
        if (!rows.count(i))
        {
            left.push_back(i);
        }
    }
    // Handed out in a fixed stride through the candidates, so that the layouts that only need a
    // memory check (which come in runs) mix with the replays and the rate and ETA are
    // representative from the start; the output order does not depend on it.
    std::vector<uint64_t> todo;
    uint64_t stride = left.empty() ? 1 : std::max<uint64_t>(1, left.size() * 5 / 8);
    while (!left.empty() && std::gcd(stride, uint64_t(left.size())) != 1)
    {
        ++stride;
    }
    for (uint64_t k = 0; k < left.size(); ++k)
    {
        todo.push_back(left[(k * stride) % left.size()]);
    }

    const uint64_t workers =
        args.Count("workers") > 0 ? args.Count("workers") : WorkerPool::Processors();
    const bool terminal = ProgressLine::StderrIsTerminal();
    ProgressLine progress(args.Has("progress") ? args.Flag("progress") : terminal, terminal);
    const std::size_t resumed = rows.size();
    uint64_t fitting = 0;
    for (const auto& [i, r] : rows)
    {
        fitting += r.fits ? 1 : 0;
    }
    auto showProgress = [&](bool force)
    {
        const double elapsed = progress.Elapsed();
        const double doneHere = double(rows.size() - resumed);
        const double rate = elapsed > 0 ? doneHere / elapsed : 0;
        const double left = double(mine.size() - rows.size());
        char text[256];
        std::snprintf(text,
                      sizeof(text),
                      "sweep: %zu/%zu layouts (%.1f%%), %.2f layouts/s, ETA %s, %llu fit, "
                      "%llu workers",
                      rows.size(),
                      mine.size(),
                      mine.empty() ? 100.0 : 100.0 * rows.size() / mine.size(),
                      rate,
                      rate > 0 ? ProgressLine::Duration(left / rate).c_str() : "?",
                      static_cast<unsigned long long>(fitting),
                      static_cast<unsigned long long>(std::min<uint64_t>(workers, todo.size())));
        progress.Show(text, force);
    };
    showProgress(true);

    g_stop = 0;
    auto oldInt = CatchSignal(SIGINT, OnStop);
    auto oldTerm = CatchSignal(SIGTERM, OnStop);
    WorkerPool pool(static_cast<uint32_t>(workers));
    bool complete = false;
    try
    {
        complete = pool.Run(
            todo,
            [&](uint64_t i)
            {
                const uint32_t machine = sweep.GetMachine(i);
                try
                {
                    return MakeSweepRow(i, sweep.Evaluate(candidates[i], machine), names[machine])
                        .ToCsv();
                }
                catch (const Error& e)
                {
                    const ParallelSpec& p = candidates[i].parallel;
                    throw Error("layout tp " + std::to_string(p.tp) + " pp " + std::to_string(p.pp)
                                + " dp " + std::to_string(p.dp) + " cp " + std::to_string(p.cp)
                                + " ep " + std::to_string(p.ep)
                                + (machines.size() > 1 ? " on " + names[machine] : "") + ": "
                                + e.what());
                }
            },
            [&](uint64_t i, const std::string& line)
            {
                SweepRow r;
                if (!ParseSweepRow(line, r) || r.layout != i)
                {
                    throw std::runtime_error("a worker returned a bad row for layout "
                                             + std::to_string(i) + ": " + line);
                }
                rows[i] = r;
                fitting += r.fits ? 1 : 0;
                if (dir)
                {
                    dir->Append(line);
                }
                showProgress(rows.size() == mine.size());
            },
            &g_stop);
    }
    catch (const WorkerLost& e)
    {
        // Where the rows are, said before a sweep that kept none takes its folder back.
        const std::string kept = rows.empty() ? "no layout had finished"
                                 : dir        ? "the " + std::to_string(rows.size())
                                             + " layouts done are kept in " + dir->CsvPath()
                                             + " (--resume continues)"
                                       : "give --out=DIR to keep the layouts done";
        std::signal(SIGINT, oldInt);
        std::signal(SIGTERM, oldTerm);
        takeBack();
        throw WorkerLost(std::string(e.what()) + "; " + kept);
    }
    catch (...)
    {
        std::signal(SIGINT, oldInt);
        std::signal(SIGTERM, oldTerm);
        takeBack();
        throw;
    }
    std::signal(SIGINT, oldInt);
    std::signal(SIGTERM, oldTerm);
    if (!complete || todo.empty())
    {
        showProgress(true);
    }
    progress.Finish();
    if (!complete)
    {
        std::fflush(stdout);
        std::fprintf(stderr,
                     "rapid-llm sweep: interrupted after %zu of %zu layouts%s\n",
                     rows.size(),
                     mine.size(),
                     dir ? (", kept in " + dir->CsvPath() + " (--resume continues)").c_str()
                         : " (give --out=DIR to keep them)");
        return 130;
    }

    std::vector<SweepRow> ranked;
    for (const auto& [i, r] : rows)
    {
        ranked.push_back(r);
    }
    RankSweepRows(ranked);
    if (dir)
    {
        dir->Finish(ranked);
        if (args.Flag("plot"))
        {
            PlotSweep(ranked,
                      (std::filesystem::path(out) / "sweep.png").string(),
                      m.name,
                      gpuText,
                      base.globalBatch,
                      machines);
        }
    }
    if (args.Flag("json"))
    {
        // As the studies, validate and xval print theirs: the inputs (those of DIR/sweep.json,
        // with the version) and the ranked rows.
        Json input = Json::object();
        input["version"] = RapidLlmVersion();
        for (auto it = inputs.begin(); it != inputs.end(); ++it)
        {
            input[it.key()] = it.value();
        }
        if (shardCount > 1)
        {
            input["shard"] = std::to_string(shardIndex) + "/" + std::to_string(shardCount);
        }
        Json rows = SweepRowsJson(ranked);
        for (std::size_t i = 0; i < ranked.size(); ++i)
        {
            // The stage split each layout ran with, in `run`'s terms (results.csv keeps its
            // columns: resumed and merged folders read them).
            if (ranked[i].layout < candidates.size())
            {
                const ParallelSpec& p = candidates[ranked[i].layout].parallel;
                rows[i]["first_stage_layers"] = p.firstStageLayers;
                rows[i]["last_stage_layers"] = p.lastStageLayers;
                rows[i]["embedding_in_pipeline_split"] = p.embeddingInSplit;
                rows[i]["loss_in_pipeline_split"] = p.lossInSplit;
            }
        }
        std::cout << DumpJson(Json{{"input", input}, {"rows", rows}});
        return 0;
    }
    if (args.Flag("csv"))
    {
        std::cout << SweepCsvText(ranked);
        return 0;
    }
    uint64_t fit = 0;
    for (const auto& r : ranked)
    {
        fit += r.fits ? 1 : 0;
    }
    std::printf(
        "%s training on %s x %s, global batch %u, sequence %u, %s%s%s: %zu layout%s%s, %llu "
        "fit in memory, %u ruled out by the model, batch or GPU count\n",
        m.name.c_str(),
        gpuText.c_str(),
        SweepGpuNames(machines).c_str(),
        base.globalBatch,
        base.sequence,
        (space.dtypes.size() > 1 ? "each layout in " + args.Text("dtype") : ToString(base.dtype))
            .c_str(),
        base.parallel.etp == 1 ? ", whole experts (etp 1)" : "",
        (std::string(args.HasValue("slow-gpus") ? ", slow GPUs " + args.Text("slow-gpus") : "")
         + (args.HasValue("gpu-set") ? ", GPUs of their own spec " + args.Text("gpu-set") : ""))
            .c_str(),
        ranked.size(),
        ranked.size() == 1 ? "" : "s",
        shardCount > 1 ? (" (shard " + std::to_string(shardIndex) + "/" + std::to_string(shardCount)
                          + " of " + std::to_string(candidates.size()) + ")")
                             .c_str()
                       : "",
        static_cast<unsigned long long>(fit),
        skipped);
    VariantColumns variant;
    variant.gpus = gpuCounts.size() > 1;
    variant.dtype = space.dtypes.size() > 1;
    variant.schedule = space.schedules != SweepSpace().schedules;
    if (machines.size() > 1)
    {
        for (const std::string& source : names)
        {
            variant.hardware = std::max(variant.hardware, source.size());
        }
    }
    PrintTable(ranked, candidates, shown, variant);
    if (fit == 0 && !ranked.empty() && shardCount > 1)
    {
        // A shard's part of the layouts: the others may fit; only the whole sweep can say.
        std::fprintf(stderr,
                     "rapid-llm sweep: note: %s in memory (the lowest peak is %.2f GiB); the "
                     "other shards' may: merge them for the whole sweep's ranking\n",
                     ranked.size() == 1 ? "this shard's one layout does not fit"
                                        : ("none of this shard's " + std::to_string(ranked.size())
                                           + " layouts fits")
                                              .c_str(),
                     ranked.front().peakBytes / double(1ull << 30));
    }
    else if (fit == 0 && !ranked.empty())
    {
        // Nothing to rank: say what came closest and which options lower the peak, of those
        // this sweep has not tried (on one GPU: no ZeRO, no more tp or pp).
        const auto& closest = ranked.front(); // the unfitting rows come lowest peak first
        std::vector<std::string> options;
        const bool dataParallel = std::any_of(ranked.begin(),
                                              ranked.end(),
                                              [](const SweepRow& r)
                                              {
                                                  return r.dp > 1;
                                              });
        if (dataParallel && base.parallel.zeroStage < 3)
        {
            options.push_back(base.parallel.zeroStage == 0 ? "--zero=1 (or 3)" : "--zero=3");
        }
        // Recomputation holds less the more it recomputes: the modes beyond the sweep's.
        auto tried = [&space](Recompute mode)
        {
            return std::find(space.recompute.begin(), space.recompute.end(), mode)
                   != space.recompute.end();
        };
        if (!tried(Recompute::FULL))
        {
            options.push_back(tried(Recompute::SELECTIVE) ? "--recompute=full"
                                                          : "--recompute=selective,full");
        }
        if (*std::min_element(space.microBatch.begin(), space.microBatch.end()) > 1)
        {
            options.push_back("a smaller --mbs");
        }
        // A tp or pp degree that divides a GPU count of the sweep and is not in its lists.
        bool moreDegrees = false;
        for (uint32_t gpus : gpuCounts)
        {
            for (uint32_t d = 2; d <= gpus; ++d)
            {
                const bool tp = std::find(space.tp.begin(), space.tp.end(), d) != space.tp.end();
                const bool pp = space.pp.empty()
                                || std::find(space.pp.begin(), space.pp.end(), d) != space.pp.end();
                moreDegrees = moreDegrees || (gpus % d == 0 && (!tp || !pp));
            }
        }
        if (moreDegrees)
        {
            options.push_back("more --pp or --tp values");
        }
        options.push_back("more --gpus");
        options.push_back("a GPU with more memory");
        std::string list;
        for (std::size_t i = 0; i < options.size(); ++i)
        {
            list += (i == 0 ? "" : i + 1 == options.size() ? ", or " : ", ") + options[i];
        }
        std::fprintf(stderr,
                     "rapid-llm sweep: note: no layout fits in memory; the lowest peak is %.2f "
                     "GiB (tp %u, pp %u, dp %u, mbs %u, recompute %s). Options that lower it: "
                     "%s (rapid-llm memory lists single changes that fit)\n",
                     closest.peakBytes / double(1ull << 30),
                     closest.tp,
                     closest.pp,
                     closest.dp,
                     closest.mbs,
                     closest.recompute.c_str(),
                     list.c_str());
    }
    if (machines.size() > 1 || variant.gpus || variant.dtype || space.schedules.size() > 1)
    {
        PrintBestOfEach(ranked, names, gpuCounts, dtypes, space.schedules, variant);
    }
    return 0;
}

static CliCommandRegistrar g_sweepCommand(
    "sweep",
    "rank every training layout of a job on N GPUs",
    "Predicts every training layout (tp x pp x dp = GPUs, micro-batch, interleaving, "
    "recomputation) of a job on worker processes and ranks them: the layouts that fit in memory "
    "by step time, then the others by peak memory. Lists are comma-separated; --gpus, "
    "--hardware and --dtype take lists too (every layout on each GPU count and machine in each "
    "type, ranked together; each one's best under the table). With "
    "--out=DIR "
    "each layout's row (breakdown and peak memory) is appended to DIR/results.csv as it "
    "finishes and the file is ranked at the end; an interrupted sweep keeps its rows and "
    "--resume continues it; --shard=I/N runs a part, `rapid-llm merge` joins the parts.",
    RunSweepCommand);

} // namespace rapidllm
} // namespace ns3
