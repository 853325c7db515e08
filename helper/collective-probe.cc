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

#include <algorithm>

namespace ns3 {
namespace rapidllm {

namespace {
/** The most links a progress line asks the packet count of (CollectiveProbe's progress). */
constexpr uint32_t kDetailLinks = 1 << 16;

/** Refuses a transfer outside ranks 0..gpus-1, to itself or of no bytes, naming \p field. */
void
CheckTransfers(const std::vector<ProbeTransfer>& transfers, uint32_t gpus, const char* field)
{
    for (const auto& t : transfers)
    {
        if (t.src >= gpus || t.dst >= gpus || t.src == t.dst || t.bytes == 0)
        {
            throw SpecError("collective probe",
                            field,
                            "a transfer " + std::to_string(t.src) + ">" + std::to_string(t.dst)
                                + " of " + std::to_string(t.bytes)
                                + " bytes; allowed: two different ranks from 0 to "
                                + std::to_string(gpus - 1) + " and at least 1 byte");
        }
    }
}

/**
 * Runs the simulator until \p end is set, within the replay watchdog's simulated-time limit
 * (TraceReplayer::MaxSimulatedTime, as configured, also through NS_ATTRIBUTE_DEFAULT): what
 * still runs then is reported, not waited for.
 */
void
RunWatched(const double& end, const std::string& what, const std::string& source)
{
    TimeValue limitValue;
    CreateObject<TraceReplayer>()->GetAttribute("MaxSimulatedTime", limitValue);
    const Time limit = limitValue.Get();
    Simulator::Stop(limit);
    Simulator::Run();
    if (end < 0 && Simulator::Now() >= limit)
    {
        throw ReplayError("the " + what
                          + " ran away and was stopped: simulated time passed the "
                            "watchdog's MaxSimulatedTime of "
                          + std::to_string(limit.GetSeconds())
                          + " s (ns3::rapidllm::TraceReplayer::MaxSimulatedTime)");
    }
    if (end < 0)
    {
        throw SpecError(source, "", "the " + what + " did not complete (internal error)");
    }
}

} // namespace

CollectiveProbeResult
RunCollectiveProbe(const NetworkSpec& network,
                   const CollectiveProbeConfig& config,
                   const std::string& source)
{
    if (config.gpus == 0)
    {
        throw SpecError(source, "gpus", "must be at least 1");
    }
    CheckTransfers(config.beside, config.gpus, "beside");
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
    if (config.progress)
    {
        const uint64_t total = result.messages + config.beside.size();
        config.progress->Attach(
            [&net, &end, total]()
            {
                const NetworkStats now = net->GetCounters();
                RunProgress::Status s;
                s.total = total;
                s.done = std::min(total, now.messagesDelivered);
                s.unit = "messages";
                // A packet network's count is its statistics'; naming every link of a large
                // network a few times a second would stall the run (16.7 M links: seconds a
                // tick), and a packet network that large does not run anyway.
                const uint64_t packets = net->GetTopology()->GetLinkCount() <= kDetailLinks
                                             ? net->GetStats().dataPackets
                                             : 0;
                if (packets > 0)
                {
                    s.detail = std::to_string(packets) + " data packets delivered";
                }
                s.finished = end >= 0;
                return s;
            });
    }
    RunWatched(end, "collective", source);
    result.timeS = end - start;
    result.solves = stats.solves;
    result.solvedFlows = stats.solvedFlows;
    result.packet = config.backend == "packet";
    result.dataPackets = stats.dataPackets;
    result.drops = stats.drops;
    result.algorithmBandwidthBps = result.timeS > 0 ? double(config.bytes) / result.timeS : 0;
    result.busBandwidthBps =
        result.algorithmBandwidthBps * BusBandwidthFactor(config.op, config.gpus);
    result.mostLoaded = stats.MostLoaded(config.topLinks);
    return result;
}

double
RunTransferProbe(const NetworkSpec& network,
                 uint32_t gpus,
                 const std::vector<ProbeTransfer>& transfers,
                 const std::string& backend,
                 const std::string& routing,
                 const std::string& source)
{
    if (gpus == 0)
    {
        throw SpecError(source, "gpus", "must be at least 1");
    }
    CheckTransfers(transfers, gpus, "transfers");
    if (transfers.empty())
    {
        return 0;
    }
    Ptr<Topology> topology = Topology::Build(network, gpus, source);
    Ptr<NetworkBackend> net = NetworkBackend::Create(backend);
    net->SetTopology(topology);
    net->SetRouting(RoutingPolicy::Create(routing.empty() ? network.routing : routing));
    SimulatorGuard guard;
    guard.Dispose(net);

    std::vector<NetworkBackend::EndpointPair> pairs;
    for (const auto& t : transfers)
    {
        pairs.emplace_back(t.src, t.dst);
    }
    double start = 0;
    double end = -1;
    std::size_t landed = 0;
    net->Prepare(pairs,
                 Callback<void>(
                     [&]()
                     {
                         start = Simulator::Now().GetSeconds();
                         for (std::size_t i = 0; i < transfers.size(); ++i)
                         {
                             const auto& t = transfers[i];
                             net->Send(t.src,
                                       t.dst,
                                       t.bytes,
                                       NetworkBackend::DeliveryCallback(
                                           [&](uint64_t)
                                           {
                                               if (++landed == transfers.size())
                                               {
                                                   end = Simulator::Now().GetSeconds();
                                               }
                                           }),
                                       1,
                                       0,
                                       false,
                                       false,
                                       FlowHash(i, 0, 0, 3));
                         }
                     }));
    RunWatched(end, "transfers", source);
    return end - start;
}

} // namespace rapidllm
} // namespace ns3
