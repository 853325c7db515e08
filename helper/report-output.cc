/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "report-output.h"

#include "ns3/spec-error.h"
#include "study-plot.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace ns3 {
namespace rapidllm {

std::string
FormatNumber(double x, int digits)
{
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%.*g", digits, x);
    return buf;
}

std::string
FormatExact(double x)
{
    char buf[64];
    const std::to_chars_result r = std::to_chars(buf, buf + sizeof(buf), x);
    return std::string(buf, r.ptr);
}

double
ToGib(uint64_t bytes)
{
    return double(bytes) / double(1ull << 30);
}

std::string
TableCell(std::string text, std::size_t width)
{
    text.resize(std::max(text.size(), width), ' ');
    return text + " ";
}

std::string
LargestBatchText(uint32_t largest)
{
    return largest == 0 ? "not one request fits"
                        : "at most " + std::to_string(largest) + " requests fit";
}

std::string
CsvField(const std::string& text)
{
    if (text.find_first_of(",\"\n\r") == std::string::npos)
    {
        return text;
    }
    std::string out = "\"";
    for (char c : text)
    {
        out += c == '"' ? std::string("\"\"") : std::string(1, c == '\n' || c == '\r' ? ' ' : c);
    }
    return out + "\"";
}

std::string
CsvLine(const std::vector<std::string>& fields)
{
    std::string line;
    for (std::size_t i = 0; i < fields.size(); ++i)
    {
        line += (i > 0 ? "," : "") + CsvField(fields[i]);
    }
    return line + "\n";
}

bool
SplitCsvLine(const std::string& line, std::vector<std::string>& fields)
{
    fields.assign(1, "");
    bool quoted = false;
    for (std::size_t i = 0; i < line.size(); ++i)
    {
        const char c = line[i];
        if (quoted)
        {
            if (c == '"' && i + 1 < line.size() && line[i + 1] == '"')
            {
                fields.back() += '"';
                ++i;
            }
            else if (c == '"')
            {
                quoted = false;
            }
            else
            {
                fields.back() += c;
            }
        }
        else if (c == '"')
        {
            quoted = true;
        }
        else if (c == ',')
        {
            fields.emplace_back();
        }
        else
        {
            fields.back() += c;
        }
    }
    return !quoted;
}

void
CreateOutputDir(const std::string& dir)
{
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec)
    {
        throw SpecError("command line", "out", "cannot create '" + dir + "': " + ec.message());
    }
}

NewOutputDir::NewOutputDir(const std::string& dir)
{
    std::error_code ec;
    for (std::filesystem::path p = std::filesystem::path(dir).lexically_normal();
         !p.empty() && !std::filesystem::exists(p, ec);
         p = p.parent_path())
    {
        m_made.push_back(p.string());
    }
    CreateOutputDir(dir);
}

NewOutputDir::~NewOutputDir()
{
    std::error_code ec;
    for (const auto& p : m_made)
    {
        // remove() takes an empty folder only: whatever a failed run wrote there stays.
        if (!std::filesystem::remove(p, ec))
        {
            break;
        }
    }
}

void
NewOutputDir::Keep()
{
    m_made.clear();
}

void
RefuseSweepFolder(const std::string& dir, const std::string& command)
{
    std::error_code ec;
    if (std::filesystem::exists(std::filesystem::path(dir) / "sweep.json", ec))
    {
        throw SpecError("command line",
                        "out",
                        "'" + dir + "' holds a sweep (sweep.json), whose results.csv " + command
                            + " would replace; choose another --out");
    }
}

namespace {

/**
 * \return where WriteOutputFile(\p path) writes: "" for a device, a FIFO or a terminal, written
 * through; else the file it replaces by renaming a temporary file onto it (a symbolic link's
 * target, so that the link stays)
 */
std::string
ReplacedFile(const std::string& path)
{
    std::error_code ec;
    const std::filesystem::file_status status = std::filesystem::status(path, ec);
    if (std::filesystem::exists(status) && !std::filesystem::is_regular_file(status)
        && !std::filesystem::is_directory(status))
    {
        return "";
    }
    return std::filesystem::is_symlink(std::filesystem::symlink_status(path, ec))
               ? std::filesystem::weakly_canonical(path, ec).string()
               : path;
}

} // namespace

void
CheckOutputFile(const std::string& path, const std::string& option)
{
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec))
    {
        throw SpecError("command line", option, "'" + path + "' is a directory; give a file");
    }
    const std::string target = ReplacedFile(path);
    if (target.empty())
    {
        return; // a device or a FIFO: opened when written (a FIFO waits for its reader)
    }
    // The temporary file the output is written through: nothing left behind, an existing file
    // untouched.
    const std::string probe = target + ".tmp";
    const bool writable = static_cast<bool>(std::ofstream(probe, std::ios::app));
    std::filesystem::remove(probe, ec);
    if (!writable)
    {
        const std::filesystem::path parent = std::filesystem::path(target).parent_path();
        throw SpecError("command line",
                        option,
                        "cannot write '" + path + "'"
                            + (!parent.empty() && !std::filesystem::exists(parent, ec)
                                   ? ": its directory '" + parent.string() + "' does not exist"
                                   : ""));
    }
}

void
WriteOutputFile(const std::string& path, const std::string& text)
{
    WriteOutputFiles({{path, text}});
}

void
WriteOutputFiles(const std::vector<std::pair<std::string, std::string>>& files)
{
    // Every file to a temporary one first; only when all are written is each renamed into
    // place (a full disk left a study's new results.csv beside its old results.json).
    std::vector<std::pair<std::string, std::string>> written; // temporary -> target
    auto discard = [&written]()
    {
        std::error_code ignored;
        for (const auto& w : written)
        {
            std::filesystem::remove(w.first, ignored);
        }
    };
    for (const auto& [path, text] : files)
    {
        const std::string target = ReplacedFile(path);
        // Written through, as a shell's > does, for a device or a FIFO: a file renamed onto it
        // would replace it.
        const std::string temporary = target.empty() ? path : target + ".tmp";
        std::ofstream file(temporary);
        file << text;
        file.close();
        if (!target.empty())
        {
            written.emplace_back(temporary, target);
        }
        if (!file)
        {
            const OutputError error(path);
            discard();
            throw error;
        }
    }
    for (std::size_t i = 0; i < written.size(); ++i)
    {
        std::error_code ec;
        std::filesystem::rename(written[i].first, written[i].second, ec);
        if (ec)
        {
            written.erase(written.begin(), written.begin() + i);
            discard();
            throw OutputError(written.front().second, ec.message());
        }
    }
}

namespace {

/** \return GiB of \p bytes, as text */
std::string
Gib(uint64_t bytes)
{
    return FormatNumber(ToGib(bytes));
}

} // namespace

std::string
RunReportCsv(const RunReport& r, bool perRank)
{
    std::ostringstream os;
    if (perRank)
    {
        // The stage empty where not known (a replay of given traces), as JSON leaves it out.
        os << "rank,stage,finish_s,compute_s,exposed_comm_s,bubble_s,host_s\n";
        for (const auto& k : r.ranks)
        {
            os << k.rank << "," << (k.stage >= 0 ? std::to_string(k.stage) : "") << ","
               << FormatNumber(k.finishS) << "," << FormatNumber(k.computeS) << ","
               << FormatNumber(k.exposedCommS) << "," << FormatNumber(k.bubbleS) << ","
               << FormatNumber(k.hostWaitS) << "\n";
        }
        return os.str();
    }
    os << "mode,gpus,backend,step_time_s,ttft_s,tpot_s,tflops_per_gpu,mfu,compute_s,"
          "exposed_comm_s,bubble_s,critical_rank,feasible,peak_memory_gib,capacity_gib,host_s,"
          "tokens_per_s_per_gpu,energy_j,energy_per_token_j,avg_power_w,idle_energy_j,"
          "compute_energy_j,nvlink_energy_j,network_energy_j,busiest_rank,gemm_s,attention_s,"
          "attention_kernel,elementwise_s,optimizer_s,sm_sharing_s,waiting_on,"
          "path_compute_s,path_communication_s,path_host_s\n";
    // Empty where --json has no field or null: a training step has no first token, an
    // inference request no model TFLOP/s, and a replayed trace set neither those nor a memory
    // verdict (the traces carry no model or memory).
    const bool inference = r.haveTokens;
    const bool training = r.mode == "training";
    const bool verdict = r.haveMemory || !r.feasible;
    os << r.mode << "," << r.gpus << "," << r.backend << "," << FormatNumber(r.stepTimeS) << ","
       << (inference ? FormatNumber(r.ttftS) : "") << ","
       << (inference && r.tpotDefined ? FormatNumber(r.tpotS) : "") << ","
       << (training ? FormatNumber(r.tflopsPerGpu) : "") << ","
       << (training ? FormatNumber(r.mfu) : "") << "," << FormatNumber(r.computeS) << ","
       << FormatNumber(r.exposedCommS) << "," << FormatNumber(r.bubbleS) << "," << r.criticalRank
       << "," << (verdict ? (r.feasible ? "true" : "false") : "") << ",";
    if (r.haveMemory)
    {
        os << Gib(r.memory.peak) << "," << Gib(r.capacityBytes);
    }
    else
    {
        os << ",";
    }
    os << "," << FormatNumber(r.hostWaitS) << ","
       << (inference ? FormatNumber(r.tokensPerSPerGpu) : "");
    // The energy of --json (energy_j, energy_per_token_j, avg_power_w, energy_breakdown_j),
    // empty where not known (no power model; energy per token in inference only).
    auto energy = [&r](double v, bool applies = true)
    {
        return r.haveEnergy && applies ? FormatNumber(v) : std::string();
    };
    os << "," << energy(r.energyJ) << "," << energy(r.energyPerTokenJ, r.mode == "inference") << ","
       << energy(r.avgPowerW) << "," << energy(r.idleEnergyJ) << "," << energy(r.computeEnergyJ)
       << "," << energy(r.nvlinkEnergyJ) << "," << energy(r.networkEnergyJ);
    // The text's "busiest rank", "compute by kind" and "waiting on" lines (--json's
    // busiest_rank, compute_by_kind_s and exposed_communication_by_op_s). waiting_on is one
    // field of op=seconds pairs, largest first as the text prints them, separated by ';'.
    const std::size_t busiest = r.BusiestRank();
    auto kind = [&r](double v)
    {
        return r.haveComputeKinds ? FormatNumber(v) : std::string();
    };
    std::string waitingOn;
    for (const auto& [op, s] : r.WaitsByDuration())
    {
        waitingOn += (waitingOn.empty() ? "" : ";") + op + "=" + FormatNumber(s);
    }
    os << "," << (busiest < r.ranks.size() ? std::to_string(r.ranks[busiest].rank) : "") << ","
       << kind(r.gemmS) << "," << kind(r.attentionS) << "," << CsvField(r.attentionKernel) << ","
       << kind(r.elementwiseS) << "," << kind(r.optimizerS) << "," << kind(r.smSharingS) << ","
       << CsvField(waitingOn);
    // The critical path's parts (--json's critical_path.breakdown_s, its other time left out:
    // a replay's memory nodes).
    auto path = [&r](double v)
    {
        return r.criticalPath.known ? FormatNumber(v) : std::string();
    };
    os << "," << path(r.criticalPath.computeS) << "," << path(r.criticalPath.communicationS) << ","
       << path(r.criticalPath.hostS) << "\n";
    return os.str();
}

std::string
MemoryReportCsv(const MemoryReport& m, int64_t largestBatch)
{
    std::ostringstream os;
    os << "stage,weights_gib,gradients_gib,optimizer_gib,activations_gib,kv_cache_gib,"
          "framework_gib,peak_gib,capacity_gib,fits,largest_batch\n";
    const std::string largest = largestBatch < 0 ? "" : std::to_string(largestBatch);
    for (const auto& s : m.stages)
    {
        os << s.stage << "," << Gib(s.weights) << "," << Gib(s.gradients) << "," << Gib(s.optimizer)
           << "," << Gib(s.activations) << "," << Gib(s.kvCache) << "," << Gib(s.framework) << ","
           << Gib(s.peak) << "," << Gib(m.capacity) << ","
           << (s.peak <= m.capacity ? "true" : "false") << "," << largest << "\n";
    }
    return os.str();
}

void
WriteBreakdownPng(const std::string& pngPath, const RunReport& r, const std::string& title)
{
    std::vector<std::pair<std::string, double>> parts;
    if (r.haveComputeKinds)
    {
        parts = {{"GEMM", r.gemmS}, {"attention", r.attentionS}, {"elementwise", r.elementwiseS}};
        if (!r.haveTokens)
        {
            parts.push_back({"optimizer", r.optimizerS}); // (an inference request has none)
        }
        // The time kernels lost to the SMs collectives held (the text's "communication's SMs").
        if (r.smSharingS > 1e-12 * r.computeS)
        {
            parts.push_back({"comm.'s SMs", r.smSharingS});
        }
        const double other =
            r.computeS - r.gemmS - r.attentionS - r.elementwiseS - r.optimizerS - r.smSharingS;
        if (other > 1e-3 * r.computeS) // beyond the kinds' nanosecond rounding
        {
            parts.push_back({"other compute", other});
        }
    }
    else
    {
        parts = {{"compute", r.computeS}};
    }
    parts.push_back({"exposed comm.", r.exposedCommS});
    parts.push_back({"bubble", r.bubbleS});
    if (r.hostWaitS > 0)
    {
        parts.push_back({"host", r.hostWaitS});
    }
    PlotSpec plot;
    plot.title = title;
    plot.xLabel = "";
    const std::string step = r.haveTokens ? "request" : "step";
    plot.yLabel =
        "seconds of the " + step + " (critical rank " + std::to_string(r.criticalRank) + ")";
    plot.bars = true;
    PlotSeries s{step + " " + FormatNumber(r.stepTimeS) + " s"
                     + (r.haveTokens ? ", first token " + FormatNumber(r.ttftS) + " s" : ""),
                 {}};
    for (std::size_t i = 0; i < parts.size(); ++i)
    {
        plot.xLabels.push_back({double(i), parts[i].first});
        s.points.push_back({double(i), parts[i].second});
    }
    plot.series = {s};
    WritePlotPng(pngPath, plot);
}

} // namespace rapidllm
} // namespace ns3
