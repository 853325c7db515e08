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
        if (g.gather != nullptr)
        {
            const uint32_t ag =
                e.Blocking(g.gather, CollectiveKind::ALL_GATHER, GroupKind::TP, g.gatherBytes);
            if (g.gatherSms > 0)
            {
                e.SetCommSms(ag, g.gatherSms);
            }
        }
        last = e.Compute(g.label, g.op);
        if (g.modelFlops >= 0)
        {
            e.Graph().nodes[last].modelFlops = g.modelFlops;
        }
    }
    if (last != GraphEmitter::NONE)
    {
        e.AddMemory(last, -(inputBytes + gradBytes));
    }
    return last;
}

} // namespace rapidllm
} // namespace ns3
