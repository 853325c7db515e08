/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// End-to-end speed of `rapid-llm run` (issue targets on a 2-core machine): GPT-3 175B training
// on 1024 A100 (TP8 PP8 DP16, mbs 1, global batch 1536, full recompute) under 2 s of wall time,
// and Megatron-LM's 1008B row on 3072 GPUs under 10 s with peak memory under 4 GB. Each case
// runs once (it is seconds long); peak_rss_gb is the process's high-water mark so far.

#include "ns3/rapid-llm-helper.h"

#include "../test/job-fixtures.h"
#include <benchmark/benchmark.h>
#include <sys/resource.h>

using namespace ns3;
using namespace ns3::rapidllm;

namespace {
/** Runs \p model with \p run as Megatron-LM's rows do: fp16 with full recomputation. */
void
RunJob(benchmark::State& state, const char* model, RunSpec run)
{
    run.recompute = Recompute::FULL;
    run.dtype = DataType::FP16;
    double step = 0;
    for (auto _ : state)
    {
        Ptr<RapidLlmHelper> helper = CreateObject<RapidLlmHelper>();
        helper->Load(model, "a100-sxm-80gb");
        helper->SetRun(run);
        step = helper->Run().stepTimeS;
    }
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    state.counters["step_time_s"] = step;
    state.counters["gpus"] = run.parallel.Gpus();
    state.counters["peak_rss_gb"] = usage.ru_maxrss / 1e6;
}
} // namespace

static void
BM_RunGpt3On1024Gpus(benchmark::State& state)
{
    RunJob(state, "gpt3-175b", fixture::Gpt3On1024Gpus());
}

static void
BM_RunGpt1008bOn3072Gpus(benchmark::State& state)
{
    RunJob(state, "gpt-1008b", fixture::Gpt1008bOn3072Gpus());
}

BENCHMARK(BM_RunGpt3On1024Gpus)->Iterations(1)->Unit(benchmark::kSecond)->UseRealTime();
BENCHMARK(BM_RunGpt1008bOn3072Gpus)->Iterations(1)->Unit(benchmark::kSecond)->UseRealTime();

BENCHMARK_MAIN();
