/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "graph-emitter.h"
#include "stage-builders.h"
#include "transformer-layer.h"

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
    e.Compute("embedding", MakeElementwise(OpType::EMBEDDING, rows, s.hidden, run.dtype));
    if (run.parallel.tp > 1)
    {
        e.Blocking("ar_embedding", CollectiveKind::ALL_REDUCE, GroupKind::TP, bytes);
    }
}

/**
 * Ends a pass on this stage: the last stage computes the next token's logits for each sequence
 * and samples it (and, with a pipeline, returns it to the first stage unless this was the last
 * pass); others send on.
 */
void
EmitStageOutput(GraphEmitter& e,
                const ModelSpec& model,
                const RunSpec& run,
                const LayerShapes& s,
                uint32_t stage,
                uint64_t rows,
                uint32_t tag,
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
    const uint64_t batch = run.batch;
    const OpType norm = model.norm == NormType::RMS_NORM ? OpType::RMS_NORM : OpType::LAYER_NORM;
    e.Compute("final_norm", MakeElementwise(norm, batch, s.hidden, run.dtype));
    e.Compute("logits", MakeGemm(batch, s.vocab, s.hidden, run.dtype));
    if (run.parallel.tp > 1)
    {
        e.Blocking("ag_logits",
                   CollectiveKind::ALL_GATHER,
                   GroupKind::TP,
                   uint64_t(s.elementBytes) * batch * s.vocab * run.parallel.tp);
    }
    e.Compute("sample", MakeElementwise(OpType::CROSS_ENTROPY, batch, model.vocab, run.dtype));
    if (pp > 1 && !lastPass)
    {
        e.Send("send_token", GroupKind::PP, +1, tag + 1, 4 * batch, e.LastStream());
    }
}

} // namespace

StageGraph
BuildInferenceStage(const ModelSpec& model, const RunSpec& run, uint32_t stage)
{
    StageGraph g;
    g.stage = stage;
    GraphEmitter e(g);
    const uint32_t pp = run.parallel.pp;
    const uint32_t layersPerStage = model.layers / pp;
    const uint32_t firstLayer = stage * layersPerStage;
    TransformerLayer prefill(model, run, run.promptTokens, run.batch);
    const LayerShapes& s = prefill.Shapes();

    // Prefill: the whole prompt of every sequence; it yields the first generated token.
    e.SetContext(Phase::PREFILL, 0, -1);
    const uint64_t promptRows = uint64_t(run.promptTokens) * run.batch;
    EmitStageInput(e, run, s, stage, promptRows, 0);
    for (uint32_t i = 0; i < layersPerStage; ++i)
    {
        e.SetContext(Phase::PREFILL, 0, static_cast<int32_t>(firstLayer + i));
        prefill.Forward(e, Recompute::NONE);
    }
    e.SetContext(Phase::PREFILL, 0, -1);
    EmitStageOutput(e, model, run, s, stage, promptRows, 0, run.generatedTokens <= 1);

    // Decode: step j feeds token j back in, attending to the prompt and the j - 1 tokens
    // generated before it.
    for (uint32_t j = 1; j < run.generatedTokens; ++j)
    {
        const uint32_t tag = 2 * j;
        e.SetContext(Phase::DECODE, j, -1);
        if (stage == 0 && pp > 1)
        {
            e.Recv("recv_token", GroupKind::PP, -1, tag - 1, 4 * run.batch);
        }
        EmitStageInput(e, run, s, stage, run.batch, tag);
        for (uint32_t i = 0; i < layersPerStage; ++i)
        {
            e.SetContext(Phase::DECODE, j, static_cast<int32_t>(firstLayer + i));
            prefill.Decode(e, uint64_t(run.promptTokens) + j - 1);
        }
        e.SetContext(Phase::DECODE, j, -1);
        EmitStageOutput(e, model, run, s, stage, run.batch, tag, j + 1 == run.generatedTokens);
    }
    return g;
}

} // namespace rapidllm
} // namespace ns3
