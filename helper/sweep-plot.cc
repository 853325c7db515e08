/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "sweep-plot.h"

#include "ns3/gnuplot.h"
#include "study-plot.h"

#include <filesystem>

namespace ns3 {
namespace rapidllm {

void
PlotSweep(const std::vector<SweepRow>& rows,
          const std::string& png,
          const std::string& title,
          double capacityGiB)
{
    Gnuplot plot(std::filesystem::path(png).filename().string(), title);
    plot.SetTerminal("pngcairo size 1100,600 font 'sans,10'");
    plot.SetLegend("layout rank (fitting layouts by step time, then the others by peak memory)",
                   "step time (s)");
    plot.AppendExtra("set y2label 'peak memory per GPU (GiB)'");
    plot.AppendExtra("set ytics nomirror");
    plot.AppendExtra("set y2tics");
    plot.AppendExtra("set key below horizontal");
    plot.AppendExtra("set grid");
    Gnuplot2dDataset step("step time (layouts that fit)");
    step.SetStyle(Gnuplot2dDataset::POINTS);
    step.SetExtra("pt 7 ps 0.6 lc rgb '#1f77b4'");
    Gnuplot2dDataset fitting("peak memory, fits");
    fitting.SetStyle(Gnuplot2dDataset::POINTS);
    fitting.SetExtra("axes x1y2 pt 6 ps 0.5 lc rgb '#2ca02c'");
    Gnuplot2dDataset unfit("peak memory, does not fit");
    unfit.SetStyle(Gnuplot2dDataset::POINTS);
    unfit.SetExtra("axes x1y2 pt 2 ps 0.5 lc rgb '#d62728'");
    Gnuplot2dDataset capacity("GPU memory");
    capacity.SetStyle(Gnuplot2dDataset::LINES);
    capacity.SetExtra("axes x1y2 dt 2 lc rgb '#7f7f7f'");
    bool anyFit = false;
    bool anyUnfit = false;
    for (std::size_t i = 0; i < rows.size(); ++i)
    {
        const double x = double(i + 1);
        const double gib = rows[i].peakBytes / double(1ull << 30);
        if (rows[i].fits)
        {
            step.Add(x, rows[i].stepTimeS);
            fitting.Add(x, gib);
            anyFit = true;
        }
        else
        {
            unfit.Add(x, gib);
            anyUnfit = true;
        }
    }
    capacity.Add(1, capacityGiB);
    capacity.Add(double(std::max<std::size_t>(rows.size(), 2)), capacityGiB);
    if (anyFit)
    {
        plot.AddDataset(step);
        plot.AddDataset(fitting);
    }
    if (anyUnfit)
    {
        // Peak memory of layouts that are far too large would squash the rest: cap the axis.
        plot.AppendExtra("set y2range [0:" + std::to_string(3 * capacityGiB) + "]");
        plot.AddDataset(unfit);
    }
    plot.AddDataset(capacity);
    RenderPng(plot, png);
}

} // namespace rapidllm
} // namespace ns3
