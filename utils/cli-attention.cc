/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// rapid-llm attention: the predicted time of one attention call (forward and backward) on one
// GPU, and why: the kernel the run's setting resolves to, its tiling, waves, traffic at each
// memory level and the bounding level. The attention counterpart of `gemm`.

#include "cli-commands.h"
#include "cli-job-options.h"
#include "ns3/attention-kernel-choice.h"
#include "ns3/gpu-compute-model.h"
#include "ns3/hardware-spec.h"
#include "ns3/job-echo.h"
#include "ns3/report-json.h"
#include "ns3/report-output.h"
#include "ns3/spec-error.h"

#include <cmath>
#include <iostream>
#include <string>
#include <vector>

namespace ns3 {
namespace rapidllm {

namespace {

/** The shape of the call, checked against the GPU-independent limits of the compute model. */
AttentionShape
ShapeOf(const CliArgs& args)
{
    AttentionShape s;
    s.batch = args.Count("batch");
    s.heads = args.Count("heads");
    s.kvHeads = args.Text("kv-heads").empty() ? s.heads : args.Count("kv-heads");
    s.queryLen = args.Count("seq");
    s.kvLen = args.Text("kv-seq").empty() ? s.queryLen : args.Count("kv-seq");
    s.headDim = args.Count("head-dim");
    s.causal = args.Flag("causal");
    s.window = args.Count("window");
    if (s.window > 0 && !s.causal)
    {
        throw SpecError(kCommandLine,
                        "window",
                        "a sliding window needs the causal mask (--causal=true): it is the "
                        "last keys before each query");
    }
    if (s.heads % s.kvHeads != 0)
    {
        throw SpecError(kCommandLine,
                        "kv-heads",
                        std::to_string(s.kvHeads)
                            + " does not divide --heads=" + std::to_string(s.heads));
    }
    if (s.kvLen < s.queryLen)
    {
        throw SpecError(kCommandLine,
                        "kv-seq",
                        std::to_string(s.kvLen)
                            + " is shorter than --seq=" + std::to_string(s.queryLen)
                            + " (the queries are the last --seq of "
                              "the --kv-seq keys)");
    }
    // Every count below is exact in a double: the score matrix at most 2^53 elements.
    const long double scores = (long double) s.batch * s.heads * s.queryLen * s.kvLen;
    if (scores > std::ldexp(1.0L, 53))
    {
        throw SpecError(kCommandLine,
                        "seq",
                        "batch x heads x seq x kv-seq is above 2^53 score elements; reduce "
                        "--batch, --heads, --seq or --kv-seq");
    }
    return s;
}

} // namespace

int
RunAttentionCommand(const CliArgs& args)
{
    AttentionShape s = ShapeOf(args);
    DataType type;
    ParseDataType(args.Text("dtype"), type);
    std::vector<SpecOverride> overrides;
    HardwareSpec hw =
        LoadHardwareWithSet(args, "attention takes its shape from its options", overrides);
    if (IsWeightOnly(type))
    {
        throw SpecError(
            kCommandLine,
            "dtype",
            ToString(type) + " is a weight-only type (the GEMMs' weights); attention takes "
                + RunnableTypes(hw.gpu, TypeUse::ATTENTION) + " tensors on the " + hw.gpu.name);
    }
    RefuseUnrunnableType(hw.gpu, type, args.Text("hardware"), TypeUse::ATTENTION);
    const std::string cudaCores = hw.gpu.CudaCoreNote(type);
    if (!cudaCores.empty())
    {
        std::cerr << "rapid-llm attention: note: " << cudaCores << "\n";
    }
    if (type == DataType::INT8 || type == DataType::FP8)
    {
        // What the command prices is a kernel at the type's rate; the published ones differ.
        std::cerr << "rapid-llm attention: note: "
                  << (type == DataType::INT8
                          ? std::string("no published fused attention kernel computes in int8 "
                                        "(FlashAttention-2 and -3 and cuDNN take 16-bit or, "
                                        "FlashAttention-3 forward only, fp8 tensors)")
                          : std::string("FlashAttention-3's fp8 kernel is forward-only"))
                  << "; both passes are predicted at the GPU's " << ToString(type)
                  << " rate as if such a kernel ran; run, trace and the studies keep attention "
                     "in 16 bits whatever --dtype\n";
    }
    Ptr<GpuComputeModel> model = KernelModel(args, hw, overrides);
    RunSpec run;
    run.SetAttention(args.Text("attention"));
    const bool unfused = !run.flashAttention;
    s.kernel = AttentionKernelOf(run.fusedAttention);
    std::string kernel =
        unfused ? "standard"
                : AttentionKernelName(ResolveAttentionKernel(hw.gpu, s.kernel, type, s.headDim));
    // One query a sequence over a longer cache is a decode step's: a fused run (a serving
    // engine's) times its forward with the split-KV decode kernel, as `run` does; the backward
    // stays the fused kernel's, for reference.
    const bool decode = !unfused && s.queryLen == 1 && s.kvLen > 1 && s.window == 0;
    const std::string backwardKernel = kernel;
    if (decode)
    {
        kernel = "split-kv-decode";
    }
    const std::vector<std::pair<std::string, OperatorCost>> passes = {
        {"forward",
         unfused  ? model->UnfusedAttentionForward(s, type)
         : decode ? model->DecodeAttention(s.batch, s.heads, s.kvHeads, s.kvLen, s.headDim, type)
                  : model->AttentionForward(s, type)},
        {"backward",
         unfused ? model->UnfusedAttentionBackward(s, type) : model->AttentionBackward(s, type)}};

    if (args.Flag("json"))
    {
        Json j = {{"hardware", hw.name},
                  {"attention", args.Text("attention")},
                  {"kernel", kernel},
                  {"backward_kernel", backwardKernel},
                  {"batch", s.batch},
                  {"heads", s.heads},
                  {"kv_heads", s.kvHeads},
                  {"seq", s.queryLen},
                  {"kv_seq", s.kvLen},
                  {"head_dim", s.headDim},
                  {"causal", s.causal},
                  {"window", s.window},
                  {"dtype", ToString(type)},
                  {"clock", args.Text("clock")}};
        // The version, and ns-3 defaults from the environment, as every command echoes them.
        j["version"] = RapidLlmVersion();
        EchoAttributeDefaults(j);
        if (!overrides.empty())
        {
            j["set"] = OverridesJson(overrides);
        }
        for (const auto& [pass, c] : passes)
        {
            j[pass] = Json(c);
        }
        std::cout << DumpJson(j);
        return 0;
    }
    if (args.Flag("csv"))
    {
        std::cout << CsvLine(
            {"hardware",       "kernel",   "pass",       "batch",         "heads",
             "kv_heads",       "seq",      "kv_seq",     "head_dim",      "causal",
             "window",         "dtype",    "time_s",     "tflops",        "bound",
             "block_m",        "block_n",  "tiles",      "waves",         "flops",
             "smem_bytes",     "l2_bytes", "hbm_bytes",  "compute_s",     "smem_s",
             "l2_s",           "hbm_s",    "overhead_s", "clock_mhz",     "utilization",
             "sm_utilization", "power_w",  "energy_j",   "board_energy_j"});
        for (const auto& [pass, c] : passes)
        {
            std::cout << CsvLine({hw.name,
                                  pass == "forward" ? kernel : backwardKernel,
                                  pass,
                                  std::to_string(s.batch),
                                  std::to_string(s.heads),
                                  std::to_string(s.kvHeads),
                                  std::to_string(s.queryLen),
                                  std::to_string(s.kvLen),
                                  std::to_string(s.headDim),
                                  s.causal ? "true" : "false",
                                  std::to_string(s.window),
                                  ToString(type),
                                  FormatNumber(c.timeS),
                                  FormatNumber(c.FlopRate() / 1e12),
                                  ToString(c.SlowestLevel()),
                                  std::to_string(c.tiling.blockM),
                                  std::to_string(c.tiling.blockN),
                                  std::to_string(c.tiles),
                                  FormatNumber(c.waves),
                                  FormatExact(c.flops),
                                  FormatExact(c.smemBytes),
                                  FormatExact(c.l2Bytes),
                                  FormatExact(c.hbmBytes),
                                  FormatNumber(c.computeTimeS),
                                  FormatNumber(c.smemTimeS),
                                  FormatNumber(c.l2TimeS),
                                  FormatNumber(c.hbmTimeS),
                                  FormatNumber(c.overheadTimeS),
                                  c.clockHz > 0 ? FormatNumber(c.clockHz / 1e6) : "",
                                  FormatNumber(c.utilization),
                                  FormatNumber(c.smUtilization),
                                  // As gemm's: empty without a power model.
                                  c.clockHz > 0 ? FormatNumber(c.powerW) : "",
                                  c.clockHz > 0 ? FormatNumber(c.energyJ) : "",
                                  c.clockHz > 0 ? FormatNumber(c.powerW * c.timeS) : ""});
        }
        return 0;
    }
    std::cout << "Attention " << s.batch << " x " << s.heads << " heads (" << s.kvHeads << " KV) x "
              << s.queryLen
              << (s.kvLen != s.queryLen ? "/" + std::to_string(s.kvLen) : std::string())
              << " tokens, head dim " << s.headDim << (s.causal ? ", causal" : "")
              << (s.window > 0 ? ", window " + std::to_string(s.window) : std::string()) << ", "
              << ToString(type) << " on " << hw.GpuLabel() << "\n"
              << "  kernel          " << kernel
              << (decode ? " (one query a sequence: a decode step's kernel, as run times it; "
                           "the backward is "
                               + backwardKernel + "'s)"
                  : args.Text("attention") == "auto" ? " (auto: the GPU's)"
                                                     : "")
              << "\n";
    for (const auto& [pass, c] : passes)
    {
        std::cout << "  " << pass << (pass == "forward" ? " " : "") << "        "
                  << FormatNumber(c.timeS * 1e3, 5) << " ms, "
                  << FormatNumber(c.FlopRate() / 1e12, 5) << " TFLOP/s, "
                  << ToString(c.SlowestLevel()) << " bound";
        if (!unfused && !(decode && pass == "forward"))
        {
            std::cout << ", blocks " << c.tiling.blockM << " x " << c.tiling.blockN << ", "
                      << c.tiles << " in " << FormatNumber(c.waves, 4) << " waves";
        }
        std::cout << "\n";
    }
    return 0;
}

static CliCommandRegistrar g_attentionCommand(
    "attention",
    "predict one attention call's forward and backward time, kernel and bounding level",
    "Predicts one attention call (batch x heads x seq queries over kv-seq keys, head dimension "
    "head-dim) on one GPU, forward and backward: the kernel --attention resolves to, time, "
    "TFLOP/s (the causal count is half the matrix), tiling, waves and the bounding level.",
    RunAttentionCommand);

} // namespace rapidllm
} // namespace ns3
