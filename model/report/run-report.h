/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_RUN_REPORT_H
#define RAPIDLLM_RUN_REPORT_H

#include "ns3/memory-model.h"
#include "ns3/report-json.h"

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief Where one rank's step went: its stream's busy time, its idle time waiting on pipeline
 * receives, the rest of its idle time (communication the schedule did not hide).
 */
struct RankBreakdown
{
    uint32_t rank = 0;       //!< the rank (GPU)
    double finishS = 0;      //!< when it finished, from the step's start
    double computeS = 0;     //!< compute stream busy
    double exposedCommS = 0; //!< waiting on communication
    double bubbleS = 0;      //!< waiting on pipeline receives
    double hostWaitS = 0;    //!< waiting for the host to issue a ready kernel
    double smSharingS = 0;   //!< of computeS: kernel time added by SMs collectives held
    int32_t stage = -1;      //!< its pipeline stage (-1: not known, a replay of given traces)
};

/**
 * \ingroup rapid-llm
 * \brief The step's critical path (CriticalPath): the chain of operators across ranks that
 * set its time, each starting when the one before it ended, so its parts add up to the step.
 * Where the critical rank's breakdown shows a wait (a bubble, a collective's slowest member),
 * this shows what was waited for.
 */
struct PathBreakdown
{
    bool known = false;        //!< whether the replay walked it
    double computeS = 0;       //!< kernels
    double communicationS = 0; //!< collectives and transfers, from their last member's post
    double hostS = 0;          //!< hosts issuing operators
    double otherS = 0;         //!< other timed nodes of a trace (memory copies)
    std::map<uint32_t, double> computeByRankS;        //!< of computeS, by rank (a simulated one)
    std::map<uint32_t, double> computeByStageS;       //!< of computeS, by stage (empty for traces)
    std::map<std::string, double> communicationByOpS; //!< of communicationS, by operator
};

/**
 * \ingroup rapid-llm
 * \brief The answer to "how long does this step take on that cluster, and why": what
 * `rapid-llm run` and `replay` print. Field names are a contract for scripts.
 */
struct RunReport
{
    std::string mode = "training"; //!< training, inference, or replay (traces of unknown kind)
    bool feasible = true;          //!< the memory verdict
    std::string reason;            //!< why not, when infeasible
    double stepTimeS = 0;          //!< training: one iteration; inference: the whole request
    double ttftS = 0;              //!< inference: time to first token
    double tpotS = 0;              //!< inference: time per output token after the first
    bool tpotDefined = true;       //!< inference: false with one generated token (no time
                                   //!< between tokens: tpotS is 0, reported as none)
    bool haveTokens = false;       //!< ttftS, tpotS, tokensPerSPerGpu set (also for a replay)
    double tokensPerSPerGpu = 0;   //!< inference: generated tokens (all requests) per s and GPU
    double tflopsPerGpu = 0;       //!< training: Megatron-LM's FLOPs / (GPUs x step time)
    bool tflopsRecomputed = false; //!< tflopsPerGpu counts recomputed FLOPs (as Megatron-LM)
    double mfu = 0;                //!< training: model FLOPs (no recompute) / (GPUs x step x peak)
    double peakTflops = 0;         //!< training: the peak MFU divides by, TFLOP/s (0: not known)
    bool haveMemory = false;       //!< whether the memory fields are known
    RankMemory memory;             //!< the rank with the highest peak
    std::vector<RankMemory> memoryStages; //!< every pipeline stage's (memory.stage's among them)
    uint64_t capacityBytes = 0;           //!< device memory per GPU
    std::string memoryAssumption;         //!< the framework assumption behind the memory figures
    double computeS = 0;                  //!< critical rank: compute stream busy
    double exposedCommS = 0;              //!< critical rank: waiting on communication
    double bubbleS = 0;                   //!< critical rank: waiting on pipeline receives
    double hostWaitS = 0; //!< critical rank: waiting for the host to issue a ready kernel
    /** Of exposedCommS, by the communication operator the critical rank waited for (its name) */
    std::map<std::string, double> exposedCommByOpS;
    uint32_t criticalRank = 0;     //!< the rank that finishes last
    PathBreakdown criticalPath;    //!< what the step's time went to, across ranks
    bool haveComputeKinds = false; //!< whether the compute split below is known
    double gemmS = 0;              //!< critical rank: GEMM kernels
    double attentionS = 0;         //!< critical rank: attention kernels
    std::string attentionKernel;   //!< the attention kernels that ran (flash, flash3, triton2022,
                                   //!< standard; empty when the traces do not say)
    double elementwiseS = 0;       //!< critical rank: norms, activations, embedding, loss, ...
    double optimizerS = 0;         //!< critical rank: optimizer step
    double smSharingS = 0; //!< critical rank: kernel time added by SMs overlapping collectives held
    bool haveEnergy = false;      //!< whether the energy fields are known (a power model)
    double energyJ = 0;           //!< GPU energy of the step, all GPUs, J
    double energyPerTokenJ = 0;   //!< inference: energyJ per generated token (all requests)
    double avgPowerW = 0;         //!< energyJ / (GPUs x step time)
    double idleEnergyJ = 0;       //!< of energyJ: idle power over the step
    double computeEnergyJ = 0;    //!< of energyJ: kernels' dynamic energy
    double nvlinkEnergyJ = 0;     //!< of energyJ: bytes sent over NVLink
    double networkEnergyJ = 0;    //!< of energyJ: bytes sent over the network
    uint32_t gpus = 0;            //!< GPUs in the job
    std::string backend = "flow"; //!< network backend
    uint64_t dataPackets = 0;    //!< packet backend: TCP data segments delivered (0: none, or flow)
    uint64_t droppedPackets = 0; //!< packet backend: packets dropped (TCP then retransmits them)
    uint32_t connections = 0;    //!< packet backend: TCP connections opened
    std::vector<RankBreakdown> ranks; //!< every rank's breakdown, by rank (not in ToJson/ToText:
                                      //!< `run --per-rank` adds it; see RanksToText)
    double wallTimeS = 0;             //!< wall-clock time of the prediction (not in ToJson/ToText:
                                      //!< the same inputs give the same report)

    /** \return the memory verdict (meaningful when haveMemory) */
    MemoryReport Memory() const;
    /** \return the report as JSON text (DumpJson of to_json; fields as documented in doc/) */
    std::string ToJson() const;
    /** \return the report as text for a person */
    std::string ToText() const;
    /** \return the critical path's lines of ToText (criticalPath) */
    std::string CriticalPathToText() const;
    /**
     * \return up to four of \p parts (name, seconds), largest first, as "name 0.0123 s", those
     * that print as 0.0000 s left out, and the rest as "N more 0.0012 s": the text's lists of
     * operators waited for and of the critical path's parts
     */
    static std::string LargestParts(std::vector<std::pair<std::string, double>> parts);
    /** \return the per-rank table (ranks) as text for a person, one line per rank */
    std::string RanksToText() const;
    /**
     * \return the index in ranks of the rank busiest with its own work (compute, exposed
     * communication and host waits; the lowest rank of a tie), or ranks.size() without ranks.
     * With pipeline stages of unequal work the step's last rank (criticalRank, usually the
     * first stage) spends the difference as bubble; the busiest rank says which stage it waits
     * for.
     */
    std::size_t BusiestRank() const;
    /** \return exposedCommByOpS, the operators waited for longest first (ties by name): the
     *  text's "waiting on" line and the CSV's waiting_on */
    std::vector<std::pair<std::string, double>> WaitsByDuration() const;
};

/**
 * \brief The report as JSON: mode, verdict, times, the memory object (the same as
 * `rapid-llm memory --json` prints), the breakdown of the critical rank, and with a power model
 * the step's energy (energy_j, energy_per_token_j for inference, avg_power_w, energy_breakdown_j).
 * No wall time, so that identical inputs give identical output.
 * \param j the JSON value to fill \param r the report
 */
void to_json(Json& j, const RunReport& r);

/**
 * \brief One rank's breakdown as JSON: rank, finish_s and breakdown_s (compute,
 * exposed_communication, pipeline_bubble, as the report's own breakdown_s).
 * \param j the JSON value to fill \param r the rank
 */
void to_json(Json& j, const RankBreakdown& r);

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_RUN_REPORT_H
