/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_FAULT_OPTIONS_H
#define RAPIDLLM_FAULT_OPTIONS_H

#include "ns3/fault-schedule.h"
#include "ns3/hardware-spec.h"
#include "ns3/network-spec.h"
#include "ns3/ptr.h"
#include "ns3/spec-override.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief One link fault as the `--fault` option gives it: SELECTOR[:FACTOR][@TIME].
 */
struct FaultOption
{
    std::string selector; //!< "A-B", "A>B", "A" or "tier:NAME" (Topology::SelectLinks)
    double factor = 0;    //!< 0 (dead) or in [LinkFaultSpec::kMinFactor, 1]
    bool timed = false;   //!< whether it starts mid-run (@TIME)
    double startS = 0;    //!< when it starts (seconds from the start of the run)
};

/**
 * \brief Parses the `--fault` option (the one parser of the commands that run the network:
 * `run`, `replay`, the studies, `sweep` and `collective`, the last two rejecting @TIME;
 * `memory` and `trace` do not take it): comma-separated items SELECTOR[:FACTOR][@TIME]. SELECTOR is
 * "A-B" (both directions), "A>B" (one direction), "A" (every link of node A) or
 * "tier:NAME" (every link of a network dimension); nodes are "gpu<i>" or switch names.
 * FACTOR is the bandwidth left: 0 = dead (the default when it is omitted), else within
 * [1e-6, 1] (LinkFaultSpec::kMinFactor; smaller factors are rejected: use 0). TIME (e.g.
 * 250ms, 1.5s, 20us, 100ns; a bare number is seconds) starts the fault mid-run.
 * \param text the option's value
 * \param source where it came from, for errors ("command line")
 * \param option the option's name, the field of the SpecError
 * \return the faults, in order; throws SpecError naming the item and what is allowed
 */
std::vector<FaultOption> ParseFaultOption(const std::string& text,
                                          const std::string& source,
                                          const std::string& option = "fault");

/**
 * \brief Splits faults into those present from the start (appended to \p network's faults) and
 * those that start mid-run (added to \p schedule, created when needed).
 * \param faults the faults \param network the hardware's network
 * \param schedule set to a schedule of the timed faults (left null when there are none)
 * \param source where they came from, for errors
 */
void AddFaults(const std::vector<FaultOption>& faults,
               NetworkSpec& network,
               Ptr<FaultSchedule>& schedule,
               const std::string& source);

/**
 * \brief Checks that every fault's selector names links of \p network built for \p gpus GPUs
 * (before the faults are added to it), so that an unknown node or tier is reported against the
 * option rather than the hardware file the faults end up in.
 * \param faults the faults \param network the healthy network \param gpus the GPU count
 * \param name the hardware's name \param source where the faults came from \param option
 * the option's name; throws SpecError(source, option, what is wrong and what exists)
 */
void CheckFaultSelectors(const std::vector<FaultOption>& faults,
                         const NetworkSpec& network,
                         uint32_t gpus,
                         const std::string& name,
                         const std::string& source,
                         const std::string& option = "fault");

/**
 * \brief Checks the hardware file's own faults (network.faults, the first \p count) against
 * \p network without faults built for \p gpus GPUs, so that an unknown node or link is
 * reported against the file and the list entry (the topology that applies them knows only the
 * machine's name). Throws SpecError(file, "network.faults[i].link", what exists).
 * \param network the network with its faults \param count how many of them are the file's
 * \param gpus the GPU count \param name the hardware's name \param file its file or preset
 */
void CheckHardwareFaults(const NetworkSpec& network,
                         std::size_t count,
                         uint32_t gpus,
                         const std::string& name,
                         const std::string& file);

/** \return the faults as the option writes them ("gpu0-gpu1:0.5@1ms,tier:infiniband:0.5") */
std::string FaultOptionText(const std::vector<FaultOption>& faults);

/**
 * \brief Parses --slow-gpus: gpu<i>:SPEED[,...], GPUs that compute slower than the others (a
 * straggler), SPEED the share of its compute speed left, from 1e-6 (TraceReplayer::kMinSpeed) to 1.
 * \param text the option's value \param gpus the job's GPUs (i must be below)
 * \param source where it came from, for errors ("command line")
 * \return GPU -> speed; throws SpecError (field slow-gpus) naming the item and what is allowed
 */
std::map<uint32_t, double> ParseSlowGpus(const std::string& text,
                                         uint64_t gpus,
                                         const std::string& source);

/**
 * \brief Parses --gpu-set: gpu<i>:PATH=VALUE[,PATH=VALUE...][;gpu<j>:...], GPUs of their own
 * spec, each PATH a gpu. field (SpecOverride syntax; the values are checked when applied).
 * \param text the option's value ("" = none) \param gpus the job's GPUs (i must be below)
 * \param source where it came from, for errors
 * \return GPU -> its overrides; throws SpecError (field gpu-set) naming the item
 */
std::map<uint32_t, std::vector<SpecOverride>> ParseGpuSets(const std::string& text,
                                                           uint64_t gpus,
                                                           const std::string& source);

/**
 * \brief One GPU of its own spec: the hardware loaded with the job's overrides and then the GPU's
 * own (ParseGpuSets), its GPU taken.
 * \param source the hardware (preset or file) \param overrides the job's, then the GPU's
 * \param gpu the GPU's index
 * \param origin where the option came from, for errors ("command line")
 * \return its spec; throws SpecError (field gpu-set) naming the GPU and the field
 */
GpuSpec GpuVariantOf(const std::string& source,
                     const std::vector<SpecOverride>& overrides,
                     uint32_t gpu,
                     const std::string& origin);

/** \return the slow GPUs as --slow-gpus writes them ("gpu1:0.5,gpu3:0.9") */
std::string SlowGpusText(const std::map<uint32_t, double>& speeds);

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_FAULT_OPTIONS_H
