/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// Flow-level network: max-min fair rates equal the analytical allocation on textbook cases
// (dumbbell, parking lot), a lone message costs bytes/bandwidth + path latency, link
// statistics add up, and recomputations are confined to the affected component.

#include "network-test-spec.h"
#include "ns3/boolean.h"
#include "ns3/dimension-order-routing.h"
#include "ns3/fault-schedule.h"
#include "ns3/flow-network.h"
#include "ns3/network-error.h"
#include "ns3/simulator.h"
#include "ns3/test.h"
#include "ns3/topology.h"
#include "spec-error-check.h"
#include "test-require.h"

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
        RAPIDLLM_REQUIRE_EQ(stats.links.size(), t->GetLinkCount(), "one entry per link");
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
        RAPIDLLM_REQUIRE_EQ(top.size(), 1u, "one most loaded link");
        NS_TEST_ASSERT_MSG_EQ(top[0].link, up2, "gpu2's uplink carried the most");
        NS_TEST_ASSERT_MSG_EQ(stats.messagesSent, 3u, "three sent");
        NS_TEST_ASSERT_MSG_EQ(stats.messagesDelivered, 3u, "three delivered");
        NS_TEST_ASSERT_MSG_GT(stats.solves, 0u, "the flow backend counts its solves");
        NS_TEST_ASSERT_MSG_EQ(net->GetDeliveredCount(), 3u, "all delivered");
        RAPIDLLM_REQUIRE_EQ(reported.size(), 3u, "three traced deliveries");
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
                                    // Sizes differ, so that these are 50 flows, not a class.
                                    net->Send(0, 1, 1000000000 + i, nothing);
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
        RAPIDLLM_REQUIRE_EQ(inFlight.size(), 0u, "every message delivered");
    }
};

/**
 * \brief A scheduled soft fault on a single-link transfer: the bytes sent before the fault at
 * the full rate, the rest at the reduced rate, to the nanosecond; a repair later restores the
 * rate; a node selector degrades every link of the node.
 */
class ScheduledSoftFaultTestCase : public TestCase
{
  public:
    ScheduledSoftFaultTestCase()
        : TestCase("a fault scheduled at time t gives the closed-form completion time")
    {}

  private:
    /** \return delivery time of \p bytes from gpu0 to gpu1 under \p schedule */
    static double
    Transfer(uint64_t bytes, Ptr<FaultSchedule> schedule, uint32_t* applied = nullptr)
    {
        // Two GPUs joined by one 10 GB/s link of 1 us latency.
        Ptr<Topology> t = Topology::Build(OneDimension(TopologyKind::RING, 2, 10, 1000), 2);
        Ptr<FlowNetwork> net = CreateObject<FlowNetwork>();
        net->SetTopology(t);
        net->SetRouting(RoutingPolicy::Create("dimension-order"));
        net->SetFaultSchedule(schedule);
        double done = -1;
        net->Send(0,
                  1,
                  bytes,
                  [&](uint64_t)
                  {
                      done = Simulator::Now().GetSeconds();
                  });
        Simulator::Run();
        if (applied)
        {
            *applied = schedule->GetAppliedCount();
        }
        net->Dispose();
        Simulator::Destroy();
        return done;
    }

    void
    DoRun() override
    {
        const uint64_t bytes = 10000000000; // 10 GB: 1 s at full rate
        for (double factor : {0.25, 0.5, 1e-3})
        {
            Ptr<FaultSchedule> s = CreateObject<FaultSchedule>();
            s->Add("gpu0-gpu1", factor, Seconds(0.3));
            // 3 GB in the first 0.3 s, the other 7 GB at factor x 10 GB/s.
            const double expected = 0.3 + 7e9 / (factor * 10e9) + 1e-6;
            const double done = Transfer(bytes, s); // (the macros evaluate twice)
            NS_TEST_ASSERT_MSG_EQ_TOL(done, expected, 2e-9, "factor " << factor);
        }
        // Degraded at 0.2 s, repaired at 0.6 s: 2 GB + 0.4 s x 5 GB/s = 4 GB, 6 GB at 10 GB/s.
        Ptr<FaultSchedule> repair = CreateObject<FaultSchedule>();
        repair->Add("gpu0>gpu1", 0.5, Seconds(0.2));
        repair->Add("gpu0>gpu1", 1, Seconds(0.6));
        uint32_t applied = 0;
        const double repaired = Transfer(bytes, repair, &applied);
        NS_TEST_ASSERT_MSG_EQ_TOL(repaired, 0.6 + 0.6 + 1e-6, 2e-9, "degraded, then repaired");
        NS_TEST_ASSERT_MSG_EQ(applied, 2u, "both faults applied");
        // The reverse direction carries nothing here: a fault on it changes nothing.
        Ptr<FaultSchedule> other = CreateObject<FaultSchedule>();
        other->Add("gpu1>gpu0", 0.5, Seconds(0.2));
        const double unaffected = Transfer(bytes, other);
        NS_TEST_ASSERT_MSG_EQ_TOL(unaffected, 1 + 1e-6, 2e-9, "other direction");
        // A node selector: every link of gpu0, the one used included.
        Ptr<FaultSchedule> node = CreateObject<FaultSchedule>();
        node->Add("gpu0", 0.5, Seconds(0.5));
        const double nodeFault = Transfer(bytes, node);
        NS_TEST_ASSERT_MSG_EQ_TOL(nodeFault, 0.5 + 1 + 1e-6, 2e-9, "node fault");
        // A fault after the message is done changes nothing and ends nothing early.
        Ptr<FaultSchedule> late = CreateObject<FaultSchedule>();
        late->Add("gpu0-gpu1", 0.5, Seconds(5));
        const double lateFault = Transfer(bytes, late);
        NS_TEST_ASSERT_MSG_EQ_TOL(lateFault, 1 + 1e-6, 2e-9, "late fault");
    }
};

/**
 * \brief A link that dies under a flow stalls it (rate 0, no event, no spin) until it is
 * repaired; never repaired, the run ends with the message undelivered and counted as stalled,
 * while other traffic completes; messages sent after the fault are routed around it.
 */
class ScheduledDeadLinkTestCase : public TestCase
{
  public:
    ScheduledDeadLinkTestCase()
        : TestCase("a link dying under a flow stalls it until repaired; the run still ends")
    {}

  private:
    void
    DoRun() override
    {
        // A ring of 4 at 10 GB/s, 1 us per link.
        for (bool repaired : {true, false})
        {
            Ptr<Topology> t = Topology::Build(OneDimension(TopologyKind::RING, 4, 10, 1000), 4);
            Ptr<FlowNetwork> net = CreateObject<FlowNetwork>();
            net->SetTopology(t);
            net->SetRouting(RoutingPolicy::Create("dimension-order"));
            Ptr<FaultSchedule> s = CreateObject<FaultSchedule>();
            s->Add("gpu0-gpu1", 0, Seconds(0.4));
            if (repaired)
            {
                s->Add("gpu0-gpu1", 1, Seconds(1.4));
            }
            net->SetFaultSchedule(s);
            double stalledDone = -1;
            double otherDone = -1;
            double laterDone = -1;
            uint32_t stalledAtOne = 0;
            net->Send(0,
                      1,
                      10000000000,
                      [&](uint64_t)
                      {
                          stalledDone = Simulator::Now().GetSeconds();
                      });
            net->Send(2,
                      3,
                      20000000000,
                      [&](uint64_t)
                      {
                          otherDone = Simulator::Now().GetSeconds();
                      });
            // Sent after the fault: dimension order goes the other way round (3 hops).
            Simulator::Schedule(Seconds(0.5),
                                [&]()
                                {
                                    net->Send(0,
                                              1,
                                              1000000000,
                                              [&](uint64_t)
                                              {
                                                  laterDone = Simulator::Now().GetSeconds();
                                              });
                                });
            Simulator::Schedule(Seconds(1),
                                [&]()
                                {
                                    stalledAtOne = net->GetStalledCount();
                                });
            Simulator::Run();
            NS_TEST_ASSERT_MSG_EQ(stalledAtOne, 1u, "the message on the dead link is stalled");
            // 2 -> 3 is alone on its link until the 0.5 s message joins gpu2>gpu3 on its detour
            // (0 > 3 > 2 > 1 uses gpu3>gpu2, not gpu2>gpu3): 2 s at 10 GB/s.
            NS_TEST_ASSERT_MSG_EQ_TOL(otherDone, 2 + 1e-6, 2e-9, "other traffic unaffected");
            // 1 GB at 10 GB/s from 0.5 s over three links.
            NS_TEST_ASSERT_MSG_EQ_TOL(laterDone, 0.5 + 0.1 + 3e-6, 2e-9, "routed around");
            if (repaired)
            {
                // 4 GB before 0.4 s, stalled 1 s, 6 GB after 1.4 s.
                NS_TEST_ASSERT_MSG_EQ_TOL(stalledDone, 2 + 1e-6, 2e-9, "resumed after repair");
                NS_TEST_ASSERT_MSG_EQ(net->GetStalledCount(), 0u, "nothing stalled at the end");
            }
            else
            {
                NS_TEST_ASSERT_MSG_EQ(stalledDone, -1.0, "never delivered");
                NS_TEST_ASSERT_MSG_EQ(net->GetStalledCount(), 1u, "still stalled at the end");
                NS_TEST_ASSERT_MSG_EQ(net->GetDeliveredCount(), 2u, "the others delivered");
                NS_TEST_ASSERT_MSG_EQ_TOL(Simulator::Now().GetSeconds(),
                                          2 + 1e-6,
                                          2e-9,
                                          "the run ends with the last delivery");
            }
            net->Dispose();
            Simulator::Destroy();
        }
    }
};

/**
 * \brief Fault factors: 0 and [1e-6, 1] are accepted, anything else is a SpecError naming the
 * selector and the allowed values (in the topology and in a fault schedule); a selector
 * naming no link is refused when the schedule is given to the backend; the smallest soft
 * factor still finishes, at its closed-form time; a message whose end lies beyond the
 * simulator's clock schedules no event and the run ends.
 */
class FaultFactorRangeTestCase : public TestCase
{
  public:
    FaultFactorRangeTestCase()
        : TestCase("fault factors below 1e-6 are refused; no flow makes the simulator spin")
    {}

  private:
    void
    DoRun() override
    {
        Ptr<Topology> t = Topology::Build(OneDimension(TopologyKind::RING, 2, 10, 1000), 2);
        for (double ok : {0.0, 1e-6, 0.5, 1.0})
        {
            const auto changed = t->ApplyFault("gpu0-gpu1", ok, "hw.yaml");
            RAPIDLLM_REQUIRE_EQ(changed.size(), 2u, "factor " << ok << " accepted");
        }
        for (double bad : {1e-300, 1e-12, 0.99e-6, -0.5, 1.0000001, std::nan("")})
        {
            NS_TEST_ASSERT_MSG_EQ(ThrowsWith(
                                      [&]()
                                      {
                                          t->ApplyFault("gpu0-gpu1", bad, "hw.yaml");
                                      },
                                      {"hw.yaml",
                                       "faults.bandwidth_factor",
                                       "'gpu0-gpu1'",
                                       "[1e-06, 1]",
                                       "0 (a dead link)"}),
                                  true,
                                  "factor " << bad << " refused");
            NS_TEST_ASSERT_MSG_EQ(ThrowsWith(
                                      [&]()
                                      {
                                          t->SetLinkFactor(0, bad);
                                      },
                                      {"gpu0>gpu1", "[1e-06, 1]"}),
                                  true,
                                  "SetLinkFactor " << bad);
            Ptr<FaultSchedule> s = CreateObject<FaultSchedule>();
            NS_TEST_ASSERT_MSG_EQ(ThrowsWith(
                                      [&]()
                                      {
                                          s->Add("gpu0-gpu1", bad, Seconds(1), "command line");
                                      },
                                      {"command line", "'gpu0-gpu1'", "[1e-06, 1]"}),
                                  true,
                                  "schedule " << bad);
        }
        NS_TEST_ASSERT_MSG_EQ(t->GetLink(0).factor, 1.0, "a refused fault changes nothing");
        Ptr<FaultSchedule> negative = CreateObject<FaultSchedule>();
        NS_TEST_ASSERT_MSG_EQ(ThrowsWith(
                                  [&]()
                                  {
                                      negative->Add("gpu0-gpu1", 0.5, Seconds(-1), "cli");
                                  },
                                  {"faults.start", "negative"}),
                              true,
                              "negative start");
        {
            Ptr<FlowNetwork> net = CreateObject<FlowNetwork>();
            net->SetTopology(t);
            net->SetRouting(RoutingPolicy::Create("dimension-order"));
            Ptr<FaultSchedule> s = CreateObject<FaultSchedule>();
            s->Add("gpu0-gpu7", 0.5, Seconds(1), "cli");
            NS_TEST_ASSERT_MSG_EQ(ThrowsWith(
                                      [&]()
                                      {
                                          net->SetFaultSchedule(s);
                                      },
                                      {"cli", "unknown node 'gpu7'"}),
                                  true,
                                  "selector checked when armed");
            net->Dispose();
            Simulator::Destroy();
        }
        // The smallest factor: 1 MB over 10 GB/s x 1e-6 = 10 kB/s takes 100 s.
        {
            Ptr<Topology> slow = Topology::Build(OneDimension(TopologyKind::RING, 2, 10, 1000), 2);
            slow->ApplyFault("gpu0-gpu1", 1e-6, "test");
            Ptr<FlowNetwork> net = CreateObject<FlowNetwork>();
            net->SetTopology(slow);
            net->SetRouting(RoutingPolicy::Create("dimension-order"));
            double done = -1;
            net->Send(0,
                      1,
                      1000000,
                      [&](uint64_t)
                      {
                          done = Simulator::Now().GetSeconds();
                      });
            Simulator::Run();
            NS_TEST_ASSERT_MSG_EQ_TOL(done, 100 + 1e-6, 1e-6, "factor 1e-6 finishes");
            net->Dispose();
            Simulator::Destroy();
        }
        // 2^64 - 1 bytes at 10 GB/s would take 58 years... at 1e-3 of it 58,000 years, beyond
        // the clock's 292: no event is scheduled, the other message completes, the run ends.
        {
            Ptr<Topology> t2 = Topology::Build(OneDimension(TopologyKind::RING, 4, 10, 1000), 4);
            t2->ApplyFault("gpu0-gpu1", 1e-3, "test");
            Ptr<FlowNetwork> net = CreateObject<FlowNetwork>();
            net->SetTopology(t2);
            net->SetRouting(RoutingPolicy::Create("dimension-order"));
            double huge = -1;
            double small = -1;
            net->Send(0,
                      1,
                      UINT64_MAX,
                      [&](uint64_t)
                      {
                          huge = Simulator::Now().GetSeconds();
                      });
            net->Send(2,
                      3,
                      1000000000,
                      [&](uint64_t)
                      {
                          small = Simulator::Now().GetSeconds();
                      });
            Simulator::Run();
            NS_TEST_ASSERT_MSG_EQ(huge, -1.0, "the endless message is not delivered");
            NS_TEST_ASSERT_MSG_EQ_TOL(small, 0.1 + 1e-6, 2e-9, "the other one is");
            NS_TEST_ASSERT_MSG_EQ(net->GetStalledCount(), 1u, "reported as stalled");
            net->Dispose();
            Simulator::Destroy();
        }
    }
};

/**
 * \brief Flow classes: messages sent at one instant with the same path and size share one
 * solver flow of weight w, are delivered as w messages (each its own id, callback and
 * MessageDelivered report, in the order sent) and get the rates separate flows would; messages
 * of another size, path or instant form classes of their own.
 */
class FlowClassTestCase : public TestCase
{
  public:
    FlowClassTestCase()
        : TestCase("identical messages of one instant form one weighted flow class")
    {}

  private:
    void
    DoRun() override
    {
        // One switch, 10 GB/s per link, 1 us per link: gpu0 sends 8 x S and 1 x 2S to gpu1 at
        // t = 0, and 1 x S at t = 1 us; gpu2 sends S to gpu1 at t = 0.
        Ptr<Topology> t = Topology::Build(OneDimension(TopologyKind::SWITCH, 4, 10, 1000), 4);
        Ptr<FlowNetwork> net = CreateObject<FlowNetwork>();
        net->SetTopology(t);
        net->SetRouting(RoutingPolicy::Create("dimension-order"));
        const uint64_t s = 100000000;                       // 100 MB
        std::vector<std::pair<uint64_t, double>> delivered; // id, time (callbacks)
        std::vector<uint64_t> traced;                       // ids (trace source)
        net->TraceConnectWithoutContext(
            "MessageDelivered",
            Callback<void, uint64_t, uint32_t, uint32_t, uint64_t, double>(
                [&](uint64_t id, uint32_t, uint32_t, uint64_t, double)
                {
                    traced.push_back(id);
                }));
        auto record = [&](uint64_t id)
        {
            delivered.emplace_back(id, Simulator::Now().GetSeconds());
        };
        uint32_t classes = 0;
        uint32_t messages = 0;
        double rateOfClass = 0;
        double rateOfBig = 0;
        for (int i = 0; i < 8; ++i)
        {
            net->Send(0, 1, s, record); // ids 0..7
        }
        net->Send(0, 1, 2 * s, record); // id 8
        net->Send(2, 1, s, record);     // id 9
        Simulator::Schedule(MicroSeconds(1),
                            [&]()
                            {
                                classes = net->GetFlowClassCount();
                                messages = net->GetActiveFlowCount();
                                rateOfClass = net->GetFlowRate(3);
                                rateOfBig = net->GetFlowRate(8);
                                net->Send(0, 1, s, record); // id 10: a later instant
                            });
        Simulator::Schedule(MicroSeconds(2),
                            [&]()
                            {
                                NS_TEST_EXPECT_MSG_EQ(net->GetFlowClassCount(),
                                                      4u,
                                                      "the later message is a class of its own");
                            });
        Simulator::Run();
        NS_TEST_ASSERT_MSG_EQ(classes, 3u, "8 x S, 2S and gpu2's S: three classes");
        NS_TEST_ASSERT_MSG_EQ(messages, 10u, "ten messages transmitting");
        // gpu1's downlink carries 10 flows: 1 GB/s each (max-min, all bottlenecked there).
        NS_TEST_ASSERT_MSG_EQ_TOL(rateOfClass, 1e9, 1, "a class member gets a flow's share");
        NS_TEST_ASSERT_MSG_EQ_TOL(rateOfBig, 1e9, 1, "as does the 2S message");
        RAPIDLLM_REQUIRE_EQ(delivered.size(), 11u, "every message delivered once");
        RAPIDLLM_REQUIRE_EQ(traced.size(), 11u, "and reported once");
        // Ten flows from 0 to 1 us, eleven after; all S messages end together:
        // 1 us x 1 GB/s = 1 kB done, the other S - 1e3 at 10/11 GB/s; then the 2S one alone.
        const double sEnd = 1e-6 + (s - 1e3) / (10e9 / 11);
        std::set<uint64_t> sIds = {0, 1, 2, 3, 4, 5, 6, 7, 9};
        for (const auto& [id, time] : delivered)
        {
            if (sIds.count(id))
            {
                NS_TEST_EXPECT_MSG_EQ_TOL(time, sEnd + 2e-6, 2e-9, "S message " << id);
            }
        }
        // Then the 2S message (S left) and the 1 us one (1 kB left) share the link at 5 GB/s
        // for 0.2 us; the 2S one ends alone at 10 GB/s: S - 1 kB in S / 10 GB/s - 0.1 us.
        for (const auto& [id, time] : delivered)
        {
            if (id == 10)
            {
                NS_TEST_EXPECT_MSG_EQ_TOL(time, sEnd + 2e-7 + 2e-6, 2e-9, "the later message");
            }
        }
        NS_TEST_EXPECT_MSG_EQ_TOL(
            delivered.back().second, sEnd + s / 10e9 + 1e-7 + 2e-6, 2e-9, "2S");
        NS_TEST_EXPECT_MSG_EQ(delivered.back().first, 8u, "the 2S message ends last");
        // Deliveries of one instant in the order sent; the trace agrees with the callbacks.
        std::vector<uint64_t> firstEight;
        for (const auto& d : delivered)
        {
            if (d.first < 8)
            {
                firstEight.push_back(d.first);
            }
        }
        RAPIDLLM_REQUIRE_EQ(firstEight.size(), 8u, "eight class members");
        for (uint64_t i = 0; i < 8; ++i)
        {
            NS_TEST_EXPECT_MSG_EQ(firstEight[i], i, "class members delivered in send order");
        }
        for (std::size_t i = 0; i < delivered.size(); ++i)
        {
            NS_TEST_EXPECT_MSG_EQ(traced[i], delivered[i].first, "trace order = callbacks");
        }
        const NetworkStats stats = net->GetStats();
        const uint32_t down = t->FindLink(t->GetInstanceSwitches(0, 0)[0], 1);
        NS_TEST_ASSERT_MSG_EQ_TOL(stats.links[down].bytes, 12.0 * s, 1, "bytes into gpu1");
        net->Dispose();
        Simulator::Destroy();
    }
};

/**
 * \brief Departures and arrivals of one instant cost one solve, whatever order their events
 * run in: a flow ends at 0.1 s and a message sent at 0.1 s by an event scheduled after the
 * end's event joins the same recomputation.
 */
class OneSolvePerInstantTestCase : public TestCase
{
  public:
    OneSolvePerInstantTestCase()
        : TestCase("arrivals and departures at one instant are solved once")
    {}

  private:
    void
    DoRun() override
    {
        Ptr<Topology> t = Topology::Build(OneDimension(TopologyKind::RING, 2, 10, 1000), 2);
        Ptr<FlowNetwork> net = CreateObject<FlowNetwork>();
        net->SetTopology(t);
        net->SetRouting(RoutingPolicy::Create("dimension-order"));
        auto nothing = [](uint64_t) {};
        uint64_t before = 0;
        uint64_t after = 0;
        net->Send(0, 1, 1000000000, nothing); // ends transmitting at 0.1 s exactly
        net->Send(0, 1, 3000000000, nothing); // shares the link: 1 GB at 5 GB/s by 0.2 s...
        // ... so the first ends at 0.2 s. An event scheduled at 0.15 s (after the end's event
        // was queued) sends at 0.2 s.
        Simulator::Schedule(Seconds(0.15),
                            [&]()
                            {
                                before = net->GetSolveCount();
                                Simulator::Schedule(Seconds(0.05),
                                                    [&]()
                                                    {
                                                        net->Send(0, 1, 1000000000, nothing);
                                                    });
                            });
        Simulator::Schedule(Seconds(0.25),
                            [&]()
                            {
                                after = net->GetSolveCount();
                            });
        Simulator::Stop(Seconds(0.3));
        Simulator::Run();
        net->Dispose();
        Simulator::Destroy();
        NS_TEST_ASSERT_MSG_EQ(after - before, 1u, "one solve at 0.2 s for the end and the send");
    }
};

/**
 * \brief Ordered messages (NetworkBackend::Send's ordered): a pair's connection carries them
 * one after the other, each starting when the one before has transmitted its last byte (not
 * when it arrived); unordered ones share the link at once; other pairs are not held up. Four
 * hosts on a switch, 100 GB/s links of 1 us, a 130 ns switch (path latency 2.13 us), 1 MB
 * messages (10 us each alone).
 */
class OrderedMessagesTestCase : public TestCase
{
  public:
    OrderedMessagesTestCase()
        : TestCase("ordered messages of a pair go one after the other, not waiting for delivery")
    {}

  private:
    /** \return the delivery times (s) of three 1 MB messages 0->1 and one 2->3, sent at 0 */
    static std::vector<double>
    Deliveries(bool ordered)
    {
        const NetworkSpec sw = OneDimension(TopologyKind::SWITCH, 4, 100, 1000).SwitchNs(130);
        Ptr<FlowNetwork> net = CreateObject<FlowNetwork>();
        net->SetTopology(Topology::Build(sw, 4));
        net->SetRouting(RoutingPolicy::Create(sw.routing));
        std::vector<double> at(4, -1);
        Simulator::ScheduleNow(
            [&]()
            {
                for (uint32_t k = 0; k < 4; ++k)
                {
                    net->Send(k < 3 ? 0 : 2,
                              k < 3 ? 1 : 3,
                              1000000,
                              NetworkBackend::DeliveryCallback(
                                  [&at, k](uint64_t)
                                  {
                                      at[k] = Simulator::Now().GetSeconds();
                                  }),
                              1,
                              0,
                              ordered);
                }
            });
        Simulator::Run();
        net->Dispose();
        Simulator::Destroy();
        return at;
    }

    void
    DoRun() override
    {
        const double lat = 2.13e-6;
        const std::vector<double> ordered = Deliveries(true);
        for (uint32_t k = 0; k < 3; ++k)
        {
            NS_TEST_EXPECT_MSG_EQ_TOL(ordered[k], (k + 1) * 10e-6 + lat, 3e-9, "ordered " << k);
        }
        NS_TEST_EXPECT_MSG_EQ_TOL(ordered[3], 10e-6 + lat, 2e-9, "another pair is not held up");
        const std::vector<double> shared = Deliveries(false);
        for (uint32_t k = 0; k < 3; ++k)
        {
            NS_TEST_EXPECT_MSG_EQ_TOL(shared[k], 30e-6 + lat, 3e-9, "unordered " << k);
        }
    }
};

/**
 * \brief Flow classes change no figure: a random workload on an oversubscribed fat tree with
 * many identical messages per instant (bursts of 1-6 copies of a message) delivers every
 * message at the same nanosecond with FlowClasses on and off.
 */
class FlowClassEquivalenceTestCase : public TestCase
{
  public:
    FlowClassEquivalenceTestCase()
        : TestCase("flow classes deliver every message at the time separate flows do")
    {}

  private:
    /** \return (id, delivery ns) in delivery order, and the solver's flow-class count */
    static std::vector<std::pair<uint64_t, int64_t>>
    Deliveries(bool classes, uint64_t& solvedFlows)
    {
        NetworkSpec s = OneDimension(TopologyKind::FAT_TREE, 16, 10, 500);
        s.dimensions[0].leafSize = 4;
        s.dimensions[0].oversubscription = 2;
        Ptr<Topology> t = Topology::Build(s, 16);
        Ptr<FlowNetwork> net = CreateObject<FlowNetwork>();
        net->SetAttribute("FlowClasses", BooleanValue(classes));
        net->SetTopology(t);
        net->SetRouting(RoutingPolicy::Create("dimension-order"));
        std::vector<std::pair<uint64_t, int64_t>> out;
        std::mt19937_64 rng(777);
        std::uniform_int_distribution<uint32_t> host(0, 15);
        std::uniform_int_distribution<uint32_t> copies(1, 6);
        std::uniform_int_distribution<uint64_t> size(1, 8);
        std::uniform_int_distribution<int> instant(0, 40);
        for (int i = 0; i < 150; ++i)
        {
            const uint32_t a = host(rng);
            const uint32_t b = (a + 1 + host(rng) % 15) % 16;
            const uint64_t bytes = size(rng) * 25000000;
            const uint32_t n = copies(rng);
            Simulator::Schedule(MilliSeconds(instant(rng)),
                                [&out, net, a, b, bytes, n]()
                                {
                                    for (uint32_t k = 0; k < n; ++k)
                                    {
                                        net->Send(a,
                                                  b,
                                                  bytes,
                                                  [&out](uint64_t id)
                                                  {
                                                      out.emplace_back(
                                                          id, Simulator::Now().GetNanoSeconds());
                                                  });
                                    }
                                });
        }
        Simulator::Run();
        solvedFlows = net->GetSolvedFlowCount();
        net->Dispose();
        Simulator::Destroy();
        return out;
    }

    void
    DoRun() override
    {
        uint64_t solvedWith = 0;
        uint64_t solvedWithout = 0;
        const auto with = Deliveries(true, solvedWith);
        const auto without = Deliveries(false, solvedWithout);
        RAPIDLLM_REQUIRE_EQ(with.size(), without.size(), "same messages delivered");
        NS_TEST_ASSERT_MSG_GT(with.size(), 300u, "a sizeable workload");
        std::map<uint64_t, int64_t> at;
        for (const auto& [id, ns] : without)
        {
            at[id] = ns;
        }
        int differences = 0;
        for (const auto& [id, ns] : with)
        {
            differences += std::llabs(at[id] - ns) > 1 ? 1 : 0;
        }
        NS_TEST_ASSERT_MSG_EQ(differences, 0, "every delivery within 1 ns of separate flows");
        NS_TEST_ASSERT_MSG_LT(solvedWith, solvedWithout, "classes solve fewer flows");
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
        AddTestCase(new ScheduledSoftFaultTestCase, TestCase::QUICK);
        AddTestCase(new ScheduledDeadLinkTestCase, TestCase::QUICK);
        AddTestCase(new FaultFactorRangeTestCase, TestCase::QUICK);
        AddTestCase(new FlowClassTestCase, TestCase::QUICK);
        AddTestCase(new FlowClassEquivalenceTestCase, TestCase::QUICK);
        AddTestCase(new OneSolvePerInstantTestCase, TestCase::QUICK);
        AddTestCase(new OrderedMessagesTestCase, TestCase::QUICK);
    }
};

static NetworkFlowTestSuite g_networkFlowTestSuite;
