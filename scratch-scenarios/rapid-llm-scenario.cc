/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// A scenario script: predicts one training iteration of a GPT model on DGX A100 nodes with the
// RapidLlmHelper, sums rank 0's operators by kind (count, time, FLOPs and bytes, straight from
// the OperatorEvent, no name parsing) and counts the network messages delivered (of the replayed
// ranks: one per set of symmetric copies unless --symmetry=false), and prints the report.
//
//   build/bin/rapid-llm-scenario --model=gpt-1.7b --tp=1 --dp=32 --mbs=16 --gbs=512

#include "ns3/command-line.h"
#include "ns3/core-module.h"
#include "ns3/rapid-llm-helper.h"

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
}
} // namespace

int
main(int argc, char** argv)
{
    std::string model = "gpt-1.7b";
    std::string hardware = "a100-sxm-80gb";
    uint32_t tp = 1;
    uint32_t pp = 1;
    uint32_t dp = 32;
    uint32_t mbs = 16;
    uint32_t gbs = 512;
    bool symmetry = true;
    CommandLine cmd(__FILE__);
    cmd.AddValue("model", "model preset or YAML file", model);
    cmd.AddValue("hardware", "hardware preset or YAML file", hardware);
    cmd.AddValue("tp", "tensor parallel degree", tp);
    cmd.AddValue("pp", "pipeline stages", pp);
    cmd.AddValue("dp", "data parallel degree", dp);
    cmd.AddValue("mbs", "micro-batch size", mbs);
    cmd.AddValue("gbs", "global batch size", gbs);
    cmd.AddValue("symmetry", "replay one rank per set of symmetric copies", symmetry);
    cmd.Parse(argc, argv);

    Ptr<RapidLlmHelper> helper = CreateObject<RapidLlmHelper>();
    helper->SetBackend("flow");
    helper->SetReplayerAttribute("Symmetry", BooleanValue(symmetry));
    helper->TraceConnectWithoutContext("OperatorEnd", MakeCallback(&OperatorEnded));
    helper->TraceConnectWithoutContext("MessageDelivered", MakeCallback(&MessageDelivered));
    try
    {
        helper->Load(model, hardware);
        RunSpec run;
        run.parallel.tp = tp;
        run.parallel.pp = pp;
        run.parallel.dp = dp;
        run.microBatch = mbs;
        run.globalBatch = gbs;
        run.sequence = 2048;
        run.recompute = Recompute::FULL;
        run.dtype = DataType::FP16;
        helper->SetRun(run);
        RunReport report = helper->Run();
        std::cout << report.ToText() << "  operators executed      " << g_operators << "\n"
                  << "  messages delivered      " << g_messages << " (" << g_messageBytes / 1e9
                  << " GB)\n"
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
        std::cerr << "rapid-llm-scenario: error: " << e.what() << "\n";
        return 2;
    }
    return 0;
}
