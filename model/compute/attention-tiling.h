/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_ATTENTION_TILING_H
#define RAPIDLLM_ATTENTION_TILING_H

#include "attention-shape.h"
#include "ns3/data-type.h"
#include "ns3/gpu-spec.h"
#include "operator-cost.h"

#include <cstdint>

namespace ns3 {
namespace rapidllm {
namespace kernel {

/**
 * \ingroup rapid-llm
 * \brief Records a tiled attention kernel's tiling (two-stage, \p br x \p bc blocks) and its
 * waves in \p c.
 */
void SetFlashTiling(OperatorCost& c,
                    uint32_t br,
                    uint32_t bc,
                    uint32_t headDim,
                    uint32_t threads,
                    uint32_t perSm,
                    uint64_t smem,
                    uint64_t ctas,
                    uint32_t sms);

/**
 * \ingroup rapid-llm
 * \brief The (query block, key/value block) pairs a tiled attention kernel computes. */
struct BlockPairs
{
    uint64_t queryBlocks = 0; //!< query blocks of br rows
    uint64_t kvBlocks = 0;    //!< key/value blocks of bc columns
    double total = 0;         //!< pairs visited over all query blocks (one head)
    uint64_t most = 0;        //!< the most pairs one query block visits
};

/**
 * \ingroup rapid-llm
 * \brief The block pairs of one head with \p br x \p bc blocks: every key/value block, or under
 * a causal mask only those at or left of the diagonal (the queries are the last queryLen of the
 * kvLen tokens).
 */
BlockPairs VisitedBlocks(const AttentionShape& s, uint32_t br, uint32_t bc);

/**
 * \ingroup rapid-llm
 * \brief What a FlashAttention kernel's time is made of, the same forward and backward. */
struct FlashRates
{
    double b;           //!< bytes per element
    double d;           //!< head dimension
    double bh;          //!< sequences x query heads: the independent problems
    bool tensor;        //!< whether the matmuls run on tensor cores
    double peak;        //!< the matmul peak of the type, whole GPU
    double perSmRate;   //!< calibrated matmul rate of one SM
    double perSmVector; //!< calibrated fp32 CUDA-core rate of one SM (the softmax)
    double smemRate;    //!< calibrated shared-memory bandwidth of one SM
};

/** \ingroup rapid-llm \return the rates of \p s in \p type on \p g */
FlashRates RatesOf(const GpuSpec& g, const AttentionShape& s, DataType type);

} // namespace kernel
} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_ATTENTION_TILING_H
