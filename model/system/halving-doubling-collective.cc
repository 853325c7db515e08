/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "halving-doubling-collective.h"

#include "ns3/log.h"

namespace ns3 {
namespace rapidllm {

NS_LOG_COMPONENT_DEFINE("RapidLlmHalvingDoublingCollective");
NS_OBJECT_ENSURE_REGISTERED(HalvingDoublingCollective);

static TypeRegistrar<CollectiveAlgorithm> g_halvingDoubling("halving-doubling",
                                                            HalvingDoublingCollective::GetTypeId());

namespace {
/** \return true if n is a power of two */
bool
IsPowerOfTwo(uint32_t n)
{
    return n > 0 && (n & (n - 1)) == 0;
}
} // namespace

TypeId
HalvingDoublingCollective::GetTypeId()
{
    static TypeId tid = TypeId("ns3::rapidllm::HalvingDoublingCollective")
                            .SetParent<CollectiveAlgorithm>()
                            .SetGroupName("RapidLlm")
                            .AddConstructor<HalvingDoublingCollective>();
    return tid;
}

bool
HalvingDoublingCollective::Supports(CollectiveOp op, uint32_t ranks, std::string& why) const
{
    if (op != CollectiveOp::ALL_REDUCE && op != CollectiveOp::REDUCE_SCATTER
        && op != CollectiveOp::ALL_GATHER)
    {
        why =
            "halving-doubling runs all-reduce, reduce-scatter and all-gather, not " + ToString(op);
        return false;
    }
    if (!IsPowerOfTwo(ranks) && op != CollectiveOp::ALL_REDUCE)
    {
        why = "halving-doubling " + ToString(op) + " needs a power-of-two group, got "
              + std::to_string(ranks) + " ranks; use ring or direct";
        return false;
    }
    return true;
}

void
HalvingDoublingCollective::AddMessages(ScheduleBuilder& b, const CollectiveCall& call) const
{
    NS_LOG_LOGIC("halving-doubling " << ToString(call.op) << " of " << call.bytes << " B among "
                                     << call.members.size() << " ranks");
    const std::vector<uint32_t>& m = call.members;
    const uint64_t s = call.bytes;
    const auto k = static_cast<uint32_t>(m.size());
    Check(call.op, k, "algorithm");
    if (call.op == CollectiveOp::ALL_REDUCE && !IsPowerOfTwo(k))
    {
        // Rabenseifner's fold for k = p + r ranks (p a power of two): the first 2r ranks pair
        // up, the odd one of each pair hands its whole buffer to the even one, the p remaining
        // ranks run halving-doubling, and the even ranks hand the result back.
        uint32_t p = 1;
        while (p * 2 <= k)
        {
            p *= 2;
        }
        const uint32_t r = k - p;
        std::vector<uint32_t> active;
        for (uint32_t i = 0; i < r; ++i)
        {
            uint32_t send = b.Send(m[2 * i + 1], m[2 * i], s, b.GetReady(m[2 * i + 1]));
            b.SetReady(
                m[2 * i],
                b.Reduce(m[2 * i],
                         s,
                         b.Join(m[2 * i], {ScheduleBuilder::Step(send), b.GetReady(m[2 * i])})));
            active.push_back(m[2 * i]);
        }
        for (uint32_t i = 2 * r; i < k; ++i)
        {
            active.push_back(m[i]);
        }
        AddRecursive(b, active, s, true);
        AddRecursive(b, active, s, false);
        for (uint32_t i = 0; i < r; ++i)
        {
            b.SetReady(m[2 * i + 1], b.Send(m[2 * i], m[2 * i + 1], s, b.GetReady(m[2 * i])));
        }
        return;
    }
    if (call.op != CollectiveOp::ALL_GATHER)
    {
        AddRecursive(b, m, s, true);
    }
    if (call.op != CollectiveOp::REDUCE_SCATTER)
    {
        AddRecursive(b, m, s, false);
    }
}

uint64_t
HalvingDoublingCollective::CountMessages(const ScheduleBuilder& b, const CollectiveCall& call) const
{
    const auto k = static_cast<uint32_t>(call.members.size());
    if (k < 2)
    {
        return 0;
    }
    // p ranks recurse over log2(p) rounds, every one sending once per round and pass; the
    // r = k - p others hand their buffer in and get the result back (Rabenseifner's fold).
    uint64_t p = 1;
    uint64_t rounds = 0;
    while (p * 2 <= k)
    {
        p *= 2;
        ++rounds;
    }
    const uint64_t passes = call.op == CollectiveOp::ALL_REDUCE ? 2 : 1;
    return passes * p * rounds + 2 * (k - p);
}

void
HalvingDoublingCollective::AddFluid(ScheduleBuilder& b, const CollectiveCall& call) const
{
    // One message per rank and step is already what a fluid form would keep: merging a
    // rank's steps into concurrent streams would give it log2 n flows where its messages hold
    // one at a time, a larger max-min share against other traffic than it has.
    AddMessages(b, call);
}

void
HalvingDoublingCollective::AddRecursive(ScheduleBuilder& b,
                                        const std::vector<uint32_t>& m,
                                        uint64_t s,
                                        bool reduce)
{
    const auto k = static_cast<uint32_t>(m.size());
    if (k < 2)
    {
        return;
    }
    uint32_t steps = 0;
    while ((1u << steps) < k)
    {
        ++steps;
    }
    std::vector<ScheduleBuilder::Step> cur(k);
    for (uint32_t i = 0; i < k; ++i)
    {
        cur[i] = b.GetReady(m[i]);
    }
    for (uint32_t t = 0; t < steps; ++t)
    {
        // Halving: distance k/2, k/4, ..., data S/2, S/4, ...; doubling: the reverse.
        uint32_t distance = reduce ? k >> (t + 1) : 1u << t;
        uint64_t parts = reduce ? (uint64_t(1) << (t + 1)) : k / (uint64_t(1) << t);
        uint64_t bytes = (s + parts - 1) / parts;
        std::vector<ScheduleBuilder::Step> next(k);
        for (uint32_t i = 0; i < k; ++i)
        {
            uint32_t partner = i ^ distance;
            uint32_t send = b.Send(m[i], m[partner], bytes, cur[i]);
            next[partner] =
                reduce ? b.Reduce(m[partner], bytes, send) : ScheduleBuilder::Step(send);
        }
        cur = next;
    }
    for (uint32_t i = 0; i < k; ++i)
    {
        b.SetReady(m[i], cur[i]);
    }
}

} // namespace rapidllm
} // namespace ns3
