/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "weight-gradient-store.h"

#include <algorithm>

namespace ns3 {
namespace rapidllm {

void
WeightGradientStore::Add(const char* label,
                         const OperatorDesc& op,
                         double modelFlops,
                         int64_t inputBytes,
                         bool gatheredInput,
                         int64_t gradBytes,
                         float energyShare)
{
    gemms.push_back({label, op, modelFlops, energyShare});
    (gatheredInput ? producedBytes : keptBytes) += inputBytes;
    producedBytes += gradBytes;
}

int64_t
WeightGradientStore::FreedAtBackwardEnd(int64_t held)
{
    keptBytes = std::min(keptBytes, held);
    return held - keptBytes - producedBytes;
}

uint32_t
WeightGradientStore::Emit(GraphEmitter& e) const
{
    uint32_t last = GraphEmitter::NONE;
    for (const DeferredWeightGemm& g : gemms)
    {
        last = e.Compute(g.label, g.op);
        e.Graph().nodes[last].SetEnergyShare(g.energyShare);
        if (g.modelFlops >= 0)
        {
            e.Graph().nodes[last].modelFlops = g.modelFlops;
        }
    }
    if (last != GraphEmitter::NONE)
    {
        e.AddMemory(last, -(keptBytes + producedBytes));
    }
    return last;
}

} // namespace rapidllm
} // namespace ns3
