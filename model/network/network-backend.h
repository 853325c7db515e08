/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_NETWORK_BACKEND_H
#define RAPIDLLM_NETWORK_BACKEND_H

#include "ns3/callback.h"
#include "ns3/event-id.h"
#include "ns3/fault-schedule.h"
#include "ns3/network-stats.h"
#include "ns3/object.h"
#include "ns3/routing-policy.h"
#include "ns3/topology.h"
#include "ns3/traced-callback.h"
#include "ns3/type-registry.h"

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief The one interface every network backend implements, and all that the layers above
 * may use: send `bytes` from endpoint a to endpoint b and call back on delivery, prepare the
 * endpoint pairs of a workload before its timed start, and report statistics, over a shared
 * Topology and RoutingPolicy.
 *
 * The flow-level and the ns-3 packet-level backends both implement it, so the collective
 * algorithms above it (model/system/) issue the very same message sequence to either. A
 * backend runs on ns3::Simulator: Send() may be called from any simulator event and the
 * callback runs as a simulator event at the delivery time.
 *
 * Send() does what is common to every backend (message id, counting and the MessageDelivered
 * trace, routing, delivery of src == dst messages at once) and hands the routed message to
 * DoSend(). Backends are chosen by name (Create): a new one is a subclass with a TypeId and
 * one line in its own file,
 * `static TypeRegistrar<NetworkBackend> g_mine("mine", MyNetwork::GetTypeId());`.
 */
class NetworkBackend : public Object
{
  public:
    /** \brief Register this type. \return the TypeId */
    static TypeId GetTypeId();

    /** Called with the message id when its last byte has arrived at the destination. */
    typedef Callback<void, uint64_t> DeliveryCallback;

    /** A (source, destination) endpoint pair. */
    using EndpointPair = std::pair<uint32_t, uint32_t>;

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
     * \brief Makes a backend chosen by name: a registered short name ("flow", "packet", see
     * Names()) or the TypeId name of a NetworkBackend subclass.
     * \param name the name
     * \return the backend (topology and routing still to be set); throws SpecError (field
     *         "backend") listing the known names
     */
    static Ptr<NetworkBackend> Create(const std::string& name);

    /** \return the registered short names, sorted */
    static std::vector<std::string> Names();

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
     * \brief Gives the backend faults that start during the run and arms them
     * (FaultSchedule::Arm): times count from now, so call it before Simulator::Run() to count
     * from time 0, or from Prepare()'s ready callback to count from a prepared workload's start.
     * At each fault's time the topology's link factors change (messages sent afterwards are
     * routed over the changed topology) and the backend adapts what is in flight
     * (DoApplyFault): the flow backend re-solves the rates of the flows on the changed links at
     * that instant; the packet backend sets the devices' data rates, and a dead link drops
     * every frame from then on (see doc/network-model.md, "Faults during a run").
     * \param schedule the faults (one backend per schedule)
     * Throws NetworkError without a topology; SpecError naming a selector that matches no link.
     */
    void SetFaultSchedule(Ptr<FaultSchedule> schedule);
    /** \return the fault schedule set, or null */
    Ptr<FaultSchedule> GetFaultSchedule() const;

    /**
     * \return whether a link is degraded or dead now, or a fault schedule with faults is set
     * (symmetric copies may then differ); throws NetworkError before SetTopology()
     */
    bool MayHaveFaults() const;

    /**
     * \brief Whether faults leave dimension \p d as a healthy network would (fault locality):
     * no link of \p d is degraded or dead, now or in the fault schedule, and where any other
     * link is, the routing policy keeps paths inside their dimensions
     * (RoutingPolicy::KeepsDimensions), so no path detours onto \p d's links. True without
     * faults. The replayer asks it to keep timing the collectives of a tensor-parallel group
     * that owns its links once, when a fault lies elsewhere.
     * \param d the dimension
     * \return true if \p d is spared; throws NetworkError before SetTopology()
     */
    bool FaultsSpareDimension(uint32_t d) const;

    /**
     * \return whether the routing policy moves every path with a move of the ranks on this
     * topology (RoutingPolicy::RoutesSymmetrically): the replayer folds symmetric copies only
     * then; throws NetworkError before SetTopology()
     */
    bool RoutesSymmetrically() const;

    /**
     * \brief Sends a message.
     * \param src source endpoint
     * \param dst destination endpoint (src == dst delivers at once, as a simulator event)
     * \param bytes payload bytes (0 costs the path latency only)
     * \param onDelivered called with the returned id at delivery; may be null (nothing called)
     * \param latencies the path latencies its delivery costs after the last byte: 1 for a
     *        message; a fluid stream standing for many messages of a collective carries their
     *        latency term (e.g. 2(n-1) for a ring all-reduce's stream). Other than 1 only on a
     *        backend that SupportsFluid()
     * \param reservation the reservation the message runs under (0: none; see Reserve)
     * \param ordered the pair's connection carries it in order: it starts transmitting once
     *        every earlier ordered message between \p src and \p dst has transmitted its last
     *        byte (it does not wait for their delivery), as one connection (a TCP stream,
     *        NCCL's per-peer FIFO) carries its messages one after the other. Unordered
     *        messages (the default) share the links with everything in flight at once. The
     *        packet backend carries a path's ordered messages on one TCP connection and an
     *        unordered one on a connection with nothing else in flight
     * \param logged keep its progress for TakeProgress() as a reserved message's is (a fluid
     *        collective reads how its streams went beside other traffic); on a backend that
     *        records progress
     * \param flow the flow id the routing policy is given (RoutingPolicy::Route): a name of
     *        the logical message that does not depend on when it is sent (the collective
     *        engine's: its collective's and step's; the replayer's: its send operator's), so
     *        that a multipath policy routes it alike on every backend, whatever order they send
     *        in. Without one, the message id
     * \return the message id (unique per backend, increasing from 0); throws NetworkError if
     *         an endpoint does not exist, the pair is unreachable, no topology or routing
     *         policy is set, or \p latencies is not 1 on a backend without fluid streams
     */
    uint64_t Send(uint32_t src,
                  uint32_t dst,
                  uint64_t bytes,
                  DeliveryCallback onDelivered,
                  uint32_t latencies = 1,
                  uint64_t reservation = 0,
                  bool ordered = false,
                  bool logged = false,
                  std::optional<uint64_t> flow = std::nullopt);

    /** Called with a reservation's id when it is broken (see Reserve). */
    typedef Callback<void, uint64_t> BrokenCallback;

    /**
     * \brief Whether the backend keeps link reservations (Reserve) and records the progress of
     * the messages sent under one (TakeProgress). The default is false (the packet backend).
     * \return true if it does
     */
    virtual bool SupportsReservations() const;

    /**
     * \brief The links of the paths between \p pairs as routed now, sorted, each once: what
     * Reserve() takes. Empty when the backend keeps no reservations, or when the routing
     * policy may route two flows of one pair differently (RoutingPolicy::RoutesPerFlow), so
     * that later messages could leave these links.
     * \param pairs the (source, destination) endpoint pairs (pairs with src == dst add nothing)
     * \return the links; throws NetworkError as Send() does for a pair it cannot route
     */
    std::vector<uint32_t> ReservableLinks(const std::vector<EndpointPair>& pairs);

    /**
     * \brief Reserves \p links for one owner when none of them carries a transfer or another
     * reservation now: a run-time proof that what the owner runs on them runs alone.
     *
     * The owner's messages name the reservation (Send's \p reservation) and cross its links as
     * any message does; the backend records their progress (TakeProgress). Any other Send()
     * with bytes that crosses a reserved link, a message of the reservation that leaves its
     * links, or a fault changing one of its links (a FaultSchedule) breaks it first: its links
     * are freed and \p onBroken is called with its id at once, inside that Send() (or fault),
     * before the intruder's transfer joins the links. The owner may send from the callback:
     * that is how it turns what it ran without the network into real transfers (the state at
     * that instant) before the intruder shares the links with them.
     * \param links the links (ReservableLinks); empty reserves nothing
     * \param onBroken called once if the reservation is broken (may be null)
     * \param measure whether GetReservedLoad() will be asked (the links' load is kept now);
     *        an owner that knows its load already (a timed run) skips that cost
     * \return the reservation id (> 0), or 0 if a link is busy or reserved, or the backend
     *         keeps no reservations
     */
    uint64_t Reserve(const std::vector<uint32_t>& links,
                     BrokenCallback onBroken,
                     bool measure = true);

    /**
     * \brief Ends a reservation without calling its callback (nothing if already broken).
     * \param reservation the id from Reserve()
     */
    void Release(uint64_t reservation);

    /** \brief A link's load: bytes carried and seconds busy (as the link statistics count). */
    struct LinkLoad
    {
        double bytes = 0; //!< bytes carried
        double busyS = 0; //!< seconds with traffic
    };

    /**
     * \brief The load the links of a held reservation took since it was made: its owner's
     * messages alone (nothing else could cross them).
     * \param reservation the id from Reserve()
     * \return per link, in the order Reserve() got them; empty if not held or not measured
     */
    std::vector<LinkLoad> GetReservedLoad(uint64_t reservation) const;

    /**
     * \brief Adds load to the link statistics (GetStats): the recorded load of transfers that
     * ran without the network (a timed reservation of the same links).
     * \param links the links \param load per link, in the same order
     */
    void AddLinkLoad(const std::vector<uint32_t>& links, const std::vector<LinkLoad>& load);

    /**
     * \brief Adds \p bytes to the statistics of the links between \p src and \p dst (routed
     * now), no busy time: the part of a message that ran without the network.
     * \param src source endpoint \param dst destination endpoint \param bytes the bytes
     */
    void AddPathBytes(uint32_t src, uint32_t dst, double bytes);

    /**
     * \brief What a message between two endpoints runs at alone on the network as it is now:
     * the payload rate of its path's slowest link (line rate x wire efficiency x fault factor)
     * and the path's latency, over the path the routing policy gives it now.
     * \param src source endpoint \param dst destination endpoint (not \p src)
     * \return (bytes/s, seconds); throws NetworkError as RoutePath
     */
    std::pair<double, double> GetIdlePath(uint32_t src, uint32_t dst);
    /**
     * \brief The links a message between two endpoints takes now (GetIdlePath's path).
     * \param src source endpoint \param dst destination endpoint (not \p src)
     * \return the links, source first; throws NetworkError as RoutePath
     */
    std::vector<uint32_t> GetIdleRoute(uint32_t src, uint32_t dst);
    /**
     * \brief The bytes that the transfers crossing each link have still to send now: the work
     * waiting on it (a fluid collective's message floor asks how long others stay beside it).
     * The default (the packet backend) knows none and says 0.
     * \param links directed links
     * \return per link, in the order given
     */
    virtual std::vector<double> GetPendingBytes(const std::vector<uint32_t>& links) const;
    /**
     * \return \p link's load so far (bytes carried, seconds with traffic), as the statistics
     * count it; none on a backend without link statistics
     */
    LinkLoad GetLinkLoad(uint32_t link) const;

    /** \return the reservations held now */
    uint32_t GetReservationCount() const;
    /** \return the reservations broken so far (by an intruder or a fault) */
    uint64_t GetBrokenCount() const;

    /**
     * \brief The progress of a message sent under a reservation, once its transmission has
     * ended: (simulation time s, bytes left) at its start, at every change of its rate and at
     * the end of its transmission (0 bytes left); the bytes left at any time in between are
     * the linear interpolation of the two points around it. Taken once: the backend forgets
     * it. The default (a backend without reservations) has none.
     * \param message the message id
     * \return the points, empty if none were recorded (no bytes, src == dst, not reserved)
     */
    virtual std::vector<std::pair<double, double>> TakeProgress(uint64_t message);

    /**
     * \brief Whether the backend carries fluid streams: Send() with a latency count other than
     * 1 (the collectives' fluid form, issue 11). The default is false: such a backend (the
     * packet one) runs every collective at message granularity.
     * \return true if Send() accepts any latency count
     */
    virtual bool SupportsFluid() const;

    /**
     * \brief Calls \p ready once the backend can carry traffic between \p pairs without
     * set-up cost (at once by default; the packet backend first opens and warms the pairs'
     * connections). Measure a workload from the time \p ready runs. Call before or during
     * Simulator::Run().
     * \param pairs the (source, destination) endpoint pairs the workload will use (may be
     *        empty: a backend with connections then opens them at each pair's first message);
     *        a pair listed n times gets n connections (ordered and unordered traffic of a pair
     *        each take one: Send)
     * \param ready called as a simulator event; may be null
     */
    virtual void Prepare(const std::vector<EndpointPair>& pairs, Callback<void> ready);

    /**
     * \brief Whether Prepare() uses its pairs (a backend with connections to open). False by
     * default: a caller may then skip listing a large workload's pairs and pass none.
     * \return true if the pairs given to Prepare() change what the workload costs
     */
    virtual bool PreparesPairs() const;

    /**
     * \return the statistics so far: message counts and the window since the first Send()
     *         (kept here), per-link use and backend counters (DoGetStats); link names and
     *         utilizations are filled here
     */
    NetworkStats GetStats() const;
    /**
     * \return the counters GetStats() keeps here (messages sent and delivered, the window),
     * without per-link entries or the backend's own (DoGetStats): cheap on a network of
     * millions of links, what a progress line asks a few times a second
     */
    NetworkStats GetCounters() const;

    /** \return messages sent so far */
    uint64_t GetSentCount() const;
    /** \return messages delivered so far */
    uint64_t GetDeliveredCount() const;
    /**
     * \return messages in flight the backend knows cannot finish as things stand (a dead link
     * under them); 0 where it cannot tell
     */
    virtual uint32_t
    GetStalledCount() const
    {
        return 0;
    }

  protected:
    void DoDispose() override;

    /**
     * \brief Carries a routed message between two different endpoints and calls
     * Deliver(id, onDelivered) as a simulator event when its last byte has arrived, plus
     * GetLatencyCount() - 1 more path latencies (always 1 unless the backend SupportsFluid()).
     * \param id the message id \param src source endpoint \param dst destination endpoint
     * \param bytes payload \param path the links chosen by the routing policy (not empty)
     * \param onDelivered the caller's callback, to hand to Deliver() (may be null)
     */
    virtual void DoSend(uint64_t id,
                        uint32_t src,
                        uint32_t dst,
                        uint64_t bytes,
                        const std::vector<uint32_t>& path,
                        const DeliveryCallback& onDelivered) = 0;

    /**
     * \brief Fills what the backend knows: per-link bytes and busy time (stats.links is
     * already sized to the topology's links and named) and its own counters. Default: nothing.
     * \param stats the statistics to complete
     */
    virtual void DoGetStats(NetworkStats& stats) const;

    /** \return the latency count of the message being handed to DoSend() (see Send()) */
    uint32_t GetLatencyCount() const;
    /**
     * \return the reservation of the message being handed to DoSend() (0: none); the backend
     * records the progress of such a message (TakeProgress)
     */
    uint64_t GetReservation() const;
    /**
     * \return whether the message being handed to DoSend() is ordered on its pair's
     * connection (see Send())
     */
    bool IsOrdered() const;
    /**
     * \return whether the progress of the message being handed to DoSend() is to be kept
     * without a reservation (see Send())
     */
    bool IsLogged() const;
    /**
     * \return the flow id the message being handed to DoSend() was routed with (see Send()):
     * what a backend routes its reverse traffic (a connection's ACKs) with
     */
    uint64_t GetFlow() const;
    /**
     * \brief Whether a transfer crosses link \p link now (Reserve refuses such links). The
     * default (no reservations) says false.
     * \param link the directed link
     * \return true if busy
     */
    virtual bool IsLinkBusy(uint32_t link) const;
    /** \brief Breaks every reservation (rates changed by other means than a FaultSchedule). */
    void BreakAllReservations();
    /**
     * \return \p link's load so far as DoGetStats reports it (the default, no statistics:
     * none)
     */
    virtual LinkLoad DoGetLinkLoad(uint32_t link) const;
    /** \brief Adds \p load to \p link's statistics (default: nothing). */
    virtual void DoAddLinkLoad(uint32_t link, const LinkLoad& load);

    /**
     * \brief The topology's factors of \p links have just changed (a scheduled fault): adapt
     * what is in flight. Default: nothing (new messages see the change through routing).
     * \param links the directed links changed
     */
    virtual void DoApplyFault(const std::vector<uint32_t>& links);

    /**
     * \brief Completes a message: counts it, fires MessageDelivered and runs its callback
     * (unless null). Backends call it as the simulator event of the delivery.
     * \param id the message id \param onDelivered its callback
     */
    void Deliver(uint64_t id, const DeliveryCallback& onDelivered);

    /**
     * \brief Routes a message with the routing policy; under a policy that routes per pair
     * (not RoutesPerFlow), a pair's path is asked once per topology version and kept.
     * \param src source endpoint \param dst destination \param id the flow id
     * \return the links (empty when src == dst); throws NetworkError if an endpoint does not
     *         exist, the pair is unreachable or no topology or routing policy is set
     */
    std::vector<uint32_t> RoutePath(uint32_t src, uint32_t dst, uint64_t id);

    Ptr<Topology> m_topology;     //!< the graph
    Ptr<RoutingPolicy> m_routing; //!< path choice
    Ptr<FaultSchedule> m_faults;  //!< faults during the run (may be null)

  private:
    /** \return the statistics so far, with per-link entries if \p links (GetStats) */
    NetworkStats CollectStats(bool links) const;

    /** A message in flight, as the trace reports it. */
    struct InFlight
    {
        uint32_t src;   //!< source
        uint32_t dst;   //!< destination
        uint64_t bytes; //!< payload
        double sentAt;  //!< simulation time of Send()
    };

    uint64_t m_nextId = 0;      //!< next message id
    uint64_t m_sent = 0;        //!< messages sent
    uint64_t m_delivered = 0;   //!< messages delivered
    double m_firstSend = -1;    //!< statistics window start, s
    double m_lastDelivery = 0;  //!< when the last message was delivered, s
    uint32_t m_latencies = 1;   //!< latency count of the current Send
    bool m_ordered = false;     //!< the current Send is ordered on its connection
    bool m_logged = false;      //!< the current Send keeps its progress
    uint64_t m_reservation = 0; //!< reservation of the current Send
    uint64_t m_flow = 0;        //!< flow id of the current Send
    /** Most pairs whose path RoutePath keeps (about 20 MB) */
    static constexpr std::size_t kCachedRoutes = 1 << 18;
    /** Per (src << 32 | dst): its path, for a policy that routes per pair (RoutesPerFlow) */
    std::unordered_map<uint64_t, std::vector<uint32_t>> m_routes;
    uint64_t m_routesVersion = 0; //!< the topology's version the kept paths were routed on

    /** \brief A held reservation. */
    struct Reservation
    {
        std::vector<uint32_t> links;  //!< its links
        BrokenCallback onBroken;      //!< called when broken
        std::vector<LinkLoad> before; //!< its links' load when it was made
    };

    /** \brief Breaks \p reservation: frees its links, then calls its callback. */
    void Break(uint64_t reservation);

    std::unordered_map<uint64_t, Reservation> m_reservations; //!< held reservations
    std::vector<uint64_t> m_linkOwner;  //!< per directed link: its reservation (0: none)
    uint64_t m_nextReservation = 0;     //!< last reservation id given
    uint64_t m_broken = 0;              //!< reservations broken
    std::vector<EventId> m_faultBreaks; //!< per scheduled fault: breaks reservations first
    std::unordered_map<uint64_t, InFlight> m_inFlight; //!< kept only while traced
    TracedCallback<uint64_t, uint32_t, uint32_t, uint64_t, double> m_deliveredTrace; //!< trace
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_NETWORK_BACKEND_H
