/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "rapid-llm-helper.h"

#include "ns3/attention-kernel-choice.h"
#include "ns3/attribute-text.h"
#include "ns3/boolean.h"
#include "ns3/compute-coster.h"
#include "ns3/gpu-compute-model.h"
#include "ns3/gpu-kernel-common.h"
#include "ns3/host-dispatch.h"
#include "ns3/log.h"
#include "ns3/memory-model.h"
#include "ns3/network-backend.h"
#include "ns3/object-factory.h"
#include "ns3/packet-fabric.h"
#include "ns3/packet-network.h"
#include "ns3/priority-queue-scheduler.h"
#include "ns3/replay-error.h"
#include "ns3/report-bounds.h"
#include "ns3/routing-policy.h"
#include "ns3/simulator.h"
#include "ns3/spec-error.h"
#include "ns3/step-energy.h"
#include "ns3/string.h"
#include "ns3/topology.h"
#include "ns3/type-registry.h"
#include "ns3/uinteger.h"
#include "packet-resolution.h"
#include "simulator-guard.h"

#include <chrono>
#include <iomanip>
#include <sstream>

namespace ns3 {
namespace rapidllm {

NS_LOG_COMPONENT_DEFINE("RapidLlmHelper");
NS_OBJECT_ENSURE_REGISTERED(RapidLlmHelper);

TypeId
RapidLlmHelper::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::rapidllm::RapidLlmHelper")
            .SetParent<Object>()
            .SetGroupName("RapidLlm")
            .AddConstructor<RapidLlmHelper>()
            .AddAttribute(
                "Scheduler",
                "The event scheduler Run() and Replay() give the simulator they own "
                "(the standard library's binary heap: one array, no allocation per event, "
                "which matters at millions of events). Install() leaves the "
                "simulator's scheduler as the script set it (ns-3's default: "
                "ns3::MapScheduler); the event order, and so every result, is the "
                "same with any scheduler.",
                TypeIdValue(PriorityQueueScheduler::GetTypeId()),
                MakeTypeIdAccessor(&RapidLlmHelper::m_scheduler),
                MakeTypeIdChecker())
            .AddTraceSource("OperatorStart",
                            "An operator of a replayed rank starts (an OperatorEvent).",
                            MakeTraceSourceAccessor(&RapidLlmHelper::m_opStart),
                            "ns3::rapidllm::TraceReplayer::OperatorTracedCallback")
            .AddTraceSource("OperatorEnd",
                            "An operator of a replayed rank ends (an OperatorEvent).",
                            MakeTraceSourceAccessor(&RapidLlmHelper::m_opEnd),
                            "ns3::rapidllm::TraceReplayer::OperatorTracedCallback")
            .AddTraceSource("ComputeIdle",
                            "A replayed rank's compute streams were idle (an IdleEvent: rank, "
                            "start, end, and what the report charges it to).",
                            MakeTraceSourceAccessor(&RapidLlmHelper::m_computeIdle),
                            "ns3::rapidllm::TraceReplayer::IdleTracedCallback")
            .AddTraceSource("MessageDelivered",
                            "A network message's last byte arrived (id, source GPU, destination "
                            "GPU, bytes, latency).",
                            MakeTraceSourceAccessor(&RapidLlmHelper::m_messageDelivered),
                            "ns3::rapidllm::RapidLlmHelper::MessageTracedCallback");
    return tid;
}

RapidLlmHelper::RapidLlmHelper()
{
    m_backendFactory.SetTypeId(BackendType(m_backendName));
    m_replayerFactory.SetTypeId(TraceReplayer::GetTypeId());
    // One rank per set of symmetric copies: exact on symmetric networks, and what makes a
    // thousand-GPU job replay in a second (TraceReplayer's own default is false).
    m_replayerFactory.Set("Symmetry", BooleanValue(true));
}

RapidLlmHelper::~RapidLlmHelper() {}

void
RapidLlmHelper::DoDispose()
{
    m_replayer = nullptr;
    m_backend = nullptr;
    m_replaced.clear();
    m_job.reset();
    m_workload.reset();
    Object::DoDispose();
}

void
RapidLlmHelper::Load(const std::string& model, const std::string& hardware)
{
    m_model = ModelSpec::Load(model);
    m_hardware = HardwareSpec::Load(hardware);
}

void
RapidLlmHelper::SetModel(const ModelSpec& model)
{
    // A spec built in code gets the checks a file's gets (a model of no layers ran).
    model.Validate(model.name.empty() ? "SetModel" : model.name);
    m_model = model;
}

void
RapidLlmHelper::SetHardware(const HardwareSpec& hardware)
{
    // The links' numbers (a negative or NaN bandwidth aborted in the flow solver).
    hardware.network.Validate(hardware.name.empty() ? "SetHardware" : hardware.name);
    m_hardware = hardware;
}

void
RapidLlmHelper::SetTimedFaults(const std::vector<ScheduledFault>& faults)
{
    m_timedFaults = faults;
}

const std::vector<ScheduledFault>&
RapidLlmHelper::GetTimedFaults() const
{
    return m_timedFaults;
}

void
RapidLlmHelper::SetSlowGpus(const std::map<uint32_t, double>& speeds)
{
    m_slowGpus = speeds;
}

const std::map<uint32_t, double>&
RapidLlmHelper::GetSlowGpus() const
{
    return m_slowGpus;
}

void
RapidLlmHelper::SetGpuVariants(const std::map<uint32_t, GpuSpec>& gpus)
{
    m_gpuVariants = gpus;
}

const std::map<uint32_t, GpuSpec>&
RapidLlmHelper::GetGpuVariants() const
{
    return m_gpuVariants;
}

void
RapidLlmHelper::SetRun(const RunSpec& run)
{
    m_run = run;
}

const ModelSpec&
RapidLlmHelper::GetModel() const
{
    return m_model;
}

const HardwareSpec&
RapidLlmHelper::GetHardware() const
{
    return m_hardware;
}

const RunSpec&
RapidLlmHelper::GetRun() const
{
    return m_run;
}

TypeId
RapidLlmHelper::BackendType(const std::string& type)
{
    return TypeRegistryBase::Lookup(
        NetworkBackend::GetTypeId(), type, "backend", "network backend");
}

TypeId
RapidLlmHelper::RoutingType(const std::string& type)
{
    return TypeRegistryBase::Lookup(RoutingPolicy::GetTypeId(), type, "routing", "routing policy");
}

void
RapidLlmHelper::SetChecked(ObjectFactory& factory,
                           const std::string& name,
                           const AttributeValue& value)
{
    // ObjectFactory::Set aborts on an unknown attribute or a bad value; a script gets an
    // error it can catch instead.
    const TypeId tid = factory.GetTypeId();
    TypeId::AttributeInformation info;
    if (!tid.LookupAttributeByName(name, &info))
    {
        std::string known;
        for (TypeId t = tid;; t = t.GetParent())
        {
            for (std::size_t i = 0; i < t.GetAttributeN(); ++i)
            {
                known += (known.empty() ? "" : ", ") + t.GetAttribute(i).name;
            }
            if (t == t.GetParent())
            {
                break;
            }
        }
        throw SpecError("",
                        name,
                        tid.GetName() + " has no attribute '" + name
                            + "'; its attributes: " + (known.empty() ? "none" : known));
    }
    // A value given as text is parsed by the attribute's type, and some of ns-3's parsers
    // (integers, Time) abort on bad text: check it first.
    const auto* text = dynamic_cast<const StringValue*>(&value);
    if (text && info.checker->GetValueTypeName() != "ns3::StringValue")
    {
        const std::string why = CheckAttributeText(tid, name, text->Get());
        if (!why.empty())
        {
            throw SpecError("", name, tid.GetName() + "::" + name + ": " + why);
        }
    }
    if (!info.checker->CreateValidValue(value))
    {
        throw SpecError("",
                        name,
                        "not a valid value for " + tid.GetName() + "::" + name + " ("
                            + info.checker->GetUnderlyingTypeInformation() + ")");
    }
    factory.Set(name, value);
}

void
RapidLlmHelper::SetBackendAttribute(const std::string& name, const AttributeValue& value)
{
    SetChecked(m_backendFactory, name, value);
}

void
RapidLlmHelper::SetRoutingPolicyAttribute(const std::string& name, const AttributeValue& value)
{
    if (m_routingFactory.IsTypeIdSet())
    {
        SetChecked(m_routingFactory, name, value);
        return;
    }
    m_routingSet.emplace_back(name, value.Copy());
}

void
RapidLlmHelper::SetReplayerAttribute(const std::string& name, const AttributeValue& value)
{
    SetChecked(m_replayerFactory, name, value);
    m_smCountSet = m_smCountSet || name == "SmCount";
}

std::string
RapidLlmHelper::GetBackendName() const
{
    return m_backendName;
}

Workload
RapidLlmHelper::BuildWorkload() const
{
    Ptr<GpuComputeModel> compute = CreateObject<GpuComputeModel>(m_hardware.gpu);
    Workload w = Workload::Build(m_model, m_run, MakeComputeCoster(compute));
    ApplyHostDispatch(w, m_hardware.gpu.host);
    return w;
}

void
RapidLlmHelper::CostGpuVariants(const Workload& w, const OperatorCoster& coster)
{
    m_kernelFactors.clear();
    m_variantDynamicJ = 0;
    m_variantIdleW = 0;
    for (const auto& [gpu, spec] : m_gpuVariants)
    {
        if (gpu >= w.layout.Ranks())
        {
            throw SpecError("RapidLlmHelper::SetGpuVariants",
                            "",
                            "gpu" + std::to_string(gpu) + " is not a GPU of the job; allowed: gpu0"
                                + (w.layout.Ranks() > 1
                                       ? " to gpu" + std::to_string(w.layout.Ranks() - 1)
                                       : ""));
        }
        if (spec.hbmBytes != m_hardware.gpu.hbmBytes)
        {
            throw SpecError("RapidLlmHelper::SetGpuVariants",
                            "",
                            "gpu" + std::to_string(gpu)
                                + ": a GPU's own HBM capacity is not modelled (the memory verdict "
                                  "is per stage); --set=gpu.hbm_gib=... changes every GPU's");
        }
        // Each distinct operator costed once on each GPU: its time factor and extra energy.
        Ptr<GpuComputeModel> model = CreateObject<GpuComputeModel>(spec);
        const OperatorCoster other = MakeComputeCoster(model);
        std::unordered_map<OperatorDesc, std::pair<double, double>, OperatorDescHash> costed;
        const StageGraph& g = w.GraphOf(gpu);
        std::vector<double> factors(g.nodes.size(), 1.0);
        for (std::size_t i = 0; i < g.nodes.size(); ++i)
        {
            if (g.nodes[i].kind != WorkNodeKind::COMPUTE)
            {
                continue;
            }
            const OperatorDesc& op = g.OpOf(g.nodes[i]);
            auto it = costed.find(op);
            if (it == costed.end())
            {
                const OperatorCost healthy = coster(op);
                const OperatorCost changed = other(op);
                it = costed
                         .emplace(
                             op,
                             std::make_pair(healthy.timeS > 0 ? changed.timeS / healthy.timeS : 1.0,
                                            changed.energyJ - healthy.energyJ))
                         .first;
            }
            factors[i] = it->second.first;
            m_variantDynamicJ += it->second.second;
        }
        m_kernelFactors[gpu] = std::move(factors);
        m_variantIdleW += spec.power.WaitingW() - m_hardware.gpu.power.WaitingW();
    }
}

Ptr<TraceReplayer>
RapidLlmHelper::Install()
{
    // The workload as BuildWorkload makes it, keeping each distinct operator's dynamic energy
    // for the report (the workload memoizes costs: the coster sees each distinct operator once).
    // Too big for the host: refused before the graphs are built.
    Topology::CheckEndpoints(m_run.parallel.Gpus(), m_hardware.name);
    Ptr<GpuComputeModel> compute = CreateObject<GpuComputeModel>(m_hardware.gpu);
    const OperatorCoster coster = MakeComputeCoster(compute);
    m_energyOf.clear();
    auto workload =
        std::make_unique<Workload>(Workload::Build(m_model,
                                                   m_run,
                                                   [this, &coster](const OperatorDesc& op)
                                                   {
                                                       OperatorCost c = coster(op);
                                                       m_energyOf[op] = c.energyJ;
                                                       return c;
                                                   }));
    ApplyHostDispatch(*workload, m_hardware.gpu.host);
    m_memoryReport = MemoryReportOf(AnalyzeMemory(*workload, m_hardware.gpu));
    // The first token is the first sampling pass in program order (the last stage's): the
    // prefill's, or that of the first decode step when the prefill does not sample; with
    // batches in flight through a pipeline, the last of that pass's sampling kernels.
    std::vector<uint32_t> firstSample;
    if (m_run.mode != RunMode::TRAINING)
    {
        for (uint32_t s = 0; s < workload->stages.size(); ++s)
        {
            firstSample.push_back(workload->FirstTokenNode(s));
        }
    }
    CostGpuVariants(*workload, coster);
    auto job = std::make_shared<ReplayJob>(ReplayJob::FromWorkload(*workload));
    m_workload = std::move(workload);
    m_firstSample = std::move(firstSample);
    return InstallJob(std::move(job));
}

Ptr<TraceReplayer>
RapidLlmHelper::Install(TraceSet set)
{
    if (set.ranks.empty())
    {
        // Nothing to replay; the network would be sized for no GPUs and complain about that.
        throw ReplayError("the trace set has no ranks: give it at least one rank's trace");
    }
    if (!m_gpuVariants.empty())
    {
        throw SpecError("RapidLlmHelper::SetGpuVariants",
                        "",
                        "a trace set holds kernel times, not operators to cost on another GPU: "
                        "GPUs of their own spec apply to a job's workload (run)");
    }
    m_workload.reset();
    m_firstSample.clear();
    // An inference trace set records where its first token comes out (SetTokens).
    m_traceFirstToken.clear();
    m_traceGenerated = set.ranks.front().GetGeneratedTokens();
    m_traceRequests = set.ranks.front().GetRequests();
    if (m_traceGenerated > 0)
    {
        for (const auto& r : set.ranks)
        {
            m_traceFirstToken.push_back(r.GetFirstTokenNode());
        }
    }
    m_kernelFactors.clear();
    m_variantDynamicJ = 0;
    m_variantIdleW = 0;
    return InstallJob(std::make_shared<ReplayJob>(ReplayJob::FromTraceSet(std::move(set))));
}

void
RapidLlmHelper::RefuseUnfinishablePacketRun(Ptr<NetworkBackend> backend,
                                            Ptr<TraceReplayer> replayer) const
{
    Ptr<PacketNetwork> packet = DynamicCast<PacketNetwork>(backend);
    if (!packet)
    {
        return;
    }
    // Every byte crosses the packet network in frames of at most an MTU, each frame at least
    // four simulator events (leaving its GPU, reaching and leaving a switch, arriving), ACKs
    // not counted: a job whose frames alone pass the watchdog's MaxEvents would run for hours
    // and stop there, so it is refused before it starts.
    UintegerValue mtu;
    packet->GetAttribute("Mtu", mtu);
    UintegerValue maxEvents;
    replayer->GetAttribute("MaxEvents", maxEvents);
    const double bytes = m_job->SentBytes();
    const double frames =
        bytes / double(mtu.Get() - PacketFabric::kIpHeader - PacketFabric::kTcpHeader);
    if (4 * frames > double(maxEvents.Get()))
    {
        std::ostringstream os;
        os << "the packet network would carry " << std::setprecision(3) << bytes / 1e12
           << " TB in about " << frames << " frames of " << mtu.Get()
           << " bytes, at least 4 simulator events each: above the replay watchdog's MaxEvents ("
           << double(maxEvents.Get())
           << ", hours of host time); use the flow backend, or fewer GPUs or a smaller batch "
              "for a packet-level check";
        throw SpecError("", "backend", os.str());
    }
}

Ptr<TraceReplayer>
RapidLlmHelper::InstallJob(std::shared_ptr<ReplayJob> job)
{
    NoteSimulation(); // the simulator starts here (UsePicoseconds is refused after it)
    if (m_replayer)
    {
        if (m_startEvent.IsRunning())
        {
            m_startEvent.Cancel(); // not started: it never runs, nothing refers to it
        }
        else if (m_replayer->GetRankCount() > 0)
        {
            // Started and not collected: its events (watchdog, compute, network) refer to it,
            // so it is kept alive and runs on.
            m_replaced.emplace_back(m_replayer, m_job);
        }
    }
    m_replayer = nullptr;
    m_backend = nullptr;
    m_job = std::move(job);
    m_result = ReplayResult();
    m_collected = false;
    // Created in the order the figures were first made in (replayer, backend, topology,
    // routing), so that ns-3 random streams, if a backend draws any, are assigned alike.
    Ptr<TraceReplayer> replayer = m_replayerFactory.Create<TraceReplayer>();
    if (!m_smCountSet)
    {
        // Collectives take SMs from the kernels they overlap on this GPU (SmScaling).
        replayer->SetAttribute("SmCount", UintegerValue(m_hardware.gpu.smCount));
    }
    Ptr<NetworkBackend> backend = m_backendFactory.Create<NetworkBackend>();
    backend->SetTopology(
        Topology::Build(m_hardware.network, m_job->GetRankCount(), m_hardware.name));
    ObjectFactory routing = m_routingFactory;
    if (!routing.IsTypeIdSet())
    {
        routing.SetTypeId(RoutingType(m_hardware.network.routing));
        for (const auto& [name, value] : m_routingSet)
        {
            SetChecked(routing, name, *value);
        }
    }
    backend->SetRouting(routing.Create<RoutingPolicy>());
    RefuseUnfinishablePacketRun(backend, replayer);
    Ptr<FaultSchedule> schedule;
    if (!m_timedFaults.empty())
    {
        schedule = CreateObject<FaultSchedule>();
        for (const auto& f : m_timedFaults)
        {
            schedule->Add(f);
        }
        replayer->SetAttribute("Symmetry", BooleanValue(false));
    }
    if (!m_messageDelivered.IsEmpty())
    {
        backend->TraceConnectWithoutContext(
            "MessageDelivered", MakeCallback(&RapidLlmHelper::OnMessageDelivered, this));
        // Every message of every rank, symmetric copies included, must then cross the network.
        replayer->SetAttribute("TraceAllMessages", BooleanValue(true));
    }
    replayer->SetBackend(backend);
    replayer->SetComputeSpeeds(m_slowGpus);
    replayer->SetKernelFactors(m_kernelFactors);
    if (!m_opStart.IsEmpty())
    {
        replayer->TraceConnectWithoutContext("OperatorStart",
                                             MakeCallback(&RapidLlmHelper::OnOperatorStart, this));
    }
    if (!m_opEnd.IsEmpty() || !m_firstSample.empty() || !m_traceFirstToken.empty())
    {
        replayer->TraceConnectWithoutContext("OperatorEnd",
                                             MakeCallback(&RapidLlmHelper::OnOperatorEnd, this));
    }
    if (!m_computeIdle.IsEmpty())
    {
        replayer->TraceConnectWithoutContext("ComputeIdle",
                                             MakeCallback(&RapidLlmHelper::OnComputeIdle, this));
    }
    m_start = Simulator::Now();
    m_firstTokenEnd = m_start;
    m_backend = backend;
    m_replayer = replayer;
    // The step is timed with the job's connections open, as a steady-state step finds NCCL's:
    // the packet backend first opens and warms the TCP connection of every pair the replay
    // sends between (a handshake and a warm-up round trip each, which the flow network does
    // not have); the flow backend is ready at once. The replay then starts as the simulator's
    // next event, as ns-3 applications start: until then a script may still connect to the
    // replayer and the backend, or schedule events of its own at the same time (which run
    // first). Timed faults count from the replay's start.
    std::shared_ptr<const ReplayJob> started = m_job;
    // The start, connections included, is one event: a second Install() before the simulator
    // runs cancels it and nothing of this job runs. (Listing the pairs walks every rank's graph:
    // only for a backend that uses them.)
    m_startEvent = Simulator::ScheduleNow(
        [this, replayer, backend, schedule, started]()
        {
            backend->Prepare(
                backend->PreparesPairs() ? replayer->GetPairs(*started)
                                         : std::vector<NetworkBackend::EndpointPair>(),
                Callback<void>(
                    [this, replayer, backend, schedule, started]()
                    {
                        if (m_replayer != replayer)
                        {
                            return; // replaced while its connections opened: never started
                        }
                        m_start = Simulator::Now();
                        m_firstTokenEnd = m_start;
                        if (schedule)
                        {
                            backend->SetFaultSchedule(schedule);
                        }
                        replayer->Start(*started);
                    }));
        });
    return replayer;
}

void
RapidLlmHelper::OnOperatorStart(const OperatorEvent& event)
{
    m_opStart(event);
}

void
RapidLlmHelper::OnOperatorEnd(const OperatorEvent& event)
{
    if ((!m_firstSample.empty()
         && event.node == m_firstSample[m_workload->layout.Stage(event.rank)])
        || (event.rank < m_traceFirstToken.size() && event.node == m_traceFirstToken[event.rank]))
    {
        m_firstTokenEnd = std::max(m_firstTokenEnd, event.time);
    }
    m_opEnd(event);
}

void
RapidLlmHelper::OnComputeIdle(const IdleEvent& event)
{
    m_computeIdle(event);
}

void
RapidLlmHelper::OnMessageDelivered(
    uint64_t id, uint32_t src, uint32_t dst, uint64_t bytes, double latency)
{
    m_messageDelivered(id, src, dst, bytes, Seconds(latency));
}

RunReport
RapidLlmHelper::Collect()
{
    if (!m_replayer)
    {
        throw ReplayError("nothing to collect: call Install() and run the simulator first");
    }
    if (m_collected)
    {
        return m_report;
    }
    if (m_startEvent.IsRunning() || m_replayer->GetRankCount() == 0)
    {
        throw ReplayError("nothing to collect yet: the replay Install() scheduled has not started "
                          "(it starts as the simulator's next event); run the simulator "
                          "(Simulator::Run()) before Collect()");
    }
    m_result = m_replayer->Collect();
    RunReport report;
    if (m_workload)
    {
        report = m_memoryReport;
    }
    else
    {
        report.mode = "replay";
    }
    const RankTiming& critical = m_result.ranks[m_result.criticalRank];
    report.stepTimeS = m_result.stepTimeS;
    report.computeS = critical.computeS;
    report.bubbleS = critical.bubbleS;
    report.exposedCommS = critical.exposedCommS;
    report.hostWaitS = critical.hostWaitS;
    report.exposedCommByOpS = critical.exposedByOp;
    report.smSharingS = critical.smSharingS;
    report.criticalRank = m_result.criticalRank;
    const CriticalPath& path = m_result.criticalPath;
    report.criticalPath.known = true;
    report.criticalPath.computeS = path.computeS;
    report.criticalPath.communicationS = path.communicationS;
    report.criticalPath.hostS = path.hostS;
    report.criticalPath.otherS = path.otherS;
    report.criticalPath.communicationByOpS = path.communicationByOp;
    for (const auto& [rank, seconds] : path.computeByRank)
    {
        report.criticalPath.computeByRankS[rank] += seconds;
        if (m_workload)
        {
            report.criticalPath.computeByStageS[m_workload->layout.Stage(rank)] += seconds;
        }
    }
    report.gpus = m_job->GetRankCount();
    report.backend = m_backendName;
    if (m_backend)
    {
        const NetworkStats stats = m_backend->GetStats();
        report.dataPackets = stats.dataPackets;
        report.droppedPackets = stats.drops;
        report.connections = stats.connections;
    }
    report.ranks.reserve(m_result.ranks.size());
    for (uint32_t r = 0; r < m_result.ranks.size(); ++r)
    {
        const RankTiming& t = m_result.ranks[r];
        report.ranks.push_back({r,
                                t.finishS,
                                t.computeS,
                                t.exposedCommS,
                                t.bubbleS,
                                t.hostWaitS,
                                t.smSharingS,
                                m_workload ? int32_t(m_workload->layout.Stage(r)) : -1});
    }
    if (m_workload)
    {
        FillWorkloadReport(report);
    }
    else if (m_traceGenerated > 0 && m_firstTokenEnd > m_start)
    {
        // A replayed inference trace set: its request's first token and the tokens after it,
        // as run reports them.
        report.haveTokens = true;
        FillTokens(report, m_traceGenerated, m_traceRequests, m_result.ranks.size());
    }
    m_collected = true;
    m_report = report;
    return report;
}

void
RapidLlmHelper::FillTokens(RunReport& report,
                           uint32_t generated,
                           uint64_t requests,
                           std::size_t ranks) const
{
    const double ttft = (m_firstTokenEnd - m_start).GetSeconds();
    report.ttftS = ttft;
    report.tpotS = generated > 1 ? (report.stepTimeS - ttft) / (generated - 1) : 0;
    report.tpotDefined = generated > 1;
    const double tokens = double(requests) * generated;
    report.tokensPerSPerGpu = report.stepTimeS > 0 ? tokens / (report.stepTimeS * ranks) : 0;
}

void
RapidLlmHelper::FillWorkloadReport(RunReport& report) const
{
    const Workload& w = *m_workload;
    // Where the critical rank's compute time goes, from its graph, and which attention kernels
    // ran (the run's setting resolved on the GPU).
    report.haveComputeKinds = true;
    report.attentionKernel =
        !w.run.flashAttention && w.run.parallel.cp == 1
            ? "standard"
            : AttentionKernelName(ResolveAttentionKernel(
                m_hardware.gpu, AttentionKernelOf(w.run), w.run.ActivationType(), w.model.headDim));
    const StageGraph& critical = w.GraphOf(report.criticalRank);
    // The critical rank's kernels as the replay ran them: a slow GPU's (SetSlowGpus) and a GPU
    // variant's (SetGpuVariants) took longer than their graph's times.
    const auto slow = m_slowGpus.find(report.criticalRank);
    const double scale = slow == m_slowGpus.end() ? 1.0 : 1.0 / slow->second;
    const auto variant = m_kernelFactors.find(report.criticalRank);
    const std::vector<double>* factors =
        variant == m_kernelFactors.end() ? nullptr : &variant->second;
    for (std::size_t i = 0; i < critical.nodes.size(); ++i)
    {
        const WorkNode& n = critical.nodes[i];
        if (n.kind != WorkNodeKind::COMPUTE)
        {
            continue;
        }
        const double durationS = n.durationS * scale * (factors ? (*factors)[i] : 1.0);
        switch (critical.OpOf(n).type)
        {
            case OpType::GEMM:
                report.gemmS += durationS;
                break;
            case OpType::ATTENTION_FWD:
            case OpType::ATTENTION_BWD:
            case OpType::ATTENTION_SCORES:
            case OpType::DECODE_ATTENTION:
            case OpType::DECODE_ATTENTION_PER_HEAD:
                report.attentionS += durationS;
                break;
            case OpType::OPTIMIZER:
                report.optimizerS += durationS;
                break;
            case OpType::LAYER_NORM:
            case OpType::RMS_NORM:
            case OpType::GELU:
            case OpType::SQUARED_RELU:
            case OpType::SWIGLU:
            case OpType::GEGLU:
            case OpType::ROPE:
            case OpType::RESIDUAL_ADD:
            case OpType::EMBEDDING:
            case OpType::CROSS_ENTROPY:
            case OpType::ROUTER:
            case OpType::SAMPLING:
            case OpType::FP8_CAST_TRANSPOSE:
            case OpType::FP8_AMAX_CAST_TRANSPOSE:
            case OpType::TENSOR_COPY:
            case OpType::TENSOR_FILL:
            case OpType::MOE_UNPERMUTE:
                report.elementwiseS += durationS;
                break;
        }
    }
    if (m_run.mode == RunMode::TRAINING)
    {
        // Megatron-LM counts the FLOPs of what runs, recomputation included; MFU counts the
        // model's FLOPs only (Chowdhery et al. 2022, App. B).
        const double gpus = w.layout.Ranks();
        double modelFlops = 0;
        const double ranksPerStage = gpus / w.stages.size();
        for (const auto& g : w.stages)
        {
            for (const auto& n : g.nodes)
            {
                if (n.phase != Phase::RECOMPUTE)
                {
                    modelFlops += n.modelFlops * ranksPerStage;
                }
            }
        }
        report.tflopsPerGpu = w.TotalModelFlops() / (gpus * report.stepTimeS) / 1e12;
        report.tflopsRecomputed = m_run.recompute != Recompute::NONE;
        // Against the peak of the GEMMs' path in the run's type: the tensor rate, or the vector
        // rate of a type without one (fp32 GEMMs on CUDA cores, as PyTorch runs them by default).
        bool tensor = false;
        const double peak = kernel::MatmulPeak(m_hardware.gpu, MmaTypeOf(m_run.dtype), tensor);
        report.mfu = modelFlops / (gpus * report.stepTimeS * peak);
        report.peakTflops = peak / 1e12;
    }
    else
    {
        // Every data-parallel replica serves its own batch of requests.
        FillTokens(report,
                   m_run.generatedTokens,
                   uint64_t(m_run.batch) * m_run.parallel.dp,
                   w.layout.Ranks());
    }
    if (m_hardware.gpu.power.Has() && report.stepTimeS > 0)
    {
        StepEnergy e = EstimateStepEnergy(
            w,
            [this](const OperatorDesc& op)
            {
                auto it = m_energyOf.find(op);
                return it == m_energyOf.end() ? 0.0 : it->second;
            },
            m_hardware,
            report.stepTimeS);
        // The GPUs of their own spec: their kernels' energy and idle power beyond the job's GPU's.
        e.computeJ += m_variantDynamicJ;
        e.idleJ += m_variantIdleW * report.stepTimeS;
        report.haveEnergy = true;
        report.energyJ = e.TotalJ();
        report.idleEnergyJ = e.idleJ;
        report.computeEnergyJ = e.computeJ;
        report.nvlinkEnergyJ = e.nvlinkJ;
        report.networkEnergyJ = e.networkJ;
        report.avgPowerW = report.energyJ / (double(w.layout.Ranks()) * report.stepTimeS);
        if (m_run.mode != RunMode::TRAINING)
        {
            // Every data-parallel replica serves its own batch of requests.
            const double tokens = double(m_run.batch) * m_run.generatedTokens * m_run.parallel.dp;
            report.energyPerTokenJ = tokens > 0 ? report.energyJ / tokens : 0;
        }
    }
    CheckReportBounds(report, w, m_hardware.gpu);
}

RunReport
RapidLlmHelper::RunInstalled()
{
    Simulator::Run();
    return Collect();
}

namespace {
/**
 * Throws unless the simulator is fresh: Run() and Replay() own it from time 0 and destroy it,
 * which inside a running simulation (an event calling Run) crashed the outer Simulator::Run.
 */
void
RefuseLiveSimulation(const char* call)
{
    if (Simulator::Now().IsStrictlyPositive() || Simulator::GetEventCount() > 0)
    {
        std::ostringstream os;
        os << call << " runs the simulator from time 0 and destroys it, and a simulation is under "
           << "way (t = " << Simulator::Now().GetSeconds() << " s, " << Simulator::GetEventCount()
           << " events run): inside one, use Install() and Collect(); after one, call "
              "Simulator::Destroy() first";
        throw ReplayError(os.str());
    }
}
} // namespace

RunReport
RapidLlmHelper::Run()
{
    auto wallStart = std::chrono::steady_clock::now();
    RefuseLiveSimulation("Run()");
    // Run owns the simulator: it sets the scheduler, and destroys the simulator however it
    // returns.
    SimulatorGuard guard;
    ObjectFactory scheduler;
    scheduler.SetTypeId(m_scheduler);
    Simulator::SetScheduler(scheduler);
    Install();
    RunReport report = RunInstalled();
    report.wallTimeS =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wallStart).count();
    return report;
}

RunReport
RapidLlmHelper::Replay(TraceSet set)
{
    auto wallStart = std::chrono::steady_clock::now();
    RefuseLiveSimulation("Replay()");
    SimulatorGuard guard;
    ObjectFactory scheduler;
    scheduler.SetTypeId(m_scheduler);
    Simulator::SetScheduler(scheduler);
    Install(std::move(set));
    RunReport report = RunInstalled();
    report.wallTimeS =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wallStart).count();
    return report;
}

RunReport
RapidLlmHelper::MemoryReportOf(const MemoryReport& memory) const
{
    RunReport report;
    report.mode = ToString(m_run.mode);
    report.haveTokens = m_run.mode == RunMode::INFERENCE;
    report.feasible = memory.feasible;
    report.reason = memory.reason;
    report.haveMemory = true;
    report.memory = memory.worst;
    report.memoryStages = memory.stages;
    report.capacityBytes = memory.capacity;
    report.memoryAssumption = memory.assumption;
    report.gpus = static_cast<uint32_t>(m_run.parallel.Gpus());
    report.backend = m_backendName;
    return report;
}

RunReport
RapidLlmHelper::CheckMemory() const
{
    return MemoryReportOf(AnalyzeMemory(m_model, m_run, m_hardware.gpu));
}

Ptr<TraceReplayer>
RapidLlmHelper::GetReplayer() const
{
    return m_replayer;
}

Ptr<NetworkBackend>
RapidLlmHelper::GetBackend() const
{
    return m_backend;
}

Time
RapidLlmHelper::GetReplayStart() const
{
    return m_start;
}

const ReplayResult&
RapidLlmHelper::GetResult() const
{
    return m_result;
}

} // namespace rapidllm
} // namespace ns3
