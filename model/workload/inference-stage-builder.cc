/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "graph-emitter.h"
#include "stage-builders.h"
#include "transformer-layer.h"

#include <vector>

namespace ns3 {
namespace rapidllm {

namespace {

/** Emits the embedding of \p rows tokens, or receives them from the previous stage. */
void
EmitStageInput(GraphEmitter& e,
               const RunSpec& run,
               const LayerShapes& s,
               uint32_t stage,
               uint64_t rows,
               uint32_t tag)
{
    const uint64_t bytes = uint64_t(s.elementBytes) * rows * s.hidden;
    if (stage > 0)
    {
        e.Recv("recv_act", GroupKind::PP, -1, tag, bytes);
        return;
    }
    e.Compute("embedding",
              MakeElementwise(OpType::EMBEDDING, rows, s.hidden, run.ActivationType()));
    if (run.parallel.tp > 1)
    {
        e.Blocking("ar_embedding", CollectiveKind::ALL_REDUCE, GroupKind::TP, bytes);
    }
}

/**
 * Ends a pass of \p batch sequences (\p rows tokens) on this stage: the last stage computes the
 * next token's logits for each sequence and samples it (and, with a pipeline, returns it to the
 * first stage unless this was the last pass), unless the pass does not \p sample; others send
 * on.
 */
void
EmitStageOutput(GraphEmitter& e,
                const ModelSpec& model,
                const RunSpec& run,
                const LayerShapes& s,
                uint32_t stage,
                uint64_t rows,
                uint64_t batch,
                uint32_t tag,
                bool sample,
                bool lastPass)
{
    const uint32_t pp = run.parallel.pp;
    if (stage + 1 < pp)
    {
        e.Send("send_act",
               GroupKind::PP,
               +1,
               tag,
               uint64_t(s.elementBytes) * rows * s.hidden,
               e.LastStream());
        return;
    }
    if (!sample)
    {
        return;
    }
    const OpType norm = model.norm == NormType::RMS_NORM ? OpType::RMS_NORM : OpType::LAYER_NORM;
    e.Compute("final_norm", MakeElementwise(norm, batch, s.hidden, run.ActivationType()));
    e.Compute("logits", MakeGemm(batch, s.vocab, s.hidden, run.ActivationType()));
    if (run.parallel.tp > 1)
    {
        e.Blocking("ag_logits",
                   CollectiveKind::ALL_GATHER,
                   GroupKind::TP,
                   uint64_t(s.elementBytes) * batch * s.vocab * run.parallel.tp);
    }
    e.Compute("sample",
              MakeElementwise(OpType::SAMPLING, batch, model.vocab, run.ActivationType()));
    if (pp > 1 && !lastPass)
    {
        e.Send("send_token", GroupKind::PP, +1, tag + 1, 4 * batch, e.LastStream());
    }
}

} // namespace

StageGraph
BuildInferenceStage(const ModelSpec& model,
                    const RunSpec& run,
                    uint32_t stage,
                    std::size_t expectedNodes)
{
    StageGraph g;
    g.stage = stage;
    g.nodes.reserve(expectedNodes);
    GraphEmitter e(g);
    const uint32_t pp = run.parallel.pp;
    // Inference runs one model chunk per stage (no interleaving).
    const uint32_t layersPerStage = run.parallel.StageLayers(model.layers, stage);
    uint32_t firstLayer = 0;
    for (uint32_t s = 0; s < stage; ++s)
    {
        firstLayer += run.parallel.StageLayers(model.layers, s);
    }
    // With a pipeline the batch is split into batches in flight (one per stage by default), so
    // that each stage works on one while the others are on the next stages: a pass runs them
    // in order, and a batch's next decode step waits for its own token only.
    const uint32_t inflight = run.InflightBatches();
    std::vector<TransformerLayer> layers; // at most two sizes: batch / n and one more
    layers.reserve(2);
    for (uint32_t m = 0; m < inflight; ++m)
    {
        if (m == 0 || run.InflightBatchSize(m) != run.InflightBatchSize(m - 1))
        {
            layers.emplace_back(model, run, run.promptTokens, run.InflightBatchSize(m));
        }
    }
    auto layerOf = [&](uint32_t m) -> TransformerLayer&
    {
        return run.InflightBatchSize(m) == run.InflightBatchSize(0) ? layers.front()
                                                                    : layers.back();
    };
    const LayerShapes& s = layers.front().Shapes();
    // Tags: pass j (0 the prefill) of in-flight batch m sends its activations with an even tag
    // and its token with the odd one after it (with one batch in flight: 2j and 2j + 1).
    auto tagOf = [inflight](uint32_t pass, uint32_t m)
    {
        return 2 * (pass * inflight + m);
    };
    // Which pass samples the first token: the prefill's last position, or (TurboMind) a first
    // decode step fed the last prompt token after a prefill of the others.
    const uint32_t extraStep = run.FirstTokenFromPrefill() ? 0 : 1;
    const uint32_t prefillTokens = run.promptTokens - extraStep;

    if (prefillTokens > 0)
    {
        for (uint32_t m = 0; m < inflight; ++m)
        {
            const uint64_t batch = run.InflightBatchSize(m);
            e.SetContext(Phase::PREFILL, 0, -1);
            const uint64_t promptRows = uint64_t(prefillTokens) * batch;
            EmitStageInput(e, run, s, stage, promptRows, tagOf(0, m));
            for (uint32_t i = 0; i < layersPerStage; ++i)
            {
                e.SetContext(Phase::PREFILL, 0, static_cast<int32_t>(firstLayer + i));
                layerOf(m).Forward(e, Recompute::NONE);
            }
            e.SetContext(Phase::PREFILL, 0, -1);
            EmitStageOutput(e,
                            model,
                            run,
                            s,
                            stage,
                            promptRows,
                            batch,
                            tagOf(0, m),
                            run.FirstTokenFromPrefill(),
                            run.generatedTokens <= 1);
        }
    }

    // Decode: step j feeds in the token before it (the last prompt token or the previous
    // step's), attending to the prefix already in the KV cache.
    const uint32_t steps = run.generatedTokens == 0 ? 0 : run.generatedTokens - 1 + extraStep;
    for (uint32_t j = 1; j <= steps; ++j)
    {
        for (uint32_t m = 0; m < inflight; ++m)
        {
            const uint64_t batch = run.InflightBatchSize(m);
            const uint32_t tag = tagOf(j, m);
            e.SetContext(Phase::DECODE, j, -1);
            const bool tokenFromLastStage = j > 1 || run.FirstTokenFromPrefill();
            if (stage == 0 && pp > 1 && tokenFromLastStage)
            {
                e.Recv("recv_token", GroupKind::PP, -1, tagOf(j - 1, m) + 1, 4 * batch);
            }
            EmitStageInput(e, run, s, stage, batch, tag);
            for (uint32_t i = 0; i < layersPerStage; ++i)
            {
                e.SetContext(Phase::DECODE, j, static_cast<int32_t>(firstLayer + i));
                layerOf(m).Decode(e, uint64_t(prefillTokens) + j - 1);
            }
            e.SetContext(Phase::DECODE, j, -1);
            EmitStageOutput(e, model, run, s, stage, batch, batch, tag, true, j == steps);
        }
    }
    return g;
}

} // namespace rapidllm
} // namespace ns3
