/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "sweep-table.h"

#include "ns3/spec-error.h"
#include "report-output.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace ns3 {
namespace rapidllm {

namespace {

/** The columns of results.csv, in order. */
const char* const kColumns = "layout,hardware,tp,pp,dp,cp,ep,vpp,mbs,recompute,dtype,fits,"
                             "step_time_s,tflops_per_gpu,mfu,compute_s,exposed_comm_s,bubble_s,"
                             "energy_j,avg_power_w,peak_memory_bytes,peak_memory_gib,reason";
/** Number of columns. */
constexpr std::size_t kColumnCount = 23;
/** The columns before the machine and the energy (read, never written). */
const char* const kNoHardwareColumns = "layout,tp,pp,dp,cp,ep,vpp,mbs,recompute,dtype,fits,"
                                       "step_time_s,tflops_per_gpu,mfu,compute_s,exposed_comm_s,"
                                       "bubble_s,peak_memory_bytes,peak_memory_gib,reason";
/** The columns before the compute type (read, never written). */
const char* const kNoDtypeColumns = "layout,tp,pp,dp,cp,ep,vpp,mbs,recompute,fits,step_time_s,"
                                    "tflops_per_gpu,mfu,compute_s,exposed_comm_s,bubble_s,"
                                    "peak_memory_bytes,peak_memory_gib,reason";
/** The columns before the cp and ep degrees (read, never written). */
const char* const kLegacyColumns = "layout,tp,pp,dp,vpp,mbs,recompute,fits,step_time_s,"
                                   "tflops_per_gpu,mfu,compute_s,exposed_comm_s,bubble_s,"
                                   "peak_memory_bytes,peak_memory_gib,reason";

/** \return \p v with 10 significant digits (what the file keeps) */
std::string
Real(double v)
{
    char text[40];
    std::snprintf(text, sizeof(text), "%.10g", v);
    return text;
}

/** Parses a whole unsigned number (false beyond 64 bits, which strtoull would clamp). */
bool
ParseCount(const std::string& text, uint64_t& v)
{
    if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos)
    {
        return false;
    }
    errno = 0;
    v = std::strtoull(text.c_str(), nullptr, 10);
    return errno != ERANGE;
}

/** Parses a 32-bit count. */
bool
ParseCount32(const std::string& text, uint32_t& v)
{
    uint64_t wide = 0;
    if (!ParseCount(text, wide) || wide > UINT32_MAX)
    {
        return false;
    }
    v = static_cast<uint32_t>(wide);
    return true;
}

/** Parses a finite real, at least 0 (every figure of a row is a time, a rate or a share). */
bool
ParseReal(const std::string& text, double& v)
{
    if (text.empty())
    {
        return false;
    }
    char* end = nullptr;
    v = std::strtod(text.c_str(), &end);
    return end == text.c_str() + text.size() && std::isfinite(v) && v >= 0;
}

} // namespace

std::string
SweepCsvHeader()
{
    return kColumns;
}

std::string
SweepRow::ToCsv() const
{
    char gib[40];
    std::snprintf(gib, sizeof(gib), "%.3f", peakBytes / double(1ull << 30));
    std::string line = std::to_string(layout) + "," + CsvField(hardware) + "," + std::to_string(tp)
                       + "," + std::to_string(pp) + "," + std::to_string(dp) + ","
                       + std::to_string(cp) + "," + std::to_string(ep) + "," + std::to_string(vpp)
                       + "," + std::to_string(mbs) + "," + recompute + "," + dtype + ","
                       + (fits ? "yes" : "no");
    if (fits)
    {
        for (double v : {stepTimeS, tflopsPerGpu, mfu, computeS, exposedCommS, bubbleS})
        {
            line += "," + Real(v);
        }
    }
    else
    {
        line += ",,,,,,"; // no step time for a layout that does not run
    }
    line += haveEnergy ? "," + Real(energyJ) + "," + Real(avgPowerW) : ",,";
    return line + "," + std::to_string(peakBytes) + "," + gib + "," + CsvField(reason);
}

uint64_t
SweepRow::Gpus() const
{
    return uint64_t(tp) * pp * cp * dp;
}

bool
ParseSweepRow(const std::string& line, SweepRow& row, SweepCsvFormat format)
{
    std::vector<std::string> f;
    const std::size_t missing = format == SweepCsvFormat::NO_CP_EP      ? 6
                                : format == SweepCsvFormat::NO_DTYPE    ? 4
                                : format == SweepCsvFormat::NO_HARDWARE ? 3
                                                                        : 0;
    if (!SplitCsvLine(line, f) || f.size() != kColumnCount - missing)
    {
        return false;
    }
    // The columns an older file lacks, filled in: the degrees the sweep did not vary then (1),
    // the compute type, energy and machine it did not keep (empty).
    if (format == SweepCsvFormat::NO_CP_EP)
    {
        f.insert(f.begin() + 4, {"1", "1"});
    }
    if (format == SweepCsvFormat::NO_CP_EP || format == SweepCsvFormat::NO_DTYPE)
    {
        f.insert(f.begin() + 9, "");
    }
    if (format != SweepCsvFormat::CURRENT)
    {
        f.insert(f.begin() + 17, {"", ""});
        f.insert(f.begin() + 1, "");
    }
    SweepRow r;
    if (!ParseCount(f[0], r.layout) || !ParseCount32(f[2], r.tp) || !ParseCount32(f[3], r.pp)
        || !ParseCount32(f[4], r.dp) || !ParseCount32(f[5], r.cp) || !ParseCount32(f[6], r.ep)
        || !ParseCount32(f[7], r.vpp) || !ParseCount32(f[8], r.mbs) || f[9].empty()
        || (f[11] != "yes" && f[11] != "no") || !ParseCount(f[20], r.peakBytes))
    {
        return false;
    }
    r.hardware = f[1];
    r.recompute = f[9];
    r.dtype = f[10];
    r.fits = f[11] == "yes";
    if (r.fits)
    {
        double* values[] = {
            &r.stepTimeS, &r.tflopsPerGpu, &r.mfu, &r.computeS, &r.exposedCommS, &r.bubbleS};
        for (std::size_t i = 0; i < 6; ++i)
        {
            if (!ParseReal(f[12 + i], *values[i]))
            {
                return false;
            }
        }
    }
    r.haveEnergy = !f[18].empty();
    if (r.haveEnergy && (!ParseReal(f[18], r.energyJ) || !ParseReal(f[19], r.avgPowerW)))
    {
        return false;
    }
    r.reason = f[22];
    row = r;
    return true;
}

SweepRow
MakeSweepRow(uint64_t layout, const SweepPoint& p, const std::string& hardware)
{
    SweepRow r;
    r.layout = layout;
    r.hardware = hardware;
    r.tp = p.run.parallel.tp;
    r.pp = p.run.parallel.pp;
    r.dp = p.run.parallel.dp;
    r.cp = p.run.parallel.cp;
    r.ep = p.run.parallel.ep;
    r.vpp = p.run.parallel.virtualStages;
    r.mbs = p.run.microBatch;
    r.recompute = ToString(p.run.recompute);
    r.dtype = ToString(p.run.dtype);
    r.fits = p.report.feasible;
    if (r.fits)
    {
        r.stepTimeS = p.report.stepTimeS;
        r.tflopsPerGpu = p.report.tflopsPerGpu;
        r.mfu = p.report.mfu;
        r.computeS = p.report.computeS;
        r.exposedCommS = p.report.exposedCommS;
        r.bubbleS = p.report.bubbleS;
        r.haveEnergy = p.report.haveEnergy;
        r.energyJ = p.report.energyJ;
        r.avgPowerW = p.report.avgPowerW;
    }
    r.peakBytes = p.report.memory.peak;
    r.reason = p.report.reason;
    // The canonical form: what the file keeps.
    SweepRow canonical;
    ParseSweepRow(r.ToCsv(), canonical);
    return canonical;
}

void
RankSweepRows(std::vector<SweepRow>& rows)
{
    std::sort(rows.begin(),
              rows.end(),
              [](const SweepRow& a, const SweepRow& b)
              {
                  if (a.fits != b.fits)
                  {
                      return a.fits;
                  }
                  if (a.fits && a.stepTimeS != b.stepTimeS)
                  {
                      return a.stepTimeS < b.stepTimeS;
                  }
                  if (!a.fits && a.peakBytes != b.peakBytes)
                  {
                      return a.peakBytes < b.peakBytes;
                  }
                  return a.layout < b.layout;
              });
}

std::vector<SweepRow>
ReadSweepCsv(const std::string& path, uint32_t* dropped)
{
    std::ifstream in(path, std::ios::binary);
    if (!in)
    {
        throw SpecError(path, "", "cannot read the sweep results");
    }
    std::string line;
    const bool read = bool(std::getline(in, line));
    const SweepCsvFormat format = !read                        ? SweepCsvFormat::CURRENT
                                  : line == kLegacyColumns     ? SweepCsvFormat::NO_CP_EP
                                  : line == kNoDtypeColumns    ? SweepCsvFormat::NO_DTYPE
                                  : line == kNoHardwareColumns ? SweepCsvFormat::NO_HARDWARE
                                                               : SweepCsvFormat::CURRENT;
    if (!read || (line != kColumns && format == SweepCsvFormat::CURRENT))
    {
        throw SpecError(path,
                        "",
                        "not a sweep results.csv (its first line is not the header '"
                            + std::string(kColumns) + "')");
    }
    std::vector<SweepRow> rows;
    uint32_t bad = 0;
    int number = 1;
    while (std::getline(in, line))
    {
        ++number;
        SweepRow r;
        // A line cut short by a kill has no newline: eof is set by that getline. A whole line
        // that is not a row was changed after the sweep wrote it: an error, not a layout to
        // run again (or, merged, to call missing).
        if (in.eof())
        {
            bad += line.empty() ? 0 : 1;
        }
        else if (ParseSweepRow(line, r, format))
        {
            rows.push_back(r);
        }
        else
        {
            throw SpecError(path,
                            "",
                            "not a row of the sweep (its columns: " + std::string(kColumns)
                                + "; every figure a number >= 0): '" + line.substr(0, 200) + "'",
                            number);
        }
    }
    if (dropped)
    {
        *dropped = bad;
    }
    return rows;
}

std::string
SweepCsvText(const std::vector<SweepRow>& rows)
{
    std::string text = std::string(kColumns) + "\n";
    for (const auto& r : rows)
    {
        text += r.ToCsv() + "\n";
    }
    return text;
}

void
WriteSweepCsv(const std::string& path, const std::vector<SweepRow>& rows)
{
    const std::string tmp = path + ".tmp";
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        out << SweepCsvText(rows);
        out.close();
        if (!out)
        {
            throw SpecError(path, "", "cannot write the sweep results");
        }
    }
    std::error_code ec;
    std::filesystem::rename(tmp, path, ec);
    if (ec)
    {
        throw SpecError(path, "", "cannot write the sweep results: " + ec.message());
    }
}

} // namespace rapidllm
} // namespace ns3
