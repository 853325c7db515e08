/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "cli-job-options.h"

#include "ns3/spec-error.h"

namespace ns3 {
namespace rapidllm {

namespace {
/** Sets \p out to the option's value when it is given (a model shape override). */
bool
Override(const CliArgs& args, const std::string& name, uint32_t& out)
{
    if (!args.Has(name))
    {
        return false;
    }
    out = static_cast<uint32_t>(args.Count(name)); // declared within 32 bits
    return true;
}
} // namespace

JobOptions::JobOptions(const CliArgs& args)
{
    run.mode = args.Text("mode") == "training" ? RunMode::TRAINING : RunMode::INFERENCE;
    args.CheckMode(ToString(run.mode));
    model = ModelSpec::Load(args.Text("model"));
    hardware = HardwareSpec::Load(args.Text("hardware"));

    bool reshaped = false;
    reshaped |= Override(args, "layers", model.layers);
    reshaped |= Override(args, "hidden", model.hidden);
    reshaped |= Override(args, "heads", model.heads);
    if (Override(args, "kv-heads", model.kvHeads))
    {
        reshaped = true;
    }
    else if (args.Has("heads"))
    {
        model.kvHeads = model.heads;
    }
    reshaped |= Override(args, "ffn", model.ffn);
    reshaped |= Override(args, "vocab", model.vocab);
    if (reshaped)
    {
        if (model.hidden % model.heads != 0)
        {
            throw SpecError(kCommandLine,
                            "heads",
                            "hidden (" + std::to_string(model.hidden)
                                + ") must be divisible by heads (" + std::to_string(model.heads)
                                + ")");
        }
        model.headDim = model.hidden / model.heads;
        if (model.IsMoe() && args.Has("ffn"))
        {
            model.expertFfn = model.ffn;
        }
        model.Validate(kCommandLine);
    }

    // Counts are declared within 32 bits (degrees within the network's 2^24 endpoints); the
    // products below are formed in 64 bits and checked before they are stored.
    auto& p = run.parallel;
    p.tp = static_cast<uint32_t>(args.Count("tp"));
    p.pp = static_cast<uint32_t>(args.Count("pp"));
    p.cp = static_cast<uint32_t>(args.Count("cp"));
    p.ep = static_cast<uint32_t>(args.Count("ep"));
    p.virtualStages = static_cast<uint32_t>(args.Count("vpp"));
    p.zeroStage = args.Flag("fsdp") ? 3 : static_cast<uint32_t>(args.Count("zero"));
    p.sequenceParallel = args.Flag("sp");
    const uint64_t modelParallel = uint64_t(p.tp) * p.pp * p.cp;
    const uint64_t maxGpus = FindCliOption("gpus")->maximum;
    if (args.Has("dp"))
    {
        p.dp = static_cast<uint32_t>(args.Count("dp"));
    }
    else if (args.Has("gpus"))
    {
        const uint64_t gpus = args.Count("gpus");
        if (gpus % modelParallel != 0)
        {
            throw SpecError(kCommandLine,
                            "gpus",
                            std::to_string(gpus) + " GPUs must be divisible by tp x pp x cp ("
                                + std::to_string(modelParallel) + ")");
        }
        p.dp = static_cast<uint32_t>(gpus / modelParallel);
    }
    else
    {
        p.dp = 1;
    }
    if (p.Gpus() > maxGpus)
    {
        throw SpecError(kCommandLine,
                        args.Has("dp") ? "dp" : "tp",
                        "tp x pp x dp x cp = " + std::to_string(p.Gpus())
                            + " GPUs; allowed: at most " + std::to_string(maxGpus));
    }
    if (args.Has("gpus") && p.Gpus() != args.Count("gpus"))
    {
        throw SpecError(kCommandLine,
                        "gpus",
                        std::to_string(args.Count("gpus")) + " GPUs must equal tp x pp x dp x cp ("
                            + std::to_string(p.Gpus()) + ")");
    }

    ParseRecompute(args.Text("recompute"), run.recompute);
    ParseDataType(args.Text("dtype"), run.dtype);
    run.flashAttention = args.Text("attention") == "flash";
    run.overlapGradReduce = args.Text("grad-reduce") == "overlap";
    run.overlapTpReduce = args.Text("tp-reduce") == "overlap";
    run.microBatch = static_cast<uint32_t>(args.Count("mbs"));
    if (args.Has("gbs"))
    {
        run.globalBatch = static_cast<uint32_t>(args.Count("gbs"));
    }
    else
    {
        const uint64_t gbs = uint64_t(run.microBatch) * p.dp;
        const uint64_t maxGbs = FindCliOption("gbs")->maximum;
        if (gbs > maxGbs)
        {
            throw SpecError(kCommandLine,
                            "mbs",
                            "the default global batch mbs x dp = " + std::to_string(run.microBatch)
                                + " x " + std::to_string(p.dp) + " = " + std::to_string(gbs)
                                + " exceeds " + std::to_string(maxGbs) + "; give --gbs");
        }
        run.globalBatch = static_cast<uint32_t>(gbs);
    }
    run.sequence = static_cast<uint32_t>(args.Count("seq"));
    run.batch = static_cast<uint32_t>(args.Count("batch"));
    run.promptTokens = static_cast<uint32_t>(args.Count("prompt"));
    run.generatedTokens = static_cast<uint32_t>(args.Count("gen"));
    run.splitKvDecode = args.Text("decode-attention") == "split_kv";
    run.firstTokenFromPrefill = args.Text("first-token") == "prefill";
    run.Validate(model, kCommandLine);
}

} // namespace rapidllm
} // namespace ns3
