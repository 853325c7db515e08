/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_LAYER_SHAPES_H
#define RAPIDLLM_LAYER_SHAPES_H

#include "ns3/model-spec.h"
#include "ns3/run-spec.h"

#include <cstdint>
#include <vector>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief How a mixture-of-experts layer's tokens reach the experts of one rank: the GEMM shapes
 * of its grouped expert GEMMs, the same in the forward and backward passes.
 *
 * Routing is uniform over the experts: with b tokens in the expert-parallel group, each expert
 * receives a token with probability 1 - (1 - k/E)^b, so E (1 - (1 - k/E)^b) experts receive any
 * (the occupancy expectation); only those run, and only their weights are read (batch-1 decode
 * of top-2 of 8: 2 experts; batch 4: 5.47, rounded to the nearest whole expert, 5). In training
 * and prefill the busiest expert may receive f times the mean tokens (RunSpec::moeImbalance),
 * the others sharing the rest evenly; the rank holding it is the critical one (the combining
 * all-to-all waits for it), so the shapes are that rank's: its local experts' rows total
 * (f + (L - 1)(E - f)/(E - 1)) times the mean, L local experts of E.
 */
struct ExpertRouting
{
    uint64_t routed = 0;        //!< token-to-expert assignments of this rank's rows (rows x top-k)
    uint64_t activeExperts = 0; //!< local experts that receive tokens (the grouped GEMM's batch)
    uint64_t perExpert = 0;     //!< rows each active local expert sees (the critical rank's)
    uint64_t expertRows = 0;    //!< rows of all active local experts together
    double load = 1.0; //!< the critical rank's expert rows over the balanced share (all-to-all)
    /** The average rank's expert work over the critical rank's: the expected active local
     * experts over the (rounded, at least one) count timed, over the load. The step's energy
     * sums every rank's own work, not the busiest rank's times the ranks. */
    double energyShare = 1.0;
};

/**
 * \ingroup rapid-llm
 * \brief One rank's share of a decoder layer under tensor, context and expert parallelism:
 * the widths its GEMMs see and the parameters it holds.
 */
struct LayerShapes
{
    uint32_t tp = 1;          //!< tensor parallel degree
    uint64_t hidden = 0;      //!< h
    uint64_t headDim = 0;     //!< d
    uint64_t heads = 0;       //!< query heads on this rank (a / tp)
    uint64_t kvHeads = 0;     //!< KV heads on this rank (replicated when tp > kv heads)
    uint64_t qkvOut = 0;      //!< QKV projection output width on this rank (MLA: Q, K, V)
    double qkvModelShare = 1; //!< the model's share of it (below 1 with KV heads repeated)
    uint64_t valueDim = 0;    //!< per-head value width (headDim but under MLA)
    /**
     * Multi-head latent attention (ModelSpec::kvLoraRank > 0): the down-projections to the
     * latents are replicated over the tensor-parallel group, the up-projections split by heads.
     */
    bool mla = false;
    uint64_t qLora = 0;        //!< MLA: the query latent's width (0: Q from the hidden state)
    uint64_t kvLora = 0;       //!< MLA: the KV latent's width
    uint64_t ropeDim = 0;      //!< MLA: the shared rotary key's width
    uint64_t ffn = 0;          //!< dense MLP width on this rank (f / tp)
    uint64_t fc1Out = 0;       //!< first MLP projection width (2 x ffn when gated)
    uint64_t localExperts = 0; //!< MoE: experts on this rank (E / ep)
    uint64_t expertFfn = 0;    //!< MoE: each expert's width on this rank
    uint64_t experts = 0;      //!< MoE: experts per layer (all ranks)
    uint64_t topK = 0;         //!< MoE: experts each token visits
    uint32_t ep = 1;           //!< MoE: expert parallel degree
    /**
     * MoE inference with whole experts over the tensor-parallel group (etp 1): every rank of the
     * expert group holds every token (after the attention's all-reduce) and runs its own experts
     * on the tokens routed to them; an all-reduce combines the outputs (TensorRT-LLM's and
     * vLLM's expert parallelism inside the TP group). No all-to-all.
     */
    bool replicatedTokens = false;
    uint64_t expertFc1Out = 0; //!< MoE: each expert's first projection width on this rank
    uint64_t sharedFfn = 0;    //!< MoE: the shared expert's width on this rank (0: none)
    uint64_t sharedFc1Out = 0; //!< MoE: the shared expert's first projection width on this rank
    uint64_t vocab = 0;        //!< vocabulary shard (V / tp)
    uint32_t elementBytes = 2; //!< bytes per activation element
    uint32_t cacheBits = 16;   //!< bits per KV-cache element (RunSpec::KvCacheType())
    double moeImbalance = 1.0; //!< MoE: busiest expert's tokens over the mean

    uint64_t moeLayerParams = 0;   //!< parameters of one MoE layer held by this rank
    uint64_t denseLayerParams = 0; //!< parameters of one dense-MLP layer held by this rank
    uint64_t expertParams = 0;     //!< of a MoE layer's, the experts' (reduced over EDP, not DP)
    uint64_t embeddingParams = 0;  //!< embedding (and position table) shard
    uint64_t headParams = 0;       //!< LM head shard: untied, or a tied copy on a pipeline
    uint64_t finalNormParams = 0;  //!< the final norm before the head (replicated across TP)
    /**
     * Multi-token prediction modules on the last pipeline stage after the model's last layer,
     * as Megatron-core places them; module k runs decoder layer MtpLayer(k). In training the
     * model's (ModelSpec::mtpLayers); in inference one draft module with speculative decoding
     * (RunSpec::specTokens), else none.
     */
    uint32_t mtpLayers = 0;
    /**
     * One prediction module's parameters beyond its decoder layer: its two input norms, its
     * projection of the concatenated 2h to h (column-parallel, no bias) and its final norm. The
     * embedding and the output head are the model's (a copy of the embedding on a pipeline).
     */
    uint64_t mtpParams = 0;

    /**
     * \param model the model
     * \param run the run settings (dtype and parallel layout)
     */
    LayerShapes(const ModelSpec& model, const RunSpec& run);

    /**
     * \brief The expert GEMM shapes of a MoE layer over \p rows token rows (ExpertRouting).
     * \param rows token rows on this rank
     * \param imbalanced whether the run's token imbalance applies (training and prefill; not
     * decode, whose few tokens the occupancy expectation covers)
     * \return the routing (a MoE model only)
     */
    ExpertRouting Routing(uint64_t rows, bool imbalanced = true) const;

    /**
     * \return whether decoder layer \p layer is a mixture of experts (ModelSpec::IsMoeLayer);
     * a negative layer (no layer in particular) is one when the model has experts
     */
    bool IsMoeLayer(int32_t layer) const;
    /** \return the decoder layer index of prediction module \p k: the model's layers + k */
    int32_t MtpLayer(uint32_t k) const;
    /** \return the parameters of decoder layer \p layer held by this rank */
    uint64_t LayerParams(int32_t layer) const;
    /** \return the expert parameters among LayerParams(\p layer) (0 in a dense layer) */
    uint64_t ExpertParams(int32_t layer) const;
    /**
     * \return the parameters of decoder layer \p layer that every tensor-parallel rank holds
     * whole yet, under sequence parallelism, trains on its own share of the rows (norms,
     * row-parallel biases, the MoE router, MLA's down-projection): their gradients are partial
     * per rank and are summed over the group before the update (Megatron-LM's
     * finalize_model_grads, _allreduce_layernorm_grads)
     */
    uint64_t TpReplicatedParams(int32_t layer) const;
    /** \return the attention's linear-layer weights on this rank (QKV or MLA's, out-projection) */
    uint64_t AttentionLinearParams() const;
    /**
     * \return the weights of decoder layer \p layer's linear layers on this rank (QKV,
     * out-projection, and the MLP or the local and shared experts): what an fp8 recipe casts
     */
    uint64_t LinearParams(int32_t layer) const;
    /** \return the local experts' linear-layer weights among LinearParams (0 on a dense layer) */
    uint64_t ExpertLinearParams(int32_t layer) const;
    /** \return MLA: the down-projection's output, query latent, KV latent and rotary key */
    uint64_t LatentWidth() const;
    /** \return the out-projection's input width on this rank (heads x value width) */
    uint64_t AttentionOut() const;
    /**
     * \return the KV-cache bytes one token adds to one layer on this rank: its keys and values,
     * or under MLA its KV latent and rotary key, which every tensor-parallel rank keeps whole
     */
    uint64_t KvCacheBytesPerToken() const;

  private:
    bool m_moe = false;             //!< the model has experts
    uint32_t m_layers = 0;          //!< the model's decoder layers
    std::vector<bool> m_moeLayers;  //!< ModelSpec::IsMoeLayer of each decoder layer
    uint64_t m_denseReplicated = 0; //!< TpReplicatedParams of a dense-MLP layer
    uint64_t m_moeReplicated = 0;   //!< TpReplicatedParams of a MoE layer
};

/**
 * \brief Parameters one rank of pipeline stage \p stage holds, before ZeRO sharding: its layers
 * (of every model chunk), plus the embedding on the first virtual stage and the final norm and
 * the untied LM head on the last.
 * \param model the model
 * \param run the run settings
 * \param stage the pipeline stage
 * \return parameter count
 */
uint64_t StageParameters(const ModelSpec& model, const RunSpec& run, uint32_t stage);

/**
 * \brief The decoder layers' parameters among StageParameters (of every model chunk), without
 * the embedding, the LM head, the final norm or a draft module: what a weight-only quantized
 * checkpoint (GPTQ, AWQ) stores in int4 (with a draft module's layer, AnalyzeMemory).
 * \param model the model
 * \param run the run settings
 * \param stage the pipeline stage
 * \return parameter count
 */
uint64_t StageLayerParameters(const ModelSpec& model, const RunSpec& run, uint32_t stage);

/**
 * \brief The linear layers' weights among StageParameters (LayerShapes::LinearParams of its
 * decoder layers, and on the last stage of its prediction modules' layers and projections):
 * what Transformer Engine casts to fp8 once per step and keeps for the step's micro-batches.
 * \param model the model
 * \param run the run settings
 * \param stage the pipeline stage
 * \return parameter count
 */
uint64_t StageLinearParameters(const ModelSpec& model, const RunSpec& run, uint32_t stage);

/**
 * \brief The experts' linear-layer weights among StageLinearParameters (the rest are dense).
 * \param model the model
 * \param run the run settings
 * \param stage the pipeline stage
 * \return parameter count
 */
uint64_t StageExpertLinearParameters(const ModelSpec& model, const RunSpec& run, uint32_t stage);

/**
 * \brief The expert parameters among StageParameters: ZeRO and the gradient reduction shard
 * them over the expert data-parallel group (dp / ep), not over dp as the dense ones.
 * \param model the model
 * \param run the run settings
 * \param stage the pipeline stage
 * \return parameter count (0 for a dense model)
 */
uint64_t StageExpertParameters(const ModelSpec& model, const RunSpec& run, uint32_t stage);

/**
 * \brief The tensor-parallel replicated parameters of pipeline stage \p stage
 * (LayerShapes::TpReplicatedParams of its layers, and the final norm on the last stage).
 * \param model the model
 * \param run the run settings
 * \param stage the pipeline stage
 * \return parameter count
 */
uint64_t StageTpReplicatedParameters(const ModelSpec& model, const RunSpec& run, uint32_t stage);

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_LAYER_SHAPES_H
