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
#include "ns3/collective-probe.h"
#include "ns3/flow-network.h"
#include "ns3/hardware-spec.h"
#include "ns3/network-error.h"
#include "ns3/packet-network.h"
#include "ns3/ring-collective.h"
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

/**
 * \brief A researcher's algorithm written with AddMessages() alone: a ring all-reduce of half
 * the data each way round (the example's bidirectional ring). Its fluid form is the base
 * class's: each pair's messages merged into one stream.
 */
class TestBidirectionalRing : public CollectiveAlgorithm
{
  public:
    /** \brief Register this type. \return the TypeId */
    static TypeId
    GetTypeId()
    {
        static TypeId tid = TypeId("ns3::rapidllm::test::FluidBidirectionalRing")
                                .SetParent<CollectiveAlgorithm>()
                                .AddConstructor<TestBidirectionalRing>();
        return tid;
    }

    bool
    Supports(CollectiveOp op, uint32_t ranks, std::string& why) const override
    {
        why = "all-reduce only";
        return op == CollectiveOp::ALL_REDUCE;
    }

    void
    AddMessages(ScheduleBuilder& b, const CollectiveCall& call) const override
    {
        const std::vector<uint32_t>& forward = call.members;
        const std::vector<uint32_t> backward(forward.rbegin(), forward.rend());
        const uint64_t halves[2] = {call.bytes / 2, call.bytes - call.bytes / 2};
        std::vector<ScheduleBuilder::Step> start;
        for (uint32_t r : forward)
        {
            start.push_back(b.GetReady(r));
        }
        std::vector<std::vector<ScheduleBuilder::Step>> done(forward.size());
        for (int direction = 0; direction < 2; ++direction)
        {
            for (std::size_t i = 0; i < forward.size(); ++i)
            {
                b.SetReady(forward[i], start[i]);
            }
            const auto& order = direction == 0 ? forward : backward;
            RingCollective::AddPass(b, order, halves[direction], true);
            RingCollective::AddPass(b, order, halves[direction], false);
            for (std::size_t i = 0; i < forward.size(); ++i)
            {
                done[i].push_back(b.GetReady(forward[i]));
            }
        }
        for (std::size_t i = 0; i < forward.size(); ++i)
        {
            b.SetReady(forward[i], b.Join(forward[i], done[i]));
        }
    }
};

/**
 * \brief Another written with AddMessages() alone: every rank sends its buffer to member 0,
 * which sends the sum back (a gather, then a broadcast: the derived fluid form has two phases).
 */
class TestStarAllReduce : public CollectiveAlgorithm
{
  public:
    /** \brief Register this type. \return the TypeId */
    static TypeId
    GetTypeId()
    {
        static TypeId tid = TypeId("ns3::rapidllm::test::FluidStarAllReduce")
                                .SetParent<CollectiveAlgorithm>()
                                .AddConstructor<TestStarAllReduce>();
        return tid;
    }

    bool
    Supports(CollectiveOp op, uint32_t ranks, std::string& why) const override
    {
        why = "all-reduce only";
        return op == CollectiveOp::ALL_REDUCE;
    }

    void
    AddMessages(ScheduleBuilder& b, const CollectiveCall& call) const override
    {
        const auto& m = call.members;
        std::vector<ScheduleBuilder::Step> in{b.GetReady(m[0])};
        for (std::size_t i = 1; i < m.size(); ++i)
        {
            in.push_back(b.Send(m[i], m[0], call.bytes, b.GetReady(m[i])));
        }
        const ScheduleBuilder::Step sum = b.Join(m[0], in);
        b.SetReady(m[0], sum);
        for (std::size_t i = 1; i < m.size(); ++i)
        {
            b.SetReady(m[i], b.Send(m[0], m[i], call.bytes, sum));
        }
    }
};

static TypeRegistrar<CollectiveAlgorithm> g_bidirectional("test-fluid-bidirectional-ring",
                                                          TestBidirectionalRing::GetTypeId());
static TypeRegistrar<CollectiveAlgorithm> g_star("test-fluid-star", TestStarAllReduce::GetTypeId());

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
 * with one link at half speed, with far fewer network sends. Pipelined collectives last at
 * least their messages' time, walked on the idle network (CollectivePlanner::Build) and again
 * beside the traffic their streams met (CollectiveEngine::EndFloor), so they agree within 1%
 * alone and 2% beside a transfer; a pipelined algorithm that does not count its messages keeps the
 * longer-of form, within 7% (its piece the larger of two lower bounds, its bytes and its chain of
 * steps).
 */
class FluidMatchesMessagesTestCase : public TestCase
{
  public:
    FluidMatchesMessagesTestCase()
        : TestCase("fluid form of every algorithm within 1% (2% with competition; 7% pipelined "
                   "without a message count) of its messages")
    {}

  private:
    void
    DoRun() override
    {
        // The preset's dimensions run NCCL's protocols (`nccl`); the hierarchical cases below
        // compose rings (their fluid forms are what is checked), the nccl cases follow.
        const NetworkSpec a100nccl = HardwareSpec::Load("a100-sxm-80gb").network;
        NetworkSpec a100 = a100nccl;
        // The ring cases keep the Simple-protocol step latencies the preset had before NCCL's
        // protocols (3.4 us per NVLink step, 9.6 us per network step); with LL's shorter steps
        // the soft-fault case's fluid form was 3.9% slower than its messages before the message
        // floor, and agrees since (doc/network-model.md, Limits).
        for (auto& d : a100.dimensions)
        {
            d.collective = "ring";
            d.latencyS = d.kind == TopologyKind::FAT_TREE ? 4735e-9 : 1700e-9;
        }
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
            // A ring whose edges differ: flat over NVLink and InfiniBand (two or eight DGX
            // A100 nodes), behind a slow link, beside a competing transfer.
            add("ring 16 DGX A100 (NVLink and IB edges)" + size, a100, 16, ar("ring"), {}, 0.01);
            add("ring 64 DGX A100 (NVLink and IB edges)" + size, a100, 64, ar("ring"), {}, 0.01);
            add("ring 16 switch, soft fault" + size, swFault, 16, ar("ring"), {}, 0.02);
            // Beside a competing transfer on two of its links: before the message floor the
            // latency-bound case (1 MiB) was +16.6% (the messages left their link idle for
            // each step's latency, which the transfer took; a stream held its share).
            add("ring 16 switch, competing" + size, sw, 16, ar("ring"), {{0, 8, 2 * bytes}}, 0.02);
            add("ring 64 DGX A100, soft fault" + size, a100Fault, 64, ar("ring"), {}, 0.02);
        }
        // Algorithms written with AddMessages() alone get a fluid form derived from it.
        for (uint64_t bytes : {1 * MiB, 64 * MiB})
        {
            const std::string size = " " + std::to_string(bytes / MiB) + "MiB";
            add("derived: bidirectional ring 16 switch" + size,
                sw,
                16,
                Request(CollectiveOp::ALL_REDUCE, bytes, "test-fluid-bidirectional-ring"),
                {},
                0.01);
            add("derived: star 8 switch" + size,
                sw,
                8,
                Request(CollectiveOp::ALL_REDUCE, bytes, "test-fluid-star"),
                {},
                0.01);
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
        // NCCL's protocols: the prologue and the wire bytes are the same in both forms.
        for (uint64_t bytes : {uint64_t(8 * 1024), uint64_t(MiB), uint64_t(64 * MiB)})
        {
            const std::string size = " " + std::to_string(bytes / 1024) + "KiB";
            add("nccl 8 DGX A100" + size,
                a100nccl,
                8,
                Request(CollectiveOp::ALL_REDUCE, bytes, "auto"),
                {},
                0.01);
        }
        add("hierarchical(nccl) 16 DGX A100 1MiB",
            a100nccl,
            16,
            Request(CollectiveOp::ALL_REDUCE, MiB, "hierarchical"),
            {},
            0.01);
        // 32 nodes: the ring over InfiniBand crosses the spine, its edges' latencies differ,
        // and the all-reduce's two passes keep one connection per neighbour in both forms.
        add("hierarchical(nccl) 256 DGX A100 64KiB",
            a100nccl,
            256,
            Request(CollectiveOp::ALL_REDUCE, 64 * 1024, "hierarchical"),
            {},
            0.01);
        // A derived form in pieces: each member sends two streams at once, one per direction.
        // The test algorithm does not count its messages, so no message floor (-2.3% at 2 MiB).
        for (uint64_t bytes : {2 * MiB, 16 * MiB})
        {
            add("pipelined derived: bidirectional ring 16 switch, 4 pieces "
                    + std::to_string(bytes / MiB) + "MiB",
                sw,
                16,
                Request(CollectiveOp::ALL_REDUCE, bytes, "test-fluid-bidirectional-ring", 4),
                {},
                0.07);
        }
        // Pipelined pieces (hierarchical's default above 1 MiB, a ring split in 8): the pieces
        // carry their bytes in order on their connections and the collective lasts at least
        // its messages' time on the idle network (the latencies and their queueing), within 1%
        // (measured within 0.03%; before that floor 7%: the latency-bound hierarchical cases
        // at 2 MiB were 3.9% and 6.3% faster than the messages, doc/network-model.md).
        for (uint64_t bytes : {2 * MiB, 8 * MiB, 64 * MiB})
        {
            const std::string size = " " + std::to_string(bytes / MiB) + "MiB";
            for (uint32_t gpus : {16u, 64u})
            {
                add("pipelined hierarchical(nccl) " + std::to_string(gpus) + " DGX A100" + size,
                    a100nccl,
                    gpus,
                    Request(CollectiveOp::ALL_REDUCE, bytes, "hierarchical"),
                    {},
                    0.01);
                add("pipelined ring, 8 pieces, " + std::to_string(gpus) + " DGX A100" + size,
                    a100,
                    gpus,
                    Request(CollectiveOp::REDUCE_SCATTER, bytes, "ring", 8),
                    {},
                    0.01);
            }
            // A slow link is in the floor (it walks the network as it is): within 0.01%.
            add("pipelined hierarchical 64 DGX A100, soft fault" + size,
                a100Fault,
                64,
                Request(CollectiveOp::ALL_REDUCE, bytes, "hierarchical"),
                {},
                0.02);
        }
        // Beside a competing transfer the floor ends where the messages' walk ends with the
        // bytes slowed as the streams' were (CollectiveEngine::EndFloor, PairSlowdown): within
        // 2% on one NVLink or on the GPU's InfiniBand rail, alike or a quarter of the size
        // (with the floor of the idle network alone, up to 8% fast: 919.7 against 860.3 us for
        // the NVLink transfer at 64 MiB). A transfer that outlasts the streams but not the
        // messages, whose gaps let it pass sooner, is a backlog of what it had left (a quarter
        // on the rail at 8 MiB: 2.4% slow when it was taken to stay, 0.3% since).
        for (uint64_t bytes : {2 * MiB, 8 * MiB, 64 * MiB})
        {
            const std::string size = " " + std::to_string(bytes / MiB) + "MiB";
            const auto ar = Request(CollectiveOp::ALL_REDUCE, bytes, "hierarchical");
            add("pipelined hierarchical 64 DGX A100, competing on NVLink" + size,
                a100,
                64,
                ar,
                {{0, 1, bytes}},
                0.02);
            add("pipelined hierarchical 64 DGX A100, competing on a rail" + size,
                a100,
                64,
                ar,
                {{0, 8, bytes}},
                0.02);
            add("pipelined hierarchical 64 DGX A100, quarter on a rail" + size,
                a100,
                64,
                ar,
                {{0, 8, bytes / 4}},
                0.02);
            add("pipelined hierarchical 64 DGX A100, quarter on a rail, one on NVLink" + size,
                a100,
                64,
                ar,
                {{0, 8, bytes / 4}, {3, 4, bytes}},
                0.02);
            add("pipelined hierarchical(nccl) 16 DGX A100, quarter on a rail" + size,
                a100nccl,
                16,
                ar,
                {{0, 8, bytes / 4}},
                0.02);
            add("pipelined hierarchical(nccl) 64 DGX A100, quarter on NVLink" + size,
                a100nccl,
                64,
                ar,
                {{0, 1, bytes / 4}},
                0.02);
        }
        // Beyond the message floor's walk (more than 2^20 messages): a flat ring's block
        // crosses NVLink and InfiniBand edges in turn, so its streams' latency term is their
        // mean step, not each edge's own latency at every step (the InfiniBand streams' gave
        // 13.26 ms against the messages' 2.11 ms over 1,024 GPUs at 8 MiB); alike pipelined.
        add("unwalked ring 1024 DGX A100 8MiB",
            a100nccl,
            1024,
            Request(CollectiveOp::ALL_REDUCE, 8 * MiB, "ring"),
            {},
            0.02);
        add("unwalked pipelined ring, 256 pieces, 64 DGX A100 64MiB",
            a100nccl,
            64,
            Request(CollectiveOp::ALL_REDUCE, 64 * MiB, "ring", 256),
            {},
            0.02);
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
            NS_TEST_EXPECT_MSG_LT_OR_EQ(fluid.sends, message.sends, c.name << ": no more sends");
            NS_TEST_EXPECT_MSG_LT(std::abs(ratio - 1),
                                  c.tolerance,
                                  c.name << ": fluid " << fluid.timeS << " s vs messages "
                                         << message.timeS << " s");
        }
    }
};

/**
 * \brief The backend contract's latency count: on the flow network a stream of latency count k
 * is delivered k path latencies after its last byte (a lone 1 MB message at 100 GB/s over a
 * switch with 1 us links and a 130 ns switch: 10 us + k x 2.13 us); the packet network carries
 * messages only and refuses a count other than 1 with a NetworkError, counting nothing.
 */
class LatencyCountTestCase : public TestCase
{
  public:
    LatencyCountTestCase()
        : TestCase("a fluid stream's latency count multiplies its path latency")
    {}

  private:
    void
    DoRun() override
    {
        const NetworkSpec sw = OneDimension(TopologyKind::SWITCH, 4, 100, 1000).SwitchNs(130);
        for (uint32_t k : {1u, 3u, 14u})
        {
            Ptr<FlowNetwork> net = CreateObject<FlowNetwork>();
            net->SetTopology(Topology::Build(sw, 4));
            net->SetRouting(RoutingPolicy::Create(sw.routing));
            NS_TEST_EXPECT_MSG_EQ(net->SupportsFluid(), true, "flow carries streams");
            double at = -1;
            Simulator::ScheduleNow(
                [&]()
                {
                    net->Send(0,
                              1,
                              1000000,
                              NetworkBackend::DeliveryCallback(
                                  [&](uint64_t)
                                  {
                                      at = Simulator::Now().GetSeconds();
                                  }),
                              k);
                });
            Simulator::Run();
            Simulator::Destroy();
            NS_TEST_EXPECT_MSG_EQ_TOL(at, 10e-6 + k * 2.13e-6, 2e-9, "k = " << k);
        }
        Ptr<PacketNetwork> packet = CreateObject<PacketNetwork>();
        packet->SetTopology(Topology::Build(sw, 4));
        packet->SetRouting(RoutingPolicy::Create(sw.routing));
        NS_TEST_EXPECT_MSG_EQ(packet->SupportsFluid(), false, "packet carries messages only");
        bool refused = false;
        try
        {
            packet->Send(0, 1, 1000, NetworkBackend::DeliveryCallback(), 2);
        }
        catch (const NetworkError& e)
        {
            refused = std::string(e.what()).find("latency count") != std::string::npos;
        }
        NS_TEST_EXPECT_MSG_EQ(refused, true, "a latency count on the packet network");
        NS_TEST_EXPECT_MSG_EQ(packet->GetSentCount(), 0u, "nothing counted");
        Simulator::Destroy();
    }
};

/**
 * \brief Pipelined messages on the flow network against the ns-3 packet network (real links,
 * one TCP connection per pair): a pair's messages go in order over its connection, each
 * starting when the one before has left rather than when it arrived, so the pieces fill each
 * other's latencies on the flow network as they do on the packet one. Before (a piece's
 * concurrent messages on one connection shared it, ending together, then all waited a latency),
 * the flow network's messages were 8.4% and 6.7% slower than the packet network's here.
 * Within 1%: the flow network's hierarchical pieces interleave 0.3% faster than the packet
 * network's (2.4% while the packet network's switches stored and forwarded each frame;
 * doc/packet-network.md).
 */
class OrderedMessagesTestCase : public TestCase
{
  public:
    OrderedMessagesTestCase()
        : TestCase("pipelined messages go in order on their connections, as on the packet network")
    {}

  private:
    void
    DoRun() override
    {
        NetworkSpec ring = HardwareSpec::Load("a100-sxm-80gb").network;
        for (auto& d : ring.dimensions)
        {
            d.collective = "ring";
        }
        struct Probe
        {
            std::string name;
            uint32_t gpus;
            CollectiveOp op;
            uint64_t bytes;
            std::string algorithm;
            uint32_t chunks;
        };
        const uint64_t MiB = 1 << 20;
        const std::vector<Probe> probes = {
            {"ring reduce-scatter 8 GPUs 16MiB x 8",
             8,
             CollectiveOp::REDUCE_SCATTER,
             16 * MiB,
             "ring",
             8},
            {"hierarchical(ring) 16 GPUs 2MiB (2 pieces)",
             16,
             CollectiveOp::ALL_REDUCE,
             2 * MiB,
             "hierarchical",
             0},
        };
        for (const auto& p : probes)
        {
            CollectiveProbeConfig config;
            config.gpus = p.gpus;
            config.op = p.op;
            config.bytes = p.bytes;
            config.algorithm = p.algorithm;
            config.chunks = p.chunks;
            config.backend = "flow";
            const double flow = RunCollectiveProbe(ring, config, "test").timeS;
            config.backend = "packet";
            const double packet = RunCollectiveProbe(ring, config, "test").timeS;
            std::printf("%-48s flow %9.3f us  packet %9.3f us  %+.4f\n",
                        p.name.c_str(),
                        flow * 1e6,
                        packet * 1e6,
                        flow / packet - 1);
            NS_TEST_EXPECT_MSG_LT(std::abs(flow / packet - 1),
                                  0.01,
                                  p.name << ": flow " << flow << " s vs packet " << packet << " s");
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
        AddTestCase(new LatencyCountTestCase, TestCase::QUICK);
        AddTestCase(new OrderedMessagesTestCase, TestCase::QUICK);
    }
};

/** The suite's one instance. */
static FluidCollectiveTestSuite g_fluidCollectiveTestSuite;
