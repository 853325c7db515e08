/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "compute-coster.h"

#include <vector>

namespace ns3 {
namespace rapidllm {

OperatorCost
CostOperator(GpuComputeModel& model, const OperatorDesc& op)
{
    const DataType dt = op.dtype;
    const uint32_t eb = BytesOf(dt);
    const double elements = double(op.m) * op.n;
    OperatorCost forward;
    switch (op.type)
    {
        case OpType::GEMM:
            return model.Gemm(op.m, op.n, op.k, dt, op.batch);
        case OpType::ATTENTION_FWD:
        case OpType::ATTENTION_BWD:
        {
            AttentionShape shape;
            shape.batch = op.m;
            shape.heads = op.n;
            shape.kvHeads = op.k;
            shape.headDim = op.batch;
            shape.queryLen = op.q;
            shape.kvLen = op.kv;
            shape.causal = op.causal;
            return op.type == OpType::ATTENTION_FWD ? model.AttentionForward(shape, dt)
                                                    : model.AttentionBackward(shape, dt);
        }
        case OpType::ATTENTION_SCORES:
        {
            AttentionShape shape;
            shape.batch = op.m;
            shape.heads = op.n;
            shape.kvHeads = op.k;
            shape.headDim = op.batch;
            shape.queryLen = op.q;
            shape.kvLen = op.kv;
            shape.causal = op.causal;
            shape.dropout = op.dropout;
            return op.backward ? model.UnfusedAttentionBackward(shape, dt)
                               : model.UnfusedAttentionForward(shape, dt);
        }
        case OpType::DECODE_ATTENTION:
            return model.DecodeAttention(op.m, op.n, op.k, op.kv, op.batch, dt);
        case OpType::DECODE_ATTENTION_PER_HEAD:
            return model.DecodeAttentionPerHead(op.m, op.n, op.k, op.kv, op.batch, dt);
        case OpType::LAYER_NORM:
            forward = model.LayerNorm(op.m, op.n, dt);
            break;
        case OpType::RMS_NORM:
            forward = model.RmsNorm(op.m, op.n, dt);
            break;
        case OpType::GELU:
            forward = model.Gelu(op.m * op.n, dt);
            break;
        case OpType::SWIGLU:
            forward = model.SwiGlu(op.m, op.n, dt);
            break;
        case OpType::ROPE:
            forward = model.Rope(op.m, op.n, op.k, op.batch, dt);
            break;
        case OpType::RESIDUAL_ADD:
            forward = model.ResidualAdd(op.m * op.n, dt);
            break;
        case OpType::EMBEDDING:
            forward = model.EmbeddingLookup(op.m, op.n, dt);
            if (op.backward)
            {
                // Scatter-add of the gradient rows into the fp32 gradient table.
                return model.Elementwise(
                    "embedding_bwd", elements, elements * (eb + 4), elements * 4);
            }
            return forward;
        case OpType::CROSS_ENTROPY:
        {
            // Megatron-LM's vocabulary-parallel cross-entropy (mpu/cross_entropy.py), unfused:
            // the logits cast to fp32, then row max, subtract, exp, row sum and divide, each a
            // pass over the fp32 logits; the softmax stays for the backward, which scales it by
            // the loss gradient and casts the result back.
            const double rows = double(op.m);
            if (op.backward)
            {
                return Sequential(
                    "cross_entropy_bwd",
                    {model.Elementwise("loss_grad_scale", elements, 4 * elements, 4 * elements),
                     model.Elementwise("loss_grad_cast", elements, 4 * elements, eb * elements)});
            }
            return Sequential(
                "cross_entropy",
                {model.Elementwise("logits_to_fp32", elements, eb * elements, 4 * elements),
                 model.Elementwise("logits_max", elements, 4 * elements, 4 * rows),
                 model.Elementwise("logits_sub_max", elements, 4 * elements, 4 * elements),
                 model.Elementwise("logits_exp", 8 * elements, 4 * elements, 4 * elements),
                 model.Elementwise("logits_sum", elements, 4 * elements, 4 * rows),
                 model.Elementwise("softmax_div", elements, 4 * elements, 4 * elements)});
        }
        case OpType::SAMPLING:
            return model.CrossEntropy(op.m, op.n, dt);
        case OpType::ROUTER:
            forward = model.Softmax(op.m, op.n, dt);
            break;
        case OpType::OPTIMIZER:
        {
            // Adam on fp32 master weights. With 16-bit training, Megatron-LM's mixed-precision
            // optimizer first copies the gradients to fp32, unscales them and checks for
            // inf/NaN (fp16 loss scaling only) and takes their norm for clipping; Adam then
            // writes the 16-bit weights back.
            const double p = double(op.m);
            std::vector<OperatorCost> parts;
            if (eb < 4)
            {
                parts.push_back(model.Elementwise("main_grad_copy", p, eb * p, 4 * p));
                if (dt == DataType::FP16)
                {
                    parts.push_back(model.Elementwise("unscale_check", 2 * p, 4 * p, 4 * p));
                }
                parts.push_back(model.Elementwise("grad_norm", 2 * p, 4 * p, 0));
            }
            parts.push_back(model.AdamUpdate(op.m, dt, DataType::FP32));
            return Sequential("optimizer", parts);
        }
    }
    if (!op.backward)
    {
        return forward;
    }
    const double touched =
        op.type == OpType::ROPE ? double(op.m) * (op.n + op.k) * op.batch : elements;
    return model.ElementwiseBackward(forward, touched, dt);
}

OperatorCoster
MakeComputeCoster(Ptr<GpuComputeModel> model)
{
    return [model](const OperatorDesc& op)
    {
        return CostOperator(*model, op);
    };
}

} // namespace rapidllm
} // namespace ns3
