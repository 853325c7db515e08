/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "pipeline-schedule.h"

#include <algorithm>
#include <limits>
#include <set>
#include <stdexcept>

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

namespace {
/**
 * ZeroBubbleVSchedules' greedy run of the pipeline. At most 2 pp chunk forwards a rank wait for
 * their weight pass; with \p reserve a micro-batch's first forward on a rank counts its second
 * chunk's too, so that the second can always run.
 * \return each rank's steps, or nothing if the ranks came to wait for each other
 */
std::vector<std::vector<ScheduleStep>>
GreedyVOrder(uint32_t pp,
             uint32_t microBatches,
             const std::vector<std::array<PassTimes, 2>>& times,
             bool reserve)
{
    const uint32_t vstages = 2 * pp;
    const uint32_t m = microBatches;
    // Per virtual stage: the passes done (each pass runs its micro-batches in order) and when
    // each forward and backward ends.
    std::vector<uint32_t> forwards(vstages, 0);
    std::vector<uint32_t> backwards(vstages, 0);
    std::vector<uint32_t> weights(vstages, 0);
    std::vector<std::vector<double>> forwardEnd(vstages, std::vector<double>(m));
    std::vector<std::vector<double>> backwardEnd(vstages, std::vector<double>(m));
    // Per rank, chunk forwards whose weight pass has not run (with reserve, a micro-batch's
    // second chunk counted from its first forward on).
    std::vector<uint32_t> held(pp, 0);
    std::vector<double> freeAt(pp, 0);
    std::multiset<double> ends; // when the passes that have not ended yet end
    std::vector<std::vector<ScheduleStep>> steps(pp);
    std::vector<uint32_t> idle;
    const uint64_t total = 3 * uint64_t(m) * vstages;
    uint64_t done = 0;
    while (done < total)
    {
        const double t = *std::min_element(freeAt.begin(), freeAt.end());
        if (t == std::numeric_limits<double>::infinity())
        {
            return {};
        }
        ends.erase(ends.begin(), ends.upper_bound(t));
        for (uint32_t rank = 0; rank < pp; ++rank)
        {
            if (freeAt[rank] > t)
            {
                continue;
            }
            const uint32_t v[2] = {rank, vstages - 1 - rank}; // chunk 0, chunk 1
            auto forwardReady = [&](uint32_t s)
            {
                const uint32_t mb = forwards[s];
                const uint32_t takes = reserve ? (s < pp ? 2 : 0) : 1;
                return mb < m && held[rank] + takes <= vstages
                       && (s == 0 || (forwards[s - 1] > mb && forwardEnd[s - 1][mb] <= t));
            };
            auto backwardReady = [&](uint32_t s)
            {
                const uint32_t mb = backwards[s];
                return mb < forwards[s] && forwardEnd[s][mb] <= t
                       && (s + 1 == vstages
                           || (backwards[s + 1] > mb && backwardEnd[s + 1][mb] <= t));
            };
            auto weightReady = [&](uint32_t s)
            {
                const uint32_t mb = weights[s];
                return mb < backwards[s] && backwardEnd[s][mb] <= t;
            };
            // Of the two chunks, the one whose pass is ready for the older micro-batch (chunk
            // 1 on a tie); -1 if neither's is.
            auto pick = [&](const std::vector<uint32_t>& next, auto ready)
            {
                int chunk = -1;
                for (int c : {1, 0})
                {
                    if (ready(v[c]) && (chunk < 0 || next[v[c]] < next[v[chunk]]))
                    {
                        chunk = c;
                    }
                }
                return chunk;
            };
            SchedulePass pass = SchedulePass::BACKWARD;
            int chunk = pick(backwards, backwardReady);
            if (chunk < 0)
            {
                pass = SchedulePass::FORWARD;
                chunk = pick(forwards, forwardReady);
            }
            if (chunk < 0)
            {
                pass = SchedulePass::WEIGHT;
                chunk = pick(weights, weightReady);
            }
            if (chunk < 0)
            {
                idle.push_back(rank);
                continue;
            }
            const uint32_t s = v[chunk];
            const PassTimes cost = times.empty() ? PassTimes() : times.at(rank)[chunk];
            ScheduleStep step;
            step.pass = pass;
            step.chunk = static_cast<uint32_t>(chunk);
            double end = t;
            switch (pass)
            {
                case SchedulePass::FORWARD:
                    step.microBatch = forwards[s]++;
                    end += cost.forward;
                    forwardEnd[s][step.microBatch] = end;
                    held[rank] += reserve ? (chunk == 0 ? 2 : 0) : 1;
                    break;
                case SchedulePass::BACKWARD:
                    step.microBatch = backwards[s]++;
                    end += cost.backward;
                    backwardEnd[s][step.microBatch] = end;
                    break;
                case SchedulePass::WEIGHT:
                    step.microBatch = weights[s]++;
                    end += cost.weight;
                    --held[rank];
                    break;
            }
            freeAt[rank] = end;
            ends.insert(end);
            steps[rank].push_back(step);
            ++done;
        }
        // A rank that found nothing ready waits for the next pass to end (one that started
        // now included).
        for (uint32_t rank : idle)
        {
            freeAt[rank] = ends.empty() ? std::numeric_limits<double>::infinity() : *ends.begin();
        }
        idle.clear();
    }
    return steps;
}
} // namespace

std::vector<std::vector<ScheduleStep>>
ZeroBubbleVSchedules(uint32_t pp,
                     uint32_t microBatches,
                     const std::vector<std::array<PassTimes, 2>>& times)
{
    auto steps = GreedyVOrder(pp, microBatches, times, false);
    if (steps.empty())
    {
        // First chunks filled a rank before its micro-batches came back to their second.
        steps = GreedyVOrder(pp, microBatches, times, true);
    }
    if (steps.empty())
    {
        throw std::logic_error("ZeroBubbleVSchedules: no pass can run");
    }
    return steps;
}

} // namespace rapidllm
} // namespace ns3
