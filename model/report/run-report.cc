/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "run-report.h"

#include "json-writer.h"

#include <cstdio>

namespace ns3 {
namespace rapidllm {

std::string
RunReport::ToJson() const
{
    JsonWriter out;
    out.BeginObject();
    out.Value("mode", mode);
    out.Value("feasible", feasible);
    if (!feasible)
    {
        out.Value("reason", reason);
    }
    out.Value("step_time_s", stepTimeS);
    if (mode == "inference")
    {
        out.Value("ttft_s", ttftS).Value("tpot_s", tpotS);
    }
    if (mode == "training")
    {
        out.Value("tflops_per_gpu", tflopsPerGpu).Value("mfu", mfu);
    }
    if (haveMemory)
    {
        out.BeginObject("memory")
            .Value("peak_bytes", memory.peak)
            .Value("capacity_bytes", capacityBytes)
            .Value("weights", memory.weights)
            .Value("gradients", memory.gradients)
            .Value("optimizer", memory.optimizer)
            .Value("activations", memory.activations)
            .Value("kv_cache", memory.kvCache)
            .EndObject();
    }
    out.BeginObject("breakdown_s")
        .Value("compute", computeS)
        .Value("exposed_communication", exposedCommS)
        .Value("pipeline_bubble", bubbleS)
        .EndObject();
    if (haveComputeKinds)
    {
        out.BeginObject("compute_by_kind_s")
            .Value("gemm", gemmS)
            .Value("attention", attentionS)
            .Value("elementwise", elementwiseS)
            .Value("optimizer", optimizerS)
            .EndObject();
    }
    out.Value("critical_rank", criticalRank);
    out.Value("gpus", gpus).Value("backend", backend).Value("wall_time_s", wallTimeS);
    out.EndObject();
    return out.Str();
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
    std::string text = line("step time", num("%.4f s", stepTimeS));
    if (mode == "inference")
    {
        text += line("time to first token", num("%.2f ms", ttftS * 1e3));
        text += line("time per output token", num("%.2f ms", tpotS * 1e3));
    }
    if (mode == "training")
    {
        text += line("TFLOP/s per GPU", num("%.1f", tflopsPerGpu));
        text += line("MFU", num("%.1f %%", mfu * 100));
    }
    text += line("compute", num("%.4f s", computeS));
    text += line("exposed communication", num("%.4f s", exposedCommS));
    text += line("pipeline bubble", num("%.4f s", bubbleS));
    if (haveComputeKinds)
    {
        text += line("compute by kind",
                     num("gemm %.4f s, ", gemmS) + num("attention %.4f s, ", attentionS)
                         + num("element-wise %.4f s, ", elementwiseS)
                         + num("optimizer %.4f s", optimizerS));
    }
    if (haveMemory)
    {
        text += line("peak memory per GPU",
                     num("%.2f GiB", memory.peak / gib) + num(" of %.2f GiB", capacityBytes / gib)
                         + (feasible ? ", fits" : ", DOES NOT FIT: " + reason));
    }
    text += line("GPUs", std::to_string(gpus));
    text += line("backend", backend);
    text += line("wall time", num("%.3f s", wallTimeS));
    return text;
}

} // namespace rapidllm
} // namespace ns3
