/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_STUDY_PLOT_H
#define RAPIDLLM_STUDY_PLOT_H

#include <string>
#include <utility>
#include <vector>

namespace ns3 {

class Gnuplot;

namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief One line (or set of bars) of a plot.
 */
struct PlotSeries
{
    std::string title;                             //!< legend entry
    std::vector<std::pair<double, double>> points; //!< (x, y), drawn in this order
    bool secondAxis = false;                       //!< against the right-hand y axis
};

/**
 * \ingroup rapid-llm
 * \brief A 2-D plot of the studies (fault slowdown, hardware variants, step breakdown): lines
 * with points, or bars (one per point, labelled by \p xLabels).
 */
struct PlotSpec
{
    std::string title;              //!< above the plot
    std::string xLabel;             //!< x axis legend
    std::string yLabel;             //!< y axis legend
    std::string y2Label;            //!< right-hand y axis legend (series on it)
    std::vector<PlotSeries> series; //!< the data
    bool bars = false;              //!< draw bars (impulses) instead of lines with points
    bool reverseX = false;          //!< x decreasing to the right (fault factors 1 -> 0)
    bool logX = false;              //!< logarithmic x axis
    bool yFromZero = true;          //!< the y axis starts at 0 (else fitted to the data)
    std::vector<std::pair<double, std::string>> xLabels; //!< named x tics (empty: numbers)
};

/**
 * \brief Draws a plot as PNG with ns-3's Gnuplot classes (stats module), rendered by the
 * gnuplot program (Debian's gnuplot-nox, utils/install-deps.sh). The gnuplot script is kept
 * next to the PNG (PATH without .png + ".plt") so the figure can be restyled.
 * \param pngPath the PNG to write
 * \param plot what to draw
 * \return false when the gnuplot program is missing (the script is written, the PNG is not)
 * Throws OutputError when the script cannot be written, OutputError, with gnuplot's own
 * last lines of error, when it fails.
 */
bool WritePlotPng(const std::string& pngPath, const PlotSpec& plot);

/**
 * \brief Renders \p plot (made with the PNG's file name, without its directory) as \p pngPath:
 * its script is kept beside it (PATH without .png + ".plt") and the gnuplot program runs it in
 * the PNG's directory, its output silenced (stdout may be JSON) and its errors kept for the
 * message when it fails. Both the studies' plots
 * and the sweep's are drawn by it.
 * \param plot the plot, with its terminal, data and settings
 * \param pngPath the PNG to write
 * \return false when the gnuplot program is missing (the script is written, the PNG is not)
 * Throws OutputError when the script cannot be written, OutputError, with gnuplot's own
 * last lines of error, when it fails.
 */
bool RenderPng(Gnuplot& plot, const std::string& pngPath);

/**
 * \return whether the gnuplot program is on the PATH (looked up once): without it, the plots'
 * scripts are written and their PNGs are not
 */
bool GnuplotFound();

/**
 * \brief \p text made safe for a gnuplot title, key or label, whatever quotes the script puts
 * around it: names come from spec files, and gnuplot runs a backquoted command even inside a
 * double-quoted string. Backquotes and double quotes become single quotes, backslashes slashes,
 * control characters spaces.
 * \param text a name or a label
 * \return the text to give gnuplot
 */
std::string PlotText(const std::string& text);

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_STUDY_PLOT_H
