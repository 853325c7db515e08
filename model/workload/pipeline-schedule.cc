/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "pipeline-schedule.h"

#include <algorithm>

namespace ns3 {
namespace rapidllm {

namespace {
/** The k-th forward (or backward) micro-step of the interleaved schedule. */
ScheduleStep
InterleavedStep(uint32_t k, uint32_t pp, uint32_t chunks, bool forward)
{
    ScheduleStep step;
    step.forward = forward;
    uint32_t group = k / (pp * chunks);
    uint32_t inGroup = k % (pp * chunks);
    step.microBatch = group * pp + inGroup % pp;
    uint32_t chunk = inGroup / pp;
    step.chunk = forward ? chunk : chunks - 1 - chunk;
    return step;
}
} // namespace

std::vector<ScheduleStep>
PipelineSchedule(uint32_t pp, uint32_t chunks, uint32_t stage, uint32_t microBatches)
{
    const uint32_t total = microBatches * chunks;
    uint32_t warmup;
    if (chunks == 1)
    {
        warmup = std::min(pp - stage - 1, microBatches);
    }
    else
    {
        warmup = std::min((pp - stage - 1) * 2 + (chunks - 1) * pp, total);
    }
    std::vector<ScheduleStep> steps;
    steps.reserve(2 * total);
    uint32_t f = 0;
    uint32_t b = 0;
    for (; f < warmup; ++f)
    {
        steps.push_back(InterleavedStep(f, pp, chunks, true));
    }
    while (f < total)
    {
        steps.push_back(InterleavedStep(f++, pp, chunks, true));
        steps.push_back(InterleavedStep(b++, pp, chunks, false));
    }
    while (b < total)
    {
        steps.push_back(InterleavedStep(b++, pp, chunks, false));
    }
    return steps;
}

} // namespace rapidllm
} // namespace ns3
