/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_OPERATOR_DESC_H
#define RAPIDLLM_OPERATOR_DESC_H

#include "ns3/attention-shape.h"
#include "ns3/data-type.h"
#include "ns3/model-spec.h"

#include <cstddef>
#include <cstdint>
#include <variant>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief What a compute node does, in the terms the compute model costs. Each kind carries
 * one shape type (OperatorDesc::shape): GemmShape, AttentionShape, ElementwiseShape, RopeShape
 * or OptimizerShape, as noted on each.
 */
enum class OpType : uint8_t
{
    GEMM,             //!< GemmShape: batch x (m x k) @ (k x n)
    ATTENTION_FWD,    //!< AttentionShape: fused (FlashAttention-style) attention forward
    ATTENTION_BWD,    //!< AttentionShape: fused attention backward
    ATTENTION_SCORES, //!< AttentionShape: unfused attention (Q K^T, softmax, dropout, P V)
    DECODE_ATTENTION, //!< AttentionShape: one new token per sequence attending to a KV cache
    DECODE_ATTENTION_PER_HEAD, //!< AttentionShape: the same, one block per sequence and head
    LAYER_NORM,                //!< ElementwiseShape: LayerNorm over rows of width n
    RMS_NORM,                  //!< ElementwiseShape: RMSNorm over rows
    GELU,                      //!< ElementwiseShape: GELU of rows x width elements
    SQUARED_RELU,              //!< ElementwiseShape: relu(x)^2 of rows x width elements
    SWIGLU,                    //!< ElementwiseShape: SiLU(gate) * up over rows x width outputs
    GEGLU,                     //!< ElementwiseShape: GELU(gate) * up over rows x width outputs
    ROPE,                      //!< RopeShape: rotary embedding of Q and K
    RESIDUAL_ADD,              //!< ElementwiseShape: (bias +) dropout + residual add
    EMBEDDING,                 //!< ElementwiseShape: lookup of rows tokens of width hidden
    CROSS_ENTROPY,             //!< ElementwiseShape: softmax cross-entropy, rows x vocabulary
    ROUTER,                    //!< ElementwiseShape: MoE router over rows tokens x experts
    OPTIMIZER,                 //!< OptimizerShape: Adam update of the parameters
    SAMPLING, //!< ElementwiseShape: softmax over rows x vocabulary and one token sampled per row
    FP8_CAST_TRANSPOSE,      //!< ElementwiseShape: rows x width 16-bit values cast to fp8, written
                             //!< as the fp8 copy and its transpose (Transformer Engine on Hopper),
                             //!< the amax taken in the same pass (delayed scaling)
    FP8_AMAX_CAST_TRANSPOSE, //!< ElementwiseShape: the same under current scaling: an amax
                             //!< kernel reads the values first, then the cast reads them again
    TENSOR_COPY,             //!< ElementwiseShape: rows x width values read and written once
                             //!< (a copy, concatenation or .contiguous() of a strided view)
    TENSOR_FILL,             //!< ElementwiseShape: rows x width values written (zero_())
    MOE_UNPERMUTE            //!< GemmShape: each of batch tokens' rows of width n as the
                             //!< probability-weighted sum of its k expert rows (a batched
                             //!< (1 x k)(k x n) product, memory-bound; MakeUnpermute)
};

/** \return a short lower-case name ("gemm") */
const char* ToString(OpType type);

/**
 * \ingroup rapid-llm
 * \brief The shape of a GEMM: C[m x n] = A[m x k] B[k x n], batch times.
 */
struct GemmShape
{
    uint64_t m = 0;     //!< rows of A and C (tokens)
    uint64_t n = 0;     //!< columns of B and C (output features)
    uint64_t k = 0;     //!< the reduction dimension (input features)
    uint64_t batch = 1; //!< independent GEMMs of the same shape in one launch

    /** \return true if every field is equal */
    bool
    operator==(const GemmShape& o) const
    {
        return m == o.m && n == o.n && k == o.k && batch == o.batch;
    }
};

/**
 * \ingroup rapid-llm
 * \brief The shape of an element-wise, normalization or row-wise kernel: rows x width elements.
 */
struct ElementwiseShape
{
    uint64_t rows = 0;  //!< rows (tokens)
    uint64_t width = 0; //!< elements per row (hidden, MLP width, vocabulary or experts)

    /** \return true if every field is equal */
    bool
    operator==(const ElementwiseShape& o) const
    {
        return rows == o.rows && width == o.width;
    }
};

/**
 * \ingroup rapid-llm
 * \brief The shape of a rotary embedding: the query and key heads of some tokens.
 */
struct RopeShape
{
    uint64_t tokens = 0;  //!< tokens
    uint64_t heads = 0;   //!< query heads
    uint64_t kvHeads = 0; //!< key heads
    uint64_t headDim = 0; //!< head dimension

    /** \return true if every field is equal */
    bool
    operator==(const RopeShape& o) const
    {
        return tokens == o.tokens && heads == o.heads && kvHeads == o.kvHeads
               && headDim == o.headDim;
    }
};

/**
 * \ingroup rapid-llm
 * \brief The shape of an optimizer step: the parameters this GPU updates.
 */
struct OptimizerShape
{
    uint64_t params = 0;    //!< parameters
    uint32_t gradBytes = 0; //!< bytes per gradient it reads (0: the weights' type)

    /** \return true if equal */
    bool
    operator==(const OptimizerShape& o) const
    {
        return params == o.params && gradBytes == o.gradBytes;
    }
};

/** \brief One of the operator shapes; which one follows from the OpType. */
using OperatorShape =
    std::variant<GemmShape, AttentionShape, ElementwiseShape, RopeShape, OptimizerShape>;

/**
 * \param type an operator kind
 * \return the index among OperatorShape's alternatives of the shape type \p type carries
 */
std::size_t ShapeIndexOf(OpType type);

/**
 * \ingroup rapid-llm
 * \brief An operator: its kind, type, direction and typed shape. Build one with MakeGemm,
 * MakeAttention, MakeElementwise, MakeRope or MakeOptimizer, which pair each kind with its
 * shape type; read the shape with the accessor of that type.
 */
struct OperatorDesc
{
    // The shape first: the small fields then share one word (a graph holds millions of these).
    OperatorShape shape;             //!< the shape of the kind's type
    OpType type = OpType::GEMM;      //!< kind of operator
    bool backward = false;           //!< the backward kernel (element-wise: reads more)
    DataType dtype = DataType::BF16; //!< compute and storage type
    /** SMs a concurrent communication kernel keeps from it (Transformer Engine's set_sm_margin):
     *  the operator runs on the GPU's others */
    uint8_t reservedSms = 0;

    /** \return the GEMM shape (the operator must be a GEMM) */
    const GemmShape&
    Gemm() const
    {
        return std::get<GemmShape>(shape);
    }

    /** \return the attention shape (an attention or decode-attention operator) */
    const AttentionShape&
    Attention() const
    {
        return std::get<AttentionShape>(shape);
    }

    /** \return the element-wise shape (a norm, activation, residual, embedding, loss, ...) */
    const ElementwiseShape&
    Elementwise() const
    {
        return std::get<ElementwiseShape>(shape);
    }

    /** \return the rotary-embedding shape */
    const RopeShape&
    Rope() const
    {
        return std::get<RopeShape>(shape);
    }

    /** \return the optimizer shape */
    const OptimizerShape&
    Optimizer() const
    {
        return std::get<OptimizerShape>(shape);
    }

    /** \return true if the shape is of the type the kind carries (ShapeIndexOf) */
    bool HasShapeOfKind() const;

    /**
     * \brief The FLOPs the papers count for this operator (matrix multiplies only, full
     * attention matrix), used for model FLOPs and MFU.
     * \return FLOPs
     */
    double ModelFlops() const;

    /**
     * \param o another operator
     * \return true if both are the same operator (kind, type, direction and shape): they cost
     * the same
     */
    bool operator==(const OperatorDesc& o) const;
};

/**
 * \brief Hash of an OperatorDesc, for memoizing costs (equal operators, equal hashes).
 */
struct OperatorDescHash
{
    /**
     * \param op the operator
     * \return its hash
     */
    size_t operator()(const OperatorDesc& op) const;
};

/** \return a GEMM descriptor */
OperatorDesc MakeGemm(uint64_t m, uint64_t n, uint64_t k, DataType dtype, uint64_t batch = 1);

/**
 * \return an element-wise, normalization or row-wise descriptor over \p rows x \p width
 * elements (\p type one of the kinds whose shape is ElementwiseShape)
 */
OperatorDesc MakeElementwise(
    OpType type, uint64_t rows, uint64_t width, DataType dtype, bool backward = false);

/** \return the operator of a model's norm: RMS_NORM or LAYER_NORM */
OpType NormOpOf(NormType norm);

/**
 * \brief The un-permutation of Megatron-core's MoE token dispatcher: each of \p tokens tokens'
 * \p topK expert output rows, weighted by its router probabilities, summed into its row.
 * \param tokens tokens (output rows)
 * \param topK experts per token
 * \param hidden row width
 * \param dtype the rows' type
 * \param backward the backward kernel: the routed rows' gradients and the probabilities'
 * \return the descriptor (shape GemmShape{1, hidden, topK, tokens})
 */
OperatorDesc MakeUnpermute(
    uint64_t tokens, uint64_t topK, uint64_t hidden, DataType dtype, bool backward = false);

/** \return a rotary-embedding descriptor of the query and key heads of \p tokens tokens */
OperatorDesc MakeRope(uint64_t tokens,
                      uint64_t heads,
                      uint64_t kvHeads,
                      uint64_t headDim,
                      DataType dtype,
                      bool backward = false);

/**
 * \return an attention descriptor (\p type one of the attention and decode-attention kinds)
 */
OperatorDesc MakeAttention(OpType type,
                           const AttentionShape& shape,
                           DataType dtype,
                           bool backward = false);

/** \return an attention descriptor without dropout, from the shape's fields */
OperatorDesc MakeAttention(OpType type,
                           uint64_t batch,
                           uint64_t heads,
                           uint64_t kvHeads,
                           uint64_t headDim,
                           uint64_t q,
                           uint64_t kv,
                           bool causal,
                           DataType dtype);

/**
 * \return an optimizer-step descriptor over \p params parameters of type \p dtype whose
 * gradients are of type \p grads (fp32 main gradients need no copy to fp32)
 */
OperatorDesc MakeOptimizer(uint64_t params, DataType dtype, DataType grads);

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_OPERATOR_DESC_H
