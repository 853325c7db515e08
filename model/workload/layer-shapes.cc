/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "layer-shapes.h"

#include <algorithm>
#include <cmath>

namespace ns3 {
namespace rapidllm {

LayerShapes::LayerShapes(const ModelSpec& model, const RunSpec& run)
{
    const auto& p = run.parallel;
    tp = p.tp;
    hidden = model.hidden;
    m_layers = model.layers;
    headDim = model.headDim;
    heads = model.heads / p.tp;
    // Megatron-LM replicates KV heads when there are fewer KV heads than TP ranks.
    kvHeads = model.kvHeads >= p.tp ? model.kvHeads / p.tp : 1;
    valueDim = model.ValueDim();
    qkvOut = (heads + kvHeads) * headDim + kvHeads * valueDim;
    // With fewer KV heads than ranks each rank computes a whole KV head: the model's work is
    // its 1 / tp of them.
    qkvModelShare =
        (heads * headDim + double(model.kvHeads) / p.tp * (headDim + valueDim)) / qkvOut;
    if (model.IsMla())
    {
        mla = true;
        qLora = model.qLoraRank;
        kvLora = model.kvLoraRank;
        ropeDim = model.ropeHeadDim;
    }
    ffn = model.ffn / p.tp;
    fc1Out = model.IsGated() ? 2 * ffn : ffn;
    if (model.IsMoe())
    {
        localExperts = model.experts / p.ep;
        expertFfn = model.expertFfn / p.ExpertTp();
        experts = model.experts;
        topK = model.topK;
        ep = p.ep;
        replicatedTokens = run.mode == RunMode::INFERENCE && p.FoldedExperts();
        expertFc1Out = model.IsGated() ? 2 * expertFfn : expertFfn;
        sharedFfn = model.sharedExpertFfn / p.tp;
        sharedFc1Out = model.IsGated() ? 2 * sharedFfn : sharedFfn;
        m_moe = true;
        for (uint32_t l = 0; l < model.layers; ++l)
        {
            m_moeLayers.push_back(model.IsMoeLayer(l));
        }
    }
    vocab = (model.vocab + p.tp - 1) / p.tp;
    elementBytes = BytesOf(run.ActivationType());
    cacheBits = BitsOf(run.KvCacheType());
    moeImbalance = run.moeImbalance;

    const uint64_t h = hidden;
    const uint64_t b = model.bias ? 1 : 0;
    const uint64_t inputs = model.IsGated() ? 2 : 1;
    const uint64_t norms = 2 * h * (model.norm == NormType::LAYER_NORM ? 2 : 1);
    uint64_t attention = AttentionLinearParams() + b * h;
    if (mla)
    {
        // Biases of the down- and up-projections; the two latents' norms.
        attention += b * (LatentWidth() + heads * headDim + heads * (headDim - ropeDim + valueDim))
                     + qLora + kvLora;
    }
    else
    {
        attention += b * qkvOut;
    }
    // A dense MLP of width w on this rank (tensor-parallel): its projections and biases.
    auto mlp = [&](uint64_t w)
    {
        return inputs * h * w + b * inputs * w + w * h + b * h;
    };
    denseLayerParams = attention + mlp(ffn) + norms;
    // Replicated over the tensor-parallel group yet fed each rank's own rows under sequence
    // parallelism: the norms, the row-parallel projections' biases (out-projection, second MLP
    // projection) and MLA's down-projection with its biases and the latents' norms.
    m_denseReplicated = norms + 2 * b * h;
    if (mla)
    {
        m_denseReplicated += (h + b) * LatentWidth() + qLora + kvLora;
    }
    if (model.IsMoe())
    {
        expertParams =
            localExperts * (inputs * h * expertFfn + expertFfn * h + b * (inputs * expertFfn + h));
        // The router is replicated; the shared expert is tensor-parallel as a dense MLP.
        moeLayerParams = attention + h * model.experts + (sharedFfn > 0 ? mlp(sharedFfn) : 0)
                         + expertParams + norms;
        // The router's weights, the out-projection's bias and the shared expert's second bias.
        m_moeReplicated =
            m_denseReplicated - b * h + h * model.experts + (sharedFfn > 0 ? b * h : 0);
    }
    embeddingParams = vocab * h;
    if (model.position == PositionEmbedding::LEARNED)
    {
        embeddingParams += uint64_t(model.maxSequence) * h;
    }
    // A tied LM head shares the embedding's weights, except where a pipeline puts the head on
    // another rank: there that stage keeps its own copy of the word embedding for the head
    // (Megatron-LM's setup_embeddings_and_output_layer), with its own gradients and optimizer
    // state. Under zb-v the first rank holds both.
    headParams = (!model.tiedEmbeddings || run.parallel.HeadStage() != 0) ? vocab * h : 0;
    finalNormParams = h * (model.norm == NormType::LAYER_NORM ? 2 : 1);
    // Megatron-core's MultiTokenPredictionLayer: enorm, hnorm, eh_proj (a column-parallel
    // linear without bias), the layer, final_layernorm. Trained beside the model; in inference
    // one such module drafts for speculative decoding (RunSpec::specTokens).
    mtpLayers = run.mode == RunMode::TRAINING ? model.mtpLayers : (run.specTokens > 0 ? 1 : 0);
    mtpParams = mtpLayers > 0 ? 3 * finalNormParams + 2 * h * h / tp : 0;
}

bool
LayerShapes::IsMoeLayer(int32_t layer) const
{
    if (!m_moe || layer < 0 || static_cast<std::size_t>(layer) >= m_moeLayers.size())
    {
        return m_moe;
    }
    return m_moeLayers[static_cast<std::size_t>(layer)];
}

int32_t
LayerShapes::MtpLayer(uint32_t k) const
{
    return static_cast<int32_t>(m_layers + k);
}

uint64_t
LayerShapes::LayerParams(int32_t layer) const
{
    return IsMoeLayer(layer) ? moeLayerParams : denseLayerParams;
}

uint64_t
LayerShapes::ExpertParams(int32_t layer) const
{
    return IsMoeLayer(layer) ? expertParams : 0;
}

uint64_t
LayerShapes::TpReplicatedParams(int32_t layer) const
{
    return IsMoeLayer(layer) ? m_moeReplicated : m_denseReplicated;
}

uint64_t
LayerShapes::LinearParams(int32_t layer) const
{
    uint64_t params = AttentionLinearParams();
    if (IsMoeLayer(layer))
    {
        params += ExpertLinearParams(layer);
        params += hidden * sharedFc1Out + sharedFfn * hidden;
    }
    else
    {
        params += hidden * fc1Out + ffn * hidden;
    }
    return params;
}

uint64_t
LayerShapes::ExpertLinearParams(int32_t layer) const
{
    return IsMoeLayer(layer) ? localExperts * (hidden * expertFc1Out + expertFfn * hidden) : 0;
}

uint64_t
LayerShapes::AttentionLinearParams() const
{
    if (!mla)
    {
        return hidden * qkvOut + AttentionOut() * hidden;
    }
    // Down to the latents (replicated); Q from its latent or the hidden state, K's non-rotary
    // part and V from the KV latent (split by heads); the out-projection.
    const uint64_t q = (qLora > 0 ? qLora : hidden) * heads * headDim;
    const uint64_t kv = kvLora * heads * (headDim - ropeDim + valueDim);
    return hidden * LatentWidth() + q + kv + AttentionOut() * hidden;
}

uint64_t
LayerShapes::LatentWidth() const
{
    return qLora + kvLora + ropeDim;
}

uint64_t
LayerShapes::AttentionOut() const
{
    return heads * valueDim;
}

uint64_t
LayerShapes::KvCacheBytesPerToken() const
{
    return (mla ? kvLora + ropeDim : kvHeads * (headDim + valueDim)) * cacheBits / 8;
}

namespace {
/**
 * \return the expected largest of \p ranks independent Binomial(\p n, \p p) counts:
 * sum over j of P(max >= j) = 1 - P(count < j)^ranks
 */
double
ExpectedBusiest(uint64_t n, double p, uint64_t ranks)
{
    if (n == 0 || p <= 0)
    {
        return 0;
    }
    if (p >= 1 || ranks <= 1)
    {
        return double(n) * std::min(p, 1.0);
    }
    double pmf = std::pow(1 - p, double(n)); // P(count = 0)
    double below = 0;                        // P(count < j)
    double expected = 0;
    for (uint64_t j = 1; j <= n; ++j)
    {
        below += pmf; // P(count <= j - 1)
        expected += 1 - std::pow(std::min(below, 1.0), double(ranks));
        pmf *= double(n - j + 1) / double(j) * p / (1 - p);
    }
    return expected;
}
} // namespace

ExpertRouting
LayerShapes::Routing(uint64_t rows, bool imbalanced) const
{
    ExpertRouting r;
    // Each rank's own rows travel to their experts' ranks, and on balance as many arrive; with
    // the tokens replicated over the group each rank takes its experts' share of the pairs.
    r.routed = replicatedTokens ? (rows * topK + ep - 1) / ep : rows * topK;
    // Local experts that receive a token: each expert is hit with the occupancy formula's
    // probability (uniform routing); a rank's count is binomial over its local experts, and
    // the step waits for the busiest of the ranks holding other experts, whose expected count
    // is the expected maximum of theirs (taken as independent): the average rank's undercounts
    // a few tokens' decode (DeepSeek-V3's one token on 8 ranks: 2.6 experts on the busiest,
    // not 1).
    const double groupTokens = replicatedTokens ? double(rows) : double(rows) * ep;
    const double hit = 1.0 - std::pow(1.0 - double(topK) / experts, groupTokens);
    const uint64_t holders = localExperts > 0 ? std::max<uint64_t>(1, experts / localExperts) : 1;
    r.activeExperts = std::clamp<uint64_t>(
        std::llround(ExpectedBusiest(localExperts, hit, holders)), 1, localExperts);
    uint64_t rankRows = r.routed; // balanced: the local experts' share of the group's tokens
    if (imbalanced && moeImbalance > 1.0)
    {
        const double f = moeImbalance;
        const double e = double(experts);
        const double l = double(localExperts);
        r.load = (f + (l - 1) * (e - f) / (e - 1)) / l;
        rankRows = static_cast<uint64_t>(std::ceil(double(r.routed) * r.load - 1e-9));
    }
    r.energyShare = localExperts * hit / double(r.activeExperts) / r.load;
    r.perExpert = (rankRows + r.activeExperts - 1) / r.activeExperts;
    r.expertRows = r.perExpert * r.activeExperts;
    return r;
}

namespace {
/** \return the sum of \p perLayer over every decoder layer of pipeline stage \p stage */
template<typename F>
uint64_t
SumStageLayers(const ModelSpec& model, const ParallelSpec& p, uint32_t stage, F perLayer)
{
    uint64_t sum = 0;
    for (uint32_t c = 0; c < p.virtualStages; ++c)
    {
        const uint32_t v = p.VirtualStageOf(c, stage);
        const uint32_t first = p.FirstLayerOf(model.layers, v);
        for (uint32_t i = 0; i < p.VirtualStageLayers(model.layers, v); ++i)
        {
            sum += perLayer(static_cast<int32_t>(first + i));
        }
    }
    return sum;
}

/**
 * SumStageLayers, plus on the last stage \p perModule of each prediction module's decoder
 * layer (they follow the model's last layer).
 */
template<typename F, typename G>
uint64_t
SumStageWithModules(const ModelSpec& model,
                    const RunSpec& run,
                    const LayerShapes& shapes,
                    uint32_t stage,
                    F perLayer,
                    G perModule)
{
    uint64_t sum = SumStageLayers(model, run.parallel, stage, perLayer);
    if (stage == run.parallel.HeadStage())
    {
        for (uint32_t k = 0; k < shapes.mtpLayers; ++k)
        {
            sum += perModule(shapes.MtpLayer(k));
        }
    }
    return sum;
}

/** \return an expert count of LayerShapes, \p perLayer, summed over the stage's layers and modules
 */
uint64_t
SumStageExperts(const ModelSpec& model,
                const RunSpec& run,
                uint32_t stage,
                uint64_t (LayerShapes::*perLayer)(int32_t) const)
{
    LayerShapes shapes(model, run);
    const auto experts = [&](int32_t layer)
    {
        return (shapes.*perLayer)(layer);
    };
    return SumStageWithModules(model, run, shapes, stage, experts, experts);
}
} // namespace

uint64_t
StageParameters(const ModelSpec& model, const RunSpec& run, uint32_t stage)
{
    LayerShapes shapes(model, run);
    const auto& p = run.parallel;
    const uint32_t virtualStages = p.pp * p.virtualStages;
    uint64_t params = StageLayerParameters(model, run, stage);
    for (uint32_t c = 0; c < p.virtualStages; ++c)
    {
        const uint32_t v = p.VirtualStageOf(c, stage);
        if (v == 0)
        {
            params += shapes.embeddingParams;
        }
        if (v + 1 == virtualStages)
        {
            params += shapes.finalNormParams + shapes.headParams;
            for (uint32_t k = 0; k < shapes.mtpLayers; ++k)
            {
                params += shapes.LayerParams(shapes.MtpLayer(k)) + shapes.mtpParams;
            }
            if (shapes.mtpLayers > 0 && stage > 0 && !model.tiedEmbeddings)
            {
                // On a pipeline the prediction modules embed their tokens with a copy of the
                // word embedding (Megatron-core's tie_word_embeddings_state_dict: a replica of
                // the first stage's); a tied LM head already is one.
                params += shapes.embeddingParams;
            }
        }
    }
    return params;
}

uint64_t
StageLayerParameters(const ModelSpec& model, const RunSpec& run, uint32_t stage)
{
    LayerShapes shapes(model, run);
    return SumStageLayers(model,
                          run.parallel,
                          stage,
                          [&](int32_t layer)
                          {
                              return shapes.LayerParams(layer);
                          });
}

uint64_t
StageLinearParameters(const ModelSpec& model, const RunSpec& run, uint32_t stage)
{
    LayerShapes shapes(model, run);
    return SumStageWithModules(
        model,
        run,
        shapes,
        stage,
        [&](int32_t layer)
        {
            return shapes.LinearParams(layer);
        },
        [&](int32_t layer)
        {
            // The module's layer and its projection (2h to h, split over tensor parallelism).
            return shapes.LinearParams(layer) + 2 * shapes.hidden * shapes.hidden / run.parallel.tp;
        });
}

uint64_t
StageExpertLinearParameters(const ModelSpec& model, const RunSpec& run, uint32_t stage)
{
    return SumStageExperts(model, run, stage, &LayerShapes::ExpertLinearParams);
}

uint64_t
StageExpertParameters(const ModelSpec& model, const RunSpec& run, uint32_t stage)
{
    return SumStageExperts(model, run, stage, &LayerShapes::ExpertParams);
}

uint64_t
StageTpReplicatedParameters(const ModelSpec& model, const RunSpec& run, uint32_t stage)
{
    LayerShapes shapes(model, run);
    const auto& p = run.parallel;
    uint64_t params = SumStageLayers(model,
                                     p,
                                     stage,
                                     [&](int32_t layer)
                                     {
                                         return shapes.TpReplicatedParams(layer);
                                     });
    if (stage == p.HeadStage()) // the stage of the last virtual stage
    {
        params += shapes.finalNormParams;
        for (uint32_t k = 0; k < shapes.mtpLayers; ++k)
        {
            // The layer's, and the module's three norms.
            params += shapes.TpReplicatedParams(shapes.MtpLayer(k)) + 3 * shapes.finalNormParams;
        }
    }
    return params;
}

} // namespace rapidllm
} // namespace ns3
