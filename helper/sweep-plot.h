/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_SWEEP_PLOT_H
#define RAPIDLLM_SWEEP_PLOT_H

#include "sweep-table.h"

#include <string>
#include <vector>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief Draws a sweep's ranked layouts as a PNG with ns-3's Gnuplot and the gnuplot program
 * (Debian gnuplot-nox): step time of each layout that fits (left axis) and peak memory of every
 * layout (right axis) against its rank, with the GPU's memory as a line.
 * \param rows the rows, ranked (RankSweepRows)
 * \param png the image to write (its gnuplot script is written next to it, .plt)
 * \param title the plot's title
 * \param capacityGiB device memory per GPU, GiB
 * throws SpecError (field "out") if gnuplot is missing or fails (RenderPng)
 */
void PlotSweep(const std::vector<SweepRow>& rows,
               const std::string& png,
               const std::string& title,
               double capacityGiB);

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_SWEEP_PLOT_H
