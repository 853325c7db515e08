/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "packet-path-routing.h"

#include "ns3/log.h"
#include "ns3/output-stream-wrapper.h"
#include "ns3/uinteger.h"

namespace ns3 {
namespace rapidllm {

NS_LOG_COMPONENT_DEFINE("RapidLlmPacketPathRouting");
NS_OBJECT_ENSURE_REGISTERED(PacketPathRouting);

namespace {
/** First octet of every node address. */
constexpr uint32_t kNodeNet = 11;
} // namespace

TypeId
PacketPathRouting::GetTypeId()
{
    static TypeId tid = TypeId("ns3::rapidllm::PacketPathRouting")
                            .SetParent<Ipv4RoutingProtocol>()
                            .SetGroupName("RapidLlm")
                            .AddConstructor<PacketPathRouting>();
    return tid;
}

PacketPathRouting::PacketPathRouting() = default;
PacketPathRouting::~PacketPathRouting() = default;

void
PacketPathRouting::DoDispose()
{
    m_routes.clear();
    m_ipv4 = nullptr;
    Ipv4RoutingProtocol::DoDispose();
}

Ipv4Address
PacketPathRouting::NodeAddress(uint32_t node, uint32_t slot)
{
    return Ipv4Address((kNodeNet << 24) | ((slot & 0xff) << 16) | (node & 0xffff));
}

uint32_t
PacketPathRouting::AddressNode(Ipv4Address address)
{
    return address.Get() & 0xffff;
}

void
PacketPathRouting::SetTopologyNode(uint32_t node)
{
    m_node = node;
}

void
PacketPathRouting::AddHop(
    Ipv4Address src, Ipv4Address dst, uint32_t hop, uint32_t interface, Ipv4Address gateway)
{
    Ptr<Ipv4Route> route = Create<Ipv4Route>();
    route->SetSource(src);
    route->SetDestination(dst);
    route->SetGateway(gateway);
    route->SetOutputDevice(m_ipv4->GetNetDevice(interface));
    std::vector<Visit>& visits = m_routes[Key(src, dst)];
    for (auto& v : visits)
    {
        if (v.hop == hop)
        {
            v.route = route; // installed again: the same path
            return;
        }
    }
    visits.push_back({hop, route});
    ++m_hops;
}

void
PacketPathRouting::RemoveHop(Ipv4Address src, Ipv4Address dst, uint32_t hop)
{
    auto it = m_routes.find(Key(src, dst));
    if (it == m_routes.end())
    {
        return;
    }
    std::vector<Visit>& visits = it->second;
    for (auto v = visits.begin(); v != visits.end(); ++v)
    {
        if (v->hop == hop)
        {
            visits.erase(v);
            --m_hops;
            break;
        }
    }
    if (visits.empty())
    {
        m_routes.erase(it);
    }
}

uint32_t
PacketPathRouting::GetHopCount() const
{
    return m_hops;
}

Ptr<Ipv4Route>
PacketPathRouting::Select(const std::vector<Visit>& visits, uint32_t hop, uint8_t ttl) const
{
    if (visits.size() == 1)
    {
        return visits.front().route;
    }
    if (hop == UINT32_MAX)
    {
        // The source sends with DefaultTtl and every node that forwards takes one off, so a
        // packet that crossed k links arrives with DefaultTtl - (k - 1).
        UintegerValue initial;
        m_ipv4->GetAttribute("DefaultTtl", initial);
        hop = static_cast<uint32_t>(initial.Get()) + 1 - ttl;
    }
    for (const auto& v : visits)
    {
        if (v.hop == hop)
        {
            return v.route;
        }
    }
    return nullptr;
}

Ptr<Ipv4Route>
PacketPathRouting::RouteOutput(Ptr<Packet> p,
                               const Ipv4Header& header,
                               Ptr<NetDevice> oif,
                               Socket::SocketErrno& sockerr)
{
    // A socket asking before it has a local address gets this node's slot-0 address.
    Ipv4Address src = header.GetSource();
    if ((src.Get() >> 24) != kNodeNet || AddressNode(src) != m_node)
    {
        src = NodeAddress(m_node, 0);
    }
    auto it = m_routes.find(Key(src, header.GetDestination()));
    Ptr<Ipv4Route> route = it == m_routes.end() ? nullptr : Select(it->second, 0, 0);
    if (!route)
    {
        NS_LOG_LOGIC("no path from " << src << " to " << header.GetDestination());
        sockerr = Socket::ERROR_NOROUTETOHOST;
        return nullptr;
    }
    sockerr = Socket::ERROR_NOTERROR;
    return route;
}

bool
PacketPathRouting::RouteInput(Ptr<const Packet> p,
                              const Ipv4Header& header,
                              Ptr<const NetDevice> idev,
                              UnicastForwardCallback ucb,
                              MulticastForwardCallback mcb,
                              LocalDeliverCallback lcb,
                              ErrorCallback ecb)
{
    const Ipv4Address dst = header.GetDestination();
    if ((dst.Get() >> 24) == kNodeNet && AddressNode(dst) == m_node)
    {
        if (lcb.IsNull())
        {
            return false;
        }
        lcb(p, header, m_ipv4->GetInterfaceForDevice(idev));
        return true;
    }
    auto it = m_routes.find(Key(header.GetSource(), dst));
    Ptr<Ipv4Route> route =
        it == m_routes.end() ? nullptr : Select(it->second, UINT32_MAX, header.GetTtl());
    if (!route)
    {
        NS_LOG_LOGIC("node " << m_node << ": no hop for " << header.GetSource() << " > " << dst
                             << " (TTL " << unsigned(header.GetTtl()) << ")");
        return false;
    }
    ucb(route, p, header);
    return true;
}

void
PacketPathRouting::NotifyInterfaceUp(uint32_t interface)
{}

void
PacketPathRouting::NotifyInterfaceDown(uint32_t interface)
{}

void
PacketPathRouting::NotifyAddAddress(uint32_t interface, Ipv4InterfaceAddress address)
{}

void
PacketPathRouting::NotifyRemoveAddress(uint32_t interface, Ipv4InterfaceAddress address)
{}

void
PacketPathRouting::SetIpv4(Ptr<Ipv4> ipv4)
{
    m_ipv4 = ipv4;
}

void
PacketPathRouting::PrintRoutingTable(Ptr<OutputStreamWrapper> stream, Time::Unit unit) const
{
    std::ostream& os = *stream->GetStream();
    os << "PacketPathRouting node " << m_node << ": " << m_hops << " hops\n";
}

PacketPathRoutingHelper*
PacketPathRoutingHelper::Copy() const
{
    return new PacketPathRoutingHelper(*this);
}

Ptr<Ipv4RoutingProtocol>
PacketPathRoutingHelper::Create(Ptr<Node> node) const
{
    return CreateObject<PacketPathRouting>();
}

} // namespace rapidllm
} // namespace ns3
