/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "fault-schedule.h"

#include "ns3/log.h"
#include "ns3/network-error.h"
#include "ns3/simulator.h"
#include "ns3/spec-error.h"
#include "ns3/topology.h"
#include "ns3/trace-source-accessor.h"

namespace ns3 {
namespace rapidllm {

NS_LOG_COMPONENT_DEFINE("RapidLlmFaultSchedule");
NS_OBJECT_ENSURE_REGISTERED(FaultSchedule);

TypeId
FaultSchedule::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::rapidllm::FaultSchedule")
            .SetParent<Object>()
            .SetGroupName("RapidLlm")
            .AddConstructor<FaultSchedule>()
            .AddTraceSource("FaultApplied",
                            "A scheduled fault took effect (selector, factor, links changed).",
                            MakeTraceSourceAccessor(&FaultSchedule::m_appliedTrace),
                            "ns3::rapidllm::FaultSchedule::FaultTracedCallback");
    return tid;
}

FaultSchedule::FaultSchedule() = default;
FaultSchedule::~FaultSchedule() = default;

void
FaultSchedule::DoDispose()
{
    Disarm();
    m_topology = nullptr;
    m_onApplied = Callback<void, const std::vector<uint32_t>&>();
    Object::DoDispose();
}

void
FaultSchedule::Add(const std::string& selector,
                   double factor,
                   Time start,
                   const std::string& source)
{
    Add(ScheduledFault{selector, factor, start, source});
}

void
FaultSchedule::Add(const ScheduledFault& fault)
{
    if (m_topology)
    {
        throw NetworkError("fault schedule: faults cannot be added once it is armed");
    }
    Topology::CheckLinkFactor(fault.factor, fault.selector, fault.source);
    if (fault.start.IsStrictlyNegative())
    {
        throw SpecError(fault.source,
                        "faults.start",
                        "fault '" + fault.selector + "': start time "
                            + std::to_string(fault.start.GetSeconds())
                            + " s is negative; a fault starts at a time >= 0");
    }
    m_faults.push_back(fault);
}

const std::vector<ScheduledFault>&
FaultSchedule::GetFaults() const
{
    return m_faults;
}

bool
FaultSchedule::IsEmpty() const
{
    return m_faults.empty();
}

void
FaultSchedule::Check(const Topology& topology) const
{
    for (const auto& f : m_faults)
    {
        topology.SelectLinks(f.selector, f.source);
    }
}

void
FaultSchedule::Arm(Ptr<Topology> topology, Callback<void, const std::vector<uint32_t>&> onApplied)
{
    if (m_topology)
    {
        throw NetworkError("fault schedule: already armed (a schedule serves one backend)");
    }
    Check(*topology);
    m_topology = topology;
    m_onApplied = onApplied;
    m_events.clear();
    for (uint32_t i = 0; i < m_faults.size(); ++i)
    {
        m_events.push_back(Simulator::Schedule(m_faults[i].start, &FaultSchedule::Apply, this, i));
    }
    NS_LOG_LOGIC("armed " << m_faults.size() << " faults at t=" << Simulator::Now().GetSeconds()
                          << " s");
}

void
FaultSchedule::Disarm()
{
    for (auto& e : m_events)
    {
        e.Cancel();
    }
    m_events.clear();
}

void
FaultSchedule::Apply(uint32_t index)
{
    const ScheduledFault& f = m_faults[index];
    const std::vector<uint32_t> links = m_topology->ApplyFault(f.selector, f.factor, f.source);
    ++m_applied;
    NS_LOG_INFO("t=" << Simulator::Now().GetSeconds() << " s: fault '" << f.selector << "' factor "
                     << f.factor << " on " << links.size() << " links");
    m_appliedTrace(f.selector, f.factor, static_cast<uint32_t>(links.size()));
    if (!m_onApplied.IsNull())
    {
        m_onApplied(links);
    }
}

uint32_t
FaultSchedule::GetAppliedCount() const
{
    return m_applied;
}

} // namespace rapidllm
} // namespace ns3
