/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "operator-desc.h"

#include "ns3/assert.h"

#include <algorithm>
#include <type_traits>

namespace ns3 {
namespace rapidllm {

const char*
ToString(OpType type)
{
    switch (type)
    {
        case OpType::GEMM:
            return "gemm";
        case OpType::ATTENTION_FWD:
            return "attention_fwd";
        case OpType::ATTENTION_BWD:
            return "attention_bwd";
        case OpType::ATTENTION_SCORES:
            return "attention_unfused";
        case OpType::DECODE_ATTENTION:
            return "decode_attention";
        case OpType::DECODE_ATTENTION_PER_HEAD:
            return "decode_attention_per_head";
        case OpType::LAYER_NORM:
            return "layer_norm";
        case OpType::RMS_NORM:
            return "rms_norm";
        case OpType::GELU:
            return "gelu";
        case OpType::SQUARED_RELU:
            return "squared_relu";
        case OpType::SWIGLU:
            return "swiglu";
        case OpType::GEGLU:
            return "geglu";
        case OpType::ROPE:
            return "rope";
        case OpType::RESIDUAL_ADD:
            return "residual_add";
        case OpType::EMBEDDING:
            return "embedding";
        case OpType::CROSS_ENTROPY:
            return "cross_entropy";
        case OpType::ROUTER:
            return "router";
        case OpType::OPTIMIZER:
            return "optimizer";
        case OpType::SAMPLING:
            return "sampling";
        case OpType::FP8_CAST_TRANSPOSE:
            return "fp8_cast_transpose";
        case OpType::FP8_AMAX_CAST_TRANSPOSE:
            return "fp8_amax_cast_transpose";
        case OpType::TENSOR_COPY:
            return "tensor_copy";
        case OpType::TENSOR_FILL:
            return "tensor_fill";
        case OpType::MOE_UNPERMUTE:
            return "moe_unpermute";
    }
    return "?";
}

namespace {

/** \return the keys each query is counted against: kvLen, or a sliding window's width */
double
CountedKeys(const AttentionShape& a)
{
    return double(a.window > 0 ? std::min(a.kvLen, a.window) : a.kvLen);
}

/** \return the index of \p Shape among OperatorShape's alternatives */
template<typename Shape>
constexpr std::size_t
IndexOf()
{
    return OperatorShape(std::in_place_type<Shape>).index();
}

/** Mixes \p v into the hash \p h (FNV-1a style, as the GEMM memo's). */
inline void
Mix(uint64_t& h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h *= 1099511628211ull;
}

} // namespace

std::size_t
ShapeIndexOf(OpType type)
{
    switch (type)
    {
        case OpType::GEMM:
        case OpType::MOE_UNPERMUTE:
            return IndexOf<GemmShape>();
        case OpType::ATTENTION_FWD:
        case OpType::ATTENTION_BWD:
        case OpType::ATTENTION_SCORES:
        case OpType::DECODE_ATTENTION:
        case OpType::DECODE_ATTENTION_PER_HEAD:
            return IndexOf<AttentionShape>();
        case OpType::LAYER_NORM:
        case OpType::RMS_NORM:
        case OpType::GELU:
        case OpType::SQUARED_RELU:
        case OpType::SWIGLU:
        case OpType::GEGLU:
        case OpType::RESIDUAL_ADD:
        case OpType::EMBEDDING:
        case OpType::CROSS_ENTROPY:
        case OpType::ROUTER:
        case OpType::SAMPLING:
        case OpType::FP8_CAST_TRANSPOSE:
        case OpType::FP8_AMAX_CAST_TRANSPOSE:
        case OpType::TENSOR_COPY:
        case OpType::TENSOR_FILL:
            return IndexOf<ElementwiseShape>();
        case OpType::ROPE:
            return IndexOf<RopeShape>();
        case OpType::OPTIMIZER:
            return IndexOf<OptimizerShape>();
    }
    return std::variant_npos;
}

bool
OperatorDesc::HasShapeOfKind() const
{
    return shape.index() == ShapeIndexOf(type);
}

double
OperatorDesc::ModelFlops() const
{
    switch (type)
    {
        case OpType::GEMM:
        {
            const GemmShape& g = Gemm();
            return 2.0 * g.m * g.n * g.k * g.batch;
        }
        case OpType::ATTENTION_FWD:
        case OpType::ATTENTION_SCORES:
        case OpType::DECODE_ATTENTION:
        case OpType::DECODE_ATTENTION_PER_HEAD:
        {
            // Q K^T and P V: 2 x (2 q kv d) per head, the full matrix as the papers count it (a
            // sliding window's width in place of kv); the backward pass does twice the forward's
            // matrix multiplies.
            const AttentionShape& a = Attention();
            return (backward ? 4.0 : 2.0) * a.batch * a.heads * (a.headDim + a.ValueDim())
                   * a.queryLen * CountedKeys(a);
        }
        case OpType::ATTENTION_BWD:
        {
            // Twice the forward's matrix multiplies (input and "weight" gradients of both).
            const AttentionShape& a = Attention();
            return 8.0 * a.batch * a.heads * a.headDim * a.queryLen * CountedKeys(a);
        }
        case OpType::LAYER_NORM:
        case OpType::RMS_NORM:
        case OpType::GELU:
        case OpType::SQUARED_RELU:
        case OpType::SWIGLU:
        case OpType::GEGLU:
        case OpType::ROPE:
        case OpType::RESIDUAL_ADD:
        case OpType::EMBEDDING:
        case OpType::CROSS_ENTROPY:
        case OpType::ROUTER:
        case OpType::OPTIMIZER:
        case OpType::SAMPLING:
        case OpType::FP8_CAST_TRANSPOSE:
        case OpType::FP8_AMAX_CAST_TRANSPOSE:
        case OpType::TENSOR_COPY:
        case OpType::TENSOR_FILL:
        case OpType::MOE_UNPERMUTE:
            return 0.0; // no matrix multiply of the model's
    }
    return 0.0;
}

bool
OperatorDesc::operator==(const OperatorDesc& o) const
{
    return type == o.type && dtype == o.dtype && backward == o.backward
           && reservedSms == o.reservedSms && shape == o.shape;
}

size_t
OperatorDescHash::operator()(const OperatorDesc& op) const
{
    uint64_t h = 1469598103934665603ull;
    Mix(h,
        (uint64_t(op.reservedSms) << 24) | (uint64_t(op.type) << 16) | (uint64_t(op.dtype) << 8)
            | uint64_t(op.backward));
    std::visit(
        [&h](const auto& s)
        {
            using S = std::decay_t<decltype(s)>;
            if constexpr (std::is_same_v<S, GemmShape>)
            {
                Mix(h, s.m);
                Mix(h, s.n);
                Mix(h, s.k);
                Mix(h, s.batch);
            }
            else if constexpr (std::is_same_v<S, AttentionShape>)
            {
                Mix(h, s.batch);
                Mix(h, s.heads);
                Mix(h, s.kvHeads);
                Mix(h, s.queryLen);
                Mix(h, s.kvLen);
                Mix(h, s.headDim);
                Mix(h, s.window);
                Mix(h, (uint64_t(s.kernel) << 2) | (uint64_t(s.causal) << 1) | uint64_t(s.dropout));
                if (s.valueDim > 0 || s.latentKv)
                {
                    Mix(h, (s.valueDim << 1) | uint64_t(s.latentKv)); // MLA's decode only
                }
                if (s.cacheBits > 0)
                {
                    Mix(h, s.cacheBits); // a decode over a quantized cache only
                }
            }
            else if constexpr (std::is_same_v<S, ElementwiseShape>)
            {
                Mix(h, s.rows);
                Mix(h, s.width);
            }
            else if constexpr (std::is_same_v<S, RopeShape>)
            {
                Mix(h, s.tokens);
                Mix(h, s.heads);
                Mix(h, s.kvHeads);
                Mix(h, s.headDim);
            }
            else
            {
                static_assert(std::is_same_v<S, OptimizerShape>, "every shape is hashed");
                Mix(h, s.params);
                Mix(h, s.gradBytes);
            }
        },
        op.shape);
    return static_cast<size_t>(h);
}

OperatorDesc
MakeGemm(uint64_t m, uint64_t n, uint64_t k, DataType dtype, uint64_t batch)
{
    OperatorDesc d;
    d.type = OpType::GEMM;
    d.dtype = dtype;
    d.shape = GemmShape{m, n, k, batch};
    return d;
}

OpType
NormOpOf(NormType norm)
{
    return norm == NormType::RMS_NORM ? OpType::RMS_NORM : OpType::LAYER_NORM;
}

OperatorDesc
MakeElementwise(OpType type, uint64_t rows, uint64_t width, DataType dtype, bool backward)
{
    NS_ASSERT_MSG(ShapeIndexOf(type) == IndexOf<ElementwiseShape>(),
                  ToString(type) << " does not have an element-wise shape");
    OperatorDesc d;
    d.type = type;
    d.dtype = dtype;
    d.backward = backward;
    d.shape = ElementwiseShape{rows, width};
    return d;
}

OperatorDesc
MakeUnpermute(uint64_t tokens, uint64_t topK, uint64_t hidden, DataType dtype, bool backward)
{
    OperatorDesc d;
    d.type = OpType::MOE_UNPERMUTE;
    d.dtype = dtype;
    d.backward = backward;
    d.shape = GemmShape{1, hidden, topK, tokens};
    return d;
}

OperatorDesc
MakeRope(uint64_t tokens,
         uint64_t heads,
         uint64_t kvHeads,
         uint64_t headDim,
         DataType dtype,
         bool backward)
{
    OperatorDesc d;
    d.type = OpType::ROPE;
    d.dtype = dtype;
    d.backward = backward;
    d.shape = RopeShape{tokens, heads, kvHeads, headDim};
    return d;
}

OperatorDesc
MakeAttention(OpType type, const AttentionShape& shape, DataType dtype, bool backward)
{
    NS_ASSERT_MSG(ShapeIndexOf(type) == IndexOf<AttentionShape>(),
                  ToString(type) << " does not have an attention shape");
    OperatorDesc d;
    d.type = type;
    d.dtype = dtype;
    d.backward = backward;
    d.shape = shape;
    return d;
}

OperatorDesc
MakeAttention(OpType type,
              uint64_t batch,
              uint64_t heads,
              uint64_t kvHeads,
              uint64_t headDim,
              uint64_t q,
              uint64_t kv,
              bool causal,
              DataType dtype)
{
    AttentionShape s;
    s.batch = batch;
    s.heads = heads;
    s.kvHeads = kvHeads;
    s.headDim = headDim;
    s.queryLen = q;
    s.kvLen = kv;
    s.causal = causal;
    return MakeAttention(type, s, dtype);
}

OperatorDesc
MakeOptimizer(uint64_t params, DataType dtype, DataType grads)
{
    OperatorDesc d;
    d.type = OpType::OPTIMIZER;
    d.dtype = dtype;
    d.shape = OptimizerShape{params, BytesOf(grads)};
    return d;
}

} // namespace rapidllm
} // namespace ns3
