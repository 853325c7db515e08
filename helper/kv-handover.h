/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_KV_HANDOVER_H
#define RAPIDLLM_KV_HANDOVER_H

#include "collective-probe.h"
#include "job-options.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief Where disaggregated serving's instances sit: sets of x prefill and y decode instances,
 * the larger instances first in a set, each on GPUs aligned to its size (a tensor group within
 * a node), the sets side by side in the budget.
 */
struct DisaggregatedPlacement
{
    uint64_t prefillGpus = 1; //!< the GPUs of a prefill instance
    uint64_t decodeGpus = 1;  //!< the GPUs of a decode instance
    uint64_t prefill = 0;     //!< prefill instances in a set
    uint64_t decode = 0;      //!< decode instances in a set
    uint64_t prefillAt = 0;   //!< a set's first prefill GPU, from the set's first
    uint64_t decodeAt = 0;    //!< its first decode GPU
    uint64_t span = 0;        //!< the GPUs from one set to the next
    uint64_t sets = 1;        //!< the sets in the budget

    /**
     * \param prefillGpus GPUs of a prefill instance \param decodeGpus of a decode instance
     * \param x prefill instances of a set \param y decode instances \param budget GPUs
     * \param copies as many sets as the budget holds, or one
     * \return the placement, or nothing where one set ends past the budget
     */
    static std::optional<DisaggregatedPlacement> Place(uint64_t prefillGpus,
                                                       uint64_t decodeGpus,
                                                       uint64_t x,
                                                       uint64_t y,
                                                       uint64_t budget,
                                                       bool copies);

    /** \return the first GPU of prefill instance \p k (of every set's, set by set) */
    uint64_t PrefillFirst(uint64_t k) const;
    /** \return the first GPU of decode instance \p k */
    uint64_t DecodeFirst(uint64_t k) const;
    /** \return the GPUs the instances take */
    uint64_t Used() const;
};

/**
 * \param prefill a prefill instance's job \param decode a decode instance's job
 * \param prefillFirst the prefill instance's first GPU \param decodeFirst the decode one's
 * \return the transfers that move one request's KV cache (its prompt's keys and values, or
 * MLA's latent; a sliding-window layer's window) from the prefill instance's ranks to the decode
 * instance's: every decode rank receives each of its layers' KV heads from a prefill rank
 * holding them (of several replicas of a head, taken in turn), tensor ranks adjacent within a
 * stage
 */
std::vector<ProbeTransfer> KvCacheTransfers(const ResolvedJob& prefill,
                                            const ResolvedJob& decode,
                                            uint32_t prefillFirst,
                                            uint32_t decodeFirst);

/**
 * \ingroup rapid-llm
 * \brief The time one whole prompt's KV cache takes from a prefill instance to a decode
 * instance, alone on the network, for any pair of a placement.
 *
 * A transfer is replayed on the network once per class of pair and kept: the two instances'
 * offsets within their first-dimension groups (a node) and how many groups apart they start,
 * pairs further apart than an instance spans counting as one class (their paths cross the same
 * kinds of links; only the switch hops differ). With link faults every pair is its own class.
 */
class KvHandoverTimes
{
  public:
    /**
     * \param network the cluster's network \param gpus its endpoints (the budget)
     * \param backend network backend \param routing routing policy ("": the spec's)
     */
    KvHandoverTimes(const NetworkSpec& network,
                    uint32_t gpus,
                    std::string backend,
                    std::string routing);

    /**
     * \param prefillLayout, decodeLayout the two layouts' identities (jobs of one study)
     * \param prefill, decode their jobs \param prefillFirst, decodeFirst the instances' first
     * GPUs \return the transfer's time, s
     */
    double Between(uint64_t prefillLayout,
                   uint64_t decodeLayout,
                   const ResolvedJob& prefill,
                   const ResolvedJob& decode,
                   uint64_t prefillFirst,
                   uint64_t decodeFirst);

    /**
     * \return the mean of Between over every prefill and decode instance pair of \p at: a
     * request's transfer where its prefill and its decode instance are dealt independently
     */
    double Mean(uint64_t prefillLayout,
                uint64_t decodeLayout,
                const ResolvedJob& prefill,
                const ResolvedJob& decode,
                const DisaggregatedPlacement& at);

    /** \return the transfers replayed so far (one per class met) */
    std::size_t Probes() const;

  private:
    /** prefill and decode layouts, offsets in a group, group distance (or kApart) */
    using Key = std::tuple<uint64_t, uint64_t, uint64_t, uint64_t, int64_t>;

    /** \return the class of the pair starting at these GPUs */
    Key ClassOf(uint64_t prefillLayout,
                uint64_t decodeLayout,
                uint64_t reach,
                uint64_t prefillFirst,
                uint64_t decodeFirst) const;
    /** \return the groups an instance of \p gpus GPUs may reach into beyond its first */
    uint64_t Reach(uint64_t prefillGpus, uint64_t decodeGpus) const;

    NetworkSpec m_network;
    uint32_t m_gpus;
    std::string m_backend;
    std::string m_routing;
    uint64_t m_group; //!< GPUs of a first-dimension group (the budget where it has none)
    bool m_exact;     //!< every pair its own class (link faults)
    std::map<Key, double> m_times;
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_KV_HANDOVER_H
