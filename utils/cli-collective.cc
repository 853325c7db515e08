/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// rapid-llm collective: runs one collective among the first N GPUs of a hardware preset's
// network on the flow-level network and prints its time, algorithm and bus bandwidth (as
// nccl-tests define them).

#include "cli-commands.h"
#include "ns3/collective-probe.h"
#include "ns3/command-line.h"
#include "ns3/hardware-spec.h"
#include "ns3/network-backend.h"
#include "ns3/routing-policy.h"
#include "ns3/spec-error.h"
#include "ns3/spec-reader.h"

#include <cctype>
#include <cstdio>
#include <iostream>
#include <sstream>

namespace ns3 {
namespace rapidllm {

namespace {

/** \return bytes of "1GiB", "512MiB", "4K", "1e6", "100MB" (K/M/G alone are binary, as in
 * nccl-tests) */
uint64_t
ParseBytes(const std::string& text)
{
    std::size_t i = 0;
    while (i < text.size()
           && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.' || text[i] == 'e'
               || text[i] == 'E'))
    {
        ++i;
    }
    std::string number = text.substr(0, i);
    std::string unit = text.substr(i);
    double value = 0;
    try
    {
        std::size_t used = 0;
        value = std::stod(number, &used);
        if (used != number.size())
        {
            throw std::invalid_argument("trailing");
        }
    }
    catch (const std::exception&)
    {
        throw SpecError("command line",
                        "--bytes",
                        "'" + text + "' is not a size; use e.g. 1GiB, 256MiB, 4K, 1000000");
    }
    struct Unit
    {
        const char* name;
        double factor;
    };
    const Unit units[] = {{"", 1},
                          {"B", 1},
                          {"K", 1024.0},
                          {"KiB", 1024.0},
                          {"KB", 1e3},
                          {"M", 1048576.0},
                          {"MiB", 1048576.0},
                          {"MB", 1e6},
                          {"G", 1073741824.0},
                          {"GiB", 1073741824.0},
                          {"GB", 1e9},
                          {"T", 1099511627776.0},
                          {"TiB", 1099511627776.0},
                          {"TB", 1e12}};
    for (const auto& u : units)
    {
        if (unit == u.name)
        {
            double bytes = value * u.factor;
            if (!(bytes >= 0) || bytes > 1.8e19)
            {
                break;
            }
            return static_cast<uint64_t>(bytes + 0.5);
        }
    }
    throw SpecError("command line",
                    "--bytes",
                    "'" + text
                        + "' has an unknown unit; use B, K/KiB, KB, M/MiB, MB, G/GiB, GB, "
                          "T/TiB, TB");
}

/** \return faults from "gpu0-gpu1:0.5,gpu2>gpu3:0" */
std::vector<LinkFaultSpec>
ParseFaults(const std::string& text)
{
    std::vector<LinkFaultSpec> faults;
    std::stringstream ss(text);
    std::string item;
    while (std::getline(ss, item, ','))
    {
        if (item.empty())
        {
            continue;
        }
        std::size_t colon = item.rfind(':');
        LinkFaultSpec f;
        f.link = item.substr(0, colon);
        f.factor = 0;
        if (colon != std::string::npos)
        {
            try
            {
                std::size_t used = 0;
                f.factor = std::stod(item.substr(colon + 1), &used);
                if (used != item.size() - colon - 1)
                {
                    throw std::invalid_argument("trailing");
                }
            }
            catch (const std::exception&)
            {
                f.factor = -1;
            }
        }
        if (!(f.factor >= 0 && f.factor <= 1))
        {
            throw SpecError("command line",
                            "--fault",
                            "'" + item
                                + "': use LINK:FACTOR with FACTOR in [0, 1] (0 = dead link), "
                                  "e.g. --fault=gpu0-gpu1:0.5 or --fault=gpu3>gpu4 (dead)");
        }
        faults.push_back(f);
    }
    return faults;
}

/** \return a number for JSON, printed reproducibly */
std::string
Number(double x)
{
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%.9g", x);
    return buf;
}

/** \return a JSON string literal */
std::string
Quote(const std::string& s)
{
    std::string out = "\"";
    for (char c : s)
    {
        if (c == '"' || c == '\\')
        {
            out += '\\';
        }
        out += c;
    }
    return out + "\"";
}

} // namespace

int
RunCollectiveCommand(int argc, char** argv)
{
    std::string hardware;
    std::string op = "all-reduce";
    std::string bytes = "1GiB";
    uint32_t gpus = 8;
    std::string algorithm = "auto";
    std::string fault;
    std::string routing;
    uint32_t chunks = 0;
    uint32_t root = 0;
    uint32_t links = 0;
    double reduceGBps = 0;
    bool json = false;
    std::string backend = "flow";

    ns3::CommandLine cmd("rapid-llm collective");
    cmd.Usage("Runs one collective among the first N GPUs of a machine on the flow-level "
              "(or ns-3 packet-level) network and prints its completion time, algorithm bandwidth "
              "and bus bandwidth "
              "(as nccl-tests define them).");
    cmd.AddValue("hardware", "hardware preset name or YAML file", hardware);
    cmd.AddValue("op", "collective: " + JoinNames(CollectiveOpNames()), op);
    cmd.AddValue("bytes", "size as nccl-tests counts it, e.g. 1GiB, 256MiB, 4K", bytes);
    cmd.AddValue("gpus", "number of GPUs (ranks 0..N-1)", gpus);
    cmd.AddValue("algorithm", "algorithm: " + JoinNames(CollectiveAlgorithmNames()), algorithm);
    cmd.AddValue("fault",
                 "link faults LINK:FACTOR[,...]; LINK is A-B (both directions) or A>B, nodes "
                 "named gpu<i> or by switch name; FACTOR 0 = dead",
                 fault);
    cmd.AddValue(
        "routing", "routing policy override: " + JoinNames(RoutingPolicy::Names()), routing);
    cmd.AddValue("chunks", "pipeline pieces (0 = the algorithm's default)", chunks);
    cmd.AddValue("root", "root rank of broadcast / reduce", root);
    cmd.AddValue("links", "also list the N most loaded links", links);
    cmd.AddValue("reduce-GBps",
                 "local reduction rate in GB/s, charged after each reduced receive (0 = fused "
                 "with the copy, as NCCL's kernels do)",
                 reduceGBps);
    cmd.AddValue("json", "print one JSON object", json);
    cmd.AddValue("backend", "network backend: " + JoinNames(NetworkBackend::Names()), backend);
    CheckOptions(argc,
                 argv,
                 {"hardware",
                  "op",
                  "bytes",
                  "gpus",
                  "algorithm",
                  "fault",
                  "routing",
                  "chunks",
                  "root",
                  "links",
                  "reduce-GBps",
                  "json",
                  "backend"});
    cmd.Parse(argc, argv);
    if (hardware.empty())
    {
        throw SpecError("command line",
                        "--hardware",
                        "is required (a preset name such as a100-sxm-80gb, or a YAML file)");
    }
    if (gpus == 0)
    {
        throw SpecError("command line", "--gpus", "must be at least 1");
    }
    HardwareSpec hw = HardwareSpec::Load(hardware);
    CollectiveProbeConfig config;
    config.op = ParseCollectiveOp(op, "--op");
    config.bytes = ParseBytes(bytes);
    config.gpus = gpus;
    config.algorithm = algorithm;
    config.routing = routing;
    config.faults = ParseFaults(fault);
    config.chunks = chunks;
    config.backend = backend;
    config.root = root;
    config.topLinks = links;
    if (!(reduceGBps >= 0))
    {
        throw SpecError("command line", "--reduce-GBps", "must be >= 0");
    }
    config.reduceBytesPerSecond = reduceGBps * 1e9;
    if (config.op == CollectiveOp::SEND_RECV && gpus != 2)
    {
        throw SpecError("command line", "--gpus", "send-recv runs between 2 GPUs (--gpus=2)");
    }
    CollectiveProbeResult r = RunCollectiveProbe(hw.network, config, hw.name);

    if (json)
    {
        std::cout << "{\"op\": " << Quote(op) << ", \"gpus\": " << gpus
                  << ", \"bytes\": " << config.bytes << ", \"algorithm\": " << Quote(r.algorithm)
                  << ", \"routing\": " << Quote(r.routing) << ", \"messages\": " << r.messages
                  << ", \"time_s\": " << Number(r.timeS)
                  << ", \"algorithm_bandwidth_GBps\": " << Number(r.algorithmBandwidthBps / 1e9)
                  << ", \"bus_bandwidth_GBps\": " << Number(r.busBandwidthBps / 1e9);
        if (links > 0)
        {
            std::cout << ", \"most_loaded_links\": [";
            for (std::size_t i = 0; i < r.mostLoaded.size(); ++i)
            {
                const auto& s = r.mostLoaded[i];
                std::cout << (i ? ", " : "") << "{\"link\": " << Quote(s.name)
                          << ", \"bytes\": " << Number(s.bytes)
                          << ", \"busy_s\": " << Number(s.busyTimeS)
                          << ", \"utilization\": " << Number(s.utilization) << "}";
            }
            std::cout << "]";
        }
        std::cout << "}\n";
        return 0;
    }
    std::cout << op << " of " << config.bytes << " bytes among " << gpus << " GPUs of " << hw.name
              << " (" << r.algorithm << ", routing " << r.routing << ", " << r.messages
              << " messages)\n"
              << "  time                " << Number(r.timeS * 1e6) << " us\n"
              << "  algorithm bandwidth " << Number(r.algorithmBandwidthBps / 1e9) << " GB/s\n"
              << "  bus bandwidth       " << Number(r.busBandwidthBps / 1e9) << " GB/s\n";
    if (links > 0)
    {
        std::cout << "  most loaded links:\n";
        for (std::size_t i = 0; i < r.mostLoaded.size(); ++i)
        {
            const auto& s = r.mostLoaded[i];
            std::cout << "    " << s.name << "  " << Number(s.bytes / 1e6) << " MB, busy "
                      << Number(s.busyTimeS * 1e6) << " us, utilization " << Number(s.utilization)
                      << "\n";
        }
    }
    return 0;
}

static CliCommandRegistrar g_collectiveCommand("collective",
                                               "run one collective on the flow-level network",
                                               RunCollectiveCommand);

} // namespace rapidllm
} // namespace ns3
