/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// Flow-network speed: an all-to-all among N GPUs (N(N-1) concurrent flows; 261,632 at N = 512)
// on a two-tier fat tree (leaves of 16, non-blocking), run to completion on ns3::Simulator.
// Target: under 10 s of wall time at N = 512 on a 2-core machine. Reports how the time grows
// from 64 to 512 GPUs, with D-mod-k routing (dimension-order, the presets' choice) and with
// ECMP hashing (uneven spine loads: many distinct completion times, hence many recomputations,
// each cheap because departures freeze the slower flows). The solver alone (no simulator, no
// collective engine): the same all-to-all's flows added and solved at once, then removed in 64
// waves with a solve after each.

#include "ns3/collective-probe.h"
#include "ns3/max-min-solver.h"
#include "ns3/network-spec.h"
#include "ns3/routing-policy.h"
#include "ns3/topology.h"

#include <benchmark/benchmark.h>

using namespace ns3;
using namespace ns3::rapidllm;

namespace {
/** \return a single fat-tree dimension sized by the GPU count */
NetworkSpec
FatTree(const std::string& routing)
{
    NetworkDimensionSpec d;
    d.name = "ib";
    d.kind = TopologyKind::FAT_TREE;
    d.size = 0;
    d.bandwidthBps = 25e9;
    d.latencyS = 1e-6;
    d.switchLatencyS = 130e-9;
    d.leafSize = 16;
    NetworkSpec s;
    s.dimensions.push_back(d);
    s.routing = routing;
    return s;
}

/** \brief One all-to-all of 1 GiB per rank among range(0) GPUs. */
void
RunAllToAll(benchmark::State& state, const std::string& routing)
{
    const auto gpus = static_cast<uint32_t>(state.range(0));
    NetworkSpec spec = FatTree(routing);
    CollectiveProbeResult r;
    for (auto _ : state)
    {
        CollectiveProbeConfig c;
        c.op = CollectiveOp::ALL_TO_ALL;
        c.bytes = uint64_t(1) << 30;
        c.gpus = gpus;
        r = RunCollectiveProbe(spec, c);
    }
    state.counters["flows"] = double(r.messages);
    state.counters["sim_time_us"] = r.timeS * 1e6;
    state.counters["solves"] = double(r.solves);
    state.counters["solved_flows"] = double(r.solvedFlows);
    state.counters["bus_GBps"] = r.busBandwidthBps / 1e9;
}
} // namespace

/** D-mod-k routing (dimension-order on a fat tree). */
static void
BM_AllToAllFatTreeDmodK(benchmark::State& state)
{
    RunAllToAll(state, "dimension-order");
}

BENCHMARK(BM_AllToAllFatTreeDmodK)
    ->Arg(64)
    ->Arg(128)
    ->Arg(256)
    ->Arg(512)
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

/** ECMP hashing: uneven loads, many distinct completion waves. */
static void
BM_AllToAllFatTreeEcmp(benchmark::State& state)
{
    RunAllToAll(state, "ecmp");
}

BENCHMARK(BM_AllToAllFatTreeEcmp)
    ->Arg(64)
    ->Arg(128)
    ->Arg(256)
    ->Arg(512)
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

/** The MaxMinSolver alone on the all-to-all's D-mod-k paths. */
static void
BM_SolverAllToAll(benchmark::State& state)
{
    const auto gpus = static_cast<uint32_t>(state.range(0));
    Ptr<Topology> t = Topology::Build(FatTree("dimension-order"), gpus);
    Ptr<RoutingPolicy> routing = RoutingPolicy::Create("dimension-order");
    std::vector<std::vector<uint32_t>> paths;
    for (uint32_t a = 0; a < gpus; ++a)
    {
        for (uint32_t b = 0; b < gpus; ++b)
        {
            if (a != b)
            {
                paths.push_back(routing->Route(*t, a, b, paths.size()));
            }
        }
    }
    uint64_t solved = 0;
    for (auto _ : state)
    {
        MaxMinSolver solver;
        solver.Reset(t->GetLinkCount());
        for (uint32_t l = 0; l < t->GetLinkCount(); ++l)
        {
            solver.SetCapacity(l, t->GetLink(l).Bandwidth());
        }
        std::vector<uint32_t> handles;
        handles.reserve(paths.size());
        for (const auto& p : paths)
        {
            handles.push_back(solver.AddFlow(p));
        }
        solver.Solve();
        const std::size_t wave = (handles.size() + 63) / 64;
        for (std::size_t i = 0; i < handles.size(); i += wave)
        {
            for (std::size_t j = i; j < std::min(handles.size(), i + wave); ++j)
            {
                solver.RemoveFlow(handles[j]);
            }
            solver.Solve();
        }
        solved = solver.GetSolvedFlowCount();
    }
    state.counters["flows"] = double(paths.size());
    state.counters["solved_flows"] = double(solved);
}

BENCHMARK(BM_SolverAllToAll)
    ->Arg(128)
    ->Arg(512)
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

BENCHMARK_MAIN();
