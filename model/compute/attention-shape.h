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
 * \brief The shape of one attention call over all heads: fused (FlashAttention-style, one
 * kernel), unfused (GEMMs around a softmax) or a decode step over a KV cache.
 */
struct AttentionShape
{
    uint64_t batch = 1;    //!< sequences
    uint64_t heads = 1;    //!< query heads
    uint64_t kvHeads = 1;  //!< key/value heads (GQA/MQA when fewer than heads)
    uint64_t queryLen = 1; //!< query tokens per sequence
    uint64_t kvLen = 1;    //!< key/value tokens per sequence (queries are the last queryLen)
    uint64_t headDim = 64; //!< head dimension
    bool causal = true;    //!< causal mask: blocks above the diagonal are skipped
    bool dropout = false;  //!< unfused attention: dropout on the probabilities, its own kernel

    /** \return true if every field is equal */
    bool
    operator==(const AttentionShape& o) const
    {
        return batch == o.batch && heads == o.heads && kvHeads == o.kvHeads
               && queryLen == o.queryLen && kvLen == o.kvLen && headDim == o.headDim
               && causal == o.causal && dropout == o.dropout;
    }
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_ATTENTION_SHAPE_H
