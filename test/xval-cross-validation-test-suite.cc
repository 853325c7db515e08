/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// Cross-validation: the quick workloads of `rapid-llm xval` (ring all-reduce, all-to-all on a
// switch and on a 2:1 fat tree, incast, torus all-reduce healthy / degraded / with a dead
// link, a pipeline chain) complete on the flow-level and the ns-3 packet-level networks
// within 5% of each other, losslessly, with the same messages.

#include "ns3/cross-validation.h"
#include "ns3/test.h"

#include <cmath>

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
 * \brief The flow model misses mechanisms it must not pretend to have: a lone message over a
 * store-and-forward switch arrives one full frame later on the packet network. This pins the
 * sign and size of the known gap (doc/packet-network.md) so that a change to either model
 * that moves it shows up here.
 */
class XvalKnownGapTestCase : public TestCase
{
  public:
    XvalKnownGapTestCase()
        : TestCase("the packet network adds store-and-forward the flow model omits")
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
            // previous message to land), so the frame is paid on about a quarter of them
            // (0.255 measured; a frame on every step while each step also waited for its
            // previous message to land).
            XvalWorkload old = w;
            for (auto& d : old.network.dimensions)
            {
                d.latencyS = d.kind == TopologyKind::FAT_TREE ? 4735e-9 : 1700e-9;
            }
            XvalRow now = CrossValidate(w);
            NS_TEST_EXPECT_MSG_GT(now.packet.timeS, now.flow.timeS, "the packet network is slower");
            XvalRow row = CrossValidate(old);
            const double frame = 4098 / (25e9 * 0.94 * 4044 / 4098); // the default MTU, 4096
            const double steps = 2 * (16 - 1);
            NS_TEST_ASSERT_MSG_EQ_TOL((row.packet.timeS - row.flow.timeS) / (steps * frame),
                                      0.25,
                                      0.1,
                                      "a frame on a quarter of the steps");
            return;
        }
        NS_TEST_ASSERT_MSG_EQ(true, false, "workload ring-allreduce-16gpu-1MiB is missing");
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
    }
};

static XvalTestSuite g_xvalTestSuite;
