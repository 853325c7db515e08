/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_TRITON_ATTENTION_KERNEL_MODEL_H
#define RAPIDLLM_TRITON_ATTENTION_KERNEL_MODEL_H

#include "attention-shape.h"
#include "ns3/data-type.h"
#include "ns3/gpu-spec.h"
#include "operator-cost.h"

namespace ns3 {
namespace rapidllm {
namespace kernel {

/**
 * \ingroup rapid-llm
 * \brief FlashAttention in Triton (2022, Tri Dao's flash_attn_triton.py as shipped by MosaicML
 * LLM Foundry for MPT) forward: one program per 128-row query block and head, 128 x 128 blocks,
 * 8 warps (4 for head dimension <= 64), num_stages=1. Without software pipelining each
 * key/value block's loads wait in line with its matmuls: per block pair the K load, Q K^T and
 * the online softmax, the store-and-reload of the rescale factor through global memory, the V
 * load and P V run one after another. Causal blocks above the diagonal are skipped.
 * \param g the GPU
 * \param s the call (head dimension at most 128)
 * \param type Q/K/V/O type
 * \return the cost; throws SpecError if the head dimension exceeds 128 or the tiles do not fit
 */
OperatorCost TritonAttentionForward(const GpuSpec& g, const AttentionShape& s, DataType type);

/**
 * \ingroup rapid-llm
 * \brief The backward pass of the same kernel: zeroing the fp32 dQ accumulator, the
 * preprocessing kernel (rowsum(O * dO)), the main kernel and the dQ conversion. The main kernel
 * is autotuned between two 128 x 128, 8-warp, one-stage programs: one per head walking every
 * key block (dQ read-modify-written in fp32) and one per key block and head (dQ added with fp32
 * atomics); the faster of the two is taken.
 * \param g the GPU
 * \param s the call
 * \param type tensor type
 * \return the cost
 */
OperatorCost TritonAttentionBackward(const GpuSpec& g, const AttentionShape& s, DataType type);

} // namespace kernel
} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_TRITON_ATTENTION_KERNEL_MODEL_H
