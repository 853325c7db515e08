/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// NCCL's protocols and its own protocol choice (issue 12 item 2), against NCCL 2.20.3's
// tuning model (src/graph/tuning.cc) written out by hand; its ring graph and NVLS on the H100
// preset (nccl-tests' measured 4-GPU H100 all-reduce is in rapid-llm-validation).

#include "network-test-spec.h"
#include "ns3/collective-algorithms.h"
#include "ns3/collective-probe.h"
#include "ns3/hardware-spec.h"
#include "ns3/nccl-collective.h"
#include "ns3/nccl-ring-search.h"
#include "ns3/test.h"
#include "ns3/topology.h"

#include <cmath>
#include <set>

using namespace ns3;
using namespace ns3::rapidllm;

namespace {

/** \brief NCCL's cost model of a ring, protocol by protocol. */
class NcclEstimateTestCase : public TestCase
{
  public:
    NcclEstimateTestCase()
        : TestCase("NCCL ring latency and bandwidth per protocol")
    {}

  private:
    void
    DoRun() override
    {
        const double bus = 240e9; // A100 NVLink: 12 links x 20 GB/s
        // 8 ranks, all-reduce: 14 steps.
        NcclEstimate ll =
            NcclRingEstimate(CollectiveOp::ALL_REDUCE, 8, 0, false, bus, NcclProtocol::LL);
        NS_TEST_EXPECT_MSG_EQ_TOL(ll.latencyS, (6.6 + 14 * 0.6) * 1e-6, 1e-12, "LL latency");
        NS_TEST_EXPECT_MSG_EQ_TOL(ll.bandwidthFactor, 0.25, 1e-12, "LL: a quarter of the link");
        NcclEstimate ll128 =
            NcclRingEstimate(CollectiveOp::ALL_REDUCE, 8, 0, false, bus, NcclProtocol::LL128);
        NS_TEST_EXPECT_MSG_EQ_TOL(ll128.latencyS, (14.0 + 14 * 1.9) * 1e-6, 1e-12, "LL128");
        NS_TEST_EXPECT_MSG_EQ_TOL(ll128.bandwidthFactor, 0.92, 1e-12, "LL128: 120 of 128 B");
        NcclEstimate simple = NcclRingEstimate(
            CollectiveOp::ALL_REDUCE, 8, 1 << 30, false, bus, NcclProtocol::SIMPLE);
        NS_TEST_EXPECT_MSG_EQ_TOL(simple.latencyS, (8.4 + 14 * 3.4) * 1e-6, 1e-12, "Simple");
        NS_TEST_EXPECT_MSG_EQ_TOL(simple.timeS,
                                  simple.latencyS + double(1 << 30) / (bus * 8 / 14),
                                  1e-12,
                                  "ring algorithm bandwidth = bus x n / steps");
        // One node's all-gather: LL reaches a third; a fast link is capped at NCCL's LL ceiling.
        NcclEstimate ag =
            NcclRingEstimate(CollectiveOp::ALL_GATHER, 4, 0, false, bus, NcclProtocol::LL);
        NS_TEST_EXPECT_MSG_EQ_TOL(ag.latencyS, (6.6 + 3 * 0.6) * 1e-6, 1e-12, "3 steps");
        NS_TEST_EXPECT_MSG_EQ_TOL(ag.bandwidthFactor, 80.0 / 240.0, 1e-12, "a third");
        NcclEstimate capped =
            NcclRingEstimate(CollectiveOp::ALL_GATHER, 4, 0, false, 370e9, NcclProtocol::LL);
        NS_TEST_EXPECT_MSG_EQ_TOL(capped.bandwidthFactor, 87.7 / 370.0, 1e-12, "LL ceiling");
        // Across the network: NCCL's network step latencies.
        NcclEstimate net =
            NcclRingEstimate(CollectiveOp::ALL_REDUCE, 4, 0, true, 25e9, NcclProtocol::SIMPLE);
        NS_TEST_EXPECT_MSG_EQ_TOL(net.latencyS, (8.4 + 6 * 14.0) * 1e-6, 1e-12, "network");
    }
};

/**
 * \brief The protocol NCCL picks moves from LL to LL128 to Simple as the size grows, and the
 * collective's time on a network whose links carry LL's step latency is NCCL's estimate.
 */
class NcclChoiceTestCase : public TestCase
{
  public:
    NcclChoiceTestCase()
        : TestCase("NCCL's protocol choice and the resulting collective time")
    {}

  private:
    void
    DoRun() override
    {
        // 8 GPUs on a switch of 300 GB/s links at 80% payload (240 GB/s), 0.3 us per link:
        // 0.6 us per ring step, LL's.
        NetworkSpec s = OneDimension(TopologyKind::SWITCH, 8, 300, 300).Efficiency(0.8);
        s.dimensions[0].collective = "nccl";
        std::string last;
        std::vector<std::string> seen;
        for (uint64_t bytes : {8ull << 10, 16ull << 20, 1ull << 30})
        {
            CollectiveProbeConfig c;
            c.op = CollectiveOp::ALL_REDUCE;
            c.bytes = bytes;
            c.gpus = 8;
            CollectiveProbeResult r = RunCollectiveProbe(s, c);
            seen.push_back(r.algorithm);
            // NCCL's own estimate of its fastest protocol.
            double best = 1e9;
            for (NcclProtocol p : {NcclProtocol::LL, NcclProtocol::LL128, NcclProtocol::SIMPLE})
            {
                best = std::min(
                    best,
                    NcclRingEstimate(CollectiveOp::ALL_REDUCE, 8, bytes, false, 240e9, p).timeS);
            }
            NS_TEST_EXPECT_MSG_EQ_TOL(
                r.timeS / best, 1.0, 0.03, r.algorithm + " " + std::to_string(bytes));
            c.algorithm = "ring";
            const double ring = RunCollectiveProbe(s, c).timeS;
            if (bytes == (8ull << 10))
            {
                NS_TEST_EXPECT_MSG_GT(r.timeS, ring, "small: NCCL's base latency on top");
            }
        }
        NS_TEST_EXPECT_MSG_EQ(seen.front(), "nccl(ring/LL)", "small messages: LL");
        NS_TEST_EXPECT_MSG_EQ(seen.back(), "nccl(ring/Simple)", "large messages: Simple");
        NS_TEST_EXPECT_MSG_EQ(seen[1], "nccl(ring/LL128)", "in between: LL128");
    }
};

/**
 * \brief NVLS's estimate (heads x sm90 speed x 5/6, 23 us) and LL128's ceiling per channel.
 */
class NcclNvlsEstimateTestCase : public TestCase
{
  public:
    NcclNvlsEstimateTestCase()
        : TestCase("NCCL's NVLS estimate and LL128's ceiling per channel")
    {}

  private:
    void
    DoRun() override
    {
        const double gpu = 18 * 20.6e9; // one H100's NVLink payload rate
        // 8 heads: (8 + 1) x 50 > 370.8, so 40 GB/s each; 8 x 40 x 5/6 = 266.7 GB/s.
        NcclEstimate e8 = NcclNvlsEstimate(CollectiveOp::ALL_REDUCE, 8, 1 << 30, gpu);
        NS_TEST_EXPECT_MSG_EQ_TOL(e8.algBytesPerS, 8 * 40e9 * 5 / 6, 1, "8 GPUs");
        NS_TEST_EXPECT_MSG_EQ_TOL(e8.latencyS, 23e-6, 1e-12, "NVLS latency");
        NS_TEST_EXPECT_MSG_EQ_TOL(e8.timeS, 23e-6 + double(1 << 30) / e8.algBytesPerS, 1e-12, "");
        // 4 heads: (4 + 1) x 60 fits, so 60 GB/s each: 200 GB/s. 6 heads: 7 x 60 > 370.8,
        // 7 x 50 fits: 6 x 50 x 5/6 = 250 GB/s.
        NcclEstimate e6 = NcclNvlsEstimate(CollectiveOp::ALL_REDUCE, 6, 0, gpu);
        NS_TEST_EXPECT_MSG_EQ_TOL(e6.algBytesPerS, 6 * 50e9 * 5 / 6, 1, "6 GPUs");
        NcclEstimate e4 = NcclNvlsEstimate(CollectiveOp::ALL_REDUCE, 4, 0, gpu);
        NS_TEST_EXPECT_MSG_EQ_TOL(e4.algBytesPerS, 4 * 60e9 * 5 / 6, 1, "4 GPUs");
        // LL128: 0.92 of the bus, at most its ceiling per channel x channels.
        NcclEstimate capped = NcclRingEstimate(
            CollectiveOp::ALL_REDUCE, 8, 0, false, 360e9, NcclProtocol::LL128, 12 * 20e9);
        NS_TEST_EXPECT_MSG_EQ_TOL(capped.bandwidthFactor, 240.0 / 360.0, 1e-12, "ceiling");
        NcclEstimate uncapped = NcclRingEstimate(
            CollectiveOp::ALL_REDUCE, 8, 0, false, 360e9, NcclProtocol::LL128, 12 * 36.7e9);
        NS_TEST_EXPECT_MSG_EQ_TOL(uncapped.bandwidthFactor, 0.92, 1e-12, "below the ceiling");
    }
};

/**
 * \brief On the H100 preset (NCCL graph: 12 ring channels x 30 GB/s, NVLS): 8-GPU all-reduces
 * of large sizes run NVLS, all-gathers and 2-GPU groups the ring (NCCL disables NVLS for 2
 * GPUs), each at NCCL's estimate; forcing the ring gives the ring's 360 GB/s bus bandwidth.
 */
class NcclH100ChoiceTestCase : public TestCase
{
  public:
    NcclH100ChoiceTestCase()
        : TestCase("NCCL on the H100 preset: NVLS for large 8-GPU all-reduces, ring otherwise")
    {}

  private:
    void
    DoRun() override
    {
        const HardwareSpec h100 = HardwareSpec::Load("h100-sxm-80gb");
        const uint64_t gib = 1ull << 30;
        CollectiveProbeConfig c;
        c.op = CollectiveOp::ALL_REDUCE;
        c.bytes = gib;
        c.gpus = 8;
        CollectiveProbeResult ar = RunCollectiveProbe(h100.network, c, "h100-sxm-80gb");
        NS_TEST_EXPECT_MSG_EQ(ar.algorithm, "nccl(nvls/Simple)", "8-GPU 1 GiB all-reduce");
        const NcclEstimate nvls = NcclNvlsEstimate(CollectiveOp::ALL_REDUCE, 8, gib, 18 * 20.6e9);
        NS_TEST_EXPECT_MSG_EQ_TOL(ar.timeS / nvls.timeS, 1.0, 0.02, "NVLS time = its estimate");
        // Without the NVSwitch that reduces, no NVLS, whatever the graph says (a topology given
        // over the preset keeps its nvls: true).
        HardwareSpec meshed = h100;
        meshed.network.dimensions[0].kind = TopologyKind::FULLY_CONNECTED;
        CollectiveProbeResult mesh = RunCollectiveProbe(meshed.network, c, "fully connected");
        NS_TEST_EXPECT_MSG_EQ(mesh.algorithm, "nccl(ring/Simple)", "no switch: no NVLS");
        c.gpus = 2;
        CollectiveProbeResult two = RunCollectiveProbe(h100.network, c, "h100-sxm-80gb");
        NS_TEST_EXPECT_MSG_EQ(two.algorithm, "nccl(ring/Simple)", "2 GPUs: no NVLS");
        // 2 GPUs, all-reduce: 2 ring steps, bus = alg bandwidth = 12 x 30 GB/s.
        NS_TEST_EXPECT_MSG_EQ_TOL(two.timeS / (double(gib) / 360e9), 1.0, 0.02, "2-GPU ring");
        c.gpus = 8;
        c.op = CollectiveOp::ALL_GATHER;
        CollectiveProbeResult ag = RunCollectiveProbe(h100.network, c, "h100-sxm-80gb");
        NS_TEST_EXPECT_MSG_EQ(ag.algorithm, "nccl(ring/Simple)", "all-gather: the ring wins");
        NS_TEST_EXPECT_MSG_EQ_TOL(
            ag.timeS / (double(gib) * 7 / 8 / 360e9), 1.0, 0.02, "8-GPU ring at 360 GB/s bus");
        // A hardware variant's NVLink: NCCL's search on 225 GB/s x 0.824 = 185.4 GB/s finds 3
        // rings of 60 GB/s, doubled to 6 x 30 = 180 GB/s; on twice the preset's (741.6 GB/s)
        // 12 x 60, doubled to 16 x 30, then 16 x 40 = 640 GB/s.
        HardwareSpec slow = h100;
        slow.network.dimensions[0].bandwidthBps /= 2;
        CollectiveProbeResult halved = RunCollectiveProbe(slow.network, c, "h100 at half");
        NS_TEST_EXPECT_MSG_EQ_TOL(halved.timeS / (double(gib) * 7 / 8 / 180e9),
                                  1.0,
                                  0.02,
                                  "8-GPU ring at NCCL's 180 GB/s");
        HardwareSpec fast = h100;
        fast.network.dimensions[0].bandwidthBps *= 2;
        CollectiveProbeResult doubled = RunCollectiveProbe(fast.network, c, "h100 at twice");
        NS_TEST_EXPECT_MSG_EQ_TOL(doubled.timeS / (double(gib) * 7 / 8 / 640e9),
                                  1.0,
                                  0.03, // the ring's latency is 2% of it
                                  "8-GPU ring at NCCL's 640 GB/s");
    }
};

/**
 * \brief NCCL's ring search inside one node (NCCL 2.20.3 src/graph/search.cc), worked by hand:
 * it gives the presets' graphs on their own links and follows a variant's NVLink.
 */
class NcclRingSearchTestCase : public TestCase
{
  public:
    NcclRingSearchTestCase()
        : TestCase("NCCL's ring search: the presets' graphs, and a variant's NVLink")
    {}

  private:
    void
    Expect(uint32_t sm, double gpuGBps, uint32_t channels, double channelGBps)
    {
        const NcclRingGraph g = SearchNcclRing(sm, gpuGBps * 1e9);
        const std::string what = "sm" + std::to_string(sm) + " at " + std::to_string(gpuGBps);
        NS_TEST_EXPECT_MSG_EQ(g.channels, channels, what);
        NS_TEST_EXPECT_MSG_EQ_TOL(g.channelBps / 1e9, channelGBps, 1e-9, what);
    }

    void
    DoRun() override
    {
        // A100: 6 rings of 40 GB/s fill 12 x 20 = 240 GB/s; doubled: 12 x 20.
        Expect(80, 300 * 0.8, 12, 20);
        // H100: 6 x 60 of 370.8 (40 and 30 tie at 360, the first kept); doubled: 12 x 30.
        Expect(90, 450 * 0.824, 12, 30);
        // Twice the A100's: 12 x 40 fill 480; doubled to 16 (the limit) x 20, then 16 x 30.
        Expect(80, 480, 16, 30);
        // Twice the H100's: 12 x 60 of 741.6, doubled to 16 x 30, then 16 x 40 (16 x 50 = 800
        // does not fit).
        Expect(90, 741.6, 16, 40);
        // Hopper below 50 GB/s a channel with more than 4 channels is not doubled: 120 GB/s
        // takes 2 x 60, which fill it: doubled, 4 x 30; 100 GB/s: 2 x 50, then 4 x 25
        // (sm90: 50 is doubled), the second pass finding none of 4 channels faster.
        Expect(90, 120, 4, 30);
        Expect(90, 100, 4, 25);
        // Below the slowest speed: one channel at the link's rate.
        Expect(80, 2, 1, 2);
        // Every preset names its GPUs' sm and gets its documented graph.
        for (const char* name :
             {"a100-sxm-80gb", "a100-sxm-40gb", "h100-sxm-80gb", "h200-sxm-141gb"})
        {
            const HardwareSpec hw = HardwareSpec::Load(name);
            const NcclRingGraph g = RingGraphOf(hw.network.dimensions[0]);
            NS_TEST_EXPECT_MSG_EQ(g.channels, 12u, name);
            NS_TEST_EXPECT_MSG_EQ_TOL(g.channels * g.channelBps,
                                      hw.network.dimensions[0].bandwidthBps
                                          * hw.network.dimensions[0].wireEfficiency,
                                      0.05 * 360e9,
                                      name);
        }
    }
};

/**
 * \brief NCCL's own choice as logged on an 8x H100 HGX node (NCCL 2.29.2, NCCL_DEBUG_SUBSYS=
 * TUNING: waynehacking8/nccl-collectives-bench results/scaling_attributed/g{2,4,6}_auto.log,
 * data/validation/nccl-tests-h100-hgx-slices.md): all-reduces of 256 MiB to 1 GiB run
 * Ring/Simple on 2 and 4 GPUs and NVLS/Simple on 6. The H100 preset's choice is the same.
 */
class NcclH100LoggedChoiceTestCase : public TestCase
{
  public:
    NcclH100LoggedChoiceTestCase()
        : TestCase("NCCL on the H100 preset chooses as NCCL 2.29.2 logged on 2, 4 and 6 GPUs")
    {}

  private:
    void
    DoRun() override
    {
        const HardwareSpec h100 = HardwareSpec::Load("h100-sxm-80gb");
        CollectiveProbeConfig c;
        c.op = CollectiveOp::ALL_REDUCE;
        for (uint64_t bytes : {256ull << 20, 512ull << 20, 1ull << 30})
        {
            c.bytes = bytes;
            for (uint32_t gpus : {2u, 4u, 6u})
            {
                c.gpus = gpus;
                CollectiveProbeResult r = RunCollectiveProbe(h100.network, c, "h100-sxm-80gb");
                const std::string logged = gpus == 6 ? "nccl(nvls/Simple)" : "nccl(ring/Simple)";
                NS_TEST_EXPECT_MSG_EQ(r.algorithm, logged, gpus << " GPUs, " << bytes << " B");
            }
        }
    }
};

/** \return the network of two nodes of \p preset's 8 GPUs */
Ptr<Topology>
TwoNodes(const std::string& preset)
{
    return Topology::Build(HardwareSpec::Load(preset).network, 16, preset);
}

/**
 * \brief The SMs NCCL's kernels hold (one CTA per channel): NVLS 16 (NCCL_NVLS_NCHANNELS); a
 * ring inside the NVSwitch twice the graph's 12 rings (ncclTopoPostset), fewer for small sizes
 * (one channel per threads x threshold bytes: LL's 512 x 8 x ranks); across the network the
 * network dimension's channels per GPU of the communicator in a node (DGX H100 4, DGX A100 2),
 * at most 16.
 */
class NcclSmCountTestCase : public TestCase
{
  public:
    NcclSmCountTestCase()
        : TestCase("NCCL's kernels hold one SM per channel: NVLS 16, the ring 24, fewer when small")
    {}

  private:
    void
    DoRun() override
    {
        Ptr<Topology> t = TwoNodes("h100-sxm-80gb");
        CollectivePlanner planner(*t);
        auto sms = [&](CollectiveOp op, std::vector<uint32_t> endpoints, uint64_t bytes)
        {
            CollectiveRequest r;
            r.op = op;
            r.endpoints = std::move(endpoints);
            r.bytes = bytes;
            return planner.GetSmCount(r);
        };
        const std::vector<uint32_t> node = {0, 1, 2, 3, 4, 5, 6, 7};
        const uint64_t gib = 1ull << 30;
        NS_TEST_EXPECT_MSG_EQ(sms(CollectiveOp::ALL_REDUCE, node, gib), 16u, "NVLS");
        NS_TEST_EXPECT_MSG_EQ(sms(CollectiveOp::ALL_GATHER, node, gib), 24u, "ring: 2 x 12");
        NS_TEST_EXPECT_MSG_EQ(sms(CollectiveOp::ALL_REDUCE, {0, 1}, gib), 24u, "2 GPUs: ring");
        // 4 KiB on 2 GPUs runs LL: one channel per 512 threads x 8 x 2 ranks = 8 KiB.
        NS_TEST_EXPECT_MSG_EQ(sms(CollectiveOp::ALL_REDUCE, {0, 1}, 4096), 1u, "small: 1");
        NS_TEST_EXPECT_MSG_EQ(sms(CollectiveOp::ALL_REDUCE, {0, 8}, gib), 4u, "1 GPU per node");
        NS_TEST_EXPECT_MSG_EQ(
            sms(CollectiveOp::ALL_REDUCE, {0, 1, 8, 9}, gib), 8u, "2 GPUs per node: 2 x 4");
        std::vector<uint32_t> all(16);
        for (uint32_t i = 0; i < 16; ++i)
        {
            all[i] = i;
        }
        NS_TEST_EXPECT_MSG_EQ(sms(CollectiveOp::REDUCE_SCATTER, all, gib), 16u, "8 per node: 16");
        Ptr<Topology> ta = TwoNodes("a100-sxm-80gb");
        CollectivePlanner pa(*ta);
        CollectiveRequest r;
        r.op = CollectiveOp::ALL_REDUCE;
        r.endpoints = {0, 8};
        r.bytes = gib;
        NS_TEST_EXPECT_MSG_EQ(pa.GetSmCount(r), 2u, "DGX A100: 2 per GPU");
        r.endpoints = all;
        NS_TEST_EXPECT_MSG_EQ(pa.GetSmCount(r), 16u, "DGX A100, 8 per node: 16");
        NS_TEST_EXPECT_MSG_EQ(sms(CollectiveOp::SEND_RECV, {0, 1}, gib), 0u, "send-receive");
    }
};

/**
 * \brief The SMs NCCL's point-to-point kernel holds (one CTA per channel a message is split
 * over; ncclTopoComputeP2pChannels, scheduleP2pTasksToPlan, addP2pToPlan), worked out by hand
 * from the rules: inside a DGX node the communicator has 32 p2p channels (2 x 12 rings rounded
 * up to a power of two) and 32 per peer; nMin = 32 / ranks; a message takes min(nMin, bytes /
 * 64 KiB) channels (Simple's 512 KiB step / 8), doubled while a part exceeds 16 MiB. Across
 * nodes 2 per peer (H100: 4 p2p channels for one GPU per node; A100: 2).
 */
class NcclP2pSmCountTestCase : public TestCase
{
  public:
    NcclP2pSmCountTestCase()
        : TestCase(
            "NCCL's sends hold 32 over ranks SMs in a node, 2 across nodes, fewer when small")
    {}

  private:
    void
    DoRun() override
    {
        Ptr<Topology> t = TwoNodes("h100-sxm-80gb");
        CollectivePlanner planner(*t);
        auto sms = [&](std::vector<uint32_t> communicator, uint64_t bytes)
        {
            CollectiveRequest r;
            r.endpoints = std::move(communicator);
            r.bytes = bytes;
            return planner.GetP2pSmCount(r);
        };
        const uint64_t mib = 1ull << 20;
        // Context parallel 2 in a node: nMin = 16; 16 MiB / 64 KiB = 256 parts, so 16.
        NS_TEST_EXPECT_MSG_EQ(sms({0, 1}, 16 * mib), 16u, "CP2 in a node: 32 / 2");
        // 8 ranks: nMin = 4; 1 GiB in 4 parts is 256 MiB each > 16 MiB: doubled to 32.
        const std::vector<uint32_t> node = {0, 1, 2, 3, 4, 5, 6, 7};
        NS_TEST_EXPECT_MSG_EQ(sms(node, 16 * mib), 4u, "8 ranks: 32 / 8");
        NS_TEST_EXPECT_MSG_EQ(sms(node, 1024 * mib), 32u, "parts above 16 MiB: doubled to 32");
        // 128 KiB: LL (at most 16 KiB x 32), step 64 KiB, parts of 8 KiB: 16 of them.
        NS_TEST_EXPECT_MSG_EQ(sms({0, 1}, 128 * 1024), 16u, "LL: 8 KiB parts, at most nMin");
        NS_TEST_EXPECT_MSG_EQ(sms({0, 1}, 16 * 1024), 2u, "16 KiB: two 8 KiB parts");
        NS_TEST_EXPECT_MSG_EQ(sms({0, 1}, 0), 1u, "an empty message: one channel");
        // Across nodes, one GPU per node: 4 p2p channels, 2 per peer, parts of 64-128 KiB.
        NS_TEST_EXPECT_MSG_EQ(sms({0, 8}, 16 * mib), 2u, "across nodes: 2 per peer");
        NS_TEST_EXPECT_MSG_EQ(sms({0, 8}, 32 * 1024), 1u, "across nodes, 32 KiB: one part");
        NS_TEST_EXPECT_MSG_EQ(sms({0}, 16 * mib), 0u, "a communicator of one: no kernel");
        Ptr<Topology> ta = TwoNodes("a100-sxm-80gb");
        CollectivePlanner pa(*ta);
        CollectiveRequest r;
        r.endpoints = {0, 8};
        r.bytes = 16 * mib;
        NS_TEST_EXPECT_MSG_EQ(pa.GetP2pSmCount(r), 2u, "DGX A100 across nodes: 2");
        r.algorithm = "ring";
        NS_TEST_EXPECT_MSG_EQ(pa.GetP2pSmCount(r), 0u, "an algorithm that does not say: none");
    }
};

/**
 * \brief A group across nodes that does not fill them (12 A100s: 8 + 4) runs NCCL's channels as
 * 4 rings, each crossing between the nodes through other GPUs and so other NICs: 4 NICs' worth
 * of bandwidth, not one (it ran one ring through one NIC, 4x slower).
 */
class NcclCrossNodeRingsTestCase : public TestCase
{
  public:
    NcclCrossNodeRingsTestCase()
        : TestCase("NCCL across part-filled nodes: a ring per channel, each through other NICs")
    {}

  private:
    void
    DoRun() override
    {
        const HardwareSpec a100 = HardwareSpec::Load("a100-sxm-80gb");
        Ptr<Topology> topology = Topology::Build(a100.network, 12);
        std::vector<uint32_t> members(12);
        for (uint32_t r = 0; r < 12; ++r)
        {
            members[r] = r;
        }
        const auto rings = CrossNodeRings(*topology, members, members);
        NS_TEST_ASSERT_MSG_EQ(rings.size(), 4u, "the 4 GPUs of the second node: 4 rings");
        std::set<std::pair<uint32_t, uint32_t>> crossings;
        for (const auto& ring : rings)
        {
            NS_TEST_EXPECT_MSG_EQ(std::set<uint32_t>(ring.begin(), ring.end()).size(), 12u, "");
            for (std::size_t i = 0; i < ring.size(); ++i)
            {
                const uint32_t a = ring[i];
                const uint32_t b = ring[(i + 1) % ring.size()];
                if ((a < 8) != (b < 8))
                {
                    crossings.insert({a, b});
                }
            }
        }
        // Two crossings a ring, no GPU leaving its node for two rings.
        NS_TEST_EXPECT_MSG_EQ(crossings.size(), 8u, "every crossing its own");
        std::set<uint32_t> senders;
        for (const auto& [a, b] : crossings)
        {
            NS_TEST_EXPECT_MSG_EQ(senders.insert(a).second, true, "GPU " << a << " sends once");
        }
        // One member on a node: one ring, in the group's order.
        const std::vector<uint32_t> lone = {0, 1, 2, 3, 8};
        NS_TEST_EXPECT_MSG_EQ(CrossNodeRings(*topology, lone, lone).size(), 1u, "one ring");

        // The all-reduce: 2 x 11/12 of 1 GiB over 4 NICs' payload rate.
        CollectiveProbeConfig c;
        c.op = CollectiveOp::ALL_REDUCE;
        c.bytes = 1ull << 30;
        c.gpus = 12;
        const CollectiveProbeResult r = RunCollectiveProbe(a100.network, c, "a100-sxm-80gb");
        const NetworkDimensionSpec& ib = a100.network.dimensions.at(1);
        const double nic = ib.bandwidthBps * ib.wireEfficiency;
        NS_TEST_EXPECT_MSG_EQ(r.algorithm, "nccl(ring/Simple)", "the ring");
        NS_TEST_EXPECT_MSG_EQ_TOL(
            r.timeS / (2.0 * 11 / 12 * double(c.bytes) / (4 * nic)), 1.0, 0.03, "4 NICs");
    }
};

/**
 * \brief Link speeds a hardware variant gives: NVLS only where NCCL's slowest NVLS channel
 * speed fits the NVLink (else it ran at that speed's bandwidth whatever the link carried, 13.4
 * ms for 256 MiB on a 1 GB/s link), and rings across nodes sized to their slowest link, so a
 * faster network is never slower and a slower NVLink at most proportionally so (the messages
 * carried bytes inflated by the NVLink's cap on every hop: 4x InfiniBand was 3x slower).
 */
class NcclLinkVariantsTestCase : public TestCase
{
  public:
    NcclLinkVariantsTestCase()
        : TestCase("NCCL on link variants: NVLS needs its slowest speed, cross-node rings monotone")
    {}

  private:
    void
    DoRun() override
    {
        const HardwareSpec h100 = HardwareSpec::Load("h100-sxm-80gb");
        CollectiveProbeConfig c;
        c.op = CollectiveOp::ALL_REDUCE;
        c.bytes = 256ull << 20;
        c.gpus = 8;
        HardwareSpec slow = h100;
        slow.network.dimensions[0].bandwidthBps = 14e9; // x 0.824: below (8 + 1) x 3 GB/s
        const CollectiveProbeResult ring = RunCollectiveProbe(slow.network, c, "14 GB/s NVLink");
        NS_TEST_EXPECT_MSG_EQ(ring.algorithm, "nccl(ring/Simple)", "no NVLS speed fits");
        const double nvlink = 14e9 * h100.network.dimensions[0].wireEfficiency;
        NS_TEST_EXPECT_MSG_GT(ring.timeS, 2.0 * 7 / 8 * double(c.bytes) / nvlink, "the link");

        // Across nodes: 12 GPUs (8 + 4) and a broadcast over 4 nodes, on 1x to 8x InfiniBand.
        for (const auto& [op, gpus] : {std::make_pair(CollectiveOp::ALL_REDUCE, 12u),
                                       std::make_pair(CollectiveOp::BROADCAST, 32u)})
        {
            c.op = op;
            c.gpus = gpus;
            double before = 0;
            for (double times : {1.0, 2.0, 4.0, 8.0})
            {
                HardwareSpec fast = h100;
                fast.network.dimensions[1].bandwidthBps *= times;
                const double t = RunCollectiveProbe(fast.network, c, "ib").timeS;
                if (before > 0)
                {
                    NS_TEST_EXPECT_MSG_LT(t, before * 1.02, gpus << " GPUs, " << times << "x IB");
                }
                before = t;
            }
        }
        c.op = CollectiveOp::ALL_REDUCE;
        c.gpus = 12;
        HardwareSpec quarter = h100;
        quarter.network.dimensions[0].bandwidthBps /= 4;
        HardwareSpec eighth = h100;
        eighth.network.dimensions[0].bandwidthBps /= 8;
        const double q = RunCollectiveProbe(quarter.network, c, "nvlink / 4").timeS;
        const double e = RunCollectiveProbe(eighth.network, c, "nvlink / 8").timeS;
        NS_TEST_EXPECT_MSG_LT(e / q, 2.05, "half the NVLink: at most twice the time");
    }
};

/**
 * \brief NCCL's LL chain forwards each hop's lines as they arrive: a 1 MiB broadcast among 64
 * H100s takes about its hops' latencies plus the bytes at LL's rate, and faster InfiniBand does
 * not slow it. Before, each hop stored its whole piece before forwarding (511 us, slowest at
 * the preset's 50 GB/s: 354 us at 12.5, 374 at 200).
 */
class NcclCutThroughTestCase : public TestCase
{
  public:
    NcclCutThroughTestCase()
        : TestCase("NCCL's LL broadcast and reduce forward lines as they arrive (cut-through)")
    {}

  private:
    void
    DoRun() override
    {
        const HardwareSpec h100 = HardwareSpec::Load("h100-sxm-80gb");
        CollectiveProbeConfig c;
        c.bytes = 1ull << 20;
        c.gpus = 64;
        for (CollectiveOp op : {CollectiveOp::BROADCAST, CollectiveOp::REDUCE})
        {
            c.op = op;
            double before = 0;
            for (double times : {0.25, 1.0, 4.0})
            {
                HardwareSpec ib = h100;
                ib.network.dimensions[1].bandwidthBps *= times;
                const CollectiveProbeResult r = RunCollectiveProbe(ib.network, c, "ib");
                NS_TEST_EXPECT_MSG_EQ(r.algorithm, "nccl(ring/LL)", times << "x IB");
                // NCCL's own estimate (2.20.3 tuning.cc): LL's 20.4 GB/s ceiling beyond two
                // nodes and 2.7 us a network step; a store-and-forward chain is 2-4x above.
                NS_TEST_EXPECT_MSG_LT(r.timeS, double(c.bytes) / 20.4e9 + 63 * 2.7e-6, times);
                if (before > 0)
                {
                    NS_TEST_EXPECT_MSG_LT(r.timeS, before * 1.02, times << "x IB");
                }
                before = r.timeS;
            }
        }
        // A reduction is of the data, not of LL's wire bytes (its flags): a 1 MiB reduce among
        // 8 H100s at 1 GB/s of reduction took 2.24 ms under LL, 0.62 under LL128.
        c.op = CollectiveOp::REDUCE;
        c.gpus = 8;
        c.reduceBytesPerSecond = 1e9;
        const CollectiveProbeResult r = RunCollectiveProbe(h100.network, c, "h100-sxm-80gb");
        NS_TEST_EXPECT_MSG_EQ(r.algorithm, "nccl(ring/LL)", "a small reduce");
        NS_TEST_EXPECT_MSG_LT(r.timeS, 1.5 * double(c.bytes) / 1e9, "the data's reduction");
        // A rank reduces its pieces one after another at its rate: 16 MiB cannot be reduced
        // in less than 16 MiB / 1 GB/s (it took 0.62 ms when the pieces' reductions overlapped).
        c.bytes = uint64_t(16) << 20;
        const CollectiveProbeResult big = RunCollectiveProbe(h100.network, c, "h100-sxm-80gb");
        NS_TEST_EXPECT_MSG_GT(big.timeS, double(c.bytes) / 1e9, "a rank's reductions queue");
        NS_TEST_EXPECT_MSG_LT(big.timeS, 1.2 * double(c.bytes) / 1e9, "and only queue");
    }
};

/**
 * \brief NCCL's all-to-all (grouped sends and receives): LL's kernel latency for small
 * shares, Simple's for large, then the pairwise bytes (LL's doubled) at the link's rate; before,
 * a small all-to-all paid the links' latency alone (0.7 us for 64 KiB on 4 H100s).
 */
class NcclAllToAllTestCase : public TestCase
{
  public:
    NcclAllToAllTestCase()
        : TestCase("NCCL's all-to-all pays its point-to-point kernel's latency and protocol")
    {}

  private:
    void
    DoRun() override
    {
        const HardwareSpec h100 = HardwareSpec::Load("h100-sxm-80gb");
        const NetworkDimensionSpec& nvlink = h100.network.dimensions.at(0);
        const double link = nvlink.bandwidthBps * nvlink.wireEfficiency;
        CollectiveProbeConfig c;
        c.op = CollectiveOp::ALL_TO_ALL;
        c.gpus = 4;
        // 16 KiB a peer: LL, 6.6 + 0.6 us, then 3 peers' 32 KiB on the wire.
        c.bytes = 64 * 1024;
        CollectiveProbeResult r = RunCollectiveProbe(h100.network, c, "h100-sxm-80gb");
        NS_TEST_EXPECT_MSG_EQ(r.algorithm, "nccl(p2p/LL)", "16 KiB a peer");
        const double small = 7.2e-6 + 3 * 32768 / link;
        NS_TEST_EXPECT_MSG_EQ_TOL(r.timeS / small, 1.0, 0.05, "LL's latency and wire bytes");
        // 16 MiB a peer: Simple, 8.4 + 3.4 us, then 3 peers' 16 MiB.
        c.bytes = 64ull << 20;
        r = RunCollectiveProbe(h100.network, c, "h100-sxm-80gb");
        NS_TEST_EXPECT_MSG_EQ(r.algorithm, "nccl(p2p/Simple)", "16 MiB a peer");
        const double large = 11.8e-6 + 3 * double(16ull << 20) / link;
        NS_TEST_EXPECT_MSG_EQ_TOL(r.timeS / large, 1.0, 0.02, "Simple's latency and bytes");
        const NcclEstimate net = NcclAllToAllEstimate(4096, true);
        NS_TEST_EXPECT_MSG_EQ_TOL(net.latencyS, 9.3e-6, 1e-12, "LL across the network");
    }
};

/**
 * \brief NCCL's broadcast and reduce: a pipelined chain along each ring, across nodes one ring
 * through each NIC (they ran as one chain through one NIC, 7x slower than NCCL).
 */
class NcclChainTestCase : public TestCase
{
  public:
    NcclChainTestCase()
        : TestCase("NCCL's broadcast and reduce run a chain along each ring, one per NIC")
    {}

  private:
    void
    DoRun() override
    {
        const HardwareSpec h100 = HardwareSpec::Load("h100-sxm-80gb");
        const NetworkDimensionSpec& ib = h100.network.dimensions.at(1);
        const double nics = 8 * ib.bandwidthBps * ib.wireEfficiency;
        CollectiveProbeConfig c;
        c.bytes = 1ull << 30;
        c.gpus = 16;
        for (CollectiveOp op : {CollectiveOp::BROADCAST, CollectiveOp::REDUCE})
        {
            for (uint32_t root : {0u, 11u})
            {
                c.op = op;
                c.root = root;
                const CollectiveProbeResult r =
                    RunCollectiveProbe(h100.network, c, "h100-sxm-80gb");
                NS_TEST_EXPECT_MSG_EQ(r.algorithm, "nccl(ring/Simple)", ToString(op));
                // Every byte through one NIC of the eight, and the pipeline's fill: 64 pieces,
                // 15 hops.
                const double ratio = r.timeS / (double(c.bytes) / nics);
                NS_TEST_EXPECT_MSG_GT_OR_EQ(ratio, 1.0, ToString(op) << " from " << root);
                NS_TEST_EXPECT_MSG_LT(ratio, 78.0 / 64 * 1.1, ToString(op) << " from " << root);
            }
        }
    }
};

/**
 * \brief A chain (broadcast, reduce) is pipelined in whole 512 KiB pieces and a short last one:
 * its time grows with its size (equal 1 MiB pieces forwarded 1.5 MiB whole from GPU to GPU,
 * slower than 2 MiB in two pieces), and 1 MiB no longer crosses the chain store-and-forward.
 */
class ChainPiecesTestCase : public TestCase
{
  public:
    ChainPiecesTestCase()
        : TestCase("a chain's time grows with its size, pipelined from 1 MiB")
    {}

  private:
    void
    DoRun() override
    {
        const HardwareSpec h100 = HardwareSpec::Load("h100-sxm-80gb");
        const NetworkDimensionSpec& nvlink = h100.network.dimensions.at(0);
        const double link = nvlink.bandwidthBps * nvlink.wireEfficiency;
        CollectiveProbeConfig c;
        c.gpus = 8;
        for (CollectiveOp op : {CollectiveOp::BROADCAST, CollectiveOp::REDUCE})
        {
            c.op = op;
            c.algorithm = "ring";
            double last = 0;
            for (uint64_t bytes : {uint64_t(1) << 20,
                                   uint64_t(1482910),
                                   uint64_t(2) << 20,
                                   uint64_t(3145727),
                                   uint64_t(3) << 20,
                                   uint64_t(4) << 20,
                                   uint64_t(40) << 20})
            {
                c.bytes = bytes;
                const double t = RunCollectiveProbe(h100.network, c, "h100-sxm-80gb").timeS;
                NS_TEST_EXPECT_MSG_GT_OR_EQ(t, last, ToString(op) << " of " << bytes << " B");
                NS_TEST_EXPECT_MSG_GT(t, bytes / link, "every byte crosses a link once");
                if (bytes == (uint64_t(1) << 20))
                {
                    // Store-and-forward would cross 7 links one after the other.
                    NS_TEST_EXPECT_MSG_LT(t, 0.85 * 7 * bytes / link, "1 MiB pipelined (was 1.2x)");
                }
                last = t;
            }
        }
    }
};

/**
 * \brief NCCL's LL ceiling and LL128 share across the network follow the ring's nodes and its
 * GPUs per node (tuning.cc: llMaxBws by nNodes, LL128 0.7 only with ppn < 2): a 16-GPU ring on
 * two nodes took the 4+-node LL ceiling and one-GPU-per-node LL128 share.
 */
class NcclNodesTestCase : public TestCase
{
  public:
    NcclNodesTestCase()
        : TestCase("NCCL's LL and LL128 constants by the ring's nodes")
    {}

  private:
    void
    DoRun() override
    {
        const double bus = 400e9;
        const uint64_t bytes = 1 << 20;
        auto bw = [&](NcclProtocol p, uint32_t nodes)
        {
            const NcclEstimate e =
                NcclRingEstimate(CollectiveOp::ALL_REDUCE, 16, bytes, true, bus, p, 0, nodes);
            return e.bandwidthFactor * bus / 1e9;
        };
        NS_TEST_EXPECT_MSG_EQ_TOL(bw(NcclProtocol::LL, 2), 39.0, 1e-9, "two nodes");
        NS_TEST_EXPECT_MSG_EQ_TOL(bw(NcclProtocol::LL, 4), 20.4, 1e-9, "four nodes");
        NS_TEST_EXPECT_MSG_EQ_TOL(bw(NcclProtocol::LL, 0), 20.4, 1e-9, "16 nodes, one GPU each");
        NS_TEST_EXPECT_MSG_EQ_TOL(bw(NcclProtocol::LL128, 2), 0.92 * 400, 1e-9, "8 per node");
        NS_TEST_EXPECT_MSG_EQ_TOL(bw(NcclProtocol::LL128, 0), 0.7 * 400, 1e-9, "one per node");
        // 12 GPUs on two H100 nodes at 512 KiB: LL, as NCCL's constants choose it.
        CollectiveProbeConfig c;
        c.bytes = 512 << 10;
        c.gpus = 12;
        const HardwareSpec h100 = HardwareSpec::Load("h100-sxm-80gb");
        NS_TEST_EXPECT_MSG_EQ(RunCollectiveProbe(h100.network, c, "h100-sxm-80gb").algorithm,
                              "nccl(ring/LL)",
                              "12 GPUs, 512 KiB");
    }
};

/** \brief The NCCL test suite. */
class NcclCollectiveTestSuite : public TestSuite
{
  public:
    NcclCollectiveTestSuite()
        : TestSuite("rapid-llm-nccl", UNIT)
    {
        AddTestCase(new NcclEstimateTestCase, TestCase::QUICK);
        AddTestCase(new NcclChoiceTestCase, TestCase::QUICK);
        AddTestCase(new NcclNvlsEstimateTestCase, TestCase::QUICK);
        AddTestCase(new NcclH100ChoiceTestCase, TestCase::QUICK);
        AddTestCase(new NcclSmCountTestCase, TestCase::QUICK);
        AddTestCase(new NcclP2pSmCountTestCase, TestCase::QUICK);
        AddTestCase(new NcclH100LoggedChoiceTestCase, TestCase::QUICK);
        AddTestCase(new NcclRingSearchTestCase, TestCase::QUICK);
        AddTestCase(new NcclCrossNodeRingsTestCase, TestCase::QUICK);
        AddTestCase(new NcclLinkVariantsTestCase, TestCase::QUICK);
        AddTestCase(new NcclCutThroughTestCase, TestCase::QUICK);
        AddTestCase(new NcclAllToAllTestCase, TestCase::QUICK);
        AddTestCase(new NcclChainTestCase, TestCase::QUICK);
        AddTestCase(new ChainPiecesTestCase, TestCase::QUICK);
        AddTestCase(new NcclNodesTestCase, TestCase::QUICK);
    }
};

static NcclCollectiveTestSuite g_ncclCollectiveTestSuite; //!< registers the suite

} // namespace
