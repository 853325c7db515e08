/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "workload.h"

#include "ns3/log.h"
#include "stage-builders.h"
#include "workload-size.h"

#include <algorithm>
#include <array>
#include <unordered_map>

namespace ns3 {
namespace rapidllm {

NS_LOG_COMPONENT_DEFINE("RapidLlmWorkload");

const StageGraph&
Workload::GraphOf(uint32_t rank) const
{
    return stages[layout.Stage(rank)];
}

uint32_t
Workload::FirstTokenNode(uint32_t stage) const
{
    uint32_t found = UINT32_MAX;
    uint32_t firstPass = 0;
    for (const auto& n : stages.at(stage).nodes)
    {
        // (a draft module's sampling, inside its layer, proposes tokens for the next pass)
        if (n.kind == WorkNodeKind::COMPUTE && n.layer < 0
            && stages[stage].OpOf(n).type == OpType::SAMPLING)
        {
            if (found != UINT32_MAX && n.microBatch != firstPass)
            {
                break;
            }
            found = n.id;
            firstPass = n.microBatch;
        }
    }
    return found;
}

double
Workload::TotalModelFlops() const
{
    double total = 0;
    const double ranksPerStage = double(layout.Ranks()) / stages.size();
    for (const auto& g : stages)
    {
        total += g.ModelFlops() * ranksPerStage;
    }
    return total;
}

namespace {
/**
 * \return one micro-batch's compute time per pass and model chunk on a costed training stage
 * (its passes' compute nodes over the micro-batches)
 */
std::array<PassTimes, 2>
PassTimesOf(const StageGraph& g, uint32_t microBatches)
{
    std::array<PassTimes, 2> t;
    for (auto& chunk : t)
    {
        chunk = {0, 0, 0};
    }
    for (const PassSpan& span : g.passes)
    {
        double s = 0;
        for (uint32_t i = span.begin; i < span.end; ++i)
        {
            s += g.nodes[i].kind == WorkNodeKind::COMPUTE ? g.nodes[i].durationS : 0;
        }
        PassTimes& chunk = t.at(span.step.chunk);
        (span.step.pass == SchedulePass::FORWARD    ? chunk.forward
         : span.step.pass == SchedulePass::BACKWARD ? chunk.backward
                                                    : chunk.weight) += s / microBatches;
    }
    return t;
}
} // namespace

Workload
Workload::Build(const ModelSpec& model, const RunSpec& run, const OperatorCoster& coster)
{
    run.Validate(model, "run settings");
    // Refused before any allocation if too large. Within the node limit the point-to-point tags
    // fit in 32 bits too: every pass of a micro-batch or decode step emits nodes, so
    // (micro-batches x virtual stages) and decode steps stay below the limit.
    // The estimate bounds each stage's nodes from above (within about a tenth): reserved, the
    // graphs are not copied as they grow.
    const std::size_t expected = CheckWorkloadSize(model, run, "run settings").largestStage;
    Workload w{model, run, ParallelLayout(run.parallel), {}};
    const bool vShape = run.mode == RunMode::TRAINING && run.parallel.VShape();
    // ZB-V orders every rank's passes together: on equal times first.
    const auto equalTimes = vShape ? ZeroBubbleVSchedules(run.parallel.pp, run.MicroBatches())
                                   : std::vector<std::vector<ScheduleStep>>();
    for (uint32_t stage = 0; stage < run.parallel.pp; ++stage)
    {
        w.stages.push_back(
            run.mode == RunMode::TRAINING ? BuildTrainingStage(
                w.model, w.run, stage, expected, vShape ? &equalTimes[stage] : nullptr)
                                          : BuildInferenceStage(w.model, w.run, stage, expected));
        NS_LOG_DEBUG("stage " << stage << ": " << w.stages.back().nodes.size() << " nodes");
    }
    if (!coster)
    {
        return w;
    }
    // Many nodes share a shape: cost each distinct operator once, in the order the nodes first
    // name them.
    std::unordered_map<OperatorDesc, OperatorCost, OperatorDescHash> memo;
    auto cost = [&](StageGraph& g)
    {
        std::vector<OperatorCost> costs;
        for (const OperatorDesc& op : g.ops)
        {
            auto it = memo.find(op);
            if (it == memo.end())
            {
                it = memo.emplace(op, coster(op)).first;
            }
            costs.push_back(it->second);
        }
        for (auto& n : g.nodes)
        {
            if (n.kind != WorkNodeKind::COMPUTE)
            {
                continue;
            }
            const OperatorCost& c = costs[n.op];
            n.durationS = c.timeS;
            n.tensorBytes = static_cast<uint64_t>(c.hbmBytes);
            n.kernels = static_cast<uint16_t>(std::clamp(c.kernels, 1u, WorkNode::kMaxKernels));
            n.smScaling = static_cast<float>(c.smScaling);
        }
    };
    for (auto& g : w.stages)
    {
        cost(g);
    }
    if (vShape)
    {
        // ZB-V orders its passes on their times (ZeroBubbleVSchedules): the stages built on
        // equal times give each rank's, and are built again in the order those imply.
        std::vector<std::array<PassTimes, 2>> times;
        for (const auto& g : w.stages)
        {
            times.push_back(PassTimesOf(g, run.MicroBatches()));
        }
        const auto schedules = ZeroBubbleVSchedules(run.parallel.pp, run.MicroBatches(), times);
        for (uint32_t stage = 0; stage < run.parallel.pp; ++stage)
        {
            w.stages[stage] =
                BuildTrainingStage(w.model, w.run, stage, expected, &schedules[stage]);
            cost(w.stages[stage]);
        }
    }
    NS_LOG_DEBUG(memo.size() << " distinct operators costed");
    return w;
}

} // namespace rapidllm
} // namespace ns3
