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
 * \brief What a schedule step computes.
 */
enum class SchedulePass
{
    FORWARD,  //!< the forward pass
    BACKWARD, //!< the backward pass (under a zero-bubble schedule its input gradients only)
    WEIGHT    //!< a zero-bubble schedule's deferred weight gradients
};

/**
 * \ingroup rapid-llm
 * \brief One step of a pipeline rank's program: one pass of one micro-batch through one of the
 * rank's model chunks.
 */
struct ScheduleStep
{
    SchedulePass pass = SchedulePass::FORWARD; //!< what the step computes
    uint32_t microBatch = 0;                   //!< micro-batch index
    uint32_t chunk = 0; //!< model chunk on this rank (0 without interleaving)
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

/**
 * \brief The order of one pipeline rank's passes under ZB-H1 (Qi et al., "Zero Bubble Pipeline
 * Parallelism", ICLR 2024, Sec. 3.1): 1F1B's forwards and backwards, each backward computing
 * only the input gradients the previous stage waits for, and a weight-gradient pass per
 * micro-batch that stage s defers by s backwards in the steady state; in the cooldown each
 * backward is followed by one weight pass, and the deferred ones end the step. The first
 * stage, which 1F1B keeps busiest, defers nothing; the last, idle for (pp - 1) backwards at
 * the end, fills that time with its pp - 1 deferred weight passes (InternLM's ZB-H1 scheduler
 * pops its weight-gradient store by this rule). Each rank has at most pp - s + s = pp
 * micro-batches between their forward and their weight pass, the first stage's 1F1B count (the
 * paper's "same memory as 1F1B", which holds where a deferred set is no larger than a
 * micro-batch's activations).
 * \param pp pipeline stages
 * \param stage this rank's stage
 * \param microBatches micro-batches per iteration
 * \return the steps in program order
 */
std::vector<ScheduleStep> ZeroBubbleH1Schedule(uint32_t pp, uint32_t stage, uint32_t microBatches);

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_PIPELINE_SCHEDULE_H
