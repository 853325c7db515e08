/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "collective-engine.h"

#include "ns3/log.h"
#include "ns3/simulator.h"
#include "ns3/spec-error.h"
#include "ns3/string.h"
#include "replay-error.h"

#include <cstring>

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
                                          MakeStringChecker());
    return tid;
}

CollectiveEngine::CollectiveEngine() = default;
CollectiveEngine::~CollectiveEngine() = default;

void
CollectiveEngine::DoDispose()
{
    m_runs.clear();
    m_messages.clear();
    m_delivered = NetworkBackend::DeliveryCallback();
    m_plans.clear();
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

bool
CollectiveEngine::UsesFluid() const
{
    CheckGranularity(m_granularity, "Granularity");
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
    }
    return *m_planner;
}

namespace {
/** Plans up to this many steps are kept for reuse (a few hundred kB each at most). */
constexpr std::size_t kCachedSteps = 1 << 14;
} // namespace

uint64_t
CollectiveEngine::Start(const CollectiveRequest& request,
                        RankDoneCallback onRankDone,
                        DoneCallback onDone)
{
    const bool fluid = UsesFluid();
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
    key.insert(key.end(), request.endpoints.begin(), request.endpoints.end());
    auto cached = m_plans.find(key);
    std::shared_ptr<const Compiled> plan;
    if (cached != m_plans.end())
    {
        plan = cached->second;
    }
    else
    {
        CollectiveRequest chosen = request;
        chosen.fluid = fluid;
        CollectivePlan built = GetPlanner().Build(chosen);
        NS_LOG_DEBUG("collective plan: " << ToString(request.op) << " of " << request.bytes
                                         << " B among " << request.endpoints.size() << " ranks, "
                                         << built.algorithm << ", " << built.schedule.GetSendCount()
                                         << (fluid ? " streams" : " messages"));
        plan = Compile(std::move(built.schedule));
        if (plan->waiting.size() <= kCachedSteps)
        {
            m_plans.emplace(std::move(key), plan);
        }
    }
    return Launch(plan, request.endpoints, onRankDone, onDone);
}

uint64_t
CollectiveEngine::Start(CollectiveSchedule schedule,
                        const std::vector<uint32_t>& endpoints,
                        RankDoneCallback onRankDone,
                        DoneCallback onDone)
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
    return Launch(Compile(std::move(schedule)), endpoints, onRankDone, onDone);
}

std::shared_ptr<const CollectiveEngine::Compiled>
CollectiveEngine::Compile(CollectiveSchedule schedule)
{
    auto plan = std::make_shared<Compiled>();
    const auto& steps = schedule.GetSteps();
    const auto n = static_cast<uint32_t>(steps.size());
    plan->waiting.assign(n, 0);
    plan->dependentStart.assign(n + 1, 0);
    plan->rankLeft.assign(schedule.GetRankCount(), 0);
    for (uint32_t i = 0; i < n; ++i)
    {
        plan->waiting[i] = static_cast<uint32_t>(steps[i].deps.size());
        for (uint32_t d : steps[i].deps)
        {
            ++plan->dependentStart[d + 1];
        }
        ++plan->rankLeft[steps[i].src];
        if (steps[i].isSend && steps[i].dst != steps[i].src)
        {
            ++plan->rankLeft[steps[i].dst];
        }
    }
    for (uint32_t i = 0; i < n; ++i)
    {
        plan->dependentStart[i + 1] += plan->dependentStart[i];
    }
    plan->dependents.resize(plan->dependentStart[n]);
    std::vector<uint32_t> fill(plan->dependentStart.begin(), plan->dependentStart.end() - 1);
    for (uint32_t i = 0; i < n; ++i)
    {
        for (uint32_t d : steps[i].deps)
        {
            plan->dependents[fill[d]++] = i;
        }
    }
    // The dependency lists are indexed now; drop them to halve the memory of big schedules.
    schedule.ReleaseDependencies();
    plan->schedule = std::move(schedule);
    return plan;
}

uint64_t
CollectiveEngine::Launch(std::shared_ptr<const Compiled> plan,
                         const std::vector<uint32_t>& endpoints,
                         RankDoneCallback onRankDone,
                         DoneCallback onDone)
{
    if (!m_backend)
    {
        throw ReplayError("the collective engine has no network backend (SetBackend)");
    }
    auto run = std::make_shared<Run>();
    run->id = m_nextId++;
    run->plan = std::move(plan);
    run->endpoints = endpoints;
    run->onRankDone = onRankDone;
    run->onDone = onDone;
    run->waiting = run->plan->waiting;
    run->rankLeft = run->plan->rankLeft;
    const auto n = static_cast<uint32_t>(run->waiting.size());
    run->left = n;
    m_runs[run->id] = run;
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
            Issue(run, i);
        }
    }
    return run->id;
}

void
CollectiveEngine::Issue(const std::shared_ptr<Run>& run, uint32_t step)
{
    const auto& s = run->plan->schedule.GetSteps()[step];
    if (s.isSend)
    {
        NS_LOG_LOGIC("collective " << run->id << " step " << step << ": " << s.bytes
                                   << " B from endpoint " << run->endpoints[s.src] << " to "
                                   << run->endpoints[s.dst]);
        if (m_delivered.IsNull())
        {
            m_delivered = MakeCallback(&CollectiveEngine::Delivered, this);
        }
        const uint64_t message = m_backend->Send(
            run->endpoints[s.src], run->endpoints[s.dst], s.bytes, m_delivered, s.latencies);
        m_messages.emplace(message, std::make_pair(run->id, step));
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
    Complete(run, step);
}

void
CollectiveEngine::Complete(const std::shared_ptr<Run>& run, uint32_t step)
{
    const auto& s = run->plan->schedule.GetSteps()[step];
    auto rankStep = [&](uint32_t r)
    {
        if (--run->rankLeft[r] == 0)
        {
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
            Issue(run, next);
        }
    }
    if (--run->left == 0)
    {
        NS_LOG_DEBUG("collective " << run->id << " done at " << Simulator::Now().As(Time::US));
        m_runs.erase(run->id);
        if (!run->onDone.IsNull())
        {
            run->onDone(run->id);
        }
    }
}

} // namespace rapidllm
} // namespace ns3
