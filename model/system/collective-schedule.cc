/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "collective-schedule.h"

#include <stdexcept>

namespace ns3 {
namespace rapidllm {

CollectiveSchedule::CollectiveSchedule(uint32_t ranks)
    : m_ranks(ranks)
{}

uint32_t
CollectiveSchedule::AddSend(
    uint32_t src, uint32_t dst, uint64_t bytes, std::vector<uint32_t> deps, uint32_t latencies)
{
    if (src >= m_ranks || dst >= m_ranks)
    {
        throw std::logic_error("collective schedule: rank out of range");
    }
    CollectiveStep s;
    s.isSend = true;
    s.src = src;
    s.dst = dst;
    s.bytes = bytes;
    s.latencies = latencies;
    s.deps = std::move(deps);
    m_steps.push_back(std::move(s));
    return static_cast<uint32_t>(m_steps.size() - 1);
}

uint32_t
CollectiveSchedule::AddLocal(uint32_t rank, double durationS, std::vector<uint32_t> deps)
{
    if (rank >= m_ranks)
    {
        throw std::logic_error("collective schedule: rank out of range");
    }
    CollectiveStep s;
    s.isSend = false;
    s.src = rank;
    s.dst = rank;
    s.durationS = durationS;
    s.deps = std::move(deps);
    m_steps.push_back(std::move(s));
    return static_cast<uint32_t>(m_steps.size() - 1);
}

void
CollectiveSchedule::AddDependency(uint32_t step, uint32_t dep)
{
    if (dep >= step || step >= m_steps.size())
    {
        throw std::logic_error("collective schedule: a dependency must be an earlier step");
    }
    m_steps[step].deps.push_back(dep);
}

void
CollectiveSchedule::ReleaseDependencies()
{
    for (auto& s : m_steps)
    {
        std::vector<uint32_t>().swap(s.deps);
    }
}

uint32_t
CollectiveSchedule::GetRankCount() const
{
    return m_ranks;
}

const std::vector<CollectiveStep>&
CollectiveSchedule::GetSteps() const
{
    return m_steps;
}

uint64_t
CollectiveSchedule::GetSendCount() const
{
    uint64_t n = 0;
    for (const auto& s : m_steps)
    {
        n += s.isSend ? 1 : 0;
    }
    return n;
}

uint64_t
CollectiveSchedule::GetTotalBytes() const
{
    uint64_t n = 0;
    for (const auto& s : m_steps)
    {
        n += s.isSend ? s.bytes : 0;
    }
    return n;
}

} // namespace rapidllm
} // namespace ns3
