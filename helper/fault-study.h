/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_FAULT_STUDY_H
#define RAPIDLLM_FAULT_STUDY_H

#include "job-options.h"
#include "ns3/memory-model.h"
#include "ns3/network-stats.h"
#include "ns3/report-json.h"

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief What a fault study varies: which links, how much bandwidth they keep, under which
 * routing policies (every combination is one row).
 */
struct FaultStudyConfig
{
    /** Link sets, one per row group: a selector as --fault takes it ("gpu0-gpu1", "A>B",
     *  "infiniband.spine0.1", "tier:infiniband") or "random:K:SEED" (K links drawn with SEED). */
    std::vector<std::string> links;
    std::vector<double> factors = {1, 0.75, 0.5, 0.25, 0}; //!< bandwidth left (0 = dead)
    std::vector<std::string> routings;                     //!< RoutingPolicy names
    bool symmetry = true;     //!< the replayer's Symmetry (faulted rows replay every rank anyway)
    uint32_t topLinks = 5;    //!< most loaded links kept per row
    uint32_t packetCheck = 0; //!< rows re-run on the packet backend (scaled-down job)
    std::string packet;       //!< the packet network's attributes as given (applied by the caller)
    /** Called after each run (done, of total runs: the healthy ones, the degraded rows and
     *  the packet checks' two each); may be empty. */
    std::function<void(std::size_t done, std::size_t total)> onRun;
};

/**
 * \ingroup rapid-llm
 * \brief One combination: its step time, the slowdown against the healthy run of the same
 * routing policy, the breakdown of the critical rank and the most loaded links; or the error
 * that stopped it (e.g. a dead link a policy cannot route around).
 */
struct FaultStudyRow
{
    std::string routing;                //!< routing policy
    std::string links;                  //!< the link set as given
    std::vector<std::string> selectors; //!< the link selectors it stands for
    double factor = 1;                  //!< bandwidth left
    bool ok = false;                    //!< whether the run finished
    std::string error;                  //!< why not
    double stepTimeS = 0;               //!< step time (training) or request time (inference)
    double slowdown = 0;                //!< stepTimeS / the healthy step time of this routing
    double computeS = 0;                //!< critical rank: compute
    double exposedCommS = 0;            //!< critical rank: exposed communication
    std::map<std::string, double> exposedByOpS; //!< of it, by the operator waited for
    double bubbleS = 0;                         //!< critical rank: pipeline bubble
    double hostS = 0; //!< critical rank: waiting on the host's dispatch (breakdown's fourth part)
    bool inference = false;  //!< the job serves a request
    double ttftS = 0;        //!< inference: time to first token
    double tpotS = -1;       //!< inference: time per output token (-1: one token generated)
    bool haveEnergy = false; //!< whether the GPU has a power model
    double energyJ = 0;      //!< the step's GPU energy, all GPUs
    double avgPowerW = 0;    //!< energyJ / (GPUs x step time)
    std::vector<LinkStats> mostLoaded; //!< the busiest links
};

/**
 * \ingroup rapid-llm
 * \brief One row re-run on both backends with a scaled-down job.
 */
struct PacketCheckRow
{
    std::string routing; //!< routing policy
    std::string links;   //!< the link set
    double factor = 1;   //!< bandwidth left
    double flowS = 0;    //!< scaled-down step on the flow backend
    double packetS = 0;  //!< the same on the packet backend
    double relDiff = 0;  //!< (flow - packet) / packet
    bool ok = false;     //!< whether both finished
    std::string error;   //!< why not
};

/**
 * \ingroup rapid-llm
 * \brief A fault study's result.
 */
struct FaultStudyResult
{
    std::vector<double> healthyS;       //!< per routing (config order): healthy step time
    std::vector<FaultStudyRow> rows;    //!< routing x links x factor, in that order
    std::vector<PacketCheckRow> checks; //!< the packet spot checks
    std::string scaledJob;              //!< the scaled-down job of the checks, in words
    /** The job's memory verdict, the same in every row (faults move no bytes of memory): a job
     *  that does not fit is studied all the same, and says so. */
    MemoryReport memory;
};

/**
 * \brief Runs every combination of a fault study on the flow backend: the job with the links
 * of each set degraded to each factor under each routing policy (faults of the job itself, e.g.
 * from --fault, stay in every row), and the packet spot checks.
 * \param job the job (its hardware's faults stay in every row)
 * \param config what to vary
 * \return the rows; a row that cannot run (a pair unreachable under a policy) carries its
 *         error; throws SpecError on bad input (an unknown policy, a selector that names no
 *         link)
 */
FaultStudyResult RunFaultStudy(const ResolvedJob& job, const FaultStudyConfig& config);

/**
 * \return whether \p links is a GPU set (compute:gpu<i>, hbm:gpu<i>, power:gpu<i>): one GPU
 * varied instead of links
 */
bool IsGpuSet(const std::string& links);

/**
 * \brief The links "random:K:SEED" stands for: K distinct physical links (both directions) of
 * the job's network, drawn reproducibly with SEED; a selector stands for itself.
 * \param hardware the machine \param gpus the job's GPUs \param links the link set
 * \return the selectors; throws SpecError (field "links") on a malformed random:K:SEED
 */
std::vector<std::string> ExpandLinkSet(const HardwareSpec& hardware,
                                       uint32_t gpus,
                                       const std::string& links);

/**
 * \brief Writes DIR/results.csv, DIR/results.json and DIR/slowdown.png (slowdown against the
 * factor, one line per routing policy and link set).
 * \param dir the directory (created) \param job the job (echoed in the JSON)
 * \param config the study \param result its rows
 */
void WriteFaultStudy(const std::string& dir,
                     const ResolvedJob& job,
                     const FaultStudyConfig& config,
                     const FaultStudyResult& result);

/**
 * \return the study as results.json holds it: the input, the job's memory verdict (the object
 * `memory --json` prints), the study, the healthy step time per routing, every row (step time,
 * slowdown, breakdown, most loaded links, or the error) and the packet checks
 */
Json FaultStudyJson(const ResolvedJob& job,
                    const FaultStudyConfig& config,
                    const FaultStudyResult& result);

/** \return the rows as CSV: routing,links,factor,step_time_s,slowdown,... */
std::string FaultStudyCsv(const FaultStudyResult& result);

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_FAULT_STUDY_H
