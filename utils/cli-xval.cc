/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// rapid-llm xval: runs every cross-validation workload on the flow-level and on the ns-3
// packet-level network and prints completion times, their relative difference, wall times
// and the speed-up.

#include "cli-commands.h"
#include "ns3/command-line.h"
#include "ns3/config.h"
#include "ns3/cross-validation.h"
#include "ns3/nstime.h"
#include "ns3/spec-error.h"
#include "ns3/string.h"

#include <cmath>
#include <cstdio>
#include <iostream>
#include <sstream>

namespace ns3 {
namespace rapidllm {

namespace {

/** \return a number printed reproducibly */
std::string
Num(double x)
{
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%.9g", x);
    return buf;
}

} // namespace

int
RunXvalCommand(int argc, char** argv)
{
    bool quick = false;
    bool json = false;
    std::string only;
    double bar = 0.05;
    ns3::CommandLine cmd("rapid-llm xval");
    cmd.Usage("Runs each cross-validation workload on the flow-level and the ns-3 packet-level "
              "network and prints both completion times, their relative difference, the wall "
              "time of each and the speed-up. Exit code 1 if a row misses the bar.");
    cmd.AddValue("quick", "only the small workloads (as the test suite runs)", quick);
    cmd.AddValue("json", "print a JSON list of rows", json);
    cmd.AddValue("only", "run only workloads whose name contains this text", only);
    cmd.AddValue("bar", "largest accepted |relative difference|", bar);
    std::string resolution = "ps";
    cmd.AddValue("resolution",
                 "simulator time resolution, ps or ns: at ns a 9002-byte frame at 240 GB/s "
                 "(37.3 ns) is rounded to 37 ns, a 0.8% rate error",
                 resolution);
    std::string attributes;
    cmd.AddValue("packet",
                 "PacketNetwork attributes NAME=VALUE[,...], e.g. QueueDisc=fifo,MinRto=1ms",
                 attributes);
    CheckOptions(argc, argv, {"quick", "json", "only", "bar", "resolution", "packet"});
    cmd.Parse(argc, argv);
    if (resolution == "ps")
    {
        // Must precede the first simulation of the process (ns-3 converts the Time values
        // created so far, e.g. attribute defaults, only until the simulator starts).
        Time::SetResolution(Time::PS);
    }
    else if (resolution != "ns")
    {
        throw SpecError("command line", "--resolution", "use ps or ns");
    }
    std::stringstream list(attributes);
    std::string item;
    while (std::getline(list, item, ','))
    {
        const std::size_t eq = item.find('=');
        const std::string name = "ns3::rapidllm::PacketNetwork::" + item.substr(0, eq);
        if (eq == std::string::npos
            || !Config::SetDefaultFailSafe(name, StringValue(item.substr(eq + 1))))
        {
            throw SpecError("command line",
                            "--packet",
                            "'" + item + "' is not NAME=VALUE of a PacketNetwork attribute");
        }
    }
    std::vector<XvalWorkload> workloads = XvalWorkloads(quick);
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
            throw SpecError("command line", "--only", "no workload name contains '" + only + "'");
        }
        workloads = kept;
    }
    bool pass = true;
    if (json)
    {
        std::cout << "[";
    }
    else
    {
        std::printf("%-36s %12s %12s %8s %10s %10s %9s %12s\n",
                    "workload",
                    "flow_us",
                    "packet_us",
                    "rel_diff",
                    "flow_wall",
                    "pkt_wall",
                    "speed-up",
                    "pkt/wall_s");
    }
    for (std::size_t i = 0; i < workloads.size(); ++i)
    {
        XvalRow r = CrossValidate(workloads[i]);
        pass = pass && std::fabs(r.relDiff) <= bar;
        const double speedup = r.flow.wallS > 0 ? r.packet.wallS / r.flow.wallS : 0;
        const double rate = r.packet.wallS > 0 ? r.packet.dataPackets / r.packet.wallS : 0;
        if (json)
        {
            std::cout << (i ? ",\n " : "") << "{\"workload\": \"" << r.workload
                      << "\", \"flow_s\": " << Num(r.flow.timeS)
                      << ", \"packet_s\": " << Num(r.packet.timeS)
                      << ", \"rel_diff\": " << Num(r.relDiff)
                      << ", \"flow_wall_s\": " << Num(r.flow.wallS)
                      << ", \"packet_wall_s\": " << Num(r.packet.wallS)
                      << ", \"speedup\": " << Num(speedup)
                      << ", \"packet_data_packets\": " << r.packet.dataPackets
                      << ", \"packet_drops\": " << r.packet.drops
                      << ", \"messages\": " << r.flow.messages << "}";
        }
        else
        {
            std::printf("%-36s %12.3f %12.3f %+7.2f%% %9.4fs %9.3fs %8.0fx %12.0f%s\n",
                        r.workload.c_str(),
                        r.flow.timeS * 1e6,
                        r.packet.timeS * 1e6,
                        r.relDiff * 100,
                        r.flow.wallS,
                        r.packet.wallS,
                        speedup,
                        rate,
                        std::fabs(r.relDiff) <= bar ? "" : "  <-- over the bar");
            std::fflush(stdout);
        }
    }
    if (json)
    {
        std::cout << "]\n";
    }
    return pass ? 0 : 1;
}

static CliCommandRegistrar g_xvalCommand(
    "xval",
    "cross-validate the flow-level network against the ns-3 packet-level network",
    RunXvalCommand);

} // namespace rapidllm
} // namespace ns3
