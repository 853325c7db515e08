/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_COMPUTE_COSTER_H
#define RAPIDLLM_COMPUTE_COSTER_H

#include "ns3/gpu-compute-model.h"
#include "ns3/ptr.h"
#include "workload.h"

namespace ns3 {
namespace rapidllm {

/**
 * \brief Costs the workload's operators with the tile-based compute model of one GPU.
 *
 * Operators the compute model has no single kernel for are composed from its kernels:
 * unfused attention is two batched GEMMs around a softmax and dropout; an element-wise backward
 * kernel reads the saved input and the incoming gradient and writes one gradient.
 * \param model the compute model (shared: its memo serves every call)
 * \return the coster
 */
OperatorCoster MakeComputeCoster(Ptr<GpuComputeModel> model);

/**
 * \brief An internal check that a kernel is no faster than its roofline: its time at least its
 * FLOPs at the GPU's peak for its type (GpuSpec::PeakFlops) and its device-memory bytes at the
 * full HBM bandwidth. Throws Error naming the operator otherwise (a bug in a kernel model, or
 * shapes out of range). MakeComputeCoster applies it to every operator it costs.
 * \param gpu the GPU
 * \param op the operator
 * \param cost its cost
 */
void CheckRoofline(const GpuSpec& gpu, const OperatorDesc& op, const OperatorCost& cost);

/**
 * \brief How much of an operator's time scales with the SMs it gets: its time with one SM in
 * eight held by another kernel (at the same clock), against the whole GPU's, as the share f of
 * t(S') = t (1 - f + f S / S') in [0, 1]. NCCL's CTAs take whole SMs from the kernels they
 * overlap (one CTA per channel, with 82 KB of shared memory and 640 x 96 registers: NCCL
 * 2.21.5, device.h; NVIDIA/nccl issue 689), so a replay slows the kernels that run beside a
 * collective by this share (TraceReplayer's SmCount). 0 for a kernel already confined to the
 * SMs a communication kernel leaves it (OperatorDesc::reservedSms).
 * \param model the compute model \param op the operator \param cost its cost on the whole GPU
 * \return the share
 */
double SmScaling(GpuComputeModel& model, const OperatorDesc& op, const OperatorCost& cost);

/**
 * \brief Costs one operator with the compute model.
 * \param model the compute model
 * \param op the operator
 * \return its cost
 */
OperatorCost CostOperator(GpuComputeModel& model, const OperatorDesc& op);

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_COMPUTE_COSTER_H
