/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// The NetworkBackend contract, checked on every backend alike: the flow network, the packet
// network and a third backend defined and registered in this file only (so that a new backend
// needs no edit of ours). Backends are made by name; Send() numbers messages, delivers
// src == dst messages at once, accepts a null callback and reports unknown endpoints as a
// NetworkError; Prepare() calls back when the backend is ready; GetStats() counts messages and
// the bytes every link carried, the same way in every backend.

#include "network-test-spec.h"
#include "ns3/network-backend.h"
#include "ns3/network-error.h"
#include "ns3/simulator-guard.h"
#include "ns3/simulator.h"
#include "ns3/spec-error.h"
#include "ns3/test.h"
#include "ns3/type-registry.h"
#include "recording-routing.h"
#include "test-require.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

using namespace ns3;
using namespace ns3::rapidllm;

namespace {

/**
 * \brief A third backend, registered from this file alone: every message crosses its path at
 * the bandwidth of its narrowest link, alone (no sharing), then pays the path latency.
 */
class SoloNetwork : public NetworkBackend
{
  public:
    /** \return the TypeId */
    static TypeId
    GetTypeId()
    {
        static TypeId tid = TypeId("ns3::rapidllm::TestSoloNetwork")
                                .SetParent<NetworkBackend>()
                                .SetGroupName("RapidLlm")
                                .AddConstructor<SoloNetwork>();
        return tid;
    }

  protected:
    void
    DoSend(uint64_t id,
           uint32_t src,
           uint32_t dst,
           uint64_t bytes,
           const std::vector<uint32_t>& path,
           const DeliveryCallback& onDelivered) override
    {
        double narrowest = 1e300;
        for (uint32_t l : path)
        {
            narrowest = std::min(narrowest, m_topology->GetLink(l).Bandwidth());
            m_bytes[l] += static_cast<double>(bytes);
        }
        const double t = bytes / narrowest + m_topology->PathLatency(path);
        Simulator::Schedule(Seconds(t),
                            [this, id, onDelivered]()
                            {
                                Deliver(id, onDelivered);
                            });
    }

    void
    DoGetStats(NetworkStats& stats) const override
    {
        for (const auto& [l, b] : m_bytes)
        {
            stats.links[l].bytes = b;
        }
    }

  private:
    std::map<uint32_t, double> m_bytes; //!< per link: bytes sent over it
};

/** The third backend's short name, registered here and nowhere else. */
TypeRegistrar<NetworkBackend> g_soloBackend("test-solo", SoloNetwork::GetTypeId());

/** \return a backend by name on a 4-GPU switch (25 GB/s, 500 ns, 100 ns switch) */
Ptr<NetworkBackend>
MakeBackend(const std::string& name, Ptr<Topology>& topology)
{
    NetworkSpec spec = OneDimension(TopologyKind::SWITCH, 4, 25, 500).SwitchNs(100);
    topology = Topology::Build(spec, 4);
    Ptr<NetworkBackend> net = NetworkBackend::Create(name);
    net->SetTopology(topology);
    net->SetRouting(RoutingPolicy::Create("dimension-order"));
    return net;
}

} // namespace

/**
 * \brief Backends by name: the registered short names, TypeId names, and an unknown name
 * rejected with the known ones listed.
 */
class BackendRegistryTestCase : public TestCase
{
  public:
    BackendRegistryTestCase()
        : TestCase("backends are chosen by registered name or TypeId name")
    {}

  private:
    void
    DoRun() override
    {
        const std::vector<std::string> names = NetworkBackend::Names();
        for (const char* n : {"flow", "packet", "test-solo"})
        {
            NS_TEST_ASSERT_MSG_EQ(std::count(names.begin(), names.end(), n), 1, n);
        }
        NS_TEST_ASSERT_MSG_EQ(std::is_sorted(names.begin(), names.end()), true, "sorted");
        NS_TEST_ASSERT_MSG_EQ(NetworkBackend::Create("flow")->GetInstanceTypeId().GetName(),
                              "ns3::rapidllm::FlowNetwork",
                              "flow");
        NS_TEST_ASSERT_MSG_EQ(NetworkBackend::Create("packet")->GetInstanceTypeId().GetName(),
                              "ns3::rapidllm::PacketNetwork",
                              "packet");
        NS_TEST_ASSERT_MSG_EQ(
            NetworkBackend::Create("ns3::rapidllm::FlowNetwork")->GetInstanceTypeId().GetName(),
            "ns3::rapidllm::FlowNetwork",
            "TypeId name");
        std::string what;
        std::string field;
        try
        {
            NetworkBackend::Create("carrier-pigeon");
        }
        catch (const SpecError& e)
        {
            what = e.what();
            field = e.GetField();
        }
        NS_TEST_ASSERT_MSG_EQ(field, "backend", "the field, not a command-line flag");
        for (const char* needle : {"carrier-pigeon", "flow", "packet", "test-solo"})
        {
            NS_TEST_ASSERT_MSG_NE(what.find(needle), std::string::npos, what);
        }
    }
};

/**
 * \brief What Send() and Prepare() promise, on one backend: ids from 0 in order; a src == dst
 * message delivered at the instant it was sent, through the MessageDelivered trace too; a
 * null callback accepted; an unknown endpoint or a backend without topology a NetworkError
 * (counting nothing); Prepare() calling back when ready, before any later message is sent.
 */
class BackendContractTestCase : public TestCase
{
  public:
    /** \param backend the backend's name */
    explicit BackendContractTestCase(const std::string& backend)
        : TestCase("the NetworkBackend contract holds for " + backend)
        , m_backend(backend)
    {}

  private:
    void
    DoRun() override
    {
        {
            Ptr<NetworkBackend> bare = NetworkBackend::Create(m_backend);
            bool threw = false;
            try
            {
                bare->Send(0, 1, 10, NetworkBackend::DeliveryCallback());
            }
            catch (const NetworkError&)
            {
                threw = true;
            }
            NS_TEST_ASSERT_MSG_EQ(threw, true, "no topology: NetworkError");
            NS_TEST_ASSERT_MSG_EQ(bare->GetSentCount(), 0u, "nothing counted");
        }
        Ptr<Topology> topology;
        Ptr<NetworkBackend> net = MakeBackend(m_backend, topology);
        SimulatorGuard guard;
        guard.Dispose(net);
        std::vector<std::pair<uint64_t, double>> delivered; // id, time
        std::vector<std::pair<uint64_t, double>> traced;    // id, latency
        net->TraceConnectWithoutContext(
            "MessageDelivered",
            Callback<void, uint64_t, uint32_t, uint32_t, uint64_t, double>(
                [&traced](uint64_t id, uint32_t, uint32_t, uint64_t, double latency)
                {
                    traced.emplace_back(id, latency);
                }));
        auto record = NetworkBackend::DeliveryCallback(
            [&delivered](uint64_t id)
            {
                delivered.emplace_back(id, Simulator::Now().GetSeconds());
            });
        double readyAt = -1;
        std::vector<uint64_t> ids;
        bool unknownThrew = false;
        uint64_t sentBefore = 0;
        net->Prepare({{0, 2}},
                     Callback<void>(
                         [&]()
                         {
                             readyAt = Simulator::Now().GetSeconds();
                             ids.push_back(net->Send(3, 3, 1000, record));    // local
                             ids.push_back(net->Send(0, 2, 1 << 20, record)); // remote
                             ids.push_back(
                                 net->Send(1, 3, 4096, NetworkBackend::DeliveryCallback()));
                             sentBefore = net->GetSentCount();
                             try
                             {
                                 net->Send(0, 9, 10, record);
                             }
                             catch (const NetworkError& e)
                             {
                                 unknownThrew =
                                     std::string(e.what()).find("endpoint 9") != std::string::npos;
                             }
                         }));
        Simulator::Stop(Seconds(1));
        Simulator::Run();
        NS_TEST_ASSERT_MSG_GT_OR_EQ(readyAt, 0, "Prepare called back");
        RAPIDLLM_REQUIRE_EQ(ids.size(), 3u, "three sends");
        for (uint64_t i = 0; i < ids.size(); ++i)
        {
            NS_TEST_ASSERT_MSG_EQ(ids[i], i, "ids from 0 in send order");
        }
        NS_TEST_ASSERT_MSG_EQ(unknownThrew, true, "unknown endpoint: NetworkError naming it");
        NS_TEST_ASSERT_MSG_EQ(net->GetSentCount(), sentBefore, "the failed send counts nothing");
        RAPIDLLM_REQUIRE_EQ(delivered.size(), 2u, "two callbacks (one was null)");
        NS_TEST_ASSERT_MSG_EQ(delivered[0].first, ids[0], "the local message first");
        NS_TEST_ASSERT_MSG_EQ(delivered[0].second, readyAt, "at the instant it was sent");
        NS_TEST_ASSERT_MSG_EQ(delivered[1].first, ids[1], "then the remote one");
        // 1 MiB at 25 GB/s at least, plus two links and a switch; less the rounding of a
        // packet network's frame times to the nanosecond clock here (half a nanosecond for
        // each of the 259 frames at most).
        NS_TEST_ASSERT_MSG_GT_OR_EQ(
            delivered[1].second - readyAt, (1 << 20) / 25e9 + 1.1e-6 - 259 * 0.5e-9, "cost");
        RAPIDLLM_REQUIRE_EQ(traced.size(), 3u, "every delivery traced, null callback too");
        NS_TEST_ASSERT_MSG_EQ(traced[0].second, 0.0, "local latency 0");
        const NetworkStats stats = net->GetStats();
        NS_TEST_ASSERT_MSG_EQ(stats.messagesSent, 3u, "sent");
        NS_TEST_ASSERT_MSG_EQ(stats.messagesDelivered, 3u, "delivered");
        RAPIDLLM_REQUIRE_EQ(stats.links.size(), topology->GetLinkCount(), "every link");
        // The counters alone (a progress line's, cheap on millions of links): the same counts.
        const NetworkStats counters = net->GetCounters();
        NS_TEST_ASSERT_MSG_EQ(counters.messagesSent, 3u, "counters: sent");
        NS_TEST_ASSERT_MSG_EQ(counters.messagesDelivered, 3u, "counters: delivered");
        NS_TEST_ASSERT_MSG_EQ(counters.windowS, stats.windowS, "counters: the same window");
        NS_TEST_ASSERT_MSG_EQ(counters.links.empty(), true, "counters: no per-link entries");
        // Bytes per link: 1 MiB on gpu0's uplink and the switch's link to gpu2, 4 KiB on
        // gpu1 > switch > gpu3, nothing elsewhere (the local message crosses no link).
        std::map<uint32_t, double> expected;
        for (const auto& [a, b, bytes] :
             std::vector<std::tuple<uint32_t, uint32_t, double>>{{0, 2, 1 << 20}, {1, 3, 4096}})
        {
            for (uint32_t l : RoutingPolicy::Create("dimension-order")->Route(*topology, a, b, 0))
            {
                expected[l] += bytes;
            }
        }
        for (const auto& s : stats.links)
        {
            NS_TEST_ASSERT_MSG_EQ(s.bytes, expected[s.link], s.name);
            NS_TEST_ASSERT_MSG_EQ(s.name, topology->DescribeLink(s.link), "named");
            if (s.bytes > 0)
            {
                NS_TEST_ASSERT_MSG_EQ_TOL(s.utilization,
                                          s.bytes / (25e9 * stats.windowS),
                                          1e-12,
                                          "utilization over the window " << s.name);
            }
        }
        RAPIDLLM_REQUIRE_EQ(stats.MostLoaded(5).size(), 4u, "four links carried bytes");
    }

    std::string m_backend; //!< backend name
};

/**
 * \brief The routing policy is given Send's flow id when there is one (a name of the message
 * that does not depend on the order of sends), else the message id; on every backend.
 */
class BackendFlowIdTestCase : public TestCase
{
  public:
    /** \param backend the backend's name */
    explicit BackendFlowIdTestCase(const std::string& backend)
        : TestCase("Send's flow id is what the routing policy sees on " + backend)
        , m_backend(backend)
    {}

  private:
    void
    DoRun() override
    {
        Ptr<Topology> topology;
        Ptr<NetworkBackend> net = MakeBackend(m_backend, topology);
        Ptr<RecordingRouting> routing = CreateObject<RecordingRouting>();
        net->SetRouting(routing);
        SimulatorGuard guard;
        guard.Dispose(net);
        uint64_t named = 0;
        uint64_t unnamed = 0;
        net->Prepare(
            {{0, 2}},
            Callback<void>(
                [&]()
                {
                    routing->SetRecording(true);
                    named = net->Send(
                        0, 2, 4096, NetworkBackend::DeliveryCallback(), 1, 0, false, false, 77);
                    unnamed = net->Send(1, 3, 4096, NetworkBackend::DeliveryCallback());
                }));
        Simulator::Stop(Seconds(1));
        Simulator::Run();
        NS_TEST_ASSERT_MSG_EQ(net->GetDeliveredCount(), 2u, "both delivered");
        std::set<RecordingRouting::Question> asked(routing->GetQuestions().begin(),
                                                   routing->GetQuestions().end());
        NS_TEST_EXPECT_MSG_EQ(asked.count({0, 2, 77}), 1u, "the named message: its flow id");
        NS_TEST_EXPECT_MSG_EQ(asked.count({0, 2, named}), 0u, "not its message id");
        NS_TEST_EXPECT_MSG_EQ(asked.count({1, 3, unnamed}), 1u, "the other: its message id");
    }

    std::string m_backend; //!< backend name
};

/** \brief The backend contract's test suite. */
class NetworkBackendTestSuite : public TestSuite
{
  public:
    NetworkBackendTestSuite()
        : TestSuite("rapid-llm-network-backend", UNIT)
    {
        AddTestCase(new BackendRegistryTestCase, TestCase::QUICK);
        for (const char* b : {"flow", "packet", "test-solo"})
        {
            AddTestCase(new BackendContractTestCase(b), TestCase::QUICK);
            AddTestCase(new BackendFlowIdTestCase(b), TestCase::QUICK);
        }
    }
};

static NetworkBackendTestSuite g_networkBackendTestSuite;
