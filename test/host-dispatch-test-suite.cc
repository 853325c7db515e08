/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// Host dispatch (issue 12 item 1): a kernel starts once the host thread has issued it.

#include "job-fixtures.h"
#include "ns3/flow-network.h"
#include "ns3/hardware-spec.h"
#include "ns3/host-dispatch.h"
#include "ns3/rapid-llm-helper.h"
#include "ns3/replay-job.h"
#include "ns3/routing-policy.h"
#include "ns3/simulator.h"
#include "ns3/test.h"
#include "ns3/topology.h"
#include "ns3/trace-replayer.h"
#include "ns3/workload.h"

using namespace ns3;
using namespace ns3::rapidllm;

namespace {

/** Replays \p set on a 2-GPU switch. */
ReplayResult
ReplaySet(TraceSet set)
{
    NetworkSpec spec;
    NetworkDimensionSpec d;
    d.name = "nvlink";
    d.kind = TopologyKind::SWITCH;
    d.size = 2;
    d.bandwidthBps = 100e9;
    spec.dimensions = {d};
    Ptr<FlowNetwork> net = CreateObject<FlowNetwork>();
    net->SetTopology(Topology::Build(spec, static_cast<uint32_t>(set.ranks.size())));
    net->SetRouting(RoutingPolicy::Create("shortest-path"));
    Ptr<TraceReplayer> replayer = CreateObject<TraceReplayer>();
    replayer->SetBackend(net);
    ReplayResult r = replayer->Replay(ReplayJob::FromTraceSet(std::move(set)));
    Simulator::Destroy();
    return r;
}

/**
 * \brief Three 1 us kernels issued at 10 us each: the host sets the pace (31 us); when the
 * host waits for the first kernel, the rest slip by that kernel's time (32 us); without host
 * costs the kernels run back to back (3 us).
 */
class HostPaceTestCase : public TestCase
{
  public:
    HostPaceTestCase()
        : TestCase("kernels start when the host has issued them")
    {}

  private:
    void
    DoRun() override
    {
        for (int variant = 0; variant < 3; ++variant)
        {
            TraceSet set;
            set.ranks.emplace_back(0);
            ExecutionTrace& t = set.ranks[0];
            uint32_t a = t.AddCompute("a", 1000, 0, 0);
            uint32_t b = t.AddCompute("b", 1000, 0, 0, {a});
            uint32_t c = t.AddCompute("c", 1000, 0, 0, {b});
            if (variant > 0)
            {
                t.SetHost(a, 10000, variant == 2);
                t.SetHost(b, 10000, false);
                t.SetHost(c, 10000, false);
            }
            NS_TEST_ASSERT_MSG_EQ(t.HasHost(), (variant > 0), "host data kept");
            const double expected[] = {3e-6, 31e-6, 32e-6};
            ReplayResult r = ReplaySet(std::move(set));
            NS_TEST_EXPECT_MSG_EQ_TOL(
                r.stepTimeS, expected[variant], 1e-12, "variant " + std::to_string(variant));
        }
    }
};

/** \brief Per-node host costs of each dispatch mode follow the closed forms. */
class HostDispatchCostTestCase : public TestCase
{
  public:
    HostDispatchCostTestCase()
        : TestCase("dispatch modes give each node its host time and sync")
    {}

  private:
    void
    DoRun() override
    {
        HostSpec host;
        host.eagerOpS = 15e-6;
        host.launchS = 2e-6;
        host.graphLaunchS = 5e-6;
        host.stepSyncS = 10e-6;
        host.iterationS["hf"] = 200e-6;
        RunSpec run = fixture::InferenceJob(1, 1, 1, 16, 4);
        run.engine = "hf";
        NS_TEST_ASSERT_MSG_EQ(run.ResolvedDispatch(), "eager", "hf runs eager PyTorch");
        Workload w = Workload::Build(ModelSpec::Load("llama2-7b"), run);
        ApplyHostDispatch(w, host);
        uint32_t syncs = 0;
        bool stepStart = true;
        bool first = true;
        for (const auto& n : w.stages[0].nodes)
        {
            double expected = EagerOpsOf(w.stages[0], n, true) * host.eagerOpS;
            if (stepStart)
            {
                expected += 200e-6 + (first ? 0 : 10e-6);
                first = false;
                stepStart = false;
            }
            NS_TEST_EXPECT_MSG_EQ_TOL(n.hostS, expected, 1e-15, n.label);
            if (n.hostSync)
            {
                ++syncs;
                stepStart = true;
                NS_TEST_EXPECT_MSG_EQ(
                    int(w.stages[0].OpOf(n).type), int(OpType::SAMPLING), "syncs on sampling");
            }
        }
        NS_TEST_EXPECT_MSG_EQ(syncs, 4u, "one sync per generated token");
        // Llama's layer as transformers writes it: 50 eager ops.
        uint32_t layerOps = 0;
        for (const auto& n : w.stages[0].nodes)
        {
            layerOps += (n.layer == 0 && n.microBatch == 1) ? EagerOpsOf(w.stages[0], n, true) : 0;
        }
        NS_TEST_EXPECT_MSG_EQ(layerOps, 50u, "RMSNorm 2x8, qkv 3, rope 14, attention 9, ...");

        w.run.engine = "none";
        ApplyHostDispatch(w, host);
        for (const auto& n : w.stages[0].nodes)
        {
            NS_TEST_EXPECT_MSG_EQ(n.hostS, 0.0, "no dispatch, no host time");
        }
        w.run.dispatch = "graphs";
        ApplyHostDispatch(w, host);
        double total = 0;
        for (const auto& n : w.stages[0].nodes)
        {
            total += n.hostS;
        }
        NS_TEST_EXPECT_MSG_EQ_TOL(total, 4 * 5e-6 + 3 * 10e-6, 1e-15, "one graph per step");
    }
};

/**
 * \brief Eager dispatch makes batch-1 decode launch-bound: the time per token is at least the
 * host time of a step's ops, and an ideal host leaves the run as it was.
 */
class HostBoundDecodeTestCase : public TestCase
{
  public:
    HostBoundDecodeTestCase()
        : TestCase("eager batch-1 decode is launch-bound")
    {}

  private:
    void
    DoRun() override
    {
        RunSpec run = fixture::InferenceJob(1, 1, 1, 16, 4);
        run.parallel.dp = 1;
        auto tpot = [&run](const std::string& engine, const std::string& dispatch)
        {
            Ptr<RapidLlmHelper> h = CreateObject<RapidLlmHelper>();
            h->Load("llama2-7b", "a100-sxm-80gb");
            RunSpec r = run;
            r.engine = engine;
            r.dispatch = dispatch;
            h->SetRun(r);
            return h->Run().tpotS;
        };
        const double ideal = tpot("none", "auto");
        const double eager = tpot("hf", "auto");
        const double engine = tpot("none", "engine");
        const HostSpec host = HardwareSpec::Load("a100-sxm-80gb").gpu.host;
        // 32 layers x 50 ops + embedding, final norm (8), logits and sampling (20).
        const double hostPerStep =
            (32 * 50 + 1 + 8 + 1 + 20) * host.eagerOpS + host.stepSyncS + host.IterationS("hf");
        NS_TEST_EXPECT_MSG_GT(eager, hostPerStep * 0.999, "at least the host's time");
        NS_TEST_EXPECT_MSG_GT(ideal, 0.0, "ran");
        NS_TEST_EXPECT_MSG_LT(ideal, hostPerStep, "the GPU alone is faster than eager's host");
        NS_TEST_EXPECT_MSG_GT(engine, ideal, "a C++ loop costs a little");
        NS_TEST_EXPECT_MSG_LT(engine, ideal * 1.1, "but its kernels outlast its launches");

        // On one GPU nothing is communicated: the idle time is the host's, and the report
        // says so instead of calling it exposed communication.
        Ptr<RapidLlmHelper> h = CreateObject<RapidLlmHelper>();
        h->Load("llama2-7b", "a100-sxm-80gb");
        RunSpec r = run;
        r.engine = "hf";
        h->SetRun(r);
        const RunReport report = h->Run();
        NS_TEST_EXPECT_MSG_GT(report.hostWaitS, 0.5 * report.stepTimeS, "launch-bound");
        NS_TEST_EXPECT_MSG_EQ_TOL(report.exposedCommS, 0.0, 1e-12, "no communication");
        NS_TEST_EXPECT_MSG_EQ_TOL(report.computeS + report.bubbleS + report.hostWaitS,
                                  report.stepTimeS,
                                  1e-9 * report.stepTimeS,
                                  "compute and the host's waits make the step");
    }
};

/** \brief The host-dispatch test suite. */
class HostDispatchTestSuite : public TestSuite
{
  public:
    HostDispatchTestSuite()
        : TestSuite("rapid-llm-host-dispatch", UNIT)
    {
        AddTestCase(new HostPaceTestCase, TestCase::QUICK);
        AddTestCase(new HostDispatchCostTestCase, TestCase::QUICK);
        AddTestCase(new HostBoundDecodeTestCase, TestCase::QUICK);
    }
};

static HostDispatchTestSuite g_hostDispatchTestSuite; //!< registers the suite

} // namespace
