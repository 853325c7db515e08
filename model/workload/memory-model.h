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
    uint64_t parameters = 0;  //!< parameters of the stage on this rank, before any sharding
    uint64_t weights = 0;     //!< parameters in the compute type (ZeRO-3: this rank's shard)
    uint64_t gradients = 0;   //!< gradients (ZeRO-2/3: this rank's shard)
    uint64_t optimizer = 0;   //!< fp32 master weights, Adam's two moments and (Megatron-LM,
                              //!< fp16) fp32 main gradients (ZeRO-1 / distributed optimizer:
                              //!< this rank's shard)
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
    std::string memoryLayout; //!< training: "megatron", "deepspeed" or "apex" (resolved); else ""
    std::string assumption;   //!< the framework assumption, one sentence with its source
};

/**
 * \ingroup rapid-llm
 * \brief Bytes per parameter of the weights, gradients and optimizer state of a training job,
 * each before sharding, and the ZeRO stage from which each is sharded over data parallelism.
 */
struct ParameterBytes
{
    uint32_t weights = 2;    //!< the model's weights (16-bit: 2)
    uint32_t gradients = 2;  //!< the gradient buffer (Megatron-LM bf16: fp32 main gradients, 4)
    uint32_t optimizer = 12; //!< fp32 master weights, Adam moments (and fp32 main-gradient copy)
    uint32_t weightsShardedFrom = 3;   //!< ZeRO stage sharding the weights
    uint32_t gradientsShardedFrom = 2; //!< ZeRO stage sharding the gradients
};

/**
 * \brief The memory layout of \p run's framework (RunSpec::ResolvedMemoryLayout) for its
 * data type. Megatron-LM (docs/source/distrib_optimizer.md @40ce7c8, "bytes per parameter"):
 * fp16 weights with fp16 gradients 2 + 2 + 16 (main weights, main gradients, two moments),
 * bf16 weights with fp32 main gradients 2 + 4 + 12, fp32 4 + 4 + 8; its distributed optimizer
 * shards the last term. DeepSpeed ZeRO / PyTorch FSDP (Rajbhandari et al. 2020, Sec. 3.1):
 * 16-bit 2 + 2 + 12, fp32 4 + 4 + 8, sharded by the ZeRO stage. NeMo 1.0's distributed_fused_adam
 * (Apex DistributedFusedAdam, NeMo setup_optimization): bf16 2 + 4 + 10 (fp32 gradient buffer;
 * fp32 moments and a 16-bit remainder of the fp32 master weights, sharded), fp16 2 + 4 + 12,
 * fp32 4 + 4 + 8. FP8 and INT8 training keep 16-bit weights (Transformer Engine casts them per
 * GEMM).
 * \param run the run settings
 * \return the bytes per parameter
 */
ParameterBytes ParameterBytesOf(const RunSpec& run);

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
 * \brief Weights, gradients and optimizer state as the framework lays them out (ParameterBytesOf),
 * sharded by the ZeRO stage (expert parameters over the expert data-parallel group, dp / ep);
 * activations from the liveness traversal of each stage's schedule, the KV cache for inference,
 * and the framework overhead. The job is infeasible when any rank's peak exceeds the GPU's
 * memory; the report states the layout and its assumption.
 * \param workload the job
 * \param gpu the GPU
 * \return the report
 */
MemoryReport AnalyzeMemory(const Workload& workload, const GpuSpec& gpu);

/**
 * \brief AnalyzeMemory of the job \p run of \p model, building its schedule only where the
 * liveness traversal needs one (training): inference memory is per stage (weights, KV cache,
 * the prefill's widest activation), and a long generation's graph would cost more than the rest.
 * \param model the model
 * \param run the run settings; validated against the model here (throws SpecError)
 * \param gpu the GPU
 * \return the report
 */
MemoryReport AnalyzeMemory(const ModelSpec& model, const RunSpec& run, const GpuSpec& gpu);

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_MEMORY_MODEL_H
