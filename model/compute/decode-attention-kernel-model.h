/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_DECODE_ATTENTION_KERNEL_MODEL_H
#define RAPIDLLM_DECODE_ATTENTION_KERNEL_MODEL_H

#include "ns3/data-type.h"
#include "ns3/gpu-spec.h"
#include "operator-cost.h"

#include <cstdint>

namespace ns3 {
namespace rapidllm {
namespace kernel {

/**
 * \ingroup rapid-llm
 * \brief One decode step's attention as flash-decoding runs it: the query heads sharing a KV
 * head form one small MMA per sequence, and the KV cache is split over thread blocks (the
 * fastest of 1..256 splits) to fill the SMs, the partial results combined by a second kernel.
 * Memory bound. The caller has checked the shape (heads a multiple of kvHeads).
 * \param g the GPU
 * \param batch sequences (one new token each)
 * \param heads query heads
 * \param kvHeads key/value heads
 * \param kvLen cached tokens per sequence
 * \param headDim head dimension
 * \param type the queries' and outputs' type, which the kernel computes in
 * \param valueDim value head dimension (0: headDim)
 * \param latent keys and values are one cached vector (MLA's latent: the values are its first
 * valueDim elements), read once
 * \param cacheBits bits of a cached element (0: type's); a one-byte (fp8, int8) or half-byte
 * (int4) cache is dequantized to type in registers, a conversion and a scaling per element it
 * loads
 * \return the cost
 */
OperatorCost SplitKvDecodeAttention(const GpuSpec& g,
                                    uint64_t batch,
                                    uint64_t heads,
                                    uint64_t kvHeads,
                                    uint64_t kvLen,
                                    uint64_t headDim,
                                    DataType type,
                                    uint64_t valueDim = 0,
                                    bool latent = false,
                                    uint32_t cacheBits = 0);

/**
 * \ingroup rapid-llm
 * \brief One decode step's attention as FasterTransformer's masked multi-head attention kernel
 * runs it: one thread block per sequence and query head walks the whole KV cache on the CUDA
 * cores; the L2 serves the query heads of a GQA group, so HBM sees each KV head once.
 * \param g the GPU
 * \param batch sequences (one new token each)
 * \param heads query heads
 * \param kvHeads key/value heads
 * \param kvLen cached tokens per sequence
 * \param headDim head dimension
 * \param type the queries' and outputs' type, which the kernel computes in
 * \param valueDim value head dimension (0: headDim)
 * \param latent keys and values are one cached vector, read once
 * \param cacheBits bits of a cached element (0: type's), dequantized as SplitKvDecodeAttention's
 * \return the cost
 */
OperatorCost PerHeadDecodeAttention(const GpuSpec& g,
                                    uint64_t batch,
                                    uint64_t heads,
                                    uint64_t kvHeads,
                                    uint64_t kvLen,
                                    uint64_t headDim,
                                    DataType type,
                                    uint64_t valueDim = 0,
                                    bool latent = false,
                                    uint32_t cacheBits = 0);

} // namespace kernel
} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_DECODE_ATTENTION_KERNEL_MODEL_H
