/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// Per-rank statistics under the symmetry reduction (issue 11): with the reduction on, the bytes
// every rank sends and receives, as the MessageDelivered trace source reports them, equal those of
// the full replay, and so do the step time and each rank's finish; both where tensor groups own
// their links (tensor collectives timed once unless messages are traced) and where they do not
// (TP4 on 8-GPU nodes: the tensor axis folded, its copies executing on the network).

#include "ns3/boolean.h"
#include "ns3/hardware-spec.h"
#include "ns3/nstime.h"
#include "ns3/rapid-llm-helper.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/test.h"

#include <map>

using namespace ns3;
using namespace ns3::rapidllm;

namespace {

/** Bytes per rank, sent and received, from MessageDelivered. */
struct Traffic
{
    std::map<uint32_t, uint64_t> sent;     //!< by source GPU
    std::map<uint32_t, uint64_t> received; //!< by destination GPU
    uint64_t messages = 0;                 //!< messages delivered
};

Traffic* g_traffic = nullptr; //!< where OnDelivered counts

void
OnDelivered(uint64_t id, uint32_t src, uint32_t dst, uint64_t bytes, Time latency)
{
    g_traffic->sent[src] += bytes;
    g_traffic->received[dst] += bytes;
    ++g_traffic->messages;
}

/**
 * \return a small GPT on \p hw with the layout, replayed with or without the reduction; with
 * \p userbuffers, sequence parallelism and Transformer Engine's ring inside tensor groups
 */
RunReport
RunJob(const HardwareSpec& hw,
       uint32_t tp,
       uint32_t pp,
       uint32_t dp,
       bool symmetry,
       Traffic* traffic,
       const std::string& granularity = "auto",
       bool userbuffers = false)
{
    ModelSpec model = ModelSpec::Load("gpt-1.7b");
    model.layers = 4;
    RunSpec run;
    run.parallel.tp = tp;
    run.parallel.pp = pp;
    run.parallel.dp = dp;
    if (userbuffers)
    {
        run.parallel.sequenceParallel = true;
        run.tpCommOverlap = "userbuffers";
    }
    run.microBatch = 1;
    run.globalBatch = 4 * dp;
    run.sequence = 512;
    Ptr<RapidLlmHelper> helper = CreateObject<RapidLlmHelper>();
    helper->SetModel(model);
    helper->SetHardware(hw);
    helper->SetRun(run);
    helper->SetReplayerAttribute("Symmetry", BooleanValue(symmetry));
    helper->SetReplayerAttribute("Granularity", StringValue(granularity));
    if (traffic)
    {
        g_traffic = traffic;
        helper->TraceConnectWithoutContext("MessageDelivered", MakeCallback(&OnDelivered));
    }
    return helper->Run();
}

/** \return the A100 preset with nodes of \p perNode GPUs */
HardwareSpec
Nodes(uint32_t perNode)
{
    HardwareSpec hw = HardwareSpec::Load("a100-sxm-80gb");
    hw.network.dimensions[0].size = perNode;
    return hw;
}

} // namespace

/**
 * \brief Rank 0's bytes (and every other rank's) from MessageDelivered equal the full replay's
 * with the reduction on, and the reduced and full replays agree on the step time, with and
 * without messages traced.
 */
class SymmetryMessagesTestCase : public TestCase
{
  public:
    SymmetryMessagesTestCase()
        : TestCase("reduced replays report every rank's messages as the full replay does")
    {}

  private:
    void
    DoRun() override
    {
        struct Case
        {
            const char* name;
            HardwareSpec hw;
            uint32_t tp;
            uint32_t pp;
            uint32_t dp;
            bool userbuffers = false;
        };
        // TP2 on 2-GPU nodes: tensor groups own their links (timed once when untraced; with
        // userbuffers, untraced, their ring messages' copies in other groups are not sent); TP4
        // on 8-GPU nodes: two tensor groups and a data-parallel pair share each node's switch.
        for (const Case& c :
             {Case{"TP2 PP2 DP2, 2-GPU nodes", Nodes(2), 2, 2, 2},
              Case{"TP4 PP1 DP4, 8-GPU nodes", Nodes(8), 4, 1, 4},
              Case{"TP2 PP2 DP2 userbuffers, 2-GPU nodes", Nodes(2), 2, 2, 2, true}})
        {
            Traffic full;
            Traffic reduced;
            const std::string g = "auto";
            const bool ub = c.userbuffers;
            const RunReport f = RunJob(c.hw, c.tp, c.pp, c.dp, false, &full, g, ub);
            const RunReport r = RunJob(c.hw, c.tp, c.pp, c.dp, true, &reduced, g, ub);
            NS_TEST_EXPECT_MSG_GT(full.sent[0], 0u, c.name << ": rank 0 sends");
            NS_TEST_EXPECT_MSG_EQ(reduced.sent[0], full.sent[0], c.name << ": rank 0's bytes");
            NS_TEST_EXPECT_MSG_EQ(reduced.received[0], full.received[0], c.name);
            const uint32_t gpus = c.tp * c.pp * c.dp;
            for (uint32_t g = 0; g < gpus; ++g)
            {
                NS_TEST_EXPECT_MSG_EQ(reduced.sent[g], full.sent[g], c.name << ": GPU " << g);
                NS_TEST_EXPECT_MSG_EQ(reduced.received[g], full.received[g], c.name);
            }
            NS_TEST_EXPECT_MSG_EQ(reduced.messages, full.messages, c.name << ": messages");
            NS_TEST_EXPECT_MSG_EQ_TOL(r.stepTimeS, f.stepTimeS, 1e-9 * f.stepTimeS, c.name);
            // Untraced, repeats may be timed from their first run: the same step time.
            const RunReport quiet = RunJob(c.hw, c.tp, c.pp, c.dp, true, nullptr, g, ub);
            const RunReport quietFull = RunJob(c.hw, c.tp, c.pp, c.dp, false, nullptr, g, ub);
            NS_TEST_EXPECT_MSG_EQ_TOL(quiet.stepTimeS, f.stepTimeS, 1e-9 * f.stepTimeS, c.name);
            NS_TEST_EXPECT_MSG_EQ_TOL(quietFull.stepTimeS, f.stepTimeS, 1e-9 * f.stepTimeS, c.name);
        }
    }
};

/** \brief The suite. */
class SymmetryMessagesTestSuite : public TestSuite
{
  public:
    SymmetryMessagesTestSuite()
        : TestSuite("rapid-llm-symmetry-messages", UNIT)
    {
        AddTestCase(new SymmetryMessagesTestCase, TestCase::QUICK);
    }
};

/** The suite's one instance. */
static SymmetryMessagesTestSuite g_symmetryMessagesTestSuite;
