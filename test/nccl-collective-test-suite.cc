/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// NCCL's protocols and its own protocol choice (issue 12 item 2), against NCCL 2.20.3's
// tuning model (src/graph/tuning.cc) written out by hand.

#include "network-test-spec.h"
#include "ns3/collective-probe.h"
#include "ns3/nccl-collective.h"
#include "ns3/test.h"

#include <cmath>

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

/** \brief The NCCL test suite. */
class NcclCollectiveTestSuite : public TestSuite
{
  public:
    NcclCollectiveTestSuite()
        : TestSuite("rapid-llm-nccl", UNIT)
    {
        AddTestCase(new NcclEstimateTestCase, TestCase::QUICK);
        AddTestCase(new NcclChoiceTestCase, TestCase::QUICK);
    }
};

static NcclCollectiveTestSuite g_ncclCollectiveTestSuite; //!< registers the suite

} // namespace
