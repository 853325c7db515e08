/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_STAGE_BUILDERS_H
#define RAPIDLLM_STAGE_BUILDERS_H

#include "ns3/model-spec.h"
#include "ns3/run-spec.h"
#include "parallel-layout.h"
#include "workload-graph.h"

namespace ns3 {
namespace rapidllm {

/**
 * \brief Builds the graph of one pipeline stage for one training iteration: the pipeline
 * schedule's forward and backward passes, the data-parallel gradient reduction (bucketed, or
 * ZeRO's reduce-scatter and all-gather) and the optimizer step.
 * \param model the model
 * \param run the validated run settings
 * \param stage the pipeline stage
 * \param expectedNodes nodes to reserve room for (an estimate; 0: none), so that the graph
 *        is not copied as it grows
 * \param schedule the stage's steps in program order (ZeroBubbleVSchedules', which zb-v needs:
 *        its ranks are ordered together); null: the run's schedule
 * \return the graph
 */
StageGraph BuildTrainingStage(const ModelSpec& model,
                              const RunSpec& run,
                              uint32_t stage,
                              std::size_t expectedNodes = 0,
                              const std::vector<ScheduleStep>* schedule = nullptr);

/**
 * \brief Builds the graph of one pipeline stage for one inference request: the prefill over the
 * prompt, then one decode step per further generated token.
 * \param model the model
 * \param run the validated run settings
 * \param stage the pipeline stage
 * \param expectedNodes nodes to reserve room for (an estimate; 0: none), so that the graph
 *        is not copied as it grows
 * \return the graph
 */
StageGraph BuildInferenceStage(const ModelSpec& model,
                               const RunSpec& run,
                               uint32_t stage,
                               std::size_t expectedNodes = 0);

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_STAGE_BUILDERS_H
