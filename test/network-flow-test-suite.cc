/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// Flow-level network: max-min fair rates equal the analytical allocation on textbook cases
// (dumbbell, parking lot), a lone message costs bytes/bandwidth + path latency, link
// statistics add up, and recomputations are confined to the affected component.

#include "network-test-spec.h"
#include "ns3/dimension-order-routing.h"
#include "ns3/flow-network.h"
#include "ns3/simulator.h"
#include "ns3/test.h"
#include "ns3/topology.h"

#include <map>
#include <random>
#include <set>
#include <vector>

using namespace ns3;
using namespace ns3::rapidllm;

namespace {

/** \return a flow network over a topology with dimension-order routing */
Ptr<FlowNetwork>
MakeNetwork(Ptr<Topology> t)
{
    Ptr<FlowNetwork> net = CreateObject<FlowNetwork>();
    net->SetTopology(t);
    net->SetRouting(RoutingPolicy::Create("dimension-order"));
    return net;
}

} // namespace

/**
 * \brief Dumbbell: a fat tree with two leaves of two hosts joined through one spine by links of
 * capacity C. Two flows crossing the spine share it (C/2 each); a flow inside a leaf gets what
 * its host links leave.
 */
class DumbbellTestCase : public TestCase
{
  public:
    DumbbellTestCase()
        : TestCase("max-min rates on a dumbbell equal the analytical allocation")
    {}

  private:
    void
    DoRun() override
    {
        NetworkSpec s = OneDimension(TopologyKind::FAT_TREE, 4, 10, 0);
        s.dimensions[0].leafSize = 2;
        s.dimensions[0].oversubscription = 2; // one spine, uplink = 2 x 10 / 2 = 10 GB/s
        Ptr<Topology> t = Topology::Build(s, 4);
        NS_TEST_ASSERT_MSG_EQ(t->GetNodeCount(), 4u + 2u + 1u, "4 hosts, 2 leaves, 1 spine");
        Ptr<FlowNetwork> net = MakeNetwork(t);
        std::vector<uint64_t> ids;
        auto nothing = [](uint64_t) {};
        double rateA = 0;
        double rateB = 0;
        double rateC = 0;
        double rateD = 0;
        Simulator::Schedule(
            Seconds(0),
            [&]()
            {
                ids.push_back(net->Send(0, 2, 1000000000, nothing)); // A: crosses the spine
                ids.push_back(net->Send(1, 3, 1000000000, nothing)); // B: crosses the spine
                ids.push_back(net->Send(1, 0, 1000000000, nothing)); // C: inside leaf 0
                ids.push_back(net->Send(0, 3, 1000000000, nothing)); // D: crosses the spine
            });
        Simulator::Schedule(MicroSeconds(1),
                            [&]()
                            {
                                rateA = net->GetFlowRate(ids[0]);
                                rateB = net->GetFlowRate(ids[1]);
                                rateC = net->GetFlowRate(ids[2]);
                                rateD = net->GetFlowRate(ids[3]);
                            });
        Simulator::Stop(MicroSeconds(2));
        Simulator::Run();
        Simulator::Destroy();
        // The leaf-0 uplink (10 GB/s) carries A, B, D: 10/3 each. Host 1's uplink carries B
        // (10/3) and C, so C gets 10 - 10/3 = 20/3 (host 0's downlink has only C).
        const double c = 10e9;
        NS_TEST_ASSERT_MSG_EQ_TOL(rateA, c / 3, 1e-6, "A");
        NS_TEST_ASSERT_MSG_EQ_TOL(rateB, c / 3, 1e-6, "B");
        NS_TEST_ASSERT_MSG_EQ_TOL(rateD, c / 3, 1e-6, "D");
        NS_TEST_ASSERT_MSG_EQ_TOL(rateC, 2 * c / 3, 1e-6, "C");
    }
};

/**
 * \brief Parking lot: a line of 4 hosts (links of capacity C), one long flow over all three
 * links, one short flow on the first and last link and two on the middle one. Max-min: the
 * middle link is the bottleneck (C/3 for its three flows), the outer short flows get 2C/3.
 */
class ParkingLotTestCase : public TestCase
{
  public:
    ParkingLotTestCase()
        : TestCase("max-min rates on a parking lot equal the analytical allocation")
    {}

  private:
    void
    DoRun() override
    {
        Ptr<Topology> t = Topology::Build(OneDimension(TopologyKind::MESH, 4, 12, 0).Shape({4}), 4);
        Ptr<FlowNetwork> net = MakeNetwork(t);
        std::vector<uint64_t> ids;
        std::vector<double> rates;
        auto nothing = [](uint64_t) {};
        Simulator::Schedule(Seconds(0),
                            [&]()
                            {
                                ids.push_back(net->Send(0, 3, 1000000000, nothing)); // long
                                ids.push_back(net->Send(0, 1, 1000000000, nothing)); // first link
                                ids.push_back(net->Send(1, 2, 1000000000, nothing)); // middle link
                                ids.push_back(net->Send(1, 2, 1000000000, nothing)); // middle link
                                ids.push_back(net->Send(2, 3, 1000000000, nothing)); // last link
                            });
        Simulator::Schedule(MicroSeconds(1),
                            [&]()
                            {
                                for (auto id : ids)
                                {
                                    rates.push_back(net->GetFlowRate(id));
                                }
                            });
        Simulator::Stop(MicroSeconds(2));
        Simulator::Run();
        Simulator::Destroy();
        const double c = 12e9;
        NS_TEST_ASSERT_MSG_EQ_TOL(rates[0], c / 3, 1e-6, "long flow");
        NS_TEST_ASSERT_MSG_EQ_TOL(rates[1], 2 * c / 3, 1e-6, "first link");
        NS_TEST_ASSERT_MSG_EQ_TOL(rates[2], c / 3, 1e-6, "middle link");
        NS_TEST_ASSERT_MSG_EQ_TOL(rates[3], c / 3, 1e-6, "middle link");
        NS_TEST_ASSERT_MSG_EQ_TOL(rates[4], 2 * c / 3, 1e-6, "last link");
    }
};

/**
 * \brief A lone message costs bytes/bandwidth plus its path latency (links and switches);
 * when a competing flow ends, the survivor speeds up (rates recomputed on completion); link
 * statistics count the bytes and busy time.
 */
class TimingAndStatsTestCase : public TestCase
{
  public:
    TimingAndStatsTestCase()
        : TestCase(
            "a message costs bytes over bandwidth plus latency; completions free bandwidth; stats")
    {}

  private:
    void
    DoRun() override
    {
        NetworkSpec s = OneDimension(TopologyKind::SWITCH, 4, 100, 500);
        s.dimensions[0].switchLatencyS = 200e-9;
        s.dimensions[0].wireEfficiency = 0.8;
        Ptr<Topology> t = Topology::Build(s, 4);
        Ptr<FlowNetwork> net = MakeNetwork(t);
        double lone = -1;
        double small = -1;
        double big = -1;
        // The MessageDelivered trace source: one report per message, with its latency.
        std::vector<std::pair<uint64_t, double>> reported; // bytes, latency
        net->TraceConnectWithoutContext(
            "MessageDelivered",
            Callback<void, uint64_t, uint32_t, uint32_t, uint64_t, double>(
                [&](uint64_t, uint32_t, uint32_t, uint64_t bytes, double latency)
                {
                    reported.emplace_back(bytes, latency);
                }));
        Simulator::Schedule(Seconds(0),
                            [&]()
                            {
                                net->Send(0,
                                          1,
                                          80000000,
                                          [&](uint64_t)
                                          {
                                              lone = Simulator::Now().GetSeconds();
                                          });
                            });
        // Two flows out of gpu2: 40 MB and 120 MB share its 80 GB/s uplink.
        Simulator::Schedule(Seconds(1),
                            [&]()
                            {
                                net->Send(2,
                                          3,
                                          40000000,
                                          [&](uint64_t)
                                          {
                                              small = Simulator::Now().GetSeconds();
                                          });
                                net->Send(2,
                                          0,
                                          120000000,
                                          [&](uint64_t)
                                          {
                                              big = Simulator::Now().GetSeconds();
                                          });
                            });
        Simulator::Run();
        // 80 MB at 100 GB/s x 0.8 = 1 ms, plus 2 links x 500 ns + one switch 200 ns.
        NS_TEST_ASSERT_MSG_EQ_TOL(lone, 1e-3 + 1.2e-6, 2e-9, "lone message");
        // Both at 40 GB/s until the small one is done (1 ms); the big one then has 80 MB left
        // at 80 GB/s (1 ms more).
        NS_TEST_ASSERT_MSG_EQ_TOL(small, 1 + 1e-3 + 1.2e-6, 2e-9, "small flow");
        NS_TEST_ASSERT_MSG_EQ_TOL(big, 1 + 2e-3 + 1.2e-6, 2e-9, "big flow");
        uint32_t up2 = t->FindLink(2, t->GetInstanceSwitches(0, 0)[0]);
        const NetworkStats stats = net->GetStats();
        NS_TEST_ASSERT_MSG_EQ(stats.links.size(), t->GetLinkCount(), "one entry per link");
        const LinkStats& st = stats.links[up2];
        NS_TEST_ASSERT_MSG_EQ(st.link, up2, "indexed by link id");
        NS_TEST_ASSERT_MSG_EQ(st.name, t->DescribeLink(up2), "named as the topology names it");
        NS_TEST_ASSERT_MSG_EQ_TOL(st.bytes, 160e6, 1, "bytes on gpu2's uplink");
        NS_TEST_ASSERT_MSG_EQ_TOL(st.busyTimeS, 2e-3, 2e-9, "busy time of gpu2's uplink");
        // Window: from the first Send (t = 0) to the last event (the big flow's delivery);
        // the uplink's payload bandwidth is 80 GB/s.
        NS_TEST_ASSERT_MSG_EQ_TOL(stats.windowS, 1 + 2e-3 + 1.2e-6, 2e-9, "statistics window");
        NS_TEST_ASSERT_MSG_EQ_TOL(st.utilization,
                                  160e6 / (80e9 * (1 + 2e-3 + 1.2e-6)),
                                  1e-12,
                                  "utilization of gpu2's uplink");
        // gpu0's uplink carried only the lone message (80 MB, busy 1 ms).
        const uint32_t up0 = t->FindLink(0, t->GetInstanceSwitches(0, 0)[0]);
        NS_TEST_ASSERT_MSG_EQ_TOL(stats.links[up0].bytes, 80e6, 1, "bytes on gpu0's uplink");
        NS_TEST_ASSERT_MSG_EQ_TOL(stats.links[up0].busyTimeS, 1e-3, 2e-9, "gpu0's busy time");
        auto top = stats.MostLoaded(1);
        NS_TEST_ASSERT_MSG_EQ(top.size(), 1u, "one most loaded link");
        NS_TEST_ASSERT_MSG_EQ(top[0].link, up2, "gpu2's uplink carried the most");
        NS_TEST_ASSERT_MSG_EQ(stats.messagesSent, 3u, "three sent");
        NS_TEST_ASSERT_MSG_EQ(stats.messagesDelivered, 3u, "three delivered");
        NS_TEST_ASSERT_MSG_GT(stats.solves, 0u, "the flow backend counts its solves");
        NS_TEST_ASSERT_MSG_EQ(net->GetDeliveredCount(), 3u, "all delivered");
        NS_TEST_ASSERT_MSG_EQ(reported.size(), 3u, "three traced deliveries");
        NS_TEST_EXPECT_MSG_EQ(reported[0].first, 80000000u, "first delivered: the lone message");
        NS_TEST_EXPECT_MSG_EQ_TOL(reported[0].second, 1e-3 + 1.2e-6, 2e-9, "its latency");
        NS_TEST_EXPECT_MSG_EQ_TOL(reported[2].second, 2e-3 + 1.2e-6, 2e-9, "the big flow's");
        Simulator::Destroy();
    }
};

/**
 * \brief Incremental solving: flows in disjoint parts of the network are not recomputed when
 * an unrelated flow arrives, and their rates are untouched.
 */
class IncrementalTestCase : public TestCase
{
  public:
    IncrementalTestCase()
        : TestCase("rate recomputation is confined to the affected component")
    {}

  private:
    void
    DoRun() override
    {
        // A ring of 8: flows 0->1 ... and a later flow 4->5 share no link.
        Ptr<Topology> t = Topology::Build(OneDimension(TopologyKind::RING, 8, 10, 0), 8);
        Ptr<FlowNetwork> net = MakeNetwork(t);
        auto nothing = [](uint64_t) {};
        uint64_t before = 0;
        uint64_t after = 0;
        Simulator::Schedule(Seconds(0),
                            [&]()
                            {
                                for (int i = 0; i < 50; ++i)
                                {
                                    net->Send(0, 1, 1000000000, nothing);
                                }
                            });
        Simulator::Schedule(MicroSeconds(1),
                            [&]()
                            {
                                before = net->GetSolvedFlowCount();
                                net->Send(4, 5, 1000000000, nothing);
                            });
        Simulator::Schedule(MicroSeconds(2),
                            [&]()
                            {
                                after = net->GetSolvedFlowCount();
                            });
        Simulator::Stop(MicroSeconds(3));
        Simulator::Run();
        Simulator::Destroy();
        NS_TEST_ASSERT_MSG_EQ(before, 50u, "the 50 flows were solved once");
        NS_TEST_ASSERT_MSG_EQ(after - before, 1u, "only the new flow was solved");
    }
};

/**
 * \brief A soft fault injected during the run: halving a link's bandwidth halfway through a
 * message (then RefreshRates) stretches the second half to twice its time.
 */
class MidRunFaultTestCase : public TestCase
{
  public:
    MidRunFaultTestCase()
        : TestCase("a link degraded mid-run slows the flows on it from then on")
    {}

  private:
    void
    DoRun() override
    {
        Ptr<Topology> t = Topology::Build(OneDimension(TopologyKind::RING, 4, 10, 0), 4);
        Ptr<FlowNetwork> net = MakeNetwork(t);
        double done = -1;
        Simulator::Schedule(Seconds(0),
                            [&]()
                            {
                                net->Send(0,
                                          1,
                                          10000000000,
                                          [&](uint64_t)
                                          {
                                              done = Simulator::Now().GetSeconds();
                                          });
                            });
        Simulator::Schedule(Seconds(0.5),
                            [&]()
                            {
                                t->ApplyFault("gpu0>gpu1", 0.5, "test");
                                net->RefreshRates();
                            });
        Simulator::Run();
        Simulator::Destroy();
        // 5 GB in the first 0.5 s at 10 GB/s, the other 5 GB at 5 GB/s.
        NS_TEST_ASSERT_MSG_EQ_TOL(done, 1.5, 2e-9, "completion after the fault");
    }
};

/**
 * \brief The incremental solver against a from-scratch reference: random messages arrive and
 * complete on an oversubscribed fat tree with ECMP; at random instants every transmitting
 * flow's rate equals the max-min allocation recomputed from nothing (naive progressive
 * filling written independently here), the allocation is feasible, and every flow has a
 * saturated bottleneck link where no flow gets more.
 */
class IncrementalMatchesReferenceTestCase : public TestCase
{
  public:
    IncrementalMatchesReferenceTestCase()
        : TestCase("incremental rates equal a from-scratch max-min allocation at all times")
    {}

  private:
    /** \return max-min rates of the given paths over link capacities (naive filling) */
    static std::vector<double>
    Reference(const std::vector<std::vector<uint32_t>>& paths, const std::vector<double>& cap)
    {
        std::vector<double> rate(paths.size(), -1);
        std::vector<double> left = cap;
        std::size_t fixedCount = 0;
        while (fixedCount < paths.size())
        {
            // The link with the smallest equal share among its unfixed flows.
            std::map<uint32_t, int> unfixed;
            for (std::size_t f = 0; f < paths.size(); ++f)
            {
                if (rate[f] < 0)
                {
                    for (uint32_t l : paths[f])
                    {
                        ++unfixed[l];
                    }
                }
            }
            double best = 1e300;
            uint32_t bottleneck = 0;
            for (const auto& [l, n] : unfixed)
            {
                if (left[l] / n < best)
                {
                    best = left[l] / n;
                    bottleneck = l;
                }
            }
            for (std::size_t f = 0; f < paths.size(); ++f)
            {
                if (rate[f] < 0
                    && std::find(paths[f].begin(), paths[f].end(), bottleneck) != paths[f].end())
                {
                    rate[f] = best;
                    ++fixedCount;
                    for (uint32_t l : paths[f])
                    {
                        left[l] -= best;
                    }
                }
            }
        }
        return rate;
    }

    void
    DoRun() override
    {
        NetworkSpec s = OneDimension(TopologyKind::FAT_TREE, 16, 10, 0);
        s.dimensions[0].leafSize = 4;
        s.dimensions[0].oversubscription = 2;
        s.routing = "ecmp";
        Ptr<Topology> t = Topology::Build(s, 16);
        t->ApplyFault("net.leaf0.0-net.spine0.1", 0.3, "test"); // uneven capacities
        Ptr<FlowNetwork> net = CreateObject<FlowNetwork>();
        net->SetTopology(t);
        Ptr<RoutingPolicy> routing = RoutingPolicy::Create("ecmp");
        net->SetRouting(routing);
        std::mt19937_64 rng(12345);
        std::set<uint64_t> inFlight;
        std::map<uint64_t, std::vector<uint32_t>> paths;
        std::uniform_int_distribution<uint32_t> host(0, 15);
        std::uniform_int_distribution<uint64_t> size(1000000, 400000000);
        std::uniform_real_distribution<double> when(0, 0.2);
        int checks = 0;
        int mismatches = 0;
        int infeasible = 0;
        for (int i = 0; i < 400; ++i)
        {
            uint32_t a = host(rng);
            uint32_t b = (a + 1 + host(rng) % 15) % 16;
            uint64_t bytes = size(rng);
            Simulator::Schedule(Seconds(when(rng)),
                                [&, a, b, bytes]()
                                {
                                    uint64_t id = net->Send(a,
                                                            b,
                                                            bytes,
                                                            [&](uint64_t done)
                                                            {
                                                                inFlight.erase(done);
                                                            });
                                    inFlight.insert(id);
                                    paths[id] = routing->Route(*t, a, b, id);
                                });
        }
        for (int i = 0; i < 60; ++i)
        {
            Simulator::Schedule(Seconds(0.0123456 + i * 0.0071),
                                [&]()
                                {
                                    std::vector<uint64_t> ids(inFlight.begin(), inFlight.end());
                                    std::vector<std::vector<uint32_t>> ps;
                                    for (auto id : ids)
                                    {
                                        ps.push_back(paths[id]);
                                    }
                                    std::vector<double> cap(t->GetLinkCount());
                                    for (uint32_t l = 0; l < t->GetLinkCount(); ++l)
                                    {
                                        cap[l] = t->GetLink(l).Bandwidth();
                                    }
                                    std::vector<double> ref = Reference(ps, cap);
                                    std::vector<double> load(t->GetLinkCount(), 0);
                                    for (std::size_t f = 0; f < ids.size(); ++f)
                                    {
                                        double r = net->GetFlowRate(ids[f]);
                                        ++checks;
                                        if (std::abs(r - ref[f]) > 1e-6 * ref[f])
                                        {
                                            ++mismatches;
                                        }
                                        for (uint32_t l : ps[f])
                                        {
                                            load[l] += r;
                                        }
                                    }
                                    for (uint32_t l = 0; l < t->GetLinkCount(); ++l)
                                    {
                                        if (load[l] > cap[l] * (1 + 1e-9))
                                        {
                                            ++infeasible;
                                        }
                                    }
                                });
        }
        Simulator::Run();
        Simulator::Destroy();
        NS_TEST_ASSERT_MSG_GT(checks, 1000, "enough flows were checked");
        NS_TEST_ASSERT_MSG_EQ(mismatches, 0, "incremental rates equal the reference");
        NS_TEST_ASSERT_MSG_EQ(infeasible, 0, "no link over capacity");
        NS_TEST_ASSERT_MSG_EQ(inFlight.size(), 0u, "every message delivered");
    }
};

/** \brief The flow network test suite. */
class NetworkFlowTestSuite : public TestSuite
{
  public:
    NetworkFlowTestSuite()
        : TestSuite("rapid-llm-network-flow", UNIT)
    {
        AddTestCase(new DumbbellTestCase, TestCase::QUICK);
        AddTestCase(new ParkingLotTestCase, TestCase::QUICK);
        AddTestCase(new TimingAndStatsTestCase, TestCase::QUICK);
        AddTestCase(new IncrementalTestCase, TestCase::QUICK);
        AddTestCase(new MidRunFaultTestCase, TestCase::QUICK);
        AddTestCase(new IncrementalMatchesReferenceTestCase, TestCase::QUICK);
    }
};

static NetworkFlowTestSuite g_networkFlowTestSuite;
