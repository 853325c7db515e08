/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "attention-kernel-choice.h"

#include "hopper-attention-kernel-model.h"

namespace ns3 {
namespace rapidllm {

AttentionKernel
AttentionKernelOf(FusedAttention setting)
{
    switch (setting)
    {
        case FusedAttention::FLASH2:
            return AttentionKernel::FLASH2;
        case FusedAttention::TRITON2022:
            return AttentionKernel::TRITON2022;
        case FusedAttention::FLASH3:
            return AttentionKernel::HOPPER;
        default:
            return AttentionKernel::AUTO;
    }
}

AttentionKernel
AttentionKernelOf(const RunSpec& run)
{
    return AttentionKernelOf(run.flashAttention ? run.fusedAttention : FusedAttention::AUTO);
}

AttentionKernel
ResolveAttentionKernel(const GpuSpec& g, AttentionKernel kernel, DataType type, uint64_t headDim)
{
    if (kernel != AttentionKernel::AUTO)
    {
        return kernel;
    }
    const bool narrow = type != DataType::FP32 && type != DataType::TF32;
    return g.warpSpecialized && g.sfuOpsPerClockPerSm > 0 && narrow
                   && kernel::HopperAttentionFits(g, headDim, type)
               ? AttentionKernel::HOPPER
               : AttentionKernel::FLASH2;
}

std::string
AttentionKernelName(AttentionKernel kernel)
{
    switch (kernel)
    {
        case AttentionKernel::FLASH2:
            return "flash";
        case AttentionKernel::TRITON2022:
            return "triton2022";
        case AttentionKernel::HOPPER:
            return "flash3";
        default:
            return "auto";
    }
}

} // namespace rapidllm
} // namespace ns3
