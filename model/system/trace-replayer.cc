/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "trace-replayer.h"

#include "collective-algorithms.h"
#include "ns3/boolean.h"
#include "ns3/log.h"
#include "ns3/simulator.h"
#include "ns3/spec-error.h"
#include "ns3/string.h"
#include "ns3/topology.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <cmath>
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

/** Maps a Chakra collective type onto the collective engine's operations. */
bool
ToCollectiveOp(CollectiveType type, CollectiveOp& op)
{
    switch (type)
    {
        case CollectiveType::ALL_REDUCE:
        case CollectiveType::BARRIER:
            op = CollectiveOp::ALL_REDUCE;
            return true;
        case CollectiveType::REDUCE:
            op = CollectiveOp::REDUCE;
            return true;
        case CollectiveType::ALL_GATHER:
            op = CollectiveOp::ALL_GATHER;
            return true;
        case CollectiveType::BROADCAST:
            op = CollectiveOp::BROADCAST;
            return true;
        case CollectiveType::ALL_TO_ALL:
            op = CollectiveOp::ALL_TO_ALL;
            return true;
        case CollectiveType::REDUCE_SCATTER:
        case CollectiveType::REDUCE_SCATTER_BLOCK:
            op = CollectiveOp::REDUCE_SCATTER;
            return true;
        default:
            return false;
    }
}
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
                          "Algorithm of every collective (auto picks per topology dimension).",
                          StringValue("auto"),
                          MakeStringAccessor(&TraceReplayer::m_algorithm),
                          MakeStringChecker())
            .AddTraceSource("OperatorStart",
                            "A node of a rank's graph starts (rank, node index, name).",
                            MakeTraceSourceAccessor(&TraceReplayer::m_opStart),
                            "ns3::rapidllm::TraceReplayer::OperatorTracedCallback")
            .AddTraceSource("OperatorEnd",
                            "A node of a rank's graph ends (rank, node index, name).",
                            MakeTraceSourceAccessor(&TraceReplayer::m_opEnd),
                            "ns3::rapidllm::TraceReplayer::OperatorTracedCallback");
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
        os << " " << ToString(n.commType) << " on group " << m_job->BindGroup(rank, n.group);
    }
    os << ")";
    return os.str();
}

ReplayResult
TraceReplayer::Replay(const ReplayJob& job)
{
    Start(job);
    Simulator::Run();
    return Collect();
}

void
TraceReplayer::Start(const ReplayJob& job, std::function<void()> onDone)
{
    if (!m_backend)
    {
        throw SpecError("replay", "", "no network backend set");
    }
    if (job.GetRankCount() > m_backend->GetTopology()->GetEndpointCount())
    {
        throw SpecError(
            "replay",
            "",
            "the job has " + std::to_string(job.GetRankCount()) + " ranks but the network only "
                + std::to_string(m_backend->GetTopology()->GetEndpointCount()) + " GPUs");
    }
    m_job = &job;
    m_onDone = onDone;
    m_left = 0;
    m_start = Simulator::Now().GetSeconds();
    m_ranks.assign(job.GetRankCount(), RankState());
    SetUpSymmetry(job);
    for (uint32_t r = 0; r < m_ranks.size(); ++r)
    {
        if (!IsSimulated(r))
        {
            continue; // a copy: its representative stands for it
        }
        RankState& s = m_ranks[r];
        s.graph = &job.GetGraph(r);
        const uint32_t n = static_cast<uint32_t>(s.graph->GetNNodes());
        s.waiting.resize(n);
        s.status.assign(n, kStatusIdle);
        s.left = n;
        m_left += n;
        s.idleSince = m_start;
        for (uint32_t i = 0; i < n; ++i)
        {
            s.waiting[i] = static_cast<uint32_t>(s.graph->GetDeps(i).size());
        }
    }
    for (uint32_t r = 0; r < m_ranks.size(); ++r)
    {
        for (uint32_t i = 0; i < m_ranks[r].waiting.size(); ++i)
        {
            if (m_ranks[r].waiting[i] == 0)
            {
                MakeReady(r, i, kCauseCompute);
            }
        }
    }
}

ReplayResult
TraceReplayer::Collect()
{
    for (const auto& s : m_ranks)
    {
        if (s.left > 0)
        {
            ReportStuck();
        }
    }
    ReplayResult result;
    result.collectives = m_collectives;
    result.messages = m_messages;
    result.simulatedRanks = static_cast<uint32_t>(
        m_simulated.empty() ? m_ranks.size()
                            : std::count(m_simulated.begin(), m_simulated.end(), uint8_t(1)));
    result.tensorTimed = m_tpCached;
    for (uint32_t r = 0; r < m_ranks.size(); ++r)
    {
        RankTiming t = m_ranks[IsSimulated(r) ? r : RepresentativeOf(r)].timing;
        t.finishS -= std::min(t.finishS, m_start);
        t.exposedCommS = std::max(0.0, t.finishS - t.computeS - t.bubbleS);
        if (t.finishS > result.stepTimeS || result.ranks.empty())
        {
            result.stepTimeS = std::max(result.stepTimeS, t.finishS);
            result.criticalRank = t.finishS >= result.stepTimeS ? r : result.criticalRank;
        }
        result.ranks.push_back(t);
    }
    m_meetings.clear();
    m_running.clear();
    m_groupQueue.clear();
    m_groupBusy.clear();
    m_sends.clear();
    m_recvs.clear();
    m_transfers.clear();
    m_measuring.clear();
    m_tpTimes.clear();
    m_simulated.clear();
    m_onDone = nullptr;
    m_ranks.clear();
    m_job = nullptr;
    return result;
}

void
TraceReplayer::MakeReady(uint32_t rank, uint32_t node, uint8_t cause)
{
    RankState& s = m_ranks[rank];
    switch (s.graph->GetNode(node).type)
    {
        case TraceNodeType::COMP:
            s.ready.push({node, cause});
            StartCompute(rank);
            break;
        case TraceNodeType::COMM_COLL:
            JoinCollective(rank, node);
            break;
        case TraceNodeType::COMM_SEND:
        case TraceNodeType::COMM_RECV:
            PostPointToPoint(rank, node);
            break;
        default:
            // Metadata, memory and other nodes cost nothing here.
            Complete(rank, node);
            break;
    }
}

void
TraceReplayer::Complete(uint32_t rank, uint32_t node)
{
    RankState& s = m_ranks[rank];
    s.status[node] = kStatusDone;
    s.left--;
    if (--m_left == 0 && m_onDone)
    {
        Simulator::ScheduleNow(m_onDone);
    }
    s.timing.finishS = std::max(s.timing.finishS, Simulator::Now().GetSeconds());
    const TraceNodeType type = s.graph->GetNode(node).type;
    if (!m_opEnd.IsEmpty())
    {
        m_opEnd(rank, node, s.graph->GetName(node));
    }
    uint8_t cause = type == TraceNodeType::COMP        ? kCauseCompute
                    : type == TraceNodeType::COMM_RECV ? kCauseReceive
                                                       : kCauseCommunication;
    const ParallelLayout* layout = m_job->GetLayout();
    if (cause == kCauseReceive && layout)
    {
        // Only waits on another pipeline stage are bubble; a context-parallel ring's receive is
        // communication. (Trace sets carry no layout: every receive counts as pipeline.)
        const uint32_t peer = m_job->BindPeer(rank, s.graph->GetNode(node).commSrc);
        if (layout->Stage(peer) == layout->Stage(rank))
        {
            cause = kCauseCommunication;
        }
    }
    for (uint32_t child : s.graph->GetChildren(node))
    {
        if (--s.waiting[child] == 0)
        {
            MakeReady(rank, child, cause);
        }
    }
}

void
TraceReplayer::StartCompute(uint32_t rank)
{
    RankState& s = m_ranks[rank];
    while (s.busyStreams < m_streams && !s.ready.empty())
    {
        auto [node, cause] = s.ready.top();
        s.ready.pop();
        const double now = Simulator::Now().GetSeconds();
        if (s.busyStreams == 0)
        {
            if (cause == kCauseReceive)
            {
                s.timing.bubbleS += now - s.idleSince;
            }
            s.busySince = now;
        }
        s.busyStreams++;
        s.status[node] = kStatusPosted;
        if (!m_opStart.IsEmpty())
        {
            m_opStart(rank, node, s.graph->GetName(node));
        }
        const uint64_t ns = s.graph->GetNode(node).durationNs;
        Simulator::Schedule(NanoSeconds(ns), &TraceReplayer::ComputeDone, this, rank, node);
    }
}

void
TraceReplayer::ComputeDone(uint32_t rank, uint32_t node)
{
    RankState& s = m_ranks[rank];
    s.busyStreams--;
    if (s.busyStreams == 0)
    {
        const double now = Simulator::Now().GetSeconds();
        s.timing.computeS += now - s.busySince;
        s.idleSince = now;
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
        throw SpecError("replay",
                        "",
                        Describe(rank, node) + ": collective type " + ToString(n.commType)
                            + " cannot be replayed");
    }
    const uint32_t group = m_job->BindGroup(rank, n.group);
    std::vector<uint32_t> world;
    if (group == kWorldGroup)
    {
        for (uint32_t r = 0; r < m_ranks.size(); ++r)
        {
            world.push_back(r);
        }
    }
    else if (!m_job->GetGroups().Has(group))
    {
        throw SpecError("replay",
                        "",
                        Describe(rank, node) + ": names group " + std::to_string(group)
                            + ", which the communicator groups do not define");
    }
    const std::vector<uint32_t>& members =
        group == kWorldGroup ? world : m_job->GetGroups().Get(group);
    auto pos = std::find(members.begin(), members.end(), rank);
    if (pos == members.end())
    {
        throw SpecError("replay",
                        "",
                        Describe(rank, node) + ": rank " + std::to_string(rank)
                            + " is not a member of group " + std::to_string(group));
    }
    const uint64_t key = (uint64_t(group) << 32) | s.seqOnGroup[group]++;
    auto [it, created] = m_meetings.try_emplace(key);
    Meeting& m = it->second;
    if (created)
    {
        m.group = group;
        m.nodeOfMember.assign(members.size(), kAbsent);
        m.type = n.commType;
        m.bytes = n.bytes;
        m.firstRank = rank;
    }
    else if (m.type != n.commType || m.bytes != n.bytes)
    {
        throw SpecError("replay",
                        "",
                        Describe(rank, node) + " meets " + ToString(m.type) + " of "
                            + std::to_string(m.bytes) + " bytes issued by rank "
                            + std::to_string(m.firstRank) + " as the same collective of group "
                            + std::to_string(group) + ", but asks for " + std::to_string(n.bytes)
                            + " bytes");
    }
    m.nodeOfMember[pos - members.begin()] = node;
    s.status[node] = kStatusPosted;
    const auto expected = m_simulated.empty()
                              ? members.size()
                              : static_cast<std::size_t>(std::count_if(members.begin(),
                                                                       members.end(),
                                                                       [this](uint32_t r)
                                                                       {
                                                                           return IsSimulated(r);
                                                                       }));
    if (++m.joined < expected)
    {
        return;
    }
    if (m_serializeGroups && m_groupBusy[group])
    {
        m_groupQueue[group].push_back(key);
        return;
    }
    LaunchMeeting(key);
}

void
TraceReplayer::LaunchMeeting(uint64_t key)
{
    Meeting& m = m_meetings.at(key);
    const std::vector<uint32_t>* members;
    std::vector<uint32_t> world;
    if (m.group == kWorldGroup)
    {
        for (uint32_t r = 0; r < m_ranks.size(); ++r)
        {
            world.push_back(r);
        }
        members = &world;
    }
    else
    {
        members = &m_job->GetGroups().Get(m.group);
    }
    m_groupBusy[m.group] = true;
    m_collectives++;
    for (uint32_t i = 0; i < members->size(); ++i)
    {
        const uint32_t r = (*members)[i];
        if (IsSimulated(r) && !m_opStart.IsEmpty())
        {
            m_opStart(r, m.nodeOfMember[i], m_ranks[r].graph->GetName(m.nodeOfMember[i]));
        }
    }
    const ParallelLayout* layout = m_job->GetLayout();
    const bool tensor =
        m_tpCached && m.group != kWorldGroup && layout->KindOf(m.group) == GroupKind::TP;
    auto timed = m_tpTimes.end();
    if (tensor)
    {
        timed = m_tpTimes.find(std::make_tuple(m.group, int(m.type), m.bytes));
    }
    if (members->size() == 1 || m.bytes == 0 || timed != m_tpTimes.end())
    {
        // Nothing crosses the network, or this group's links carry nothing else and this
        // collective was measured before: done after the known time, as simulator events.
        const Time delay = NanoSeconds(timed != m_tpTimes.end() ? timed->second : 0);
        const uint64_t pseudo = UINT64_MAX - m_collectives;
        m_running[pseudo] = key;
        for (uint32_t i = 0; i < members->size(); ++i)
        {
            Simulator::Schedule(delay, &TraceReplayer::CollectiveRankDone, this, pseudo, i, 0);
        }
        Simulator::Schedule(delay, &TraceReplayer::CollectiveDone, this, pseudo);
        return;
    }
    CollectiveRequest request;
    ToCollectiveOp(m.type, request.op);
    request.endpoints = *members;
    request.bytes = m.bytes;
    request.algorithm = m_algorithm;
    uint64_t id = m_engine->Start(request,
                                  MakeCallback(&TraceReplayer::CollectiveRankDone, this),
                                  MakeCallback(&TraceReplayer::CollectiveDone, this));
    m_running[id] = key;
    if (tensor)
    {
        m_measuring[id] = Simulator::Now().GetSeconds();
        return;
    }
    if (m_simulated.empty() || m.group == kWorldGroup)
    {
        return;
    }
    // The same collective of every copy's group loads the network too (ghosts: no callbacks).
    const GroupKind kind = layout->KindOf(m.group);
    std::set<uint32_t> launched{m.group};
    for (uint32_t t = 0; t < m_translations.size(); ++t)
    {
        const uint32_t image = layout->GroupId(Translate(members->front(), t), kind);
        if (!launched.insert(image).second || !m_job->GetGroups().Has(image))
        {
            continue;
        }
        const auto& ghosts = m_job->GetGroups().Get(image);
        if (std::any_of(ghosts.begin(),
                        ghosts.end(),
                        [this](uint32_t r)
                        {
                            return IsSimulated(r);
                        }))
        {
            continue; // a simulated member launches it
        }
        CollectiveRequest ghost = request;
        ghost.endpoints = ghosts;
        m_engine->Start(
            ghost, CollectiveEngine::RankDoneCallback(), CollectiveEngine::DoneCallback());
    }
}

void
TraceReplayer::CollectiveRankDone(uint64_t collective, uint32_t member, uint32_t endpoint)
{
    const Meeting& m = m_meetings.at(m_running.at(collective));
    const uint32_t rank = m.group == kWorldGroup ? member : m_job->GetGroups().Get(m.group)[member];
    if (IsSimulated(rank))
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
TraceReplayer::PostPointToPoint(uint32_t rank, uint32_t node)
{
    RankState& s = m_ranks[rank];
    const TraceNode& n = s.graph->GetNode(node);
    s.status[node] = kStatusPosted;
    const bool send = n.type == TraceNodeType::COMM_SEND;
    const uint32_t peer = m_job->BindPeer(rank, send ? n.commDst : n.commSrc);
    if (peer >= m_ranks.size())
    {
        throw SpecError("replay",
                        "",
                        Describe(rank, node) + ": peer rank " + std::to_string(peer)
                            + " is outside the job's " + std::to_string(m_ranks.size()) + " ranks");
    }
    const uint32_t src = send ? rank : peer;
    const uint32_t dst = send ? peer : rank;
    const auto key = std::make_tuple(src, dst, n.commTag);
    auto& other = send ? m_recvs : m_sends;
    auto it = other.find(key);
    if (it == other.end())
    {
        (send ? m_sends : m_recvs).emplace(key, node);
        return;
    }
    const uint32_t match = it->second;
    other.erase(it);
    const uint32_t sendNode = send ? node : match;
    const uint32_t recvNode = send ? match : node;
    StartTransfer(src, sendNode, dst, recvNode, m_ranks[src].graph->GetNode(sendNode).bytes);
}

void
TraceReplayer::StartTransfer(
    uint32_t src, uint32_t sendNode, uint32_t dst, uint32_t recvNode, uint64_t bytes)
{
    if (!m_opStart.IsEmpty())
    {
        m_opStart(src, sendNode, m_ranks[src].graph->GetName(sendNode));
        m_opStart(dst, recvNode, m_ranks[dst].graph->GetName(recvNode));
    }
    if (src == dst)
    {
        m_messages++;
        Complete(src, sendNode);
        Complete(dst, recvNode);
        return;
    }
    uint64_t id = m_backend->Send(src, dst, bytes, m_transferDone);
    m_transfers[id] = std::make_tuple(src, sendNode, dst, recvNode);
    for (uint32_t t = 0; t < m_translations.size(); ++t)
    {
        // Every copy sends the same message at the same time (ghost traffic).
        m_backend->Send(Translate(src, t), Translate(dst, t), bytes, m_ghostDone);
    }
}

void
TraceReplayer::TransferDone(uint64_t message)
{
    auto [src, sendNode, dst, recvNode] = m_transfers.at(message);
    m_transfers.erase(message);
    m_messages++;
    Complete(src, sendNode);
    Complete(dst, recvNode);
}

void
TraceReplayer::GhostDelivered(uint64_t message)
{}

bool
TraceReplayer::IsSimulated(uint32_t rank) const
{
    return m_simulated.empty() || m_simulated[rank];
}

uint32_t
TraceReplayer::Translate(uint32_t rank, uint32_t t) const
{
    const ParallelLayout* layout = m_job->GetLayout();
    for (std::size_t a = 0; a < m_foldedAxes.size(); ++a)
    {
        const GroupKind axis = m_foldedAxes[a];
        const uint32_t size = layout->GroupSize(axis);
        rank = layout->WithCoord(
            rank, axis, (layout->Coord(rank, axis) + m_translations[t][a]) % size);
    }
    return rank;
}

uint32_t
TraceReplayer::RepresentativeOf(uint32_t rank) const
{
    const ParallelLayout* layout = m_job->GetLayout();
    for (GroupKind axis : m_foldedAxes)
    {
        rank = layout->WithCoord(rank, axis, 0);
    }
    return rank;
}

bool
TraceReplayer::HasFaults() const
{
    Ptr<Topology> topo = m_backend->GetTopology();
    for (uint32_t l = 0; l < topo->GetLinkCount(); ++l)
    {
        if (topo->GetLink(l).factor != 1.0)
        {
            return true;
        }
    }
    return false;
}

bool
TraceReplayer::TensorGroupsOwnLinks(const ParallelLayout& layout) const
{
    Ptr<Topology> topo = m_backend->GetTopology();
    const TopologyKind inner = topo->GetDimension(0).kind;
    if (inner != TopologyKind::SWITCH && inner != TopologyKind::FULLY_CONNECTED)
    {
        return false; // paths inside the dimension may cross other endpoints' links
    }
    const uint32_t ranks = layout.Ranks();
    auto instance = [&topo](uint32_t r)
    {
        return topo->GetInstance(r, 0);
    };
    for (uint32_t r = 0; r < ranks; ++r)
    {
        if (layout.IndexInGroup(r, GroupKind::TP) == 0)
        {
            for (uint32_t m : layout.Group(r, GroupKind::TP))
            {
                if (instance(m) != instance(r))
                {
                    return false; // the group spans several switches
                }
            }
        }
    }
    // No other group or pipeline neighbour may have two members behind the same switch.
    for (GroupKind kind : {GroupKind::CP, GroupKind::EP, GroupKind::DP, GroupKind::EDP})
    {
        if (layout.GroupSize(kind) == 1)
        {
            continue;
        }
        for (uint32_t r = 0; r < ranks; ++r)
        {
            if (layout.IndexInGroup(r, kind) != 0)
            {
                continue;
            }
            std::set<uint32_t> seen;
            for (uint32_t m : layout.Group(r, kind))
            {
                if (!seen.insert(instance(m)).second)
                {
                    return false;
                }
            }
        }
    }
    const uint32_t pp = layout.GroupSize(GroupKind::PP);
    for (uint32_t r = 0; pp > 1 && r < ranks; ++r)
    {
        const uint32_t next =
            layout.WithCoord(r, GroupKind::PP, (layout.Coord(r, GroupKind::PP) + 1) % pp);
        if (instance(next) == instance(r))
        {
            return false;
        }
    }
    return true;
}

void
TraceReplayer::SetUpSymmetry(const ReplayJob& job)
{
    m_simulated.clear();
    m_foldedAxes.clear();
    m_translations.clear();
    m_tpCached = false;
    const ParallelLayout* layout = job.GetLayout();
    if (!m_symmetry || !layout || HasFaults())
    {
        return; // a degraded or dead link makes copies differ: replay every rank
    }
    // Timing a group's collective once is exact only if the group runs one at a time.
    m_tpCached =
        m_serializeGroups && layout->GroupSize(GroupKind::TP) > 1 && TensorGroupsOwnLinks(*layout);
    std::vector<GroupKind> axes = {GroupKind::EP, GroupKind::EDP};
    if (m_tpCached)
    {
        axes.push_back(GroupKind::TP);
    }
    uint32_t copies = 1;
    for (GroupKind axis : axes)
    {
        if (layout->GroupSize(axis) > 1)
        {
            m_foldedAxes.push_back(axis);
            copies *= layout->GroupSize(axis);
        }
    }
    if (m_foldedAxes.empty())
    {
        m_tpCached = false;
        return;
    }
    // Every non-zero combination of offsets along the folded axes, in mixed radix.
    for (uint32_t index = 1; index < copies; ++index)
    {
        std::vector<uint32_t> offsets;
        uint32_t rest = index;
        for (GroupKind axis : m_foldedAxes)
        {
            offsets.push_back(rest % layout->GroupSize(axis));
            rest /= layout->GroupSize(axis);
        }
        m_translations.push_back(offsets);
    }
    m_simulated.assign(layout->Ranks(), 0);
    for (uint32_t r = 0; r < layout->Ranks(); ++r)
    {
        m_simulated[r] = RepresentativeOf(r) == r;
    }
}

void
TraceReplayer::ReportStuck() const
{
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
                        const auto& members = m_job->GetGroups().Get(m.group);
                        why = "the group never met: ranks";
                        for (uint32_t k = 0; k < members.size(); ++k)
                        {
                            if (m.nodeOfMember[k] == kAbsent && IsSimulated(members[k]))
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
                throw SpecError(
                    "replay", "", "the trace cannot finish: " + Describe(r, i) + ": " + why);
            }
        }
        for (uint32_t i = 0; i < s.status.size(); ++i)
        {
            if (s.status[i] == kStatusIdle)
            {
                throw SpecError("replay",
                                "",
                                "the trace cannot finish: " + Describe(r, i)
                                    + " waits for dependencies that never finish (a cycle, or a "
                                      "predecessor stuck on communication)");
            }
        }
    }
    throw SpecError("replay", "", "the trace cannot finish");
}

} // namespace rapidllm
} // namespace ns3
