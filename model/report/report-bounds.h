/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_REPORT_BOUNDS_H
#define RAPIDLLM_REPORT_BOUNDS_H

#include "ns3/gpu-spec.h"
#include "ns3/workload.h"
#include "run-report.h"

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief An internal check that a report is physically possible: a finite, positive step time,
 * and in training an MFU and FLOP/s per GPU the GPU can reach. Both figures count the whole
 * s x s attention matrix as the papers do, while causal kernels run about half of it, so the
 * bound is the peak rate over the FLOPs the kernels execute at the least: each attention
 * operator's model FLOPs may be overstated twofold, every other operator's are exact. A report
 * beyond that can only come from a bug or arithmetic out of range, so this fails loudly
 * (throws Error naming the figure, its value and the bound) instead of printing it.
 * \param report a report with its timing filled in
 * \param workload the job it reports on
 * \param gpu the GPU the job ran on
 */
void CheckReportBounds(const RunReport& report, const Workload& workload, const GpuSpec& gpu);

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_REPORT_BOUNDS_H
