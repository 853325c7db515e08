/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "run-report.h"

#include <algorithm>
#include <cstdio>

namespace ns3 {
namespace rapidllm {

namespace {

/** \return \p v printed with \p fmt (one number) */
std::string
Num(const char* fmt, double v)
{
    char buffer[64];
    std::snprintf(buffer, sizeof(buffer), fmt, v);
    return std::string(buffer);
}

/** \return a line of the text report: the label in its column, then the value */
std::string
Line(const char* label, const std::string& value)
{
    char buffer[32];
    std::snprintf(buffer, sizeof(buffer), "  %-24s ", label);
    return buffer + value + "\n";
}

} // namespace

MemoryReport
RunReport::Memory() const
{
    MemoryReport m;
    m.feasible = feasible;
    m.reason = reason;
    m.capacity = capacityBytes;
    m.worst = memory;
    m.stages = memoryStages;
    m.assumption = memoryAssumption;
    return m;
}

std::string
RunReport::ToJson() const
{
    return DumpJson(*this);
}

void
to_json(Json& j, const RunReport& r)
{
    j = Json::object();
    j["mode"] = r.mode;
    // A replayed trace set carries no memory: no verdict (null), rather than "fits".
    j["feasible"] = r.haveMemory || !r.feasible ? Json(r.feasible) : Json(nullptr);
    if (!r.feasible)
    {
        j["reason"] = r.reason;
    }
    j["step_time_s"] = r.stepTimeS;
    if (r.haveTokens)
    {
        j["ttft_s"] = r.ttftS;
        // Undefined with one generated token: null, not a time of 0.
        j["tpot_s"] = r.tpotDefined ? Json(r.tpotS) : Json(nullptr);
        j["tokens_per_s_per_gpu"] = r.tokensPerSPerGpu;
    }
    if (r.mode == "training")
    {
        j["tflops_per_gpu"] = r.tflopsPerGpu;
        j["mfu"] = r.mfu;
    }
    if (r.haveMemory)
    {
        j["memory"] = r.Memory();
    }
    j["breakdown_s"] = {{"compute", r.computeS},
                        {"exposed_communication", r.exposedCommS},
                        {"pipeline_bubble", r.bubbleS},
                        {"host", r.hostWaitS}};
    j["exposed_communication_by_op_s"] = r.exposedCommByOpS;
    if (r.haveComputeKinds)
    {
        j["compute_by_kind_s"] = {{"gemm", r.gemmS},
                                  {"attention", r.attentionS},
                                  {"elementwise", r.elementwiseS},
                                  {"optimizer", r.optimizerS},
                                  {"sm_sharing", r.smSharingS}};
        if (!r.attentionKernel.empty())
        {
            j["attention_kernel"] = r.attentionKernel;
        }
    }
    if (r.haveEnergy)
    {
        j["energy_j"] = r.energyJ;
        if (r.mode == "inference")
        {
            j["energy_per_token_j"] = r.energyPerTokenJ;
        }
        j["avg_power_w"] = r.avgPowerW;
        j["energy_breakdown_j"] = {{"idle", r.idleEnergyJ},
                                   {"compute", r.computeEnergyJ},
                                   {"nvlink", r.nvlinkEnergyJ},
                                   {"network", r.networkEnergyJ}};
    }
    j["critical_rank"] = r.criticalRank;
    if (r.criticalPath.known)
    {
        const PathBreakdown& p = r.criticalPath;
        auto byNumber = [](const std::map<uint32_t, double>& parts)
        {
            Json j = Json::object();
            for (const auto& [n, seconds] : parts)
            {
                j[std::to_string(n)] = seconds;
            }
            return j;
        };
        Json path = {{"breakdown_s",
                      {{"compute", p.computeS},
                       {"communication", p.communicationS},
                       {"host", p.hostS},
                       {"other", p.otherS}}},
                     {"compute_by_rank_s", byNumber(p.computeByRankS)},
                     {"communication_by_op_s", p.communicationByOpS}};
        if (!p.computeByStageS.empty())
        {
            path["compute_by_stage_s"] = byNumber(p.computeByStageS);
        }
        j["critical_path"] = path;
    }
    if (r.BusiestRank() < r.ranks.size())
    {
        j["busiest_rank"] = r.ranks[r.BusiestRank()].rank;
    }
    j["gpus"] = r.gpus;
    j["backend"] = r.backend;
    if (r.connections > 0)
    {
        j["packets"] = {
            {"data", r.dataPackets}, {"dropped", r.droppedPackets}, {"connections", r.connections}};
    }
}

void
to_json(Json& j, const RankBreakdown& r)
{
    j = Json::object();
    j["rank"] = r.rank;
    if (r.stage >= 0)
    {
        j["stage"] = r.stage;
    }
    j["finish_s"] = r.finishS;
    j["breakdown_s"] = {{"compute", r.computeS},
                        {"exposed_communication", r.exposedCommS},
                        {"pipeline_bubble", r.bubbleS},
                        {"host", r.hostWaitS}};
}

std::vector<std::pair<std::string, double>>
RunReport::WaitsByDuration() const
{
    std::vector<std::pair<std::string, double>> ops(exposedCommByOpS.begin(),
                                                    exposedCommByOpS.end());
    std::stable_sort(ops.begin(),
                     ops.end(),
                     [](const auto& a, const auto& b)
                     {
                         return a.second > b.second;
                     });
    return ops;
}

std::string
RunReport::LargestParts(std::vector<std::pair<std::string, double>> parts)
{
    std::stable_sort(parts.begin(),
                     parts.end(),
                     [](const auto& a, const auto& b)
                     {
                         return a.second > b.second;
                     });
    std::string text;
    std::size_t shown = 0;
    double rest = 0;
    for (const auto& [name, seconds] : parts)
    {
        // At most four, and none that prints as 0.0000 s (a wait of microseconds).
        if (shown < 4 && seconds >= 5e-5)
        {
            text += (shown++ > 0 ? ", " : "") + name + Num(" %.4f s", seconds);
        }
        else
        {
            rest += seconds;
        }
    }
    if (shown > 0 && shown < parts.size())
    {
        text += ", " + std::to_string(parts.size() - shown) + " more" + Num(" %.4f s", rest);
    }
    return text;
}

std::string
RunReport::CriticalPathToText() const
{
    // Stages and ranks by number where their times tie ("stage 2" before "stage 10").
    auto numbered = [](const std::map<uint32_t, double>& parts, const std::string& prefix)
    {
        std::vector<std::pair<std::string, double>> named;
        for (const auto& [n, seconds] : parts)
        {
            named.emplace_back(prefix + std::to_string(n), seconds);
        }
        return named;
    };
    const PathBreakdown& p = criticalPath;
    std::string text =
        Line("critical path",
             Num("compute %.4f s, ", p.computeS) + Num("communication %.4f s", p.communicationS)
                 + (p.hostS > 0 ? Num(", host %.4f s", p.hostS) : "")
                 + (p.otherS > 0 ? Num(", other %.4f s", p.otherS) : "") + ", ending on rank "
                 + std::to_string(criticalRank));
    if (p.computeByStageS.size() > 1)
    {
        text += Line("  compute by stage", LargestParts(numbered(p.computeByStageS, "stage ")));
    }
    // By rank where the stages do not say it: a replay of traces, or a stage's work on the
    // path done by more than one of its ranks (a straggler's, then another's).
    if (p.computeByRankS.size() > std::max<std::size_t>(1, p.computeByStageS.size()))
    {
        text += Line("  compute by rank", LargestParts(numbered(p.computeByRankS, "rank ")));
    }
    const std::string onIt = LargestParts(std::vector<std::pair<std::string, double>>(
        p.communicationByOpS.begin(), p.communicationByOpS.end()));
    if (!onIt.empty())
    {
        text += Line("  communication on it", onIt);
    }
    return text;
}

std::size_t
RunReport::BusiestRank() const
{
    std::size_t busiest = ranks.size();
    double most = -1;
    for (std::size_t i = 0; i < ranks.size(); ++i)
    {
        const double busy = ranks[i].computeS + ranks[i].exposedCommS + ranks[i].hostWaitS;
        if (busy > most)
        {
            most = busy;
            busiest = i;
        }
    }
    return busiest;
}

std::string
RunReport::RanksToText() const
{
    // The four parts add up to the finish (host: waits for the host to issue a kernel).
    std::string text =
        "  per rank:    rank   finish_s  compute_s  exposed_s   bubble_s     host_s\n";
    for (const auto& r : ranks)
    {
        char buffer[160];
        std::snprintf(buffer,
                      sizeof(buffer),
                      "            %6u %10.4f %10.4f %10.4f %10.4f %10.4f\n",
                      r.rank,
                      r.finishS,
                      r.computeS,
                      r.exposedCommS,
                      r.bubbleS,
                      r.hostWaitS);
        text += buffer;
    }
    return text;
}

std::string
RunReport::ToText() const
{
    const double gib = double(1ull << 30);
    // An inference job's step is the whole request: the prefill and every decode step.
    const bool inference = haveTokens;
    std::string text = Line(inference ? "request time" : "step time", Num("%.4f s", stepTimeS));
    if (inference)
    {
        text += Line("time to first token", Num("%.2f ms", ttftS * 1e3));
        text += Line("time per output token",
                     tpotDefined ? Num("%.2f ms", tpotS * 1e3) : "n/a (one generated token)");
        // Three significant digits below 100, trailing zeros kept (a 512k-token request's 0.015
        // printed as 0.0; 13.95 as "14", which read as two).
        text +=
            Line("throughput",
                 Num(tokensPerSPerGpu >= 100 || tokensPerSPerGpu == 0 ? "%.1f tokens/s per GPU"
                                                                      : "%#.3g tokens/s per GPU",
                     tokensPerSPerGpu));
    }
    if (mode == "training")
    {
        // Megatron-LM's count includes the recomputed forward, which MFU leaves out: said, so
        // that a TFLOP/s above MFU x peak does not read as a contradiction.
        // Above the peak only by counting the whole attention matrix (as the papers do), where
        // causal kernels compute half: said, so that it does not read as a wrong answer.
        const bool abovePeak = peakTflops > 0 && tflopsPerGpu > peakTflops;
        text += Line(
            "TFLOP/s per GPU",
            Num("%.1f", tflopsPerGpu)
                + (tflopsRecomputed ? " (recomputation included, as Megatron-LM counts)" : "")
                + (abovePeak ? " (above the " + Num("%.0f", peakTflops)
                                   + " peak: the count has the whole attention matrix, of which "
                                     "causal kernels compute half)"
                             : ""));
        text += Line("MFU", Num("%.1f %%", mfu * 100));
    }
    text += Line("compute", Num("%.4f s", computeS));
    text += Line("exposed communication", Num("%.4f s", exposedCommS));
    // The operators waited for longest first.
    const std::string waited = LargestParts(WaitsByDuration());
    if (!waited.empty())
    {
        text += Line("  waiting on", waited);
    }
    text += Line("pipeline bubble", Num("%.4f s", bubbleS));
    if (BusiestRank() < ranks.size())
    {
        // Where the last rank's bubble comes from when the stages' work differs: the stage it
        // waits for (shown when that rank is busier by more than 1% of the step).
        const RankBreakdown& b = ranks[BusiestRank()];
        const double busy = b.computeS + b.exposedCommS + b.hostWaitS;
        if (b.rank != criticalRank
            && busy - (computeS + exposedCommS + hostWaitS) > 0.01 * stepTimeS)
        {
            text += Line("  busiest rank",
                         std::to_string(b.rank)
                             + (b.stage >= 0 ? " (stage " + std::to_string(b.stage) + ")" : "")
                             + Num(": compute %.4f s, ", b.computeS)
                             + Num("exposed communication %.4f s, ", b.exposedCommS)
                             + Num("bubble %.4f s", b.bubbleS));
        }
    }
    if (hostWaitS > 0)
    {
        text += Line("waiting for the host", Num("%.4f s", hostWaitS));
    }
    if (criticalPath.known)
    {
        text += CriticalPathToText();
    }
    if (haveComputeKinds)
    {
        text += Line("compute by kind",
                     Num("gemm %.4f s, ", gemmS)
                         + (attentionKernel.empty() ? std::string("attention")
                                                    : "attention (" + attentionKernel + ")")
                         + Num(" %.4f s, ", attentionS) + Num("element-wise %.4f s", elementwiseS)
                         + (inference ? std::string() : Num(", optimizer %.4f s", optimizerS))
                         + (smSharingS > 0 ? Num(", communication's SMs %.4f s", smSharingS) : ""));
    }
    if (haveEnergy)
    {
        // Four significant digits, always in one form (%.4g gave "9e+06" and "2.404e+04").
        text += Line(inference ? "energy, all GPUs" : "energy per step", Num("%.3e J", energyJ));
        if (mode == "inference")
        {
            text += Line("energy per token", Num("%.3e J", energyPerTokenJ));
        }
        text += Line("average power per GPU", Num("%.1f W", avgPowerW));
    }
    if (haveMemory)
    {
        text += Line("peak memory per GPU",
                     Num("%.2f GiB", memory.peak / gib) + Num(" of %.2f GiB", capacityBytes / gib)
                         + (feasible ? ", fits" : ", DOES NOT FIT: " + reason));
    }
    text += Line("GPUs", std::to_string(gpus));
    text +=
        Line("backend",
             backend
                 + (connections == 0 ? std::string()
                                     : " (" + std::to_string(dataPackets) + " data packets, "
                                           + std::to_string(droppedPackets) + " dropped, "
                                           + std::to_string(connections) + " TCP connections)"));
    return text;
}

} // namespace rapidllm
} // namespace ns3
