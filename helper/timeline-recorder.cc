/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "timeline-recorder.h"

#include "ns3/boolean.h"
#include "ns3/job-options.h"
#include "ns3/network-backend.h"
#include "ns3/report-json.h"
#include "ns3/simulator.h"
#include "ns3/spec-error.h"
#include "report-output.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <set>

namespace ns3 {
namespace rapidllm {

namespace {

/** Most samples kept; beyond, every other is dropped and the interval doubles. */
constexpr std::size_t kMaxSamples = 512;
/** First track id of the collectives and of the point-to-point transfers. */
constexpr uint32_t kCollectiveTid = 1000;
constexpr uint32_t kTransferTid = 2000;

/** \return nanoseconds as trace-event microseconds ("12.345") */
std::string
Us(int64_t ns)
{
    char text[48];
    std::snprintf(text,
                  sizeof(text),
                  "%lld.%03lld",
                  static_cast<long long>(ns / 1000),
                  static_cast<long long>(ns % 1000));
    return text;
}

/** \return \p text as a JSON string */
std::string
Quote(const std::string& text)
{
    return Json(text).dump();
}

/** \return the first lane (index) free at \p start, taking it until \p end */
uint32_t
Lane(std::vector<int64_t>& ends, int64_t start, int64_t end)
{
    for (uint32_t i = 0; i < ends.size(); ++i)
    {
        if (ends[i] <= start)
        {
            ends[i] = end;
            return i;
        }
    }
    ends.push_back(end);
    return static_cast<uint32_t>(ends.size() - 1);
}

} // namespace

TimelineRecorder::TimelineRecorder(uint32_t links)
    : m_links(links)
{}

void
TimelineRecorder::Attach(Ptr<RapidLlmHelper> helper)
{
    m_helper = helper;
    // The link counters need every collective's bytes on the network: none timed from an
    // earlier identical one or from its recorded run alone (the replayer's TraceAllMessages).
    helper->SetReplayerAttribute("TraceAllMessages", BooleanValue(true));
    helper->TraceConnectWithoutContext("OperatorStart",
                                       MakeCallback(&TimelineRecorder::OnStart, this));
    helper->TraceConnectWithoutContext("OperatorEnd", MakeCallback(&TimelineRecorder::OnEnd, this));
    helper->TraceConnectWithoutContext("ComputeIdle",
                                       MakeCallback(&TimelineRecorder::OnIdle, this));
}

uint32_t
TimelineRecorder::Intern(std::string_view name)
{
    auto it = m_nameIndex.find(std::string(name));
    if (it != m_nameIndex.end())
    {
        return it->second;
    }
    m_names.emplace_back(name);
    m_nameIndex.emplace(m_names.back(), static_cast<uint32_t>(m_names.size() - 1));
    return static_cast<uint32_t>(m_names.size() - 1);
}

void
TimelineRecorder::Begin()
{
    if (m_started)
    {
        return;
    }
    m_started = true;
    // Times count from the replay's start (after the backend opened its connections).
    m_originNs = m_helper->GetReplayStart().GetNanoSeconds();
    Ptr<TraceReplayer> replayer = m_helper->GetReplayer();
    m_ranks = replayer->GetRankCount();
    m_representative.resize(m_ranks);
    for (uint32_t r = 0; r < m_ranks; ++r)
    {
        m_representative[r] = replayer->GetRepresentative(r);
    }
    Sample();
}

void
TimelineRecorder::OnStart(const OperatorEvent& e)
{
    Begin();
    const uint64_t key = (uint64_t(e.rank) << 32) | e.node;
    if (e.kind == OperatorKind::COLLECTIVE)
    {
        m_seqOf[key] = m_groupSeq[{e.rank, e.group}]++;
    }
    else if (e.kind == OperatorKind::SEND)
    {
        m_seqOf[key] = m_pairSeq[{e.rank, e.peer}]++;
    }
    else if (e.kind == OperatorKind::RECV)
    {
        m_seqOf[key] = m_recvSeq[{e.peer, e.rank}]++;
    }
}

void
TimelineRecorder::OnEnd(const OperatorEvent& e)
{
    if (e.kind == OperatorKind::OTHER)
    {
        return;
    }
    Slice s;
    s.rank = e.rank;
    s.kind = e.kind == OperatorKind::COMPUTE      ? KERNEL
             : e.kind == OperatorKind::COLLECTIVE ? COLLECTIVE
             : e.kind == OperatorKind::SEND       ? SEND
                                                  : RECV;
    s.durNs = e.duration.GetNanoSeconds();
    s.startNs = e.time.GetNanoSeconds() - m_originNs - s.durNs;
    s.name = Intern(e.name);
    s.flops = e.flops;
    s.bytes = e.bytes;
    if (s.kind != KERNEL)
    {
        const uint64_t key = (uint64_t(e.rank) << 32) | e.node;
        auto it = m_seqOf.find(key);
        s.seq = it != m_seqOf.end() ? it->second : 0;
        if (it != m_seqOf.end())
        {
            m_seqOf.erase(it);
        }
        s.other = s.kind == COLLECTIVE ? e.group : e.peer;
        if (s.kind == COLLECTIVE)
        {
            s.op = ToString(e.collective);
        }
    }
    m_slices.push_back(std::move(s));
}

void
TimelineRecorder::OnIdle(const IdleEvent& e)
{
    Begin(); // a host's wait for the first kernel comes before it starts
    Idle idle;
    idle.rank = e.rank;
    idle.startNs = e.start.GetNanoSeconds() - m_originNs;
    idle.endNs = e.end.GetNanoSeconds() - m_originNs;
    idle.cause = e.cause;
    if (!e.op.empty())
    {
        idle.op = Intern(e.op);
    }
    if (idle.endNs > idle.startNs)
    {
        m_idle.push_back(idle);
    }
}

void
TimelineRecorder::Sample()
{
    Ptr<NetworkBackend> backend = m_helper->GetBackend();
    Ptr<TraceReplayer> replayer = m_helper->GetReplayer();
    if (!backend || !replayer)
    {
        return;
    }
    NetworkStats stats = backend->GetStats();
    if (m_linkNames.empty())
    {
        for (const auto& l : stats.links)
        {
            m_linkNames.push_back(l.name);
        }
    }
    std::vector<double> busy(stats.links.size());
    for (std::size_t i = 0; i < stats.links.size(); ++i)
    {
        busy[i] = stats.links[i].busyTimeS;
    }
    m_sampleNs.push_back(Simulator::Now().GetNanoSeconds() - m_originNs);
    m_busy.push_back(std::move(busy));
    if (m_sampleNs.size() > kMaxSamples)
    {
        // Keep every other sample (the first and the last stay) at twice the interval.
        std::vector<int64_t> times;
        std::vector<std::vector<double>> values;
        for (std::size_t i = 0; i < m_sampleNs.size(); i += 2)
        {
            times.push_back(m_sampleNs[i]);
            values.push_back(std::move(m_busy[i]));
        }
        m_sampleNs = std::move(times);
        m_busy = std::move(values);
        m_intervalNs *= 2;
    }
    // Until the replay is done (and never past the simulator's last other event).
    if (replayer->GetOperatorsLeft() > 0 && !Simulator::IsFinished())
    {
        Simulator::Schedule(NanoSeconds(m_intervalNs), &TimelineRecorder::Sample, this);
    }
}

std::string
TimelineRecorder::ToJson() const
{
    std::vector<const Slice*> slices;
    slices.reserve(m_slices.size());
    for (const auto& s : m_slices)
    {
        slices.push_back(&s);
    }
    std::stable_sort(slices.begin(),
                     slices.end(),
                     [](const Slice* a, const Slice* b)
                     {
                         return std::tie(a->rank, a->startNs, a->kind, a->durNs, a->name)
                                < std::tie(b->rank, b->startNs, b->kind, b->durNs, b->name);
                     });
    std::string out = "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
    bool first = true;
    auto emit = [&](const std::string& event)
    {
        out += first ? "" : ",\n";
        out += event;
        first = false;
    };
    auto meta = [&](const char* what, uint32_t pid, int64_t tid, const std::string& name)
    {
        emit(std::string("{\"ph\":\"M\",\"name\":\"") + what + "\",\"pid\":" + std::to_string(pid)
             + (tid >= 0 ? ",\"tid\":" + std::to_string(tid) : "")
             + ",\"args\":{\"name\":" + Quote(name) + "}}");
    };
    // Collective instances and transfers: where each member's slice is (for the flows).
    struct Place
    {
        uint32_t pid;
        uint32_t tid;
        int64_t ts;
    };

    std::map<std::pair<uint32_t, uint64_t>, std::vector<Place>> collectives; // (group, seq)
    std::map<std::tuple<uint32_t, uint32_t, uint64_t>, std::pair<Place, Place>> transfers;
    std::map<std::tuple<uint32_t, uint32_t, uint64_t>, uint8_t> transferSides;
    std::set<uint32_t> ranksSeen;
    std::vector<const Idle*> idles;
    for (const Idle& idle : m_idle)
    {
        idles.push_back(&idle);
    }
    std::stable_sort(idles.begin(),
                     idles.end(),
                     [](const Idle* a, const Idle* b)
                     {
                         return std::tie(a->rank, a->startNs) < std::tie(b->rank, b->startNs);
                     });

    std::size_t i = 0;
    while (i < slices.size())
    {
        const uint32_t rank = slices[i]->rank;
        std::size_t j = i;
        while (j < slices.size() && slices[j]->rank == rank)
        {
            ++j;
        }
        ranksSeen.insert(rank);
        std::vector<int64_t> computeLanes;
        std::vector<int64_t> collectiveLanes;
        std::vector<int64_t> transferLanes;
        // What the streams were busy or idle for, to find any idle time the replayer did not
        // report (none is expected): it is communication, as the report's residual counts it.
        std::vector<std::pair<int64_t, int64_t>> covered;
        int64_t finish = 0;
        for (std::size_t k = i; k < j; ++k)
        {
            const Slice& s = *slices[k];
            const int64_t end = s.startNs + s.durNs;
            finish = std::max(finish, end);
            std::string event;
            uint32_t tid = 0;
            if (s.kind == KERNEL)
            {
                covered.emplace_back(s.startNs, end);
                tid = Lane(computeLanes, s.startNs, end);
                event = "{\"ph\":\"X\",\"cat\":\"compute\",\"name\":" + Quote(m_names[s.name])
                        + ",\"pid\":" + std::to_string(rank) + ",\"tid\":" + std::to_string(tid)
                        + ",\"ts\":" + Us(s.startNs) + ",\"dur\":" + Us(s.durNs)
                        + ",\"args\":{\"flops\":" + std::to_string(s.flops)
                        + ",\"bytes\":" + std::to_string(s.bytes) + "}}";
            }
            else if (s.kind == COLLECTIVE)
            {
                tid = kCollectiveTid + Lane(collectiveLanes, s.startNs, end);
                collectives[{s.other, s.seq}].push_back({rank, tid, s.startNs});
                event = "{\"ph\":\"X\",\"cat\":\"communication\",\"name\":" + Quote(m_names[s.name])
                        + ",\"pid\":" + std::to_string(rank) + ",\"tid\":" + std::to_string(tid)
                        + ",\"ts\":" + Us(s.startNs) + ",\"dur\":" + Us(s.durNs)
                        + ",\"args\":{\"op\":" + Quote(s.op) + ",\"group\":"
                        + std::to_string(s.other) + ",\"bytes\":" + std::to_string(s.bytes) + "}}";
            }
            else
            {
                tid = kTransferTid + Lane(transferLanes, s.startNs, end);
                const bool send = s.kind == SEND;
                const auto key = send ? std::make_tuple(rank, s.other, s.seq)
                                      : std::make_tuple(s.other, rank, s.seq);
                (send ? transfers[key].first : transfers[key].second) = {rank, tid, s.startNs};
                transferSides[key] |= send ? 1 : 2;
                event = "{\"ph\":\"X\",\"cat\":\"communication\",\"name\":" + Quote(m_names[s.name])
                        + ",\"pid\":" + std::to_string(rank) + ",\"tid\":" + std::to_string(tid)
                        + ",\"ts\":" + Us(s.startNs) + ",\"dur\":" + Us(s.durNs) + ",\"args\":{\""
                        + (send ? "to" : "from") + "\":" + std::to_string(s.other)
                        + ",\"bytes\":" + std::to_string(s.bytes) + "}}";
            }
            emit(event);
        }
        // The compute streams' idle intervals, as the replayer charged them.
        auto idle = [&](int64_t from, int64_t to, IdleCause cause, uint32_t op)
        {
            static const char* const kNames[] = {
                "pipeline bubble", "waiting for communication", "host dispatch"};
            emit("{\"ph\":\"X\",\"cat\":" + Quote(ToString(cause)) + ",\"name\":\""
                 + kNames[static_cast<int>(cause)] + "\",\"pid\":" + std::to_string(rank)
                 + ",\"tid\":0,\"ts\":" + Us(from) + ",\"dur\":" + Us(to - from)
                 + (op != UINT32_MAX ? ",\"args\":{\"op\":" + Quote(m_names[op]) + "}" : "") + "}");
        };
        const auto first = std::lower_bound(idles.begin(),
                                            idles.end(),
                                            rank,
                                            [](const Idle* a, uint32_t r)
                                            {
                                                return a->rank < r;
                                            });
        for (auto it = first; it != idles.end() && (*it)->rank == rank; ++it)
        {
            idle((*it)->startNs, (*it)->endNs, (*it)->cause, (*it)->op);
            covered.emplace_back((*it)->startNs, (*it)->endNs);
        }
        std::sort(covered.begin(), covered.end());
        int64_t until = 0;
        for (const auto& [from, to] : covered)
        {
            if (from > until)
            {
                idle(until, from, IdleCause::COMMUNICATION, UINT32_MAX);
            }
            until = std::max(until, to);
        }
        if (finish > until)
        {
            idle(until, finish, IdleCause::COMMUNICATION, UINT32_MAX);
        }
        // Names of the process and its tracks.
        std::string name = "rank " + std::to_string(rank);
        std::vector<uint32_t> copies;
        for (uint32_t r = 0; r < m_representative.size(); ++r)
        {
            if (m_representative[r] == rank && r != rank)
            {
                copies.push_back(r);
            }
        }
        if (!copies.empty())
        {
            name += " (also stands for " + std::to_string(copies.size()) + " symmetric rank"
                    + (copies.size() > 1 ? "s" : "") + ": ";
            for (std::size_t c = 0; c < copies.size() && c < 8; ++c)
            {
                name += (c ? ", " : "") + std::to_string(copies[c]);
            }
            name += copies.size() > 8 ? ", ...)" : ")";
        }
        meta("process_name", rank, -1, name);
        emit("{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":" + std::to_string(rank)
             + ",\"args\":{\"sort_index\":" + std::to_string(rank) + "}}");
        for (uint32_t l = 0; l < std::max<std::size_t>(computeLanes.size(), 1); ++l)
        {
            meta("thread_name", rank, l, "compute stream " + std::to_string(l));
        }
        for (uint32_t l = 0; l < collectiveLanes.size(); ++l)
        {
            meta("thread_name", rank, kCollectiveTid + l, "collectives " + std::to_string(l));
        }
        for (uint32_t l = 0; l < transferLanes.size(); ++l)
        {
            meta("thread_name", rank, kTransferTid + l, "send/recv " + std::to_string(l));
        }
        i = j;
    }
    // Flows: each collective from its lowest rank to every other member; each transfer from
    // its send to its receive.
    uint64_t flowId = 0;
    auto flow = [&](const Place& from, const Place& to, const std::string& name)
    {
        ++flowId;
        emit("{\"ph\":\"s\",\"cat\":\"communication\",\"name\":" + Quote(name)
             + ",\"id\":" + std::to_string(flowId) + ",\"pid\":" + std::to_string(from.pid)
             + ",\"tid\":" + std::to_string(from.tid) + ",\"ts\":" + Us(from.ts) + "}");
        emit("{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"communication\",\"name\":" + Quote(name)
             + ",\"id\":" + std::to_string(flowId) + ",\"pid\":" + std::to_string(to.pid)
             + ",\"tid\":" + std::to_string(to.tid) + ",\"ts\":" + Us(to.ts) + "}");
    };
    for (const auto& [key, members] : collectives)
    {
        for (std::size_t m = 1; m < members.size(); ++m)
        {
            flow(members[0], members[m], "collective");
        }
    }
    for (const auto& [key, ends] : transfers)
    {
        if (transferSides[key] == 3)
        {
            flow(ends.first, ends.second, "transfer");
        }
    }
    // Counter tracks: the busy share of the most used links over each sampling interval.
    if (m_sampleNs.size() >= 2 && !m_busy.empty())
    {
        const auto& last = m_busy.back();
        std::vector<uint32_t> order(last.size());
        for (uint32_t l = 0; l < order.size(); ++l)
        {
            order[l] = l;
        }
        std::stable_sort(order.begin(),
                         order.end(),
                         [&](uint32_t a, uint32_t b)
                         {
                             return last[a] > last[b];
                         });
        const uint32_t pid = m_ranks;
        meta("process_name",
             pid,
             -1,
             "network (link busy share: time carrying traffic at any rate, not utilization)");
        emit("{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":" + std::to_string(pid)
             + ",\"args\":{\"sort_index\":" + std::to_string(pid) + "}}");
        for (uint32_t n = 0; n < order.size() && n < m_links; ++n)
        {
            const uint32_t l = order[n];
            if (last[l] <= 0)
            {
                break;
            }
            const std::string name = Quote("link " + m_linkNames[l]);
            for (std::size_t k = 1; k < m_sampleNs.size(); ++k)
            {
                const double dt = (m_sampleNs[k] - m_sampleNs[k - 1]) * 1e-9;
                double share = dt > 0 ? (m_busy[k][l] - m_busy[k - 1][l]) / dt : 0;
                share = std::min(1.0, std::max(0.0, share));
                char value[32];
                std::snprintf(value, sizeof(value), "%.4f", share);
                emit("{\"ph\":\"C\",\"name\":" + name + ",\"pid\":" + std::to_string(pid)
                     + ",\"ts\":" + Us(m_sampleNs[k - 1]) + ",\"args\":{\"busy\":" + value + "}}");
            }
        }
    }
    out += "\n],\"otherData\":{\"producer\":\"rapid-llm\",\"ranks\":" + std::to_string(m_ranks)
           + ",\"simulated_ranks\":" + std::to_string(ranksSeen.size())
           + ",\"link_sample_interval_ns\":" + std::to_string(m_intervalNs) + "}}\n";
    return out;
}

void
TimelineRecorder::Write(const std::string& path) const
{
    WriteOutputFile(path, ToJson());
}

} // namespace rapidllm
} // namespace ns3
