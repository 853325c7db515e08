/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_SCHEDULE_BUILDER_H
#define RAPIDLLM_SCHEDULE_BUILDER_H

#include "collective-op.h"
#include "collective-schedule.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace ns3 {
namespace rapidllm {

class CollectiveAlgorithm;
struct CollectiveCall;
class CollectivePlanner;
class NetworkView;

/**
 * \ingroup rapid-llm
 * \brief One stream of a fluid phase: \p src sends \p bytes to \p dst, as one flow that
 * shares its links max-min with everything else in flight.
 */
struct FluidStream
{
    uint32_t src = 0;   //!< sending rank (schedule rank)
    uint32_t dst = 0;   //!< receiving rank
    uint64_t bytes = 0; //!< what it carries over the whole phase
};

/**
 * \ingroup rapid-llm
 * \brief What a CollectiveAlgorithm writes its messages with: appends messages and local steps
 * to a CollectiveSchedule, remembers per rank the step its next phase waits for, pipelines a
 * phase in pieces, and tells where the ranks sit on the network.
 *
 * Ranks are the schedule's (indices 0..n-1 into the request's group). An algorithm reads
 * GetReady(r) before a rank's first message and SetReady(r, step) after its last, so phases
 * written one after the other (a reduce-scatter, then an all-gather; a dimension, then the
 * next) chain without knowing each other.
 *
 * A fluid builder (IsFluid()) writes a collective's fluid form instead (issue 11): each phase
 * of the algorithm as its concurrent streams (FluidPhase), so a ring all-reduce among n ranks
 * is n streams instead of 2n(n-1) messages. Under a message floor (SetMessageFloor) a stream
 * of several steps is one ordered message, and pipelined (Chunked) the pieces of a pair follow
 * each other on its connection as their steps do. Without one, pipelining works as for
 * messages, stream by stream: a pipelined stream is its head (one message's worth: bytes /
 * latency count, one latency), then the rest (one latency) beside a chain of the other latencies
 * and heads' times that takes no bandwidth, and the q-th stream of piece j waits for the head of
 * the q-th stream of piece j-1, as the q-th message of piece j waits for that of piece j-1. So the
 * pieces of one phase share its links as their messages do, each piece takes the longer of its
 * bytes and its steps' latencies (pieces in flight hide each other's latencies), and the pipeline's
 * fill and drain across phases are those of the messages.
 */
class ScheduleBuilder
{
  public:
    /** A step index, or kNone for "nothing to wait for". */
    using Step = int64_t;
    /** No step. */
    static constexpr Step kNone = -1;

    /**
     * \param schedule the schedule to append to (its rank count is the group size)
     * \param planner where the per-dimension algorithms and the network view come from
     * \param endpoints the endpoint of each rank
     * \param reduceBytesPerSecond local reduction rate (0: reductions are free)
     * \param fluid write the fluid form (FluidPhase) instead of messages
     */
    ScheduleBuilder(CollectiveSchedule& schedule,
                    const CollectivePlanner& planner,
                    const std::vector<uint32_t>& endpoints,
                    double reduceBytesPerSecond,
                    bool fluid = false);

    /** \return whether this builder writes fluid forms (AddFluid) rather than messages */
    bool IsFluid() const;

    /**
     * \brief Tells a fluid builder that the planner bounds the collective below by its
     * messages' time on the idle network (CollectivePlanner::Build). Its streams of several
     * steps then carry their bytes as one ordered message on their pair's connection with one
     * latency, the latencies and queueing being that bound's; without it they keep their
     * latency terms (a stream's L latencies after its last byte; pipelined, the longer-of
     * form, see the class).
     */
    void SetMessageFloor(bool floor);

    /** \return the step \p rank waits for before its next phase (kNone: nothing) */
    Step GetReady(uint32_t rank) const;
    /** \brief Sets the step \p rank waits for before its next phase. */
    void SetReady(uint32_t rank, Step step);

    /**
     * \brief Adds a message after an optional step.
     * \param src sending rank \param dst receiving rank \param bytes size
     * \param after the step it waits for (kNone: none)
     * \return its step
     */
    uint32_t Send(uint32_t src, uint32_t dst, uint64_t bytes, Step after);
    /**
     * \brief Adds a message after several steps.
     * \return its step
     */
    uint32_t Send(uint32_t src, uint32_t dst, uint64_t bytes, DepList deps);
    /**
     * \brief A local reduction of \p bytes on \p rank after \p after, at the reduction rate.
     * \return the reduction's step, or \p after when reductions are free or \p bytes is 0
     */
    Step Reduce(uint32_t rank, uint64_t bytes, Step after);
    /**
     * \brief One step that is done when all of \p steps are: the step itself if there is one,
     * a zero-time local step of \p rank if several, kNone if none.
     */
    Step Join(uint32_t rank, const std::vector<Step>& steps);
    /** \return the time a local reduction of \p bytes takes (0 when reductions are free) */
    double ReduceSeconds(uint64_t bytes) const;

    /**
     * \brief Writes one phase of a fluid collective among \p members: the streams start
     * once every member is ready, each carries its bytes at the rate the network gives it, and
     * the phase is over for every member when every stream has been delivered, \p latencies
     * path latencies after its last byte (the latency term of the messages it stands for),
     * plus \p localS of local work (reductions on the critical path). Pipelined (inside
     * Chunked), a stream's latency term is split (see the class). Nothing is written when
     * \p streams is empty.
     * Without \p barrier, a stream starts when its source is ready and a member is ready
     * after the streams into it (as a ring pass, whose every step waits for what the rank
     * received): ranks then advance unevenly where the network is uneven, as their messages do.
     * \param members the ranks taking part (each sends or receives at least one stream)
     * \param streams the concurrent streams \param latencies the latency count (>= 1)
     * \param localS local seconds after the streams
     * \param barrier whether the phase starts and ends for all members at once
     */
    void FluidPhase(const std::vector<uint32_t>& members,
                    const std::vector<FluidStream>& streams,
                    uint32_t latencies,
                    double localS = 0,
                    bool barrier = true);

    /**
     * \brief The messages \p algorithm writes for \p call, in a schedule of their own (every
     * rank ready at once): what a default fluid form is derived from.
     * \param algorithm the algorithm \param call the call
     * \return the message schedule (the group's ranks, only \p call's members used)
     */
    CollectiveSchedule Messages(const CollectiveAlgorithm& algorithm,
                                const CollectiveCall& call) const;

    /**
     * \brief Ends a fluid collective: every rank of the group gets a zero-time step after
     * its last phase, so that each rank's part ends when the collective does (the fluid
     * form's streams are shared by all ranks, so no rank is done before the last stream).
     */
    void FinishFluid();

    /** \brief Makes \p step also wait for the earlier \p dep. */
    void AddDependency(uint32_t step, uint32_t dep);
    /** \return the dependency list of one optional step */
    static DepList Deps(Step step);

    /**
     * \brief Runs \p phase \p chunks times on nearly equal pieces of \p bytes, all pieces
     * starting from the same readiness; the q-th message of piece j waits for the q-th message
     * of piece j-1 (one message in flight per position: pipelining). Afterwards each rank is
     * ready when all its pieces are. chunks <= 1 runs \p phase once on \p bytes.
     * \param chunks the pieces \param bytes the size \param phase writes one piece's messages
     * \param pieceBytes pieces of this size and a shorter last one, where \p chunks of them
     *        hold \p bytes (0: nearly equal pieces)
     */
    void Chunked(uint32_t chunks,
                 uint64_t bytes,
                 const std::function<void(uint64_t)>& phase,
                 uint64_t pieceBytes = 0);

    /** \return the schedule being written */
    CollectiveSchedule& GetSchedule();
    /** \return the group size */
    uint32_t GetRankCount() const;
    /** \return the network as the system layer sees it */
    const NetworkView& GetView() const;
    /** \return the endpoint of \p rank */
    uint32_t GetEndpoint(uint32_t rank) const;
    /** \return the endpoints of \p ranks, in their order */
    std::vector<uint32_t> GetEndpoints(const std::vector<uint32_t>& ranks) const;
    /**
     * \brief The algorithm dimension \p d runs \p op with on \p ranks ranks: its configured
     * one (the `collective` field, else the kind's default) where that can run it, else ring.
     */
    const CollectiveAlgorithm& GetDimensionAlgorithm(uint32_t d,
                                                     CollectiveOp op,
                                                     uint32_t ranks) const;
    /** \return the name of the algorithm GetDimensionAlgorithm gives (what really runs) */
    const std::string& GetDimensionAlgorithmName(uint32_t d, CollectiveOp op, uint32_t ranks) const;

    /** \return piece \p i of \p s split into \p k nearly equal pieces (the first s % k one larger)
     */
    static uint64_t Split(uint64_t s, uint64_t k, uint64_t i);

  private:
    /**
     * \brief Without a message floor: where a phase's streams' path latencies differ, the
     * mean over its streams of one step (a latency and a message's share of the stream's
     * bytes at the pair's rate alone), which the chain of its \p latencies steps takes
     * (its messages pass the streams in turn, e.g. a ring's blocks cross every edge); 0 where
     * the latencies are alike or the planner has no pair timing (each stream then pays its own).
     * \param streams the phase's streams \param latencies the phase's latency count
     */
    double ChainStepS(const std::vector<FluidStream>& streams, uint32_t latencies) const;
    /**
     * \brief The payload rate of the slowest network dimension two ranks' endpoints differ in
     * (no faults): what one message between them moves at alone. 0 for the same endpoint.
     */
    double NominalRate(uint32_t src, uint32_t dst) const;

    CollectiveSchedule& m_schedule;           //!< the graph being written
    const CollectivePlanner& m_planner;       //!< dimension algorithms and view
    const std::vector<uint32_t>& m_endpoints; //!< rank -> endpoint
    double m_reduceRate;                      //!< bytes per second, 0 = free
    std::vector<Step> m_ready;                //!< per rank: what its next phase waits for
    bool m_fluid;                             //!< writing fluid forms
    uint32_t m_fluidChunks = 1;               //!< pipeline pieces of the phases now
    bool m_floor = false;                     //!< fluid, pipelined: under a message floor
    bool m_unpaired = false;                  //!< this piece wrote in-order streams (m_floor)
    std::vector<uint32_t> m_pipelined;        //!< fluid, pipelined: this piece's stream heads
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_SCHEDULE_BUILDER_H
