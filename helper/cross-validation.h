/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_CROSS_VALIDATION_H
#define RAPIDLLM_CROSS_VALIDATION_H

#include "ns3/callback.h"
#include "ns3/collective-schedule.h"
#include "ns3/network-backend.h"
#include "ns3/network-spec.h"

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief One cross-validation workload: a network and the traffic to run on it, identical for
 * every backend.
 */
struct XvalWorkload
{
    std::string name;        //!< row name, e.g. "ring-allreduce-8gpu-1MiB"
    std::string description; //!< one line: what and on which network
    bool quick = false;      //!< small enough for CI (`--quick`, the test suite)
    NetworkSpec network;     //!< the network (faults included)
    uint32_t endpoints = 0;  //!< GPUs the topology is built for
    /** The (source, destination) pairs the traffic uses (connections opened before start). */
    std::function<std::vector<std::pair<uint32_t, uint32_t>>(const Topology&)> pairs;
    /**
     * Starts the traffic now on the backend (topology and routing set) and calls the second
     * argument when it has finished. A trace-replay workload plugs in here.
     */
    std::function<void(Ptr<NetworkBackend>, std::function<void()>)> start;
};

/**
 * \ingroup rapid-llm
 * \brief One backend's run of a workload.
 */
struct XvalRun
{
    double timeS = 0;         //!< simulated completion time, from the start to the end
    double wallS = 0;         //!< wall-clock seconds of the whole run (build to destroy)
    uint64_t messages = 0;    //!< messages sent
    uint64_t dataPackets = 0; //!< packet backend: TCP data segments delivered
    uint64_t drops = 0;       //!< packet backend: queue drops
};

/**
 * \ingroup rapid-llm
 * \brief A row of the cross-validation table.
 */
struct XvalRow
{
    std::string workload; //!< its name
    XvalRun flow;         //!< the flow-level network
    XvalRun packet;       //!< the ns-3 packet-level network
    double relDiff = 0;   //!< (flow - packet) / packet
};

/**
 * \brief Makes a workload that runs a collective schedule (the CollectiveEngine issues it to
 * the backend exactly as any caller would).
 * \param schedule the message graph \param endpoints endpoint of each rank
 * \return the start and pairs functions of an XvalWorkload
 */
XvalWorkload ScheduleWorkload(const CollectiveSchedule& schedule,
                              const std::vector<uint32_t>& endpoints);

/**
 * \return the (source, destination) endpoint pairs of a schedule's messages, sorted; a pair
 * with unordered messages twice (NetworkBackend::Prepare opens a connection per listing)
 */
std::vector<std::pair<uint32_t, uint32_t>> SchedulePairs(const CollectiveSchedule& schedule,
                                                         const std::vector<uint32_t>& endpoints);

/**
 * \brief The cross-validation table's workloads, in order (the built-in rows, then those
 * added with RegisterXvalWorkload).
 * \param quickOnly only the rows small enough for CI
 * \return the workloads
 */
std::vector<XvalWorkload> XvalWorkloads(bool quickOnly);

/**
 * \brief Adds a workload to the table from other code (e.g. a training step replayed from
 * Chakra traces), without editing this file. Call before XvalWorkloads().
 * \param factory makes the workload (called each time the table is built)
 */
void RegisterXvalWorkload(std::function<XvalWorkload()> factory);

/**
 * \ingroup rapid-llm
 * \brief Registers a cross-validation workload at static-initialization time, from the file
 * that defines it: `static XvalWorkloadRegistrar g_step(MakeTrainingStepWorkload);`
 */
class XvalWorkloadRegistrar
{
  public:
    /** \param factory makes the workload (see RegisterXvalWorkload) */
    explicit XvalWorkloadRegistrar(std::function<XvalWorkload()> factory)
    {
        RegisterXvalWorkload(std::move(factory));
    }
};

/**
 * \brief Runs a workload on one backend: builds the topology and routing, prepares the
 * backend for the workload's pairs (NetworkBackend::Prepare), runs the simulator from there
 * and destroys it.
 * \param workload the workload \param backend "flow", "packet" or a backend TypeId name
 * \param configure called with the backend before use (attributes), may be null
 * \return the run; throws SpecError if the workload does not complete
 */
XvalRun RunXvalWorkload(const XvalWorkload& workload,
                        const std::string& backend,
                        std::function<void(Ptr<NetworkBackend>)> configure = nullptr);

/**
 * \brief Runs a workload on both backends (the flow backend three times, keeping the fastest
 * wall time: its runs are short enough for wall-clock noise to dominate).
 * \param workload the workload
 * \return the row
 */
XvalRow CrossValidate(const XvalWorkload& workload);

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_CROSS_VALIDATION_H
