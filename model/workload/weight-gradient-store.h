/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_WEIGHT_GRADIENT_STORE_H
#define RAPIDLLM_WEIGHT_GRADIENT_STORE_H

#include "graph-emitter.h"
#include "operator-desc.h"

#include <cstdint>
#include <vector>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief A weight-gradient GEMM that a zero-bubble schedule moved out of its backward pass.
 */
struct DeferredWeightGemm
{
    const char* label = nullptr; //!< the GEMM's label
    OperatorDesc op;             //!< the GEMM (dW = X^T dY)
    double modelFlops = -1;      //!< model FLOPs where they are not the GEMM's (routed experts)
    float energyShare = 1;       //!< WorkNode::energyShareUnits of the GEMM where it was deferred
};

/**
 * \ingroup rapid-llm
 * \brief One layer's deferred weight gradients (the zero-bubble paper's W pass of a layer) and
 * the memory they keep alive until they run: each GEMM's input X and output gradient dY (Qi et
 * al., ICLR 2024, Sec. 2). The reference implementation (sail-sg/zero-bubble-pipeline-
 * parallelism, Megatron's WeightGradStore) stores the pair as the backward pass had it: the
 * input as the forward pass kept it, or gathered over the sequence-parallel ranks, and the
 * output gradient (gathered too, for a row-parallel layer).
 */
struct WeightGradientStore
{
    std::vector<DeferredWeightGemm> gemms; //!< in the order the backward pass reached them
    int64_t keptBytes = 0;                 //!< inputs the forward pass kept, now kept longer
    int64_t producedBytes = 0; //!< output gradients and gathered inputs the backward pass made

    /**
     * \brief Defers the weight-gradient GEMM \p op with what it keeps: its input X and its
     * output gradient dY.
     * \param label its label \param op the GEMM
     * \param modelFlops its model FLOPs where they are not the GEMM's (< 0: the GEMM's)
     * \param inputBytes X's bytes
     * \param gatheredInput whether X is the forward pass's (false) or one the backward pass
     *        gathered over the sequence-parallel ranks (true)
     * \param gradBytes dY's bytes
     * \param energyShare its WorkNode::energyShareUnits
     */
    void Add(const char* label,
             const OperatorDesc& op,
             double modelFlops,
             int64_t inputBytes,
             bool gatheredInput,
             int64_t gradBytes,
             float energyShare = 1);

    /**
     * \param held what the forward pass kept for the backward pass (and its recomputation made)
     * \return what the end of the backward pass frees of it: all but the deferred GEMMs'
     * inputs (never more than it held), less the output gradients and gathered inputs it made
     * for them
     */
    int64_t FreedAtBackwardEnd(int64_t held);

    /**
     * \brief Emits the deferred GEMMs on the stream and frees what they kept.
     * \param e the emitter \return the last GEMM's id (GraphEmitter::NONE: none)
     */
    uint32_t Emit(GraphEmitter& e) const;
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_WEIGHT_GRADIENT_STORE_H
