/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// Timed reservations (CollectiveEngine attribute Reservations, NetworkBackend::Reserve): a
// collective whose links carry nothing else runs from the recorded time of its first run alone,
// exactly as if simulated; a transfer of someone else on one of its links turns it into real
// streams at that instant, with the same completion times as the fully simulated run.

#include "ns3/boolean.h"
#include "ns3/collective-algorithms.h"
#include "ns3/collective-engine.h"
#include "ns3/fault-schedule.h"
#include "ns3/flow-network.h"
#include "ns3/hardware-spec.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/test.h"
#include "ns3/topology.h"
#include "test-require.h"

#include <cmath>
#include <functional>
#include <string>
#include <vector>

using namespace ns3;
using namespace ns3::rapidllm;

namespace {

/** \brief What one scenario gave. */
struct Outcome
{
    std::vector<double> doneS;     //!< per run of the collective: its end
    std::vector<double> rankDoneS; //!< per run and rank: the rank's end
    double intruderS = -1;         //!< the intruding transfer's delivery (-1: none)
    uint64_t timed = 0;            //!< runs timed without the network
    uint64_t materialized = 0;     //!< timed runs turned into streams
    uint64_t broken = 0;           //!< reservations broken
    std::vector<double> linkBytes; //!< per link: bytes carried (statistics)
    std::vector<double> linkBusyS; //!< per link: seconds busy (statistics)
};

/** \brief A scenario: runs of one collective back to back, and what comes beside them. */
struct Scenario
{
    std::string granularity = "fluid"; //!< the engine's
    CollectiveRequest request;         //!< what runs (endpoints set)
    uint32_t gpus = 32;                //!< 8-GPU DGX A100 nodes: 4
    uint32_t runs = 3;                 //!< back to back, 1 us apart
    int intrudeRun = -1;               //!< run during which the intruder comes (-1: never)
    double intrudeAt = 0.5;            //!< fraction of that run's time alone
    double aloneS = 0;                 //!< that time (from a run without intruder)
    uint32_t intruderSrc = 0;          //!< its source
    uint32_t intruderDst = 16;         //!< its destination (another node: InfiniBand)
    uint64_t intruderBytes = 32 << 20; //!< its size
    bool busyAtStart = false;          //!< the intruder is sent just before the run instead
    std::string fault;                 //!< a FaultSchedule selector hit during that run instead
};

/** \return the scenario's times on a flow network, with reservations on or off */
Outcome
Play(const Scenario& sc, bool reservations)
{
    const NetworkSpec spec = HardwareSpec::Load("a100-sxm-80gb").network;
    Ptr<FlowNetwork> net = CreateObject<FlowNetwork>();
    net->SetTopology(Topology::Build(spec, sc.gpus));
    net->SetRouting(RoutingPolicy::Create(spec.routing));
    Ptr<CollectiveEngine> engine = CreateObject<CollectiveEngine>();
    engine->SetAttribute("Granularity", StringValue(sc.granularity));
    engine->SetAttribute("Reservations", BooleanValue(reservations));
    engine->SetBackend(net);
    Outcome out;
    const auto ranks = static_cast<uint32_t>(sc.request.endpoints.size());
    out.rankDoneS.assign(sc.runs * ranks, -1);
    uint32_t run = 0;
    std::function<void()> start;
    auto intrude = [&]()
    {
        if (!sc.fault.empty())
        {
            Ptr<FaultSchedule> faults = CreateObject<FaultSchedule>();
            faults->Add(sc.fault, 0.5, Seconds(0), "test");
            net->SetFaultSchedule(faults);
            return;
        }
        net->Send(sc.intruderSrc,
                  sc.intruderDst,
                  sc.intruderBytes,
                  NetworkBackend::DeliveryCallback(
                      [&](uint64_t)
                      {
                          out.intruderS = Simulator::Now().GetSeconds();
                      }));
    };
    start = [&]()
    {
        const uint32_t mine = run;
        if (int(mine) == sc.intrudeRun)
        {
            if (sc.busyAtStart)
            {
                intrude();
            }
            else
            {
                Simulator::Schedule(Seconds(sc.aloneS * sc.intrudeAt), intrude);
            }
        }
        engine->Start(sc.request,
                      CollectiveEngine::RankDoneCallback(
                          [&, mine, ranks](uint64_t, uint32_t member, uint32_t)
                          {
                              out.rankDoneS[mine * ranks + member] = Simulator::Now().GetSeconds();
                          }),
                      CollectiveEngine::DoneCallback(
                          [&](uint64_t)
                          {
                              out.doneS.push_back(Simulator::Now().GetSeconds());
                              if (++run < sc.runs)
                              {
                                  Simulator::Schedule(MicroSeconds(1), start);
                              }
                          }));
    };
    Simulator::ScheduleNow(start);
    Simulator::Run();
    for (const auto& l : net->GetStats().links)
    {
        out.linkBytes.push_back(l.bytes);
        out.linkBusyS.push_back(l.busyTimeS);
    }
    Simulator::Destroy();
    out.timed = engine->GetTimedCount();
    out.materialized = engine->GetMaterializedCount();
    out.broken = net->GetBrokenCount();
    return out;
}

/** \return an all-reduce of \p bytes over endpoints 0..15 (two DGX nodes, as TP16) */
CollectiveRequest
TensorAllReduce(uint64_t bytes, const std::string& algorithm = "auto", uint32_t chunks = 0)
{
    CollectiveRequest r;
    r.op = CollectiveOp::ALL_REDUCE;
    r.bytes = bytes;
    r.algorithm = algorithm;
    r.chunks = chunks;
    for (uint32_t e = 0; e < 16; ++e)
    {
        r.endpoints.push_back(e);
    }
    return r;
}

/** \return the largest relative difference between two lists of times */
double
MaxRelative(const std::vector<double>& a, const std::vector<double>& b)
{
    double worst = a.size() == b.size() ? 0.0 : 1.0;
    for (std::size_t i = 0; i < a.size() && i < b.size(); ++i)
    {
        worst = std::max(worst, std::abs(a[i] - b[i]) / std::max(1e-12, std::abs(b[i])));
    }
    return worst;
}

} // namespace

/**
 * \brief Alone, a timed reservation ends when the simulated run does: every rank's end and the
 * collective's, for fluid streams and for messages, pipelined or not.
 */
class ReservationExactAloneTestCase : public TestCase
{
  public:
    ReservationExactAloneTestCase()
        : TestCase("a collective alone on its links: timed runs equal simulated ones (1e-9)")
    {}

  private:
    void
    DoRun() override
    {
        const uint64_t MiB = 1 << 20;
        struct Shape
        {
            std::string granularity;
            CollectiveRequest request;
        };
        const std::vector<Shape> shapes = {
            {"fluid", TensorAllReduce(48 * MiB)},
            {"fluid", TensorAllReduce(48 * MiB, "hierarchical", 8)},
            {"fluid", TensorAllReduce(1 * MiB)},
            {"message", TensorAllReduce(4 * MiB, "hierarchical", 4)},
        };
        for (const Shape& s : shapes)
        {
            Scenario sc;
            sc.granularity = s.granularity;
            sc.request = s.request;
            const Outcome full = Play(sc, false);
            const Outcome timed = Play(sc, true);
            const std::string what = s.granularity + " " + s.request.algorithm + " "
                                     + std::to_string(s.request.bytes) + " B";
            RAPIDLLM_REQUIRE_EQ(full.doneS.size(), sc.runs, what);
            NS_TEST_EXPECT_MSG_EQ(full.timed, 0u, what << ": no reservations when off");
            NS_TEST_EXPECT_MSG_EQ(timed.timed, sc.runs - 1, what << ": all but the first timed");
            NS_TEST_EXPECT_MSG_EQ(timed.materialized, 0u, what << ": nothing intruded");
            NS_TEST_EXPECT_MSG_LT(MaxRelative(timed.doneS, full.doneS), 1e-9, what << ": ends");
            NS_TEST_EXPECT_MSG_LT(
                MaxRelative(timed.rankDoneS, full.rankDoneS), 1e-9, what << ": every rank's end");
            // The link statistics count what the timed runs carried alone.
            NS_TEST_EXPECT_MSG_LT(
                MaxRelative(timed.linkBytes, full.linkBytes), 1e-9, what << ": link bytes");
            NS_TEST_EXPECT_MSG_LT(
                MaxRelative(timed.linkBusyS, full.linkBusyS), 1e-9, what << ": link busy time");
        }
    }
};

/**
 * \brief A data-parallel transfer reaching a link of a timed tensor all-reduce (InfiniBand of
 * its first GPU) turns it into streams with the bytes they had left: every end (the
 * collective's, each rank's, the intruder's) as in the fully simulated run, within 0.1%; a
 * transfer already on its links at its start, or a fault on one during it, the same.
 */
class ReservationIntruderTestCase : public TestCase
{
  public:
    ReservationIntruderTestCase()
        : TestCase("an intruder on a timed collective's link: the same ends as simulated (0.1%)")
    {}

  private:
    void
    DoRun() override
    {
        const uint64_t MiB = 1 << 20;
        for (const std::string granularity : {"fluid", "message"})
        {
            Scenario base;
            base.granularity = granularity;
            base.request = granularity == "fluid" ? TensorAllReduce(48 * MiB, "hierarchical", 8)
                                                  : TensorAllReduce(4 * MiB, "hierarchical", 4);
            const Outcome alone = Play(base, false);
            base.aloneS = alone.doneS[1] - alone.doneS[0] - 1e-6;
            for (double at : {0.0, 0.05, 0.3, 0.5, 0.77, 0.98})
            {
                Scenario sc = base;
                sc.intrudeRun = 1;
                sc.intrudeAt = at;
                const Outcome full = Play(sc, false);
                const Outcome timed = Play(sc, true);
                const std::string what = granularity + ", intruder at " + std::to_string(at);
                NS_TEST_EXPECT_MSG_EQ(timed.materialized, 1u, what << ": materialized once");
                if (at == 0.3 || at == 0.5)
                {
                    NS_TEST_EXPECT_MSG_GT(full.doneS[1] - full.doneS[0] - 1e-6,
                                          base.aloneS * 1.0001,
                                          what << ": the intruder slows the collective");
                }
                NS_TEST_EXPECT_MSG_LT(MaxRelative(timed.doneS, full.doneS), 1e-3, what);
                NS_TEST_EXPECT_MSG_LT(
                    MaxRelative(timed.rankDoneS, full.rankDoneS), 1e-3, what << ": ranks");
                NS_TEST_EXPECT_MSG_LT(MaxRelative({timed.intruderS}, {full.intruderS}),
                                      1e-3,
                                      what << ": the intruder's delivery");
                // Bytes: those carried without the network before the intruder count too.
                NS_TEST_EXPECT_MSG_LT(
                    MaxRelative(timed.linkBytes, full.linkBytes), 1e-6, what << ": link bytes");
            }
            // Busy at the start: no reservation, simulated as it comes.
            Scenario busy = base;
            busy.intrudeRun = 1;
            busy.busyAtStart = true;
            busy.runs = 2;
            const Outcome full = Play(busy, false);
            const Outcome timed = Play(busy, true);
            NS_TEST_EXPECT_MSG_EQ(timed.timed, 0u, granularity << ": the busy run is not timed");
            NS_TEST_EXPECT_MSG_LT(MaxRelative(timed.doneS, full.doneS), 1e-9, granularity);
            NS_TEST_EXPECT_MSG_LT(
                MaxRelative({timed.intruderS}, {full.intruderS}), 1e-9, granularity);
            // A fault on one of its links during the run.
            Scenario fault = base;
            fault.intrudeRun = 1;
            fault.intrudeAt = 0.4;
            fault.fault = "gpu0-infiniband.leaf0.0";
            const Outcome fullFault = Play(fault, false);
            const Outcome timedFault = Play(fault, true);
            NS_TEST_EXPECT_MSG_EQ(timedFault.materialized, 1u, granularity << ": fault breaks");
            NS_TEST_EXPECT_MSG_GT(fullFault.doneS[1] - fullFault.doneS[0] - 1e-6,
                                  base.aloneS * 1.0001,
                                  granularity << ": the fault slows it");
            NS_TEST_EXPECT_MSG_LT(
                MaxRelative(timedFault.doneS, fullFault.doneS), 1e-3, granularity << ": fault");
            NS_TEST_EXPECT_MSG_LT(MaxRelative(timedFault.rankDoneS, fullFault.rankDoneS),
                                  1e-3,
                                  granularity << ": fault, ranks");
        }
    }
};

/**
 * \brief The backend's side: Reserve refuses busy or reserved links and routing policies that
 * route per flow; an intruder breaks the reservation and the callback runs before it joins.
 */
class ReserveContractTestCase : public TestCase
{
  public:
    ReserveContractTestCase()
        : TestCase("Reserve: busy, reserved, per-flow routing refused; intruders break it")
    {}

  private:
    void
    DoRun() override
    {
        const NetworkSpec spec = HardwareSpec::Load("a100-sxm-80gb").network;
        Ptr<FlowNetwork> net = CreateObject<FlowNetwork>();
        net->SetTopology(Topology::Build(spec, 16));
        net->SetRouting(RoutingPolicy::Create("dimension-order"));
        const std::vector<uint32_t> links = net->ReservableLinks({{0, 8}, {8, 0}});
        NS_TEST_ASSERT_MSG_EQ(links.empty(), false, "dimension-order routes one path per pair");
        std::vector<uint64_t> broken;
        const auto onBroken = NetworkBackend::BrokenCallback(
            [&](uint64_t r)
            {
                broken.push_back(r);
                // The reservation is gone when its owner is called: it may send on its links.
                NS_TEST_EXPECT_MSG_EQ(net->GetReservationCount(), 0u, "freed first");
            });
        const uint64_t r = net->Reserve(links, onBroken);
        NS_TEST_ASSERT_MSG_GT(r, 0u, "free links are reserved");
        NS_TEST_EXPECT_MSG_EQ(net->Reserve(links, onBroken), 0u, "reserved links are refused");
        // The owner's messages do not break it; they are recorded.
        net->Send(0, 8, 1 << 20, NetworkBackend::DeliveryCallback(), 1, r);
        NS_TEST_EXPECT_MSG_EQ(broken.size(), 0u, "own message");
        // A message on other links does not either; one on its links does.
        net->Send(1, 2, 1 << 20, NetworkBackend::DeliveryCallback());
        NS_TEST_EXPECT_MSG_EQ(broken.size(), 0u, "elsewhere");
        net->Send(8, 0, 1 << 20, NetworkBackend::DeliveryCallback());
        RAPIDLLM_REQUIRE_EQ(broken.size(), 1u, "an intruder breaks it");
        NS_TEST_EXPECT_MSG_EQ(broken[0], r, "its id");
        NS_TEST_EXPECT_MSG_EQ(net->Reserve(links, onBroken), 0u, "busy links are refused");
        Simulator::Run();
        const auto progress = net->TakeProgress(0);
        NS_TEST_ASSERT_MSG_GT(progress.size(), 1u, "the reserved message's progress");
        NS_TEST_EXPECT_MSG_EQ(progress.front().second, double(1 << 20), "starts with its bytes");
        NS_TEST_EXPECT_MSG_EQ(progress.back().second, 0.0, "ends with none");
        NS_TEST_EXPECT_MSG_EQ(net->TakeProgress(0).empty(), true, "taken once");
        NS_TEST_EXPECT_MSG_EQ(net->TakeProgress(1).empty(), true, "not reserved: none");
        Simulator::Destroy();
        net->SetRouting(RoutingPolicy::Create("ecmp"));
        NS_TEST_EXPECT_MSG_EQ(net->ReservableLinks({{0, 8}}).empty(), true, "ECMP: per flow");
    }
};

/** \brief The suite. */
class CollectiveReservationTestSuite : public TestSuite
{
  public:
    CollectiveReservationTestSuite()
        : TestSuite("rapid-llm-collective-reservation", UNIT)
    {
        AddTestCase(new ReserveContractTestCase, TestCase::QUICK);
        AddTestCase(new ReservationExactAloneTestCase, TestCase::QUICK);
        AddTestCase(new ReservationIntruderTestCase, TestCase::QUICK);
    }
};

/** The suite's one instance. */
static CollectiveReservationTestSuite g_collectiveReservationTestSuite;
