/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "packet-network.h"

#include "ns3/boolean.h"
#include "ns3/double.h"
#include "ns3/enum.h"
#include "ns3/inet-socket-address.h"
#include "ns3/log.h"
#include "ns3/network-error.h"
#include "ns3/simulator.h"
#include "ns3/spec-error.h"
#include "ns3/string.h"
#include "ns3/tcp-socket-factory.h"
#include "ns3/type-registry.h"
#include "ns3/uinteger.h"
#include "packet-path-routing.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

namespace ns3 {
namespace rapidllm {

NS_LOG_COMPONENT_DEFINE("RapidLlmPacketNetwork");
NS_OBJECT_ENSURE_REGISTERED(PacketNetwork);

/** The backend's short name. */
static TypeRegistrar<NetworkBackend> g_packetBackend("packet", PacketNetwork::GetTypeId());

TypeId
PacketNetwork::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::rapidllm::PacketNetwork")
            .SetParent<NetworkBackend>()
            .SetGroupName("RapidLlm")
            .AddConstructor<PacketNetwork>()
            .AddAttribute(
                "Mtu",
                "IP MTU of every link, bytes. 4096 is InfiniBand's largest MTU (IBTA spec, \"MTU\" "
                "of 256-4096 bytes; NVLink's packets carry at most 256 bytes): a frame a busy "
                "port holds the next one back for, or a GPU stores and forwards on a multi-hop "
                "path, is no larger than the real fabric's.",
                UintegerValue(4096),
                MakeUintegerAccessor(&PacketNetwork::m_mtu),
                MakeUintegerChecker<uint32_t>(576, 65000))
            .AddAttribute("SegmentSize",
                          "TCP segment payload, bytes: 0 = MTU - 20 (IP) - 20 (TCP without "
                          "options), so a full segment fills one MTU; else 536 (RFC 879's "
                          "default MSS) up to that.",
                          UintegerValue(0),
                          MakeUintegerAccessor(&PacketNetwork::m_segmentSize),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("SendBuffer",
                          "TCP send buffer per connection, bytes; 0 = WindowBdps "
                          "bandwidth-delay products of the connection's path (at least 256 KiB). "
                          "It bounds the bytes in flight, and ns-3's TcpTxBuffer::NextSeg scans "
                          "every segment in flight for each segment it sends.",
                          UintegerValue(0),
                          MakeUintegerAccessor(&PacketNetwork::m_sendBuffer),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("WindowBdps",
                          "With SendBuffer 0: the send buffer in bandwidth-delay products of the "
                          "path (its healthy bottleneck rate x its round trip: both directions' "
                          "latencies and a full frame's store-and-forward at every hop).",
                          DoubleValue(4.0),
                          MakeDoubleAccessor(&PacketNetwork::m_windowBdps),
                          MakeDoubleChecker<double>(1.0))
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
                          "Segments received before an ACK is sent: 2, one ACK for every second "
                          "full-sized segment as RFC 5681 (4.2) has TCP do (and ns-3's TcpSocket "
                          "default); 1 = one ACK per segment.",
                          UintegerValue(2),
                          MakeUintegerAccessor(&PacketNetwork::m_delAckCount),
                          MakeUintegerChecker<uint32_t>(1))
            .AddAttribute("DelAckTimeout",
                          "With DelAckCount > 1: how long a segment's ACK may wait for the next "
                          "segment (a message's last odd segment waits all of it). Must be below "
                          "MinRto, or the sender times out and retransmits first (ns-3's default, "
                          "200 ms, is 20x the MinRto here).",
                          TimeValue(MicroSeconds(10)),
                          MakeTimeAccessor(&PacketNetwork::m_delAckTimeout),
                          MakeTimeChecker(Seconds(0)))
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
            .AddAttribute(
                "SwitchForwarding",
                "How switches forward frames: cut-through (as NVSwitch and InfiniBand switches "
                "do: a switch takes a frame once sending it on at its fastest port cannot "
                "outrun the frame's tail; CutThroughChannel) or store-and-forward (ns-3's own, "
                "one frame time more per switch).",
                EnumValue(CUT_THROUGH),
                MakeEnumAccessor(&PacketNetwork::m_forwarding),
                MakeEnumChecker(CUT_THROUGH, "cut-through", STORE_AND_FORWARD, "store-and-forward"))
            .AddAttribute("Pcap",
                          "pcap captures: PREFIX writes PREFIX-SRC-DST.pcap for every link, each "
                          "frame's headers (its first 64 bytes) as the link starts sending it; "
                          "\"\" = none. The files hold what was sent until the run ended.",
                          StringValue(""),
                          MakeStringAccessor(&PacketNetwork::m_pcap),
                          MakeStringChecker())
            .AddAttribute("PcapLinks",
                          "With Pcap: the links to capture, selectors as a fault takes them "
                          "(A-B, A>B, A, tier:DIMENSION) separated by ';'; \"\" = every link.",
                          StringValue(""),
                          MakeStringAccessor(&PacketNetwork::m_pcapLinks),
                          MakeStringChecker())
            .AddAttribute("Port",
                          "TCP port every endpoint listens on.",
                          UintegerValue(5000),
                          MakeUintegerAccessor(&PacketNetwork::m_port),
                          MakeUintegerChecker<uint16_t>(1))
            .AddAttribute("ReuseIdleConnections",
                          "A message whose path has no connection of its pair yet takes over "
                          "an idle connection of the pair (warm, everything written and "
                          "acknowledged) and moves it onto its path; false opens a new "
                          "connection, whose handshake and warm-up round trip the message then "
                          "waits for. A real fabric has no per-path connection to set up.",
                          BooleanValue(true),
                          MakeBooleanAccessor(&PacketNetwork::m_reuseIdle),
                          MakeBooleanChecker());
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
    m_pending.clear();
    m_capture.Stop();
    m_fabric.Clear();
    m_readyCallbacks.clear();
    NetworkBackend::DoDispose();
}

void
PacketNetwork::SetTopology(Ptr<Topology> topology)
{
    if (m_fabric.IsBuilt())
    {
        throw NetworkError("the packet network is already built on a topology");
    }
    if (topology->GetNodeCount() > 65536)
    {
        throw NetworkError("the packet network supports at most 65536 nodes (the topology has "
                           + std::to_string(topology->GetNodeCount()) + ")");
    }
    NetworkBackend::SetTopology(topology);
}

/** The smallest TCP segment accepted: RFC 879's default MSS, the IPv4 minimum MTU of 576 less
 * 40 bytes of IP and TCP headers. */
static constexpr uint32_t kMinSegmentSize = 536;
/** The most links the packet network builds (a few GB of ns-3 objects). */
static constexpr uint32_t kMaxLinks = 1 << 20;

uint32_t
PacketNetwork::GetSegmentSize() const
{
    return m_segmentSize > 0 ? m_segmentSize
                             : m_mtu - PacketFabric::kIpHeader - PacketFabric::kTcpHeader;
}

double
PacketNetwork::GetStackEfficiency() const
{
    return static_cast<double>(GetSegmentSize())
           / (GetSegmentSize() + PacketFabric::kIpHeader + PacketFabric::kTcpHeader
              + PacketFabric::kPppHeader);
}

Ptr<Node>
PacketNetwork::GetNode(uint32_t node)
{
    Build();
    return m_fabric.GetNode(node);
}

Ptr<NetDevice>
PacketNetwork::GetLinkDevice(uint32_t link)
{
    Build();
    return m_fabric.GetLinkDevice(link);
}

void
PacketNetwork::CheckAttributes() const
{
    if (GetSegmentSize() + PacketFabric::kIpHeader + PacketFabric::kTcpHeader > m_mtu)
    {
        throw SpecError("network",
                        "PacketNetwork::SegmentSize",
                        "a segment of " + std::to_string(GetSegmentSize()) + " bytes plus "
                            + std::to_string(PacketFabric::kIpHeader + PacketFabric::kTcpHeader)
                            + " bytes of headers exceeds the MTU of " + std::to_string(m_mtu));
    }
    if (m_segmentSize > 0 && m_segmentSize < kMinSegmentSize)
    {
        // Tiny segments only multiply the events: a 1-byte segment costs 60 bytes of headers
        // and one simulated packet per byte (a 64 MiB message ran for minutes).
        throw SpecError(
            "network",
            "PacketNetwork::SegmentSize",
            std::to_string(m_segmentSize) + " bytes: 0 (the MTU less the headers) or "
                + std::to_string(kMinSegmentSize) + " to "
                + std::to_string(m_mtu - PacketFabric::kIpHeader - PacketFabric::kTcpHeader)
                + " (RFC 879's default MSS up to the MTU's payload)");
    }
    if (m_sendBuffer > 0 && m_sendBuffer < (1u << 16))
    {
        throw SpecError("network",
                        "PacketNetwork::SendBuffer",
                        std::to_string(m_sendBuffer)
                            + " bytes: 0 (sized to each path) or at least 65536");
    }
    if (!m_minRto.IsStrictlyPositive())
    {
        std::ostringstream why;
        why << m_minRto.GetSeconds() * 1e6
            << " us: must be above 0 (TCP's least retransmission timeout)";
        throw SpecError("network", "PacketNetwork::MinRto", why.str());
    }
    if (m_delAckCount > 1 && m_delAckTimeout >= m_minRto)
    {
        // Each message's last odd segment would be retransmitted after MinRto, its window
        // collapsed to one segment, and every segment after it would wait out the timer.
        std::ostringstream why;
        why << m_delAckTimeout.GetSeconds() * 1e6 << " us with DelAckCount " << m_delAckCount
            << ": must be below MinRto (" << m_minRto.GetSeconds() * 1e6
            << " us), or senders time out before the delayed ACK comes (lower DelAckTimeout, "
               "raise MinRto, or set DelAckCount=1)";
        throw SpecError("network", "PacketNetwork::DelAckTimeout", why.str());
    }
    if (!m_clockGranularity.IsStrictlyPositive())
    {
        std::ostringstream why;
        why << m_clockGranularity.GetSeconds() * 1e6
            << " us: must be above 0 (the tick TCP's retransmission timer counts in)";
        throw SpecError("network", "PacketNetwork::ClockGranularity", why.str());
    }
    PacketFabric::CheckNames(m_queueDisc, m_congestion);
    if (!m_pcap.empty())
    {
        PacketCapture::CheckPrefix(m_pcap);
    }
    else if (!m_pcapLinks.empty())
    {
        throw SpecError("network",
                        "PacketNetwork::PcapLinks",
                        "'" + m_pcapLinks
                            + "' selects links to capture, but no Pcap prefix is given (give "
                              "Pcap=PREFIX too)");
    }
}

void
PacketNetwork::Build()
{
    if (m_fabric.IsBuilt())
    {
        return;
    }
    if (!m_topology || !m_routing)
    {
        throw NetworkError("the packet network has no topology or routing policy");
    }
    CheckAttributes();
    if (m_topology->GetLinkCount() > kMaxLinks)
    {
        // Each link is two ns-3 devices with their queues and a channel: a fully connected
        // dimension of 4,096 GPUs (16.7 M links) took 24 GB before it was killed.
        throw NetworkError("the packet network would build "
                           + std::to_string(m_topology->GetLinkCount())
                           + " links, above its limit of " + std::to_string(kMaxLinks)
                           + " (ns-3 devices, queues and channels for each): it cross-validates "
                             "at small scale; use fewer GPUs or the flow backend");
    }
    PacketFabricConfig config;
    config.mtu = m_mtu;
    config.deviceQueuePackets = m_deviceQueuePackets;
    config.queueDisc = m_queueDisc;
    config.queueDiscPackets = m_queueDiscPackets;
    config.congestion = m_congestion;
    config.headersInEfficiency = m_headerMode == HEADERS_IN_EFFICIENCY;
    config.stackEfficiency = GetStackEfficiency();
    config.cutThrough = m_forwarding == CUT_THROUGH;
    m_fabric.Build(m_topology, config);
    if (!m_pcap.empty())
    {
        m_capture.Start(m_pcap, m_pcapLinks, *m_topology, m_fabric);
    }
    m_listeners.resize(m_topology->GetEndpointCount());
    m_linkBytes.assign(m_topology->GetLinkCount(), 0.0);
}

void
PacketNetwork::ConfigureSocket(Ptr<Socket> socket) const
{
    socket->SetAttribute("SegmentSize", UintegerValue(GetSegmentSize()));
    socket->SetAttribute("RcvBufSize", UintegerValue(m_receiveBuffer));
    socket->SetAttribute("InitialCwnd", UintegerValue(m_initialCwnd));
    socket->SetAttribute("DelAckCount", UintegerValue(m_delAckCount));
    socket->SetAttribute("DelAckTimeout", TimeValue(m_delAckTimeout));
    socket->SetAttribute("TcpNoDelay", BooleanValue(true));
    socket->SetAttribute("Timestamp", BooleanValue(false));
    socket->SetAttribute("MinRto", TimeValue(m_minRto));
    socket->SetAttribute("ClockGranularity", TimeValue(m_clockGranularity));
}

uint32_t
PacketNetwork::WindowFor(const std::vector<uint32_t>& path) const
{
    if (m_sendBuffer > 0)
    {
        return m_sendBuffer;
    }
    constexpr double kMinWindow = 256 * 1024;
    const double frame = m_mtu + PacketFabric::kPppHeader;
    double rate = std::numeric_limits<double>::infinity();
    // A frame's time at every hop: the round trip of a path whose switches store and forward
    // (cut-through switches need less; a window a little too large costs no time).
    double frames = 0;
    for (uint32_t l : path)
    {
        const TopologyLink& link = m_topology->GetLink(l);
        const double healthy = link.lineRateBps * link.efficiency;
        rate = std::min(rate, healthy);
        frames += frame / healthy;
    }
    const double rtt = 2 * m_topology->PathLatency(path) + frames;
    const double window = std::max(kMinWindow, m_windowBdps * rate * rtt);
    // Whole segments, and never past what a 32-bit socket attribute holds.
    const double segment = GetSegmentSize();
    return static_cast<uint32_t>(std::min(std::ceil(window / segment) * segment, 1073741824.0));
}

void
PacketNetwork::Listen(uint32_t endpoint)
{
    if (m_listeners[endpoint])
    {
        return;
    }
    Ptr<Socket> listener =
        Socket::CreateSocket(m_fabric.GetNode(endpoint), TcpSocketFactory::GetTypeId());
    ConfigureSocket(listener);
    listener->Bind(InetSocketAddress(Ipv4Address::GetAny(), m_port));
    listener->Listen();
    listener->SetAcceptCallback(
        MakeNullCallback<bool, Ptr<Socket>, const Address&>(),
        Callback<void, Ptr<Socket>, const Address&>(
            [this, endpoint](Ptr<Socket> s, const Address&)
            {
                const auto index = static_cast<uint32_t>(m_receivers.size());
                m_receivers.emplace_back();
                m_receivers.back().socket = s;
                s->SetRecvCallback(Callback<void, Ptr<Socket>>(
                    [this, index](Ptr<Socket>)
                    {
                        Receive(index);
                    }));
                NS_LOG_LOGIC("endpoint " << endpoint << " accepted connection " << index);
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
        throw NetworkError("more than 256 distinct paths from " + std::to_string(src) + " to "
                           + std::to_string(dst) + " (the packet network's address slots)");
    }
    const Ipv4Address srcAddr = PacketPathRouting::NodeAddress(src, 0);
    const Ipv4Address dstAddr = PacketPathRouting::NodeAddress(dst, slot);
    m_fabric.InstallPath(srcAddr, dstAddr, path);
    // ACKs travel the path the routing policy gives the reverse direction.
    std::vector<uint32_t> ackPath = RoutePath(dst, src, flowId);
    m_fabric.InstallPath(dstAddr, srcAddr, ackPath);
    Listen(dst);

    const auto index = static_cast<uint32_t>(m_connections.size());
    m_connections.emplace_back();
    Connection& c = m_connections.back();
    c.src = src;
    c.dst = dst;
    c.slot = slot;
    c.flowId = flowId;
    c.path = path;
    c.ackPath = std::move(ackPath);
    c.window = WindowFor(path);
    c.socket = Socket::CreateSocket(m_fabric.GetNode(src), TcpSocketFactory::GetTypeId());
    ConfigureSocket(c.socket);
    c.socket->SetAttribute("SndBufSize", UintegerValue(c.window));
    c.socket->Bind();
    c.socket->SetConnectCallback(Callback<void, Ptr<Socket>>(
                                     [this, index](Ptr<Socket> s)
                                     {
                                         // A warm-up frame: the SYN-ACK's window is never
                                         // scaled (RFC 7323), so the sender learns the real
                                         // receive window only from the ACK of this frame.
                                         m_connections[index].established = true;
                                         s->Send(MessageStreamWriter::WarmUpFrame());
                                         NS_LOG_LOGIC("connection " << index << " established");
                                         Push(index);
                                     }),
                                 Callback<void, Ptr<Socket>>(
                                     [this, src, dst](Ptr<Socket>)
                                     {
                                         NS_FATAL_ERROR("packet network: connection "
                                                        << src << " > " << dst << " failed");
                                     }));
    c.socket->SetSendCallback(Callback<void, Ptr<Socket>, uint32_t>(
        [this, index](Ptr<Socket> s, uint32_t)
        {
            Connection& conn = m_connections[index];
            if (!conn.warm && conn.established && s->GetTxAvailable() == conn.window)
            {
                conn.warm = true; // everything acked: the window is open
                NS_LOG_LOGIC("connection " << index << " warm");
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

bool
PacketNetwork::PreparesPairs() const
{
    return true;
}

void
PacketNetwork::Prepare(const std::vector<EndpointPair>& pairs, Callback<void> ready)
{
    Build();
    uint32_t opened = 0;
    // A pair listed n times gets n connections (the collective's and a transfer's beside it).
    std::map<EndpointPair, uint32_t> listed;
    for (const auto& p : pairs)
    {
        auto have = m_pairConnections.find(p);
        if (p.first == p.second
            || ++listed[p] <= (have == m_pairConnections.end() ? 0 : have->second.size()))
        {
            continue;
        }
        const uint32_t c = OpenConnection(p.first, p.second, RoutePath(p.first, p.second, 0), 0);
        m_connections[c].awaited = true;
        ++opened;
    }
    m_connecting += opened;
    NS_LOG_LOGIC("prepare: " << opened << " connections opened, " << m_connecting
                             << " to wait for");
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

void
PacketNetwork::DoSend(uint64_t id,
                      uint32_t src,
                      uint32_t dst,
                      uint64_t bytes,
                      const std::vector<uint32_t>& path,
                      const DeliveryCallback& onDelivered)
{
    Build();
    // Ordered messages of a path follow each other on one connection of the pair (its ordered
    // one, NCCL's channel to the peer). An unordered one (another channel or communicator: the
    // second tree of a double binary tree, a transfer beside a collective) queues behind no
    // other message: it takes a connection of the path that carries nothing undelivered and no
    // ordered messages, so that it shares the links at once, as on the flow network.
    const bool ordered = IsOrdered();
    auto fits = [this, ordered](uint32_t c)
    {
        const Connection& k = m_connections[c];
        return ordered ? k.ordered || k.undelivered == 0 : !k.ordered && k.undelivered == 0;
    };
    uint32_t conn = std::numeric_limits<uint32_t>::max();
    auto it = m_pairConnections.find({src, dst});
    if (it != m_pairConnections.end())
    {
        for (uint32_t c : it->second)
        {
            // The path's ordered connection first, for an ordered message.
            if (m_connections[c].path == path && fits(c)
                && (conn == std::numeric_limits<uint32_t>::max() || m_connections[c].ordered))
            {
                conn = c;
            }
        }
    }
    if (conn == std::numeric_limits<uint32_t>::max() && m_reuseIdle
        && it != m_pairConnections.end())
    {
        // A path of the pair without a connection (a multipath policy): an idle connection of
        // the pair moves onto it, warm, as a real fabric routes a flow without a new transport
        // handshake. Only a new connection pays its handshake and warm-up.
        for (uint32_t c : it->second)
        {
            if (IsIdle(c) && fits(c))
            {
                MovePath(c, path);
                conn = c;
                break;
            }
        }
    }
    if (conn == std::numeric_limits<uint32_t>::max())
    {
        conn = OpenConnection(src, dst, path, GetFlow());
    }
    m_pending[id] = {onDelivered, bytes, conn};
    ++m_connections[conn].undelivered;
    m_connections[conn].ordered = m_connections[conn].ordered || ordered;
    NS_LOG_DEBUG("message " << id << " queued on connection " << conn);
    m_connections[conn].stream.Enqueue(id, bytes);
    Push(conn);
}

bool
PacketNetwork::IsIdle(uint32_t index) const
{
    const Connection& c = m_connections[index];
    return c.warm && c.stream.IsEmpty() && c.socket->GetTxAvailable() == c.window;
}

void
PacketNetwork::MovePath(uint32_t index, const std::vector<uint32_t>& path)
{
    // Nothing of this connection is in flight (IsIdle): its data packets take the new path
    // from the next one on, none overtakes another. Its ACKs keep their path.
    Connection& c = m_connections[index];
    const Ipv4Address srcAddr = PacketPathRouting::NodeAddress(c.src, 0);
    const Ipv4Address dstAddr = PacketPathRouting::NodeAddress(c.dst, c.slot);
    m_fabric.RemovePath(srcAddr, dstAddr, c.path);
    m_fabric.InstallPath(srcAddr, dstAddr, path);
    NS_LOG_LOGIC("connection " << index << " moves from " << m_topology->DescribePath(c.path)
                               << " to " << m_topology->DescribePath(path));
    c.path = path;
    // Idle, its send buffer is empty: it takes the window of its new path.
    c.window = WindowFor(path);
    c.socket->SetAttribute("SndBufSize", UintegerValue(c.window));
    ++m_movedConnections;
}

void
PacketNetwork::Push(uint32_t index)
{
    Connection& c = m_connections[index];
    if (!c.connectIssued)
    {
        return;
    }
    c.stream.Push(c.socket);
}

void
PacketNetwork::Receive(uint32_t index)
{
    Receiver& r = m_receivers[index];
    r.stream.Read(r.socket,
                  [this](uint64_t id)
                  {
                      Complete(id);
                  });
}

void
PacketNetwork::Complete(uint64_t id)
{
    auto it = m_pending.find(id);
    if (it == m_pending.end())
    {
        NS_FATAL_ERROR("packet network: message " << id << " delivered twice or never sent");
    }
    const Pending m = it->second;
    m_pending.erase(it);
    --m_connections[m.connection].undelivered;
    for (uint32_t l : m_connections[m.connection].path)
    {
        m_linkBytes[l] += static_cast<double>(m.bytes);
    }
    const DeliveryCallback cb = m.callback;
    Simulator::ScheduleNow(
        [this, id, cb]()
        {
            Deliver(id, cb);
        });
}

void
PacketNetwork::DoApplyFault(const std::vector<uint32_t>& links)
{
    if (!m_fabric.IsBuilt())
    {
        return; // built later from the topology as it is then
    }
    for (uint32_t l : links)
    {
        m_fabric.UpdateLink(l);
    }
}

uint32_t
PacketNetwork::GetStalledCount() const
{
    if (!m_topology)
    {
        return 0;
    }
    auto dead = [this](const std::vector<uint32_t>& links)
    {
        return std::any_of(links.begin(),
                           links.end(),
                           [this](uint32_t l)
                           {
                               return m_topology->GetLink(l).factor == 0;
                           });
    };
    uint32_t stalled = 0;
    for (const auto& [id, p] : m_pending)
    {
        const Connection& c = m_connections[p.connection];
        stalled += dead(c.path) || dead(c.ackPath) ? 1 : 0;
    }
    return stalled;
}

uint32_t
PacketNetwork::GetConnectionCount() const
{
    return static_cast<uint32_t>(m_connections.size());
}

uint32_t
PacketNetwork::GetMovedConnectionCount() const
{
    return m_movedConnections;
}

void
PacketNetwork::DoGetStats(NetworkStats& stats) const
{
    stats.connections = GetConnectionCount();
    if (!m_fabric.IsBuilt())
    {
        return;
    }
    stats.dataPackets = m_fabric.GetDataPacketCount();
    stats.drops = m_fabric.GetQueueDropCount() + m_fabric.GetDeadLinkDropCount();
    for (uint32_t l = 0; l < stats.links.size() && l < m_linkBytes.size(); ++l)
    {
        stats.links[l].bytes = m_linkBytes[l];
        stats.links[l].busyTimeS = m_fabric.GetLinkBusyTime(l);
    }
}

} // namespace rapidllm
} // namespace ns3
