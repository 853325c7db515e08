/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "run-spec.h"

#include "model-spec.h"
#include "spec-reader.h"

#include <set>
#include <sstream>

namespace ns3 {
namespace rapidllm {

uint64_t
ParallelSpec::Gpus() const
{
    return uint64_t(tp) * cp * dp * pp;
}

uint32_t
ParallelSpec::StageLayers(uint32_t layers, uint32_t stage) const
{
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
    return StageLayers(layers, vstage % pp) / virtualStages;
}

uint32_t
ParallelSpec::FirstLayerOf(uint32_t layers, uint32_t vstage) const
{
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
    return firstStageLayers > 0 || lastStageLayers > 0;
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
    }
    return "auto";
}

std::vector<std::string>
MemoryLayoutNames()
{
    return {"auto", "megatron", "deepspeed"};
}

bool
ParseMemoryLayout(const std::string& name, MemoryLayout& layout)
{
    for (MemoryLayout m : {MemoryLayout::AUTO, MemoryLayout::MEGATRON, MemoryLayout::DEEPSPEED})
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
               << p.virtualStages
               << "), or give the first and last stages their own layer counts "
                  "(first_stage_layers, last_stage_layers) and split the rest evenly";
            throw SpecError(source, "pp", os.str());
        }
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
    if (middle > 0 && (fixed >= layers || (layers - fixed) % middle != 0))
    {
        os << " leave " << (fixed >= layers ? 0 : layers - fixed) << " of the " << layers
           << " layers for the other " << middle << " stages: that must be a positive multiple of "
           << middle;
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
    if (p.zeroStage > 3)
    {
        throw SpecError(source, "zero", "allowed values: 0, 1, 2, 3");
    }
    if (memoryLayout == MemoryLayout::MEGATRON && p.zeroStage >= 2)
    {
        throw SpecError(source,
                        "memory_layout",
                        "Megatron-LM shards only the optimizer state (its distributed optimizer, "
                        "zero 1); zero "
                            + std::to_string(p.zeroStage)
                            + " is DeepSpeed's or PyTorch FSDP's: use memory_layout deepspeed "
                              "(or auto)");
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
        RequireMultiple(source, "ep", uint64_t(p.dp) * p.cp, "dp x cp", p.ep, "ep");
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
        RequireMultiple(source, "sequence", sequence, "sequence", p.cp, "cp");
        RequireMultiple(source,
                        "global_batch",
                        globalBatch,
                        "global batch",
                        uint64_t(microBatch) * p.dp,
                        "micro-batch x dp");
        if (p.virtualStages > 1 && MicroBatches() % p.pp != 0)
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
}

namespace {
/** A count of a run file that must fit the 32 bits it is kept in (no silent wrap). */
uint32_t
Count32(SpecReader& reader, const std::string& key, uint64_t minimum, uint64_t fallback)
{
    const uint64_t value = reader.GetCount(key, minimum, fallback);
    if (value > UINT32_MAX)
    {
        reader.Fail(key,
                    std::to_string(value) + " is above the largest allowed value, "
                        + std::to_string(UINT32_MAX));
    }
    return static_cast<uint32_t>(value);
}
} // namespace

RunSpec
RunSpec::Parse(const std::string& text, const std::string& source)
{
    YAML::Node root = ParseYaml(text, source);
    SpecReader r(root, source);
    RunSpec s;
    std::string mode = r.GetChoice("mode", {"training", "inference"}, "training");
    s.mode = mode == "training" ? RunMode::TRAINING : RunMode::INFERENCE;
    std::string dtype = r.GetChoice("dtype", DataTypeNames(), ToString(s.dtype));
    ParseDataType(dtype, s.dtype);
    if (r.Has("parallel"))
    {
        SpecReader p = r.GetMap("parallel");
        s.parallel.tp = Count32(p, "tp", 1, 1);
        s.parallel.pp = Count32(p, "pp", 1, 1);
        s.parallel.dp = Count32(p, "dp", 1, 1);
        s.parallel.cp = Count32(p, "cp", 1, 1);
        s.parallel.ep = Count32(p, "ep", 1, 1);
        s.parallel.sequenceParallel = p.GetBool("sp", false);
        s.parallel.zeroStage = Count32(p, "zero", 0, 0);
        if (s.parallel.zeroStage > 3)
        {
            p.Fail("zero", "allowed values: 0, 1, 2, 3");
        }
        if (p.GetBool("fsdp", false))
        {
            s.parallel.zeroStage = 3;
        }
        s.parallel.virtualStages = Count32(p, "vpp", 1, 1);
        s.parallel.firstStageLayers = Count32(p, "first_stage_layers", 0, 0);
        s.parallel.lastStageLayers = Count32(p, "last_stage_layers", 0, 0);
        s.parallel.rankOrder = p.GetString("rank_order", s.parallel.rankOrder);
        p.Finish();
    }
    ParseRecompute(r.GetChoice("recompute", RecomputeNames(), ToString(s.recompute)), s.recompute);
    s.flashAttention = r.GetChoice("attention", {"flash", "standard"}, "flash") == "flash";
    s.overlapGradReduce =
        r.GetChoice("grad_reduce", {"overlap", "after_backward"}, "overlap") == "overlap";
    s.overlapTpReduce = r.GetChoice("tp_reduce", {"overlap", "blocking"}, "overlap") == "overlap";
    // Up to 1 TiB: the bytes stay far inside 64 bits.
    s.bucketBytes =
        static_cast<uint64_t>(r.GetInRange("bucket_mib", 1.0 / (1 << 20), 1 << 20, 25) * (1 << 20));
    s.microBatch = Count32(r, "micro_batch", 1, s.microBatch);
    s.globalBatch = Count32(r, "global_batch", 1, s.globalBatch);
    s.sequence = Count32(r, "sequence", 1, s.sequence);
    s.batch = Count32(r, "batch", 1, s.batch);
    s.promptTokens = Count32(r, "prompt", 1, s.promptTokens);
    s.generatedTokens = Count32(r, "generated", 0, s.generatedTokens);
    s.moeImbalance = r.GetInRange("moe_imbalance", 1.0, 1e6, 1.0);
    ParseMemoryLayout(r.GetChoice("memory_layout", MemoryLayoutNames(), ToString(s.memoryLayout)),
                      s.memoryLayout);
    s.splitKvDecode =
        r.GetChoice("decode_attention", {"split_kv", "per_head"}, "split_kv") == "split_kv";
    s.firstTokenFromPrefill =
        r.GetChoice("first_token", {"prefill", "decode"}, "prefill") == "prefill";
    r.Finish();
    return s;
}

} // namespace rapidllm
} // namespace ns3
