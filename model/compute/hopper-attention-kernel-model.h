/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_HOPPER_ATTENTION_KERNEL_MODEL_H
#define RAPIDLLM_HOPPER_ATTENTION_KERNEL_MODEL_H

#include "attention-shape.h"
#include "ns3/data-type.h"
#include "ns3/gpu-spec.h"
#include "operator-cost.h"

namespace ns3 {
namespace rapidllm {
namespace kernel {

/**
 * \ingroup rapid-llm
 * \brief Fused attention forward as Hopper's warp-specialized kernels run it (FlashAttention-3,
 * cuDNN's sm90 kernels): a producer warpgroup loads K and V by TMA while two or three consumer
 * warpgroups of 64 query rows each run S = QK^T and O = PV as warpgroup MMAs reading their
 * operands from shared memory. Each block pair costs its MMAs at the GEMM's calibrated rate
 * plus its exponentials at the special-function rate (gpu.sfu_ops_per_clock_per_sm); the rest
 * of the softmax runs under the other warpgroup's MMAs (ping-pong scheduling).
 * \param g the GPU (warp-specialized, with its special-function rate)
 * \param s the call
 * \param type Q/K/V/O type
 * \return the cost; throws SpecError naming the GPU field the kernel needs
 */
OperatorCost HopperAttentionForward(const GpuSpec& g, const AttentionShape& s, DataType type);

/**
 * \ingroup rapid-llm
 * \brief The same kernels' backward pass, parallel over key/value blocks: five warpgroup MMAs
 * per block pair (S, dP, dV, dK, dQ), P and dS staged through shared memory for the
 * transposed MMAs, dQ accumulated in fp32 through the L2; with its preprocessing
 * (rowsum(dO*O)) and dQ conversion kernels. The exponentials and dS's element-wise work are in
 * series with the MMAs (no second warpgroup's MMAs to hide them under).
 * \param g the GPU
 * \param s the call
 * \param type tensor type
 * \return the cost
 */
OperatorCost HopperAttentionBackward(const GpuSpec& g, const AttentionShape& s, DataType type);

/**
 * \return whether both passes of the Hopper kernels have a tiling for head dimension \p headDim
 * at \p type in \p g's shared memory and registers (and \p g runs them at all): where not,
 * FlashAttention-3 refuses the shape and a library falls back to FlashAttention-2
 */
bool HopperAttentionFits(const GpuSpec& g, uint64_t headDim, DataType type);

} // namespace kernel
} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_HOPPER_ATTENTION_KERNEL_MODEL_H
