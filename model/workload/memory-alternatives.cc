/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "memory-alternatives.h"

#include "ns3/spec-error.h"

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

} // namespace rapidllm
} // namespace ns3
