/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "nccl-collective.h"

#include "collective-algorithms.h"
#include "ns3/log.h"
#include "ns3/network-view.h"
#include "ns3/spec-error.h"
#include "ns3/string.h"
#include "ring-collective.h"

#include <algorithm>
#include <cmath>

namespace ns3 {
namespace rapidllm {

NS_LOG_COMPONENT_DEFINE("RapidLlmNcclCollective");
NS_OBJECT_ENSURE_REGISTERED(NcclCollective);

static TypeRegistrar<CollectiveAlgorithm> g_nccl("nccl", NcclCollective::GetTypeId());

namespace {
// NCCL 2.20.3, src/graph/tuning.cc (NVIDIA/nccl commit b6475625), ring algorithm; microseconds
// and GB/s as NCCL writes them. Indexed by NcclProtocol (LL, LL128, Simple).
const double kBaseLatUs[3] = {6.6, 14.0, 8.4};      // baseLat[Ring]
const double kNvlinkStepUs[3] = {0.6, 1.9, 3.4};    // hwLat[NVLINK][Ring]
const double kNetStepUs[3] = {2.7, 4.0, 14.0};      // hwLat[NET][Ring]
const double kLlMaxBusGBps[3] = {87.7, 39.0, 20.4}; // llMaxBws: one node (Ampere/Hopper); 2
                                                    // nodes, 4+ nodes (Intel hosts)
const double kLl128Factor = 0.92;                   // "120.0/128.0" with 2+ GPUs per node
const double kLl128FactorOnePerNode = 0.7;          // ppn < 2: one GPU per node on the NIC

uint32_t
RingSteps(CollectiveOp op, uint32_t ranks)
{
    return op == CollectiveOp::ALL_REDUCE ? 2 * (ranks - 1) : ranks - 1;
}
} // namespace

std::string
ToString(NcclProtocol protocol)
{
    switch (protocol)
    {
        case NcclProtocol::LL:
            return "LL";
        case NcclProtocol::LL128:
            return "LL128";
        case NcclProtocol::SIMPLE:
            break;
    }
    return "Simple";
}

NcclEstimate
NcclRingEstimate(CollectiveOp op,
                 uint32_t ranks,
                 uint64_t bytes,
                 bool network,
                 double busBytesPerS,
                 NcclProtocol protocol)
{
    NcclEstimate e;
    e.protocol = protocol;
    if (ranks < 2)
    {
        return e;
    }
    const auto p = static_cast<std::size_t>(protocol);
    const uint32_t steps = RingSteps(op, ranks);
    e.latencyS = (kBaseLatUs[p] + steps * (network ? kNetStepUs[p] : kNvlinkStepUs[p])) * 1e-6;
    const double busGBps = busBytesPerS / 1e9;
    switch (protocol)
    {
        case NcclProtocol::LL:
        {
            // A quarter of the link (a third for one node's reduce-scatter and all-gather),
            // at most NCCL's LL ceiling.
            const double share = network || op == CollectiveOp::ALL_REDUCE ? 1.0 / 4.0 : 1.0 / 3.0;
            const std::size_t nodes = !network ? 0 : ranks <= 2 ? 1 : 2;
            const double bus = std::min(kLlMaxBusGBps[nodes], busGBps * share);
            e.bandwidthFactor = busGBps > 0 ? bus / busGBps : share;
            break;
        }
        case NcclProtocol::LL128:
            e.bandwidthFactor = network ? kLl128FactorOnePerNode : kLl128Factor;
            break;
        case NcclProtocol::SIMPLE:
            e.bandwidthFactor = 1.0;
            break;
    }
    // Ring algorithm bandwidth: bus bandwidth x ranks / steps.
    const double algBytesPerS = busBytesPerS * e.bandwidthFactor * ranks / steps;
    e.timeS = e.latencyS + (algBytesPerS > 0 ? double(bytes) / algBytesPerS : 0.0);
    return e;
}

TypeId
NcclCollective::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::rapidllm::NcclCollective")
            .SetParent<CollectiveAlgorithm>()
            .SetGroupName("RapidLlm")
            .AddConstructor<NcclCollective>()
            .AddAttribute("Protocol",
                          "auto (NCCL's choice by its cost model), LL, LL128 or Simple",
                          StringValue("auto"),
                          MakeStringAccessor(&NcclCollective::m_protocol),
                          MakeStringChecker());
    return tid;
}

bool
NcclCollective::Supports(CollectiveOp op, uint32_t ranks, std::string& why) const
{
    switch (op)
    {
        case CollectiveOp::ALL_REDUCE:
        case CollectiveOp::REDUCE_SCATTER:
        case CollectiveOp::ALL_GATHER:
            return true;
        default:
            break;
    }
    why = "nccl runs all-reduce, reduce-scatter and all-gather (ring runs the others), not "
          + ToString(op);
    return false;
}

uint32_t
NcclCollective::GetDefaultChunks(CollectiveOp op, uint64_t bytes) const
{
    return 1; // NCCL's ring pipelines by its steps; the prologue is paid once
}

NcclEstimate
NcclCollective::Choose(const ScheduleBuilder& b, const CollectiveCall& call) const
{
    const auto n = static_cast<uint32_t>(call.members.size());
    std::vector<uint32_t> endpoints;
    endpoints.reserve(n);
    for (uint32_t m : call.members)
    {
        endpoints.push_back(b.GetEndpoint(m));
    }
    bool grid = false;
    const std::vector<uint32_t> spanned = SpannedDimensions(b.GetView(), endpoints, grid);
    // The ring crosses the network where the group spans a fat tree; the step bandwidth is the
    // slowest spanned dimension's link.
    bool network = false;
    double bus = 0;
    for (uint32_t d : spanned)
    {
        const NetworkDimensionSpec& dim = b.GetView().GetDimension(d);
        network = network || dim.kind == TopologyKind::FAT_TREE;
        const double rate = dim.bandwidthBps * dim.wireEfficiency;
        bus = bus == 0 ? rate : std::min(bus, rate);
    }
    static const NcclProtocol kAll[] = {
        NcclProtocol::LL, NcclProtocol::LL128, NcclProtocol::SIMPLE};
    NcclEstimate best;
    bool first = true;
    for (NcclProtocol p : kAll)
    {
        if (m_protocol != "auto" && m_protocol != ToString(p))
        {
            continue;
        }
        NcclEstimate e = NcclRingEstimate(call.op, n, call.bytes, network, bus, p);
        if (first || e.timeS < best.timeS)
        {
            best = e;
            first = false;
        }
    }
    if (first)
    {
        throw SpecError("collective algorithm nccl",
                        "Protocol",
                        "'" + m_protocol + "' is not a protocol; allowed: auto, LL, LL128, Simple");
    }
    // The part of the latency the network does not charge: the base latency and each step's
    // latency over LL's (the network's links carry LL's per-step latency).
    const NcclEstimate ll = NcclRingEstimate(call.op, n, 0, network, bus, NcclProtocol::LL);
    const double llSteps = ll.latencyS - kBaseLatUs[0] * 1e-6;
    best.latencyS = std::max(0.0, best.latencyS - llSteps);
    return best;
}

void
NcclCollective::Write(ScheduleBuilder& b, const CollectiveCall& call, bool fluid) const
{
    if (call.members.size() < 2)
    {
        return;
    }
    const NcclEstimate e = Choose(b, call);
    NS_LOG_LOGIC("nccl " << ToString(call.op) << " of " << call.bytes << " B among "
                         << call.members.size() << " ranks: ring/" << ToString(e.protocol));
    if (e.latencyS > 0)
    {
        for (uint32_t m : call.members)
        {
            const uint32_t step =
                b.GetSchedule().AddLocal(m, e.latencyS, ScheduleBuilder::Deps(b.GetReady(m)));
            b.SetReady(m, step);
        }
    }
    const uint64_t wire = static_cast<uint64_t>(std::ceil(double(call.bytes) / e.bandwidthFactor));
    const bool reduce = call.op != CollectiveOp::ALL_GATHER;
    const uint32_t passes = call.op == CollectiveOp::ALL_REDUCE ? 2 : 1;
    if (fluid)
    {
        RingCollective::AddFluidPasses(b, call.members, wire, passes, reduce);
        return;
    }
    RingCollective::AddPass(b, call.members, wire, reduce);
    if (passes == 2)
    {
        RingCollective::AddPass(b, call.members, wire, false);
    }
}

uint64_t
NcclCollective::CountMessages(const ScheduleBuilder& b, const CollectiveCall& call) const
{
    // Ring passes whichever protocol NCCL's estimate picks (see Write).
    const uint64_t k = call.members.size();
    const uint64_t passes = call.op == CollectiveOp::ALL_REDUCE ? 2 : 1;
    return k < 2 ? 0 : passes * k * (k - 1);
}

void
NcclCollective::AddMessages(ScheduleBuilder& b, const CollectiveCall& call) const
{
    Write(b, call, false);
}

void
NcclCollective::AddFluid(ScheduleBuilder& b, const CollectiveCall& call) const
{
    Write(b, call, true);
}

std::string
NcclCollective::Describe(const std::string& name,
                         const ScheduleBuilder& b,
                         const CollectiveCall& call) const
{
    if (call.members.size() < 2)
    {
        return name;
    }
    return name + "(ring/" + ToString(Choose(b, call).protocol) + ")";
}

} // namespace rapidllm
} // namespace ns3
