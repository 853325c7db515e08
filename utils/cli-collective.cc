/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// rapid-llm collective: runs one collective among the first N GPUs of a hardware preset's
// network on the flow-level network and prints its time, algorithm and bus bandwidth (as
// nccl-tests define them).

#include "cli-commands.h"
#include "ns3/collective-probe.h"
#include "ns3/hardware-spec.h"
#include "ns3/spec-error.h"
#include "ns3/study-json.h"

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <sstream>

namespace ns3 {
namespace rapidllm {

namespace {

/** \return faults from "gpu0-gpu1:0.5,gpu2>gpu3:0" */
std::vector<LinkFaultSpec>
ParseFaults(const std::string& text)
{
    std::vector<LinkFaultSpec> faults;
    if (!text.empty() && text.back() == ',')
    {
        throw SpecError(kCommandLine,
                        "fault",
                        "an empty item in '" + text + "'; give LINK:FACTOR[,LINK:FACTOR...]");
    }
    std::stringstream ss(text);
    std::string item;
    while (std::getline(ss, item, ','))
    {
        if (item.empty())
        {
            throw SpecError(kCommandLine,
                            "fault",
                            "an empty item in '" + text + "'; give LINK:FACTOR[,LINK:FACTOR...]");
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
            throw SpecError(kCommandLine,
                            "fault",
                            "'" + item
                                + "': use LINK:FACTOR with FACTOR in [0, 1] (0 = dead link), "
                                  "e.g. --fault=gpu0-gpu1:0.5 or --fault=gpu3>gpu4 (dead)");
        }
        if (f.factor > 0 && f.factor < LinkFaultSpec::kMinFactor)
        {
            std::ostringstream os;
            os << "'" << item << "': a soft-fault factor below " << LinkFaultSpec::kMinFactor
               << " is not modelled (the link would not finish a message within the "
                  "simulator's clock); give 0 for a dead link or a factor from "
               << LinkFaultSpec::kMinFactor << " to 1";
            throw SpecError(kCommandLine, "fault", os.str());
        }
        faults.push_back(f);
    }
    return faults;
}

/** \return a number for the text report, printed reproducibly */
std::string
Number(double x)
{
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%.9g", x);
    return buf;
}

} // namespace

int
RunCollectiveCommand(const CliArgs& args)
{
    HardwareSpec hw = HardwareSpec::Load(args.Text("hardware"));
    CollectiveProbeConfig config;
    config.op = ParseCollectiveOp(args.Text("op"), "op");
    config.bytes = args.Size("bytes");
    config.gpus = static_cast<uint32_t>(args.Count("gpus")); // declared within 2^24
    config.algorithm = args.Text("algorithm");
    config.routing = args.Text("routing");
    config.faults = ParseFaults(args.Text("fault"));
    config.chunks = static_cast<uint32_t>(args.Count("chunks"));
    config.backend = args.Text("backend");
    config.root = static_cast<uint32_t>(args.Count("root"));
    config.topLinks = static_cast<uint32_t>(std::min<uint64_t>(args.Count("links"), UINT32_MAX));
    config.reduceBytesPerSecond = args.Real("reduce-GBps") * 1e9;
    if (config.op == CollectiveOp::SEND_RECV && config.gpus != 2)
    {
        throw SpecError(kCommandLine, "gpus", "send-recv runs between 2 GPUs (--gpus=2)");
    }
    if (config.root >= config.gpus)
    {
        throw SpecError(kCommandLine,
                        "root",
                        std::to_string(config.root) + " is not a rank of the group; allowed: 0 to "
                            + std::to_string(config.gpus - 1));
    }
    CollectiveProbeResult r = RunCollectiveProbe(hw.network, config, hw.name);

    if (args.Flag("json"))
    {
        Json j = {{"op", ToString(config.op)}, {"gpus", config.gpus}, {"bytes", config.bytes}};
        j.update(Json(r));
        std::cout << DumpJson(j);
        return 0;
    }
    std::cout << ToString(config.op) << " of " << config.bytes << " bytes among " << config.gpus
              << " GPUs of " << hw.name << " (" << r.algorithm << ", routing " << r.routing << ", "
              << r.messages << " messages)\n"
              << "  time                " << Number(r.timeS * 1e6) << " us\n"
              << "  algorithm bandwidth " << Number(r.algorithmBandwidthBps / 1e9) << " GB/s\n"
              << "  bus bandwidth       " << Number(r.busBandwidthBps / 1e9) << " GB/s\n";
    if (!r.mostLoaded.empty())
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

static CliCommandRegistrar g_collectiveCommand(
    "collective",
    "run one collective on the flow-level network",
    "Runs one collective among the first N GPUs of a machine on the flow-level (or ns-3 "
    "packet-level) network and prints its completion time, algorithm bandwidth and bus bandwidth "
    "(as nccl-tests define them).",
    RunCollectiveCommand);

} // namespace rapidllm
} // namespace ns3
