/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "sweep-plot.h"

#include "ns3/gnuplot.h"
#include "study-plot.h"

#include <algorithm>
#include <filesystem>
#include <set>

namespace ns3 {
namespace rapidllm {

namespace {

/** \return the GPUs of \p machines, each once (by name), in the machines' order */
std::vector<const GpuSpec*>
DistinctGpus(const std::vector<HardwareSpec>& machines)
{
    std::vector<const GpuSpec*> gpus;
    for (const HardwareSpec& h : machines)
    {
        if (std::none_of(gpus.begin(),
                         gpus.end(),
                         [&h](const GpuSpec* known)
                         {
                             return known->name == h.gpu.name;
                         }))
        {
            gpus.push_back(&h.gpu);
        }
    }
    return gpus;
}

/**
 * \return each row's series: its machine, GPU count, compute type and pipeline schedule, those
 * of them that vary among \p rows ("" where none does)
 */
std::vector<std::string>
SeriesOf(const std::vector<SweepRow>& rows)
{
    std::set<std::string> machines;
    std::set<uint64_t> counts;
    std::set<std::string> types;
    std::set<std::string> schedules;
    for (const SweepRow& r : rows)
    {
        machines.insert(r.hardware);
        counts.insert(r.Gpus());
        types.insert(r.dtype);
        schedules.insert(r.schedule);
    }
    std::vector<std::string> series;
    for (const SweepRow& r : rows)
    {
        std::string key;
        auto add = [&key](bool varies, const std::string& part)
        {
            if (varies)
            {
                key += (key.empty() ? "" : " ") + part;
            }
        };
        add(machines.size() > 1, r.hardware);
        add(counts.size() > 1, std::to_string(r.Gpus()) + " GPUs");
        add(types.size() > 1, r.dtype);
        add(schedules.size() > 1, r.schedule);
        series.push_back(key);
    }
    return series;
}

} // namespace

std::string
SweepGpuNames(const std::vector<HardwareSpec>& machines)
{
    std::string names;
    std::set<std::string> seen;
    for (const HardwareSpec& h : machines)
    {
        const std::string label = h.GpuLabel(); // a variant's with its name
        if (seen.insert(label).second)
        {
            names += (names.empty() ? "" : " or ") + label;
        }
    }
    return names;
}

std::string
SweepGpuCountText(const std::vector<uint32_t>& counts)
{
    std::string text;
    for (uint32_t n : counts)
    {
        text += (text.empty() ? "" : "/") + std::to_string(n);
    }
    return text;
}

void
PlotSweep(const std::vector<SweepRow>& rows,
          const std::string& png,
          const std::string& model,
          const std::string& gpus,
          uint64_t globalBatch,
          const std::vector<HardwareSpec>& machines)
{
    // Each GPU's memory once, named where there are several.
    const std::vector<const GpuSpec*> capacities = DistinctGpus(machines);
    const std::string title = model + " on " + gpus + " x " + SweepGpuNames(machines)
                              + ", global batch " + std::to_string(globalBatch);
    Gnuplot plot(std::filesystem::path(png).filename().string(), PlotText(title));
    plot.SetTerminal("pngcairo size 1100,600 font 'sans,10'");
    plot.SetLegend("layout rank (fitting layouts by step time, then the others by peak memory)",
                   "step time (s)");
    plot.AppendExtra("set y2label 'peak memory per GPU (GiB)'");
    plot.AppendExtra("set ytics nomirror");
    plot.AppendExtra("set y2tics");
    plot.AppendExtra("set key below horizontal");
    plot.AppendExtra("set grid");
    // The step times: one series per machine, GPU count, type and schedule the rows vary in.
    const std::vector<std::string> series = SeriesOf(rows);
    std::vector<std::string> names;
    for (const std::string& key : series)
    {
        if (std::find(names.begin(), names.end(), key) == names.end())
        {
            names.push_back(key);
        }
    }
    const char* const colours[] = {"#1f77b4",
                                   "#ff7f0e",
                                   "#9467bd",
                                   "#8c564b",
                                   "#e377c2",
                                   "#17becf",
                                   "#bcbd22",
                                   "#000080",
                                   "#808000",
                                   "#ff1493"};
    const int points[] = {7, 5, 9, 11, 13, 15, 4, 8, 10, 12};
    std::vector<Gnuplot2dDataset> steps;
    for (std::size_t k = 0; k < names.size(); ++k)
    {
        steps.emplace_back(names.size() > 1 ? "step time, " + PlotText(names[k])
                                            : std::string("step time (layouts that fit)"));
        steps.back().SetStyle(Gnuplot2dDataset::POINTS);
        steps.back().SetExtra("pt " + std::to_string(points[k % 10]) + " ps 0.6 lc rgb '"
                              + colours[k % 10] + "'");
    }
    Gnuplot2dDataset fitting("peak memory, fits");
    fitting.SetStyle(Gnuplot2dDataset::POINTS);
    fitting.SetExtra("axes x1y2 pt 6 ps 0.5 lc rgb '#2ca02c'");
    Gnuplot2dDataset unfit("peak memory, does not fit");
    unfit.SetStyle(Gnuplot2dDataset::POINTS);
    unfit.SetExtra("axes x1y2 pt 2 ps 0.5 lc rgb '#d62728'");
    bool anyFit = false;
    bool anyUnfit = false;
    for (std::size_t i = 0; i < rows.size(); ++i)
    {
        const double x = double(i + 1);
        const double gib = rows[i].peakBytes / double(1ull << 30);
        if (rows[i].fits)
        {
            const auto k = std::find(names.begin(), names.end(), series[i]) - names.begin();
            steps[k].Add(x, rows[i].stepTimeS);
            fitting.Add(x, gib);
            anyFit = true;
        }
        else
        {
            unfit.Add(x, gib);
            anyUnfit = true;
        }
    }
    if (anyFit)
    {
        for (const Gnuplot2dDataset& step : steps)
        {
            plot.AddDataset(step);
        }
        plot.AddDataset(fitting);
    }
    double largest = 0;
    for (const GpuSpec* gpu : capacities)
    {
        largest = std::max(largest, gpu->hbmBytes / double(1ull << 30));
    }
    // Peak memory of layouts that are far too large would squash the rest: cap the axis. With
    // every layout fitting, room above the GPU's memory keeps its line off the frame.
    plot.AppendExtra("set y2range [0:" + std::to_string((anyUnfit ? 3 : 1.15) * largest) + "]");
    if (anyUnfit)
    {
        plot.AddDataset(unfit);
    }
    // Half a rank of room each side keeps the first and last points off the frame.
    plot.AppendExtra(
        "set xrange [0.5:" + std::to_string(std::max<std::size_t>(rows.size(), 2) + 0.5) + "]");
    if (rows.size() <= 20)
    {
        plot.AppendExtra("set xtics 1"); // ranks are whole numbers
    }
    // One dashed line per GPU, each its own dash pattern.
    for (std::size_t i = 0; i < capacities.size(); ++i)
    {
        const double gib = capacities[i]->hbmBytes / double(1ull << 30);
        Gnuplot2dDataset capacity(
            capacities.size() > 1 ? "GPU memory, " + PlotText(capacities[i]->name) : "GPU memory");
        capacity.SetStyle(Gnuplot2dDataset::LINES);
        capacity.SetExtra("axes x1y2 dt " + std::to_string(2 + i) + " lc rgb '#7f7f7f'");
        capacity.Add(1, gib);
        capacity.Add(double(std::max<std::size_t>(rows.size(), 2)), gib);
        plot.AddDataset(capacity);
    }
    RenderPng(plot, png);
}

} // namespace rapidllm
} // namespace ns3
