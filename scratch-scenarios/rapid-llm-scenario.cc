/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// A scenario script: predicts one training iteration of a GPT model on DGX A100 nodes with the
// RapidLlmHelper, counts the operators it ran and the network messages it delivered through
// trace sources (of the replayed ranks: one per set of symmetric copies unless
// --symmetry=false), and prints the report.
//
//   build/bin/rapid-llm-scenario --model=gpt-1.7b --tp=1 --dp=32 --mbs=16 --gbs=512

#include "ns3/command-line.h"
#include "ns3/core-module.h"
#include "ns3/rapid-llm-helper.h"

#include <iostream>

using namespace ns3;
using namespace ns3::rapidllm;

namespace {
uint64_t g_operators = 0;  //!< operators that ended
uint64_t g_messages = 0;   //!< network messages delivered
double g_messageBytes = 0; //!< their bytes

void
OperatorEnded(uint32_t rank, uint32_t node, const std::string& name)
{
    ++g_operators;
}

void
MessageDelivered(uint64_t id, uint32_t src, uint32_t dst, uint64_t bytes, double latency)
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
    helper->SetAttribute("Backend", StringValue("flow"));
    helper->SetAttribute("Symmetry", BooleanValue(symmetry));
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
                  << " GB)\n";
    }
    catch (const std::exception& e)
    {
        std::cerr << "rapid-llm-scenario: error: " << e.what() << "\n";
        return 2;
    }
    return 0;
}
