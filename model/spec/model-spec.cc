/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "model-spec.h"

#include "spec-document.h"
#include "spec-reader.h"

#include <cmath>
#include <sstream>

namespace ns3 {
namespace rapidllm {

bool
ModelSpec::IsGated() const
{
    return activation == Activation::SWIGLU || activation == Activation::GEGLU;
}

bool
ModelSpec::IsMoe() const
{
    return experts > 1;
}

bool
ModelSpec::IsMla() const
{
    return kvLoraRank > 0;
}

uint32_t
ModelSpec::ValueDim() const
{
    return IsMla() && valueHeadDim > 0 ? valueHeadDim : headDim;
}

uint64_t
ModelSpec::AttentionParameters() const
{
    const uint64_t h = hidden;
    const uint64_t b = bias ? 1 : 0;
    const uint64_t qOut = uint64_t(heads) * headDim;
    const uint64_t out = uint64_t(heads) * ValueDim();
    if (!IsMla())
    {
        // Q, K, V projections and the output projection.
        const uint64_t kvOut = uint64_t(kvHeads) * headDim;
        return h * (qOut + 2 * kvOut) + b * (qOut + 2 * kvOut) + out * h + b * h;
    }
    // MLA (DeepSeek-V2, section 2.1): the query through its own latent (or straight from the
    // hidden state), the KV latent and the shared rotary key from the hidden state, both latents
    // normalized, keys (their non-rotary part) and values expanded from the KV latent per head.
    const uint64_t down = uint64_t(qLoraRank) + kvLoraRank + ropeHeadDim;
    const uint64_t kvUp = uint64_t(heads) * (headDim - ropeHeadDim + ValueDim());
    const uint64_t q = qLoraRank > 0 ? uint64_t(qLoraRank) * qOut : h * qOut;
    return h * down + q + uint64_t(kvLoraRank) * kvUp + out * h + qLoraRank + kvLoraRank
           + b * (down + qOut + kvUp + h);
}

bool
ModelSpec::IsMoeLayer(uint32_t layer) const
{
    return IsMoe() && layer >= firstDenseLayers && (layer + 1) % moeLayerStep == 0;
}

uint32_t
ModelSpec::MoeLayers() const
{
    if (!IsMoe() || firstDenseLayers >= layers)
    {
        return 0;
    }
    // Layers i >= first with (i + 1) % step == 0: the multiples of step in (first, layers].
    return layers / moeLayerStep - firstDenseLayers / moeLayerStep;
}

uint64_t
ModelSpec::LayerParameters(bool moe) const
{
    const uint64_t h = hidden;
    const uint64_t b = bias ? 1 : 0;
    const uint64_t attention = AttentionParameters();
    // MLP: one (GELU) or two (gated) input projections and one output projection.
    const uint64_t inputs = IsGated() ? 2 : 1;
    auto mlp = [&](uint64_t width)
    {
        return inputs * h * width + b * inputs * width + width * h + b * h;
    };
    // A MoE layer: every expert, the replicated router and the shared expert.
    uint64_t mlpParams = moe && IsMoe() ? uint64_t(experts) * mlp(expertFfn) + h * experts
                                              + (sharedExpertFfn > 0 ? mlp(sharedExpertFfn) : 0)
                                        : mlp(ffn);
    // Two norms per layer: LayerNorm has weight and bias, RMSNorm a weight only.
    uint64_t norms = 2 * h * (norm == NormType::LAYER_NORM ? 2 : 1);
    return attention + mlpParams + norms;
}

uint64_t
ModelSpec::EmbeddingParameters() const
{
    uint64_t params = uint64_t(vocab) * hidden;
    if (position == PositionEmbedding::LEARNED)
    {
        params += uint64_t(maxSequence) * hidden;
    }
    return params;
}

uint32_t
ModelSpec::WindowOf(uint32_t layer) const
{
    const bool full = windowPattern > 0 && (layer + 1) % windowPattern == 0;
    return full ? 0 : slidingWindow;
}

bool
ModelSpec::HasWindow() const
{
    return slidingWindow > 0;
}

uint64_t
ModelSpec::ParameterCount() const
{
    uint64_t finalNorm = uint64_t(hidden) * (norm == NormType::LAYER_NORM ? 2 : 1);
    uint64_t head = tiedEmbeddings ? 0 : uint64_t(vocab) * hidden;
    const uint64_t moeLayers = MoeLayers();
    return moeLayers * LayerParameters(true) + (layers - moeLayers) * LayerParameters(false)
           + EmbeddingParameters() + finalNorm + head;
}

void
ModelSpec::Validate(const std::string& source) const
{
    // The counts a file's reader holds to at least 1 (a spec built in code skips the reader;
    // kv_heads 0 divided by zero below).
    for (const auto& [field, value] : {std::make_pair("layers", uint64_t(layers)),
                                       std::make_pair("hidden", uint64_t(hidden)),
                                       std::make_pair("heads", uint64_t(heads)),
                                       std::make_pair("kv_heads", uint64_t(kvHeads)),
                                       std::make_pair("head_dim", uint64_t(headDim)),
                                       std::make_pair("vocab", uint64_t(vocab))})
    {
        if (value == 0)
        {
            throw SpecError(source, field, "0: allowed at least 1");
        }
    }
    // Parameter and byte counts are 64-bit: estimate the size in floating point first so that a
    // huge shape is refused here instead of wrapping there (2^56 parameters = 2^60 bytes of
    // weights, gradients and optimizer state; the largest models have ~2^41).
    const long double h = hidden;
    const long double projections = (long double) heads * headDim + 2.0L * kvHeads * headDim;
    const long double mlpWidth =
        IsMoe() ? (long double) experts * expertFfn + sharedExpertFfn + ffn : (long double) ffn;
    const long double perLayer = h * projections + (long double) heads * headDim * h
                                 + (IsGated() ? 3.0L : 2.0L) * h * mlpWidth;
    const long double params = layers * perLayer + (2.0L * vocab + maxSequence) * h;
    if (params > std::ldexp(1.0L, 56))
    {
        std::ostringstream os;
        os.precision(3);
        os << "the shape (layers " << layers << ", hidden " << hidden << ", heads " << heads
           << ", head_dim " << headDim << ", ffn " << ffn << ", vocab " << vocab << ") has about "
           << params << " parameters, beyond what the model represents (2^56)";
        throw SpecError(source, "", os.str());
    }
    if (heads % kvHeads != 0)
    {
        throw SpecError(source,
                        "kv_heads",
                        "heads (" + std::to_string(heads) + ") must be a multiple of kv_heads ("
                            + std::to_string(kvHeads) + ")");
    }
    if (IsMla() && kvHeads != heads)
    {
        throw SpecError(source,
                        "kv_heads",
                        "multi-head latent attention expands keys and values per head: kv_heads ("
                            + std::to_string(kvHeads) + ") must equal heads ("
                            + std::to_string(heads) + ")");
    }
    if (IsMla() && ropeHeadDim >= headDim)
    {
        throw SpecError(source,
                        "mla.rope_head_dim",
                        std::to_string(ropeHeadDim) + " leaves no non-rotary part of head_dim ("
                            + std::to_string(headDim) + "); allowed: 0 to head_dim - 1");
    }
    if (IsMla() && ropeHeadDim > 0 && position != PositionEmbedding::ROPE)
    {
        throw SpecError(source,
                        "mla.rope_head_dim",
                        std::to_string(ropeHeadDim)
                            + " rotary dimensions need position: rope (not learned); allowed: 0 "
                              "with learned positions");
    }
    if (IsMoe() && (topK == 0 || topK > experts))
    {
        throw SpecError(source,
                        "moe.top_k",
                        "must be between 1 and the number of experts (" + std::to_string(experts)
                            + ")");
    }
    if (IsMoe() && firstDenseLayers >= layers)
    {
        throw SpecError(source,
                        "moe.first_dense_layers",
                        std::to_string(firstDenseLayers) + " leaves no mixture-of-experts layer; "
                            + "allowed: 0 to layers - 1 (" + std::to_string(layers - 1) + ")");
    }
    if (IsMoe() && MoeLayers() == 0)
    {
        // The steps that leave one: a multiple of the step in (first_dense_layers, layers].
        std::string allowed;
        for (uint32_t step = 1; step <= layers; ++step)
        {
            if (layers / step > firstDenseLayers / step)
            {
                allowed += (allowed.empty() ? "" : ", ") + std::to_string(step);
            }
        }
        throw SpecError(source,
                        "moe.layer_step",
                        std::to_string(moeLayerStep) + " leaves no mixture-of-experts layer among "
                            + "the " + std::to_string(layers) + " layers after the "
                            + std::to_string(firstDenseLayers)
                            + " dense ones (first_dense_layers); allowed: " + allowed);
    }
}

bool
ModelSpec::operator==(const ModelSpec& o) const
{
    return name == o.name && layers == o.layers && hidden == o.hidden && heads == o.heads
           && kvHeads == o.kvHeads && headDim == o.headDim && ffn == o.ffn && norm == o.norm
           && activation == o.activation && position == o.position && bias == o.bias
           && dropout == o.dropout && vocab == o.vocab && tiedEmbeddings == o.tiedEmbeddings
           && maxSequence == o.maxSequence && experts == o.experts && topK == o.topK
           && expertFfn == o.expertFfn && sharedExpertFfn == o.sharedExpertFfn
           && firstDenseLayers == o.firstDenseLayers && moeLayerStep == o.moeLayerStep
           && slidingWindow == o.slidingWindow && windowPattern == o.windowPattern
           && kvLoraRank == o.kvLoraRank && qLoraRank == o.qLoraRank && ropeHeadDim == o.ropeHeadDim
           && valueHeadDim == o.valueHeadDim && mtpLayers == o.mtpLayers;
}

bool
ModelSpec::operator!=(const ModelSpec& o) const
{
    return !(*this == o);
}

namespace {
/** The most multi-token prediction depths a model file may ask for. */
constexpr uint32_t kMaxMtpLayers = 16;

/** The typed parse of a model file's tree. */
ModelSpec
ReadModel(const YAML::Node& root, const std::string& source)
{
    SpecReader r(root, source);
    ModelSpec m;
    r.Has("base"); // merged before the typed read, but a field of the file all the same
    m.name = r.GetName("name");
    m.layers = r.GetCount("layers");
    m.hidden = r.GetCount("hidden");
    m.heads = r.GetCount("heads");
    m.kvHeads = r.GetCount("kv_heads", 1, m.heads);
    if (!r.Has("head_dim") && m.hidden % m.heads != 0)
    {
        r.Fail("heads",
               "hidden (" + std::to_string(m.hidden) + ") is not divisible by heads ("
                   + std::to_string(m.heads)
                   + "); give head_dim explicitly (a model file's head_dim, or "
                     "--set=model.head_dim=N)");
    }
    m.headDim = r.GetCount("head_dim", 1, m.hidden / m.heads);
    m.ffn = r.GetCount("ffn");
    std::string activation = r.GetChoice("activation", {"gelu", "swiglu", "squared_relu", "geglu"});
    m.activation = activation == "swiglu"         ? Activation::SWIGLU
                   : activation == "squared_relu" ? Activation::SQUARED_RELU
                   : activation == "geglu"        ? Activation::GEGLU
                                                  : Activation::GELU;
    std::string norm = r.GetChoice("norm", {"layernorm", "rmsnorm"});
    m.norm = norm == "rmsnorm" ? NormType::RMS_NORM : NormType::LAYER_NORM;
    std::string position = r.GetChoice("position", {"learned", "rope"});
    m.position = position == "rope" ? PositionEmbedding::ROPE : PositionEmbedding::LEARNED;
    m.bias = r.GetBool("bias", m.norm == NormType::LAYER_NORM);
    m.dropout = r.GetBool("dropout", false);
    m.vocab = r.GetCount("vocab");
    m.tiedEmbeddings = r.GetBool("tied_embeddings", false);
    m.maxSequence = r.GetCount("max_sequence");
    if (r.Has("sliding_window"))
    {
        m.slidingWindow = r.GetCount("sliding_window");
        if (m.slidingWindow >= m.maxSequence)
        {
            // A window as long as the sequence is no window: omit the key.
            r.Fail("sliding_window",
                   std::to_string(m.slidingWindow) + " is not shorter than max_sequence ("
                       + std::to_string(m.maxSequence)
                       + "); a window no query can exceed is full attention: leave the key out");
        }
        m.windowPattern = r.GetCount("sliding_window_pattern", 2, 0);
    }
    else if (r.Has("sliding_window_pattern"))
    {
        r.Fail("sliding_window_pattern", "needs sliding_window (the window in tokens)");
    }
    if (r.Has("mla"))
    {
        // Validate checks kv_heads (= heads) and rope_head_dim (< head_dim).
        SpecReader mla = r.GetMap("mla");
        m.kvLoraRank = mla.GetCount("kv_lora_rank", 1);
        m.qLoraRank = mla.GetCount("q_lora_rank", 0, 0);
        m.ropeHeadDim = mla.GetCount("rope_head_dim", 0, 0);
        m.valueHeadDim = mla.GetCount("v_head_dim", 1, m.headDim);
        mla.Finish();
    }
    m.mtpLayers = r.GetCount("mtp_layers", 0, 0);
    if (m.mtpLayers > kMaxMtpLayers)
    {
        r.Fail("mtp_layers",
               std::to_string(m.mtpLayers) + " prediction depths; allowed: 0 to "
                   + std::to_string(kMaxMtpLayers) + " (DeepSeek-V3 trains with 1)");
    }
    if (r.Has("moe"))
    {
        SpecReader moe = r.GetMap("moe");
        m.experts = moe.GetCount("experts", 2);
        m.topK = moe.GetCount("top_k", 1);
        m.expertFfn = moe.GetCount("expert_ffn", 1, m.ffn);
        m.sharedExpertFfn = moe.GetCount("shared_expert_ffn", 0, 0);
        m.firstDenseLayers = moe.GetCount("first_dense_layers", 0, 0);
        m.moeLayerStep = moe.GetCount("layer_step", 1, 1);
        moe.Finish();
    }
    r.Finish();
    try
    {
        m.Validate(source);
    }
    catch (const SpecError& e)
    {
        // A check across fields (kv_heads against heads, moe.top_k against the experts) is
        // told at the line of the field it names, as a field's own check is.
        YAML::Node node = root;
        std::size_t from = 0;
        const std::string& field = e.GetField();
        while (node && node.IsMap() && from < field.size())
        {
            const std::size_t dot = field.find('.', from);
            // reset(), not =: assigning a yaml-cpp node writes into the tree
            node.reset(node[field.substr(from, dot == std::string::npos ? dot : dot - from)]);
            from = dot == std::string::npos ? field.size() : dot + 1;
        }
        if (e.GetLine() > 0 || field.empty() || !node || node.Mark().line < 0)
        {
            throw;
        }
        throw SpecError(e.GetFile(), field, e.GetMessage(), node.Mark().line + 1);
    }
    return m;
}

/** \return the spec the document describes */
ModelSpec
ReadModel(const SpecDocument& document)
{
    ModelSpec m;
    document.Read(
        [&m](const YAML::Node& root, const std::string& source)
        {
            m = ReadModel(root, source);
        });
    return m;
}
} // namespace

ModelSpec
ModelSpec::Parse(const std::string& text, const std::string& source)
{
    return ReadModel(SpecDocument::Parse("models", text, source));
}

ModelSpec
ModelSpec::Load(const std::string& nameOrPath)
{
    return ReadModel(SpecDocument::Load("models", nameOrPath, "model"));
}

ModelSpec
ModelSpec::Load(const std::string& nameOrPath, const std::vector<SpecOverride>& overrides)
{
    SpecDocument document = SpecDocument::Load("models", nameOrPath, "model");
    document.Apply(overrides);
    return ReadModel(document);
}

} // namespace rapidllm
} // namespace ns3
