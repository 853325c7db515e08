/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "schedule-builder.h"

#include "collective-algorithms.h"

#include <algorithm>

namespace ns3 {
namespace rapidllm {

ScheduleBuilder::ScheduleBuilder(CollectiveSchedule& schedule,
                                 const CollectivePlanner& planner,
                                 const std::vector<uint32_t>& endpoints,
                                 double reduceBytesPerSecond)
    : m_schedule(schedule)
    , m_planner(planner)
    , m_endpoints(endpoints)
    , m_reduceRate(reduceBytesPerSecond)
    , m_ready(schedule.GetRankCount(), kNone)
{}

ScheduleBuilder::Step
ScheduleBuilder::GetReady(uint32_t rank) const
{
    return m_ready[rank];
}

void
ScheduleBuilder::SetReady(uint32_t rank, Step step)
{
    m_ready[rank] = step;
}

std::vector<uint32_t>
ScheduleBuilder::Deps(Step step)
{
    return step < 0 ? std::vector<uint32_t>{} : std::vector<uint32_t>{uint32_t(step)};
}

uint32_t
ScheduleBuilder::Send(uint32_t src, uint32_t dst, uint64_t bytes, Step after)
{
    return m_schedule.AddSend(src, dst, bytes, Deps(after));
}

uint32_t
ScheduleBuilder::Send(uint32_t src, uint32_t dst, uint64_t bytes, std::vector<uint32_t> deps)
{
    return m_schedule.AddSend(src, dst, bytes, std::move(deps));
}

ScheduleBuilder::Step
ScheduleBuilder::Reduce(uint32_t rank, uint64_t bytes, Step after)
{
    if (m_reduceRate <= 0 || bytes == 0)
    {
        return after;
    }
    return m_schedule.AddLocal(rank, bytes / m_reduceRate, Deps(after));
}

ScheduleBuilder::Step
ScheduleBuilder::Join(uint32_t rank, const std::vector<Step>& steps)
{
    std::vector<uint32_t> d;
    for (auto x : steps)
    {
        if (x >= 0 && std::find(d.begin(), d.end(), uint32_t(x)) == d.end())
        {
            d.push_back(uint32_t(x));
        }
    }
    if (d.empty())
    {
        return kNone;
    }
    if (d.size() == 1)
    {
        return d[0];
    }
    return m_schedule.AddLocal(rank, 0, d);
}

void
ScheduleBuilder::AddDependency(uint32_t step, uint32_t dep)
{
    m_schedule.AddDependency(step, dep);
}

void
ScheduleBuilder::Chunked(uint32_t chunks,
                         uint64_t bytes,
                         const std::function<void(uint64_t)>& phase)
{
    if (chunks <= 1)
    {
        phase(bytes);
        return;
    }
    const uint32_t ranks = GetRankCount();
    const std::vector<Step> initial = m_ready;
    std::vector<std::vector<Step>> finals(ranks);
    std::vector<uint32_t> previous;
    for (uint32_t j = 0; j < chunks; ++j)
    {
        m_ready = initial;
        const auto mark = static_cast<uint32_t>(m_schedule.GetSteps().size());
        phase(Split(bytes, chunks, j));
        std::vector<uint32_t> sends;
        for (uint32_t i = mark; i < m_schedule.GetSteps().size(); ++i)
        {
            if (m_schedule.GetSteps()[i].isSend)
            {
                sends.push_back(i);
            }
        }
        for (std::size_t q = 0; q < sends.size() && q < previous.size(); ++q)
        {
            m_schedule.AddDependency(sends[q], previous[q]);
        }
        previous = sends;
        for (uint32_t x = 0; x < ranks; ++x)
        {
            finals[x].push_back(m_ready[x]);
        }
    }
    for (uint32_t x = 0; x < ranks; ++x)
    {
        m_ready[x] = Join(x, finals[x]);
    }
}

CollectiveSchedule&
ScheduleBuilder::GetSchedule()
{
    return m_schedule;
}

uint32_t
ScheduleBuilder::GetRankCount() const
{
    return m_schedule.GetRankCount();
}

const NetworkView&
ScheduleBuilder::GetView() const
{
    return m_planner.GetView();
}

uint32_t
ScheduleBuilder::GetEndpoint(uint32_t rank) const
{
    return m_endpoints[rank];
}

const CollectiveAlgorithm&
ScheduleBuilder::GetDimensionAlgorithm(uint32_t d, CollectiveOp op, uint32_t ranks) const
{
    return m_planner.GetDimensionAlgorithm(d, op, ranks);
}

const std::string&
ScheduleBuilder::GetDimensionAlgorithmName(uint32_t d) const
{
    return m_planner.GetDimensionAlgorithmName(d);
}

uint64_t
ScheduleBuilder::Split(uint64_t s, uint64_t k, uint64_t i)
{
    return s / k + (i < s % k ? 1 : 0);
}

} // namespace rapidllm
} // namespace ns3
