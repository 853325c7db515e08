/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "schedule-builder.h"

#include "collective-algorithms.h"
#include "ns3/network-view.h"

#include <algorithm>

namespace ns3 {
namespace rapidllm {

ScheduleBuilder::ScheduleBuilder(CollectiveSchedule& schedule,
                                 const CollectivePlanner& planner,
                                 const std::vector<uint32_t>& endpoints,
                                 double reduceBytesPerSecond,
                                 bool fluid)
    : m_schedule(schedule)
    , m_planner(planner)
    , m_endpoints(endpoints)
    , m_reduceRate(reduceBytesPerSecond)
    , m_ready(schedule.GetRankCount(), kNone)
    , m_fluid(fluid)
{}

bool
ScheduleBuilder::IsFluid() const
{
    return m_fluid;
}

void
ScheduleBuilder::SetMessageFloor(bool floor)
{
    m_floor = floor;
}

double
ScheduleBuilder::ReduceSeconds(uint64_t bytes) const
{
    return m_reduceRate > 0 ? bytes / m_reduceRate : 0.0;
}

namespace {
/** \return the distinct steps of \p steps (kNone left out), sorted */
std::vector<uint32_t>
DistinctSteps(std::vector<ScheduleBuilder::Step> steps)
{
    std::sort(steps.begin(), steps.end());
    steps.erase(std::unique(steps.begin(), steps.end()), steps.end());
    std::vector<uint32_t> out;
    out.reserve(steps.size());
    for (auto s : steps)
    {
        if (s >= 0)
        {
            out.push_back(uint32_t(s));
        }
    }
    return out;
}
} // namespace

void
ScheduleBuilder::FluidPhase(const std::vector<uint32_t>& members,
                            const std::vector<FluidStream>& streams,
                            uint32_t latencies,
                            double localS,
                            bool barrier)
{
    if (streams.empty() || members.empty())
    {
        return;
    }
    latencies = std::max(latencies, 1u);
    const uint32_t lead = members.front();
    const bool pipelined = m_fluidChunks > 1;
    // A step done when all of \p steps are (one zero-time local step of \p rank for several).
    auto joinAll = [&](uint32_t rank, std::vector<uint32_t> steps) -> Step
    {
        if (steps.empty())
        {
            return kNone;
        }
        if (steps.size() == 1)
        {
            return steps[0];
        }
        return m_schedule.AddLocal(rank, 0, std::move(steps));
    };
    // Where each stream waits: the members' joint readiness, or the source's.
    auto startsOf = [&](const std::vector<Step>& track)
    {
        std::vector<Step> starts(streams.size());
        if (barrier)
        {
            std::vector<Step> ready;
            ready.reserve(members.size());
            for (uint32_t m : members)
            {
                ready.push_back(track[m]);
            }
            std::fill(starts.begin(), starts.end(), joinAll(lead, DistinctSteps(ready)));
        }
        else
        {
            for (std::size_t i = 0; i < streams.size(); ++i)
            {
                starts[i] = track[streams[i].src];
            }
        }
        return starts;
    };
    // After the phase: every member ready at the end of all streams (barrier) or of those
    // into it, plus the local time.
    auto finish = [&](const std::vector<uint32_t>& ends, std::vector<Step>& track)
    {
        auto local = [&](uint32_t rank, Step end)
        {
            return localS > 0 ? Step(m_schedule.AddLocal(rank, localS, Deps(end))) : end;
        };
        if (barrier)
        {
            const Step end = local(lead, joinAll(lead, ends));
            for (uint32_t m : members)
            {
                track[m] = end;
            }
            return;
        }
        std::vector<std::vector<uint32_t>> into(GetRankCount());
        for (std::size_t i = 0; i < streams.size(); ++i)
        {
            into[streams[i].dst].push_back(ends[i]);
        }
        for (uint32_t m : members)
        {
            if (!into[m].empty())
            {
                track[m] = local(m, joinAll(m, std::move(into[m])));
            }
        }
    };
    const std::vector<Step> starts = startsOf(m_ready);
    // Without a message floor, a phase's latency count is a chain of steps that passes its
    // streams in turn (a ring's blocks cross every edge): where the streams' latencies differ,
    // each stream lasts at least that chain at the streams' mean step (nominal), rather than
    // paying its own edge's latency at every step.
    const double stepS = m_floor ? 0.0 : ChainStepS(streams, latencies);
    std::vector<uint32_t> ends;
    ends.reserve(2 * streams.size());
    for (std::size_t i = 0; i < streams.size(); ++i)
    {
        const FluidStream& st = streams[i];
        if (m_floor && latencies > 1)
        {
            // Under a message floor: the stream's steps as one message, in order behind the
            // earlier pieces' on the pair's connection (as the steps of the pieces follow each
            // other there); the floor holds its latencies and their queueing.
            ends.push_back(m_schedule.AddSend(st.src, st.dst, st.bytes, Deps(starts[i]), 1, true));
            m_unpaired = true;
            continue;
        }
        if (!pipelined)
        {
            if (stepS == 0)
            {
                ends.push_back(m_schedule.AddSend(
                    st.src, st.dst, st.bytes, Deps(starts[i]), latencies, false));
                continue;
            }
            const uint32_t send =
                m_schedule.AddSend(st.src, st.dst, st.bytes, Deps(starts[i]), 1, false);
            const uint32_t chain = m_schedule.AddLocal(st.dst, latencies * stepS, Deps(starts[i]));
            ends.push_back(m_schedule.AddLocal(st.dst, 0, {send, chain}));
            continue;
        }
        // Pipelined (see Chunked): the stream's first message's worth (its head) is what the
        // next piece's stream waits for; the rest follows it on the stream.
        const uint64_t head = st.bytes / latencies;
        uint32_t end = m_schedule.AddSend(st.src, st.dst, head, Deps(starts[i]), 1, false);
        m_pipelined.push_back(end);
        if (latencies > 1)
        {
            // The rest follows the head and lands one latency after its last byte. The piece's
            // other latencies run beside its bytes, not after them (pieces in flight hide each
            // other's latencies, as a pipeline's messages do): a chain of its remaining steps,
            // each a latency and a head's time at the pair's nominal rate, taking no bandwidth.
            // The piece is done when both are.
            const uint32_t first = end;
            const uint32_t rest =
                m_schedule.AddSend(st.src, st.dst, st.bytes - head, {first}, 1, false);
            uint32_t hops;
            if (stepS > 0)
            {
                hops = m_schedule.AddLocal(st.dst, (latencies - 1) * stepS, {first});
            }
            else
            {
                const uint32_t chain =
                    m_schedule.AddSend(st.src, st.dst, 0, {first}, latencies - 1, false);
                const double rate = NominalRate(st.src, st.dst);
                hops = rate > 0
                           ? m_schedule.AddLocal(st.dst, (latencies - 1) * head / rate, {chain})
                           : chain;
            }
            if (barrier)
            {
                // The phase's end joins every stream's rest and chain at once.
                ends.push_back(rest);
                ends.push_back(hops);
                continue;
            }
            end = m_schedule.AddLocal(st.dst, 0, {rest, hops});
        }
        ends.push_back(end);
    }
    finish(ends, m_ready);
}

double
ScheduleBuilder::ChainStepS(const std::vector<FluidStream>& streams, uint32_t latencies) const
{
    const CollectiveSchedule::PairTiming& timing = m_planner.GetPairTiming();
    if (latencies < 2 || streams.size() < 2 || !timing)
    {
        return 0;
    }
    double first = -1;
    bool alike = true;
    double sum = 0;
    for (const FluidStream& st : streams)
    {
        const auto [rate, latency] = timing(GetEndpoint(st.src), GetEndpoint(st.dst));
        alike = alike && (first < 0 || latency == first);
        first = latency;
        sum += latency + (rate > 0 ? st.bytes / double(latencies) / rate : 0.0);
    }
    return alike ? 0 : sum / streams.size();
}

double
ScheduleBuilder::NominalRate(uint32_t src, uint32_t dst) const
{
    const NetworkView& view = GetView();
    const uint32_t a = GetEndpoint(src);
    const uint32_t b = GetEndpoint(dst);
    double rate = 0;
    for (uint32_t d = 0; d < view.GetDimensionCount(); ++d)
    {
        if (view.GetCoordinate(a, d) != view.GetCoordinate(b, d))
        {
            const NetworkDimensionSpec& dim = view.GetDimension(d);
            const double r = dim.bandwidthBps * dim.wireEfficiency;
            rate = rate == 0 ? r : std::min(rate, r);
        }
    }
    return rate;
}

CollectiveSchedule
ScheduleBuilder::Messages(const CollectiveAlgorithm& algorithm, const CollectiveCall& call) const
{
    CollectiveSchedule messages(GetRankCount());
    ScheduleBuilder b(messages, m_planner, m_endpoints, m_reduceRate, false);
    algorithm.AddMessages(b, call);
    return messages;
}

void
ScheduleBuilder::FinishFluid()
{
    for (uint32_t r = 0; r < GetRankCount(); ++r)
    {
        m_schedule.AddLocal(r, 0, Deps(m_ready[r]));
    }
}

ScheduleBuilder::Step
ScheduleBuilder::GetReady(uint32_t rank) const
{
    return m_ready[rank];
}

void
ScheduleBuilder::SetReady(uint32_t rank, Step step)
{
    // An algorithm's bookkeeping error would otherwise end the collective at once, silently.
    if (rank >= m_ready.size() || step >= static_cast<Step>(m_schedule.GetSteps().size()))
    {
        throw std::logic_error("schedule builder: SetReady(rank " + std::to_string(rank) + ", step "
                               + std::to_string(step) + ") on " + std::to_string(m_ready.size())
                               + " ranks and " + std::to_string(m_schedule.GetSteps().size())
                               + " steps: a rank of the group and a step already added (or -1)");
    }
    m_ready[rank] = step;
}

DepList
ScheduleBuilder::Deps(Step step)
{
    return step < 0 ? DepList() : DepList{uint32_t(step)};
}

uint32_t
ScheduleBuilder::Send(uint32_t src, uint32_t dst, uint64_t bytes, Step after)
{
    return m_schedule.AddSend(src, dst, bytes, Deps(after));
}

uint32_t
ScheduleBuilder::Send(uint32_t src, uint32_t dst, uint64_t bytes, DepList deps)
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
    return m_schedule.AddReduction(rank, bytes / m_reduceRate, Deps(after));
}

ScheduleBuilder::Step
ScheduleBuilder::Join(uint32_t rank, const std::vector<Step>& steps)
{
    DepList d;
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
                         const std::function<void(uint64_t)>& phase,
                         uint64_t pieceBytes)
{
    if (chunks <= 1)
    {
        phase(bytes);
        return;
    }
    // A fluid form is pipelined like messages, stream by stream: the q-th stream of piece j
    // waits for the head of the q-th stream of piece j-1 (see FluidPhase).
    m_fluidChunks = chunks;
    const uint32_t ranks = GetRankCount();
    const std::vector<Step> initial = m_ready;
    std::vector<std::vector<Step>> finals(ranks);
    std::vector<uint32_t> previous;
    // Whole pieces and a shorter last one where chunks of pieceBytes hold the bytes.
    const bool whole = pieceBytes > 0 && bytes > 0 && (bytes - 1) / pieceBytes + 1 == chunks;
    for (uint32_t j = 0; j < chunks; ++j)
    {
        m_ready = initial;
        const auto mark = static_cast<uint32_t>(m_schedule.GetSteps().size());
        m_pipelined.clear();
        m_unpaired = false;
        phase(whole ? std::min(pieceBytes, bytes - j * pieceBytes) : Split(bytes, chunks, j));
        std::vector<uint32_t> sends;
        // A fluid piece pairs its streams' heads (its in-order streams under a message floor
        // follow each other on their connections instead); messages written as they are (an
        // algorithm whose fluid form is its messages) pair as messages.
        sends.swap(m_pipelined);
        const bool streams = !sends.empty() || m_unpaired;
        for (uint32_t i = mark; i < m_schedule.GetSteps().size() && !streams; ++i)
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
    m_fluidChunks = 1;
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

std::vector<uint32_t>
ScheduleBuilder::GetEndpoints(const std::vector<uint32_t>& ranks) const
{
    std::vector<uint32_t> endpoints;
    endpoints.reserve(ranks.size());
    for (uint32_t r : ranks)
    {
        endpoints.push_back(m_endpoints[r]);
    }
    return endpoints;
}

const CollectiveAlgorithm&
ScheduleBuilder::GetDimensionAlgorithm(uint32_t d, CollectiveOp op, uint32_t ranks) const
{
    return m_planner.GetDimensionAlgorithm(d, op, ranks);
}

const std::string&
ScheduleBuilder::GetDimensionAlgorithmName(uint32_t d, CollectiveOp op, uint32_t ranks) const
{
    return m_planner.DimensionChoice(d, op, ranks);
}

uint64_t
ScheduleBuilder::Split(uint64_t s, uint64_t k, uint64_t i)
{
    return s / k + (i < s % k ? 1 : 0);
}

} // namespace rapidllm
} // namespace ns3
