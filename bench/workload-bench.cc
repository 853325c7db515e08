/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// Benchmarks of the workload layer: building every rank's graph and the memory report.
// Target (workload issue): GPT-3 175B on 1024 GPUs (TP8 PP8 DP16, mbs 1, global batch 1536)
// in under 1 s on one core. Arguments: recomputation mode, whether the compute model costs
// the operators, and whether the pipeline runs zb-v (two chunks a rank, whose order is made on
// the costed pass times: the stages are built twice).

#include "ns3/compute-coster.h"
#include "ns3/hardware-spec.h"
#include "ns3/memory-model.h"
#include "ns3/model-spec.h"
#include "ns3/run-spec.h"
#include "ns3/workload.h"

#include "../test/job-fixtures.h"
#include <benchmark/benchmark.h>

using namespace ns3::rapidllm;

static void
BM_BuildGpt3On1024Gpus(benchmark::State& state)
{
    ModelSpec model = ModelSpec::Load("gpt3-175b");
    RunSpec run = fixture::Gpt3On1024Gpus();
    run.recompute = static_cast<Recompute>(state.range(0));
    if (state.range(2) != 0)
    {
        run.parallel.schedule = "zb-v";
        run.parallel.virtualStages = 2;
    }
    GpuSpec gpu;
    gpu.hbmBytes = 80ull << 30;
    std::size_t nodes = 0;
    // Arg 1: cost every operator with the A100's compute model (a fresh, empty memo per build).
    const bool costed = state.range(1) != 0;
    HardwareSpec a100 = HardwareSpec::Load("a100-sxm-80gb");
    for (auto _ : state)
    {
        OperatorCoster coster;
        if (costed)
        {
            coster = MakeComputeCoster(ns3::CreateObject<GpuComputeModel>(a100.gpu));
        }
        Workload w = Workload::Build(model, run, coster);
        MemoryReport m = AnalyzeMemory(w, gpu);
        benchmark::DoNotOptimize(m.worst.peak);
        nodes = 0;
        for (const auto& g : w.stages)
        {
            nodes += g.nodes.size();
        }
    }
    state.counters["graph_nodes"] = static_cast<double>(nodes);
    state.counters["ranks"] = 1024;
}

BENCHMARK(BM_BuildGpt3On1024Gpus)
    ->Args({static_cast<int>(Recompute::NONE), 0, 0})
    ->Args({static_cast<int>(Recompute::FULL), 0, 0})
    ->Args({static_cast<int>(Recompute::FULL), 1, 0})
    ->Args({static_cast<int>(Recompute::FULL), 1, 1})
    ->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
