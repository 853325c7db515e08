/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "double-binary-tree-collective.h"

#include "ns3/log.h"

#include <algorithm>

namespace ns3 {
namespace rapidllm {

namespace {
/** A pipelined tree's piece (PipelineChunks' unit). */
constexpr uint64_t kPiece = uint64_t(1) << 20;
/** Its most pieces. */
constexpr uint64_t kMostPieces = 64;
} // namespace

NS_LOG_COMPONENT_DEFINE("RapidLlmDoubleBinaryTreeCollective");
NS_OBJECT_ENSURE_REGISTERED(DoubleBinaryTreeCollective);

static TypeRegistrar<CollectiveAlgorithm> g_doubleBinaryTree(
    "double-binary-tree", DoubleBinaryTreeCollective::GetTypeId());

namespace {
/**
 * \return the parent of each position in both trees (-1: the root). Tree 0 over positions:
 * node p's parent clears its lowest set bit and sets the next (an in-order tree by trailing
 * zeros), or just clears it when that leaves the range; position 0 is the root. Tree 1:
 * mirrored positions (even k) or shifted by one (odd k), as NCCL does.
 */
std::vector<std::vector<int64_t>>
Parents(uint32_t k)
{
    std::vector<int64_t> parent0(k, -1);
    for (uint32_t p = 1; p < k; ++p)
    {
        uint32_t low = p & (~p + 1);
        uint32_t up = (p ^ low) | (low << 1);
        parent0[p] = up < k ? up : (p ^ low);
    }
    auto toPos1 = [k](uint32_t r)
    {
        return k % 2 == 0 ? k - 1 - r : (r + k - 1) % k;
    };
    auto fromPos1 = [k](uint32_t p)
    {
        return k % 2 == 0 ? k - 1 - p : (p + 1) % k;
    };
    std::vector<std::vector<int64_t>> parents(2, std::vector<int64_t>(k, -1));
    for (int tree = 0; tree < 2; ++tree)
    {
        for (uint32_t r = 0; r < k; ++r)
        {
            uint32_t p = tree == 0 ? r : toPos1(r);
            if (parent0[p] >= 0)
            {
                parents[tree][r] = tree == 0 ? parent0[p] : fromPos1(uint32_t(parent0[p]));
            }
        }
    }
    return parents;
}

/** \return each member's depth in a tree given by its parents */
std::vector<uint32_t>
Depths(const std::vector<int64_t>& parent)
{
    std::vector<uint32_t> depth(parent.size(), 0);
    for (uint32_t r = 0; r < parent.size(); ++r)
    {
        for (int64_t x = parent[r]; x >= 0; x = parent[x])
        {
            ++depth[r];
        }
    }
    return depth;
}
} // namespace

TypeId
DoubleBinaryTreeCollective::GetTypeId()
{
    static TypeId tid = TypeId("ns3::rapidllm::DoubleBinaryTreeCollective")
                            .SetParent<CollectiveAlgorithm>()
                            .SetGroupName("RapidLlm")
                            .AddConstructor<DoubleBinaryTreeCollective>();
    return tid;
}

bool
DoubleBinaryTreeCollective::Supports(CollectiveOp op, uint32_t ranks, std::string& why) const
{
    if (op != CollectiveOp::ALL_REDUCE)
    {
        why = "double-binary-tree runs all-reduce only, not " + ToString(op);
        return false;
    }
    return true;
}

uint32_t
DoubleBinaryTreeCollective::GetDefaultChunks(CollectiveOp op, uint64_t bytes) const
{
    // A tree only pays off pipelined: whole pieces of 1 MiB and a shorter last one
    // (GetPieceBytes), at most 64. Equal pieces, one per whole MiB, took 2 MiB - 1 B in one
    // piece, 49% longer than 2 MiB in two (16 H100s: 123.5 against 83.1 us).
    return WholePieces(bytes, kPiece, kMostPieces);
}

uint64_t
DoubleBinaryTreeCollective::GetPieceBytes(CollectiveOp op, uint64_t bytes) const
{
    return WholePieceBytes(bytes, kPiece, kMostPieces);
}

void
DoubleBinaryTreeCollective::AddMessages(ScheduleBuilder& b, const CollectiveCall& call) const
{
    const std::vector<uint32_t>& m = call.members;
    const uint64_t s = call.bytes;
    const auto k = static_cast<uint32_t>(m.size());
    NS_LOG_LOGIC("double-binary-tree " << ToString(call.op) << " of " << s << " B among " << k
                                       << " ranks");
    Check(call.op, k, "algorithm");
    if (k < 2)
    {
        return;
    }
    const std::vector<std::vector<int64_t>> parents = Parents(k);
    std::vector<ScheduleBuilder::Step> finals[2];
    for (int tree = 0; tree < 2; ++tree)
    {
        const std::vector<int64_t>& parent = parents[tree];
        const std::vector<uint32_t> depth = Depths(parent);
        std::vector<uint32_t> order(k);
        for (uint32_t r = 0; r < k; ++r)
        {
            order[r] = r;
        }
        std::stable_sort(order.begin(),
                         order.end(),
                         [&](uint32_t a, uint32_t c)
                         {
                             return depth[a] > depth[c];
                         });
        uint64_t bytes = tree == 0 ? s / 2 : s - s / 2;
        // The two trees run on channels of their own (NCCL: a connection per tree and peer),
        // so their messages on one pair do not wait for each other; within a tree, a piece's
        // message on an edge already waits for the previous piece's there (Chunked), so none
        // needs its connection's order (unordered: ScheduleBuilder::Send orders).
        auto send = [&b](uint32_t from, uint32_t to, uint64_t n, ScheduleBuilder::Step after)
        {
            return b.GetSchedule().AddSend(from, to, n, ScheduleBuilder::Deps(after), 1, false);
        };
        // Reduce up: deepest first, each after its children's data arrived and was summed.
        std::vector<std::vector<ScheduleBuilder::Step>> fromChildren(k);
        std::vector<ScheduleBuilder::Step> reduced(k, ScheduleBuilder::kNone);
        for (uint32_t r : order)
        {
            std::vector<ScheduleBuilder::Step> deps = fromChildren[r];
            deps.push_back(b.GetReady(m[r]));
            reduced[r] = b.Join(m[r], deps);
            if (parent[r] >= 0)
            {
                const uint32_t up = send(m[r], m[parent[r]], bytes, reduced[r]);
                fromChildren[parent[r]].push_back(b.Reduce(m[parent[r]], bytes, up));
            }
        }
        // Broadcast down: shallowest first.
        std::vector<ScheduleBuilder::Step> have(k, ScheduleBuilder::kNone);
        for (auto it = order.rbegin(); it != order.rend(); ++it)
        {
            uint32_t r = *it;
            if (parent[r] < 0)
            {
                have[r] = reduced[r];
            }
            else
            {
                have[r] = send(m[parent[r]], m[r], bytes, have[parent[r]]);
            }
        }
        finals[tree] = have;
    }
    for (uint32_t r = 0; r < k; ++r)
    {
        b.SetReady(m[r], b.Join(m[r], {finals[0][r], finals[1][r]}));
    }
}

uint64_t
DoubleBinaryTreeCollective::CountMessages(const ScheduleBuilder& b,
                                          const CollectiveCall& call) const
{
    const uint64_t k = call.members.size();
    // Per tree, every rank but the root sends up once and receives down once.
    return k < 2 ? 0 : 4 * (k - 1);
}

void
DoubleBinaryTreeCollective::AddFluid(ScheduleBuilder& b, const CollectiveCall& call) const
{
    const std::vector<uint32_t>& m = call.members;
    const uint64_t s = call.bytes;
    const auto k = static_cast<uint32_t>(m.size());
    Check(call.op, k, "algorithm");
    if (k < 2)
    {
        return;
    }
    const std::vector<std::vector<int64_t>> parents = Parents(k);
    std::vector<uint32_t> depths[2];
    uint32_t levels = 0;
    for (int tree = 0; tree < 2; ++tree)
    {
        depths[tree] = Depths(parents[tree]);
        levels = std::max(levels, *std::max_element(depths[tree].begin(), depths[tree].end()));
    }
    const uint64_t half[2] = {s / 2, s - s / 2};
    // The edges whose child sits at depth d, of both trees, as one phase: upward (reduce)
    // or downward (broadcast).
    auto level = [&](uint32_t d, bool up)
    {
        std::vector<FluidStream> streams;
        std::vector<uint32_t> members;
        for (int tree = 0; tree < 2; ++tree)
        {
            for (uint32_t r = 0; r < k; ++r)
            {
                if (parents[tree][r] >= 0 && depths[tree][r] == d)
                {
                    const uint32_t child = m[r];
                    const uint32_t parent = m[parents[tree][r]];
                    streams.push_back(up ? FluidStream{child, parent, half[tree]}
                                         : FluidStream{parent, child, half[tree]});
                    members.push_back(child);
                    members.push_back(parent);
                }
            }
        }
        std::sort(members.begin(), members.end());
        members.erase(std::unique(members.begin(), members.end()), members.end());
        b.FluidPhase(members, streams, 1, up ? b.ReduceSeconds(half[1]) : 0.0);
    };
    for (uint32_t d = levels; d >= 1; --d)
    {
        level(d, true);
    }
    for (uint32_t d = 1; d <= levels; ++d)
    {
        level(d, false);
    }
    // Members that no phase touched keep their readiness; the others end with the last phase.
}

} // namespace rapidllm
} // namespace ns3
