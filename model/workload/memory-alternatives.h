/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_MEMORY_ALTERNATIVES_H
#define RAPIDLLM_MEMORY_ALTERNATIVES_H

#include "memory-model.h"

#include <string>
#include <vector>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief One change to a training job that does not fit, and the memory verdict it gives.
 */
struct MemoryAlternative
{
    std::string option;  //!< the command-line option that makes the change, e.g. "--zero=1"
    MemoryReport report; //!< the changed job's verdict
};

/**
 * \brief What a performance engineer tries first when a job does not fit, one change at a time,
 * the rest of the job as given. Training: ZeRO-1 and ZeRO-3 (FSDP) where data parallelism
 * shards, selective and full recomputation, a micro-batch of one. Inference: the largest batch
 * that fits, twice the tensor or pipeline parallelism, 8-bit weights (fp8 where the GPU has an
 * fp8 rate, else int8) or int4 weights, an fp8 KV cache. A change the job's settings reject
 * (e.g. ZeRO-3 with Megatron-LM's layout, a tp the heads do not divide) is left out.
 * \param model the model \param run the job \param gpu the GPU
 * \return the changes with their verdicts, in that order; none for a job that fits
 */
std::vector<MemoryAlternative> MemoryAlternatives(const ModelSpec& model,
                                                  const RunSpec& run,
                                                  const GpuSpec& gpu);

/**
 * \brief Inference: the largest batch of the job's request (prompt + generated tokens each)
 * that fits in the GPU's memory, the rest as given; what a serving replica's KV cache holds at
 * once, the question a serving engineer asks first. Memory grows with the batch, so a search
 * over the batch finds it (no graph is built), from the fewest requests the job allows: one for
 * each batch in flight (`inflight_batches`).
 * \param model the model \param run the job (inference) \param gpu the GPU
 * \return the batch; 0 when even the fewest do not fit, and for training
 */
uint32_t LargestFittingBatch(const ModelSpec& model, const RunSpec& run, const GpuSpec& gpu);

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_MEMORY_ALTERNATIVES_H
