/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_COLLECTIVE_PROBE_H
#define RAPIDLLM_COLLECTIVE_PROBE_H

#include "ns3/collective-algorithms.h"
#include "ns3/network-spec.h"
#include "ns3/network-stats.h"
#include "ns3/run-progress.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief A transfer sent with the probed collective, at its start: traffic it shares links
 * with.
 */
struct ProbeTransfer
{
    uint32_t src = 0;   //!< sending rank
    uint32_t dst = 0;   //!< receiving rank
    uint64_t bytes = 0; //!< its size
};

/**
 * \ingroup rapid-llm
 * \brief What to measure: one collective among the first `gpus` ranks of a network.
 */
struct CollectiveProbeConfig
{
    CollectiveOp op = CollectiveOp::ALL_REDUCE; //!< the collective
    uint64_t bytes = 0;                         //!< size, as nccl-tests counts it
    uint32_t gpus = 0;                          //!< ranks 0..gpus-1
    std::string algorithm = "auto";             //!< CollectiveAlgorithmNames()
    std::string routing;                        //!< routing override ("" = the spec's)
    std::vector<LinkFaultSpec> faults;          //!< extra faults ("A-B" selectors)
    uint32_t chunks = 0;                        //!< pipeline pieces (0 = default)
    uint32_t root = 0;                          //!< broadcast / reduce root
    double reduceBytesPerSecond = 0;            //!< local reduction rate (0 = free)
    uint32_t topLinks = 0;                      //!< how many most loaded links to report
    std::string backend = "flow";               //!< network backend (NetworkBackend::Create)
    std::vector<ProbeTransfer> beside;          //!< transfers sent with it (not timed)
    RunProgress* progress = nullptr;            //!< reports the run's progress (optional)
};

/**
 * \ingroup rapid-llm
 * \brief The measured collective, with nccl-tests' bandwidth definitions.
 */
struct CollectiveProbeResult
{
    double timeS = 0;                  //!< completion time, seconds
    double algorithmBandwidthBps = 0;  //!< bytes / time
    double busBandwidthBps = 0;        //!< algorithm bandwidth x BusBandwidthFactor
    std::string algorithm;             //!< algorithm actually used
    std::string routing;               //!< routing policy name
    uint64_t messages = 0;             //!< messages sent
    uint64_t solves = 0;               //!< flow-rate recomputations (flow backend)
    uint64_t solvedFlows = 0;          //!< flows recomputed, summed over recomputations
    bool packet = false;               //!< run on the packet network
    uint64_t dataPackets = 0;          //!< packet network: TCP data segments delivered
    uint64_t drops = 0;                //!< packet network: packets dropped (queues, dead links)
    std::vector<LinkStats> mostLoaded; //!< the busiest links, named
};

/**
 * \brief Builds the topology (sized for the ranks, faults applied), the routing policy and the
 * network backend, runs one collective on ns3::Simulator and measures it (from the time the
 * backend is prepared, see NetworkBackend::Prepare), with its `beside` transfers sent at its
 * start. Runs and destroys the simulator; throws SpecError on bad input (a transfer outside
 * the ranks names the field `beside`), NetworkError on unreachable pairs.
 * \param network the network spec \param config what to run \param source name for errors
 * \return the measurement
 */
CollectiveProbeResult RunCollectiveProbe(const NetworkSpec& network,
                                         const CollectiveProbeConfig& config,
                                         const std::string& source = "network");

/**
 * \brief Times point-to-point transfers started together on a network of \p gpus endpoints,
 * from their start until the last lands (e.g. a request's KV cache moving from the GPUs that
 * prefilled it to those that decode it). Runs and destroys the simulator; throws SpecError on
 * a transfer outside the ranks (field `transfers`), NetworkError on unreachable pairs.
 * \param network the network spec \param gpus endpoints \param transfers what to send
 * \param backend network backend (NetworkBackend::Create) \param routing routing policy ("":
 * the spec's) \param source name for errors
 * \return seconds (0 without transfers)
 */
double RunTransferProbe(const NetworkSpec& network,
                        uint32_t gpus,
                        const std::vector<ProbeTransfer>& transfers,
                        const std::string& backend = "flow",
                        const std::string& routing = "",
                        const std::string& source = "network");

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_COLLECTIVE_PROBE_H
