/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "rapid-llm-helper.h"

#include "ns3/boolean.h"
#include "ns3/compute-coster.h"
#include "ns3/gpu-compute-model.h"
#include "ns3/log.h"
#include "ns3/memory-model.h"
#include "ns3/network-backend.h"
#include "ns3/object-factory.h"
#include "ns3/routing-policy.h"
#include "ns3/simulator.h"
#include "ns3/spec-error.h"
#include "ns3/step-energy.h"
#include "ns3/string.h"
#include "ns3/topology.h"

#include <chrono>

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
            .AddAttribute("Backend",
                          "Network backend: flow (max-min fair flows), packet (ns-3 TCP over "
                          "point-to-point links) or a NetworkBackend TypeId name.",
                          StringValue("flow"),
                          MakeStringAccessor(&RapidLlmHelper::m_backend),
                          MakeStringChecker())
            .AddAttribute("Routing",
                          "Routing policy name; empty: the hardware file's network.routing.",
                          StringValue(""),
                          MakeStringAccessor(&RapidLlmHelper::m_routing),
                          MakeStringChecker())
            .AddAttribute("Symmetry",
                          "Replay workloads with one rank per set of symmetric copies "
                          "(TraceReplayer::Symmetry); the copies mirror it.",
                          BooleanValue(true),
                          MakeBooleanAccessor(&RapidLlmHelper::m_symmetry),
                          MakeBooleanChecker())
            .AddTraceSource("OperatorStart",
                            "An operator of a replayed rank starts (an OperatorEvent).",
                            MakeTraceSourceAccessor(&RapidLlmHelper::m_opStart),
                            "ns3::rapidllm::TraceReplayer::OperatorTracedCallback")
            .AddTraceSource("OperatorEnd",
                            "An operator of a replayed rank ends (an OperatorEvent).",
                            MakeTraceSourceAccessor(&RapidLlmHelper::m_opEnd),
                            "ns3::rapidllm::TraceReplayer::OperatorTracedCallback")
            .AddTraceSource("MessageDelivered",
                            "A network message's last byte arrived (id, source GPU, destination "
                            "GPU, bytes, latency in s).",
                            MakeTraceSourceAccessor(&RapidLlmHelper::m_messageDelivered),
                            "ns3::rapidllm::NetworkBackend::MessageTracedCallback");
    return tid;
}

RapidLlmHelper::RapidLlmHelper() {}

RapidLlmHelper::~RapidLlmHelper() {}

void
RapidLlmHelper::DoDispose()
{
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
    m_model = model;
}

void
RapidLlmHelper::SetHardware(const HardwareSpec& hardware)
{
    m_hardware = hardware;
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

Workload
RapidLlmHelper::BuildWorkload() const
{
    Ptr<GpuComputeModel> compute = CreateObject<GpuComputeModel>(m_hardware.gpu);
    return Workload::Build(m_model, m_run, MakeComputeCoster(compute));
}

Ptr<NetworkBackend>
RapidLlmHelper::MakeBackend(uint32_t gpus) const
{
    // The packet backend opens each pair's TCP connection at its first message (one handshake
    // per pair and step, microseconds against a step of seconds).
    Ptr<NetworkBackend> backend = NetworkBackend::Create(m_backend);
    Ptr<Topology> topology = Topology::Build(m_hardware.network, gpus, m_hardware.name);
    backend->SetTopology(topology);
    backend->SetRouting(
        RoutingPolicy::Create(m_routing.empty() ? m_hardware.network.routing : m_routing));
    return backend;
}

void
RapidLlmHelper::OnOperatorStart(const OperatorEvent& event)
{
    m_opStart(event);
}

void
RapidLlmHelper::OnOperatorEnd(const OperatorEvent& event)
{
    if (event.name == m_firstTokenOp)
    {
        m_firstTokenEnd = std::max(m_firstTokenEnd, event.time.GetSeconds());
    }
    m_opEnd(event);
}

void
RapidLlmHelper::OnMessageDelivered(
    uint64_t id, uint32_t src, uint32_t dst, uint64_t bytes, double latency)
{
    m_messageDelivered(id, src, dst, bytes, latency);
}

void
RapidLlmHelper::Execute(const ReplayJob& job, RunReport& report)
{
    Ptr<TraceReplayer> replayer = CreateObject<TraceReplayer>();
    Ptr<NetworkBackend> backend = MakeBackend(job.GetRankCount());
    if (!m_messageDelivered.IsEmpty())
    {
        backend->TraceConnectWithoutContext(
            "MessageDelivered", MakeCallback(&RapidLlmHelper::OnMessageDelivered, this));
    }
    replayer->SetBackend(backend);
    replayer->SetAttribute("Symmetry", BooleanValue(m_symmetry));
    if (!m_opStart.IsEmpty())
    {
        replayer->TraceConnectWithoutContext("OperatorStart",
                                             MakeCallback(&RapidLlmHelper::OnOperatorStart, this));
    }
    if (!m_opEnd.IsEmpty() || m_run.mode != RunMode::TRAINING)
    {
        // Inference times its first token by the sampling node's end.
        replayer->TraceConnectWithoutContext("OperatorEnd",
                                             MakeCallback(&RapidLlmHelper::OnOperatorEnd, this));
    }
    m_firstTokenEnd = 0;
    m_firstTokenOp = m_run.firstTokenFromPrefill ? "prefill.mb0.sample" : "decode.mb1.sample";
    // A binary heap keeps the event queue in one array: no allocation per event (the default
    // map scheduler allocates a node for each), which matters at millions of events.
    ObjectFactory scheduler;
    scheduler.SetTypeId("ns3::HeapScheduler");
    Simulator::SetScheduler(scheduler);
    ReplayResult result;
    try
    {
        result = replayer->Replay(job);
    }
    catch (...)
    {
        Simulator::Destroy();
        throw;
    }
    Simulator::Destroy();
    const RankTiming& critical = result.ranks[result.criticalRank];
    report.stepTimeS = result.stepTimeS;
    report.computeS = critical.computeS;
    report.bubbleS = critical.bubbleS;
    report.exposedCommS = critical.exposedCommS;
    report.criticalRank = result.criticalRank;
    report.gpus = job.GetRankCount();
    report.backend = m_backend;
}

RunReport
RapidLlmHelper::Run()
{
    auto wallStart = std::chrono::steady_clock::now();
    // The workload as BuildWorkload makes it, keeping each distinct operator's dynamic energy
    // (the workload memoizes costs, so the coster sees each distinct operator once).
    Ptr<GpuComputeModel> compute = CreateObject<GpuComputeModel>(m_hardware.gpu);
    const OperatorCoster coster = MakeComputeCoster(compute);
    std::unordered_map<OperatorDesc, double, OperatorDescHash> energyOf;
    Workload w = Workload::Build(m_model,
                                 m_run,
                                 [&coster, &energyOf](const OperatorDesc& op)
                                 {
                                     OperatorCost c = coster(op);
                                     energyOf[op] = c.energyJ;
                                     return c;
                                 });
    RunReport report = MemoryReportOf(w);
    Execute(ReplayJob::FromWorkload(w), report);
    // Where the critical rank's compute time goes, from its graph.
    report.haveComputeKinds = true;
    for (const auto& n : w.GraphOf(report.criticalRank).nodes)
    {
        if (n.kind != WorkNodeKind::COMPUTE)
        {
            continue;
        }
        switch (n.op.type)
        {
            case OpType::GEMM:
                report.gemmS += n.durationS;
                break;
            case OpType::ATTENTION_FWD:
            case OpType::ATTENTION_BWD:
            case OpType::ATTENTION_SCORES:
            case OpType::DECODE_ATTENTION:
            case OpType::DECODE_ATTENTION_PER_HEAD:
                report.attentionS += n.durationS;
                break;
            case OpType::OPTIMIZER:
                report.optimizerS += n.durationS;
                break;
            case OpType::LAYER_NORM:
            case OpType::RMS_NORM:
            case OpType::GELU:
            case OpType::SWIGLU:
            case OpType::ROPE:
            case OpType::RESIDUAL_ADD:
            case OpType::EMBEDDING:
            case OpType::CROSS_ENTROPY:
            case OpType::ROUTER:
            case OpType::SAMPLING:
                report.elementwiseS += n.durationS;
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
        report.mfu =
            modelFlops / (gpus * report.stepTimeS * m_hardware.gpu.TensorFlops(m_run.dtype));
    }
    else
    {
        report.ttftS = m_firstTokenEnd;
        report.tpotS = m_run.generatedTokens > 1
                           ? (report.stepTimeS - m_firstTokenEnd) / (m_run.generatedTokens - 1)
                           : 0;
    }
    if (m_hardware.gpu.power.Has() && report.stepTimeS > 0)
    {
        StepEnergy e = EstimateStepEnergy(
            w,
            [&energyOf](const OperatorDesc& op)
            {
                auto it = energyOf.find(op);
                return it == energyOf.end() ? 0.0 : it->second;
            },
            m_hardware,
            report.stepTimeS);
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
    report.wallTimeS =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wallStart).count();
    return report;
}

RunReport
RapidLlmHelper::MemoryReportOf(const Workload& w) const
{
    RunReport report;
    report.mode = ToString(m_run.mode);
    MemoryReport memory = AnalyzeMemory(w, m_hardware.gpu);
    report.feasible = memory.feasible;
    report.reason = memory.reason;
    report.haveMemory = true;
    report.memory = memory.worst;
    report.capacityBytes = memory.capacity;
    report.gpus = w.layout.Ranks();
    report.backend = m_backend;
    return report;
}

RunReport
RapidLlmHelper::CheckMemory() const
{
    return MemoryReportOf(Workload::Build(m_model, m_run));
}

RunReport
RapidLlmHelper::Replay(TraceSet set)
{
    auto wallStart = std::chrono::steady_clock::now();
    RunReport report;
    report.mode = "replay";
    Execute(ReplayJob::FromTraceSet(std::move(set)), report);
    report.wallTimeS =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wallStart).count();
    return report;
}

} // namespace rapidllm
} // namespace ns3
