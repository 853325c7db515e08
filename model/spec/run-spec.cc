/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "run-spec.h"

#include "gpu-spec.h"
#include "host-spec.h"
#include "model-spec.h"
#include "spec-reader.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <sstream>
#include <stdexcept>

namespace ns3 {
namespace rapidllm {

uint64_t
ParallelSpec::Gpus() const
{
    return uint64_t(tp) * cp * dp * pp;
}

uint32_t
ParallelSpec::DenseReplicas() const
{
    return dp * cp;
}

uint32_t
ParallelSpec::ExpertReplicas() const
{
    return static_cast<uint32_t>(uint64_t(tp) * cp * dp / (uint64_t(ExpertTp()) * ep));
}

uint32_t
ParallelSpec::ExpertTp() const
{
    return etp == 0 ? tp : etp;
}

bool
ParallelSpec::FoldedExperts() const
{
    return ExpertTp() != tp;
}

uint32_t
ParallelSpec::SplitExtraLayers() const
{
    return (embeddingInSplit ? 1 : 0) + (lossInSplit ? 1 : 0);
}

uint32_t
ParallelSpec::StageLayers(uint32_t layers, uint32_t stage) const
{
    if (SplitExtraLayers() > 0)
    {
        // Every model chunk has its share: the stage's chunks together.
        uint32_t n = 0;
        for (uint32_t chunk = 0; chunk < virtualStages; ++chunk)
        {
            n += VirtualStageLayers(layers, VirtualStageOf(chunk, stage));
        }
        return n;
    }
    if (stage == 0 && firstStageLayers > 0)
    {
        return firstStageLayers;
    }
    if (stage + 1 == pp && lastStageLayers > 0)
    {
        return lastStageLayers;
    }
    const uint32_t middle = pp - (firstStageLayers > 0 ? 1 : 0) - (lastStageLayers > 0 ? 1 : 0);
    const uint64_t fixed = uint64_t(firstStageLayers) + lastStageLayers;
    return middle == 0 || fixed >= layers ? 0 : static_cast<uint32_t>((layers - fixed) / middle);
}

uint32_t
ParallelSpec::VirtualStageLayers(uint32_t layers, uint32_t vstage) const
{
    if (SplitExtraLayers() > 0)
    {
        const uint32_t chunks = pp * virtualStages;
        const uint32_t share = (layers + SplitExtraLayers()) / chunks;
        const uint32_t taken = (vstage == 0 && embeddingInSplit ? 1 : 0)
                               + (vstage + 1 == chunks && lossInSplit ? 1 : 0);
        return share > taken ? share - taken : 0;
    }
    return StageLayers(layers, vstage % pp) / virtualStages;
}

uint32_t
ParallelSpec::FirstLayerOf(uint32_t layers, uint32_t vstage) const
{
    if (SplitExtraLayers() > 0)
    {
        // Every chunk before this one holds a full share, less the embedding's place in the first.
        const uint32_t share = (layers + SplitExtraLayers()) / (pp * virtualStages);
        return vstage * share - (embeddingInSplit && vstage > 0 ? 1 : 0);
    }
    // Each round of chunks (one chunk per stage) holds layers / vpp layers.
    uint32_t first = vstage / pp * (layers / virtualStages);
    for (uint32_t s = 0; s < vstage % pp; ++s)
    {
        first += StageLayers(layers, s) / virtualStages;
    }
    return first;
}

bool
ParallelSpec::UnevenStages() const
{
    return firstStageLayers > 0 || lastStageLayers > 0 || SplitExtraLayers() > 0;
}

bool
ParallelSpec::UnevenSplit(uint32_t layers, uint32_t& first, uint32_t& last) const
{
    if (pp < 2 || virtualStages == 0)
    {
        return false;
    }
    const uint32_t vpp = virtualStages;
    const uint64_t middle = pp - 2;
    uint64_t fullest = 0; // of the best split so far; 0 = none
    // A share below (layers - 2 vpp) / pp leaves the ends more than a chunk above it, and one
    // above the fullest stage found cannot do better: a few shares around layers / pp.
    const uint64_t low = layers > 2 * vpp ? (layers - 2 * vpp) / pp / vpp * vpp : 0;
    for (uint64_t share = middle > 0 ? std::max<uint64_t>(low, vpp) : 0;
         share <= (middle > 0 ? layers / middle : 0) && (fullest == 0 || share <= fullest);
         share += vpp)
    {
        const uint64_t rest = layers - middle * share;
        const uint64_t f = (rest / vpp + 1) / 2 * vpp;
        // The ends at most a chunk above the others: 12, 1 x 38, 11 is no layout to try.
        const bool near = middle == 0 || f <= share + vpp;
        if (rest % vpp == 0 && rest - f >= vpp && near
            && (fullest == 0 || std::max(f, share) <= fullest))
        {
            first = static_cast<uint32_t>(f);
            last = static_cast<uint32_t>(rest - f);
            fullest = std::max(f, share);
        }
        if (middle == 0)
        {
            break;
        }
    }
    return fullest > 0;
}

DataType
RunSpec::ActivationType() const
{
    // Weight-only int4 (GPTQ, AWQ checkpoints) keeps fp16 activations, as their kernels take;
    // int8 is W8A8 as SmoothQuant checkpoints run in TensorRT-LLM, lmdeploy and vLLM: the linear
    // layers' GEMMs take int8 inputs quantized per token and give fp16, while attention, the
    // residual stream, the all-reduces and (unless quantized apart) the KV cache stay fp16.
    return dtype == DataType::FP8                           ? DataType::BF16
           : IsWeightOnly(dtype) || dtype == DataType::INT8 ? DataType::FP16
                                                            : dtype;
}

DataType
RunSpec::KvCacheType() const
{
    DataType type = ActivationType();
    if (kvCacheDtype != "auto")
    {
        ParseDataType(kvCacheDtype, type);
    }
    return type;
}

double
RunSpec::MemoryShare() const
{
    if (gpuMemoryUtilization > 0)
    {
        return gpuMemoryUtilization;
    }
    // vLLM's EngineArgs.gpu_memory_utilization defaults to 0.9: its KV cache takes what that
    // share of the GPU's memory leaves after the weights, the profiled activations and the
    // memory outside PyTorch (vLLM docs, "Engine Arguments").
    return mode == RunMode::INFERENCE && engine == "vllm" ? 0.9 : 1.0;
}

uint32_t
VllmDefaultTokenBudget(const GpuSpec& gpu)
{
    const bool large =
        double(gpu.hbmBytes) >= 70.0 * 1073741824.0 && gpu.name.find("A100") == std::string::npos;
    return large ? 8192 : 2048;
}

uint32_t
RunSpec::ProfileTokensOn(const GpuSpec& gpu) const
{
    if (profileTokens > 0)
    {
        return profileTokens;
    }
    // vLLM's Worker.determine_available_memory runs a forward of max_num_batched_tokens before
    // it sizes the KV cache: what that forward's activations peak at stays out of the cache.
    return mode == RunMode::INFERENCE && engine == "vllm" ? VllmDefaultTokenBudget(gpu) : 0;
}

uint64_t
RunSpec::GradBucketBytes() const
{
    if (bucketBytes > 0)
    {
        return bucketBytes;
    }
    return overlapGradReduce ? 25ull << 20 : std::numeric_limits<uint64_t>::max();
}

DataType
RunSpec::GradientType() const
{
    const DataType weights = ActivationType();
    if (mainGrads != "auto")
    {
        DataType set = weights;
        ParseDataType(mainGrads, set);
        return set;
    }
    if (weights == DataType::FP32)
    {
        return weights;
    }
    switch (ResolvedMemoryLayout())
    {
        case MemoryLayout::MEGATRON:
            // Megatron-LM's arguments.py: bf16 "requires gradient accumulation and all-reduce to
            // be performed in fp32" unless --grad-reduce-in-bf16; fp16 keeps fp16 gradients.
            return weights == DataType::BF16 ? DataType::FP32 : weights;
        case MemoryLayout::APEX:
            return DataType::FP32; // grad_sync_dtype: "default: same as dtype" (the fp32 state)
        default:
            return weights; // DeepSpeed and FSDP mixed precision reduce in the weights' type
    }
}

uint32_t
RunSpec::MicroBatches() const
{
    // 64-bit: micro-batch x dp can exceed 2^32.
    const uint64_t perStep = uint64_t(microBatch) * parallel.dp;
    return perStep == 0 ? 0 : static_cast<uint32_t>(globalBatch / perStep);
}

MemoryLayout
RunSpec::ResolvedMemoryLayout() const
{
    if (memoryLayout != MemoryLayout::AUTO)
    {
        return memoryLayout;
    }
    return parallel.zeroStage >= 2 ? MemoryLayout::DEEPSPEED : MemoryLayout::MEGATRON;
}

bool
RunSpec::OverlapParamGather() const
{
    if (paramGather != "auto")
    {
        return paramGather == "overlap";
    }
    // Megatron-core's distributed optimizer (overlap_param_gather, which Megatron-Bridge turns
    // on with dp > 1) and Apex's DistributedFusedAdam (overlap_param_sync in NeMo 1.0's
    // recipes) gather during the next forward; DeepSpeed's ZeRO-1/2 optimizer gathers at the end
    // of its step.
    return ResolvedMemoryLayout() != MemoryLayout::DEEPSPEED;
}

std::string
ToString(MemoryLayout layout)
{
    switch (layout)
    {
        case MemoryLayout::AUTO:
            return "auto";
        case MemoryLayout::MEGATRON:
            return "megatron";
        case MemoryLayout::DEEPSPEED:
            return "deepspeed";
        case MemoryLayout::APEX:
            return "apex";
    }
    return "auto";
}

std::vector<std::string>
MemoryLayoutNames()
{
    return {"auto", "megatron", "deepspeed", "apex"};
}

bool
ParseMemoryLayout(const std::string& name, MemoryLayout& layout)
{
    for (MemoryLayout m :
         {MemoryLayout::AUTO, MemoryLayout::MEGATRON, MemoryLayout::DEEPSPEED, MemoryLayout::APEX})
    {
        if (ToString(m) == name)
        {
            layout = m;
            return true;
        }
    }
    return false;
}

std::string
ToString(RunMode mode)
{
    return mode == RunMode::TRAINING ? "training" : "inference";
}

std::string
ToString(Recompute recompute)
{
    switch (recompute)
    {
        case Recompute::NONE:
            return "none";
        case Recompute::SELECTIVE:
            return "selective";
        case Recompute::FULL:
            return "full";
    }
    return "none";
}

std::vector<std::string>
RecomputeNames()
{
    return {"none", "selective", "full"};
}

std::vector<std::string>
RunSpec::Choices(const std::string& field)
{
    if (field == "mode")
    {
        return {"training", "inference"};
    }
    if (field == "dtype")
    {
        return DataTypeNames();
    }
    if (field == "recompute")
    {
        return RecomputeNames();
    }
    if (field == "attention")
    {
        return {"auto", "flash", "flash3", "triton2022", "standard"};
    }
    if (field == "grad_reduce")
    {
        return {"overlap", "after_backward"};
    }
    if (field == "tp_reduce")
    {
        return {"overlap", "blocking"};
    }
    if (field == "decode_attention")
    {
        return {"split_kv", "per_head"};
    }
    if (field == "first_token")
    {
        return {"auto", "prefill", "decode"};
    }
    if (field == "dispatch")
    {
        return {"auto", "none", "eager", "graphs", "engine"};
    }
    if (field == "engine")
    {
        return EngineNames();
    }
    if (field == "fp8_scaling")
    {
        return {"delayed", "current"};
    }
    if (field == "kv_cache_dtype")
    {
        return {"auto", "fp8", "int8", "int4"};
    }
    if (field == "main_grads")
    {
        return {"auto", "fp32", "bf16", "fp16"};
    }
    if (field == "tp_comm_overlap")
    {
        return {"none", "userbuffers"};
    }
    if (field == "param_gather")
    {
        return {"auto", "overlap", "after_step"};
    }
    if (field == "pp_schedule")
    {
        return {"1f1b", "zb-h1", "zb-v"};
    }
    throw std::logic_error("RunSpec::Choices: '" + field + "' is not a text field of a run spec");
}

bool
ParseRecompute(const std::string& name, Recompute& recompute)
{
    for (Recompute r : {Recompute::NONE, Recompute::SELECTIVE, Recompute::FULL})
    {
        if (ToString(r) == name)
        {
            recompute = r;
            return true;
        }
    }
    return false;
}

namespace {
/** The most draft tokens a speculative decoding step may propose. */
constexpr uint32_t kMaxSpecTokens = 16;

/** Throws unless \p a is a multiple of \p b, naming both quantities. */
void
RequireMultiple(const std::string& source,
                const std::string& field,
                uint64_t a,
                const std::string& aName,
                uint64_t b,
                const std::string& bName)
{
    if (b == 0 || a % b != 0)
    {
        std::ostringstream os;
        os << aName << " (" << a << ") must be divisible by " << bName << " (" << b << ")";
        throw SpecError(source, field, os.str());
    }
}

/**
 * Throws unless the decoder layers, with the embedding and the loss counted as one layer each,
 * split evenly over every model chunk, and the chunks that give a place up keep a decoder layer.
 */
void
ValidateSplitWithEmbedding(const ParallelSpec& p, uint32_t layers, const std::string& source)
{
    const std::string field =
        p.embeddingInSplit ? "embedding_in_pipeline_split" : "loss_in_pipeline_split";
    if (p.firstStageLayers > 0 || p.lastStageLayers > 0)
    {
        throw SpecError(source,
                        field,
                        "set the first and last stages' layers (first_stage_layers, "
                        "last_stage_layers) or count the embedding and loss in the split, "
                        "not both");
    }
    if (p.pp < 2)
    {
        throw SpecError(source, field, "counting the embedding or loss in the split needs pp >= 2");
    }
    const uint64_t chunks = uint64_t(p.pp) * p.virtualStages;
    const uint64_t places = uint64_t(layers) + p.SplitExtraLayers();
    if (places % chunks != 0)
    {
        std::ostringstream os;
        os << "layers (" << layers << ") + " << p.SplitExtraLayers() << " for the "
           << (p.SplitExtraLayers() == 2 ? "embedding and the loss"
                                         : (p.embeddingInSplit ? "embedding" : "loss"))
           << " = " << places << " must be divisible by pp x vpp (" << p.pp << " x "
           << p.virtualStages << ")";
        throw SpecError(source, "pp", os.str());
    }
    if (places / chunks < 2)
    {
        std::ostringstream os;
        os << places << " places (layers " << layers << " + " << p.SplitExtraLayers()
           << ") over pp x vpp = " << chunks << " model chunks leave 1 per chunk: the chunk that "
           << "holds the " << (p.embeddingInSplit ? "embedding" : "loss")
           << " would hold no decoder layer; use fewer stages or chunks";
        throw SpecError(source, field, os.str());
    }
}

/** \return the uneven split of \p layers as text for an error (" (e.g. ...)"; "" if none) */
std::string
SuggestStageLayers(const ParallelSpec& p, uint32_t layers)
{
    uint32_t first = 0;
    uint32_t last = 0;
    if (!p.UnevenSplit(layers, first, last))
    {
        return "";
    }
    std::ostringstream os;
    os << " (e.g. " << first << " and " << last;
    const uint32_t middle = p.pp - 2;
    if (middle > 0)
    {
        os << ", " << (layers - first - last) / middle
           << (middle == 1 ? " on the other stage" : " on each of the other ")
           << (middle == 1 ? "" : std::to_string(middle));
    }
    os << ")";
    return os.str();
}

/**
 * Throws unless the decoder layers split over the pipeline stages (and each stage's over its
 * model chunks): evenly, or with the first and last stage's counts given and the rest even.
 */
void
ValidateStageLayers(const ParallelSpec& p, uint32_t layers, const std::string& source)
{
    if (!p.UnevenStages())
    {
        if (layers % (uint64_t(p.pp) * p.virtualStages) != 0)
        {
            std::ostringstream os;
            os << "layers (" << layers << ") must be divisible by pp x vpp (" << p.pp << " x "
               << p.virtualStages << ")";
            // zb-v splits its chunks evenly.
            const std::string uneven = p.VShape() ? "" : SuggestStageLayers(p, layers);
            if (!uneven.empty())
            {
                os << ", or give the first and last stages their own layer counts "
                      "(--first-stage-layers and --last-stage-layers; run keys "
                      "first_stage_layers, last_stage_layers) and split the rest evenly"
                   << uneven;
            }
            const uint64_t chunks = uint64_t(p.pp) * p.virtualStages;
            for (uint32_t extra : {1u, 2u})
            {
                if (p.pp > 1 && (layers + extra) % chunks == 0 && (layers + extra) / chunks >= 2)
                {
                    os << ", or count the "
                       << (extra == 2 ? "embedding and the loss (embedding_in_pipeline_split, "
                                        "loss_in_pipeline_split)"
                                      : "embedding or the loss (embedding_in_pipeline_split or "
                                        "loss_in_pipeline_split)")
                       << " as layers: " << layers + extra << " = " << chunks << " x "
                       << (layers + extra) / chunks;
                    break;
                }
            }
            throw SpecError(source, "pp", os.str());
        }
        return;
    }
    if (p.SplitExtraLayers() > 0)
    {
        ValidateSplitWithEmbedding(p, layers, source);
        return;
    }
    const std::string field = p.firstStageLayers > 0 ? "first_stage_layers" : "last_stage_layers";
    if (p.pp < 2)
    {
        throw SpecError(source, field, "first and last stage layer counts need pp >= 2");
    }
    const uint64_t fixed = uint64_t(p.firstStageLayers) + p.lastStageLayers;
    const uint32_t middle =
        p.pp - (p.firstStageLayers > 0 ? 1 : 0) - (p.lastStageLayers > 0 ? 1 : 0);
    std::ostringstream os;
    os << "first_stage_layers (" << p.firstStageLayers << ") + last_stage_layers ("
       << p.lastStageLayers << ")";
    if (middle == 0 && fixed != layers)
    {
        os << " must equal layers (" << layers << ") with pp 2";
        throw SpecError(source, field, os.str());
    }
    const std::string others =
        "the other " + std::to_string(middle) + (middle == 1 ? " stage" : " stages");
    if (middle > 0 && fixed >= layers)
    {
        os << " = " << fixed << " leave none of the model's " << layers << " layers for " << others
           << ": together they must be fewer than " << layers;
        if (layers < p.pp)
        {
            // No split helps: every stage holds a layer at least.
            os << ", and " << layers << (layers == 1 ? " layer" : " layers") << " cannot fill pp "
               << p.pp << " stages (at least one a stage): a smaller --pp";
        }
        throw SpecError(source, field, os.str());
    }
    if (middle > 0 && (layers - fixed) % middle != 0)
    {
        os << " leave " << layers - fixed << " of the " << layers << " layers for " << others
           << ": that must be a multiple of " << middle;
        throw SpecError(source, field, os.str());
    }
    for (uint32_t s : {0u, p.pp / 2, p.pp - 1})
    {
        const uint32_t n = p.StageLayers(layers, s);
        if (n % p.virtualStages != 0)
        {
            std::ostringstream v;
            v << "pipeline stage " << s << " holds " << n
              << " layers, which must be divisible by vpp (" << p.virtualStages
              << ", its model chunks)";
            throw SpecError(source, "vpp", v.str());
        }
    }
}
} // namespace

void
RunSpec::Validate(const ModelSpec& model, const std::string& source) const
{
    const auto& p = parallel;
    // Counts a RunSpec built in code may leave at 0 (Parse and the command's options refuse
    // them): checked first, so that no later check divides by one.
    auto positive = [&](const char* field, uint64_t value)
    {
        if (value == 0)
        {
            throw SpecError(source, field, "is 0; allowed: a whole number from 1");
        }
    };
    positive("tp", p.tp);
    positive("pp", p.pp);
    positive("dp", p.dp);
    positive("cp", p.cp);
    positive("ep", p.ep);
    positive("vpp", p.virtualStages);
    if (mode == RunMode::TRAINING)
    {
        positive("micro_batch", microBatch);
        positive("global_batch", globalBatch);
        positive("sequence", sequence);
    }
    else
    {
        positive("batch", batch);
        positive("prompt", promptTokens);
        positive("generated", generatedTokens);
    }
    const auto schedules = Choices("pp_schedule");
    if (std::find(schedules.begin(), schedules.end(), p.schedule) == schedules.end())
    {
        throw SpecError(source,
                        "pp_schedule",
                        "unknown schedule '" + p.schedule + "'; allowed: " + JoinNames(schedules));
    }
    if (specTokens > 0 || specAcceptance != 0)
    {
        if (mode != RunMode::INFERENCE)
        {
            throw SpecError(source, "spec_tokens", "speculative decoding applies to inference");
        }
        if (specTokens == 0 || specTokens > kMaxSpecTokens)
        {
            throw SpecError(source,
                            "spec_tokens",
                            std::to_string(specTokens) + " draft tokens a step; allowed: 1 to "
                                + std::to_string(kMaxSpecTokens) + " with spec_acceptance");
        }
        if (specAcceptance == 0)
        {
            throw SpecError(source,
                            "spec_acceptance",
                            "speculative decoding (spec_tokens " + std::to_string(specTokens)
                                + ") needs the probability a draft token is accepted: give it, "
                                  "above 0 and at most 1 (e.g. 0.7)");
        }
        if (!(specAcceptance > 0 && specAcceptance <= 1))
        {
            std::ostringstream os;
            os << specAcceptance
               << " is not a probability a draft token is accepted; allowed: above 0, at most 1";
            throw SpecError(source, "spec_acceptance", os.str());
        }
    }
    if (cachedPrefix > 0)
    {
        // At least one prompt token to prefill (two where a first decode step takes the last).
        const uint32_t computed = FirstTokenFromPrefill() ? 1 : 2;
        if (mode != RunMode::INFERENCE || cachedPrefix + computed > promptTokens)
        {
            throw SpecError(source,
                            "cached_prefix",
                            std::to_string(cachedPrefix)
                                + " cached prompt tokens: allowed in inference, 0 to the prompt's "
                                + std::to_string(promptTokens) + " less " + std::to_string(computed)
                                + " (a prefill computes at least " + (computed == 1 ? "one" : "two")
                                + ")");
        }
        // (context parallelism is refused in inference below, naming cp)
    }
    if (sharedPrefix && cachedPrefix == 0)
    {
        throw SpecError(source,
                        "shared_prefix",
                        "true shares a cached prefix among the batch's requests: give "
                        "cached_prefix too (--cached-prefix)");
    }
    if (prefixGroups > 0 && (cachedPrefix == 0 || sharedPrefix))
    {
        throw SpecError(source,
                        "prefix_groups",
                        sharedPrefix ? "groups of requests sharing a prefix: shared_prefix is one "
                                       "group for the whole batch, give one of the two"
                                     : "groups of requests share a cached prefix: give "
                                       "cached_prefix too (--cached-prefix)");
    }
    if (cascadeAttention && !sharedPrefix)
    {
        throw SpecError(source,
                        "cascade_attention",
                        "true reads a prefix shared by the batch once a step: give shared_prefix "
                        "and cached_prefix too (--shared-prefix --cached-prefix)");
    }
    if (cascadeAttention && model.IsMla())
    {
        throw SpecError(source,
                        "cascade_attention",
                        "cascade attention is modelled for multi-head and grouped-query attention, "
                        "not for latent attention (MLA: "
                            + model.name + ")");
    }
    if (!fp8Params && (mode != RunMode::TRAINING || dtype != DataType::FP8))
    {
        throw SpecError(source,
                        "fp8_params",
                        "false (bf16 weights beside Transformer Engine's fp8 copies) applies to "
                        "training in fp8 only; drop it or use dtype fp8");
    }
    if (engine != "none" && mode != RunMode::INFERENCE)
    {
        // A training step is the framework's (its dispatch: dispatch); an engine serves.
        throw SpecError(source,
                        "engine",
                        "'" + engine
                            + "' is a serving engine and applies to inference; training takes "
                              "none (its host dispatch is set by dispatch, --dispatch)");
    }
    if (kvCacheDtype != "auto" && mode != RunMode::INFERENCE)
    {
        throw SpecError(source,
                        "kv_cache_dtype",
                        "a KV cache type applies to inference; training keeps no KV cache (use "
                        "auto)");
    }
    // The KV cache types each engine family stores: vLLM's --kv-cache-dtype takes auto and fp8
    // (e4m3, e5m2); lmdeploy's TurboMind quant_policy 8 and 4 (int8, int4); transformers'
    // QuantizedCache integer bits (quanto 2/4, HQQ up to 8), not fp8.
    const bool integerKv = kvCacheDtype == "int8" || kvCacheDtype == "int4";
    if (mode == RunMode::INFERENCE && kvCacheDtype != "auto"
        && ((engine == "vllm" && integerKv)
            || (engine != "vllm" && engine != "none" && !integerKv)))
    {
        throw SpecError(source,
                        "kv_cache_dtype",
                        kvCacheDtype + " is not a KV cache type of engine " + engine + "; allowed: "
                            + (engine == "vllm"
                                   ? "auto, fp8 (vLLM's --kv-cache-dtype)"
                                   : "auto, int8, int4 (" + engine + "'s quantized KV cache)")
                            + ", or engine none for any");
    }
    if (chunkSequences > 0 || chunkTokens > 0 || chunkPrefix > 0)
    {
        if (mode != RunMode::INFERENCE || chunkSequences == 0 || chunkTokens == 0)
        {
            throw SpecError(source,
                            "chunk_tokens",
                            "a prefill chunk beside the decode needs inference, at least one "
                            "sequence and at least one token");
        }
        if (model.IsMla())
        {
            // Its decode runs absorbed, its prefill not: a mixed step is not modelled.
            throw SpecError(source,
                            "chunk_tokens",
                            "chunked prefill beside the decode is not modelled for latent "
                            "attention (MLA: "
                                + model.name + ")");
        }
    }
    if (p.zeroStage > 3)
    {
        throw SpecError(source, "zero", "allowed values: 0, 1, 2, 3");
    }
    if ((memoryLayout == MemoryLayout::MEGATRON || memoryLayout == MemoryLayout::APEX)
        && p.zeroStage >= 2)
    {
        throw SpecError(source,
                        "memory_layout",
                        std::string(memoryLayout == MemoryLayout::MEGATRON
                                        ? "Megatron-LM shards only the optimizer state (its "
                                          "distributed optimizer, zero 1)"
                                        : "Apex's DistributedFusedAdam shards only the optimizer "
                                          "state (zero 1)")
                            + "; zero " + std::to_string(p.zeroStage)
                            + " is DeepSpeed's or PyTorch FSDP's: use memory_layout deepspeed "
                              "(or auto)");
    }
    if (mode == RunMode::TRAINING && (dtype == DataType::INT8 || dtype == DataType::INT4))
    {
        // Integer GEMMs serve quantized inference; no training framework computes its forward
        // and backward passes in int8 or int4.
        throw SpecError(
            source,
            "dtype",
            ToString(dtype)
                + " is an inference type; training takes fp32, tf32, fp16, bf16 or fp8");
    }
    if (moeA2aOverlap)
    {
        // Megatron-core's TransformerConfig refuses the same (overlap_moe_expert_parallel_comm).
        const char* why = nullptr;
        if (mode != RunMode::TRAINING)
        {
            why = "overlaps a forward and a backward pass: it applies to training";
        }
        else if (model.experts == 0 || p.ep < 2)
        {
            why = "overlaps the expert all-to-alls: it needs a mixture-of-experts model and "
                  "ep > 1";
        }
        else if (recompute == Recompute::FULL)
        {
            why = "cannot run with full recomputation (Megatron refuses it); use none or "
                  "selective";
        }
        else if (p.pp > 1 && p.virtualStages < 2)
        {
            why = "with a pipeline needs virtual stages (vpp > 1), as Megatron requires: "
                  "without them a stage's forward input and backward input do not arrive "
                  "together";
        }
        else if (model.mtpLayers > 1)
        {
            why = "supports at most one multi-token prediction layer (Megatron's limit)";
        }
        if (why != nullptr)
        {
            throw SpecError(source, "moe_a2a_overlap", std::string("true ") + why);
        }
    }
    if (mode == RunMode::TRAINING && tpCommOverlap != "none" && (p.tp < 2 || !p.sequenceParallel))
    {
        throw SpecError(source,
                        "tp_comm_overlap",
                        tpCommOverlap
                            + " overlaps the all-gathers and reduce-scatters of "
                              "sequence parallelism: it needs tp > 1 (tp is "
                            + std::to_string(p.tp) + ") and sequence parallelism (parallel.sp, --sp"
                            + (p.sequenceParallel ? "" : "; off") + "); or use none");
    }
    if (mainGrads != "auto" && mainGrads != "fp32" && mainGrads != ToString(ActivationType()))
    {
        throw SpecError(source,
                        "main_grads",
                        mainGrads + " gradients with " + ToString(ActivationType())
                            + " weights; allowed: auto, fp32"
                            + (BytesOf(ActivationType()) == 2
                                   ? ", " + ToString(ActivationType()) + " (the weights' type)"
                                   : std::string()));
    }
    std::set<std::string> parts;
    std::string token;
    std::istringstream order(p.rankOrder);
    while (std::getline(order, token, '-'))
    {
        parts.insert(token);
    }
    if (parts != std::set<std::string>{"tp", "cp", "ep", "dp", "pp"} || p.rankOrder.size() != 14)
    {
        throw SpecError(source,
                        "rank_order",
                        "'" + p.rankOrder
                            + "' must name tp, cp, ep, dp and pp once each, fastest first, "
                              "e.g. tp-cp-ep-dp-pp");
    }
    RequireMultiple(source, "tp", model.heads, "heads", p.tp, "tp");
    // Column-parallel MLPs split their width over the group (Megatron-LM, vLLM and the engines
    // require it); a width below the group would leave a rank no column at all.
    RequireMultiple(source, "tp", model.ffn, "ffn", p.tp, "tp");
    if (model.kvHeads % p.tp != 0 && p.tp % model.kvHeads != 0)
    {
        throw SpecError(source,
                        "tp",
                        "kv_heads (" + std::to_string(model.kvHeads) + ") and tp ("
                            + std::to_string(p.tp) + ") must divide one another");
    }
    ValidateStageLayers(p, model.layers, source);
    if (p.virtualStages > 1 && p.pp < 2)
    {
        throw SpecError(source, "vpp", "interleaved virtual stages need pp >= 2");
    }
    if (p.ZeroBubble())
    {
        // ZB-H1 runs one model chunk a rank, ZB-V two in a V.
        const char* why = nullptr;
        if (mode != RunMode::TRAINING)
        {
            why = "splits the backward pass: it applies to training";
        }
        else if (p.pp < 2)
        {
            why = "fills a pipeline's bubbles: it needs pp >= 2";
        }
        else if (!p.VShape() && p.virtualStages > 1)
        {
            why = "is the schedule of one model chunk per stage: it needs vpp 1";
        }
        else if (p.VShape() && p.virtualStages != 2)
        {
            why = "places two model chunks on each rank, in a V: it needs vpp 2";
        }
        else if (p.VShape() && (p.firstStageLayers > 0 || p.lastStageLayers > 0))
        {
            why = "puts the first and the last layers on the same rank: it splits the layers "
                  "evenly over the chunks (first_stage_layers and last_stage_layers 0; the "
                  "embedding and the loss may count in the split)";
        }
        if (why != nullptr)
        {
            throw SpecError(source, "pp_schedule", p.schedule + " " + why + "; or use 1f1b");
        }
    }
    if (mode == RunMode::INFERENCE && inflightBatches > 1 && p.pp < 2)
    {
        throw SpecError(source,
                        "inflight_batches",
                        std::to_string(inflightBatches)
                            + " batches in flight need a pipeline to fill (pp is 1); allowed: "
                              "0 (auto) or 1");
    }
    if (mode == RunMode::INFERENCE && inflightBatches > batch)
    {
        throw SpecError(source,
                        "inflight_batches",
                        std::to_string(inflightBatches) + " batches in flight need at least as "
                            + "many requests (batch is " + std::to_string(batch)
                            + "); allowed: 0 (auto) to " + std::to_string(batch));
    }
    if (model.HasWindow() && p.cp > 1)
    {
        throw SpecError(source,
                        "cp",
                        "context parallelism with sliding-window attention (model '" + model.name
                            + "', sliding_window " + std::to_string(model.slidingWindow)
                            + ") is not modelled: the ring's blocks assume full causal attention");
    }
    if (model.IsMoe())
    {
        const double most = double(model.experts) / model.topK;
        if (!(moeImbalance >= 1.0 && moeImbalance <= most))
        {
            std::ostringstream os;
            os << moeImbalance << " is outside [1, experts / top_k = " << most
               << "]: the busiest expert gets between the mean and every token";
            throw SpecError(source, "moe_imbalance", os.str());
        }
        RequireMultiple(source, "ep", model.experts, "experts", p.ep, "ep");
        // etp's own values first: the width's divisibility is tp's only once etp is tp.
        if (p.etp != 0 && p.etp != 1 && p.etp != p.tp)
        {
            throw SpecError(
                source,
                "etp",
                std::to_string(p.etp) + " is not allowed; give tp (" + std::to_string(p.tp)
                    + ", each expert sharded over the tensor-parallel ranks) or 1 (whole "
                      "experts, expert groups folded over the tensor-parallel ranks)");
        }
        RequireMultiple(
            source, "tp", model.expertFfn, "expert_ffn", p.ExpertTp(), "the expert tensor degree");
        // The shared expert is a dense MLP, split over the tensor-parallel ranks as the ffn.
        RequireMultiple(source, "tp", model.sharedExpertFfn, "shared_expert_ffn", p.tp, "tp");
        if (!p.FoldedExperts())
        {
            // Expert parallelism splits the data-parallel ranks of each stage (dp = ep x edp),
            // as Megatron-core's rank generator does without MoE parallel folding.
            if (p.dp % p.ep != 0)
            {
                const std::string folded = mode == RunMode::TRAINING
                                               ? "ep a multiple of tp x cp ("
                                                     + std::to_string(p.tp * p.cp)
                                                     + ") that divides dp x tp x cp"
                                               : "ep equal to tp (" + std::to_string(p.tp) + ")";
                throw SpecError(source,
                                "ep",
                                "dp (" + std::to_string(p.dp) + ") must be divisible by ep ("
                                    + std::to_string(p.ep)
                                    + ") with experts sharded over tensor ranks (etp = tp); "
                                      "or fold whole experts over the tensor-parallel ranks "
                                      "with etp 1 and "
                                    + folded);
            }
        }
        else
        {
            // Megatron-core's MoE parallel folding with whole experts: consecutive ranks of a
            // stage form the expert groups, so a group holds whole tensor- and context-parallel
            // groups and a part of dp.
            const uint64_t span = uint64_t(p.tp) * p.cp;
            if (mode != RunMode::TRAINING && p.ep != span)
            {
                // Serving engines keep whole experts inside the tensor-parallel group: each rank
                // runs its experts on the tokens it already holds and the TP all-reduce
                // combines them (TensorRT-LLM's and vLLM's expert parallelism).
                throw SpecError(source,
                                "ep",
                                "in inference whole experts (etp 1) spread over the tensor-"
                                "parallel group: ep ("
                                    + std::to_string(p.ep) + ") must equal tp ("
                                    + std::to_string(p.tp) + ")");
            }
            if (p.ep % span != 0)
            {
                throw SpecError(source,
                                "ep",
                                "with etp 1, ep (" + std::to_string(p.ep)
                                    + ") must be a multiple of tp x cp (" + std::to_string(span)
                                    + "): each expert group spans whole tensor- and "
                                      "context-parallel groups");
            }
            if (p.dp % (p.ep / span) != 0)
            {
                throw SpecError(source,
                                "ep",
                                "with etp 1, dp (" + std::to_string(p.dp)
                                    + ") must be divisible by ep / (tp x cp) ("
                                    + std::to_string(p.ep / span) + ")");
            }
            if (mode == RunMode::TRAINING && !p.sequenceParallel)
            {
                // Megatron-core's TransformerConfig: expert and tensor parallelism together
                // need sequence parallelism.
                throw SpecError(source,
                                "sp",
                                "folded expert groups (etp 1 with tp > 1) need sequence "
                                "parallelism, as Megatron-core requires with experts and tp");
            }
        }
    }
    else if (p.etp != 0)
    {
        // Any etp, tp's too: a dense model has no experts to shard (--etp=2 at tp 2 ran as if
        // it meant something).
        throw SpecError(
            source, "etp", "expert tensor parallelism needs a mixture-of-experts model");
    }
    else if (p.ep != 1)
    {
        throw SpecError(source, "ep", "expert parallelism needs a mixture-of-experts model");
    }
    else if (moeImbalance != 1.0)
    {
        throw SpecError(source, "moe_imbalance", "needs a mixture-of-experts model");
    }
    if (mode == RunMode::TRAINING)
    {
        if (p.cp > 1)
        {
            // The load-balanced causal split gives every rank two of 2 x cp equal chunks
            // (Transformer Engine: "Sequence length per GPU needs to be divisible by 2").
            RequireMultiple(source, "sequence", sequence, "sequence", 2 * p.cp, "2 x cp");
        }
        RequireMultiple(source,
                        "global_batch",
                        globalBatch,
                        "global batch",
                        uint64_t(microBatch) * p.dp,
                        "micro-batch x dp");
        if (p.virtualStages > 1 && !p.VShape() && MicroBatches() % p.pp != 0)
        {
            throw SpecError(source,
                            "vpp",
                            "the interleaved schedule needs micro-batches per pipeline ("
                                + std::to_string(MicroBatches()) + ") divisible by pp ("
                                + std::to_string(p.pp) + ")");
        }
        if (p.sequenceParallel)
        {
            RequireMultiple(source,
                            "sp",
                            sequence / p.cp,
                            "sequence per context rank",
                            p.tp,
                            "tp (sequence parallelism splits the sequence)");
        }
    }
    else if (p.cp > 1)
    {
        // The inference graph runs the whole prompt on every rank: a context-parallel prefill
        // (the prompt and its KV cache split over the ranks, ring attention between them) is not
        // built, so cp > 1 would only add the ring's exchanges.
        throw SpecError(source,
                        "cp",
                        std::to_string(p.cp)
                            + ": context parallelism is modelled in training only (the inference "
                              "graph does not split the prompt or its KV cache over context "
                              "ranks); allowed in inference: 1");
    }
    if (p.cp > 1 && !flashAttention)
    {
        // Megatron-core's context parallelism is Transformer Engine's ring attention over its
        // fused kernels: the graph builds it on them whatever the setting said.
        throw SpecError(source,
                        "attention",
                        "standard (unfused) attention with cp " + std::to_string(p.cp)
                            + ": context parallelism runs ring attention on fused kernels "
                              "(Transformer Engine's); allowed with cp > 1: auto, flash, flash3, "
                              "triton2022");
    }
    CheckPositions(model, source);
    CheckSizes(model, source);
}

std::string
RunSpec::ContextNote(const ModelSpec& model) const
{
    const bool training = mode == RunMode::TRAINING;
    const uint64_t tokens = training ? sequence : uint64_t(promptTokens) + generatedTokens;
    if (model.position == PositionEmbedding::LEARNED || model.maxSequence == 0
        || tokens <= model.maxSequence)
    {
        return "";
    }
    return std::string(training ? "a sequence" : "a request") + " of " + std::to_string(tokens)
           + " tokens is longer than " + model.name + "'s " + std::to_string(model.maxSequence)
           + "-token context (max_sequence): predicted as given, without RoPE scaling";
}

void
RunSpec::CheckPositions(const ModelSpec& model, const std::string& source) const
{
    // A learned position table has one row per position: a longer sequence has no embedding.
    // (Rotary embeddings have no table; we do not model RoPE scaling, so they are not bounded.)
    if (model.position != PositionEmbedding::LEARNED)
    {
        return;
    }
    const uint64_t limit = model.maxSequence;
    if (mode == RunMode::TRAINING && sequence > limit)
    {
        throw SpecError(source,
                        "sequence",
                        std::to_string(sequence) + " tokens exceed the model's learned positions ("
                            + model.name + " max_sequence " + std::to_string(limit)
                            + "); allowed: 1 to " + std::to_string(limit));
    }
    if (mode == RunMode::INFERENCE && uint64_t(promptTokens) + generatedTokens > limit)
    {
        throw SpecError(source,
                        promptTokens > limit ? "prompt" : "generated",
                        "prompt + generated tokens (" + std::to_string(promptTokens) + " + "
                            + std::to_string(generatedTokens)
                            + ") exceed the model's learned positions (" + model.name
                            + " max_sequence " + std::to_string(limit) + ")");
    }
}

void
RunSpec::CheckSizes(const ModelSpec& model, const std::string& source) const
{
    // Byte counts downstream are 64-bit: keep the largest tensor the settings imply (in fp32,
    // the widest element) far below 2^64 so that no sum or product of them can wrap. Real jobs
    // are many orders of magnitude smaller.
    const long double limit = std::ldexp(1.0L, 60);
    const long double width = std::max({4.0L * model.hidden,
                                        2.0L * std::max(model.ffn, model.expertFfn),
                                        (long double) model.vocab});
    auto check = [&](const std::string& field, long double bytes, const std::string& what)
    {
        if (bytes > limit)
        {
            std::ostringstream os;
            os.precision(3);
            os << what << " would take about " << bytes
               << " bytes, beyond what the model represents (2^60)";
            throw SpecError(source, field, os.str());
        }
    };
    if (mode == RunMode::TRAINING)
    {
        const long double rows = (long double) microBatch * sequence;
        check("sequence",
              rows * width * 4,
              "one micro-batch's activations (" + std::to_string(microBatch) + " x "
                  + std::to_string(sequence) + " tokens)");
        check("sequence",
              (long double) microBatch * model.heads * sequence * sequence * 4,
              "one micro-batch's attention scores (mbs x heads x sequence^2)");
        check("global_batch",
              (long double) globalBatch * sequence * width * 4,
              "the global batch's activations (" + std::to_string(globalBatch) + " x "
                  + std::to_string(sequence) + " tokens)");
    }
    else
    {
        const long double tokens = (long double) promptTokens + generatedTokens;
        check("batch",
              (long double) batch * tokens * model.layers * 2 * model.kvHeads
                  * std::max<uint32_t>(model.headDim, 1) * 4,
              "the KV cache (" + std::to_string(batch) + " sequences x "
                  + std::to_string(promptTokens) + " + " + std::to_string(generatedTokens)
                  + " tokens)");
        check(
            "prompt", (long double) batch * promptTokens * width * 4, "the prefill's activations");
        check("prompt",
              (long double) batch * model.heads * promptTokens * promptTokens * 4,
              "the prefill's attention scores (batch x heads x prompt^2)");
    }
}

bool
ParallelSpec::operator==(const ParallelSpec& o) const
{
    return tp == o.tp && pp == o.pp && dp == o.dp && cp == o.cp && ep == o.ep && etp == o.etp
           && sequenceParallel == o.sequenceParallel && zeroStage == o.zeroStage
           && virtualStages == o.virtualStages && firstStageLayers == o.firstStageLayers
           && lastStageLayers == o.lastStageLayers && embeddingInSplit == o.embeddingInSplit
           && lossInSplit == o.lossInSplit && rankOrder == o.rankOrder && schedule == o.schedule;
}

bool
ParallelSpec::ZeroBubble() const
{
    return schedule == "zb-h1" || schedule == "zb-v";
}

bool
ParallelSpec::VShape() const
{
    return schedule == "zb-v";
}

uint32_t
ParallelSpec::VirtualStageOf(uint32_t chunk, uint32_t stage) const
{
    return VShape() && chunk == 1 ? 2 * pp - 1 - stage : chunk * pp + stage;
}

uint32_t
ParallelSpec::StageOfVirtual(uint32_t vstage) const
{
    return VShape() && vstage >= pp ? 2 * pp - 1 - vstage : vstage % pp;
}

uint32_t
ParallelSpec::HeadStage() const
{
    return StageOfVirtual(pp * virtualStages - 1);
}

std::string
RunSpec::AttentionName() const
{
    if (!flashAttention)
    {
        return "standard";
    }
    switch (fusedAttention)
    {
        case FusedAttention::FLASH2:
            return "flash";
        case FusedAttention::TRITON2022:
            return "triton2022";
        case FusedAttention::FLASH3:
            return "flash3";
        default:
            return "auto";
    }
}

void
RunSpec::SetAttention(const std::string& name)
{
    flashAttention = name != "standard";
    fusedAttention = name == "flash"        ? FusedAttention::FLASH2
                     : name == "triton2022" ? FusedAttention::TRITON2022
                     : name == "flash3"     ? FusedAttention::FLASH3
                                            : FusedAttention::AUTO;
}

bool
RunSpec::operator==(const RunSpec& o) const
{
    return mode == o.mode && parallel == o.parallel && recompute == o.recompute && dtype == o.dtype
           && microBatch == o.microBatch && globalBatch == o.globalBatch && sequence == o.sequence
           && flashAttention == o.flashAttention && fusedAttention == o.fusedAttention
           && overlapGradReduce == o.overlapGradReduce && overlapTpReduce == o.overlapTpReduce
           && bucketBytes == o.bucketBytes && batch == o.batch && promptTokens == o.promptTokens
           && generatedTokens == o.generatedTokens && firstToken == o.firstToken
           && splitKvDecode == o.splitKvDecode && inflightBatches == o.inflightBatches
           && memoryLayout == o.memoryLayout && moeImbalance == o.moeImbalance
           && dispatch == o.dispatch && engine == o.engine && fp8Scaling == o.fp8Scaling
           && fp8Params == o.fp8Params && mainGrads == o.mainGrads
           && tpCommOverlap == o.tpCommOverlap && paramGather == o.paramGather
           && specTokens == o.specTokens && specAcceptance == o.specAcceptance
           && moeA2aOverlap == o.moeA2aOverlap && chunkSequences == o.chunkSequences
           && chunkTokens == o.chunkTokens && chunkPrefix == o.chunkPrefix
           && cachedPrefix == o.cachedPrefix && sharedPrefix == o.sharedPrefix
           && prefixGroups == o.prefixGroups && cascadeAttention == o.cascadeAttention
           && kvCacheDtype == o.kvCacheDtype && gpuMemoryUtilization == o.gpuMemoryUtilization
           && profileTokens == o.profileTokens;
}

uint32_t
RunSpec::PrefixCopies() const
{
    if (sharedPrefix)
    {
        return 1;
    }
    return std::min(prefixGroups, batch);
}

uint32_t
RunSpec::InflightBatches() const
{
    if (mode == RunMode::TRAINING || parallel.pp < 2)
    {
        return 1;
    }
    return inflightBatches > 0 ? inflightBatches : std::min(parallel.pp, batch);
}

uint32_t
RunSpec::InflightBatchSize(uint32_t m) const
{
    const uint32_t n = InflightBatches();
    return batch / n + (m < batch % n ? 1 : 0);
}

std::string
RunSpec::ResolvedDispatch() const
{
    if (dispatch != "auto")
    {
        return dispatch;
    }
    // Each engine family's own way of issuing a decode step (doc/workload-model.md): TurboMind
    // launches every kernel from its C++ loop; vLLM replays a captured CUDA graph per decode
    // step (enforce_eager=False, its default); Hugging Face generate() runs eager PyTorch.
    if (engine == "lmdeploy")
    {
        return "engine";
    }
    if (engine == "vllm")
    {
        return "graphs";
    }
    if (engine == "hf")
    {
        return "eager";
    }
    return "none";
}

double
RunSpec::TokensPerDecodePass() const
{
    if (specTokens == 0)
    {
        return 1.0;
    }
    if (specAcceptance >= 1.0)
    {
        return specTokens + 1.0;
    }
    return (1.0 - std::pow(specAcceptance, specTokens + 1.0)) / (1.0 - specAcceptance);
}

uint32_t
RunSpec::DecodePasses() const
{
    if (generatedTokens <= 1)
    {
        return 0;
    }
    const double passes = double(generatedTokens - 1) / TokensPerDecodePass();
    return static_cast<uint32_t>(std::ceil(passes - 1e-9));
}

bool
RunSpec::KeepsFp8Params() const
{
    return mode == RunMode::TRAINING && dtype == DataType::FP8 && fp8Params
           && parallel.zeroStage >= 1;
}

bool
RunSpec::FirstTokenFromPrefill() const
{
    if (firstToken != "auto")
    {
        return firstToken == "prefill";
    }
    // TurboMind (lmdeploy 2023) prefills all but the last prompt token and samples the first
    // token in a first decode step; vLLM and transformers sample the prefill's last position.
    return engine != "lmdeploy";
}

bool
RunSpec::operator!=(const RunSpec& o) const
{
    return !(*this == o);
}

RunSpec
RunSpec::Parse(const std::string& text, const std::string& source)
{
    YAML::Node root = ParseYaml(text, source);
    SpecReader r(root, source);
    RunSpec s = Read(r);
    r.Finish();
    return s;
}

RunSpec
RunSpec::Read(SpecReader& r)
{
    RunSpec s;
    std::string mode = r.GetChoice("mode", Choices("mode"), "training");
    s.mode = mode == "training" ? RunMode::TRAINING : RunMode::INFERENCE;
    std::string dtype = r.GetChoice("dtype", Choices("dtype"), ToString(s.dtype));
    ParseDataType(dtype, s.dtype);
    if (r.Has("parallel"))
    {
        SpecReader p = r.GetMap("parallel");
        s.parallel.tp = p.GetCount("tp", 1, 1);
        s.parallel.pp = p.GetCount("pp", 1, 1);
        s.parallel.dp = p.GetCount("dp", 1, 1);
        s.parallel.cp = p.GetCount("cp", 1, 1);
        s.parallel.ep = p.GetCount("ep", 1, 1);
        s.parallel.etp = p.GetCount("etp", 1, 0);
        s.parallel.sequenceParallel = p.GetBool("sp", false);
        s.parallel.zeroStage = p.GetCount("zero", 0, 0);
        if (s.parallel.zeroStage > 3)
        {
            p.Fail("zero", "allowed values: 0, 1, 2, 3");
        }
        if (p.GetBool("fsdp", false))
        {
            s.parallel.zeroStage = 3;
        }
        s.parallel.virtualStages = p.GetCount("vpp", 1, 1);
        s.parallel.firstStageLayers = p.GetCount("first_stage_layers", 0, 0);
        s.parallel.lastStageLayers = p.GetCount("last_stage_layers", 0, 0);
        s.parallel.embeddingInSplit = p.GetBool("embedding_in_pipeline_split", false);
        s.parallel.lossInSplit = p.GetBool("loss_in_pipeline_split", false);
        s.parallel.rankOrder = p.GetString("rank_order", s.parallel.rankOrder);
        s.parallel.schedule =
            p.GetChoice("pp_schedule", Choices("pp_schedule"), s.parallel.schedule);
        p.Finish();
    }
    ParseRecompute(r.GetChoice("recompute", Choices("recompute"), ToString(s.recompute)),
                   s.recompute);
    s.SetAttention(r.GetChoice("attention", Choices("attention"), "auto"));
    s.overlapGradReduce =
        r.GetChoice("grad_reduce", Choices("grad_reduce"), "overlap") == "overlap";
    s.overlapTpReduce = r.GetChoice("tp_reduce", Choices("tp_reduce"), "overlap") == "overlap";
    if (r.Has("bucket_mib"))
    {
        s.bucketBytes = static_cast<uint64_t>(r.GetSize("bucket_mib", 1 << 20, 25) * (1 << 20));
        if (s.bucketBytes == 0)
        {
            r.Fail("bucket_mib", "is less than one byte");
        }
    }
    s.microBatch = r.GetCount("micro_batch", 1, s.microBatch);
    s.globalBatch = r.GetCount("global_batch", 1, s.globalBatch);
    s.sequence = r.GetCount("sequence", 1, s.sequence);
    s.batch = r.GetCount("batch", 1, s.batch);
    s.promptTokens = r.GetCount("prompt", 1, s.promptTokens);
    s.generatedTokens = r.GetCount("generated", 1, s.generatedTokens);
    s.cachedPrefix = r.GetCount("cached_prefix", 0, s.cachedPrefix);
    s.sharedPrefix = r.GetBool("shared_prefix", s.sharedPrefix);
    s.prefixGroups = r.GetCount("prefix_groups", 0, s.prefixGroups);
    s.cascadeAttention = r.GetBool("cascade_attention", s.cascadeAttention);
    s.kvCacheDtype = r.GetChoice("kv_cache_dtype", Choices("kv_cache_dtype"), s.kvCacheDtype);
    s.gpuMemoryUtilization =
        r.GetInRange("gpu_memory_utilization", 0.0, 1.0, s.gpuMemoryUtilization);
    s.profileTokens = r.GetCount("profile_tokens", 0, s.profileTokens);
    s.moeImbalance = r.GetInRange("moe_imbalance", 1.0, 1e6, 1.0);
    s.specTokens = r.GetCount("spec_tokens", 0, s.specTokens);
    s.specAcceptance = r.GetInRange("spec_acceptance", 0.0, 1.0, s.specAcceptance);
    s.moeA2aOverlap = r.GetBool("moe_a2a_overlap", s.moeA2aOverlap);
    ParseMemoryLayout(r.GetChoice("memory_layout", MemoryLayoutNames(), ToString(s.memoryLayout)),
                      s.memoryLayout);
    s.splitKvDecode =
        r.GetChoice("decode_attention", Choices("decode_attention"), "split_kv") == "split_kv";
    s.inflightBatches = r.GetCount("inflight_batches", 0, s.inflightBatches);
    s.firstToken = r.GetChoice("first_token", Choices("first_token"), s.firstToken);
    s.dispatch = r.GetChoice("dispatch", Choices("dispatch"), s.dispatch);
    s.engine = r.GetChoice("engine", Choices("engine"), s.engine);
    s.fp8Scaling = r.GetChoice("fp8_scaling", Choices("fp8_scaling"), s.fp8Scaling);
    s.fp8Params = r.GetBool("fp8_params", s.fp8Params);
    s.mainGrads = r.GetChoice("main_grads", Choices("main_grads"), s.mainGrads);
    s.paramGather = r.GetChoice("param_gather", Choices("param_gather"), s.paramGather);
    s.tpCommOverlap = r.GetChoice("tp_comm_overlap", Choices("tp_comm_overlap"), s.tpCommOverlap);
    return s;
}

} // namespace rapidllm
} // namespace ns3
