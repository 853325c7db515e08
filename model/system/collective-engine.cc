/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "collective-engine.h"

#include "ns3/boolean.h"
#include "ns3/log.h"
#include "ns3/simulator.h"
#include "ns3/spec-error.h"
#include "ns3/string.h"
#include "replay-error.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <tuple>

namespace ns3 {
namespace rapidllm {

NS_LOG_COMPONENT_DEFINE("RapidLlmCollectiveEngine");
NS_OBJECT_ENSURE_REGISTERED(CollectiveEngine);

TypeId
CollectiveEngine::GetTypeId()
{
    static TypeId tid = TypeId("ns3::rapidllm::CollectiveEngine")
                            .SetParent<Object>()
                            .SetGroupName("RapidLlm")
                            .AddConstructor<CollectiveEngine>()
                            .AddAttribute("Granularity",
                                          "How a collective request runs: message (every "
                                          "message of its algorithm), fluid (the algorithm's "
                                          "concurrent streams, on a backend that carries them; "
                                          "messages elsewhere) or auto (the same as fluid).",
                                          StringValue("message"),
                                          MakeStringAccessor(&CollectiveEngine::m_granularity),
                                          MakeStringChecker())
                            .AddAttribute("Reservations",
                                          "Run a collective whose links carry nothing else when "
                                          "it starts as a timed reservation (the recorded time "
                                          "of its first run alone, exact while nothing else "
                                          "reaches its links; an intruder turns it into real "
                                          "messages at that instant), on a backend that keeps "
                                          "reservations.",
                                          BooleanValue(false),
                                          MakeBooleanAccessor(&CollectiveEngine::m_reservations),
                                          MakeBooleanChecker());
    return tid;
}

CollectiveEngine::CollectiveEngine() = default;
CollectiveEngine::~CollectiveEngine() = default;

void
CollectiveEngine::DoDispose()
{
    for (auto& [id, run] : m_runs)
    {
        for (EventId& e : run->events)
        {
            e.Cancel();
        }
        run->endEvent.Cancel();
    }
    m_runs.clear();
    m_issueEvent.Cancel();
    m_readySteps = {};
    m_issuing = false;
    m_messages.clear();
    m_reserved.clear();
    m_broken = NetworkBackend::BrokenCallback();
    m_delivered = NetworkBackend::DeliveryCallback();
    m_plans.clear();
    m_cachedSteps = 0;
    m_planner.reset();
    m_backend = nullptr;
    Object::DoDispose();
}

void
CollectiveEngine::SetBackend(Ptr<NetworkBackend> backend)
{
    m_backend = backend;
    m_planner.reset();
    m_plans.clear();
    m_cachedSteps = 0;
}

Ptr<NetworkBackend>
CollectiveEngine::GetBackend() const
{
    return m_backend;
}

uint32_t
CollectiveEngine::GetRunningCount() const
{
    return static_cast<uint32_t>(m_runs.size());
}

uint64_t
CollectiveEngine::GetTimedCount() const
{
    return m_timedCount;
}

uint64_t
CollectiveEngine::GetMaterializedCount() const
{
    return m_materialized;
}

void
CollectiveEngine::CheckGranularity(const std::string& name, const std::string& field)
{
    if (name != "message" && name != "fluid" && name != "auto")
    {
        throw SpecError("collective",
                        field,
                        "unknown granularity '" + name + "'; allowed: auto, fluid, message");
    }
}

std::size_t
CollectiveEngine::PlanKeyHash::operator()(const std::vector<uint64_t>& key) const
{
    uint64_t h = 0x9e3779b97f4a7c15ULL;
    for (uint64_t w : key)
    {
        h ^= w + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    }
    return static_cast<std::size_t>(h);
}

bool
CollectiveEngine::UsesFluid() const
{
    if (m_granularity != m_checkedGranularity)
    {
        CheckGranularity(m_granularity, "Granularity");
        m_checkedGranularity = m_granularity;
    }
    return m_granularity != "message" && m_backend && m_backend->SupportsFluid();
}

const CollectivePlanner&
CollectiveEngine::GetPlanner()
{
    if (!m_backend)
    {
        throw ReplayError("the collective engine has no network backend (SetBackend)");
    }
    if (!m_planner)
    {
        m_planner = std::make_unique<CollectivePlanner>(m_backend->GetView());
        m_planner->SetPairTiming(
            [this](uint32_t a, uint32_t b)
            {
                return m_backend->GetIdlePath(a, b);
            });
    }
    return *m_planner;
}

namespace {
/** Plans up to this many steps are kept for reuse (some 25 MB each at most), */
constexpr std::size_t kCachedSteps = 1 << 18;
/** and all plans' up to this many (some 100 MB). */
constexpr std::size_t kCachedBudget = 1 << 20;
/** A plan's messages are kept for its slowed runs' walks up to this many steps, */
constexpr std::size_t kKeptMessageSteps = 1 << 16;
/** and all plans' up to this many (some 100 MB). */
constexpr std::size_t kKeptMessageBudget = 1 << 20;
} // namespace

std::vector<uint64_t>
CollectiveEngine::PlanKey(const CollectiveRequest& request, bool fluid) const
{
    std::vector<uint64_t> key;
    key.reserve(request.endpoints.size() + 8);
    key.push_back(uint64_t(request.op));
    key.push_back(request.bytes);
    key.push_back(std::hash<std::string>()(request.algorithm));
    key.push_back(request.chunks);
    key.push_back(request.root);
    uint64_t rate = 0;
    static_assert(sizeof(rate) == sizeof(request.reduceBytesPerSecond), "a double's bits");
    std::memcpy(&rate, &request.reduceBytesPerSecond, sizeof(rate));
    key.push_back(rate);
    key.push_back(fluid ? 1 : 0);
    // A fluid plan holds its messages' time on the network as it was (its message floor,
    // faults included): a plan made before a fault changed the links is not reused after it.
    key.push_back(fluid ? m_backend->GetTopology()->GetVersion() : 0);
    key.insert(key.end(), request.endpoints.begin(), request.endpoints.end());
    return key;
}

uint32_t
CollectiveEngine::GetSmCount(const CollectiveRequest& request)
{
    return GetPlanner().GetSmCount(request);
}

uint32_t
CollectiveEngine::GetP2pSmCount(const CollectiveRequest& request)
{
    return GetPlanner().GetP2pSmCount(request);
}

uint64_t
CollectiveEngine::Start(const CollectiveRequest& request,
                        RankDoneCallback onRankDone,
                        DoneCallback onDone)
{
    const bool fluid = UsesFluid();
    auto cached = m_plans.find(PlanKey(request, fluid));
    if (cached != m_plans.end())
    {
        return LaunchEntry(cached->second, request.endpoints, request.flow, onRankDone, onDone);
    }
    CollectiveRequest chosen = request;
    chosen.fluid = fluid;
    return Start(chosen, GetPlanner().Build(chosen), onRankDone, onDone);
}

uint64_t
CollectiveEngine::Start(const CollectiveRequest& request,
                        CollectivePlan built,
                        RankDoneCallback onRankDone,
                        DoneCallback onDone)
{
    NS_LOG_DEBUG("collective plan: " << ToString(request.op) << " of " << request.bytes
                                     << " B among " << request.endpoints.size() << " ranks, "
                                     << built.algorithm << ", " << built.schedule.GetSendCount()
                                     << (request.fluid ? " streams" : " messages"));
    auto compiled = Compile(std::move(built.schedule));
    compiled->floorStep = built.floorStep;
    if (built.floorStep >= 0)
    {
        compiled->messageRequest = request;
        compiled->messageRequest.fluid = false;
        const std::size_t steps = built.messages->GetSteps().size();
        if (compiled->waiting.size() <= kCachedSteps && steps <= kKeptMessageSteps
            && m_keptMessageSteps + steps <= kKeptMessageBudget)
        {
            m_keptMessageSteps += steps;
            compiled->messageSchedule = std::move(built.messages);
        }
    }
    if (compiled->waiting.size() <= kCachedSteps
        && m_cachedSteps + compiled->waiting.size() <= kCachedBudget)
    {
        m_cachedSteps += compiled->waiting.size();
        auto entry = std::make_shared<Entry>();
        entry->plan = compiled;
        m_plans.emplace(PlanKey(request, request.fluid), entry);
        return LaunchEntry(entry, request.endpoints, request.flow, onRankDone, onDone);
    }
    return Launch(compiled, request.endpoints, request.flow, onRankDone, onDone);
}

uint64_t
CollectiveEngine::LaunchEntry(const std::shared_ptr<Entry>& entry,
                              const std::vector<uint32_t>& endpoints,
                              std::optional<uint64_t> flow,
                              RankDoneCallback onRankDone,
                              DoneCallback onDone)
{
    if (!m_reservations || !m_backend || !m_backend->SupportsReservations())
    {
        return Launch(entry->plan, endpoints, flow, onRankDone, onDone);
    }
    const uint64_t version = m_backend->GetTopology()->GetVersion();
    if (entry->version != version)
    {
        // Link capacities changed (a fault): what was recorded no longer holds.
        entry->version = version;
        entry->timing.reset();
        std::vector<NetworkBackend::EndpointPair> pairs;
        for (const auto& s : entry->plan->schedule.GetSteps())
        {
            if (s.isSend && s.bytes > 0)
            {
                pairs.emplace_back(endpoints[s.src], endpoints[s.dst]);
            }
        }
        std::sort(pairs.begin(), pairs.end());
        pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
        entry->links = m_backend->ReservableLinks(pairs);
    }
    if (entry->links.empty())
    {
        return Launch(entry->plan, endpoints, flow, onRankDone, onDone);
    }
    if (m_broken.IsNull())
    {
        m_broken = MakeCallback(&CollectiveEngine::Broken, this);
    }
    // A timed run knows its links' load (Timing::load): the backend need not measure it.
    const uint64_t reservation = m_backend->Reserve(entry->links, m_broken, !entry->timing);
    if (reservation == 0)
    {
        // Something else is on its links: contention is simulated as it comes.
        return Launch(entry->plan, endpoints, flow, onRankDone, onDone);
    }
    if (!entry->timing)
    {
        return Launch(entry->plan, endpoints, flow, onRankDone, onDone, reservation, entry);
    }
    // Alone on its links, and run alone before: the recorded times hold until an intruder.
    auto run = std::make_shared<Run>();
    run->id = m_nextId++;
    run->plan = entry->plan;
    run->endpoints = endpoints;
    run->onRankDone = onRankDone;
    run->onDone = onDone;
    run->reservation = reservation;
    run->flow = flow;
    run->startNs = Simulator::Now().GetNanoSeconds();
    run->entry = entry;
    run->timed = entry->timing;
    m_runs[run->id] = run;
    m_reserved[reservation] = run->id;
    ++m_timedCount;
    const Timing& timing = *run->timed;
    if (!onRankDone.IsNull())
    {
        run->events.reserve(timing.eventNs.size());
        for (int64_t t : timing.eventNs)
        {
            run->events.push_back(
                Simulator::Schedule(NanoSeconds(t), &CollectiveEngine::TimedRanks, this, run->id));
        }
    }
    run->endEvent = Simulator::Schedule(
        NanoSeconds(timing.durationNs), &CollectiveEngine::TimedEnd, this, run->id);
    NS_LOG_DEBUG("collective " << run->id << " timed: " << timing.durationNs << " ns");
    return run->id;
}

void
CollectiveEngine::TimedRanks(uint64_t id)
{
    auto it = m_runs.find(id);
    if (it == m_runs.end())
    {
        return;
    }
    const std::shared_ptr<Run> run = it->second;
    const std::shared_ptr<const Timing> timing = run->timed;
    const uint32_t k = run->nextEvent++;
    for (uint32_t i = timing->eventStart[k]; i < timing->eventStart[k + 1]; ++i)
    {
        const uint32_t r = timing->eventRanks[i];
        run->onRankDone(run->id, r, run->endpoints[r]);
    }
}

void
CollectiveEngine::TimedEnd(uint64_t id)
{
    auto it = m_runs.find(id);
    if (it == m_runs.end())
    {
        return;
    }
    const std::shared_ptr<Run> run = it->second;
    m_backend->Release(run->reservation);
    m_reserved.erase(run->reservation);
    // Its links carried what they carried alone (link statistics).
    m_backend->AddLinkLoad(run->timed->links, run->timed->load);
    m_runs.erase(it);
    NS_LOG_DEBUG("collective " << id << " (timed) done at " << Simulator::Now().As(Time::US));
    if (!run->onDone.IsNull())
    {
        run->onDone(id);
    }
}

void
CollectiveEngine::Broken(uint64_t reservation)
{
    auto it = m_reserved.find(reservation);
    if (it == m_reserved.end())
    {
        return;
    }
    const uint64_t id = it->second;
    m_reserved.erase(it);
    auto r = m_runs.find(id);
    if (r == m_runs.end())
    {
        return;
    }
    const std::shared_ptr<Run> run = r->second;
    run->reservation = 0;
    if (run->timed)
    {
        Materialize(run);
    }
    else
    {
        // No longer alone: not a measurement of the plan's time alone.
        run->recording.reset();
    }
}

void
CollectiveEngine::Materialize(const std::shared_ptr<Run>& run)
{
    const int64_t nowNs = Simulator::Now().GetNanoSeconds();
    const int64_t tau = nowNs - run->startNs;
    const double tauS = static_cast<double>(tau) * 1e-9;
    const std::shared_ptr<const Timing> timing = run->timed;
    run->timed.reset();
    ++m_materialized;
    for (uint32_t k = run->nextEvent; k < run->events.size(); ++k)
    {
        run->events[k].Cancel();
    }
    run->events.clear();
    run->endEvent.Cancel();
    const Compiled& plan = *run->plan;
    const auto& steps = plan.schedule.GetSteps();
    const auto n = static_cast<uint32_t>(steps.size());
    run->waiting = plan.waiting;
    run->rankLeft = plan.rankLeft;
    run->left = n;
    run->sendsLeft = plan.schedule.GetSendCount();
    // The steps done by now (alone until now, the run went as recorded).
    std::vector<uint8_t> done(n, 0);
    // Streams whose bytes all went alone: (delivered, step), for the message floor (EndFloor)
    std::vector<std::pair<int64_t, uint32_t>> wentAlone;
    for (uint32_t i = 0; i < n; ++i)
    {
        if (timing->stepDoneNs[i] > tau)
        {
            continue;
        }
        done[i] = 1;
        if (steps[i].isSend)
        {
            m_backend->AddPathBytes(
                run->endpoints[steps[i].src], run->endpoints[steps[i].dst], steps[i].bytes);
            --run->sendsLeft;
            if (plan.floorStep >= 0)
            {
                wentAlone.emplace_back(timing->stepDoneNs[i], i);
            }
        }
        --run->left;
        --run->rankLeft[steps[i].src];
        if (steps[i].isSend && steps[i].dst != steps[i].src)
        {
            --run->rankLeft[steps[i].dst];
        }
        for (uint32_t j = plan.dependentStart[i]; j < plan.dependentStart[i + 1]; ++j)
        {
            --run->waiting[plan.dependents[j]];
        }
    }
    NS_LOG_DEBUG("collective " << run->id << " materialized " << tau << " ns after its start: "
                               << n - run->left << " of " << n << " steps done");
    const uint64_t id = run->id;
    if (!run->onRankDone.IsNull())
    {
        for (uint32_t r = 0; r < run->rankLeft.size(); ++r)
        {
            if (run->rankLeft[r] == 0 && timing->rankEvent[r] >= run->nextEvent)
            {
                Simulator::ScheduleNow(
                    [cb = run->onRankDone, id, r, e = run->endpoints[r]]()
                    {
                        cb(id, r, e);
                    });
            }
        }
    }
    if (run->left == 0)
    {
        m_runs.erase(id);
        if (!run->onDone.IsNull())
        {
            Simulator::ScheduleNow(
                [cb = run->onDone, id]()
                {
                    cb(id);
                });
        }
        return;
    }
    if (m_delivered.IsNull())
    {
        m_delivered = MakeCallback(&CollectiveEngine::Delivered, this);
    }
    // Messages still transmitting (or waiting for their connection), re-sent below in the
    // order they were issued (their connections' order).
    std::vector<std::pair<uint32_t, uint32_t>> resend;
    for (uint32_t i = 0; i < n; ++i)
    {
        if (done[i] || run->waiting[i] != 0)
        {
            continue;
        }
        // In flight now: a local step or a message's latency ends when it did alone; a
        // message still transmitting goes on with the bytes it had left.
        const auto& s = steps[i];
        const auto& progress = timing->progress[i];
        if (!s.isSend || progress.empty() || progress.back().first <= tauS)
        {
            if (s.isSend)
            {
                m_backend->AddPathBytes(run->endpoints[s.src], run->endpoints[s.dst], s.bytes);
                if (plan.floorStep >= 0)
                {
                    wentAlone.emplace_back(timing->stepDoneNs[i], i);
                }
            }
            Simulator::Schedule(NanoSeconds(run->startNs + timing->stepDoneNs[i] - nowNs),
                                [this, run, i]()
                                {
                                    if (run->plan->floorStep == int64_t(i))
                                    {
                                        FloorDue(run);
                                    }
                                    else
                                    {
                                        Complete(run, i);
                                    }
                                });
            continue;
        }
        resend.emplace_back(timing->issued[i], i);
        if (plan.floorStep >= 0)
        {
            // it started transmitting when it did alone
            SetIssued(*run, i, run->startNs + std::llround(progress.front().first * 1e9));
        }
    }
    // in the order their pairs carried them (a pair's streams leave in order)
    std::sort(wentAlone.begin(), wentAlone.end());
    for (const auto& [doneNs, i] : wentAlone)
    {
        if (!timing->progress[i].empty())
        {
            SetIssued(
                *run, i, run->startNs + std::llround(timing->progress[i].front().first * 1e9));
        }
        RecordStream(run, i, run->startNs + doneNs);
    }
    std::sort(resend.begin(), resend.end());
    for (const auto& [order, i] : resend)
    {
        const auto& s = steps[i];
        const auto& progress = timing->progress[i];
        double left = progress.front().second;
        for (std::size_t j = 1; j < progress.size(); ++j)
        {
            if (progress[j].first > tauS)
            {
                const auto& a = progress[j - 1];
                const auto& b = progress[j];
                left = a.second + (b.second - a.second) * (tauS - a.first) / (b.first - a.first);
                break;
            }
        }
        const auto bytes = static_cast<uint64_t>(std::llround(std::max(0.0, left)));
        m_backend->AddPathBytes(run->endpoints[s.src],
                                run->endpoints[s.dst],
                                static_cast<double>(s.bytes) - static_cast<double>(bytes));
        const uint64_t message = m_backend->Send(run->endpoints[s.src],
                                                 run->endpoints[s.dst],
                                                 bytes,
                                                 m_delivered,
                                                 s.latencies,
                                                 0,
                                                 s.ordered,
                                                 run->plan->floorStep >= 0,
                                                 StepFlow(*run, i));
        m_messages.emplace(message, std::make_pair(id, i));
    }
}

void
CollectiveEngine::Finalize(const std::shared_ptr<Run>& run)
{
    const std::shared_ptr<Timing> rec = run->recording;
    run->recording.reset();
    const std::shared_ptr<Entry> entry = run->entry;
    if (!entry || entry->version != run->version
        || m_backend->GetTopology()->GetVersion() != run->version)
    {
        return;
    }
    rec->durationNs = Simulator::Now().GetNanoSeconds() - run->startNs;
    const auto ranks = static_cast<uint32_t>(rec->rankDoneNs.size());
    std::vector<uint32_t> order(ranks);
    for (uint32_t r = 0; r < ranks; ++r)
    {
        order[r] = r;
    }
    std::stable_sort(order.begin(),
                     order.end(),
                     [&](uint32_t a, uint32_t b)
                     {
                         return rec->rankDoneNs[a] < rec->rankDoneNs[b];
                     });
    rec->rankEvent.assign(ranks, 0);
    rec->eventRanks = order;
    for (uint32_t i = 0; i < ranks; ++i)
    {
        const int64_t t = rec->rankDoneNs[order[i]];
        if (rec->eventNs.empty() || rec->eventNs.back() != t)
        {
            rec->eventNs.push_back(t);
            rec->eventStart.push_back(i);
        }
        rec->rankEvent[order[i]] = static_cast<uint32_t>(rec->eventNs.size() - 1);
    }
    rec->eventStart.push_back(ranks);
    rec->rankDoneNs.clear();
    rec->links = entry->links;
    rec->load = m_backend->GetReservedLoad(run->reservation);
    entry->timing = rec;
    NS_LOG_DEBUG("collective " << run->id << " recorded alone: " << rec->durationNs << " ns");
}

uint64_t
CollectiveEngine::Start(CollectiveSchedule schedule,
                        const std::vector<uint32_t>& endpoints,
                        RankDoneCallback onRankDone,
                        DoneCallback onDone,
                        std::optional<uint64_t> flow)
{
    if (!m_backend)
    {
        throw ReplayError("the collective engine has no network backend (SetBackend)");
    }
    if (endpoints.size() != schedule.GetRankCount())
    {
        throw ReplayError("the collective engine got a schedule of "
                          + std::to_string(schedule.GetRankCount()) + " ranks but "
                          + std::to_string(endpoints.size()) + " endpoints were given");
    }
    return Launch(Compile(std::move(schedule)), endpoints, flow, onRankDone, onDone);
}

std::shared_ptr<CollectiveEngine::Compiled>
CollectiveEngine::Compile(CollectiveSchedule schedule)
{
    auto plan = std::make_shared<Compiled>();
    const auto& steps = schedule.GetSteps();
    const auto n = static_cast<uint32_t>(steps.size());
    plan->waiting.assign(n, 0);
    plan->rankLeft.assign(schedule.GetRankCount(), 0);
    for (uint32_t i = 0; i < n; ++i)
    {
        plan->waiting[i] = static_cast<uint32_t>(steps[i].deps.size());
        ++plan->rankLeft[steps[i].src];
        if (steps[i].isSend && steps[i].dst != steps[i].src)
        {
            ++plan->rankLeft[steps[i].dst];
        }
    }
    schedule.GetDependents(plan->dependentStart, plan->dependents);
    // The dependency lists are indexed now; drop them to halve the memory of big schedules.
    schedule.ReleaseDependencies();
    plan->schedule = std::move(schedule);
    return plan;
}

std::optional<uint64_t>
CollectiveEngine::StepFlow(const Run& run, uint32_t step)
{
    if (!run.flow)
    {
        return std::nullopt;
    }
    return FlowHash(*run.flow, step, 0);
}

uint64_t
CollectiveEngine::Launch(std::shared_ptr<const Compiled> plan,
                         const std::vector<uint32_t>& endpoints,
                         std::optional<uint64_t> flow,
                         RankDoneCallback onRankDone,
                         DoneCallback onDone,
                         uint64_t reservation,
                         std::shared_ptr<Entry> entry)
{
    if (!m_backend)
    {
        throw ReplayError("the collective engine has no network backend (SetBackend)");
    }
    auto run = std::make_shared<Run>();
    run->id = m_nextId++;
    run->plan = std::move(plan);
    run->endpoints = endpoints;
    run->flow = flow;
    run->onRankDone = onRankDone;
    run->onDone = onDone;
    run->waiting = run->plan->waiting;
    run->rankLeft = run->plan->rankLeft;
    const auto n = static_cast<uint32_t>(run->waiting.size());
    run->left = n;
    run->sendsLeft = run->plan->schedule.GetSendCount();
    run->startNs = Simulator::Now().GetNanoSeconds();
    m_runs[run->id] = run;
    if (reservation != 0)
    {
        // Alone on its links: recorded while it stays so.
        run->reservation = reservation;
        run->reserved = true;
        run->entry = std::move(entry);
        run->version = run->entry->version;
        run->recording = std::make_shared<Timing>();
        run->recording->stepDoneNs.assign(n, 0);
        run->recording->rankDoneNs.assign(endpoints.size(), 0);
        run->recording->progress.resize(n);
        run->recording->issued.assign(n, 0);
        m_reserved[reservation] = run->id;
    }
    // Ranks with no steps at all are done at once; an empty schedule finishes at once.
    for (uint32_t r = 0; r < endpoints.size(); ++r)
    {
        if (run->rankLeft[r] == 0 && !run->onRankDone.IsNull())
        {
            Simulator::ScheduleNow(
                [cb = run->onRankDone, id = run->id, r, e = endpoints[r]]()
                {
                    cb(id, r, e);
                });
        }
    }
    if (n == 0)
    {
        m_runs.erase(run->id);
        if (!onDone.IsNull())
        {
            Simulator::ScheduleNow(
                [onDone, id = run->id]()
                {
                    onDone(id);
                });
        }
        return run->id;
    }
    for (uint32_t i = 0; i < n; ++i)
    {
        if (run->plan->waiting[i] == 0)
        {
            Ready(run, i);
        }
    }
    return run->id;
}

void
CollectiveEngine::Ready(const std::shared_ptr<Run>& run, uint32_t step)
{
    m_readySteps.emplace(run->id, step);
    if (!m_issuing)
    {
        m_issuing = true;
        m_issueEvent = Simulator::ScheduleNow(&CollectiveEngine::IssueReady, this);
    }
}

void
CollectiveEngine::IssueReady()
{
    // Steps made ready by what is issued here (zero-time local steps) join the same round.
    while (!m_readySteps.empty())
    {
        const auto [id, step] = m_readySteps.top();
        m_readySteps.pop();
        auto it = m_runs.find(id);
        if (it != m_runs.end())
        {
            const std::shared_ptr<Run> run = it->second;
            Issue(run, step);
        }
    }
    m_issuing = false;
}

void
CollectiveEngine::Issue(const std::shared_ptr<Run>& run, uint32_t step)
{
    const auto& s = run->plan->schedule.GetSteps()[step];
    if (run->recording)
    {
        run->recording->issued[step] = m_issued++;
    }
    if (run->plan->floorStep >= 0 && s.isSend)
    {
        SetIssued(*run, step, Simulator::Now().GetNanoSeconds());
    }
    if (run->plan->floorStep == int64_t(step))
    {
        Simulator::Schedule(NanoSeconds(std::llround(s.durationS * 1e9)),
                            [this, run]()
                            {
                                FloorDue(run);
                            });
        return;
    }
    if (s.isSend)
    {
        NS_LOG_LOGIC("collective " << run->id << " step " << step << ": " << s.bytes
                                   << " B from endpoint " << run->endpoints[s.src] << " to "
                                   << run->endpoints[s.dst]);
        if (m_delivered.IsNull())
        {
            m_delivered = MakeCallback(&CollectiveEngine::Delivered, this);
        }
        // A fluid run with a floor reads how its streams went (RecordStream).
        const uint64_t message = m_backend->Send(run->endpoints[s.src],
                                                 run->endpoints[s.dst],
                                                 s.bytes,
                                                 m_delivered,
                                                 s.latencies,
                                                 run->reservation,
                                                 s.ordered,
                                                 run->plan->floorStep >= 0,
                                                 StepFlow(*run, step));
        m_messages.emplace(message, std::make_pair(run->id, step));
    }
    else if (s.serial && s.durationS > 0)
    {
        // A reduction waits for its rank's earlier ones (one reducer per rank).
        if (run->reducerFreeNs.empty())
        {
            run->reducerFreeNs.assign(run->plan->schedule.GetRankCount(), 0);
        }
        const int64_t now = Simulator::Now().GetNanoSeconds();
        int64_t& free = run->reducerFreeNs[s.src];
        free = std::max(free, now) + std::llround(s.durationS * 1e9);
        Simulator::Schedule(NanoSeconds(free - now),
                            [this, run, step]()
                            {
                                Complete(run, step);
                            });
    }
    else if (s.durationS > 0)
    {
        Simulator::Schedule(Seconds(s.durationS),
                            [this, run, step]()
                            {
                                Complete(run, step);
                            });
    }
    else
    {
        Complete(run, step);
    }
}

void
CollectiveEngine::Delivered(uint64_t message)
{
    auto it = m_messages.find(message);
    const auto [id, step] = it->second;
    m_messages.erase(it);
    // The run is alive while it has a step left (m_runs holds it until its last step).
    const std::shared_ptr<Run> run = m_runs.at(id);
    const bool floor = run->plan->floorStep >= 0;
    std::vector<std::pair<double, double>> progress;
    if (run->reserved || floor)
    {
        // Sent under a reservation, or logged for the floor: the backend kept its progress.
        progress = m_backend->TakeProgress(message);
    }
    if (floor)
    {
        RecordStream(run, step, Simulator::Now().GetNanoSeconds(), progress);
    }
    if (run->recording)
    {
        const double start = static_cast<double>(run->startNs) * 1e-9;
        for (auto& p : progress)
        {
            p.first -= start;
        }
        run->recording->progress[step] = std::move(progress);
    }
    Complete(run, step);
}

void
CollectiveEngine::SetIssued(Run& run, uint32_t step, int64_t issuedNs)
{
    if (run.issuedNs.empty())
    {
        run.issuedNs.assign(run.plan->schedule.GetSteps().size(), -1);
    }
    run.issuedNs[step] = issuedNs;
}

void
CollectiveEngine::RecordStream(const std::shared_ptr<Run>& run,
                               uint32_t step,
                               int64_t deliveredNs,
                               const std::vector<std::pair<double, double>>& progress)
{
    const auto& s = run->plan->schedule.GetSteps()[step];
    const uint32_t a = run->endpoints[s.src];
    const uint32_t b = run->endpoints[s.dst];
    if (a == b)
    {
        return;
    }
    auto [it, fresh] = run->streams.try_emplace({a, b});
    PairStreams& pair = it->second;
    if (fresh)
    {
        std::tie(pair.rate, pair.latencyS) = m_backend->GetIdlePath(a, b);
    }
    // Its last byte left when its progress says, else a latency count of path latencies
    // before it arrived; it started when it was issued, or (ordered) when the pair's previous
    // transfer ended.
    const int64_t end =
        progress.size() >= 2
            ? std::min<int64_t>(deliveredNs, std::llround(progress.back().first * 1e9))
            : deliveredNs - std::llround(s.latencies * pair.latencyS * 1e9);
    int64_t start = end;
    if (step < run->issuedNs.size() && run->issuedNs[step] >= 0)
    {
        start = run->issuedNs[step];
    }
    if (s.ordered)
    {
        start = std::max(start, pair.lastEndNs);
    }
    auto& pieces = pair.load.pieces;
    const double runStartS = static_cast<double>(run->startNs) * 1e-9;
    const double startS = static_cast<double>(start) * 1e-9;
    const double endS = static_cast<double>(end) * 1e-9;
    const std::size_t before = pieces.size();
    if (progress.size() >= 2)
    {
        // One piece per rate: the bytes sent before the log began (a stream sent again after
        // an intruder broke its timed run) as one, then each stretch between changes of rate
        // in which bytes went (not the wait for its connection).
        double fromS = startS;
        const double unlogged = static_cast<double>(s.bytes) - progress.front().second;
        if (unlogged > 0.5)
        {
            const double toS = std::max(startS, std::min(endS, progress.front().first));
            pieces.push_back({unlogged, toS - startS, startS - runStartS});
            fromS = toS;
        }
        for (std::size_t i = 1; i < progress.size(); ++i)
        {
            const double bytes = progress[i - 1].second - progress[i].second;
            const double toS = std::min(endS, progress[i].first);
            if (bytes <= 0 || toS <= fromS)
            {
                fromS = std::max(fromS, std::min(endS, progress[i].first));
                continue;
            }
            const double atS = std::max(fromS, progress[i - 1].first);
            pieces.push_back({bytes, toS - atS, atS - runStartS});
            fromS = toS;
        }
    }
    if (pieces.size() == before)
    {
        // no progress kept (or none inside [start, end], as estimated): one piece
        pieces.push_back(
            {static_cast<double>(s.bytes), std::max(0.0, endS - startS), startS - runStartS});
    }
    pair.lastEndNs = std::max(pair.lastEndNs, end);
    if (pair.load.IsSlowedAtEnd(pair.rate))
    {
        // How long others stay on its links after it (EndFloor) shows in their busy time.
        if (pair.route.empty())
        {
            pair.route = m_backend->GetIdleRoute(a, b);
        }
        pair.busyS.resize(pair.route.size());
        for (std::size_t i = 0; i < pair.route.size(); ++i)
        {
            pair.busyS[i] = m_backend->GetLinkLoad(pair.route[i]).busyS;
        }
        // the others that slowed it are taken to have stayed until it arrived
        pair.othersSinceS = static_cast<double>(deliveredNs - end) * 1e-9;
    }
}

void
CollectiveEngine::FloorDue(const std::shared_ptr<Run>& run)
{
    run->floorDue = true;
    if (run->sendsLeft == 0)
    {
        EndFloor(run);
    }
}

double
CollectiveEngine::TakeOthersSeconds(Run& run)
{
    // The streams of one run share links among themselves: a pair counts as slowed by others
    // only below its path's rate shared by as many of the run's pairs as cross one of its
    // links (a tree's parent sending to both children, an all-to-all's peers).
    bool anySlowed = false;
    for (const auto& [pair, streams] : run.streams)
    {
        for (const auto& p : streams.load.pieces)
        {
            anySlowed = anySlowed || PairLoad::IsSlowed(p, streams.rate);
        }
    }
    if (!anySlowed)
    {
        return 0;
    }
    std::map<uint32_t, uint32_t> pairsOnLink;
    std::vector<std::vector<uint32_t>> routes;
    routes.reserve(run.streams.size());
    for (const auto& [pair, streams] : run.streams)
    {
        routes.push_back(m_backend->GetIdleRoute(pair.first, pair.second));
        for (uint32_t l : routes.back())
        {
            ++pairsOnLink[l];
        }
    }
    double othersS = 0;
    std::size_t k = 0;
    std::vector<uint32_t> staying; // links of pairs slowed to their last piece
    for (auto& [pair, streams] : run.streams)
    {
        uint32_t sharing = 1;
        for (uint32_t l : routes[k++])
        {
            sharing = std::max(sharing, pairsOnLink[l]);
        }
        for (auto& p : streams.load.pieces)
        {
            p.seconds = std::max(p.bytes / streams.rate, p.seconds / sharing);
            if (PairLoad::IsSlowed(p, streams.rate))
            {
                othersS += p.seconds - p.bytes / streams.rate;
            }
        }
        if (streams.load.IsSlowedAtEnd(streams.rate))
        {
            staying.insert(staying.end(), streams.route.begin(), streams.route.end());
        }
    }
    if (!staying.empty())
    {
        // The run's sends are all done: what still crosses those links now is the others'.
        std::sort(staying.begin(), staying.end());
        staying.erase(std::unique(staying.begin(), staying.end()), staying.end());
        const std::vector<double> pending = m_backend->GetPendingBytes(staying);
        for (auto& [pair, streams] : run.streams)
        {
            if (!streams.load.IsSlowedAtEnd(streams.rate))
            {
                continue;
            }
            // What they had left at its last byte: the latency until it arrived, then the
            // links' busy time since (RecordStream), then what is still to cross them.
            double afterS = 0;
            double bytes = 0;
            for (std::size_t i = 0; i < streams.route.size(); ++i)
            {
                const uint32_t l = streams.route[i];
                afterS = std::max(afterS, m_backend->GetLinkLoad(l).busyS - streams.busyS[i]);
                const auto at = std::lower_bound(staying.begin(), staying.end(), l);
                bytes = std::max(bytes, pending[at - staying.begin()]);
            }
            streams.load.othersLeftS = streams.othersSinceS + afterS + bytes / streams.rate;
            othersS += streams.load.othersLeftS;
        }
    }
    return othersS;
}

double
CollectiveEngine::WalkMessages(const Run& run)
{
    std::shared_ptr<const Compiled> messages = run.plan->messagePlan;
    if (!messages)
    {
        // the plan's messages as planned, else planned again
        std::shared_ptr<CollectiveSchedule>& kept = run.plan->messageSchedule;
        messages = Compile(kept ? std::move(*kept)
                                : GetPlanner().Build(run.plan->messageRequest).schedule);
        if (kept)
        {
            kept.reset();
            run.plan->messagePlan = messages;
        }
    }
    return CollectiveSchedule::Walk(
        messages->schedule.GetSteps(),
        messages->waiting,
        messages->dependentStart,
        messages->dependents,
        [&](uint32_t a, uint32_t b)
        {
            return m_backend->GetIdlePath(run.endpoints[a], run.endpoints[b]);
        },
        [&](uint32_t a, uint32_t b) -> const PairLoad*
        {
            auto it = run.streams.find({run.endpoints[a], run.endpoints[b]});
            return it == run.streams.end() ? nullptr : &it->second.load;
        });
}

void
CollectiveEngine::EndFloor(const std::shared_ptr<Run>& run)
{
    run->floorEnding = true;
    const auto floor = static_cast<uint32_t>(run->plan->floorStep);
    const double othersS = TakeOthersSeconds(*run);
    // Alone the walk takes the floor's duration; the others delay it by at most othersS.
    const double floorS = run->plan->schedule.GetSteps()[floor].durationS;
    const int64_t nowNs = Simulator::Now().GetNanoSeconds();
    int64_t waitNs = 0;
    if (othersS > 0 && floorS + othersS > static_cast<double>(nowNs - run->startNs) * 1e-9)
    {
        const double walkS = WalkMessages(*run);
        waitNs = run->startNs + static_cast<int64_t>(std::llround(walkS * 1e9)) - nowNs;
        NS_LOG_DEBUG("collective " << run->id << ": its streams were slowed, its messages' walk "
                                   << walkS * 1e6 << " us");
    }
    run->streams.clear();
    if (waitNs > 0)
    {
        Simulator::Schedule(NanoSeconds(waitNs),
                            [this, run, floor]()
                            {
                                Complete(run, floor);
                            });
    }
    else
    {
        Complete(run, floor);
    }
}

void
CollectiveEngine::Complete(const std::shared_ptr<Run>& run, uint32_t step)
{
    const auto& s = run->plan->schedule.GetSteps()[step];
    if (run->recording)
    {
        run->recording->stepDoneNs[step] = Simulator::Now().GetNanoSeconds() - run->startNs;
    }
    auto rankStep = [&](uint32_t r)
    {
        if (--run->rankLeft[r] == 0)
        {
            if (run->recording)
            {
                run->recording->rankDoneNs[r] = Simulator::Now().GetNanoSeconds() - run->startNs;
            }
            NS_LOG_LOGIC("collective " << run->id << ": rank " << r << " (endpoint "
                                       << run->endpoints[r] << ") done at "
                                       << Simulator::Now().As(Time::US));
            if (!run->onRankDone.IsNull())
            {
                run->onRankDone(run->id, r, run->endpoints[r]);
            }
        }
    };
    rankStep(s.src);
    if (s.isSend && s.dst != s.src)
    {
        rankStep(s.dst);
    }
    const Compiled& plan = *run->plan;
    for (uint32_t i = plan.dependentStart[step]; i < plan.dependentStart[step + 1]; ++i)
    {
        uint32_t next = plan.dependents[i];
        if (--run->waiting[next] == 0)
        {
            Ready(run, next);
        }
    }
    if (--run->left == 0)
    {
        NS_LOG_DEBUG("collective " << run->id << " done at " << Simulator::Now().As(Time::US));
        if (run->recording)
        {
            Finalize(run);
        }
        if (run->reservation != 0)
        {
            m_backend->Release(run->reservation);
            m_reserved.erase(run->reservation);
            run->reservation = 0;
        }
        m_runs.erase(run->id);
        if (!run->onDone.IsNull())
        {
            run->onDone(run->id);
        }
    }
    if (s.isSend && --run->sendsLeft == 0 && run->floorDue && !run->floorEnding)
    {
        EndFloor(run);
    }
}

} // namespace rapidllm
} // namespace ns3
