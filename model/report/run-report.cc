/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "run-report.h"

#include <algorithm>
#include <cstdio>

namespace ns3 {
namespace rapidllm {

MemoryReport
RunReport::Memory() const
{
    MemoryReport m;
    m.feasible = feasible;
    m.reason = reason;
    m.capacity = capacityBytes;
    m.worst = memory;
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
    auto num = [](double v)
    {
        char buffer[64];
        std::snprintf(buffer, sizeof(buffer), " %.4f s", v);
        return std::string(buffer);
    };
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
            text += (shown++ > 0 ? ", " : "") + name + num(seconds);
        }
        else
        {
            rest += seconds;
        }
    }
    if (shown > 0 && shown < parts.size())
    {
        text += ", " + std::to_string(parts.size() - shown) + " more" + num(rest);
    }
    return text;
}

std::string
RunReport::CriticalPathToText() const
{
    auto num = [](const char* fmt, double v)
    {
        char buffer[64];
        std::snprintf(buffer, sizeof(buffer), fmt, v);
        return std::string(buffer);
    };
    auto line = [](const char* label, const std::string& value)
    {
        char buffer[240];
        std::snprintf(buffer, sizeof(buffer), "  %-24s %s\n", label, value.c_str());
        return std::string(buffer);
    };
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
        line("critical path",
             num("compute %.4f s, ", p.computeS) + num("communication %.4f s", p.communicationS)
                 + (p.hostS > 0 ? num(", host %.4f s", p.hostS) : "")
                 + (p.otherS > 0 ? num(", other %.4f s", p.otherS) : "") + ", ending on rank "
                 + std::to_string(criticalRank));
    if (p.computeByStageS.size() > 1)
    {
        text += line("  compute by stage", LargestParts(numbered(p.computeByStageS, "stage ")));
    }
    // By rank where the stages do not say it: a replay of traces, or a stage's work on the
    // path done by more than one of its ranks (a straggler's, then another's).
    if (p.computeByRankS.size() > std::max<std::size_t>(1, p.computeByStageS.size()))
    {
        text += line("  compute by rank", LargestParts(numbered(p.computeByRankS, "rank ")));
    }
    const std::string onIt = LargestParts(std::vector<std::pair<std::string, double>>(
        p.communicationByOpS.begin(), p.communicationByOpS.end()));
    if (!onIt.empty())
    {
        text += line("  communication on it", onIt);
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
    auto line = [](const char* label, const std::string& value)
    {
        char buffer[200];
        std::snprintf(buffer, sizeof(buffer), "  %-24s %s\n", label, value.c_str());
        return std::string(buffer);
    };
    auto num = [](const char* fmt, double v)
    {
        char buffer[64];
        std::snprintf(buffer, sizeof(buffer), fmt, v);
        return std::string(buffer);
    };
    const double gib = double(1ull << 30);
    // An inference job's step is the whole request: the prefill and every decode step.
    const bool inference = haveTokens;
    std::string text = line(inference ? "request time" : "step time", num("%.4f s", stepTimeS));
    if (inference)
    {
        text += line("time to first token", num("%.2f ms", ttftS * 1e3));
        text += line("time per output token",
                     tpotDefined ? num("%.2f ms", tpotS * 1e3) : "n/a (one generated token)");
        // Three significant digits below 100 (a 512k-token request's 0.015 printed as 0.0).
        text += line("throughput",
                     num(tokensPerSPerGpu >= 100 || tokensPerSPerGpu == 0 ? "%.1f tokens/s per GPU"
                                                                          : "%.3g tokens/s per GPU",
                         tokensPerSPerGpu));
    }
    if (mode == "training")
    {
        // Megatron-LM's count includes the recomputed forward, which MFU leaves out: said, so
        // that a TFLOP/s above MFU x peak does not read as a contradiction.
        text += line(
            "TFLOP/s per GPU",
            num("%.1f", tflopsPerGpu)
                + (tflopsRecomputed ? " (recomputation included, as Megatron-LM counts)" : ""));
        text += line("MFU", num("%.1f %%", mfu * 100));
    }
    text += line("compute", num("%.4f s", computeS));
    text += line("exposed communication", num("%.4f s", exposedCommS));
    // The operators waited for longest first.
    const std::string waited = LargestParts(WaitsByDuration());
    if (!waited.empty())
    {
        text += line("  waiting on", waited);
    }
    text += line("pipeline bubble", num("%.4f s", bubbleS));
    if (BusiestRank() < ranks.size())
    {
        // Where the last rank's bubble comes from when the stages' work differs: the stage it
        // waits for (shown when that rank is busier by more than 1% of the step).
        const RankBreakdown& b = ranks[BusiestRank()];
        const double busy = b.computeS + b.exposedCommS + b.hostWaitS;
        if (b.rank != criticalRank
            && busy - (computeS + exposedCommS + hostWaitS) > 0.01 * stepTimeS)
        {
            text += line("  busiest rank",
                         std::to_string(b.rank)
                             + (b.stage >= 0 ? " (stage " + std::to_string(b.stage) + ")" : "")
                             + num(": compute %.4f s, ", b.computeS)
                             + num("exposed communication %.4f s, ", b.exposedCommS)
                             + num("bubble %.4f s", b.bubbleS));
        }
    }
    if (hostWaitS > 0)
    {
        text += line("waiting for the host", num("%.4f s", hostWaitS));
    }
    if (criticalPath.known)
    {
        text += CriticalPathToText();
    }
    if (haveComputeKinds)
    {
        text += line("compute by kind",
                     num("gemm %.4f s, ", gemmS)
                         + (attentionKernel.empty() ? std::string("attention")
                                                    : "attention (" + attentionKernel + ")")
                         + num(" %.4f s, ", attentionS) + num("element-wise %.4f s", elementwiseS)
                         + (inference ? std::string() : num(", optimizer %.4f s", optimizerS))
                         + (smSharingS > 0 ? num(", communication's SMs %.4f s", smSharingS) : ""));
    }
    if (haveEnergy)
    {
        // Four significant digits, always in one form (%.4g gave "9e+06" and "2.404e+04").
        text += line(inference ? "energy, all GPUs" : "energy per step", num("%.3e J", energyJ));
        if (mode == "inference")
        {
            text += line("energy per token", num("%.3e J", energyPerTokenJ));
        }
        text += line("average power per GPU", num("%.1f W", avgPowerW));
    }
    if (haveMemory)
    {
        text += line("peak memory per GPU",
                     num("%.2f GiB", memory.peak / gib) + num(" of %.2f GiB", capacityBytes / gib)
                         + (feasible ? ", fits" : ", DOES NOT FIT: " + reason));
    }
    text += line("GPUs", std::to_string(gpus));
    text +=
        line("backend",
             backend
                 + (connections == 0 ? std::string()
                                     : " (" + std::to_string(dataPackets) + " data packets, "
                                           + std::to_string(droppedPackets) + " dropped, "
                                           + std::to_string(connections) + " TCP connections)"));
    return text;
}

} // namespace rapidllm
} // namespace ns3
