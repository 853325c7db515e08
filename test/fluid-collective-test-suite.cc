/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// Fluid collectives (issue 11) against their messages on the flow network: ring, double binary
// tree, halving-doubling, hierarchical and all-to-all, alone (within 1%) and beside competing
// traffic on a shared link or under a soft fault (within 2%); the latency count of the backend
// contract; and the default fluid form an algorithm written with AddMessages() alone gets.

#include "network-test-spec.h"
#include "ns3/collective-algorithms.h"
#include "ns3/collective-engine.h"
#include "ns3/flow-network.h"
#include "ns3/hardware-spec.h"
#include "ns3/network-error.h"
#include "ns3/packet-network.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/test.h"
#include "ns3/topology.h"

#include <cmath>
#include <cstdio>
#include <functional>

using namespace ns3;
using namespace ns3::rapidllm;

namespace {

/** \brief Traffic beside the collective: (source, destination, bytes) messages sent at 0. */
struct Competing
{
    uint32_t src;   //!< source endpoint
    uint32_t dst;   //!< destination endpoint
    uint64_t bytes; //!< size
};

/** \brief One collective's run. */
struct Outcome
{
    double timeS = -1;     //!< when the collective finished
    uint64_t sends = 0;    //!< network sends (messages or streams)
    double competingS = 0; //!< when the last competing message arrived
};

/**
 * \return how \p request runs among ranks 0..gpus-1 of \p spec at one granularity on a flow
 * network, beside \p competing
 */
Outcome
RunCollective(const NetworkSpec& spec,
              uint32_t gpus,
              CollectiveRequest request,
              const std::string& granularity,
              const std::vector<Competing>& competing = {})
{
    Ptr<FlowNetwork> net = CreateObject<FlowNetwork>();
    net->SetTopology(Topology::Build(spec, gpus));
    net->SetRouting(RoutingPolicy::Create(spec.routing));
    Ptr<CollectiveEngine> engine = CreateObject<CollectiveEngine>();
    engine->SetAttribute("Granularity", StringValue(granularity));
    engine->SetBackend(net);
    request.endpoints.clear();
    for (uint32_t r = 0; r < gpus; ++r)
    {
        request.endpoints.push_back(r);
    }
    Outcome out;
    Simulator::ScheduleNow(
        [&]()
        {
            for (const auto& c : competing)
            {
                net->Send(c.src,
                          c.dst,
                          c.bytes,
                          NetworkBackend::DeliveryCallback(
                              [&](uint64_t)
                              {
                                  out.competingS = Simulator::Now().GetSeconds();
                              }));
            }
            engine->Start(request,
                          CollectiveEngine::RankDoneCallback(),
                          CollectiveEngine::DoneCallback(
                              [&](uint64_t)
                              {
                                  out.timeS = Simulator::Now().GetSeconds();
                              }));
        });
    Simulator::Run();
    Simulator::Destroy();
    out.sends = net->GetSentCount() - competing.size();
    return out;
}

/** \return a request */
CollectiveRequest
Request(CollectiveOp op, uint64_t bytes, const std::string& algorithm, uint32_t chunks = 0)
{
    CollectiveRequest r;
    r.op = op;
    r.bytes = bytes;
    r.algorithm = algorithm;
    r.chunks = chunks;
    return r;
}

/** \brief A fluid-vs-message comparison case. */
struct Case
{
    std::string name;                 //!< for messages
    NetworkSpec spec;                 //!< the network
    uint32_t gpus;                    //!< ranks 0..gpus-1
    CollectiveRequest request;        //!< what
    std::vector<Competing> competing; //!< beside it
    double tolerance;                 //!< |fluid / message - 1| allowed
};

} // namespace

/**
 * \brief Each algorithm's fluid form against its messages on the flow network: the same
 * completion time within 1% alone, within 2% beside a competing transfer on a shared link or
 * with one link at half speed, with far fewer network sends.
 */
class FluidMatchesMessagesTestCase : public TestCase
{
  public:
    FluidMatchesMessagesTestCase()
        : TestCase("fluid form of every algorithm within 1% (2% with competition) of its messages")
    {}

  private:
    void
    DoRun() override
    {
        const NetworkSpec a100 = HardwareSpec::Load("a100-sxm-80gb").network;
        const NetworkSpec sw = OneDimension(TopologyKind::SWITCH, 16, 25, 1000).SwitchNs(130);
        NetworkSpec ft = OneDimension(TopologyKind::FAT_TREE, 16, 25, 1000).SwitchNs(130);
        ft.dimensions[0].leafSize = 4;
        ft.dimensions[0].oversubscription = 2;
        NetworkSpec swFault = sw;
        swFault.faults.push_back({"gpu3-net.sw0", 0.5});
        NetworkSpec a100Fault = a100;
        a100Fault.faults.push_back({"gpu8", 0.5});
        const uint64_t MiB = 1 << 20;
        std::vector<Case> cases;
        auto add = [&](const std::string& name,
                       const NetworkSpec& spec,
                       uint32_t gpus,
                       CollectiveRequest request,
                       std::vector<Competing> competing,
                       double tolerance)
        {
            cases.push_back({name, spec, gpus, request, competing, tolerance});
        };
        for (uint64_t bytes : {1 * MiB, 64 * MiB})
        {
            const std::string size = " " + std::to_string(bytes / MiB) + "MiB";
            const auto ar = [bytes](const std::string& algorithm)
            {
                return Request(CollectiveOp::ALL_REDUCE, bytes, algorithm);
            };
            const auto a2a = Request(CollectiveOp::ALL_TO_ALL, bytes, "direct");
            // Alone: 1%.
            add("ring 16 switch" + size, sw, 16, ar("ring"), {}, 0.01);
            add("tree 16 switch" + size, sw, 16, ar("double-binary-tree"), {}, 0.01);
            add("halving-doubling 16 switch" + size, sw, 16, ar("halving-doubling"), {}, 0.01);
            add("halving-doubling 12 switch" + size, sw, 12, ar("halving-doubling"), {}, 0.01);
            add("all-to-all 16 fat tree 2:1" + size, ft, 16, a2a, {}, 0.01);
            // Competing traffic on a shared link, or one link at half speed: 2%.
            add("tree 16 switch, soft fault" + size,
                swFault,
                16,
                ar("double-binary-tree"),
                {},
                0.02);
            add("tree 16 switch, competing" + size,
                sw,
                16,
                ar("double-binary-tree"),
                {{0, 8, 2 * bytes}},
                0.02);
            add("halving-doubling 16 switch, competing" + size,
                sw,
                16,
                ar("halving-doubling"),
                {{0, 8, 2 * bytes}},
                0.02);
            add("all-to-all 16 switch, soft fault" + size, swFault, 16, a2a, {}, 0.02);
            add("all-to-all 16 fat tree 2:1, competing" + size, ft, 16, a2a, {{0, 8, bytes}}, 0.02);
        }
        // Hierarchical (8 GPUs per node on NVSwitch, rails on the HDR fat tree), unpipelined
        // (1 MiB: one piece).
        {
            const auto ar = Request(CollectiveOp::ALL_REDUCE, MiB, "hierarchical");
            add("hierarchical 16 DGX A100 1MiB", a100, 16, ar, {}, 0.01);
            add("hierarchical 64 DGX A100 1MiB", a100, 64, ar, {}, 0.01);
            add("hierarchical 64 DGX A100, soft fault 1MiB", a100Fault, 64, ar, {}, 0.02);
            add("hierarchical 64 DGX A100, competing on NVLink 1MiB",
                a100,
                64,
                ar,
                {{0, 1, 8 * MiB}},
                0.02);
        }
        for (const auto& c : cases)
        {
            const Outcome message =
                RunCollective(c.spec, c.gpus, c.request, "message", c.competing);
            const Outcome fluid = RunCollective(c.spec, c.gpus, c.request, "fluid", c.competing);
            const double ratio = fluid.timeS / message.timeS;
            std::printf("%-48s message %10.3f us (%6lu sends)  fluid %10.3f us (%5lu)  %+.4f\n",
                        c.name.c_str(),
                        message.timeS * 1e6,
                        (unsigned long) message.sends,
                        fluid.timeS * 1e6,
                        (unsigned long) fluid.sends,
                        ratio - 1);
            NS_TEST_EXPECT_MSG_GT(message.timeS, 0, c.name << ": the messages finish");
            NS_TEST_EXPECT_MSG_LT(std::abs(ratio - 1),
                                  c.tolerance,
                                  c.name << ": fluid " << fluid.timeS << " s vs messages "
                                         << message.timeS << " s");
        }
    }
};

/** \brief The suite. */
class FluidCollectiveTestSuite : public TestSuite
{
  public:
    FluidCollectiveTestSuite()
        : TestSuite("rapid-llm-fluid-collective", UNIT)
    {
        AddTestCase(new FluidMatchesMessagesTestCase, TestCase::QUICK);
    }
};

/** The suite's one instance. */
static FluidCollectiveTestSuite g_fluidCollectiveTestSuite;
