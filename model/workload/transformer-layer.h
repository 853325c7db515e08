/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_TRANSFORMER_LAYER_H
#define RAPIDLLM_TRANSFORMER_LAYER_H

#include "graph-emitter.h"
#include "layer-shapes.h"
#include "ns3/model-spec.h"
#include "ns3/run-spec.h"

#include <functional>
#include <vector>

namespace ns3 {
namespace rapidllm {

/**
 * \param run the run settings
 * \return the operator of Transformer Engine's fp8 cast under the run's scaling:
 * FP8_AMAX_CAST_TRANSPOSE for current scaling, else FP8_CAST_TRANSPOSE (delayed)
 */
OpType Fp8CastType(const RunSpec& run);

/** \brief Node labels of one column-parallel GEMM's backward pass. */
struct ColumnParallelLabels
{
    const char* dgrad;  //!< input-gradient GEMM
    const char* gather; //!< re-gather of the sequence-sharded input (sequence parallelism)
    const char* reduce; //!< tensor-parallel reduction of the input gradient
    const char* wgrad;  //!< weight-gradient GEMM
    const char* cast;   //!< fp8 cast of the output gradient (Transformer Engine's FP8 recipe)
    uint8_t gatherSms;  //!< with userbuffers: SMs of the bulk re-gather beside the dgrad
    uint8_t reduceSms;  //!< with userbuffers: SMs of the bulk reduce-scatter beside the wgrad
};

/**
 * \ingroup rapid-llm
 * \brief Emits the operators and communication of one decoder layer on one rank: Megatron-LM
 * tensor parallelism (column-parallel QKV and MLP-in, row-parallel out-projection and MLP-out),
 * optional sequence parallelism, context parallelism as ring attention and expert parallelism as
 * all-to-all around the experts.
 *
 * Each forward operator records the activation bytes it keeps for the backward pass, following
 * Korthikanti et al. 2022, Sec. 4 (e.g. the QKV GEMM keeps its input, softmax its output); with
 * recomputation those are kept only for what is not recomputed.
 */
class TransformerLayer
{
  public:
    /**
     * \param model the model
     * \param run the run settings
     * \param tokens tokens per sequence on this rank (sequence / cp in training)
     * \param batch sequences in flight (micro-batch, or the inference batch)
     * \param prefix inference prefill: each sequence's tokens before these, in the KV cache
     *        already (a cached prefix), which the prefill's attention reads as well
     */
    TransformerLayer(const ModelSpec& model,
                     const RunSpec& run,
                     uint64_t tokens,
                     uint64_t batch,
                     uint64_t prefix = 0);

    /**
     * \brief Emits the layer's forward pass.
     * \param e the emitter (its context is set by the caller)
     * \param keep which activations to keep: NONE keeps all (no recompute)
     * \return the activation bytes the pass leaves allocated
     */
    int64_t Forward(GraphEmitter& e, Recompute keep) const;

    /**
     * \brief Emits the layer's backward pass, preceded by whatever recomputation \p keep implies,
     * and frees \p held bytes plus the recomputed ones at its end.
     * \param e the emitter
     * \param keep the recomputation mode used in the forward pass
     * \param held the bytes Forward() kept
     * \param wgradNodes receives the weight-gradient GEMM ids (for gradient buckets); none when
     *        the emitter defers them (GraphEmitter::DeferWeightGradients): the store then holds
     *        them and the inputs and output gradients they keep, which this pass does not free
     */
    void Backward(GraphEmitter& e,
                  Recompute keep,
                  int64_t held,
                  std::vector<uint32_t>* wgradNodes) const;

    /**
     * \brief Emits one decode step of the layer: \p queries new tokens per sequence (1, or a
     * speculative step's drafts and the token before them, verified together) attending to a KV
     * cache of \p context tokens, which the split-KV kernel reads once for all of them.
     * With \p chunk it also prefills the run's chunk (RunSpec::chunkSequences x chunkTokens
     * rows beside the batch's in every GEMM, and their causal attention over their cached
     * prefix and themselves).
     * \param e the emitter
     * \param context tokens already in the KV cache
     * \param queries new tokens per sequence
     * \param chunk whether the step carries the run's prefill chunk
     */
    void Decode(GraphEmitter& e, uint64_t context, uint32_t queries = 1, bool chunk = false) const;

    /** \return bytes of the activations entering the layer ([s, b, h], sharded with SP) */
    uint64_t InputBytes() const;

    /** \return the shapes */
    const LayerShapes& Shapes() const;

  private:
    /**
     * The forward pass; \p decodeContext > 0 makes it one decode step over that context, of
     * \p queries tokens per sequence.
     */
    void EmitForward(GraphEmitter& e,
                     Recompute keep,
                     uint64_t decodeContext,
                     uint32_t queries = 1,
                     bool chunk = false) const;
    /**
     * The attention core forward (ring attention when cp > 1): with \p keepActs it keeps its
     * inputs (Q, K, V), with \p keepSaved also what the kernel saves beyond them (the scores,
     * or FlashAttention's log-sum-exp), which selective recomputation does not keep.
     * \return the bytes of that saved state (kept or not)
     */
    int64_t AttentionForward(GraphEmitter& e, bool keepActs, bool keepSaved) const;
    /** The attention core backward. */
    void AttentionBackward(GraphEmitter& e) const;
    /** Emits Q, K and V (with the rotary embedding) from the first norm's output: one QKV GEMM,
     *  or MLA's down-projection, latent norms and up-projections (absorbed into the query when
     *  \p decode). \p keepActs: training keeps the GEMM inputs. */
    void QkvForward(GraphEmitter& e, uint64_t rows, bool decode, bool keepActs) const;
    /** The backward of QkvForward; weight-gradient nodes go to \p record. */
    void QkvBackward(GraphEmitter& e, const std::function<void(uint32_t)>& record) const;
    /** Under MLA, scales attention node \p id's model FLOPs from the kernel's (values padded to
     *  the key width, as FlashAttention-2 needs) to the model's values. \return \p id */
    uint32_t UnpadValues(GraphEmitter& e, uint32_t id) const;
    /**
     * The MLP (dense or mixture of experts) forward over \p rows token rows, those of a decode
     * step when \p decode.
     */
    void MlpForward(GraphEmitter& e, bool keepActs, uint64_t rows, bool decode) const;
    /** The MLP backward. */
    void MlpBackward(GraphEmitter& e, std::vector<uint32_t>* wgrad) const;
    /** The tensor-parallel collective after a row-parallel GEMM over \p rows token rows
     * (all-reduce, or reduce-scatter under sequence parallelism). */
    void RowParallelReduce(GraphEmitter& e, const char* label, uint64_t rows) const;
    /** Before a column-parallel GEMM: all-gather of the sequence-sharded input under SP. */
    void ColumnParallelGather(GraphEmitter& e, const char* label) const;
    /**
     * The backward of a column-parallel GEMM of output \p width: the input gradient, its
     * tensor-parallel reduction overlapped with the weight gradient (as Megatron-LM does), and
     * under sequence parallelism the re-gather of the kept input, with GEMMs of type \p gemm
     * (fp8: after the output gradient's cast). Returns the weight-gradient node.
     */
    uint32_t ColumnParallelBackward(GraphEmitter& e,
                                    const ColumnParallelLabels& labels,
                                    uint64_t width,
                                    DataType gemm) const;
    /**
     * Transformer Engine's FP8 cast of a linear layer's GEMM input or output gradient (rows x
     * width bf16 values to an fp8 copy and its transpose); nothing unless training with fp8.
     */
    void CastToFp8(GraphEmitter& e, const char* label, uint64_t rows, uint64_t width) const;
    /** Bytes per element kept for a linear layer's input: 1 (its fp8 copy) when training in fp8,
     *  else \p elementBytes. */
    int64_t Fp8KeptBytes(int64_t elementBytes) const;
    /** \return whether Transformer Engine's userbuffers overlap this training layer's dense
     *  tensor-parallel communication (tp_comm_overlap userbuffers, with sequence parallelism) */
    bool UserBuffers() const;
    /**
     * A column-parallel GEMM (\p n x \p k weights, \p rows) whose input is sequence-sharded
     * when \p sharded: gathered (blocking), cast to fp8 under the FP8 recipe, multiplied; or,
     * with Transformer Engine's userbuffers, a ring exchange: the local rows (cast first, fp8
     * on the wire) travel around the tensor ring while each of the tp steps multiplies the rows
     * already held. \p saved goes with the first GEMM.
     */
    void GatheredGemm(GraphEmitter& e,
                      const char* gather,
                      const char* cast,
                      const char* gemm,
                      uint64_t rows,
                      uint64_t n,
                      uint64_t k,
                      int64_t saved,
                      bool sharded) const;
    /**
     * A row-parallel GEMM (\p n x \p k weights, \p rows) and its tensor-parallel reduction:
     * blocking, or with Transformer Engine's userbuffers pipelined, the GEMM in row chunks on
     * all but \p reservedSms SMs (which the reduce-scatter kernels keep), each chunk's
     * reduce-scatter beside the next chunk. \p saved goes with the first GEMM.
     */
    void ScatteredGemm(GraphEmitter& e,
                       const char* gemm,
                       const char* reduce,
                       uint64_t rows,
                       uint64_t n,
                       uint64_t k,
                       uint8_t reservedSms,
                       int64_t saved) const;
    /**
     * Rows a MoE layer routes on this rank: \p rows, or in training with folded expert groups
     * (etp 1) the rank's own sequence-parallel rows.
     */
    uint64_t MoeRows(uint64_t rows) const;
    /**
     * The model's share of an operator every tensor-parallel rank runs on \p rankRows rows of
     * the \p groupRows the group holds (1 on the rank's own shard; 1 / tp on all of them).
     */
    double RepeatedShare(uint64_t rankRows, uint64_t groupRows) const;
    /** Bytes of a MoE all-to-all: every (token, expert) pair's row, times the critical load. */
    uint64_t AllToAllBytes(const ExpertRouting& routing) const;
    /**
     * A grouped expert GEMM (\p op, the rows of the critical rank's active experts) whose
     * model FLOPs count this rank's routed tokens.
     */
    uint32_t ExpertGemm(GraphEmitter& e,
                        const char* label,
                        const ExpertRouting& routing,
                        const OperatorDesc& op,
                        int64_t saved = 0) const;
    /** ExpertGemm()'s model FLOPs of \p op: the routed tokens' */
    static double ExpertModelFlops(const ExpertRouting& routing, const OperatorDesc& op);
    /**
     * A weight-gradient GEMM \p op (dW = X^T dY: m input features, n output features, k rows),
     * on the stream or, when the emitter defers weight gradients, into its store with the input
     * and output gradient it keeps (the input the forward pass kept, or with \p gatheredInput
     * the one the backward pass gathered over the sequence-parallel ranks).
     * \return its id, or GraphEmitter::NONE when deferred
     */
    uint32_t WeightGemm(GraphEmitter& e,
                        const char* label,
                        const OperatorDesc& op,
                        double modelFlops = -1,
                        bool gatheredInput = false) const;
    /** Causal attention of this rank's whole sequence over itself (no context parallelism), each
     *  query over at most its last \p window keys (0: all). */
    OperatorDesc SequenceAttention(OpType type, uint64_t window, bool backward = false) const;
    /** \return the sliding window of the layer \p e is emitting (0: full attention) */
    uint64_t Window(const GraphEmitter& e) const;
    /** Step \p step of ring attention (context parallelism): the local or a remote K/V block. */
    OperatorDesc RingAttention(OpType type, uint32_t step, bool backward) const;
    /**
     * One step of a ring exchange around the kernel that follows it (ring attention, Transformer
     * Engine's ring-exchanged gather): unless it is the last of \p steps, the block in hand goes
     * to the next rank and the next block comes from the previous one, both posted before the
     * kernel (isend and irecv, then the kernel) and the stream waiting for the receive after it.
     * \param e the emitter \param axis the ring's axis \param send the send's label
     * \param recv the receive's label
     * \param bytes the block \param step this step (0..steps-1) \param steps the ring's steps
     * \param received the previous step's receive (NONE at step 0): the block sent on
     * \param copyEngine whether copy engines move the blocks (userbuffers) rather than NCCL's
     * kernels (torch.distributed's isend / irecv), which hold SMs
     * \return this step's receive (NONE at the last step); the caller emits the kernel, then
     *         makes the stream wait for the receive (StreamWaitsFor)
     */
    uint32_t RingExchange(GraphEmitter& e,
                          GroupKind axis,
                          const char* send,
                          const char* recv,
                          uint64_t bytes,
                          uint32_t step,
                          uint32_t steps,
                          uint32_t received,
                          bool copyEngine) const;
    /** Bytes of the s^2 attention-score tensors the unfused attention keeps. */
    int64_t ScoreBytes() const;

    const ModelSpec& m_model; //!< model
    const RunSpec& m_run;     //!< settings
    LayerShapes m_shapes;     //!< per-rank widths
    uint64_t m_tokens;        //!< sequence tokens on this rank
    uint64_t m_prefix;        //!< cached tokens before them (prefill with a cached prefix)
    uint64_t m_batch;         //!< sequences
    uint64_t m_rows;          //!< GEMM rows: tokens x batch
    uint64_t m_normRows;      //!< rows of norms and residuals (divided by tp under SP)
    bool m_flash;             //!< fused attention
    bool m_training;          //!< keep activations for a backward pass
    bool m_foldedExperts;     //!< expert groups span the TP ranks (etp 1): MoE on local rows
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_TRANSFORMER_LAYER_H
