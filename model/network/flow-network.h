/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_FLOW_NETWORK_H
#define RAPIDLLM_FLOW_NETWORK_H

#include "ns3/event-id.h"
#include "ns3/indexed-min-heap.h"
#include "ns3/max-min-solver.h"
#include "ns3/network-backend.h"

#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief Flow-level network: each message is a flow on its routed path, and the bandwidth of
 * every link is shared max-min fairly among the flows crossing it.
 *
 * An adapter between messages and the MaxMinSolver (which computes the rates, incrementally,
 * see there) and between rates and ns3::Simulator events: it keeps each flow's bytes left,
 * its transmission end in an IndexedMinHeap, and one simulator event at the earliest end.
 * Messages sent at one instant with the same path and size form one flow class (one solver
 * flow of weight w: they share links exactly as w separate flows would and end together),
 * delivered as w messages, in the order sent. Arrivals at one instant are batched into one
 * recomputation. Completions are simulator events at nanosecond resolution (flows finishing
 * within the same nanosecond complete together). A message costs its bytes at the fair-share
 * rate, then the path latency (link latencies plus the delay of every switch traversed). Link
 * capacities follow the topology's link bandwidths (faults included), read again whenever the
 * topology changes (a scheduled fault re-solves at its instant). A flow that cannot finish (its
 * link died under it, or its end lies beyond the simulator's clock, 2^63 ns) schedules no
 * event: if nothing else moves, Simulator::Run() returns with it undelivered.
 */
class FlowNetwork : public NetworkBackend
{
  public:
    /** \brief Register this type. \return the TypeId */
    static TypeId GetTypeId();

    FlowNetwork();
    ~FlowNetwork() override;

    void SetTopology(Ptr<Topology> topology) override;
    /** \return true: a stream's latency count multiplies its path latency */
    bool SupportsFluid() const override;
    /** \return true: links are reserved and reserved messages' progress recorded */
    bool SupportsReservations() const override;
    std::vector<std::pair<double, double>> TakeProgress(uint64_t message) override;

    /**
     * \brief Recomputes every rate now, after link factors changed during the run by other
     * means than a FaultSchedule (which does this itself). Paths of flows already in flight
     * are kept; a flow whose link died stalls at rate 0 until the factor is raised again.
     */
    void RefreshRates();

    /**
     * \return the current rate (bytes/s) of an in-flight message, 0 if not transmitting
     * (a scan of the flows in flight: for checks, not for every event)
     */
    double GetFlowRate(uint64_t messageId) const;
    /** \return the number of messages transmitting now */
    uint32_t GetActiveFlowCount() const;
    /** \return the number of flow classes (solver flows) transmitting now */
    uint32_t GetFlowClassCount() const;
    /**
     * \return messages in flight that cannot finish as things stand: at rate 0 (a dead link
     * under them) or ending beyond the simulator's clock
     */
    uint32_t GetStalledCount() const override;
    /** \return rate recomputations so far (each over one connected component) */
    uint64_t GetSolveCount() const;
    /** \return flow classes whose rates were recomputed, summed over all recomputations */
    uint64_t GetSolvedFlowCount() const;

  protected:
    void DoDispose() override;
    void DoSend(uint64_t id,
                uint32_t src,
                uint32_t dst,
                uint64_t bytes,
                const std::vector<uint32_t>& path,
                const DeliveryCallback& onDelivered) override;
    void DoGetStats(NetworkStats& stats) const override;
    /** Re-reads the changed capacities and re-solves the affected flows now. */
    void DoApplyFault(const std::vector<uint32_t>& links) override;
    /** \return whether a flow crosses \p link now */
    bool IsLinkBusy(uint32_t link) const override;
    std::vector<double> GetPendingBytes(const std::vector<uint32_t>& links) const override;
    LinkLoad DoGetLinkLoad(uint32_t link) const override;
    void DoAddLinkLoad(uint32_t link, const LinkLoad& load) override;

  private:
    /** No class of this instant matches. */
    static constexpr uint32_t kNoClass = UINT32_MAX;

    /** \brief A message of a flow class. */
    struct Member
    {
        uint64_t id = 0;           //!< message id
        DeliveryCallback callback; //!< delivery
    };

    /** \brief One transmitting flow class, indexed by its solver flow handle (56 bytes). */
    struct Transfer
    {
        double remaining = 0;  //!< bytes left per member at lastUpdate
        double lastUpdate = 0; //!< when remaining was last brought up to date, s
        double latency = 0;    //!< path latency, s
        uint64_t bytes = 0;    //!< message size (each member)
        Member first;          //!< the first message sent
        uint32_t others = 0;   //!< 1 + index in m_memberLists of the later ones (0: none)
        uint32_t log = 0;      //!< 1 + index in m_logs of its progress (reserved; 0: none)
    };

    /** \brief A message to start: sent now, or waiting for its connection (ordered). */
    struct Queued
    {
        uint64_t id = 0;            //!< message id
        uint64_t bytes = 0;         //!< payload
        std::vector<uint32_t> path; //!< its route, chosen at its send
        DeliveryCallback callback;  //!< delivery
        uint32_t latencies = 1;     //!< latency count
        uint64_t reservation = 0;   //!< reservation it runs under (0: none)
        double sentAt = 0;          //!< when it was sent, s
        bool logged = false;        //!< its progress is kept (TakeProgress) without one
    };

    /** \brief A slot of the table of this instant's classes. */
    struct ClassSlot
    {
        uint32_t flow = 0; //!< solver handle + 1 (0: empty)
        uint32_t hash = 0; //!< the class's hash (high half of ClassHash)
    };

    /** \brief Statistics of one link. */
    struct LinkUse
    {
        double bytes = 0;     //!< bytes carried
        double busyTime = 0;  //!< closed busy intervals, s
        double busySince = 0; //!< start of the open busy interval, s
    };

    /** \brief Closes this instant's flow classes, completes due flows, re-solves, schedules. */
    void Update();
    /**
     * \return the flow of this instant's class with \p path and \p bytes (\p hash their
     * ClassHash), or kNoClass
     */
    uint32_t FindClass(uint32_t hash, const std::vector<uint32_t>& path, uint64_t bytes) const;
    /** \brief Records \p flow as this instant's class of its path and size. */
    void OpenClass(uint32_t hash, uint32_t flow);
    /** \brief Puts \p flow in the class table (which has room). */
    void Insert(uint32_t hash, uint32_t flow);
    /** \brief Gives this instant's classes their weights and empties the class table. */
    void CloseClasses();
    /**
     * \brief Makes \p m a flow now (or a member of this instant's class of its path and size);
     * \p connection is its ordered connection (0: unordered). The caller asks for the solve.
     */
    void StartFlow(const Queued& m, uint64_t connection);
    /** \brief Recomputes rates and moves the transmission ends of the flows that changed. */
    void Solve(double now);
    /** \brief Removes a finished flow class and schedules its members' deliveries. */
    void Finish(uint32_t flow, double now);
    /** \brief Schedules Update() at the earliest pending completion. */
    void ScheduleNext();
    /**
     * \brief Schedules Update() now unless one is pending (after the events already queued for
     * this instant): arrivals and departures of one instant are solved once.
     */
    void RequestUpdate();
    /** \brief Gives the solver the topology's link bandwidths if the topology changed. */
    void SyncCapacities();
    /** \return the simulator time in seconds */
    static double Now();

    MaxMinSolver m_solver;                          //!< the rates
    IndexedMinHeap m_completions;                   //!< transmission ends, by solver handle
    std::vector<Transfer> m_transfers;              //!< per solver flow handle
    std::vector<std::vector<Member>> m_memberLists; //!< later members of classes of w > 1
    std::vector<uint32_t> m_freeMemberLists;        //!< reusable m_memberLists entries
    std::vector<ClassSlot> m_table;                 //!< this instant's classes (open addressing)
    std::vector<uint32_t> m_tableUsed;              //!< occupied slots of m_table
    std::vector<LinkUse> m_linkUse;                 //!< per directed link
    /** Progress of reserved flows in flight: (time s, bytes left) at each rate change. */
    std::vector<std::vector<std::pair<double, double>>> m_logs;
    std::vector<uint32_t> m_freeLogs; //!< reusable m_logs entries
    /** Progress of reserved messages transmitted, until TakeProgress. */
    std::unordered_map<uint64_t, std::vector<std::pair<double, double>>> m_doneLogs;
    /**
     * Connections with an ordered message transmitting (key: (src << 32 | dst) + 1), each
     * with the ordered messages waiting behind it, in send order.
     */
    std::unordered_map<uint64_t, std::vector<Queued>> m_connections;
    std::vector<uint32_t> m_due; //!< flows ending at the instant being updated
    /** Flows carrying an ordered message: solver handle -> its connection. */
    std::unordered_map<uint32_t, uint64_t> m_orderedFlows;
    uint64_t m_topologyVersion = 0; //!< Topology::GetVersion() of capacities
    uint32_t m_messages = 0;        //!< messages in the solver's classes
    EventId m_event;                //!< the next Update()
    double m_eventTime = -1;        //!< when m_event fires, ns
    bool m_updatePending = false;   //!< an Update() is scheduled for now
    bool m_flowClasses = true;      //!< merge identical messages (attribute)
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_FLOW_NETWORK_H
