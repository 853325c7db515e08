/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "collective-algorithm.h"

#include "ns3/spec-error.h"

#include <algorithm>
#include <map>

namespace ns3 {
namespace rapidllm {

NS_OBJECT_ENSURE_REGISTERED(CollectiveAlgorithm);

TypeId
CollectiveAlgorithm::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::rapidllm::CollectiveAlgorithm").SetParent<Object>().SetGroupName("RapidLlm");
    return tid;
}

CollectiveAlgorithm::CollectiveAlgorithm() = default;
CollectiveAlgorithm::~CollectiveAlgorithm() = default;

void
CollectiveAlgorithm::Check(CollectiveOp op, uint32_t ranks, const std::string& field) const
{
    std::string why;
    if (!Supports(op, ranks, why))
    {
        throw SpecError("collective", field, why);
    }
}

uint32_t
CollectiveAlgorithm::GetDefaultChunks(CollectiveOp op, uint64_t bytes) const
{
    return 1;
}

uint64_t
CollectiveAlgorithm::GetPieceBytes(CollectiveOp op, uint64_t bytes) const
{
    return 0;
}

uint64_t
CollectiveAlgorithm::CountMessages(const ScheduleBuilder& b, const CollectiveCall& call) const
{
    return 0;
}

void
CollectiveAlgorithm::AddFluid(ScheduleBuilder& b, const CollectiveCall& call) const
{
    const CollectiveSchedule messages = b.Messages(*this, call);
    const auto& steps = messages.GetSteps();
    // Per step: the messages (depth) and local seconds on the longest chain ending there.
    std::vector<uint32_t> depth(steps.size(), 0);
    std::vector<double> local(steps.size(), 0);
    /** One pair's messages: their bytes and the depths they span. */
    struct Pair
    {
        FluidStream stream;
        uint32_t first;
        uint32_t last;
    };
    std::map<std::pair<uint32_t, uint32_t>, std::size_t> pairOf;
    std::vector<Pair> pairs;
    double localS = 0;
    std::vector<double> reduced(messages.GetRankCount(), 0); // per rank: its reductions' seconds
    for (std::size_t i = 0; i < steps.size(); ++i)
    {
        const CollectiveStep& s = steps[i];
        uint32_t d = 0;
        double l = 0;
        for (uint32_t dep : s.deps)
        {
            d = std::max(d, depth[dep]);
            l = std::max(l, local[dep]);
        }
        if (s.isSend)
        {
            d += s.latencies;
            auto [it, added] = pairOf.try_emplace({s.src, s.dst}, pairs.size());
            if (added)
            {
                pairs.push_back({{s.src, s.dst, 0}, d, d});
            }
            Pair& p = pairs[it->second];
            p.stream.bytes += s.bytes;
            p.first = std::min(p.first, d);
            p.last = std::max(p.last, d);
        }
        else
        {
            l += s.durationS;
            if (s.serial)
            {
                // A rank's reductions queue for its one reducer.
                localS = std::max(localS, reduced[s.src] += s.durationS);
            }
        }
        depth[i] = d;
        local[i] = l;
        localS = std::max(localS, l);
    }
    // Phases: pairs whose depth spans overlap run at once (a ring's edges all span every
    // step); a pair whose first message comes after every message of the phase so far starts
    // the next phase (a gather, then a broadcast).
    std::stable_sort(pairs.begin(),
                     pairs.end(),
                     [](const Pair& x, const Pair& y)
                     {
                         return x.first < y.first;
                     });
    for (std::size_t i = 0; i < pairs.size();)
    {
        uint32_t lo = pairs[i].first;
        uint32_t hi = pairs[i].last;
        std::vector<FluidStream> streams;
        std::vector<uint32_t> members;
        for (; i < pairs.size() && pairs[i].first <= hi; ++i)
        {
            hi = std::max(hi, pairs[i].last);
            streams.push_back(pairs[i].stream);
            members.push_back(pairs[i].stream.src);
            members.push_back(pairs[i].stream.dst);
        }
        std::sort(members.begin(), members.end());
        members.erase(std::unique(members.begin(), members.end()), members.end());
        b.FluidPhase(members, streams, hi - lo + 1, i == pairs.size() ? localS : 0.0);
    }
}

std::string
CollectiveAlgorithm::Describe(const std::string& name,
                              const ScheduleBuilder& b,
                              const CollectiveCall& call) const
{
    return name;
}

uint32_t
CollectiveAlgorithm::GetSmCount(const ScheduleBuilder& b, const CollectiveCall& call) const
{
    return 0;
}

uint32_t
CollectiveAlgorithm::GetP2pSmCount(const ScheduleBuilder& b,
                                   const CollectiveCall& communicator) const
{
    return 0;
}

bool
CollectiveAlgorithm::ComposesDimensions() const
{
    return false;
}

uint32_t
CollectiveAlgorithm::PipelineChunks(uint64_t bytes, uint32_t maxChunks)
{
    return static_cast<uint32_t>(std::clamp<uint64_t>(bytes >> 20, 1, std::max(maxChunks, 1u)));
}

namespace {
/** A chain's piece: NCCL's Simple step (DEFAULT_BUFFSIZE / NCCL_STEPS). */
constexpr uint64_t kChainPieceBytes = 512 << 10;
/** A chain's most pieces (as PipelineChunks'). */
constexpr uint64_t kChainMostPieces = 64;
} // namespace

uint32_t
CollectiveAlgorithm::WholePieces(uint64_t bytes, uint64_t piece, uint64_t most)
{
    return static_cast<uint32_t>(std::clamp<uint64_t>((bytes + piece - 1) / piece, 1, most));
}

uint64_t
CollectiveAlgorithm::WholePieceBytes(uint64_t bytes, uint64_t piece, uint64_t most)
{
    return bytes <= piece * most ? piece : 0;
}

uint32_t
CollectiveAlgorithm::ChainChunks(uint64_t bytes)
{
    return WholePieces(bytes, kChainPieceBytes, kChainMostPieces);
}

uint64_t
CollectiveAlgorithm::ChainPieceBytes(uint64_t bytes)
{
    return WholePieceBytes(bytes, kChainPieceBytes, kChainMostPieces);
}

} // namespace rapidllm
} // namespace ns3
