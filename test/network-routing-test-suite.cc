/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// Topology and routing: the graph a network spec builds (nodes, links, coordinates), fault
// selectors, the routing policies' paths (dimension order, shortest path, ECMP, fault aware),
// unreachable pairs named in the error, and policies chosen and registered by name.

#include "ns3/dimension-order-routing.h"
#include "ns3/flow-network.h"
#include "ns3/hardware-spec.h"
#include "ns3/network-error.h"
#include "ns3/routing-policy.h"
#include "ns3/simulator.h"
#include "ns3/spec-error.h"
#include "ns3/test.h"
#include "ns3/topology.h"
#include "spec-error-check.h"
#include "test-require.h"

#include <map>
#include <set>

using namespace ns3;
using namespace ns3::rapidllm;

namespace {

/** \return a dimension spec */
NetworkDimensionSpec
Dim(const std::string& name, TopologyKind kind, uint32_t size, std::vector<uint32_t> shape = {})
{
    NetworkDimensionSpec d;
    d.name = name;
    d.kind = kind;
    d.size = size;
    d.shape = shape;
    d.bandwidthBps = 10e9;
    d.latencyS = 1e-6;
    return d;
}

} // namespace

/** \brief Node, link and coordinate counts of the kinds and of a DGX-style composition. */
class TopologyBuildTestCase : public TestCase
{
  public:
    TopologyBuildTestCase()
        : TestCase("topologies have the expected nodes, links and coordinates")
    {}

  private:
    void
    DoRun() override
    {
        struct Row
        {
            TopologyKind kind;
            uint32_t size;
            std::vector<uint32_t> shape;
            uint32_t nodes;
            uint32_t links;
        };

        const Row rows[] = {
            {TopologyKind::RING, 8, {}, 8, 16},
            {TopologyKind::RING, 2, {}, 2, 2},
            {TopologyKind::FULLY_CONNECTED, 5, {}, 5, 20},
            {TopologyKind::SWITCH, 8, {}, 9, 16},
            {TopologyKind::MESH, 12, {4, 3}, 12, 2 * (3 * 3 + 4 * 2)},
            {TopologyKind::TORUS, 16, {4, 4}, 16, 2 * 32},
            {TopologyKind::TORUS, 27, {3, 3, 3}, 27, 2 * 81},
        };
        for (const auto& row : rows)
        {
            NetworkSpec s;
            s.dimensions.push_back(Dim("d", row.kind, row.size, row.shape));
            Ptr<Topology> t = Topology::Build(s, 0);
            NS_TEST_ASSERT_MSG_EQ(t->GetNodeCount(), row.nodes, ToString(row.kind) << " nodes");
            NS_TEST_ASSERT_MSG_EQ(t->GetLinkCount(), row.links, ToString(row.kind) << " links");
        }
        // Fat tree: 16 hosts, leaves of 4, 2:1 -> 2 spines with 2x bandwidth uplinks.
        NetworkSpec ft;
        ft.dimensions.push_back(Dim("ib", TopologyKind::FAT_TREE, 16));
        ft.dimensions[0].leafSize = 4;
        ft.dimensions[0].oversubscription = 2;
        Ptr<Topology> f = Topology::Build(ft, 0);
        NS_TEST_ASSERT_MSG_EQ(f->GetNodeCount(), 16u + 4u + 2u, "fat tree nodes");
        NS_TEST_ASSERT_MSG_EQ(f->GetLinkCount(), 2u * (16 + 4 * 2), "fat tree links");
        uint32_t up =
            f->FindLink(f->LookupNode("ib.leaf0.0", "t"), f->LookupNode("ib.spine0.1", "t"));
        NS_TEST_ASSERT_MSG_EQ_TOL(f->GetLink(up).lineRateBps, 10e9, 1, "uplink = 4 x 10 / (2 x 2)");

        // DGX-style: NVSwitch of 8 inside a node x fat tree across nodes (rail-optimized: GPU
        // k of every node on fat tree instance k). 20 GPUs -> 3 nodes (auto size).
        NetworkSpec dgx;
        dgx.dimensions.push_back(Dim("nvlink", TopologyKind::SWITCH, 8));
        dgx.dimensions.push_back(Dim("ib", TopologyKind::FAT_TREE, 0));
        Ptr<Topology> d = Topology::Build(dgx, 20);
        NS_TEST_ASSERT_MSG_EQ(d->GetEndpointCount(), 24u, "auto size rounds up to whole nodes");
        NS_TEST_ASSERT_MSG_EQ(d->GetCoordinate(19, 0), 3u, "GPU 19 is GPU 3 of its node");
        NS_TEST_ASSERT_MSG_EQ(d->GetCoordinate(19, 1), 2u, "GPU 19 is in node 2");
        NS_TEST_ASSERT_MSG_EQ(d->GetInstance(19, 1), 3u, "GPU 19 is on rail 3");
        NS_TEST_ASSERT_MSG_EQ(d->WithCoordinate(19, 1, 0), 3u, "its rail peer in node 0");
        NS_TEST_ASSERT_MSG_EQ(ThrowsWith(
                                  [&]()
                                  {
                                      Topology::Build(dgx, 0);
                                  },
                                  {"auto"}),
                              true,
                              "auto size without a GPU count");
    }
};

/** \brief Fault selectors: both directions, one direction, bad names and missing links. */
class FaultSelectorTestCase : public TestCase
{
  public:
    FaultSelectorTestCase()
        : TestCase("fault selectors degrade or remove the named links and reject bad ones")
    {}

  private:
    void
    DoRun() override
    {
        NetworkSpec s;
        s.dimensions.push_back(Dim("nv", TopologyKind::SWITCH, 4));
        s.dimensions.push_back(Dim("ring", TopologyKind::RING, 4));
        s.faults.push_back({"gpu0-nv.sw0", 0.5});
        s.faults.push_back({"4>8", 0});
        Ptr<Topology> t = Topology::Build(s, 0);
        uint32_t sw = t->LookupNode("nv.sw0", "t");
        NS_TEST_ASSERT_MSG_EQ_TOL(t->GetLink(t->FindLink(0, sw)).factor, 0.5, 1e-12, "up");
        NS_TEST_ASSERT_MSG_EQ_TOL(t->GetLink(t->FindLink(sw, 0)).factor, 0.5, 1e-12, "down");
        NS_TEST_ASSERT_MSG_EQ(t->GetLink(t->FindLink(4, 8)).IsAlive(), false, "4>8 dead");
        NS_TEST_ASSERT_MSG_EQ(t->GetLink(t->FindLink(8, 4)).IsAlive(), true, "8>4 alive");
        NS_TEST_ASSERT_MSG_EQ(ThrowsWith(
                                  [&]()
                                  {
                                      t->ApplyFault("gpu0-gpu1", 0.5, "hw.yaml");
                                  },
                                  {"hw.yaml", "no link joins gpu0 and gpu1", "nv.sw0"}),
                              true,
                              "no direct link between GPUs behind a switch");
        NS_TEST_ASSERT_MSG_EQ(ThrowsWith(
                                  [&]()
                                  {
                                      t->ApplyFault("gpu0-gpu99", 0.5, "hw.yaml");
                                  },
                                  {"unknown node 'gpu99'"}),
                              true,
                              "unknown node");
        NS_TEST_ASSERT_MSG_EQ(ThrowsWith(
                                  [&]()
                                  {
                                      t->ApplyFault("-gpu0", 0.5, "hw.yaml");
                                  },
                                  {"A-B", "'A'"}),
                              true,
                              "not a selector");
        // A node alone: every link to and from it (a switch down); a dimension name with '-'.
        NetworkSpec s2;
        s2.dimensions.push_back(Dim("nv-link", TopologyKind::SWITCH, 4));
        Ptr<Topology> t2 = Topology::Build(s2, 0);
        RAPIDLLM_REQUIRE_EQ(t2->ApplyFault("nv-link.sw0", 0, "t").size(), 8u, "switch down");
        NS_TEST_ASSERT_MSG_EQ(
            t2->ApplyFault("gpu1-nv-link.sw0", 1, "t").size(), 2u, "a '-' inside a node name");
        NS_TEST_ASSERT_MSG_EQ(t2->GetLink(t2->FindLink(1, 4)).IsAlive(), true, "revived");
        NS_TEST_ASSERT_MSG_EQ(t2->GetLink(t2->FindLink(0, 4)).IsAlive(), false, "still dead");
    }
};

/** \brief Paths chosen by each policy on a torus, a ring and a fat tree. */
class RoutingPathsTestCase : public TestCase
{
  public:
    RoutingPathsTestCase()
        : TestCase("routing policies choose the expected paths")
    {}

  private:
    void
    DoRun() override
    {
        NetworkSpec s;
        s.dimensions.push_back(Dim("t", TopologyKind::TORUS, 16, {4, 4}));
        Ptr<Topology> t = Topology::Build(s, 0);
        Ptr<RoutingPolicy> dor = RoutingPolicy::Create("dimension-order");
        // (0,0) -> (3,2): X first the short way round (0 -> 3 by the wrap link), then Y +2.
        NS_TEST_ASSERT_MSG_EQ(t->DescribePath(dor->Route(*t, 0, 11, 0)),
                              "gpu0>gpu3>gpu7>gpu11",
                              "XY routing with wrap-around");
        Ptr<RoutingPolicy> sp = RoutingPolicy::Create("shortest-path");
        RAPIDLLM_REQUIRE_EQ(sp->Route(*t, 0, 11, 0).size(), 3u, "shortest path has 3 hops");

        // Dead link on the XY path: dimension order goes the long way round the X ring, fault
        // aware and shortest path detour through Y.
        t->ApplyFault("gpu0-gpu1", 0, "test");
        NS_TEST_ASSERT_MSG_EQ(t->DescribePath(dor->Route(*t, 0, 1, 0)),
                              "gpu0>gpu3>gpu2>gpu1",
                              "dimension order falls back to the other direction");
        Ptr<RoutingPolicy> fa = RoutingPolicy::Create("fault-aware");
        RAPIDLLM_REQUIRE_EQ(fa->Route(*t, 0, 1, 0).size(), 3u, "fault aware detours in 3 hops");
        // A degraded (not dead) link: shortest path keeps it, fault aware avoids it when a
        // detour is cheaper than 1/factor hops.
        t->ApplyFault("gpu0-gpu1", 0.2, "test");
        RAPIDLLM_REQUIRE_EQ(sp->Route(*t, 0, 1, 0).size(), 1u, "shortest path keeps it");
        RAPIDLLM_REQUIRE_EQ(fa->Route(*t, 0, 1, 0).size(), 3u, "fault aware avoids it");

        // ECMP spreads flows between two leaves over every spine.
        NetworkSpec ft;
        ft.dimensions.push_back(Dim("ib", TopologyKind::FAT_TREE, 16));
        ft.dimensions[0].leafSize = 4;
        Ptr<Topology> f = Topology::Build(ft, 0);
        Ptr<RoutingPolicy> ecmp = RoutingPolicy::Create("ecmp");
        std::set<uint32_t> spines;
        for (uint64_t flow = 0; flow < 64; ++flow)
        {
            auto path = ecmp->Route(*f, 0, 15, flow);
            RAPIDLLM_REQUIRE_EQ(path.size(), 4u, "host-leaf-spine-leaf-host");
            spines.insert(f->GetLink(path[1]).dst);
        }
        RAPIDLLM_REQUIRE_EQ(spines.size(), 4u, "all four spines used");
        // Dimension order on a fat tree: D-mod-k, the spine is the destination modulo 4.
        auto path = dor->Route(*f, 0, 13, 0);
        NS_TEST_ASSERT_MSG_EQ(f->GetNode(f->GetLink(path[1]).dst).name, "ib.spine0.1", "D-mod-k");
    }
};

namespace {
/** \return a 2:1 fat tree of 16 hosts: 4 leaves of 4, 2 spines, 10 GB/s host links */
Ptr<Topology>
FatTree2To1()
{
    NetworkSpec ft;
    ft.dimensions.push_back(Dim("ib", TopologyKind::FAT_TREE, 16));
    ft.dimensions[0].leafSize = 4;
    ft.dimensions[0].oversubscription = 2;
    return Topology::Build(ft, 0);
}
} // namespace

/**
 * \brief Shortest-path and fault-aware routing spread a leaf's traffic over the spines: in an
 * all-to-all on a 2:1 fat tree every leaf uplink and every spine downlink carries the same
 * number of flows (as D-mod-k does), and one source reaches the other leaves through both
 * spines. Every path is a shortest one (4 hops between leaves).
 */
class EqualCostSpreadTestCase : public TestCase
{
  public:
    EqualCostSpreadTestCase()
        : TestCase("shortest-path and fault-aware spread over the equal-cost spines")
    {}

  private:
    void
    DoRun() override
    {
        Ptr<Topology> t = FatTree2To1();
        for (const std::string name : {"shortest-path", "fault-aware", "dimension-order"})
        {
            Ptr<RoutingPolicy> p = RoutingPolicy::Create(name);
            std::map<uint32_t, uint32_t> flowsOnLink;
            std::set<uint32_t> spinesFromHost0;
            for (uint32_t a = 0; a < 16; ++a)
            {
                for (uint32_t b = 0; b < 16; ++b)
                {
                    if (a == b)
                    {
                        continue;
                    }
                    auto path = p->Route(*t, a, b, a * 16 + b);
                    RAPIDLLM_REQUIRE_EQ(path.size(),
                                        (a / 4 == b / 4 ? 2u : 4u),
                                        name << ": shortest path " << a << " to " << b);
                    for (uint32_t l : path)
                    {
                        ++flowsOnLink[l];
                    }
                    if (a == 0 && path.size() == 4)
                    {
                        spinesFromHost0.insert(t->GetLink(path[1]).dst);
                    }
                }
            }
            RAPIDLLM_REQUIRE_EQ(spinesFromHost0.size(), 2u, name << ": host 0 uses both spines");
            // Between switches: 4 hosts x 12 remote destinations = 48 flows per leaf, 24 per
            // uplink when split evenly; likewise 24 per spine downlink.
            uint32_t least = 1000;
            uint32_t most = 0;
            for (uint32_t l = 0; l < t->GetLinkCount(); ++l)
            {
                const auto& link = t->GetLink(l);
                if (t->GetNode(link.src).isSwitch && t->GetNode(link.dst).isSwitch)
                {
                    least = std::min(least, flowsOnLink[l]);
                    most = std::max(most, flowsOnLink[l]);
                }
            }
            NS_TEST_ASSERT_MSG_EQ(least, 24u, name << ": least loaded switch link");
            NS_TEST_ASSERT_MSG_EQ(most, 24u, name << ": most loaded switch link");
        }
        // A torus: the minimal paths from one source to the far corner differ by destination.
        NetworkSpec s;
        s.dimensions.push_back(Dim("t", TopologyKind::TORUS, 16, {4, 4}));
        Ptr<Topology> torus = Topology::Build(s, 0);
        Ptr<RoutingPolicy> sp = RoutingPolicy::Create("shortest-path");
        std::set<uint32_t> firstHops;
        for (uint32_t b : {5u, 6u, 9u, 10u})
        {
            auto path = sp->Route(*torus, 0, b, 0);
            RAPIDLLM_REQUIRE_EQ(path.size(),
                                (b % 4 == 2 ? 2u : 1u) + (b / 4 == 2 ? 2u : 1u),
                                "minimal torus path to " << b);
            firstHops.insert(path[0]);
        }
        NS_TEST_ASSERT_MSG_GT(firstHops.size(), 1u, "torus paths leave gpu0 by different links");
    }
};

/**
 * \brief All-to-all on the 2:1 fat tree, flow backend: shortest-path and fault-aware take the
 * time of D-mod-k (dimension-order): uplink-bound, each leaf sends 4 x 12 x S bytes over 2
 * uplinks of 10 GB/s, so 2.4 S / (1 GB/s) plus the 4-hop latency; through one spine it would
 * take twice that.
 */
class EqualCostAllToAllTestCase : public TestCase
{
  public:
    EqualCostAllToAllTestCase()
        : TestCase("all-to-all on a 2:1 fat tree: shortest-path and fault-aware match D-mod-k")
    {}

  private:
    /** \return the all-to-all time of S bytes per pair under a policy */
    static double
    AllToAll(const std::string& routing, uint64_t bytes)
    {
        Ptr<Topology> t = FatTree2To1();
        Ptr<FlowNetwork> net = CreateObject<FlowNetwork>();
        net->SetTopology(t);
        net->SetRouting(RoutingPolicy::Create(routing));
        double last = 0;
        Simulator::Schedule(Seconds(0),
                            [&]()
                            {
                                for (uint32_t a = 0; a < 16; ++a)
                                {
                                    for (uint32_t b = 0; b < 16; ++b)
                                    {
                                        if (a != b)
                                        {
                                            net->Send(a,
                                                      b,
                                                      bytes,
                                                      [&](uint64_t)
                                                      {
                                                          last = Simulator::Now().GetSeconds();
                                                      });
                                        }
                                    }
                                }
                            });
        Simulator::Run();
        Simulator::Destroy();
        return last;
    }

    void
    DoRun() override
    {
        const uint64_t s = 100000000; // 100 MB per pair
        const double expected = 2.4 * s / 1e9 + 4e-6;
        const double dmodk = AllToAll("dimension-order", s);
        NS_TEST_ASSERT_MSG_EQ_TOL(dmodk, expected, 1e-6 * expected, "D-mod-k: uplink bound");
        for (const std::string name : {"shortest-path", "fault-aware"})
        {
            const double time = AllToAll(name, s);
            NS_TEST_ASSERT_MSG_EQ_TOL(time, dmodk, 0.02 * dmodk, name << " within 2% of D-mod-k");
        }
        // With one uplink of leaf 0 dead, fault-aware sends leaf 0's 48 flows over the other
        // uplink (48 S / 10 GB/s): twice as long, still finishing.
        {
            Ptr<Topology> t = FatTree2To1();
            t->ApplyFault("ib.leaf0.0-ib.spine0.1", 0, "test");
            Ptr<RoutingPolicy> fa = RoutingPolicy::Create("fault-aware");
            auto path = fa->Route(*t, 0, 5, 0);
            NS_TEST_ASSERT_MSG_EQ(t->GetNode(t->GetLink(path[1]).dst).name,
                                  "ib.spine0.0",
                                  "fault-aware avoids the dead uplink");
        }
    }
};

/**
 * \brief Dimension-order routing on dead links: a dead spine link is detoured through another
 * spine (dimension order is kept); a dead NIC link has no dimension-order detour, so the error
 * names the pair, the dead link and the policies that route around it, and those do.
 */
class DimensionOrderDeadLinkTestCase : public TestCase
{
  public:
    DimensionOrderDeadLinkTestCase()
        : TestCase("dimension-order detours around a dead spine link and explains a dead NIC")
    {}

  private:
    void
    DoRun() override
    {
        NetworkSpec ft;
        ft.dimensions.push_back(Dim("ib", TopologyKind::FAT_TREE, 16));
        ft.dimensions[0].leafSize = 4;
        Ptr<Topology> f = Topology::Build(ft, 0); // 4 leaves, 4 spines
        Ptr<RoutingPolicy> dor = RoutingPolicy::Create("dimension-order");
        // D-mod-k sends 0 -> 13 through spine 1; with leaf 0's link to spine 1 dead, it takes
        // the next spine.
        f->ApplyFault("ib.leaf0.0-ib.spine0.1", 0, "test");
        auto path = dor->Route(*f, 0, 13, 0);
        NS_TEST_ASSERT_MSG_EQ(f->DescribePath(path),
                              "gpu0>ib.leaf0.0>ib.spine0.2>ib.leaf0.3>gpu13",
                              "detour through the next spine");

        // DGX-style: NVSwitch of 8 x a rail fat tree across 2 nodes. gpu0's NIC link is dead.
        NetworkSpec dgx;
        dgx.dimensions.push_back(Dim("nvlink", TopologyKind::SWITCH, 8));
        dgx.dimensions.push_back(Dim("ib", TopologyKind::FAT_TREE, 2));
        Ptr<Topology> d = Topology::Build(dgx, 16);
        d->ApplyFault("gpu0-ib.leaf0.0", 0, "test");
        NS_TEST_ASSERT_MSG_EQ(ThrowsWith<NetworkError>(
                                  [&]()
                                  {
                                      dor->Route(*d, 0, 8, 0);
                                  },
                                  {"no path from gpu0 to gpu8",
                                   "dead link gpu0>ib.leaf0.0",
                                   "'fault-aware'",
                                   "'shortest-path'"}),
                              true,
                              "dimension-order names the dead NIC link and the policies");
        NS_TEST_ASSERT_MSG_EQ(ThrowsWith<NetworkError>(
                                  [&]()
                                  {
                                      dor->Route(*d, 9, 0, 0);
                                  },
                                  {"no path from gpu9 to gpu0", "dead link ib.leaf0.0>gpu0"}),
                              true,
                              "and the other direction");
        // Traffic not needing that link is untouched.
        RAPIDLLM_REQUIRE_EQ(dor->Route(*d, 1, 9, 0).size(), 2u, "rail 1 unaffected");
        for (const std::string name : {"fault-aware", "shortest-path"})
        {
            Ptr<RoutingPolicy> p = RoutingPolicy::Create(name);
            auto detour = p->Route(*d, 0, 8, 0);
            // gpu0 > nvlink.sw0 > gpuK > rail K leaf > gpu8+K > nvlink.sw1 > gpu8
            RAPIDLLM_REQUIRE_EQ(detour.size(), 6u, name << " detours over another rail");
            for (uint32_t l : detour)
            {
                NS_TEST_ASSERT_MSG_EQ(d->GetLink(l).IsAlive(), true, name << " uses live links");
            }
        }
    }
};

/** \brief Unreachable pairs and unknown policies give clear errors. */
class RoutingErrorsTestCase : public TestCase
{
  public:
    RoutingErrorsTestCase()
        : TestCase("unreachable pairs and unknown policies are named in the error")
    {}

  private:
    void
    DoRun() override
    {
        NetworkSpec s;
        s.dimensions.push_back(Dim("r", TopologyKind::RING, 4));
        s.faults.push_back({"gpu0-gpu1", 0});
        s.faults.push_back({"gpu0-gpu3", 0});
        Ptr<Topology> t = Topology::Build(s, 0);
        for (const std::string name : {"dimension-order", "shortest-path", "ecmp", "fault-aware"})
        {
            Ptr<RoutingPolicy> p = RoutingPolicy::Create(name);
            NS_TEST_ASSERT_MSG_EQ(ThrowsWith<NetworkError>(
                                      [&]()
                                      {
                                          p->Route(*t, 2, 0, 0);
                                      },
                                      {"no path from gpu2 to gpu0",
                                       "unreachable",
                                       "and 1 more down",
                                       "s of simulated time"}),
                                  true,
                                  name << " names the unreachable pair");
        }
        NS_TEST_ASSERT_MSG_EQ(ThrowsWith(
                                  []()
                                  {
                                      RoutingPolicy::Create("warp-drive");
                                  },
                                  {"warp-drive", "ecmp", "fault-aware", "shortest-path"}),
                              true,
                              "unknown policy lists the known ones");
        // Full TypeId names work too.
        Ptr<RoutingPolicy> byTypeId = RoutingPolicy::Create("ns3::rapidllm::EcmpRouting");
        NS_TEST_ASSERT_MSG_EQ(
            byTypeId->GetInstanceTypeId().GetName(), "ns3::rapidllm::EcmpRouting", "TypeId name");
    }
};

/**
 * \brief A policy defined here, outside the library, registers by name and is then chosen by
 * name like the built-in ones: it routes every flow the "positive" way round a ring.
 */
class ClockwiseRouting : public RoutingPolicy
{
  public:
    /** \brief Register this type. \return the TypeId */
    static TypeId
    GetTypeId()
    {
        static TypeId tid = TypeId("ns3::rapidllm::test::ClockwiseRouting")
                                .SetParent<RoutingPolicy>()
                                .AddConstructor<ClockwiseRouting>();
        return tid;
    }

  protected:
    std::vector<uint32_t>
    DoRoute(const Topology& t, uint32_t src, uint32_t dst, uint64_t) override
    {
        std::vector<uint32_t> path;
        for (uint32_t u = src; u != dst; u = (u + 1) % t.GetEndpointCount())
        {
            path.push_back(t.FindLink(u, (u + 1) % t.GetEndpointCount()));
        }
        return path;
    }
};

static RoutingPolicyRegistrar g_clockwise("test-clockwise", ClockwiseRouting::GetTypeId());

/** \brief The user-registered policy is found by name and used. */
class CustomPolicyTestCase : public TestCase
{
  public:
    CustomPolicyTestCase()
        : TestCase("a policy registered outside the library is chosen by name")
    {}

  private:
    void
    DoRun() override
    {
        NetworkSpec s;
        s.dimensions.push_back(Dim("r", TopologyKind::RING, 6));
        Ptr<Topology> t = Topology::Build(s, 0);
        Ptr<RoutingPolicy> p = RoutingPolicy::Create("test-clockwise");
        RAPIDLLM_REQUIRE_EQ(p->Route(*t, 1, 0, 0).size(), 5u, "the long way round");
        bool listed = false;
        for (const auto& n : RoutingPolicy::Names())
        {
            listed = listed || n == "test-clockwise";
        }
        NS_TEST_ASSERT_MSG_EQ(listed, true, "listed among the names");
    }
};

/** \brief A broken policy: returns the links it was given, whatever the pair. */
class FixedPathRouting : public RoutingPolicy
{
  public:
    /** \brief Register this type. \return the TypeId */
    static TypeId
    GetTypeId()
    {
        static TypeId tid = TypeId("ns3::rapidllm::test::FixedPathRouting")
                                .SetParent<RoutingPolicy>()
                                .AddConstructor<FixedPathRouting>();
        return tid;
    }

    std::vector<uint32_t> m_path; //!< what DoRoute returns

  protected:
    std::vector<uint32_t>
    DoRoute(const Topology&, uint32_t, uint32_t, uint64_t) override
    {
        return m_path;
    }
};

static RoutingPolicyRegistrar g_fixedPath("test-fixed-path", FixedPathRouting::GetTypeId());

/**
 * \brief RoutingPolicy::Route checks what a policy returns: a link id out of range, a link
 * that does not continue the path, a path that stops short of the destination or crosses a
 * dead link is a NetworkError naming the policy, the pair and the link (a user's policy
 * returning link 4000000000 crashed the flow backend, one returning a wrong link gave numbers).
 */
class BadPolicyPathTestCase : public TestCase
{
  public:
    BadPolicyPathTestCase()
        : TestCase("a policy's bad path is an error naming the policy and the link")
    {}

  private:
    void
    DoRun() override
    {
        NetworkSpec s;
        s.dimensions.push_back(Dim("r", TopologyKind::RING, 4));
        Ptr<Topology> t = Topology::Build(s, 0);
        Ptr<RoutingPolicy> dor = RoutingPolicy::Create("dimension-order");
        const std::vector<uint32_t> good = dor->Route(*t, 0, 2, 0);
        RAPIDLLM_REQUIRE_EQ(good.size(), 2u, "two hops");
        Ptr<FixedPathRouting> p =
            DynamicCast<FixedPathRouting>(RoutingPolicy::Create("test-fixed-path"));
        RAPIDLLM_REQUIRE_NE(p, nullptr, "created");
        const std::vector<std::pair<std::vector<uint32_t>, std::vector<std::string>>> cases = {
            {{4000000000u}, {"does not exist", "4000000000"}},
            {{good[1]}, {"does not start at gpu0", "(the source)"}},
            {{good[0], good[0]}, {"does not start at gpu1", "where link 0 ends"}},
            {{good[0]}, {"ends at gpu1", "not at the destination"}},
        };
        for (const auto& [path, words] : cases)
        {
            p->m_path = path;
            std::vector<std::string> expected = {"'test-fixed-path'", "from gpu0 to gpu2"};
            expected.insert(expected.end(), words.begin(), words.end());
            NS_TEST_EXPECT_MSG_EQ(ThrowsWith<NetworkError>(
                                      [&]()
                                      {
                                          p->Route(*t, 0, 2, 0);
                                      },
                                      expected),
                                  true,
                                  words.front());
        }
        // No path on a healthy network is the policy's fault, not the pair's.
        p->m_path = {};
        NS_TEST_EXPECT_MSG_EQ(ThrowsWith<NetworkError>(
                                  [&]()
                                  {
                                      p->Route(*t, 0, 2, 0);
                                  },
                                  {"'test-fixed-path'", "returned no path", "no link is down"}),
                              true,
                              "an empty path");
        p->m_path = good;
        NS_TEST_EXPECT_MSG_EQ(p->Route(*t, 0, 2, 0).size(), 2u, "a good path passes");
        t->SetLinkFactor(good[1], 0);
        NS_TEST_EXPECT_MSG_EQ(ThrowsWith<NetworkError>(
                                  [&]()
                                  {
                                      p->Route(*t, 0, 2, 0);
                                  },
                                  {"'test-fixed-path'", "dead link", t->DescribeLink(good[1])}),
                              true,
                              "a dead link");
    }
};

/** \brief Hardware presets' networks build and route. */
class PresetNetworksTestCase : public TestCase
{
  public:
    PresetNetworksTestCase()
        : TestCase("every hardware preset's network builds and routes")
    {}

  private:
    void
    DoRun() override
    {
        for (const std::string name :
             {"a100-sxm-40gb", "a100-sxm-80gb", "h100-sxm-80gb", "h200-sxm-141gb"})
        {
            HardwareSpec hw = HardwareSpec::Load(name);
            Ptr<Topology> t = Topology::Build(hw.network, 64, name);
            Ptr<RoutingPolicy> p = RoutingPolicy::Create(hw.network.routing);
            auto path = p->Route(*t, 0, 63, 0);
            NS_TEST_ASSERT_MSG_GT(path.size(), 1u, name << " routes across nodes");
        }
    }
};

/** \brief The topology and routing test suite. */
class NetworkRoutingTestSuite : public TestSuite
{
  public:
    NetworkRoutingTestSuite()
        : TestSuite("rapid-llm-network-routing", UNIT)
    {
        AddTestCase(new TopologyBuildTestCase, TestCase::QUICK);
        AddTestCase(new FaultSelectorTestCase, TestCase::QUICK);
        AddTestCase(new RoutingPathsTestCase, TestCase::QUICK);
        AddTestCase(new RoutingErrorsTestCase, TestCase::QUICK);
        AddTestCase(new EqualCostSpreadTestCase, TestCase::QUICK);
        AddTestCase(new EqualCostAllToAllTestCase, TestCase::QUICK);
        AddTestCase(new DimensionOrderDeadLinkTestCase, TestCase::QUICK);
        AddTestCase(new CustomPolicyTestCase, TestCase::QUICK);
        AddTestCase(new BadPolicyPathTestCase, TestCase::QUICK);
        AddTestCase(new PresetNetworksTestCase, TestCase::QUICK);
    }
};

static NetworkRoutingTestSuite g_networkRoutingTestSuite;
