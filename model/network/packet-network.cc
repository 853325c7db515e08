/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "packet-network.h"

#include "ns3/boolean.h"
#include "ns3/data-rate.h"
#include "ns3/enum.h"
#include "ns3/inet-socket-address.h"
#include "ns3/internet-stack-helper.h"
#include "ns3/ipv4-l3-protocol.h"
#include "ns3/log.h"
#include "ns3/point-to-point-channel.h"
#include "ns3/point-to-point-helper.h"
#include "ns3/point-to-point-net-device.h"
#include "ns3/queue-size.h"
#include "ns3/simulator.h"
#include "ns3/spec-error.h"
#include "ns3/string.h"
#include "ns3/tcp-l4-protocol.h"
#include "ns3/tcp-socket-factory.h"
#include "ns3/traffic-control-helper.h"
#include "ns3/traffic-control-layer.h"
#include "ns3/uinteger.h"
#include "packet-message-header.h"
#include "packet-path-routing.h"

#include <algorithm>
#include <limits>

namespace ns3 {
namespace rapidllm {

NS_LOG_COMPONENT_DEFINE("RapidLlmPacketNetwork");
NS_OBJECT_ENSURE_REGISTERED(PacketNetwork);

namespace {
/** IPv4 header without options, bytes. */
constexpr uint32_t kIpHeader = 20;
/** TCP header with the timestamp option ns-3 sends on every segment (10 bytes, padded to 12). */
constexpr uint32_t kTcpHeader = 32;
/** PPP header PointToPointNetDevice adds to every frame, bytes. */
constexpr uint32_t kPppHeader = 2;
/** The warm-up frame every connection sends first: a header with the reserved id. */
const uint8_t kWarmUpFrame[PacketMessageHeader::kSize] = {
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0};
/** The reserved message id of the warm-up frame. */
constexpr uint64_t kWarmUpId = std::numeric_limits<uint64_t>::max();
} // namespace

TypeId
PacketNetwork::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::rapidllm::PacketNetwork")
            .SetParent<NetworkBackend>()
            .SetGroupName("RapidLlm")
            .AddConstructor<PacketNetwork>()
            .AddAttribute("Mtu",
                          "IP MTU of every link, bytes (jumbo frames, as datacenter fabrics use).",
                          UintegerValue(9000),
                          MakeUintegerAccessor(&PacketNetwork::m_mtu),
                          MakeUintegerChecker<uint32_t>(576, 65000))
            .AddAttribute("SegmentSize",
                          "TCP segment payload, bytes; 0 = MTU - 20 (IP) - 32 (TCP with the "
                          "timestamp option), so a full segment fills one MTU.",
                          UintegerValue(0),
                          MakeUintegerAccessor(&PacketNetwork::m_segmentSize),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("SendBuffer",
                          "TCP send buffer per connection, bytes (well above the largest "
                          "bandwidth-delay product here, 1.7 MB at 240 GB/s and 7 us RTT; TCP's "
                          "NextSeg scans the whole window per segment, so not much more).",
                          UintegerValue(4u << 20),
                          MakeUintegerAccessor(&PacketNetwork::m_sendBuffer),
                          MakeUintegerChecker<uint32_t>(1u << 16))
            .AddAttribute("ReceiveBuffer",
                          "TCP receive buffer (advertised window) per connection, bytes.",
                          UintegerValue(4u << 20),
                          MakeUintegerAccessor(&PacketNetwork::m_receiveBuffer),
                          MakeUintegerChecker<uint32_t>(1u << 16))
            .AddAttribute("InitialCwnd",
                          "Initial congestion window, segments. A persistent connection's window "
                          "is already open; the default covers the receive buffer, so messages "
                          "never pay slow start.",
                          UintegerValue(2000),
                          MakeUintegerAccessor(&PacketNetwork::m_initialCwnd),
                          MakeUintegerChecker<uint32_t>(1))
            .AddAttribute("DelAckCount",
                          "Segments received before an ACK is sent (1 = one ACK per segment).",
                          UintegerValue(1),
                          MakeUintegerAccessor(&PacketNetwork::m_delAckCount),
                          MakeUintegerChecker<uint32_t>(1))
            .AddAttribute("MinRto",
                          "Minimum retransmission timeout (ns-3's default is 1 s).",
                          TimeValue(MilliSeconds(10)),
                          MakeTimeAccessor(&PacketNetwork::m_minRto),
                          MakeTimeChecker())
            .AddAttribute("ClockGranularity",
                          "RTO clock granularity (ns-3's default is 1 ms).",
                          TimeValue(MicroSeconds(1)),
                          MakeTimeAccessor(&PacketNetwork::m_clockGranularity),
                          MakeTimeChecker())
            .AddAttribute("CongestionControl",
                          "TCP congestion control TypeId (e.g. ns3::TcpNewReno, ns3::TcpDctcp).",
                          StringValue("ns3::TcpNewReno"),
                          MakeStringAccessor(&PacketNetwork::m_congestion),
                          MakeStringChecker())
            .AddAttribute("QueueDisc",
                          "Root queue discipline of every device: fq (per-flow deficit round "
                          "robin, no AQM drops: lossless), fifo, fq-codel (ns-3's default, "
                          "with CoDel) or a QueueDisc TypeId name. See doc/packet-network.md.",
                          StringValue("fq"),
                          MakeStringAccessor(&PacketNetwork::m_queueDisc),
                          MakeStringChecker())
            .AddAttribute("QueueDiscPackets",
                          "Queue discipline limit, packets (large: the fabric is lossless).",
                          UintegerValue(200000),
                          MakeUintegerAccessor(&PacketNetwork::m_queueDiscPackets),
                          MakeUintegerChecker<uint32_t>(1))
            .AddAttribute("DeviceQueuePackets",
                          "Transmit queue of each PointToPoint device, packets (small, so that "
                          "the queue discipline does the queueing).",
                          UintegerValue(4),
                          MakeUintegerAccessor(&PacketNetwork::m_deviceQueuePackets),
                          MakeUintegerChecker<uint32_t>(1))
            .AddAttribute(
                "HeaderOverhead",
                "How the IP/TCP/PPP headers relate to the topology's wire efficiency.",
                EnumValue(HEADERS_IN_EFFICIENCY),
                MakeEnumAccessor(&PacketNetwork::m_headerMode),
                MakeEnumChecker(HEADERS_IN_EFFICIENCY, "in-efficiency", HEADERS_EXTRA, "extra"))
            .AddAttribute("Port",
                          "TCP port every endpoint listens on.",
                          UintegerValue(5000),
                          MakeUintegerAccessor(&PacketNetwork::m_port),
                          MakeUintegerChecker<uint16_t>(1));
    return tid;
}

PacketNetwork::PacketNetwork() = default;
PacketNetwork::~PacketNetwork() = default;

void
PacketNetwork::DoDispose()
{
    for (auto& c : m_connections)
    {
        if (c.socket)
        {
            c.socket->SetSendCallback(MakeNullCallback<void, Ptr<Socket>, uint32_t>());
            c.socket->SetConnectCallback(MakeNullCallback<void, Ptr<Socket>>(),
                                         MakeNullCallback<void, Ptr<Socket>>());
        }
        c.socket = nullptr;
    }
    for (auto& r : m_receivers)
    {
        if (r.socket)
        {
            r.socket->SetRecvCallback(MakeNullCallback<void, Ptr<Socket>>());
        }
        r.socket = nullptr;
    }
    m_connections.clear();
    m_receivers.clear();
    m_listeners.clear();
    m_callbacks.clear();
    m_queueDiscs.clear();
    m_routingTables.clear();
    m_nodes.clear();
    m_readyCallbacks.clear();
    NetworkBackend::DoDispose();
}

void
PacketNetwork::SetTopology(Ptr<Topology> topology)
{
    if (m_built)
    {
        throw SpecError("network", "", "the packet network is already built on a topology");
    }
    if (topology->GetNodeCount() > 65536)
    {
        throw SpecError("network",
                        "",
                        "the packet network supports at most 65536 nodes (the topology has "
                            + std::to_string(topology->GetNodeCount()) + ")");
    }
    NetworkBackend::SetTopology(topology);
}

uint32_t
PacketNetwork::GetSegmentSize() const
{
    return m_segmentSize > 0 ? m_segmentSize : m_mtu - kIpHeader - kTcpHeader;
}

double
PacketNetwork::GetStackEfficiency() const
{
    return static_cast<double>(GetSegmentSize())
           / (GetSegmentSize() + kIpHeader + kTcpHeader + kPppHeader);
}

Ptr<Node>
PacketNetwork::GetNode(uint32_t node)
{
    Build();
    return m_nodes.at(node);
}

Ptr<NetDevice>
PacketNetwork::GetLinkDevice(uint32_t link)
{
    Build();
    const uint32_t iface = m_linkInterface.at(link);
    if (iface == std::numeric_limits<uint32_t>::max())
    {
        return nullptr;
    }
    return m_nodes[m_topology->GetLink(link).src]->GetObject<Ipv4>()->GetNetDevice(iface);
}

void
PacketNetwork::Build()
{
    if (m_built)
    {
        return;
    }
    if (!m_topology || !m_routing)
    {
        throw SpecError("network", "", "the packet network has no topology or routing policy");
    }
    if (GetSegmentSize() + kIpHeader + kTcpHeader > m_mtu)
    {
        throw SpecError("network",
                        "PacketNetwork::SegmentSize",
                        "a segment of " + std::to_string(GetSegmentSize())
                            + " bytes plus 52 bytes of headers exceeds the MTU of "
                            + std::to_string(m_mtu));
    }
    m_built = true;
    const Topology& topo = *m_topology;
    const uint32_t n = topo.GetNodeCount();
    NodeContainer all;
    for (uint32_t i = 0; i < n; ++i)
    {
        Ptr<Node> node = CreateObject<Node>();
        m_nodes.push_back(node);
        all.Add(node);
    }
    InternetStackHelper stack;
    stack.SetIpv6StackInstall(false);
    PacketPathRoutingHelper routingHelper;
    stack.SetRoutingHelper(routingHelper);
    stack.Install(all);
    const TypeId congestion = TypeId::LookupByName(m_congestion);
    for (uint32_t i = 0; i < n; ++i)
    {
        Ptr<Ipv4> ipv4 = m_nodes[i]->GetObject<Ipv4>();
        Ptr<PacketPathRouting> table = DynamicCast<PacketPathRouting>(ipv4->GetRoutingProtocol());
        table->SetTopologyNode(i);
        m_routingTables.push_back(table);
        // The node's own address (slot 0) lives on the loopback interface.
        ipv4->AddAddress(0,
                         Ipv4InterfaceAddress(PacketPathRouting::NodeAddress(i, 0),
                                              Ipv4Mask("255.255.255.255")));
        m_nodes[i]->GetObject<TcpL4Protocol>()->SetAttribute("SocketType", TypeIdValue(congestion));
        if (i < topo.GetEndpointCount())
        {
            m_nodes[i]->GetObject<Ipv4L3Protocol>()->TraceConnectWithoutContext(
                "LocalDeliver", MakeCallback(&PacketNetwork::CountLocalDeliver, this));
        }
    }

    // Links: one PointToPoint channel per physical connection (a directed link and its
    // reverse), each device sending at its own direction's rate.
    const double stackEff = GetStackEfficiency();
    const uint32_t links = topo.GetLinkCount();
    m_linkInterface.assign(links, std::numeric_limits<uint32_t>::max());
    std::vector<bool> paired(links, false);
    PointToPointHelper p2p;
    p2p.SetDeviceAttribute("Mtu", UintegerValue(m_mtu));
    p2p.SetQueue("ns3::DropTailQueue<Packet>",
                 "MaxSize",
                 QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, m_deviceQueuePackets)));
    TrafficControlHelper tch;
    const QueueSizeValue limit(QueueSize(QueueSizeUnit::PACKETS, m_queueDiscPackets));
    if (m_queueDisc == "fq")
    {
        // Per-flow deficit round robin (FqCoDel's scheduler) with CoDel's drops out of reach:
        // the fabrics modelled (NVLink, InfiniBand) are lossless.
        tch.SetRootQueueDisc("ns3::FqCoDelQueueDisc",
                             "MaxSize",
                             limit,
                             "Target",
                             StringValue("1000s"),
                             "Interval",
                             StringValue("10000s"),
                             "EnableSetAssociativeHash",
                             BooleanValue(true));
    }
    else if (m_queueDisc == "fifo")
    {
        tch.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", limit);
    }
    else if (m_queueDisc == "fq-codel")
    {
        tch.SetRootQueueDisc("ns3::FqCoDelQueueDisc", "MaxSize", limit);
    }
    else
    {
        TypeId tid;
        if (!TypeId::LookupByNameFailSafe(m_queueDisc, &tid)
            || !tid.IsChildOf(QueueDisc::GetTypeId()))
        {
            throw SpecError("network",
                            "PacketNetwork::QueueDisc",
                            "'" + m_queueDisc
                                + "' is not fq, fifo, fq-codel or a QueueDisc TypeId name");
        }
        tch.SetRootQueueDisc(m_queueDisc, "MaxSize", limit);
    }
    uint32_t linkAddress = 0;
    auto deviceRate = [&](const TopologyLink& l)
    {
        double payload = l.lineRateBps * l.efficiency * (l.IsAlive() ? l.factor : 1.0);
        double rate = m_headerMode == HEADERS_IN_EFFICIENCY ? payload / stackEff : payload;
        return DataRate(static_cast<uint64_t>(std::llround(rate * 8.0)));
    };
    for (uint32_t l = 0; l < links; ++l)
    {
        if (paired[l])
        {
            continue;
        }
        const TopologyLink& fwd = topo.GetLink(l);
        uint32_t rev = std::numeric_limits<uint32_t>::max();
        for (uint32_t r : topo.GetOutLinks(fwd.dst))
        {
            if (!paired[r] && r != l && topo.GetLink(r).dst == fwd.src)
            {
                rev = r;
                break;
            }
        }
        paired[l] = true;
        if (rev != std::numeric_limits<uint32_t>::max())
        {
            paired[rev] = true;
        }
        const bool revAlive =
            rev != std::numeric_limits<uint32_t>::max() && topo.GetLink(rev).IsAlive();
        if (!fwd.IsAlive() && !revAlive)
        {
            continue; // a hard fault: the link is not installed
        }
        const double delay =
            fwd.latencyS
            + 0.5 * (topo.GetNode(fwd.src).switchLatencyS + topo.GetNode(fwd.dst).switchLatencyS);
        p2p.SetChannelAttribute("Delay", TimeValue(Seconds(delay)));
        NetDeviceContainer devs = p2p.Install(m_nodes[fwd.src], m_nodes[fwd.dst]);
        devs.Get(0)->SetAttribute("DataRate", DataRateValue(deviceRate(fwd)));
        devs.Get(1)->SetAttribute("DataRate",
                                  DataRateValue(rev != std::numeric_limits<uint32_t>::max()
                                                    ? deviceRate(topo.GetLink(rev))
                                                    : deviceRate(fwd)));
        QueueDiscContainer qdiscs = tch.Install(devs);
        for (uint32_t q = 0; q < qdiscs.GetN(); ++q)
        {
            m_queueDiscs.push_back(qdiscs.Get(q));
        }
        for (uint32_t side = 0; side < 2; ++side)
        {
            Ptr<NetDevice> dev = devs.Get(side);
            Ptr<Ipv4> ipv4 = dev->GetNode()->GetObject<Ipv4>();
            const uint32_t iface = ipv4->AddInterface(dev);
            // Interface addresses only need to be unique: 12.x.y.z.
            ++linkAddress;
            ipv4->AddAddress(iface,
                             Ipv4InterfaceAddress(Ipv4Address((12u << 24) | linkAddress),
                                                  Ipv4Mask("255.255.255.255")));
            ipv4->SetUp(iface);
            if (side == 0)
            {
                m_linkInterface[l] = iface;
            }
            else if (rev != std::numeric_limits<uint32_t>::max())
            {
                m_linkInterface[rev] = iface;
            }
        }
    }
    m_listeners.resize(topo.GetEndpointCount());
    NS_LOG_INFO("packet network: " << n << " nodes, " << m_queueDiscs.size() / 2 << " links");
}

void
PacketNetwork::InstallPath(Ipv4Address srcAddr,
                           Ipv4Address dstAddr,
                           const std::vector<uint32_t>& path)
{
    for (uint32_t l : path)
    {
        const TopologyLink& link = m_topology->GetLink(l);
        if (m_linkInterface[l] == std::numeric_limits<uint32_t>::max() || !link.IsAlive())
        {
            throw SpecError("network",
                            "",
                            "the routing policy chose the dead link "
                                + m_topology->DescribeLink(l));
        }
        m_routingTables[link.src]->AddHop(
            srcAddr, dstAddr, m_linkInterface[l], PacketPathRouting::NodeAddress(link.dst, 0));
    }
}

void
PacketNetwork::ConfigureSocket(Ptr<Socket> socket) const
{
    socket->SetAttribute("SegmentSize", UintegerValue(GetSegmentSize()));
    socket->SetAttribute("SndBufSize", UintegerValue(m_sendBuffer));
    socket->SetAttribute("RcvBufSize", UintegerValue(m_receiveBuffer));
    socket->SetAttribute("InitialCwnd", UintegerValue(m_initialCwnd));
    socket->SetAttribute("DelAckCount", UintegerValue(m_delAckCount));
    socket->SetAttribute("TcpNoDelay", BooleanValue(true));
    socket->SetAttribute("MinRto", TimeValue(m_minRto));
    socket->SetAttribute("ClockGranularity", TimeValue(m_clockGranularity));
}

void
PacketNetwork::Listen(uint32_t endpoint)
{
    if (m_listeners[endpoint])
    {
        return;
    }
    Ptr<Socket> listener = Socket::CreateSocket(m_nodes[endpoint], TcpSocketFactory::GetTypeId());
    ConfigureSocket(listener);
    listener->Bind(InetSocketAddress(Ipv4Address::GetAny(), m_port));
    listener->Listen();
    listener->SetAcceptCallback(MakeNullCallback<bool, Ptr<Socket>, const Address&>(),
                                Callback<void, Ptr<Socket>, const Address&>(
                                    [this](Ptr<Socket> s, const Address&)
                                    {
                                        const auto index =
                                            static_cast<uint32_t>(m_receivers.size());
                                        m_receivers.emplace_back();
                                        m_receivers.back().socket = s;
                                        s->SetRecvCallback(Callback<void, Ptr<Socket>>(
                                            [this, index](Ptr<Socket>)
                                            {
                                                Receive(index);
                                            }));
                                    }));
    m_listeners[endpoint] = listener;
}

uint32_t
PacketNetwork::OpenConnection(uint32_t src,
                              uint32_t dst,
                              const std::vector<uint32_t>& path,
                              uint64_t flowId)
{
    auto& list = m_pairConnections[{src, dst}];
    const auto slot = static_cast<uint32_t>(list.size());
    if (slot > 255)
    {
        throw SpecError("network",
                        "",
                        "more than 256 distinct paths from " + std::to_string(src) + " to "
                            + std::to_string(dst) + " (the packet network's address slots)");
    }
    const Ipv4Address srcAddr = PacketPathRouting::NodeAddress(src, 0);
    const Ipv4Address dstAddr = PacketPathRouting::NodeAddress(dst, slot);
    InstallPath(srcAddr, dstAddr, path);
    // ACKs travel the path the routing policy gives the reverse direction.
    InstallPath(dstAddr, srcAddr, RoutePath(dst, src, flowId));
    Listen(dst);

    const auto index = static_cast<uint32_t>(m_connections.size());
    m_connections.emplace_back();
    Connection& c = m_connections.back();
    c.src = src;
    c.dst = dst;
    c.path = path;
    c.socket = Socket::CreateSocket(m_nodes[src], TcpSocketFactory::GetTypeId());
    ConfigureSocket(c.socket);
    c.socket->Bind();
    c.socket->SetConnectCallback(
        Callback<void, Ptr<Socket>>(
            [this, index](Ptr<Socket> s)
            {
                // A warm-up frame: the SYN-ACK's window is never
                // scaled (RFC 7323), so the sender learns the real
                // receive window only from the ACK of this frame.
                m_connections[index].established = true;
                s->Send(Create<Packet>(kWarmUpFrame, PacketMessageHeader::kSize));
                Push(index);
            }),
        Callback<void, Ptr<Socket>>(
            [this, src, dst](Ptr<Socket>)
            {
                NS_FATAL_ERROR("packet network: connection " << src << " > " << dst << " failed");
            }));
    c.socket->SetSendCallback(Callback<void, Ptr<Socket>, uint32_t>(
        [this, index](Ptr<Socket> s, uint32_t)
        {
            Connection& conn = m_connections[index];
            if (!conn.warm && conn.established && s->GetTxAvailable() == m_sendBuffer)
            {
                conn.warm = true; // everything acked: the window is open
                if (conn.awaited && --m_connecting == 0)
                {
                    for (auto& cb : m_readyCallbacks)
                    {
                        Simulator::ScheduleNow(cb);
                    }
                    m_readyCallbacks.clear();
                }
            }
            Push(index);
        }));
    // Connect as an event of its own: the ns-3 nodes built in this event are initialized
    // (traffic control scans its devices) by events scheduled before this one.
    Simulator::ScheduleNow(
        [this, index, dstAddr]()
        {
            Connection& conn = m_connections[index];
            conn.socket->Connect(InetSocketAddress(dstAddr, m_port));
            conn.connectIssued = true;
            Push(index);
        });
    list.push_back(index);
    NS_LOG_LOGIC("connection " << index << ": " << m_topology->DescribePath(path) << " slot "
                               << slot);
    return index;
}

void
PacketNetwork::Preconnect(const std::vector<std::pair<uint32_t, uint32_t>>& pairs,
                          Callback<void> ready)
{
    Build();
    uint32_t opened = 0;
    for (const auto& p : pairs)
    {
        if (p.first == p.second || m_pairConnections.count(p) > 0)
        {
            continue;
        }
        const uint32_t c = OpenConnection(p.first, p.second, RoutePath(p.first, p.second, 0), 0);
        m_connections[c].awaited = true;
        ++opened;
    }
    m_connecting += opened;
    if (m_connecting == 0)
    {
        if (!ready.IsNull())
        {
            Simulator::ScheduleNow(ready);
        }
        return;
    }
    if (!ready.IsNull())
    {
        m_readyCallbacks.push_back(ready);
    }
}

uint64_t
PacketNetwork::Send(uint32_t src, uint32_t dst, uint64_t bytes, DeliveryCallback onDelivered)
{
    const uint64_t id = m_nextId++;
    NotifySent(id, src, dst, bytes);
    std::vector<uint32_t> path = RoutePath(src, dst, id);
    if (path.empty())
    {
        Simulator::ScheduleNow(
            [this, id, onDelivered]()
            {
                NotifyDelivered(id);
                if (!onDelivered.IsNull())
                {
                    onDelivered(id);
                }
            });
        return id;
    }
    Build();
    uint32_t conn = std::numeric_limits<uint32_t>::max();
    auto it = m_pairConnections.find({src, dst});
    if (it != m_pairConnections.end())
    {
        for (uint32_t c : it->second)
        {
            if (m_connections[c].path == path)
            {
                conn = c;
                break;
            }
        }
    }
    if (conn == std::numeric_limits<uint32_t>::max())
    {
        conn = OpenConnection(src, dst, path, id);
    }
    m_callbacks[id] = onDelivered;
    OutMessage m;
    m.id = id;
    m.bytes = bytes;
    m.left = bytes;
    m_connections[conn].queue.push_back(m);
    Push(conn);
    return id;
}

void
PacketNetwork::Push(uint32_t index)
{
    Connection& c = m_connections[index];
    if (!c.connectIssued)
    {
        return;
    }
    while (!c.queue.empty())
    {
        OutMessage& m = c.queue.front();
        uint32_t room = c.socket->GetTxAvailable();
        if (!m.headerSent)
        {
            if (room < PacketMessageHeader::kSize)
            {
                return;
            }
            const auto part = static_cast<uint32_t>(
                std::min<uint64_t>(m.left, room - PacketMessageHeader::kSize));
            Ptr<Packet> p = Create<Packet>(part);
            p->AddHeader(PacketMessageHeader(m.id, m.bytes));
            if (c.socket->Send(p) < 0)
            {
                return;
            }
            m.headerSent = true;
            m.left -= part;
        }
        else
        {
            if (room == 0)
            {
                return;
            }
            const auto part = static_cast<uint32_t>(std::min<uint64_t>(m.left, room));
            if (c.socket->Send(Create<Packet>(part)) < 0)
            {
                return;
            }
            m.left -= part;
        }
        if (m.left == 0)
        {
            c.queue.pop_front();
        }
    }
}

void
PacketNetwork::Receive(uint32_t index)
{
    Ptr<Packet> p;
    while ((p = m_receivers[index].socket->Recv()))
    {
        Receiver& r = m_receivers[index];
        const uint32_t size = p->GetSize();
        uint32_t offset = 0;
        while (offset < size)
        {
            if (r.headerHave < PacketMessageHeader::kSize)
            {
                const uint32_t n =
                    std::min<uint32_t>(PacketMessageHeader::kSize - r.headerHave, size - offset);
                p->CreateFragment(offset, n)->CopyData(r.header + r.headerHave, n);
                r.headerHave += n;
                offset += n;
                if (r.headerHave < PacketMessageHeader::kSize)
                {
                    break;
                }
                PacketMessageHeader h = PacketMessageHeader::Decode(r.header);
                r.id = h.GetId();
                r.left = h.GetLength();
            }
            else
            {
                const auto n = static_cast<uint32_t>(std::min<uint64_t>(r.left, size - offset));
                r.left -= n;
                offset += n;
            }
            if (r.left == 0)
            {
                r.headerHave = 0;
                if (r.id != kWarmUpId)
                {
                    Deliver(r.id);
                }
            }
        }
    }
}

void
PacketNetwork::Deliver(uint64_t id)
{
    auto it = m_callbacks.find(id);
    if (it == m_callbacks.end())
    {
        NS_FATAL_ERROR("packet network: message " << id << " delivered twice or never sent");
    }
    DeliveryCallback cb = it->second;
    m_callbacks.erase(it);
    Simulator::ScheduleNow(
        [this, id, cb]()
        {
            NotifyDelivered(id);
            if (!cb.IsNull())
            {
                cb(id);
            }
        });
}

void
PacketNetwork::CountLocalDeliver(const Ipv4Header& header, Ptr<const Packet> packet, uint32_t)
{
    if (packet->GetSize() > kTcpHeader + 8)
    {
        ++m_dataPackets;
    }
}

uint64_t
PacketNetwork::GetDataPacketCount() const
{
    return m_dataPackets;
}

uint64_t
PacketNetwork::GetQueueDropCount() const
{
    uint64_t drops = 0;
    for (const auto& q : m_queueDiscs)
    {
        drops += q->GetStats().nTotalDroppedPackets;
    }
    return drops;
}

uint32_t
PacketNetwork::GetConnectionCount() const
{
    return static_cast<uint32_t>(m_connections.size());
}

} // namespace rapidllm
} // namespace ns3
