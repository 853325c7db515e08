/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "memory-model.h"

#include "compute-coster.h"
#include "layer-shapes.h"
#include "ns3/log.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>

namespace ns3 {
namespace rapidllm {

NS_LOG_COMPONENT_DEFINE("RapidLlmMemoryModel");

namespace {
/** vLLM's VLLM_FUSED_MOE_CHUNK_SIZE default (vllm/envs.py, 0.6 to 0.10): tokens a fused MoE
 * call processes at once. */
constexpr uint64_t kFusedMoeChunkTokens = 32768;
} // namespace

uint64_t
PeakActivationBytes(const StageGraph& graph)
{
    int64_t live = 0;
    int64_t peak = 0;
    for (const auto& n : graph.nodes)
    {
        peak = std::max(peak, live + std::max<int64_t>(n.memDelta, 0) + int64_t(n.memTransient));
        live += n.memDelta;
    }
    return static_cast<uint64_t>(std::max<int64_t>(peak, 0));
}

ParameterBytes
ParameterBytesOf(const RunSpec& run)
{
    const bool fp32 = BytesOf(run.dtype) >= 4;
    // The gradient buffer: fp32 or the weights' 16-bit type (RunSpec::GradientType()).
    const uint32_t grads = BytesOf(run.GradientType());
    if (run.ResolvedMemoryLayout() == MemoryLayout::MEGATRON)
    {
        // The distributed optimizer is ZeRO stage 1: it shards only the optimizer's part.
        constexpr uint32_t never = UINT32_MAX;
        if (fp32)
        {
            return {4, 4, 8, never, never};
        }
        if (grads == 4)
        {
            return {2, 4, 12, never, never}; // the fp32 main-gradient buffer (bf16's default)
        }
        // 16-bit gradients (fp16's default, or bf16 with grad_reduce_in_fp32 off): the optimizer
        // keeps an fp32 copy of them beside the master weights and moments.
        return {2, 2, 16, never, never};
    }
    if (run.ResolvedMemoryLayout() == MemoryLayout::APEX)
    {
        // NeMo 1.0's MegatronDistributedFusedAdam (setup_optimization): fp32 optimizer state,
        // parameter all-gather in the model's type, a contiguous gradient buffer in Apex's
        // grad_sync_dtype (default: the state's, fp32); with bf16 weights the fp32 master
        // weights are kept as a 16-bit remainder beside them (store_param_remainders), with
        // fp16 in full (store_params), with fp32 not at all. Only the optimizer part shards.
        constexpr uint32_t never = UINT32_MAX;
        if (fp32)
        {
            return {4, 4, 8, never, never};
        }
        if (run.dtype == DataType::FP16)
        {
            return {2, grads, 12, never, never};
        }
        return {2, grads, 10, never, never}; // bf16 (and fp8): 4 + 4 moments + 2 remainder
    }
    return fp32 ? ParameterBytes{4, 4, 8, 3, 2} : ParameterBytes{2, grads, 12, 3, 2};
}

namespace {
/** The framework assumption of \p run in words, for the report. */
std::string
AssumptionOf(const RunSpec& run, const ParameterBytes& b)
{
    std::ostringstream os;
    const auto& p = run.parallel;
    const bool sharded = p.zeroStage >= 1 && p.DenseReplicas() > 1;
    // The group that shards the state: the data-parallel ranks and the context-parallel ones.
    std::ostringstream group;
    group << (p.cp > 1 ? "dp x cp = " : "dp = ") << p.DenseReplicas();
    if (run.ResolvedMemoryLayout() == MemoryLayout::MEGATRON)
    {
        os << "Megatron-LM, " << ToString(run.ActivationType()) << " weights, "
           << ToString(run.GradientType()) << " gradients, ";
        if (sharded)
        {
            os << "distributed optimizer over " << group.str() << ": " << b.weights + b.gradients
               << " + " << b.optimizer << "/d";
        }
        else
        {
            os << "no distributed optimizer: " << b.weights << " + " << b.gradients << " + "
               << b.optimizer << " = " << b.weights + b.gradients + b.optimizer;
        }
        os << " bytes per parameter (Megatron-LM docs/source/distrib_optimizer.md)";
    }
    else if (run.ResolvedMemoryLayout() == MemoryLayout::APEX)
    {
        os << "NeMo 1.0 distributed_fused_adam (Apex DistributedFusedAdam), "
           << ToString(run.ActivationType()) << " weights, " << ToString(run.GradientType())
           << " gradient buffer, ";
        if (sharded)
        {
            os << "optimizer state sharded over " << group.str() << ": " << b.weights + b.gradients
               << " + " << b.optimizer << "/d";
        }
        else
        {
            os << "one data-parallel rank: " << b.weights << " + " << b.gradients << " + "
               << b.optimizer << " = " << b.weights + b.gradients + b.optimizer;
        }
        os << " bytes per parameter (fp32 moments"
           << (b.optimizer == 10 ? " and a 16-bit remainder of the fp32 master weights" : "")
           << ")";
    }
    else
    {
        os << "DeepSpeed ZeRO / PyTorch FSDP, stage " << p.zeroStage << ": " << b.weights << " + "
           << b.gradients << " + " << b.optimizer
           << " bytes per parameter, sharded by the stage over " << group.str()
           << " (Rajbhandari et al. 2020)";
    }
    if (p.ZeroBubble())
    {
        os << "; the " << p.schedule
           << " pipeline schedule keeps each deferred weight-gradient GEMM's input and "
              "output gradient until its weight pass (sail-sg's WeightGradStore)";
        if (p.VShape())
        {
            os << ", places two model chunks a rank in a V (the first rank holding the embedding "
                  "and the LM head) and lets at most 2 x pp chunk forwards wait for their weight "
                  "pass, 1F1B's count";
        }
    }
    if (run.KeepsFp8Params())
    {
        os << "; fp8: the linear layers' weights kept in fp8 with their transposes "
              "(fp8_param_gather, as NVIDIA's NeMo 2.0 and Megatron-Bridge fp8 recipes set it), "
              "2 bytes per parameter as in bf16 (fp8_params false: bf16 weights beside "
              "Transformer Engine's fp8 copies, 2 more per linear-layer parameter)";
    }
    else if (run.dtype == DataType::FP8)
    {
        os << "; fp8: bf16 weights beside Transformer Engine's fp8 copy of each linear weight "
              "and its transpose, cast on the first micro-batch and kept for the step "
              "(Megatron-LM without --fp8-param-gather; fp8_params false), 2 more bytes per "
              "linear-layer parameter"
           << (run.parallel.zeroStage >= 3
                   ? std::string(" of the layer gathered, made and freed with it (not counted "
                                 "beside the stage's shards)")
               : run.fp8Params
                   ? std::string(" (fp8 weights need a distributed optimizer, zero 1 or more: "
                                 "Megatron-LM refuses --fp8-param-gather without one)")
                   : std::string());
    }
    return os.str();
}
} // namespace

MemoryReport
AnalyzeMemory(const Workload& w, const GpuSpec& gpu)
{
    MemoryReport report;
    // What the job may use of the GPU's memory (vLLM's share, by default 0.9 of it).
    const double share = w.run.MemoryShare();
    report.capacity = share < 1 ? uint64_t(double(gpu.hbmBytes) * share) : gpu.hbmBytes;
    const auto& p = w.run.parallel;
    const LayerShapes shapes(w.model, w.run);
    const uint64_t eb = shapes.elementBytes;
    const ParameterBytes bytes = ParameterBytesOf(w.run);
    if (w.run.mode == RunMode::TRAINING)
    {
        report.memoryLayout = ToString(w.run.ResolvedMemoryLayout());
        report.assumption = AssumptionOf(w.run, bytes);
    }
    else
    {
        // The GEMMs read weights of the run's type (fp8: one byte each, as FP8 engines store
        // them); the KV cache is in its own type (the activations' unless quantized).
        const std::string rest = ToString(w.run.ActivationType());
        report.assumption =
            "inference: " + ToString(w.run.dtype) + " weights"
            + (IsWeightOnly(w.run.dtype)
                   ? " (the decoder layers', with a 16-bit scale per 128; the "
                     "embedding and LM head "
                         + rest + ")"
               : w.run.ActivationType() != w.run.dtype
                   ? " (the decoder layers'; the embedding and LM head " + rest + ")"
                   : "")
            + ", " + ToString(w.run.KvCacheType()) + " KV cache, no gradients or optimizer state";
    }
    if (share < 1)
    {
        std::ostringstream os;
        os << "; the job may use " << share * 100 << "% of each GPU's memory"
           << (w.run.gpuMemoryUtilization > 0 ? " (gpu_memory_utilization)"
                                              : " (vLLM's default gpu_memory_utilization)");
        report.assumption += os.str();
    }
    if (w.run.mode == RunMode::INFERENCE && w.run.ProfileTokensOn(gpu) > 0)
    {
        const uint32_t tokens = w.run.ProfileTokensOn(gpu);
        const bool vllm = w.run.engine == "vllm";
        // vLLM's default budget follows the GPU's memory (8192 from 70 GiB): said, so that a
        // capacity sweep across that size is not read as a memory model out of order.
        const bool byDefault = vllm && w.run.profileTokens == 0;
        report.assumption +=
            std::string("; activations reserved for a forward of ") + (vllm ? "" : "at least ")
            + std::to_string(tokens) + (tokens == 1 ? " token" : " tokens")
            + " (the engine's profile run at its max_num_batched_tokens, "
              "profile_tokens"
            + (byDefault ? ", by default 8192 on a GPU of 70 GiB or more (but the A100), else 2048"
                         : "")
            + (vllm ? "; its scheduler runs no more prompt tokens in a step)" : ")");
    }
    for (const auto& g : w.stages)
    {
        RankMemory m;
        m.stage = g.stage;
        const uint64_t params = StageParameters(w.model, w.run, g.stage);
        m.parameters = params;
        m.framework = kFrameworkOverheadBytes;
        if (w.run.mode == RunMode::TRAINING)
        {
            // Dense parameters shard over the data-parallel group (dp x cp), expert parameters
            // over the expert data-parallel group (dp x cp / ep), as both frameworks do.
            const uint64_t expert = StageExpertParameters(w.model, w.run, g.stage);
            const uint64_t dense = params - expert;
            auto shard = [&](uint64_t perParam, uint32_t fromStage)
            {
                if (p.zeroStage < fromStage)
                {
                    return (dense + expert) * perParam;
                }
                return dense * perParam / p.DenseReplicas()
                       + expert * perParam / p.ExpertReplicas();
            };
            m.weights = shard(bytes.weights, bytes.weightsShardedFrom);
            if (w.run.dtype == DataType::FP8 && !w.run.KeepsFp8Params() && p.zeroStage < 3)
            {
                // Transformer Engine's cached fp8 weights and their transposes (AssumptionOf);
                // under ZeRO-3 they come and go with each gathered layer.
                m.weights += 2 * StageLinearParameters(w.model, w.run, g.stage);
            }
            m.gradients = shard(bytes.gradients, bytes.gradientsShardedFrom);
            m.optimizer = shard(bytes.optimizer, 1);
            m.activations = PeakActivationBytes(g);
        }
        else
        {
            // A quantized checkpoint (fp8, int8 W8A8, weight-only int4) quantizes the decoder
            // layers (their norms, a few parameters in ten thousand, with them), and here a draft
            // module's layer and projection, whose GEMMs read the quantized weights too; the
            // embedding and the LM head stay in the activations' type, as the LM head's GEMM
            // reads them.
            const bool quantizedLayers = w.run.ActivationType() != w.run.dtype;
            uint64_t quantized =
                quantizedLayers ? StageLayerParameters(w.model, w.run, g.stage) : 0;
            if (quantizedLayers && g.stage == p.HeadStage())
            {
                for (uint32_t k = 0; k < shapes.mtpLayers; ++k)
                {
                    quantized += shapes.LayerParams(shapes.MtpLayer(k)) + shapes.mtpParams;
                }
            }
            const DataType rest = w.run.ActivationType();
            m.weights = uint64_t(std::ceil(double(quantized) * WeightBytesOf(w.run.dtype)))
                        + (params - quantized) * BytesOf(rest);
            const uint64_t tokens = uint64_t(w.run.promptTokens) + w.run.generatedTokens;
            // Each layer caches every token, a sliding-window layer only its window's last ones:
            // each sequence its own, except a shared prefix's (those still in the window),
            // stored once for the batch or once for each group of requests sharing it.
            uint64_t perSequence = 0;
            uint64_t once = 0;
            const uint32_t copies = w.run.PrefixCopies();
            auto cache = [&](uint64_t kept)
            {
                const uint64_t shared = copies > 0 && w.run.cachedPrefix > tokens - kept
                                            ? w.run.cachedPrefix - (tokens - kept)
                                            : 0;
                perSequence += kept - shared;
                once += shared;
            };
            for (uint32_t chunk = 0; chunk < p.virtualStages; ++chunk)
            {
                const uint32_t vstage = p.VirtualStageOf(chunk, g.stage);
                const uint32_t first = p.FirstLayerOf(w.model.layers, vstage);
                for (uint32_t i = 0; i < p.VirtualStageLayers(w.model.layers, vstage); ++i)
                {
                    const uint64_t window = w.model.WindowOf(first + i);
                    cache(window > 0 ? std::min(tokens, window) : tokens);
                }
            }
            if (g.stage == p.HeadStage())
            {
                for (uint32_t k = 0; k < shapes.mtpLayers; ++k)
                {
                    cache(tokens); // a speculative draft module's layer
                }
            }
            m.kvCache = (perSequence * w.run.batch + once * copies) * shapes.KvCacheBytesPerToken();
            // The prefill's widest intermediate: a layer's input, residual and MLP activation
            // (of the largest batch in flight: the first), for the prompt tokens it computes, or
            // for the forward the engine profiled if that was wider (vLLM's memory stays
            // reserved for it). vLLM's scheduler never runs more prompt tokens in one step than
            // that forward's (max_num_batched_tokens; V1 chunks a longer prefill): its
            // activations are the profiled forward's whatever the batch (they were the whole
            // batch's prompts, so `memory` held 247 Llama-3 8B requests of 1,280 tokens on an
            // H100 where vLLM's KV cache holds 355).
            const uint64_t prompts =
                uint64_t(w.run.promptTokens - w.run.cachedPrefix) * w.run.InflightBatchSize(0);
            const uint64_t profiled = w.run.ProfileTokensOn(gpu);
            const uint64_t rows =
                w.run.engine == "vllm" && profiled > 0 ? profiled : std::max(prompts, profiled);
            // The widest MLP intermediate: a dense layer's first projection, or a MoE layer's
            // shared expert's, or its routed experts' in vLLM's fused MoE (fused_experts_impl),
            // which holds for up to VLLM_FUSED_MOE_CHUNK_SIZE tokens at once every routed copy's
            // gate-and-up output, its activation and its down projection's output (intermediate
            // caches 1-3), whichever experts are local.
            const bool moe = shapes.topK > 0 && w.model.MoeLayers() > 0;
            uint64_t mlp = !moe || w.model.MoeLayers() < w.model.layers ? rows * shapes.fc1Out : 0;
            if (moe)
            {
                const uint64_t chunk = std::min<uint64_t>(rows, kFusedMoeChunkTokens);
                mlp = std::max({mlp,
                                rows * shapes.sharedFc1Out,
                                chunk * shapes.topK
                                    * (shapes.expertFc1Out + shapes.expertFfn + shapes.hidden)});
            }
            m.activations = eb * (rows * 2 * shapes.hidden + mlp);
        }
        m.peak = m.weights + m.gradients + m.optimizer + m.activations + m.kvCache + m.framework;
        NS_LOG_DEBUG("stage " << m.stage << ": " << params << " parameters; weights " << m.weights
                              << ", gradients " << m.gradients << ", optimizer " << m.optimizer
                              << ", activations " << m.activations << ", KV cache " << m.kvCache
                              << ", peak " << m.peak << " bytes");
        if (report.stages.empty() || m.peak > report.worst.peak)
        {
            report.worst = m;
        }
        report.stages.push_back(m);
    }
    if (report.worst.peak > report.capacity)
    {
        report.feasible = false;
        // One decimal, or as many more (up to 4) as show the peak above the capacity (80.03
        // against 80.00 read "needs 80.0 GiB but the GPU has 80.0 GiB").
        const double peakGib = report.worst.peak / double(1ull << 30);
        const double capacityGib = report.capacity / double(1ull << 30);
        int digits = 1;
        while (digits < 4
               && std::round(peakGib * std::pow(10, digits))
                      <= std::round(capacityGib * std::pow(10, digits)))
        {
            ++digits;
        }
        std::ostringstream os;
        os.precision(digits);
        os << std::fixed << "pipeline stage " << report.worst.stage << " needs " << peakGib
           << " GiB at its peak but ";
        if (share < 1)
        {
            os << "the job may use " << capacityGib << " GiB (" << std::setprecision(2) << share
               << " of the GPU's " << std::setprecision(1) << gpu.hbmBytes / double(1ull << 30)
               << ", gpu_memory_utilization)";
        }
        else
        {
            os << "the GPU has " << capacityGib << " GiB";
        }
        report.reason = os.str();
    }
    return report;
}

MemoryReport
AnalyzeMemory(const ModelSpec& model, const RunSpec& run, const GpuSpec& gpu)
{
    if (run.mode == RunMode::TRAINING)
    {
        // ZB-V's order, and so what its ranks hold at once, follows its passes' times.
        return AnalyzeMemory(Workload::Build(model,
                                             run,
                                             run.parallel.VShape() ? MakeComputeCoster(
                                                 CreateObject<GpuComputeModel>(gpu))
                                                                   : OperatorCoster()),
                             gpu);
    }
    run.Validate(model, "run settings");
    Workload w{model, run, ParallelLayout(run.parallel), {}};
    w.stages.resize(run.parallel.pp);
    for (uint32_t stage = 0; stage < run.parallel.pp; ++stage)
    {
        w.stages[stage].stage = stage;
    }
    return AnalyzeMemory(w, gpu);
}

} // namespace rapidllm
} // namespace ns3
