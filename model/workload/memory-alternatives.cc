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

namespace {

/** A change to a job: its option, and whether it applies (it changes the RunSpec given). */
using Change = std::pair<std::string, std::function<bool(RunSpec&)>>;

/**
 * \return what a capacity planner tries first when an inference job does not fit: the largest
 * batch that fits, twice the tensor or pipeline parallelism (as many more GPUs a replica),
 * weights in fewer bytes the GPU can multiply (fp8 where it has an fp8 rate, else int8; int4
 * weight-only), and an fp8 KV cache
 */
std::vector<Change>
InferenceChanges(const ModelSpec& model, const RunSpec& run, const GpuSpec& gpu)
{
    const uint32_t largest = LargestFittingBatch(model, run, gpu);
    const uint32_t weightBytes = BytesOf(run.dtype);
    const DataType eight = gpu.Runs(DataType::FP8) ? DataType::FP8 : DataType::INT8;
    // The engine's own 8-bit cache (RunSpec::Validate): lmdeploy's and transformers' caches are
    // integer (int8, int4), vLLM's fp8 (and any with engine none).
    const bool integerKv = run.engine == "lmdeploy" || run.engine == "hf";
    const std::string kvEight = integerKv ? "int8" : "fp8";
    return {
        {"--batch=" + std::to_string(largest),
         [largest](RunSpec& r)
         {
             const bool smaller = largest > 0 && largest < r.batch;
             r.batch = largest;
             return smaller;
         }},
        {"--tp=" + std::to_string(2 * run.parallel.tp),
         [](RunSpec& r)
         {
             r.parallel.tp *= 2;
             return true;
         }},
        {"--pp=" + std::to_string(2 * run.parallel.pp),
         [](RunSpec& r)
         {
             r.parallel.pp *= 2;
             return true;
         }},
        {"--dtype=" + ToString(eight),
         [&gpu, eight, weightBytes](RunSpec& r)
         {
             r.dtype = eight;
             return weightBytes > 1 && gpu.Runs(eight);
         }},
        {"--dtype=int4",
         [&gpu](RunSpec& r)
         {
             // Narrower than any weights but int4's own (an fp8 job's too: half its bytes).
             const bool narrower = r.dtype != DataType::INT4;
             r.dtype = DataType::INT4;
             return narrower && gpu.Runs(DataType::INT4);
         }},
        {"--kv-cache-dtype=" + kvEight,
         [kvEight](RunSpec& r)
         {
             const bool wider = BytesOf(r.KvCacheType()) > 1;
             r.kvCacheDtype = kvEight;
             return wider;
         }},
        {"--kv-cache-dtype=int4",
         [integerKv](RunSpec& r)
         {
             const bool wider = r.kvCacheDtype != "int4";
             r.kvCacheDtype = "int4";
             return integerKv && wider;
         }},
    };
}

} // namespace

std::vector<MemoryAlternative>
MemoryAlternatives(const ModelSpec& model, const RunSpec& run, const GpuSpec& gpu)
{
    std::vector<MemoryAlternative> found;
    if (AnalyzeMemory(model, run, gpu).feasible)
    {
        return found;
    }
    const bool shards = uint64_t(run.parallel.dp) * run.parallel.cp > 1;
    const std::vector<Change> training = {
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
    const std::vector<Change> changes =
        run.mode == RunMode::TRAINING ? training : InferenceChanges(model, run, gpu);
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
