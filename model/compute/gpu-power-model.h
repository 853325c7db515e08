/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_GPU_POWER_MODEL_H
#define RAPIDLLM_GPU_POWER_MODEL_H

#include "ns3/data-type.h"
#include "ns3/gpu-spec.h"
#include "operator-cost.h"

#include <functional>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief Which clock a kernel runs at on a GPU with a power model.
 */
enum class ClockPolicy
{
    SUSTAINED, //!< a busy GPU: a kernel whose power would exceed the board limit runs at the
               //!< clock where it meets it (the power-limited sustained clock)
    BOOST      //!< a short burst from idle (microbenchmarks of a few ms): the boost clock
};

/** \return "sustained" or "boost" */
const char* ToString(ClockPolicy policy);

namespace kernel {

/**
 * \brief Dynamic energy of a kernel: its FLOPs at the tensor-core (or CUDA-core) energy per
 * FLOP of \p type, scaled by (clock / rated clock)^2, plus its HBM bytes at the energy per byte.
 * \param g the GPU (rated)
 * \param c the kernel's cost
 * \param clockHz the clock it ran at
 * \param type its operand type
 * \return joules (0 without a power model)
 */
double DynamicEnergy(const GpuSpec& g, const OperatorCost& c, double clockHz, DataType type);

/**
 * \brief Runs a kernel model at the clock \p policy gives: BOOST runs it at the boost clock;
 * SUSTAINED lowers the clock from the boost clock, if the kernel's board power (idle plus
 * dynamic energy over time) exceeds the limit, to the highest clock where it does not (found
 * by bisection of the kernel evaluated at each clock). Sets the cost's clock, energy and power.
 * Without a power model the kernel runs at the rated clock and has no energy.
 * \param g the GPU (rated)
 * \param policy the clock policy
 * \param type the kernel's operand type (for the energy per FLOP)
 * \param eval the kernel model: its cost on the GPU it is given
 * \return the cost
 */
OperatorCost RunAtClock(const GpuSpec& g,
                        ClockPolicy policy,
                        DataType type,
                        const std::function<OperatorCost(const GpuSpec&)>& eval);

} // namespace kernel
} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_GPU_POWER_MODEL_H
