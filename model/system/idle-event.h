/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_IDLE_EVENT_H
#define RAPIDLLM_IDLE_EVENT_H

#include "ns3/nstime.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief What a rank's compute streams stood idle for, as the replay's report charges it.
 */
enum class IdleCause : uint8_t
{
    BUBBLE,        //!< a pipeline receive (RankTiming::bubbleS)
    COMMUNICATION, //!< other communication (RankTiming::exposedCommS)
    HOST           //!< a ready kernel the host had not issued yet (RankTiming::hostWaitS)
};

/** \return "bubble", "communication" or "host" */
std::string ToString(IdleCause cause);

/**
 * \ingroup rapid-llm
 * \brief An interval in which a simulated rank's compute streams were all idle, with what the
 * report charges it to: the TraceReplayer's ComputeIdle trace source, fired when the interval
 * ends. A rank's intervals and its kernels tile its step: the intervals of each cause add up to
 * its RankTiming's bubble, exposed communication and host time, so that a timeline drawn from
 * them agrees with the report.
 */
struct IdleEvent
{
    uint32_t rank = 0;                          //!< the rank
    Time start;                                 //!< when the streams went idle (or the part began)
    Time end;                                   //!< when it ended
    IdleCause cause = IdleCause::COMMUNICATION; //!< what it is charged to
    /**
     * COMMUNICATION: the label of the operator waited for (StageGraph::LabelOf of its name, as
     * RankTiming::exposedByOp), "" when the wait is not attributed (valid during the callback)
     */
    std::string_view op;
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_IDLE_EVENT_H
