/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "topology.h"

#include "ns3/log.h"
#include "ns3/spec-error.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <sstream>

namespace ns3 {
namespace rapidllm {

NS_LOG_COMPONENT_DEFINE("RapidLlmTopology");
NS_OBJECT_ENSURE_REGISTERED(Topology);

TypeId
Topology::GetTypeId()
{
    static TypeId tid = TypeId("ns3::rapidllm::Topology")
                            .SetParent<Object>()
                            .SetGroupName("RapidLlm")
                            .AddConstructor<Topology>();
    return tid;
}

Topology::Topology()
{
    static uint64_t next = 0;
    m_uid = ++next;
}
Topology::~Topology() = default;

namespace {
/** \return the default fat-tree leaf size: a balanced two-tier tree has about sqrt(size)
 * endpoints per leaf (as many leaves as endpoints per leaf). */
uint32_t
AutoLeafSize(uint32_t size)
{
    auto leaf = static_cast<uint32_t>(std::ceil(std::sqrt(static_cast<double>(size))));
    return std::max<uint32_t>(1, std::min(leaf, size));
}
} // namespace

void
Topology::CheckEndpoints(uint64_t endpoints, const std::string& source)
{
    // The network and the replay's per-GPU state take about 2.2 KB of host memory per GPU
    // (2.2 GB of peak RSS measured for `run --gpus=1048576 --tp=8`).
    if (endpoints > kMaxEndpoints)
    {
        std::ostringstream os;
        os.precision(3);
        os << "a network of " << endpoints << " GPUs would need about "
           << double(endpoints) * 2.2e3 / 1e9
           << " GB of host memory for the network and the per-GPU replay state (about 2.2 KB "
              "per GPU); at most "
           << kMaxEndpoints << " GPUs are supported";
        throw SpecError(source, "gpus", os.str());
    }
}

Ptr<Topology>
Topology::Build(const NetworkSpec& spec, uint64_t endpoints, const std::string& source)
{
    if (spec.dimensions.empty())
    {
        throw SpecError(source, "network.dimensions", "needs at least one dimension");
    }
    Ptr<Topology> t = CreateObject<Topology>();
    t->m_dims = spec.dimensions;
    uint64_t inner = 1;
    for (std::size_t d = 0; d + 1 < t->m_dims.size(); ++d)
    {
        inner *= t->m_dims[d].size;
    }
    auto& outer = t->m_dims.back();
    if (outer.size == 0)
    {
        if (endpoints == 0)
        {
            throw SpecError(source,
                            "network.dimensions." + outer.name + ".size",
                            "is 'auto': the number of GPUs must be given");
        }
        outer.size = static_cast<uint32_t>((endpoints + inner - 1) / inner);
    }
    uint64_t total = inner * outer.size;
    if (endpoints > total)
    {
        // Which sizes hold them, and how to hold more: the outermost dimension grows with
        // size auto.
        std::string sizes;
        for (const auto& d : t->m_dims)
        {
            sizes += (sizes.empty() ? "" : " x ") + d.name + " " + std::to_string(d.size);
        }
        // A mesh's or torus's shape fixes its size (size: auto is the shape's product).
        const bool shaped = !outer.shape.empty();
        throw SpecError(source,
                        "network.dimensions." + outer.name + (shaped ? ".shape" : ".size"),
                        "the network holds " + std::to_string(total) + " GPUs (" + sizes + ") but "
                            + std::to_string(endpoints) + " were asked for; give the outermost "
                            + "dimension, " + outer.name
                            + (shaped ? ", a larger shape (its size is the shape's product)"
                                      : ", a larger size or size: auto (as many as the GPUs "
                                        "need)"));
    }
    CheckEndpoints(total, source);
    t->m_endpoints = static_cast<uint32_t>(total);
    uint32_t stride = 1;
    for (auto& d : t->m_dims)
    {
        t->m_strides.push_back(stride);
        stride *= d.size;
    }
    for (uint32_t e = 0; e < t->m_endpoints; ++e)
    {
        t->AddNode("gpu" + std::to_string(e), false, 0, 0);
    }
    t->m_switches.resize(t->m_dims.size());
    t->m_leafSize.assign(t->m_dims.size(), 0);
    t->m_leafCount.assign(t->m_dims.size(), 0);
    for (uint32_t d = 0; d < t->m_dims.size(); ++d)
    {
        const auto& dim = t->m_dims[d];
        if (dim.kind == TopologyKind::FAT_TREE)
        {
            uint32_t leaf = dim.leafSize == 0 ? AutoLeafSize(dim.size)
                                              : std::min<uint32_t>(dim.leafSize, dim.size);
            t->m_leafSize[d] = leaf;
            t->m_leafCount[d] = (dim.size + leaf - 1) / leaf;
        }
        uint32_t instances = t->m_endpoints / dim.size;
        t->m_switches[d].resize(instances);
        for (uint32_t inst = 0; inst < instances; ++inst)
        {
            uint32_t low = inst % t->m_strides[d];
            uint32_t high = inst / t->m_strides[d];
            std::vector<uint32_t> members(dim.size);
            for (uint32_t c = 0; c < dim.size; ++c)
            {
                members[c] = low + t->m_strides[d] * (c + dim.size * high);
            }
            t->WireInstance(d, inst, members);
        }
    }
    t->IndexLinks();
    for (const auto& fault : spec.faults)
    {
        t->ApplyFault(fault.link, fault.factor, source);
    }
    NS_LOG_INFO("topology: " << t->m_endpoints << " endpoints, " << t->m_nodes.size() << " nodes, "
                             << t->m_links.size() << " links");
    return t;
}

uint32_t
Topology::AddNode(const std::string& name, bool isSwitch, double switchLatency, uint32_t d)
{
    TopologyNode n;
    n.name = name;
    n.isSwitch = isSwitch;
    n.switchLatencyS = switchLatency;
    n.dimension = d;
    m_nodes.push_back(n);
    m_out.emplace_back();
    auto id = static_cast<uint32_t>(m_nodes.size() - 1);
    m_byName[name] = id;
    return id;
}

void
Topology::AddDuplex(uint32_t a, uint32_t b, uint32_t d, double lineRateBps)
{
    const auto& dim = m_dims[d];
    for (int dir = 0; dir < 2; ++dir)
    {
        TopologyLink l;
        l.src = dir == 0 ? a : b;
        l.dst = dir == 0 ? b : a;
        l.dimension = d;
        l.lineRateBps = lineRateBps;
        l.efficiency = dim.wireEfficiency;
        l.latencyS = dim.latencyS;
        m_links.push_back(l);
        m_out[l.src].push_back(static_cast<uint32_t>(m_links.size() - 1));
    }
}

void
Topology::WireInstance(uint32_t d, uint32_t instance, const std::vector<uint32_t>& members)
{
    const auto& dim = m_dims[d];
    const auto n = static_cast<uint32_t>(members.size());
    const double bw = dim.bandwidthBps;
    const std::string prefix = dim.name + ".";
    switch (dim.kind)
    {
        case TopologyKind::RING:
            for (uint32_t c = 0; c + 1 < n; ++c)
            {
                AddDuplex(members[c], members[c + 1], d, bw);
            }
            if (n > 2)
            {
                AddDuplex(members[n - 1], members[0], d, bw);
            }
            break;
        case TopologyKind::FULLY_CONNECTED:
            for (uint32_t a = 0; a < n; ++a)
            {
                for (uint32_t b = a + 1; b < n; ++b)
                {
                    AddDuplex(members[a], members[b], d, bw);
                }
            }
            break;
        case TopologyKind::SWITCH:
        {
            uint32_t sw =
                AddNode(prefix + "sw" + std::to_string(instance), true, dim.switchLatencyS, d);
            m_switches[d][instance].push_back(sw);
            for (uint32_t c = 0; c < n; ++c)
            {
                AddDuplex(members[c], sw, d, bw);
            }
            break;
        }
        case TopologyKind::MESH:
        case TopologyKind::TORUS:
        {
            const bool wrap = dim.kind == TopologyKind::TORUS;
            std::vector<uint32_t> ext = dim.shape;
            uint32_t sub = 1;
            for (uint32_t s = 0; s < ext.size(); ++s)
            {
                for (uint32_t c = 0; c < n; ++c)
                {
                    uint32_t x = (c / sub) % ext[s];
                    if (x + 1 < ext[s])
                    {
                        AddDuplex(members[c], members[c + sub], d, bw);
                    }
                    else if (wrap && ext[s] > 2)
                    {
                        AddDuplex(members[c], members[c - x * sub], d, bw);
                    }
                }
                sub *= ext[s];
            }
            break;
        }
        case TopologyKind::FAT_TREE:
        {
            const uint32_t leafSize = m_leafSize[d];
            const uint32_t leaves = m_leafCount[d];
            auto& sws = m_switches[d][instance];
            for (uint32_t l = 0; l < leaves; ++l)
            {
                sws.push_back(
                    AddNode(prefix + "leaf" + std::to_string(instance) + "." + std::to_string(l),
                            true,
                            dim.switchLatencyS,
                            d));
            }
            for (uint32_t c = 0; c < n; ++c)
            {
                AddDuplex(members[c], sws[c / leafSize], d, bw);
            }
            if (leaves > 1)
            {
                // Each leaf's uplink capacity is its downlink capacity over the oversubscription,
                // spread over `spines` equal links (one per spine).
                auto spines = static_cast<uint32_t>(
                    std::max(1.0, std::round(leafSize / dim.oversubscription)));
                double upBw = leafSize * bw / (dim.oversubscription * spines);
                for (uint32_t s = 0; s < spines; ++s)
                {
                    sws.push_back(AddNode(prefix + "spine" + std::to_string(instance) + "."
                                              + std::to_string(s),
                                          true,
                                          dim.switchLatencyS,
                                          d));
                }
                for (uint32_t l = 0; l < leaves; ++l)
                {
                    for (uint32_t s = 0; s < spines; ++s)
                    {
                        AddDuplex(sws[l], sws[leaves + s], d, upBw);
                    }
                }
            }
            break;
        }
    }
}

uint32_t
Topology::GetEndpointCount() const
{
    return m_endpoints;
}

uint32_t
Topology::GetNodeCount() const
{
    return static_cast<uint32_t>(m_nodes.size());
}

uint32_t
Topology::GetLinkCount() const
{
    return static_cast<uint32_t>(m_links.size());
}

const TopologyNode&
Topology::GetNode(uint32_t node) const
{
    return m_nodes.at(node);
}

const TopologyLink&
Topology::GetLink(uint32_t link) const
{
    return m_links.at(link);
}

const std::vector<uint32_t>&
Topology::GetOutLinks(uint32_t node) const
{
    return m_out.at(node);
}

uint32_t
Topology::FindLink(uint32_t a, uint32_t b) const
{
    // Binary search of a's out-links sorted by head (first link first among equal heads):
    // switches have hundreds of links, and routing asks for every hop.
    const auto& byHead = m_outByHead.at(a);
    auto it = std::lower_bound(byHead.begin(), byHead.end(), std::make_pair(b, uint32_t(0)));
    if (it != byHead.end() && it->first == b)
    {
        return it->second;
    }
    return std::numeric_limits<uint32_t>::max();
}

void
Topology::IndexLinks()
{
    m_outByHead.assign(m_nodes.size(), {});
    for (uint32_t n = 0; n < m_nodes.size(); ++n)
    {
        auto& byHead = m_outByHead[n];
        for (uint32_t l : m_out[n])
        {
            byHead.emplace_back(m_links[l].dst, l);
        }
        std::sort(byHead.begin(), byHead.end());
    }
}

uint32_t
Topology::GetDimensionCount() const
{
    return static_cast<uint32_t>(m_dims.size());
}

const NetworkDimensionSpec&
Topology::GetDimension(uint32_t d) const
{
    return m_dims.at(d);
}

uint32_t
Topology::GetCoordinate(uint32_t endpoint, uint32_t d) const
{
    return (endpoint / m_strides[d]) % m_dims[d].size;
}

uint32_t
Topology::WithCoordinate(uint32_t endpoint, uint32_t d, uint32_t c) const
{
    uint32_t old = GetCoordinate(endpoint, d);
    return endpoint - old * m_strides[d] + c * m_strides[d];
}

bool
Topology::HasFaults() const
{
    for (const auto& link : m_links)
    {
        if (link.factor != 1.0)
        {
            return true;
        }
    }
    return false;
}

uint32_t
Topology::GetInstance(uint32_t endpoint, uint32_t d) const
{
    uint32_t low = endpoint % m_strides[d];
    uint32_t high = endpoint / (m_strides[d] * m_dims[d].size);
    return low + m_strides[d] * high;
}

const std::vector<uint32_t>&
Topology::GetInstanceSwitches(uint32_t d, uint32_t instance) const
{
    return m_switches.at(d).at(instance);
}

uint32_t
Topology::GetLeafSize(uint32_t d) const
{
    return m_leafSize.at(d);
}

uint32_t
Topology::GetLeafCount(uint32_t d) const
{
    return m_leafCount.at(d);
}

bool
Topology::FindNode(const std::string& name, uint32_t& node) const
{
    auto it = m_byName.find(name);
    if (it != m_byName.end())
    {
        node = it->second;
        return true;
    }
    if (!name.empty() && std::all_of(name.begin(), name.end(), ::isdigit) && name.size() < 10)
    {
        uint64_t e = std::stoull(name);
        if (e < m_endpoints)
        {
            node = static_cast<uint32_t>(e);
            return true;
        }
    }
    return false;
}

uint32_t
Topology::LookupNode(const std::string& name,
                     const std::string& source,
                     const std::string& field) const
{
    uint32_t node = 0;
    if (FindNode(name, node))
    {
        return node;
    }
    // The GPUs, then each kind of switch (its name without the numbers) from its first to its
    // last, so that every tier's names show (the first three switches named NVLink's only).
    struct Kind
    {
        std::string pattern; //!< the name with each digit as '#'
        std::string first;   //!< its first node's name
        std::string last;    //!< its last node's name
    };
    std::vector<Kind> kinds;
    for (std::size_t i = m_endpoints; i < m_nodes.size(); ++i)
    {
        const std::string& node = m_nodes[i].name;
        std::string pattern = node;
        for (char& c : pattern)
        {
            c = std::isdigit(static_cast<unsigned char>(c)) ? '#' : c;
        }
        auto it = std::find_if(kinds.begin(),
                               kinds.end(),
                               [&pattern](const Kind& k)
                               {
                                   return k.pattern == pattern;
                               });
        if (it == kinds.end())
        {
            kinds.push_back({pattern, node, node});
        }
        else
        {
            it->last = node;
        }
    }
    std::string examples = "gpu0..gpu" + std::to_string(m_endpoints - 1);
    for (const Kind& k : kinds)
    {
        examples += ", " + k.first + (k.last != k.first ? ".." + k.last : std::string());
    }
    throw SpecError(source, field, "unknown node '" + name + "'; nodes are named like " + examples);
}

void
Topology::CheckLinkFactor(double factor, const std::string& what, const std::string& source)
{
    if (factor == 0 || (factor >= kMinLinkFactor && factor <= 1))
    {
        return;
    }
    std::ostringstream msg;
    msg << "fault '" << what << "': bandwidth factor " << factor
        << " is out of range; use 0 (a dead link) or a factor in [" << kMinLinkFactor
        << ", 1] (a soft fault)";
    if (factor > 0 && factor < kMinLinkFactor)
    {
        msg << "; a link slowed below " << kMinLinkFactor
            << " of its bandwidth would not finish a message within the simulator's clock";
    }
    throw SpecError(source, "faults.bandwidth_factor", msg.str());
}

void
Topology::SetLinkFactor(uint32_t link, double factor)
{
    CheckLinkFactor(factor, DescribeLink(link), "network");
    m_links.at(link).factor = factor;
    ++m_version;
}

std::vector<uint32_t>
Topology::SelectLinks(const std::string& selector,
                      const std::string& source,
                      const std::string& field) const
{
    // "tier:NAME": every link of a network dimension (both directions).
    const std::string tier = "tier:";
    if (selector.compare(0, tier.size(), tier) == 0)
    {
        const std::string name = selector.substr(tier.size());
        std::string names;
        for (uint32_t d = 0; d < m_dims.size(); ++d)
        {
            names += (d ? ", " : "") + m_dims[d].name;
            if (m_dims[d].name != name)
            {
                continue;
            }
            std::vector<uint32_t> all;
            for (uint32_t l = 0; l < m_links.size(); ++l)
            {
                if (m_links[l].dimension == d)
                {
                    all.push_back(l);
                }
            }
            if (all.empty())
            {
                throw SpecError(source, field, "'" + selector + "': the tier has no links");
            }
            return all;
        }
        throw SpecError(
            source, field, "'" + selector + "' names no network dimension; tiers: " + names);
    }
    // "A-B" / "A>B": try every separator, so that names containing '-' still work; "A" alone
    // is a node fault (every link to and from it, e.g. a switch down).
    uint32_t a = 0;
    uint32_t b = 0;
    bool both = true;
    bool found = false;
    for (std::size_t cut = 0; cut < selector.size() && !found; ++cut)
    {
        if ((selector[cut] == '-' || selector[cut] == '>') && FindNode(selector.substr(0, cut), a)
            && FindNode(selector.substr(cut + 1), b))
        {
            both = selector[cut] == '-';
            found = true;
        }
    }
    if (!found)
    {
        uint32_t node = 0;
        if (FindNode(selector, node))
        {
            std::vector<uint32_t> all;
            for (uint32_t l = 0; l < m_links.size(); ++l)
            {
                if (m_links[l].src == node || m_links[l].dst == node)
                {
                    all.push_back(l);
                }
            }
            return all;
        }
        std::size_t cut = selector.find_first_of("->");
        if (cut == std::string::npos && !selector.empty())
        {
            LookupNode(selector, source, field); // not a node: names the nodes there are
        }
        if (cut == std::string::npos || cut == 0 || cut + 1 >= selector.size())
        {
            throw SpecError(source,
                            field,
                            "'" + selector
                                + "' is not a node or link selector; use 'A-B' (both directions), "
                                  "'A>B' (one direction) or 'A' (every link of node A), e.g. "
                                  "'gpu0-gpu1', 'gpu3>nvlink.sw0' or 'ib.spine0.1'");
        }
        // Name the part that is not a node.
        LookupNode(selector.substr(0, cut), source, field);
        LookupNode(selector.substr(cut + 1), source, field);
    }
    std::vector<uint32_t> changed;
    for (uint32_t l : m_out[a])
    {
        if (m_links[l].dst == b)
        {
            changed.push_back(l);
        }
    }
    if (both)
    {
        for (uint32_t l : m_out[b])
        {
            if (m_links[l].dst == a)
            {
                changed.push_back(l);
            }
        }
    }
    if (changed.empty())
    {
        std::string neighbours;
        for (std::size_t i = 0; i < m_out[a].size() && i < 6; ++i)
        {
            neighbours += (i ? ", " : "") + m_nodes[m_links[m_out[a][i]].dst].name;
        }
        throw SpecError(source,
                        field,
                        "no link joins " + m_nodes[a].name + " and " + m_nodes[b].name + " ("
                            + m_nodes[a].name + " links to " + neighbours
                            + (m_out[a].size() > 6 ? ", ..." : "") + ")");
    }
    return changed;
}

std::vector<uint32_t>
Topology::ApplyFault(const std::string& selector, double factor, const std::string& source)
{
    CheckLinkFactor(factor, selector, source);
    const std::vector<uint32_t> links = SelectLinks(selector, source);
    for (uint32_t l : links)
    {
        m_links[l].factor = factor;
    }
    ++m_version;
    return links;
}

uint64_t
Topology::GetVersion() const
{
    return m_version;
}

uint64_t
Topology::GetUid() const
{
    return m_uid;
}

double
Topology::PathLatency(const std::vector<uint32_t>& path) const
{
    return PathLatency(path.data(), path.size());
}

double
Topology::PathLatency(const uint32_t* path, std::size_t length) const
{
    double s = 0;
    for (std::size_t i = 0; i < length; ++i)
    {
        const auto& l = m_links[path[i]];
        s += l.latencyS;
        if (i + 1 < length)
        {
            s += m_nodes[l.dst].switchLatencyS;
        }
    }
    return s;
}

double
Topology::PathBandwidth(const std::vector<uint32_t>& path) const
{
    double bw = std::numeric_limits<double>::infinity();
    for (uint32_t l : path)
    {
        bw = std::min(bw, m_links[l].Bandwidth());
    }
    return bw;
}

std::string
Topology::DescribeLink(uint32_t link) const
{
    const auto& l = m_links.at(link);
    return m_nodes[l.src].name + ">" + m_nodes[l.dst].name;
}

std::string
Topology::DescribePath(const std::vector<uint32_t>& path) const
{
    if (path.empty())
    {
        return "(empty)";
    }
    std::string s = m_nodes[m_links[path[0]].src].name;
    for (uint32_t l : path)
    {
        s += ">" + m_nodes[m_links[l].dst].name;
    }
    return s;
}

} // namespace rapidllm
} // namespace ns3
