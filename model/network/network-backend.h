/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_NETWORK_BACKEND_H
#define RAPIDLLM_NETWORK_BACKEND_H

#include "ns3/callback.h"
#include "ns3/object.h"
#include "ns3/routing-policy.h"
#include "ns3/topology.h"
#include "ns3/traced-callback.h"

#include <cstdint>
#include <unordered_map>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief The one interface every network backend implements: send `bytes` from endpoint a to
 * endpoint b and call back on delivery, over a shared Topology and RoutingPolicy.
 *
 * The flow-level FlowNetwork and the ns-3 packet-level backend both implement it, so the
 * collective algorithms above it (model/system/) issue the very same message sequence to
 * either. A backend runs on ns3::Simulator: Send() may be called from any simulator event and
 * the callback runs as a simulator event at the delivery time.
 */
class NetworkBackend : public Object
{
  public:
    /** \brief Register this type. \return the TypeId */
    static TypeId GetTypeId();

    /** Called with the message id when its last byte has arrived at the destination. */
    typedef Callback<void, uint64_t> DeliveryCallback;

    /**
     * Signature of the MessageDelivered trace source.
     * \param id message id \param src source endpoint \param dst destination endpoint
     * \param bytes payload \param latency seconds from Send() to delivery
     */
    typedef void (*MessageTracedCallback)(
        uint64_t id, uint32_t src, uint32_t dst, uint64_t bytes, double latency);

    NetworkBackend();
    ~NetworkBackend() override;

    /**
     * \brief Sets the network graph (faults included). Call before the first Send().
     * \param topology the graph
     */
    virtual void SetTopology(Ptr<Topology> topology);
    /** \return the network graph */
    Ptr<Topology> GetTopology() const;
    /**
     * \return the logical network (dimensions, coordinates, fault state): all the system layer
     * may know of the network; throws NetworkError before SetTopology()
     */
    const NetworkView& GetView() const;
    /**
     * \brief Sets the routing policy that chooses every message's path.
     * \param routing the policy
     */
    virtual void SetRouting(Ptr<RoutingPolicy> routing);
    /** \return the routing policy */
    Ptr<RoutingPolicy> GetRouting() const;

    /**
     * \brief Sends a message.
     * \param src source endpoint
     * \param dst destination endpoint (src == dst delivers at once)
     * \param bytes payload bytes (0 costs the path latency only)
     * \param onDelivered called with the returned id at delivery
     * \return the message id (unique per backend, increasing from 0)
     */
    virtual uint64_t Send(uint32_t src,
                          uint32_t dst,
                          uint64_t bytes,
                          DeliveryCallback onDelivered) = 0;

    /** \return messages sent so far */
    uint64_t GetSentCount() const;
    /** \return messages delivered so far */
    uint64_t GetDeliveredCount() const;

  protected:
    void DoDispose() override;

    /**
     * \brief Routes a message with the routing policy (throws SpecError if unreachable).
     * \param src source endpoint \param dst destination \param id message id
     * \return the links
     */
    std::vector<uint32_t> RoutePath(uint32_t src, uint32_t dst, uint64_t id);

    /**
     * \brief Counts a sent message; remembers it for the MessageDelivered trace while that has
     * sinks (nothing is kept otherwise).
     * \param id message id \param src source \param dst destination \param bytes payload
     */
    void NotifySent(uint64_t id, uint32_t src, uint32_t dst, uint64_t bytes);
    /**
     * \brief Counts a delivered message and fires MessageDelivered for it.
     * \param id message id
     */
    void NotifyDelivered(uint64_t id);

    Ptr<Topology> m_topology;     //!< the graph
    Ptr<RoutingPolicy> m_routing; //!< path choice
    uint64_t m_sent = 0;          //!< messages sent
    uint64_t m_delivered = 0;     //!< messages delivered

  private:
    /** A message in flight, as the trace reports it. */
    struct InFlight
    {
        uint32_t src;   //!< source
        uint32_t dst;   //!< destination
        uint64_t bytes; //!< payload
        double sentAt;  //!< simulation time of Send()
    };

    std::unordered_map<uint64_t, InFlight> m_inFlight; //!< kept only while traced
    TracedCallback<uint64_t, uint32_t, uint32_t, uint64_t, double> m_deliveredTrace; //!< trace
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_NETWORK_BACKEND_H
