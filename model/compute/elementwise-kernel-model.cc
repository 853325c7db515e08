/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "elementwise-kernel-model.h"

#include "gpu-kernel-common.h"

#include <algorithm>

namespace ns3 {
namespace rapidllm {
namespace kernel {

OperatorCost
Roofline(
    const GpuSpec& g, const std::string& kind, double flops, double bytesRead, double bytesWritten)
{
    OperatorCost c;
    c.kind = kind;
    c.flops = flops;
    double vector = g.VectorFlops(DataType::FP32);
    c.computeTimeS = vector > 0 ? flops / (vector * g.efficiency.vector) : 0.0;
    c.hbmBytes = bytesRead + bytesWritten;
    c.l2Bytes = c.hbmBytes;
    c.hbmTimeS = c.hbmBytes / (g.hbmBandwidthBps * g.efficiency.hbm);
    c.l2TimeS = c.l2Bytes / (g.l2BandwidthBps * g.efficiency.l2);
    c.overheadTimeS = g.launchOverheadS + g.memoryLatencyS;
    c.timeS = c.overheadTimeS + std::max({c.computeTimeS, c.hbmTimeS, c.l2TimeS});
    c.utilization = vector > 0 ? flops / c.timeS / vector : 0.0;
    c.tensorCores = false;
    c.smUtilization = 1.0;
    ApplyBound(c);
    return c;
}

OperatorCost
LayerNormKernel(const GpuSpec& g, uint64_t tokens, uint64_t hidden, DataType type)
{
    double e = double(tokens) * hidden;
    double b = BytesOf(type);
    // mean, variance (two passes in registers), normalize, scale and shift: ~8 FLOP/element.
    return Roofline(g, "layernorm", 8 * e, e * b + 2.0 * hidden * b, e * b + tokens * 8.0);
}

OperatorCost
RmsNormKernel(const GpuSpec& g, uint64_t tokens, uint64_t hidden, DataType type)
{
    double e = double(tokens) * hidden;
    double b = BytesOf(type);
    // sum of squares, rsqrt, normalize, scale: ~5 FLOP/element.
    return Roofline(g, "rmsnorm", 5 * e, e * b + hidden * b, e * b + tokens * 4.0);
}

OperatorCost
SoftmaxKernel(const GpuSpec& g, uint64_t rows, uint64_t cols, DataType type)
{
    double e = double(rows) * cols;
    double b = BytesOf(type);
    // max, subtract, exp (counted as ~8 FLOP on the special-function unit), sum, divide.
    return Roofline(g, "softmax", 12 * e, e * b, e * b);
}

OperatorCost
GeluKernel(const GpuSpec& g, uint64_t elements, DataType type)
{
    double e = double(elements);
    double b = BytesOf(type);
    // tanh approximation: x^3, two FMAs, tanh (~8), multiply and add: ~14 FLOP/element.
    return Roofline(g, "gelu", 14 * e, e * b, e * b);
}

OperatorCost
SquaredReluKernel(const GpuSpec& g, uint64_t elements, DataType type)
{
    double e = double(elements);
    double b = BytesOf(type);
    // max(x, 0), then its square: 2 FLOP/element.
    return Roofline(g, "squared_relu", 2 * e, e * b, e * b);
}

OperatorCost
GeGluKernel(const GpuSpec& g, uint64_t tokens, uint64_t ffnHidden, DataType type)
{
    double e = double(tokens) * ffnHidden;
    double b = BytesOf(type);
    // gelu(gate) (tanh form, ~14 FLOP as GeluKernel) times up: ~15 FLOP.
    return Roofline(g, "geglu", 15 * e, 2 * e * b, e * b);
}

OperatorCost
SwiGluKernel(const GpuSpec& g, uint64_t tokens, uint64_t ffnHidden, DataType type)
{
    double e = double(tokens) * ffnHidden;
    double b = BytesOf(type);
    // silu(gate) = gate * sigmoid(gate) (exp ~8, add, divide, multiply) times up: ~12 FLOP.
    return Roofline(g, "swiglu", 12 * e, 2 * e * b, e * b);
}

OperatorCost
RopeKernel(const GpuSpec& g,
           uint64_t tokens,
           uint64_t heads,
           uint64_t kvHeads,
           uint64_t headDim,
           DataType type)
{
    double e = double(tokens) * (heads + kvHeads) * headDim;
    double b = BytesOf(type);
    // each element: two multiplies and an add with the rotated partner; cos/sin table read.
    double table = double(tokens) * headDim * 4.0;
    return Roofline(g, "rope", 3 * e, e * b + table, e * b);
}

OperatorCost
ResidualAddKernel(const GpuSpec& g, uint64_t elements, DataType type)
{
    double e = double(elements);
    double b = BytesOf(type);
    return Roofline(g, "residual_add", e, 2 * e * b, e * b);
}

OperatorCost
EmbeddingLookupKernel(const GpuSpec& g, uint64_t tokens, uint64_t hidden, DataType type)
{
    double e = double(tokens) * hidden;
    double b = BytesOf(type);
    return Roofline(g, "embedding", 0, e * b + tokens * 8.0, e * b);
}

OperatorCost
CrossEntropyKernel(const GpuSpec& g, uint64_t tokens, uint64_t vocab, DataType type)
{
    double e = double(tokens) * vocab;
    double b = BytesOf(type);
    // fused: read the logits, softmax statistics, loss, and write the logits' gradient.
    return Roofline(g, "cross_entropy", 14 * e, e * b + tokens * 8.0, e * b + tokens * 4.0);
}

OperatorCost
AdamUpdateKernel(const GpuSpec& g, uint64_t params, DataType paramType, DataType gradType)
{
    double p = double(params);
    // fp32 master weight, first and second moments read and written; gradient read; the
    // compute copy of the weight written. ~12 FLOP per parameter (moments, bias correction,
    // sqrt, divide, weight decay).
    double read = p * (3 * 4.0 + BytesOf(gradType));
    double written = p * (3 * 4.0 + BytesOf(paramType));
    return Roofline(g, "adam", 12 * p, read, written);
}

OperatorCost
ElementwiseBackwardKernel(const GpuSpec& g,
                          const OperatorCost& forward,
                          double elements,
                          DataType type)
{
    const uint32_t bytes = BytesOf(type);
    return Roofline(
        g, forward.kind + "_bwd", 2 * forward.flops, 2 * elements * bytes, elements * bytes);
}

} // namespace kernel
} // namespace rapidllm
} // namespace ns3
