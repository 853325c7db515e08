/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "network-spec.h"

#include "spec-reader.h"
#include "type-registry.h"

#include <sstream>

namespace ns3 {
namespace rapidllm {

namespace {
/**
 * Refuses more channels than NCCL runs (its MAXCHANNELS, 64 in recent versions; each channel
 * holds an SM of every GPU, so more failed only mid-replay, as more SMs than the GPU has).
 */
void
CheckChannels(SpecReader& g, const std::string& key, uint32_t channels)
{
    if (channels > 64)
    {
        g.Fail(key,
               std::to_string(channels)
                   + " channels; allowed: 1 to 64 (NCCL's MAXCHANNELS: a channel holds an SM of "
                     "every GPU)");
    }
}

/** A field's allowed range, shared by the file's reader and Validate(). */
struct Range
{
    double low;  //!< smallest allowed
    double high; //!< largest allowed
};

/** At most 1 EB/s per link: far above any link, far below an overflow of bytes/s. At least 1
 * MB/s: far below any link a GPU cluster has (1 GbE is 125 MB/s); a slower one takes ages per
 * byte, and 1e-12 GB/s ran into the replay's watchdog with an error about dead links. */
constexpr Range kBandwidthGBps{1e-3, 1e9};
constexpr Range kLatencyNs{0, 1e9};           //!< a link's or a switch's latency
constexpr Range kWireEfficiency{0.01, 1.0};   //!< payload share of the line rate
constexpr Range kOversubscription{1.0, 64.0}; //!< a fat tree's leaf down/up bandwidth

/** Throws SpecError unless \p value (finite) lies in \p range. */
void
CheckRange(const std::string& source, const std::string& field, double value, Range range)
{
    if (!(value >= range.low && value <= range.high))
    {
        std::ostringstream os;
        os << value << " is out of range; allowed: " << range.low << " to " << range.high;
        throw SpecError(source, field, os.str());
    }
}
} // namespace

void
NetworkSpec::Validate(const std::string& source) const
{
    for (std::size_t i = 0; i < dimensions.size(); ++i)
    {
        const NetworkDimensionSpec& d = dimensions[i];
        const std::string at = "network.dimensions[" + std::to_string(i) + "].";
        CheckRange(source, at + "bandwidth_GBps", d.bandwidthBps / 1e9, kBandwidthGBps);
        CheckRange(source, at + "latency_ns", d.latencyS * 1e9, kLatencyNs);
        CheckRange(source, at + "switch_latency_ns", d.switchLatencyS * 1e9, kLatencyNs);
        CheckRange(source, at + "wire_efficiency", d.wireEfficiency, kWireEfficiency);
        CheckRange(source, at + "oversubscription", d.oversubscription, kOversubscription);
    }
}

namespace {
const TopologyKind kAllKinds[] = {TopologyKind::RING,
                                  TopologyKind::FULLY_CONNECTED,
                                  TopologyKind::SWITCH,
                                  TopologyKind::MESH,
                                  TopologyKind::TORUS,
                                  TopologyKind::FAT_TREE};
} // namespace

std::string
ToString(TopologyKind kind)
{
    switch (kind)
    {
        case TopologyKind::RING:
            return "ring";
        case TopologyKind::FULLY_CONNECTED:
            return "fully_connected";
        case TopologyKind::SWITCH:
            return "switch";
        case TopologyKind::MESH:
            return "mesh";
        case TopologyKind::TORUS:
            return "torus";
        case TopologyKind::FAT_TREE:
            return "fat_tree";
    }
    return "switch";
}

std::vector<std::string>
TopologyKindNames()
{
    std::vector<std::string> names;
    for (auto k : kAllKinds)
    {
        names.push_back(ToString(k));
    }
    return names;
}

bool
NetworkDimensionSpec::operator==(const NetworkDimensionSpec& o) const
{
    return name == o.name && size == o.size && kind == o.kind && shape == o.shape
           && bandwidthBps == o.bandwidthBps && latencyS == o.latencyS
           && switchLatencyS == o.switchLatencyS && wireEfficiency == o.wireEfficiency
           && oversubscription == o.oversubscription && leafSize == o.leafSize
           && collective == o.collective && nccl == o.nccl;
}

bool
NcclGraphSpec::operator==(const NcclGraphSpec& o) const
{
    return ringChannels == o.ringChannels && channelBps == o.channelBps && sm == o.sm
           && ll128ChannelBps == o.ll128ChannelBps && nvls == o.nvls
           && channelsPerGpu == o.channelsPerGpu;
}

bool
LinkFaultSpec::operator==(const LinkFaultSpec& o) const
{
    return link == o.link && factor == o.factor;
}

bool
NetworkSpec::operator==(const NetworkSpec& o) const
{
    return dimensions == o.dimensions && routing == o.routing && faults == o.faults;
}

bool
NetworkSpec::operator!=(const NetworkSpec& o) const
{
    return !(*this == o);
}

uint64_t
NetworkSpec::FixedSize() const
{
    uint64_t n = 1;
    for (const auto& d : dimensions)
    {
        n *= d.size == 0 ? 1 : d.size;
    }
    return n;
}

namespace {
NetworkDimensionSpec
ReadDimension(SpecReader& r, bool outermost)
{
    NetworkDimensionSpec d;
    d.name = r.GetName("name");
    std::string kind = r.GetChoice("topology", TopologyKindNames());
    for (auto k : kAllKinds)
    {
        if (ToString(k) == kind)
        {
            d.kind = k;
        }
    }
    if (r.Has("size") && r.GetNode("size").IsScalar() && r.GetNode("size").Scalar() == "auto")
    {
        if (!outermost)
        {
            r.Fail("size", "'auto' is only allowed on the outermost dimension");
        }
        d.size = 0;
    }
    else
    {
        d.size = r.GetCount("size", 1);
    }
    if (d.kind == TopologyKind::MESH || d.kind == TopologyKind::TORUS)
    {
        uint64_t product = 1;
        for (auto e : r.GetCountList("shape", 1))
        {
            d.shape.push_back(e);
            product *= e;
        }
        if (d.shape.size() < 1 || d.shape.size() > 3)
        {
            r.Fail("shape", "a mesh or torus has 1 to 3 extents, e.g. [4, 4]");
        }
        if (d.size != 0 && product != d.size)
        {
            r.Fail("shape",
                   "the extents multiply to " + std::to_string(product) + " but size is "
                       + std::to_string(d.size));
        }
        d.size = product;
    }
    d.bandwidthBps = r.GetInRange("bandwidth_GBps", kBandwidthGBps.low, kBandwidthGBps.high) * 1e9;
    d.latencyS = r.GetInRange("latency_ns", kLatencyNs.low, kLatencyNs.high) * 1e-9;
    d.switchLatencyS = r.GetInRange("switch_latency_ns", kLatencyNs.low, kLatencyNs.high, 0) * 1e-9;
    d.wireEfficiency =
        r.GetInRange("wire_efficiency", kWireEfficiency.low, kWireEfficiency.high, 1.0);
    if (d.kind == TopologyKind::FAT_TREE)
    {
        d.oversubscription =
            r.GetInRange("oversubscription", kOversubscription.low, kOversubscription.high, 1.0);
        d.leafSize = r.GetCount("leaf_size", 1, 0);
    }
    // The collective algorithm this dimension prefers: a registered CollectiveAlgorithm name,
    // which the system layer validates when it plans collectives (model/system/).
    if (r.Has("collective"))
    {
        d.collective = r.GetString("collective");
        if (d.collective.empty())
        {
            // "" would read as the default algorithm: leave the field out for that.
            r.Fail("collective",
                   "empty; give an algorithm's name (e.g. ring, nccl) or leave the field out for "
                   "the default");
        }
        // A misspelt name fails here, at its line; whether the algorithm can be a dimension's
        // own is the system layer's to say.
        const std::string unknown = TypeRegistryBase::Unknown(
            "ns3::rapidllm::CollectiveAlgorithm", d.collective, "collective algorithm");
        if (!unknown.empty())
        {
            r.Fail("collective", unknown);
        }
    }
    // What NCCL's topology search finds on this dimension (model/system/nccl-collective.h).
    if (r.Has("nccl"))
    {
        SpecReader g = r.GetMap("nccl");
        // A network dimension may give only its channels per GPU; the ring graph is either
        // given (ring_channels and channel_GBps together) or searched for the GPUs' sm.
        if (g.Has("sm"))
        {
            d.nccl.sm = g.GetCount("sm", 1);
            if (d.nccl.sm != 80 && d.nccl.sm != 90)
            {
                g.Fail("sm",
                       std::to_string(d.nccl.sm)
                           + " has no NCCL ring search here; allowed: 80 (Ampere), 90 (Hopper), "
                             "or give ring_channels and channel_GBps");
            }
        }
        if (g.Has("ring_channels") || g.Has("channel_GBps")
            || (!g.Has("channels_per_gpu") && !g.Has("sm")))
        {
            d.nccl.ringChannels = g.GetCount("ring_channels", 1);
            CheckChannels(g, "ring_channels", d.nccl.ringChannels);
            d.nccl.channelBps = g.GetInRange("channel_GBps", 0.001, 1e6) * 1e9;
        }
        if (d.nccl.sm > 0 || d.nccl.ringChannels > 0)
        {
            d.nccl.ll128ChannelBps = g.GetInRange("ll128_channel_GBps", 0.001, 1e6, 1e6) * 1e9;
        }
        else if (g.Has("ll128_channel_GBps"))
        {
            // A field of the ring graph, not a misspelt one: said so, not "unknown".
            g.Fail("ll128_channel_GBps",
                   "LL128's ceiling per channel is one of the ring graph's fields: give it with "
                   "sm or ring_channels (and channel_GBps), not with channels_per_gpu alone");
        }
        d.nccl.nvls = g.GetBool("nvls", false);
        if (g.Has("channels_per_gpu"))
        {
            d.nccl.channelsPerGpu = g.GetCount("channels_per_gpu", 1);
            CheckChannels(g, "channels_per_gpu", d.nccl.channelsPerGpu);
        }
        g.Finish();
    }
    r.Finish();
    return d;
}
} // namespace

std::vector<std::string>
NetworkSpec::Notes() const
{
    std::vector<std::string> notes;
    for (const NetworkDimensionSpec& d : dimensions)
    {
        if (!(d.nccl == NcclGraphSpec()) && d.collective != "nccl")
        {
            notes.push_back("network dimension " + d.name
                            + "'s nccl section is not used: it describes NCCL's graph for "
                              "'collective: nccl', and "
                            + d.name + " runs "
                            + (d.collective.empty() ? "its topology's default algorithm"
                                                    : "'" + d.collective + "'"));
        }
    }
    return notes;
}

NetworkSpec
NetworkSpec::Read(SpecReader& r)
{
    NetworkSpec n;
    auto dims = r.GetMapList("dimensions");
    if (dims.empty())
    {
        r.Fail("dimensions", "needs at least one dimension");
    }
    for (std::size_t i = 0; i < dims.size(); ++i)
    {
        n.dimensions.push_back(ReadDimension(dims[i], i + 1 == dims.size()));
        // Overrides, faults (tier:NAME) and switch names address a dimension by its name.
        for (std::size_t j = 0; j < i; ++j)
        {
            if (n.dimensions[j].name == n.dimensions[i].name)
            {
                dims[i].Fail("name",
                             "'" + n.dimensions[i].name + "' names dimension " + std::to_string(j)
                                 + " too; give each dimension a name of its own");
            }
        }
    }
    n.routing = r.GetString("routing", n.routing);
    const std::string unknown =
        TypeRegistryBase::Unknown("ns3::rapidllm::RoutingPolicy", n.routing, "routing policy");
    if (!unknown.empty())
    {
        r.Fail("routing", unknown);
    }
    if (r.Has("faults"))
    {
        for (auto& f : r.GetMapList("faults"))
        {
            // The known fields first: a misspelt one ('factor') is named as unknown, not reported
            // as the field it was meant to be missing.
            f.Has("link");
            f.Has("bandwidth_factor");
            f.Finish();
            LinkFaultSpec fault;
            fault.link = f.GetString("link");
            for (const LinkFaultSpec& earlier : n.faults)
            {
                if (earlier.link == fault.link)
                {
                    // One would silently replace the other (the last applied).
                    f.Fail("link",
                           "'" + fault.link
                               + "' is given twice; give each link's fault once (a selector that "
                                 "overlaps another, e.g. one link of a faulted tier, applies "
                                 "after it)");
                }
            }
            fault.factor = f.GetInRange("bandwidth_factor", 0.0, 1.0);
            if (fault.factor > 0 && fault.factor < LinkFaultSpec::kMinFactor)
            {
                std::ostringstream os;
                os << "got " << fault.factor << ": a factor below " << LinkFaultSpec::kMinFactor
                   << " is not modelled (the link would take ages per byte); give 0 for a "
                      "dead link, or a factor from "
                   << LinkFaultSpec::kMinFactor << " to 1";
                f.Fail("bandwidth_factor", os.str());
            }
            f.Finish();
            n.faults.push_back(fault);
        }
    }
    r.Finish();
    return n;
}

} // namespace rapidllm
} // namespace ns3
