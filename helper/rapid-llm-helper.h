/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_RAPID_LLM_HELPER_H
#define RAPIDLLM_RAPID_LLM_HELPER_H

#include "ns3/hardware-spec.h"
#include "ns3/model-spec.h"
#include "ns3/network-backend.h"
#include "ns3/object.h"
#include "ns3/replay-job.h"
#include "ns3/run-report.h"
#include "ns3/run-spec.h"
#include "ns3/trace-replayer.h"
#include "ns3/traced-callback.h"
#include "ns3/workload.h"

#include <string>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief The entry point for ns-3 scenario scripts: load the specs, build the workload and the
 * cluster network, pick the backend and routing, run, and read the report.
 *
 * \code
 *   Ptr<RapidLlmHelper> h = CreateObject<RapidLlmHelper>();
 *   h->SetAttribute("Backend", StringValue("flow"));
 *   h->Load("gpt3-175b", "a100-sxm-80gb");
 *   h->SetRun(run);                     // layout, batch, recomputation
 *   RunReport report = h->Run();        // report.stepTimeS, report.ToJson()
 * \endcode
 * The trace sources OperatorStart and OperatorEnd fire an OperatorEvent (rank, node, name, kind,
 * time, duration, FLOPs, bytes, group) for every node of every replayed rank:
 * with Symmetry (the default) that is one rank per set of symmetric copies; set it false to see
 * every rank.
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
    /** \param model the model */
    void SetModel(const ModelSpec& model);
    /** \param hardware the machine */
    void SetHardware(const HardwareSpec& hardware);
    /** \param run the layout and run settings */
    void SetRun(const RunSpec& run);

    /** \return the model */
    const ModelSpec& GetModel() const;
    /** \return the machine */
    const HardwareSpec& GetHardware() const;
    /** \return the run settings */
    const RunSpec& GetRun() const;

    /** \return every rank's graph, costed by the compute model of the hardware's GPU */
    Workload BuildWorkload() const;

    /**
     * \brief Builds the workload, checks memory and replays the step on the network.
     * \return the report; throws SpecError on bad input
     */
    RunReport Run();

    /**
     * \brief Checks memory only, on graphs not costed by the compute model: much cheaper than
     * Run(), for ruling out layouts that cannot run.
     * \return a report with the memory fields (and mode, GPUs, backend) only
     */
    RunReport CheckMemory() const;

    /**
     * \brief Replays a trace set (ours or another tool's) on the hardware's network.
     * \param set the traces
     * \return the timing report (no memory or FLOPs fields)
     */
    RunReport Replay(TraceSet set);

  protected:
    void DoDispose() override;

  private:
    /** Builds the network backend for \p gpus ranks. */
    Ptr<NetworkBackend> MakeBackend(uint32_t gpus) const;
    /** \return a report with the mode, backend, GPUs and the memory verdict of \p w */
    RunReport MemoryReportOf(const Workload& w) const;
    /** Replays \p job and fills the timing fields of \p report. */
    void Execute(const ReplayJob& job, RunReport& report);
    /** Forwards the replayer's trace sources and records when the first token is sampled. */
    void OnOperatorStart(const OperatorEvent& event);
    void OnOperatorEnd(const OperatorEvent& event);
    /** Forwards the backend's MessageDelivered trace source. */
    void OnMessageDelivered(
        uint64_t id, uint32_t src, uint32_t dst, uint64_t bytes, double latency);

    ModelSpec m_model;          //!< the model
    HardwareSpec m_hardware;    //!< the machine
    RunSpec m_run;              //!< the settings
    std::string m_backend;      //!< attribute Backend
    std::string m_routing;      //!< attribute Routing ("" = the hardware file's)
    bool m_symmetry = true;     //!< attribute Symmetry
    std::string m_granularity;  //!< attribute Granularity
    std::string m_firstTokenOp; //!< inference: the sampling node that yields the first token
    double m_firstTokenEnd = 0; //!< inference: when the last rank finished that node

    TracedCallback<const OperatorEvent&> m_opStart; //!< operator start
    TracedCallback<const OperatorEvent&> m_opEnd;   //!< operator end
    TracedCallback<uint64_t, uint32_t, uint32_t, uint64_t, double> m_messageDelivered; //!< message
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_RAPID_LLM_HELPER_H
