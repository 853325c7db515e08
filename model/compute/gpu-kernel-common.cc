/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "gpu-kernel-common.h"

#include "ns3/spec-error.h"

#include <algorithm>

namespace ns3 {
namespace rapidllm {
namespace kernel {

double
MatmulPeak(const GpuSpec& g, DataType type, bool& tensor)
{
    double peak = g.TensorFlops(type);
    tensor = peak > 0;
    if (!tensor)
    {
        // CUDA cores only for a type the GPU lists (VectorFlops would fall back to fp32, but a
        // GPU without fp8 support cannot run an fp8 GEMM at any rate).
        auto it = g.vectorFlops.find(type);
        peak = it == g.vectorFlops.end() ? 0.0 : it->second;
    }
    if (peak <= 0)
    {
        // Name the types the GPU can run, so that the user can pick one (--dtype).
        throw SpecError(g.Origin(),
                        "gpu.tensor_tflops",
                        "no tensor or vector FLOP rate for data type " + ToString(type) + ": the "
                            + g.name + " cannot run it; the GPU lists " + g.ListedTypes()
                            + " (choose one with --dtype; int4 weights multiply in fp16)");
    }
    return peak;
}

void
ApplyBound(OperatorCost& c)
{
    c.bound = c.SlowestLevel();
    if (c.overheadTimeS > std::max({c.computeTimeS, c.smemTimeS, c.l2TimeS, c.hbmTimeS}))
    {
        c.bound = BoundLevel::LAUNCH;
    }
}

} // namespace kernel
} // namespace rapidllm
} // namespace ns3
