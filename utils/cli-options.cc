/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "cli-options.h"

#include "ns3/collective-algorithms.h"
#include "ns3/layout-sweep.h"
#include "ns3/network-backend.h"
#include "ns3/preset-registry.h"
#include "ns3/routing-policy.h"
#include "ns3/run-spec.h"
#include "ns3/spec-reader.h"
#include "ns3/validation-suite.h"

#include <cctype>
#include <cmath>
#include <cstdio>

namespace ns3 {
namespace rapidllm {

namespace {

/** The largest number of GPUs (endpoints) a network can have. */
constexpr uint64_t kMaxGpus = 1ull << 24;
/** The largest count a run setting holds (counts are 32-bit). */
constexpr uint64_t kMaxCount = 4294967295ull;

/** The commands that describe a job by model, hardware, layout and run settings. */
const std::set<std::string> kJob = {"memory", "run", "trace"};

/** \return \p a with the commands of \p b */
std::set<std::string>
Plus(std::set<std::string> a, const std::set<std::string>& b)
{
    a.insert(b.begin(), b.end());
    return a;
}

/** \return a number as printed in messages: whole numbers in full, others by %g */
std::string
NumberText(double x)
{
    char buffer[64];
    if (x == std::floor(x) && std::fabs(x) < 1e15)
    {
        std::snprintf(buffer, sizeof(buffer), "%.0f", x);
    }
    else
    {
        std::snprintf(buffer, sizeof(buffer), "%g", x);
    }
    return buffer;
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

/** \return the names a function lists, or none */
std::vector<std::string>
NamesOf(const std::function<std::vector<std::string>()>& f)
{
    return f ? f() : std::vector<std::string>();
}

/** Builds the table once; the choices are read when used (after any --load). */
std::vector<CliOption>
MakeOptions()
{
    auto runChoices = [](const std::string& field)
    {
        return [field]()
        {
            return RunSpec::Choices(field);
        };
    };
    const std::set<std::string> jobAndSweep = Plus(kJob, {"sweep"});
    // The sweep's default lists are the helper's (SweepSpace), not a copy.
    const SweepSpace sweep;
    auto number = [](uint32_t v)
    {
        return std::to_string(v);
    };
    auto recompute = [](Recompute r)
    {
        return ToString(r);
    };
    return {
        // What runs, and on which machine.
        Text("model",
             "model preset name or YAML file",
             "gpt3-175b",
             []()
             {
                 return PresetRegistry::Names("models");
             })
            .For(jobAndSweep),
        Text("hardware",
             "hardware preset name or YAML file",
             "a100-sxm-80gb",
             []()
             {
                 return PresetRegistry::Names("hardware");
             })
            .For(Plus(jobAndSweep, {"gemm", "replay", "collective"}))
            .DefaultIn("collective", "")
            .RequiredIn({"collective"}),
        // The parallel layout.
        Count("gpus", "GPUs in the job (default tp x pp x dp x cp)", 1, kMaxGpus, "")
            .For(Plus(jobAndSweep, {"collective"}))
            .RequiredIn({"sweep"})
            .HelpIn("sweep", "GPUs of the job")
            .HelpIn("collective", "number of GPUs (ranks 0..N-1)")
            .DefaultIn("collective", "8"),
        Count("tp", "tensor parallel degree", 1, kMaxGpus, "1")
            .For(jobAndSweep)
            .ListIn("sweep", ListText(sweep.tp, number))
            .HelpIn("sweep", "tensor parallel degrees to try"),
        Count("pp", "pipeline parallel stages", 1, kMaxGpus, "1")
            .For(jobAndSweep)
            .ListIn("sweep", ListText(sweep.pp, number))
            .HelpIn("sweep",
                    "pipeline degrees to try (default: every divisor of the layers and GPUs)"),
        Count("dp", "data parallel degree (default: gpus / (tp x pp x cp))", 1, kMaxGpus, "")
            .For(kJob),
        Count("cp", "context parallel degree", 1, kMaxGpus, "1").For(kJob),
        Count("ep", "expert parallel degree (divides dp)", 1, kMaxGpus, "1").For(kJob),
        Count("vpp", "virtual pipeline stages per rank (interleaved 1F1B)", 1, kMaxCount, "1")
            .For(jobAndSweep)
            .Mode("training")
            .ListIn("sweep", ListText(sweep.virtualStages, number))
            .HelpIn("sweep", "virtual pipeline stages per rank to try"),
        Flag("sp", "sequence parallelism (where tp > 1)", "false").For(jobAndSweep),
        Count("zero", "ZeRO stage", 0, 3, "0").For(jobAndSweep).Mode("training"),
        Flag("fsdp", "fully sharded data parallel (ZeRO-3)", "false").For(kJob).Mode("training"),
        // The run.
        Choice("mode", "what the job does", runChoices("mode"), "training").For(kJob),
        Choice("recompute", "activation recomputation", runChoices("recompute"), "none")
            .For(jobAndSweep)
            .Mode("training")
            .ListIn("sweep", ListText(sweep.recompute, recompute))
            .HelpIn("sweep", "recomputation modes to try"),
        Count("mbs", "micro-batch size (sequences)", 1, kMaxCount, "1")
            .Field("micro_batch")
            .For(jobAndSweep)
            .Mode("training")
            .ListIn("sweep", ListText(sweep.microBatch, number))
            .HelpIn("sweep", "micro-batch sizes to try"),
        Count("gbs", "global batch size (sequences; default mbs x dp)", 1, kMaxCount, "")
            .Field("global_batch")
            .For(jobAndSweep)
            .Mode("training")
            .RequiredIn({"sweep"})
            .HelpIn("sweep", "global batch size (sequences)"),
        Count("seq", "sequence length (tokens)", 1, kMaxCount, "2048")
            .Field("sequence")
            .For(jobAndSweep)
            .Mode("training"),
        Count("batch", "inference: concurrent sequences", 1, kMaxCount, "1")
            .For(Plus(kJob, {"gemm"}))
            .Mode("inference")
            .HelpIn("gemm", "independent GEMMs in one batched launch"),
        Count("prompt", "inference: prompt tokens", 1, kMaxCount, "128")
            .For(kJob)
            .Mode("inference"),
        Count("gen", "inference: generated tokens", 1, kMaxCount, "128")
            .Field("generated")
            .For(kJob)
            .Mode("inference"),
        Choice("decode-attention",
               "inference: decode attention kernel: split_kv (flash-decoding) or per_head (one "
               "thread block per sequence and query head, FasterTransformer/TurboMind 2023)",
               runChoices("decode_attention"),
               "split_kv")
            .Field("decode_attention")
            .For(kJob)
            .Mode("inference"),
        Choice("first-token",
               "inference: the pass that samples the first token: prefill, or decode (a first "
               "decode step after a prefill of all but the last prompt token, as TurboMind)",
               runChoices("first_token"),
               "prefill")
            .Field("first_token")
            .For(kJob)
            .Mode("inference"),
        Choice("dtype", "compute type", runChoices("dtype"), "bf16")
            .For(Plus(jobAndSweep, {"gemm"}))
            .HelpIn("gemm", "operand type"),
        Choice("attention",
               "attention kernels: flash or standard (unfused)",
               runChoices("attention"),
               "flash")
            .For(jobAndSweep),
        Choice("grad-reduce",
               "DP gradient reduction: overlap (with backward) or after_backward",
               runChoices("grad_reduce"),
               "overlap")
            .Field("grad_reduce")
            .For(kJob)
            .Mode("training"),
        Choice("tp-reduce",
               "TP reduction of input gradients: overlap (with the weight-gradient GEMM) or "
               "blocking",
               runChoices("tp_reduce"),
               "overlap")
            .Field("tp_reduce")
            .For(kJob)
            .Mode("training"),
        // Shape overrides of the model.
        Count("layers", "override the model's layer count", 1, kMaxCount, "").For(kJob),
        Count("hidden", "override the model's hidden size", 1, kMaxCount, "").For(kJob),
        Count("heads", "override the model's attention heads", 1, kMaxCount, "").For(kJob),
        Count("kv-heads", "override the model's KV heads", 1, kMaxCount, "")
            .Field("kv_heads")
            .For(kJob),
        Count("ffn", "override the model's MLP width", 1, kMaxCount, "").For(kJob),
        Count("vocab", "override the model's vocabulary", 1, kMaxCount, "").For(kJob),
        // The network.
        Text("backend", "network backend", "flow", NetworkBackend::Names)
            .For({"run", "replay", "sweep", "collective"}),
        Text("routing", "routing policy (default: the hardware file's)", "", RoutingPolicy::Names)
            .For({"run", "replay", "collective"}),
        // The GEMM of `gemm`.
        Count("m", "rows of A and C (tokens)", 1, kMaxCount, "").For({"gemm"}).RequiredIn({"gemm"}),
        Count("n", "columns of B and C (output features)", 1, kMaxCount, "")
            .For({"gemm"})
            .RequiredIn({"gemm"}),
        Count("k", "reduction dimension (input features)", 1, kMaxCount, "")
            .For({"gemm"})
            .RequiredIn({"gemm"}),
        // The collective of `collective`.
        Choice("op", "collective", CollectiveOpNames, "all-reduce").For({"collective"}),
        Size("bytes", "size as nccl-tests counts it, e.g. 1GiB, 256MiB, 4K", 1, 1ull << 60, "1GiB")
            .For({"collective"}),
        Text("algorithm",
             "collective algorithm",
             "auto",
             []()
             {
                 std::vector<std::string> names = {"auto"};
                 for (const auto& n : CollectiveAlgorithmNames())
                 {
                     names.push_back(n);
                 }
                 return names;
             })
            .For({"collective"}),
        Text("fault",
             "link faults LINK:FACTOR[,...]; LINK is A-B (both directions) or A>B, nodes named "
             "gpu<i> or by switch name; FACTOR 0 = dead",
             "")
            .For({"collective"}),
        Count("chunks", "pipeline pieces (0 = the algorithm's default)", 0, 65536, "0")
            .For({"collective"}),
        Count("root", "root rank of broadcast / reduce", 0, kMaxGpus - 1, "0").For({"collective"}),
        Count("links", "also list the N most loaded links", 0, kMaxCount, "0").For({"collective"}),
        Real("reduce-GBps",
             "local reduction rate in GB/s, charged after each reduced receive (0 = fused with "
             "the copy, as NCCL's kernels do)",
             0,
             1e9,
             "0")
            .For({"collective"}),
        // Studies.
        Flag("quick", "only the small workloads (as the test suite runs)", "false")
            .For({"xval", "validate"})
            .HelpIn("validate", "only rows up to 256 GPUs and 128 generated tokens"),
        Text("only", "run only workloads whose name contains this text", "").For({"xval"}),
        Real("bar", "largest accepted |relative difference|", 0, 1, "0.05").For({"xval"}),
        Choice(
            "resolution",
            "simulator time resolution: at ns a 9002-byte frame at 240 GB/s (37.3 ns) is rounded "
            "to 37 ns, a 0.8% rate error",
            []()
            {
                return std::vector<std::string>{"ps", "ns"};
            },
            "ps")
            .For({"xval"}),
        Text("packet",
             "PacketNetwork attributes NAME=VALUE[,...], e.g. QueueDisc=fifo,MinRto=1ms",
             "")
            .For({"xval"}),
        Text("data", "folder of the published tables", ValidationSuite::DataDir())
            .For({"validate"}),
        Count("top", "layouts to print of each kind (0: all)", 0, kMaxCount, "10").For({"sweep"}),
        // Inputs and outputs.
        Text("trace", "trace prefix: files PREFIX.<rank>.et", "")
            .For({"replay", "trace-info"})
            .RequiredIn({"replay", "trace-info"}),
        Text("comm-groups", "communicator groups JSON (default PREFIX.comm_groups.json)", "")
            .For({"replay"}),
        Text("out", "also write the traces and report.json to this directory", "")
            .For({"run", "trace"})
            .HelpIn("trace", "directory to write the traces to (created if missing)")
            .RequiredIn({"trace"}),
        Text("prefix", "file name prefix", "trace").For({"trace"}),
        Flag("gzip", "gzip-compress the .et files", "false").For({"trace"}),
        Flag("symmetry",
             "replay one rank per set of symmetric copies (exact on symmetric networks; false "
             "replays every rank)",
             "true")
            .For({"run"}),
        Flag("json", "print the result as JSON", "false")
            .For({"run", "replay", "memory", "gemm", "collective", "validate", "xval", "sweep"}),
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
            .For({"*"}),
        Flag("timing",
             "report wall-clock and CPU time (on stderr, and per row in validate and xval); off by "
             "default so that the same inputs give byte-identical output",
             "false")
            .For({"*"}),
    };
}

} // namespace

CliOption
CliOption::For(const std::set<std::string>& names) const
{
    CliOption o = *this;
    o.commands = names;
    return o;
}

CliOption
CliOption::Field(const std::string& name) const
{
    CliOption o = *this;
    o.field = name;
    return o;
}

CliOption
CliOption::Mode(const std::string& runMode) const
{
    CliOption o = *this;
    o.mode = runMode;
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
    std::string text = it != helpIn.end() ? it->second : help;
    if (kind == CliKind::FLAG)
    {
        return text + " (true or false)";
    }
    std::string allowed = Allowed();
    if (kind == CliKind::TEXT)
    {
        std::vector<std::string> names = NamesOf(choices);
        allowed = names.empty() ? std::string() : "known: " + JoinNames(names);
    }
    if (listIn.count(command))
    {
        allowed = "a comma-separated list; each " + allowed;
    }
    auto add = [&allowed](const std::string& note)
    {
        allowed += (allowed.empty() ? "" : "; ") + note;
    };
    // The mode matters only where --mode is an option.
    const CliOption* modeOption = FindCliOption("mode");
    if (!mode.empty() && modeOption && modeOption->TakenBy(command))
    {
        add("--mode=" + mode + " only");
    }
    if (requiredIn.count(command))
    {
        add("required");
    }
    return allowed.empty() ? text : text + " (" + allowed + ")";
}

std::string
CliOption::Allowed() const
{
    switch (kind)
    {
        case CliKind::FLAG:
            return "true or false";
        case CliKind::COUNT:
            return "a whole number from " + std::to_string(minimum) + " to "
                   + std::to_string(maximum);
        case CliKind::REAL:
            return "a number from " + NumberText(low) + " to " + NumberText(high);
        case CliKind::SIZE:
            return "a size from " + std::to_string(minimum) + " to " + std::to_string(maximum)
                   + " bytes, e.g. 1GiB, 256MiB, 4K, 1000000";
        case CliKind::CHOICE:
            return JoinNames(NamesOf(choices));
        case CliKind::TEXT:
            return "a non-empty value";
    }
    return "";
}

namespace {
/** \return an option of \p kind with its name, help and default */
CliOption
Declare(const std::string& name, const std::string& help, CliKind kind, const std::string& fallback)
{
    CliOption o;
    o.name = name;
    o.help = help;
    o.kind = kind;
    o.fallback = fallback;
    return o;
}
} // namespace

CliOption
Flag(const std::string& name, const std::string& help, const std::string& fallback)
{
    return Declare(name, help, CliKind::FLAG, fallback);
}

CliOption
Count(const std::string& name,
      const std::string& help,
      uint64_t minimum,
      uint64_t maximum,
      const std::string& fallback)
{
    CliOption o = Declare(name, help, CliKind::COUNT, fallback);
    o.minimum = minimum;
    o.maximum = maximum;
    return o;
}

CliOption
Real(const std::string& name,
     const std::string& help,
     double low,
     double high,
     const std::string& fallback)
{
    CliOption o = Declare(name, help, CliKind::REAL, fallback);
    o.low = low;
    o.high = high;
    return o;
}

CliOption
Size(const std::string& name,
     const std::string& help,
     uint64_t minimum,
     uint64_t maximum,
     const std::string& fallback)
{
    CliOption o = Count(name, help, minimum, maximum, fallback);
    o.kind = CliKind::SIZE;
    return o;
}

CliOption
Choice(const std::string& name,
       const std::string& help,
       std::function<std::vector<std::string>()> choices,
       const std::string& fallback)
{
    CliOption o = Declare(name, help, CliKind::CHOICE, fallback);
    o.choices = std::move(choices);
    return o;
}

CliOption
Text(const std::string& name,
     const std::string& help,
     const std::string& fallback,
     std::function<std::vector<std::string>()> names)
{
    CliOption o = Declare(name, help, CliKind::TEXT, fallback);
    o.choices = std::move(names);
    return o;
}

const std::vector<CliOption>&
GetCliOptions()
{
    static const std::vector<CliOption> options = MakeOptions();
    return options;
}

const CliOption*
FindCliOption(const std::string& name)
{
    for (const auto& o : GetCliOptions())
    {
        if (o.name == name)
        {
            return &o;
        }
    }
    return nullptr;
}

std::string
ParseByteSize(const std::string& text, uint64_t& bytes)
{
    std::size_t i = 0;
    while (i < text.size()
           && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.'
               || ((text[i] == 'e' || text[i] == 'E') && i > 0)))
    {
        ++i;
    }
    const std::string number = text.substr(0, i);
    const std::string unit = text.substr(i);
    double value = 0;
    std::size_t used = 0;
    try
    {
        value = std::stod(number, &used);
    }
    catch (const std::out_of_range&)
    {
        return "is too large";
    }
    catch (const std::exception&)
    {
        used = 0;
    }
    if (number.empty() || used != number.size() || !std::isfinite(value))
    {
        return "is not a size";
    }
    struct Unit
    {
        const char* name;
        double factor;
    };
    const Unit units[] = {{"", 1},
                          {"B", 1},
                          {"K", 1024.0},
                          {"KiB", 1024.0},
                          {"KB", 1e3},
                          {"M", 1048576.0},
                          {"MiB", 1048576.0},
                          {"MB", 1e6},
                          {"G", 1073741824.0},
                          {"GiB", 1073741824.0},
                          {"GB", 1e9},
                          {"T", 1099511627776.0},
                          {"TiB", 1099511627776.0},
                          {"TB", 1e12}};
    for (const auto& u : units)
    {
        if (unit == u.name)
        {
            const double b = std::floor(value * u.factor + 0.5);
            // 2^64 is the first double beyond uint64_t.
            if (!(b < 18446744073709551616.0))
            {
                return "is too large";
            }
            bytes = static_cast<uint64_t>(b);
            return "";
        }
    }
    return "has an unknown unit (use B, K/KiB, KB, M/MiB, MB, G/GiB, GB, T/TiB, TB)";
}

} // namespace rapidllm
} // namespace ns3
