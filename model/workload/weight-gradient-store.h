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
    /**
     * The all-gather of an input kept sharded by sequence parallelism, run again before the
     * GEMM (nullptr: none): the backward pass no longer gathers it beside its input gradient.
     */
    const char* gather = nullptr;
    uint64_t gatherBytes = 0; //!< the gathered input's bytes
    uint8_t gatherSms = 0;    //!< SMs the gather holds under userbuffers (0: NCCL's choice)
};

/**
 * \ingroup rapid-llm
 * \brief One layer's deferred weight gradients (the zero-bubble paper's W pass of a layer) and
 * the memory they keep alive from the backward pass until they run: each GEMM's input X, kept
 * from the forward pass, and its output gradient dY (Qi et al., ICLR 2024, Sec. 2).
 */
struct WeightGradientStore
{
    std::vector<DeferredWeightGemm> gemms; //!< in the order the backward pass reached them
    int64_t inputBytes = 0;                //!< the GEMMs' inputs, as the forward pass kept them
    int64_t gradBytes = 0;                 //!< their output gradients

    /**
     * \brief Emits the deferred GEMMs on the stream (each after its input's gather, where it has
     * one) and frees what they kept. \param e the emitter \return the last GEMM's id
     */
    uint32_t Emit(GraphEmitter& e) const;
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_WEIGHT_GRADIENT_STORE_H
