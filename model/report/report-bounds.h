/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_REPORT_BOUNDS_H
#define RAPIDLLM_REPORT_BOUNDS_H

#include "ns3/data-type.h"
#include "ns3/gpu-spec.h"
#include "run-report.h"

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief An internal check that a report is physically possible: a finite, positive step time,
 * MFU at most 1 and FLOP/s per GPU at most the GPU's peak for \p dtype. A report beyond the
 * hardware can only come from a bug or arithmetic out of range, so this fails loudly (throws
 * Error naming the figure, its value and the bound) instead of printing it.
 * \param report a training or inference report with its timing filled in
 * \param gpu the GPU the job ran on
 * \param dtype the job's compute type
 */
void CheckReportBounds(const RunReport& report, const GpuSpec& gpu, DataType dtype);

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_REPORT_BOUNDS_H
