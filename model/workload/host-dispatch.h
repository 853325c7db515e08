/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_HOST_DISPATCH_H
#define RAPIDLLM_HOST_DISPATCH_H

#include "ns3/host-spec.h"
#include "workload-graph.h"
#include "workload.h"

#include <cstdint>

namespace ns3 {
namespace rapidllm {

/**
 * \brief The framework ops eager PyTorch runs for one node, as Hugging Face transformers'
 * Llama code writes them (4.31, the version of the ML.ENERGY 2023 runs; counted from
 * models/llama/modeling_llama.py and generation/utils.py): RMSNorm 8 (to fp32, pow, mean,
 * add eps, rsqrt, mul, to fp16, mul weight), rotary 14, decode attention 9 (two KV-cache
 * concatenations, matmul, scale, mask, softmax, cast, matmul, transpose copy), a fused QKV
 * projection 3 (q, k, v), a fused gated up projection 2 (gate, up), SwiGLU 2 (SiLU, mul),
 * squared ReLU 2 (relu, square: transformers' ReLUSquaredActivation),
 * sampling 20 (logits processors, softmax, multinomial and the loop's bookkeeping), every other
 * operator 1 op, a collective or transfer 1 call.
 * \param g the node's graph \param n the node \param gated whether the model's MLP is gated
 * (SwiGLU, GeGLU)
 * \return the ops
 */
uint32_t EagerOpsOf(const StageGraph& g, const WorkNode& n, bool gated);

/**
 * \brief Sets every node's host time (WorkNode::hostS) and host waits (WorkNode::hostSync)
 * from the run's dispatch mode (RunSpec::ResolvedDispatch) and the GPU's host costs.
 *
 * The host issues nodes in program order. Per node it spends: eager, EagerOpsOf() x
 * HostSpec::eagerOpS; engine, kernels x HostSpec::launchS (a collective or transfer one
 * launch); graphs, nothing per node but HostSpec::graphLaunchS at the start of each step;
 * none, nothing. In inference the host waits for each step's sampling node (the token is read
 * back before the next step is issued) and then spends HostSpec::stepSyncS plus the engine's
 * per-iteration time (HostSpec::IterationS) before the next step's first node; the first step
 * starts with the engine's per-iteration time. With dispatch none or a GPU without host costs
 * nothing changes.
 * \param w the workload (costed) \param host the GPU's host costs
 */
void ApplyHostDispatch(Workload& w, const HostSpec& host);

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_HOST_DISPATCH_H
