/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "cli-options.h"

#include "ns3/collective-algorithms.h"
#include "ns3/layout-sweep.h"
#include "ns3/network-backend.h"
#include "ns3/preset-registry.h"
#include "ns3/report-output.h"
#include "ns3/routing-policy.h"
#include "ns3/run-spec.h"
#include "ns3/serving-study.h"
#include "ns3/spec-reader.h"
#include "ns3/validation-suite.h"
#include "ns3/workload-size.h"

#include <functional>
#include <stdexcept>

namespace ns3 {
namespace rapidllm {

namespace {

/** The largest number of GPUs (endpoints) a network can have. */
constexpr uint64_t kMaxGpus = JobOptions::kMaxGpus;
/** The largest count a run setting holds (counts are 32-bit). */
constexpr uint64_t kMaxCount = JobOptions::kMaxCount;

/** The commands that describe a job by model, hardware, layout and run settings. */
const std::set<std::string> kJob = {"memory", "run", "trace", "study faults", "study hardware"};
/** The commands that run a job on the network (and so take link faults). */
const std::set<std::string> kNetworkJob = {"run", "replay", "study faults", "study hardware"};
/** --set on the commands without a model: the machine only. */
const char* const kHardwareSetHelp =
    "hardware overrides by path, PATH=VALUE or PATH=FACTORx[,...], e.g. "
    "network.nvlink.bandwidth_GBps=2x, gpu.hbm_bandwidth_GBps=4000 (gpu. and network. paths; "
    "model. paths are refused)";

/** The serving study: an inference job whose layout, batch and GPUs are its lists and budget. */
const char* const kServing = "study serving";
/**
 * The job options the serving study does not take: its own (the mode, replicas, expert groups;
 * its dp is a list of data-parallel attention degrees),
 * and link faults (a fault is on one replica's links, while the study predicts one replica for
 * all; `run` and `study faults` take them). It takes --gpu-set and --cp to refuse them with
 * their reasons (their help says so).
 */
const std::set<std::string> kNotServing = {
    "run", "mode", "ep", "fault", "slow-gpus", "prefix-groups"};

/** \return \p a with the commands of \p b */
std::set<std::string>
Plus(std::set<std::string> a, const std::set<std::string>& b)
{
    a.insert(b.begin(), b.end());
    return a;
}

/** \return "1,2,4": a list default of the sweep, from the helper's own SweepSpace */
template<typename T, typename F>
std::string
ListText(const std::vector<T>& values, F text)
{
    std::string out;
    for (const auto& v : values)
    {
        out += (out.empty() ? "" : ",") + text(v);
    }
    return out;
}

// The commands' own options are declared like the job options (OptionSpec), then given to
// commands with CliOption::For.

/** \return a FLAG option */
CliOption
Flag(const std::string& name, const std::string& help, const std::string& fallback)
{
    return OptionSpec::Flag(name, help, fallback);
}

/** \return a COUNT option */
CliOption
Count(const std::string& name,
      const std::string& help,
      uint64_t minimum,
      uint64_t maximum,
      const std::string& fallback)
{
    return OptionSpec::Count(name, help, minimum, maximum, fallback);
}

/** \return a REAL option */
CliOption
Real(const std::string& name,
     const std::string& help,
     double low,
     double high,
     const std::string& fallback)
{
    return OptionSpec::Real(name, help, low, high, fallback);
}

/** \return a SIZE option */
CliOption
Size(const std::string& name,
     const std::string& help,
     uint64_t minimum,
     uint64_t maximum,
     const std::string& fallback)
{
    return OptionSpec::Size(name, help, minimum, maximum, fallback);
}

/** \return a CHOICE option whose allowed values \p choices returns (the model's own list) */
CliOption
Choice(const std::string& name,
       const std::string& help,
       std::function<std::vector<std::string>()> choices,
       const std::string& fallback)
{
    return OptionSpec::Choice(name, help, std::move(choices), fallback);
}

/** \return a TEXT option; \p names (optional) lists known names in the help */
CliOption
Text(const std::string& name,
     const std::string& help,
     const std::string& fallback,
     std::function<std::vector<std::string>()> names = nullptr)
{
    return OptionSpec::Text(name, help, fallback, std::move(names));
}

/**
 * \return the job options (JobOptions, in its order), each taken by memory, run and trace,
 * and by the other commands that share it, with their own defaults, help and lists
 */
std::vector<CliOption>
JobCliOptions()
{
    const std::set<std::string> jobAndSweep = Plus(kJob, {"sweep"});
    // The sweep's default lists are the helper's (SweepSpace), not a copy.
    const SweepSpace sweep;
    const ServingSpace serving;
    auto number = [](uint32_t v)
    {
        return std::to_string(v);
    };
    auto recompute = [](Recompute r)
    {
        return ToString(r);
    };
    using Adorn = std::function<CliOption(const CliOption&)>;
    // Options sweep takes as the job commands do.
    const Adorn alsoSweep = [&](const CliOption& o)
    {
        return o.For(jobAndSweep);
    };
    const std::map<std::string, Adorn> shared = {
        {"fault",
         [&](const CliOption& o)
         {
             return o.For(Plus(kNetworkJob, {"collective", "sweep"}))
                 .HelpIn("sweep",
                         "link faults present in every layout (as run takes them, without @TIME)")
                 .HelpIn("collective",
                         "link faults present from the start, SELECTOR[:FACTOR][,...] as run "
                         "takes them, without @TIME: SELECTOR is A-B (both directions), A>B, A "
                         "(every link of node A) or tier:DIMENSION, nodes gpu<i> or switch "
                         "names; FACTOR the bandwidth left, 0 = dead (the default) or 1e-6 to 1")
                 .HelpIn("study faults",
                         "faults present in every row (beside the studied links), as run takes "
                         "them");
         }},
        // A property of a run's replay: run's, a trace set's, and the studies' rows'.
        {"slow-gpus",
         [&](const CliOption& o)
         {
             return o.For({"run", "replay", "study faults", "study hardware", "sweep"})
                 .HelpIn("study faults",
                         "GPUs slowed in every row (beside the studied links), as run takes "
                         "them")
                 .HelpIn("study hardware", "GPUs slowed in every variant, as run takes them")
                 .HelpIn("sweep",
                         "GPUs slowed in every layout, as run takes them: the same GPUs, each "
                         "doing another rank's work in each layout (every rank is then "
                         "replayed)");
         }},
        // Costed again on the GPU: a workload's, not a trace set's.
        {"gpu-set",
         [&](const CliOption& o)
         {
             return o.For({"run", "study faults", "study hardware", "sweep"})
                 .HelpIn(kServing,
                         "refused: the study predicts one replica for all of them, so a GPU "
                         "unlike the others (on one replica) is run's (`run --gpu-set`)")
                 .HelpIn("study faults", "GPUs of their own spec in every row, as run takes them")
                 .HelpIn("study hardware",
                         "GPUs of their own spec in every variant (the varied field is set "
                         "first), as run takes them")
                 .HelpIn("sweep",
                         "GPUs of their own spec in every layout (on each machine, its GPU with "
                         "the overrides), as run takes them");
         }},
        {"set",
         [&](const CliOption& o)
         {
             return o.For(Plus(kJob, {"replay", "sweep", "collective", "gemm", "attention"}))
                 .HelpIn("collective", kHardwareSetHelp)
                 .HelpIn("gemm", kHardwareSetHelp)
                 .HelpIn("attention", kHardwareSetHelp)
                 .HelpIn("replay",
                         "network. overrides and gpu.sm_count, PATH=VALUE or PATH=FACTORx[,...], "
                         "e.g. network.infiniband.bandwidth_GBps=0.5x (the trace fixes its "
                         "kernels' times, so other gpu. and model. paths are refused)");
         }},
        {"model",
         [&](const CliOption& o)
         {
             return o.For(jobAndSweep);
         }},
        {"hardware",
         [&](const CliOption& o)
         {
             return o.For(Plus(jobAndSweep, {"gemm", "attention", "replay", "collective"}))
                 .DefaultIn("collective", "")
                 .RequiredIn({"collective"})
                 .ListIn(kServing, o.fallback)
                 .HelpIn(kServing,
                         "hardware to try, presets or YAML files (e.g. "
                         "h100-sxm-80gb,a100-sxm-80gb), each with every precision: every layout "
                         "and batch on each, ranked together")
                 .HelpIn("replay",
                         "hardware whose network (and SMs) the set replays on; default: the "
                         "machine its kernels were costed for, where the set names one, else "
                         "a100-sxm-80gb")
                 .ListIn("sweep", o.fallback)
                 .HelpIn("sweep",
                         "machines to try, presets or YAML files (e.g. "
                         "h100-sxm-80gb,h200-sxm-141gb), --gpus of each: every layout and "
                         "compute type on each, ranked together");
         }},
        {"gpus",
         [&](const CliOption& o)
         {
             return o.For(Plus(jobAndSweep, {"collective"}))
                 .RequiredIn({"sweep", kServing})
                 .ListIn("sweep", o.fallback)
                 .HelpIn("sweep",
                         "GPUs of the job, or GPU counts to try (e.g. 32,64,128), each with every "
                         "layout: how the job scales")
                 .HelpIn(kServing, "GPUs to fill with identical replicas of each layout")
                 .HelpIn("collective", "number of GPUs (ranks 0..N-1)")
                 .DefaultIn("collective", "8");
         }},
        {"tp",
         [&](const CliOption& o)
         {
             return o.For(jobAndSweep)
                 .ListIn("sweep", ListText(sweep.tp, number))
                 .HelpIn("sweep", "tensor parallel degrees to try")
                 .ListIn(kServing, ListText(serving.tp, number))
                 .HelpIn(kServing, "tensor parallel degrees of a replica to try");
         }},
        {"pp",
         [&](const CliOption& o)
         {
             return o.For(jobAndSweep)
                 .ListIn("sweep", ListText(sweep.pp, number))
                 .HelpIn("sweep",
                         "pipeline degrees to try (default: every divisor of the GPUs whose "
                         "layouts split the layers as --pipeline-split says)")
                 .ListIn(kServing, ListText(serving.pp, number))
                 .HelpIn(kServing,
                         "pipeline degrees of a replica to try (its batch split into batches "
                         "in flight, --inflight-batches)");
         }},
        {"cp",
         [&](const CliOption& o)
         {
             return o.For(jobAndSweep)
                 .ListIn("sweep", ListText(sweep.cp, number))
                 .HelpIn("sweep", "context parallel degrees to try (2 x each divides the sequence)")
                 .HelpIn(kServing,
                         "context parallel degree: 1 only (context parallelism is modelled in "
                         "training)");
         }},
        {"ep",
         [&](const CliOption& o)
         {
             return o.For(jobAndSweep)
                 .ListIn("sweep", ListText(sweep.ep, number))
                 .HelpIn("sweep",
                         "expert parallel degrees to try (mixture-of-experts models; each "
                         "divides the experts and dp, or with --etp=1 is a multiple of tp x cp)");
         }},
        {"dp",
         [&](const CliOption& o)
         {
             return o.ListIn(kServing, ListText(serving.dp, number))
                 .HelpIn(kServing,
                         "data-parallel attention degrees to try (mixture-of-experts models): "
                         "an instance of dp x tp x pp x cp GPUs whose dp attention replicas each "
                         "serve --batch requests, the experts spread over them (ep = dp) and the "
                         "tokens dispatched by all-to-all, as SGLang's DP attention and vLLM's "
                         "DP + EP");
         }},
        {"vpp",
         [&](const CliOption& o)
         {
             return o.For(jobAndSweep)
                 .ListIn("sweep", ListText(sweep.virtualStages, number))
                 .HelpIn("sweep", "virtual pipeline stages per rank to try");
         }},
        {"pp-schedule",
         [&](const CliOption& o)
         {
             return o.For(jobAndSweep)
                 .ListIn("sweep",
                         ListText(sweep.schedules,
                                  [](const std::string& v)
                                  {
                                      return v;
                                  }))
                 .HelpIn("sweep",
                         "pipeline schedules to try: 1f1b, zb-h1, zb-v (zb-h1 on the layouts "
                         "with pp >= 2 and vpp 1, zb-v on those with vpp 2; on the others they "
                         "are ruled out)");
         }},
        {"sp", alsoSweep},
        {"etp",
         [&](const CliOption& o)
         {
             return o.For(jobAndSweep)
                 .HelpIn("sweep",
                         "1: whole experts in every layout, those with tp > 1 folding their "
                         "expert groups over the tensor- and context-parallel ranks (needs --sp; "
                         "such a layout whose ep is not a multiple of tp x cp is ruled out); "
                         "default: experts sharded over each layout's tp")
                 .HelpIn(kServing,
                         "1: whole experts spread over each layout's tensor-parallel group (ep = "
                         "tp, as serving engines run expert parallelism); default: experts "
                         "sharded over tp");
         }},
        {"zero", alsoSweep},
        {"recompute",
         [&](const CliOption& o)
         {
             return o.For(jobAndSweep)
                 .ListIn("sweep", ListText(sweep.recompute, recompute))
                 .HelpIn("sweep", "recomputation modes to try");
         }},
        {"mbs",
         [&](const CliOption& o)
         {
             return o.For(jobAndSweep)
                 .ListIn("sweep", ListText(sweep.microBatch, number))
                 .HelpIn("sweep", "micro-batch sizes to try");
         }},
        {"gbs",
         [&](const CliOption& o)
         {
             return o.For(jobAndSweep)
                 .RequiredIn({"sweep"})
                 .HelpIn("sweep", "global batch size (sequences)");
         }},
        {"seq",
         [&](const CliOption& o)
         {
             return o.For(Plus(jobAndSweep, {"attention"}))
                 .HelpIn("attention", "query tokens per sequence");
         }},
        {"batch",
         [&](const CliOption& o)
         {
             return o.For(Plus(kJob, {"gemm", "attention"}))
                 .ListIn(kServing, ListText(serving.batch, number))
                 .HelpIn(kServing, "requests a replica serves together to try")
                 .HelpIn("gemm", "independent GEMMs in one batched launch")
                 .HelpIn("attention", "sequences");
         }},
        {"dtype",
         [&](const CliOption& o)
         {
             return o.For(Plus(jobAndSweep, {"gemm", "attention"}))
                 .HelpIn("gemm", "operand type")
                 .HelpIn("attention", "Q, K, V and O type (not int4, a weight-only type)")
                 .ListIn("sweep", o.fallback)
                 .HelpIn("sweep",
                         "compute types to try (e.g. bf16,fp8), each with every layout: fp8 "
                         "Transformer Engine's recipe (--fp8-scaling applies to its rows)")
                 .ListIn(kServing, o.fallback)
                 .HelpIn(kServing,
                         "weights' types to try (e.g. bf16,fp8,int4), each a row of every "
                         "layout and batch, with every --kv-cache-dtype: fp8 Transformer "
                         "Engine's recipe, int4 weight-only (GPTQ, AWQ) with fp16 activations");
         }},
        {"engine",
         [&](const CliOption& o)
         {
             return o.ListIn(kServing, o.fallback)
                 .HelpIn(kServing,
                         "serving engines to try (e.g. lmdeploy,vllm), each with every precision: "
                         "each its own host costs, KV cache sizing, scheduling and routing; "
                         "under --batching=auto they must batch alike");
         }},
        {"kv-cache-dtype",
         [&](const CliOption& o)
         {
             return o.ListIn(kServing, o.fallback)
                 .HelpIn(kServing,
                         "KV cache types to try (e.g. auto,fp8), each with every --dtype: auto "
                         "the activations' 16 bits, fp8 or int8 one byte, twice the tokens and "
                         "half the decode attention's reads, int4 half a byte, four times the "
                         "tokens");
         }},
        {"heads",
         [&](const CliOption& o)
         {
             return o.For(Plus(kJob, {"attention"}))
                 .DefaultIn("attention", "32")
                 .HelpIn("attention", "query heads");
         }},
        {"kv-heads",
         [&](const CliOption& o)
         {
             return o.For(Plus(kJob, {"attention"}))
                 .HelpIn("attention", "key/value heads (default: --heads)");
         }},
        {"attention",
         [&](const CliOption& o)
         {
             return o.For(Plus(jobAndSweep, {"attention"}))
                 .HelpIn("attention",
                         "the kernel: auto (the GPU's: flash3 on Hopper, flash elsewhere), flash "
                         "(FlashAttention-2), flash3 (FlashAttention-3 / cuDNN on Hopper), "
                         "triton2022 (MPT's Triton kernel) or standard (unfused)");
         }},
        {"fp8-scaling", alsoSweep},
        {"fp8-params", alsoSweep},
        {"main-grads", alsoSweep},
        {"param-gather", alsoSweep},
        {"moe-imbalance", alsoSweep},
        {"moe-a2a-overlap",
         [&](const CliOption& o)
         {
             return o.For(jobAndSweep)
                 .HelpIn("sweep",
                         "Megatron's expert all-to-all overlap in the layouts where it runs (ep > "
                         "1, not full recomputation, vpp > 1 with a pipeline); the others are "
                         "ruled out");
         }},
        {"tp-comm-overlap",
         [&](const CliOption& o)
         {
             return o.For(jobAndSweep)
                 .HelpIn("sweep",
                         "Transformer Engine's tensor-parallel communication overlap in the "
                         "layouts with tp > 1 (needs --sp): none or userbuffers");
         }},
    };
    std::vector<CliOption> options;
    std::size_t adorned = 0;
    for (const OptionSpec& spec : JobOptions::GetDeclarations())
    {
        const CliOption job = CliOption(spec).For(kJob);
        auto it = shared.find(spec.name);
        adorned += it != shared.end() ? 1 : 0;
        CliOption option = it != shared.end() ? it->second(job) : job;
        if (spec.mode != "training" && kNotServing.count(spec.name) == 0)
        {
            option.commands.insert(kServing);
        }
        options.push_back(option);
    }
    if (adorned != shared.size())
    {
        throw std::logic_error("cli-options.cc shares an option JobOptions does not declare");
    }
    return options;
}

/** Builds the table once; the choices are read when used (after any --load). */
std::vector<CliOption>
MakeOptions()
{
    std::vector<CliOption> options = JobCliOptions();
    std::vector<CliOption> own = {
        // The network.
        Text("backend", "network backend", "flow", NetworkBackend::Names)
            .For({"run", "replay", "sweep", "collective", "study hardware", kServing}),
        Text("routing", "routing policy (default: the hardware file's)", "", RoutingPolicy::Names)
            .For({"run",
                  "replay",
                  "sweep",
                  "collective",
                  "study faults",
                  "study hardware",
                  kServing})
            .HelpIn("sweep",
                    "routing policy of every layout, e.g. fault-aware around a dead --fault link "
                    "(default: the hardware file's)")
            .ListIn("study faults", "dimension-order,ecmp,shortest-path,fault-aware")
            .HelpIn("study faults", "routing policies to compare"),
        // The GEMM of `gemm`.
        Count("m", "rows of A and C (tokens)", 1, kMaxCount, "").For({"gemm"}).RequiredIn({"gemm"}),
        Count("n", "columns of B and C (output features)", 1, kMaxCount, "")
            .For({"gemm"})
            .RequiredIn({"gemm"}),
        Count("k", "reduction dimension (input features)", 1, kMaxCount, "")
            .For({"gemm"})
            .RequiredIn({"gemm"}),
        Choice(
            "clock",
            "the clock the kernel runs at: sustained (a busy GPU: a kernel whose board power "
            "would exceed the limit runs at the clock that meets it, as in a job) or boost "
            "(a short burst from idle, as microbenchmarks of a few milliseconds and validate's "
            "kernel tables measure)",
            []()
            {
                return std::vector<std::string>{"sustained", "boost"};
            },
            "sustained")
            .For({"gemm", "attention"}),
        // The call of `attention`.
        Count("head-dim", "head dimension", 1, 1024, "128").For({"attention"}),
        Count("kv-seq",
              "key/value tokens per sequence (default: --seq; the queries are the last --seq)",
              1,
              kMaxCount,
              "")
            .For({"attention"}),
        Flag("causal", "causal mask (the blocks above the diagonal are skipped)", "true")
            .For({"attention"}),
        Count("window",
              "causal sliding window: each query sees at most its last N keys (0: none; "
              "the blocks left of the window are skipped)",
              0,
              kMaxCount,
              "0")
            .For({"attention"}),
        // The collective of `collective`.
        Choice("op", "collective", CollectiveOpNames, "all-reduce").For({"collective"}),
        Size("bytes", "size as nccl-tests counts it, e.g. 1GiB, 256MiB, 4K", 1, 1ull << 60, "1GiB")
            .For({"collective"}),
        Text("algorithm", "collective algorithm", "auto", CollectiveAlgorithmNames)
            .For({"collective"}),
        Count("chunks", "pipeline pieces (0 = the algorithm's default)", 0, 65536, "0")
            .For({"collective"}),
        Count("root", "root rank of broadcast / reduce", 0, kMaxGpus - 1, "0").For({"collective"}),
        Count("links", "also list the N most loaded links", 0, kMaxCount, "0").For({"collective"}),
        Text("beside",
             "transfers sent with the collective, at its start, sharing its links: "
             "SRC>DST:BYTES[,...], ranks of the group and a size as --bytes takes it (e.g. "
             "--beside='0>4:2MiB', quoted for the shell's >); the collective's time is still its "
             "own",
             "")
            .For({"collective"}),
        // The studies.
        Text("links",
             "the links to fault, one study row each: a selector as --fault takes it (A-B, A>B, "
             "A, tier:DIMENSION), or random:K:SEED (K links drawn with SEED), or a GPU instead: "
             "compute:gpu<i> (GPU i slowed to the factor of its compute speed, a straggler), "
             "hbm:gpu<i> (its HBM at the factor of its bandwidth) or power:gpu<i> (capped at the "
             "factor of its board power); several separated by ';'",
             "")
            .For({"study faults"})
            .RequiredIn({"study faults"}),
        Text("factors",
             "bandwidth factors of the faulted links (1 = healthy, 0 = dead); of a GPU set, the "
             "share left of its compute speed, HBM bandwidth or board power, 0 refused in its "
             "rows (GPU sets alone default to 1,0.75,0.5,0.25)",
             "1,0.75,0.5,0.25,0")
            .For({"study faults"}),
        Count("packet-check",
              "re-run N of the faulted rows on the packet backend with a scaled-down job (the same "
              "ranks and layout; one layer per stage, tp heads wide, one micro-batch of at most "
              "512 tokens per pipeline) and print the flow/packet difference",
              0,
              1000,
              "0")
            .For({"study faults"}),
        Text("vary",
             "FIELD=V1,V2,...: a spec field (as --set names it) and its values, each a value or a "
             "scale (0.5x); one row per value. A field a job option also sets (model.layers with "
             "--layers; likewise --hidden, --heads, --kv-heads, --ffn, --vocab) is refused, as "
             "the option would win in every row",
             "")
            .For({"study hardware"})
            .RequiredIn({"study hardware"}),
        Count("top-links", "most loaded links to keep per row", 0, 1000, "5").For({"study faults"}),
        Real("reduce-GBps",
             "local reduction rate in GB/s charged after each reduced receive: 0 (fused with the "
             "copy, as NCCL's kernels do) or at least 1",
             0,
             1e9,
             "0")
            .For({"collective"}),
        // Studies.
        Flag("quick", "only the small workloads (as the test suite runs)", "false")
            .For({"xval", "validate"})
            .HelpIn("validate",
                    "fewer rows: training up to 256 GPUs (NeMo 64, LLM Foundry 8), inference up "
                    "to 128 generated tokens"),
        Text("only", "run only workloads whose name contains this text", "")
            .For({"xval", "validate"})
            .HelpIn("validate",
                    "run only the tables whose file name contains this text (e.g. nemo, nccl, "
                    "lmdeploy)"),
        Real("bar", "largest accepted |relative difference|", 0, 1, "0.05").For({"xval"}),
        Choice(
            "resolution",
            "simulator time resolution: at ns a 4098-byte frame at 240 GB/s (17.08 ns) is "
            "rounded to 17 ns, a 0.4% rate error",
            []()
            {
                return std::vector<std::string>{"ps", "ns"};
            },
            "ps")
            .For({"xval"}),
        Text("packet",
             "with --backend=packet: the packet network's attributes NAME=VALUE[,...], e.g. "
             "WindowBdps=2,MinRto=1ms",
             "")
            .For({"xval",
                  "run",
                  "replay",
                  "sweep",
                  "collective",
                  "study hardware",
                  kServing,
                  "study faults"})
            .HelpIn("xval",
                    "PacketNetwork attributes NAME=VALUE[,...], e.g. QueueDisc=fifo,MinRto=1ms")
            .HelpIn("study faults",
                    "with --packet-check=N: the packet network's attributes NAME=VALUE[,...] of "
                    "the spot checks, e.g. WindowBdps=2"),
        Text("data", "folder of the published tables", ValidationSuite::DataDir())
            .For({"validate"}),
        Count("top", "layouts to print of each kind (0: all)", 0, kMaxCount, "10")
            .For({"sweep", kServing})
            .HelpIn(kServing, "rows to print that fit and that do not (0: all)"),
        Choice("batching",
               "how a replica batches its requests: auto (the engine's: continuous for lmdeploy "
               "and vllm, static otherwise), static (the batch from prefill to its last token, "
               "as run predicts a request), continuous (the batch is the requests in flight, "
               "a finished one's slot taken by a new one), chunked (continuous, each new "
               "prompt prefilled inside the running decode steps, in chunks beyond "
               "--token-budget: vLLM V1, SGLang) or disaggregated (the layouts decode "
               "continuously, fed by prefill instances of the best layout of the lists, which "
               "send each request's KV cache over the network)",
               BatchingNames,
               "auto")
            .For({kServing}),
        Count("token-budget",
              "chunked batching: tokens one step may carry, decodes and prefill chunks (vLLM's "
              "max_num_batched_tokens; 0: vLLM's online-server default, 8192 on GPUs of 70 GiB "
              "or more but the A100, 2048 otherwise); continuous batching: prompt tokens one "
              "prefill iteration may carry, at least one prompt's computed tokens (0: vLLM's "
              "default before V1, max(max_model_len, 2048), or lmdeploy's "
              "max_prefill_token_num, 8192)",
              0,
              1u << 24,
              "0")
            .For({kServing}),
        CliOption(OptionSpec::Real("tpot-slo",
                                   "time per output token target, ms (0: none): the layouts within "
                                   "it (and --ttft-slo) "
                                   "rank first",
                                   0,
                                   1e12,
                                   "0")
                      .Unit("ms"))
            .For({kServing}),
        CliOption(
            OptionSpec::Real(
                "ttft-slo",
                "time to first token target, ms (0: none): the layouts within it (and --tpot-slo) "
                "rank first",
                0,
                1e12,
                "0")
                .Unit("ms"))
            .For({kServing}),
        Real("rate",
             "open-loop arrivals: requests per second arriving at the GPUs, a Poisson process "
             "(vLLM's benchmark_serving.py --request-rate) dealt to the instances (--router); each "
             "layout's engine is simulated step by step and its rows give the latency "
             "percentiles and the share of requests within the targets (0: closed loop, every "
             "slot always busy)",
             0,
             1e9,
             "0")
            .For({kServing}),
        Count("requests",
              "with --rate or --goodput: requests simulated for each layout (0: enough for its "
              "steady state, ten turns of its every slot, at least 1000, benchmark_serving.py's "
              "--num-prompts default, and at most 50000)",
              0,
              1u << 24,
              "0")
            .For({kServing}),
        Real("attainment",
             "with --rate or --goodput: percent of the requests that must meet both targets for "
             "a layout to meet them (DistServe's SLO attainment)",
             1e-6,
             100,
             "90")
            .For({kServing}),
        Count("seed", "with --rate or --goodput: the arrival process's seed", 0, kMaxCount, "1")
            .For({kServing}),
        Real("spread",
             "with --rate or --goodput: each request's prompt and generated tokens uniform from "
             "L (1 - S) to L (1 + S) around the job's (as benchmark_serving.py's random dataset "
             "spreads them; 0: all the job's)",
             0,
             0.99,
             "0")
            .For({kServing}),
        Real("prefix-hit",
             "with --cached-prefix: percent of the requests that find the cached prefix (vLLM's "
             "prefix cache hit rate; the others compute their whole prompt): the layouts are "
             "replayed at the mean cached tokens and, under --rate or --goodput, each request's "
             "hit is drawn",
             0,
             100,
             "100")
            .For({kServing}),
        Count("prefixes",
              "with --cached-prefix under --rate, --goodput or --size: K prefix groups, each "
              "request's prompt starting with one of K distinct prefixes of --cached-prefix "
              "tokens drawn uniformly (system prompts, as SGLang's generated-shared-prefix "
              "benchmark), found only in the cache of an instance that holds it (0: every "
              "request finds the one prefix)",
              0,
              1u << 24,
              "0")
            .For({kServing}),
        Real("prefix-skew",
             "with --prefixes: their popularity, Zipf's law of this exponent (group g drawn with "
             "weight 1 / g^S; 0: uniform)",
             0,
             10,
             "0")
            .For({kServing}),
        Real("burstiness",
             "with --rate or --goodput: the gamma shape of the gaps between arrivals, as "
             "benchmark_serving.py's --burstiness (1: Poisson; below 1 burstier, above 1 more "
             "even)",
             1e-3,
             1e3,
             "1")
            .For({kServing}),
        CliOption(
            OptionSpec::Real(
                "batch-delay",
                "static batching under --rate or --goodput: ms an idle replica waits after the "
                "oldest waiting request came for more to fill its batch (Triton's dynamic batcher "
                "max_queue_delay_microseconds; 0: it starts with those waiting)",
                0,
                1e6,
                "0")
                .Unit("ms"))
            .For({kServing}),
        Choice("router",
               "with --rate or --goodput: how the arriving requests are dealt to a layout's "
               "instances: round-robin (in turn, as benchmark clients spread them) or "
               "least-outstanding (each to the instance with the fewest requests waiting or in "
               "flight as it comes: Vidur's lor global scheduler, a load balancer's "
               "least-request policy; disaggregated, the decode instance as each prefill ends) "
               "or, with --prefixes, cache-aware (SGLang's and vLLM's routers' cache_aware "
               "policy: to an instance holding the request's prefix unless the load is "
               "unbalanced; disaggregated, the prefill instances so, the decode instances the "
               "least outstanding)",
               RouterNames,
               "round-robin")
            .For({kServing}),
        Text(
            "arrivals",
            "with or without --rate or --goodput: replay the requests recorded in a CSV file "
            "(arrival_s[,prompt,generated[,cached]], or the Azure LLM inference trace's "
            "TIMESTAMP,ContextTokens,GeneratedTokens), its times scaled to --rate (default: "
            "the trace's own rate); with lengths, --prompt, --gen (and --cached-prefix) default to "
            "their means",
            "")
            .For({kServing}),
        Flag("goodput",
             "find each layout's goodput: the highest request rate (Poisson, --burstiness or "
             "--arrivals) at which --attainment of the requests meet --tpot-slo and --ttft-slo "
             "(DistServe), rank by it per GPU and show each layout at it",
             "false")
            .For({kServing}),
        Flag("size",
             "with --rate and --tpot-slo or --ttft-slo: size each layout for the rate instead of "
             "filling --gpus: its fewest instances (at most --gpus' worth; disaggregated, the "
             "prefill and decode instances taking the fewest GPUs) at which --attainment of the "
             "requests meet the targets; rank by the GPUs they take",
             "false")
            .For({kServing}),
        Choice("pipeline-split",
               "how layouts split the layers over their pipeline stages: even (layers / (pp x "
               "vpp) per model chunk; other layouts are skipped), first-last (where that fails, "
               "fewer layers on the first and the last stage, as Meta trained Llama-3 405B) or "
               "embedding-loss (the embedding and the loss count as one layer each, as "
               "Megatron-Bridge's Llama-3.1 405B recipe)",
               PipelineSplitNames,
               "even")
            .For({"sweep"}),
        Real("host-memory",
             "host memory a job's graphs may take, GiB (about " + FormatNumber(kHostBytesPerNode)
                 + " bytes per operator: a longer generation or more micro-batches need more), at "
                   "most this machine's; each of a sweep's workers may take it",
             0.125,
             1048576,
             FormatNumber(kDefaultWorkloadHostGiB))
            .For({"run",
                  "memory",
                  "trace",
                  "replay",
                  "study faults",
                  "study hardware",
                  "sweep",
                  kServing}),
        // Sweeps at scale.
        Count("workers",
              "worker processes, one layout each at a time (0: one per processor)",
              0,
              4096,
              "0")
            .For({"sweep", kServing}),
        Flag("resume",
             "continue the sweep whose results.csv is in --out (the layouts it has are kept)",
             "false")
            .For({"sweep"}),
        Text("shard",
             "run only shard I of N (I = 1..N): the layouts whose index modulo N is I - 1; "
             "`rapid-llm merge` joins the shards' folders",
             "")
            .For({"sweep"}),
        Flag("plot",
             "also draw DIR/sweep.png (step time and peak memory per layout, with gnuplot)",
             "false")
            .For({"sweep", "merge"}),
        Text("dirs",
             "the sweep folders (shards) to merge: bare arguments (merge DIR...) or --dirs=DIR",
             "")
            .For({"merge"})
            .Positional()
            .RequiredIn({"merge"}),
        Flag("progress",
             "progress on stderr: done, rate and ETA (default: when stderr is a terminal)",
             "")
            .For({"run", "replay", "collective", "sweep", "study faults", kServing}),
        Text("timeline",
             "write a Chrome/Perfetto trace-event timeline (JSON) of the replay to this file",
             "")
            .For({"run", "replay"}),
        // Inputs and outputs.
        Text("trace",
             "trace prefix: files PREFIX.<rank>.et, or the directory `trace --out` wrote them to",
             "")
            .For({"replay", "trace-info"})
            .RequiredIn({"replay", "trace-info"}),
        Text("comm-groups", "communicator groups JSON (default PREFIX.comm_groups.json)", "")
            .For({"replay"}),
        Text("out", "also write the traces and report.json to this directory", "")
            .For({"run", "trace", "study faults", "study hardware", "sweep", "merge", kServing})
            .HelpIn("trace", "directory to write the traces to (created if missing)")
            .HelpIn("run",
                    "also write the traces, report.json and breakdown.png (the step breakdown) to "
                    "this directory")
            .HelpIn("study faults",
                    "directory for results.csv, results.json and slowdown.png (created if "
                    "missing)")
            .HelpIn("study hardware",
                    "directory for results.csv, results.json, step-time.png and memory.png "
                    "(created if missing)")
            .HelpIn("sweep",
                    "directory for results.csv (a row appended as each layout finishes, ranked "
                    "at the end) and sweep.json (the inputs)")
            .HelpIn("merge", "directory for the merged results.csv and sweep.json")
            .HelpIn(kServing,
                    "also write results.csv, results.json and throughput-latency.png to this "
                    "directory (created if missing)")
            .RequiredIn({"trace", "study faults", "study hardware", "merge"}),
        Text("prefix", "file name prefix", "trace").For({"trace"}),
        Flag("gzip", "gzip-compress the .et files", "false").For({"trace"}),
        Flag("symmetry",
             "replay one rank per set of symmetric copies (exact on symmetric networks, where the "
             "routing moves every path with its ranks; false replays every rank)",
             "true")
            .For({"run", "study faults", "study hardware", kServing}),
        Flag("csv", "print the table as CSV (a header line, then one line per row)", "false")
            .For({"run",
                  "replay",
                  "memory",
                  "study faults",
                  "study hardware",
                  "validate",
                  "xval",
                  "presets",
                  "gemm",
                  "attention",
                  "trace-info",
                  "collective",
                  "sweep",
                  kServing})
            .HelpIn("sweep",
                    "print the ranked layouts as CSV, the columns of results.csv (breakdown "
                    "and peak memory per layout)")
            .HelpIn("collective",
                    "print the result as CSV (a header line, then the collective's row; with "
                    "--links=N the table of the N most loaded links instead)")
            .HelpIn("trace-info",
                    "print the per-rank table as CSV (a header line, then one line per rank; "
                    "times in ns, sizes in bytes)"),
        Flag("per-rank",
             "also report every rank's finish time and breakdown (compute, exposed "
             "communication, pipeline bubble, host); in JSON a \"ranks\" array, with --csv the "
             "per-rank table instead of the step's row",
             "false")
            .For({"run", "replay"}),
        Flag("json", "print the result as JSON (JSON wins where --csv is also given)", "false")
            .For({"run",
                  "replay",
                  "memory",
                  "gemm",
                  "attention",
                  "collective",
                  "validate",
                  "xval",
                  "sweep",
                  "study faults",
                  "study hardware",
                  kServing})
            .HelpIn("sweep",
                    "print {\"input\": the sweep's inputs (as DIR/sweep.json, with the version), "
                    "\"rows\": the ranked layouts} as JSON"),
        // Every command.
        Text("load",
             "shared library of extensions (routing policies, collective algorithms, network "
             "backends) to load before the options are read; may be given more than once",
             "")
            .For({"*"})
            .Repeatable(),
        Choice(
            "granularity",
            "how collectives run on the flow network: auto or fluid (each algorithm's concurrent "
            "streams), message (every message); default: auto, except xval and collective, "
            "which run messages",
            []()
            {
                return std::vector<std::string>{"auto", "fluid", "message"};
            },
            "")
            .For({"run",
                  "replay",
                  "sweep",
                  "collective",
                  "xval",
                  "validate",
                  "study faults",
                  "study hardware",
                  kServing}),
        Flag("timing",
             "report wall-clock and CPU time (on stderr, and per row in validate and xval); off by "
             "default so that the same inputs give byte-identical output",
             "false")
            .For({"*"}),
    };
    options.insert(options.end(), own.begin(), own.end());
    return options;
}

} // namespace

CliOption::CliOption(const OptionSpec& spec)
    : OptionSpec(spec)
{}

CliOption
CliOption::For(const std::set<std::string>& names) const
{
    CliOption o = *this;
    o.commands = names;
    return o;
}

CliOption
CliOption::DefaultIn(const std::string& command, const std::string& value) const
{
    CliOption o = *this;
    o.fallbackIn[command] = value;
    return o;
}

CliOption
CliOption::HelpIn(const std::string& command, const std::string& text) const
{
    CliOption o = *this;
    o.helpIn[command] = text;
    return o;
}

CliOption
CliOption::ListIn(const std::string& command, const std::string& value) const
{
    CliOption o = *this;
    o.listIn[command] = value;
    return o;
}

CliOption
CliOption::Repeatable() const
{
    CliOption o = *this;
    o.repeatable = true;
    return o;
}

CliOption
CliOption::Positional() const
{
    CliOption o = Repeatable();
    o.positional = true;
    return o;
}

CliOption
CliOption::RequiredIn(const std::set<std::string>& names) const
{
    CliOption o = *this;
    o.requiredIn = names;
    return o;
}

bool
CliOption::TakenBy(const std::string& command) const
{
    return commands.count("*") > 0 || commands.count(command) > 0;
}

std::string
CliOption::DefaultFor(const std::string& command) const
{
    auto list = listIn.find(command);
    if (list != listIn.end())
    {
        return list->second;
    }
    auto it = fallbackIn.find(command);
    return it != fallbackIn.end() ? it->second : fallback;
}

std::string
CliOption::HelpFor(const std::string& command) const
{
    auto it = helpIn.find(command);
    // The mode matters only where --mode is an option.
    const CliOption* modeOption = FindCliOption("mode");
    return HelpText(it != helpIn.end() ? it->second : help,
                    listIn.count(command) > 0,
                    modeOption && modeOption->TakenBy(command),
                    requiredIn.count(command) > 0);
}

const std::vector<CliOption>&
GetCliOptions()
{
    static const std::vector<CliOption> options = MakeOptions();
    return options;
}

const CliOption*
FindCliOption(const std::string& name, const std::string& command)
{
    const CliOption* first = nullptr;
    for (const auto& o : GetCliOptions())
    {
        if (o.name == name)
        {
            if (command.empty() || o.TakenBy(command))
            {
                return &o;
            }
            first = first ? first : &o;
        }
    }
    return first;
}

} // namespace rapidllm
} // namespace ns3
