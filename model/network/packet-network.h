/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_PACKET_NETWORK_H
#define RAPIDLLM_PACKET_NETWORK_H

#include "ns3/ipv4-header.h"
#include "ns3/network-backend.h"
#include "ns3/node.h"
#include "ns3/nstime.h"
#include "ns3/queue-disc.h"
#include "ns3/socket.h"

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <unordered_map>
#include <utility>
#include <vector>

namespace ns3 {
namespace rapidllm {

class PacketPathRouting;

/**
 * \ingroup rapid-llm
 * \brief Packet-level network backend: the Topology built from stock ns-3 parts (Nodes,
 * PointToPoint links, the Internet stack, TCP, a traffic-control queue discipline), with the
 * RoutingPolicy's paths installed into ns-3 routing (PacketPathRouting).
 *
 * Every message travels over a persistent TCP connection of its (source, destination, path):
 * connections are opened once (Preconnect(), or lazily at a pair's first message, which then
 * pays the handshake) and reused, so messages pay neither handshake nor slow start. A
 * 16-byte PacketMessageHeader frames each message in the byte stream; the delivery callback
 * fires when the receiver has read the message's last byte. Link rates follow the topology:
 * line rate x wire efficiency x fault factor, of which the TCP/IP/PPP headers of a full
 * segment take their share (HeaderOverhead); a link dead in both directions is not
 * installed. Every transport setting is an attribute (see doc/packet-network.md).
 */
class PacketNetwork : public NetworkBackend
{
  public:
    /** \brief Register this type. \return the TypeId */
    static TypeId GetTypeId();

    /** How the ns-3 headers relate to the topology's wire efficiency. */
    enum HeaderOverhead
    {
        /** The IP/TCP/PPP headers are part of the link technology's overhead that
         * wire_efficiency already charges: the device rate is the payload rate divided by
         * the stack's own efficiency, so TCP payload flows at line x efficiency x factor. */
        HEADERS_IN_EFFICIENCY,
        /** The headers come on top: the device rate is line x efficiency x factor. */
        HEADERS_EXTRA
    };

    PacketNetwork();
    ~PacketNetwork() override;

    void SetTopology(Ptr<Topology> topology) override;
    uint64_t Send(uint32_t src,
                  uint32_t dst,
                  uint64_t bytes,
                  DeliveryCallback onDelivered) override;

    /**
     * \brief Opens the persistent connections of the given (source, destination) pairs now
     * (routed with flow id 0) and calls \p ready once all are established, so that a
     * workload started then pays no handshake.
     * \param pairs the endpoint pairs (src == dst pairs are ignored)
     * \param ready called (as a simulator event) when every connection is up
     */
    void Preconnect(const std::vector<std::pair<uint32_t, uint32_t>>& pairs, Callback<void> ready);

    /** \return TCP data segments delivered to endpoints so far */
    uint64_t GetDataPacketCount() const;
    /** \return packets dropped by the queue disciplines so far */
    uint64_t GetQueueDropCount() const;
    /** \return open TCP connections */
    uint32_t GetConnectionCount() const;
    /** \return the TCP payload bytes of a full segment (MTU minus IP, TCP and option headers) */
    uint32_t GetSegmentSize() const;
    /**
     * \return the payload fraction of a full-size frame on the wire: segment / (MTU + PPP
     * header), e.g. 8948 / 9002 = 0.994 at MTU 9000
     */
    double GetStackEfficiency() const;
    /** \return the ns-3 node of a topology node (builds the network if needed) */
    Ptr<Node> GetNode(uint32_t node);
    /**
     * \return the ns-3 device that transmits a directed link (builds the network if needed),
     * or null if the link is not installed (dead in both directions)
     */
    Ptr<NetDevice> GetLinkDevice(uint32_t link);

  protected:
    void DoDispose() override;

  private:
    /** \brief A message waiting in a connection's send queue. */
    struct OutMessage
    {
        uint64_t id = 0;         //!< message id
        uint64_t bytes = 0;      //!< payload size
        uint64_t left = 0;       //!< payload bytes not yet given to TCP
        bool headerSent = false; //!< its frame header is in the socket
    };

    /** \brief One persistent TCP connection (sender side). */
    struct Connection
    {
        uint32_t src = 0;             //!< source endpoint
        uint32_t dst = 0;             //!< destination endpoint
        std::vector<uint32_t> path;   //!< the data path (links)
        Ptr<Socket> socket;           //!< sender socket
        bool connectIssued = false;   //!< Connect() called
        bool established = false;     //!< handshake done
        bool warm = false;            //!< warm-up frame acked (window known)
        bool awaited = false;         //!< a Preconnect() waits for it
        std::deque<OutMessage> queue; //!< messages not yet fully written
    };

    /** \brief Receiver-side framing state of one accepted connection. */
    struct Receiver
    {
        Ptr<Socket> socket;      //!< accepted socket
        uint8_t header[16] = {}; //!< frame header bytes so far
        uint32_t headerHave = 0; //!< bytes of header read
        uint64_t id = 0;         //!< current message id
        uint64_t left = 0;       //!< payload bytes still to read
    };

    /** \brief Builds the ns-3 nodes, links, stacks and queue disciplines (once). */
    void Build();
    /** \brief Creates the connection carrying \p path from src to dst. \return its index */
    uint32_t OpenConnection(uint32_t src,
                            uint32_t dst,
                            const std::vector<uint32_t>& path,
                            uint64_t flowId);
    /** \brief Installs a path's hops for one address pair. */
    void InstallPath(Ipv4Address srcAddr, Ipv4Address dstAddr, const std::vector<uint32_t>& path);
    /** \brief Creates the listening socket of an endpoint if it has none. */
    void Listen(uint32_t endpoint);
    /** \brief Sets the transport attributes on a new socket. */
    void ConfigureSocket(Ptr<Socket> socket) const;
    /** \brief Writes as much of a connection's queue into its socket as fits. */
    void Push(uint32_t connection);
    /** \brief Reads an accepted socket and completes framed messages. */
    void Receive(uint32_t receiver);
    /** \brief Runs a message's delivery callback. */
    void Deliver(uint64_t id);
    /** \brief Counts a packet delivered to an endpoint's transport. */
    void CountLocalDeliver(const Ipv4Header& header, Ptr<const Packet> packet, uint32_t iface);

    // Attributes.
    uint32_t m_mtu;                //!< IP MTU of every link, bytes
    uint32_t m_segmentSize;        //!< TCP segment payload (0 = MTU - 52)
    uint32_t m_sendBuffer;         //!< TCP send buffer, bytes
    uint32_t m_receiveBuffer;      //!< TCP receive buffer, bytes
    uint32_t m_initialCwnd;        //!< initial congestion window, segments
    uint32_t m_delAckCount;        //!< segments per ACK
    Time m_minRto;                 //!< minimum retransmission timeout
    Time m_clockGranularity;       //!< RTO clock granularity
    std::string m_congestion;      //!< TCP congestion control TypeId name
    std::string m_queueDisc;       //!< root queue discipline TypeId name
    uint32_t m_queueDiscPackets;   //!< queue discipline limit, packets
    uint32_t m_deviceQueuePackets; //!< device transmit queue limit, packets
    HeaderOverhead m_headerMode;   //!< how headers relate to wire efficiency
    uint16_t m_port;               //!< TCP port of every endpoint's listener

    bool m_built = false;                                //!< Build() done
    std::vector<Ptr<Node>> m_nodes;                      //!< topology node -> ns-3 node
    std::vector<Ptr<PacketPathRouting>> m_routingTables; //!< per node
    std::vector<uint32_t> m_linkInterface;               //!< directed link -> Ipv4 interface
    std::vector<Ptr<QueueDisc>> m_queueDiscs;            //!< every root queue disc
    std::vector<Ptr<Socket>> m_listeners;                //!< per endpoint (may be null)
    std::vector<Connection> m_connections;               //!< all connections
    std::map<std::pair<uint32_t, uint32_t>, std::vector<uint32_t>> m_pairConnections; //!< by pair
    std::vector<Receiver> m_receivers;                          //!< accepted sockets
    std::unordered_map<uint64_t, DeliveryCallback> m_callbacks; //!< id -> delivery callback
    uint64_t m_nextId = 0;                                      //!< next message id
    uint64_t m_dataPackets = 0;                                 //!< data segments delivered
    uint32_t m_connecting = 0;                                  //!< preconnects outstanding
    std::vector<Callback<void>> m_readyCallbacks;               //!< waiting for m_connecting == 0
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_PACKET_NETWORK_H
