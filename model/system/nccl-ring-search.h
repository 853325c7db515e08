/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_NCCL_RING_SEARCH_H
#define RAPIDLLM_NCCL_RING_SEARCH_H

#include "ns3/network-spec.h"

#include <cstdint>
#include <vector>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief A ring graph as NCCL's tuning model sees it: channels, each at one bandwidth.
 */
struct NcclRingGraph
{
    uint32_t channels = 0; //!< nChannels after NCCL's duplication
    double channelBps = 0; //!< the graph's bwIntra per channel, bytes/s
};

/**
 * \return NCCL's intra-node speeds (speedArrayIntra, GB/s, fastest first) for GPUs of compute
 * capability \p sm (x10: 80 Ampere, 90 Hopper), from NCCL 2.20.3 src/graph/search.cc
 */
const std::vector<double>& NcclIntraSpeedsGBps(uint32_t sm);

/**
 * \brief NCCL's ring search inside one node behind a switch, where every GPU reaches the switch
 * with \p gpuBps (its NVLink payload rate): the fastest total of channels x speed from its
 * speed list, then ncclTopoDupChannels, then the faster speeds the doubled channels still fit.
 * It makes a hardware variant's faster or slower NVLink reach NCCL's ring as NCCL would find it.
 * \param sm compute capability x10 (80 or 90)
 * \param gpuBps one GPU's NVLink bandwidth to the switch, bytes/s
 * \return the graph (at least one channel)
 */
NcclRingGraph SearchNcclRing(uint32_t sm, double gpuBps);

/**
 * \return the ring graph of dimension \p dim: its `ring_channels` x `channel_GBps` when given
 * (a graph fixed as NCCL_GRAPH_FILE fixes one), else SearchNcclRing on its link's payload rate
 * when it names its GPUs' `sm`; none (0 channels) otherwise
 */
NcclRingGraph RingGraphOf(const NetworkDimensionSpec& dim);

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_NCCL_RING_SEARCH_H
