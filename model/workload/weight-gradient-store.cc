/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "weight-gradient-store.h"

namespace ns3 {
namespace rapidllm {

uint32_t
WeightGradientStore::Emit(GraphEmitter& e) const
{
    uint32_t last = GraphEmitter::NONE;
    for (const DeferredWeightGemm& g : gemms)
    {
        last = e.Compute(g.label, g.op);
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
