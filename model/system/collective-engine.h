/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_COLLECTIVE_ENGINE_H
#define RAPIDLLM_COLLECTIVE_ENGINE_H

#include "ns3/callback.h"
#include "ns3/collective-algorithms.h"
#include "ns3/collective-schedule.h"
#include "ns3/event-id.h"
#include "ns3/network-backend.h"
#include "ns3/object.h"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <queue>
#include <string>
#include <unordered_map>
#include <vector>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief Executes collectives on a NetworkBackend: issues each message of a
 * CollectiveSchedule when its dependencies are done, runs local steps as simulator delays,
 * and reports when each rank's part and the whole collective finish.
 *
 * It sits above the backend interface, so the flow and packet networks receive the same
 * messages in the same order. Several collectives may run at once (e.g. from a trace
 * replayer), each identified by the id Start() returns.
 *
 * The Granularity attribute says how a request runs (issue 11): "message" (the default: every
 * message of the algorithm), "fluid" (the algorithm's fluid form, its concurrent streams, on a
 * backend that SupportsFluid(); messages elsewhere, as on the packet backend) or "auto" (the
 * same as fluid: the fluid form wherever the backend carries it).
 *
 * With the Reservations attribute, a request whose links carry nothing else when it starts
 * (NetworkBackend::Reserve: a run-time proof, not a static one) runs as a timed reservation:
 * the first such run of a plan on its endpoints is simulated and recorded (every step's end,
 * every rank's end and each message's progress); later ones send nothing and call back at the
 * recorded times, exact because nothing else crosses their links. If a transfer of someone
 * else reaches a reserved link (or a fault changes one), the run turns into real messages at
 * that instant: the steps done by then are done, the messages in flight are sent with the
 * bytes they had left, and the run goes on as any other, sharing its links with the intruder.
 */
class CollectiveEngine : public Object
{
  public:
    /** \brief Register this type. \return the TypeId */
    static TypeId GetTypeId();

    /** Called with (collective id, group index, endpoint) when a rank's part is done. */
    typedef Callback<void, uint64_t, uint32_t, uint32_t> RankDoneCallback;
    /** Called with the collective id when every rank is done. */
    typedef Callback<void, uint64_t> DoneCallback;

    CollectiveEngine();
    ~CollectiveEngine() override;

    /** \param backend the network that carries the messages */
    void SetBackend(Ptr<NetworkBackend> backend);
    /** \return the network */
    Ptr<NetworkBackend> GetBackend() const;

    /**
     * \brief Starts a schedule now (pass it with std::move to avoid a copy).
     * \param schedule the graph (ranks are indices into \p endpoints)
     * \param endpoints endpoint of each rank
     * \param onRankDone per rank (may be null)
     * \param onDone at the end (may be null)
     * \param flow its name for routing (CollectiveRequest::flow; unset: the message ids)
     * \return the collective id
     */
    uint64_t Start(CollectiveSchedule schedule,
                   const std::vector<uint32_t>& endpoints,
                   RankDoneCallback onRankDone,
                   DoneCallback onDone,
                   std::optional<uint64_t> flow = std::nullopt);

    /**
     * \brief Plans a request over the backend's network view (GetPlanner()) and starts it.
     * \param request what to run \param onRankDone per rank \param onDone at the end
     * \return the collective id
     */
    uint64_t Start(const CollectiveRequest& request,
                   RankDoneCallback onRankDone,
                   DoneCallback onDone);

    /**
     * \brief Starts a plan built for \p request (GetPlanner().Build(request), with
     * request.fluid = UsesFluid()) as Start(request) would: its message floor included, the
     * plan kept for later requests. For a caller that reads the plan first (its algorithm, its
     * messages).
     * \param request what was planned \param built its plan (pass it with std::move)
     * \param onRankDone per rank \param onDone at the end
     * \return the collective id
     */
    uint64_t Start(const CollectiveRequest& request,
                   CollectivePlan built,
                   RankDoneCallback onRankDone,
                   DoneCallback onDone);

    /**
     * \brief The planner over the backend's network view, made at first use (which validates
     * every dimension's `collective` algorithm). Throws ReplayError without a backend.
     * \return the planner
     */
    const CollectivePlanner& GetPlanner();

    /**
     * \param request a collective \return the SMs each member's kernels hold while it runs
     * (CollectivePlanner::GetSmCount)
     */
    uint32_t GetSmCount(const CollectiveRequest& request);

    /**
     * \param request a communicator (endpoints) and a message (bytes) \return the SMs a send
     * or receive of it holds (CollectivePlanner::GetP2pSmCount)
     */
    uint32_t GetP2pSmCount(const CollectiveRequest& request);

    /** \return collectives still running */
    uint32_t GetRunningCount() const;
    /** \return collectives run as timed reservations so far (without the network) */
    uint64_t GetTimedCount() const;
    /** \return timed reservations turned into real messages by an intruder or a fault */
    uint64_t GetMaterializedCount() const;

    /**
     * \return whether Start(request) builds fluid forms: Granularity fluid or auto and a
     * backend that SupportsFluid()
     */
    bool UsesFluid() const;

    /**
     * \brief Checks a granularity name; throws SpecError naming \p field and the allowed
     * values (message, fluid, auto) otherwise.
     * \param name the name \param field the option or attribute it came from
     */
    static void CheckGranularity(const std::string& name, const std::string& field);

  protected:
    void DoDispose() override;

  private:
    /**
     * \brief A schedule made ready to run: its dependency lists indexed (CSR), each step's
     * dependency count and each rank's step count, shared by every run of it.
     */
    struct Compiled
    {
        CollectiveSchedule schedule;          //!< the graph (dependency lists released)
        std::vector<uint32_t> waiting;        //!< per step: dependencies
        std::vector<uint32_t> dependentStart; //!< CSR offsets of dependents
        std::vector<uint32_t> dependents;     //!< CSR dependents
        std::vector<uint32_t> rankLeft;       //!< per rank: steps touching it
        int64_t floorStep = -1;               //!< fluid: its message floor's step (-1: none)
        CollectiveRequest messageRequest;     //!< with a floor: the request as messages
        /** with a floor: its messages as planned (kept while the engine's budget allows) */
        mutable std::shared_ptr<CollectiveSchedule> messageSchedule;
        /** with a floor: its messages compiled, at its first slowed run (EndFloor) */
        mutable std::shared_ptr<const Compiled> messagePlan;
    };

    /** \brief A fluid run's streams between two endpoints, as they went (the message floor). */
    struct PairStreams
    {
        PairLoad load;               //!< its transfers
        int64_t lastEndNs = 0;       //!< its last transfer's last byte
        double rate = 0;             //!< the path's rate alone, bytes/s
        double latencyS = 0;         //!< the path latency
        std::vector<uint32_t> route; //!< its links, once a transfer was slowed
        std::vector<double> busyS;   //!< their busy seconds when its last slowed one arrived
        double othersSinceS = 0;     //!< others on them from its last byte to then
    };

    /**
     * \brief A plan's run alone on its links, as recorded (offsets from its start): what a
     * timed reservation replays.
     */
    struct Timing
    {
        int64_t durationNs = 0;           //!< the end of the last step
        std::vector<int64_t> stepDoneNs;  //!< per step: when it was done
        std::vector<uint32_t> rankEvent;  //!< per rank: its index in eventNs
        std::vector<int64_t> eventNs;     //!< distinct rank end times, ascending
        std::vector<uint32_t> eventRanks; //!< ranks by end time (CSR by eventStart)
        std::vector<uint32_t> eventStart; //!< CSR offsets into eventRanks
        std::vector<int64_t> rankDoneNs;  //!< per rank: when it was done (recording)
        /** Per step: the order it was issued in (the order its message joined its connection). */
        std::vector<uint32_t> issued;
        /** Per message step: (offset s, bytes left) from its send to its transmission end. */
        std::vector<std::vector<std::pair<double, double>>> progress;
        std::vector<uint32_t> links;                //!< the links it had alone
        std::vector<NetworkBackend::LinkLoad> load; //!< their load (link statistics)
    };

    /** \return the key of \p request's plan in m_plans (its form: \p fluid) */
    std::vector<uint64_t> PlanKey(const CollectiveRequest& request, bool fluid) const;

    /** \brief Hashes a plan key (m_plans): its words mixed in order. */
    struct PlanKeyHash
    {
        /** \return the hash of \p key */
        std::size_t operator()(const std::vector<uint64_t>& key) const;
    };

    /** \brief A cached plan and what reservations know of it on the current topology. */
    struct Entry
    {
        std::shared_ptr<const Compiled> plan; //!< the compiled plan
        uint64_t version = UINT64_MAX;        //!< topology version of links and timing
        std::vector<uint32_t> links;          //!< its reservable links (empty: none)
        std::shared_ptr<const Timing> timing; //!< its run alone, once recorded
    };

    /** \brief Execution state of one collective. */
    struct Run
    {
        uint64_t id = 0;                      //!< collective id
        std::shared_ptr<const Compiled> plan; //!< the graph
        std::vector<uint32_t> endpoints;      //!< rank -> endpoint
        std::vector<uint32_t> waiting;        //!< per step: unfinished dependencies
        std::vector<uint32_t> rankLeft;       //!< per rank: unfinished steps touching it
        uint64_t left = 0;                    //!< unfinished steps
        RankDoneCallback onRankDone;          //!< per rank
        DoneCallback onDone;                  //!< at the end
        uint64_t reservation = 0;             //!< its links' reservation (0: none)
        std::optional<uint64_t> flow;         //!< its request's flow (CollectiveRequest::flow)
        bool reserved = false;                //!< sent messages under a reservation
        int64_t startNs = 0;                  //!< simulation time of the start, ns
        std::shared_ptr<Entry> entry;         //!< its cache entry (reservations)
        std::shared_ptr<Timing> recording;    //!< being recorded (alone so far)
        std::shared_ptr<const Timing> timed;  //!< replayed without the network
        uint64_t version = 0;                 //!< topology version at the start (recording)
        uint32_t nextEvent = 0;               //!< timed: rank end times already called back
        std::vector<EventId> events;          //!< timed: its rank end events
        EventId endEvent;                     //!< timed: its end
        /** With a message floor: per (source, destination) endpoint pair, its streams */
        std::map<std::pair<uint32_t, uint32_t>, PairStreams> streams;
        std::vector<int64_t> issuedNs; //!< with a floor: per step, when it was issued (-1: not)
        uint64_t sendsLeft = 0;        //!< send steps not done
        bool floorDue = false;         //!< the floor's idle time has passed
        bool floorEnding = false;      //!< the floor's end is decided
        std::vector<int64_t> reducerFreeNs; //!< per rank: when its reducer is free, ns (or empty)
    };

    /**
     * \brief A fluid run's message floor has lasted its messages' time on the idle network:
     * it ends once the streams have too (EndFloor).
     */
    void FloorDue(const std::shared_ptr<Run>& run);
    /**
     * \brief Ends a fluid run's message floor, now or later: where other traffic slowed its
     * streams, at the end of its messages' walk with their bytes slowed as the streams' were
     * (WalkMessages, PairSlowdown), see doc/network-model.md,
     * "Message floor".
     */
    void EndFloor(const std::shared_ptr<Run>& run);
    /**
     * \brief The link seconds other traffic took from a fluid run's streams, its pieces'
     * seconds cut to what the run's own sharing of its links explains (EndFloor).
     * \return 0 if nothing slowed them
     */
    double TakeOthersSeconds(Run& run);
    /** \return the seconds a fluid run's messages take walked beside what its streams met */
    double WalkMessages(const Run& run);
    /** \brief Notes when a fluid run's stream started (the message floor). */
    static void SetIssued(Run& run, uint32_t step, int64_t issuedNs);
    /**
     * \brief Records a fluid run's stream delivered at \p deliveredNs (the message floor), in
     * one piece per rate it went at when its \p progress ((time, bytes left) at each change of
     * rate, as TakeProgress gives it) is known.
     */
    void RecordStream(const std::shared_ptr<Run>& run,
                      uint32_t step,
                      int64_t deliveredNs,
                      const std::vector<std::pair<double, double>>& progress = {});

    /** \return \p schedule compiled (CSR of dependents, counts) */
    static std::shared_ptr<Compiled> Compile(CollectiveSchedule schedule);
    /**
     * \brief Starts a compiled plan (see Start); with a \p reservation, its messages are sent
     * under it and the run is recorded for \p entry while the reservation holds.
     */
    uint64_t Launch(std::shared_ptr<const Compiled> plan,
                    const std::vector<uint32_t>& endpoints,
                    std::optional<uint64_t> flow,
                    RankDoneCallback onRankDone,
                    DoneCallback onDone,
                    uint64_t reservation = 0,
                    std::shared_ptr<Entry> entry = nullptr);
    /**
     * \return the flow id step \p step of \p run is routed with: derived from the run's
     * flow and the step, or unset (the message id) when the run has none
     */
    static std::optional<uint64_t> StepFlow(const Run& run, uint32_t step);
    /**
     * \brief A step's dependencies are done: it is issued at the end of this instant, with
     * every step that became ready in it, in (run, step) order (IssueReady).
     */
    void Ready(const std::shared_ptr<Run>& run, uint32_t step);
    /**
     * \brief Issues the steps that became ready in this instant in (run, step) order, so that
     * a connection takes messages ready at the same time in the order the algorithm wrote them
     * (its program order), not in the order the network's events happened to fire.
     */
    void IssueReady();
    /** \brief Issues a step whose dependencies are done. */
    void Issue(const std::shared_ptr<Run>& run, uint32_t step);
    /** \brief Marks a step done and issues what it unblocks. */
    void Complete(const std::shared_ptr<Run>& run, uint32_t step);
    /** \brief A message of some run was delivered (one callback for all messages). */
    void Delivered(uint64_t message);
    /**
     * \brief Runs \p entry's plan: as a timed reservation or a recorded run when its links
     * are free (Reservations), else as Launch does.
     */
    uint64_t LaunchEntry(const std::shared_ptr<Entry>& entry,
                         const std::vector<uint32_t>& endpoints,
                         std::optional<uint64_t> flow,
                         RankDoneCallback onRankDone,
                         DoneCallback onDone);
    /** \brief Timed run \p id: calls back the ranks of its next end time. */
    void TimedRanks(uint64_t id);
    /** \brief Timed run \p id: its end. */
    void TimedEnd(uint64_t id);
    /** \brief A reservation was broken: a timed run materializes, a recording stops. */
    void Broken(uint64_t reservation);
    /** \brief Turns timed run \p run into real messages as things stand now. */
    void Materialize(const std::shared_ptr<Run>& run);
    /** \brief Stores a recorded run's timing in its entry. */
    void Finalize(const std::shared_ptr<Run>& run);

    Ptr<NetworkBackend> m_backend;                //!< the network
    uint64_t m_keptMessageSteps = 0;              //!< steps of the plans' messages kept (EndFloor)
    std::unique_ptr<CollectivePlanner> m_planner; //!< requests -> schedules, made at first use
    std::unordered_map<uint64_t, std::shared_ptr<Run>> m_runs; //!< running collectives
    /** Messages in flight: message id -> (run id, step). */
    std::unordered_map<uint64_t, std::pair<uint64_t, uint32_t>> m_messages;
    NetworkBackend::DeliveryCallback m_delivered; //!< Delivered, made once
    /** Steps ready in this instant, (run id, step), smallest first (IssueReady). */
    std::priority_queue<std::pair<uint64_t, uint32_t>,
                        std::vector<std::pair<uint64_t, uint32_t>>,
                        std::greater<std::pair<uint64_t, uint32_t>>>
        m_readySteps;
    bool m_issuing = false; //!< IssueReady is scheduled or running
    EventId m_issueEvent;   //!< the scheduled IssueReady
    uint64_t m_nextId = 0;  //!< next collective id
    /**
     * Plans of requests made before, by request (op, size, algorithm, pieces, root, reduction
     * rate, granularity, endpoints): a replay issues the same few collectives on the same groups
     * many times. Only plans of at most kCachedSteps steps are kept, kCachedBudget in all.
     */
    std::unordered_map<std::vector<uint64_t>, std::shared_ptr<Entry>, PlanKeyHash> m_plans;
    std::size_t m_cachedSteps = 0;                     //!< steps of the plans in m_plans
    std::string m_granularity = "message";             //!< attribute Granularity
    mutable std::string m_checkedGranularity;          //!< m_granularity as last checked
    bool m_reservations = false;                       //!< attribute Reservations
    std::unordered_map<uint64_t, uint64_t> m_reserved; //!< reservation -> run id
    NetworkBackend::BrokenCallback m_broken;           //!< Broken, made once
    uint64_t m_timedCount = 0;                         //!< timed runs started
    uint64_t m_materialized = 0;                       //!< timed runs materialized
    uint32_t m_issued = 0;                             //!< steps issued by recorded runs
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_COLLECTIVE_ENGINE_H
