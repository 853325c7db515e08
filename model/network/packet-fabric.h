/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_PACKET_FABRIC_H
#define RAPIDLLM_PACKET_FABRIC_H

#include "ns3/data-rate.h"
#include "ns3/error-model.h"
#include "ns3/ipv4-address.h"
#include "ns3/ipv4-header.h"
#include "ns3/net-device.h"
#include "ns3/node.h"
#include "ns3/packet.h"
#include "ns3/queue-disc.h"
#include "ns3/topology.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ns3 {

class PointToPointChannel;
class PointToPointNetDevice;

namespace rapidllm {

class PacketPathRouting;

/**
 * \ingroup rapid-llm
 * \brief How PacketFabric builds the ns-3 network (set from PacketNetwork's attributes).
 */
struct PacketFabricConfig
{
    uint32_t mtu = 4096;                        //!< IP MTU of every link, bytes
    uint32_t deviceQueuePackets = 4;            //!< PointToPoint device transmit queue, packets
    std::string queueDisc = "fq";               //!< fq, fifo, fq-codel or a QueueDisc TypeId name
    uint32_t queueDiscPackets = 200000;         //!< queue discipline limit, packets
    std::string congestion = "ns3::TcpNewReno"; //!< TCP congestion control TypeId name
    /**
     * Whether the IP/TCP/PPP headers are part of the wire efficiency (device rate = payload
     * rate / stackEfficiency) or come on top (device rate = payload rate).
     */
    bool headersInEfficiency = true;
    double stackEfficiency = 1; //!< payload fraction of a full-size frame on the wire
    /**
     * Whether switches cut through (as NVSwitch and InfiniBand switches do) instead of storing
     * and forwarding each frame as an ns-3 node does (CutThroughChannel).
     */
    bool cutThrough = true;
};

/**
 * \ingroup rapid-llm
 * \brief The Topology built from stock ns-3 parts: one Node per topology node with the
 * Internet stack (IPv4, TCP) and a PacketPathRouting table, one PointToPoint channel per
 * physical connection (a CutThroughChannel, so that switches may cut through; each device at
 * its own direction's rate: line rate x wire efficiency x fault factor, divided by the stack
 * efficiency when the headers are part of the wire efficiency), a root queue discipline on
 * every device; links dead in both directions are not installed.
 *
 * The packet backend's fabric: it knows links, devices and routes, not messages or
 * connections. InstallPath() writes a routing policy's path into the nodes' tables for one
 * address pair. Node i answers at PacketPathRouting::NodeAddress(i, slot).
 */
class PacketFabric
{
  public:
    /** IPv4 header without options, bytes. */
    static constexpr uint32_t kIpHeader = 20;
    /** TCP header without options: the sockets run without the timestamp option. */
    static constexpr uint32_t kTcpHeader = 20;
    /** PPP header PointToPointNetDevice adds to every frame, bytes. */
    static constexpr uint32_t kPppHeader = 2;

    /**
     * \brief Builds the ns-3 network of \p topology (once; later calls do nothing).
     * \param topology the graph (kept for InstallPath)
     * \param config device, queue and TCP settings
     * Throws SpecError naming the PacketNetwork::QueueDisc attribute if its value is unknown.
     */
    void Build(Ptr<Topology> topology, const PacketFabricConfig& config);

    /**
     * \brief Checks the names of a PacketFabricConfig (Build checks them too).
     * \param queueDisc fq, fifo, fq-codel or a QueueDisc TypeId name
     * \param congestion a TcpCongestionOps TypeId name
     * Throws SpecError naming the PacketNetwork attribute (QueueDisc, CongestionControl) and
     * what is allowed.
     */
    static void CheckNames(const std::string& queueDisc, const std::string& congestion);

    /** \return whether Build() ran */
    bool IsBuilt() const;

    /** \return the ns-3 node of a topology node */
    Ptr<Node> GetNode(uint32_t node) const;

    /**
     * \return the ns-3 device that transmits a directed link, or null if the link is not
     * installed (dead in both directions)
     */
    Ptr<NetDevice> GetLinkDevice(uint32_t link) const;

    /**
     * \brief Installs a path's hops for one address pair: every node on it forwards packets
     * from \p srcAddr to \p dstAddr over the path's next link.
     * \param srcAddr source address \param dstAddr destination address \param path the links
     * Throws NetworkError if the path uses a dead link.
     */
    void InstallPath(Ipv4Address srcAddr, Ipv4Address dstAddr, const std::vector<uint32_t>& path);

    /**
     * \brief Removes what InstallPath() wrote for one address pair and path, so that the pair
     * can be given another path (a connection moved to another path while it is idle).
     * \param srcAddr source address \param dstAddr destination address \param path the links
     */
    void RemovePath(Ipv4Address srcAddr, Ipv4Address dstAddr, const std::vector<uint32_t>& path);

    /**
     * \brief Makes a directed link's device follow the topology's fault factor now (a fault
     * during the run): a live link's transmitter gets the rate of Build() at the new factor
     * (the frame being sent finishes at the old rate); a dead link's receiver drops every frame
     * from now on, those already on the wire included, until the link lives again.
     * \param link the directed link
     * Throws NetworkError for a link that was not installed (dead in both directions at
     * Build()) and is alive now: the packet network cannot add links during a run.
     */
    void UpdateLink(uint32_t link);

    /** \return frames a dead link's receiver dropped so far */
    uint64_t GetDeadLinkDropCount() const;

    /** \return TCP data segments delivered to endpoints so far */
    uint64_t GetDataPacketCount() const;
    /** \return packets dropped by the queue disciplines so far */
    uint64_t GetQueueDropCount() const;
    /**
     * \return the time a link's transmitter has been busy so far, seconds (every frame it
     * sent, headers and ACKs included, at the device rate); 0 if not installed
     */
    double GetLinkBusyTime(uint32_t link) const;

    /** \brief Drops every reference to the ns-3 objects. */
    void Clear();

  private:
    /** \brief Counts a packet delivered to an endpoint's transport. */
    void CountLocalDeliver(const Ipv4Header& header, Ptr<const Packet> packet, uint32_t iface);

    /** \return the bit rate a live link's device sends at (see the class comment) */
    DataRate DeviceRate(const TopologyLink& link) const;
    /**
     * \brief Creates \p node's PointToPoint device on \p channel, with its queue and flow
     * control, as PointToPointHelper does (which cannot take another channel type).
     * \return the device
     */
    static Ptr<PointToPointNetDevice> InstallDevice(Ptr<Node> node,
                                                    Ptr<PointToPointChannel> channel,
                                                    const PacketFabricConfig& config);
    /** \return the bit rate of \p link's device without its fault factor */
    DataRate HealthyRate(const TopologyLink& link) const;
    /** \return the bit rate of \p link's device at \p factor of its healthy rate */
    DataRate RateOf(const TopologyLink& link, double factor) const;
    /** \return the frame bytes (IP packets plus PPP headers) a link's device has sent */
    double SentFrameBytes(uint32_t link) const;

    Ptr<Topology> m_topology;                            //!< the graph
    PacketFabricConfig m_config;                         //!< how it was built
    bool m_built = false;                                //!< Build() done
    std::vector<Ptr<Node>> m_nodes;                      //!< topology node -> ns-3 node
    std::vector<Ptr<PacketPathRouting>> m_routingTables; //!< per node
    std::vector<uint32_t> m_linkInterface;               //!< directed link -> Ipv4 interface
    std::vector<Ptr<QueueDisc>> m_linkQueueDisc;         //!< directed link -> its device's root
    std::vector<double> m_linkRateBps;                   //!< directed link -> device bit rate
    std::vector<double> m_busyBefore;  //!< directed link -> busy time before the last rate change
    std::vector<double> m_bytesBefore; //!< directed link -> frame bytes sent before it
    std::vector<Ptr<ErrorModel>> m_deadLink;  //!< directed link -> its receiver's drop-all model
    uint64_t m_deadLinkDrops = 0;             //!< frames dropped by dead links
    std::vector<Ptr<QueueDisc>> m_queueDiscs; //!< every root queue disc
    uint64_t m_dataPackets = 0;               //!< data segments delivered
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_PACKET_FABRIC_H
