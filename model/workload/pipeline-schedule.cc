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
    step.pass = forward ? SchedulePass::FORWARD : SchedulePass::BACKWARD;
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

std::vector<ScheduleStep>
ZeroBubbleH1Schedule(uint32_t pp, uint32_t stage, uint32_t microBatches)
{
    std::vector<ScheduleStep> steps;
    steps.reserve(3 * std::size_t(microBatches));
    uint32_t weights = 0; // weight passes done, in micro-batch order
    auto weight = [&]()
    {
        ScheduleStep w;
        w.pass = SchedulePass::WEIGHT;
        w.microBatch = weights++;
        steps.push_back(w);
    };
    // 1F1B's steady state runs the first `steady` backwards, its cooldown the rest.
    const uint32_t steady = microBatches - std::min(pp - stage - 1, microBatches);
    uint32_t backwards = 0;
    for (const ScheduleStep& step : PipelineSchedule(pp, 1, stage, microBatches))
    {
        steps.push_back(step);
        if (step.pass != SchedulePass::BACKWARD)
        {
            continue;
        }
        // The steady state's first `stage` backwards defer their weight pass; every later
        // backward (steady state or cooldown) is followed by the oldest one waiting.
        const uint32_t b = backwards++;
        if (b >= stage || b >= steady)
        {
            weight();
        }
    }
    while (weights < microBatches)
    {
        weight();
    }
    return steps;
}

} // namespace rapidllm
} // namespace ns3
