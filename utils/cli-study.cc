/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// rapid-llm study faults | study hardware: the fault and hardware studies of the helper
// (helper/fault-study.*, helper/hardware-study.*) with their CSV, JSON and PNG outputs.

#include "cli-commands.h"
#include "cli-interrupt.h"
#include "cli-job-options.h"
#include "cli-ns3-checks.h"
#include "ns3/fault-study.h"
#include "ns3/hardware-study.h"
#include "ns3/job-echo.h"
#include "ns3/packet-resolution.h"
#include "ns3/progress-line.h"
#include "ns3/report-output.h"
#include "ns3/spec-error.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <sstream>

namespace ns3 {
namespace rapidllm {

int
RunStudyFaultsCommand(const CliArgs& args)
{
    RefuseSweepFolder(args.Text("out"), "study faults");
    ResolvedJob job = ReadJobOptions(args);
    FaultStudyConfig config;
    config.links = args.Items("links", ';');
    for (const auto& links : config.links)
    {
        if (links.rfind("random:", 0) != 0 && !IsGpuSet(links))
        {
            // The selector syntax of --fault (a factor here would be the study's to vary).
            auto parsed = ParseFaultOption(links, kCommandLine, "links");
            if (parsed.size() != 1 || parsed.front().timed
                || links.find(':') != std::string::npos && links.rfind("tier:", 0) != 0)
            {
                throw SpecError(kCommandLine,
                                "links",
                                "'" + links
                                    + "': give link selectors without a factor (A-B, A>B, A, "
                                      "tier:DIMENSION or random:K:SEED), separated by ';'; the "
                                      "factors come from --factors");
            }
        }
    }
    config.factors.clear();
    // GPU sets alone take no 0 (a GPU at speed 0 never finishes): their default list stops at
    // 0.25; with links a 0 row of a GPU set says so.
    const bool gpuSetsOnly = std::all_of(config.links.begin(),
                                         config.links.end(),
                                         [](const std::string& l)
                                         {
                                             return IsGpuSet(l);
                                         });
    const std::vector<std::string> factors =
        args.Has("factors") || !gpuSetsOnly ? args.Items("factors", ',')
                                            : std::vector<std::string>{"1", "0.75", "0.5", "0.25"};
    for (const auto& f : factors)
    {
        // Each factor is checked as --fault checks it: 0 (dead) or 1e-6 to 1.
        double factor = -1;
        if (!ParseFiniteNumber(f, factor) || !(factor >= 0 && factor <= 1)
            || (factor > 0 && factor < LinkFaultSpec::kMinFactor))
        {
            throw SpecError(kCommandLine,
                            "factors",
                            "'" + f
                                + "' is not a factor; allowed: 1e-06 to 1 (the share left of a "
                                  "link's bandwidth, or of a GPU set's compute speed, HBM "
                                  "bandwidth or board power) or 0 (a dead link), e.g. "
                                  "--factors=1,0.75,0.5,0.25,0");
        }
        if (std::find(config.factors.begin(), config.factors.end(), factor) != config.factors.end())
        {
            throw SpecError(kCommandLine,
                            "factors",
                            "'" + f + "' is given twice in '" + args.Text("factors")
                                + "' (as a number); give each value once");
        }
        config.factors.push_back(factor);
    }
    config.routings = args.Items("routing", ',');
    config.symmetry = args.Flag("symmetry");
    config.topLinks = static_cast<uint32_t>(args.Count("top-links"));
    config.packetCheck = static_cast<uint32_t>(args.Count("packet-check"));
    config.packet = args.Text("packet");
    if (!config.packet.empty() && config.packetCheck == 0)
    {
        throw SpecError(kCommandLine,
                        "packet",
                        "sets the attributes of the packet spot checks, and there are none: add "
                        "--packet-check=N");
    }
    if (config.packetCheck > 0)
    {
        UsePicoseconds(); // the packet rows' frames (the flow rows are the same at either)
    }
    ApplyPacketAttributes(config.packet);
    if (config.packetCheck > 1)
    {
        RefusePacketCaptures(config.packet, "--packet-check runs a network per checked row");
    }
    FaultStudyResult result;
    {
        const InterruptExit interrupt("rapid-llm study faults: interrupted; nothing written (the "
                                      "study writes its files once every row has run)");
        const bool terminal = ProgressLine::StderrIsTerminal();
        ProgressLine progress(args.Has("progress") ? args.Flag("progress") : terminal, terminal);
        config.onRun = [&progress](std::size_t done, std::size_t total)
        {
            const double elapsed = progress.Elapsed();
            const double rate = elapsed > 0 ? done / elapsed : 0;
            char text[160];
            std::snprintf(text,
                          sizeof(text),
                          "study faults: %zu/%zu runs, %s elapsed, ETA %s",
                          done,
                          total,
                          ProgressLine::Duration(elapsed).c_str(),
                          rate > 0 ? ProgressLine::Duration((total - done) / rate).c_str() : "?");
            progress.Show(text, done == total);
        };
        result = RunFaultStudy(job, config);
        progress.Finish();
    }
    // A study without a single row that ran has nothing to show: the first row's error, and no
    // files.
    if (!result.rows.empty()
        && std::none_of(result.rows.begin(),
                        result.rows.end(),
                        [](const FaultStudyRow& r)
                        {
                            return r.ok;
                        }))
    {
        const FaultStudyRow& r = result.rows.front();
        throw Error("every row failed; the first (" + r.routing + ", links " + r.links + ", factor "
                    + FormatNumber(r.factor) + "): " + r.error);
    }
    WriteFaultStudy(args.Text("out"), job, config, result);

    // --json wins over --csv, as in every other command: stdout is one document.
    if (args.Flag("json"))
    {
        std::cout << DumpJson(FaultStudyJson(job, config, result));
    }
    else if (args.Flag("csv"))
    {
        std::cout << FaultStudyCsv(result);
    }
    else
    {
        std::cout << "Fault study of " << job.model.name << " on " << job.run.parallel.Gpus()
                  << " x " << job.hardware.gpu.name << " (" << job.hardware.name << ")\n";
        const MemoryReport& memory = result.memory;
        std::printf("  peak memory per GPU %.2f GiB of %.2f GiB, %s\n",
                    memory.worst.peak / double(1ull << 30),
                    memory.capacity / double(1ull << 30),
                    memory.feasible ? "fits"
                                    : ("DOES NOT FIT: " + memory.reason
                                       + " (the step times are of a job that could not run)")
                                          .c_str());
        // Inference: the request's time, and its first token's and each later token's.
        const bool inference = job.run.mode == RunMode::INFERENCE;
        std::printf("  %-16s %-28s %7s %12s %9s %12s%s\n",
                    "routing",
                    "links",
                    "factor",
                    inference ? "request (s)" : "step (s)",
                    "slowdown",
                    "exposed (s)",
                    inference ? "    TTFT (ms)    TPOT (ms)" : "");
        for (const auto& r : result.rows)
        {
            if (r.ok)
            {
                std::printf("  %-16s %-28s %7s %12.6f %9.4f %12.6f",
                            r.routing.c_str(),
                            r.links.c_str(),
                            FormatNumber(r.factor).c_str(),
                            r.stepTimeS,
                            r.slowdown,
                            r.exposedCommS);
                if (inference)
                {
                    std::printf(" %12.4f", r.ttftS * 1e3);
                    if (r.tpotS >= 0)
                    {
                        std::printf(" %12.4f", r.tpotS * 1e3);
                    }
                    else
                    {
                        std::printf(" %12s", "-");
                    }
                }
                std::printf("\n");
            }
            else
            {
                std::printf("  %-16s %-28s %7s  error: %s\n",
                            r.routing.c_str(),
                            r.links.c_str(),
                            FormatNumber(r.factor).c_str(),
                            r.error.c_str());
            }
        }
        // The links a random set drew (the same for every row of the set), once each.
        std::vector<std::string> drawn;
        for (const auto& r : result.rows)
        {
            if (r.links.rfind("random:", 0) == 0
                && std::find(drawn.begin(), drawn.end(), r.links) == drawn.end())
            {
                drawn.push_back(r.links);
                std::string links;
                for (const auto& s : r.selectors)
                {
                    links += (links.empty() ? "" : ", ") + s;
                }
                std::printf("  %s drew %s\n", r.links.c_str(), links.c_str());
            }
        }
        if (!result.checks.empty())
        {
            std::cout << "Packet spot checks (" << result.scaledJob << "):\n";
            for (const auto& c : result.checks)
            {
                if (c.ok)
                {
                    std::printf("  %-16s %-28s %7s flow %.6f s, packet %.6f s, flow/packet "
                                "difference %+.2f%%\n",
                                c.routing.c_str(),
                                c.links.c_str(),
                                FormatNumber(c.factor).c_str(),
                                c.flowS,
                                c.packetS,
                                100 * c.relDiff);
                }
                else
                {
                    std::printf("  %-16s %-28s %7s error: %s\n",
                                c.routing.c_str(),
                                c.links.c_str(),
                                FormatNumber(c.factor).c_str(),
                                c.error.c_str());
                }
            }
        }
        std::cout << "Wrote " << args.Text("out") << "/results.csv, results.json, slowdown.png"
                  << (config.links.size() > 1
                          ? " and slowdown-1.png to slowdown-" + std::to_string(config.links.size())
                                + ".png (one per link set)"
                          : std::string())
                  << "\n"
                  << JobInputText(job, "flow", args.Text("routing"), config.packet);
    }
    if (!result.memory.feasible)
    {
        // Whatever the format (results.json and --json carry the verdict as "memory").
        std::cout.flush();
        std::cerr << "rapid-llm study faults: note: the job does not fit in GPU memory ("
                  << result.memory.reason << ")\n";
    }
    return 0;
}

int
RunStudyHardwareCommand(const CliArgs& args)
{
    RefuseSweepFolder(args.Text("out"), "study hardware");
    JobOptions options = ReadJobOptionValues(args);
    const ResolvedJob base = options.ToSpecs(); // the job must resolve before it is varied
    NoteJob(args, base);
    std::string field;
    const std::vector<std::string> values = ParseVary(args.Text("vary"), field);
    if (field == "gpu.sm_count")
    {
        std::cerr << "rapid-llm study hardware: note: " << SmCountNote() << "\n";
    }
    std::string backend;
    std::string routing;
    JobBackendAndRouting(args, base, backend, routing);
    RefusePacketCaptures(args.Text("packet"), "a hardware study runs a network per value");
    std::vector<HardwareStudyRow> rows;
    {
        const InterruptExit interrupt("rapid-llm study hardware: interrupted; nothing written "
                                      "(the study writes its files once every value has run)");
        rows = RunHardwareStudy(options, field, values, backend, routing, args.Flag("symmetry"));
    }
    const std::string packet = args.Text("packet");
    const bool timePlot =
        WriteHardwareStudy(args.Text("out"), field, rows, backend, routing, packet);
    if (args.Flag("json"))
    {
        std::cout << DumpJson(HardwareStudyJson(field, rows, backend, routing, packet));
        return 0;
    }
    if (args.Flag("csv"))
    {
        std::cout << HardwareStudyCsv(field, rows);
        return 0;
    }
    const bool inference = base.run.mode == RunMode::INFERENCE;
    std::cout << "Hardware study of " << base.model.name << " " << ToString(base.run.mode) << " on "
              << base.run.parallel.Gpus() << " x " << base.hardware.GpuLabel() << ": " << field
              << "\n";
    // The energy of a step (or per token) and the average power, where the GPU has a power model.
    const bool energy = std::any_of(rows.begin(),
                                    rows.end(),
                                    [](const HardwareStudyRow& r)
                                    {
                                        return r.report.haveEnergy;
                                    });
    std::printf("  %-12s %-5s %14s %12s",
                "value",
                "fits",
                inference ? "TPOT (ms)" : "step (s)",
                inference ? "TTFT (ms)" : "MFU");
    if (energy)
    {
        std::printf(" %12s %8s", inference ? "J/token" : "energy (kJ)", "W/GPU");
    }
    std::printf(" %12s\n", "peak (GiB)");
    auto energyCells = [&](const RunReport& p)
    {
        if (energy && p.haveEnergy)
        {
            std::printf(
                " %#12.4g %8.0f", inference ? p.energyPerTokenJ : p.energyJ / 1e3, p.avgPowerW);
        }
        else if (energy)
        {
            std::printf(" %12s %8s", "-", "-");
        }
    };
    for (const auto& r : rows)
    {
        const RunReport& p = r.report;
        // A variant that does not fit is predicted all the same, as run does (the times of a
        // job that could not run), "no" in its fits column.
        // MFU as run prints it, a percentage; no TPOT with one generated token.
        char time[32];
        char second[32];
        if (inference && !p.tpotDefined)
        {
            std::snprintf(time, sizeof(time), "n/a");
        }
        else
        {
            std::snprintf(time, sizeof(time), "%.4f", inference ? p.tpotS * 1e3 : p.stepTimeS);
        }
        if (inference)
        {
            std::snprintf(second, sizeof(second), "%.4f", p.ttftS * 1e3);
        }
        else
        {
            std::snprintf(second, sizeof(second), "%.1f %%", 100 * p.mfu);
        }
        std::printf(
            "  %-12s %-5s %14s %12s", r.value.c_str(), p.feasible ? "yes" : "no", time, second);
        energyCells(p);
        // Inference: the most requests a variant that does not fit holds instead.
        const std::string instead =
            inference && !p.feasible ? "  " + LargestBatchText(r.largestBatch) : "";
        std::printf(" %12.2f of %.2f%s\n",
                    p.memory.peak / double(1ull << 30),
                    p.capacityBytes / double(1ull << 30),
                    instead.c_str());
    }
    std::cout << "Wrote " << args.Text("out") << "/results.csv, results.json, "
              << (timePlot ? "step-time.png, " : "") << "memory.png"
              << (timePlot ? "" : " (no step-time.png: no value fits)") << "\n"
              << JobInputText(base, backend, routing, packet);
    return 0;
}

static CliCommandRegistrar g_studyFaults(
    "study faults",
    "step-time sensitivity to degraded or dead links, per routing policy",
    "Runs a job with each set of links (--links) at each bandwidth factor (--factors) under each "
    "routing policy (--routing) on the flow-level network and writes DIR/results.csv, "
    "DIR/results.json (step time, slowdown against the healthy run, exposed communication, the "
    "most loaded links) and DIR/slowdown.png; --packet-check=N re-runs N rows on the ns-3 "
    "packet-level network with a scaled-down job.",
    RunStudyFaultsCommand);

static CliCommandRegistrar g_studyHardware(
    "study hardware",
    "a job on variants of its hardware (or model): one spec field varied",
    "Runs a job (training or inference) once per value of one spec field (--vary "
    "FIELD=V1,V2,..., FIELD as --set names it, each value a value or a scale such as 0.5x) and "
    "writes DIR/results.csv, DIR/results.json, DIR/step-time.png and DIR/memory.png. A field "
    "that a job option also sets (model.layers and --layers, and so on) is refused: the option "
    "would override every varied value.",
    RunStudyHardwareCommand);

} // namespace rapidllm
} // namespace ns3
