/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "operator-desc.h"

#include <sstream>

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
        case OpType::SWIGLU:
            return "swiglu";
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
    }
    return "?";
}

double
OperatorDesc::ModelFlops() const
{
    switch (type)
    {
        case OpType::GEMM:
            return 2.0 * m * n * k * batch;
        case OpType::ATTENTION_FWD:
        case OpType::ATTENTION_SCORES:
        case OpType::DECODE_ATTENTION:
        case OpType::DECODE_ATTENTION_PER_HEAD:
            // Q K^T and P V: 2 x (2 q kv d) per head, the full matrix as the papers count it; the
            // backward pass does twice the forward's matrix multiplies.
            return (backward ? 8.0 : 4.0) * m * n * batch * q * kv;
        case OpType::ATTENTION_BWD:
            // Twice the forward's matrix multiplies (input and "weight" gradients of both).
            return 8.0 * m * n * batch * q * kv;
        default:
            return 0.0;
    }
}

std::string
OperatorDesc::Key() const
{
    std::ostringstream os;
    os << static_cast<int>(type) << ':' << static_cast<int>(dtype) << ':' << backward << ':' << m
       << ':' << n << ':' << k << ':' << batch << ':' << q << ':' << kv << ':' << causal << ':'
       << dropout;
    return os.str();
}

OperatorDesc
MakeGemm(uint64_t m, uint64_t n, uint64_t k, DataType dtype, uint64_t batch)
{
    OperatorDesc d;
    d.type = OpType::GEMM;
    d.dtype = dtype;
    d.m = m;
    d.n = n;
    d.k = k;
    d.batch = batch;
    return d;
}

OperatorDesc
MakeElementwise(OpType type, uint64_t rows, uint64_t width, DataType dtype, bool backward)
{
    OperatorDesc d;
    d.type = type;
    d.dtype = dtype;
    d.m = rows;
    d.n = width;
    d.backward = backward;
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
    OperatorDesc d = MakeElementwise(OpType::ROPE, tokens, heads, dtype, backward);
    d.k = kvHeads;
    d.batch = headDim;
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
    OperatorDesc d;
    d.type = type;
    d.dtype = dtype;
    d.m = batch;
    d.n = heads;
    d.k = kvHeads;
    d.batch = headDim;
    d.q = q;
    d.kv = kv;
    d.causal = causal;
    return d;
}

} // namespace rapidllm
} // namespace ns3
