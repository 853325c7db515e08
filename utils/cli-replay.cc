/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// rapid-llm replay: replays any Chakra execution-trace set on a cluster's network.

#include "cli-commands.h"
#include "ns3/chakra-trace-reader.h"
#include "ns3/command-line.h"
#include "ns3/network-backend.h"
#include "ns3/rapid-llm-helper.h"
#include "ns3/spec-error.h"
#include "ns3/spec-reader.h"
#include "ns3/string.h"

#include <iostream>

namespace ns3 {
namespace rapidllm {

int
RunReplayCommand(int argc, char** argv)
{
    std::string trace;
    std::string hardware = "a100-sxm-80gb";
    std::string commGroups;
    std::string backend = "flow";
    std::string routing;
    bool json = false;
    CommandLine cmd("rapid-llm replay");
    cmd.Usage("Replays a Chakra execution-trace set (PREFIX.<rank>.et, ours or another tool's) on "
              "the cluster network of a hardware file and prints the timing report.");
    cmd.AddValue("trace", "trace prefix: files PREFIX.<rank>.et", trace);
    cmd.AddValue("hardware", "hardware preset name or YAML file", hardware);
    cmd.AddValue(
        "comm-groups", "communicator groups JSON (default PREFIX.comm_groups.json)", commGroups);
    cmd.AddValue("backend", "network backend: " + JoinNames(NetworkBackend::Names()), backend);
    cmd.AddValue("routing", "routing policy (default: the hardware file's)", routing);
    cmd.AddValue("json", "print the report as one JSON object", json);
    CheckOptions(argc, argv, {"trace", "hardware", "comm-groups", "backend", "routing", "json"});
    cmd.Parse(argc, argv);
    if (trace.empty())
    {
        throw SpecError("command line", "--trace", "missing: give the trace prefix");
    }
    Ptr<RapidLlmHelper> helper = CreateObject<RapidLlmHelper>();
    helper->SetAttribute("Backend", StringValue(backend));
    helper->SetAttribute("Routing", StringValue(routing));
    helper->SetHardware(HardwareSpec::Load(hardware));
    // Damaged or inconsistent traces throw TraceError (a SpecError) naming file, rank, node.
    TraceSet set = ChakraTraceReader::ReadTraceSet(trace);
    if (!commGroups.empty())
    {
        set.groups = CommGroups::Load(commGroups);
        ChakraTraceReader::CheckSet(set, trace);
    }
    RunReport report = helper->Replay(std::move(set));
    if (json)
    {
        std::cout << report.ToJson();
    }
    else
    {
        std::cout << "replay of " << trace << " on " << report.gpus << " x "
                  << helper->GetHardware().gpu.name << "\n"
                  << report.ToText();
    }
    return 0;
}

static CliCommandRegistrar g_replayCommand("replay",
                                           "replay a Chakra trace set on a cluster's network",
                                           RunReplayCommand);

} // namespace rapidllm
} // namespace ns3
