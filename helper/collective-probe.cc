/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "collective-probe.h"

#include "ns3/collective-engine.h"
#include "ns3/cross-validation.h"
#include "ns3/network-backend.h"
#include "ns3/replay-error.h"
#include "ns3/simulator-guard.h"
#include "ns3/simulator.h"
#include "ns3/spec-error.h"
#include "ns3/topology.h"
#include "ns3/trace-replayer.h"

namespace ns3 {
namespace rapidllm {

CollectiveProbeResult
RunCollectiveProbe(const NetworkSpec& network,
                   const CollectiveProbeConfig& config,
                   const std::string& source)
{
    if (config.gpus == 0)
    {
        throw SpecError(source, "gpus", "must be at least 1");
    }
    for (const auto& t : config.beside)
    {
        if (t.src >= config.gpus || t.dst >= config.gpus || t.src == t.dst || t.bytes == 0)
        {
            throw SpecError("collective probe",
                            "beside",
                            "a transfer " + std::to_string(t.src) + ">" + std::to_string(t.dst)
                                + " of " + std::to_string(t.bytes)
                                + " bytes; allowed: two different ranks from 0 to "
                                + std::to_string(config.gpus - 1) + " and at least 1 byte");
        }
    }
    NetworkSpec spec = network;
    for (const auto& f : config.faults)
    {
        spec.faults.push_back(f);
    }
    Ptr<Topology> topology = Topology::Build(spec, config.gpus, source);
    CollectiveProbeResult result;
    result.routing = config.routing.empty() ? spec.routing : config.routing;
    Ptr<RoutingPolicy> routing = RoutingPolicy::Create(result.routing);
    Ptr<NetworkBackend> net = NetworkBackend::Create(config.backend);
    net->SetTopology(topology);
    net->SetRouting(routing);
    Ptr<CollectiveEngine> engine = CreateObject<CollectiveEngine>();
    engine->SetBackend(net);
    SimulatorGuard guard;
    guard.Dispose(net);
    guard.Dispose(engine);

    CollectiveRequest request;
    request.op = config.op;
    request.bytes = config.bytes;
    request.algorithm = config.algorithm;
    request.chunks = config.chunks;
    request.root = config.root;
    request.reduceBytesPerSecond = config.reduceBytesPerSecond;
    // The one collective's name for routing: a per-flow policy routes each message by it and
    // the message's step, alike on either backend.
    request.flow = 0;
    // The engine's Granularity (message unless the command line or Config says otherwise):
    // the fluid form where the backend carries it.
    request.fluid = engine->UsesFluid();
    for (uint32_t r = 0; r < config.gpus; ++r)
    {
        request.endpoints.push_back(r);
    }
    CollectivePlan plan = engine->GetPlanner().Build(request);
    result.algorithm = plan.algorithm;
    result.messages = plan.schedule.GetSendCount();

    double start = 0;
    double end = -1;
    NetworkStats stats; // at the collective's end (the simulator runs on to the watchdog's stop)
    auto pairs = SchedulePairs(plan.schedule, request.endpoints);
    for (const auto& t : config.beside)
    {
        pairs.emplace_back(t.src, t.dst);
    }
    // The packet backend opens the pairs' connections first; the collective is timed from its
    // start (the flow backend starts at once). Started as a replay starts it (its plan's
    // message floor beside other traffic included).
    net->Prepare(pairs,
                 Callback<void>(
                     [&]()
                     {
                         start = Simulator::Now().GetSeconds();
                         for (std::size_t i = 0; i < config.beside.size(); ++i)
                         {
                             // Each transfer beside it named by its place, apart from the
                             // collective's flows.
                             const auto& t = config.beside[i];
                             net->Send(t.src,
                                       t.dst,
                                       t.bytes,
                                       NetworkBackend::DeliveryCallback(),
                                       1,
                                       0,
                                       false,
                                       false,
                                       FlowHash(i, 0, 0, 2));
                         }
                         engine->Start(request,
                                       std::move(plan),
                                       CollectiveEngine::RankDoneCallback(),
                                       CollectiveEngine::DoneCallback(
                                           [&](uint64_t)
                                           {
                                               end = Simulator::Now().GetSeconds();
                                               stats = net->GetStats();
                                           }));
                     }));
    // The replay watchdog's simulated-time limit (TraceReplayer::MaxSimulatedTime, as
    // configured, also through NS_ATTRIBUTE_DEFAULT) bounds a collective too: one still
    // running then is reported, not waited for.
    TimeValue limitValue;
    CreateObject<TraceReplayer>()->GetAttribute("MaxSimulatedTime", limitValue);
    const Time limit = limitValue.Get();
    Simulator::Stop(limit);
    Simulator::Run();
    if (end < 0 && Simulator::Now() >= limit)
    {
        throw ReplayError("the collective ran away and was stopped: simulated time passed the "
                          "watchdog's MaxSimulatedTime of "
                          + std::to_string(limit.GetSeconds())
                          + " s (ns3::rapidllm::TraceReplayer::MaxSimulatedTime)");
    }
    if (end < 0)
    {
        throw SpecError(source, "", "the collective did not complete (internal error)");
    }
    result.timeS = end - start;
    result.solves = stats.solves;
    result.solvedFlows = stats.solvedFlows;
    result.algorithmBandwidthBps = result.timeS > 0 ? double(config.bytes) / result.timeS : 0;
    result.busBandwidthBps =
        result.algorithmBandwidthBps * BusBandwidthFactor(config.op, config.gpus);
    result.mostLoaded = stats.MostLoaded(config.topLinks);
    return result;
}

} // namespace rapidllm
} // namespace ns3
