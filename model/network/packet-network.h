/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_PACKET_NETWORK_H
#define RAPIDLLM_PACKET_NETWORK_H

#include "ns3/network-backend.h"
#include "ns3/node.h"
#include "ns3/nstime.h"
#include "ns3/packet-capture.h"
#include "ns3/packet-fabric.h"
#include "ns3/packet-message-stream.h"
#include "ns3/socket.h"

#include <cstdint>
#include <map>
#include <unordered_map>
#include <utility>
#include <vector>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief Packet-level network backend: the Topology built from stock ns-3 parts by a
 * PacketFabric (Nodes, PointToPoint links, the Internet stack, a traffic-control queue
 * discipline, the RoutingPolicy's paths installed into ns-3 routing), carrying every message
 * over TCP.
 *
 * Every message travels over a persistent TCP connection of its (source, destination, path):
 * connections are opened once (Prepare(), or lazily at a pair's first message, which then
 * pays the handshake) and reused, so messages pay neither handshake nor slow start. A
 * message stream (MessageStreamWriter / MessageStreamReader) frames each message with a
 * 16-byte PacketMessageHeader; the delivery callback fires when the receiver has read the
 * message's last byte. Link rates follow the topology: line rate x wire efficiency x fault
 * factor, of which the TCP/IP/PPP headers of a full segment take their share
 * (HeaderOverhead); a link dead in both directions is not installed. Every transport setting
 * is an attribute (see doc/packet-network.md).
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

    /** \brief How a switch forwards a frame. */
    enum SwitchForwarding
    {
        /** As NVSwitch and InfiniBand switches do: a frame leaves while its tail is still
         * arriving (CutThroughChannel). */
        CUT_THROUGH,
        /** As an ns-3 node does: a frame leaves once all of it has arrived. */
        STORE_AND_FORWARD
    };

    PacketNetwork();
    ~PacketNetwork() override;

    /**
     * \brief Checks the attributes the fabric is built from, as the first packet does (it
     * builds the ns-3 network then), for callers that want the errors before a run starts.
     * Throws SpecError naming the attribute: a QueueDisc that is not fq, fifo, fq-codel or a
     * QueueDisc TypeId, a CongestionControl that is not a TcpCongestionOps TypeId, a
     * SegmentSize that with the headers exceeds the Mtu.
     */
    void CheckAttributes() const;

    void SetTopology(Ptr<Topology> topology) override;

    /**
     * \brief Opens the persistent connections of the given (source, destination) pairs now
     * (routed with flow id 0) and calls \p ready once all are established and warm, so that
     * a workload started then pays no handshake.
     * \param pairs the endpoint pairs (src == dst pairs are ignored)
     * \param ready called (as a simulator event) when every connection is up; may be null
     */
    void Prepare(const std::vector<EndpointPair>& pairs, Callback<void> ready) override;
    bool PreparesPairs() const override;

    /**
     * \return messages not yet delivered whose connection's data or ACK path crosses a dead
     * link: TCP retransmits them until it gives up, and they are never delivered unless the
     * link is repaired first (the replay's watchdog then names the dead link, not a slow rate)
     */
    uint32_t GetStalledCount() const override;
    /** \return open TCP connections */
    uint32_t GetConnectionCount() const;
    /**
     * \return how many times an idle connection was moved onto another path of its pair
     * (attribute ReuseIdleConnections) instead of a new connection being opened
     */
    uint32_t GetMovedConnectionCount() const;
    /** \return the TCP payload bytes of a full segment (MTU minus IP, TCP and option headers) */
    uint32_t GetSegmentSize() const;
    /**
     * \return the payload fraction of a full-size frame on the wire: segment / (MTU + PPP
     * header), e.g. 4044 / 4098 = 0.987 at MTU 4096
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
    void DoSend(uint64_t id,
                uint32_t src,
                uint32_t dst,
                uint64_t bytes,
                const std::vector<uint32_t>& path,
                const DeliveryCallback& onDelivered) override;
    /**
     * Link bytes: payload of the messages delivered over the link; busy time: the frames
     * (headers and ACKs included) its device sent, at the device rate.
     */
    void DoGetStats(NetworkStats& stats) const override;
    /**
     * The devices of the changed links take their new rates now (PacketFabric::UpdateLink);
     * a dead link loses every frame, so TCP retransmits over it until the link lives again or
     * the connection gives up (ns-3's TcpSocket DataRetries, 6 timeouts from MinRto doubling:
     * about 1.3 s of simulated time); its messages are then never delivered.
     */
    void DoApplyFault(const std::vector<uint32_t>& links) override;

  private:
    /** \brief One persistent TCP connection (sender side). */
    struct Connection
    {
        uint32_t src = 0;              //!< source endpoint
        uint32_t dst = 0;              //!< destination endpoint
        uint32_t slot = 0;             //!< the destination's address slot (one per connection)
        uint64_t flowId = 0;           //!< flow id its ACK path was routed with
        std::vector<uint32_t> path;    //!< the data path (links)
        std::vector<uint32_t> ackPath; //!< the ACKs' path (links)
        uint32_t window = 0;           //!< its send buffer, bytes (WindowFor its path)
        Ptr<Socket> socket;            //!< sender socket
        bool connectIssued = false;    //!< Connect() called
        bool established = false;      //!< handshake done
        bool warm = false;             //!< warm-up frame acked (window known)
        bool awaited = false;          //!< a Prepare() waits for it
        MessageStreamWriter stream;    //!< messages not yet fully written
        uint32_t undelivered = 0;      //!< its messages not yet delivered
        bool ordered = false;          //!< it carries ordered messages (then only those)
    };

    /** \brief One accepted connection (receiver side). */
    struct Receiver
    {
        Ptr<Socket> socket;         //!< accepted socket
        MessageStreamReader stream; //!< framing state
    };

    /** \brief A message sent and not yet delivered. */
    struct Pending
    {
        DeliveryCallback callback; //!< the sender's callback
        uint64_t bytes = 0;        //!< payload
        uint32_t connection = 0;   //!< the connection carrying it
    };

    /** \brief Builds the fabric (once). */
    void Build();
    /** \brief Creates the connection carrying \p path from src to dst. \return its index */
    uint32_t OpenConnection(uint32_t src,
                            uint32_t dst,
                            const std::vector<uint32_t>& path,
                            uint64_t flowId);
    /**
     * \return true if a connection has nothing left to do: warm, every message written and
     * every byte acknowledged (so every message on it delivered and no data packet in flight)
     */
    bool IsIdle(uint32_t connection) const;
    /** \brief Moves an idle connection onto another data path of its pair. */
    void MovePath(uint32_t connection, const std::vector<uint32_t>& path);
    /**
     * \brief The send buffer of a connection on \p path: SendBuffer if set, else
     * WindowBdps bandwidth-delay products of the healthy path (at least 256 KiB), so that
     * one connection can fill its path while TCP's per-segment scan of the in-flight window
     * (TcpTxBuffer::NextSeg) stays as short as that allows.
     * \param path the data path (links) \return bytes
     */
    uint32_t WindowFor(const std::vector<uint32_t>& path) const;
    /** \brief Creates the listening socket of an endpoint if it has none. */
    void Listen(uint32_t endpoint);
    /** \brief Sets the transport attributes on a new socket. */
    void ConfigureSocket(Ptr<Socket> socket) const;
    /** \brief Writes as much of a connection's queue into its socket as fits. */
    void Push(uint32_t connection);
    /** \brief Reads an accepted socket and completes framed messages. */
    void Receive(uint32_t receiver);
    /** \brief A message's last byte was read: schedules its delivery. */
    void Complete(uint64_t id);

    // Attributes.
    uint32_t m_mtu;                //!< IP MTU of every link, bytes
    uint32_t m_segmentSize;        //!< TCP segment payload (0 = MTU - 40)
    uint32_t m_sendBuffer;         //!< TCP send buffer, bytes (0 = WindowFor the path)
    double m_windowBdps;           //!< send buffer in bandwidth-delay products of the path
    uint32_t m_receiveBuffer;      //!< TCP receive buffer, bytes
    uint32_t m_initialCwnd;        //!< initial congestion window, segments
    uint32_t m_delAckCount;        //!< segments per ACK
    Time m_delAckTimeout;          //!< longest wait of a delayed ACK
    Time m_minRto;                 //!< minimum retransmission timeout
    Time m_clockGranularity;       //!< RTO clock granularity
    std::string m_congestion;      //!< TCP congestion control TypeId name
    std::string m_queueDisc;       //!< root queue discipline TypeId name
    uint32_t m_queueDiscPackets;   //!< queue discipline limit, packets
    uint32_t m_deviceQueuePackets; //!< device transmit queue limit, packets
    HeaderOverhead m_headerMode;   //!< how headers relate to wire efficiency
    SwitchForwarding m_forwarding; //!< how switches forward frames
    uint16_t m_port;               //!< TCP port of every endpoint's listener
    bool m_reuseIdle;              //!< a new path takes over an idle connection of its pair

    PacketFabric m_fabric;                 //!< nodes, links, routes
    std::string m_pcap;                    //!< capture file prefix ("" = none)
    std::string m_pcapLinks;               //!< links to capture ("" = every link)
    PacketCapture m_capture;               //!< the captures of m_pcap
    std::vector<Ptr<Socket>> m_listeners;  //!< per endpoint (may be null)
    std::vector<Connection> m_connections; //!< all connections
    std::map<std::pair<uint32_t, uint32_t>, std::vector<uint32_t>> m_pairConnections; //!< by pair
    std::vector<Receiver> m_receivers;               //!< accepted sockets
    std::unordered_map<uint64_t, Pending> m_pending; //!< id -> message not yet delivered
    std::vector<double> m_linkBytes;                 //!< per directed link: bytes delivered
    uint32_t m_connecting = 0;                       //!< preconnects outstanding
    uint32_t m_movedConnections = 0;                 //!< idle connections moved to a path
    std::vector<Callback<void>> m_readyCallbacks;    //!< waiting for m_connecting == 0
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_PACKET_NETWORK_H
