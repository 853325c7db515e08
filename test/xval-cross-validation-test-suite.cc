/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// Cross-validation: the quick workloads of `rapid-llm xval` (ring all-reduce, all-to-all on a
// switch and on a 2:1 fat tree, incast, torus all-reduce healthy / degraded / with a dead
// link, a pipeline chain) complete on the flow-level and the ns-3 packet-level networks
// within 5% of each other, losslessly, with the same messages.

#include "network-test-spec.h"
#include "ns3/collective-engine.h"
#include "ns3/collective-probe.h"
#include "ns3/config.h"
#include "ns3/cross-validation.h"
#include "ns3/hardware-spec.h"
#include "ns3/network-backend.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/test.h"
#include "recording-routing.h"

#include <cmath>
#include <set>

using namespace ns3;
using namespace ns3::rapidllm;

/**
 * \brief One quick workload on both backends: completion times within 5%, the same number
 * of messages, data packets carried and none dropped.
 */
class XvalWorkloadTestCase : public TestCase
{
  public:
    /** \param workload the workload */
    explicit XvalWorkloadTestCase(const XvalWorkload& workload)
        : TestCase("flow and packet agree on " + workload.name)
        , m_workload(workload)
    {}

  private:
    void
    DoRun() override
    {
        XvalRow row = CrossValidate(m_workload);
        NS_TEST_ASSERT_MSG_GT(row.flow.timeS, 0, "flow time");
        NS_TEST_ASSERT_MSG_GT(row.packet.timeS, 0, "packet time");
        NS_TEST_ASSERT_MSG_EQ(row.flow.messages, row.packet.messages, "same message sequence");
        NS_TEST_ASSERT_MSG_GT(row.packet.dataPackets, row.packet.messages, "packets carried");
        NS_TEST_ASSERT_MSG_EQ(row.packet.drops, 0, "lossless fabric");
        NS_TEST_ASSERT_MSG_LT_OR_EQ(std::fabs(row.relDiff),
                                    0.05,
                                    m_workload.name << ": flow " << row.flow.timeS * 1e6
                                                    << " us, packet " << row.packet.timeS * 1e6
                                                    << " us");
    }

    XvalWorkload m_workload; //!< what to run
};

/**
 * \brief The one mechanism that separated the backends on latency-bound rings: an ns-3 node
 * stores and forwards each frame, where the switches modelled cut through. With the packet
 * network's switches cutting through (its default) the flow model's time holds to under a tenth
 * of a frame per step; storing and forwarding adds a frame on about a quarter of the steps.
 * This pins the sign and size of the gap (doc/packet-network.md) so that a change to either
 * model that moves it shows up here.
 */
class XvalKnownGapTestCase : public TestCase
{
  public:
    XvalKnownGapTestCase()
        : TestCase("switches cut through; store-and-forward adds a frame on a quarter of steps")
    {}

  private:
    void
    DoRun() override
    {
        // ring-allreduce-16gpu crosses one InfiniBand leaf switch per inter-node step.
        for (const auto& w : XvalWorkloads(true))
        {
            if (w.name != "ring-allreduce-16gpu-1MiB")
            {
                continue;
            }
            // With Simple's long steps (the preset's link latencies before NCCL's protocols:
            // 3.4 us per NVLink step, 9.6 us per network step) the steps queue on the network
            // edge, several in flight (a step waits only for what it received, not for its
            // previous message to land), so a stored-and-forwarded frame is paid on about a
            // quarter of them (0.255 measured; a frame on every step while each step also
            // waited for its previous message to land).
            XvalWorkload old = w;
            for (auto& d : old.network.dimensions)
            {
                d.latencyS = d.kind == TopologyKind::FAT_TREE ? 4735e-9 : 1700e-9;
            }
            const double frame = 4098 / (25e9 * 0.94 * 4044 / 4098); // the default MTU, 4096
            const double steps = 2 * (16 - 1);
            XvalRow cut = CrossValidate(old);
            NS_TEST_EXPECT_MSG_LT(std::fabs(cut.packet.timeS - cut.flow.timeS) / (steps * frame),
                                  0.1,
                                  "cut-through: the flow model's time");
            const std::string forwarding = "ns3::rapidllm::PacketNetwork::SwitchForwarding";
            Config::SetDefault(forwarding, StringValue("store-and-forward"));
            XvalRow stored = CrossValidate(old);
            Config::SetDefault(forwarding, StringValue("cut-through"));
            NS_TEST_EXPECT_MSG_EQ_TOL((stored.packet.timeS - stored.flow.timeS) / (steps * frame),
                                      0.25,
                                      0.1,
                                      "store-and-forward: a frame on a quarter of the steps");
            return;
        }
        NS_TEST_ASSERT_MSG_EQ(true, false, "workload ring-allreduce-16gpu-1MiB is missing");
    }
};

/**
 * \brief Under a per-flow policy (a hashed intermediate GPU, as Valiant routing picks one) a
 * collective's messages take the same paths on both backends: each message's flow id is named
 * by its collective and step (CollectiveRequest::flow), not by the order the backends happen to
 * send in. A message sent before the collective on the flow network, which moves every message
 * id by one, changes nothing. (With message ids as flow ids, the two backends routed 28 and 32
 * of the 112 messages of this all-reduce straight.)
 */
class XvalSameRoutesTestCase : public TestCase
{
  public:
    XvalSameRoutesTestCase()
        : TestCase("a per-flow policy routes a collective's messages alike on both backends")
    {}

  private:
    /** The forward routing questions of one run: (src, dst, flow id). */
    typedef std::set<RecordingRouting::Question> Questions;

    /**
     * \param backend "flow" or "packet" \param shift send one message first
     * \return the questions asked for the ring's pairs while the collective ran
     */
    static Questions
    Run(const std::string& backend, bool shift)
    {
        const uint32_t n = 8;
        Ptr<Topology> topology =
            Topology::Build(OneDimension(TopologyKind::SWITCH, n, 300, 700).SwitchNs(100), n);
        Ptr<RecordingRouting> routing = CreateObject<RecordingRouting>();
        Ptr<NetworkBackend> net = NetworkBackend::Create(backend);
        net->SetTopology(topology);
        net->SetRouting(routing);
        Ptr<CollectiveEngine> engine = CreateObject<CollectiveEngine>();
        engine->SetBackend(net);
        CollectiveRequest request;
        request.op = CollectiveOp::ALL_REDUCE;
        request.bytes = 4 << 20;
        request.algorithm = "ring";
        request.flow = 5;
        std::vector<std::pair<uint32_t, uint32_t>> pairs;
        for (uint32_t i = 0; i < n; ++i)
        {
            request.endpoints.push_back(i);
            pairs.emplace_back(i, (i + 1) % n);
        }
        net->Prepare(pairs,
                     Callback<void>(
                         [&]()
                         {
                             routing->SetRecording(true);
                             if (shift)
                             {
                                 net->Send(0, 4, 1, NetworkBackend::DeliveryCallback());
                             }
                             engine->Start(request,
                                           CollectiveEngine::RankDoneCallback(),
                                           CollectiveEngine::DoneCallback());
                         }));
        Simulator::Stop(Seconds(1));
        Simulator::Run();
        Questions asked;
        for (const auto& q : routing->GetQuestions())
        {
            // the ring's pairs only (not the packet network's ACK paths, nor the shift)
            if (std::get<1>(q) == (std::get<0>(q) + 1) % n)
            {
                asked.insert(q);
            }
        }
        engine->Dispose();
        net->Dispose();
        Simulator::Destroy();
        return asked;
    }

    void
    DoRun() override
    {
        const Questions flow = Run("flow", false);
        NS_TEST_ASSERT_MSG_EQ(flow.size(), 112u, "one flow id per message, 2 (n - 1) n messages");
        NS_TEST_EXPECT_MSG_EQ((Run("flow", true) == flow), true, "message ids do not matter");
        NS_TEST_EXPECT_MSG_EQ((Run("packet", false) == flow), true, "the same on packets");
    }
};

/**
 * \brief A double binary tree's two trees run on channels of their own: where both trees join
 * the same two GPUs (8 GPUs: 1-2 and 5-6), one tree's piece does not queue behind the other's
 * on the pair's TCP connection, as it does not on the flow network (the packet network took
 * 117.6 us against 104.7 for 16 MiB on 8 H100 while it did).
 */
class XvalTreeChannelsTestCase : public TestCase
{
  public:
    XvalTreeChannelsTestCase()
        : TestCase("a double binary tree's two trees do not wait for each other on a pair")
    {}

  private:
    void
    DoRun() override
    {
        const NetworkSpec h100 = HardwareSpec::Load("h100-sxm-80gb").network;
        // 3 GPUs, 1 MiB: the second tree's connection is prepared with the first's (it opened
        // inside the timed run: 10.35 us against 8.06).
        for (const auto& [gpus, bytes] :
             {std::make_pair(8u, uint64_t(16) << 20), std::make_pair(3u, uint64_t(1) << 20)})
        {
            CollectiveProbeConfig c;
            c.bytes = bytes;
            c.gpus = gpus;
            c.algorithm = "double-binary-tree";
            const double flow = RunCollectiveProbe(h100, c).timeS;
            c.backend = "packet";
            const double packet = RunCollectiveProbe(h100, c).timeS;
            NS_TEST_EXPECT_MSG_EQ_TOL(packet / flow, 1.0, 0.03, gpus << " GPUs, flow " << flow);
        }
    }
};

/** \brief The cross-validation suite (the --quick rows). */
class XvalTestSuite : public TestSuite
{
  public:
    XvalTestSuite()
        : TestSuite("rapid-llm-xval", UNIT)
    {
        for (const auto& w : XvalWorkloads(true))
        {
            AddTestCase(new XvalWorkloadTestCase(w), TestCase::QUICK);
        }
        AddTestCase(new XvalKnownGapTestCase, TestCase::QUICK);
        AddTestCase(new XvalSameRoutesTestCase, TestCase::QUICK);
        AddTestCase(new XvalTreeChannelsTestCase, TestCase::QUICK);
    }
};

static XvalTestSuite g_xvalTestSuite;
