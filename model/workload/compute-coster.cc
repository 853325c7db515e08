/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "compute-coster.h"

#include "ns3/log.h"
#include "ns3/rapidllm-error.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <vector>

namespace ns3 {
namespace rapidllm {

NS_LOG_COMPONENT_DEFINE("RapidLlmComputeCoster");

namespace {

/**
 * Megatron-LM's vocabulary-parallel cross-entropy (mpu/cross_entropy.py), unfused: the logits
 * cast to fp32, then row max, subtract, exp, row sum and divide, each a pass over the fp32
 * logits; the softmax stays for the backward, which scales it by the loss gradient and casts
 * the result back.
 */
OperatorCost
CrossEntropy(GpuComputeModel& model, const ElementwiseShape& s, DataType dt, bool backward)
{
    const uint32_t eb = BytesOf(dt);
    const double elements = double(s.rows) * s.width;
    const double rows = double(s.rows);
    if (backward)
    {
        return Sequential(
            "cross_entropy_bwd",
            {model.Elementwise("loss_grad_scale", elements, 4 * elements, 4 * elements),
             model.Elementwise("loss_grad_cast", elements, 4 * elements, eb * elements)});
    }
    return Sequential("cross_entropy",
                      {model.Elementwise("logits_to_fp32", elements, eb * elements, 4 * elements),
                       model.Elementwise("logits_max", elements, 4 * elements, 4 * rows),
                       model.Elementwise("logits_sub_max", elements, 4 * elements, 4 * elements),
                       model.Elementwise("logits_exp", 8 * elements, 4 * elements, 4 * elements),
                       model.Elementwise("logits_sum", elements, 4 * elements, 4 * rows),
                       model.Elementwise("softmax_div", elements, 4 * elements, 4 * elements)});
}

/**
 * Adam on fp32 master weights. With 16-bit training, Megatron-LM's mixed-precision optimizer
 * first copies 16-bit gradients to fp32 (an fp32 gradient buffer is used as it is), unscales
 * them and checks for inf/NaN (fp16 loss scaling only) and takes their norm for clipping; Adam
 * then writes the 16-bit weights back.
 */
OperatorCost
Optimizer(GpuComputeModel& model, const OptimizerShape& s, DataType dt)
{
    const uint32_t eb = BytesOf(dt);
    const uint32_t gb = s.gradBytes > 0 ? s.gradBytes : eb;
    const double p = double(s.params);
    std::vector<OperatorCost> parts;
    if (eb < 4)
    {
        if (gb < 4)
        {
            parts.push_back(model.Elementwise("main_grad_copy", p, gb * p, 4 * p));
        }
        if (dt == DataType::FP16)
        {
            parts.push_back(model.Elementwise("unscale_check", 2 * p, 4 * p, 4 * p));
        }
        parts.push_back(model.Elementwise("grad_norm", 2 * p, 4 * p, 0));
    }
    parts.push_back(model.AdamUpdate(s.params, dt, DataType::FP32));
    return Sequential("optimizer", parts);
}

} // namespace

OperatorCost
CostOperator(GpuComputeModel& model, const OperatorDesc& op)
{
    if (op.reservedSms > 0)
    {
        // Runs on the SMs a concurrent communication kernel leaves it, at the clock the whole
        // GPU runs this kernel at: the kernel on the other SMs draws board power too (without
        // it, fewer SMs would leave power for a higher clock and could come out faster).
        OperatorDesc rest = op;
        rest.reservedSms = 0;
        const double clockHz = CostOperator(model, rest).clockHz;
        const uint32_t sms = model.GetGpu().smCount;
        return CostOperator(
            *model.WithSmCount(sms > op.reservedSms ? sms - op.reservedSms : 1, clockHz), rest);
    }
    const DataType dt = op.dtype;
    // Element-wise kernels: the forward kernel and the elements its backward touches.
    OperatorCost forward;
    double touched = 0;
    switch (op.type)
    {
        case OpType::GEMM:
        {
            const GemmShape& g = op.Gemm();
            return model.Gemm(g.m, g.n, g.k, dt, g.batch);
        }
        case OpType::ATTENTION_FWD:
            return model.AttentionForward(op.Attention(), dt);
        case OpType::ATTENTION_BWD:
            return model.AttentionBackward(op.Attention(), dt);
        case OpType::ATTENTION_SCORES:
            return op.backward ? model.UnfusedAttentionBackward(op.Attention(), dt)
                               : model.UnfusedAttentionForward(op.Attention(), dt);
        case OpType::DECODE_ATTENTION:
        case OpType::DECODE_ATTENTION_PER_HEAD:
        {
            const AttentionShape& a = op.Attention();
            const auto kernel = op.type == OpType::DECODE_ATTENTION
                                    ? &GpuComputeModel::DecodeAttention
                                    : &GpuComputeModel::DecodeAttentionPerHead;
            return (model.*kernel)(a.batch,
                                   a.heads,
                                   a.kvHeads,
                                   a.kvLen,
                                   a.headDim,
                                   dt,
                                   a.valueDim,
                                   a.latentKv,
                                   a.cacheBits);
        }
        case OpType::LAYER_NORM:
        {
            const ElementwiseShape& e = op.Elementwise();
            forward = model.LayerNorm(e.rows, e.width, dt);
            touched = double(e.rows) * e.width;
            break;
        }
        case OpType::RMS_NORM:
        {
            const ElementwiseShape& e = op.Elementwise();
            forward = model.RmsNorm(e.rows, e.width, dt);
            touched = double(e.rows) * e.width;
            break;
        }
        case OpType::GELU:
        {
            const ElementwiseShape& e = op.Elementwise();
            forward = model.Gelu(e.rows * e.width, dt);
            touched = double(e.rows) * e.width;
            break;
        }
        case OpType::SQUARED_RELU:
        {
            const ElementwiseShape& e = op.Elementwise();
            forward = model.SquaredRelu(e.rows * e.width, dt);
            touched = double(e.rows) * e.width;
            break;
        }
        case OpType::GEGLU:
        {
            const ElementwiseShape& e = op.Elementwise();
            forward = model.GeGlu(e.rows, e.width, dt);
            touched = double(e.rows) * e.width;
            break;
        }
        case OpType::SWIGLU:
        {
            const ElementwiseShape& e = op.Elementwise();
            forward = model.SwiGlu(e.rows, e.width, dt);
            touched = double(e.rows) * e.width;
            break;
        }
        case OpType::ROPE:
        {
            const RopeShape& r = op.Rope();
            forward = model.Rope(r.tokens, r.heads, r.kvHeads, r.headDim, dt);
            touched = double(r.tokens) * (r.heads + r.kvHeads) * r.headDim;
            break;
        }
        case OpType::RESIDUAL_ADD:
        {
            const ElementwiseShape& e = op.Elementwise();
            forward = model.ResidualAdd(e.rows * e.width, dt);
            touched = double(e.rows) * e.width;
            break;
        }
        case OpType::EMBEDDING:
        {
            const ElementwiseShape& e = op.Elementwise();
            OperatorCost lookup = model.EmbeddingLookup(e.rows, e.width, dt);
            if (op.backward)
            {
                // Scatter-add of the gradient rows into the fp32 gradient table.
                const double elements = double(e.rows) * e.width;
                const uint32_t eb = BytesOf(dt);
                return model.Elementwise(
                    "embedding_bwd", elements, elements * (eb + 4), elements * 4);
            }
            return lookup;
        }
        case OpType::CROSS_ENTROPY:
            return CrossEntropy(model, op.Elementwise(), dt, op.backward);
        case OpType::SAMPLING:
        {
            const ElementwiseShape& e = op.Elementwise();
            return model.CrossEntropy(e.rows, e.width, dt);
        }
        case OpType::ROUTER:
        {
            const ElementwiseShape& e = op.Elementwise();
            forward = model.Softmax(e.rows, e.width, dt);
            touched = double(e.rows) * e.width;
            break;
        }
        case OpType::OPTIMIZER:
            return Optimizer(model, op.Optimizer(), dt);
        case OpType::TENSOR_COPY:
        case OpType::TENSOR_FILL:
        {
            // Framework bookkeeping kernels (PyTorch copy_, cat, contiguous, zero_): no
            // arithmetic, the bytes moved. A backward-pass copy moves the same bytes.
            const ElementwiseShape& e = op.Elementwise();
            const double bytes = double(e.rows) * e.width * BytesOf(dt);
            return op.type == OpType::TENSOR_COPY
                       ? model.Elementwise("tensor_copy", 0, bytes, bytes)
                       : model.Elementwise("tensor_fill", 0, 0, bytes);
        }
        case OpType::MOE_UNPERMUTE:
        {
            // Reads each token's k expert rows and fp32 probabilities, writes its row. The
            // backward kernel reads the output gradient and the forward's expert rows (for the
            // probabilities' gradients) and writes the rows' and the probabilities' gradients.
            const GemmShape& g = op.Gemm();
            const double routed = double(g.batch) * g.k * g.n;
            const double tokens = double(g.batch) * g.n;
            const double probs = double(g.batch) * g.k * 4;
            const double eb = BytesOf(dt);
            return op.backward ? model.Elementwise("moe_unpermute_bwd",
                                                   2 * routed,
                                                   (tokens + routed) * eb + probs,
                                                   routed * eb + probs)
                               : model.Elementwise(
                                   "moe_unpermute", 2 * routed, routed * eb + probs, tokens * eb);
        }
        case OpType::FP8_CAST_TRANSPOSE:
        case OpType::FP8_AMAX_CAST_TRANSPOSE:
        {
            // Reads the 16-bit values once (scale, cast and the amax of delayed scaling in one
            // pass: ~3 FLOP per element) and writes two fp8 copies: rowwise and transposed.
            const ElementwiseShape& e = op.Elementwise();
            const double elements = double(e.rows) * e.width;
            OperatorCost cast = model.Elementwise(
                "fp8_cast_transpose", 3 * elements, elements * BytesOf(dt), 2 * elements);
            if (op.type == OpType::FP8_CAST_TRANSPOSE)
            {
                return cast;
            }
            // Current scaling needs the tensor's own amax before the scale is known: a
            // reduction kernel reads the values first (Transformer Engine, "FP8 Current
            // Scaling": "two tensor reads"), writing one fp32 amax.
            return Sequential(
                "fp8_amax_cast_transpose",
                {model.Elementwise("fp8_amax", elements, elements * BytesOf(dt), 4), cast});
        }
    }
    if (!op.backward)
    {
        return forward;
    }
    return model.ElementwiseBackward(forward, touched, dt);
}

void
CheckRoofline(const GpuSpec& gpu, const OperatorDesc& op, const OperatorCost& cost)
{
    const double peak = gpu.PeakFlops(op.dtype);
    const double compute = peak > 0 ? cost.flops / peak : 0;
    const double memory = gpu.hbmBandwidthBps > 0 ? cost.hbmBytes / gpu.hbmBandwidthBps : 0;
    const double roofline = std::max(compute, memory);
    if (!std::isfinite(cost.timeS) || cost.timeS < roofline * (1 - 1e-9))
    {
        std::ostringstream os;
        os.precision(4);
        os << "internal check failed: " << ToString(op.type) << (op.backward ? " backward" : "")
           << " (" << ToString(op.dtype) << ") costs " << cost.timeS
           << " s, faster than its roofline " << roofline << " s (" << cost.flops << " FLOPs at "
           << peak / 1e12 << " TFLOP/s, " << cost.hbmBytes << " bytes at "
           << gpu.hbmBandwidthBps / 1e9
           << " GB/s); this is a bug or an input beyond the model's range, please report it";
        throw InternalError(os.str());
    }
}

double
SmScaling(GpuComputeModel& model, const OperatorDesc& op, const OperatorCost& cost)
{
    const uint32_t sms = model.GetGpu().smCount;
    const uint32_t held = (sms + 7) / 8;
    if (op.reservedSms > 0 || sms < 2 || held > 255 || !(cost.timeS > 0))
    {
        return 0;
    }
    OperatorDesc fewer = op;
    fewer.reservedSms = static_cast<uint8_t>(held);
    const double slower = CostOperator(model, fewer).timeS / cost.timeS - 1;
    const double full = double(sms) / (sms - held) - 1;
    return std::clamp(slower / full, 0.0, 1.0);
}

OperatorCoster
MakeComputeCoster(Ptr<GpuComputeModel> model)
{
    return [model](const OperatorDesc& op)
    {
        OperatorCost cost = CostOperator(*model, op);
        CheckRoofline(model->GetGpu(), op, cost);
        cost.smScaling = SmScaling(*model, op, cost);
        NS_LOG_LOGIC(ToString(op.type) << (op.backward ? " backward " : " ") << ToString(op.dtype)
                                       << ": " << cost.kind << " " << cost.timeS << " s, "
                                       << cost.kernels << " kernels, " << cost.bound << " bound");
        return cost;
    };
}

} // namespace rapidllm
} // namespace ns3
