/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// Collective algorithms on the flow network: the ring all-reduce closed form, congestion on an
// oversubscribed fat tree, soft and hard faults, the DGX A100 bus bandwidth, per-step latency,
// the message volume of every algorithm, bad requests, and an algorithm registered in this file
// used by name (request, engine, a network dimension's `collective`).

#include "network-test-spec.h"
#include "ns3/collective-algorithms.h"
#include "ns3/collective-engine.h"
#include "ns3/collective-probe.h"
#include "ns3/collective-schedule.h"
#include "ns3/config.h"
#include "ns3/direct-collective.h"
#include "ns3/flow-network.h"
#include "ns3/hardware-spec.h"
#include "ns3/replay-error.h"
#include "ns3/ring-collective.h"
#include "ns3/simulator.h"
#include "ns3/spec-error.h"
#include "ns3/string.h"
#include "ns3/test.h"
#include "ns3/topology.h"
#include "ns3/type-registry.h"
#include "spec-error-check.h"
#include "test-require.h"

#include <algorithm>
#include <cmath>
#include <map>

using namespace ns3;
using namespace ns3::rapidllm;

namespace {

/**
 * \brief A test's own algorithm, registered below from this file alone: a star all-reduce.
 * Every rank sends its whole buffer to member 0, which sums them and sends the result back. On
 * a switch the root's link carries (n-1) S each way, so it takes 2(n-1) S / B, n times a ring.
 */
class StarAllReduce : public CollectiveAlgorithm
{
  public:
    /** \brief Register this type. \return the TypeId */
    static TypeId
    GetTypeId()
    {
        static TypeId tid = TypeId("ns3::rapidllm::test::StarAllReduce")
                                .SetParent<CollectiveAlgorithm>()
                                .AddConstructor<StarAllReduce>();
        return tid;
    }

    bool
    Supports(CollectiveOp op, uint32_t ranks, std::string& why) const override
    {
        why = "test-star-all-reduce runs all-reduce only, not " + ToString(op);
        return op == CollectiveOp::ALL_REDUCE;
    }

    void
    AddMessages(ScheduleBuilder& b, const CollectiveCall& call) const override
    {
        ++s_built;
        const auto& m = call.members;
        std::vector<ScheduleBuilder::Step> in{b.GetReady(m[0])};
        for (std::size_t i = 1; i < m.size(); ++i)
        {
            in.push_back(
                b.Reduce(m[0], call.bytes, b.Send(m[i], m[0], call.bytes, b.GetReady(m[i]))));
        }
        const ScheduleBuilder::Step sum = b.Join(m[0], in);
        b.SetReady(m[0], sum);
        for (std::size_t i = 1; i < m.size(); ++i)
        {
            b.SetReady(m[i], b.Send(m[0], m[i], call.bytes, sum));
        }
    }

    static uint32_t s_built; //!< AddMessages calls, to see the algorithm was used
};

uint32_t StarAllReduce::s_built = 0;

static TypeRegistrar<CollectiveAlgorithm> g_star("test-star-all-reduce",
                                                 StarAllReduce::GetTypeId());

/** \return the group 0..n-1 */
std::vector<uint32_t>
FirstRanks(uint32_t n)
{
    std::vector<uint32_t> group(n);
    for (uint32_t i = 0; i < n; ++i)
    {
        group[i] = i;
    }
    return group;
}

/** \brief What one collective did on a CollectiveEngine over a flow network. */
struct EngineRun
{
    double timeS = -1;                 //!< when it finished
    int done = 0;                      //!< done callbacks
    std::map<uint32_t, int> ranksDone; //!< per rank: rank-done callbacks
    uint64_t delivered = 0;            //!< messages the network delivered
    uint32_t running = 0;              //!< collectives the engine still runs afterwards
};

/** \return how \p request ran on a CollectiveEngine over a flow network over \p spec */
EngineRun
RunOnEngine(const NetworkSpec& spec, const CollectiveRequest& request)
{
    Ptr<FlowNetwork> net = CreateObject<FlowNetwork>();
    net->SetTopology(Topology::Build(spec, 0));
    net->SetRouting(RoutingPolicy::Create(spec.routing));
    Ptr<CollectiveEngine> engine = CreateObject<CollectiveEngine>();
    engine->SetBackend(net);
    EngineRun run;
    Simulator::ScheduleNow(
        [&]()
        {
            engine->Start(request,
                          CollectiveEngine::RankDoneCallback(
                              [&](uint64_t, uint32_t r, uint32_t)
                              {
                                  ++run.ranksDone[r];
                              }),
                          CollectiveEngine::DoneCallback(
                              [&](uint64_t)
                              {
                                  ++run.done;
                                  run.timeS = Simulator::Now().GetSeconds();
                              }));
        });
    Simulator::Run();
    Simulator::Destroy();
    run.delivered = net->GetDeliveredCount();
    run.running = engine->GetRunningCount();
    return run;
}

/** \return the probe's time for one collective */
double
RunTime(const NetworkSpec& spec,
        CollectiveOp op,
        uint64_t bytes,
        uint32_t gpus,
        const std::string& algorithm = "auto",
        const std::string& routing = "",
        uint32_t chunks = 0)
{
    CollectiveProbeConfig c;
    c.op = op;
    c.bytes = bytes;
    c.gpus = gpus;
    c.algorithm = algorithm;
    c.routing = routing;
    c.chunks = chunks;
    return RunCollectiveProbe(spec, c).timeS;
}

} // namespace

/**
 * \brief Ring all-reduce on an uncongested ring: 2(n-1) steps of S/n bytes, each paying the
 * link latency a, so T = 2(n-1)/n x S/B + 2(n-1)a. With one piece per step (the default) there
 * is no chunking effect; the only error is the simulator's 1 ns time resolution per step.
 */
class RingClosedFormTestCase : public TestCase
{
  public:
    RingClosedFormTestCase()
        : TestCase(
            "ring all-reduce matches the closed form 2(n-1)S over nB plus 2(n-1)a for n = 4, 8, 64")
    {}

  private:
    void
    DoRun() override
    {
        const double b = 50e9;
        const double a = 2e-6;
        for (uint32_t n : {4u, 8u, 64u})
        {
            NetworkSpec s =
                OneDimension(TopologyKind::RING, n, 50, 2000).Routing("dimension-order");
            for (uint64_t bytes : {uint64_t(1) << 20, uint64_t(1) << 26, uint64_t(1) << 32})
            {
                double t = RunTime(s, CollectiveOp::ALL_REDUCE, bytes, n, "ring");
                double expected = 2.0 * (n - 1) / n * bytes / b + 2.0 * (n - 1) * a;
                NS_TEST_ASSERT_MSG_EQ_TOL(
                    t / expected, 1.0, 0.01, "n=" << n << " S=" << bytes << " t=" << t);
            }
        }
        // Chunking: every piece of a step crosses the same link, so splitting into c pieces
        // leaves the bandwidth term unchanged; the pieces' messages go in order over each
        // connection (one after the other's last byte), so one piece's latencies overlap the
        // others' bytes: at most the unchunked time, at least the bytes plus one latency.
        NetworkSpec s = OneDimension(TopologyKind::RING, 8, 50, 2000).Routing("dimension-order");
        uint64_t bytes = uint64_t(1) << 26;
        double t1 = RunTime(s, CollectiveOp::ALL_REDUCE, bytes, 8, "ring", "", 1);
        double t4 = RunTime(s, CollectiveOp::ALL_REDUCE, bytes, 8, "ring", "", 4);
        double bw = 2.0 * 7 / 8 * bytes / b;
        NS_TEST_ASSERT_MSG_LT_OR_EQ(t4, t1 * 1.0001, "chunking a ring does not slow it down");
        NS_TEST_ASSERT_MSG_LT(t4, t1 - 4 * a, "the pieces hide some of the 14 latencies");
        NS_TEST_ASSERT_MSG_GT_OR_EQ(t4, bw + a, "the bytes and the last latency remain");
    }
};

/**
 * \brief All-to-all across a two-tier fat tree (16 hosts, leaves of 4): with 4:1
 * oversubscription each leaf's uplink (B) carries 4 x 12 x S/16 = 3S, so T = 3S/B; at 1:1 the
 * uplinks (4B) are not the bottleneck and each host link carries 15 S/16, so T = 15S/(16B).
 * The slowdown is the ratio of the two bottlenecks, 3.2.
 */
class OversubscriptionTestCase : public TestCase
{
  public:
    OversubscriptionTestCase()
        : TestCase("all-to-all on a 4:1 fat tree is slower than 1:1 by the bisection ratio")
    {}

  private:
    void
    DoRun() override
    {
        const double b = 25e9;
        const uint64_t bytes = uint64_t(1) << 30;
        double times[2];
        double ratios[2] = {1, 4};
        for (int i = 0; i < 2; ++i)
        {
            NetworkSpec s =
                OneDimension(TopologyKind::FAT_TREE, 16, 25, 1000).Routing("dimension-order");
            s.dimensions[0].leafSize = 4;
            s.dimensions[0].oversubscription = ratios[i];
            times[i] = RunTime(s, CollectiveOp::ALL_TO_ALL, bytes, 16);
        }
        double hostBound = 15.0 / 16 * bytes / b;
        double uplinkBound = [&](double o)
        {
            return 4 * 12 * (bytes / 16.0) / (4 * b / o);
        }(4);
        NS_TEST_ASSERT_MSG_EQ_TOL(times[0] / hostBound, 1.0, 0.01, "1:1 is host-link bound");
        NS_TEST_ASSERT_MSG_EQ_TOL(times[1] / uplinkBound, 1.0, 0.01, "4:1 is uplink bound");
        NS_TEST_ASSERT_MSG_EQ_TOL(
            times[1] / times[0], uplinkBound / hostBound, 0.01 * 3.2, "ratio");
        // ECMP hashing is less even than D-mod-k but must still see the congestion.
        NetworkSpec s = OneDimension(TopologyKind::FAT_TREE, 16, 25, 1000).Routing("ecmp");
        s.dimensions[0].leafSize = 4;
        s.dimensions[0].oversubscription = 4;
        NS_TEST_ASSERT_MSG_GT_OR_EQ(RunTime(s, CollectiveOp::ALL_TO_ALL, bytes, 16),
                                    uplinkBound * 0.999,
                                    "ECMP cannot beat the bisection bound");
    }
};

/**
 * \brief Soft fault: one ring link at 50% makes every ring step as slow as that link, so the
 * bandwidth term doubles: T = 2(n-1)(a + 2S/(nB)).
 */
class SoftFaultTestCase : public TestCase
{
  public:
    SoftFaultTestCase()
        : TestCase("a 50% ring link slows a ring all-reduce by the bottleneck amount")
    {}

  private:
    void
    DoRun() override
    {
        const uint32_t n = 8;
        const double b = 50e9;
        const double a = 1e-6;
        const uint64_t bytes = uint64_t(1) << 28;
        NetworkSpec s = OneDimension(TopologyKind::RING, n, 50, 1000).Routing("shortest-path");
        double healthy = RunTime(s, CollectiveOp::ALL_REDUCE, bytes, n, "ring");
        s.faults.push_back({"gpu3-gpu4", 0.5});
        double degraded = RunTime(s, CollectiveOp::ALL_REDUCE, bytes, n, "ring");
        double expected = 2.0 * (n - 1) * (a + 2.0 * bytes / (n * b));
        NS_TEST_ASSERT_MSG_EQ_TOL(degraded / expected, 1.0, 0.01, "bottleneck prediction");
        NS_TEST_ASSERT_MSG_EQ_TOL(degraded / healthy,
                                  (a + 2.0 * bytes / (n * b)) / (a + 1.0 * bytes / (n * b)),
                                  0.01,
                                  "slowdown");
    }
};

/**
 * \brief Hard fault on an 8x8 torus: the link gpu0-gpu1 is dead. An all-to-all among the 8
 * GPUs of row 0 still completes; dimension order detours the long way round row 0 (loading
 * links that already carry the all-to-all), fault-aware routing detours through row 1, which is
 * idle, and finishes sooner.
 */
class HardFaultTestCase : public TestCase
{
  public:
    HardFaultTestCase()
        : TestCase("a dead torus link is routed around; fault-aware beats dimension order")
    {}

  private:
    void
    DoRun() override
    {
        NetworkSpec s =
            OneDimension(TopologyKind::TORUS, 64, 25, 500).Shape({8, 8}).Routing("dimension-order");
        const uint64_t bytes = uint64_t(1) << 28;
        double healthy = RunTime(s, CollectiveOp::ALL_TO_ALL, bytes, 8, "direct");
        s.faults.push_back({"gpu0-gpu1", 0});
        double dor = RunTime(s, CollectiveOp::ALL_TO_ALL, bytes, 8, "direct");
        double aware = RunTime(s, CollectiveOp::ALL_TO_ALL, bytes, 8, "direct", "fault-aware");
        NS_TEST_ASSERT_MSG_GT(dor, healthy, "the fault costs time under dimension order");
        NS_TEST_ASSERT_MSG_LT(aware, dor * 0.95, "fault-aware is clearly faster");
        // Both completed, and the detours avoid the dead link.
        Ptr<Topology> t = Topology::Build(s, 64);
        auto pd = RoutingPolicy::Create("dimension-order")->Route(*t, 0, 1, 0);
        auto pa = RoutingPolicy::Create("fault-aware")->Route(*t, 0, 1, 0);
        RAPIDLLM_REQUIRE_EQ(pd.size(), 7u, "dimension order goes round the row");
        RAPIDLLM_REQUIRE_EQ(pa.size(), 3u, "fault aware detours through the next row");
        // A ring all-reduce over the whole torus also completes with the dead link.
        NS_TEST_ASSERT_MSG_GT(
            RunTime(s, CollectiveOp::ALL_REDUCE, bytes, 64, "ring", "fault-aware"), 0, "completes");
    }
};

/**
 * \brief DGX A100 (the preset, its sourced efficiency and latency): 1 GiB all-reduce among 8
 * GPUs reaches a bus bandwidth between 200 and 240 GB/s (NCCL models 12 NVLink3 links x 20
 * GB/s = 240 GB/s per GPU); small messages pay a few microseconds per ring step.
 */
class DgxA100TestCase : public TestCase
{
  public:
    DgxA100TestCase()
        : TestCase("DGX A100 1 GiB all-reduce bus bandwidth is 200 to 240 GB per s; 8 KiB runs "
                   "NCCL's LL protocol")
    {}

  private:
    void
    DoRun() override
    {
        HardwareSpec hw = HardwareSpec::Load("a100-sxm-80gb");
        CollectiveProbeConfig c;
        c.op = CollectiveOp::ALL_REDUCE;
        c.bytes = uint64_t(1) << 30;
        c.gpus = 8;
        CollectiveProbeResult r = RunCollectiveProbe(hw.network, c);
        NS_TEST_ASSERT_MSG_GT_OR_EQ(r.busBandwidthBps, 200e9, "bus bandwidth >= 200 GB/s");
        NS_TEST_ASSERT_MSG_LT_OR_EQ(r.busBandwidthBps, 240e9, "bus bandwidth <= 240 GB/s");
        NS_TEST_ASSERT_MSG_EQ_TOL(r.busBandwidthBps / r.algorithmBandwidthBps,
                                  2.0 * 7 / 8,
                                  1e-9,
                                  "nccl-tests' bus bandwidth factor");
        c.bytes = 8192;
        CollectiveProbeResult small = RunCollectiveProbe(hw.network, c);
        // NCCL's LL protocol: 6.6 us base + 14 steps of 0.6 us, and 8 KiB at a quarter of
        // 240 GB/s x 8 / 14.
        NS_TEST_ASSERT_MSG_EQ(small.algorithm, "nccl(ring/LL)", "tiny messages run LL");
        NS_TEST_ASSERT_MSG_EQ_TOL(small.timeS,
                                  (6.6 + 14 * 0.6) * 1e-6 + 8192 / (60e9 * 8 / 14),
                                  0.05 * small.timeS,
                                  "NCCL's LL estimate");
        // Two nodes: the hierarchical algorithm is chosen and runs.
        c.bytes = uint64_t(1) << 30;
        c.gpus = 16;
        CollectiveProbeResult two = RunCollectiveProbe(hw.network, c);
        NS_TEST_ASSERT_MSG_EQ(two.algorithm,
                              "hierarchical(nvlink:nccl,infiniband:nccl)",
                              "hierarchical over two nodes");
        // The probe (`rapid-llm collective`) runs at the engine's Granularity: messages by
        // default, the fluid streams when asked (a flat 16-GPU ring: 16 streams for 480
        // messages, the same time within 1e-4).
        c.algorithm = "ring";
        c.bytes = uint64_t(1) << 20;
        CollectiveProbeResult messages = RunCollectiveProbe(hw.network, c);
        Config::SetDefault("ns3::rapidllm::CollectiveEngine::Granularity", StringValue("fluid"));
        CollectiveProbeResult fluid = RunCollectiveProbe(hw.network, c);
        Config::SetDefault("ns3::rapidllm::CollectiveEngine::Granularity", StringValue("message"));
        NS_TEST_EXPECT_MSG_EQ(messages.messages, 480u, "ring messages: 2 (n-1) n");
        NS_TEST_EXPECT_MSG_EQ(fluid.messages, 16u, "one stream per ring edge");
        NS_TEST_EXPECT_MSG_EQ_TOL(fluid.timeS / messages.timeS, 1.0, 1e-4, "same time");
    }
};

/**
 * \brief Each algorithm moves the bytes it must: per rank, ring and direct all-reduce send
 * 2(n-1)/n S, halving-doubling the same in 2 log n steps, the double binary tree S per tree
 * edge (up and down); all-to-all sends (n-1)/n S per rank. Every run completes with every
 * rank reported done once.
 */
class AlgorithmVolumeTestCase : public TestCase
{
  public:
    AlgorithmVolumeTestCase()
        : TestCase("every algorithm sends the expected bytes and completes")
    {}

  private:
    void
    DoRun() override
    {
        NetworkSpec s = OneDimension(TopologyKind::SWITCH, 8, 100, 1000).Routing("shortest-path");
        Ptr<Topology> t = Topology::Build(s, 8);
        const uint64_t bytes = 8 << 20;
        struct Row
        {
            CollectiveOp op;
            std::string algorithm;
            double totalBytes; // summed over all messages
        };

        const double n = 8;
        const Row rows[] = {
            {CollectiveOp::ALL_REDUCE, "ring", 2 * (n - 1) * bytes},
            {CollectiveOp::ALL_REDUCE, "direct", 2 * (n - 1) * bytes},
            {CollectiveOp::ALL_REDUCE, "halving-doubling", 2 * (n - 1) * bytes},
            {CollectiveOp::ALL_REDUCE, "double-binary-tree", 2 * (n - 1) * bytes},
            {CollectiveOp::REDUCE_SCATTER, "ring", (n - 1) * bytes},
            {CollectiveOp::ALL_GATHER, "halving-doubling", (n - 1) * bytes},
            {CollectiveOp::ALL_TO_ALL, "direct", (n - 1) * bytes},
            {CollectiveOp::BROADCAST, "ring", (n - 1) * bytes},
            {CollectiveOp::BROADCAST, "direct", (n - 1) * bytes},
            {CollectiveOp::REDUCE, "ring", (n - 1) * bytes},
            {CollectiveOp::REDUCE, "direct", (n - 1) * bytes},
        };
        for (const auto& row : rows)
        {
            CollectiveRequest req;
            req.op = row.op;
            req.algorithm = row.algorithm;
            req.bytes = bytes;
            req.root = 3;
            for (uint32_t i = 0; i < 8; ++i)
            {
                req.endpoints.push_back(i);
            }
            CollectivePlan plan = BuildCollective(req, *t);
            std::string what = ToString(row.op) + "/" + row.algorithm;
            NS_TEST_ASSERT_MSG_EQ_TOL(
                double(plan.schedule.GetTotalBytes()), row.totalBytes, 64, what);
            // Execute it and count rank completions.
            EngineRun run = RunOnEngine(s, req);
            NS_TEST_ASSERT_MSG_EQ(run.done, 1, what << " completes");
            RAPIDLLM_REQUIRE_EQ(run.ranksDone.size(), 8u, what << " every rank done");
            for (const auto& [r, count] : run.ranksDone)
            {
                NS_TEST_ASSERT_MSG_EQ(count, 1, what << " rank " << r << " done once");
            }
            NS_TEST_ASSERT_MSG_EQ(run.delivered, plan.schedule.GetSendCount(), what);
            NS_TEST_ASSERT_MSG_EQ(run.running, 0u, what);
        }
    }
};

/**
 * \brief A local reduction cost (from the compute model) lands on the ring reduce-scatter's
 * critical path: n-1 reductions of S/n bytes each, T += (n-1) S / (n R).
 */
class ReductionCostTestCase : public TestCase
{
  public:
    ReductionCostTestCase()
        : TestCase("local reduction cost adds (n-1) S over nR to a ring all-reduce")
    {}

  private:
    void
    DoRun() override
    {
        const uint32_t n = 8;
        const uint64_t bytes = uint64_t(1) << 28;
        const double rate = 500e9;
        NetworkSpec s = OneDimension(TopologyKind::RING, n, 50, 1000).Routing("dimension-order");
        CollectiveProbeConfig c;
        c.op = CollectiveOp::ALL_REDUCE;
        c.bytes = bytes;
        c.gpus = n;
        c.algorithm = "ring";
        double free = RunCollectiveProbe(s, c).timeS;
        c.reduceBytesPerSecond = rate;
        double charged = RunCollectiveProbe(s, c).timeS;
        NS_TEST_ASSERT_MSG_EQ_TOL(charged - free,
                                  (n - 1) * double(bytes) / (n * rate),
                                  (n - 1) * 2e-9,
                                  "reduction time on the critical path");
        // A direct reduce's root reduces the n - 1 others' data, one at a time at its rate
        // (they overlapped, 6x too fast, when a rank's reductions did not queue).
        c.op = CollectiveOp::REDUCE;
        c.algorithm = "direct";
        c.bytes = uint64_t(1) << 20;
        c.reduceBytesPerSecond = 10e9;
        const double root = (n - 1) * double(c.bytes) / c.reduceBytesPerSecond;
        const double direct = RunCollectiveProbe(s, c).timeS;
        NS_TEST_EXPECT_MSG_GT(direct, root, "the root's reductions queue");
        NS_TEST_EXPECT_MSG_LT(direct, 1.1 * root, "and only queue");
    }
};

/**
 * \brief A collective too large to simulate says how many steps it needs; the advice to
 * simulate it as a fluid one is left out where it already is one (collective --granularity=fluid
 * at a million GPUs was told to give --granularity=fluid).
 */
class CollectiveTooLargeTestCase : public TestCase
{
  public:
    CollectiveTooLargeTestCase()
        : TestCase("a collective too large to simulate is refused with its size")
    {}

  private:
    void
    DoRun() override
    {
        bool refused = false;
        try
        {
            CollectiveSchedule::CheckPlannedSize(uint64_t(1) << 30, 8, 8192);
        }
        catch (const CollectiveTooLarge& e)
        {
            refused = true;
            NS_TEST_EXPECT_MSG_NE(e.GetMessage().find("8192 ranks"), std::string::npos, "size");
            NS_TEST_EXPECT_MSG_NE(
                e.GetMessage().find("--granularity=fluid"), std::string::npos, "the advice");
            NS_TEST_EXPECT_MSG_EQ(
                e.GetMessage(true).find("granularity"), std::string::npos, "not for a fluid one");
            const bool whole = std::string(e.what()).find(e.GetMessage(true)) != std::string::npos;
            NS_TEST_EXPECT_MSG_EQ(whole, true, "what() has the refusal");
        }
        NS_TEST_EXPECT_MSG_EQ(refused, true, "refused before building");
        // A fluid pairwise all-to-all has a stream per ordered pair: refused before its list
        // is built (100,000 ranks grew to 19 GB before the schedule refused a step).
        const uint32_t n = 6000; // 35,994,000 pairs
        Ptr<Topology> t = Topology::Build(
            OneDimension(TopologyKind::SWITCH, n, 100, 1000).Routing("shortest-path"), n);
        CollectiveRequest req;
        req.op = CollectiveOp::ALL_TO_ALL;
        req.algorithm = "direct";
        req.bytes = uint64_t(1) << 30;
        req.fluid = true;
        for (uint32_t i = 0; i < n; ++i)
        {
            req.endpoints.push_back(i);
        }
        bool counted = false;
        try
        {
            BuildCollective(req, *t);
        }
        catch (const CollectiveTooLarge& e)
        {
            counted = e.GetMessage(true).find("counted before building") != std::string::npos;
        }
        NS_TEST_EXPECT_MSG_EQ(counted, true, "the fluid all-to-all counted before building");
    }
};

/**
 * \brief A pipelined tree's time grows with its size across its piece boundaries: whole pieces
 * of 1 MiB and a shorter last one (2 MiB - 1 B in one piece took 49% longer than 2 MiB in two).
 */
class TreePiecesTestCase : public TestCase
{
  public:
    TreePiecesTestCase()
        : TestCase("a double binary tree's time grows with its size across piece boundaries")
    {}

  private:
    void
    DoRun() override
    {
        NetworkSpec s = OneDimension(TopologyKind::SWITCH, 16, 50, 1000).Routing("shortest-path");
        double before = 0;
        for (uint64_t bytes : {uint64_t(1) << 20,
                               (uint64_t(1) << 20) + 1,
                               (uint64_t(2) << 20) - 1,
                               uint64_t(2) << 20,
                               (uint64_t(3) << 20) - 1,
                               uint64_t(3) << 20})
        {
            const double t = RunTime(s, CollectiveOp::ALL_REDUCE, bytes, 16, "double-binary-tree");
            NS_TEST_EXPECT_MSG_GT_OR_EQ(t, before * (1 - 1e-9), bytes << " bytes");
            before = t;
        }
    }
};

/** \brief Bad requests and algorithm choices give clear errors; results are deterministic. */
class CollectiveErrorsTestCase : public TestCase
{
  public:
    CollectiveErrorsTestCase()
        : TestCase("bad collective requests give clear errors; runs are deterministic")
    {}

  private:
    void
    DoRun() override
    {
        NetworkSpec s = OneDimension(TopologyKind::SWITCH, 12, 100, 1000).Routing("shortest-path");
        NS_TEST_ASSERT_MSG_EQ(
            ThrowsWith(
                [&]()
                {
                    RunTime(s, CollectiveOp::REDUCE_SCATTER, 1 << 20, 12, "halving-doubling");
                },
                {"power-of-two", "12"}),
            true,
            "halving-doubling reduce-scatter on 12 ranks");
        // All-reduce on 12 = 8 + 4 ranks folds: 4 S in, 2 x 7 S among the 8, 4 S back.
        {
            Ptr<Topology> t = Topology::Build(s, 12);
            CollectiveRequest req;
            req.op = CollectiveOp::ALL_REDUCE;
            req.algorithm = "halving-doubling";
            req.bytes = 1 << 20;
            for (uint32_t i = 0; i < 12; ++i)
            {
                req.endpoints.push_back(i);
            }
            NS_TEST_ASSERT_MSG_EQ_TOL(double(BuildCollective(req, *t).schedule.GetTotalBytes()),
                                      22.0 * (1 << 20),
                                      64,
                                      "folded halving-doubling volume");
            NS_TEST_ASSERT_MSG_GT(
                RunTime(s, CollectiveOp::ALL_REDUCE, 1 << 20, 12, "halving-doubling"),
                0,
                "folded halving-doubling completes");
        }
        NS_TEST_ASSERT_MSG_EQ(
            ThrowsWith(
                [&]()
                {
                    RunTime(s, CollectiveOp::ALL_GATHER, 1 << 20, 8, "double-binary-tree");
                },
                {"all-reduce only"}),
            true,
            "tree for all-gather");
        NS_TEST_ASSERT_MSG_EQ(ThrowsWith(
                                  [&]()
                                  {
                                      RunTime(s, CollectiveOp::ALL_REDUCE, 1 << 20, 8, "magic");
                                  },
                                  {"magic", "ring", "halving-doubling"}),
                              true,
                              "unknown algorithm");
        NS_TEST_ASSERT_MSG_EQ(ThrowsWith(
                                  [&]()
                                  {
                                      RunTime(s, CollectiveOp::ALL_REDUCE, 1 << 20, 13);
                                  },
                                  {"12", "13"}),
                              true,
                              "more GPUs than the network holds");
        NS_TEST_ASSERT_MSG_EQ(ThrowsWith(
                                  [&]()
                                  {
                                      ParseCollectiveOp("allreduce", "--op");
                                  },
                                  {"--op", "all-reduce"}),
                              true,
                              "unknown op");
        // Unreachable: a ring with two dead links cut in two.
        NetworkSpec r = OneDimension(TopologyKind::RING, 8, 100, 1000).Routing("shortest-path");
        r.faults.push_back({"gpu1-gpu2", 0});
        r.faults.push_back({"gpu5-gpu6", 0});
        NS_TEST_ASSERT_MSG_EQ(ThrowsWith<NetworkError>(
                                  [&]()
                                  {
                                      RunTime(r, CollectiveOp::ALL_REDUCE, 1 << 20, 8, "ring");
                                  },
                                  {"no path from gpu1 to gpu2"}),
                              true,
                              "unreachable pair named");
        double t1 = RunTime(s, CollectiveOp::ALL_TO_ALL, 1 << 24, 12);
        double t2 = RunTime(s, CollectiveOp::ALL_TO_ALL, 1 << 24, 12);
        NS_TEST_ASSERT_MSG_EQ(t1, t2, "deterministic");
    }
};

/**
 * \brief An algorithm registered in this file (StarAllReduce) is used by name: by a request run
 * by the CollectiveEngine (its time is the star's 2(n-1) S / B, n times the ring's), by its
 * TypeId name, and by "auto" when a network dimension's `collective` names it. Every list of
 * algorithm names includes it.
 */
class RegisteredAlgorithmTestCase : public TestCase
{
  public:
    RegisteredAlgorithmTestCase()
        : TestCase("an algorithm registered in a test file runs by name, end to end")
    {}

  private:
    void
    DoRun() override
    {
        const uint32_t n = 8;
        const double b = 100e9;
        const uint64_t bytes = uint64_t(1) << 26;
        NetworkSpec s = OneDimension(TopologyKind::SWITCH, n, 100, 0).Routing("shortest-path");
        const auto names = CollectiveAlgorithmNames();
        NS_TEST_ASSERT_MSG_EQ(
            (std::find(names.begin(), names.end(), "test-star-all-reduce") != names.end()),
            true,
            "the registry's names include the test's algorithm");

        CollectiveRequest req;
        req.op = CollectiveOp::ALL_REDUCE;
        req.bytes = bytes;
        req.endpoints = FirstRanks(n);
        req.algorithm = "test-star-all-reduce";
        const uint32_t before = StarAllReduce::s_built;
        const double star = RunOnEngine(s, req).timeS;
        NS_TEST_ASSERT_MSG_GT(StarAllReduce::s_built, before, "the engine built the star");
        NS_TEST_EXPECT_MSG_EQ_TOL(star / (2.0 * (n - 1) * bytes / b), 1.0, 0.01, "star time");
        req.algorithm = "ring";
        const double ring = RunOnEngine(s, req).timeS;
        NS_TEST_EXPECT_MSG_EQ_TOL(star / ring, double(n), 0.01 * n, "the star is n times slower");

        Ptr<Topology> t = Topology::Build(s, n);
        req.algorithm = "ns3::rapidllm::test::StarAllReduce";
        CollectivePlan byTypeId = BuildCollective(req, *t);
        NS_TEST_EXPECT_MSG_EQ(byTypeId.schedule.GetTotalBytes(),
                              2 * (n - 1) * bytes,
                              "chosen by TypeId name: the star's volume");

        // A dimension that prefers it: "auto" runs it for all-reduce, ring where it cannot run.
        NetworkSpec prefer = s;
        prefer.dimensions[0].collective = "test-star-all-reduce";
        Ptr<Topology> pt = Topology::Build(prefer, n);
        req.algorithm = "auto";
        NS_TEST_EXPECT_MSG_EQ(BuildCollective(req, *pt).algorithm,
                              "test-star-all-reduce",
                              "auto follows the dimension's algorithm");
        req.op = CollectiveOp::REDUCE_SCATTER;
        NS_TEST_EXPECT_MSG_EQ(
            BuildCollective(req, *pt).algorithm, "ring", "what it cannot run runs as ring");
        req.algorithm = "test-star-all-reduce";
        NS_TEST_EXPECT_MSG_EQ(ThrowsWith(
                                  [&]()
                                  {
                                      BuildCollective(req, *pt);
                                  },
                                  {"'algorithm'", "all-reduce only", "reduce-scatter"}),
                              true,
                              "chosen explicitly for an op it cannot run");
    }
};

/**
 * \brief A plugin cannot change what a registered name means (first registration kept), nor
 * register a type without a constructor: each refusal is kept for the loader to report. A
 * schedule written with a rank outside the group, or SetReady on a step not written, is an
 * error naming them (it ended the collective at once, silently).
 */
class RegistryRefusalTestCase : public TestCase
{
  public:
    RegistryRefusalTestCase()
        : TestCase("a taken name, a type without constructor and bad schedule steps are refused")
    {}

  private:
    void
    DoRun() override
    {
        NS_TEST_EXPECT_MSG_EQ(TypeRegistryBase::TakeRefusals().size(), 0u, "built-ins all kept");
        TypeRegistry<CollectiveAlgorithm>::Register("ring", DirectCollective::GetTypeId());
        TypeRegistry<CollectiveAlgorithm>::Register("ring", RingCollective::GetTypeId()); // same
        TypeRegistry<CollectiveAlgorithm>::Register("no-constructor",
                                                    CollectiveAlgorithm::GetTypeId());
        // Compiled into a script, a refused registration is reported where an extension is
        // chosen by name (the script ran the built-in "ring" silently).
        bool reported = false;
        try
        {
            TypeRegistry<CollectiveAlgorithm>::Create("ring", "algorithm", "collective algorithm");
        }
        catch (const SpecError& e)
        {
            reported =
                std::string(e.what()).find("'ring' is already registered") != std::string::npos;
        }
        NS_TEST_EXPECT_MSG_EQ(reported, true, "the refusal, where a name is looked up");
        // The same type again (a second build of one plugin): kept aside for the loader.
        const std::vector<std::string> repeats = TypeRegistryBase::TakeRepeats();
        RAPIDLLM_REQUIRE_EQ(repeats.size(), 1u, "ring for the ring again");
        NS_TEST_EXPECT_MSG_NE(repeats[0].find("'ring'"), std::string::npos, repeats[0]);
        const std::vector<std::string> refused = TypeRegistryBase::TakeRefusals();
        RAPIDLLM_REQUIRE_EQ(refused.size(), 2u, "the taken name and the missing constructor");
        NS_TEST_EXPECT_MSG_NE(
            refused[0].find("'ring' is already registered"), std::string::npos, refused[0]);
        NS_TEST_EXPECT_MSG_NE(refused[1].find("AddConstructor"), std::string::npos, refused[1]);
        NS_TEST_EXPECT_MSG_EQ(TypeRegistryBase::TakeRefusals().size(), 0u, "taken once");
        std::string name;
        TypeId tid;
        NS_TEST_EXPECT_MSG_EQ(
            TypeRegistryBase::Find(CollectiveAlgorithm::GetTypeId(), "ring", tid), true, "ring");
        NS_TEST_EXPECT_MSG_EQ(tid, RingCollective::GetTypeId(), "still the ring");
        NS_TEST_EXPECT_MSG_EQ(
            TypeRegistry<CollectiveAlgorithm>::Has("no-constructor"), false, "not registered");

        CollectiveSchedule s(4);
        bool named = false;
        try
        {
            s.AddSend(0, 1000, 8, {});
        }
        catch (const std::logic_error& e)
        {
            named = std::string(e.what()).find("rank 1000 (ranks are 0..3)") != std::string::npos;
        }
        NS_TEST_EXPECT_MSG_EQ(named, true, "the rank out of range is named");
        named = false;
        try
        {
            s.AddLocal(0, 1e-6, {7});
        }
        catch (const std::logic_error& e)
        {
            named = std::string(e.what()).find("depends on step 7") != std::string::npos;
        }
        NS_TEST_EXPECT_MSG_EQ(named, true, "a dependency on a step not written");
    }
};

/**
 * \brief Bad algorithm names name the field and every registered name: a dimension's
 * `collective` (checked when the system layer plans, whatever the group spans) and a request's
 * algorithm. A composing algorithm cannot be a dimension's own.
 */
class AlgorithmNameErrorsTestCase : public TestCase
{
  public:
    AlgorithmNameErrorsTestCase()
        : TestCase("bad algorithm names name the field and the registered names")
    {}

  private:
    void
    DoRun() override
    {
        NetworkSpec s;
        NetworkSpec inner = OneDimension(TopologyKind::SWITCH, 4, 100, 1000);
        NetworkSpec outer = OneDimension(TopologyKind::FAT_TREE, 0, 25, 1000);
        s.dimensions = {inner.dimensions[0], outer.dimensions[0]};
        s.dimensions[0].name = "nvlink";
        s.dimensions[1].name = "fabric";
        s.dimensions[1].collective = "rign"; // a typo in the dimension the group does not span
        s.routing = "shortest-path";
        Ptr<Topology> t = Topology::Build(s, 8);
        CollectiveRequest req;
        req.bytes = 1 << 20;
        req.endpoints = FirstRanks(4);
        std::string e = ErrorOf(
            [&]()
            {
                BuildCollective(req, *t);
            });
        for (const char* needle : {"network.dimensions.fabric.collective",
                                   "'rign'",
                                   "direct",
                                   "double-binary-tree",
                                   "halving-doubling",
                                   "ring",
                                   "test-star-all-reduce"})
        {
            NS_TEST_EXPECT_MSG_NE(e.find(needle), std::string::npos, e);
        }
        NS_TEST_EXPECT_MSG_EQ(e.find("hierarchical"), std::string::npos, "not a dimension's own");
        NS_TEST_EXPECT_MSG_EQ(e.find("auto"), std::string::npos, "not a dimension's own");

        s.dimensions[1].collective = "hierarchical";
        e = ErrorOf(
            [&]()
            {
                BuildCollective(req, *Topology::Build(s, 8));
            });
        NS_TEST_EXPECT_MSG_NE(e.find("network.dimensions.fabric.collective"), std::string::npos, e);
        NS_TEST_EXPECT_MSG_NE(e.find("composes"), std::string::npos, e);

        s.dimensions[1].collective = "";
        req.algorithm = "rign";
        e = ErrorOf(
            [&]()
            {
                BuildCollective(req, *Topology::Build(s, 8));
            });
        for (const char* needle :
             {"'algorithm'", "'rign'", "auto", "hierarchical", "ring", "test-star-all-reduce"})
        {
            NS_TEST_EXPECT_MSG_NE(e.find(needle), std::string::npos, e);
        }
    }
};

/**
 * \brief Every built-in algorithm counts, before building, exactly the messages it then
 * writes, alone and composed by hierarchical; that count is what lets a collective beyond the
 * schedule's limit be refused at once, with its size, instead of after seconds and gigabytes.
 */
class MessageCountTestCase : public TestCase
{
  public:
    MessageCountTestCase()
        : TestCase("algorithms count their messages before building; too-large ones are refused")
    {}

  private:
    /** Builds \p req on \p t unless the algorithm cannot run it; checks count = messages. */
    void
    Check(const Topology& t, const CollectiveRequest& req, const std::string& what)
    {
        CollectivePlan plan;
        try
        {
            plan = BuildCollective(req, t);
        }
        catch (const SpecError&)
        {
            return; // an op or group size the algorithm does not run
        }
        NS_TEST_EXPECT_MSG_EQ(plan.countedMessages, plan.schedule.GetSendCount(), what);
    }

    void
    DoRun() override
    {
        const CollectiveOp ops[] = {CollectiveOp::ALL_REDUCE,
                                    CollectiveOp::REDUCE_SCATTER,
                                    CollectiveOp::ALL_GATHER,
                                    CollectiveOp::ALL_TO_ALL,
                                    CollectiveOp::BROADCAST,
                                    CollectiveOp::REDUCE};
        const std::string flat[] = {
            "ring", "direct", "halving-doubling", "double-binary-tree", "nccl"};
        NetworkSpec s = OneDimension(TopologyKind::SWITCH, 16, 100, 1000).Routing("shortest-path");
        for (uint32_t k : {2u, 3u, 5u, 8u, 16u})
        {
            Ptr<Topology> t = Topology::Build(s, k);
            for (const std::string& algorithm : flat)
            {
                for (CollectiveOp op : ops)
                {
                    for (uint32_t chunks : {1u, 3u})
                    {
                        CollectiveRequest req;
                        req.op = op;
                        req.algorithm = algorithm;
                        req.bytes = 3 << 20;
                        req.chunks = chunks;
                        req.root = k / 2;
                        for (uint32_t i = 0; i < k; ++i)
                        {
                            req.endpoints.push_back(i);
                        }
                        Check(*t,
                              req,
                              algorithm + " " + ToString(op) + " k=" + std::to_string(k)
                                  + " chunks=" + std::to_string(chunks));
                    }
                }
            }
        }
        // Hierarchical over 4 DGX A100 nodes, with each per-dimension algorithm.
        for (const std::string& inner : {"ring", "halving-doubling", "direct", "nccl"})
        {
            HardwareSpec hw = HardwareSpec::Load("a100-sxm-80gb");
            for (auto& d : hw.network.dimensions)
            {
                d.collective = inner;
            }
            Ptr<Topology> t = Topology::Build(hw.network, 32);
            for (CollectiveOp op :
                 {CollectiveOp::ALL_REDUCE, CollectiveOp::REDUCE_SCATTER, CollectiveOp::ALL_GATHER})
            {
                CollectiveRequest req;
                req.op = op;
                req.algorithm = "hierarchical";
                req.bytes = 64 << 20;
                for (uint32_t i = 0; i < 32; ++i)
                {
                    req.endpoints.push_back(i);
                }
                Check(*t, req, "hierarchical/" + inner + " " + ToString(op));
            }
        }
        // 4,097 ranks in a ring all-reduce: 2 x 4,097 x 4,096 messages, beyond 2^25.
        Ptr<Topology> big = Topology::Build(
            OneDimension(TopologyKind::SWITCH, 4097, 100, 1000).Routing("shortest-path"), 4097);
        CollectiveRequest req;
        req.algorithm = "ring";
        req.bytes = 1 << 20;
        req.chunks = 1;
        for (uint32_t i = 0; i < 4097; ++i)
        {
            req.endpoints.push_back(i);
        }
        std::string message;
        try
        {
            BuildCollective(req, *big);
        }
        catch (const ReplayError& e)
        {
            message = e.what();
        }
        NS_TEST_EXPECT_MSG_NE(message.find("at least 3.36e+07"), std::string::npos, message);
        NS_TEST_EXPECT_MSG_NE(message.find("counted before building"), std::string::npos, message);
        NS_TEST_EXPECT_MSG_NE(message.find("4097 ranks"), std::string::npos, message);
    }
};

/**
 * \brief A schedule's time on the idle network (what bounds a fluid form below, its message
 * floor): messages at their pair's rate, delivered a latency after their last byte, ordered
 * ones one after the other on their connection in the order they become ready (ties: schedule
 * order), unordered and zero-byte ones not queueing, local steps for their duration, in whole
 * nanoseconds as the simulator runs them (a last byte at the next nanosecond); each pair's
 * timing asked once. Checked against the sums written out by hand.
 */
class IdleSecondsTestCase : public TestCase
{
  public:
    IdleSecondsTestCase()
        : TestCase("a schedule's time on the idle network follows its connections and latencies")
    {}

  private:
    void
    DoRun() override
    {
        // 1 GB/s everywhere (1,000 B: 1 us); latency 2 us from 0 to 1, 3 us between others.
        std::map<std::pair<uint32_t, uint32_t>, int> asked;
        auto timing = [&asked](uint32_t a, uint32_t b)
        {
            ++asked[{a, b}];
            return std::make_pair(1e9, a == 0 && b == 1 ? 2e-6 : 3e-6);
        };
        CollectiveSchedule s(3);
        const uint32_t first = s.AddSend(0, 1, 1000, {});  // 0..1 us, delivered at 3 us
        const uint32_t second = s.AddSend(0, 1, 1000, {}); // behind it: 1..2 us, at 4 us
        s.AddLocal(1, 5e-6, {second});                     // 4..9 us
        s.AddSend(1, 2, 0, {first});                       // a latency after 3 us: 6 us
        s.AddSend(0, 2, 1000, {}, 1, false);               // unordered, alone: 4 us
        s.AddSend(1, 2, 4000, {first});                    // 3..7 us, at 10 us
        const double idleS = s.GetIdleSeconds(timing);
        NS_TEST_EXPECT_MSG_EQ_TOL(idleS, 10e-6, 1e-12, "the last delivery");
        NS_TEST_EXPECT_MSG_EQ(asked.size(), 3u, "three pairs");
        for (const auto& [pair, n] : asked)
        {
            NS_TEST_EXPECT_MSG_EQ(n, 1, "each pair's timing asked once");
        }
        // Ready at once on one connection: the earlier step first.
        CollectiveSchedule tie(2);
        tie.AddSend(0, 1, 8000, {}); // 0..8 us, at 10 us
        tie.AddSend(0, 1, 1000, {}); // 8..9 us, at 11 us
        NS_TEST_EXPECT_MSG_EQ_TOL(tie.GetIdleSeconds(timing), 11e-6, 1e-12, "long first");
        CollectiveSchedule after(2);
        after.AddSend(0, 1, 1000, {});  // 0..1 us, at 3 us
        after.AddSend(0, 1, 8000, {0}); // 3..11 us, at 13 us
        NS_TEST_EXPECT_MSG_EQ_TOL(after.GetIdleSeconds(timing), 13e-6, 1e-12, "a dependency");
        // 1,000 B at 3 GB/s is 333.3 ns: the last byte counts at 334 ns, then 2 us.
        CollectiveSchedule odd(2);
        odd.AddSend(0, 1, 1000, {});
        NS_TEST_EXPECT_MSG_EQ_TOL(odd.GetIdleSeconds(
                                      [](uint32_t, uint32_t)
                                      {
                                          return std::make_pair(3e9, 2e-6);
                                      }),
                                  2334e-9,
                                  1e-13,
                                  "whole nanoseconds");
    }
};

/**
 * \brief The direct collective's send order is NCCL's point-to-point rounds: the deltas are
 * the triangular numbers modulo the next power of two (1, 3, 6, 10, 15, 5, ... for 16 ranks),
 * a permutation of 1 .. k-1 for any k, so that in every round each rank receives from exactly
 * one sender.
 */
class PeerOrderTestCase : public TestCase
{
  public:
    PeerOrderTestCase()
        : TestCase("direct sends follow NCCL's p2p rounds: one sender per receiver a round")
    {}

  private:
    void
    DoRun() override
    {
        const std::vector<uint32_t> sixteen = DirectCollective::PeerDeltas(16);
        const std::vector<uint32_t> nccl = {1, 3, 6, 10, 15, 5, 12, 4, 13, 7, 2, 14, 11, 9, 8};
        NS_TEST_EXPECT_MSG_EQ((sixteen == nccl), true, "16 ranks: NCCL's rounds");
        for (uint32_t k : {2u, 3u, 6u, 8u, 12u, 16u, 24u, 72u})
        {
            const std::vector<uint32_t> deltas = DirectCollective::PeerDeltas(k);
            std::vector<uint32_t> sorted = deltas;
            std::sort(sorted.begin(), sorted.end());
            bool permutation = sorted.size() == k - 1;
            for (uint32_t d = 1; permutation && d < k; ++d)
            {
                permutation = sorted[d - 1] == d;
            }
            NS_TEST_EXPECT_MSG_EQ(permutation, true, k << " ranks: every peer once");
        }
    }
};

/**
 * \brief The message floor beside other traffic (PairSlowdown): others still there at a pair's
 * last streamed byte slow each of its messages' bytes as they slowed the streams' (the k-th byte
 * as the k-th); others that left before are a backlog of the link time they took, from when the
 * first slowed stream started, shared at the streams' share while a message is on the link and
 * drained alone in its gaps; a message already going when they came went alone until then.
 * Checked against the times written out by hand (1 GB/s: 1,000 B in
 * 1 us), and through GetIdleSeconds.
 */
class PairSlowdownTestCase : public TestCase
{
  public:
    PairSlowdownTestCase()
        : TestCase("a pair's messages beside the traffic that slowed its streams")
    {}

  private:
    void
    DoRun() override
    {
        const double tol = 1e-12;
        // The next message of a pair (Transmit moves the pair on: called once, then checked)
        auto next = [&](PairSlowdown& pair,
                        double startS,
                        double bytes,
                        double expectS,
                        const std::string& what)
        {
            const double seconds = pair.Transmit(startS, bytes);
            NS_TEST_EXPECT_MSG_EQ_TOL(seconds, expectS, tol, what);
        };
        // Slowed to the last byte (1,000 B in 2 us, then 1,000 B in 4 us), the others with 1 us
        // of link left then: a backlog of the 4 us they took and that 1 us, beside which the
        // messages go at the streams' third.
        PairLoad stays;
        stays.pieces = {{1000, 2e-6, 0}, {1000, 4e-6, 2e-6}};
        stays.othersLeftS = 1e-6;
        PairSlowdown a(stays, 1e9);
        NS_TEST_EXPECT_MSG_EQ(a.IsSlowed(), true, "slowed");
        next(a, 0, 1000, 3e-6, "at a third: 2 us of theirs drained");
        next(a, 3e-6, 1000, 3e-6, "again: 1 us of theirs left");
        next(a, 8e-6, 1000, 1e-6, "it drained in the 2 us gap");
        // What was left counts only if they were still there at the last byte.
        PairLoad gone = stays;
        gone.pieces.push_back({1000, 1e-6, 6e-6});
        PairSlowdown f(gone, 1e9);
        // 4 us of theirs: 6 us beside them at a third (2,000 B), then 1,000 B alone
        next(f, 0, 3000, 7e-6, "beside the 4 us they took, then alone");

        // Slowed in its first piece only: others took 1 us of link from 1 us on, at half.
        PairLoad left;
        left.pieces = {{1000, 2e-6, 1e-6}, {1000, 1e-6, 3e-6}};
        PairSlowdown b(left, 1e9);
        next(b, 0, 500, 0.5e-6, "ends before they come");
        // at 1.5 us: 0.5 us of theirs is left; together 1 us (500 B each), then 500 B alone
        next(b, 1.5e-6, 1000, 1.5e-6, "shared, then alone");
        next(b, 4e-6, 1000, 1e-6, "they are gone");
        PairSlowdown c(left, 1e9);
        next(c, 2e-6, 1000, 1e-6, "they drained in the gap");
        PairSlowdown d(left, 1e9);
        next(d, 1e-6, 200, 0.4e-6, "at half");
        // 0.8 us left, drained alone for 0.6 us: 0.2 us, shared 0.4 us, then 800 B alone
        next(d, 2e-6, 1000, 1.2e-6, "the rest of it");
        // Already going when they came (at 1 us): 500 B alone, then 500 B at half beside
        // their 1 us (it was charged half throughout: 2 us).
        PairSlowdown g(left, 1e9);
        next(g, 0.5e-6, 1000, 1.5e-6, "alone until they came, then at half");
        // 0.5 us of theirs left, drained alone in the 1 us gap
        next(g, 3e-6, 1000, 1e-6, "they drained in the gap");

        PairLoad alone;
        alone.pieces = {{1000, 1e-6, 0}};
        PairSlowdown e(alone, 1e9);
        NS_TEST_EXPECT_MSG_EQ(e.IsSlowed(), false, "at its rate");
        next(e, 0, 3000, 3e-6, "at its rate");

        // Through the walk: two ordered messages 0 -> 1 (latency 1 us) behind a slowed pair.
        CollectiveSchedule s(2);
        s.AddSend(0, 1, 1000, {});
        s.AddSend(0, 1, 1000, {});
        auto timing = [](uint32_t, uint32_t)
        {
            return std::make_pair(1e9, 1e-6);
        };
        NS_TEST_EXPECT_MSG_EQ_TOL(s.GetIdleSeconds(timing), 3e-6, tol, "alone: 2 us + 1 us");
        const double paced = s.GetIdleSeconds(timing,
                                              [&stays](uint32_t a, uint32_t b) -> const PairLoad*
                                              {
                                                  return a == 0 && b == 1 ? &stays : nullptr;
                                              });
        NS_TEST_EXPECT_MSG_EQ_TOL(paced, 7e-6, tol, "3 us + 3 us at a third + 1 us");
    }
};

/** \brief The collective test suite. */
class CollectiveTestSuite : public TestSuite
{
  public:
    CollectiveTestSuite()
        : TestSuite("rapid-llm-collective", UNIT)
    {
        AddTestCase(new RingClosedFormTestCase, TestCase::QUICK);
        AddTestCase(new PeerOrderTestCase, TestCase::QUICK);
        AddTestCase(new OversubscriptionTestCase, TestCase::QUICK);
        AddTestCase(new SoftFaultTestCase, TestCase::QUICK);
        AddTestCase(new HardFaultTestCase, TestCase::QUICK);
        AddTestCase(new DgxA100TestCase, TestCase::QUICK);
        AddTestCase(new AlgorithmVolumeTestCase, TestCase::QUICK);
        AddTestCase(new ReductionCostTestCase, TestCase::QUICK);
        AddTestCase(new CollectiveErrorsTestCase, TestCase::QUICK);
        AddTestCase(new TreePiecesTestCase, TestCase::QUICK);
        AddTestCase(new CollectiveTooLargeTestCase, TestCase::QUICK);
        AddTestCase(new RegisteredAlgorithmTestCase, TestCase::QUICK);
        AddTestCase(new AlgorithmNameErrorsTestCase, TestCase::QUICK);
        AddTestCase(new RegistryRefusalTestCase, TestCase::QUICK);
        AddTestCase(new MessageCountTestCase, TestCase::QUICK);
        AddTestCase(new IdleSecondsTestCase, TestCase::QUICK);
        AddTestCase(new PairSlowdownTestCase, TestCase::QUICK);
    }
};

static CollectiveTestSuite g_collectiveTestSuite;
