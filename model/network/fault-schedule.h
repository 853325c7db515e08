/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_FAULT_SCHEDULE_H
#define RAPIDLLM_FAULT_SCHEDULE_H

#include "ns3/callback.h"
#include "ns3/event-id.h"
#include "ns3/nstime.h"
#include "ns3/object.h"
#include "ns3/traced-callback.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ns3 {
namespace rapidllm {

class Topology;

/**
 * \ingroup rapid-llm
 * \brief A link fault that starts at a simulated time (a link degrades, dies or is repaired
 * mid-step): from \p start on, the links \p selector names carry \p factor of their bandwidth.
 */
struct ScheduledFault
{
    std::string selector; //!< "A-B", "A>B" or "A", as Topology::SelectLinks reads it
    double factor = 1.0;  //!< 0 (dead), [Topology::kMinLinkFactor, 1) (soft) or 1 (repaired)
    Time start;           //!< when it starts, counted from the moment the schedule is armed
    std::string source;   //!< where it came from (file, "command line"), for errors
};

/**
 * \ingroup rapid-llm
 * \brief Faults that start during a run, given to a NetworkBackend
 * (NetworkBackend::SetFaultSchedule), which arms it: at each fault's time the schedule applies
 * the fault to the topology (Topology::ApplyFault) and the backend adapts the messages in
 * flight (the flow backend re-solves the rates of the flows on the changed links, the packet
 * backend changes its devices' data rates). Messages sent afterwards are routed over the
 * changed topology.
 *
 * Times count from the moment the schedule is armed, normally before Simulator::Run() (time
 * 0, the start of a replay); to count from a prepared workload's start, set it in
 * NetworkBackend::Prepare's ready callback. Faults with equal times apply in the order added,
 * before the other events of that time scheduled after the schedule was armed.
 * Faults present from the start belong in the topology (NetworkSpec::faults).
 */
class FaultSchedule : public Object
{
  public:
    /** \brief Register this type. \return the TypeId */
    static TypeId GetTypeId();

    /** Signature of the FaultApplied trace: selector, factor, directed links changed. */
    typedef void (*FaultTracedCallback)(const std::string& selector, double factor, uint32_t links);

    FaultSchedule();
    ~FaultSchedule() override;

    /**
     * \brief Adds a fault.
     * \param selector the links, as Topology::SelectLinks reads it ("gpu0-gpu1",
     *        "gpu3>nvlink.sw0", "infiniband.spine0.1")
     * \param factor 0 (dead), a factor in [Topology::kMinLinkFactor, 1) or 1 (repair)
     * \param start when it starts (>= 0), counted from the moment the schedule is armed
     * \param source where it came from, named in errors (file, "command line")
     * Throws SpecError (field faults.bandwidth_factor or faults.start) on a bad factor or time;
     * the selector is checked against the topology when the schedule is armed.
     */
    void Add(const std::string& selector,
             double factor,
             Time start,
             const std::string& source = "faults");

    /** \brief Adds a fault (see the other overload). \param fault the fault */
    void Add(const ScheduledFault& fault);

    /** \return the faults, in the order added */
    const std::vector<ScheduledFault>& GetFaults() const;

    /** \return whether there is no fault */
    bool IsEmpty() const;

    /**
     * \brief Checks every selector against a topology without changing it.
     * \param topology the network; throws SpecError naming the selector that matches no link
     */
    void Check(const Topology& topology) const;

    /**
     * \brief Schedules every fault at now + its start (NetworkBackend::SetFaultSchedule calls
     * it). At that time the fault is applied to \p topology and \p onApplied is called with the
     * directed links changed.
     * \param topology the network (checked first, see Check)
     * \param onApplied called after each fault is applied; may be null
     * Throws NetworkError if the schedule is already armed.
     */
    void Arm(Ptr<Topology> topology, Callback<void, const std::vector<uint32_t>&> onApplied);

    /** \brief Cancels the faults not applied yet (nothing if not armed). */
    void Disarm();

    /** \return the faults applied so far */
    uint32_t GetAppliedCount() const;

  protected:
    void DoDispose() override;

  private:
    /** \brief Applies fault \p index (a scheduled event). */
    void Apply(uint32_t index);

    std::vector<ScheduledFault> m_faults;                     //!< in the order added
    std::vector<EventId> m_events;                            //!< per fault once armed
    Ptr<Topology> m_topology;                                 //!< the network, once armed
    Callback<void, const std::vector<uint32_t>&> m_onApplied; //!< the backend's hook
    uint32_t m_applied = 0;                                   //!< faults applied
    TracedCallback<const std::string&, double, uint32_t> m_appliedTrace; //!< FaultApplied
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_FAULT_SCHEDULE_H
