/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_MAX_MIN_SOLVER_H
#define RAPIDLLM_MAX_MIN_SOLVER_H

#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief Weighted max-min fair sharing of link capacities among flows (progressive filling),
 * recomputed incrementally: a component of its own, knowing nothing of topologies, messages
 * or simulated time (the role of SimGrid's kernel/lmm).
 *
 * Links are numbered 0..n-1 and have a capacity; a flow is a list of links and a weight w.
 * A flow of weight w stands for w identical flows on the same path: it receives w times the
 * unit share of its bottleneck and counts w times against every link it crosses. GetRate()
 * is the rate of each of those w members (the flow's total is w x GetRate()).
 *
 * Adding or removing flows and changing capacities only marks links dirty; Solve() then
 * recomputes the rates of the connected component(s) of flows and links reachable from the
 * dirty links (Velho et al., TOMACS 2013), nothing else. When flows only left since the last
 * Solve(), every flow slower than the slowest departed one keeps its rate exactly and is left
 * out (the frozen-flows rule, see Solve()). Flow handles are small integers, reused after
 * RemoveFlow (last freed, first reused), so callers can keep per-flow data in plain arrays.
 */
class MaxMinSolver
{
  public:
    /** \brief A flow whose rate Solve() recomputed, with its rate before. */
    struct RateChange
    {
        uint32_t flow;  //!< the flow handle
        double oldRate; //!< its per-member rate before this Solve() (0 for a new flow)
    };

    MaxMinSolver();

    /**
     * \brief Drops every flow and sizes the link set.
     * \param links the number of links (all with capacity 0 until SetCapacity)
     */
    void Reset(uint32_t links);

    /** \return the number of links */
    uint32_t GetLinkCount() const;

    /**
     * \brief Sets a link's capacity; if it changed and flows cross the link, the next Solve()
     * recomputes their component in full.
     * \param link the link \param capacity bytes per second (>= 0; 0 stalls its flows)
     */
    void SetCapacity(uint32_t link, double capacity);

    /** \return a link's capacity */
    double GetCapacity(uint32_t link) const;

    /**
     * \brief Adds a flow (rate 0 until the next Solve()).
     * \param links the path: at least one link, each at most once
     * \param weight the number of identical member flows it stands for (>= 1)
     * \return the flow's handle
     */
    uint32_t AddFlow(const std::vector<uint32_t>& links, uint32_t weight = 1);

    /**
     * \brief Changes a flow's weight (members joined or left); the next Solve() recomputes its
     * component in full.
     * \param flow the handle \param weight the new weight (>= 1)
     */
    void SetWeight(uint32_t flow, uint32_t weight);

    /**
     * \brief Removes a flow; its handle may be returned by a later AddFlow.
     * \param flow the handle
     */
    void RemoveFlow(uint32_t flow);

    /**
     * \brief Makes the next Solve() recompute every flow (e.g. after capacities changed by
     * means the solver cannot see).
     */
    void Invalidate();

    /** \return whether a Solve() would recompute anything */
    bool NeedsSolve() const;

    /**
     * \brief Recomputes the rates of every flow connected to a dirty link.
     *
     * Progressive filling: repeatedly the link with the smallest unit share (capacity not yet
     * given out / weight of the flows without a rate) gives that share to its flows. After
     * departures only, flows slower than the slowest departed flow are frozen: a departed
     * flow of rate r never crossed a link that was a bottleneck below level r, and without it
     * the links it crossed only get larger shares, so every filling step below r happens as
     * before. Frozen flows keep their rates, which are taken off their links' capacities.
     *
     * \return every flow whose rate was recomputed, with its rate before (new rate:
     *         GetRate()); valid until the next call. Empty if nothing was dirty.
     */
    const std::vector<RateChange>& Solve();

    /** \return the rate of each member of a flow, bytes/s (0 before its first Solve()) */
    double
    GetRate(uint32_t flow) const
    {
        return m_slots[flow].rate;
    }

    /** \return a flow's weight (0 if the handle is free) */
    uint32_t
    GetWeight(uint32_t flow) const
    {
        return m_tags[flow].weight;
    }

    /** \return whether a handle names a flow (not a free slot) */
    bool IsActive(uint32_t flow) const;

    /** \return a flow's path length */
    uint32_t
    GetPathLength(uint32_t flow) const
    {
        return m_slots[flow].count;
    }

    /** \return a flow's path (GetPathLength() links) */
    const uint32_t*
    GetPath(uint32_t flow) const
    {
        const Slot& s = m_slots[flow];
        return s.count <= kInlineLinks ? s.links : m_long[s.overflow].data();
    }

    /** \return the number of flows */
    uint32_t GetFlowCount() const;
    /** \return one more than the largest handle in use so far (size for per-flow arrays) */
    uint32_t GetHandleBound() const;
    /** \return the number of flows crossing a link */
    uint32_t GetLinkFlowCount(uint32_t link) const;
    /**
     * \return the flows crossing a link, each as (flow, the link's index in its path), in no
     * particular order (valid until the next AddFlow or RemoveFlow)
     */
    const std::vector<std::pair<uint32_t, uint32_t>>& GetLinkFlows(uint32_t link) const;
    /** \return Solve() calls that recomputed something */
    uint64_t GetSolveCount() const;
    /** \return flows recomputed, summed over every Solve() */
    uint64_t GetSolvedFlowCount() const;

  private:
    /** Path links (and their positions) kept inline in a Slot; longer paths live in m_long. */
    static constexpr uint32_t kInlineLinks = 6;

    /** \brief What filling touches per flow, in one cache line. */
    struct alignas(64) Slot
    {
        double rate = 0;              //!< per-member rate, bytes/s
        uint32_t count = 0;           //!< path length
        uint32_t overflow = 0;        //!< index in m_long when count > kInlineLinks
        uint32_t links[kInlineLinks]; //!< the path (count <= kInlineLinks)
        uint32_t pos[kInlineLinks];   //!< index of this flow's entry in each link's list
    };

    /** \brief Per flow: the component mark (see Solve) and the weight, 8 bytes. */
    struct Tag
    {
        uint32_t mark = 0;   //!< >= base: in the component; base + 1: rate given
        uint32_t weight = 0; //!< member flows (0: free slot)
    };

    /** \brief One link's flows and filling state. */
    struct Link
    {
        std::vector<std::pair<uint32_t, uint32_t>> flows; //!< (flow, index in its path)
        double capacity = 0;                              //!< bytes/s
        double remaining = 0;                             //!< filling: capacity not yet given out
        uint64_t unfixed = 0; //!< filling: weight of the flows without a rate yet
        uint32_t stamp = 0;   //!< component search mark
    };

    /** \return the positions of a flow's entries in its links' lists */
    uint32_t*
    PosOf(uint32_t flow)
    {
        Slot& s = m_slots[flow];
        return s.count <= kInlineLinks ? s.pos : m_long[s.overflow].data() + s.count;
    }

    std::vector<Slot> m_slots;                 //!< per flow handle
    std::vector<Tag> m_tags;                   //!< per flow handle
    std::vector<uint32_t> m_free;              //!< free handles (reused last first)
    std::vector<std::vector<uint32_t>> m_long; //!< long paths: links then positions
    std::vector<uint32_t> m_freeLong;          //!< free m_long entries
    std::vector<Link> m_links;                 //!< per link
    std::vector<uint32_t> m_dirty;             //!< links whose flow set or capacity changed
    bool m_fullSolve = false;                  //!< flows arrived or capacities changed
    double m_minRemovedRate = std::numeric_limits<double>::infinity(); //!< slowest departure
    uint32_t m_stamp = 0;                            //!< component search generation
    uint32_t m_active = 0;                           //!< flows
    uint64_t m_solves = 0;                           //!< Solve() calls that did something
    uint64_t m_solvedFlows = 0;                      //!< flows recomputed
    std::vector<RateChange> m_changes;               //!< scratch: the component's flows
    std::vector<uint32_t> m_componentLinks;          //!< scratch: the component's links
    std::vector<std::pair<double, uint32_t>> m_heap; //!< scratch: (share, link) filling heap
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_MAX_MIN_SOLVER_H
