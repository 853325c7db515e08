/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_NETWORK_STATS_H
#define RAPIDLLM_NETWORK_STATS_H

#include <cstdint>
#include <string>
#include <vector>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief What one directed link carried, as every network backend reports it.
 */
struct LinkStats
{
    uint32_t link = 0;      //!< directed link id
    std::string name;       //!< the link as the topology names it, e.g. "gpu0>nvlink.sw0"
    double bytes = 0;       //!< payload bytes of the messages that crossed it (once finished)
    double busyTimeS = 0;   //!< time the link was busy, seconds (see the backend)
    double utilization = 0; //!< bytes / (payload bandwidth x NetworkStats::windowS)
};

/**
 * \ingroup rapid-llm
 * \brief A network backend's statistics so far (NetworkBackend::GetStats): message counts,
 * per-link use and the counters that only some backends have (0 in the others).
 */
struct NetworkStats
{
    uint64_t messagesSent = 0;      //!< Send() calls
    uint64_t messagesDelivered = 0; //!< delivery callbacks run
    double windowS = 0;             //!< from the first Send() to now (or the last delivery), s
    std::vector<LinkStats> links;   //!< one per directed link, indexed by link id
    uint64_t solves = 0;            //!< flow backend: rate recomputations
    uint64_t solvedFlows = 0;       //!< flow backend: flows recomputed, summed
    uint64_t dataPackets = 0;       //!< packet backend: TCP data segments delivered
    uint64_t drops = 0;             //!< packet backend: packets dropped by queues and dead links
    uint32_t connections = 0;       //!< packet backend: TCP connections opened

    /**
     * \param count how many
     * \return the \p count most loaded links (only links that carried something): the highest
     *         utilization first (bytes over what the link's bandwidth, fault factor included,
     *         carries in the window: a saturated slow link before a fast one that carried more
     *         bytes), then the most bytes, then the lowest link id
     */
    std::vector<LinkStats> MostLoaded(uint32_t count) const;
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_NETWORK_STATS_H
