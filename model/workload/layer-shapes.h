/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_LAYER_SHAPES_H
#define RAPIDLLM_LAYER_SHAPES_H

#include "ns3/model-spec.h"
#include "ns3/run-spec.h"

#include <cstdint>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief How a mixture-of-experts layer's tokens reach the experts of one rank, with routing
 * assumed balanced: the GEMM shapes of its grouped expert GEMMs, the same in the forward and
 * backward passes.
 */
struct ExpertRouting
{
    uint64_t routed = 0;     //!< token-to-expert assignments of this rank's rows (rows x top-k)
    uint64_t perExpert = 0;  //!< rows each local expert sees (its share of the EP group's)
    uint64_t expertRows = 0; //!< rows of all local experts together
};

/**
 * \ingroup rapid-llm
 * \brief One rank's share of a decoder layer under tensor, context and expert parallelism:
 * the widths its GEMMs see and the parameters it holds.
 */
struct LayerShapes
{
    uint32_t tp = 1;           //!< tensor parallel degree
    uint64_t hidden = 0;       //!< h
    uint64_t headDim = 0;      //!< d
    uint64_t heads = 0;        //!< query heads on this rank (a / tp)
    uint64_t kvHeads = 0;      //!< KV heads on this rank (replicated when tp > kv heads)
    uint64_t qkvOut = 0;       //!< QKV projection output width on this rank
    uint64_t ffn = 0;          //!< dense MLP width on this rank (f / tp)
    uint64_t fc1Out = 0;       //!< first MLP projection width (2 x ffn when gated)
    uint64_t localExperts = 0; //!< MoE: experts on this rank (E / ep)
    uint64_t expertFfn = 0;    //!< MoE: each expert's width on this rank
    uint64_t experts = 0;      //!< MoE: experts per layer (all ranks)
    uint64_t topK = 0;         //!< MoE: experts each token visits
    uint32_t ep = 1;           //!< MoE: expert parallel degree
    uint64_t expertFc1Out = 0; //!< MoE: each expert's first projection width on this rank
    uint64_t vocab = 0;        //!< vocabulary shard (V / tp)
    uint32_t elementBytes = 2; //!< bytes per activation element

    uint64_t layerParams = 0;     //!< parameters of one layer held by this rank
    uint64_t expertParams = 0;    //!< of which expert parameters (reduced over EDP, not DP)
    uint64_t embeddingParams = 0; //!< embedding (and position table) shard
    uint64_t headParams = 0;      //!< untied LM head shard
    uint64_t finalNormParams = 0; //!< the final norm before the head (replicated across TP)

    /**
     * \param model the model
     * \param run the run settings (dtype and parallel layout)
     */
    LayerShapes(const ModelSpec& model, const RunSpec& run);

    /**
     * \brief The expert GEMM shapes of a MoE layer over \p rows token rows: each token visits
     * top-k experts; the EP group's tokens spread evenly over all experts, so each local expert
     * sees ceil(rows x top-k x ep / experts) rows.
     * \param rows token rows on this rank
     * \return the routing (a MoE model only)
     */
    ExpertRouting Routing(uint64_t rows) const;
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

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_LAYER_SHAPES_H
