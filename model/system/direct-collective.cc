/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "direct-collective.h"

#include "ns3/log.h"

#include <algorithm>

namespace ns3 {
namespace rapidllm {

NS_LOG_COMPONENT_DEFINE("RapidLlmDirectCollective");
NS_OBJECT_ENSURE_REGISTERED(DirectCollective);

static TypeRegistrar<CollectiveAlgorithm> g_direct("direct", DirectCollective::GetTypeId());

TypeId
DirectCollective::GetTypeId()
{
    static TypeId tid = TypeId("ns3::rapidllm::DirectCollective")
                            .SetParent<CollectiveAlgorithm>()
                            .SetGroupName("RapidLlm")
                            .AddConstructor<DirectCollective>();
    return tid;
}

bool
DirectCollective::Supports(CollectiveOp op, uint32_t ranks, std::string& why) const
{
    if (op == CollectiveOp::SEND_RECV)
    {
        why = "direct runs all-reduce, reduce-scatter, all-gather, all-to-all, broadcast and "
              "reduce, not send-recv";
        return false;
    }
    return true;
}

void
DirectCollective::AddMessages(ScheduleBuilder& b, const CollectiveCall& call) const
{
    NS_LOG_LOGIC("direct " << ToString(call.op) << " of " << call.bytes << " B among "
                           << call.members.size() << " ranks");
    switch (call.op)
    {
        case CollectiveOp::ALL_REDUCE:
            AddPairwise(b, call.members, call.bytes, CollectiveOp::REDUCE_SCATTER);
            AddPairwise(b, call.members, call.bytes, CollectiveOp::ALL_GATHER);
            return;
        case CollectiveOp::BROADCAST:
            AddStar(b, call.members, call.root, call.bytes, false);
            return;
        case CollectiveOp::REDUCE:
            AddStar(b, call.members, call.root, call.bytes, true);
            return;
        case CollectiveOp::REDUCE_SCATTER:
        case CollectiveOp::ALL_GATHER:
        case CollectiveOp::ALL_TO_ALL:
            AddPairwise(b, call.members, call.bytes, call.op);
            return;
        case CollectiveOp::SEND_RECV:
            break;
    }
    Check(call.op, static_cast<uint32_t>(call.members.size()), "algorithm");
}

uint64_t
DirectCollective::CountMessages(const ScheduleBuilder& b, const CollectiveCall& call) const
{
    const uint64_t k = call.members.size();
    if (k < 2)
    {
        return 0;
    }
    switch (call.op)
    {
        case CollectiveOp::ALL_REDUCE:
            return 2 * k * (k - 1); // a pairwise reduce-scatter, then a pairwise all-gather
        case CollectiveOp::REDUCE_SCATTER:
        case CollectiveOp::ALL_GATHER:
        case CollectiveOp::ALL_TO_ALL:
            return k * (k - 1);
        case CollectiveOp::BROADCAST:
        case CollectiveOp::REDUCE:
            return k - 1; // a star around the root
        case CollectiveOp::SEND_RECV:
            break;
    }
    return 0;
}

void
DirectCollective::AddFluid(ScheduleBuilder& b, const CollectiveCall& call) const
{
    const std::vector<uint32_t>& m = call.members;
    const auto k = static_cast<uint32_t>(m.size());
    const uint64_t s = call.bytes;
    auto pairwise = [&](CollectiveOp op)
    {
        // A stream per ordered pair, each a step: refused before the list is built (100,000
        // ranks grew to 19 GB first).
        CollectiveSchedule::CheckPlannedSize(uint64_t(k) * (k - 1), 1, k);
        std::vector<FluidStream> streams;
        streams.reserve(uint64_t(k) * (k - 1));
        uint64_t largest = 0;
        for (uint32_t i = 0; i < k; ++i)
        {
            for (uint32_t j = 0; j < k; ++j)
            {
                if (i != j)
                {
                    const uint64_t bytes =
                        ScheduleBuilder::Split(s, k, op == CollectiveOp::ALL_GATHER ? i : j);
                    largest = std::max(largest, bytes);
                    streams.push_back({m[i], m[j], bytes});
                }
            }
        }
        const double localS =
            op == CollectiveOp::REDUCE_SCATTER ? b.ReduceSeconds((k - 1) * largest) : 0.0;
        b.FluidPhase(m, streams, 1, localS);
    };
    auto star = [&](bool reduce)
    {
        std::vector<FluidStream> streams;
        for (uint32_t i = 0; i < k; ++i)
        {
            if (i != call.root)
            {
                streams.push_back(reduce ? FluidStream{m[i], m[call.root], s}
                                         : FluidStream{m[call.root], m[i], s});
            }
        }
        b.FluidPhase(m, streams, 1, reduce ? b.ReduceSeconds(s) : 0.0);
    };
    switch (call.op)
    {
        case CollectiveOp::ALL_REDUCE:
            pairwise(CollectiveOp::REDUCE_SCATTER);
            pairwise(CollectiveOp::ALL_GATHER);
            return;
        case CollectiveOp::BROADCAST:
            star(false);
            return;
        case CollectiveOp::REDUCE:
            star(true);
            return;
        case CollectiveOp::REDUCE_SCATTER:
        case CollectiveOp::ALL_GATHER:
        case CollectiveOp::ALL_TO_ALL:
            pairwise(call.op);
            return;
        case CollectiveOp::SEND_RECV:
            break;
    }
    Check(call.op, k, "algorithm");
}

std::vector<uint32_t>
DirectCollective::PeerDeltas(uint32_t k)
{
    // NCCL's p2p schedule (ncclP2pSchedule, src/init.cc): round r pairs every rank with the
    // peer delta(r) ahead, delta(r) = r (r + 1) / 2 modulo the next power of two, skipping the
    // deltas past the group; the triangular numbers modulo a power of two are a permutation.
    uint32_t pow2 = 1;
    while (pow2 < k)
    {
        pow2 <<= 1;
    }
    std::vector<uint32_t> deltas;
    uint32_t delta = 0;
    for (uint32_t round = 0; round < pow2; ++round)
    {
        if (delta > 0 && delta < k)
        {
            deltas.push_back(delta);
        }
        delta = (delta + round + 1) & (pow2 - 1);
    }
    return deltas;
}

void
DirectCollective::AddPairwise(ScheduleBuilder& b,
                              const std::vector<uint32_t>& m,
                              uint64_t s,
                              CollectiveOp op)
{
    const auto k = static_cast<uint32_t>(m.size());
    if (k < 2)
    {
        return;
    }
    std::vector<std::vector<ScheduleBuilder::Step>> received(k);
    const std::vector<uint32_t> deltas = PeerDeltas(k);
    for (uint32_t i = 0; i < k; ++i)
    {
        // In NCCL's round order: no two senders start with the same receiver.
        for (uint32_t delta : deltas)
        {
            const uint32_t j = (i + delta) % k;
            // Reduce-scatter and all-to-all send block j to rank j; all-gather sends the
            // sender's own block.
            uint64_t bytes = ScheduleBuilder::Split(s, k, op == CollectiveOp::ALL_GATHER ? i : j);
            received[j].push_back(b.Send(m[i], m[j], bytes, b.GetReady(m[i])));
        }
    }
    for (uint32_t j = 0; j < k; ++j)
    {
        ScheduleBuilder::Step done = b.Join(m[j], received[j]);
        if (op == CollectiveOp::REDUCE_SCATTER)
        {
            done = b.Reduce(m[j], (k - 1) * ScheduleBuilder::Split(s, k, j), done);
        }
        b.SetReady(m[j], done);
    }
}

void
DirectCollective::AddStar(
    ScheduleBuilder& b, const std::vector<uint32_t>& m, uint32_t root, uint64_t s, bool reduce)
{
    const auto k = static_cast<uint32_t>(m.size());
    std::vector<ScheduleBuilder::Step> received;
    for (uint32_t i = 0; i < k; ++i)
    {
        if (i == root)
        {
            continue;
        }
        if (reduce)
        {
            uint32_t send = b.Send(m[i], m[root], s, b.GetReady(m[i]));
            received.push_back(b.Reduce(m[root], s, send));
        }
        else
        {
            b.SetReady(m[i], b.Send(m[root], m[i], s, b.GetReady(m[root])));
        }
    }
    if (reduce)
    {
        received.push_back(b.GetReady(m[root]));
        b.SetReady(m[root], b.Join(m[root], received));
    }
}

} // namespace rapidllm
} // namespace ns3
