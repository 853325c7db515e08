/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "cli-job-options.h"

#include "ns3/spec-error.h"
#include "ns3/spec-reader.h"

namespace ns3 {
namespace rapidllm {

namespace {
/** name, help, default text */
struct Option
{
    const char* name;
    const char* help;
    const char* fallback;
};

const Option kOptions[] = {
    {"model", "model preset name or YAML file", "gpt3-175b"},
    {"hardware", "hardware preset name or YAML file", "a100-sxm-80gb"},
    {"gpus", "GPUs in the job (default tp x pp x dp x cp)", ""},
    {"tp", "tensor parallel degree", "1"},
    {"pp", "pipeline parallel stages", "1"},
    {"dp", "data parallel degree (default: gpus / (tp x pp x cp))", ""},
    {"cp", "context parallel degree", "1"},
    {"ep", "expert parallel degree (divides dp)", "1"},
    {"sp", "sequence parallelism: true or false", "false"},
    {"zero", "ZeRO stage 0-3", "0"},
    {"fsdp", "fully sharded data parallel (ZeRO-3): true or false", "false"},
    {"recompute", "activation recomputation: none, selective or full", "none"},
    {"mbs", "micro-batch size (sequences)", "1"},
    {"gbs", "global batch size (sequences; default mbs x dp)", ""},
    {"seq", "sequence length (tokens)", "2048"},
    {"vpp", "virtual pipeline stages per rank (interleaved 1F1B)", "1"},
    {"mode", "training or inference", "training"},
    {"batch", "inference: concurrent sequences", "1"},
    {"prompt", "inference: prompt tokens", "128"},
    {"gen", "inference: generated tokens", "128"},
    {"decode-attention",
     "inference: decode attention kernel: split_kv (flash-decoding) or per_head (one thread block "
     "per sequence and query head, FasterTransformer/TurboMind 2023)",
     "split_kv"},
    {"first-token",
     "inference: the pass that samples the first token: prefill, or decode (a first decode step "
     "after a prefill of all but the last prompt token, as TurboMind)",
     "prefill"},
    {"dtype", "compute type: fp32, tf32, fp16, bf16, fp8, int8", "bf16"},
    {"attention", "attention kernels: flash or standard (unfused)", "flash"},
    {"grad-reduce", "DP gradient reduction: overlap (with backward) or after_backward", "overlap"},
    {"tp-reduce",
     "TP reduction of input gradients: overlap (with the weight-gradient GEMM) or blocking",
     "overlap"},
    {"layers", "override the model's layer count", ""},
    {"hidden", "override the model's hidden size", ""},
    {"heads", "override the model's attention heads", ""},
    {"kv-heads", "override the model's KV heads", ""},
    {"ffn", "override the model's MLP width", ""},
    {"vocab", "override the model's vocabulary", ""},
};

bool
ParseBool(const std::string& name, const std::string& text)
{
    if (text == "true" || text == "1" || text.empty())
    {
        return true;
    }
    if (text == "false" || text == "0")
    {
        return false;
    }
    throw SpecError(
        "command line", "--" + name, "'" + text + "' is not allowed; use true or false");
}

} // namespace

std::string
Choice(const std::string& name, const std::string& text, const std::vector<std::string>& allowed)
{
    for (const auto& a : allowed)
    {
        if (a == text)
        {
            return text;
        }
    }
    throw SpecError("command line",
                    "--" + name,
                    "'" + text + "' is not allowed; allowed values: " + JoinNames(allowed));
}

void
JobOptions::AddTo(CommandLine& cmd)
{
    for (const auto& o : kOptions)
    {
        m_values[o.name] = o.fallback; // CommandLine prints it as the default
        cmd.AddValue(o.name, o.help, m_values[o.name]);
    }
}

std::vector<std::string>
JobOptions::Names() const
{
    std::vector<std::string> names;
    for (const auto& o : kOptions)
    {
        names.emplace_back(o.name);
    }
    return names;
}

std::vector<char*>
JobOptions::WithFlagValues(int argc, char** argv)
{
    m_args.assign(argv, argv + argc);
    for (auto& arg : m_args)
    {
        if (arg == "--sp" || arg == "--fsdp")
        {
            arg += "=true";
        }
    }
    std::vector<char*> args;
    for (auto& arg : m_args)
    {
        args.push_back(arg.data());
    }
    return args;
}

bool
JobOptions::Count(const std::string& name, uint32_t minimum, uint32_t& out) const
{
    const std::string& text = m_values.at(name);
    if (text.empty())
    {
        return false;
    }
    std::size_t used = 0;
    unsigned long value = 0;
    try
    {
        value = std::stoul(text, &used);
    }
    catch (const std::exception&)
    {
        used = 0;
    }
    if (used != text.size() || text[0] == '-' || value < minimum || value > UINT32_MAX)
    {
        throw SpecError("command line",
                        "--" + name,
                        "must be a whole number >= " + std::to_string(minimum) + ", got '" + text
                            + "'");
    }
    out = static_cast<uint32_t>(value);
    return true;
}

void
JobOptions::Resolve()
{
    model = ModelSpec::Load(m_values["model"]);
    hardware = HardwareSpec::Load(m_values["hardware"]);
    bool reshaped = false;
    reshaped |= Count("layers", 1, model.layers);
    reshaped |= Count("hidden", 1, model.hidden);
    reshaped |= Count("heads", 1, model.heads);
    if (Count("kv-heads", 1, model.kvHeads))
    {
        reshaped = true;
    }
    else if (!m_values["heads"].empty())
    {
        model.kvHeads = model.heads;
    }
    reshaped |= Count("ffn", 1, model.ffn);
    reshaped |= Count("vocab", 1, model.vocab);
    if (reshaped)
    {
        if (model.hidden % model.heads != 0)
        {
            throw SpecError("command line",
                            "--heads",
                            "hidden (" + std::to_string(model.hidden)
                                + ") must be divisible by heads (" + std::to_string(model.heads)
                                + ")");
        }
        model.headDim = model.hidden / model.heads;
        if (model.IsMoe() && m_values["ffn"].size())
        {
            model.expertFfn = model.ffn;
        }
        model.Validate("command line");
    }

    auto& p = run.parallel;
    Count("tp", 1, p.tp);
    Count("pp", 1, p.pp);
    Count("cp", 1, p.cp);
    Count("ep", 1, p.ep);
    Count("vpp", 1, p.virtualStages);
    uint32_t zero = 0;
    Count("zero", 0, zero);
    if (zero > 3)
    {
        throw SpecError("command line", "--zero", "allowed values: 0, 1, 2, 3");
    }
    p.zeroStage = ParseBool("fsdp", m_values["fsdp"]) ? 3 : zero;
    p.sequenceParallel = ParseBool("sp", m_values["sp"]);
    uint32_t gpus = 0;
    bool haveGpus = Count("gpus", 1, gpus);
    const uint64_t modelParallel = uint64_t(p.tp) * p.pp * p.cp;
    if (!Count("dp", 1, p.dp))
    {
        if (haveGpus && gpus % modelParallel != 0)
        {
            throw SpecError("command line",
                            "--gpus",
                            "gpus (" + std::to_string(gpus)
                                + ") must be divisible by tp x pp x cp ("
                                + std::to_string(modelParallel) + ")");
        }
        p.dp = haveGpus ? static_cast<uint32_t>(gpus / modelParallel) : 1;
    }
    if (haveGpus && p.Gpus() != gpus)
    {
        throw SpecError("command line",
                        "--gpus",
                        "gpus (" + std::to_string(gpus) + ") must equal tp x pp x dp x cp ("
                            + std::to_string(p.Gpus()) + ")");
    }
    std::string mode = Choice("mode", m_values["mode"], {"training", "inference"});
    run.mode = mode == "training" ? RunMode::TRAINING : RunMode::INFERENCE;
    ParseRecompute(Choice("recompute", m_values["recompute"], RecomputeNames()), run.recompute);
    Choice("dtype", m_values["dtype"], DataTypeNames());
    ParseDataType(m_values["dtype"], run.dtype);
    run.flashAttention =
        Choice("attention", m_values["attention"], {"flash", "standard"}) == "flash";
    run.overlapGradReduce =
        Choice("grad-reduce", m_values["grad-reduce"], {"overlap", "after_backward"}) == "overlap";
    run.overlapTpReduce =
        Choice("tp-reduce", m_values["tp-reduce"], {"overlap", "blocking"}) == "overlap";
    Count("mbs", 1, run.microBatch);
    run.globalBatch = run.microBatch * p.dp;
    Count("gbs", 1, run.globalBatch);
    Count("seq", 1, run.sequence);
    Count("batch", 1, run.batch);
    Count("prompt", 1, run.promptTokens);
    Count("gen", 1, run.generatedTokens);
    run.splitKvDecode =
        Choice("decode-attention", m_values["decode-attention"], {"split_kv", "per_head"})
        == "split_kv";
    run.firstTokenFromPrefill =
        Choice("first-token", m_values["first-token"], {"prefill", "decode"}) == "prefill";
    run.Validate(model, "command line");
}

} // namespace rapidllm
} // namespace ns3
