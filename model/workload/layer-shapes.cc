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
    headDim = model.headDim;
    heads = model.heads / p.tp;
    // Megatron-LM replicates KV heads when there are fewer KV heads than TP ranks.
    kvHeads = model.kvHeads >= p.tp ? model.kvHeads / p.tp : 1;
    qkvOut = (heads + 2 * kvHeads) * headDim;
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
    }
    vocab = (model.vocab + p.tp - 1) / p.tp;
    elementBytes = BytesOf(run.ActivationType());
    moeImbalance = run.moeImbalance;

    const uint64_t h = hidden;
    const uint64_t b = model.bias ? 1 : 0;
    const uint64_t inputs = model.IsGated() ? 2 : 1;
    const uint64_t norms = 2 * h * (model.norm == NormType::LAYER_NORM ? 2 : 1);
    uint64_t attention = h * qkvOut + b * qkvOut + heads * headDim * h + b * h;
    uint64_t mlp = 0;
    if (model.IsMoe())
    {
        expertParams =
            localExperts * (inputs * h * expertFfn + expertFfn * h + b * (inputs * expertFfn + h));
        mlp = h * model.experts; // the router is replicated
    }
    else
    {
        mlp = inputs * h * ffn + b * inputs * ffn + ffn * h + b * h;
    }
    layerParams = attention + mlp + expertParams + norms;
    embeddingParams = vocab * h;
    if (model.position == PositionEmbedding::LEARNED)
    {
        embeddingParams += uint64_t(model.maxSequence) * h;
    }
    // A tied LM head shares the embedding's weights, except on a pipeline: there the last stage
    // keeps its own copy of the word embedding for the head (Megatron-LM's
    // setup_embeddings_and_output_layer), with its own gradients and optimizer state.
    headParams = (!model.tiedEmbeddings || run.parallel.pp > 1) ? vocab * h : 0;
    finalNormParams = h * (model.norm == NormType::LAYER_NORM ? 2 : 1);
}

ExpertRouting
LayerShapes::Routing(uint64_t rows, bool imbalanced) const
{
    ExpertRouting r;
    // Each rank's own rows travel to their experts' ranks, and on balance as many arrive; with
    // the tokens replicated over the group each rank takes its experts' share of the pairs.
    r.routed = replicatedTokens ? (rows * topK + ep - 1) / ep : rows * topK;
    // Expected local experts that receive a token (uniform routing, the occupancy formula).
    const double groupTokens = replicatedTokens ? double(rows) : double(rows) * ep;
    const double hit = 1.0 - std::pow(1.0 - double(topK) / experts, groupTokens);
    r.activeExperts = std::clamp<uint64_t>(std::llround(localExperts * hit), 1, localExperts);
    uint64_t rankRows = r.routed; // balanced: the local experts' share of the group's tokens
    if (imbalanced && moeImbalance > 1.0)
    {
        const double f = moeImbalance;
        const double e = double(experts);
        const double l = double(localExperts);
        r.load = (f + (l - 1) * (e - f) / (e - 1)) / l;
        rankRows = static_cast<uint64_t>(std::ceil(double(r.routed) * r.load - 1e-9));
    }
    r.perExpert = (rankRows + r.activeExperts - 1) / r.activeExperts;
    r.expertRows = r.perExpert * r.activeExperts;
    return r;
}

uint64_t
StageParameters(const ModelSpec& model, const RunSpec& run, uint32_t stage)
{
    LayerShapes shapes(model, run);
    const auto& p = run.parallel;
    const uint32_t virtualStages = p.pp * p.virtualStages;
    uint64_t params = uint64_t(p.StageLayers(model.layers, stage)) * shapes.layerParams;
    for (uint32_t c = 0; c < p.virtualStages; ++c)
    {
        uint32_t v = c * p.pp + stage;
        if (v == 0)
        {
            params += shapes.embeddingParams;
        }
        if (v + 1 == virtualStages)
        {
            params += shapes.finalNormParams + shapes.headParams;
        }
    }
    return params;
}

uint64_t
StageExpertParameters(const ModelSpec& model, const RunSpec& run, uint32_t stage)
{
    return uint64_t(run.parallel.StageLayers(model.layers, stage))
           * LayerShapes(model, run).expertParams;
}

} // namespace rapidllm
} // namespace ns3
