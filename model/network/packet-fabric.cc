/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "packet-fabric.h"

#include "cut-through-channel.h"
#include "ns3/boolean.h"
#include "ns3/channel.h"
#include "ns3/data-rate.h"
#include "ns3/drop-tail-queue.h"
#include "ns3/internet-stack-helper.h"
#include "ns3/ipv4-l3-protocol.h"
#include "ns3/log.h"
#include "ns3/mac48-address.h"
#include "ns3/net-device-queue-interface.h"
#include "ns3/network-error.h"
#include "ns3/point-to-point-net-device.h"
#include "ns3/queue-size.h"
#include "ns3/spec-error.h"
#include "ns3/string.h"
#include "ns3/tcp-congestion-ops.h"
#include "ns3/tcp-l4-protocol.h"
#include "ns3/tcp-socket-base.h"
#include "ns3/traffic-control-helper.h"
#include "ns3/uinteger.h"
#include "packet-path-routing.h"

#include <cmath>
#include <limits>

namespace ns3 {
namespace rapidllm {

NS_LOG_COMPONENT_DEFINE("RapidLlmPacketFabric");

namespace {
/** Marks a directed link without an installed device. */
constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();
} // namespace

/**
 * \ingroup rapid-llm
 * \brief The receiver of a dead link: every frame is lost (no randomness, unlike
 * RateErrorModel at rate 1, so the run's random streams are untouched).
 */
class DeadLinkErrorModel : public ErrorModel
{
  public:
    /** \brief Register this type. \return the TypeId */
    static TypeId
    GetTypeId()
    {
        static TypeId tid = TypeId("ns3::rapidllm::DeadLinkErrorModel")
                                .SetParent<ErrorModel>()
                                .SetGroupName("RapidLlm")
                                .AddConstructor<DeadLinkErrorModel>();
        return tid;
    }

    /** \param counter incremented for every frame dropped (may be null) */
    void
    SetCounter(uint64_t* counter)
    {
        m_counter = counter;
    }

  private:
    bool
    DoCorrupt(Ptr<Packet>) override
    {
        if (m_counter)
        {
            ++*m_counter;
        }
        return true;
    }

    void
    DoReset() override
    {}

    uint64_t* m_counter = nullptr; //!< the fabric's drop counter
};

NS_OBJECT_ENSURE_REGISTERED(DeadLinkErrorModel);

bool
PacketFabric::IsBuilt() const
{
    return m_built;
}

void
PacketFabric::CheckNames(const std::string& queueDisc, const std::string& congestion)
{
    TypeId tid;
    if (queueDisc != "fq" && queueDisc != "fifo" && queueDisc != "fq-codel"
        && (!TypeId::LookupByNameFailSafe(queueDisc, &tid)
            || !tid.IsChildOf(QueueDisc::GetTypeId())))
    {
        throw SpecError("network",
                        "PacketNetwork::QueueDisc",
                        "'" + queueDisc + "' is not fq, fifo, fq-codel or a QueueDisc TypeId name");
    }
    TypeId::AttributeInformation info;
    if (queueDisc.rfind("ns3::", 0) == 0
        && (!tid.HasConstructor() || !tid.LookupAttributeByName("MaxSize", &info)
            || queueDisc == "ns3::TbfQueueDisc"))
    {
        // A classful queue disc (ns3::PrioQueueDisc, ns3::MqQueueDisc, ns3::TbfQueueDisc) needs
        // child queue discs or rates the fabric does not configure; the first two have no
        // MaxSize for QueueDiscPackets (ns-3 aborts), TBF shapes to 125 kB/s.
        throw SpecError("network",
                        "PacketNetwork::QueueDisc",
                        "'" + queueDisc
                            + "' is a classful queue disc (child queue discs or a shaping rate "
                              "the fabric does not configure); allowed: fq, fifo, fq-codel or a "
                              "single-queue QueueDisc TypeId such as ns3::RedQueueDisc");
    }
    if (queueDisc == "ns3::PieQueueDisc" || queueDisc == "ns3::FqPieQueueDisc")
    {
        // ns-3.37's PIE never lets simulated time advance on this fabric (a 4 KiB transfer
        // between two GPUs stays at 0 s), so the watchdog's simulated-time limit cannot stop it.
        throw SpecError("network",
                        "PacketNetwork::QueueDisc",
                        "'" + queueDisc
                            + "' stalls the packet network at simulated time 0 (ns-3.37); "
                              "allowed: fq, fifo, fq-codel, ns3::RedQueueDisc, "
                              "ns3::CoDelQueueDisc, ns3::CobaltQueueDisc or another "
                              "single-queue QueueDisc TypeId");
    }
    // A congestion control whose TypeId names TcpSocketBase as its parent (ns-3.37's TcpCubic)
    // is one if an object of it is a TcpCongestionOps (no other type is created: a Node would
    // join the NodeList).
    auto isCongestionOps = [](TypeId t)
    {
        if (t.IsChildOf(TcpCongestionOps::GetTypeId()))
        {
            return true;
        }
        if (!t.HasConstructor() || !t.IsChildOf(TcpSocketBase::GetTypeId()))
        {
            return false;
        }
        ObjectFactory factory;
        factory.SetTypeId(t);
        return DynamicCast<TcpCongestionOps>(factory.Create()) != nullptr;
    };
    if (!TypeId::LookupByNameFailSafe(congestion, &tid) || !isCongestionOps(tid))
    {
        throw SpecError("network",
                        "PacketNetwork::CongestionControl",
                        "'" + congestion
                            + "' is not the TypeId name of a TCP congestion control (a "
                              "TcpCongestionOps, e.g. ns3::TcpNewReno, ns3::TcpCubic, "
                              "ns3::TcpDctcp; rapid-llm collective --PrintTypeIds lists "
                              "them)");
    }
}

void
PacketFabric::Build(Ptr<Topology> topology, const PacketFabricConfig& config)
{
    if (m_built)
    {
        return;
    }
    CheckNames(config.queueDisc, config.congestion);
    m_built = true;
    m_topology = topology;
    m_config = config;
    const Topology& topo = *topology;
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
    const TypeId congestion = TypeId::LookupByName(config.congestion);
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
                "LocalDeliver", MakeCallback(&PacketFabric::CountLocalDeliver, this));
        }
    }

    // Links: one PointToPoint channel per physical connection (a directed link and its
    // reverse), each device sending at its own direction's rate.
    const uint32_t links = topo.GetLinkCount();
    m_linkInterface.assign(links, kNone);
    m_linkQueueDisc.assign(links, nullptr);
    m_linkRateBps.assign(links, 0);
    std::vector<bool> paired(links, false);
    // Cut-through switches hand a frame on as soon as their fastest port will not outrun it.
    std::vector<double> fastestPort(n, 0.0);
    for (uint32_t l = 0; config.cutThrough && l < links; ++l)
    {
        const TopologyLink& link = topo.GetLink(l);
        if (topo.GetNode(link.src).isSwitch)
        {
            fastestPort[link.src] = std::max(fastestPort[link.src],
                                             static_cast<double>(HealthyRate(link).GetBitRate()));
        }
    }
    TrafficControlHelper tch;
    const QueueSizeValue limit(QueueSize(QueueSizeUnit::PACKETS, config.queueDiscPackets));
    if (config.queueDisc == "fq")
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
    else if (config.queueDisc == "fifo")
    {
        tch.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", limit);
    }
    else if (config.queueDisc == "fq-codel")
    {
        tch.SetRootQueueDisc("ns3::FqCoDelQueueDisc", "MaxSize", limit);
    }
    else
    {
        CheckNames(config.queueDisc, config.congestion);
        tch.SetRootQueueDisc(config.queueDisc, "MaxSize", limit);
    }
    uint32_t linkAddress = 0;
    m_busyBefore.assign(links, 0.0);
    m_bytesBefore.assign(links, 0.0);
    m_deadLink.assign(links, nullptr);
    auto deviceRate = [this](const TopologyLink& l)
    {
        return DeviceRate(l);
    };
    for (uint32_t l = 0; l < links; ++l)
    {
        if (paired[l])
        {
            continue;
        }
        const TopologyLink& fwd = topo.GetLink(l);
        uint32_t rev = kNone;
        for (uint32_t r : topo.GetOutLinks(fwd.dst))
        {
            if (!paired[r] && r != l && topo.GetLink(r).dst == fwd.src)
            {
                rev = r;
                break;
            }
        }
        paired[l] = true;
        if (rev != kNone)
        {
            paired[rev] = true;
        }
        const bool revAlive = rev != kNone && topo.GetLink(rev).IsAlive();
        if (!fwd.IsAlive() && !revAlive)
        {
            continue; // a hard fault: the link is not installed
        }
        const double delay =
            fwd.latencyS
            + 0.5 * (topo.GetNode(fwd.src).switchLatencyS + topo.GetNode(fwd.dst).switchLatencyS);
        Ptr<CutThroughChannel> channel = CreateObject<CutThroughChannel>();
        channel->SetAttribute("Delay", TimeValue(Seconds(delay)));
        NetDeviceContainer devs;
        devs.Add(InstallDevice(m_nodes[fwd.src], channel, config));
        devs.Add(InstallDevice(m_nodes[fwd.dst], channel, config));
        if (config.cutThrough)
        {
            channel->SetCutThrough(0, fastestPort[fwd.dst]);
            channel->SetCutThrough(1, fastestPort[fwd.src]);
        }
        const DataRate fwdRate = deviceRate(fwd);
        const DataRate revRate = rev != kNone ? deviceRate(topo.GetLink(rev)) : fwdRate;
        devs.Get(0)->SetAttribute("DataRate", DataRateValue(fwdRate));
        devs.Get(1)->SetAttribute("DataRate", DataRateValue(revRate));
        QueueDiscContainer qdiscs = tch.Install(devs);
        for (uint32_t q = 0; q < qdiscs.GetN(); ++q)
        {
            m_queueDiscs.push_back(qdiscs.Get(q));
        }
        m_linkQueueDisc[l] = qdiscs.Get(0);
        m_linkRateBps[l] = static_cast<double>(fwdRate.GetBitRate());
        if (rev != kNone)
        {
            m_linkQueueDisc[rev] = qdiscs.Get(1);
            m_linkRateBps[rev] = static_cast<double>(revRate.GetBitRate());
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
            else if (rev != kNone)
            {
                m_linkInterface[rev] = iface;
            }
        }
    }
    NS_LOG_INFO("packet fabric: " << n << " nodes, " << m_queueDiscs.size() / 2 << " links");
}

Ptr<PointToPointNetDevice>
PacketFabric::InstallDevice(Ptr<Node> node,
                            Ptr<PointToPointChannel> channel,
                            const PacketFabricConfig& config)
{
    // What PointToPointHelper::Install does for one end, with our channel.
    Ptr<PointToPointNetDevice> dev = CreateObject<PointToPointNetDevice>();
    dev->SetAttribute("Mtu", UintegerValue(config.mtu));
    dev->SetAddress(Mac48Address::Allocate());
    node->AddDevice(dev);
    Ptr<DropTailQueue<Packet>> queue = CreateObject<DropTailQueue<Packet>>();
    queue->SetMaxSize(QueueSize(QueueSizeUnit::PACKETS, config.deviceQueuePackets));
    dev->SetQueue(queue);
    // Flow control between the device queue and the queue discipline above it.
    Ptr<NetDeviceQueueInterface> ndqi = CreateObject<NetDeviceQueueInterface>();
    ndqi->GetTxQueue(0)->ConnectQueueTraces(queue);
    dev->AggregateObject(ndqi);
    dev->Attach(channel);
    return dev;
}

DataRate
PacketFabric::DeviceRate(const TopologyLink& l) const
{
    // A dead direction of a live pair keeps the healthy rate (routing avoids it).
    return RateOf(l, l.IsAlive() ? l.factor : 1.0);
}

DataRate
PacketFabric::HealthyRate(const TopologyLink& l) const
{
    return RateOf(l, 1.0);
}

DataRate
PacketFabric::RateOf(const TopologyLink& l, double factor) const
{
    double payload = l.lineRateBps * l.efficiency * factor;
    double rate = m_config.headersInEfficiency ? payload / m_config.stackEfficiency : payload;
    return DataRate(static_cast<uint64_t>(std::llround(rate * 8.0)));
}

void
PacketFabric::UpdateLink(uint32_t link)
{
    const TopologyLink& l = m_topology->GetLink(link);
    if (m_linkInterface.at(link) == kNone)
    {
        if (l.IsAlive())
        {
            throw NetworkError(
                "the packet network cannot bring back " + m_topology->DescribeLink(link)
                + ": it was dead in both directions when the ns-3 network was built");
        }
        return;
    }
    Ptr<PointToPointNetDevice> dev = DynamicCast<PointToPointNetDevice>(GetLinkDevice(link));
    Ptr<Channel> channel = dev->GetChannel();
    Ptr<PointToPointNetDevice> receiver = DynamicCast<PointToPointNetDevice>(
        channel->GetDevice(0) == dev ? channel->GetDevice(1) : channel->GetDevice(0));
    if (l.IsAlive())
    {
        // Busy time so far at the old rate; from now on at the new one.
        const double sent = SentFrameBytes(link);
        m_busyBefore[link] += (sent - m_bytesBefore[link]) * 8.0 / m_linkRateBps[link];
        m_bytesBefore[link] = sent;
        const DataRate rate = DeviceRate(l);
        dev->SetDataRate(rate);
        m_linkRateBps[link] = static_cast<double>(rate.GetBitRate());
        if (m_deadLink[link])
        {
            receiver->SetReceiveErrorModel(nullptr);
            m_deadLink[link] = nullptr;
        }
        NS_LOG_INFO("link " << m_topology->DescribeLink(link) << " now at " << rate);
    }
    else if (!m_deadLink[link])
    {
        Ptr<DeadLinkErrorModel> model = CreateObject<DeadLinkErrorModel>();
        model->SetCounter(&m_deadLinkDrops);
        m_deadLink[link] = model;
        receiver->SetReceiveErrorModel(model);
        NS_LOG_INFO("link " << m_topology->DescribeLink(link) << " dead: its frames are lost");
    }
}

uint64_t
PacketFabric::GetDeadLinkDropCount() const
{
    return m_deadLinkDrops;
}

double
PacketFabric::SentFrameBytes(uint32_t link) const
{
    const QueueDisc::Stats& s = m_linkQueueDisc[link]->GetStats();
    return static_cast<double>(s.nTotalSentBytes)
           + static_cast<double>(kPppHeader) * s.nTotalSentPackets;
}

Ptr<Node>
PacketFabric::GetNode(uint32_t node) const
{
    return m_nodes.at(node);
}

Ptr<NetDevice>
PacketFabric::GetLinkDevice(uint32_t link) const
{
    const uint32_t iface = m_linkInterface.at(link);
    if (iface == kNone)
    {
        return nullptr;
    }
    return m_nodes[m_topology->GetLink(link).src]->GetObject<Ipv4>()->GetNetDevice(iface);
}

void
PacketFabric::InstallPath(Ipv4Address srcAddr,
                          Ipv4Address dstAddr,
                          const std::vector<uint32_t>& path)
{
    // A packet's TTL counts its hops (PacketPathRouting::AddHop): the path must end before it
    // runs out.
    UintegerValue ttl;
    m_nodes.front()->GetObject<Ipv4>()->GetAttribute("DefaultTtl", ttl);
    if (path.size() > ttl.Get())
    {
        throw NetworkError("the routing policy's path from "
                           + m_topology->GetNode(m_topology->GetLink(path.front()).src).name
                           + " has " + std::to_string(path.size())
                           + " links; the packet network carries paths of at most "
                             "ns3::Ipv4L3Protocol::DefaultTtl = "
                           + std::to_string(ttl.Get()) + " links (raise it)");
    }
    for (uint32_t hop = 0; hop < path.size(); ++hop)
    {
        const uint32_t l = path[hop];
        const TopologyLink& link = m_topology->GetLink(l);
        if (m_linkInterface[l] == kNone || !link.IsAlive())
        {
            throw NetworkError("the routing policy chose the dead link "
                               + m_topology->DescribeLink(l));
        }
        m_routingTables[link.src]->AddHop(
            srcAddr, dstAddr, hop, m_linkInterface[l], PacketPathRouting::NodeAddress(link.dst, 0));
    }
}

void
PacketFabric::RemovePath(Ipv4Address srcAddr,
                         Ipv4Address dstAddr,
                         const std::vector<uint32_t>& path)
{
    for (uint32_t hop = 0; hop < path.size(); ++hop)
    {
        m_routingTables[m_topology->GetLink(path[hop]).src]->RemoveHop(srcAddr, dstAddr, hop);
    }
}

void
PacketFabric::CountLocalDeliver(const Ipv4Header& header, Ptr<const Packet> packet, uint32_t)
{
    if (packet->GetSize() > kTcpHeader + 8)
    {
        ++m_dataPackets;
    }
}

uint64_t
PacketFabric::GetDataPacketCount() const
{
    return m_dataPackets;
}

uint64_t
PacketFabric::GetQueueDropCount() const
{
    uint64_t drops = 0;
    for (const auto& q : m_queueDiscs)
    {
        drops += q->GetStats().nTotalDroppedPackets;
    }
    return drops;
}

double
PacketFabric::GetLinkBusyTime(uint32_t link) const
{
    if (link >= m_linkQueueDisc.size() || !m_linkQueueDisc[link] || m_linkRateBps[link] <= 0)
    {
        return 0;
    }
    // Every packet the root queue disc handed to the device is one frame (IP packet plus the
    // PPP header) at the device rate (the rate of the time, when a fault changed it).
    return m_busyBefore[link]
           + (SentFrameBytes(link) - m_bytesBefore[link]) * 8.0 / m_linkRateBps[link];
}

void
PacketFabric::Clear()
{
    m_linkQueueDisc.clear();
    m_queueDiscs.clear();
    m_deadLink.clear();
    m_routingTables.clear();
    m_nodes.clear();
    m_topology = nullptr;
}

} // namespace rapidllm
} // namespace ns3
