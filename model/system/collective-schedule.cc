/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "collective-schedule.h"

#include "replay-error.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <memory>
#include <queue>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <unordered_map>

namespace ns3 {
namespace rapidllm {

namespace {
/**
 * The most steps a schedule holds: 2^25 (33.5 M, about 3 GiB with their dependency lists, and
 * twice that while the array grows). A ring all-reduce of 4,096 ranks in messages needs 33.5 M;
 * more is refused with the size instead of running out of memory or wrapping the 32-bit step
 * indices.
 */
constexpr uint64_t kMaxSteps = uint64_t(1) << 25;

/** Measured: 2^25 steps of a ring all-reduce took 2.9 GB of resident memory. */
constexpr double kBytesPerStep = 90;

/** A walk indexes its pairs in an array up to this many (src, dst) slots (4 MiB), hashes above. */
constexpr uint64_t kDensePairs = uint64_t(1) << 20;

/**
 * \return the refusal of a collective over \p ranks ranks: \p need says how many steps, \p how
 * how that is known
 */
CollectiveTooLarge
TooLarge(uint32_t ranks, const std::string& need, const std::string& how = "")
{
    return CollectiveTooLarge(
        "a collective over " + std::to_string(ranks) + " ranks needs " + need
            + " messages and local steps" + how + "; the simulator holds at most "
            + std::to_string(kMaxSteps)
            + " (about 3 GiB of memory): use fewer GPUs or a smaller --chunks",
        ", or, where it simulates every message (--granularity=message, "
        "collective's default), --granularity=fluid");
}

/** Throws ReplayError if a schedule of \p ranks ranks holding \p steps steps cannot grow. */
void
CheckRoom(std::size_t steps, uint32_t ranks)
{
    if (steps >= kMaxSteps)
    {
        throw TooLarge(ranks, "more than " + std::to_string(kMaxSteps));
    }
}
} // namespace

void
CollectiveSchedule::CheckPlannedSize(uint64_t messages, uint32_t pieces, uint32_t ranks)
{
    // messages x pieces >= kMaxSteps, without forming the product (which can wrap).
    if (pieces > 0 && messages > (kMaxSteps - 1) / pieces)
    {
        // Counted before building: refused at once instead of after seconds and gigabytes.
        const double steps = double(messages) * pieces;
        std::ostringstream need;
        std::ostringstream how;
        need << "at least " << std::setprecision(3) << steps;
        how << " (" << messages << " messages in each of " << pieces
            << " pieces, counted before building: about " << std::ceil(steps * kBytesPerStep / 1e9)
            << " GB)";
        throw TooLarge(ranks, need.str(), how.str());
    }
}

CollectiveTooLarge::CollectiveTooLarge(const std::string& message, const std::string& fluidHint)
    : ReplayError(message + fluidHint)
    , m_message(message)
    , m_fluidHint(fluidHint)
{}

std::string
CollectiveTooLarge::GetMessage(bool fluid) const
{
    return fluid ? m_message : m_message + m_fluidHint;
}

CollectiveSchedule::CollectiveSchedule(uint32_t ranks)
    : m_ranks(ranks)
{}

uint32_t
CollectiveSchedule::AddSend(
    uint32_t src, uint32_t dst, uint64_t bytes, DepList deps, uint32_t latencies, bool ordered)
{
    CheckRank(src, "a send's source");
    CheckRank(dst, "a send's destination");
    CheckDeps(deps);
    CheckRoom(m_steps.size(), m_ranks);
    CollectiveStep s;
    s.isSend = true;
    s.src = src;
    s.dst = dst;
    s.bytes = bytes;
    s.latencies = latencies;
    s.ordered = ordered;
    s.deps = std::move(deps);
    m_steps.push_back(std::move(s));
    return static_cast<uint32_t>(m_steps.size() - 1);
}

uint32_t
CollectiveSchedule::AddLocal(uint32_t rank, double durationS, DepList deps)
{
    CheckRank(rank, "a local step's rank");
    CheckDeps(deps);
    CheckRoom(m_steps.size(), m_ranks);
    CollectiveStep s;
    s.isSend = false;
    s.src = rank;
    s.dst = rank;
    s.durationS = durationS;
    s.deps = std::move(deps);
    m_steps.push_back(std::move(s));
    return static_cast<uint32_t>(m_steps.size() - 1);
}

uint32_t
CollectiveSchedule::AddReduction(uint32_t rank, double durationS, DepList deps)
{
    const uint32_t step = AddLocal(rank, durationS, std::move(deps));
    m_steps[step].serial = true;
    return step;
}

void
CollectiveSchedule::CheckRank(uint32_t rank, const char* what) const
{
    if (rank >= m_ranks)
    {
        // Written by a collective algorithm: name what it got wrong for its author.
        throw std::logic_error("collective schedule of " + std::to_string(m_ranks)
                               + " ranks: " + what + " is rank " + std::to_string(rank)
                               + " (ranks are 0.." + std::to_string(m_ranks - 1) + ")");
    }
}

void
CollectiveSchedule::CheckDeps(const DepList& deps) const
{
    for (uint32_t d : deps)
    {
        if (d >= m_steps.size())
        {
            throw std::logic_error("collective schedule: step " + std::to_string(m_steps.size())
                                   + " depends on step " + std::to_string(d)
                                   + ", which is not an earlier step");
        }
    }
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
        s.deps = DepList();
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

void
CollectiveSchedule::GetDependents(std::vector<uint32_t>& start,
                                  std::vector<uint32_t>& dependents) const
{
    const auto n = static_cast<uint32_t>(m_steps.size());
    start.assign(n + 1, 0);
    for (const auto& s : m_steps)
    {
        for (uint32_t d : s.deps)
        {
            ++start[d + 1];
        }
    }
    for (uint32_t i = 0; i < n; ++i)
    {
        start[i + 1] += start[i];
    }
    dependents.resize(start[n]);
    std::vector<uint32_t> fill(start.begin(), start.end() - 1);
    for (uint32_t i = 0; i < n; ++i)
    {
        for (uint32_t d : m_steps[i].deps)
        {
            dependents[fill[d]++] = i;
        }
    }
}

double
CollectiveSchedule::GetIdleSeconds(const PairTiming& timing) const
{
    return GetIdleSeconds(timing, PairPace());
}

double
CollectiveSchedule::GetIdleSeconds(const PairTiming& timing, const PairPace& pace) const
{
    const auto n = static_cast<uint32_t>(m_steps.size());
    std::vector<uint32_t> first;
    std::vector<uint32_t> dependents;
    GetDependents(first, dependents);
    std::vector<uint32_t> waiting(n, 0);
    for (uint32_t i = 0; i < n; ++i)
    {
        waiting[i] = static_cast<uint32_t>(m_steps[i].deps.size());
    }
    return Walk(m_steps, waiting, first, dependents, timing, pace);
}

double
CollectiveSchedule::Walk(const std::vector<CollectiveStep>& steps,
                         const std::vector<uint32_t>& waiting,
                         const std::vector<uint32_t>& first,
                         const std::vector<uint32_t>& dependents,
                         const PairTiming& timing,
                         const PairPace& pace)
{
    const auto n = static_cast<uint32_t>(steps.size());
    std::vector<uint32_t> waits = waiting; // what each step still waits for
    // What the walk keeps per (src, dst) pair
    struct Pair
    {
        double rate = 0;                        // bytes/s
        double latency = 0;                     // seconds
        int64_t free = 0;                       // its connection's last byte so far
        std::unique_ptr<PairSlowdown> slowdown; // beside other traffic (null: at its rate)
    };
    // (src, dst) -> its state: indexed by src x ranks + dst in a small group (a ring of a few
    // hundred ranks walks a hundred thousand messages, where hashing the pair cost a fifth of
    // the walk), hashed in a larger one.
    uint32_t ranks = 0;
    for (const auto& s : steps)
    {
        ranks = std::max(ranks, std::max(s.src, s.dst) + 1);
    }
    std::vector<Pair> pairs;
    std::vector<uint32_t> dense; // src x ranks + dst -> its index in pairs + 1 (0: not yet)
    std::unordered_map<uint64_t, uint32_t> sparse;
    if (uint64_t(ranks) * ranks <= kDensePairs)
    {
        dense.assign(std::size_t(ranks) * ranks, 0);
    }
    auto pairOf = [&](uint32_t src, uint32_t dst) -> Pair&
    {
        uint32_t& slot = dense.empty() ? sparse[uint64_t(src) << 32 | dst]
                                       : dense[std::size_t(src) * ranks + dst];
        if (slot == 0)
        {
            pairs.emplace_back();
            slot = static_cast<uint32_t>(pairs.size());
            Pair& pair = pairs.back();
            std::tie(pair.rate, pair.latency) = timing(src, dst);
            const PairLoad* load = pace ? pace(src, dst) : nullptr;
            if (load)
            {
                pair.slowdown = std::make_unique<PairSlowdown>(*load, pair.rate);
            }
        }
        return pairs[slot - 1];
    };
    // In whole nanoseconds, as the simulator runs the schedule: a transmission ends at the
    // first nanosecond at or after its last byte (the flow network's completion event), a
    // delay (latency, local step) is rounded to the nearest nanosecond.
    auto delay = [](double seconds)
    {
        return static_cast<int64_t>(std::llround(seconds * 1e9));
    };
    std::vector<int64_t> ready(n, 0);
    // Steps in the order they become ready, those of one instant in schedule order, as the
    // CollectiveEngine issues them: a connection carries its messages in the order they are
    // sent. (time, step) is one key, ordered as the pair.
    using Item = unsigned __int128;
    auto item = [](int64_t at, uint32_t step)
    {
        return static_cast<Item>(static_cast<uint64_t>(at)) << 32 | step;
    };
    std::priority_queue<Item, std::vector<Item>, std::greater<Item>> queue;
    for (uint32_t i = 0; i < n; ++i)
    {
        if (waits[i] == 0)
        {
            queue.push(item(0, i));
        }
    }
    int64_t end = 0;
    std::vector<int64_t> reducerFree(ranks, 0); // per rank: its reducer's next free instant
    while (!queue.empty())
    {
        const auto at = static_cast<int64_t>(static_cast<uint64_t>(queue.top() >> 32));
        const auto i = static_cast<uint32_t>(queue.top());
        queue.pop();
        const CollectiveStep& s = steps[i];
        int64_t done = at;
        if (!s.isSend)
        {
            if (s.serial)
            {
                done = std::max(done, reducerFree[s.src]);
                reducerFree[s.src] = done + delay(s.durationS);
            }
            done += delay(s.durationS);
        }
        else if (s.src != s.dst)
        {
            Pair& pair = pairOf(s.src, s.dst);
            const double rate = pair.rate;
            const double latency = pair.latency;
            int64_t lastByte = at;
            if (s.bytes > 0 && rate > 0)
            {
                // A zero-byte message is only its latency and does not queue.
                int64_t start = at;
                if (s.ordered)
                {
                    start = std::max(start, pair.free);
                }
                // (within 10 ps of a nanosecond counts as that nanosecond, as the flow
                // network tests its completions)
                const double seconds =
                    pair.slowdown
                        ? pair.slowdown->Transmit(start * 1e-9, static_cast<double>(s.bytes))
                        : s.bytes / rate;
                lastByte = static_cast<int64_t>(std::ceil((start * 1e-9 + seconds) * 1e9 - 1e-2));
                if (s.ordered)
                {
                    pair.free = lastByte;
                }
            }
            done = lastByte + delay(latency * s.latencies);
        }
        end = std::max(end, done);
        for (uint32_t k = first[i]; k < first[i + 1]; ++k)
        {
            const uint32_t d = dependents[k];
            ready[d] = std::max(ready[d], done);
            if (--waits[d] == 0)
            {
                queue.push(item(ready[d], d));
            }
        }
    }
    return end * 1e-9;
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
