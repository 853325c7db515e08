/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_PIPELINE_SCHEDULE_H
#define RAPIDLLM_PIPELINE_SCHEDULE_H

#include <array>
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

/**
 * \ingroup rapid-llm
 * \brief How long one micro-batch's passes through one model chunk take on a rank, seconds
 * (or any unit, the same for all).
 */
struct PassTimes
{
    double forward = 1;  //!< the forward pass
    double backward = 1; //!< the input gradients
    double weight = 1;   //!< the weight gradients
};

/**
 * \brief The order of every pipeline rank's passes under ZB-V (Qi et al., "Zero Bubble Pipeline
 * Parallelism", ICLR 2024, Sec. 6): two model chunks a rank in a V (rank s holds virtual
 * stages s and 2 pp - 1 - s, chunks 0 and 1), each backward split into its input gradients and
 * a weight pass.
 *
 * The order comes from running the whole pipeline on the passes' times (sends free), greedily:
 * whenever a rank is free it runs, of its two chunks, the oldest micro-batch's backward that is
 * ready, else the oldest forward that is ready while fewer than 2 pp chunk passes (1F1B's
 * first-stage peak: pp micro-batches of a whole stage) wait for their weight pass, else the
 * oldest weight pass ready (a chunk 1 pass before a chunk 0 pass of the same micro-batch), else
 * it waits for the next pass to end. Where first chunks would fill a rank before its
 * micro-batches come back to their second chunks (the ranks then waiting for each other), each
 * micro-batch's first forward on a rank counts its second chunk's too, which keeps fewer in
 * flight. On equal times (the paper's T_F = T_B = T_W) this leaves
 * pp - 1 chunk passes of bubble (1F1B: 6 (pp - 1), ZB-H1: 2 (pp - 1)). Like the reference's
 * search (sail-sg's v_schedule), it orders the passes by their times, which differ from rank to
 * rank and pass to pass: an order made for equal times stalls on real ones. The rule is simpler
 * than the reference's and not its code.
 * \param pp pipeline stages (at least 2)
 * \param microBatches micro-batches per iteration
 * \param times each rank's pass times per chunk; empty: all equal
 * \return each rank's steps in program order
 */
std::vector<std::vector<ScheduleStep>> ZeroBubbleVSchedules(
    uint32_t pp, uint32_t microBatches, const std::vector<std::array<PassTimes, 2>>& times = {});

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_PIPELINE_SCHEDULE_H
