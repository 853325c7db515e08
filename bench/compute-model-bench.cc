/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// Cost of one GEMM prediction: a cache miss (the full tiling search) and a memo hit.
// Targets: under 5 us per miss, under 100 ns per hit.

#include "ns3/gpu-compute-model.h"
#include "ns3/hardware-spec.h"

#include <benchmark/benchmark.h>

using namespace ns3;
using namespace ns3::rapidllm;

namespace {
/** \return the A100-80GB GPU spec (loaded once) */
const GpuSpec&
A100()
{
    static GpuSpec gpu = HardwareSpec::Load("a100-sxm-80gb").gpu;
    return gpu;
}
} // namespace

/** A cache miss for every call: a new m each time (the search is independent of the value). */
static void
BM_GemmMiss(benchmark::State& state)
{
    GpuComputeModel model(A100());
    uint64_t m = uint64_t(state.range(0));
    uint64_t i = 0;
    for (auto _ : state)
    {
        OperatorCost c = model.Gemm(m + (i++ % 64), 12288, 4096, DataType::BF16);
        benchmark::DoNotOptimize(c.timeS);
        if (model.CacheSize() > 32)
        {
            state.PauseTiming();
            model.ClearCache();
            state.ResumeTiming();
        }
    }
}

BENCHMARK(BM_GemmMiss)->Arg(1)->Arg(4096);

/** Repeated lookups of a memoized shape. */
static void
BM_GemmHit(benchmark::State& state)
{
    GpuComputeModel model(A100());
    model.Gemm(4096, 12288, 4096, DataType::BF16);
    for (auto _ : state)
    {
        OperatorCost c = model.Gemm(4096, 12288, 4096, DataType::BF16);
        benchmark::DoNotOptimize(c.timeS);
    }
}

BENCHMARK(BM_GemmHit);

/** One FlashAttention forward prediction (not memoized). */
static void
BM_AttentionForward(benchmark::State& state)
{
    GpuComputeModel model(A100());
    AttentionShape s;
    s.batch = 1;
    s.heads = 32;
    s.kvHeads = 8;
    s.queryLen = 4096;
    s.kvLen = 4096;
    s.headDim = 128;
    for (auto _ : state)
    {
        OperatorCost c = model.AttentionForward(s, DataType::BF16);
        benchmark::DoNotOptimize(c.timeS);
    }
}

BENCHMARK(BM_AttentionForward);

BENCHMARK_MAIN();
