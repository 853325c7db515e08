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
 * Arrivals at one instant are batched into one recomputation. Completions are simulator
 * events at nanosecond resolution (flows finishing within the same nanosecond complete
 * together). A message costs its bytes at the fair-share rate, then the path latency (link
 * latencies plus the delay of every switch traversed). Link capacities follow the topology's
 * link bandwidths (faults included), read again whenever the topology changes.
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

    /**
     * \brief Recomputes every rate now, after link factors changed during the run (e.g. a
     * soft fault injected at some time). Paths of flows already in flight are kept; a flow
     * whose link died stalls at rate 0 until the factor is raised again.
     */
    void RefreshRates();

    /**
     * \return the current rate (bytes/s) of an in-flight message, 0 if not transmitting
     * (a scan of the flows in flight: for checks, not for every event)
     */
    double GetFlowRate(uint64_t messageId) const;
    /** \return the number of flows transmitting now */
    uint32_t GetActiveFlowCount() const;
    /** \return rate recomputations so far (each over one connected component) */
    uint64_t GetSolveCount() const;
    /** \return flows whose rates were recomputed, summed over all recomputations */
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

  private:
    /** \brief One transmitting message, indexed by its solver flow handle. */
    struct Transfer
    {
        double remaining = 0;      //!< bytes left at lastUpdate
        double lastUpdate = 0;     //!< when remaining was last brought up to date, s
        double latency = 0;        //!< path latency, s
        uint64_t bytes = 0;        //!< message size
        uint64_t id = 0;           //!< message id
        DeliveryCallback callback; //!< delivery
    };

    /** \brief Statistics of one link. */
    struct LinkUse
    {
        double bytes = 0;     //!< bytes carried
        double busyTime = 0;  //!< closed busy intervals, s
        double busySince = 0; //!< start of the open busy interval, s
    };

    /** \brief Completes due flows, recomputes dirty components, schedules the next event. */
    void Update();
    /** \brief Recomputes rates and moves the transmission ends of the flows that changed. */
    void Solve(double now);
    /** \brief Removes a finished flow and schedules its delivery. */
    void Finish(uint32_t flow, double now);
    /** \brief Schedules Update() at the earliest pending completion. */
    void ScheduleNext();
    /** \brief Schedules Update() now unless one is pending. */
    void RequestUpdate();
    /** \brief Gives the solver the topology's link bandwidths if the topology changed. */
    void SyncCapacities();
    /** \return the simulator time in seconds */
    static double Now();

    MaxMinSolver m_solver;             //!< the rates
    IndexedMinHeap m_completions;      //!< transmission ends, by solver flow handle
    std::vector<Transfer> m_transfers; //!< per solver flow handle
    std::vector<LinkUse> m_linkUse;    //!< per directed link
    uint64_t m_topologyVersion = 0;    //!< Topology::GetVersion() the capacities reflect
    EventId m_event;                   //!< the next Update()
    double m_eventTime = -1;           //!< when m_event fires, ns
    bool m_updatePending = false;      //!< an Update() is scheduled for now
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_FLOW_NETWORK_H
