/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_TRACE_REPLAYER_H
#define RAPIDLLM_TRACE_REPLAYER_H

#include "collective-engine.h"
#include "critical-path.h"
#include "idle-event.h"
#include "ns3/event-id.h"
#include "ns3/network-backend.h"
#include "ns3/nstime.h"
#include "ns3/object.h"
#include "ns3/traced-callback.h"
#include "operator-event.h"
#include "replay-job.h"
#include "symmetry-plan.h"

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <queue>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief Timing of one replayed rank.
 */
struct RankTiming
{
    double finishS = 0;      //!< when its last node finished
    double computeS = 0;     //!< time its compute stream was busy
    double bubbleS = 0;      //!< compute stream idle, waiting for a pipeline receive
    double exposedCommS = 0; //!< compute stream idle, waiting for other communication
    double hostWaitS = 0;    //!< compute stream idle with a kernel ready that the host had not
                             //!< issued yet (host dispatch: launches, step syncs, the engine)
    double smSharingS = 0;   //!< of computeS: kernel time added by SMs collectives held
    /**
     * Of exposedCommS: the compute stream's idle time that each communication operator ended
     * (the last dependency of the kernel that ran next, or the rank's last operator), by the
     * operator's label (StageGraph::LabelOf of its name: its micro-batches and layers
     * together). The rest (communication the host issued after it was ready) is not attributed.
     */
    std::map<std::string, double> exposedByOp;
};

/**
 * \ingroup rapid-llm
 * \brief What a replay found: the step time and where each rank's time went.
 */
struct ReplayResult
{
    double stepTimeS = 0;          //!< the last rank's finish time
    uint32_t criticalRank = 0;     //!< the rank that finished last
    std::vector<RankTiming> ranks; //!< per rank
    uint64_t collectives = 0;      //!< collectives run
    uint64_t messages = 0;         //!< point-to-point messages delivered
    uint32_t simulatedRanks = 0;   //!< ranks replayed (the others mirror them by symmetry)
    uint64_t events = 0;           //!< simulator events executed from the start to the end
    bool tensorTimed = false;      //!< tensor-parallel collectives timed once per shape
    CriticalPath criticalPath;     //!< what the step's time was spent on, end to end
};

/**
 * \ingroup rapid-llm
 * \brief Replays per-rank Chakra execution graphs on ns3::Simulator over a network backend.
 *
 * Concurrency rules (as NCCL and CUDA streams behave, each configurable by attribute):
 * - a node starts once all its dependencies are done;
 * - each rank has ComputeStreams compute streams; ready kernels start in program order;
 * - collectives run beside compute on their own stream; the members of a group meet in the
 *   order each issues its collectives on that group (the i-th on a group matches the i-th of
 *   every other member); with SerializeGroups a group runs one collective at a time, like one
 *   NCCL communicator;
 * - a send and a receive match on (source, destination, tag) in posting order; the transfer
 *   starts when both are posted (rendezvous, as NCCL's point-to-point kernels need both sides)
 *   and both complete at delivery.
 * A job that cannot finish (a receive without a send, a group member that never arrives, a
 * dependency cycle) ends with a ReplayError naming the rank and node, never a hang.
 *
 * With the Symmetry attribute, a workload job is replayed with the SymmetryPlan its ReplayJob
 * makes for the network: one rank stands for its symmetric copies, whose traffic runs as ghost
 * load. Tensor-parallel collectives are timed once per group, kind and size where that is exact
 * (see SymmetryPlan), with or without Symmetry, unless TraceAllMessages asks for every
 * collective of every rank and copy on the network (so that the backend's MessageDelivered and
 * link statistics see all the traffic). The rapid-llm-replay suite checks that reduced and full
 * replays agree.
 *
 * Collectives run with the CollectiveAlgorithm attribute: "auto" (the planner's policy) or any
 * registered CollectiveAlgorithm name, at the Granularity attribute's granularity: "auto" (the
 * default: the algorithms' fluid forms on a backend that carries them, as the flow backend;
 * messages on the packet backend), "fluid" (the same) or "message" (every message). The trace
 * sources OperatorStart and OperatorEnd report each operator of a simulated rank as an
 * OperatorEvent.
 *
 * A watchdog turns a runaway into a ReplayError naming the cause: a replay whose simulated
 * time passes MaxSimulatedTime (default 10^9 s, about 32 years: beyond any step a job can
 * have, as 4 billion sequences of Llama-3 8B inference on one GPU take 8 x 10^7 s, and below
 * the 2^63 ns, 292 years, where the simulator's clock would wrap) or that executes more than
 * MaxEvents simulator events (default 10^10, several hundred times the events of the largest
 * benchmarked job) stops there, with the rank and node it was waiting on.
 * Both are checked by one watchdog event whose period doubles from 1 us to 10 ms of simulated
 * time while other events run (and keeps doubling while they do not, up to the time limit,
 * where it always fires), and the event count also on every 4,096th node completion. The
 * watchdog never changes the order of other events, nor keeps the simulator running once
 * nothing else is queued (a trace that cannot finish is still reported as such).
 */
class TraceReplayer : public Object
{
  public:
    /** \brief Register this type. \return the TypeId */
    static TypeId GetTypeId();

    TraceReplayer();
    ~TraceReplayer() override;

    /** \param backend the network the communication runs on (its view holds the ranks) */
    void SetBackend(Ptr<NetworkBackend> backend);

    /**
     * \brief GPUs that compute slower than the others (a throttled or faulty GPU, a straggler):
     * their kernels take 1 / speed as long; their host, links and collectives are unchanged.
     * Any slow GPU turns the symmetry reduction off (the copies would differ).
     * \param speeds per rank (GPU) index, the share of its compute speed left, in
     *        [kMinSpeed, 1]
     */
    void SetComputeSpeeds(const std::map<uint32_t, double>& speeds);

    /**
     * \brief GPUs whose kernels slow unevenly (a degraded HBM, a power cap on one GPU): each
     * kernel of a listed rank takes its factor times its trace's duration, on top of
     * SetComputeSpeeds. Like a slow GPU, any listed rank turns the symmetry reduction off.
     * \param factors per rank (GPU) index, one factor per node of its graph (by node index;
     *        a node that is no kernel ignores its own), each finite and at least kMinSpeed
     */
    void SetKernelFactors(const std::map<uint32_t, std::vector<double>>& factors);

    /**
     * The smallest compute speed: a millionth, as a link's smallest bandwidth factor
     * (LinkFaultSpec::kMinFactor); slower, a step's simulated time would outrun the watchdog.
     */
    static constexpr double kMinSpeed = 1e-6;

    /**
     * \brief Replays \p job from the simulator's current time; runs the simulator to the end.
     * \param job the graphs (must outlive the call)
     * \return the timing; throws ReplayError if the job cannot finish, SpecError if the
     * network's or the CollectiveAlgorithm attribute's algorithm is unknown
     */
    ReplayResult Replay(const ReplayJob& job);

    /**
     * \brief Starts replaying \p job now without running the simulator, for callers that run it
     * themselves (e.g. cross-validation); Collect() afterwards.
     * \param job the graphs (must outlive the replay)
     * \param onDone called when every rank has finished (may be null)
     */
    void Start(const ReplayJob& job, std::function<void()> onDone = nullptr);

    /**
     * \brief The (source, destination) endpoint pairs a replay of \p job sends messages
     * between: every point-to-point transfer and every message of every collective as the
     * collective engine plans it (message form), for every rank, symmetric copies included.
     * Give them to NetworkBackend::Prepare and Start() from its ready callback: a backend
     * with connections (the packet one) then opens and warms them before the step is timed,
     * as a steady-state training step finds NCCL's connections open (NCCL connects a
     * communicator's peers at its first use, not at every step), and the flow network, which
     * has no connections, charges no set-up either. Call after SetBackend().
     * \param job the graphs
     * \return the pairs, sorted, each once; throws SpecError if the CollectiveAlgorithm
     * attribute's algorithm is unknown
     */
    std::vector<NetworkBackend::EndpointPair> GetPairs(const ReplayJob& job) const;

    /**
     * \brief The timing of the replay Start() began, once the simulator has run; throws
     * ReplayError if the job could not finish.
     * \return the timing
     */
    ReplayResult Collect();

    /**
     * \brief Progress of the replay Start() began, for progress reports and monitors.
     * \return operators (trace nodes) of the simulated ranks not finished yet (0 before
     *         Start() and once done)
     */
    uint64_t GetOperatorsLeft() const;
    /** \return operators of the simulated ranks in the replay Start() began */
    uint64_t GetOperatorsTotal() const;
    /** \return ranks of the replay Start() began (0 before it, and after Collect()) */
    uint32_t GetRankCount() const;
    /**
     * \param rank a rank of the replay Start() began
     * \return the simulated rank that stands for it (itself without the symmetry reduction)
     */
    uint32_t GetRepresentative(uint32_t rank) const;

    /**
     * Signature of the OperatorStart and OperatorEnd trace sources.
     * \param event the operator: rank, node, name, kind, time, duration, FLOPs, bytes, group
     */
    typedef void (*OperatorTracedCallback)(const OperatorEvent& event);

    /**
     * Signature of the ComputeIdle trace source.
     * \param event the idle interval: rank, start, end, what it is charged to
     */
    typedef void (*IdleTracedCallback)(const IdleEvent& event);

  protected:
    void DoDispose() override;

  private:
    /**
     * \brief Refuses, before allocating it, a replay whose per-node state for its simulated
     * ranks (with the graphs) would take more than the host-memory budget (WorkloadHostBudget).
     * \param job the job, with m_plan set; throws ReplayError
     */
    void CheckStateSize(const ReplayJob& job) const;
    /** A collective instance: the i-th collective of a group. */
    struct Meeting
    {
        uint32_t group = 0;                 //!< group id
        std::vector<uint32_t> nodeOfMember; //!< node index per member, UINT32_MAX = not yet
        uint32_t joined = 0;                //!< members arrived
        uint32_t firstRank = 0;             //!< the first member to arrive (for errors)
        CollectiveType type = CollectiveType::ALL_REDUCE; //!< what
        uint64_t bytes = 0;                               //!< size
    };

    /** Per-rank replay state. */
    struct RankState
    {
        const ExecutionTrace* graph = nullptr; //!< its graph
        std::vector<uint32_t> waiting;         //!< per node: unfinished dependencies
        std::vector<uint8_t> status;           //!< per node: 0 idle, 1 posted, 2 done
        /** Ready compute nodes: (index, cause, the node whose completion released it). */
        std::priority_queue<std::tuple<uint32_t, uint8_t, uint32_t>,
                            std::vector<std::tuple<uint32_t, uint8_t, uint32_t>>,
                            std::greater<>>
            ready;
        uint32_t busyStreams = 0; //!< compute streams running a kernel
        double idleSince = 0;     //!< when the streams last went idle
        int64_t busySinceNs = 0;  //!< when a stream last became busy
        int64_t computeNs = 0;    //!< busy time so far, in the simulator's integer nanoseconds (a
                                  //!< sum the same however the busy periods are split)
        uint32_t left = 0;        //!< unfinished nodes
        RankTiming timing;        //!< result
        const uint8_t* kinds = nullptr;     //!< per node: its OperatorKind
        int64_t finishNs = 0;               //!< when its last node so far finished
        uint32_t lastDone = UINT32_MAX;     //!< the node that finished at finishNs
        uint32_t lastKernel = UINT32_MAX;   //!< the kernel that ended last (CriticalPathRecorder)
        std::vector<double> exposedByLabel; //!< RankTiming::exposedByOp by label id
        /** A communication node posted while the compute streams were idle (ChargeIdle). */
        struct Posted
        {
            double at;     //!< when it was posted
            uint8_t cause; //!< what released it (a receive or communication)
            uint32_t by;   //!< the node whose completion released it
        };

        std::unordered_map<uint32_t, Posted> posted; //!< by node
        /** Posted communication nodes with their first child (see ChainKernels). */
        std::vector<std::pair<uint32_t, uint32_t>> inFlight;
        // The host thread that issues the rank's nodes in program order (TraceNode::hostNs,
        // TraceNode::hostSync); unused when the trace has no host costs.
        bool host = false;              //!< the trace has host costs
        std::vector<int64_t> issueNs;   //!< per node: when the host issued it (-1: not yet)
        std::vector<double> readyAt;    //!< per kernel: when its dependencies were done
        uint32_t hostNext = 0;          //!< the next node the host issues
        int64_t hostClockNs = 0;        //!< when the host is free
        uint32_t hostWait = UINT32_MAX; //!< the node the host waits for (UINT32_MAX: none)
        int64_t wakeNs = -1;            //!< a StartCompute already scheduled for this time
        /** Ready communication nodes whose issue time is not known yet. */
        std::vector<std::pair<uint32_t, uint8_t>> held;
        uint32_t dispatching = 0; //!< communication nodes issued at a later time (DispatchIssued)
        bool releasing = false;   //!< CompleteAt is releasing children (kernels start after)
        /** A posted collective's kernels, holding SMs (SmCount). */
        struct SmHold
        {
            uint32_t node;  //!< the collective, send or receive
            uint32_t group; //!< its group (one kernel per group runs at a time: a send and a
                            //!< receive posted together share one)
            uint32_t sms;   //!< SMs it holds
        };

        std::vector<SmHold> smHolds; //!< posted communication holding SMs, in posting order
        /** A running kernel whose time follows the SMs held (SmCount). */
        struct Kernel
        {
            uint32_t node;   //!< the kernel
            EventId done;    //!< its ComputeDone
            int64_t startNs; //!< when it started
            int64_t lastNs;  //!< when its rate last changed
            double leftNs;   //!< its work left, in ns on every SM
            double factor;   //!< its time per unit of work now (SmFactor)
        };

        std::vector<Kernel> running; //!< kernels running with an sm_scaling share
    };

    /** Lets the host of \p rank issue nodes until it must wait (a sync node or the end). */
    void AdvanceHost(uint32_t rank, int64_t nowNs);
    /** MakeReady for a node the host has issued (\p by: the node that released it). */
    void DispatchReady(uint32_t rank, uint32_t node, uint8_t cause, uint32_t by = UINT32_MAX);
    /** DispatchReady at the time the host issued a communication node (scheduled for it). */
    void DispatchIssued(uint32_t rank, uint32_t node, uint8_t cause);

    void MakeReady(uint32_t rank, uint32_t node, uint8_t cause, uint32_t by = UINT32_MAX);
    /**
     * \brief Charges the compute streams' idle time from \p s.idleSince to \p until, which
     * ended when \p by completed (\p cause its kind), to what it waited for: a pipeline
     * receive's wait is bubble, a communication operator's wait goes to its label. A
     * communication operator is charged only from when it was posted: the idle time before
     * that went to what released it (a receive, another collective), so that a collective
     * issued after the activations it follows (ZeRO-3's parameter gather behind a pipeline
     * receive) is not charged for the wait on the other stage.
     */
    void ChargeIdle(uint32_t rank, double until, uint8_t cause, uint32_t by);
    /**
     * \brief Fires ComputeIdle for \p rank's streams idle from \p from to \p to (seconds), charged
     * to \p cause (for communication, to the operator of label id \p label, kAbsent: none).
     */
    void NoteIdle(uint32_t rank, double from, double to, IdleCause cause, uint32_t label);
    void Complete(uint32_t rank, uint32_t node);
    /** Completes a node at \p nowNs (Complete() at the simulator's time). */
    void CompleteAt(uint32_t rank, uint32_t node, int64_t nowNs);
    void StartCompute(uint32_t rank);
    /**
     * \brief Runs the kernels that follow \p node on the rank's stream within the current
     * event while nothing else can reach the rank before they start: \p node's children are
     * all kernels, and the kernel that would start next comes before every node a posted
     * communication could release (a lower index, so no release could take its turn). Each
     * such kernel completes at its own end time; the last one's end is left to ComputeDone.
     * \param rank the rank \param[in,out] node the running kernel; on return, the last one
     * \param firstNs the running kernel's time (KernelNs)
     * \return nanoseconds from now to the end of the last kernel
     */
    int64_t ChainKernels(uint32_t rank, uint32_t& node, int64_t firstNs);
    /**
     * \return nanoseconds kernel \p node of \p rank takes if it starts now: its duration, grown
     * where the rank's collectives hold SMs (SmCount, ExecutionTrace::GetSmScaling)
     */
    int64_t KernelNs(uint32_t rank, uint32_t node) const;
    /**
     * \return how much longer kernel \p node of \p rank takes with the SMs its rank's
     * collectives hold now: 1 + sm_scaling (SMs / SMs left - 1)
     */
    double SmFactor(uint32_t rank, uint32_t node) const;
    /** Moves the end of \p rank's running kernels to the SMs now held (a collective came or went).
     */
    void Rescale(uint32_t rank);
    /** Notes that a communication node of \p rank is posted (it may release its children). */
    void NotePosted(uint32_t rank, uint32_t node);
    void ComputeDone(uint32_t rank, uint32_t node);
    void JoinCollective(uint32_t rank, uint32_t node);
    void LaunchMeeting(uint64_t key);
    void CollectiveRankDone(uint64_t collective, uint32_t member, uint32_t endpoint);
    void CollectiveDone(uint64_t collective);
    /** A collective timed without the network ends: every member, then the whole. */
    void TimedDone(uint64_t collective);
    /** A posted send or receive: the simulated rank that posted it, its node, its peer. */
    struct PostedMessage
    {
        uint32_t rank; //!< the poster
        uint32_t node; //!< its send or receive node
        uint32_t peer; //!< the rank it sends to or receives from
    };

    void PostPointToPoint(uint32_t rank, uint32_t node);
    /**
     * Holds the SMs posted communication \p node of \p rank takes on \p group (its trace's
     * sm_count, else the collective algorithm's; none without SmCount or on a group of one)
     * until it completes.
     */
    void HoldSms(uint32_t rank, uint32_t node, uint32_t group);
    /**
     * \brief Sends a matched message \p send.rank -> \p send.peer on the network (and its
     * copies' ghosts); its delivery completes the send and \p recv's node (on \p send.peer,
     * or on the simulated rank standing for it when that peer is folded).
     */
    void StartTransfer(const PostedMessage& send, const PostedMessage& recv, uint64_t bytes);
    /**
     * \return the flow id of the message sent by \p rank's send operator \p node: a name that
     * does not depend on when it is sent, so that a multipath policy routes it alike on every
     * backend (NetworkBackend::Send)
     */
    static uint64_t SendFlow(uint32_t rank, uint32_t node);
    void TransferDone(uint64_t message);
    /** A ghost copy's message arrived: nothing waits for it. */
    void GhostDelivered(uint64_t message);
    /** \return the event of node \p node of \p rank, now (duration as at its start) */
    OperatorEvent MakeEvent(uint32_t rank, uint32_t node) const;
    /** Notes that a node starts: its start time (for OperatorEnd) and OperatorStart. */
    void OperatorStarted(uint32_t rank, uint32_t node);
    /** Fires OperatorEnd for a node that ends now. */
    void OperatorEnded(uint32_t rank, uint32_t node);
    /** What joins need of a group, computed at its first join. */
    struct GroupIndex
    {
        std::size_t simulated = 0; //!< members the replay simulates (joins a meeting waits for)
        std::unordered_map<uint32_t, uint32_t> position; //!< large groups: rank -> index
    };

    /** \return the join index of \p group */
    GroupIndex& IndexOf(uint32_t group);
    /**
     * \return communication node \p node's group as rank \p rank's (ReplayError if the
     * communicator groups do not define it)
     */
    uint32_t GroupOf(uint32_t rank, uint32_t node) const;
    /** \return the members of \p group (every rank for kWorldGroup) */
    const std::vector<uint32_t>& MembersOf(uint32_t group);
    std::string Describe(uint32_t rank, uint32_t node) const;
    /** \return why the unfinished replay cannot finish ("the trace cannot finish: ..."): messages
     * a dead link holds (NetworkBackend::GetStalledCount), else what each rank waits for */
    std::string StuckReason() const;
    /** \return "; first waiting: <node>" for the first rank with work left, or "" */
    std::string FirstWaiting() const;
    /** Arms the watchdog at the start of a replay. */
    void ArmWatchdog();
    /** Stops the watchdog (the replay finished). */
    void DisarmWatchdog();
    /** The watchdog's check of the event count and the time. \param periodNs since the last */
    void WatchdogTick(int64_t periodNs);
    /** Schedules the next check \p periodNs from now (at the latest at the time limit). */
    void ScheduleTick(int64_t periodNs);
    /** Stops the simulator with \p cause (reported by Collect()). \param cause what ran away */
    void Trip(const std::string& cause);
    /** \return the simulator events executed since the replay started */
    uint64_t EventsSinceStart() const;

    Ptr<NetworkBackend> m_backend;       //!< network
    Ptr<CollectiveEngine> m_engine;      //!< collectives over the network
    const ReplayJob* m_job = nullptr;    //!< job being replayed
    std::vector<RankState> m_ranks;      //!< per rank
    double m_start = 0;                  //!< replay start time
    uint64_t m_left = 0;                 //!< unfinished nodes over all simulated ranks
    uint64_t m_total = 0;                //!< nodes over all simulated ranks
    std::function<void()> m_onDone;      //!< called when m_left reaches 0
    uint32_t m_streams = 1;              //!< attribute ComputeStreams
    uint32_t m_smCount = 0;              //!< attribute SmCount
    bool m_serializeGroups = true;       //!< attribute SerializeGroups
    std::string m_algorithm = "auto";    //!< attribute CollectiveAlgorithm
    std::string m_granularity = "auto";  //!< attribute Granularity
    bool m_traceAll = false;             //!< attribute TraceAllMessages
    bool m_reservations = true;          //!< attribute Reservations
    bool m_symmetry = false;             //!< attribute Symmetry
    std::map<uint32_t, double> m_speeds; //!< SetComputeSpeeds: rank -> compute speed left
    std::vector<double> m_slowdown;      //!< per rank: kernel time factor (empty: all 1)
    std::map<uint32_t, std::vector<double>> m_kernelFactors; //!< SetKernelFactors
    /** per rank once started with slow GPUs: its kernel factors (null: all 1) */
    std::vector<const std::vector<double>*> m_factorsOf;
    bool m_traceOperators = false; //!< OperatorStart or OperatorEnd has sinks
    bool m_chainKernels = false;   //!< run chains of kernels within one event
    Time m_maxSimTime;             //!< attribute MaxSimulatedTime
    uint64_t m_maxEvents = 0;      //!< attribute MaxEvents
    uint64_t m_eventsAtStart = 0;  //!< simulator event count when the replay started
    uint64_t m_events = 0;         //!< events from the start to the last completion
    uint32_t m_sinceCheck = 0;     //!< node completions since the last event-count check
    int64_t m_deadlineNs = 0;      //!< the watchdog's simulated-time limit, ns
    uint64_t m_tickEvents = 0;     //!< events since the start at the last check
    EventId m_tick;                //!< the watchdog's periodic event-count check
    std::string m_tripped;         //!< what the watchdog stopped (empty: nothing)
    /** (rank, node) -> start, in the simulator's time steps (traced; picoseconds under
     * UsePicoseconds, so a duration is the end less the start exactly) */
    std::unordered_map<uint64_t, int64_t> m_commStarts;

    SymmetryPlan m_plan; //!< simulated ranks and ghost traffic
    /** per group: the copies of it that no simulated rank launches (SymmetryPlan, once) */
    std::unordered_map<uint32_t, std::vector<uint32_t>> m_ghostGroups;
    std::map<std::tuple<uint32_t, int, uint64_t>, int64_t> m_tpTimes; //!< (group, op, bytes) -> ns
    /** (group, op or -1 for a send or receive, bytes) -> SMs each member's kernels hold */
    std::map<std::tuple<uint32_t, int, uint64_t>, uint32_t> m_commSms;
    std::map<uint64_t, double> m_measuring;                //!< collective id -> start (to cache)
    std::vector<uint32_t> m_world;                         //!< every rank (members of kWorldGroup)
    std::unordered_map<uint32_t, GroupIndex> m_groupIndex; //!< per group, at its first join
    /** \return node \p node's own time on rank \p rank, ns: its trace duration at the rank's
     *  compute speed (SetComputeSpeeds), before any SM sharing */
    int64_t OwnNs(uint32_t rank, uint32_t node) const;
    /** \return the label id of \p graph's node \p node (LabelOf its name, interned) */
    uint32_t LabelIdOf(const ExecutionTrace* graph, uint32_t node);
    /** Per graph and node: its label id, kAbsent until asked (LabelIdOf) */
    std::unordered_map<const ExecutionTrace*, std::vector<uint32_t>> m_labelOfNode;
    /**
     * \return which collective of its group node \p node of \p graph is, counted in program
     * order: the same on every member, so that the members meet on the same collective
     * whatever order they post them in (two chains of a stream, --moe-a2a-overlap, post their
     * collectives as each gets there)
     */
    uint32_t OrdinalOf(const ExecutionTrace* graph, uint32_t node);
    /** Per graph: per collective node, OrdinalOf (computed at first use) */
    std::unordered_map<const ExecutionTrace*, std::vector<uint32_t>> m_ordinalOfNode;
    std::vector<std::string> m_labels;                    //!< by label id
    std::unordered_map<std::string, uint32_t> m_labelIds; //!< label -> id
    std::vector<std::vector<uint8_t>> m_kinds; //!< per distinct graph: each node's OperatorKind

    std::map<uint64_t, Meeting> m_meetings;                //!< (group, seq) key -> meeting
    std::map<uint64_t, uint64_t> m_running;                //!< collective id -> meeting key
    std::map<uint32_t, std::deque<uint64_t>> m_groupQueue; //!< group -> meetings waiting to run
    std::map<uint32_t, bool> m_groupBusy;                  //!< group -> running a collective
    // Point-to-point matching: (src, dst, tag) seen from the receiver's representative
    // (SymmetryPlan::InFrameOf) -> posted sends / receives. (multimaps keep equal keys in
    // insertion order, so matching is first posted, first matched.)
    std::multimap<std::tuple<uint32_t, uint32_t, int32_t>, PostedMessage> m_sends;
    std::multimap<std::tuple<uint32_t, uint32_t, int32_t>, PostedMessage> m_recvs;
    std::unordered_map<uint64_t, std::tuple<uint32_t, uint32_t, uint32_t, uint32_t>>
        m_transfers; //!< message id -> (sender, send node, receiver, receive node)
    NetworkBackend::DeliveryCallback m_transferDone; //!< TransferDone, made once
    NetworkBackend::DeliveryCallback m_ghostDone;    //!< GhostDelivered, made once
    uint64_t m_collectives = 0;                      //!< collectives launched
    uint64_t m_messages = 0;                         //!< messages delivered

    TracedCallback<const OperatorEvent&> m_opStart; //!< operator start
    TracedCallback<const OperatorEvent&> m_opEnd;   //!< operator end
    TracedCallback<const IdleEvent&> m_idle;        //!< compute streams idle
    bool m_traceIdle = false;                       //!< m_idle has a sink (in this replay)
    CriticalPathRecorder m_path;                    //!< what each node's start waited for
    /** The node that launches the collective LaunchMeeting starts: its last member to post
     * (posted), or the collective before it on its group, which ended (not posted). */
    struct Launcher
    {
        uint32_t rank = 0;  //!< its rank
        uint32_t node = 0;  //!< its node
        bool posted = true; //!< it posted now (else: it ended now)
    } m_launcher;
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_TRACE_REPLAYER_H
