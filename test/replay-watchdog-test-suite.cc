/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// The replay watchdog (TraceReplayer MaxSimulatedTime and MaxEvents): a replay that runs past
// either limit stops with a ReplayError naming the limit, the time, the event count and where
// it was waiting; limits above what a job needs change nothing; a trace that cannot finish is
// still reported as such (the watchdog's own events never keep the simulator running).

#include "cli-process.h"
#include "job-fixtures.h"
#include "ns3/config.h"
#include "ns3/nstime.h"
#include "ns3/rapid-llm-helper.h"
#include "ns3/replay-error.h"
#include "ns3/simulator.h"
#include "ns3/test.h"
#include "ns3/uinteger.h"

#include <cstdlib>
#include <filesystem>
#include <string>

using namespace ns3;
using namespace ns3::rapidllm;

namespace {

/** \return a helper set up for a small 8-GPU training job (GPT 1.7B cut to 4 layers) */
Ptr<RapidLlmHelper>
SmallJob()
{
    Ptr<RapidLlmHelper> h = CreateObject<RapidLlmHelper>();
    h->Load("gpt-1.7b", "a100-sxm-80gb");
    h->SetModel(fixture::SmallGpt());
    h->SetRun(fixture::TrainingJob(2, 2, 2, 1, 8, 512));
    return h;
}

/** \return the message of the ReplayError \p h's Run() throws ("" if it finishes) */
std::string
WatchdogErrorOf(Ptr<RapidLlmHelper> h)
{
    try
    {
        h->Run();
    }
    catch (const ReplayError& e)
    {
        return e.what();
    }
    return "";
}

} // namespace

/** \brief Each limit stops a replay that needs more, with an error naming it. */
class WatchdogTripTestCase : public TestCase
{
  public:
    WatchdogTripTestCase()
        : TestCase("a replay beyond MaxEvents or MaxSimulatedTime stops with a named error")
    {}

  private:
    void
    DoRun() override
    {
        const double step = SmallJob()->Run().stepTimeS;
        NS_TEST_ASSERT_MSG_GT(step, 0.0, "the job runs with the default limits");

        // Too few events.
        Ptr<RapidLlmHelper> h = SmallJob();
        h->SetReplayerAttribute("MaxEvents", UintegerValue(50));
        std::string e = WatchdogErrorOf(h);
        NS_TEST_EXPECT_MSG_NE(e.find("MaxEvents of 50 simulator events"), std::string::npos, e);
        NS_TEST_EXPECT_MSG_NE(e.find("first waiting: rank"), std::string::npos, e);
        NS_TEST_EXPECT_MSG_NE(e.find("operators unfinished"), std::string::npos, e);
        NS_TEST_EXPECT_MSG_NE(e.find("raise the attribute ns3::rapidllm::TraceReplayer::MaxEvents"),
                              std::string::npos,
                              e);

        // Too little simulated time, set as a default through Config (as a script would).
        Config::SetDefault("ns3::rapidllm::TraceReplayer::MaxSimulatedTime",
                           TimeValue(Seconds(step / 10)));
        e = WatchdogErrorOf(SmallJob());
        Config::SetDefault("ns3::rapidllm::TraceReplayer::MaxSimulatedTime",
                           TimeValue(Seconds(1e9)));
        NS_TEST_EXPECT_MSG_NE(
            e.find("passed the watchdog's MaxSimulatedTime"), std::string::npos, e);
        NS_TEST_EXPECT_MSG_NE(
            e.find("raise the attribute ns3::rapidllm::TraceReplayer::MaxSimulatedTime"),
            std::string::npos,
            e);
        NS_TEST_EXPECT_MSG_EQ(Simulator::IsFinished(), true, "Run() left no simulator behind");

        // Limits just above what the job needs change nothing (the watchdog's own events do
        // not reorder the job's).
        h = SmallJob();
        h->SetReplayerAttribute("MaxSimulatedTime", TimeValue(Seconds(step * 1.01)));
        NS_TEST_EXPECT_MSG_EQ(h->Run().stepTimeS, step, "same step time under a close limit");
    }
};

/**
 * \brief A runaway from a network far too slow for the job: a soft fault at the smallest
 * allowed factor on the link every cross-node message of gpu0 takes makes the data-parallel
 * all-reduce run for hours of simulated time; the watchdog stops it at its limit.
 */
class WatchdogSlowNetworkTestCase : public TestCase
{
  public:
    WatchdogSlowNetworkTestCase()
        : TestCase("a replay slowed by a 1e-6 soft fault stops at MaxSimulatedTime")
    {}

  private:
    void
    DoRun() override
    {
        Ptr<RapidLlmHelper> h = CreateObject<RapidLlmHelper>();
        h->Load("gpt-1.7b", "a100-sxm-80gb");
        h->SetModel(fixture::SmallGpt());
        h->SetRun(fixture::TrainingJob(8, 1, 2, 1, 2, 512)); // DP across two nodes
        HardwareSpec hw = h->GetHardware();
        hw.network.faults.push_back({"gpu0-infiniband.leaf0.0", LinkFaultSpec::kMinFactor});
        h->SetHardware(hw);
        h->SetReplayerAttribute("MaxSimulatedTime", TimeValue(Seconds(10)));
        const std::string e = WatchdogErrorOf(h);
        NS_TEST_EXPECT_MSG_NE(e.find("MaxSimulatedTime of 10"), std::string::npos, e);
        NS_TEST_EXPECT_MSG_NE(e.find("at t = 10 s"), std::string::npos, e);
        NS_TEST_EXPECT_MSG_NE(e.find("ALL_REDUCE"), std::string::npos, e);

        // A limit that falls while a gradient all-reduce runs as a timed reservation, with no
        // message on the network and nothing computing (Llama-2 7B, TP2 DP8 on two H100 nodes,
        // step 0.1486 s): slow, not stuck. It was reported as a group that never met, naming
        // no rank.
        h = CreateObject<RapidLlmHelper>();
        h->Load("llama2-7b", "h100-sxm-80gb");
        h->SetRun(fixture::TrainingJob(2, 1, 8, 1, 8, 2048));
        h->SetReplayerAttribute("MaxSimulatedTime", TimeValue(Seconds(0.1)));
        const std::string slow = WatchdogErrorOf(h);
        NS_TEST_EXPECT_MSG_NE(slow.find("MaxSimulatedTime of 0.1"), std::string::npos, slow);
        NS_TEST_EXPECT_MSG_EQ(slow.find("never met"), std::string::npos, slow);
    }
};

/**
 * \brief A link that dies under a message and is never repaired: the replay cannot finish, and
 * the error says why (it used to run to MaxSimulatedTime and blame a rate far too low).
 */
class WatchdogDeadLinkTestCase : public TestCase
{
  public:
    WatchdogDeadLinkTestCase()
        : TestCase("a link dying under a message, never repaired: the trace cannot finish")
    {}

  private:
    void
    DoRun() override
    {
        auto job = []()
        {
            Ptr<RapidLlmHelper> h = CreateObject<RapidLlmHelper>();
            h->Load("gpt-1.7b", "a100-sxm-80gb");
            h->SetModel(fixture::SmallGpt());
            h->SetRun(fixture::TrainingJob(8, 1, 2, 1, 2, 512)); // DP across two nodes
            h->SetRoutingPolicy("fault-aware"); // later messages go around the dead link
            return h;
        };
        const double step = job()->Run().stepTimeS;
        // gpu0's NIC link dies at some instant while the gradients' all-reduce crosses it (the
        // first twentieth of the step at which a message is on it).
        std::string e;
        double at = 0;
        for (int k = 1; k < 20 && e.empty(); ++k)
        {
            at = step * k / 20.0;
            Ptr<RapidLlmHelper> h = job();
            h->SetTimedFaults({{"gpu0-infiniband.leaf0.0", 0.0, Seconds(at), "test"}});
            e = WatchdogErrorOf(h);
        }
        NS_TEST_EXPECT_MSG_NE(e.find("the trace cannot finish"), std::string::npos, e);
        NS_TEST_EXPECT_MSG_NE(e.find("dead and never repaired"), std::string::npos, e);
        NS_TEST_EXPECT_MSG_NE(e.find("first waiting: rank"), std::string::npos, e);
        NS_TEST_EXPECT_MSG_EQ(e.find("ran away"), std::string::npos, e);
        // Repaired, it finishes.
        Ptr<RapidLlmHelper> h = job();
        h->SetTimedFaults({{"gpu0-infiniband.leaf0.0", 0.0, Seconds(at), "test"},
                           {"gpu0-infiniband.leaf0.0", 1.0, Seconds(step), "test"}});
        NS_TEST_EXPECT_MSG_GT(h->Run().stepTimeS, step, "stalled, then resumed");
    }
};

#ifdef RAPIDLLM_CLI
/**
 * \brief On the command line (limits set through ns-3's NS_ATTRIBUTE_DEFAULT): exit 2 and one
 * line naming the limit.
 */
class WatchdogCliTestCase : public TestCase
{
  public:
    WatchdogCliTestCase()
        : TestCase("rapid-llm run and collective stopped by the watchdog exit 2 naming the limit")
    {}

  private:
    void
    DoRun() override
    {
        const ScratchDir scratch("watchdog");
        const std::string dir = scratch.Path();
        ::setenv("NS_ATTRIBUTE_DEFAULT", "ns3::rapidllm::TraceReplayer::MaxEvents=100", 1);
        const CliResult r =
            RunCli({"run", "--model=gpt-1.7b", "--gpus=8", "--tp=2", "--pp=2", "--gbs=8"}, dir);
        ::unsetenv("NS_ATTRIBUTE_DEFAULT");
        NS_TEST_EXPECT_MSG_EQ(r.status, 2, r.err);
        NS_TEST_EXPECT_MSG_EQ(r.out, "", "no report");
        NS_TEST_EXPECT_MSG_EQ(r.err.rfind("rapid-llm run: error: ", 0), 0, r.err);
        NS_TEST_EXPECT_MSG_NE(
            r.err.find("MaxEvents of 100 simulator events"), std::string::npos, r.err);
        // The collective command runs under the same simulated-time limit.
        ::setenv("NS_ATTRIBUTE_DEFAULT", "ns3::rapidllm::TraceReplayer::MaxSimulatedTime=1us", 1);
        const CliResult c =
            RunCli({"collective", "--hardware=a100-sxm-80gb", "--gpus=8", "--bytes=1GiB"}, dir);
        ::unsetenv("NS_ATTRIBUTE_DEFAULT");
        NS_TEST_EXPECT_MSG_EQ(c.status, 2, c.err);
        NS_TEST_EXPECT_MSG_EQ(c.out, "", "no report");
        NS_TEST_EXPECT_MSG_EQ(c.err.rfind("rapid-llm collective: error: ", 0), 0, c.err);
        NS_TEST_EXPECT_MSG_NE(c.err.find("MaxSimulatedTime"), std::string::npos, c.err);
    }
};
#endif

/** \brief The replay watchdog. */
class ReplayWatchdogTestSuite : public TestSuite
{
  public:
    ReplayWatchdogTestSuite()
        : TestSuite("rapid-llm-replay-watchdog", UNIT)
    {
        AddTestCase(new WatchdogTripTestCase, TestCase::QUICK);
        AddTestCase(new WatchdogSlowNetworkTestCase, TestCase::QUICK);
        AddTestCase(new WatchdogDeadLinkTestCase, TestCase::QUICK);
#ifdef RAPIDLLM_CLI
        AddTestCase(new WatchdogCliTestCase, TestCase::QUICK);
#endif
    }
};

static ReplayWatchdogTestSuite g_replayWatchdogTestSuite; //!< registers the suite
