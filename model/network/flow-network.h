/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_FLOW_NETWORK_H
#define RAPIDLLM_FLOW_NETWORK_H

#include "ns3/event-id.h"
#include "ns3/network-backend.h"

#include <cstdint>
#include <limits>
#include <unordered_map>
#include <vector>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief Per-link statistics of a FlowNetwork.
 */
struct LinkStats
{
    uint32_t link = 0;      //!< directed link id
    double bytes = 0;       //!< payload bytes carried
    double busyTimeS = 0;   //!< time with at least one flow on the link, seconds
    double utilization = 0; //!< bytes / (payload bandwidth x observed time)
};

/**
 * \ingroup rapid-llm
 * \brief Flow-level network: each message is a flow on its routed path, and the bandwidth of
 * every link is shared max-min fairly (progressive filling) among the flows crossing it.
 *
 * Rates are recomputed when flows arrive or complete, only for the connected component of
 * flows and links touched by the change (the incremental scheme of SimGrid's lmm solver,
 * Velho et al., TOMACS 2013); after departures only, flows slower than the slowest departed
 * one keep their rates exactly and are left out. Arrivals at one instant are batched into one
 * recomputation.
 * Completions are ns3::Simulator events (at nanosecond resolution: flows finishing within the
 * same nanosecond complete together). A message costs its bytes at the fair-share rate, then
 * the path latency (link latencies plus the delay of every switch traversed).
 */
class FlowNetwork : public NetworkBackend
{
  public:
    /** \brief Register this type. \return the TypeId */
    static TypeId GetTypeId();

    FlowNetwork();
    ~FlowNetwork() override;

    void SetTopology(Ptr<Topology> topology) override;
    uint64_t Send(uint32_t src,
                  uint32_t dst,
                  uint64_t bytes,
                  DeliveryCallback onDelivered) override;

    /**
     * \brief Recomputes every rate now, after link factors changed during the run (e.g. a
     * soft fault injected at some time). Paths of flows already in flight are kept; a flow
     * whose link died stalls at rate 0 until the factor is raised again.
     */
    void RefreshRates();

    /** \return the current rate (bytes/s) of an in-flight message, 0 if not transmitting */
    double GetFlowRate(uint64_t messageId) const;
    /** \return the number of flows transmitting now */
    uint32_t GetActiveFlowCount() const;
    /** \return rate recomputations so far (each over one connected component) */
    uint64_t GetSolveCount() const;
    /** \return flows whose rates were recomputed, summed over all recomputations */
    uint64_t GetSolvedFlowCount() const;

    /** \return a link's statistics so far (utilization over the time since the first Send) */
    LinkStats GetLinkStats(uint32_t link) const;
    /**
     * \return the \p count links that carried the most bytes, most loaded first (ties by
     * link id)
     */
    std::vector<LinkStats> GetMostLoadedLinks(uint32_t count) const;

  protected:
    void DoDispose() override;

  private:
    /** \brief One transmitting message. */
    struct Flow
    {
        uint64_t id = 0;             //!< message id
        double latency = 0;          //!< path latency, seconds
        uint64_t bytes = 0;          //!< message size
        std::vector<uint32_t> links; //!< path
        std::vector<uint32_t> pos;   //!< index of this flow in each path link's list
        DeliveryCallback callback;   //!< delivery
    };

    /** Path links kept inline in HotFlow (longer paths are read from Flow::links). */
    static constexpr uint32_t kInlineLinks = 9;

    /**
     * \brief What the solver touches per flow, in one cache line: bytes left, rate and the
     * path (inline up to kInlineLinks links).
     */
    struct alignas(64) HotFlow
    {
        double remaining = 0;           //!< bytes left at lastUpdate
        double rate = 0;                //!< current rate, bytes/s
        double lastUpdate = 0;          //!< when remaining was last brought up to date
        uint32_t count = 0;             //!< path length (0: slot free)
        uint32_t links[kInlineLinks]{}; //!< the path's first links
    };

    /** \return the path of flow f */
    const uint32_t*
    PathOf(uint32_t f) const
    {
        return m_hot[f].count <= kInlineLinks ? m_hot[f].links : m_flows[f].links.data();
    }

    /** \brief Per-link solver state and statistics. */
    struct LinkState
    {
        std::vector<std::pair<uint32_t, uint32_t>> flows; //!< (flow index, index in its path)
        double capacity = 0;                              //!< payload bandwidth, bytes/s
        double remaining = 0; //!< progressive filling: capacity not yet given out
        uint32_t unfixed = 0; //!< progressive filling: flows without a rate yet
        uint32_t stamp = 0;   //!< component search mark
        double bytes = 0;     //!< statistics: bytes carried
        double busyTime = 0;  //!< statistics: closed busy intervals
        double busySince = 0; //!< statistics: start of the open busy interval
    };

    /** \brief A flow's scheduled transmission end (one entry per flow in an indexed heap). */
    struct Completion
    {
        double time;   //!< transmission end, seconds
        uint32_t flow; //!< flow index
    };

    /** Position of a flow that has no entry in the completion heap. */
    static constexpr uint32_t kNotQueued = UINT32_MAX;

    /** \return heap order: earlier end first, ties by flow index (deterministic) */
    static bool Before(const Completion& a, const Completion& b);
    /** \brief Puts c at heap index i and records its position. */
    void HeapPlace(uint32_t i, Completion c);
    /** \brief Restores the heap upwards from index i. */
    void HeapSiftUp(uint32_t i);
    /** \brief Restores the heap downwards from index i. */
    void HeapSiftDown(uint32_t i);
    /** \brief Inserts or moves a flow's completion time. */
    void HeapSet(uint32_t flow, double time);
    /** \brief Removes a flow's completion, if queued. */
    void HeapErase(uint32_t flow);

    /** \brief Completes due flows, recomputes dirty components, schedules the next event. */
    void Update();
    /** \brief Marks a link whose flow set changed. */
    void MarkDirty(uint32_t link);
    /** \brief Recomputes the rates of every flow connected to a dirty link. */
    void Solve(double now);
    /** \brief Removes a finished flow and schedules its delivery. */
    void Finish(uint32_t flow, double now);
    /** \brief Schedules Update() at the earliest pending completion. */
    void ScheduleNext();
    /** \return the simulator time in seconds */
    static double Now();

    std::vector<Flow> m_flows;             //!< flow pool
    std::vector<HotFlow> m_hot;            //!< hot per-flow solver state (same index as m_flows)
    std::vector<uint32_t> m_mark;          //!< per flow: component / fixed marks (see Solve)
    std::vector<uint32_t> m_freeFlows;     //!< reusable pool slots
    std::vector<LinkState> m_links;        //!< per directed link
    std::vector<uint32_t> m_dirty;         //!< links whose flow set changed
    std::vector<Completion> m_completions; //!< indexed min-heap of transmission ends
    std::vector<uint32_t> m_heapPos;       //!< per flow: index in m_completions
    std::unordered_map<uint64_t, uint32_t> m_byId; //!< message id -> flow (lookups only)
    EventId m_event;                               //!< the next Update()
    double m_eventTime = -1;                       //!< when m_event fires
    bool m_fullSolve = false; //!< flows arrived or capacities changed since the last solve
    double m_minRemovedRate =
        std::numeric_limits<double>::infinity(); //!< slowest flow that left since the last solve
    bool m_updatePending = false;                //!< an Update() is scheduled for now
    uint32_t m_stamp = 0;                        //!< component search generation
    uint32_t m_active = 0;                       //!< flows transmitting
    uint64_t m_nextId = 0;                       //!< next message id
    uint64_t m_solves = 0;                       //!< recomputations
    uint64_t m_solvedFlows = 0;                  //!< flows recomputed
    double m_firstSend = -1;                     //!< statistics window start
    std::vector<uint32_t> m_componentFlows;      //!< scratch
    std::vector<uint32_t> m_componentLinks;      //!< scratch
    std::vector<std::pair<double, uint32_t>> m_heap; //!< scratch: progressive-filling heap
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_FLOW_NETWORK_H
