/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "study-plot.h"

#include "ns3/gnuplot.h"
#include "ns3/spec-error.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <vector>

namespace ns3 {
namespace rapidllm {

namespace {
/** \return whether \p png ends with a PNG's IEND chunk (a whole image, not one cut short) */
bool
IsWholePng(const std::filesystem::path& png)
{
    static const unsigned char kIend[12] = {0, 0, 0, 0, 'I', 'E', 'N', 'D', 0xAE, 0x42, 0x60, 0x82};
    std::ifstream in(png, std::ios::binary);
    if (!in.seekg(-12, std::ios::end))
    {
        return false;
    }
    unsigned char tail[12];
    return in.read(reinterpret_cast<char*>(tail), 12) && std::memcmp(tail, kIend, 12) == 0;
}

/** \return the last \p count non-empty lines of the text file \p path, joined by "; " (empty when
 * it is missing or empty) */
std::string
LastLines(const std::filesystem::path& path, std::size_t count)
{
    std::ifstream in(path);
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);)
    {
        if (line.find_first_not_of(" \t\r^") != std::string::npos)
        {
            lines.push_back(line);
        }
    }
    std::string joined;
    for (std::size_t i = lines.size() > count ? lines.size() - count : 0; i < lines.size(); ++i)
    {
        joined += (joined.empty() ? "" : "; ") + lines[i];
    }
    return joined;
}

/** \return \p text quoted for a gnuplot string ('...', quotes doubled) */
std::string
Quote(const std::string& text)
{
    std::string out = "'";
    for (char c : text)
    {
        out += c == '\'' ? std::string("''") : std::string(1, c);
    }
    return out + "'";
}

/** \return \p path quoted for /bin/sh */
std::string
ShellQuote(const std::string& path)
{
    std::string out = "'";
    for (char c : path)
    {
        out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    }
    return out + "'";
}

} // namespace

std::string
PlotText(const std::string& text)
{
    std::string out;
    out.reserve(text.size());
    for (char c : text)
    {
        out += c == '`' || c == '"'                                  ? '\''
               : c == '\\'                                           ? '/'
               : (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) ? ' '
                                                                     : c;
    }
    return out;
}

bool
WritePlotPng(const std::string& pngPath, const PlotSpec& plot)
{
    Gnuplot gnuplot(std::filesystem::path(pngPath).filename().string());
    gnuplot.SetTerminal("pngcairo size 960,600 noenhanced font 'Sans,11'");
    gnuplot.SetTitle(PlotText(plot.title));
    // Bars' key sample (a 40-point impulse) covered the tick labels below them: a bar chart's
    // one series names itself in the x label instead.
    const bool barKey = plot.bars && plot.series.size() == 1 && plot.xLabel.empty();
    gnuplot.SetLegend(PlotText(barKey ? plot.series.front().title : plot.xLabel),
                      PlotText(plot.yLabel));
    std::ostringstream extra;
    extra << "set grid\n"
          << (barKey ? "unset key\n" : "set key below\n")
          << (plot.yFromZero ? "set yrange [0:*]\n" : "");
    if (plot.reverseX)
    {
        extra << "set xrange [*:*] reverse\n";
    }
    if (plot.logX)
    {
        extra << "set logscale x 2\n";
    }
    if (!plot.xLabels.empty())
    {
        // Many labels of two words ran together ("other computeexposed comm."): each on two
        // lines then (a double-quoted gnuplot string, where \n is a line break).
        const bool wrap = plot.xLabels.size() > 6;
        extra << "set xtics (";
        for (std::size_t i = 0; i < plot.xLabels.size(); ++i)
        {
            const std::string label = PlotText(plot.xLabels[i].second);
            std::string quoted = Quote(label);
            if (wrap)
            {
                quoted = "\"";
                for (char c : label)
                {
                    quoted += c == '"' || c == '\\' ? std::string("\\") + c : std::string(1, c);
                }
                quoted += "\"";
                const std::size_t space = quoted.find(' ');
                if (space != std::string::npos)
                {
                    quoted.replace(space, 1, "\\n");
                }
            }
            extra << (i ? ", " : "") << quoted << " " << plot.xLabels[i].first;
        }
        extra << ")\n";
        const double lo = plot.xLabels.front().first;
        const double hi = plot.xLabels.back().first;
        extra << "set xrange [" << lo - 0.6 << ":" << hi + 0.6 << "]\n";
    }
    bool second = false;
    for (const auto& s : plot.series)
    {
        second |= s.secondAxis;
    }
    if (second)
    {
        extra << "set ytics nomirror\nset y2tics\nset y2label " << Quote(PlotText(plot.y2Label))
              << "\n"
              << (plot.yFromZero ? "set y2range [0:*]\n" : "");
    }
    gnuplot.AppendExtra(extra.str());
    for (const auto& s : plot.series)
    {
        Gnuplot2dDataset data(PlotText(s.title));
        if (plot.bars)
        {
            data.SetStyle(Gnuplot2dDataset::IMPULSES);
            data.SetExtra("lw 40");
        }
        else
        {
            data.SetStyle(Gnuplot2dDataset::LINES_POINTS);
            data.SetExtra(s.secondAxis ? "lw 2 pt 7 axes x1y2" : "lw 2 pt 7");
        }
        for (const auto& [x, y] : s.points)
        {
            data.Add(x, y);
        }
        gnuplot.AddDataset(data);
    }
    return RenderPng(gnuplot, pngPath);
}

namespace {
/**
 * \return the gnuplot program's absolute path, looked up on the PATH as the shell would ("" when
 * it is missing): in this process, as a std::system() here would ignore SIGINT while it ran, at
 * the start of every command, and a Ctrl-C then would be lost; and absolute, as it runs from
 * the PNG's folder, where a relative entry (or an empty one, the current folder) names another
 */
const std::string&
GnuplotProgram()
{
    static const std::string found = []()
    {
        const char* path = std::getenv("PATH");
        const std::string dirs = path ? path : "";
        std::size_t from = 0;
        while (from <= dirs.size())
        {
            const std::size_t colon = std::min(dirs.find(':', from), dirs.size());
            const std::string dir = dirs.substr(from, colon - from);
            from = colon + 1;
            std::error_code error;
            const std::filesystem::path program = std::filesystem::absolute(
                std::filesystem::path(dir.empty() ? "." : dir) / "gnuplot", error);
            if (!error && std::filesystem::is_regular_file(program, error)
                && access(program.c_str(), X_OK) == 0)
            {
                return program.lexically_normal().string();
            }
        }
        return std::string();
    }();
    return found;
}
} // namespace

bool
GnuplotFound()
{
    return !GnuplotProgram().empty();
}

bool
RenderPng(Gnuplot& plot, const std::string& pngPath)
{
    const std::filesystem::path png(pngPath);
    std::filesystem::path script = png;
    script.replace_extension(".plt");
    {
        // Whatever a caller's labels held, no backquote reaches gnuplot (it would run the
        // command inside them): the script's own syntax has none.
        std::ostringstream text;
        plot.GenerateOutput(text);
        std::string body = text.str();
        std::replace(body.begin(), body.end(), '`', '\'');
        std::ofstream out(script);
        out << body;
        out.flush();
        if (!out)
        {
            throw OutputError(script.string());
        }
    }
    // A PNG of an earlier run would stand beside this run's script if gnuplot is missing or
    // fails.
    std::error_code ignored;
    std::filesystem::remove(png, ignored);
    if (!GnuplotFound())
    {
        return false; // the command said so before it ran (CheckPlotting)
    }
    // gnuplot writes the PNG named in the script relative to its working directory (entered
    // as the kernel resolves the path, -P: "link/.." is the link target's parent, as for the
    // other files). Its
    // warnings (a single point's "empty x range") are not ours to print, and stdout may be JSON:
    // both of its streams are silenced; on failure the user runs the command to see why.
    // gnuplot's errors go to a file beside the script, read back into the error when it fails:
    // the folder may be a staging one, gone by the time the user reads the message.
    const std::string dir = png.has_parent_path() ? png.parent_path().string() : ".";
    std::filesystem::path errors = script;
    errors += ".err";
    const std::string command = "cd -P " + ShellQuote(dir) + " && " + ShellQuote(GnuplotProgram())
                                + " " + ShellQuote(script.filename().string()) + " >/dev/null 2>"
                                + ShellQuote(errors.filename().string());
    const int status = std::system(command.c_str());
    const std::string said = LastLines(errors, 3);
    std::filesystem::remove(errors, ignored);
    // std::system ignores SIGINT while gnuplot runs, and an interrupt ends gnuplot (and the
    // shell running it): passed on to this process, not reported as gnuplot failing.
    const int stopped = status == -1                           ? 0
                        : WIFSIGNALED(status)                  ? WTERMSIG(status)
                        : WEXITSTATUS(status) == 128 + SIGINT  ? SIGINT
                        : WEXITSTATUS(status) == 128 + SIGTERM ? SIGTERM
                                                               : 0;
    if (stopped == SIGINT || stopped == SIGTERM)
    {
        std::filesystem::remove(png, ignored);
        std::cerr << "rapid-llm: interrupted while drawing " << pngPath << "\n";
        std::signal(stopped, SIG_DFL);
        std::raise(stopped);
    }
    if (status != 0)
    {
        std::filesystem::remove(png, ignored); // no half-drawn image
        const std::string why =
            said.empty() ? "exit status " + std::to_string(status == -1 ? -1 : WEXITSTATUS(status))
                         : said;
        throw OutputError(
            pngPath, "gnuplot failed on its script " + script.filename().string() + ": " + why);
    }
    if (!IsWholePng(png))
    {
        // gnuplot exits 0 when its image's write fails (a full device): cut short, it goes.
        std::filesystem::remove(png, ignored);
        throw OutputError(pngPath,
                          "gnuplot wrote an incomplete image (no space left on the device?)");
    }
    return true;
}

} // namespace rapidllm
} // namespace ns3
