/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "trace-replayer.h"

#include "collective-algorithms.h"
#include "ns3/boolean.h"
#include "ns3/log.h"
#include "ns3/network-view.h"
#include "ns3/nstime.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/uinteger.h"
#include "ns3/workload-graph.h"
#include "ns3/workload-size.h"
#include "replay-error.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <sstream>

namespace ns3 {
namespace rapidllm {

NS_LOG_COMPONENT_DEFINE("RapidLlmTraceReplayer");
NS_OBJECT_ENSURE_REGISTERED(TraceReplayer);

namespace {
constexpr uint8_t kStatusIdle = 0;
constexpr uint8_t kStatusPosted = 1;
constexpr uint8_t kStatusDone = 2;
constexpr uint8_t kCauseCompute = 0;
constexpr uint8_t kCauseReceive = 1;
constexpr uint8_t kCauseCommunication = 2;
constexpr uint32_t kAbsent = UINT32_MAX;

/** \return \p ns times \p factor, rounded (exactly \p ns at factor 1) */
int64_t
Scaled(int64_t ns, double factor)
{
    return factor == 1 ? ns : std::llround(double(ns) * factor);
}

/**
 * \return the bytes a node moves as replayed: its comm_size, but one fp32 element for a barrier,
 * which PyTorch's NCCL process group runs as an all-reduce of a one-element float tensor and
 * records with a size of 0 (pytorch/pytorch, torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp,
 * ProcessGroupNCCL::barrier)
 */
uint64_t
ReplayedBytes(const TraceNode& n)
{
    return n.type == TraceNodeType::COMM_COLL && n.commType == CollectiveType::BARRIER ? 4
                                                                                       : n.bytes;
}

/** Node completions between two checks of the event count. */
constexpr uint32_t kCompletionsPerCheck = 4096;
/** The watchdog's periodic check: its first and longest period. */
constexpr int64_t kFirstTickNs = 1000;
constexpr int64_t kLongestTickNs = 10000000;
} // namespace

TypeId
TraceReplayer::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::rapidllm::TraceReplayer")
            .SetParent<Object>()
            .SetGroupName("RapidLlm")
            .AddConstructor<TraceReplayer>()
            .AddAttribute("ComputeStreams",
                          "Kernels a GPU runs at once (1: one compute stream, kernels in order).",
                          UintegerValue(1),
                          MakeUintegerAccessor(&TraceReplayer::m_streams),
                          MakeUintegerChecker<uint32_t>(1, 64))
            .AddAttribute("SmCount",
                          "The GPU's SMs (0: off). With it, a kernel that starts while "
                          "collectives of its rank hold SMs (CollectiveAlgorithm::GetSmCount, "
                          "or the trace's sm_count) runs on the others: its time grows by its "
                          "sm_scaling share times (SMs / SMs left - 1).",
                          UintegerValue(0),
                          MakeUintegerAccessor(&TraceReplayer::m_smCount),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("SerializeGroups",
                          "Run one collective at a time per group, like one NCCL communicator.",
                          BooleanValue(true),
                          MakeBooleanAccessor(&TraceReplayer::m_serializeGroups),
                          MakeBooleanChecker())
            .AddAttribute("Symmetry",
                          "Replay one rank per set of data-parallel/expert (and, when exact, "
                          "tensor-parallel) copies of a workload job, with the copies' traffic "
                          "as ghost load.",
                          BooleanValue(false),
                          MakeBooleanAccessor(&TraceReplayer::m_symmetry),
                          MakeBooleanChecker())
            .AddAttribute("CollectiveAlgorithm",
                          "Algorithm of every collective: auto (per network dimension) or a "
                          "registered CollectiveAlgorithm name.",
                          StringValue("auto"),
                          MakeStringAccessor(&TraceReplayer::m_algorithm),
                          MakeStringChecker())
            .AddAttribute("TraceAllMessages",
                          "Run every collective of every rank and symmetric copy on the network "
                          "(none timed from an earlier identical one), so that the backend's "
                          "MessageDelivered trace and link statistics see all the job's traffic.",
                          BooleanValue(false),
                          MakeBooleanAccessor(&TraceReplayer::m_traceAll),
                          MakeBooleanChecker())
            .AddAttribute("Granularity",
                          "How collectives run: auto or fluid (each algorithm's fluid form, its "
                          "concurrent streams, on a backend that carries them, such as flow; "
                          "messages elsewhere) or message (every message).",
                          StringValue("auto"),
                          MakeStringAccessor(&TraceReplayer::m_granularity),
                          MakeStringChecker())
            .AddAttribute("Reservations",
                          "Run a collective whose links carry nothing else when it starts as a "
                          "timed reservation (CollectiveEngine attribute Reservations: the "
                          "recorded time of its first run alone; an intruder on its links "
                          "turns it into real messages at that instant). Off with "
                          "TraceAllMessages.",
                          BooleanValue(true),
                          MakeBooleanAccessor(&TraceReplayer::m_reservations),
                          MakeBooleanChecker())
            .AddAttribute("MaxSimulatedTime",
                          "Watchdog: a replay still running after this much simulated time "
                          "stops with a ReplayError (a runaway, e.g. a network far too slow "
                          "for the job). The default, 10^9 s (32 years), is beyond any step a "
                          "job can have and below where the simulator's clock wraps (292 "
                          "years).",
                          TimeValue(Seconds(1e9)),
                          MakeTimeAccessor(&TraceReplayer::m_maxSimTime),
                          MakeTimeChecker(NanoSeconds(1)))
            .AddAttribute("MaxEvents",
                          "Watchdog: a replay that executes more simulator events than this "
                          "stops with a ReplayError. The default, 10^10, is several hundred "
                          "times the events of the largest benchmarked job.",
                          UintegerValue(10000000000ULL),
                          MakeUintegerAccessor(&TraceReplayer::m_maxEvents),
                          MakeUintegerChecker<uint64_t>(1))
            .AddTraceSource("OperatorStart",
                            "An operator of a simulated rank starts (an OperatorEvent: rank, "
                            "node, name, kind, time, duration, FLOPs, bytes, group).",
                            MakeTraceSourceAccessor(&TraceReplayer::m_opStart),
                            "ns3::rapidllm::TraceReplayer::OperatorTracedCallback")
            .AddTraceSource("OperatorEnd",
                            "An operator of a simulated rank ends (an OperatorEvent; its duration "
                            "is the time since it started).",
                            MakeTraceSourceAccessor(&TraceReplayer::m_opEnd),
                            "ns3::rapidllm::TraceReplayer::OperatorTracedCallback")
            .AddTraceSource("ComputeIdle",
                            "A simulated rank's compute streams were idle (an IdleEvent: rank, "
                            "start, end, and what the report charges it to: bubble, "
                            "communication with its operator, or host).",
                            MakeTraceSourceAccessor(&TraceReplayer::m_idle),
                            "ns3::rapidllm::TraceReplayer::IdleTracedCallback");
    return tid;
}

TraceReplayer::TraceReplayer() {}

TraceReplayer::~TraceReplayer() {}

void
TraceReplayer::DoDispose()
{
    m_engine = nullptr;
    m_backend = nullptr;
    m_transferDone = NetworkBackend::DeliveryCallback();
    m_ghostDone = NetworkBackend::DeliveryCallback();
    Object::DoDispose();
}

void
TraceReplayer::SetBackend(Ptr<NetworkBackend> backend)
{
    m_backend = backend;
    m_transferDone = MakeCallback(&TraceReplayer::TransferDone, this);
    m_ghostDone = MakeCallback(&TraceReplayer::GhostDelivered, this);
    m_engine = CreateObject<CollectiveEngine>();
    m_engine->SetBackend(backend);
}

std::string
TraceReplayer::Describe(uint32_t rank, uint32_t node) const
{
    const ExecutionTrace& g = *m_ranks[rank].graph;
    const TraceNode& n = g.GetNode(node);
    std::ostringstream os;
    os << "rank " << rank << " node " << n.id << " '" << g.GetName(node) << "' ("
       << ToString(n.type);
    if (n.type == TraceNodeType::COMM_SEND)
    {
        os << " to rank " << m_job->BindPeer(rank, n.commDst) << ", tag " << n.commTag;
    }
    else if (n.type == TraceNodeType::COMM_RECV)
    {
        os << " from rank " << m_job->BindPeer(rank, n.commSrc) << ", tag " << n.commTag;
    }
    else if (n.type == TraceNodeType::COMM_COLL)
    {
        const uint32_t group = m_job->BindGroup(rank, n.group);
        os << " " << ToString(n.commType)
           << (group == kWorldGroup ? std::string(" on every rank (no pg_name)")
                                    : " on group " + std::to_string(group));
    }
    os << ")";
    return os.str();
}

std::vector<NetworkBackend::EndpointPair>
TraceReplayer::GetPairs(const ReplayJob& job) const
{
    if (!m_engine)
    {
        throw ReplayError("no network backend set (SetBackend)");
    }
    m_engine->GetPlanner().CheckName(m_algorithm, "CollectiveAlgorithm");
    std::vector<uint32_t> world(job.GetRankCount());
    for (uint32_t r = 0; r < world.size(); ++r)
    {
        world[r] = r;
    }
    std::set<NetworkBackend::EndpointPair> pairs;
    // A collective's messages depend on its group, kind and size only: plan each once.
    std::set<std::tuple<uint32_t, uint8_t, uint64_t>> planned;
    for (uint32_t r = 0; r < job.GetRankCount(); ++r)
    {
        const ExecutionTrace& g = job.GetGraph(r);
        const auto n = static_cast<uint32_t>(g.GetNNodes());
        for (uint32_t i = 0; i < n; ++i)
        {
            const TraceNode& node = g.GetNode(i);
            if (node.type == TraceNodeType::COMM_SEND)
            {
                const uint32_t peer = job.BindPeer(r, node.commDst);
                if (peer != r && peer < job.GetRankCount())
                {
                    pairs.insert({r, peer});
                }
                continue;
            }
            CollectiveOp op;
            if (node.type != TraceNodeType::COMM_COLL || ReplayedBytes(node) == 0
                || !ToCollectiveOp(node.commType, op))
            {
                continue;
            }
            const uint32_t group = job.BindGroup(r, node.group);
            if (group != kWorldGroup && !job.GetGroups().Has(group))
            {
                continue; // the replay reports it
            }
            if (!planned.emplace(group, uint8_t(node.commType), ReplayedBytes(node)).second)
            {
                continue;
            }
            CollectiveRequest request;
            request.op = op;
            request.endpoints = group == kWorldGroup ? world : job.GetGroups().Get(group);
            request.bytes = ReplayedBytes(node);
            request.algorithm = m_algorithm;
            if (request.endpoints.size() < 2)
            {
                continue;
            }
            const CollectivePlan plan = m_engine->GetPlanner().Build(request);
            for (const auto& s : plan.schedule.GetSteps())
            {
                const uint32_t a = request.endpoints.at(s.src);
                const uint32_t b = request.endpoints.at(s.dst);
                if (s.isSend && a != b)
                {
                    pairs.insert({a, b});
                }
            }
        }
    }
    return {pairs.begin(), pairs.end()};
}

ReplayResult
TraceReplayer::Replay(const ReplayJob& job)
{
    Start(job);
    Simulator::Run();
    return Collect();
}

void
TraceReplayer::CheckStateSize(const ReplayJob& job) const
{
    // Each simulated rank keeps a dependency count and a status per node, and what its
    // collectives and messages hold: about 10 bytes a node (measured: Llama-3 8B at cp 256, 256
    // ranks of 124 k nodes, 300 MB), with a host clock its issue and ready times (16 more); the
    // graphs keep theirs once each.
    double bytes = 0;
    uint64_t most = 0;
    std::vector<bool> counted(job.GetGraphCount(), false);
    for (uint32_t r = 0; r < job.GetRankCount(); ++r)
    {
        const ExecutionTrace& graph = job.GetGraph(r);
        if (!counted[job.GetGraphIndex(r)])
        {
            counted[job.GetGraphIndex(r)] = true;
            bytes += double(graph.GetNNodes()) * kHostBytesPerNode;
        }
        if (m_plan.IsSimulated(r))
        {
            bytes += double(graph.GetNNodes())
                     * ((graph.HasHost() ? 26 : 10) + CriticalPathRecorder::kBytesPerNode);
            most = std::max<uint64_t>(most, graph.GetNNodes());
        }
    }
    if (bytes <= WorkloadHostBudget())
    {
        return;
    }
    std::ostringstream os;
    os.precision(3);
    os << "the replay would keep about " << bytes / 1073741824.0 << " GiB of host memory for its "
       << m_plan.GetSimulatedCount() << " simulated ranks (up to " << most
       << " nodes each) and their graphs, above the budget of "
       << WorkloadHostBudget() / 1073741824.0
       << " GiB (more with --host-memory=GIB, or the ns-3 global value RapidLlmHostMemoryGiB, on "
          "a machine that has it): each rank that is not a copy of another (the ranks of a "
          "context-parallel ring, those a fault sets apart) keeps its own state, so fewer such "
          "ranks (a smaller cp) or fewer nodes a rank (fewer micro-batches or layers) fit";
    throw ReplayError(os.str());
}

void
TraceReplayer::Start(const ReplayJob& job, std::function<void()> onDone)
{
    if (!m_backend)
    {
        throw ReplayError("no network backend set (SetBackend)");
    }
    const NetworkView& view = m_backend->GetView();
    if (job.GetRankCount() > view.GetEndpointCount())
    {
        throw ReplayError("the job has " + std::to_string(job.GetRankCount())
                          + " ranks but the network only " + std::to_string(view.GetEndpointCount())
                          + " GPUs");
    }
    // Bad algorithm names are input errors: report them before anything runs.
    m_engine->GetPlanner().CheckName(m_algorithm, "CollectiveAlgorithm");
    CollectiveEngine::CheckGranularity(m_granularity, "Granularity");
    m_engine->SetAttribute("Granularity", StringValue(m_granularity));
    m_engine->SetAttribute("Reservations", BooleanValue(m_reservations && !m_traceAll));
    m_job = &job;
    m_onDone = onDone;
    m_left = 0;
    m_start = Simulator::Now().GetSeconds();
    m_ranks.assign(job.GetRankCount(), RankState());
    m_world.clear();
    for (uint32_t r = 0; r < job.GetRankCount(); ++r)
    {
        m_world.push_back(r);
    }
    // Faults scheduled for later count as faults (copies would part when they start); a
    // tensor group keeps timing its repeats once where no fault touches the innermost dimension.
    // Copies fold only where the routing moves every path with its ranks.
    // A slow GPU parts its copies and its tensor group's repeats, as a fault on its links.
    m_slowdown.clear();
    m_factorsOf.clear();
    for (const auto& [rank, speed] : m_speeds)
    {
        if (rank >= job.GetRankCount() || !(speed >= kMinSpeed && speed <= 1))
        {
            throw ReplayError("slow GPU gpu" + std::to_string(rank) + " at speed "
                              + std::to_string(speed) + ": allowed: a GPU of the job's "
                              + std::to_string(job.GetRankCount()) + " and a speed from 1e-6 to 1");
        }
        m_slowdown.resize(job.GetRankCount(), 1.0);
        m_slowdown[rank] = 1.0 / speed;
    }
    for (const auto& [rank, factors] : m_kernelFactors)
    {
        if (rank >= job.GetRankCount() || factors.size() != job.GetGraph(rank).GetNodes().size()
            || !std::all_of(factors.begin(),
                            factors.end(),
                            [](double f)
                            {
                                return std::isfinite(f) && f >= kMinSpeed;
                            }))
        {
            throw ReplayError("kernel factors of gpu" + std::to_string(rank)
                              + ": allowed: a GPU of the job's "
                              + std::to_string(job.GetRankCount())
                              + ", one finite factor of at least 1e-6 per node of its graph");
        }
        m_slowdown.resize(job.GetRankCount(), 1.0);
        m_factorsOf.resize(job.GetRankCount(), nullptr);
        m_factorsOf[rank] = &factors;
    }
    const bool slow = !m_slowdown.empty();
    m_plan = job.PlanSymmetry(view,
                              m_serializeGroups,
                              m_symmetry && m_backend->RoutesSymmetrically() && !slow,
                              m_backend->MayHaveFaults() || slow,
                              m_backend->FaultsSpareDimension(0) && !slow);
    NS_LOG_DEBUG("replay of " << job.GetRankCount() << " ranks (" << m_plan.GetSimulatedCount()
                              << " simulated) from " << Simulator::Now().As(Time::US));
    CheckStateSize(job);
    m_traceOperators = !m_opStart.IsEmpty() || !m_opEnd.IsEmpty();
    m_traceIdle = !m_idle.IsEmpty();
    m_kinds.assign(job.GetGraphCount(), {});
    m_path.Reset(job.GetRankCount(), Simulator::Now().GetNanoSeconds());
    // Kernels run back to back within one event where nothing can interleave (one stream;
    // operator events need their own times).
    m_chainKernels = m_streams == 1 && !m_traceOperators;
    for (uint32_t r = 0; r < m_ranks.size(); ++r)
    {
        if (!m_plan.IsSimulated(r))
        {
            continue; // a copy: its representative stands for it
        }
        RankState& s = m_ranks[r];
        s.graph = &job.GetGraph(r);
        const uint32_t n = static_cast<uint32_t>(s.graph->GetNNodes());
        std::vector<uint8_t>& kinds = m_kinds[job.GetGraphIndex(r)];
        if (kinds.size() != n)
        {
            kinds.resize(n);
            for (uint32_t i = 0; i < n; ++i)
            {
                kinds[i] = uint8_t(ToOperatorKind(s.graph->GetNode(i).type));
            }
        }
        s.kinds = kinds.data();
        s.waiting.resize(n);
        s.status.assign(n, kStatusIdle);
        s.left = n;
        m_left += n;
        s.idleSince = m_start;
        for (uint32_t i = 0; i < n; ++i)
        {
            s.waiting[i] = static_cast<uint32_t>(s.graph->GetDeps(i).size());
        }
        s.host = s.graph->HasHost();
        if (s.host)
        {
            s.issueNs.assign(n, -1);
            s.readyAt.assign(n, 0.0);
        }
        m_path.Track(r, s.graph, s.kinds, s.host ? &s.issueNs : nullptr);
        if (s.host)
        {
            s.hostClockNs = Simulator::Now().GetNanoSeconds();
            AdvanceHost(r, s.hostClockNs);
        }
    }
    m_total = m_left;
    // The nodes ready at the start, found before any runs (a node may complete at once and
    // release others, which MakeReady then handles).
    std::vector<std::pair<uint32_t, uint32_t>> roots;
    for (uint32_t r = 0; r < m_ranks.size(); ++r)
    {
        for (uint32_t i = 0; i < m_ranks[r].waiting.size(); ++i)
        {
            if (m_ranks[r].waiting[i] == 0)
            {
                roots.emplace_back(r, i);
            }
        }
    }
    ArmWatchdog();
    for (const auto& [r, i] : roots)
    {
        MakeReady(r, i, kCauseCompute);
    }
}

uint64_t
TraceReplayer::GetOperatorsLeft() const
{
    return m_left;
}

uint64_t
TraceReplayer::GetOperatorsTotal() const
{
    return m_total;
}

uint32_t
TraceReplayer::GetRankCount() const
{
    return static_cast<uint32_t>(m_ranks.size());
}

uint32_t
TraceReplayer::GetRepresentative(uint32_t rank) const
{
    return m_plan.RepresentativeOf(rank);
}

void
TraceReplayer::ArmWatchdog()
{
    m_tripped.clear();
    m_eventsAtStart = Simulator::GetEventCount();
    m_events = 0;
    m_tickEvents = 0;
    m_sinceCheck = 0;
    DisarmWatchdog();
    if (m_left == 0)
    {
        return;
    }
    // The limit stays within the simulator's clock (2^63 ns).
    const int64_t room = std::numeric_limits<int64_t>::max() - Simulator::Now().GetNanoSeconds();
    m_deadlineNs =
        Simulator::Now().GetNanoSeconds() + std::min(m_maxSimTime.GetNanoSeconds(), room);
    ScheduleTick(kFirstTickNs);
}

void
TraceReplayer::ScheduleTick(int64_t periodNs)
{
    const int64_t nowNs = Simulator::Now().GetNanoSeconds();
    const int64_t at = nowNs + std::min(periodNs, m_deadlineNs - nowNs);
    m_tick =
        Simulator::Schedule(NanoSeconds(at - nowNs), &TraceReplayer::WatchdogTick, this, periodNs);
}

void
TraceReplayer::DisarmWatchdog()
{
    m_tick.Cancel();
}

uint64_t
TraceReplayer::EventsSinceStart() const
{
    return Simulator::GetEventCount() - m_eventsAtStart;
}

void
TraceReplayer::WatchdogTick(int64_t periodNs)
{
    const uint64_t events = EventsSinceStart();
    if (events > m_maxEvents)
    {
        Trip("the replay executed more than the watchdog's MaxEvents of "
             + std::to_string(m_maxEvents) + " simulator events");
        return;
    }
    if (Simulator::Now().GetNanoSeconds() >= m_deadlineNs)
    {
        // Nothing computing and nothing on the network after all that time (or only messages a
        // dead link holds): the replay waits on itself (a receive before its send on both
        // sides, collectives in opposite orders) or on the dead link, kept from ending only by
        // timers such as a progress display's; say where.
        bool computing = false;
        for (const RankState& st : m_ranks)
        {
            computing = computing || st.busyStreams > 0 || !st.running.empty();
        }
        // A collective run as a timed reservation has no messages on the network yet still
        // progresses to its end: a replay whose only work is one is slow, not stuck.
        const bool collecting = m_engine && m_engine->GetRunningCount() > 0;
        const bool delivered =
            !m_backend || m_backend->GetSentCount() == m_backend->GetDeliveredCount();
        if (!computing
            && ((delivered && !collecting) || (m_backend && m_backend->GetStalledCount() > 0)))
        {
            DisarmWatchdog();
            m_tripped = StuckReason();
            Simulator::Stop();
            return;
        }
        Trip("simulated time passed the watchdog's MaxSimulatedTime of "
             + std::to_string(m_maxSimTime.GetSeconds()) + " s");
        return;
    }
    if (Simulator::IsFinished())
    {
        return; // nothing else is queued: the replay is done or stuck (Collect says which)
    }
    // Busy: check at least every 10 ms of simulated time. Quiet (only this check ran since the
    // last): the period keeps doubling, so a long wait costs a few checks, not one per 10 ms.
    const bool quiet = events - m_tickEvents <= 1;
    m_tickEvents = events;
    const int64_t doubled = periodNs > m_maxSimTime.GetNanoSeconds() ? periodNs : periodNs * 2;
    ScheduleTick(quiet ? doubled : std::min(doubled, kLongestTickNs));
}

void
TraceReplayer::Trip(const std::string& cause)
{
    if (!m_tripped.empty())
    {
        return; // already stopped
    }
    DisarmWatchdog();
    std::ostringstream os;
    os << "the replay ran away and was stopped: " << cause
       << " (at t = " << Simulator::Now().GetSeconds() - m_start << " s of simulated time, "
       << EventsSinceStart() << " events, " << m_left << " operators unfinished" << FirstWaiting();
    const std::string attribute =
        std::string("ns3::rapidllm::TraceReplayer::")
        + (cause.find("MaxEvents") != std::string::npos ? "MaxEvents" : "MaxSimulatedTime");
    os << "). A rate far too low (a bandwidth or clock in the hardware spec or a --set) makes a "
          "replay this long; if the job legitimately is, raise the attribute "
       << attribute << " (in a scenario script, or for the command NS_ATTRIBUTE_DEFAULT='"
       << attribute << "=VALUE').";
    m_tripped = os.str();
    NS_LOG_WARN(m_tripped);
    Simulator::Stop();
}

ReplayResult
TraceReplayer::Collect()
{
    // The watchdog's check stays queued while anything else is (WatchdogTick), so a replay
    // with work left and its check still queued was cut short by a Simulator::Stop.
    const bool checkQueued = m_tick.IsRunning();
    DisarmWatchdog();
    if (!m_tripped.empty())
    {
        throw ReplayError(m_tripped);
    }
    if (m_left > 0 && checkQueued)
    {
        std::ostringstream os;
        os << "the replay has not finished: at t = " << Simulator::Now().GetSeconds() - m_start
           << " s of simulated time after its start " << m_left << " of " << m_total
           << " operators are unfinished and the simulator still has events queued, so it was "
              "stopped (Simulator::Stop) before the replay's end; run the simulator until it "
              "has no events left, or stop it later";
        throw ReplayError(os.str());
    }
    for (const auto& s : m_ranks)
    {
        if (s.left > 0)
        {
            throw ReplayError(StuckReason());
        }
    }
    ReplayResult result;
    result.collectives = m_collectives;
    result.messages = m_messages;
    result.simulatedRanks = m_plan.GetSimulatedCount();
    result.events = m_events;
    result.tensorTimed = m_plan.TimesTensorOnce();
    for (uint32_t r = 0; r < m_ranks.size(); ++r)
    {
        const RankState& s = m_ranks[m_plan.RepresentativeOf(r)];
        RankTiming t = s.timing;
        t.computeS = 1e-9 * double(s.computeNs);
        t.finishS = std::max(t.finishS, NanoSeconds(s.finishNs).GetSeconds());
        t.finishS -= std::min(t.finishS, m_start);
        t.exposedCommS = t.finishS - t.computeS - t.bubbleS - t.hostWaitS;
        if (t.exposedCommS < 1e-12)
        {
            t.exposedCommS = 0; // none: what is left is the doubles' rounding (2.8e-17 s)
        }
        for (uint32_t label = 0; label < s.exposedByLabel.size(); ++label)
        {
            if (s.exposedByLabel[label] > 0)
            {
                t.exposedByOp[m_labels[label]] += s.exposedByLabel[label];
            }
        }
        // The wait after the last kernel for the rank's last operator (a trailing collective).
        const double tail = NanoSeconds(s.finishNs).GetSeconds() - s.idleSince;
        if (s.busyStreams == 0 && s.lastDone != kAbsent && tail > 0
            && OperatorKind(s.kinds[s.lastDone]) != OperatorKind::COMPUTE)
        {
            t.exposedByOp[StageGraph::LabelOf(s.graph->GetName(s.lastDone))] += tail;
            if (m_traceIdle && m_plan.RepresentativeOf(r) == r)
            {
                NoteIdle(r,
                         s.idleSince,
                         NanoSeconds(s.finishNs).GetSeconds(),
                         IdleCause::COMMUNICATION,
                         LabelIdOf(s.graph, s.lastDone));
            }
        }
        if (t.finishS > result.stepTimeS || result.ranks.empty())
        {
            result.stepTimeS = std::max(result.stepTimeS, t.finishS);
            result.criticalRank = t.finishS >= result.stepTimeS ? r : result.criticalRank;
        }
        result.ranks.push_back(t);
    }
    const uint32_t last = m_plan.RepresentativeOf(result.criticalRank);
    if (last < m_ranks.size() && m_ranks[last].lastDone != kAbsent)
    {
        result.criticalPath = m_path.Walk(last, m_ranks[last].lastDone);
        NS_LOG_DEBUG("critical path: compute " << result.criticalPath.computeS
                                               << " s, communication "
                                               << result.criticalPath.communicationS << " s, host "
                                               << result.criticalPath.hostS << " s, unexplained "
                                               << result.criticalPath.unexplainedS << " s");
    }
    m_path.Clear();
    NS_LOG_DEBUG("replay done: step " << result.stepTimeS << " s, critical rank "
                                      << result.criticalRank << ", " << result.collectives
                                      << " collectives, " << result.messages << " messages");
    m_meetings.clear();
    m_labelOfNode.clear();
    m_ordinalOfNode.clear();
    m_running.clear();
    m_groupQueue.clear();
    m_groupBusy.clear();
    m_sends.clear();
    m_recvs.clear();
    m_transfers.clear();
    m_measuring.clear();
    m_tpTimes.clear();
    m_commSms.clear();
    m_groupIndex.clear();
    m_kinds.clear();
    m_commStarts.clear();
    m_plan = SymmetryPlan();
    m_ghostGroups.clear();
    m_world.clear();
    m_onDone = nullptr;
    m_ranks.clear();
    m_job = nullptr;
    return result;
}

OperatorEvent
TraceReplayer::MakeEvent(uint32_t rank, uint32_t node) const
{
    const RankState& s = m_ranks[rank];
    const TraceNode& n = s.graph->GetNode(node);
    OperatorEvent e;
    e.rank = rank;
    e.node = node;
    e.name = s.graph->GetName(node);
    e.kind = ToOperatorKind(n.type);
    e.time = Simulator::Now();
    e.bytes = ReplayedBytes(n);
    switch (e.kind)
    {
        case OperatorKind::COMPUTE:
            e.duration = NanoSeconds(KernelNs(rank, node));
            e.flops = n.numOps;
            break;
        case OperatorKind::COLLECTIVE:
            ToCollectiveOp(n.commType, e.collective);
            e.group = m_job->BindGroup(rank, n.group);
            break;
        case OperatorKind::SEND:
            e.peer = m_job->BindPeer(rank, n.commDst);
            break;
        case OperatorKind::RECV:
            e.peer = m_job->BindPeer(rank, n.commSrc);
            break;
        case OperatorKind::OTHER:
            e.bytes = 0;
            break;
    }
    return e;
}

void
TraceReplayer::OperatorStarted(uint32_t rank, uint32_t node)
{
    const TraceNodeType type = m_ranks[rank].graph->GetNode(node).type;
    if (!m_opEnd.IsEmpty() && (IsCommunication(type) || m_smCount > 0))
    {
        // An end's duration is the time since the start.
        m_commStarts[(uint64_t(rank) << 32) | node] = Simulator::Now().GetTimeStep();
    }
    if (!m_opStart.IsEmpty())
    {
        m_opStart(MakeEvent(rank, node));
    }
}

void
TraceReplayer::OperatorEnded(uint32_t rank, uint32_t node)
{
    if (m_opEnd.IsEmpty())
    {
        return;
    }
    OperatorEvent e = MakeEvent(rank, node);
    auto started = m_commStarts.find((uint64_t(rank) << 32) | node);
    if (started != m_commStarts.end())
    {
        e.duration = TimeStep(e.time.GetTimeStep() - started->second);
        m_commStarts.erase(started);
    }
    m_opEnd(e);
}

TraceReplayer::GroupIndex&
TraceReplayer::IndexOf(uint32_t group)
{
    auto [it, added] = m_groupIndex.try_emplace(group);
    GroupIndex& index = it->second;
    if (added)
    {
        const std::vector<uint32_t>& members = MembersOf(group);
        index.simulated = 0;
        for (uint32_t r : members)
        {
            index.simulated += m_plan.IsSimulated(r) ? 1 : 0;
        }
        if (group != kWorldGroup && members.size() > 64)
        {
            // Large groups find a member's position by hash, not by a scan per join.
            for (uint32_t i = 0; i < members.size(); ++i)
            {
                index.position.emplace(members[i], i);
            }
        }
    }
    return index;
}

uint32_t
TraceReplayer::GroupOf(uint32_t rank, uint32_t node) const
{
    const uint32_t group = m_job->BindGroup(rank, m_ranks[rank].graph->GetNode(node).group);
    if (group != kWorldGroup && !m_job->GetGroups().Has(group))
    {
        throw ReplayError(Describe(rank, node) + ": names group " + std::to_string(group)
                          + ", which the communicator groups do not define");
    }
    return group;
}

const std::vector<uint32_t>&
TraceReplayer::MembersOf(uint32_t group)
{
    return group == kWorldGroup ? m_world : m_job->GetGroups().Get(group);
}

void
TraceReplayer::AdvanceHost(uint32_t rank, int64_t nowNs)
{
    RankState& s = m_ranks[rank];
    const uint32_t n = static_cast<uint32_t>(s.issueNs.size());
    s.hostClockNs = std::max(s.hostClockNs, nowNs);
    while (s.hostNext < n && s.hostWait == UINT32_MAX)
    {
        const uint32_t node = s.hostNext++;
        s.hostClockNs += int64_t(s.graph->GetHostNs(node));
        s.issueNs[node] = s.hostClockNs;
        if (s.graph->IsHostSync(node))
        {
            s.hostWait = node;
        }
    }
    // Ready nodes that waited for the host to reach them.
    const int64_t now = Simulator::Now().GetNanoSeconds();
    std::vector<std::pair<uint32_t, uint8_t>> held;
    held.swap(s.held);
    for (const auto& [node, cause] : held)
    {
        if (s.issueNs[node] < 0)
        {
            s.held.emplace_back(node, cause);
            continue;
        }
        ++s.dispatching;
        Simulator::Schedule(NanoSeconds(std::max<int64_t>(0, s.issueNs[node] - now)),
                            &TraceReplayer::DispatchIssued,
                            this,
                            rank,
                            node,
                            cause);
    }
    if (!s.ready.empty())
    {
        Simulator::ScheduleNow(&TraceReplayer::StartCompute, this, rank);
    }
}

void
TraceReplayer::MakeReady(uint32_t rank, uint32_t node, uint8_t cause, uint32_t by)
{
    RankState& s = m_ranks[rank];
    if (s.host && OperatorKind(s.kinds[node]) != OperatorKind::COMPUTE)
    {
        // Communication starts once the host has issued it (kernels wait in StartCompute).
        const int64_t at = s.issueNs[node];
        const int64_t now = Simulator::Now().GetNanoSeconds();
        if (at < 0)
        {
            s.held.emplace_back(node, cause);
            return;
        }
        if (at > now)
        {
            ++s.dispatching;
            Simulator::Schedule(
                NanoSeconds(at - now), &TraceReplayer::DispatchIssued, this, rank, node, cause);
            return;
        }
    }
    DispatchReady(rank, node, cause, by);
}

void
TraceReplayer::DispatchIssued(uint32_t rank, uint32_t node, uint8_t cause)
{
    --m_ranks[rank].dispatching;
    DispatchReady(rank, node, cause);
}

void
TraceReplayer::NoteIdle(uint32_t rank, double from, double to, IdleCause cause, uint32_t label)
{
    IdleEvent e;
    e.rank = rank;
    e.start = NanoSeconds(std::llround(from * 1e9));
    e.end = NanoSeconds(std::llround(to * 1e9));
    e.cause = cause;
    if (label != kAbsent)
    {
        e.op = m_labels[label];
    }
    m_idle(e);
}

void
TraceReplayer::ChargeIdle(uint32_t rank, double until, uint8_t cause, uint32_t by)
{
    RankState& s = m_ranks[rank];
    double end = until;
    while (end > s.idleSince)
    {
        if (cause == kCauseReceive)
        {
            s.timing.bubbleS += end - s.idleSince;
            if (m_traceIdle)
            {
                NoteIdle(rank, s.idleSince, end, IdleCause::BUBBLE, kAbsent);
            }
            return;
        }
        if (cause != kCauseCommunication || by == kAbsent)
        {
            if (m_traceIdle)
            {
                NoteIdle(rank, s.idleSince, end, IdleCause::COMMUNICATION, kAbsent);
            }
            return; // not attributed (exposedCommS keeps it)
        }
        double start = s.idleSince;
        const auto posted = s.posted.find(by);
        if (posted != s.posted.end())
        {
            start = std::max(s.idleSince, std::min(end, posted->second.at));
        }
        const uint32_t label = LabelIdOf(s.graph, by);
        double from = start; // the communication's part begins
        if (m_labels[label] == StageGraph::kEmbeddingGradRecv)
        {
            // Until the first stage sends it (after its cooldown), the last stage waits for
            // the pipeline to drain: bubble; only the transfer is communication.
            const double sent = 1e-9 * double(m_path.LaunchedAt(rank, by));
            if (sent > start)
            {
                from = std::min(sent, end);
                s.timing.bubbleS += from - start;
                if (m_traceIdle)
                {
                    NoteIdle(rank, start, from, IdleCause::BUBBLE, kAbsent);
                }
            }
        }
        if (label >= s.exposedByLabel.size())
        {
            s.exposedByLabel.resize(label + 1, 0.0);
        }
        s.exposedByLabel[label] += end - from;
        if (m_traceIdle)
        {
            NoteIdle(rank, from, end, IdleCause::COMMUNICATION, label);
        }
        if (posted == s.posted.end())
        {
            return;
        }
        end = start;
        cause = posted->second.cause;
        by = posted->second.by;
        s.posted.erase(posted);
    }
}

void
TraceReplayer::DispatchReady(uint32_t rank, uint32_t node, uint8_t cause, uint32_t by)
{
    RankState& s = m_ranks[rank];
    if (s.busyStreams == 0 && OperatorKind(s.kinds[node]) != OperatorKind::COMPUTE
        && OperatorKind(s.kinds[node]) != OperatorKind::OTHER
        && (cause == kCauseReceive || cause == kCauseCommunication))
    {
        // Posted while the streams wait: the wait so far is not this operator's (ChargeIdle).
        s.posted[node] = {Simulator::Now().GetSeconds(), cause, by};
    }
    if (OperatorKind(s.kinds[node]) != OperatorKind::COMPUTE)
    {
        m_path.Started(rank, node, Simulator::Now().GetNanoSeconds(), by, kAbsent);
    }
    switch (OperatorKind(s.kinds[node]))
    {
        case OperatorKind::COMPUTE:
            if (s.host)
            {
                s.readyAt[node] = Simulator::Now().GetSeconds();
            }
            s.ready.push({node, cause, by});
            if (!s.releasing)
            {
                StartCompute(rank);
            }
            break;
        case OperatorKind::COLLECTIVE:
            JoinCollective(rank, node);
            break;
        case OperatorKind::SEND:
        case OperatorKind::RECV:
            PostPointToPoint(rank, node);
            break;
        case OperatorKind::OTHER:
        {
            // Metadata, memory and other nodes take the time the trace gives them (a memory
            // load or store that another tool timed: a copy engine's, beside the kernels), else
            // none: there is no model of memory expansion here.
            const uint64_t ns = s.graph->GetNode(node).durationNs;
            if (ns > 0)
            {
                Simulator::Schedule(NanoSeconds(ns), &TraceReplayer::Complete, this, rank, node);
            }
            else
            {
                Complete(rank, node);
            }
            break;
        }
    }
}

void
TraceReplayer::Complete(uint32_t rank, uint32_t node)
{
    CompleteAt(rank, node, Simulator::Now().GetNanoSeconds());
}

void
TraceReplayer::NotePosted(uint32_t rank, uint32_t node)
{
    RankState& s = m_ranks[rank];
    const auto children = s.graph->GetChildren(node);
    s.inFlight.emplace_back(node, children.empty() ? kAbsent : children[0]);
}

void
TraceReplayer::CompleteAt(uint32_t rank, uint32_t node, int64_t nowNs)
{
    RankState& s = m_ranks[rank];
    s.status[node] = kStatusDone;
    s.left--;
    m_path.Ended(rank, node, nowNs);
    if (--m_left == 0)
    {
        m_events = EventsSinceStart();
        DisarmWatchdog();
        if (m_onDone)
        {
            Simulator::ScheduleNow(m_onDone);
        }
    }
    else if (++m_sinceCheck == kCompletionsPerCheck)
    {
        m_sinceCheck = 0;
        if (EventsSinceStart() > m_maxEvents)
        {
            Trip("the replay executed more than the watchdog's MaxEvents of "
                 + std::to_string(m_maxEvents) + " simulator events");
        }
    }
    if (nowNs >= s.finishNs)
    {
        s.finishNs = nowNs;
        s.lastDone = node;
    }
    if (s.host && node == s.hostWait)
    {
        s.hostWait = UINT32_MAX;
        AdvanceHost(rank, nowNs);
    }
    const TraceNode& n = s.graph->GetNode(node);
    if (!s.smHolds.empty() && OperatorKind(s.kinds[node]) != OperatorKind::COMPUTE)
    {
        for (auto it = s.smHolds.begin(); it != s.smHolds.end(); ++it)
        {
            if (it->node == node)
            {
                s.smHolds.erase(it);
                Rescale(rank);
                break;
            }
        }
    }
    if (OperatorKind(s.kinds[node]) != OperatorKind::COMPUTE && !s.inFlight.empty())
    {
        for (auto it = s.inFlight.begin(); it != s.inFlight.end(); ++it)
        {
            if (it->first == node)
            {
                s.inFlight.erase(it);
                break;
            }
        }
    }
    if (m_traceOperators)
    {
        OperatorEnded(rank, node);
    }
    uint8_t cause = n.type == TraceNodeType::COMP        ? kCauseCompute
                    : n.type == TraceNodeType::COMM_RECV ? kCauseReceive
                                                         : kCauseCommunication;
    // Only waits on another pipeline stage's activations or gradients are bubble; a
    // context-parallel ring's receive is communication, and so is the tied embedding's gradient
    // exchange between the first and the last stage (StageGraph::kEmbeddingGradRecv).
    if (cause == kCauseReceive
        && (!m_job->IsPipelineTransfer(rank, m_job->BindPeer(rank, n.commSrc))
            || m_labels[LabelIdOf(s.graph, node)] == StageGraph::kEmbeddingGradRecv))
    {
        cause = kCauseCommunication;
    }
    // Kernels released here start after the whole release: a collective released beside them
    // has joined (and holds its SMs) by then.
    const bool outer = !s.releasing;
    s.releasing = true;
    for (uint32_t child : s.graph->GetChildren(node))
    {
        if (--s.waiting[child] == 0)
        {
            MakeReady(rank, child, cause, node);
        }
    }
    if (outer)
    {
        s.releasing = false;
        if (!s.ready.empty())
        {
            StartCompute(rank);
        }
    }
}

uint32_t
TraceReplayer::OrdinalOf(const ExecutionTrace* graph, uint32_t node)
{
    std::vector<uint32_t>& ordinals = m_ordinalOfNode[graph];
    if (ordinals.empty())
    {
        // A graph's group ids stand for distinct groups on every rank that runs it (a layout's
        // ids carry their kind, a trace's are global), so counting per graph group is counting
        // per group.
        ordinals.assign(graph->GetNNodes(), 0);
        std::unordered_map<uint32_t, uint32_t> seen;
        for (uint32_t i = 0; i < graph->GetNNodes(); ++i)
        {
            const TraceNode& n = graph->GetNode(i);
            if (n.type == TraceNodeType::COMM_COLL)
            {
                ordinals[i] = seen[n.group]++;
            }
        }
    }
    return ordinals[node];
}

uint32_t
TraceReplayer::LabelIdOf(const ExecutionTrace* graph, uint32_t node)
{
    std::vector<uint32_t>& ids = m_labelOfNode[graph];
    if (ids.empty())
    {
        ids.assign(graph->GetNNodes(), kAbsent);
    }
    if (ids[node] == kAbsent)
    {
        const std::string label = StageGraph::LabelOf(graph->GetName(node));
        auto [it, added] = m_labelIds.emplace(label, static_cast<uint32_t>(m_labels.size()));
        if (added)
        {
            m_labels.push_back(label);
        }
        ids[node] = it->second;
    }
    return ids[node];
}

void
TraceReplayer::StartCompute(uint32_t rank)
{
    RankState& s = m_ranks[rank];
    while (s.busyStreams < m_streams && !s.ready.empty())
    {
        auto [node, cause, by] = s.ready.top();
        if (s.host)
        {
            // A kernel starts once the host has issued it; later ones are issued later still.
            const int64_t at = s.issueNs[node];
            const int64_t nowNs = Simulator::Now().GetNanoSeconds();
            if (at < 0)
            {
                break; // AdvanceHost calls again when the host gets there
            }
            if (at > nowNs)
            {
                if (s.wakeNs != at)
                {
                    s.wakeNs = at;
                    Simulator::Schedule(
                        NanoSeconds(at - nowNs), &TraceReplayer::StartCompute, this, rank);
                }
                break;
            }
        }
        s.ready.pop();
        m_path.Started(rank, node, Simulator::Now().GetNanoSeconds(), by, s.lastKernel);
        const double now = Simulator::Now().GetSeconds();
        if (s.busyStreams == 0)
        {
            // The idle time after the kernel was ready is the host's (its issue came later);
            // the time before, what the kernel's last dependency kept it waiting for.
            double waited = now;
            if (s.host && now > s.idleSince)
            {
                waited = std::max(s.idleSince, std::min(now, s.readyAt[node]));
                s.timing.hostWaitS += now - waited;
                if (m_traceIdle && now > waited)
                {
                    NoteIdle(rank, waited, now, IdleCause::HOST, kAbsent);
                }
            }
            ChargeIdle(rank, waited, cause, by);
            s.busySinceNs = Simulator::Now().GetNanoSeconds();
        }
        s.busyStreams++;
        s.status[node] = kStatusPosted;
        if (m_traceOperators)
        {
            OperatorStarted(rank, node);
        }
        const double factor = SmFactor(rank, node);
        const int64_t own = OwnNs(rank, node);
        const int64_t first = Scaled(own, factor);
        const uint32_t head = node;
        const int64_t ns = m_chainKernels ? ChainKernels(rank, node, first) : first;
        const EventId done =
            Simulator::Schedule(NanoSeconds(ns), &TraceReplayer::ComputeDone, this, rank, node);
        if (m_smCount > 0 && node == head && s.graph->GetSmScaling(node) > 0)
        {
            // Its time follows the SMs the rank's collectives hold while it runs (Rescale).
            const int64_t now = Simulator::Now().GetNanoSeconds();
            s.running.push_back({node, done, now, now, double(own), factor});
        }
    }
}

int64_t
TraceReplayer::OwnNs(uint32_t rank, uint32_t node) const
{
    const auto ns = int64_t(m_ranks[rank].graph->GetNode(node).durationNs);
    if (m_slowdown.empty())
    {
        return ns;
    }
    const std::vector<double>* factors = m_factorsOf.empty() ? nullptr : m_factorsOf[rank];
    return Scaled(ns, m_slowdown[rank] * (factors ? (*factors)[node] : 1.0));
}

int64_t
TraceReplayer::KernelNs(uint32_t rank, uint32_t node) const
{
    return Scaled(OwnNs(rank, node), SmFactor(rank, node));
}

void
TraceReplayer::SetComputeSpeeds(const std::map<uint32_t, double>& speeds)
{
    m_speeds = speeds;
}

void
TraceReplayer::SetKernelFactors(const std::map<uint32_t, std::vector<double>>& factors)
{
    m_kernelFactors = factors;
    m_factorsOf.clear(); // they pointed into the old factors; the next Start resolves the new
}

double
TraceReplayer::SmFactor(uint32_t rank, uint32_t node) const
{
    const RankState& s = m_ranks[rank];
    if (m_smCount == 0 || s.smHolds.empty())
    {
        return 1;
    }
    const double share = s.graph->GetSmScaling(node);
    if (share <= 0)
    {
        return 1;
    }
    // The SMs the collectives hold: one kernel per group at a time (a communicator's stream).
    uint64_t held = 0;
    for (std::size_t i = 0; i < s.smHolds.size(); ++i)
    {
        bool first = true;
        for (std::size_t j = 0; j < i; ++j)
        {
            first = first && s.smHolds[j].group != s.smHolds[i].group;
        }
        held += first ? s.smHolds[i].sms : 0;
    }
    if (held >= m_smCount)
    {
        // Collectives holding every SM leave none for the kernel: a GPU smaller than its
        // collectives' channels (a --set of gpu.sm_count on a replay), not a slowdown to model.
        throw ReplayError(Describe(rank, node) + ": the collectives in flight hold "
                          + std::to_string(held) + " SMs, and the GPU has "
                          + std::to_string(m_smCount)
                          + " (gpu.sm_count, SmCount): none is left for the kernel; give the GPU "
                            "more SMs than its collectives' channels");
    }
    const uint64_t left = m_smCount - held;
    return 1 + share * (double(m_smCount) / double(left) - 1);
}

void
TraceReplayer::Rescale(uint32_t rank)
{
    RankState& s = m_ranks[rank];
    const int64_t now = Simulator::Now().GetNanoSeconds();
    for (auto& k : s.running)
    {
        const double factor = SmFactor(rank, k.node);
        if (factor == k.factor)
        {
            continue;
        }
        // The work done at the old rate; the rest at the new one.
        k.leftNs = std::max(0.0, k.leftNs - double(now - k.lastNs) / k.factor);
        k.lastNs = now;
        k.factor = factor;
        Simulator::Cancel(k.done);
        k.done = Simulator::Schedule(NanoSeconds(std::llround(k.leftNs * factor)),
                                     &TraceReplayer::ComputeDone,
                                     this,
                                     rank,
                                     k.node);
    }
}

int64_t
TraceReplayer::ChainKernels(uint32_t rank, uint32_t& node, int64_t firstNs)
{
    RankState& s = m_ranks[rank];
    const ExecutionTrace& g = *s.graph;
    const int64_t start = Simulator::Now().GetNanoSeconds();
    int64_t end = start + firstNs;
    while (true)
    {
        if (m_smCount > 0 && (!s.inFlight.empty() || s.dispatching > 0 || !s.held.empty()))
        {
            // A collective may join (and hold SMs) before the next kernel starts: an event
            // starts that kernel, with the SMs it finds.
            break;
        }
        // The kernel that starts when this one ends: the first ready one, among those waiting
        // and this one's children that it releases. Every child must be a kernel (anything
        // else has to be posted at the end time, by an event).
        const auto children = g.GetChildren(node);
        if (children.empty())
        {
            break;
        }
        uint32_t next = s.ready.empty() ? kAbsent : std::get<0>(s.ready.top());
        bool kernelsOnly = true;
        for (uint32_t c : children)
        {
            if (OperatorKind(s.kinds[c]) != OperatorKind::COMPUTE)
            {
                kernelsOnly = false;
                break;
            }
            if (s.waiting[c] == 1)
            {
                next = std::min(next, c);
            }
        }
        if (!kernelsOnly || next == kAbsent)
        {
            break;
        }
        // A posted communication could release a node before `end`; that node would take the
        // stream first only with a lower index than `next` (children follow their parents).
        for (const auto& posted : s.inFlight)
        {
            if (posted.second <= next)
            {
                next = kAbsent;
                break;
            }
        }
        if (next == kAbsent)
        {
            break;
        }
        if (s.host && (s.issueNs[next] < 0 || s.issueNs[next] > end))
        {
            break; // it waits for the host: an event starts it
        }
        CompleteAt(rank, node, end);
        NS_ASSERT(!s.ready.empty() && std::get<0>(s.ready.top()) == next);
        m_path.Started(rank, next, end, std::get<2>(s.ready.top()), node);
        s.ready.pop();
        node = next;
        s.status[node] = kStatusPosted;
        end += OwnNs(rank, node);
    }
    return end - start;
}

void
TraceReplayer::ComputeDone(uint32_t rank, uint32_t node)
{
    RankState& s = m_ranks[rank];
    for (auto it = s.running.begin(); it != s.running.end(); ++it)
    {
        if (it->node == node)
        {
            const int64_t took = Simulator::Now().GetNanoSeconds() - it->startNs;
            s.timing.smSharingS += 1e-9 * double(took - OwnNs(rank, node));
            s.running.erase(it);
            break;
        }
    }
    s.busyStreams--;
    s.lastKernel = node;
    if (s.busyStreams == 0)
    {
        const Time now = Simulator::Now();
        s.computeNs += now.GetNanoSeconds() - s.busySinceNs;
        s.idleSince = now.GetSeconds();
    }
    Complete(rank, node);
    StartCompute(rank);
}

void
TraceReplayer::JoinCollective(uint32_t rank, uint32_t node)
{
    RankState& s = m_ranks[rank];
    const TraceNode& n = s.graph->GetNode(node);
    CollectiveOp op;
    if (!ToCollectiveOp(n.commType, op))
    {
        throw ReplayError(Describe(rank, node) + ": " + UnreplayableCollective(n.commType));
    }
    const uint32_t group = GroupOf(rank, node);
    const std::vector<uint32_t>& members = MembersOf(group);
    GroupIndex& index = IndexOf(group);
    uint32_t pos = kAbsent;
    if (group == kWorldGroup)
    {
        pos = rank;
    }
    else if (index.position.empty())
    {
        auto found = std::find(members.begin(), members.end(), rank);
        pos = found == members.end() ? kAbsent : uint32_t(found - members.begin());
    }
    else
    {
        auto found = index.position.find(rank);
        pos = found == index.position.end() ? kAbsent : found->second;
    }
    if (pos == kAbsent)
    {
        throw ReplayError(Describe(rank, node) + ": rank " + std::to_string(rank)
                          + " is not a member of group " + std::to_string(group));
    }
    const uint64_t key = (uint64_t(group) << 32) | OrdinalOf(s.graph, node);
    auto [it, created] = m_meetings.try_emplace(key);
    Meeting& m = it->second;
    if (created)
    {
        m.group = group;
        m.nodeOfMember.assign(members.size(), kAbsent);
        m.type = n.commType;
        m.bytes = ReplayedBytes(n);
        m.firstRank = rank;
    }
    else if (m.type != n.commType || m.bytes != ReplayedBytes(n))
    {
        throw ReplayError(Describe(rank, node) + " meets " + ToString(m.type) + " of "
                          + std::to_string(m.bytes) + " bytes issued by rank "
                          + std::to_string(m.firstRank) + " as the same collective of group "
                          + std::to_string(group) + ", but is " + ToString(n.commType) + " of "
                          + std::to_string(ReplayedBytes(n)) + " bytes");
    }
    m.nodeOfMember[pos] = node;
    s.status[node] = kStatusPosted;
    NotePosted(rank, node);
    HoldSms(rank, node, group);
    const std::size_t expected = index.simulated;
    if (++m.joined < expected)
    {
        NS_LOG_LOGIC("rank " << rank << " joins " << ToString(n.commType) << " #"
                             << (key & 0xffffffffu) << " of group " << group << ", waiting for "
                             << expected - m.joined << " more");
        return;
    }
    if (m_serializeGroups && m_groupBusy[group])
    {
        NS_LOG_LOGIC("group " << group << " busy: " << ToString(n.commType) << " #"
                              << (key & 0xffffffffu) << " queued");
        m_groupQueue[group].push_back(key);
        return;
    }
    m_launcher = {rank, node, true};
    LaunchMeeting(key);
}

void
TraceReplayer::LaunchMeeting(uint64_t key)
{
    Meeting& m = m_meetings.at(key);
    const std::vector<uint32_t>& members = MembersOf(m.group);
    m_groupBusy[m.group] = true;
    m_collectives++;
    const int64_t nowNs = Simulator::Now().GetNanoSeconds();
    for (uint32_t i = 0; i < members.size(); ++i)
    {
        const uint32_t r = members[i];
        if (!m_plan.IsSimulated(r) || m.nodeOfMember[i] == kAbsent)
        {
            continue;
        }
        m_path.Launched(
            r, m.nodeOfMember[i], m_launcher.rank, m_launcher.node, nowNs, m_launcher.posted);
        if (m_traceOperators)
        {
            OperatorStarted(r, m.nodeOfMember[i]);
        }
    }
    const bool tensor = m_plan.IsTimedOnce(m.group) && !m_traceAll;
    auto timed = m_tpTimes.end();
    if (tensor)
    {
        timed = m_tpTimes.find(std::make_tuple(m.group, int(m.type), m.bytes));
    }
    if (members.size() == 1 || m.bytes == 0 || timed != m_tpTimes.end())
    {
        // Nothing crosses the network, or this group's links carry nothing else and this
        // collective was measured before: done after the known time, as simulator events.
        const Time delay = NanoSeconds(timed != m_tpTimes.end() ? timed->second : 0);
        NS_LOG_DEBUG("collective " << ToString(m.type) << " of " << m.bytes << " B on group "
                                   << m.group << ": done in " << delay.As(Time::US)
                                   << " without the network");
        const uint64_t pseudo = UINT64_MAX - m_collectives;
        m_running[pseudo] = key;
        Simulator::Schedule(delay, &TraceReplayer::TimedDone, this, pseudo);
        return;
    }
    CollectiveRequest request;
    ToCollectiveOp(m.type, request.op);
    request.endpoints = members;
    request.bytes = m.bytes;
    request.algorithm = m_algorithm;
    request.flow = key; // the group and the collective's index on it: the same on any backend
    uint64_t id = m_engine->Start(request,
                                  MakeCallback(&TraceReplayer::CollectiveRankDone, this),
                                  MakeCallback(&TraceReplayer::CollectiveDone, this));
    NS_LOG_DEBUG("collective " << id << " launched: " << ToString(m.type) << " of " << m.bytes
                               << " B on group " << m.group << " (" << members.size() << " ranks)");
    m_running[id] = key;
    if (tensor)
    {
        m_measuring[id] = Simulator::Now().GetSeconds();
        return;
    }
    // The same collective of every copy's group loads the network too (ghosts: no callbacks).
    auto ghosts = m_ghostGroups.find(m.group);
    if (ghosts == m_ghostGroups.end())
    {
        ghosts =
            m_ghostGroups
                .emplace(m.group, m_plan.GetGhostGroups(m.group, m_job->GetGroups(), m_traceAll))
                .first;
    }
    for (uint32_t image : ghosts->second)
    {
        CollectiveRequest ghost = request;
        ghost.endpoints = m_job->GetGroups().Get(image);
        ghost.flow = (uint64_t(image) << 32) | (key & 0xffffffffu);
        m_engine->Start(
            ghost, CollectiveEngine::RankDoneCallback(), CollectiveEngine::DoneCallback());
    }
}

void
TraceReplayer::TimedDone(uint64_t collective)
{
    const auto members =
        static_cast<uint32_t>(MembersOf(m_meetings.at(m_running.at(collective)).group).size());
    for (uint32_t i = 0; i < members; ++i)
    {
        CollectiveRankDone(collective, i, 0);
    }
    CollectiveDone(collective);
}

void
TraceReplayer::CollectiveRankDone(uint64_t collective, uint32_t member, uint32_t endpoint)
{
    const Meeting& m = m_meetings.at(m_running.at(collective));
    const uint32_t rank = MembersOf(m.group)[member];
    if (m_plan.IsSimulated(rank))
    {
        Complete(rank, m.nodeOfMember[member]);
    }
}

void
TraceReplayer::CollectiveDone(uint64_t collective)
{
    const uint64_t key = m_running.at(collective);
    m_running.erase(collective);
    const Meeting& done = m_meetings.at(key);
    const uint32_t group = done.group;
    // A queued collective starts when this one ends (its first simulated member's node).
    const std::vector<uint32_t>& members = MembersOf(group);
    for (uint32_t i = 0; i < members.size(); ++i)
    {
        if (m_plan.IsSimulated(members[i]) && done.nodeOfMember[i] != kAbsent)
        {
            m_launcher = {members[i], done.nodeOfMember[i], false};
            break;
        }
    }
    auto measured = m_measuring.find(collective);
    if (measured != m_measuring.end())
    {
        const double seconds = Simulator::Now().GetSeconds() - measured->second;
        m_tpTimes[std::make_tuple(group, int(done.type), done.bytes)] = std::llround(seconds * 1e9);
        m_measuring.erase(measured);
    }
    m_meetings.erase(key);
    m_groupBusy[group] = false;
    auto& queue = m_groupQueue[group];
    if (!queue.empty())
    {
        uint64_t next = queue.front();
        queue.pop_front();
        LaunchMeeting(next);
    }
}

void
TraceReplayer::HoldSms(uint32_t rank, uint32_t node, uint32_t group)
{
    if (m_smCount == 0)
    {
        return;
    }
    const std::vector<uint32_t>& members = MembersOf(group);
    if (members.size() < 2)
    {
        return;
    }
    RankState& s = m_ranks[rank];
    const TraceNode& n = s.graph->GetNode(node);
    const bool collective = n.type == TraceNodeType::COMM_COLL;
    uint32_t sms = s.graph->GetCommSms(node);
    if (sms == 0)
    {
        const auto key =
            std::make_tuple(group, collective ? int(n.commType) : -1, ReplayedBytes(n));
        auto known = m_commSms.find(key);
        if (known == m_commSms.end())
        {
            CollectiveRequest request;
            request.endpoints = members;
            request.bytes = ReplayedBytes(n);
            request.algorithm = m_algorithm;
            request.fluid = true;
            if (collective)
            {
                ToCollectiveOp(n.commType, request.op);
            }
            const uint32_t held =
                collective ? m_engine->GetSmCount(request) : m_engine->GetP2pSmCount(request);
            known = m_commSms.emplace(key, held).first;
        }
        sms = known->second;
    }
    NS_LOG_DEBUG("rank " << rank << " node " << node << " holds " << sms << " SMs");
    if (sms > 0)
    {
        s.smHolds.push_back({node, group, sms});
        Rescale(rank);
    }
}

void
TraceReplayer::PostPointToPoint(uint32_t rank, uint32_t node)
{
    RankState& s = m_ranks[rank];
    const TraceNode& n = s.graph->GetNode(node);
    s.status[node] = kStatusPosted;
    NotePosted(rank, node);
    if (n.group != kWorldGroup)
    {
        HoldSms(rank, node, GroupOf(rank, node));
    }
    const bool send = n.type == TraceNodeType::COMM_SEND;
    const uint32_t peer = m_job->BindPeer(rank, send ? n.commDst : n.commSrc);
    if (peer >= m_ranks.size())
    {
        throw ReplayError(Describe(rank, node) + ": peer rank " + std::to_string(peer)
                          + " is outside the job's " + std::to_string(m_ranks.size()) + " ranks");
    }
    const uint32_t src = send ? rank : peer;
    const uint32_t dst = send ? peer : rank;
    // Seen from the receiver's representative: a send to a folded rank meets the receive its
    // representative posts for the same message of its own copy (copies advance in step).
    const auto key =
        std::make_tuple(m_plan.InFrameOf(src, dst), m_plan.RepresentativeOf(dst), n.commTag);
    const PostedMessage posted{rank, node, peer};
    auto& other = send ? m_recvs : m_sends;
    auto it = other.find(key);
    if (it == other.end())
    {
        NS_LOG_LOGIC("rank " << rank << " posts " << (send ? "send to " : "receive from ") << peer
                             << " (tag " << n.commTag << "), waiting for its match");
        (send ? m_sends : m_recvs).emplace(key, posted);
        return;
    }
    const PostedMessage match = it->second;
    other.erase(it);
    m_path.Launched(match.rank, match.node, rank, node, Simulator::Now().GetNanoSeconds(), true);
    const PostedMessage& sent = send ? posted : match;
    const PostedMessage& received = send ? match : posted;
    // Matched in posting order: a size that differs means the two ranks post their messages in
    // different orders (a receive of unknown size, 0 bytes, takes the send's).
    const uint64_t sentBytes = m_ranks[sent.rank].graph->GetNode(sent.node).bytes;
    const uint64_t receivedBytes = m_ranks[received.rank].graph->GetNode(received.node).bytes;
    if (sentBytes != receivedBytes && receivedBytes != 0)
    {
        throw ReplayError(Describe(received.rank, received.node) + " receives "
                          + std::to_string(receivedBytes) + " bytes but meets "
                          + Describe(sent.rank, sent.node) + ", which sends "
                          + std::to_string(sentBytes)
                          + " (sends and receives of one source, destination and tag match in "
                            "the order each rank posts them)");
    }
    StartTransfer(sent, received, sentBytes);
}

void
TraceReplayer::StartTransfer(const PostedMessage& send, const PostedMessage& recv, uint64_t bytes)
{
    if (m_traceOperators)
    {
        OperatorStarted(send.rank, send.node);
        OperatorStarted(recv.rank, recv.node);
    }
    NS_LOG_LOGIC("transfer of " << bytes << " B from rank " << send.rank << " to rank " << send.peer
                                << " at " << Simulator::Now().As(Time::US));
    if (send.rank == send.peer)
    {
        m_messages++;
        Complete(send.rank, send.node);
        Complete(recv.rank, recv.node);
        return;
    }
    uint64_t id = m_backend->Send(send.rank,
                                  send.peer,
                                  bytes,
                                  m_transferDone,
                                  1,
                                  0,
                                  false,
                                  false,
                                  SendFlow(send.rank, send.node));
    m_transfers[id] = std::make_tuple(send.rank, send.node, recv.rank, recv.node);
    for (uint32_t t : m_plan.GhostCopies(send.rank, send.peer, m_traceAll))
    {
        // Every copy sends the same message at the same time (ghost traffic).
        const uint32_t rank = m_plan.Translate(send.rank, t);
        m_backend->Send(rank,
                        m_plan.Translate(send.peer, t),
                        bytes,
                        m_ghostDone,
                        1,
                        0,
                        false,
                        false,
                        SendFlow(rank, send.node));
    }
}

uint64_t
TraceReplayer::SendFlow(uint32_t rank, uint32_t node)
{
    // Salted apart from the collectives' flows (CollectiveEngine derives theirs from a group
    // and an index).
    return FlowHash(rank, node, 0, 1);
}

void
TraceReplayer::TransferDone(uint64_t message)
{
    auto [src, sendNode, dst, recvNode] = m_transfers.at(message);
    m_transfers.erase(message);
    m_messages++;
    NS_LOG_LOGIC("transfer " << message << " from rank " << src << " to rank " << dst
                             << " delivered at " << Simulator::Now().As(Time::US));
    Complete(src, sendNode);
    Complete(dst, recvNode);
}

void
TraceReplayer::GhostDelivered(uint64_t message)
{}

std::string
TraceReplayer::FirstWaiting() const
{
    // The first rank with work left, and its first posted or waiting node.
    for (uint32_t r = 0; r < m_ranks.size(); ++r)
    {
        const RankState& s = m_ranks[r];
        if (s.left == 0)
        {
            continue;
        }
        uint32_t at = kAbsent;
        for (uint32_t i = 0; i < s.status.size() && at == kAbsent; ++i)
        {
            at = s.status[i] == kStatusPosted ? i : at;
        }
        for (uint32_t i = 0; i < s.status.size() && at == kAbsent; ++i)
        {
            at = s.status[i] == kStatusIdle ? i : at;
        }
        return at != kAbsent ? "; first waiting: " + Describe(r, at) : std::string();
    }
    return "";
}

std::string
TraceReplayer::StuckReason() const
{
    const uint32_t stalled = m_backend ? m_backend->GetStalledCount() : 0;
    if (stalled > 0)
    {
        // Only messages the network cannot deliver hold the replay up: a link died under them
        // and is never repaired (routing around a fault moves the messages sent after it, not
        // those already on the link).
        std::ostringstream os;
        os << "the trace cannot finish: " << stalled
           << " message(s) are on a link that is dead and never repaired (a --fault or "
              "network.faults entry of factor 0; messages already on a link when it dies stay "
              "there, whatever the routing): repair it (SELECTOR:1@TIME) or let it die before "
              "they start"
           << FirstWaiting();
        return os.str();
    }
    for (uint32_t r = 0; r < m_ranks.size(); ++r)
    {
        const RankState& s = m_ranks[r];
        if (s.left == 0)
        {
            continue;
        }
        for (uint32_t i = 0; i < s.status.size(); ++i)
        {
            if (s.status[i] != kStatusPosted)
            {
                continue;
            }
            const TraceNode& n = s.graph->GetNode(i);
            std::string why;
            if (n.type == TraceNodeType::COMM_RECV)
            {
                why = "no matching send was ever posted";
            }
            else if (n.type == TraceNodeType::COMM_SEND)
            {
                why = "no matching receive was ever posted";
            }
            else if (n.type == TraceNodeType::COMM_COLL)
            {
                for (const auto& [key, m] : m_meetings)
                {
                    auto pos = std::find(m.nodeOfMember.begin(), m.nodeOfMember.end(), i);
                    if (m.joined < m.nodeOfMember.size() && pos != m.nodeOfMember.end())
                    {
                        const auto& members =
                            m.group == kWorldGroup ? m_world : m_job->GetGroups().Get(m.group);
                        why = "the group never met: ranks";
                        for (uint32_t k = 0; k < members.size(); ++k)
                        {
                            if (m.nodeOfMember[k] == kAbsent && m_plan.IsSimulated(members[k]))
                            {
                                why += " " + std::to_string(members[k]);
                            }
                        }
                        why += " never issued it";
                        break;
                    }
                }
            }
            if (!why.empty())
            {
                return "the trace cannot finish: " + Describe(r, i) + ": " + why;
            }
        }
        for (uint32_t i = 0; i < s.status.size(); ++i)
        {
            if (s.status[i] == kStatusIdle)
            {
                return "the trace cannot finish: " + Describe(r, i)
                       + " waits for dependencies that never finish (a cycle, or a predecessor "
                         "stuck on communication)";
            }
        }
    }
    return "the trace cannot finish";
}

} // namespace rapidllm
} // namespace ns3
