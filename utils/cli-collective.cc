/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// rapid-llm collective: runs one collective among the first N GPUs of a hardware preset's
// network on the flow-level network and prints its time, algorithm and bus bandwidth (as
// nccl-tests define them).

#include "cli-commands.h"
#include "cli-job-options.h"
#include "cli-ns3-checks.h"
#include "ns3/collective-probe.h"
#include "ns3/collective-schedule.h"
#include "ns3/fault-options.h"
#include "ns3/hardware-spec.h"
#include "ns3/job-echo.h"
#include "ns3/progress-line.h"
#include "ns3/report-output.h"
#include "ns3/spec-error.h"
#include "ns3/study-json.h"

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <sstream>

namespace ns3 {
namespace rapidllm {

namespace {

/**
 * \return the faults of --fault (the shared parser), present from the start, each checked to
 * select links of \p hw's network of \p gpus GPUs
 */
std::vector<LinkFaultSpec>
ParseFaults(const std::string& text, const HardwareSpec& hw, uint32_t gpus)
{
    std::vector<LinkFaultSpec> faults;
    if (text.empty())
    {
        return faults;
    }
    const std::vector<FaultOption> parsed = ParseFaultOption(text, kCommandLine);
    std::vector<std::string> items;
    std::stringstream list(text);
    for (std::string item; std::getline(list, item, ',');)
    {
        items.push_back(item);
    }
    for (std::size_t i = 0; i < parsed.size(); ++i)
    {
        const FaultOption& f = parsed[i];
        if (f.timed)
        {
            // The item as given (one per fault), else its selector.
            const std::string item = items.size() == parsed.size() ? items[i] : f.selector + "@...";
            throw SpecError(kCommandLine,
                            "fault",
                            "'" + item
                                + "': collective runs faults present from the start only; "
                                  "drop @TIME (run and replay take timed faults)");
        }
        LinkFaultSpec spec;
        spec.link = f.selector;
        spec.factor = f.factor;
        faults.push_back(spec);
    }
    CheckFaultSelectors(parsed, hw.network, gpus, hw.name, kCommandLine, "fault");
    return faults;
}

/** \return the transfers of --beside: SRC>DST:BYTES[,...] among \p gpus ranks */
std::vector<ProbeTransfer>
ParseBeside(const CliArgs& args, uint32_t gpus)
{
    std::vector<ProbeTransfer> transfers;
    if (!args.HasValue("beside"))
    {
        return transfers;
    }
    for (const auto& item : args.Items("beside", ',', false))
    {
        const auto gt = item.find('>');
        const auto colon = item.find(':');
        auto bad = [&](const std::string& why)
        {
            return SpecError(kCommandLine,
                             "beside",
                             "'" + item + "' " + why + "; allowed: SRC>DST:BYTES, e.g. 0>1:2MiB");
        };
        if (gt == std::string::npos || colon == std::string::npos || colon < gt)
        {
            throw bad("is not a transfer");
        }
        ProbeTransfer t;
        for (auto [text, to] : {std::make_pair(item.substr(0, gt), &t.src),
                                std::make_pair(item.substr(gt + 1, colon - gt - 1), &t.dst)})
        {
            if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos
                || text.size() > 9)
            {
                throw bad("has a rank that is not a whole number");
            }
            *to = static_cast<uint32_t>(std::stoul(text)); // at most 9 digits
        }
        const std::string why = ParseByteSize(item.substr(colon + 1), t.bytes);
        if (!why.empty())
        {
            throw bad("has a size that " + why);
        }
        if (t.src >= gpus || t.dst >= gpus || t.src == t.dst)
        {
            throw bad("does not join two different ranks of the " + std::to_string(gpus)
                      + " GPUs (0 to " + std::to_string(gpus - 1) + ")");
        }
        if (t.bytes == 0)
        {
            throw bad("sends nothing");
        }
        transfers.push_back(t);
    }
    return transfers;
}

} // namespace

int
RunCollectiveCommand(const CliArgs& args)
{
    std::vector<SpecOverride> overrides;
    HardwareSpec hw = LoadHardwareWithSet(args, "a collective runs no model", overrides);
    CollectiveProbeConfig config;
    config.op = ParseCollectiveOp(args.Text("op"), "op");
    config.bytes = args.Size("bytes");
    config.gpus = static_cast<uint32_t>(args.Count("gpus")); // declared within 2^24
    CheckHardwareFaults(
        hw.network, hw.network.faults.size(), config.gpus, hw.name, args.Text("hardware"));
    config.algorithm = args.Text("algorithm");
    if (config.algorithm == "auto")
    {
        // Each dimension runs its own algorithm: a graph described for another is unused.
        for (const std::string& note : hw.network.Notes())
        {
            std::cerr << "rapid-llm collective: note: " << note << "\n";
        }
    }
    config.routing = args.Text("routing");
    config.faults = ParseFaults(args.Text("fault"), hw, config.gpus);
    config.chunks = static_cast<uint32_t>(args.Count("chunks"));
    config.backend = args.Text("backend");
    const std::string packet = args.Text("packet");
    ApplyPacketAttributesFor(packet, config.backend);
    config.root = static_cast<uint32_t>(args.Count("root"));
    config.topLinks = static_cast<uint32_t>(std::min<uint64_t>(args.Count("links"), UINT32_MAX));
    config.reduceBytesPerSecond = args.Real("reduce-GBps") * 1e9;
    if (config.reduceBytesPerSecond > 0 && config.reduceBytesPerSecond < 1e9)
    {
        // Below 1 GB/s a reduction of a few MiB takes longer than a step; tiny rates overflow.
        throw SpecError(kCommandLine,
                        "reduce-GBps",
                        "a reduction rate is 0 (fused with the copy) or from 1 to 1e9 GB/s, got "
                            + args.Text("reduce-GBps"));
    }
    config.beside = ParseBeside(args, config.gpus);
    if (config.gpus < 2)
    {
        // NCCL's one-rank communicator copies locally: nothing crosses a link to time.
        throw SpecError(kCommandLine,
                        "gpus",
                        "a collective runs among 2 or more GPUs (one GPU has nothing to exchange)");
    }
    if (config.op == CollectiveOp::SEND_RECV && config.gpus != 2)
    {
        throw SpecError(kCommandLine, "gpus", "send-recv runs between 2 GPUs (--gpus=2)");
    }
    if (config.op == CollectiveOp::SEND_RECV && args.Has("algorithm") && config.algorithm != "auto"
        && config.algorithm != "direct")
    {
        // One message has no algorithm: another name would be ignored, silently.
        throw SpecError(kCommandLine,
                        "algorithm",
                        "send-recv is one message (direct), not '" + config.algorithm
                            + "'; drop --algorithm");
    }
    if (config.op == CollectiveOp::SEND_RECV && config.chunks > 1)
    {
        throw SpecError(kCommandLine,
                        "chunks",
                        "send-recv is one message, not pipelined in pieces; drop --chunks");
    }
    if (config.chunks > 1 && config.chunks > config.bytes)
    {
        // Pieces of less than a byte: each would pay a step's latency for nothing.
        throw SpecError(kCommandLine,
                        "chunks",
                        std::to_string(config.chunks) + " pieces of " + std::to_string(config.bytes)
                            + " bytes: at most one piece a byte (--chunks up to --bytes)");
    }
    if (args.Has("root") && config.op != CollectiveOp::BROADCAST
        && config.op != CollectiveOp::REDUCE)
    {
        // Other collectives have no root: a given one would change nothing, silently.
        throw SpecError(kCommandLine,
                        "root",
                        "applies to broadcast and reduce only (op is " + ToString(config.op)
                            + "); drop it or use --op=broadcast or --op=reduce");
    }
    if (config.root >= config.gpus)
    {
        throw SpecError(kCommandLine,
                        "root",
                        std::to_string(config.root) + " is not a rank of the group; allowed: 0 to "
                            + std::to_string(config.gpus - 1));
    }
    const bool terminal = ProgressLine::StderrIsTerminal();
    RunProgress progress(
        "collective", args.Has("progress") ? args.Flag("progress") : terminal, terminal);
    config.progress = &progress;
    CollectiveProbeResult r;
    try
    {
        r = RunCollectiveProbe(hw.network, config, hw.name);
    }
    catch (const SpecError& e)
    {
        // The planner names its request's field; here that is an option.
        if (e.GetFile() == "collective" && e.GetField() == "algorithm")
        {
            throw SpecError(kCommandLine, "algorithm", e.GetMessage());
        }
        throw;
    }
    catch (const CollectiveTooLarge& e)
    {
        // Refused before building: the group is too large to simulate (a fluid one too: its
        // message floor is walked message by message).
        throw SpecError(
            kCommandLine,
            "gpus",
            e.GetMessage(args.HasValue("granularity") && args.Text("granularity") == "fluid"));
    }
    progress.Finish();
    if (args.Flag("json"))
    {
        Json j = {{"op", ToString(config.op)},
                  {"gpus", config.gpus},
                  {"bytes", config.bytes},
                  {"backend", config.backend}};
        if (!packet.empty())
        {
            j["packet"] = packet;
        }
        // The version, and ns-3 defaults from the environment, as every command echoes them.
        j["version"] = RapidLlmVersion();
        EchoAttributeDefaults(j);
        // The machine and every option that moves the time, so that the record reruns it.
        j["hardware"] = HardwareInputJson(hw, args.Text("hardware"), {});
        j["chunks"] = config.chunks;
        j["root"] = config.root;
        j["reduce_GBps"] = args.Real("reduce-GBps");
        j["granularity"] = args.HasValue("granularity") ? args.Text("granularity") : "message";
        if (!overrides.empty())
        {
            j["set"] = OverridesJson(overrides);
        }
        // What else shaped the result, as given: a faulted or shared run reads as one.
        for (const char* option : {"fault", "beside"})
        {
            if (args.HasValue(option))
            {
                j[option] = args.Text(option);
            }
        }
        j.update(Json(r));
        std::cout << DumpJson(j);
        return 0;
    }
    if (args.Flag("csv"))
    {
        // The collective's row; with --links=N the link table instead (as --per-rank does).
        if (config.topLinks > 0)
        {
            std::cout << CsvLine({"link", "bytes", "busy_s", "utilization"});
            for (const auto& l : r.mostLoaded)
            {
                // Bytes exactly, as the JSON has them (9 digits lost 20 of 10 GiB).
                std::cout << CsvLine({l.name,
                                      FormatExact(l.bytes),
                                      FormatNumber(l.busyTimeS),
                                      FormatNumber(l.utilization)});
            }
            return 0;
        }
        std::cout << CsvLine({"op",
                              "gpus",
                              "bytes",
                              "algorithm",
                              "routing",
                              "messages",
                              "time_s",
                              "algorithm_bandwidth_GBps",
                              "bus_bandwidth_GBps"});
        std::cout << CsvLine({ToString(config.op),
                              std::to_string(config.gpus),
                              std::to_string(config.bytes),
                              r.algorithm,
                              r.routing,
                              std::to_string(r.messages),
                              FormatNumber(r.timeS),
                              FormatNumber(r.algorithmBandwidthBps / 1e9),
                              FormatNumber(r.busBandwidthBps / 1e9)});
        return 0;
    }
    std::cout << ToString(config.op) << " of " << config.bytes << " bytes among " << config.gpus
              << " GPUs of " << hw.name << " (" << r.algorithm << ", routing " << r.routing << ", "
              << r.messages << " messages, " << config.backend << " network"
              << (packet.empty() ? "" : " with " + packet) << ")\n"
              << "  time                " << FormatNumber(r.timeS * 1e6) << " us\n"
              << "  algorithm bandwidth " << FormatNumber(r.algorithmBandwidthBps / 1e9)
              << " GB/s\n"
              << "  bus bandwidth       " << FormatNumber(r.busBandwidthBps / 1e9) << " GB/s\n";
    if (r.packet)
    {
        std::cout << "  packets             " << r.dataPackets << " data, " << r.drops
                  << " dropped\n";
    }
    if (!r.mostLoaded.empty())
    {
        std::cout << "  most loaded links:\n";
        for (std::size_t i = 0; i < r.mostLoaded.size(); ++i)
        {
            const auto& s = r.mostLoaded[i];
            std::cout << "    " << s.name << "  " << FormatNumber(s.bytes / 1e6) << " MB, busy "
                      << FormatNumber(s.busyTimeS * 1e6) << " us, utilization "
                      << FormatNumber(s.utilization) << "\n";
        }
    }
    return 0;
}

static CliCommandRegistrar g_collectiveCommand(
    "collective",
    "run one collective on a cluster's network (flow- or packet-level)",
    "Runs one collective among the first N GPUs of a machine on the flow-level (or ns-3 "
    "packet-level) network and prints its completion time, algorithm bandwidth and bus bandwidth "
    "(as nccl-tests define them).",
    RunCollectiveCommand);

} // namespace rapidllm
} // namespace ns3
