/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// rapid-llm replay: replays any Chakra execution-trace set on a cluster's network.

#include "cli-commands.h"
#include "cli-job-options.h"
#include "cli-ns3-checks.h"
#include "ns3/chakra-trace-reader.h"
#include "ns3/fault-options.h"
#include "ns3/job-echo.h"
#include "ns3/job-options.h"
#include "ns3/rapid-llm-helper.h"
#include "ns3/report-output.h"
#include "ns3/spec-error.h"
#include "ns3/spec-override.h"

#include <algorithm>
#include <cstdio>
#include <iostream>

namespace ns3 {
namespace rapidllm {

int
RunReplayCommand(const CliArgs& args)
{
    const std::string trace = args.Text("trace");
    ApplyPacketAttributesFor(args.Text("packet"), args.Text("backend"));
    Ptr<RapidLlmHelper> helper = CreateObject<RapidLlmHelper>();
    helper->SetBackend(args.Text("backend"));
    if (args.HasValue("routing"))
    {
        helper->SetRoutingPolicy(args.Text("routing"));
    }
    const std::vector<FaultOption> faults = args.HasValue("fault")
                                                ? ParseFaultOption(args.Text("fault"), kCommandLine)
                                                : std::vector<FaultOption>();
    // Damaged or inconsistent traces throw TraceError naming file, rank and node.
    TraceSet set = ChakraTraceReader::ReadTraceSet(
        trace, args.HasValue("comm-groups") ? args.Text("comm-groups") : "");
    // What the kernels were costed for: a --hardware source, then any gpu. overrides (a trace
    // written before recorded the machine's name, which a preset's is too). Without
    // --hardware, the set replays on that machine, as run timed it.
    const std::string costed = set.ranks.empty() ? std::string() : set.ranks[0].GetHardware();
    const std::string costedSource = costed.substr(0, costed.find(" with "));
    const bool own = !args.Has("hardware") && !costedSource.empty();
    const std::string source = own ? costedSource : args.Text("hardware");
    // --set (network. paths and gpu.sm_count) and --fault apply to the machine as in run.
    std::vector<SpecOverride> overrides;
    HardwareSpec hardware;
    try
    {
        hardware =
            LoadHardwareWithSet(args, "a trace fixes the model's operators", overrides, source);
    }
    catch (const SpecError& e)
    {
        if (!own)
        {
            throw;
        }
        throw SpecError(e.GetFile(),
                        e.GetField(),
                        e.GetMessage()
                            + " (the hardware the trace set's kernels were costed for, "
                              "which replay takes without --hardware; give --hardware "
                              "to replay them on another)",
                        e.GetLine());
    }
    const std::size_t with = costed.find(" with ");
    if (own && with != std::string::npos)
    {
        // The GPU overrides the kernels were costed with: the one replay takes (the SMs the
        // collectives share) applies as run applied it, unless --set gives its own.
        std::vector<SpecOverride> recorded;
        for (const SpecOverride& o : SpecOverride::ParseList(costed.substr(with + 6), trace))
        {
            const bool given = std::any_of(overrides.begin(),
                                           overrides.end(),
                                           [&](const SpecOverride& g)
                                           {
                                               return g.GetPath() == o.GetPath();
                                           });
            if (ReplayTakesSet(o.GetPath()) && !given)
            {
                recorded.push_back(o);
            }
        }
        if (!recorded.empty())
        {
            overrides.insert(overrides.begin(), recorded.begin(), recorded.end());
            hardware = HardwareSpec::Load(source, overrides);
        }
    }
    for (const SpecOverride& o : overrides)
    {
        if (o.GetPath().rfind("gpu.", 0) == 0 && !ReplayTakesSet(o.GetPath()))
        {
            // The trace's kernels carry their durations: the GPU's rates would change nothing,
            // silently. Its SM count is what the collectives' kernels take from the compute.
            throw SpecError(kCommandLine,
                            "set",
                            "'" + o.GetText()
                                + "': a trace fixes its kernels' times, so of the gpu. paths "
                                  "replay takes gpu.sm_count only (the SMs collectives share "
                                  "with the compute); run and trace take the others, and "
                                  "--slow-gpus slows chosen GPUs' kernels");
        }
    }
    if (!costed.empty() && costedSource != source && costed != hardware.name)
    {
        // The kernels keep their times; only the network and the SM count are this machine's.
        std::cerr << "rapid-llm replay: note: the trace's kernels were costed for " << costed
                  << "; it replays them on " << source
                  << "'s network and SMs (--hardware=" << costedSource
                  << " replays it on its own)\n";
    }
    // The fault selectors name links of the network the trace set's ranks run on.
    CheckFaultSelectors(faults,
                        hardware.network,
                        static_cast<uint32_t>(set.ranks.size()),
                        hardware.name,
                        kCommandLine);
    std::vector<ScheduledFault> timedFaults;
    if (!faults.empty())
    {
        Ptr<FaultSchedule> schedule;
        AddFaults(faults, hardware.network, schedule, kCommandLine);
        if (schedule)
        {
            timedFaults = schedule->GetFaults();
            helper->SetTimedFaults(timedFaults);
        }
    }
    const auto slowGpus =
        args.HasValue("slow-gpus")
            ? ParseSlowGpus(args.Text("slow-gpus"), set.ranks.size(), kCommandLine)
            : std::map<uint32_t, double>();
    helper->SetSlowGpus(slowGpus);
    helper->SetHardware(hardware);
    // The input echo: the trace set, the machine and how its network runs.
    Json input;
    input["version"] = RapidLlmVersion();
    input["trace"] = {
        {"prefix", trace},
        {"ranks", set.ranks.size()},
        {"comm_groups", set.groupsFile},
        {"costed_for", set.ranks.empty() ? std::string() : set.ranks[0].GetHardware()},
        {"groups", set.groups.GetSize()}};
    input["hardware"] = HardwareInputJson(hardware, source, timedFaults, slowGpus);
    input["set"] = OverridesJson(overrides);
    input["backend"] = args.Text("backend");
    if (args.HasValue("packet"))
    {
        input["packet"] = args.Text("packet");
    }
    input["routing"] = args.HasValue("routing") ? args.Text("routing") : hardware.network.routing;
    // What runs: the default is auto (the echo said "" for it and "auto" when given).
    input["granularity"] = args.HasValue("granularity") ? args.Text("granularity") : "auto";
    EchoAttributeDefaults(input);
    RunReport report = RunObserved(args,
                                   "replay",
                                   helper,
                                   [&]()
                                   {
                                       return helper->Replay(std::move(set));
                                   });
    if (args.Flag("json"))
    {
        Json j = report;
        if (args.Flag("per-rank"))
        {
            j["ranks"] = report.ranks;
        }
        if (args.Flag("timing"))
        {
            j["wall_time_s"] = report.wallTimeS;
        }
        j["input"] = input;
        std::cout << DumpJson(j);
        return 0;
    }
    if (args.Flag("csv"))
    {
        std::cout << RunReportCsv(report, args.Flag("per-rank"));
        return 0;
    }
    std::cout << "replay of " << trace << " on " << report.gpus << " x "
              << helper->GetHardware().GpuLabel() << "\n"
              << report.ToText() << (args.Flag("per-rank") ? report.RanksToText() : "");
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
