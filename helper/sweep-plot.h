/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_SWEEP_PLOT_H
#define RAPIDLLM_SWEEP_PLOT_H

#include "ns3/hardware-spec.h"
#include "sweep-table.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ns3 {
namespace rapidllm {

/** \return the GPUs of \p machines, each once, joined by " or " (as a sweep's heading names them)
 */
std::string SweepGpuNames(const std::vector<HardwareSpec>& machines);

/** \return GPU counts as a sweep's heading names them: "8/16/32" */
std::string SweepGpuCountText(const std::vector<uint32_t>& counts);

/**
 * \ingroup rapid-llm
 * \brief Draws a sweep's ranked layouts as a PNG with ns-3's Gnuplot and the gnuplot program
 * (Debian gnuplot-nox): step time of each layout that fits (left axis) and peak memory of every
 * layout (right axis) against its rank, with each GPU's memory as a line; one step-time series
 * per machine, GPU count, compute type and pipeline schedule the rows vary in.
 * \param rows the rows, ranked (RankSweepRows)
 * \param png the image to write (its gnuplot script is written next to it, .plt)
 * \param model the model's name \param gpus GPUs of the job ("8/16/32" for several counts)
 * \param globalBatch its batch
 * \param machines the machines it ran on
 * throws SpecError if gnuplot fails; without gnuplot only the script is written (RenderPng)
 */
void PlotSweep(const std::vector<SweepRow>& rows,
               const std::string& png,
               const std::string& model,
               const std::string& gpus,
               uint64_t globalBatch,
               const std::vector<HardwareSpec>& machines);

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_SWEEP_PLOT_H
