/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_PIPELINE_SCHEDULE_H
#define RAPIDLLM_PIPELINE_SCHEDULE_H

#include <cstdint>
#include <vector>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief One step of a pipeline rank's program: the forward or backward pass of one
 * micro-batch through one of the rank's model chunks.
 */
struct ScheduleStep
{
    bool forward = true;     //!< forward or backward
    uint32_t microBatch = 0; //!< micro-batch index
    uint32_t chunk = 0;      //!< model chunk on this rank (0 without interleaving)
};

/**
 * \brief The order in which one pipeline rank runs its forward and backward passes.
 *
 * With one chunk this is PipeDream-Flush 1F1B (Narayanan et al. SC21, Fig. 4 top): stage s runs
 * min(pp - s - 1, m) warm-up forwards, then alternates one forward and one backward, then drains.
 * With v > 1 chunks it is Megatron-LM's interleaved 1F1B (SC21 Fig. 4 bottom): forwards sweep the
 * chunks in groups of pp micro-batches, with (pp - s - 1) x 2 + (v - 1) x pp warm-up steps.
 * The pipeline bubble is not computed here: it emerges when the schedule is executed.
 *
 * \param pp pipeline stages
 * \param chunks model chunks per rank (virtual stages)
 * \param stage this rank's stage
 * \param microBatches micro-batches per iteration (a multiple of pp when chunks > 1)
 * \return the steps in program order
 */
std::vector<ScheduleStep> PipelineSchedule(uint32_t pp,
                                           uint32_t chunks,
                                           uint32_t stage,
                                           uint32_t microBatches);

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_PIPELINE_SCHEDULE_H
