/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "transformer-layer.h"

#include "ns3/attention-kernel-choice.h"
#include "ns3/log.h"
#include "weight-gradient-store.h"

#include <algorithm>
#include <cmath>

namespace ns3 {
namespace rapidllm {

NS_LOG_COMPONENT_DEFINE("RapidLlmTransformerLayer");

namespace {
// Transformer Engine's userbuffers settings in the H100 configurations of NeMo / Megatron-Bridge
// (userbuffers_{bf16,fp8}_h100_h8192_tp4_mbs1_seqlen8192): the pipelined reduce-scatters split
// their GEMM in num_splits=4 and keep num_sm SMs from it (set_sm_margin=True): 24 for
// proj_fprop, 16 for fc2_fprop. The backward's bulk overlaps (an all-gather beside the dgrad, a
// reduce-scatter beside the wgrad) hold num_sm SMs without a margin: qkv_dgrad 4, qkv_wgrad 24,
// fc1_dgrad 2, fc1_wgrad 4.
constexpr uint64_t kUserBufferSplits = 4;
constexpr uint8_t kUserBufferProjSms = 24;
constexpr uint8_t kUserBufferFc2Sms = 16;

// Node labels are static strings (the graph does not own them).
const ColumnParallelLabels kQkvLabels{
    "qkv_dgrad", "ag_qkv_input", "ar_qkv_dgrad", "qkv_wgrad", "qkv_grad_fp8_cast", 4, 24};
// MLA without a query latent (DeepSeek-V2-Lite): the query projection alone is column-parallel.
const ColumnParallelLabels kQLabels{
    "q_dgrad", "ag_q_input", "ar_q_dgrad", "q_wgrad", "q_grad_fp8_cast", 4, 24};
const ColumnParallelLabels kFc1Labels{
    "fc1_dgrad", "ag_fc1_input", "ar_fc1_dgrad", "fc1_wgrad", "fc1_grad_fp8_cast", 2, 4};
const ColumnParallelLabels kSharedFc1Labels{"shared_fc1_dgrad",
                                            "ag_shared_fc1_input",
                                            "ar_shared_fc1_dgrad",
                                            "shared_fc1_wgrad",
                                            "shared_fc1_grad_fp8_cast",
                                            2,
                                            4};
const ColumnParallelLabels kRouterLabels{"router_dgrad",
                                         "ag_router_input",
                                         "ar_router_dgrad",
                                         "router_wgrad",
                                         "router_grad_fp8_cast",
                                         0,
                                         0};

/** \return the element-wise operator of the model's MLP activation */
OpType
ActivationOp(const ModelSpec& model)
{
    switch (model.activation)
    {
        case Activation::SWIGLU:
            return OpType::SWIGLU;
        case Activation::SQUARED_RELU:
            return OpType::SQUARED_RELU;
        case Activation::GEGLU:
            return OpType::GEGLU;
        default:
            return OpType::GELU;
    }
}
} // namespace

TransformerLayer::TransformerLayer(
    const ModelSpec& model, const RunSpec& run, uint64_t tokens, uint64_t batch, uint64_t prefix)
    : m_model(model)
    , m_run(run)
    , m_shapes(model, run)
    , m_tokens(tokens)
    , m_prefix(prefix)
    , m_batch(batch)
    , m_rows(tokens * batch)
    , m_training(run.mode == RunMode::TRAINING)
    , m_foldedExperts(run.parallel.FoldedExperts())
{
    bool sp = run.parallel.sequenceParallel && run.parallel.tp > 1;
    // A rank's share of the rows, the last padded (inference: a prompt or decode batch that
    // does not divide by tp; training checks that its sequence does).
    m_normRows = sp ? (m_rows + run.parallel.tp - 1) / run.parallel.tp : m_rows;
    // Ring attention (cp > 1) is built on fused attention kernels.
    m_flash = run.flashAttention || run.parallel.cp > 1;
    NS_LOG_LOGIC("layer on one rank: " << m_rows << " rows (" << m_normRows << " under SP), "
                                       << m_shapes.heads << "/" << m_shapes.kvHeads << " heads, "
                                       << "QKV width " << m_shapes.qkvOut << ", MLP width "
                                       << m_shapes.ffn << ", local experts "
                                       << m_shapes.localExperts
                                       << (m_flash ? ", fused attention" : ", unfused attention"));
}

const LayerShapes&
TransformerLayer::Shapes() const
{
    return m_shapes;
}

uint64_t
TransformerLayer::InputBytes() const
{
    return uint64_t(m_shapes.elementBytes) * m_normRows * m_shapes.hidden;
}

uint64_t
TransformerLayer::Window(const GraphEmitter& e) const
{
    return e.Layer() >= 0 ? m_model.WindowOf(static_cast<uint32_t>(e.Layer())) : 0;
}

OperatorDesc
TransformerLayer::SequenceAttention(OpType type, uint64_t window, bool backward) const
{
    AttentionShape a;
    a.batch = m_batch;
    a.heads = m_shapes.heads;
    a.kvHeads = m_shapes.kvHeads;
    a.headDim = m_shapes.headDim;
    // With a cached prefix the queries are the last tokens of the keys (causal, aligned at the
    // end, as a prefill chunk's).
    a.queryLen = m_tokens;
    a.kvLen = m_prefix + m_tokens;
    a.causal = true;
    // Fused kernels skip the blocks outside a sliding window; the unfused path computes the
    // whole score matrix and masks it (a window saves it nothing).
    a.window = type == OpType::ATTENTION_SCORES ? 0 : window;
    a.dropout = type == OpType::ATTENTION_SCORES && m_model.dropout;
    a.kernel = AttentionKernelOf(m_run);
    return MakeAttention(type, a, m_run.ActivationType(), backward);
}

OperatorDesc
TransformerLayer::RingAttention(OpType type, uint32_t step, bool backward) const
{
    // Step 0 attends to the local block (causal); every other step to a remote block, with
    // half of the local queries (the load-balanced split of the sequence into 2 cp chunks).
    AttentionShape a;
    a.batch = m_batch;
    a.heads = m_shapes.heads;
    a.kvHeads = m_shapes.kvHeads;
    a.headDim = m_shapes.headDim;
    a.queryLen = step == 0 ? m_tokens : m_tokens / 2;
    a.kvLen = m_tokens;
    a.causal = step == 0;
    a.kernel = AttentionKernelOf(m_run);
    return MakeAttention(type, a, m_run.ActivationType(), backward);
}

int64_t
TransformerLayer::ScoreBytes() const
{
    // Softmax output (2 bytes), and with dropout its mask (1 byte) and output (2 bytes):
    // 5 a s^2 b / t in Korthikanti et al. 2022, Eq. (1) and (2).
    const uint64_t e = m_shapes.elementBytes;
    uint64_t perScore = e + (m_model.dropout ? 1 + e : 0);
    return static_cast<int64_t>(m_batch * m_shapes.heads * m_tokens * (m_prefix + m_tokens)
                                * perScore);
}

void
TransformerLayer::RowParallelReduce(GraphEmitter& e, const char* label, uint64_t rows) const
{
    if (m_run.parallel.tp == 1)
    {
        return;
    }
    // Sequence parallelism shards the full sequence; a decode step's few rows are all-reduced.
    const bool sp = m_normRows != m_rows && rows == m_rows;
    uint64_t bytes = uint64_t(m_shapes.elementBytes) * rows * m_shapes.hidden;
    e.Blocking(label,
               sp ? CollectiveKind::REDUCE_SCATTER : CollectiveKind::ALL_REDUCE,
               GroupKind::TP,
               bytes);
}

void
TransformerLayer::ColumnParallelGather(GraphEmitter& e, const char* label) const
{
    if (m_normRows != m_rows)
    {
        e.Blocking(label,
                   CollectiveKind::ALL_GATHER,
                   GroupKind::TP,
                   uint64_t(m_shapes.elementBytes) * m_rows * m_shapes.hidden);
    }
}

int64_t
TransformerLayer::Forward(GraphEmitter& e, Recompute keep) const
{
    std::size_t first = e.Graph().nodes.size();
    EmitForward(e, keep, 0);
    int64_t held = 0;
    for (std::size_t i = first; i < e.Graph().nodes.size(); ++i)
    {
        held += e.Graph().nodes[i].memDelta;
    }
    return held;
}

void
TransformerLayer::Decode(GraphEmitter& e, uint64_t context, uint32_t queries, bool chunk) const
{
    EmitForward(e, Recompute::NONE, context, queries, chunk);
}

void
TransformerLayer::EmitForward(
    GraphEmitter& e, Recompute keep, uint64_t decodeContext, uint32_t queries, bool chunk) const
{
    const auto& s = m_shapes;
    const DataType at = m_run.ActivationType();
    const int64_t eb = s.elementBytes;
    const bool keepActs = m_training && keep != Recompute::FULL;
    auto kept = [&](uint64_t bytes)
    {
        return keepActs ? static_cast<int64_t>(bytes) : 0;
    };
    const OpType norm = NormOpOf(m_model.norm);
    // A decode step's rows: the batch's new tokens, and a prefill chunk's beside them.
    const uint64_t chunkRows =
        decodeContext > 0 && chunk ? uint64_t(m_run.chunkSequences) * m_run.chunkTokens : 0;
    const uint64_t rows = decodeContext > 0 ? m_batch * queries + chunkRows : m_rows;
    const uint64_t normRows = decodeContext > 0 ? m_batch * queries + chunkRows : m_normRows;

    uint32_t n1 = e.Compute(
        "norm1", MakeElementwise(norm, normRows, s.hidden, at), kept(eb * normRows * s.hidden));
    if (m_training && keep == Recompute::FULL)
    {
        e.AddMemory(n1, static_cast<int64_t>(InputBytes())); // the layer input, kept
    }
    QkvForward(e, rows, decodeContext > 0, keepActs);
    if (decodeContext > 0)
    {
        // The new tokens of each sequence over the cache and themselves. A split-KV kernel
        // takes a sequence's query tokens as more query rows of each KV head (FlashInfer's and
        // FlashMLA's decode with several query tokens): the cache is read once for them all.
        AttentionShape a;
        a.batch = m_batch;
        a.heads = s.heads * queries;
        a.kvHeads = s.kvHeads;
        a.headDim = s.headDim;
        if (s.mla)
        {
            // MLA's absorbed decode (DeepSeek-V2 section 2.1.3; FlashMLA, vLLM, SGLang): every
            // head's query, moved into the latent space, attends over the one cached latent and
            // rotary key per token; the values are the latent itself.
            a.kvHeads = 1;
            a.headDim = s.kvLora + s.ropeDim;
            a.valueDim = s.kvLora;
            a.latentKv = true;
        }
        a.queryLen = 1;
        // A quantized cache (a byte or half a byte an element) is read as such and dequantized
        // in registers.
        a.cacheBits = s.cacheBits != 8 * s.elementBytes ? s.cacheBits : 0;
        // A sliding-window layer keeps and reads only the window's last keys.
        const uint64_t window = Window(e);
        const uint64_t keys = decodeContext + queries;
        a.kvLen = window > 0 ? std::min<uint64_t>(keys, window) : keys;
        a.causal = false;
        // Cascade attention (a full-attention layer): the shared prefix once for the batch, every
        // sequence's query rows stacked over it in the prefill kernel (FlashInfer's cascade),
        // then each sequence's own keys, and the two partial outputs merged.
        const uint64_t shared = m_run.cascadeAttention && window == 0
                                    ? std::min<uint64_t>(m_run.cachedPrefix, keys - 1)
                                    : 0;
        if (shared > 0)
        {
            AttentionShape p = a;
            p.batch = 1;
            p.heads = s.heads;
            p.queryLen = m_batch * queries;
            p.kvLen = shared;
            p.cacheBits = 0; // the prefill kernel, costed in the activation type
            p.kernel = AttentionKernelOf(m_run);
            e.Compute(
                "attention_prefix",
                MakeAttention(m_flash ? OpType::ATTENTION_FWD : OpType::ATTENTION_SCORES, p, at));
            a.kvLen = keys - shared;
        }
        e.Compute("attention",
                  MakeAttention(m_run.splitKvDecode ? OpType::DECODE_ATTENTION
                                                    : OpType::DECODE_ATTENTION_PER_HEAD,
                                a,
                                at));
        if (shared > 0)
        {
            // Each row's two partial outputs (and their softmax scales) read, one written.
            e.Compute(
                "attention_merge",
                MakeElementwise(
                    OpType::RESIDUAL_ADD, m_batch * queries, uint64_t(s.heads) * s.headDim, at));
        }
        if (s.mla)
        {
            // Each head's latent output through its slice of the value up-projection.
            e.Compute("v_absorb", MakeGemm(rows, s.valueDim, s.kvLora, m_run.dtype, s.heads));
        }
        if (chunkRows > 0)
        {
            // The chunk's tokens over their prompt's cached prefix and themselves, causal, in
            // the prefill kernel (one varlen call beside the decode's).
            AttentionShape c;
            c.batch = m_run.chunkSequences;
            c.heads = s.heads;
            c.kvHeads = s.kvHeads;
            c.headDim = s.headDim;
            c.queryLen = m_run.chunkTokens;
            c.kvLen = uint64_t(m_run.chunkPrefix) + m_run.chunkTokens;
            c.causal = true;
            c.window = m_flash ? window : 0;
            c.kernel = AttentionKernelOf(m_run);
            e.Compute(
                "chunk_attention",
                MakeAttention(m_flash ? OpType::ATTENTION_FWD : OpType::ATTENTION_SCORES, c, at));
        }
    }
    else
    {
        AttentionForward(e, keepActs, keepActs && keep == Recompute::NONE);
    }
    CastToFp8(e, "proj_fp8_cast", rows, s.AttentionOut());
    // The attention output: kept in 16 bits for the attention backward, and in fp8 for the
    // out-projection's weight gradient as well. Under selective recomputation the attention
    // backward reads the recomputed one: the out-projection keeps its input alone.
    const int64_t fp8Copy = Fp8KeptBytes(eb) < eb ? Fp8KeptBytes(eb) : 0;
    const int64_t outBytes = keep == Recompute::SELECTIVE ? Fp8KeptBytes(eb) : eb + fp8Copy;
    const int64_t attentionOut = kept(outBytes * rows * s.AttentionOut());
    ScatteredGemm(
        e, "proj", "ar_proj", rows, s.hidden, s.AttentionOut(), kUserBufferProjSms, attentionOut);
    e.Compute("residual1",
              MakeElementwise(OpType::RESIDUAL_ADD, normRows, s.hidden, at),
              kept(m_model.dropout ? normRows * s.hidden : 0));
    e.Compute(
        "norm2", MakeElementwise(norm, normRows, s.hidden, at), kept(eb * normRows * s.hidden));
    MlpForward(e, keepActs, rows, decodeContext > 0);
    e.Compute("residual2",
              MakeElementwise(OpType::RESIDUAL_ADD, normRows, s.hidden, at),
              kept(m_model.dropout ? normRows * s.hidden : 0));
}

void
TransformerLayer::QkvForward(GraphEmitter& e, uint64_t rows, bool decode, bool keepActs) const
{
    const auto& s = m_shapes;
    const DataType dt = m_run.dtype;
    const DataType at = m_run.ActivationType();
    const int64_t eb = s.elementBytes;
    auto kept = [&](uint64_t bytes)
    {
        return keepActs ? static_cast<int64_t>(bytes) : 0;
    };
    const bool rope = m_model.position == PositionEmbedding::ROPE;
    // Sequence-parallel GEMM inputs are kept sharded and gathered again in the backward pass.
    const int64_t hiddenInput = kept(Fp8KeptBytes(eb) * m_normRows * s.hidden);
    if (!s.mla)
    {
        e.SetModelShare(s.qkvModelShare);
        GatheredGemm(
            e, "ag_qkv", "qkv_fp8_cast", "qkv", rows, s.qkvOut, s.hidden, hiddenInput, !decode);
        e.SetModelShare(1);
        if (rope)
        {
            e.Compute("rope", MakeRope(rows, s.heads, s.kvHeads, s.headDim, at));
        }
        return;
    }
    // Multi-head latent attention as Megatron-core's MultiLatentAttention runs it: the
    // down-projection (replicated over the tensor-parallel group) on the layer's own rows, the
    // sequence-parallel shard, so that the narrow latents are gathered rather than the hidden
    // state; the up-projections split by heads.
    const uint64_t local = decode ? rows : m_normRows;
    CastToFp8(e, "qkv_down_fp8_cast", local, s.hidden);
    e.SetModelShare(RepeatedShare(local, rows));
    e.Compute("qkv_down", MakeGemm(local, s.LatentWidth(), s.hidden, dt), hiddenInput);
    e.SetModelShare(1);
    e.Compute("latent_norm",
              MakeElementwise(OpType::RMS_NORM, local, s.qLora + s.kvLora, at),
              kept(eb * local * (s.qLora + s.kvLora)));
    if (!decode && m_normRows != m_rows)
    {
        e.Blocking(
            "ag_latent", CollectiveKind::ALL_GATHER, GroupKind::TP, eb * m_rows * s.LatentWidth());
    }
    const uint64_t qWidth = s.heads * s.headDim;
    if (s.qLora > 0)
    {
        CastToFp8(e, "q_up_fp8_cast", rows, s.qLora);
        e.Compute(
            "q_up", MakeGemm(rows, qWidth, s.qLora, dt), kept(Fp8KeptBytes(eb) * rows * s.qLora));
    }
    else
    {
        // DeepSeek-V2-Lite: the query straight from the hidden state, column-parallel. It saves
        // the tensor the down-projection saved, except an fp8 GEMM's own fp8 copy.
        GatheredGemm(e,
                     "ag_qkv",
                     "q_fp8_cast",
                     "q",
                     rows,
                     qWidth,
                     s.hidden,
                     m_run.dtype == DataType::FP8 ? hiddenInput : 0,
                     !decode);
    }
    const uint64_t nope = s.headDim - s.ropeDim;
    if (decode)
    {
        // The absorbed decode: each head's non-rotary query through its slice of the key
        // up-projection, into the latent space; the new token's latent goes to the cache.
        e.Compute("q_absorb", MakeGemm(rows, s.kvLora, nope, dt, s.heads));
    }
    else
    {
        // A cached prefix is cached as latents: its keys and values are up-projected again for
        // the prefill's attention (as vLLM's MLA prefill does with the cached context).
        const uint64_t upRows = rows + m_batch * m_prefix;
        CastToFp8(e, "kv_up_fp8_cast", upRows, s.kvLora);
        e.Compute("kv_up",
                  MakeGemm(upRows, s.heads * (nope + s.valueDim), s.kvLora, dt),
                  kept(Fp8KeptBytes(eb) * rows * s.kvLora));
    }
    if (rope)
    {
        // The rotary part of every head's query and the one rotary key the heads share.
        e.Compute("rope", MakeRope(rows, s.heads, 1, s.ropeDim, at));
    }
}

void
TransformerLayer::QkvBackward(GraphEmitter& e, const std::function<void(uint32_t)>& record) const
{
    const auto& s = m_shapes;
    const DataType dt = m_run.dtype;
    const DataType at = m_run.ActivationType();
    const bool rope = m_model.position == PositionEmbedding::ROPE;
    if (!s.mla)
    {
        if (rope)
        {
            e.Compute("rope_bwd", MakeRope(m_rows, s.heads, s.kvHeads, s.headDim, at, true));
        }
        e.SetModelShare(s.qkvModelShare);
        record(ColumnParallelBackward(e, kQkvLabels, s.qkvOut, dt));
        e.SetModelShare(1);
        return;
    }
    if (rope)
    {
        e.Compute("rope_bwd", MakeRope(m_rows, s.heads, 1, s.ropeDim, at, true));
    }
    const uint64_t qWidth = s.heads * s.headDim;
    const uint64_t kvWidth = s.heads * (s.headDim - s.ropeDim + s.valueDim);
    CastToFp8(e, "kv_up_grad_fp8_cast", m_rows, kvWidth);
    e.Compute("kv_up_dgrad", MakeGemm(m_rows, s.kvLora, kvWidth, dt));
    record(WeightGemm(e, "kv_up_wgrad", MakeGemm(s.kvLora, kvWidth, m_rows, dt)));
    if (s.qLora > 0)
    {
        CastToFp8(e, "q_up_grad_fp8_cast", m_rows, qWidth);
        e.Compute("q_up_dgrad", MakeGemm(m_rows, s.qLora, qWidth, dt));
        record(WeightGemm(e, "q_up_wgrad", MakeGemm(s.qLora, qWidth, m_rows, dt)));
    }
    else
    {
        record(ColumnParallelBackward(e, kQLabels, qWidth, dt));
    }
    // Each rank's heads give a partial gradient of the latents: summed over the group (and
    // scattered back to the sequence shards under sequence parallelism).
    if (m_run.parallel.tp > 1)
    {
        e.Blocking("ar_latent_dgrad",
                   m_normRows != m_rows ? CollectiveKind::REDUCE_SCATTER
                                        : CollectiveKind::ALL_REDUCE,
                   GroupKind::TP,
                   uint64_t(s.elementBytes) * m_rows * s.LatentWidth());
    }
    e.Compute("latent_norm_bwd",
              MakeElementwise(OpType::RMS_NORM, m_normRows, s.qLora + s.kvLora, at, true));
    CastToFp8(e, "qkv_down_grad_fp8_cast", m_normRows, s.LatentWidth());
    e.SetModelShare(RepeatedShare(m_normRows, m_rows));
    e.Compute("qkv_down_dgrad", MakeGemm(m_normRows, s.hidden, s.LatentWidth(), dt));
    record(WeightGemm(e, "qkv_down_wgrad", MakeGemm(s.hidden, s.LatentWidth(), m_normRows, dt)));
    e.SetModelShare(1);
}

uint32_t
TransformerLayer::UnpadValues(GraphEmitter& e, uint32_t id) const
{
    const auto& s = m_shapes;
    if (s.mla && s.valueDim != s.headDim)
    {
        e.Graph().nodes[id].modelFlops *= double(s.headDim + s.valueDim) / (2.0 * s.headDim);
    }
    return id;
}

int64_t
TransformerLayer::AttentionForward(GraphEmitter& e, bool keepActs, bool keepSaved) const
{
    const auto& s = m_shapes;
    const int64_t eb = s.elementBytes;
    // Q, K and V are kept by the attention kernels (K and V at the KV-head width).
    int64_t qkv = eb * m_rows * s.qkvOut;
    int64_t keptActs = keepActs ? qkv : 0;
    // FlashAttention (and the ring's blocks) save the fp32 log-sum-exp per row.
    const int64_t lse = 4 * m_batch * s.heads * m_tokens;
    const uint32_t cp = m_run.parallel.cp;
    if (cp == 1)
    {
        if (m_flash)
        {
            UnpadValues(e,
                        e.Compute("attention",
                                  SequenceAttention(OpType::ATTENTION_FWD, Window(e)),
                                  keptActs + (keepSaved ? lse : 0)));
            return lse;
        }
        UnpadValues(e,
                    e.Compute("attention",
                              SequenceAttention(OpType::ATTENTION_SCORES, Window(e)),
                              keptActs + (keepSaved ? ScoreBytes() : 0)));
        return ScoreBytes();
    }
    // Ring attention (Liu et al. 2023; Megatron-LM context parallelism): each of the cp steps
    // attends the local queries to one K/V block while the next block travels around the ring.
    // With the load-balanced split of the sequence into 2 cp chunks, the local block is causal
    // and each remote block needs half of its scores (half the queries against the whole block).
    //
    // Around the attention kernels, Transformer Engine's ring (AttnFuncWithCP, TE 1.8 as in NeMo
    // 24.07, sbhd layout with cuDNN fused attention) runs PyTorch bookkeeping kernels: K and V
    // concatenated into the send buffer; on a remote step the half of the queries it needs made
    // contiguous (the other ranks copy half of the K/V block instead); the output zeroed; the
    // log-sum-exp cloned (to double), merged after each remote step and cast back; and each
    // step's partial output merged into the output, out += out_step * exp(lse_step - lse).
    const DataType at = m_run.ActivationType();
    const uint64_t rows = m_batch * m_tokens;
    const uint64_t qWidth = uint64_t(s.heads) * s.headDim;
    const uint64_t kvWidth = s.kvHeads * (s.headDim + s.valueDim);
    const uint64_t kvBytes = eb * m_batch * m_tokens * kvWidth;
    const double stepFlops =
        2.0 * m_batch * s.heads * (s.headDim + s.valueDim) * m_tokens * m_tokens;
    e.Compute("cp_kv_cat", MakeElementwise(OpType::TENSOR_COPY, rows, kvWidth, at));
    uint32_t received = GraphEmitter::NONE;
    for (uint32_t step = 0; step < cp; ++step)
    {
        received = RingExchange(
            e, GroupKind::CP, "kv_send", "kv_recv", kvBytes, step, cp, received, false);
        if (step > 0)
        {
            e.Compute("cp_q_half", MakeElementwise(OpType::TENSOR_COPY, rows / 2, qWidth, at));
        }
        uint32_t id = e.Compute("attention",
                                RingAttention(OpType::ATTENTION_FWD, step, false),
                                step == 0 ? keptActs + (keepSaved ? lse : 0) : 0);
        e.Graph().nodes[id].modelFlops = stepFlops;
        if (received != GraphEmitter::NONE)
        {
            e.StreamWaitsFor(received);
        }
    }
    const uint64_t lseRows = m_batch * s.heads;
    e.Compute("cp_out_zero", MakeElementwise(OpType::TENSOR_FILL, rows, s.AttentionOut(), at));
    e.Compute("cp_lse_clone",
              MakeElementwise(OpType::TENSOR_COPY, lseRows, m_tokens, DataType::FP32));
    e.Compute("cp_lse_double",
              MakeElementwise(OpType::TENSOR_COPY, lseRows, m_tokens, DataType::FP32));
    for (uint32_t step = 1; step < cp; ++step)
    {
        e.Compute("cp_lse_merge",
                  MakeElementwise(OpType::RESIDUAL_ADD, lseRows, m_tokens / 2, DataType::FP32));
    }
    e.Compute("cp_lse_float",
              MakeElementwise(OpType::TENSOR_COPY, lseRows, m_tokens, DataType::FP32));
    for (uint32_t step = 0; step < cp; ++step)
    {
        e.Compute("cp_out_merge",
                  MakeElementwise(
                      OpType::RESIDUAL_ADD, step == 0 ? rows : rows / 2, s.AttentionOut(), at));
    }
    return lse;
}

void
TransformerLayer::AttentionBackward(GraphEmitter& e) const
{
    const auto& s = m_shapes;
    const uint32_t cp = m_run.parallel.cp;
    if (cp == 1)
    {
        UnpadValues(
            e,
            e.Compute("attention_bwd",
                      SequenceAttention(m_flash ? OpType::ATTENTION_BWD : OpType::ATTENTION_SCORES,
                                        Window(e),
                                        true)));
        return;
    }
    // The ring runs again; K/V blocks travel with their gradients (twice the bytes). Transformer
    // Engine's bookkeeping (AttnFuncWithCP.backward, TE 1.8): K/V copied into the send buffer;
    // on a remote step the halves of Q, O and dO it needs made contiguous; each step's dQ copied
    // into (first step) or added to the gradient, its dK and dV concatenated and copied into or
    // added to the travelling dK/dV buffer.
    const DataType at = m_run.ActivationType();
    const uint64_t rows = m_batch * m_tokens;
    const uint64_t qWidth = uint64_t(s.heads) * s.headDim;
    const uint64_t kvWidth = s.kvHeads * (s.headDim + s.valueDim);
    const uint64_t kvBytes = 2 * uint64_t(s.elementBytes) * m_batch * m_tokens * kvWidth;
    const double stepFlops =
        4.0 * m_batch * s.heads * (s.headDim + s.valueDim) * m_tokens * m_tokens;
    e.Compute("cp_kv_copy", MakeElementwise(OpType::TENSOR_COPY, rows, kvWidth, at));
    uint32_t received = GraphEmitter::NONE;
    for (uint32_t step = 0; step < cp; ++step)
    {
        received = RingExchange(
            e, GroupKind::CP, "kv_grad_send", "kv_grad_recv", kvBytes, step, cp, received, false);
        if (step > 0)
        {
            // Q, O and dO of the second half of the local chunk, one copy each.
            e.Compute("cp_q_half", MakeElementwise(OpType::TENSOR_COPY, rows / 2, qWidth, at));
            for (const char* label : {"cp_o_half", "cp_do_half"})
            {
                e.Compute(label,
                          MakeElementwise(OpType::TENSOR_COPY, rows / 2, s.AttentionOut(), at));
            }
        }
        uint32_t id = e.Compute("attention_bwd", RingAttention(OpType::ATTENTION_BWD, step, true));
        e.Graph().nodes[id].modelFlops = stepFlops;
        e.Compute("cp_dq",
                  step == 0 ? MakeElementwise(OpType::TENSOR_COPY, rows, qWidth, at)
                            : MakeElementwise(OpType::RESIDUAL_ADD, rows / 2, qWidth, at));
        e.Compute("cp_dkv_cat", MakeElementwise(OpType::TENSOR_COPY, rows, kvWidth, at));
        if (received != GraphEmitter::NONE)
        {
            // The travelling dK/dV buffer is accumulated into once it has arrived.
            e.StreamWaitsFor(received);
        }
        e.Compute("cp_dkv",
                  MakeElementwise(
                      step == 0 ? OpType::TENSOR_COPY : OpType::RESIDUAL_ADD, rows, kvWidth, at));
    }
}

void
TransformerLayer::MlpForward(GraphEmitter& e, bool keepActs, uint64_t rows, bool decode) const
{
    const auto& s = m_shapes;
    const DataType dt = m_run.dtype;
    const DataType at = m_run.ActivationType();
    const int64_t eb = s.elementBytes;
    auto kept = [&](uint64_t bytes)
    {
        return keepActs ? static_cast<int64_t>(bytes) : 0;
    };
    const uint64_t inputRows = decode ? rows : m_normRows;
    const bool moe = m_shapes.IsMoeLayer(e.Layer());
    if (!decode && moe && !m_foldedExperts)
    {
        ColumnParallelGather(e, "ag_fc1"); // the router's input
    }
    const OpType act = ActivationOp(m_model);
    if (!moe)
    {
        GatheredGemm(e,
                     "ag_fc1",
                     "fc1_fp8_cast",
                     "fc1",
                     rows,
                     s.fc1Out,
                     s.hidden,
                     kept(Fp8KeptBytes(eb) * inputRows * s.hidden),
                     !decode);
        e.Compute("act", MakeElementwise(act, rows, s.ffn, at), kept(eb * rows * s.fc1Out));
        CastToFp8(e, "fc2_fp8_cast", rows, s.ffn);
        ScatteredGemm(e,
                      "fc2",
                      "ar_fc2",
                      rows,
                      s.hidden,
                      s.ffn,
                      kUserBufferFc2Sms,
                      kept(Fp8KeptBytes(eb) * rows * s.ffn));
        return;
    }
    // Mixture of experts: route, dispatch tokens to their experts' ranks, run the local experts
    // that receive tokens as one grouped GEMM each, and bring the results back. Folded expert
    // groups (etp 1) route each rank's own sequence-parallel rows in training: no
    // tensor-parallel gather before the router and no reduction after the combine; in inference
    // every rank of the group holds every token, so there is nothing to dispatch and the
    // tensor-parallel all-reduce combines the experts' outputs (LayerShapes::replicatedTokens).
    const uint64_t denseRows = rows; // the shared expert's, as a dense MLP's
    rows = MoeRows(rows);
    const ExpertRouting r = s.Routing(rows, !decode);
    const uint64_t a2aBytes = AllToAllBytes(r);
    // The router is no Transformer Engine linear layer: it runs in the activation type.
    e.SetModelShare(RepeatedShare(rows, denseRows));
    e.Compute("router", MakeGemm(rows, s.experts, s.hidden, at), kept(eb * inputRows * s.hidden));
    e.SetModelShare(1);
    e.Compute("route", MakeElementwise(OpType::ROUTER, rows, s.experts, at));
    // Megatron-core's token dispatcher (training): the tokens are permuted into expert order
    // (a row per routed copy) before the all-to-all, and the received chunks sorted by local
    // expert after it (MoEAlltoAllTokenDispatcher, token_dispatcher.py).
    const bool dispatcher = m_training && !decode;
    const bool sorted = dispatcher && m_run.parallel.ep > 1 && s.localExperts > 1;
    if (dispatcher)
    {
        e.Compute("moe_permute", MakeElementwise(OpType::TENSOR_COPY, r.routed, s.hidden, at));
    }
    const bool dispatch = m_run.parallel.ep > 1 && !s.replicatedTokens;
    // From the dispatch to the combine the graph times the critical rank's experts; the
    // energy counts the average rank's (ExpertRouting::energyShare).
    e.SetEnergyShare(float(r.energyShare));
    if (dispatch)
    {
        e.Blocking("a2a_dispatch", CollectiveKind::ALL_TO_ALL, GroupKind::EP, a2aBytes);
    }
    if (sorted)
    {
        e.Compute("moe_sort", MakeElementwise(OpType::TENSOR_COPY, r.expertRows, s.hidden, at));
    }
    CastToFp8(e, "expert_fc1_fp8_cast", r.expertRows, s.hidden);
    ExpertGemm(e,
               "expert_fc1",
               r,
               MakeGemm(r.perExpert, s.expertFc1Out, s.hidden, dt, r.activeExperts),
               kept(Fp8KeptBytes(eb) * r.expertRows * s.hidden));
    e.Compute("expert_act",
              MakeElementwise(act, r.expertRows, s.expertFfn, at),
              kept(eb * r.expertRows * s.expertFc1Out));
    CastToFp8(e, "expert_fc2_fp8_cast", r.expertRows, s.expertFfn);
    ExpertGemm(e,
               "expert_fc2",
               r,
               MakeGemm(r.perExpert, s.hidden, s.expertFfn, dt, r.activeExperts),
               kept(Fp8KeptBytes(eb) * r.expertRows * s.expertFfn));
    if (sorted)
    {
        e.Compute("moe_unsort", MakeElementwise(OpType::TENSOR_COPY, r.expertRows, s.hidden, at));
    }
    if (dispatch)
    {
        e.Blocking("a2a_combine", CollectiveKind::ALL_TO_ALL, GroupKind::EP, a2aBytes);
    }
    e.SetEnergyShare(1);
    if (dispatcher)
    {
        // Each token's top-k expert rows, weighted by its probabilities, summed into its row.
        e.Compute("moe_unpermute", MakeUnpermute(rows, s.topK, s.hidden, at));
    }
    if (s.sharedFfn > 0 && !m_training)
    {
        // Serving engines (vLLM's and SGLang's shared-expert MoE blocks) add the shared expert's
        // partial sums to the routed experts' before the one tensor-parallel reduction.
        e.Compute("shared_fc1", MakeGemm(denseRows, s.sharedFc1Out, s.hidden, dt));
        e.Compute("shared_act", MakeElementwise(act, denseRows, s.sharedFfn, at));
        e.Compute("shared_fc2", MakeGemm(denseRows, s.hidden, s.sharedFfn, dt));
    }
    if (!m_foldedExperts || s.replicatedTokens)
    {
        RowParallelReduce(e, "ar_moe", rows);
    }
    if (s.sharedFfn > 0 && m_training)
    {
        // Megatron-core's SharedExpertMLP: a tensor-parallel MLP on the layer's input (its own
        // gather under sequence parallelism, its own reduction), after the routed experts.
        // Under an fp8 recipe its fc1 keeps its own fp8 copy of the input the router kept.
        GatheredGemm(e,
                     "ag_shared_fc1",
                     "shared_fc1_fp8_cast",
                     "shared_fc1",
                     denseRows,
                     s.sharedFc1Out,
                     s.hidden,
                     m_run.dtype == DataType::FP8 ? kept(Fp8KeptBytes(eb) * inputRows * s.hidden)
                                                  : 0,
                     true);
        e.Compute("shared_act",
                  MakeElementwise(act, denseRows, s.sharedFfn, at),
                  kept(eb * denseRows * s.sharedFc1Out));
        CastToFp8(e, "shared_fc2_fp8_cast", denseRows, s.sharedFfn);
        ScatteredGemm(e,
                      "shared_fc2",
                      "ar_shared_fc2",
                      denseRows,
                      s.hidden,
                      s.sharedFfn,
                      kUserBufferFc2Sms,
                      kept(Fp8KeptBytes(eb) * denseRows * s.sharedFfn));
    }
}

void
TransformerLayer::MlpBackward(GraphEmitter& e, std::vector<uint32_t>* wgrad) const
{
    const auto& s = m_shapes;
    const DataType dt = m_run.dtype;
    const DataType at = m_run.ActivationType();
    const bool sp = m_normRows != m_rows;
    const uint64_t inBytes = uint64_t(s.elementBytes) * m_rows * s.hidden;
    const OpType act = ActivationOp(m_model);
    auto record = [&](uint32_t id)
    {
        if (wgrad && id != GraphEmitter::NONE)
        {
            wgrad->push_back(id);
        }
    };
    const bool moe = m_shapes.IsMoeLayer(e.Layer());
    if (moe && s.sharedFfn > 0)
    {
        // The shared expert ran last in the forward pass: its backward first, as a dense MLP's.
        GatheredGemm(e,
                     "ag_shared_fc2_grad",
                     "shared_fc2_grad_fp8_cast",
                     "shared_fc2_dgrad",
                     m_rows,
                     s.sharedFfn,
                     s.hidden,
                     0,
                     true);
        record(WeightGemm(e, "shared_fc2_wgrad", MakeGemm(s.sharedFfn, s.hidden, m_rows, dt)));
        e.Compute("shared_act_bwd", MakeElementwise(act, m_rows, s.sharedFfn, at, true));
        record(ColumnParallelBackward(e, kSharedFc1Labels, s.sharedFc1Out, dt));
    }
    if (sp && moe && !m_foldedExperts)
    {
        e.Blocking("ag_fc2_grad", CollectiveKind::ALL_GATHER, GroupKind::TP, inBytes);
    }

    if (!moe)
    {
        GatheredGemm(
            e, "ag_fc2_grad", "fc2_grad_fp8_cast", "fc2_dgrad", m_rows, s.ffn, s.hidden, 0, true);
        record(WeightGemm(e, "fc2_wgrad", MakeGemm(s.ffn, s.hidden, m_rows, dt)));
        e.Compute("act_bwd", MakeElementwise(act, m_rows, s.ffn, at, true));
        record(ColumnParallelBackward(e, kFc1Labels, s.fc1Out, dt));
        return;
    }
    const uint64_t rows = MoeRows(m_rows);
    const ExpertRouting r = s.Routing(rows);
    const uint64_t a2aBytes = AllToAllBytes(r);
    // The token dispatcher's kernels in reverse (MlpForward): the un-permutation's backward
    // spreads each token's gradient over its expert rows (and takes the probabilities'), the
    // sort's moves the rows back, the permutation's sums each token's routed rows.
    const bool sorted = m_run.parallel.ep > 1 && s.localExperts > 1;
    e.Compute("moe_unpermute_bwd", MakeUnpermute(rows, s.topK, s.hidden, at, true));
    e.SetEnergyShare(float(r.energyShare)); // to the dispatch's backward, as MlpForward
    if (m_run.parallel.ep > 1)
    {
        e.Blocking("a2a_combine_bwd", CollectiveKind::ALL_TO_ALL, GroupKind::EP, a2aBytes);
    }
    if (sorted)
    {
        e.Compute("moe_unsort_bwd",
                  MakeElementwise(OpType::TENSOR_COPY, r.expertRows, s.hidden, at, true));
    }
    CastToFp8(e, "expert_fc2_grad_fp8_cast", r.expertRows, s.hidden);
    ExpertGemm(e,
               "expert_fc2_dgrad",
               r,
               MakeGemm(r.perExpert, s.expertFfn, s.hidden, dt, r.activeExperts));
    const OperatorDesc fc2Wgrad = MakeGemm(s.expertFfn, s.hidden, r.perExpert, dt, r.activeExperts);
    record(WeightGemm(e, "expert_fc2_wgrad", fc2Wgrad, ExpertModelFlops(r, fc2Wgrad)));
    e.Compute("expert_act_bwd", MakeElementwise(act, r.expertRows, s.expertFfn, at, true));
    CastToFp8(e, "expert_fc1_grad_fp8_cast", r.expertRows, s.expertFc1Out);
    ExpertGemm(e,
               "expert_fc1_dgrad",
               r,
               MakeGemm(r.perExpert, s.hidden, s.expertFc1Out, dt, r.activeExperts));
    const OperatorDesc fc1Wgrad =
        MakeGemm(s.hidden, s.expertFc1Out, r.perExpert, dt, r.activeExperts);
    record(WeightGemm(e, "expert_fc1_wgrad", fc1Wgrad, ExpertModelFlops(r, fc1Wgrad)));
    if (sorted)
    {
        e.Compute("moe_sort_bwd",
                  MakeElementwise(OpType::TENSOR_COPY, r.expertRows, s.hidden, at, true));
    }
    if (m_run.parallel.ep > 1)
    {
        e.Blocking("a2a_dispatch_bwd", CollectiveKind::ALL_TO_ALL, GroupKind::EP, a2aBytes);
    }
    e.SetEnergyShare(1);
    e.Compute("moe_permute_bwd", MakeUnpermute(rows, s.topK, s.hidden, at));
    e.Compute("route_bwd", MakeElementwise(OpType::ROUTER, rows, s.experts, at, true));
    e.SetModelShare(RepeatedShare(rows, m_rows));
    if (m_foldedExperts)
    {
        // The replicated router on the local rows: no gather, no tensor-parallel reduction.
        e.Compute(kRouterLabels.dgrad, MakeGemm(rows, s.hidden, s.experts, at));
        record(WeightGemm(e, kRouterLabels.wgrad, MakeGemm(s.hidden, s.experts, rows, at)));
    }
    else
    {
        record(ColumnParallelBackward(e, kRouterLabels, s.experts, at));
    }
    e.SetModelShare(1);
}

OpType
Fp8CastType(const RunSpec& run)
{
    return run.fp8Scaling == "current" ? OpType::FP8_AMAX_CAST_TRANSPOSE
                                       : OpType::FP8_CAST_TRANSPOSE;
}

bool
TransformerLayer::UserBuffers() const
{
    return m_training && m_run.tpCommOverlap == "userbuffers" && m_run.parallel.tp > 1
           && m_normRows != m_rows;
}

void
TransformerLayer::GatheredGemm(GraphEmitter& e,
                               const char* gather,
                               const char* cast,
                               const char* gemm,
                               uint64_t rows,
                               uint64_t n,
                               uint64_t k,
                               int64_t saved,
                               bool sharded) const
{
    const DataType dt = m_run.dtype;
    if (!UserBuffers())
    {
        if (sharded)
        {
            ColumnParallelGather(e, gather);
        }
        CastToFp8(e, cast, rows, k);
        e.Compute(gemm, MakeGemm(rows, n, k, dt), saved);
        return;
    }
    // Transformer Engine's ring exchange: under FP8 the local rows are cast first and travel in
    // fp8 (the userbuffer holds the fp8 copy), not gathered in bf16 and cast whole.
    const uint32_t tp = m_run.parallel.tp;
    const uint64_t local = m_normRows;
    CastToFp8(e, cast, local, k);
    const uint64_t bytes = uint64_t(dt == DataType::FP8 ? 1 : m_shapes.elementBytes) * local * k;
    uint32_t received = GraphEmitter::NONE;
    for (uint32_t step = 0; step < tp; ++step)
    {
        received = RingExchange(e, GroupKind::TP, gather, gather, bytes, step, tp, received, true);
        e.Compute(gemm, MakeGemm(local, n, k, dt), step == 0 ? saved : 0);
        if (received != GraphEmitter::NONE)
        {
            e.StreamWaitsFor(received);
        }
    }
}

uint32_t
TransformerLayer::RingExchange(GraphEmitter& e,
                               GroupKind axis,
                               const char* send,
                               const char* recv,
                               uint64_t bytes,
                               uint32_t step,
                               uint32_t steps,
                               uint32_t received,
                               bool copyEngine) const
{
    // The tag is taken at every step, the last included, so that tags stay as they were.
    const uint32_t tag = e.NextPeerTag();
    if (step + 1 >= steps)
    {
        return GraphEmitter::NONE;
    }
    const uint32_t sent = e.Send(send, axis, +1, tag, bytes, e.LastStream());
    if (received != GraphEmitter::NONE)
    {
        e.Graph().nodes[sent].deps.push_back(received); // the block in hand: received just now
    }
    const uint32_t got = e.RecvBeside(recv, axis, -1, tag, bytes, e.LastStream());
    e.Graph().nodes[sent].copyEngine = copyEngine;
    e.Graph().nodes[got].copyEngine = copyEngine;
    return got;
}

void
TransformerLayer::ScatteredGemm(GraphEmitter& e,
                                const char* gemm,
                                const char* reduce,
                                uint64_t rows,
                                uint64_t n,
                                uint64_t k,
                                uint8_t reservedSms,
                                int64_t saved) const
{
    if (!UserBuffers())
    {
        e.Compute(gemm, MakeGemm(rows, n, k, m_run.dtype), saved);
        RowParallelReduce(e, reduce, rows);
        return;
    }
    // Transformer Engine's pipelined split: the GEMM in row chunks on the SMs the reduce-scatter
    // kernels leave, each chunk's reduce-scatter beside the next chunk.
    const uint64_t splits = std::min<uint64_t>(kUserBufferSplits, rows);
    const uint64_t base = rows / splits;
    std::vector<uint32_t> reduces;
    for (uint64_t i = 0; i < splits; ++i)
    {
        const uint64_t chunkRows = i + 1 < splits ? base : rows - base * (splits - 1);
        OperatorDesc op = MakeGemm(chunkRows, n, k, m_run.dtype);
        op.reservedSms = reservedSms;
        const uint32_t chunk = e.Compute(gemm, op, i == 0 ? saved : 0);
        reduces.push_back(e.Async(reduce,
                                  CollectiveKind::REDUCE_SCATTER,
                                  GroupKind::TP,
                                  uint64_t(m_shapes.elementBytes) * chunkRows * n,
                                  chunk));
        e.SetCommSms(reduces.back(), reservedSms);
    }
    e.StreamWaitsFor(reduces);
}

int64_t
TransformerLayer::Fp8KeptBytes(int64_t elementBytes) const
{
    // Transformer Engine keeps an fp8 GEMM's input for the weight gradient as its fp8
    // (columnwise) copy, one byte per element, instead of the 16-bit tensor.
    return m_training && m_run.dtype == DataType::FP8 ? 1 : elementBytes;
}

void
TransformerLayer::CastToFp8(GraphEmitter& e, const char* label, uint64_t rows, uint64_t width) const
{
    // Transformer Engine's FP8 recipe (training only): each input of a linear layer's fp8 GEMM,
    // and each output gradient in the backward pass, is cast from bf16 by one kernel that
    // writes the fp8 copy and, on Hopper, its transpose (fp8 GEMMs take only the TN layout, so
    // the weight- and input-gradient GEMMs need the columnwise copy); the amax comes from the
    // same pass (delayed scaling) or from a pass of its own (current scaling). FP8 inference
    // engines fuse the cast into the producer kernel.
    if (!m_training || m_run.dtype != DataType::FP8)
    {
        return;
    }
    e.Compute(label, MakeElementwise(Fp8CastType(m_run), rows, width, m_run.ActivationType()));
}

double
TransformerLayer::RepeatedShare(uint64_t rankRows, uint64_t groupRows) const
{
    return double(groupRows) / (double(rankRows) * m_run.parallel.tp);
}

uint64_t
TransformerLayer::MoeRows(uint64_t rows) const
{
    return m_foldedExperts && m_training ? m_normRows : rows;
}

uint64_t
TransformerLayer::AllToAllBytes(const ExpertRouting& r) const
{
    // Each (token, expert) pair travels once; the critical rank receives its load's share.
    const double bytes = double(m_shapes.elementBytes) * r.routed * m_shapes.hidden;
    return r.load == 1.0 ? static_cast<uint64_t>(bytes)
                         : static_cast<uint64_t>(std::ceil(bytes * r.load));
}

uint32_t
TransformerLayer::ExpertGemm(GraphEmitter& e,
                             const char* label,
                             const ExpertRouting& r,
                             const OperatorDesc& op,
                             int64_t saved) const
{
    uint32_t id = e.Compute(label, op, saved);
    e.Graph().nodes[id].modelFlops = ExpertModelFlops(r, op);
    return id;
}

double
TransformerLayer::ExpertModelFlops(const ExpertRouting& r, const OperatorDesc& op)
{
    // Model FLOPs count the routed tokens, not the critical rank's load or the rounding.
    const GemmShape& g = op.Gemm();
    const double perRow = g.m == r.perExpert ? 2.0 * g.n * g.k : 2.0 * g.m * g.n;
    return perRow * r.routed;
}

uint32_t
TransformerLayer::WeightGemm(GraphEmitter& e,
                             const char* label,
                             const OperatorDesc& op,
                             double modelFlops,
                             bool gatheredInput) const
{
    if (modelFlops < 0 && e.ModelShare() != 1)
    {
        modelFlops = op.ModelFlops() * e.ModelShare();
    }
    WeightGradientStore* store = e.DeferredWeightGradients();
    if (store == nullptr)
    {
        const uint32_t id = e.Compute(label, op);
        if (modelFlops >= 0)
        {
            e.Graph().nodes[id].modelFlops = modelFlops;
        }
        return id;
    }
    // X (k x m) and dY (k x n) in the GEMM's type (an fp8 GEMM's input is the fp8 copy the
    // forward pass kept).
    const GemmShape& g = op.Gemm();
    const int64_t bytes = BytesOf(op.dtype);
    store->Add(label,
               op,
               modelFlops,
               bytes * int64_t(g.batch * g.k * g.m),
               gatheredInput,
               bytes * int64_t(g.batch * g.k * g.n),
               e.EnergyShare());
    return GraphEmitter::NONE;
}

uint32_t
TransformerLayer::ColumnParallelBackward(GraphEmitter& e,
                                         const ColumnParallelLabels& l,
                                         uint64_t width,
                                         DataType dt) const
{
    const bool sp = m_normRows != m_rows;
    const uint64_t h = m_shapes.hidden;
    const uint64_t inBytes = uint64_t(m_shapes.elementBytes) * m_rows * h;
    if (dt == DataType::FP8)
    {
        CastToFp8(e, l.cast, m_rows, width);
    }
    uint32_t gather = GraphEmitter::NONE;
    if (sp)
    {
        // The input was kept sharded along the sequence: gather it again for the weights,
        // issued before the input-gradient GEMM and waited for after it (Megatron-LM's and
        // Transformer Engine's linear backward: an asynchronous all-gather beside the dgrad).
        gather =
            e.Async(l.gather, CollectiveKind::ALL_GATHER, GroupKind::TP, inBytes, e.LastStream());
        if (UserBuffers())
        {
            e.SetCommSms(gather, l.gatherSms);
        }
    }
    uint32_t dgrad = e.Compute(l.dgrad, MakeGemm(m_rows, h, width, dt));
    if (gather != GraphEmitter::NONE)
    {
        e.StreamWaitsFor(gather);
    }
    const CollectiveKind kind = sp ? CollectiveKind::REDUCE_SCATTER : CollectiveKind::ALL_REDUCE;
    const bool reduce = m_run.parallel.tp > 1;
    uint32_t pending = GraphEmitter::NONE;
    if (reduce && m_run.overlapTpReduce)
    {
        pending = e.Async(l.reduce, kind, GroupKind::TP, inBytes, dgrad);
        if (UserBuffers())
        {
            e.SetCommSms(pending, l.reduceSms);
        }
    }
    uint32_t wgrad = WeightGemm(e, l.wgrad, MakeGemm(h, width, m_rows, dt), -1, sp);
    if (pending != GraphEmitter::NONE)
    {
        e.StreamWaitsFor(pending);
    }
    else if (reduce)
    {
        // Megatron-LM before its asynchronous all-reduce (autograd order): after both GEMMs.
        e.Blocking(l.reduce, kind, GroupKind::TP, inBytes);
    }
    return wgrad;
}

void
TransformerLayer::Backward(GraphEmitter& e,
                           Recompute keep,
                           int64_t held,
                           std::vector<uint32_t>* wgrad) const
{
    const auto& s = m_shapes;
    const DataType dt = m_run.dtype;
    const DataType at = m_run.ActivationType();
    const OpType norm = NormOpOf(m_model.norm);
    const Phase phase = e.GetPhase();
    int64_t recomputed = 0;
    if (keep == Recompute::FULL)
    {
        e.SetPhase(Phase::RECOMPUTE);
        recomputed = Forward(e, Recompute::NONE);
    }
    e.SetPhase(phase);
    auto record = [&](uint32_t id)
    {
        if (wgrad && id != GraphEmitter::NONE)
        {
            wgrad->push_back(id);
        }
    };

    e.Compute("residual2_bwd",
              MakeElementwise(OpType::RESIDUAL_ADD, m_normRows, s.hidden, at, true));
    MlpBackward(e, wgrad);
    e.Compute("norm2_bwd", MakeElementwise(norm, m_normRows, s.hidden, at, true));
    e.Compute("residual1_bwd",
              MakeElementwise(OpType::RESIDUAL_ADD, m_normRows, s.hidden, at, true));
    GatheredGemm(e,
                 "ag_proj_grad",
                 "proj_grad_fp8_cast",
                 "proj_dgrad",
                 m_rows,
                 s.AttentionOut(),
                 s.hidden,
                 0,
                 true);
    const uint32_t projWgrad =
        WeightGemm(e, "proj_wgrad", MakeGemm(s.AttentionOut(), s.hidden, m_rows, dt));
    record(projWgrad);
    // Selective recomputation checkpoints the core attention (Korthikanti et al. 2022;
    // Megatron-core's checkpoint_core_attention, whatever the attention backend): autograd
    // reaches it after the out-projection's backward, so its forward, the ring's exchanges
    // included, runs again right before its own backward and saves then what it did not keep
    // (the scores, or the log-sum-exp and its output, which FlashAttention's backward reads).
    // The out-projection's saved input, the attention output the forward kept, is released
    // once that backward has run (autograd frees a node's saved tensors after it), so the
    // recomputed output does not stand beside it; a deferred weight GEMM keeps it.
    int64_t releasedEarly = 0;
    if (keep == Recompute::SELECTIVE)
    {
        if (!e.DeferredWeightGradients())
        {
            // As the forward kept it for selective recomputation (Forward's outBytes).
            releasedEarly = Fp8KeptBytes(s.elementBytes) * int64_t(m_rows * s.AttentionOut());
            e.AddMemory(projWgrad, -releasedEarly);
        }
        e.SetPhase(Phase::RECOMPUTE);
        recomputed = AttentionForward(e, false, false);
        if (m_flash || m_run.parallel.cp > 1)
        {
            recomputed += int64_t(s.elementBytes) * m_rows * s.AttentionOut();
        }
        e.AddMemory(static_cast<uint32_t>(e.Graph().nodes.size() - 1), recomputed);
        e.SetPhase(phase);
    }
    AttentionBackward(e);
    QkvBackward(e, record);
    uint32_t last = e.Compute("norm1_bwd", MakeElementwise(norm, m_normRows, s.hidden, at, true));
    // What the deferred GEMMs read stays until the weight pass.
    WeightGradientStore* store = e.DeferredWeightGradients();
    e.AddMemory(last,
                -(store ? store->FreedAtBackwardEnd(held + recomputed)
                        : held + recomputed - releasedEarly));
}

} // namespace rapidllm
} // namespace ns3
