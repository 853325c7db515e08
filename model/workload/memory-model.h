/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_MEMORY_MODEL_H
#define RAPIDLLM_MEMORY_MODEL_H

#include "ns3/gpu-spec.h"
#include "workload.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief Device memory of one rank at its peak, by category.
 */
struct RankMemory
{
    uint32_t stage = 0;       //!< pipeline stage (every rank of a stage is alike)
    uint64_t weights = 0;     //!< parameters in the compute type (ZeRO-3: this rank's shard)
    uint64_t gradients = 0;   //!< gradients (ZeRO-2/3: this rank's shard)
    uint64_t optimizer = 0;   //!< fp32 master weights and Adam's two moments (ZeRO-1+: shard)
    uint64_t activations = 0; //!< activations at the traversal's peak
    uint64_t kvCache = 0;     //!< inference: K and V of every token of every sequence
    uint64_t framework = 0;   //!< CUDA context, library workspaces, allocator slack
    uint64_t peak = 0;        //!< the sum: the rank's peak device memory
};

/**
 * \ingroup rapid-llm
 * \brief The memory-feasibility verdict of a job.
 */
struct MemoryReport
{
    bool feasible = true;           //!< peak <= capacity on every rank
    std::string reason;             //!< why not, when infeasible
    uint64_t capacity = 0;          //!< device memory per GPU
    RankMemory worst;               //!< the rank with the highest peak
    std::vector<RankMemory> stages; //!< per pipeline stage
};

/**
 * \brief Device memory reserved outside the model's tensors: CUDA context, cuBLAS and NCCL
 * workspaces and caching-allocator slack. A stated constant (PyTorch's CUDA context alone takes
 * 0.3-0.5 GiB; NCCL's buffers about 0.3 GiB per communicator), not a fitted value.
 */
constexpr uint64_t kFrameworkOverheadBytes = 1ull << 30;

/**
 * \brief The activation bytes alive at the peak of a walk over \p graph in program order:
 * each node's allocation change applies after it, its transient bytes while it runs.
 * \param graph a stage graph
 * \return the peak bytes
 */
uint64_t PeakActivationBytes(const StageGraph& graph);

/**
 * \brief Weights, gradients and optimizer state sharded by the ZeRO stage, activations from the
 * liveness traversal of each stage's schedule, the KV cache for inference, and the framework
 * overhead; the job is infeasible when any rank's peak exceeds the GPU's memory.
 * \param workload the job
 * \param gpu the GPU
 * \return the report
 */
MemoryReport AnalyzeMemory(const Workload& workload, const GpuSpec& gpu);

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_MEMORY_MODEL_H
