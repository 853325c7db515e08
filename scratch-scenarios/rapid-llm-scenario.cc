/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// A scenario script: predicts one training iteration of a GPT model on DGX A100 nodes with the
// RapidLlmHelper, the ns-3 way.
// - The job layout comes from the script's own CommandLine: JobOptions adds every job option
//   (--model --tp --pp --dp --mbs --gbs --seq --recompute ...) in one call, with this script's
//   defaults, or from a job file (--run=FILE.yaml, whose backend: and routing: it honours);
//   --backend, --routing, --mtu and --symmetry are the script's own and override the job file.
// - The helper creates the network backend, routing policy and trace replayer from factories
//   whose attributes the script sets; Install() schedules the replay, the script runs the
//   simulator (here with a progress event of its own), Collect() gives the report.
// - It sums rank 0's operators by OperatorKind (count, time, FLOPs, bytes, straight from the
//   OperatorEvent, no name parsing), counts the network messages delivered and reads the
//   backend's link statistics. Listening to MessageDelivered makes the helper send every
//   rank's messages (the replayer's TraceAllMessages), so the count is the full job's with
//   or without --symmetry, and the run moves more messages than `rapid-llm run` does.
//
//   build/bin/rapid-llm-scenario --gpus=32 --mbs=16 --gbs=512 --recompute=full
//   build/bin/rapid-llm-scenario --help
// Its defaults are `rapid-llm run`'s (JobOptions': micro-batch 1, no recomputation, bf16, dp =
// gpus / (tp x pp x cp)), but for the model, a small GPT.

#include "ns3/attribute-text.h"
#include "ns3/boolean.h"
#include "ns3/command-line.h"
#include "ns3/core-module.h"
#include "ns3/job-options.h"
#include "ns3/packet-resolution.h"
#include "ns3/rapid-llm-helper.h"
#include "ns3/spec-error.h"

#include <iomanip>
#include <iostream>
#include <map>

using namespace ns3;
using namespace ns3::rapidllm;

namespace {
/** What rank 0's operators of one kind added up to. */
struct KindTotal
{
    uint64_t count = 0; //!< operators
    Time busy;          //!< summed durations
    double flops = 0;   //!< summed FLOPs
    double bytes = 0;   //!< summed bytes
};

uint64_t g_operators = 0;                  //!< operators that ended, every replayed rank
std::map<OperatorKind, KindTotal> g_rank0; //!< rank 0 by kind
uint64_t g_messages = 0;                   //!< network messages delivered
double g_messageBytes = 0;                 //!< their bytes
Time g_slowestMessage;                     //!< the longest latency

void
OperatorEnded(const OperatorEvent& e)
{
    ++g_operators;
    if (e.rank == 0)
    {
        KindTotal& t = g_rank0[e.kind];
        ++t.count;
        t.busy += e.duration;
        t.flops += double(e.flops);
        t.bytes += double(e.bytes);
    }
}

void
MessageDelivered(uint64_t id, uint32_t src, uint32_t dst, uint64_t bytes, Time latency)
{
    ++g_messages;
    g_messageBytes += double(bytes);
    g_slowestMessage = std::max(g_slowestMessage, latency);
}

/** The script's own event: a line every \p period of simulated time while the replay runs. */
void
Progress(Ptr<RapidLlmHelper> helper, Time period)
{
    std::cout << "  at " << Simulator::Now().As(Time::MS) << ": " << g_operators
              << " operators done\n";
    if (!Simulator::IsFinished())
    {
        Simulator::Schedule(period, &Progress, helper, period);
    }
}
} // namespace

int
main(int argc, char** argv)
{
    JobOptions job;
    // This script's model (any job option can be given on its command line); the other defaults
    // are JobOptions', those of `rapid-llm run`. A default dp here would make the documented
    // one, gpus / (tp x pp x cp), unreachable: --gpus=8 --tp=2 would ask for 8 x 2 GPUs.
    job.SetDefault("model", "gpt-1.7b");
    std::string backend; // "" = the job file's (--run), else flow
    std::string routing; // "" = the job file's, else the hardware file's
    uint32_t mtu = 0;
    bool symmetry = true;
    double progressMs = 0;
    CommandLine cmd(__FILE__);
    job.AddTo(cmd);
    cmd.AddValue(
        "backend", "network backend: flow or packet (default: the job file's, else flow)", backend);
    cmd.AddValue(
        "routing", "routing policy (default: the job file's, else the hardware file's)", routing);
    cmd.AddValue("mtu", "packet backend: the links' MTU, bytes (0: the backend's default)", mtu);
    cmd.AddValue("symmetry", "replay one rank per set of symmetric copies", symmetry);
    cmd.AddValue("progress", "print progress every this many simulated ms (0: never)", progressMs);
    try
    {
        // ns-3 aborts the process on an attribute value it cannot read (and ignores a misspelt
        // name in the environment): both checked first, as rapid-llm checks them.
        CheckAttributeDefaultsVariable("rapid-llm-scenario");
        for (int i = 1; i < argc; ++i)
        {
            const std::string arg = argv[i];
            const std::string why = arg.rfind("--ns3::", 0) == 0
                                        ? CheckAttributeEntry(arg.substr(2), "rapid-llm-scenario")
                                        : std::string();
            if (!why.empty())
            {
                throw SpecError(kCommandLine, "", why);
            }
        }
        cmd.Parse(argc, argv); // job option values are checked as they are parsed

        Ptr<RapidLlmHelper> helper = CreateObject<RapidLlmHelper>();
        // Model, hardware and run settings, validated together, and a job file's backend and
        // routing; the script's own options override them.
        const ResolvedJob spec = job.ToSpecs();
        backend = !backend.empty() ? backend : !spec.backend.empty() ? spec.backend : "flow";
        if (mtu > 0 && backend != "packet")
        {
            throw SpecError(kCommandLine,
                            "mtu",
                            "--mtu sets the packet network's MTU, and the backend here is '"
                                + backend + "': add --backend=packet");
        }
        if (backend == "packet")
        {
            UsePicoseconds(); // before the first simulation: frames timed to the picosecond
        }
        job.Apply(helper);
        routing = !routing.empty() ? routing : spec.routing;
        if (mtu > 0)
        {
            // Any attribute of the backend, e.g. jumbo frames on the packet network.
            helper->SetBackend(backend, "Mtu", UintegerValue(mtu));
        }
        else
        {
            helper->SetBackend(backend);
        }
        if (!routing.empty())
        {
            helper->SetRoutingPolicy(routing);
        }
        helper->SetReplayerAttribute("Symmetry", BooleanValue(symmetry));
        helper->TraceConnectWithoutContext("OperatorEnd", MakeCallback(&OperatorEnded));
        helper->TraceConnectWithoutContext("MessageDelivered", MakeCallback(&MessageDelivered));

        // The script owns the simulator: Install schedules the replay, Run runs it (with the
        // script's own events), Collect reads the result.
        helper->Install();
        if (progressMs > 0)
        {
            const Time period = MilliSeconds(progressMs);
            Simulator::Schedule(period, &Progress, helper, period);
        }
        Simulator::Run();
        RunReport report = helper->Collect();
        const NetworkStats stats = helper->GetBackend()->GetStats();
        Simulator::Destroy();

        std::cout << report.ToText() << "  network                 " << backend << " backend, "
                  << (routing.empty() ? spec.hardware.network.routing : routing) << " routing"
                  << (mtu > 0 ? ", MTU " + std::to_string(mtu) : std::string()) << "\n"
                  << "  operators executed      " << g_operators << "\n"
                  << "  messages delivered      " << g_messages << " (" << g_messageBytes / 1e9
                  << " GB, slowest " << g_slowestMessage.As(Time::US) << ")\n";
        for (const auto& link : stats.MostLoaded(1))
        {
            std::cout << "  busiest link            " << link.name << ", " << link.bytes / 1e9
                      << " GB\n";
        }
        std::cout << "  slowest rank            " << report.criticalRank << " of "
                  << report.ranks.size() << "\n"
                  << "  rank 0 by kind (count, summed duration, TFLOP, GB):\n";
        for (const auto& [kind, t] : g_rank0)
        {
            std::cout << "    " << std::left << std::setw(12) << ToString(kind) << std::right
                      << std::setw(8) << t.count << std::setw(12) << std::fixed
                      << std::setprecision(4) << t.busy.GetSeconds() << " s" << std::setw(10)
                      << t.flops / 1e12 << std::setw(10) << t.bytes / 1e9 << "\n";
        }
    }
    catch (const std::exception& e)
    {
        Simulator::Destroy();
        std::cerr << "rapid-llm-scenario: error: " << JobOptions::DescribeError(e) << "\n";
        return 2;
    }
    return 0;
}
