/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_ATTENTION_KERNEL_MODEL_H
#define RAPIDLLM_ATTENTION_KERNEL_MODEL_H

#include "attention-shape.h"
#include "ns3/data-type.h"
#include "ns3/gpu-spec.h"
#include "operator-cost.h"

namespace ns3 {
namespace rapidllm {

class GpuComputeModel;

namespace kernel {

/**
 * \ingroup rapid-llm
 * \brief FlashAttention-2 forward (S = QK^T, online softmax, O = PV) tiled over query and
 * key/value blocks: the fastest of its block sizes that fits an SM. Causal blocks above the
 * diagonal are skipped. The caller has checked the shape.
 * \param g the GPU
 * \param s the call
 * \param type Q/K/V/O type
 * \return the cost; throws SpecError if no block size fits the head dimension
 */
OperatorCost FlashAttentionForward(const GpuSpec& g, const AttentionShape& s, DataType type);

/**
 * \ingroup rapid-llm
 * \brief FlashAttention-2 backward, parallel over key/value blocks (recomputes S and P; dQ
 * accumulated in fp32 through the L2), with its preprocessing (rowsum(dO*O)) and dQ conversion
 * kernels.
 * \param g the GPU
 * \param s the call
 * \param type tensor type
 * \return the cost
 */
OperatorCost FlashAttentionBackward(const GpuSpec& g, const AttentionShape& s, DataType type);

/**
 * \ingroup rapid-llm
 * \brief Unfused attention (Megatron-LM before FlashAttention): S = Q K^T and O = P V as
 * batched GEMMs over every head on the full s x s matrix (no causal skipping), a fused
 * scale-mask-softmax and, with \c s.dropout, PyTorch's dropout kernel on the probabilities.
 * The backward pass runs dP = dO V^T, dV = P^T dO, the dropout and softmax backward, dQ = dS K
 * and dK = dS^T Q.
 * \param model the compute model whose (memoized) GEMM and element-wise kernels it runs
 * \param s the call
 * \param type tensor type
 * \param backward the backward pass
 * \return the kernels' costs summed
 */
OperatorCost UnfusedAttention(GpuComputeModel& model,
                              const AttentionShape& s,
                              DataType type,
                              bool backward);

} // namespace kernel
} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_ATTENTION_KERNEL_MODEL_H
