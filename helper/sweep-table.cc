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
#include <map>

namespace ns3 {
namespace rapidllm {

namespace {

/**
 * The columns of results.csv, in order: with the GPUs and an uneven pipeline split, a row is
 * all a `run` of its layout needs.
 */
const char* const kColumns = "layout,hardware,gpus,tp,pp,dp,cp,ep,vpp,pp_schedule,"
                             "first_stage_layers,last_stage_layers,mbs,recompute,dtype,"
                             "fits,step_time_s,tflops_per_gpu,mfu,compute_s,exposed_comm_s,"
                             "bubble_s,energy_j,avg_power_w,peak_memory_bytes,peak_memory_gib,"
                             "reason";
/** The columns before the GPUs and the split (read, never written). */
const char* const kNoSplitColumns = "layout,hardware,tp,pp,dp,cp,ep,vpp,pp_schedule,mbs,recompute,"
                                    "dtype,fits,step_time_s,tflops_per_gpu,mfu,compute_s,"
                                    "exposed_comm_s,bubble_s,energy_j,avg_power_w,"
                                    "peak_memory_bytes,peak_memory_gib,reason";
/** The columns before the pipeline schedule (read, never written). */
const char* const kNoScheduleColumns = "layout,hardware,tp,pp,dp,cp,ep,vpp,mbs,recompute,dtype,"
                                       "fits,step_time_s,tflops_per_gpu,mfu,compute_s,"
                                       "exposed_comm_s,bubble_s,energy_j,avg_power_w,"
                                       "peak_memory_bytes,peak_memory_gib,reason";
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

/** \return the names of a header line's columns */
std::vector<std::string>
ColumnsOf(const std::string& header)
{
    std::vector<std::string> names;
    SplitCsvLine(header, names);
    return names;
}

/**
 * \return what an older file's missing column held when that version ran: the degrees it did not
 * vary (1), the schedule it always ran (1f1b); the type, machine and energy it did not keep ("")
 */
std::string
MissingColumn(const std::string& name)
{
    if (name == "cp" || name == "ep")
    {
        return "1";
    }
    return name == "pp_schedule" ? "1f1b" : "";
}

/** \return \p v with 10 significant digits (what the file keeps) */
std::string
Real(double v)
{
    return FormatExact(v); // the JSON's rows read back from here must be the run's numbers
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
    // An even split's layer counts are empty: nothing to give `run`.
    auto layers = [](uint32_t n)
    {
        return n > 0 ? std::to_string(n) : std::string();
    };
    std::string line = std::to_string(layout) + "," + CsvField(hardware) + ","
                       + std::to_string(Gpus()) + "," + std::to_string(tp) + ","
                       + std::to_string(pp) + "," + std::to_string(dp) + "," + std::to_string(cp)
                       + "," + std::to_string(ep) + "," + std::to_string(vpp) + "," + schedule + ","
                       + layers(firstStageLayers) + "," + layers(lastStageLayers) + ","
                       + std::to_string(mbs) + "," + recompute + "," + dtype + ","
                       + (fits ? "true" : "false"); // as the other commands' CSVs
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

namespace {

/** Parses \p line of a file with the columns \p columns (each one of kColumns). */
bool
ParseRowOf(const std::string& line, SweepRow& row, const std::vector<std::string>& columns)
{
    std::vector<std::string> fields;
    if (!SplitCsvLine(line, fields) || fields.size() != columns.size())
    {
        return false;
    }
    std::map<std::string, std::string> byName;
    for (std::size_t i = 0; i < columns.size(); ++i)
    {
        byName[columns[i]] = fields[i];
    }
    auto f = [&](const char* name)
    {
        auto it = byName.find(name);
        return it != byName.end() ? it->second : MissingColumn(name);
    };
    SweepRow r;
    const std::string fits = f("fits");
    if (!ParseCount(f("layout"), r.layout) || !ParseCount32(f("tp"), r.tp)
        || !ParseCount32(f("pp"), r.pp) || !ParseCount32(f("dp"), r.dp)
        || !ParseCount32(f("cp"), r.cp) || !ParseCount32(f("ep"), r.ep)
        || !ParseCount32(f("vpp"), r.vpp) || !ParseCount32(f("mbs"), r.mbs)
        || f("recompute").empty()
        || (fits != "true" && fits != "false" && fits != "yes" && fits != "no")
        || !ParseCount(f("peak_memory_bytes"), r.peakBytes))
    {
        return false;
    }
    static const std::vector<std::string> schedules = RunSpec::Choices("pp_schedule");
    r.schedule = f("pp_schedule");
    if (std::find(schedules.begin(), schedules.end(), r.schedule) == schedules.end())
    {
        return false;
    }
    for (const auto& [name, layers] : {std::make_pair("first_stage_layers", &r.firstStageLayers),
                                       std::make_pair("last_stage_layers", &r.lastStageLayers)})
    {
        if (!f(name).empty() && !ParseCount32(f(name), *layers))
        {
            return false;
        }
    }
    r.hardware = f("hardware");
    r.recompute = f("recompute");
    r.dtype = f("dtype");
    r.fits = fits == "true" || fits == "yes"; // yes and no: files written before stop 64
    if (r.fits)
    {
        const std::pair<const char*, double*> values[] = {{"step_time_s", &r.stepTimeS},
                                                          {"tflops_per_gpu", &r.tflopsPerGpu},
                                                          {"mfu", &r.mfu},
                                                          {"compute_s", &r.computeS},
                                                          {"exposed_comm_s", &r.exposedCommS},
                                                          {"bubble_s", &r.bubbleS}};
        for (const auto& [name, value] : values)
        {
            if (!ParseReal(f(name), *value))
            {
                return false;
            }
        }
    }
    r.haveEnergy = !f("energy_j").empty();
    if (r.haveEnergy
        && (!ParseReal(f("energy_j"), r.energyJ) || !ParseReal(f("avg_power_w"), r.avgPowerW)))
    {
        return false;
    }
    r.reason = f("reason");
    row = r;
    return true;
}

} // namespace

bool
ParseSweepRow(const std::string& line, SweepRow& row)
{
    static const std::vector<std::string> columns = ColumnsOf(kColumns);
    return ParseRowOf(line, row, columns);
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
    r.schedule = p.run.parallel.schedule;
    r.firstStageLayers = p.run.parallel.firstStageLayers;
    r.lastStageLayers = p.run.parallel.lastStageLayers;
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
    const char* const headers[] = {kColumns,
                                   kNoSplitColumns,
                                   kNoScheduleColumns,
                                   kNoHardwareColumns,
                                   kNoDtypeColumns,
                                   kLegacyColumns};
    if (!read || std::find(std::begin(headers), std::end(headers), line) == std::end(headers))
    {
        throw SpecError(path,
                        "",
                        "not a sweep results.csv (its first line is not the header '"
                            + std::string(kColumns) + "')");
    }
    const std::vector<std::string> columns = ColumnsOf(line);
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
        else if (ParseRowOf(line, r, columns))
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
            throw OutputError(path);
        }
    }
    std::error_code ec;
    std::filesystem::rename(tmp, path, ec);
    if (ec)
    {
        throw OutputError(path, ec.message());
    }
}

} // namespace rapidllm
} // namespace ns3
