/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "cross-validation.h"

#include "ns3/collective-algorithms.h"
#include "ns3/collective-engine.h"
#include "ns3/hardware-spec.h"
#include "ns3/routing-policy.h"
#include "ns3/simulator-guard.h"
#include "ns3/simulator.h"
#include "ns3/spec-error.h"
#include "ns3/topology.h"

#include <algorithm>
#include <chrono>
#include <map>

namespace ns3 {
namespace rapidllm {

namespace {

/** \return the registered extra workloads */
std::vector<std::function<XvalWorkload()>>&
Registered()
{
    static std::vector<std::function<XvalWorkload()>> factories;
    return factories;
}

/** \return a size in MiB as a row-name suffix */
std::string
SizeName(uint64_t bytes)
{
    return std::to_string(bytes >> 20) + "MiB";
}

/** \brief Starts a schedule with a CollectiveEngine that lives until the schedule is done. */
void
StartSchedule(Ptr<NetworkBackend> backend,
              const CollectiveSchedule& schedule,
              const std::vector<uint32_t>& endpoints,
              std::function<void()> done)
{
    Ptr<CollectiveEngine> engine = CreateObject<CollectiveEngine>();
    engine->SetBackend(backend);
    engine->Start(schedule,
                  endpoints,
                  CollectiveEngine::RankDoneCallback(),
                  CollectiveEngine::DoneCallback(
                      [engine, done](uint64_t)
                      {
                          done();
                      }),
                  0); // named for routing, alike on both backends
}

/**
 * \return a workload running one collective on a CollectiveEngine, at the granularity of the
 * engine's Granularity attribute (messages unless set otherwise, e.g. by `--granularity`)
 */
XvalWorkload
CollectiveWorkload(const CollectiveRequest& request)
{
    XvalWorkload w;
    w.pairs = [request](const Topology& topology)
    {
        CollectivePlan plan = BuildCollective(request, topology);
        return SchedulePairs(plan.schedule, request.endpoints);
    };
    w.start = [request](Ptr<NetworkBackend> backend, std::function<void()> done)
    {
        Ptr<CollectiveEngine> engine = CreateObject<CollectiveEngine>();
        engine->SetBackend(backend);
        // Named for routing, so that a per-flow policy routes each message alike on both.
        CollectiveRequest named = request;
        named.flow = named.flow.value_or(0);
        engine->Start(named,
                      CollectiveEngine::RankDoneCallback(),
                      CollectiveEngine::DoneCallback(
                          [engine, done](uint64_t)
                          {
                              done();
                          }));
    };
    return w;
}

/** \return a request for ranks [0, gpus) */
CollectiveRequest
Request(CollectiveOp op, uint32_t gpus, uint64_t bytes, const std::string& algorithm)
{
    CollectiveRequest r;
    r.op = op;
    r.bytes = bytes;
    r.algorithm = algorithm;
    for (uint32_t i = 0; i < gpus; ++i)
    {
        r.endpoints.push_back(i);
    }
    return r;
}

/** \return a one-dimension network reusing a preset dimension's link parameters */
NetworkSpec
Rewired(const NetworkDimensionSpec& base,
        TopologyKind kind,
        uint32_t size,
        const std::string& routing)
{
    NetworkDimensionSpec d = base;
    d.kind = kind;
    d.size = size;
    d.shape.clear();
    d.leafSize = 0;
    d.oversubscription = 1;
    d.collective.clear();
    NetworkSpec s;
    s.dimensions.push_back(d);
    s.routing = routing;
    return s;
}

} // namespace

std::vector<std::pair<uint32_t, uint32_t>>
SchedulePairs(const CollectiveSchedule& schedule, const std::vector<uint32_t>& endpoints)
{
    // Each pair once, and once more where it carries unordered messages (a double binary
    // tree's other tree): the packet network then prepares a connection for each.
    std::map<std::pair<uint32_t, uint32_t>, bool> unordered;
    for (const auto& s : schedule.GetSteps())
    {
        if (s.isSend && endpoints.at(s.src) != endpoints.at(s.dst))
        {
            unordered[{endpoints[s.src], endpoints[s.dst]}] |= !s.ordered;
        }
    }
    std::vector<std::pair<uint32_t, uint32_t>> pairs;
    for (const auto& [pair, twice] : unordered)
    {
        pairs.push_back(pair);
        if (twice)
        {
            pairs.push_back(pair);
        }
    }
    return pairs;
}

XvalWorkload
ScheduleWorkload(const CollectiveSchedule& schedule, const std::vector<uint32_t>& endpoints)
{
    XvalWorkload w;
    w.pairs = [schedule, endpoints](const Topology&)
    {
        return SchedulePairs(schedule, endpoints);
    };
    w.start = [schedule, endpoints](Ptr<NetworkBackend> backend, std::function<void()> done)
    {
        StartSchedule(backend, schedule, endpoints, done);
    };
    return w;
}

void
RegisterXvalWorkload(std::function<XvalWorkload()> factory)
{
    Registered().push_back(std::move(factory));
}

std::vector<XvalWorkload>
XvalWorkloads(bool quickOnly)
{
    // Link parameters come from one hardware preset (its sources are in the YAML): the DGX
    // A100 node (NVSwitch) and its HDR InfiniBand fat tree. The single-dimension rows rewire
    // the InfiniBand links as a switch, an oversubscribed fat tree or a torus.
    const NetworkSpec a100 = HardwareSpec::Load("a100-sxm-80gb").network;
    const NetworkDimensionSpec& ib = a100.dimensions.back();
    std::vector<XvalWorkload> all;
    auto add = [&](XvalWorkload w,
                   const std::string& name,
                   const std::string& description,
                   bool quick,
                   const NetworkSpec& net,
                   uint32_t endpoints)
    {
        w.name = name;
        w.description = description;
        w.quick = quick;
        w.network = net;
        w.endpoints = endpoints;
        all.push_back(std::move(w));
    };

    // 1. Ring all-reduce on one DGX node (8), two (16) and eight (64), rank order.
    for (uint32_t gpus : {8u, 16u, 64u})
    {
        for (uint64_t bytes : {1ull << 20, 16ull << 20, 256ull << 20})
        {
            const bool quick = bytes == (1ull << 20) && gpus <= 16;
            add(CollectiveWorkload(Request(CollectiveOp::ALL_REDUCE, gpus, bytes, "ring")),
                "ring-allreduce-" + std::to_string(gpus) + "gpu-" + SizeName(bytes),
                "ring all-reduce, " + std::to_string(gpus)
                    + " GPUs of DGX A100 nodes (NVSwitch + "
                      "HDR fat tree)",
                quick,
                a100,
                gpus);
        }
    }
    // 2. All-to-all among 16 GPUs: one switch, and a 2:1 oversubscribed fat tree.
    {
        NetworkSpec sw = Rewired(ib, TopologyKind::SWITCH, 16, "dimension-order");
        NetworkSpec ft = Rewired(ib, TopologyKind::FAT_TREE, 16, "dimension-order");
        ft.dimensions[0].leafSize = 4;
        ft.dimensions[0].oversubscription = 2;
        for (uint64_t bytes : {4ull << 20, 64ull << 20})
        {
            const bool quick = bytes == (4ull << 20);
            add(CollectiveWorkload(Request(CollectiveOp::ALL_TO_ALL, 16, bytes, "direct")),
                "alltoall-16gpu-switch-" + SizeName(bytes),
                "all-to-all, 16 GPUs on one HDR switch",
                quick,
                sw,
                16);
            add(CollectiveWorkload(Request(CollectiveOp::ALL_TO_ALL, 16, bytes, "direct")),
                "alltoall-16gpu-fattree2to1-" + SizeName(bytes),
                "all-to-all, 16 GPUs on a 2:1 oversubscribed HDR fat tree (4 leaves, 2 spines)",
                quick,
                ft,
                16);
        }
    }
    // 3. Incast: 15 GPUs send to one through one switch port.
    {
        NetworkSpec sw = Rewired(ib, TopologyKind::SWITCH, 16, "dimension-order");
        for (uint64_t bytes : {2ull << 20, 32ull << 20})
        {
            CollectiveSchedule s(16);
            for (uint32_t r = 1; r < 16; ++r)
            {
                s.AddSend(r, 0, bytes, {});
            }
            std::vector<uint32_t> endpoints(16);
            for (uint32_t r = 0; r < 16; ++r)
            {
                endpoints[r] = r;
            }
            add(ScheduleWorkload(s, endpoints),
                "incast-15to1-" + SizeName(bytes),
                "15-to-1 incast of " + SizeName(bytes) + " each through one HDR switch port",
                bytes == (2ull << 20),
                sw,
                16);
        }
    }
    // 4. All-reduce on a 4x4 torus with dimension-order routing: healthy, one link at 50%,
    //    one link dead (dimension-order goes the other way around that ring).
    {
        NetworkSpec torus = Rewired(ib, TopologyKind::TORUS, 16, "dimension-order");
        torus.dimensions[0].shape = {4, 4};
        torus.dimensions[0].switchLatencyS = 0;
        NetworkSpec degraded = torus;
        degraded.faults.push_back({"gpu1-gpu2", 0.5});
        NetworkSpec dead = torus;
        dead.faults.push_back({"gpu1-gpu2", 0.0});
        struct Case
        {
            const char* name;
            const char* what;
            const NetworkSpec* net;
        };
        for (const Case& c : {Case{"", "", &torus},
                              Case{"-degraded", ", link gpu1-gpu2 at 50%", &degraded},
                              Case{"-deadlink", ", link gpu1-gpu2 dead (rerouted)", &dead}})
        {
            for (uint64_t bytes : {4ull << 20, 64ull << 20})
            {
                add(CollectiveWorkload(Request(CollectiveOp::ALL_REDUCE, 16, bytes, "ring")),
                    std::string("torus4x4-allreduce") + c.name + "-" + SizeName(bytes),
                    std::string("ring all-reduce on a 4x4 HDR torus, dimension-order routing")
                        + c.what,
                    bytes == (4ull << 20),
                    *c.net,
                    16);
            }
        }
    }
    // 5. Pipeline-parallel chain: 4 stages, one per DGX node (GPU 0 of each), 8 micro-batches
    //    forwarded stage to stage (a stage forwards micro-batch m once it has received it and
    //    has sent m-1).
    {
        for (uint64_t bytes : {1ull << 20, 16ull << 20})
        {
            const uint32_t stages = 4;
            const uint32_t micro = 8;
            CollectiveSchedule s(stages);
            std::vector<std::vector<uint32_t>> step(stages, std::vector<uint32_t>(micro));
            for (uint32_t m = 0; m < micro; ++m)
            {
                for (uint32_t st = 0; st + 1 < stages; ++st)
                {
                    std::vector<uint32_t> deps;
                    if (st > 0)
                    {
                        deps.push_back(step[st - 1][m]);
                    }
                    if (m > 0)
                    {
                        deps.push_back(step[st][m - 1]);
                    }
                    step[st][m] = s.AddSend(st, st + 1, bytes, deps);
                }
            }
            add(ScheduleWorkload(s, {0, 8, 16, 24}),
                "pipeline-4stage-" + SizeName(bytes),
                "pipeline send/recv chain, 4 stages on 4 DGX A100 nodes, 8 micro-batches of "
                    + SizeName(bytes),
                bytes == (1ull << 20),
                a100,
                32);
        }
    }
    // 6. NCCL's ring broadcast across DGX nodes (a chain along each channel's ring; LL at
    //    these sizes, which forwards each hop's bytes as they arrive), two and eight nodes.
    for (uint32_t gpus : {16u, 64u})
    {
        add(CollectiveWorkload(Request(CollectiveOp::BROADCAST, gpus, 1ull << 20, "nccl")),
            "nccl-broadcast-" + std::to_string(gpus) + "gpu-1MiB",
            "NCCL ring broadcast from rank 0, " + std::to_string(gpus)
                + " GPUs of DGX A100 nodes (NVSwitch + HDR fat tree)",
            gpus == 16,
            a100,
            gpus);
    }
    for (const auto& f : Registered())
    {
        all.push_back(f());
    }
    if (quickOnly)
    {
        all.erase(std::remove_if(all.begin(),
                                 all.end(),
                                 [](const XvalWorkload& w)
                                 {
                                     return !w.quick;
                                 }),
                  all.end());
    }
    return all;
}

XvalRun
RunXvalWorkload(const XvalWorkload& workload,
                const std::string& backend,
                std::function<void(Ptr<NetworkBackend>)> configure)
{
    const auto wall0 = std::chrono::steady_clock::now();
    XvalRun run;
    Ptr<Topology> topology = Topology::Build(workload.network, workload.endpoints, workload.name);
    Ptr<RoutingPolicy> routing = RoutingPolicy::Create(workload.network.routing);
    Ptr<NetworkBackend> net = NetworkBackend::Create(backend);
    if (configure)
    {
        configure(net);
    }
    net->SetTopology(topology);
    net->SetRouting(routing);
    double start = -1;
    double end = -1;
    {
        SimulatorGuard guard;
        guard.Dispose(net);
        std::vector<NetworkBackend::EndpointPair> pairs;
        if (workload.pairs)
        {
            pairs = workload.pairs(*topology);
        }
        net->Prepare(pairs,
                     Callback<void>(
                         [&]()
                         {
                             start = Simulator::Now().GetSeconds();
                             workload.start(net,
                                            [&]()
                                            {
                                                end = Simulator::Now().GetSeconds();
                                                Simulator::Stop();
                                            });
                         }));
        Simulator::Run();
        const NetworkStats stats = net->GetStats();
        run.messages = stats.messagesSent;
        run.dataPackets = stats.dataPackets;
        run.drops = stats.drops;
    }
    if (start < 0 || end < 0)
    {
        throw SpecError(
            workload.name, "", "the workload did not complete on the " + backend + " backend");
    }
    run.timeS = end - start;
    run.wallS = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    return run;
}

XvalRow
CrossValidate(const XvalWorkload& workload)
{
    XvalRow row;
    row.workload = workload.name;
    // The flow run is short enough for wall-clock noise to dominate on a shared machine: keep
    // the fastest of three (the simulated result is identical each time).
    row.flow = RunXvalWorkload(workload, "flow");
    for (int i = 0; i < 2; ++i)
    {
        row.flow.wallS = std::min(row.flow.wallS, RunXvalWorkload(workload, "flow").wallS);
    }
    row.packet = RunXvalWorkload(workload, "packet");
    row.relDiff = row.packet.timeS > 0 ? (row.flow.timeS - row.packet.timeS) / row.packet.timeS : 0;
    return row;
}

} // namespace rapidllm
} // namespace ns3
