/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_ATTENTION_SHAPE_H
#define RAPIDLLM_ATTENTION_SHAPE_H

#include <cstdint>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief Which fused attention kernel runs a call: FlashAttention-2 (Dao 2023, CUDA), the
 * 2022 FlashAttention in Triton that MPT / LLM Foundry ships (flash_attn_triton.py: 128 x 128
 * blocks, 8 warps, one stage, backward autotuned between a per-head and a sequence-parallel
 * program) or Hopper's warp-specialized kernels (FlashAttention-3, cuDNN's sm90 fused
 * attention, which Transformer Engine runs on Hopper).
 */
enum class AttentionKernel
{
    FLASH2,     //!< FlashAttention-2
    TRITON2022, //!< FlashAttention in Triton (2022), as in MPT
    HOPPER,     //!< warp-specialized warpgroup-MMA kernels (FlashAttention-3, cuDNN sm90)
    AUTO,       //!< the GPU's: HOPPER where it has warpgroup MMAs and the exponential rate,
                //!< else FLASH2 (GpuComputeModel resolves it)
};

/**
 * \ingroup rapid-llm
 * \brief The shape of one attention call over all heads: fused (FlashAttention-style, one
 * kernel), unfused (GEMMs around a softmax) or a decode step over a KV cache.
 */
struct AttentionShape
{
    uint64_t batch = 1;     //!< sequences
    uint64_t heads = 1;     //!< query heads
    uint64_t kvHeads = 1;   //!< key/value heads (GQA/MQA when fewer than heads)
    uint64_t queryLen = 1;  //!< query tokens per sequence
    uint64_t kvLen = 1;     //!< key/value tokens per sequence (queries are the last queryLen)
    uint64_t headDim = 64;  //!< head dimension (of the queries and keys)
    uint64_t valueDim = 0;  //!< value head dimension, decode only (0: headDim)
    bool latentKv = false;  //!< decode: keys and values are one cached vector (MLA), read once
    uint32_t cacheBits = 0; //!< decode: bits of a cached element (0: the call's type's)
    bool causal = true;     //!< causal mask: blocks above the diagonal are skipped
    uint64_t window = 0;    //!< causal sliding window: each query sees at most its last `window`
                            //!< keys, itself included (0: no window); blocks left of it are skipped
    bool dropout = false;   //!< unfused attention: dropout on the probabilities, its own kernel
    AttentionKernel kernel = AttentionKernel::FLASH2; //!< fused attention: the kernel that runs

    /** \return the value head dimension */
    uint64_t
    ValueDim() const
    {
        return valueDim > 0 ? valueDim : headDim;
    }

    /** \return true if every field is equal */
    bool
    operator==(const AttentionShape& o) const
    {
        return batch == o.batch && heads == o.heads && kvHeads == o.kvHeads
               && queryLen == o.queryLen && kvLen == o.kvLen && headDim == o.headDim
               && causal == o.causal && window == o.window && dropout == o.dropout
               && kernel == o.kernel && valueDim == o.valueDim && latentKv == o.latentKv
               && cacheBits == o.cacheBits;
    }
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_ATTENTION_SHAPE_H
