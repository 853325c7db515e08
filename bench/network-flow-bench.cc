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
//
// At 16,384 GPUs (2,048 DGX nodes: NVSwitch x rail-optimized fat tree, leaves of 32): many
// identical concurrent transfers (16,384 messages per round over 8 paths, 16 rounds) with flow
// classes on and off (FlowClasses attribute), and all-to-all-like waves (every rank sends to
// rank + k x 8 + 1 in wave k, the next wave once its message is delivered). Each case reports
// the process's peak RSS so far (run one case per process, --benchmark_filter, for its own).
// The memory case measures the resident bytes per in-flight flow and per extra member of a
// flow class.
#include "ns3/boolean.h"
#include "ns3/collective-probe.h"
#include "ns3/flow-network.h"
#include "ns3/max-min-solver.h"
#include "ns3/network-spec.h"
#include "ns3/routing-policy.h"
#include "ns3/simulator.h"
#include "ns3/topology.h"

#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <fstream>
#include <functional>

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

/** Shortest-path routing: equal-cost paths spread by destination (the D-mod-k rule). */
static void
BM_AllToAllFatTreeShortestPath(benchmark::State& state)
{
    RunAllToAll(state, "shortest-path");
}

BENCHMARK(BM_AllToAllFatTreeShortestPath)
    ->Arg(64)
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

namespace {
/** \return the DGX-style network: NVSwitch of 8 x rail fat tree (leaves of 32, 1:1) */
NetworkSpec
Dgx(uint32_t gpus)
{
    NetworkDimensionSpec nv;
    nv.name = "nvlink";
    nv.kind = TopologyKind::SWITCH;
    nv.size = 8;
    nv.bandwidthBps = 300e9;
    nv.latencyS = 1.7e-6;
    NetworkDimensionSpec ib;
    ib.name = "ib";
    ib.kind = TopologyKind::FAT_TREE;
    ib.size = gpus / 8;
    ib.bandwidthBps = 25e9;
    ib.latencyS = 4.735e-6;
    ib.switchLatencyS = 130e-9;
    ib.leafSize = 32;
    NetworkSpec s;
    s.dimensions = {nv, ib};
    s.routing = "dimension-order";
    return s;
}

/** \return the peak resident set of the process so far, MB */
double
PeakRssMb()
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss / 1024.0;
}

/** \return the resident set now, bytes */
double
RssBytes()
{
    std::ifstream statm("/proc/self/statm");
    double pages = 0;
    double resident = 0;
    statm >> pages >> resident;
    return resident * 4096.0;
}

/** \return a flow network over \p spec with \p gpus GPUs */
Ptr<FlowNetwork>
MakeFlowNetwork(const NetworkSpec& spec, uint32_t gpus, bool classes)
{
    Ptr<FlowNetwork> net = CreateObject<FlowNetwork>();
    net->SetAttribute("FlowClasses", BooleanValue(classes));
    net->SetTopology(Topology::Build(spec, gpus));
    net->SetRouting(RoutingPolicy::Create(spec.routing));
    return net;
}

/**
 * \brief 16,384 identical concurrent transfers per round over 8 paths (1 MiB each, gpu k to
 * gpu 8192 + k, k < 8: NVSwitch and InfiniBand hops), 16 rounds, each round sent when the
 * previous one is delivered. range(0): flow classes on (1) or off (0).
 */
void
BM_IdenticalTransfers16k(benchmark::State& state)
{
    const bool classes = state.range(0) != 0;
    const uint32_t gpus = 16384;
    const uint32_t messages = 16384;
    const uint32_t rounds = 16;
    double simTime = 0;
    uint64_t solved = 0;
    uint32_t classCount = 0;
    for (auto _ : state)
    {
        Ptr<FlowNetwork> net = MakeFlowNetwork(Dgx(gpus), gpus, classes);
        uint32_t round = 0;
        uint32_t left = 0;
        std::function<void()> sendRound = [&]()
        {
            left = messages;
            for (uint32_t m = 0; m < messages; ++m)
            {
                net->Send(m % 8,
                          gpus / 2 + m % 8,
                          1 << 20,
                          [&](uint64_t)
                          {
                              if (--left == 0 && ++round < rounds)
                              {
                                  sendRound();
                              }
                          });
            }
            classCount = std::max(classCount, net->GetFlowClassCount());
        };
        Simulator::ScheduleNow(sendRound);
        Simulator::Run();
        simTime = Simulator::Now().GetSeconds();
        solved = net->GetSolvedFlowCount();
        net->Dispose();
        Simulator::Destroy();
    }
    state.counters["messages"] = double(messages) * rounds;
    state.counters["sim_time_ms"] = simTime * 1e3;
    state.counters["solved_flows"] = double(solved);
    state.counters["peak_rss_MB"] = PeakRssMb();
}

BENCHMARK(BM_IdenticalTransfers16k)
    ->Arg(1)
    ->Arg(0)
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

/**
 * \brief All-to-all-like waves among 16,384 GPUs: in wave k every rank sends 4 MiB to rank
 * + 8k + 1 (another node, another rail), range(0) waves; a rank sends its next wave when its
 * previous message is delivered, so waves overlap as they would in a pairwise all-to-all.
 */
void
BM_Waves16k(benchmark::State& state)
{
    const uint32_t gpus = 16384;
    const auto waves = static_cast<uint32_t>(state.range(0));
    double simTime = 0;
    uint64_t solved = 0;
    uint64_t solves = 0;
    for (auto _ : state)
    {
        Ptr<FlowNetwork> net = MakeFlowNetwork(Dgx(gpus), gpus, true);
        std::vector<uint32_t> wave(gpus, 0);
        std::function<void(uint32_t)> send = [&](uint32_t r)
        {
            const uint32_t dst = (r + 8 * wave[r] + 9) % gpus;
            net->Send(r,
                      dst,
                      4u << 20,
                      [&, r](uint64_t)
                      {
                          if (++wave[r] < waves)
                          {
                              send(r);
                          }
                      });
        };
        Simulator::ScheduleNow(
            [&]()
            {
                for (uint32_t r = 0; r < gpus; ++r)
                {
                    send(r);
                }
            });
        Simulator::Run();
        simTime = Simulator::Now().GetSeconds();
        solved = net->GetSolvedFlowCount();
        solves = net->GetSolveCount();
        net->Dispose();
        Simulator::Destroy();
    }
    state.counters["messages"] = double(gpus) * waves;
    state.counters["sim_time_ms"] = simTime * 1e3;
    state.counters["solves"] = double(solves);
    state.counters["solved_flows"] = double(solved);
    state.counters["peak_rss_MB"] = PeakRssMb();
}

BENCHMARK(BM_Waves16k)
    ->Arg(8)
    ->Arg(32)
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

/**
 * \brief Resident memory per in-flight message: 262,144 messages of 1 GiB sent at once on the
 * 16k-GPU network, as distinct flows (range(0) = 1: every message its own pair and path) or as
 * members of 64 flow classes (0: 64 pairs, 4,096 identical messages each), measured after
 * their first solve (rates given, transmission ends scheduled); the batch's scratch buffers
 * (kept for the next batch) included. Run each in a process of its own.
 */
void
BM_MemoryPerMessage(benchmark::State& state)
{
    const bool distinct = state.range(0) != 0;
    const uint32_t gpus = 16384;
    const uint32_t messages = 262144;
    double perMessage = 0;
    for (auto _ : state)
    {
        Ptr<FlowNetwork> net = MakeFlowNetwork(Dgx(gpus), gpus, true);
        double before = 0;
        double after = 0;
        Simulator::ScheduleNow(
            [&]()
            {
                before = RssBytes();
                for (uint32_t m = 0; m < messages; ++m)
                {
                    const uint32_t src = distinct ? m % gpus : m % 64;
                    const uint32_t dst =
                        distinct ? (src + 8 + 8 * (m / gpus)) % gpus : gpus / 2 + m % 64;
                    net->Send(src, dst, 1u << 30, NetworkBackend::DeliveryCallback());
                }
            });
        Simulator::Schedule(NanoSeconds(1),
                            [&]()
                            {
                                after = RssBytes();
                                Simulator::Stop();
                            });
        Simulator::Run();
        perMessage = (after - before) / messages;
        net->Dispose();
        Simulator::Destroy();
    }
    state.counters["bytes_per_message"] = perMessage;
    state.counters["peak_rss_MB"] = PeakRssMb();
}

BENCHMARK(BM_MemoryPerMessage)
    ->Arg(1)
    ->Arg(0)
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
} // namespace

BENCHMARK_MAIN();
