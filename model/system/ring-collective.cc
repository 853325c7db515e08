/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "ring-collective.h"

#include "ns3/log.h"

#include <cmath>

namespace ns3 {
namespace rapidllm {

namespace {
/** \return the data of \p bytes on the wire that a reduction works on (share \p reduced) */
uint64_t
ReducedBytes(double reduced, uint64_t bytes)
{
    return static_cast<uint64_t>(std::llround(reduced * double(bytes)));
}
} // namespace

NS_LOG_COMPONENT_DEFINE("RapidLlmRingCollective");
NS_OBJECT_ENSURE_REGISTERED(RingCollective);

static TypeRegistrar<CollectiveAlgorithm> g_ring("ring", RingCollective::GetTypeId());

TypeId
RingCollective::GetTypeId()
{
    static TypeId tid = TypeId("ns3::rapidllm::RingCollective")
                            .SetParent<CollectiveAlgorithm>()
                            .SetGroupName("RapidLlm")
                            .AddConstructor<RingCollective>();
    return tid;
}

bool
RingCollective::Supports(CollectiveOp op, uint32_t ranks, std::string& why) const
{
    switch (op)
    {
        case CollectiveOp::ALL_REDUCE:
        case CollectiveOp::REDUCE_SCATTER:
        case CollectiveOp::ALL_GATHER:
        case CollectiveOp::BROADCAST:
        case CollectiveOp::REDUCE:
            return true;
        case CollectiveOp::ALL_TO_ALL:
            why = "a ring does not run all-to-all: direct or nccl do";
            return false;
        case CollectiveOp::SEND_RECV:
            break;
    }
    why = "ring runs all-reduce, reduce-scatter, all-gather, broadcast and reduce, not "
          + ToString(op);
    return false;
}

uint32_t
RingCollective::GetDefaultChunks(CollectiveOp op, uint64_t bytes) const
{
    // A chain only pays off pipelined.
    return op == CollectiveOp::BROADCAST || op == CollectiveOp::REDUCE ? ChainChunks(bytes) : 1;
}

uint64_t
RingCollective::GetPieceBytes(CollectiveOp op, uint64_t bytes) const
{
    return op == CollectiveOp::BROADCAST || op == CollectiveOp::REDUCE ? ChainPieceBytes(bytes) : 0;
}

void
RingCollective::AddMessages(ScheduleBuilder& b, const CollectiveCall& call) const
{
    NS_LOG_LOGIC("ring " << ToString(call.op) << " of " << call.bytes << " B among "
                         << call.members.size() << " ranks");
    switch (call.op)
    {
        case CollectiveOp::ALL_REDUCE:
        {
            // One ordered connection per neighbour carries both passes (NCCL's ring all-reduce
            // is one loop of 2(n-1) sends to the next rank: all_reduce.h, runRing).
            AddPass(b, call.members, call.bytes, true);
            AddPass(b, call.members, call.bytes, false);
            return;
        }
        case CollectiveOp::REDUCE_SCATTER:
            AddPass(b, call.members, call.bytes, true);
            return;
        case CollectiveOp::ALL_GATHER:
            AddPass(b, call.members, call.bytes, false);
            return;
        case CollectiveOp::BROADCAST:
            AddChain(b, call.members, call.root, call.bytes, false);
            return;
        case CollectiveOp::REDUCE:
            AddChain(b, call.members, call.root, call.bytes, true);
            return;
        case CollectiveOp::ALL_TO_ALL:
        case CollectiveOp::SEND_RECV:
            break;
    }
    Check(call.op, static_cast<uint32_t>(call.members.size()), "algorithm");
}

uint64_t
RingCollective::CountMessages(const ScheduleBuilder& b, const CollectiveCall& call) const
{
    const uint64_t k = call.members.size();
    if (k < 2)
    {
        return 0;
    }
    switch (call.op)
    {
        case CollectiveOp::ALL_REDUCE:
            return 2 * k * (k - 1); // two passes of k - 1 steps, every member sending
        case CollectiveOp::REDUCE_SCATTER:
        case CollectiveOp::ALL_GATHER:
            return k * (k - 1);
        case CollectiveOp::BROADCAST:
        case CollectiveOp::REDUCE:
            return k - 1; // one chain
        case CollectiveOp::ALL_TO_ALL:
        case CollectiveOp::SEND_RECV:
            break;
    }
    return 0;
}

void
RingCollective::AddFluid(ScheduleBuilder& b, const CollectiveCall& call) const
{
    const std::vector<uint32_t>& m = call.members;
    const auto k = static_cast<uint32_t>(m.size());
    switch (call.op)
    {
        case CollectiveOp::ALL_REDUCE:
            AddFluidPasses(b, m, call.bytes, 2, true);
            return;
        case CollectiveOp::REDUCE_SCATTER:
            AddFluidPasses(b, m, call.bytes, 1, true);
            return;
        case CollectiveOp::ALL_GATHER:
            AddFluidPasses(b, m, call.bytes, 1, false);
            return;
        case CollectiveOp::BROADCAST:
            // One phase per hop, outward from the root.
            for (uint32_t i = 1; i < k; ++i)
            {
                const uint32_t from = m[(call.root + i - 1) % k];
                const uint32_t to = m[(call.root + i) % k];
                b.FluidPhase({from, to}, {{from, to, call.bytes}}, 1);
            }
            return;
        case CollectiveOp::REDUCE:
            // One phase per hop, from the far end toward the root.
            for (uint32_t i = k - 1; i >= 1; --i)
            {
                const uint32_t from = m[(call.root + i) % k];
                const uint32_t to = m[(call.root + i - 1) % k];
                b.FluidPhase({from, to}, {{from, to, call.bytes}}, 1, b.ReduceSeconds(call.bytes));
            }
            return;
        case CollectiveOp::ALL_TO_ALL:
        case CollectiveOp::SEND_RECV:
            break;
    }
    Check(call.op, k, "algorithm");
}

void
RingCollective::AddFluidPasses(
    ScheduleBuilder& b, const std::vector<uint32_t>& m, uint64_t s, uint32_t passes, double reduced)
{
    const auto k = static_cast<uint32_t>(m.size());
    if (k < 2)
    {
        return;
    }
    // Member i sends every block but block i+1 around a pass (see AddPass); the passes' streams
    // of one edge are one stream (a ring moves at the pace of its slowest edge, every step
    // waiting for the last, so the edges' streams end together as the passes' steps do).
    std::vector<FluidStream> streams;
    streams.reserve(k);
    for (uint32_t i = 0; i < k; ++i)
    {
        streams.push_back(
            {m[i], m[(i + 1) % k], passes * (s - ScheduleBuilder::Split(s, k, (i + 1) % k))});
    }
    // A reduce-scatter pass reduces k-1 blocks in turn on every member.
    const double localS =
        reduced > 0
            ? b.ReduceSeconds(ReducedBytes(reduced, (k - 1) * ScheduleBuilder::Split(s, k, 0)))
            : 0.0;
    b.FluidPhase(m, streams, passes * (k - 1), localS);
}

void
RingCollective::AddPass(ScheduleBuilder& b,
                        const std::vector<uint32_t>& m,
                        uint64_t s,
                        double reduced)
{
    const auto k = static_cast<uint32_t>(m.size());
    if (k < 2)
    {
        return;
    }
    std::vector<ScheduleBuilder::Step> cur(k);
    for (uint32_t i = 0; i < k; ++i)
    {
        cur[i] = b.GetReady(m[i]);
    }
    // A step waits only for what the member received in the step before. Its messages to
    // the neighbour go through one ordered connection (as NCCL's per-peer FIFO), so several
    // can be in flight, each starting when the one before has left (NCCL keeps up to
    // NCCL_STEPS = 8 slots per peer): an edge slower than the rest queues its steps instead
    // of idling a latency per step.
    for (uint32_t step = 0; step + 1 < k; ++step)
    {
        std::vector<ScheduleBuilder::Step> next(k);
        for (uint32_t i = 0; i < k; ++i)
        {
            uint32_t to = (i + 1) % k;
            uint64_t bytes = ScheduleBuilder::Split(s, k, (i + k - step) % k);
            uint32_t send = b.Send(m[i], m[to], bytes, cur[i]);
            next[to] = reduced > 0 ? b.Reduce(m[to], ReducedBytes(reduced, bytes), send)
                                   : ScheduleBuilder::Step(send);
        }
        cur = next;
    }
    for (uint32_t i = 0; i < k; ++i)
    {
        b.SetReady(m[i], cur[i]);
    }
}

void
RingCollective::AddChain(
    ScheduleBuilder& b, const std::vector<uint32_t>& m, uint32_t root, uint64_t s, double reduced)
{
    const auto k = static_cast<uint32_t>(m.size());
    if (k < 2)
    {
        return;
    }
    if (reduced <= 0)
    {
        ScheduleBuilder::Step have = b.GetReady(m[root]);
        for (uint32_t i = 1; i < k; ++i)
        {
            uint32_t from = m[(root + i - 1) % k];
            uint32_t to = m[(root + i) % k];
            uint32_t send = b.Send(from, to, s, b.Join(from, {have, b.GetReady(from)}));
            have = b.Join(to, {ScheduleBuilder::Step(send), b.GetReady(to)});
            b.SetReady(to, have);
        }
    }
    else
    {
        // Reduce toward the root: the rank farthest downstream starts.
        ScheduleBuilder::Step have = ScheduleBuilder::kNone;
        for (uint32_t i = k - 1; i >= 1; --i)
        {
            uint32_t from = m[(root + i) % k];
            uint32_t to = m[(root + i - 1) % k];
            uint32_t send = b.Send(from, to, s, b.Join(from, {have, b.GetReady(from)}));
            have = b.Reduce(to, ReducedBytes(reduced, s), send);
            b.SetReady(to, have);
        }
    }
}

void
RingCollective::AddCutThroughChain(
    ScheduleBuilder& b, const std::vector<uint32_t>& m, uint32_t root, uint64_t s, double reduced)
{
    const auto k = static_cast<uint32_t>(m.size());
    if (k < 2)
    {
        return;
    }
    // Hop i runs from member at(i - 1) to at(i): outward from the root for a broadcast, from
    // the far end toward it for a reduce.
    const bool reduce = reduced > 0;
    auto at = [&](uint32_t i)
    {
        return reduce ? m[(root + 2 * k - 1 - i) % k] : m[(root + i) % k];
    };
    // A hop's bytes need no connection order: each ring is a channel of its own (NCCL: a
    // connection per channel and peer), so they do not queue behind another ring's on a pair,
    // and a piece's bytes on a hop already wait for the previous piece's there (Chunked). Its
    // first line, zero bytes, keeps the order (it queues behind no bytes, only first lines).
    auto send = [&b](uint32_t from, uint32_t to, uint64_t n, ScheduleBuilder::Step after)
    {
        return b.GetSchedule().AddSend(from, to, n, ScheduleBuilder::Deps(after), 1, n == 0);
    };
    // Each member's readiness before the chain (a hop's sender forwards once ready itself).
    std::vector<ScheduleBuilder::Step> ready(k);
    for (uint32_t i = 0; i < k; ++i)
    {
        ready[i] = b.GetReady(at(i));
    }
    // The first line's arrival at the next hop's sender (it forwards from then on), and the
    // step after which that sender holds all its bytes (reduced with its own for a reduce).
    ScheduleBuilder::Step first = ready[0];
    ScheduleBuilder::Step whole = first;
    for (uint32_t i = 1; i < k; ++i)
    {
        const uint32_t from = at(i - 1);
        const uint32_t to = at(i);
        const ScheduleBuilder::Step start = b.Join(from, {first, ready[i - 1]});
        const uint32_t head = send(from, to, 0, start);
        const uint32_t body = send(from, to, s, start);
        first = b.Join(to, {ScheduleBuilder::Step(head), ready[i]});
        const ScheduleBuilder::Step got =
            reduce ? b.Reduce(to, ReducedBytes(reduced, s), ScheduleBuilder::Step(body))
                   : ScheduleBuilder::Step(body);
        whole = b.Join(to, {got, whole, ready[i]});
        b.SetReady(to, whole);
    }
}

} // namespace rapidllm
} // namespace ns3
