/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// rapid-llm xval: runs every cross-validation workload on the flow-level and on the ns-3
// packet-level network and prints completion times and their relative difference (and, with
// --timing, the wall time of each and the speed-up).

#include "cli-commands.h"
#include "cli-ns3-checks.h"
#include "ns3/cross-validation.h"
#include "ns3/job-echo.h"
#include "ns3/nstime.h"
#include "ns3/packet-resolution.h"
#include "ns3/report-output.h"
#include "ns3/spec-error.h"
#include "ns3/study-json.h"

#include <cmath>
#include <cstdio>
#include <iostream>

namespace ns3 {
namespace rapidllm {

int
RunXvalCommand(const CliArgs& args)
{
    const bool json = args.Flag("json");
    const bool timing = args.Flag("timing");
    const double bar = args.Real("bar");
    if (args.Text("resolution") == "ps")
    {
        UsePicoseconds();
    }
    ApplyPacketAttributes(args.Text("packet"));
    std::vector<XvalWorkload> workloads = XvalWorkloads(args.Flag("quick"));
    const std::string only = args.Text("only");
    if (!only.empty())
    {
        std::vector<XvalWorkload> kept;
        for (auto& w : workloads)
        {
            if (w.name.find(only) != std::string::npos)
            {
                kept.push_back(w);
            }
        }
        if (kept.empty())
        {
            std::string names;
            for (const auto& w : workloads)
            {
                names += (names.empty() ? "" : ", ") + w.name;
            }
            throw SpecError(kCommandLine,
                            "only",
                            "no workload name contains '" + only + "'; the workloads"
                                + (args.Flag("quick") ? " of --quick" : "") + ": " + names);
        }
        workloads = kept;
    }
    if (workloads.size() > 1)
    {
        RefusePacketCaptures(args.Text("packet"),
                             "xval runs " + std::to_string(workloads.size())
                                 + " workloads here, each on its own packet network");
    }
    const bool csv = args.Flag("csv") && !json;
    // The input echo: the options that shape the run and the workloads it ran.
    Json input = {{"version", RapidLlmVersion()},
                  {"quick", args.Flag("quick")},
                  {"only", only},
                  {"bar", bar},
                  {"packet", args.Text("packet")},
                  {"resolution", args.Text("resolution")},
                  {"workloads", Json::array()}};
    for (const auto& workload : workloads)
    {
        input["workloads"].push_back(workload.name);
    }
    EchoAttributeDefaults(input);
    std::vector<std::string> missed; // the rows over the bar
    Json rows = Json::array();
    if (csv)
    {
        std::vector<std::string> header = {"workload",
                                           "flow_s",
                                           "packet_s",
                                           "rel_diff",
                                           "packet_data_packets",
                                           "packet_drops",
                                           "messages",
                                           "within_bar"};
        if (timing)
        {
            header.insert(header.end(), {"flow_wall_s", "packet_wall_s", "speedup"});
        }
        std::cout << CsvLine(header);
    }
    else if (!json)
    {
        std::printf("%-36s %12s %12s %8s", "workload", "flow_us", "packet_us", "rel_diff");
        if (timing)
        {
            std::printf(" %10s %10s %9s %12s", "flow_wall", "pkt_wall", "speed-up", "pkt/wall_s");
        }
        std::printf("\n");
    }
    for (const auto& workload : workloads)
    {
        XvalRow r = CrossValidate(workload);
        const bool within = std::fabs(r.relDiff) <= bar;
        if (!within)
        {
            missed.push_back(r.workload);
        }
        const double speedup = r.flow.wallS > 0 ? r.packet.wallS / r.flow.wallS : 0;
        if (json)
        {
            Json row = r;
            row["within_bar"] = within;
            if (timing)
            {
                row["flow_wall_s"] = r.flow.wallS;
                row["packet_wall_s"] = r.packet.wallS;
                row["speedup"] = speedup;
            }
            rows.push_back(row);
            continue;
        }
        if (csv)
        {
            std::vector<std::string> line = {r.workload,
                                             FormatNumber(r.flow.timeS),
                                             FormatNumber(r.packet.timeS),
                                             FormatNumber(r.relDiff),
                                             std::to_string(r.packet.dataPackets),
                                             std::to_string(r.packet.drops),
                                             std::to_string(r.flow.messages),
                                             within ? "true" : "false"};
            if (timing)
            {
                line.insert(line.end(),
                            {FormatNumber(r.flow.wallS),
                             FormatNumber(r.packet.wallS),
                             FormatNumber(speedup)});
            }
            std::cout << CsvLine(line) << std::flush;
            continue;
        }
        std::printf("%-36s %12.3f %12.3f %+7.2f%%",
                    r.workload.c_str(),
                    r.flow.timeS * 1e6,
                    r.packet.timeS * 1e6,
                    r.relDiff * 100);
        if (timing)
        {
            std::printf(" %9.4fs %9.3fs %8.0fx %12.0f",
                        r.flow.wallS,
                        r.packet.wallS,
                        speedup,
                        r.packet.wallS > 0 ? r.packet.dataPackets / r.packet.wallS : 0);
        }
        // Drops mean TCP's loss recovery (retransmission timeouts) is in the packet time.
        std::printf("%s%s\n",
                    within ? "" : "  <-- over the bar",
                    r.packet.drops == 0
                        ? ""
                        : (" (" + std::to_string(r.packet.drops) + " packets dropped)").c_str());
        std::fflush(stdout);
    }
    if (json)
    {
        std::cout << DumpJson(Json{{"input", input}, {"rows", rows}});
    }
    if (!missed.empty())
    {
        std::cout.flush();
        std::cerr << "rapid-llm xval: " << missed.size() << " of " << workloads.size()
                  << " workloads differ by more than the bar (" << bar * 100
                  << "%): " << missed.front() << (missed.size() > 1 ? ", ..." : "") << "\n";
        return kExitMissedBar;
    }
    return 0;
}

static CliCommandRegistrar g_xvalCommand(
    "xval",
    "cross-validate the flow-level network against the ns-3 packet-level network",
    "Runs each cross-validation workload on the flow-level and the ns-3 packet-level network and "
    "prints both completion times and their relative difference (with --timing, also the wall "
    "time of each and the speed-up). Exit code 4 if a row misses the bar.",
    RunXvalCommand);

} // namespace rapidllm
} // namespace ns3
