/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_WORKLOAD_SIZE_H
#define RAPIDLLM_WORKLOAD_SIZE_H

#include "ns3/model-spec.h"
#include "ns3/run-spec.h"

#include <cstdint>
#include <string>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief What building a job's graphs would take, estimated before building them, so that a
 * request too large for this machine is refused up front with its size rather than failing
 * with std::bad_alloc after minutes.
 */
struct WorkloadSize
{
    uint64_t nodes = 0;         //!< nodes of all stage graphs together
    uint64_t largestStage = 0;  //!< nodes of the largest stage graph
    uint64_t bucketNodes = 0;   //!< of the nodes, training's gradient buckets
    double hostBytes = 0;       //!< host memory those nodes take through a replay (estimate)
    double largestTensor = 0;   //!< bytes of the largest tensor on one GPU
    double attentionScores = 0; //!< elements of one rank's attention matrix (batch x heads x s^2)
};

/**
 * \brief The default host memory a job's graphs may take through a replay: 5 GiB, so that a job
 * runs on a laptop or beside another on a shared machine.
 */
constexpr double kDefaultWorkloadHostGiB = 5.0;

/**
 * \brief Host bytes per node through a replay (work graph, trace and replay state), for the
 * estimate and the limit: `rapid-llm run`'s peak resident memory over its estimated nodes on
 * long decodes (Llama-2 70B, TP8, 1,024 + 4,096 and + 8,192 tokens; Llama-2 7B, 128 + 16,000:
 * 253-264 bytes with a 120-byte work node and huge pages), rounded up.
 */
constexpr double kHostBytesPerNode = 264;

/**
 * \brief The host memory a job's graphs may take through a replay, in bytes: the ns-3 global
 * value `RapidLlmHostMemoryGiB` (default kDefaultWorkloadHostGiB), which a scenario sets with
 * GlobalValue::Bind or on its command line (--RapidLlmHostMemoryGiB=12) and the rapid-llm
 * command with --host-memory, to build longer jobs on a machine with more memory.
 * \return the budget in bytes
 */
double WorkloadHostBudget();

/**
 * \brief Graph nodes a build may create: WorkloadHostBudget() / kHostBytesPerNode (20.3 M at the
 * default 5 GiB). Large published jobs stay far below it: GPT 1T on 3072 GPUs (64 stages x 512
 * micro-batches x 2 layers) builds 3.6 M nodes.
 * \return the node limit
 */
uint64_t MaxWorkloadNodes();

/**
 * \brief Tensor bytes beyond which a job is refused as beyond any machine (1 EiB = 2^60): every
 * byte count of the model then stays far from 64-bit overflow.
 */
constexpr double kMaxTensorBytes = 1152921504606846976.0;

/**
 * \brief Attention-matrix elements beyond which costs lose integer precision (2^53, the
 * integers a double holds exactly); about a 10 M-token sequence per rank with 128 heads.
 */
constexpr double kMaxAttentionScores = 9007199254740992.0;

/**
 * \brief Counts the nodes the stage builders would emit: one layer's forward and backward pass
 * (or prefill and decode step) emitted for real into a scratch graph, times the layers and
 * micro-batches (or decode steps) of each stage, plus each pass's own nodes.
 * \param model the model
 * \param run the run settings (validated against the model)
 * \return the estimate
 */
WorkloadSize EstimateWorkloadSize(const ModelSpec& model, const RunSpec& run);

/**
 * \brief Refuses a job whose graphs or tensors would exceed the limits above: throws SpecError
 * naming \p source, the estimated size and the settings that drive it.
 * \param model the model
 * \param run the run settings (validated against the model)
 * \param source the name used in errors
 * \return the estimate (the builders reserve its largest stage)
 */
WorkloadSize CheckWorkloadSize(const ModelSpec& model,
                               const RunSpec& run,
                               const std::string& source);

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_WORKLOAD_SIZE_H
