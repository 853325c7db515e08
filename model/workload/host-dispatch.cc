/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "host-dispatch.h"

#include <cstdint>
#include <cstring>
#include <vector>

namespace ns3 {
namespace rapidllm {

uint32_t
EagerOpsOf(const StageGraph& g, const WorkNode& n, bool gated)
{
    if (n.kind != WorkNodeKind::COMPUTE)
    {
        return 1;
    }
    switch (g.OpOf(n).type)
    {
        case OpType::RMS_NORM:
            return 8;
        case OpType::ROPE:
            return 14;
        case OpType::DECODE_ATTENTION:
        case OpType::DECODE_ATTENTION_PER_HEAD:
            return 9;
        case OpType::ATTENTION_SCORES:
            return 7;
        case OpType::SWIGLU:
        case OpType::SQUARED_RELU:
        case OpType::GEGLU:
            return 2;
        case OpType::SAMPLING:
            return 20;
        case OpType::GEMM:
            if (std::strcmp(n.label, "qkv") == 0)
            {
                return 3;
            }
            if (gated
                && (std::strcmp(n.label, "fc1") == 0 || std::strcmp(n.label, "shared_fc1") == 0))
            {
                return 2;
            }
            return 1;
        default:
            return 1;
    }
}

void
ApplyHostDispatch(Workload& w, const HostSpec& host)
{
    const std::string mode = w.run.ResolvedDispatch();
    const bool inference = w.run.mode == RunMode::INFERENCE;
    for (auto& g : w.stages)
    {
        for (auto& n : g.nodes)
        {
            n.hostS = 0;
            n.hostSync = false;
        }
    }
    if (mode == "none" || !host.Has())
    {
        return;
    }
    const double iteration = inference ? host.IterationS(w.run.engine) : 0.0;
    const bool gated = w.model.IsGated();
    for (auto& g : w.stages)
    {
        // A step ends with its last sampling kernel: with batches in flight through a pipeline
        // each samples its tokens, and the engine's iteration covers them all.
        std::vector<bool> endsStep(inference ? g.nodes.size() : 0, false);
        uint32_t laterStep = UINT32_MAX;
        for (std::size_t i = endsStep.size(); i-- > 0;)
        {
            const WorkNode& n = g.nodes[i];
            if (n.kind == WorkNodeKind::COMPUTE && g.OpOf(n).type == OpType::SAMPLING)
            {
                endsStep[i] = n.microBatch != laterStep;
                laterStep = n.microBatch;
            }
        }
        bool stepStart = true; // the next node issued opens a step
        bool first = true;
        for (std::size_t i = 0; i < g.nodes.size(); ++i)
        {
            WorkNode& n = g.nodes[i];
            double cost = 0;
            if (mode == "eager")
            {
                cost = EagerOpsOf(g, n, gated) * host.eagerOpS;
            }
            else if (mode == "engine")
            {
                cost = (n.kind == WorkNodeKind::COMPUTE ? n.kernels : 1) * host.launchS;
            }
            if (stepStart)
            {
                cost += iteration + (first ? 0.0 : host.stepSyncS)
                        + (mode == "graphs" ? host.graphLaunchS : 0.0);
                stepStart = false;
                first = false;
            }
            n.hostS = cost;
            if (inference && endsStep[i])
            {
                n.hostSync = true;
                stepStart = true;
            }
        }
    }
}

} // namespace rapidllm
} // namespace ns3
