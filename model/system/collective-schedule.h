/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_COLLECTIVE_SCHEDULE_H
#define RAPIDLLM_COLLECTIVE_SCHEDULE_H

#include "ns3/dep-list.h"
#include "pair-slowdown.h"
#include "replay-error.h"

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief One node of a collective's dependency graph: a message between two ranks of the
 * group, or a local step of one rank (a reduction, or a zero-time join).
 */
struct CollectiveStep
{
    bool isSend = true;     //!< true: a message; false: a local step
    bool ordered = true;    //!< message: carried in order on its pair's connection, after
                            //!< the pair's earlier ordered messages have left (see
                            //!< NetworkBackend::Send); a fluid stream is not
    uint32_t src = 0;       //!< sending rank (group index); local step: the rank
    uint32_t dst = 0;       //!< receiving rank (group index)
    uint32_t latencies = 1; //!< message: path latencies its delivery costs (a fluid stream's
                            //!< latency term; see NetworkBackend::Send)
    uint64_t bytes = 0;     //!< message bytes
    double durationS = 0;   //!< local step: its duration, seconds
    bool serial = false;    //!< local step: a reduction, run on its rank's one reducer: one
                            //!< at a time, in the order they become ready (AddReduction)
    DepList deps;           //!< earlier steps that must be done first
};

/**
 * \ingroup rapid-llm
 * \brief A collective whose schedule would hold more steps than the simulator does: refused
 * before it is built, its message saying how many and what to change.
 */
class CollectiveTooLarge : public ReplayError
{
  public:
    /**
     * \param message the refusal, without the replay's prefix
     * \param fluidHint what it adds for a collective simulated message by message (fewer
     *        steps as a fluid one), appended to \p message
     */
    CollectiveTooLarge(const std::string& message, const std::string& fluidHint);
    /**
     * \param fluid whether the collective was asked for as a fluid one already (the hint to
     *        ask for one is left out)
     * \return the refusal without the replay's prefix (for the option that asked for it)
     */
    std::string GetMessage(bool fluid = false) const;

  private:
    std::string m_message;   //!< the refusal
    std::string m_fluidHint; //!< its advice to simulate the collective as a fluid one
};

/**
 * \ingroup rapid-llm
 * \brief A collective as a dependency graph of messages and local steps among the ranks of a
 * group (indices 0..n-1), independent of any network.
 *
 * The algorithms (ring, direct, halving-doubling, double binary tree, hierarchical) produce
 * it; the CollectiveEngine executes it on a NetworkBackend. Because the graph is built above
 * the backend interface, the flow-level and packet-level networks run the very same messages.
 * A message is done when delivered; a step starts when all its dependencies are done.
 */
class CollectiveSchedule
{
  public:
    /** \param ranks the group size */
    explicit CollectiveSchedule(uint32_t ranks = 0);

    /**
     * \brief Adds a message (or, with \p latencies other than 1, a fluid stream).
     * \param src sending rank \param dst receiving rank \param bytes size
     * \param deps steps that must be done first
     * \param latencies path latencies its delivery costs after its last byte
     * \param ordered carried in order on the pair's connection (a message); false for a fluid
     *        stream, which shares the links at once with everything in flight
     * \return the step index
     */
    uint32_t AddSend(uint32_t src,
                     uint32_t dst,
                     uint64_t bytes,
                     DepList deps,
                     uint32_t latencies = 1,
                     bool ordered = true);
    /**
     * \brief Adds a local step (reduction compute, or a zero-time join of several steps).
     * \param rank the rank \param durationS its duration \param deps steps that must be done first
     * \return the step index
     */
    uint32_t AddLocal(uint32_t rank, double durationS, DepList deps);
    /**
     * \brief Adds a local reduction: a local step that waits for \p rank's earlier reductions
     * (a rank reduces at one rate, so pieces that arrive together queue for it).
     * \param rank the rank \param durationS its duration at the rank's reduction rate
     * \param deps steps that must be done first \return the step index
     */
    uint32_t AddReduction(uint32_t rank, double durationS, DepList deps);
    /**
     * \brief Throws ReplayError, with the estimate, if a collective over \p ranks ranks whose
     * algorithm counts \p messages messages per piece in \p pieces pieces would exceed what a
     * schedule holds; called before building, so a too-large one is refused at once.
     */
    static void CheckPlannedSize(uint64_t messages, uint32_t pieces, uint32_t ranks);
    /** \brief Adds a dependency to an existing step (dep < step). */
    void AddDependency(uint32_t step, uint32_t dep);

    /** \return the group size */
    uint32_t GetRankCount() const;
    /** \return the steps in a topological order (dependencies first) */
    const std::vector<CollectiveStep>& GetSteps() const;
    /**
     * \brief Frees every step's dependency list (GetSteps()[i].deps becomes empty). The
     * engine calls it once it has indexed the dependencies, to save memory on big schedules.
     */
    void ReleaseDependencies();

    /**
     * \brief The steps that wait for each step, in compressed rows: those of step i are
     * \p dependents[\p start[i] .. \p start[i + 1]), in schedule order. Needs the dependency
     * lists.
     * \param start filled with GetSteps().size() + 1 offsets \param dependents filled
     */
    void GetDependents(std::vector<uint32_t>& start, std::vector<uint32_t>& dependents) const;

    /**
     * \brief A message's payload rate (bytes/s) and path latency (s) between two ranks of the
     * group alone on the network.
     */
    using PairTiming = std::function<std::pair<double, double>(uint32_t src, uint32_t dst)>;
    /**
     * \brief What the schedule takes on an otherwise idle network: each message at its pair's
     * rate, delivered its latencies after its last byte; ordered messages one after the other
     * on their pair's connection in the order they are sent (those ready in one instant in
     * schedule order, as the CollectiveEngine issues them), as the flow backend carries them;
     * local steps for their duration; in whole nanoseconds, as the simulator runs them.
     * Messages of different pairs that share a link are not slowed (a lower bound where they
     * do). Needs the dependency lists.
     * \param timing each pair's rate and latency (asked once per pair)
     * \return the seconds from the start to the last step's end
     */
    double GetIdleSeconds(const PairTiming& timing) const;
    /** Per pair: how its streams went beside other traffic, or null (at its rate) */
    using PairPace = std::function<const PairLoad*(uint32_t src, uint32_t dst)>;
    /**
     * \brief GetIdleSeconds beside the traffic that slowed a fluid form's streams: the
     * messages of a pair that \p pace knows go as PairSlowdown says.
     * \param timing each pair's rate and latency alone \param pace each pair's streams
     * \return the seconds from the start to the last step's end
     */
    double GetIdleSeconds(const PairTiming& timing, const PairPace& pace) const;
    /**
     * \brief GetIdleSeconds over steps already indexed (a compiled schedule walked again and
     * again without its dependency lists).
     * \param steps the steps \param waiting per step, its dependency count
     * \param first \param dependents the dependents index (GetDependents)
     * \param timing \param pace as GetIdleSeconds
     * \return the seconds from the start to the last step's end
     */
    static double Walk(const std::vector<CollectiveStep>& steps,
                       const std::vector<uint32_t>& waiting,
                       const std::vector<uint32_t>& first,
                       const std::vector<uint32_t>& dependents,
                       const PairTiming& timing,
                       const PairPace& pace);

    /** \return the number of messages */
    uint64_t GetSendCount() const;
    /** \return bytes of all messages */
    uint64_t GetTotalBytes() const;

  private:
    /** Throws std::logic_error naming \p what unless \p rank is one of the group's */
    void CheckRank(uint32_t rank, const char* what) const;
    /** Throws std::logic_error unless every one of \p deps is a step already added */
    void CheckDeps(const DepList& deps) const;

    uint32_t m_ranks;                    //!< group size
    std::vector<CollectiveStep> m_steps; //!< the graph
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_COLLECTIVE_SCHEDULE_H
