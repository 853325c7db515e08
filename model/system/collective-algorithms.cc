/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "collective-algorithms.h"

#include "ns3/log.h"
#include "ns3/network-view.h"
#include "ns3/spec-error.h"
#include "ns3/spec-reader.h"
#include "schedule-builder.h"

#include <algorithm>
#include <set>

namespace ns3 {
namespace rapidllm {

NS_LOG_COMPONENT_DEFINE("RapidLlmCollectivePlanner");

namespace {
const char* const kSource = "collective";
const char* const kAuto = "auto";
const std::string kRing = "ring";
/**
 * A fluid form walks its messages on the idle network up to this many (a few tens of
 * milliseconds, once per plan); beyond it keeps its streams' own latency terms.
 */
constexpr uint64_t kIdleWalkMessages = uint64_t(1) << 20;
} // namespace

std::vector<std::string>
CollectiveAlgorithmNames()
{
    std::vector<std::string> names{kAuto};
    for (const auto& name : CollectiveAlgorithmRegistry::Names())
    {
        names.push_back(name);
    }
    return names;
}

std::string
DefaultCollectiveAlgorithm(TopologyKind kind)
{
    // NCCL runs rings over NVSwitch and fat trees; a fully connected mesh (e.g. AMD Infinity
    // Fabric, TPU slices' ICI within a node) is used best by direct sends to every peer.
    return kind == TopologyKind::FULLY_CONNECTED ? "direct" : kRing;
}

std::vector<uint32_t>
SpannedDimensions(const NetworkView& view, const std::vector<uint32_t>& endpoints, bool& grid)
{
    std::vector<uint32_t> spanned;
    uint64_t gridSize = 1;
    for (uint32_t d = 0; d < view.GetDimensionCount(); ++d)
    {
        std::set<uint32_t> coords;
        for (uint32_t e : endpoints)
        {
            coords.insert(view.GetCoordinate(e, d));
        }
        if (coords.size() > 1)
        {
            spanned.push_back(d);
            gridSize *= coords.size();
        }
    }
    grid = gridSize == endpoints.size();
    return spanned;
}

CollectivePlanner::CollectivePlanner(const NetworkView& view)
    : m_view(&view)
{
    for (uint32_t d = 0; d < view.GetDimensionCount(); ++d)
    {
        const NetworkDimensionSpec& dim = view.GetDimension(d);
        const std::string name =
            dim.collective.empty() ? DefaultCollectiveAlgorithm(dim.kind) : dim.collective;
        const std::string field = "network.dimensions." + dim.name + ".collective";
        Ptr<CollectiveAlgorithm> algorithm;
        if (CollectiveAlgorithmRegistry::Has(name))
        {
            algorithm = GetAlgorithm(name, field);
        }
        if (!algorithm || algorithm->ComposesDimensions())
        {
            // Only algorithms that run within one dimension may be a dimension's own.
            std::vector<std::string> allowed;
            for (const auto& known : CollectiveAlgorithmRegistry::Names())
            {
                if (!GetAlgorithm(known, field)->ComposesDimensions())
                {
                    allowed.push_back(known);
                }
            }
            throw SpecError("hardware",
                            field,
                            (algorithm ? "'" + name
                                             + "' composes the dimensions' own algorithms "
                                               "and cannot be one"
                                       : "unknown collective algorithm '" + name + "'")
                                + "; allowed: " + JoinNames(allowed));
        }
        m_dimensionNames.push_back(name);
        m_dimensions.push_back(algorithm);
    }
}

const NetworkView&
CollectivePlanner::GetView() const
{
    return *m_view;
}

Ptr<CollectiveAlgorithm>
CollectivePlanner::GetAlgorithm(const std::string& name, const std::string& field) const
{
    auto it = m_byName.find(name);
    if (it != m_byName.end())
    {
        return it->second;
    }
    if (name == kAuto || !CollectiveAlgorithmRegistry::Has(name))
    {
        throw SpecError(kSource,
                        field,
                        "unknown collective algorithm '" + name
                            + "'; allowed: " + JoinNames(CollectiveAlgorithmNames()));
    }
    Ptr<CollectiveAlgorithm> algorithm =
        CollectiveAlgorithmRegistry::Create(name, field, "collective algorithm");
    m_byName.emplace(name, algorithm);
    return algorithm;
}

void
CollectivePlanner::CheckName(const std::string& name, const std::string& field) const
{
    if (name != kAuto)
    {
        GetAlgorithm(name, field);
    }
}

const std::string&
CollectivePlanner::GetDimensionAlgorithmName(uint32_t d) const
{
    return m_dimensionNames.at(d);
}

const std::string&
CollectivePlanner::DimensionChoice(uint32_t d, CollectiveOp op, uint32_t ranks) const
{
    std::string why;
    return m_dimensions.at(d)->Supports(op, ranks, why) ? m_dimensionNames[d] : kRing;
}

const CollectiveAlgorithm&
CollectivePlanner::GetDimensionAlgorithm(uint32_t d, CollectiveOp op, uint32_t ranks) const
{
    const std::string& name = DimensionChoice(d, op, ranks);
    return name == m_dimensionNames[d] ? *m_dimensions[d] : *GetAlgorithm(name, "algorithm");
}

namespace {
/** \return the top-level call of \p req: every member, in the request's order */
CollectiveCall
TopCall(const CollectiveRequest& req)
{
    CollectiveCall call;
    call.op = req.op;
    call.bytes = req.bytes;
    call.root = req.root;
    call.members.resize(req.endpoints.size());
    for (uint32_t i = 0; i < call.members.size(); ++i)
    {
        call.members[i] = i;
    }
    return call;
}
} // namespace

bool
CollectivePlanner::FlatNcclRings(CollectiveOp op, const std::vector<uint32_t>& spanned) const
{
    // NCCL runs an all-gather or a reduce-scatter as one ring per channel across the nodes,
    // whatever they span (its tree and NVLS-tree serve all-reduce only; NCCL 2.20.3,
    // src/graph/tuning.cc): where every spanned dimension runs nccl, its rings, not a
    // composition of each dimension's.
    return op != CollectiveOp::ALL_REDUCE
           && std::all_of(spanned.begin(),
                          spanned.end(),
                          [this](uint32_t d)
                          {
                              return m_dimensionNames[d] == "nccl";
                          });
}

Ptr<CollectiveAlgorithm>
CollectivePlanner::Resolve(const CollectiveRequest& req, std::string& name) const
{
    const auto n = static_cast<uint32_t>(req.endpoints.size());
    Ptr<CollectiveAlgorithm> algorithm;
    name = req.algorithm;
    if (name != kAuto)
    {
        algorithm = GetAlgorithm(name, "algorithm");
    }
    else
    {
        bool grid = false;
        const std::vector<uint32_t> spanned = SpannedDimensions(*m_view, req.endpoints, grid);
        const bool layered = req.op == CollectiveOp::ALL_REDUCE
                             || req.op == CollectiveOp::REDUCE_SCATTER
                             || req.op == CollectiveOp::ALL_GATHER;
        if (req.op == CollectiveOp::ALL_TO_ALL)
        {
            // Pairwise sends, as NCCL's grouped sends and receives where the outermost
            // dimension the group spans runs NCCL.
            name =
                !spanned.empty() && m_dimensionNames[spanned.back()] == "nccl" ? "nccl" : "direct";
        }
        else if (spanned.size() > 1 && grid && layered && !FlatNcclRings(req.op, spanned))
        {
            name = "hierarchical";
        }
        else
        {
            name = spanned.empty() ? kRing : DimensionChoice(spanned.back(), req.op, n);
        }
        algorithm = GetAlgorithm(name, "algorithm");
    }
    algorithm->Check(req.op, n, "algorithm");
    return algorithm;
}

uint32_t
CollectivePlanner::GetSmCount(const CollectiveRequest& req) const
{
    if (req.op == CollectiveOp::SEND_RECV || req.endpoints.size() < 2)
    {
        return 0;
    }
    std::string name;
    Ptr<CollectiveAlgorithm> algorithm = Resolve(req, name);
    CollectiveSchedule scratch(static_cast<uint32_t>(req.endpoints.size()));
    ScheduleBuilder builder(scratch, *this, req.endpoints, req.reduceBytesPerSecond, req.fluid);
    return algorithm->GetSmCount(builder, TopCall(req));
}

uint32_t
CollectivePlanner::GetP2pSmCount(const CollectiveRequest& req) const
{
    if (req.endpoints.size() < 2)
    {
        return 0;
    }
    // The library that runs the communicator's collectives runs its sends and receives: the
    // named algorithm, else that of the outermost dimension the communicator spans.
    Ptr<CollectiveAlgorithm> algorithm;
    if (req.algorithm != kAuto)
    {
        algorithm = GetAlgorithm(req.algorithm, "algorithm");
    }
    else
    {
        bool grid = false;
        const std::vector<uint32_t> spanned = SpannedDimensions(*m_view, req.endpoints, grid);
        if (spanned.empty())
        {
            return 0;
        }
        algorithm = m_dimensions.at(spanned.back());
    }
    CollectiveSchedule scratch(static_cast<uint32_t>(req.endpoints.size()));
    ScheduleBuilder builder(scratch, *this, req.endpoints, req.reduceBytesPerSecond, req.fluid);
    return algorithm->GetP2pSmCount(builder, TopCall(req));
}

CollectivePlan
CollectivePlanner::Build(const CollectiveRequest& req) const
{
    const auto n = static_cast<uint32_t>(req.endpoints.size());
    if (n == 0)
    {
        throw SpecError(kSource, "gpus", "a collective needs at least one rank");
    }
    {
        std::set<uint32_t> seen;
        for (uint32_t e : req.endpoints)
        {
            if (e >= m_view->GetEndpointCount())
            {
                throw SpecError(kSource,
                                "gpus",
                                "endpoint " + std::to_string(e)
                                    + " does not exist (the network has "
                                    + std::to_string(m_view->GetEndpointCount()) + ")");
            }
            if (!seen.insert(e).second)
            {
                throw SpecError(
                    kSource, "gpus", "endpoint " + std::to_string(e) + " appears twice");
            }
        }
    }
    if (req.root >= n)
    {
        throw SpecError(kSource,
                        "root",
                        "the root must be a rank of the group (0.." + std::to_string(n - 1) + ")");
    }
    CollectivePlan plan;
    plan.schedule = CollectiveSchedule(n);
    if (req.op == CollectiveOp::SEND_RECV)
    {
        if (n != 2)
        {
            throw SpecError(kSource, "gpus", "send-recv runs between exactly 2 ranks");
        }
        plan.schedule.AddSend(0, 1, req.bytes, {});
        plan.algorithm = "direct";
        plan.countedMessages = 1;
        return plan;
    }
    std::string name;
    Ptr<CollectiveAlgorithm> algorithm = Resolve(req, name);
    const uint32_t chunks =
        req.chunks > 0 ? req.chunks : algorithm->GetDefaultChunks(req.op, req.bytes);
    const uint64_t pieceBytes = req.chunks > 0 ? 0 : algorithm->GetPieceBytes(req.op, req.bytes);

    ScheduleBuilder builder(
        plan.schedule, *this, req.endpoints, req.reduceBytesPerSecond, req.fluid);
    const CollectiveCall call = TopCall(req);
    plan.algorithm = algorithm->Describe(name, builder, call);
    const uint64_t each = algorithm->CountMessages(builder, call);
    if (!req.fluid)
    {
        CollectiveSchedule::CheckPlannedSize(each, chunks, n);
        plan.countedMessages = each * chunks;
    }
    // Writes the collective's pieces with a builder (its messages or its fluid form).
    auto write = [&](ScheduleBuilder& b, bool fluid)
    {
        CollectiveCall piece = call;
        piece.wholeBytes = chunks > 1 ? call.bytes : 0;
        b.Chunked(
            chunks,
            req.bytes,
            [&](uint64_t bytes)
            {
                piece.bytes = bytes;
                if (fluid)
                {
                    algorithm->AddFluid(b, piece);
                }
                else
                {
                    algorithm->AddMessages(b, piece);
                }
            },
            pieceBytes);
    };
    // Messages queue on their connections where bytes and latencies weigh alike (a pipeline's
    // pieces, a ring's steps behind a slower edge), which no form of the streams alone
    // catches. Where the messages are few enough to walk, the fluid form's streams carry their
    // bytes in order with one latency and the collective also lasts at least as long as its
    // messages take on the otherwise idle network (their latencies and queueing), see
    // doc/network-model.md, "Message floor".
    const bool messageFloor =
        req.fluid && m_timing && each > 0 && each <= kIdleWalkMessages / chunks;
    builder.SetMessageFloor(messageFloor);
    write(builder, req.fluid);
    if (req.fluid)
    {
        if (messageFloor)
        {
            plan.messages = std::make_shared<CollectiveSchedule>(n);
            CollectiveSchedule& messages = *plan.messages;
            ScheduleBuilder mb(messages, *this, req.endpoints, req.reduceBytesPerSecond, false);
            write(mb, false);
            const double idleS = messages.GetIdleSeconds(
                [&](uint32_t a, uint32_t b)
                {
                    return m_timing(req.endpoints[a], req.endpoints[b]);
                });
            const uint32_t idle = plan.schedule.AddLocal(0, idleS, {});
            plan.floorStep = idle;
            for (uint32_t r = 0; r < n; ++r)
            {
                builder.SetReady(r, builder.Join(r, {builder.GetReady(r), idle}));
            }
        }
        builder.FinishFluid();
    }
    NS_LOG_DEBUG(ToString(req.op) << " of " << req.bytes << " B among " << n
                                  << " ranks: " << plan.algorithm << ", " << chunks << " piece(s), "
                                  << plan.schedule.GetSteps().size() << " steps"
                                  << (req.fluid ? " (fluid)" : ""));
    return plan;
}

void
CollectivePlanner::SetPairTiming(CollectiveSchedule::PairTiming timing)
{
    m_timing = std::move(timing);
}

const CollectiveSchedule::PairTiming&
CollectivePlanner::GetPairTiming() const
{
    return m_timing;
}

CollectivePlan
BuildCollective(const CollectiveRequest& request, const NetworkView& view)
{
    return CollectivePlanner(view).Build(request);
}

} // namespace rapidllm
} // namespace ns3
