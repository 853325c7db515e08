/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "graph-emitter.h"
#include "stage-builders.h"
#include "transformer-layer.h"

#include <cmath>
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
 * Ends a pass of \p rows tokens on this stage: the last stage computes the logits of \p sampled
 * positions (a token for each sequence, or each of a speculative step's verified positions) and
 * samples them, unless the pass does not \p sample; others send on. The sampled tokens go back
 * to the first stage (EmitTokenReturn) unless this was the last pass.
 */
void
EmitStageOutput(GraphEmitter& e,
                const ModelSpec& model,
                const RunSpec& run,
                const LayerShapes& s,
                uint32_t stage,
                uint64_t rows,
                uint64_t sampled,
                uint32_t tag,
                bool sample)
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
    const OpType norm = NormOpOf(model.norm);
    e.Compute("final_norm", MakeElementwise(norm, sampled, s.hidden, run.ActivationType()));
    e.Compute("logits", MakeGemm(sampled, s.vocab, s.hidden, run.ActivationType()));
    if (run.parallel.tp > 1)
    {
        e.Blocking("ag_logits",
                   CollectiveKind::ALL_GATHER,
                   GroupKind::TP,
                   uint64_t(s.elementBytes) * sampled * s.vocab * run.parallel.tp);
    }
    e.Compute("sample",
              MakeElementwise(OpType::SAMPLING, sampled, model.vocab, run.ActivationType()));
}

/**
 * The draft module's input over \p rows tokens (speculative decoding, on the last stage): the
 * tokens' embedding (reduced over TP), the two norms of it and of the model's hidden state, and
 * the 2h-to-h projection, gathered over TP (Megatron-core's MultiTokenPredictionLayer).
 */
void
EmitDraftInput(GraphEmitter& e,
               const ModelSpec& model,
               const RunSpec& run,
               const LayerShapes& s,
               uint64_t rows)
{
    const DataType at = run.ActivationType();
    const uint32_t tp = run.parallel.tp;
    const OpType norm = NormOpOf(model.norm);
    e.Compute("draft_embedding", MakeElementwise(OpType::EMBEDDING, rows, s.hidden, at));
    if (tp > 1)
    {
        e.Blocking("ar_draft_embedding",
                   CollectiveKind::ALL_REDUCE,
                   GroupKind::TP,
                   uint64_t(s.elementBytes) * rows * s.hidden);
    }
    e.Compute("draft_norms", MakeElementwise(norm, 2 * rows, s.hidden, at));
    e.Compute("draft_proj", MakeGemm(rows, s.hidden / tp, 2 * s.hidden, run.dtype));
    if (tp > 1)
    {
        e.Blocking("ag_draft_hidden",
                   CollectiveKind::ALL_GATHER,
                   GroupKind::TP,
                   uint64_t(s.elementBytes) * rows * s.hidden);
    }
}

/**
 * Speculative decoding's draft module over a prompt of \p rows tokens on the last stage: its
 * input and decoder layer fill the draft layer's KV cache (as SGLang and vLLM run the
 * multi-token prediction module over the prompt).
 */
void
EmitDraftPrefill(GraphEmitter& e,
                 const ModelSpec& model,
                 const RunSpec& run,
                 const LayerShapes& s,
                 const TransformerLayer& layer,
                 uint64_t rows)
{
    e.SetContext(Phase::PREFILL, 0, s.MtpLayer(0));
    EmitDraftInput(e, model, run, s, rows);
    layer.Forward(e, Recompute::NONE);
    e.SetContext(Phase::PREFILL, 0, -1);
}

/**
 * Speculative decoding's drafts on the last stage, after a pass sampled \p batch sequences'
 * next token: the draft module (LayerShapes::MtpLayer(0), DeepSeek-V3's multi-token prediction
 * layer or an EAGLE head) proposes RunSpec::specTokens tokens one at a time, each from the
 * previous one's embedding and hidden state: its input, its decoder layer over its own cache of
 * \p context tokens, and the shared head and sampling.
 */
void
EmitDrafts(GraphEmitter& e,
           const ModelSpec& model,
           const RunSpec& run,
           const LayerShapes& s,
           const TransformerLayer& draft,
           uint64_t batch,
           uint64_t context,
           uint32_t pass)
{
    const DataType at = run.ActivationType();
    const uint32_t tp = run.parallel.tp;
    const OpType norm = NormOpOf(model.norm);
    for (uint32_t i = 0; i < run.specTokens; ++i)
    {
        e.SetContext(Phase::DECODE, pass, s.MtpLayer(0));
        EmitDraftInput(e, model, run, s, batch);
        draft.Decode(e, context + i);
        e.Compute("draft_final_norm", MakeElementwise(norm, batch, s.hidden, at));
        e.Compute("draft_logits", MakeGemm(batch, s.vocab, s.hidden, at));
        if (tp > 1)
        {
            e.Blocking("ag_draft_logits",
                       CollectiveKind::ALL_GATHER,
                       GroupKind::TP,
                       uint64_t(s.elementBytes) * batch * s.vocab * tp);
        }
        e.Compute("draft_sample", MakeElementwise(OpType::SAMPLING, batch, model.vocab, at));
    }
    e.SetContext(Phase::DECODE, pass, -1);
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
            layers.emplace_back(model,
                                run,
                                run.promptTokens - run.cachedPrefix,
                                run.InflightBatchSize(m),
                                run.cachedPrefix);
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
    // A cached prefix is in the cache already: the prefill computes the rest.
    const uint32_t prefillTokens = run.promptTokens - run.cachedPrefix - extraStep;
    // Tokens in the cache beyond the prefill's before decode step j: one a step, or after the
    // first token the expected yield of each speculative step before j (rounded).
    auto contextGrowth = [&](uint32_t j) -> uint64_t
    {
        if (run.specTokens == 0 || j <= extraStep + 1)
        {
            return j - 1;
        }
        return extraStep + std::llround(double(j - 1 - extraStep) * run.TokensPerDecodePass());
    };
    // After a pass sampled on the last stage: the drafts for the next one (speculative
    // decoding), then the sampled tokens (and drafts) back to the first stage, unless it was
    // the last pass. The draft module's cache holds \p context tokens.
    auto finishPass = [&](uint32_t m, uint32_t pass, uint64_t context, bool last)
    {
        if (stage + 1 < pp || last)
        {
            return;
        }
        const uint64_t batch = run.InflightBatchSize(m);
        // The next pass verifies when it samples after the first token.
        const bool drafts = run.specTokens > 0 && pass + 1 > extraStep;
        if (drafts)
        {
            EmitDrafts(e, model, run, s, layerOf(m), batch, context, pass);
        }
        if (pp > 1)
        {
            const uint64_t tokens = batch * (drafts ? run.specTokens + 1 : 1);
            e.Send("send_token", GroupKind::PP, +1, tagOf(pass, m) + 1, 4 * tokens, e.LastStream());
        }
    };

    // Speculative decoding: the draft module's own layer fills its cache with the prompt on
    // the last stage, after the pass that samples the first token (a request of one token
    // drafts nothing).
    auto draftPrefill = [&](uint32_t m)
    {
        if (run.specTokens > 0 && stage + 1 == pp && run.generatedTokens > 1 && prefillTokens > 0)
        {
            EmitDraftPrefill(
                e, model, run, s, layerOf(m), uint64_t(prefillTokens) * run.InflightBatchSize(m));
        }
    };

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
                            run.FirstTokenFromPrefill());
            if (run.FirstTokenFromPrefill())
            {
                draftPrefill(m);
                finishPass(m, 0, run.cachedPrefix + prefillTokens, run.generatedTokens <= 1);
            }
        }
    }

    // Decode: step j feeds in the token before it (the last prompt token or the previous
    // step's), attending to the prefix already in the KV cache. With speculative decoding each
    // step after the first token feeds that token and the drafts after it (q per sequence) and
    // samples at every one of their positions, yielding RunSpec::TokensPerDecodePass() tokens on
    // average; so the cache grows by that much a step.
    const uint32_t steps = run.generatedTokens == 0 ? 0 : run.DecodePasses() + extraStep;
    for (uint32_t j = 1; j <= steps; ++j)
    {
        // The TurboMind-style step that samples the first token verifies nothing.
        const bool verifies = run.specTokens > 0 && j > extraStep;
        const uint32_t q = verifies ? run.specTokens + 1 : 1;
        const uint64_t context = uint64_t(run.cachedPrefix) + prefillTokens + contextGrowth(j);
        for (uint32_t m = 0; m < inflight; ++m)
        {
            const uint64_t batch = run.InflightBatchSize(m);
            // The pass's rows: the batch's new tokens and a prefill chunk beside them.
            const uint64_t rows = batch * q + uint64_t(run.chunkSequences) * run.chunkTokens;
            const uint32_t tag = tagOf(j, m);
            e.SetContext(Phase::DECODE, j, -1);
            const bool tokenFromLastStage = j > 1 || run.FirstTokenFromPrefill();
            if (stage == 0 && pp > 1 && tokenFromLastStage)
            {
                e.Recv("recv_token", GroupKind::PP, -1, tagOf(j - 1, m) + 1, 4 * batch * q);
            }
            EmitStageInput(e, run, s, stage, rows, tag);
            for (uint32_t i = 0; i < layersPerStage; ++i)
            {
                e.SetContext(Phase::DECODE, j, static_cast<int32_t>(firstLayer + i));
                layerOf(m).Decode(e, context, q, true);
            }
            e.SetContext(Phase::DECODE, j, -1);
            EmitStageOutput(e, model, run, s, stage, rows, batch * q, tag, true);
            if (j == extraStep)
            {
                draftPrefill(m); // the TurboMind-style first token was this pass's
            }
            finishPass(m, j, context + q, j == steps);
        }
    }
    return g;
}

} // namespace rapidllm
} // namespace ns3
