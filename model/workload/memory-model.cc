/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "memory-model.h"

#include "layer-shapes.h"
#include "ns3/log.h"

#include <algorithm>
#include <sstream>

namespace ns3 {
namespace rapidllm {

NS_LOG_COMPONENT_DEFINE("RapidLlmMemoryModel");

uint64_t
PeakActivationBytes(const StageGraph& graph)
{
    int64_t live = 0;
    int64_t peak = 0;
    for (const auto& n : graph.nodes)
    {
        peak = std::max(peak, live + std::max<int64_t>(n.memDelta, 0) + int64_t(n.memTransient));
        live += n.memDelta;
    }
    return static_cast<uint64_t>(std::max<int64_t>(peak, 0));
}

MemoryReport
AnalyzeMemory(const Workload& w, const GpuSpec& gpu)
{
    MemoryReport report;
    report.capacity = gpu.hbmBytes;
    const auto& p = w.run.parallel;
    const LayerShapes shapes(w.model, w.run);
    const uint64_t eb = shapes.elementBytes;
    for (const auto& g : w.stages)
    {
        RankMemory m;
        m.stage = g.stage;
        const uint64_t params = StageParameters(w.model, w.run, g.stage);
        m.framework = kFrameworkOverheadBytes;
        if (w.run.mode == RunMode::TRAINING)
        {
            const uint64_t dp = p.dp;
            // Mixed-precision Adam (Rajbhandari et al. 2020, Sec. 3.1): 2-byte weights and
            // gradients, 12 bytes of fp32 master weights, momentum and variance per parameter.
            m.weights = params * eb / (p.zeroStage >= 3 ? dp : 1);
            m.gradients = params * eb / (p.zeroStage >= 2 ? dp : 1);
            m.optimizer = params * 12 / (p.zeroStage >= 1 ? dp : 1);
            m.activations = PeakActivationBytes(g);
        }
        else
        {
            m.weights = params * eb;
            const uint64_t tokens = uint64_t(w.run.promptTokens) + w.run.generatedTokens;
            m.kvCache = 2 * uint64_t(w.model.layers / p.pp) * w.run.batch * tokens * shapes.kvHeads
                        * shapes.headDim * eb;
            // The prefill's widest intermediate: a layer's input, residual and MLP activation.
            const uint64_t rows = uint64_t(w.run.promptTokens) * w.run.batch;
            m.activations = eb * rows * (2 * shapes.hidden + shapes.fc1Out);
        }
        m.peak = m.weights + m.gradients + m.optimizer + m.activations + m.kvCache + m.framework;
        NS_LOG_DEBUG("stage " << m.stage << ": " << params << " parameters; weights " << m.weights
                              << ", gradients " << m.gradients << ", optimizer " << m.optimizer
                              << ", activations " << m.activations << ", KV cache " << m.kvCache
                              << ", peak " << m.peak << " bytes");
        if (report.stages.empty() || m.peak > report.worst.peak)
        {
            report.worst = m;
        }
        report.stages.push_back(m);
    }
    if (report.worst.peak > report.capacity)
    {
        report.feasible = false;
        std::ostringstream os;
        os.precision(1);
        os << std::fixed << "pipeline stage " << report.worst.stage << " needs "
           << report.worst.peak / double(1ull << 30) << " GiB at its peak but the GPU has "
           << report.capacity / double(1ull << 30) << " GiB";
        report.reason = os.str();
    }
    return report;
}

} // namespace rapidllm
} // namespace ns3
