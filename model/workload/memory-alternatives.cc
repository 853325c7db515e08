/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "memory-alternatives.h"

#include "ns3/spec-error.h"

#include <algorithm>
#include <functional>
#include <utility>

namespace ns3 {
namespace rapidllm {

std::vector<MemoryAlternative>
MemoryAlternatives(const ModelSpec& model, const RunSpec& run, const GpuSpec& gpu)
{
    std::vector<MemoryAlternative> found;
    if (run.mode != RunMode::TRAINING || AnalyzeMemory(model, run, gpu).feasible)
    {
        return found;
    }
    const bool shards = uint64_t(run.parallel.dp) * run.parallel.cp > 1;
    const std::vector<std::pair<std::string, std::function<bool(RunSpec&)>>> changes = {
        {"--zero=1",
         [&](RunSpec& r)
         {
             r.parallel.zeroStage = 1;
             return shards && run.parallel.zeroStage < 1;
         }},
        {"--zero=3",
         [&](RunSpec& r)
         {
             r.parallel.zeroStage = 3;
             return shards && run.parallel.zeroStage < 3;
         }},
        {"--recompute=selective",
         [&](RunSpec& r)
         {
             r.recompute = Recompute::SELECTIVE;
             return run.recompute == Recompute::NONE;
         }},
        {"--recompute=full",
         [&](RunSpec& r)
         {
             r.recompute = Recompute::FULL;
             return run.recompute != Recompute::FULL;
         }},
        {"--mbs=1",
         [&](RunSpec& r)
         {
             r.microBatch = 1;
             return run.microBatch > 1;
         }},
    };
    for (const auto& [option, change] : changes)
    {
        RunSpec changed = run;
        if (!change(changed))
        {
            continue;
        }
        try
        {
            found.push_back({option, AnalyzeMemory(model, changed, gpu)});
        }
        catch (const SpecError&)
        {
            // The job's own settings rule the change out.
        }
    }
    return found;
}

uint32_t
LargestFittingBatch(const ModelSpec& model, const RunSpec& run, const GpuSpec& gpu)
{
    if (run.mode != RunMode::INFERENCE)
    {
        return 0;
    }
    auto fits = [&](uint64_t batch)
    {
        RunSpec changed = run;
        changed.batch = static_cast<uint32_t>(batch);
        try
        {
            return AnalyzeMemory(model, changed, gpu).feasible;
        }
        catch (const SpecError&)
        {
            return false; // beyond what the settings allow (a KV cache of 2^60 bytes)
        }
    };
    // Up to 2^24 requests (no GPU holds that many KV caches): double, then halve the gap. The
    // smallest valid batch is one request for each batch in flight (RunSpec::Validate).
    constexpr uint64_t kMost = 1u << 24;
    const uint64_t fewest = std::max<uint64_t>(1, run.inflightBatches);
    if (fewest > kMost || !fits(fewest))
    {
        return 0;
    }
    uint64_t low = fewest; // fits
    uint64_t high = 2 * fewest;
    while (high <= kMost && fits(high))
    {
        low = high;
        high *= 2;
    }
    if (high > kMost)
    {
        return static_cast<uint32_t>(low);
    }
    while (high - low > 1) // low fits, high does not
    {
        const uint64_t mid = low + (high - low) / 2;
        (fits(mid) ? low : high) = mid;
    }
    return static_cast<uint32_t>(low);
}

} // namespace rapidllm
} // namespace ns3
