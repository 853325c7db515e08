/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "nccl-collective.h"

#include "collective-algorithms.h"
#include "direct-collective.h"
#include "nccl-ring-search.h"
#include "ns3/log.h"
#include "ns3/network-view.h"
#include "ns3/spec-error.h"
#include "ns3/string.h"
#include "ring-collective.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>
#include <set>

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
// NVLS (NVLink SHARP), same version: hwLat[NVLINK][NVLS][Simple] = 23 us and no base latency;
// algorithm bandwidth = nChannels x bw x 5/6. src/graph/search.cc: inside one node the NVLS
// graph has one channel per GPU (minChannels = maxChannels = GPUs), its bw the first of the
// sm90 intra-node speeds (sm90SpeedArrayIntra) the search fits; ncclTopoSearchTryNvls takes
// bw from every GPU's NVSwitch link per channel, twice from the head's.
const double kNvlsLatUs = 23.0;
const double kNvlsRatio = 5.0 / 6.0;
// Point-to-point (same version, src/enqueue.cc): NCCL_P2P_LL_THRESHOLD's default; LL stores 4
// data bytes and a 4-byte flag in every 8 bytes.
const uint64_t kP2pLlThresholdBytes = 16384;
const double kLlWireFactor = 0.5;

uint32_t
RingSteps(CollectiveOp op, uint32_t ranks)
{
    return op == CollectiveOp::ALL_REDUCE ? 2 * (ranks - 1) : ranks - 1;
}

/** \return whether \p op runs as a chain from (to) a root along each ring */
bool
IsChain(CollectiveOp op)
{
    return op == CollectiveOp::BROADCAST || op == CollectiveOp::REDUCE;
}
} // namespace

std::string
ToString(NcclAlgorithm algorithm)
{
    return algorithm == NcclAlgorithm::NVLS ? "nvls" : "ring";
}

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
                 NcclProtocol protocol,
                 double ll128CeilingBytesPerS,
                 uint32_t nodes)
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
            // A quarter of the link (a third for one node's reduce-scatter, all-gather and
            // broadcast), at most NCCL's LL ceiling.
            const double share =
                network || op == CollectiveOp::ALL_REDUCE || op == CollectiveOp::REDUCE ? 1.0 / 4.0
                                                                                        : 1.0 / 3.0;
            // llMaxBws by node count: one node, two, more (nNodes <= 2 ? nNodes - 1 : 2).
            const uint32_t n = network ? (nodes > 0 ? nodes : ranks) : 1;
            const double bus = std::min(kLlMaxBusGBps[n <= 2 ? n - 1 : 2], busGBps * share);
            e.bandwidthFactor = busGBps > 0 ? bus / busGBps : share;
            break;
        }
        case NcclProtocol::LL128:
        {
            // 120 of 128 bytes, at most LL128's ceiling per channel x the channels.
            // 0.7 with one GPU of the ring per node (ppn < 2), 120/128 with more.
            const bool onePerNode = network && (nodes == 0 || ranks < 2 * nodes);
            e.bandwidthFactor = onePerNode ? kLl128FactorOnePerNode : kLl128Factor;
            if (ll128CeilingBytesPerS > 0 && busBytesPerS > 0)
            {
                e.bandwidthFactor =
                    std::min(e.bandwidthFactor, ll128CeilingBytesPerS / busBytesPerS);
            }
            break;
        }
        case NcclProtocol::SIMPLE:
            e.bandwidthFactor = 1.0;
            break;
    }
    // Ring algorithm bandwidth: bus bandwidth x ranks / steps; a chain's every byte crosses
    // each link once, pipelined (NCCL's nsteps = nRanks for broadcast and reduce: ratio 1).
    e.algBytesPerS = busBytesPerS * e.bandwidthFactor * (IsChain(op) ? 1.0 : double(ranks) / steps);
    e.timeS = e.latencyS + (e.algBytesPerS > 0 ? double(bytes) / e.algBytesPerS : 0.0);
    return e;
}

/**
 * \return the speed of each of NVLS's channels among \p ranks GPUs whose NVLink carries
 * \p gpuNvlinkBytesPerS, GB/s; 0 where no speed fits (NCCL's search finds no NVLS graph)
 */
double
NvlsSpeedGBps(uint32_t ranks, double gpuNvlinkBytesPerS)
{
    // Each head's channel takes its speed from every GPU's NVSwitch link (both directions) and
    // twice from the head's own, so a GPU's link carries (ranks + 1) x speed: the fastest
    // speed with that within one GPU's NVLink bandwidth (ncclTopoSearchTryNvls).
    for (double s : NcclIntraSpeedsGBps(90))
    {
        if ((ranks + 1) * s <= gpuNvlinkBytesPerS / 1e9)
        {
            return s;
        }
    }
    return 0;
}

NcclEstimate
NcclNvlsEstimate(CollectiveOp op, uint32_t ranks, uint64_t bytes, double gpuNvlinkBytesPerS)
{
    NcclEstimate e;
    e.algorithm = NcclAlgorithm::NVLS;
    e.protocol = NcclProtocol::SIMPLE;
    if (ranks < 2)
    {
        return e;
    }
    const double speedGBps = NvlsSpeedGBps(ranks, gpuNvlinkBytesPerS);
    e.latencyS = kNvlsLatUs * 1e-6;
    e.algBytesPerS = ranks * speedGBps * 1e9 * kNvlsRatio;
    e.timeS = e.latencyS + double(bytes) / e.algBytesPerS;
    return e;
}

NcclEstimate
NcclAllToAllEstimate(uint64_t bytesPerPeer, bool network)
{
    NcclEstimate e;
    e.protocol = bytesPerPeer <= kP2pLlThresholdBytes ? NcclProtocol::LL : NcclProtocol::SIMPLE;
    const auto p = static_cast<std::size_t>(e.protocol);
    e.latencyS = (kBaseLatUs[p] + (network ? kNetStepUs[p] : kNvlinkStepUs[p])) * 1e-6;
    e.bandwidthFactor = e.protocol == NcclProtocol::LL ? kLlWireFactor : 1.0;
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
                          MakeStringChecker())
            .AddAttribute("Algorithm",
                          "auto (NCCL's choice by its cost model), ring or nvls",
                          StringValue("auto"),
                          MakeStringAccessor(&NcclCollective::m_algorithm),
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
        case CollectiveOp::ALL_TO_ALL:
        case CollectiveOp::BROADCAST:
        case CollectiveOp::REDUCE:
            return true;
        default:
            break;
    }
    why = "nccl runs all-reduce, reduce-scatter, all-gather, all-to-all, broadcast and reduce, "
          "not "
          + ToString(op);
    return false;
}

uint32_t
NcclCollective::GetDefaultChunks(CollectiveOp op, uint64_t bytes) const
{
    // NCCL's ring pipelines by its steps; the prologue is paid once. A chain only pays off
    // pipelined: its pieces follow each other down the chain.
    return IsChain(op) ? ChainChunks(bytes) : 1;
}

uint64_t
NcclCollective::GetPieceBytes(CollectiveOp op, uint64_t bytes) const
{
    return IsChain(op) ? ChainPieceBytes(bytes) : 0;
}

uint32_t
NcclCollective::GetSmCount(const ScheduleBuilder& b, const CollectiveCall& call) const
{
    // One CTA per channel, each on an SM of its own (NCCL 2.21.5, src/enqueue.cc: the grid is
    // the plan's channel count; NVIDIA/nccl issue 689: its CTAs do not share an SM with
    // compute kernels). NVLS runs NCCL_NVLS_NCHANNELS = 16 channels whatever the size
    // (src/transport/nvls.cc). A ring inside one NVSwitch dimension runs up to collChannels =
    // twice the graph's rings (src/graph/connect.cc, ncclTopoPostset duplicates them: 24 on
    // DGX A100 and H100); across the network the network dimension's channels per GPU of the
    // communicator in a node, at most 16 (`nccl: channels_per_gpu`, the hardware file's
    // [NCCL-NET]). Small sizes run fewer: one channel less while bytes < channels x threads x
    // threshold (src/enqueue.cc, getChannnelThreadInfo: threads 512 for LL, 640 for LL128,
    // 544 for Simple's ring; threshold 8 x ranks, 8 and 64).
    if (call.op == CollectiveOp::ALL_TO_ALL)
    {
        // The point-to-point kernel's channels for one peer's share.
        CollectiveCall peer = call;
        peer.bytes = call.bytes / call.members.size();
        return GetP2pSmCount(b, peer);
    }
    const NcclEstimate e = Choose(b, call);
    if (e.algorithm == NcclAlgorithm::NVLS)
    {
        return 16;
    }
    bool network = false;
    uint64_t channels = CommunicatorChannels(b, call, network);
    if (channels == 0)
    {
        return 0;
    }
    const auto ranks = static_cast<uint64_t>(call.members.size());
    uint64_t threads = 544;
    uint64_t threshold = 64;
    if (e.protocol == NcclProtocol::LL)
    {
        threads = 512;
        threshold = 8 * ranks;
    }
    else if (e.protocol == NcclProtocol::LL128)
    {
        threads = 640;
        threshold = 8;
    }
    while (channels >= 2 && call.bytes < channels * threads * threshold)
    {
        --channels;
    }
    return static_cast<uint32_t>(channels);
}

uint64_t
NcclCollective::CommunicatorChannels(const ScheduleBuilder& b,
                                     const CollectiveCall& call,
                                     bool& network) const
{
    const NetworkView& view = b.GetView();
    const std::vector<uint32_t> endpoints = b.GetEndpoints(call.members);
    bool grid = false;
    const std::vector<uint32_t> spanned = SpannedDimensions(view, endpoints, grid);
    const NetworkDimensionSpec* net = nullptr;
    for (uint32_t d : spanned)
    {
        if (view.GetDimension(d).kind == TopologyKind::FAT_TREE)
        {
            net = &view.GetDimension(d);
        }
    }
    network = net != nullptr;
    if (net != nullptr)
    {
        // The communicator's GPUs in one node: the most members in one instance of the
        // innermost dimension (one when the network is that dimension).
        std::map<uint32_t, uint64_t> perNode;
        uint64_t local = 1;
        if (view.GetDimension(0).kind != TopologyKind::FAT_TREE)
        {
            for (uint32_t ep : endpoints)
            {
                local = std::max(local, ++perNode[view.GetInstance(ep, 0)]);
            }
        }
        return std::min<uint64_t>(uint64_t(net->nccl.channelsPerGpu) * local, 16);
    }
    if (spanned.size() == 1)
    {
        return 2 * uint64_t(RingGraphOf(view.GetDimension(spanned[0])).channels);
    }
    return 0;
}

namespace {
/** \return the smallest power of two >= \p x (1 for 0) */
uint64_t
Pow2Up(uint64_t x)
{
    uint64_t p = 1;
    while (p < x)
    {
        p *= 2;
    }
    return p;
}
} // namespace

uint32_t
NcclCollective::GetP2pSmCount(const ScheduleBuilder& b, const CollectiveCall& communicator) const
{
    // NCCL's point-to-point kernel: one CTA per channel a send or receive is split over; a
    // send and a receive issued together share the channels (NCCL 2.21.5 src/enqueue.cc,
    // scheduleP2pTasksToPlan and addP2pToPlan). src/graph/paths.cc, ncclTopoComputeP2pChannels:
    // the communicator's p2p channels are its collective channels rounded up to a power of two
    // (at most 32); per peer, 2 x the NVLinks to it inside a node (24 or more on DGX A100 and
    // H100, above the communicator's channels) and 2 to a peer across the network, halved
    // while 2 x ranks > 4 x the p2p channels (ncclTopoGetNchannels), rounded up to a power of
    // two. A message of bytes uses min(nMin, bytes / minPart) channels, nMin = the per-peer
    // channels halved while nMin x ranks > the p2p channels, doubled while a part exceeds
    // maxPart, up to the per-peer channels; inside a node minPart = step / 8 and maxPart =
    // 32 x step, across nodes step / 2 and step. The step is the LL buffer's (64 KiB) up to
    // 16 KiB x per-peer channels (NCCL_P2P_LL_THRESHOLD), else the p2p chunk: 512 KiB over
    // NVLink (NCCL_P2P_NVL_CHUNKSIZE), 128 KiB across nodes (NCCL_P2P_NET_CHUNKSIZE).
    const uint64_t ranks = communicator.members.size();
    if (ranks < 2)
    {
        return 0;
    }
    bool network = false;
    const uint64_t collChannels = CommunicatorChannels(b, communicator, network);
    if (collChannels == 0)
    {
        return 0;
    }
    const uint64_t p2pChannels = Pow2Up(std::min<uint64_t>(collChannels, 32));
    uint64_t perPeer = collChannels;
    if (network)
    {
        uint64_t netPeer = 2;
        while (netPeer * ranks > p2pChannels * 4 && netPeer > 1)
        {
            netPeer /= 2;
        }
        perPeer = std::min(perPeer, netPeer);
    }
    perPeer = std::min(Pow2Up(perPeer), p2pChannels);
    uint64_t nMin = perPeer;
    while (nMin * ranks > p2pChannels && nMin > 1)
    {
        nMin /= 2;
    }
    const uint64_t bytes = communicator.bytes;
    if (bytes == 0)
    {
        return 1;
    }
    const uint64_t step = bytes <= perPeer * 16384 ? 65536 : network ? 131072 : 524288;
    const uint64_t minPart = network ? step / 2 : step / 8;
    const uint64_t maxPart = network ? step : step * 32;
    uint64_t n = std::min(nMin, (bytes + minPart - 1) / minPart);
    uint64_t part = std::max(minPart, (bytes + n - 1) / n);
    while (part > maxPart && n <= perPeer / 2)
    {
        n *= 2;
        part = (bytes + n - 1) / n;
    }
    return static_cast<uint32_t>(n);
}

std::vector<std::vector<uint32_t>>
CrossNodeRings(const NetworkView& view,
               const std::vector<uint32_t>& members,
               const std::vector<uint32_t>& endpoints)
{
    // Nodes are instances of the innermost dimension, unless that is the network itself.
    if (members.size() < 4 || view.GetDimensionCount() < 2
        || view.GetDimension(0).kind == TopologyKind::FAT_TREE)
    {
        return {members};
    }
    // The members by node, the nodes in the order the group first meets them.
    std::vector<uint32_t> nodeOrder;
    std::map<uint32_t, std::vector<uint32_t>> byNode;
    for (std::size_t i = 0; i < members.size(); ++i)
    {
        const uint32_t node = view.GetInstance(endpoints[i], 0);
        auto& local = byNode[node];
        if (local.empty())
        {
            nodeOrder.push_back(node);
        }
        local.push_back(members[i]);
    }
    std::size_t k = members.size();
    for (const auto& [node, local] : byNode)
    {
        k = std::min(k, local.size());
    }
    if (nodeOrder.size() < 2 || k < 2)
    {
        return {members};
    }
    std::vector<std::vector<uint32_t>> rings(k);
    for (std::size_t r = 0; r < k; ++r)
    {
        for (uint32_t node : nodeOrder)
        {
            const auto& local = byNode[node];
            for (std::size_t i = 0; i < local.size(); ++i)
            {
                rings[r].push_back(local[(r + i) % local.size()]);
            }
        }
    }
    return rings;
}

NcclEstimate
NcclCollective::Choose(const ScheduleBuilder& b, const CollectiveCall& call) const
{
    const auto n = static_cast<uint32_t>(call.members.size());
    bool grid = false;
    const std::vector<uint32_t> spanned =
        SpannedDimensions(b.GetView(), b.GetEndpoints(call.members), grid);
    // The ring crosses the network where the group spans a fat tree; the step bandwidth is the
    // slowest spanned dimension's link. Inside one dimension that has NCCL's graph, the ring's
    // bus bandwidth is the graph's (channels x bandwidth per channel).
    bool network = false;
    double link = 0;
    for (uint32_t d : spanned)
    {
        const NetworkDimensionSpec& dim = b.GetView().GetDimension(d);
        network = network || dim.kind == TopologyKind::FAT_TREE;
        const double rate = dim.bandwidthBps * dim.wireEfficiency;
        link = link == 0 ? rate : std::min(link, rate);
    }
    double bus = link;
    double ll128Ceiling = 0;
    bool nvls = false;
    // Across nodes, a ring per channel where every node holds several members, each through
    // other NICs: the rings share the network's bytes (at most the fastest spanned link's).
    uint32_t rings = 1;
    // The bus bandwidth the messages are sized for (each ring's share at the slowest link's
    // rate): where the fastest spanned link caps the estimate's bus, that link is the
    // network's to share among the rings' messages, not the messages' to carry as more bytes.
    double messageBus = 0;
    uint32_t nodes = 0; // one rank per node
    if (network && spanned.size() > 1)
    {
        const std::vector<uint32_t> endpoints = b.GetEndpoints(call.members);
        rings = static_cast<uint32_t>(CrossNodeRings(b.GetView(), call.members, endpoints).size());
        if (b.GetView().GetDimension(0).kind != TopologyKind::FAT_TREE)
        {
            std::set<uint32_t> distinct;
            for (uint32_t e : endpoints)
            {
                distinct.insert(b.GetView().GetInstance(e, 0));
            }
            nodes = static_cast<uint32_t>(distinct.size());
        }
        double fastest = 0;
        for (uint32_t d : spanned)
        {
            const NetworkDimensionSpec& dim = b.GetView().GetDimension(d);
            fastest = std::max(fastest, dim.bandwidthBps * dim.wireEfficiency);
        }
        bus = std::min(rings * link, fastest);
        messageBus = rings * link;
    }
    if (spanned.size() == 1)
    {
        const NetworkDimensionSpec& dim = b.GetView().GetDimension(spanned[0]);
        const NcclGraphSpec& g = dim.nccl;
        const NcclRingGraph ring = RingGraphOf(dim);
        if (ring.channels > 0)
        {
            // The graph NCCL's search finds on this link (searched where the dimension names
            // its GPUs' sm, so a faster or slower NVLink moves it); a graph given faster than
            // the link in force (a --set on the link) runs at the link's rate.
            bus = std::min(ring.channels * ring.channelBps, link);
            ll128Ceiling = ring.channels * g.ll128ChannelBps;
        }
        // NCCL enables NVLS on NVSwitch Hopper systems with more than two GPUs (NCCL 2.22.3,
        // src/transport/nvls.cc, ncclNvlsInit: gpuCount <= 2 disables it); not across nodes,
        // and not without the switch that reduces (a dimension given another topology keeps
        // its graph's nvls: true, which a switchless domain cannot run).
        // NVLS reduces and multicasts all to all: not a broadcast's or reduce's chain.
        // Nor on a link too slow for the slowest speed NCCL's search tries.
        nvls = g.nvls && dim.kind == TopologyKind::SWITCH && !network && n > 2 && !IsChain(call.op)
               && NvlsSpeedGBps(n, link) > 0;
    }
    if (m_algorithm != "auto" && m_algorithm != "ring" && m_algorithm != "nvls")
    {
        throw SpecError("collective algorithm nccl",
                        "Algorithm",
                        "'" + m_algorithm + "' is not an algorithm; allowed: auto, ring, nvls");
    }
    std::vector<NcclEstimate> candidates;
    if (m_algorithm != "nvls")
    {
        static const NcclProtocol kAll[] = {
            NcclProtocol::LL, NcclProtocol::LL128, NcclProtocol::SIMPLE};
        for (NcclProtocol p : kAll)
        {
            if (m_protocol == "auto" || m_protocol == ToString(p))
            {
                candidates.push_back(NcclRingEstimate(
                    call.op, n, call.WholeBytes(), network, bus, p, ll128Ceiling, nodes));
            }
        }
    }
    if (nvls && m_algorithm != "ring" && (m_protocol == "auto" || m_protocol == "Simple"))
    {
        candidates.push_back(NcclNvlsEstimate(call.op, n, call.WholeBytes(), link));
    }
    if (candidates.empty())
    {
        if (m_protocol != "auto" && m_protocol != "LL" && m_protocol != "LL128"
            && m_protocol != "Simple")
        {
            throw SpecError("collective algorithm nccl",
                            "Protocol",
                            "'" + m_protocol
                                + "' is not a protocol; allowed: auto, LL, LL128, Simple");
        }
        throw SpecError("collective algorithm nccl",
                        "Algorithm",
                        "nvls needs a dimension whose nccl graph has nvls: true, one node, "
                        "more than two GPUs (NCCL's own rule), NVLink bandwidth for NCCL's "
                        "slowest NVLS channel speed ((GPUs + 1) x 3 GB/s) and the Simple "
                        "protocol");
    }
    NcclEstimate best = candidates[0];
    best.linkBytesPerS = link;
    for (const NcclEstimate& e : candidates)
    {
        if (e.timeS < best.timeS)
        {
            best = e;
            best.linkBytesPerS = link;
        }
    }
    // What the messages carry: the bytes that put the estimate's bandwidth on the link. A ring
    // moves its bytes at the bus bandwidth x the protocol's factor; the link runs at its
    // payload rate, so the messages carry bytes x link / (bus x factor).
    if (best.algorithm == NcclAlgorithm::RING)
    {
        // Each of the rings carries its share of the bytes at its share of the bus bandwidth.
        best.rings = rings;
        const double sized = messageBus > 0 ? messageBus : bus;
        best.bandwidthFactor = link > 0 ? sized / rings * best.bandwidthFactor / link : 1.0;
    }
    // The part of the latency the network does not charge: the base latency and each step's
    // latency over LL's (the network's links carry LL's per-step latency); NVLS's one round of
    // pairwise messages is charged one LL step by the network (a GPU>NVSwitch>GPU path).
    const NcclEstimate ll = NcclRingEstimate(call.op, n, 0, network, bus, NcclProtocol::LL);
    const double llStepS = (ll.latencyS - kBaseLatUs[0] * 1e-6) / RingSteps(call.op, n);
    const double charged =
        best.algorithm == NcclAlgorithm::NVLS ? llStepS : ll.latencyS - kBaseLatUs[0] * 1e-6;
    best.latencyS = std::max(0.0, best.latencyS - charged);
    return best;
}

void
NcclCollective::Write(ScheduleBuilder& b, const CollectiveCall& call, bool fluid) const
{
    if (call.members.size() < 2)
    {
        return;
    }
    // Each rank pays before its first message the latency the network's messages do not carry.
    auto prologue = [&b, &call](double latencyS)
    {
        for (uint32_t m : call.members)
        {
            if (latencyS > 0)
            {
                const uint32_t step =
                    b.GetSchedule().AddLocal(m, latencyS, ScheduleBuilder::Deps(b.GetReady(m)));
                b.SetReady(m, step);
            }
        }
    };
    // One message per ordered pair (direct's), as messages or their fluid form.
    auto pairwise = [&b, fluid](const CollectiveCall& pairs)
    {
        Ptr<DirectCollective> direct = CreateObject<DirectCollective>();
        if (fluid)
        {
            direct->AddFluid(b, pairs);
        }
        else
        {
            direct->AddMessages(b, pairs);
        }
    };
    if (call.op == CollectiveOp::ALL_TO_ALL)
    {
        // The network charges each message LL's step latency; the pairs carry the wire bytes.
        bool network = false;
        CommunicatorChannels(b, call, network);
        const NcclEstimate e = NcclAllToAllEstimate(call.bytes / call.members.size(), network);
        NS_LOG_LOGIC("nccl all-to-all of " << call.bytes << " B among " << call.members.size()
                                           << " ranks: p2p/" << ToString(e.protocol));
        prologue(e.latencyS - (network ? kNetStepUs[0] : kNvlinkStepUs[0]) * 1e-6);
        CollectiveCall wire = call;
        wire.bytes = static_cast<uint64_t>(std::ceil(double(call.bytes) / e.bandwidthFactor));
        pairwise(wire);
        return;
    }
    const NcclEstimate e = Choose(b, call);
    NS_LOG_LOGIC("nccl " << ToString(call.op) << " of " << call.bytes << " B among "
                         << call.members.size() << " ranks: " << ToString(e.algorithm) << "/"
                         << ToString(e.protocol));
    prologue(e.latencyS);
    if (e.algorithm == NcclAlgorithm::NVLS)
    {
        // One message per ordered pair, sized so that each GPU's NVLink carries for
        // bytes / NCCL's NVLS bandwidth: a GPU sends (k - 1) / k of the pairwise size.
        const auto k = static_cast<double>(call.members.size());
        CollectiveCall pairs = call;
        pairs.op = CollectiveOp::ALL_TO_ALL;
        pairs.bytes = static_cast<uint64_t>(
            std::ceil(double(call.bytes) * e.linkBytesPerS / e.algBytesPerS * k / (k - 1)));
        pairwise(pairs);
        return;
    }
    // The reductions are of the data, not of the bytes the protocol puts on the wire (LL's
    // flags): each message's data share of its bytes, 0 where nothing is reduced.
    const double reduced = call.op != CollectiveOp::ALL_GATHER && call.op != CollectiveOp::BROADCAST
                               ? e.bandwidthFactor
                               : 0.0;
    const uint32_t passes = call.op == CollectiveOp::ALL_REDUCE ? 2 : 1;
    const std::vector<std::vector<uint32_t>> rings =
        e.rings > 1 ? CrossNodeRings(b.GetView(), call.members, b.GetEndpoints(call.members))
                    : std::vector<std::vector<uint32_t>>{call.members};
    const auto k = static_cast<uint32_t>(rings.size());
    auto wireOf = [&](uint32_t r)
    {
        const uint64_t share = ScheduleBuilder::Split(call.bytes, k, r);
        return static_cast<uint64_t>(std::ceil(double(share) / e.bandwidthFactor));
    };
    // A broadcast or reduce is a pipelined chain along each ring from (toward) the root, the
    // rings' shares in parallel (NCCL's ring broadcast and reduce: every channel's ring,
    // across nodes through its own NIC); under LL and LL128 each hop forwards lines as they
    // arrive, under Simple whole steps (the pieces, GetPieceBytes). Its fluid form is its
    // messages.
    if (fluid && !IsChain(call.op))
    {
        if (k == 1)
        {
            RingCollective::AddFluidPasses(b, call.members, wireOf(0), passes, reduced);
            return;
        }
        // The rings' streams in one phase, a pair's streams of several rings as one.
        std::map<std::pair<uint32_t, uint32_t>, uint64_t> pairBytes;
        for (uint32_t r = 0; r < k; ++r)
        {
            const std::vector<uint32_t>& m = rings[r];
            const uint64_t s = wireOf(r);
            for (std::size_t i = 0; i < m.size(); ++i)
            {
                const auto next = static_cast<uint32_t>((i + 1) % m.size());
                pairBytes[{m[i], m[next]}] +=
                    passes * (s - ScheduleBuilder::Split(s, static_cast<uint32_t>(m.size()), next));
            }
        }
        std::vector<FluidStream> streams;
        for (const auto& [pair, bytes] : pairBytes)
        {
            streams.push_back({pair.first, pair.second, bytes});
        }
        const auto n = static_cast<uint32_t>(call.members.size());
        const double localS = reduced > 0 ? b.ReduceSeconds(std::llround(
                                  reduced * (n - 1) * ScheduleBuilder::Split(wireOf(0), n, 0)))
                                          : 0.0;
        b.FluidPhase(call.members, streams, passes * (n - 1), localS);
        return;
    }
    // One ordered connection per neighbour carries both passes, as RingCollective's all-reduce;
    // the rings start together and a rank is done when its last ring is.
    std::vector<ScheduleBuilder::Step> start;
    for (uint32_t m : call.members)
    {
        start.push_back(b.GetReady(m));
    }
    std::vector<std::vector<ScheduleBuilder::Step>> ends(call.members.size());
    for (uint32_t r = 0; r < k; ++r)
    {
        for (std::size_t i = 0; i < call.members.size(); ++i)
        {
            b.SetReady(call.members[i], start[i]);
        }
        if (IsChain(call.op))
        {
            const std::vector<uint32_t>& ring = rings[r];
            const auto root = static_cast<uint32_t>(
                std::find(ring.begin(), ring.end(), call.members[call.root]) - ring.begin());
            if (e.protocol == NcclProtocol::SIMPLE)
            {
                RingCollective::AddChain(b, ring, root, wireOf(r), reduced);
            }
            else
            {
                RingCollective::AddCutThroughChain(b, ring, root, wireOf(r), reduced);
            }
        }
        else
        {
            RingCollective::AddPass(b, rings[r], wireOf(r), reduced);
        }
        if (passes == 2)
        {
            RingCollective::AddPass(b, rings[r], wireOf(r), false);
        }
        for (std::size_t i = 0; i < call.members.size(); ++i)
        {
            ends[i].push_back(b.GetReady(call.members[i]));
        }
    }
    if (k > 1)
    {
        for (std::size_t i = 0; i < call.members.size(); ++i)
        {
            b.SetReady(call.members[i], b.Join(call.members[i], ends[i]));
        }
    }
}

uint64_t
NcclCollective::CountMessages(const ScheduleBuilder& b, const CollectiveCall& call) const
{
    // Ring passes whichever protocol NCCL's estimate picks, or NVLS's pairs (see Write).
    const uint64_t k = call.members.size();
    if (k >= 2
        && (call.op == CollectiveOp::ALL_TO_ALL
            || Choose(b, call).algorithm == NcclAlgorithm::NVLS))
    {
        return k * (k - 1);
    }
    const uint64_t passes = call.op == CollectiveOp::ALL_REDUCE ? 2 : 1;
    const uint64_t rings = k < 2 ? 1 : Choose(b, call).rings;
    if (IsChain(call.op))
    {
        // LL and LL128 chains send each hop's first line apart (AddCutThroughChain).
        const uint64_t perHop = k < 2 || Choose(b, call).protocol == NcclProtocol::SIMPLE ? 1 : 2;
        return k < 2 ? 0 : rings * (k - 1) * perHop;
    }
    return k < 2 ? 0 : rings * passes * k * (k - 1);
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
    if (call.op == CollectiveOp::ALL_TO_ALL)
    {
        bool network = false;
        CommunicatorChannels(b, call, network);
        return name + "(p2p/"
               + ToString(NcclAllToAllEstimate(call.bytes / call.members.size(), network).protocol)
               + ")";
    }
    const NcclEstimate e = Choose(b, call);
    return name + "(" + ToString(e.algorithm) + "/" + ToString(e.protocol) + ")";
}

} // namespace rapidllm
} // namespace ns3
