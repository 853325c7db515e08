/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_PACKET_PATH_ROUTING_H
#define RAPIDLLM_PACKET_PATH_ROUTING_H

#include "ns3/ipv4-routing-helper.h"
#include "ns3/ipv4-routing-protocol.h"
#include "ns3/ipv4.h"

#include <cstdint>
#include <unordered_map>
#include <vector>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief An ns-3 Ipv4RoutingProtocol that forwards each packet by its (source address,
 * destination address) pair along a path installed by PacketNetwork.
 *
 * PacketNetwork gives every (source endpoint, destination endpoint, path) its own address pair
 * (the destination holds one alias address per distinct path from a source), asks the
 * rapid-llm RoutingPolicy for the path, and installs one entry per hop here. So the very
 * paths the routing policy chooses for the flow model carry the packets, hop by hop, with
 * one hash lookup per packet per hop. Node addresses are 11.<slot>.<node/256>.<node%256>:
 * a packet is delivered locally when the low 16 bits name this node.
 */
class PacketPathRouting : public Ipv4RoutingProtocol
{
  public:
    /** \brief Register this type. \return the TypeId */
    static TypeId GetTypeId();

    PacketPathRouting();
    ~PacketPathRouting() override;

    /**
     * \brief Sets which topology node this protocol runs on (its local addresses).
     * \param node the topology node index
     */
    void SetTopologyNode(uint32_t node);

    /**
     * \brief Installs one hop: packets from \p src to \p dst that have crossed \p hop links of
     * their path leave through \p interface towards \p gateway (the next node's address).
     *
     * A path may visit a node more than once (Valiant routing through an intermediate GPU
     * crosses its switch twice); each visit is then a hop of its own, told apart by how many
     * links the packet has crossed, which its IPv4 TTL counts down from the node's
     * Ipv4L3Protocol::DefaultTtl. A node visited once forwards by the address pair alone.
     * \param src source address \param dst destination address
     * \param hop the index in the path of the link this hop leaves by (0 at the source)
     * \param interface the Ipv4 interface index of the outgoing device
     * \param gateway the next hop's address
     */
    void AddHop(
        Ipv4Address src, Ipv4Address dst, uint32_t hop, uint32_t interface, Ipv4Address gateway);

    /**
     * \brief Removes the hop AddHop() installed for \p src to \p dst at index \p hop (nothing
     * if there is none), so that the pair's path can be installed anew.
     * \param src source address \param dst destination address
     * \param hop the index in the path of the link the hop leaves by
     */
    void RemoveHop(Ipv4Address src, Ipv4Address dst, uint32_t hop);

    /** \return the number of installed hops */
    uint32_t GetHopCount() const;

    /**
     * \brief The address of a topology node for a path slot.
     * \param node topology node index (< 65536) \param slot path slot (< 256)
     * \return 11.slot.node/256.node%256
     */
    static Ipv4Address NodeAddress(uint32_t node, uint32_t slot);
    /** \return the topology node an address names */
    static uint32_t AddressNode(Ipv4Address address);

    Ptr<Ipv4Route> RouteOutput(Ptr<Packet> p,
                               const Ipv4Header& header,
                               Ptr<NetDevice> oif,
                               Socket::SocketErrno& sockerr) override;
    bool RouteInput(Ptr<const Packet> p,
                    const Ipv4Header& header,
                    Ptr<const NetDevice> idev,
                    UnicastForwardCallback ucb,
                    MulticastForwardCallback mcb,
                    LocalDeliverCallback lcb,
                    ErrorCallback ecb) override;
    void NotifyInterfaceUp(uint32_t interface) override;
    void NotifyInterfaceDown(uint32_t interface) override;
    void NotifyAddAddress(uint32_t interface, Ipv4InterfaceAddress address) override;
    void NotifyRemoveAddress(uint32_t interface, Ipv4InterfaceAddress address) override;
    void SetIpv4(Ptr<Ipv4> ipv4) override;
    void PrintRoutingTable(Ptr<OutputStreamWrapper> stream,
                           Time::Unit unit = Time::S) const override;

  protected:
    void DoDispose() override;

  private:
    /** \return the table key of an address pair */
    static uint64_t
    Key(Ipv4Address src, Ipv4Address dst)
    {
        return (static_cast<uint64_t>(src.Get()) << 32) | dst.Get();
    }

    /** The hops of one address pair at this node: one per visit of its path. */
    struct Visit
    {
        uint32_t hop = 0;     //!< index in the path of the link the visit leaves by
        Ptr<Ipv4Route> route; //!< where it leaves to
    };

    /**
     * \brief The route of a packet of an address pair at this node.
     * \param visits the pair's hops here (not empty)
     * \param hop links the packet has crossed, or UINT32_MAX if unknown (read from \p ttl)
     * \param ttl the packet's TTL as received
     * \return the route, or null if no visit matches
     */
    Ptr<Ipv4Route> Select(const std::vector<Visit>& visits, uint32_t hop, uint8_t ttl) const;

    Ptr<Ipv4> m_ipv4;                                          //!< the node's IPv4
    uint32_t m_node = 0;                                       //!< topology node index
    std::unordered_map<uint64_t, std::vector<Visit>> m_routes; //!< (src, dst) -> hops here
    uint32_t m_hops = 0;                                       //!< installed hops
};

/**
 * \ingroup rapid-llm
 * \brief Lets InternetStackHelper install a PacketPathRouting on every node.
 */
class PacketPathRoutingHelper : public Ipv4RoutingHelper
{
  public:
    PacketPathRoutingHelper* Copy() const override;
    Ptr<Ipv4RoutingProtocol> Create(Ptr<Node> node) const override;
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_PACKET_PATH_ROUTING_H
