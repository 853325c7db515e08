/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "report-bounds.h"

#include "ns3/rapidllm-error.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace ns3 {
namespace rapidllm {

namespace {
/** Relative slack for rounding in the figures' arithmetic. */
constexpr double kSlack = 1e-9;

[[noreturn]] void
Fail(const std::string& what)
{
    throw InternalError("internal check failed: " + what
                        + "; this is a bug or an input beyond the model's range, please report it");
}
} // namespace

void
CheckReportBounds(const RunReport& report, const Workload& w, const GpuSpec& gpu)
{
    std::ostringstream os;
    os.precision(4);
    if (!std::isfinite(report.stepTimeS) || report.stepTimeS <= 0)
    {
        os << "step time " << report.stepTimeS << " s is not a positive number";
        Fail(os.str());
    }
    if (w.run.mode != RunMode::TRAINING)
    {
        return;
    }
    // Model FLOPs as counted (all, and without recomputation for MFU), and the part that
    // attention operators may overstate.
    double counted = 0;
    double countedAttention = 0;
    double model = 0;
    double modelAttention = 0;
    const double ranksPerStage = double(w.layout.Ranks()) / w.stages.size();
    for (const auto& g : w.stages)
    {
        for (const auto& n : g.nodes)
        {
            if (n.kind != WorkNodeKind::COMPUTE)
            {
                continue;
            }
            const OpType type = g.OpOf(n).type;
            const bool attention = type == OpType::ATTENTION_FWD || type == OpType::ATTENTION_BWD
                                   || type == OpType::ATTENTION_SCORES;
            const double flops = n.modelFlops * ranksPerStage;
            counted += flops;
            countedAttention += attention ? flops : 0;
            if (n.phase != Phase::RECOMPUTE)
            {
                model += flops;
                modelAttention += attention ? flops : 0;
            }
        }
    }
    const double mfuBound = model > 0 ? model / (model - modelAttention / 2) : 1;
    if (!(report.mfu >= 0 && report.mfu <= mfuBound * (1 + kSlack)))
    {
        os << "MFU " << report.mfu << " is above " << mfuBound
           << " (1, with the attention FLOPs the papers' count may overstate)";
        Fail(os.str());
    }
    const double peak = gpu.PeakFlops(w.run.dtype);
    const double rateBound =
        peak * (counted > 0 ? counted / (counted - countedAttention / 2) : 1.0) / 1e12;
    if (peak > 0 && !(report.tflopsPerGpu <= rateBound * (1 + kSlack)))
    {
        os << report.tflopsPerGpu << " TFLOP/s per GPU exceeds the " << gpu.name << "'s "
           << ToString(MmaTypeOf(w.run.dtype)) << " peak of " << peak / 1e12 << " TFLOP/s ("
           << rateBound << " with the attention FLOPs the count may overstate)";
        Fail(os.str());
    }
}

} // namespace rapidllm
} // namespace ns3
