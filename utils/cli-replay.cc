/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// rapid-llm replay: replays any Chakra execution-trace set on a cluster's network.

#include "cli-commands.h"
#include "ns3/chakra-trace-reader.h"
#include "ns3/rapid-llm-helper.h"
#include "ns3/string.h"

#include <cstdio>
#include <iostream>

namespace ns3 {
namespace rapidllm {

int
RunReplayCommand(const CliArgs& args)
{
    const std::string trace = args.Text("trace");
    Ptr<RapidLlmHelper> helper = CreateObject<RapidLlmHelper>();
    helper->SetAttribute("Backend", StringValue(args.Text("backend")));
    helper->SetAttribute("Routing", StringValue(args.Text("routing")));
    helper->SetHardware(HardwareSpec::Load(args.Text("hardware")));
    // Damaged or inconsistent traces throw TraceError naming file, rank and node.
    TraceSet set = ChakraTraceReader::ReadTraceSet(trace);
    if (args.HasValue("comm-groups"))
    {
        set.groups = CommGroups::Load(args.Text("comm-groups"));
        ChakraTraceReader::CheckSet(set, trace);
    }
    RunReport report = helper->Replay(std::move(set));
    if (args.Flag("json"))
    {
        Json j = report;
        if (args.Flag("timing"))
        {
            j["wall_time_s"] = report.wallTimeS;
        }
        std::cout << DumpJson(j);
        return 0;
    }
    std::cout << "replay of " << trace << " on " << report.gpus << " x "
              << helper->GetHardware().gpu.name << "\n"
              << report.ToText();
    if (args.Flag("timing"))
    {
        std::printf("  %-24s %.3f s\n", "wall time", report.wallTimeS);
    }
    return 0;
}

static CliCommandRegistrar g_replayCommand(
    "replay",
    "replay a Chakra trace set on a cluster's network",
    "Replays a Chakra execution-trace set (PREFIX.<rank>.et, ours or another tool's) on the "
    "cluster network of a hardware file and prints the timing report.",
    RunReplayCommand);

} // namespace rapidllm
} // namespace ns3
