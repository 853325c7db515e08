/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// Speed of `study serving` through its API (one process, no workers): the case study's goodput
// search over every layout and batch of Llama-3 70B on one DGX H100 (doc/case-studies.md (4)),
// the rows of Llama-3 8B beyond their KV cache (each closed loop a saturated queue of up to 100
// turns of its requests in flight), and a disaggregated goodput with prefix groups whose decode
// instances keep prefix caches. Each case runs once; its CPU time is the process's (Google
// Benchmark's cpu column), beside the wall time the machine's load can stretch.

#include "ns3/job-options.h"
#include "ns3/serving-study.h"

#include <benchmark/benchmark.h>

using namespace ns3;
using namespace ns3::rapidllm;

namespace {

/** \return a vLLM job of \p model on H100s, \p prompt + \p gen tokens a request */
JobOptions
VllmJob(const char* model, uint32_t prompt, uint32_t gen)
{
    JobOptions o;
    o.Set("model", model);
    o.Set("hardware", "h100-sxm-80gb");
    o.Set("prompt", std::to_string(prompt));
    o.Set("gen", std::to_string(gen));
    o.Set("engine", "vllm");
    return o;
}

/** Runs the study and reports its rows, those that fit and the best tokens per GPU. */
void
RunStudy(benchmark::State& state, const JobOptions& job, const ServingSpace& space)
{
    std::vector<ServingRow> rows;
    for (auto _ : state)
    {
        rows = ServingStudy(job, space, "flow", "", true).Run();
    }
    double fit = 0;
    double best = 0;
    for (const ServingRow& r : rows)
    {
        if (r.fits)
        {
            fit += 1;
            best = std::max(best, r.loaded ? r.load.tokensPerSPerGpu : r.tokensPerSPerGpu);
        }
    }
    state.counters["rows"] = double(rows.size());
    state.counters["fit"] = fit;
    state.counters["best_tok_s_gpu"] = best;
}

} // namespace

static void
BM_GoodputLlama3_70bOnDgxH100(benchmark::State& state)
{
    ServingSpace space;
    space.gpus = 8;
    space.tp = {1, 2, 4, 8};
    space.pp = {1, 2};
    space.batch = {1, 4, 16, 32, 64, 128, 256};
    space.tpotSloS = 0.03;
    space.ttftSloS = 2;
    space.goodput = true;
    RunStudy(state, VllmJob("llama3-70b", 1024, 256), space);
}

static void
BM_BeyondKvCacheLlama3_8b(benchmark::State& state)
{
    ServingSpace space;
    space.gpus = 8;
    space.tp = {1, 2};
    space.batch = {256, 1024, 4096};
    space.batching = Batching::CHUNKED;
    RunStudy(state, VllmJob("llama3-8b", 1024, 512), space);
}

static void
BM_DisaggregatedPrefixGroupsLlama3_70b(benchmark::State& state)
{
    JobOptions job = VllmJob("llama3-70b", 8192, 256);
    job.Set("cached-prefix", "6144");
    ServingSpace space;
    space.gpus = 16;
    space.tp = {4, 8};
    space.batch = {64, 128};
    space.batching = Batching::DISAGGREGATED;
    space.prefixes = 16;
    space.tpotSloS = 0.06;
    space.ttftSloS = 3;
    space.goodput = true;
    RunStudy(state, job, space);
}

BENCHMARK(BM_GoodputLlama3_70bOnDgxH100)->Iterations(1)->Unit(benchmark::kSecond)->UseRealTime();
BENCHMARK(BM_BeyondKvCacheLlama3_8b)->Iterations(1)->Unit(benchmark::kSecond)->UseRealTime();
BENCHMARK(BM_DisaggregatedPrefixGroupsLlama3_70b)
    ->Iterations(1)
    ->Unit(benchmark::kSecond)
    ->UseRealTime();

BENCHMARK_MAIN();
