/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_RAPID_LLM_HELPER_H
#define RAPIDLLM_RAPID_LLM_HELPER_H

#include "ns3/attribute.h"
#include "ns3/event-id.h"
#include "ns3/fault-schedule.h"
#include "ns3/hardware-spec.h"
#include "ns3/model-spec.h"
#include "ns3/network-backend.h"
#include "ns3/nstime.h"
#include "ns3/object-factory.h"
#include "ns3/object.h"
#include "ns3/replay-job.h"
#include "ns3/routing-policy.h"
#include "ns3/run-report.h"
#include "ns3/run-spec.h"
#include "ns3/trace-replayer.h"
#include "ns3/traced-callback.h"
#include "ns3/workload.h"

#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief The entry point for ns-3 scenario scripts: load the specs, build the workload and the
 * cluster network, choose and configure the network backend, the routing policy and the trace
 * replayer, replay, and read the report.
 *
 * Like ns-3's device helpers, it keeps an ObjectFactory per object it creates, so a script sets
 * any attribute of them:
 * \code
 *   UsePicoseconds();  // ns3/packet-resolution.h: the packet backend's frames, timed to the ps
 *   Ptr<RapidLlmHelper> h = CreateObject<RapidLlmHelper>();
 *   h->Load("gpt3-175b", "a100-sxm-80gb");
 *   h->SetRun(run);                                       // layout, batch, recomputation
 *   h->SetBackend("packet", "QueueDisc", StringValue("fifo"));
 *   h->SetRoutingPolicy("ecmp");
 *   h->SetReplayerAttribute("ComputeStreams", UintegerValue(2));
 *   RunReport report = h->Run();                          // report.stepTimeS, report.ranks
 * \endcode
 * Run() is the convenience; a script that owns the simulator does the same in three steps:
 * \code
 *   h->Install();          // builds workload, network and replayer; schedules the replay
 *   Simulator::Run();      // with the script's own events, scheduler, Stop, ...
 *   RunReport report = h->Collect();
 *   Simulator::Destroy();
 * \endcode
 * The trace sources OperatorStart and OperatorEnd fire an OperatorEvent (rank, node, name, kind,
 * time, duration, FLOPs, bytes, group or peer) for every node of every replayed rank: with the
 * replayer's Symmetry (the helper's default: true) that is one rank per set of symmetric copies;
 * `SetReplayerAttribute("Symmetry", BooleanValue(false))` replays, and so reports, every rank.
 * ComputeIdle fires an IdleEvent for each interval a replayed rank's compute streams stood idle,
 * with what the report charges it to (pipeline bubble, communication and its operator, host), so
 * that a timeline drawn from both adds up to the report (TimelineRecorder does).
 * MessageDelivered fires for every message the backend delivers, every rank's (the helper then
 * has every collective's messages sent: TraceReplayer TraceAllMessages). Connect them before
 * Install(). After it a script may connect to GetReplayer()'s OperatorStart and OperatorEnd, and
 * to GetBackend()'s own MessageDelivered, whose latency is a double in seconds
 * (NetworkBackend::MessageTracedCallback), not a Time, and which sees only the messages the
 * replay sends (collectives timed once send none) unless the replayer's TraceAllMessages is set.
 */
class RapidLlmHelper : public Object
{
  public:
    /** \brief Register this type. \return the TypeId */
    static TypeId GetTypeId();

    RapidLlmHelper();
    ~RapidLlmHelper() override;

    /**
     * \brief Loads a model and a hardware spec (preset names or YAML paths).
     * \param model e.g. "gpt3-175b"
     * \param hardware e.g. "a100-sxm-80gb"
     */
    void Load(const std::string& model, const std::string& hardware);
    /** \param model the model, checked as a file's (ModelSpec::Validate; throws SpecError) */
    void SetModel(const ModelSpec& model);
    /** \param hardware the machine; its links' numbers are checked as a file's
     *  (NetworkSpec::Validate; throws SpecError) */
    void SetHardware(const HardwareSpec& hardware);
    /** \param run the layout and run settings */
    void SetRun(const RunSpec& run);

    /**
     * \brief Faults that start during the run (a link degrades or dies mid-step): each Install()
     * gives the backend a FaultSchedule of them, times counted from the replay's start. The
     * replay then runs every rank (no symmetry reduction: the faults break the symmetry).
     * Faults present from the start belong in the hardware (NetworkSpec::faults).
     * \param faults the faults (empty: none)
     */
    void SetTimedFaults(const std::vector<ScheduledFault>& faults);
    /** \return the faults that start during the run */
    const std::vector<ScheduledFault>& GetTimedFaults() const;

    /**
     * \brief GPUs that compute slower than the others (a throttled or faulty GPU, a straggler):
     * each Install() gives them to its replayer (TraceReplayer::SetComputeSpeeds), which then
     * runs every rank.
     * \param speeds per GPU index, the share of its compute speed left, in (0, 1] (empty: none)
     */
    void SetSlowGpus(const std::map<uint32_t, double>& speeds);
    /** \return the slow GPUs and their speeds */
    const std::map<uint32_t, double>& GetSlowGpus() const;

    /**
     * \brief GPUs unlike the others (a degraded HBM, a power cap or a locked clock on one GPU):
     * each listed GPU's kernels are costed again with its own GpuSpec, and the replayer runs
     * each of them that time over the healthy GPU's (TraceReplayer::SetKernelFactors); their
     * energy follows too. The HBM capacity must stay the job's GPU's (the memory verdict is
     * per stage). Needs a workload (Install()), not a trace set.
     * \param gpus per GPU index, its spec (empty: none)
     */
    void SetGpuVariants(const std::map<uint32_t, GpuSpec>& gpus);
    /** \return the GPUs with their own spec */
    const std::map<uint32_t, GpuSpec>& GetGpuVariants() const;

    /** \return the model */
    const ModelSpec& GetModel() const;
    /** \return the machine */
    const HardwareSpec& GetHardware() const;
    /** \return the run settings */
    const RunSpec& GetRun() const;

    /**
     * \brief Chooses the network backend and its attributes (default: "flow").
     * \param type a registered short name ("flow", "packet", see NetworkBackend::Names()) or
     *        the TypeId name of a NetworkBackend subclass; throws SpecError if unknown
     * \param args pairs of attribute name and value, e.g. "Mtu", UintegerValue(4096)
     */
    template<typename... Ts>
    void SetBackend(const std::string& type, Ts&&... args);
    /** \brief Sets an attribute of the backend. \param name the attribute \param value its value */
    void SetBackendAttribute(const std::string& name, const AttributeValue& value);
    /**
     * \brief Chooses the routing policy and its attributes (default: the hardware file's
     * network.routing).
     * \param type a registered short name ("ecmp", see RoutingPolicy::Names()) or the TypeId
     *        name of a RoutingPolicy subclass; throws SpecError if unknown
     * \param args pairs of attribute name and value
     */
    template<typename... Ts>
    void SetRoutingPolicy(const std::string& type, Ts&&... args);
    /**
     * \brief Sets an attribute of the routing policy (of the hardware file's, until
     * SetRoutingPolicy chooses another; checked when Install() creates it).
     * \param name the attribute \param value its value
     */
    void SetRoutingPolicyAttribute(const std::string& name, const AttributeValue& value);
    /**
     * \brief Sets an attribute of the TraceReplayer (ComputeStreams, SerializeGroups, Symmetry,
     * CollectiveAlgorithm, ...). The helper's defaults differ from the replayer's in two:
     * Symmetry is true, and SmCount is the hardware's GPU's SMs (collectives take SMs from the
     * kernels they overlap; SmCount 0 turns that off).
     * \param name the attribute \param value its value; throws SpecError if not allowed
     */
    void SetReplayerAttribute(const std::string& name, const AttributeValue& value);
    /** \return the backend's type name (the short name given, else its TypeId name) */
    std::string GetBackendName() const;

    /** \return every rank's graph, costed by the compute model of the hardware's GPU */
    Workload BuildWorkload() const;

    /**
     * \brief Builds the workload, checks memory, creates the network backend (with its topology
     * and routing policy) and the trace replayer from their factories, and schedules the replay
     * to start at the simulator's current time (an event, as ns-3 applications start: until it
     * runs, a script may connect to GetReplayer() and GetBackend()). Does not run the
     * simulator, nor change its scheduler. Replaces what an earlier Install() created: an
     * earlier replay that has not started yet is cancelled (it never runs); one that has
     * started runs on to its end on its own network (kept until Dispose), but only the last
     * Install()'s replay is collected. The helper must outlive the simulation.
     * \return the replayer; throws SpecError on bad input (a replay that cannot start, e.g. an
     *         unknown CollectiveAlgorithm, throws from Simulator::Run())
     */
    Ptr<TraceReplayer> Install();
    /**
     * \brief Like Install(), for a trace set (ours or another tool's) on the hardware's network.
     * \param set the traces
     * \return the replayer
     */
    Ptr<TraceReplayer> Install(TraceSet set);
    /**
     * \brief The report of the installed replay, once the simulator has run it.
     * \return the report (timing, memory for a workload, FLOPs, first token, every rank's
     *         breakdown; the same on a second call); throws ReplayError if nothing was
     *         installed, if the simulator has not run the replay yet (it starts as the
     *         simulator's next event after Install()), or if the replay did not finish (the
     *         simulator was stopped before its end, the trace cannot finish, or the watchdog
     *         stopped it)
     */
    RunReport Collect();

    /**
     * \brief Install(), then runs the simulator (with the Scheduler attribute's scheduler) to
     * the end, Collect(), and destroys the simulator, also when it throws. It owns the
     * simulator: called inside a running simulation, or after one not yet destroyed, it throws
     * ReplayError (use Install() and Collect() there).
     * \return the report; throws SpecError on bad input
     */
    RunReport Run();
    /**
     * \brief Replays a trace set (ours or another tool's) on the hardware's network, as Run().
     * \param set the traces
     * \return the timing report (no memory or FLOPs fields)
     */
    RunReport Replay(TraceSet set);

    /**
     * \brief Checks memory only (training: on graphs not costed by the compute model; inference:
     * without a graph): much cheaper than Run(), for ruling out layouts that cannot run.
     * \return a report with the memory fields (and mode, GPUs, backend) only
     */
    RunReport CheckMemory() const;

    /** \return the replayer Install() created (null before) */
    Ptr<TraceReplayer> GetReplayer() const;
    /** \return the network backend Install() created (null before) */
    Ptr<NetworkBackend> GetBackend() const;
    /**
     * \return when the replay Install() set up started (simulated time): after the backend
     * opened the job's connections (NetworkBackend::Prepare), the origin of every time the
     * report gives
     */
    Time GetReplayStart() const;
    /** \return the last Collect()'s replay result: every rank's timing, counts */
    const ReplayResult& GetResult() const;

    /**
     * Signature of the MessageDelivered trace source.
     * \param id message id \param src source GPU \param dst destination GPU
     * \param bytes payload \param latency from the send to the delivery of the last byte
     */
    typedef void (*MessageTracedCallback)(
        uint64_t id, uint32_t src, uint32_t dst, uint64_t bytes, Time latency);

  protected:
    void DoDispose() override;

  private:
    /** A routing policy attribute set before the policy's type is known. */
    using AttributeSetting = std::pair<std::string, Ptr<const AttributeValue>>;

    /** Sets an attribute in \p factory; throws SpecError naming it unless the type has it. */
    static void SetChecked(ObjectFactory& factory,
                           const std::string& name,
                           const AttributeValue& value);
    /** Base case of the attribute pairs. */
    static void
    SetPairs(ObjectFactory& factory)
    {}

    /** Sets attribute pairs (name, value, name, value, ...) in \p factory. */
    template<typename... Ts>
    static void
    SetPairs(ObjectFactory& factory,
             const std::string& name,
             const AttributeValue& value,
             Ts&&... rest)
    {
        SetChecked(factory, name, value);
        SetPairs(factory, std::forward<Ts>(rest)...);
    }

    /** \return the backend type \p type names; throws SpecError if none */
    static TypeId BackendType(const std::string& type);
    /** \return the routing policy type \p type names; throws SpecError if none */
    static TypeId RoutingType(const std::string& type);

    /** Creates the backend, its topology and routing, and the replayer; starts \p job. */
    Ptr<TraceReplayer> InstallJob(std::shared_ptr<ReplayJob> job);
    /**
     * Throws SpecError (field "backend") if \p backend is the packet network and the job's
     * frames alone would pass \p replayer's MaxEvents: a run of hours that the watchdog stops.
     */
    void RefuseUnfinishablePacketRun(Ptr<NetworkBackend> backend,
                                     Ptr<TraceReplayer> replayer) const;

    /**
     * \brief Costs the workload's kernels on each GPU of SetGpuVariants: the replayer's kernel
     * factors and the energy beyond the job's GPU's.
     * \param w the workload \param coster the job's GPU's coster
     */
    void CostGpuVariants(const Workload& w, const OperatorCoster& coster);
    /** \return a report with the mode, backend, GPUs and the memory verdict \p memory */
    RunReport MemoryReportOf(const MemoryReport& memory) const;
    /** Fills the compute split, FLOPs and first-token fields of a workload's report. */
    void FillWorkloadReport(RunReport& report) const;
    /**
     * Fills an inference report's first token (m_firstTokenEnd), time per later token and
     * throughput, for a workload or a replayed trace set alike.
     * \param report the report (its step time set) \param generated tokens each request
     * generates \param requests requests the job serves \param ranks GPUs
     */
    void FillTokens(RunReport& report,
                    uint32_t generated,
                    uint64_t requests,
                    std::size_t ranks) const;
    /** Runs the simulator over an Install(): scheduler, SimulatorGuard, Collect. */
    RunReport RunInstalled();
    /** Forwards the replayer's trace sources and records when the first token is sampled. */
    void OnOperatorStart(const OperatorEvent& event);
    void OnOperatorEnd(const OperatorEvent& event);
    /** Forwards the replayer's ComputeIdle trace source. */
    void OnComputeIdle(const IdleEvent& event);
    /** Forwards the backend's MessageDelivered trace source. */
    void OnMessageDelivered(
        uint64_t id, uint32_t src, uint32_t dst, uint64_t bytes, double latency);

    ModelSpec m_model;                         //!< the model
    HardwareSpec m_hardware;                   //!< the machine
    RunSpec m_run;                             //!< the settings
    std::vector<ScheduledFault> m_timedFaults; //!< faults that start mid-run
    std::map<uint32_t, double> m_slowGpus;     //!< GPU -> compute speed left (SetSlowGpus)
    std::map<uint32_t, GpuSpec> m_gpuVariants; //!< GPU -> its own spec (SetGpuVariants)
    TypeId m_scheduler;                        //!< attribute Scheduler

    ObjectFactory m_backendFactory;             //!< the network backend
    std::string m_backendName = "flow";         //!< the name it was chosen by
    ObjectFactory m_routingFactory;             //!< the routing policy, once chosen
    std::vector<AttributeSetting> m_routingSet; //!< attributes for the hardware file's policy
    ObjectFactory m_replayerFactory;            //!< the trace replayer
    bool m_smCountSet = false; //!< SetReplayerAttribute gave SmCount (else the GPU's)

    // What Install() made (kept until the next Install or Dispose).
    std::unique_ptr<Workload> m_workload; //!< the workload (null for a trace set)
    std::shared_ptr<ReplayJob> m_job;     //!< what the replayer executes
    Ptr<NetworkBackend> m_backend;        //!< the network
    Ptr<TraceReplayer> m_replayer;        //!< the replayer
    EventId m_startEvent;                 //!< the event that starts its replay
    /** Earlier Install()s' replays that had started when replaced: they run on to their end. */
    std::vector<std::pair<Ptr<TraceReplayer>, std::shared_ptr<ReplayJob>>> m_replaced;
    ReplayResult m_result;               //!< the last Collect()'s result
    RunReport m_report;                  //!< the last Collect()'s report
    bool m_collected = false;            //!< whether the installed replay was collected
    RunReport m_memoryReport;            //!< memory verdict of the workload
    Time m_start;                        //!< when the replay started
    std::vector<uint32_t> m_firstSample; //!< stage -> node that samples the first token
    /** a replayed inference trace set: rank -> node giving the first token (ExecutionTrace::
     * GetFirstTokenNode); empty otherwise */
    std::vector<uint32_t> m_traceFirstToken;
    uint32_t m_traceGenerated = 0; //!< a replayed inference trace set: tokens per request
    uint64_t m_traceRequests = 0;  //!< a replayed inference trace set: requests served
    std::unordered_map<OperatorDesc, double, OperatorDescHash>
        m_energyOf; //!< dynamic energy of each distinct operator of the workload, J
    std::map<uint32_t, std::vector<double>>
        m_kernelFactors;          //!< SetGpuVariants: each variant's kernel time factors
    double m_variantDynamicJ = 0; //!< the variants' dynamic energy beyond the healthy GPU's, J
    double m_variantIdleW = 0;    //!< the variants' idle power beyond the healthy GPU's, W
    Time m_firstTokenEnd;         //!< inference: when the last rank finished it

    TracedCallback<const OperatorEvent&> m_opStart; //!< operator start
    TracedCallback<const OperatorEvent&> m_opEnd;   //!< operator end
    TracedCallback<const IdleEvent&> m_computeIdle; //!< compute streams idle
    TracedCallback<uint64_t, uint32_t, uint32_t, uint64_t, Time> m_messageDelivered; //!< message
};

template<typename... Ts>
void
RapidLlmHelper::SetBackend(const std::string& type, Ts&&... args)
{
    ObjectFactory factory;
    factory.SetTypeId(BackendType(type));
    SetPairs(factory, std::forward<Ts>(args)...);
    m_backendFactory = factory;
    m_backendName = type;
}

template<typename... Ts>
void
RapidLlmHelper::SetRoutingPolicy(const std::string& type, Ts&&... args)
{
    ObjectFactory factory;
    factory.SetTypeId(RoutingType(type));
    SetPairs(factory, std::forward<Ts>(args)...);
    m_routingFactory = factory;
    m_routingSet.clear();
}

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_RAPID_LLM_HELPER_H
