/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_ELEMENTWISE_KERNEL_MODEL_H
#define RAPIDLLM_ELEMENTWISE_KERNEL_MODEL_H

#include "ns3/data-type.h"
#include "ns3/gpu-spec.h"
#include "operator-cost.h"

#include <cstdint>
#include <string>

namespace ns3 {
namespace rapidllm {
namespace kernel {

/**
 * \ingroup rapid-llm
 * \brief A roofline kernel on the CUDA cores: max(fp32 vector time, HBM time, L2 time) plus the
 * launch overhead and one memory latency.
 * \param g the GPU
 * \param kind the operator name for reports
 * \param flops arithmetic (FP32 on CUDA cores)
 * \param bytesRead bytes read from device memory
 * \param bytesWritten bytes written
 * \return the cost
 */
OperatorCost Roofline(
    const GpuSpec& g, const std::string& kind, double flops, double bytesRead, double bytesWritten);

/**
 * \name The element-wise and normalization kernels of an LLM, each a Roofline with its FLOPs
 * and bytes per element. The caller has checked the shape.
 * @{
 */
/** \return LayerNorm forward over \p tokens x \p hidden (mean, variance, scale, shift) */
OperatorCost LayerNormKernel(const GpuSpec& g, uint64_t tokens, uint64_t hidden, DataType type);
/** \return RMSNorm forward over \p tokens x \p hidden */
OperatorCost RmsNormKernel(const GpuSpec& g, uint64_t tokens, uint64_t hidden, DataType type);
/** \return a row softmax over \p rows x \p cols */
OperatorCost SoftmaxKernel(const GpuSpec& g, uint64_t rows, uint64_t cols, DataType type);
/** \return GELU (tanh form) over \p elements */
OperatorCost GeluKernel(const GpuSpec& g, uint64_t elements, DataType type);
/** \return squared ReLU, relu(x)^2, over \p elements */
OperatorCost SquaredReluKernel(const GpuSpec& g, uint64_t elements, DataType type);
/** \return GeGLU: gelu(gate) * up over \p tokens x \p ffnHidden outputs */
OperatorCost GeGluKernel(const GpuSpec& g, uint64_t tokens, uint64_t ffnHidden, DataType type);
/** \return SwiGLU: silu(gate) * up over \p tokens x \p ffnHidden outputs */
OperatorCost SwiGluKernel(const GpuSpec& g, uint64_t tokens, uint64_t ffnHidden, DataType type);
/** \return rotary embedding of the query and key heads of \p tokens tokens */
OperatorCost RopeKernel(const GpuSpec& g,
                        uint64_t tokens,
                        uint64_t heads,
                        uint64_t kvHeads,
                        uint64_t headDim,
                        DataType type);
/** \return a residual add of \p elements */
OperatorCost ResidualAddKernel(const GpuSpec& g, uint64_t elements, DataType type);
/** \return gathering \p tokens rows of a \p hidden wide embedding table */
OperatorCost EmbeddingLookupKernel(const GpuSpec& g,
                                   uint64_t tokens,
                                   uint64_t hidden,
                                   DataType type);
/** \return one fused softmax-with-loss pass over \p tokens x \p vocab logits */
OperatorCost CrossEntropyKernel(const GpuSpec& g, uint64_t tokens, uint64_t vocab, DataType type);
/** \return a mixed-precision Adam step over \p params parameters (fp32 master weights) */
OperatorCost AdamUpdateKernel(const GpuSpec& g,
                              uint64_t params,
                              DataType paramType,
                              DataType gradType);
/**
 * \return the backward of the element-wise kernel \p forward over \p elements: reads the saved
 * input and the incoming gradient, writes the input gradient, with twice the forward's
 * arithmetic; named forward.kind + "_bwd"
 */
OperatorCost ElementwiseBackwardKernel(const GpuSpec& g,
                                       const OperatorCost& forward,
                                       double elements,
                                       DataType type);
/** @} */

} // namespace kernel
} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_ELEMENTWISE_KERNEL_MODEL_H
