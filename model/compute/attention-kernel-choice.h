/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_ATTENTION_KERNEL_CHOICE_H
#define RAPIDLLM_ATTENTION_KERNEL_CHOICE_H

#include "attention-shape.h"
#include "ns3/gpu-spec.h"
#include "ns3/run-spec.h"

#include <string>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \return the fused attention kernel a run's setting names (RunSpec::fusedAttention); AUTO is
 * left for ResolveAttentionKernel
 */
AttentionKernel AttentionKernelOf(FusedAttention setting);

/**
 * \ingroup rapid-llm
 * \return the fused attention kernel \p run's attention uses: its setting's, or with unfused
 * attention (which ring attention, cp > 1, still runs fused) the GPU's own (AUTO)
 */
AttentionKernel AttentionKernelOf(const RunSpec& run);

/**
 * \ingroup rapid-llm
 * \brief The kernel that runs on \p g at \p type for head dimension \p headDim: \p kernel, or
 * for AUTO the GPU's own, the Hopper kernel where it has warp-specialized warpgroup MMAs and a
 * special-function rate (what Transformer Engine's cuDNN attention, FlashAttention-3, SGLang and
 * vLLM run on Hopper), the type is a 16- or 8-bit one (FlashAttention-3 takes fp16, bf16 and
 * fp8) and both passes have a tiling for the head dimension in its shared memory and registers
 * (kernel::HopperAttentionFits), else FlashAttention-2.
 */
AttentionKernel ResolveAttentionKernel(const GpuSpec& g,
                                       AttentionKernel kernel,
                                       DataType type,
                                       uint64_t headDim);

/**
 * \ingroup rapid-llm
 * \return the --attention value that names \p kernel (flash, flash3, triton2022; auto unresolved)
 */
std::string AttentionKernelName(AttentionKernel kernel);

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_ATTENTION_KERNEL_CHOICE_H
