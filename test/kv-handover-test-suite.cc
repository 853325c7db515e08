/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// Disaggregated serving's KV handover: where the placement puts each instance, and that the
// time of a request's KV cache between any prefill and any decode instance is that pair's own
// (probed once per class of pair), their mean what every pair replayed one by one gives.

#include "ns3/collective-probe.h"
#include "ns3/job-options.h"
#include "ns3/kv-handover.h"
#include "ns3/test.h"

#include <cmath>

using namespace ns3;
using namespace ns3::rapidllm;

namespace {

/** \return Llama-2 7B inference of a 1,024-token prompt on H100s with tensor degree \p tp */
ResolvedJob
Instance(uint32_t tp)
{
    JobOptions o;
    o.Set("model", "llama2-7b");
    o.Set("hardware", "h100-sxm-80gb");
    o.Set("mode", "inference");
    o.Set("prompt", "1024");
    o.Set("tp", std::to_string(tp));
    return o.ToSpecs();
}

/** \return the mean of every prefill and decode instance pair of \p at, each replayed alone */
double
MeanOfEveryPair(const NetworkSpec& net,
                uint32_t gpus,
                const ResolvedJob& prefill,
                const ResolvedJob& decode,
                const DisaggregatedPlacement& at)
{
    double sum = 0;
    for (uint64_t p = 0; p < at.sets * at.prefill; ++p)
    {
        for (uint64_t d = 0; d < at.sets * at.decode; ++d)
        {
            sum += RunTransferProbe(net,
                                    gpus,
                                    KvCacheTransfers(prefill,
                                                     decode,
                                                     static_cast<uint32_t>(at.PrefillFirst(p)),
                                                     static_cast<uint32_t>(at.DecodeFirst(d))));
        }
    }
    return sum / double(at.sets * at.prefill * at.sets * at.decode);
}

/** The instances' places in a set and the sets' in the budget, by hand. */
class PlacementTestCase : public TestCase
{
  public:
    PlacementTestCase()
        : TestCase("three TP2 prefill and two TP4 decode instances, set by set")
    {}

  private:
    void
    DoRun() override
    {
        // Decode (the larger) first: GPUs 0-7, prefill from 8 to 13; a set spans 16.
        const auto at = DisaggregatedPlacement::Place(2, 4, 3, 2, 36, true);
        NS_TEST_ASSERT_MSG_EQ(at.has_value(), true, "fits");
        NS_TEST_EXPECT_MSG_EQ(at->sets, 2, "two sets of 16 in 36 GPUs");
        NS_TEST_EXPECT_MSG_EQ(at->Used(), 28, "14 GPUs a set");
        const uint64_t prefills[] = {8, 10, 12, 24, 26, 28};
        for (uint64_t k = 0; k < 6; ++k)
        {
            NS_TEST_EXPECT_MSG_EQ(at->PrefillFirst(k), prefills[k], "prefill instance " << k);
        }
        const uint64_t decodes[] = {0, 4, 16, 20};
        for (uint64_t k = 0; k < 4; ++k)
        {
            NS_TEST_EXPECT_MSG_EQ(at->DecodeFirst(k), decodes[k], "decode instance " << k);
        }
        NS_TEST_EXPECT_MSG_EQ(
            DisaggregatedPlacement::Place(2, 4, 3, 2, 36, false)->sets, 1, "the set alone");
        NS_TEST_EXPECT_MSG_EQ(DisaggregatedPlacement::Place(2, 4, 3, 2, 13, true).has_value(),
                              false,
                              "a set ends at GPU 14");
        // Prefill larger: its instances first, the decode ones aligned after them.
        const auto other = DisaggregatedPlacement::Place(4, 1, 1, 3, 8, true);
        NS_TEST_EXPECT_MSG_EQ(other->PrefillFirst(0), 0, "prefill first");
        NS_TEST_EXPECT_MSG_EQ(other->DecodeFirst(2), 6, "decode from GPU 4");
        NS_TEST_EXPECT_MSG_EQ(other->sets, 1, "a set spans all 8");
    }
};

/** Each pair's own time, and their mean, against every pair replayed alone. */
class PairTimesTestCase : public TestCase
{
  public:
    PairTimesTestCase()
        : TestCase("a pair's handover is its own; the mean is every pair's")
    {}

  private:
    void
    DoRun() override
    {
        const ResolvedJob prefill = Instance(2);
        const ResolvedJob decode = Instance(4);
        const NetworkSpec& net = decode.hardware.network;
        const uint32_t gpus = 64;
        KvHandoverTimes times(net, gpus, "flow", "");
        // Within a node (NVLink) against across nodes (the NICs): the second is slower.
        const double near = times.Between(0, 1, prefill, decode, 8, 12);
        const double far = times.Between(0, 1, prefill, decode, 8, 0);
        NS_TEST_EXPECT_MSG_EQ_TOL(
            near,
            RunTransferProbe(net, gpus, KvCacheTransfers(prefill, decode, 8, 12)),
            1e-15,
            "the pair's own replay");
        NS_TEST_EXPECT_MSG_GT(far, 2 * near, "the network is slower than NVLink");
        // Four sets of three prefill and two decode instances in 64 GPUs: 12 x 8 pairs, in
        // and across nodes, one node or several apart.
        const auto at = DisaggregatedPlacement::Place(2, 4, 3, 2, gpus, true);
        NS_TEST_ASSERT_MSG_EQ(at->sets, 4, "four sets");
        const double mean = times.Mean(0, 1, prefill, decode, *at);
        const double every = MeanOfEveryPair(net, gpus, prefill, decode, *at);
        NS_TEST_EXPECT_MSG_EQ_TOL(mean / every, 1.0, 1e-9, "the mean of every pair's replay");
        NS_TEST_EXPECT_MSG_EQ_TOL(mean / far, 1.0, 1e-9, "every pair across nodes");
        NS_TEST_EXPECT_MSG_LT(times.Probes(), 96, "fewer replays than pairs (classes)");
        // Eight sets of two TP1 prefill and three TP2 decode instances, one a node: an eighth
        // of the pairs within a node.
        const ResolvedJob tp1 = Instance(1);
        const ResolvedJob tp2 = Instance(2);
        const auto nodes = DisaggregatedPlacement::Place(1, 2, 2, 3, gpus, true);
        NS_TEST_ASSERT_MSG_EQ(nodes->sets, 8, "a set a node");
        const double mixed = times.Mean(2, 3, tp1, tp2, *nodes);
        NS_TEST_EXPECT_MSG_EQ_TOL(mixed / MeanOfEveryPair(net, gpus, tp1, tp2, *nodes),
                                  1.0,
                                  1e-9,
                                  "the mean of every pair's replay");
        const double inNode = times.Between(2, 3, tp1, tp2, 6, 0);
        const double across = times.Between(2, 3, tp1, tp2, 6, 8);
        NS_TEST_EXPECT_MSG_EQ_TOL(
            mixed, (inNode + 7 * across) / 8, 1e-9 * mixed, "an eighth in a node");
        // One set on one node: every pair within it, the first pair's time exactly.
        KvHandoverTimes one(net, gpus, "flow", "");
        const auto node = DisaggregatedPlacement::Place(2, 2, 2, 2, 8, false);
        NS_TEST_EXPECT_MSG_EQ(one.Mean(0, 0, prefill, Instance(2), *node),
                              one.Between(0, 0, prefill, Instance(2), 4, 0),
                              "NVLink alike");

        // An oversubscribed fat tree (2:1 up from each leaf of four nodes; 16 sets, a node
        // each): pairs within a leaf and across leaves alike in a class.
        {
            JobOptions o;
            o.Set("model", "llama2-7b");
            o.Set("hardware",
                  std::string(RAPIDLLM_SOURCE_DIR) + "/examples/studies/a100-sxm-80gb-2to1.yaml");
            o.Set("mode", "inference");
            o.Set("prompt", "1024");
            o.Set("tp", "1");
            const ResolvedJob a1 = o.ToSpecs();
            o.Set("tp", "2");
            const ResolvedJob a2 = o.ToSpecs();
            const NetworkSpec& tree = a1.hardware.network;
            KvHandoverTimes fat(tree, 128, "flow", "");
            const auto sets = DisaggregatedPlacement::Place(1, 2, 2, 3, 128, true);
            const double m = fat.Mean(2, 3, a1, a2, *sets);
            const double e = MeanOfEveryPair(tree, 128, a1, a2, *sets);
            NS_TEST_EXPECT_MSG_EQ_TOL(m / e, 1.0, 1e-9, "the mean of every pair's replay");
            NS_TEST_EXPECT_MSG_LT(fat.Probes(), 32, "a replay a class");
        }
        // With a fault every pair is its own class: the slowed GPU's pairs take longer.
        NetworkSpec faulty = net;
        faulty.faults.push_back({"gpu24", 0.02});
        KvHandoverTimes slowed(faulty, gpus, "flow", "");
        NS_TEST_EXPECT_MSG_GT(slowed.Between(0, 1, prefill, decode, 24, 0),
                              1.5 * slowed.Between(0, 1, prefill, decode, 28, 4),
                              "the pair through the slowed GPU");
        const double faultyMean = slowed.Mean(0, 1, prefill, decode, *at);
        NS_TEST_EXPECT_MSG_EQ_TOL(faultyMean / MeanOfEveryPair(faulty, gpus, prefill, decode, *at),
                                  1.0,
                                  1e-12,
                                  "every pair replayed");
        NS_TEST_EXPECT_MSG_GT(faultyMean, mean, "slower with the fault");
    }
};

/** The suite. */
class KvHandoverTestSuite : public TestSuite
{
  public:
    KvHandoverTestSuite()
        : TestSuite("rapid-llm-kv-handover", UNIT)
    {
        AddTestCase(new PlacementTestCase, TestCase::QUICK);
        AddTestCase(new PairTimesTestCase, TestCase::QUICK);
    }
};

/** Static instance. */
static KvHandoverTestSuite g_kvHandoverTestSuite;

} // namespace
