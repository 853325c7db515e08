/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_OPERATOR_DESC_H
#define RAPIDLLM_OPERATOR_DESC_H

#include "ns3/data-type.h"

#include <cstdint>
#include <string>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief What a compute node does, in the terms the compute model costs.
 */
enum class OpType : uint8_t
{
    GEMM,             //!< batch x (m x k) @ (k x n)
    ATTENTION_FWD,    //!< fused (FlashAttention-style) attention forward
    ATTENTION_BWD,    //!< fused attention backward
    ATTENTION_SCORES, //!< unfused attention: Q K^T, softmax, dropout, and P V as separate kernels
    DECODE_ATTENTION, //!< one new token per sequence attending to a KV cache
    DECODE_ATTENTION_PER_HEAD, //!< the same, one thread block per sequence and query head
    LAYER_NORM,                //!< LayerNorm over rows of width n
    RMS_NORM,                  //!< RMSNorm over rows of width n
    GELU,                      //!< GELU of m x n elements
    SWIGLU,                    //!< SiLU(gate) * up over m x n outputs
    ROPE,                      //!< rotary embedding of Q and K
    RESIDUAL_ADD,              //!< (bias +) dropout + residual add of m x n elements
    EMBEDDING,                 //!< embedding lookup of m tokens of width n
    CROSS_ENTROPY,             //!< softmax cross-entropy over m rows of vocabulary n
    ROUTER,                    //!< MoE router: scores, top-k, permutation of m tokens of width n
    OPTIMIZER,                 //!< Adam update of m parameters
    SAMPLING //!< inference: softmax over the vocabulary and one token sampled per row
};

/** \return a short lower-case name ("gemm") */
const char* ToString(OpType type);

/**
 * \ingroup rapid-llm
 * \brief An operator and its shape. Fields are used per type as documented on each.
 */
struct OperatorDesc
{
    OpType type = OpType::GEMM;      //!< kind of operator
    DataType dtype = DataType::BF16; //!< compute and storage type
    bool backward = false;           //!< elementwise ops: the backward kernel (reads more)
    uint64_t m = 0;       //!< GEMM rows; elementwise/norm rows (tokens); attention: batch
    uint64_t n = 0;       //!< GEMM columns; elementwise/norm width; attention: query heads
    uint64_t k = 0;       //!< GEMM depth; attention: KV heads
    uint64_t batch = 1;   //!< GEMM batch count; attention: head dim
    uint64_t q = 0;       //!< attention: query length per sequence
    uint64_t kv = 0;      //!< attention: key/value length per sequence
    bool causal = false;  //!< attention: causal mask (upper blocks skipped)
    bool dropout = false; //!< unfused attention: dropout on the probabilities, its own kernel

    /**
     * \brief The FLOPs the papers count for this operator (matrix multiplies only, full
     * attention matrix), used for model FLOPs and MFU.
     * \return FLOPs
     */
    double ModelFlops() const;

    /** \return a key that identifies the operator for memoization (equal descs, equal keys) */
    std::string Key() const;
};

/** \return a GEMM descriptor */
OperatorDesc MakeGemm(uint64_t m, uint64_t n, uint64_t k, DataType dtype, uint64_t batch = 1);

/** \return an element-wise or normalization descriptor over \p rows x \p width elements */
OperatorDesc MakeElementwise(
    OpType type, uint64_t rows, uint64_t width, DataType dtype, bool backward = false);

/** \return a rotary-embedding descriptor: n = query heads, k = KV heads, batch = head dim */
OperatorDesc MakeRope(uint64_t tokens,
                      uint64_t heads,
                      uint64_t kvHeads,
                      uint64_t headDim,
                      DataType dtype,
                      bool backward = false);

/** \return an attention descriptor */
OperatorDesc MakeAttention(OpType type,
                           uint64_t batch,
                           uint64_t heads,
                           uint64_t kvHeads,
                           uint64_t headDim,
                           uint64_t q,
                           uint64_t kv,
                           bool causal,
                           DataType dtype);

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_OPERATOR_DESC_H
