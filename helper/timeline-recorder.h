/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_TIMELINE_RECORDER_H
#define RAPIDLLM_TIMELINE_RECORDER_H

#include "ns3/event-id.h"
#include "ns3/operator-event.h"
#include "rapid-llm-helper.h"

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief Records a replay as a Chrome/Perfetto trace-event timeline (JSON `traceEvents`, opens
 * in ui.perfetto.dev and chrome://tracing), from the helper's OperatorStart and OperatorEnd
 * trace sources and the network backend's link statistics.
 *
 * - one process per rank (`pid` = rank), named "rank R";
 * - complete events (`ph` "X") with `cat` "compute" (kernels, on the compute stream tracks),
 *   "communication" (collectives and point-to-point transfers on their own tracks; and, on the
 *   compute track, the streams idle waiting for communication, with the operator waited for),
 *   "bubble" (the streams idle until a pipeline receive completed) or "host" (a ready kernel
 *   the host had not issued yet): the idle slices are the replayer's own (ComputeIdle), so on
 *   every rank the slices of each category add up to the report's breakdown;
 * - flows (`ph` "s"/"f") link the members of each collective (from its lowest rank to the
 *   others) and each pipeline send to its receive;
 * - counter tracks (`ph` "C") in a process "network" (`pid` = number of ranks): the busy share
 *   of the most used links over time (the share of each sampling interval the link carried
 *   traffic; the interval doubles as the step grows, at most 512 samples).
 *
 * With the symmetry reduction (the helper's default) the replayer runs one rank per set of
 * symmetric copies: only those ranks have events, and each one's process name lists the ranks
 * it stands for (they have the same timeline). The output is deterministic.
 */
class TimelineRecorder
{
  public:
    /**
     * \param links how many of the most used links get a counter track
     */
    explicit TimelineRecorder(uint32_t links = 16);

    /**
     * \brief Connects to the helper's trace sources; call before its Install() or Run().
     * \param helper the helper (must outlive the replay)
     */
    void Attach(Ptr<RapidLlmHelper> helper);

    /** \return the timeline as trace-event JSON text */
    std::string ToJson() const;

    /** \brief Writes ToJson() to \p path; throws SpecError naming it if it cannot. */
    void Write(const std::string& path) const;

  private:
    /** What kind of slice. */
    enum SliceKind : uint8_t
    {
        KERNEL,
        COLLECTIVE,
        SEND,
        RECV
    };

    /** One operator of a rank, as a complete event. */
    struct Slice
    {
        uint32_t rank = 0;       //!< the rank
        SliceKind kind = KERNEL; //!< what
        int64_t startNs = 0;     //!< start
        int64_t durNs = 0;       //!< duration
        uint32_t name = 0;       //!< index in m_names
        uint64_t flops = 0;      //!< compute: FLOPs
        uint64_t bytes = 0;      //!< bytes
        uint32_t other = 0;      //!< collective: group; transfer: peer
        uint64_t seq = 0;        //!< collective: its index on the group; transfer: on the pair
        std::string op;          //!< collective: the op
    };

    /** Notes the replay's start, ranks and first link sample at the first event. */
    void Begin();
    void OnStart(const OperatorEvent& e);
    void OnEnd(const OperatorEvent& e);
    void OnIdle(const IdleEvent& e);
    /** Takes a sample of every link's busy time; reschedules itself while the replay runs. */
    void Sample();
    /** \return the index of \p name in m_names */
    uint32_t Intern(std::string_view name);

    uint32_t m_links;             //!< links with a counter track
    Ptr<RapidLlmHelper> m_helper; //!< the helper
    std::vector<Slice> m_slices;  //!< every operator that ended
    /** An interval a rank's compute streams stood idle (ComputeIdle). */
    struct Idle
    {
        uint32_t rank = 0;                          //!< the rank
        int64_t startNs = 0;                        //!< start
        int64_t endNs = 0;                          //!< end
        IdleCause cause = IdleCause::COMMUNICATION; //!< what it is charged to
        uint32_t op = UINT32_MAX; //!< the operator waited for (index in m_names), if any
    };

    std::vector<Idle> m_idle;                              //!< every idle interval
    std::vector<std::string> m_names;                      //!< operator names
    std::unordered_map<std::string, uint32_t> m_nameIndex; //!< name -> index
    std::unordered_map<uint64_t, uint64_t> m_seqOf;        //!< (rank, node) -> its seq (at start)
    std::map<std::pair<uint32_t, uint32_t>, uint64_t> m_groupSeq; //!< (rank, group) -> next
    std::map<std::pair<uint32_t, uint32_t>, uint64_t> m_pairSeq;  //!< (src, dst) -> next (sends)
    std::map<std::pair<uint32_t, uint32_t>, uint64_t> m_recvSeq;  //!< (src, dst) -> next (recvs)
    bool m_started = false;                                       //!< the first operator started
    uint32_t m_ranks = 0;                                         //!< ranks of the replay
    std::vector<uint32_t> m_representative;  //!< rank -> the simulated rank standing for it
    int64_t m_originNs = 0;                  //!< the replay's start (simulated), time 0
    int64_t m_intervalNs = 1000;             //!< sampling interval
    std::vector<int64_t> m_sampleNs;         //!< sample times
    std::vector<std::vector<double>> m_busy; //!< per sample: each link's busy time so far, s
    std::vector<std::string> m_linkNames;    //!< directed link names
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_TIMELINE_RECORDER_H
