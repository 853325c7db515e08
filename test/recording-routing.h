/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_RECORDING_ROUTING_H
#define RAPIDLLM_RECORDING_ROUTING_H

#include "detour-routing.h"
#include "ns3/routing-policy.h"
#include "ns3/topology.h"

#include <cstdint>
#include <set>
#include <tuple>
#include <vector>

namespace ns3 {
namespace rapidllm {

/**
 * \brief A per-flow policy for tests, made with CreateObject and set on a backend directly:
 * each flow passes through the endpoint a hash of (src, dst, flow id) picks, as Valiant
 * routing does, and every (src, dst, flow id) it is asked for is recorded while Recording().
 */
class RecordingRouting : public DetourRouting
{
  public:
    /** One routing question: source, destination, flow id. */
    typedef std::tuple<uint32_t, uint32_t, uint64_t> Question;

    /** \brief Register this type. \return the TypeId */
    static TypeId
    GetTypeId()
    {
        static TypeId tid = TypeId("ns3::rapidllm::test::RecordingRouting")
                                .SetParent<RoutingPolicy>()
                                .AddConstructor<RecordingRouting>();
        return tid;
    }

    /** \param on record the questions asked from now on (or stop) */
    void
    SetRecording(bool on)
    {
        m_recording = on;
    }

    /** \return the questions recorded, in the order asked */
    const std::vector<Question>&
    GetQuestions() const
    {
        return m_questions;
    }

  protected:
    uint32_t
    Middle(const Topology& t, uint32_t src, uint32_t dst, uint64_t flowId) override
    {
        if (m_recording)
        {
            m_questions.emplace_back(src, dst, flowId);
        }
        return static_cast<uint32_t>(FlowHash(src, dst, flowId) % t.GetEndpointCount());
    }

  private:
    bool m_recording = false;          //!< recording now
    std::vector<Question> m_questions; //!< what was asked while recording
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_RECORDING_ROUTING_H
