/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// Pipelined inference: the batch split into batches in flight through the pipeline stages (one
// per stage by default, as pipelined serving engines run it). Checks the split, the graph each
// stage runs, the host's step boundaries, the first token's time and the prefill's pipeline
// fill against its closed form.

#include "job-fixtures.h"
#include "ns3/hardware-spec.h"
#include "ns3/host-dispatch.h"
#include "ns3/memory-model.h"
#include "ns3/model-spec.h"
#include "ns3/rapid-llm-helper.h"
#include "ns3/run-spec.h"
#include "ns3/test.h"
#include "ns3/workload.h"
#include "spec-error-check.h"
#include "test-require.h"

using namespace ns3;
using namespace ns3::rapidllm;

namespace {

/** \return the nodes of \p g that run \p type */
std::vector<const WorkNode*>
NodesOf(const StageGraph& g, OpType type)
{
    std::vector<const WorkNode*> out;
    for (const auto& n : g.nodes)
    {
        if (n.kind == WorkNodeKind::COMPUTE && g.OpOf(n).type == type)
        {
            out.push_back(&n);
        }
    }
    return out;
}

/** \return how many nodes of \p g are labelled \p name */
uint32_t
Named(const StageGraph& g, const std::string& name)
{
    uint32_t count = 0;
    for (const auto& n : g.nodes)
    {
        count += name == n.label ? 1 : 0;
    }
    return count;
}

/**
 * \brief The split and its checks: one batch without a pipeline or in training, one per stage
 * by default (at most the batch), the requests spread evenly, the first batches one larger.
 */
class InflightSplitTestCase : public TestCase
{
  public:
    InflightSplitTestCase()
        : TestCase("in-flight batches: the split and its checks")
    {}

  private:
    void
    DoRun() override
    {
        const ModelSpec model = fixture::SmallGpt();
        RunSpec run = fixture::InferenceJob(1, 4, 10, 64, 4);
        NS_TEST_EXPECT_MSG_EQ(run.InflightBatches(), 4u, "one per stage");
        NS_TEST_EXPECT_MSG_EQ(run.InflightBatchSize(0), 3u, "10 = 3 + 3 + 2 + 2");
        NS_TEST_EXPECT_MSG_EQ(run.InflightBatchSize(1), 3u, "");
        NS_TEST_EXPECT_MSG_EQ(run.InflightBatchSize(3), 2u, "");
        run.batch = 2;
        NS_TEST_EXPECT_MSG_EQ(run.InflightBatches(), 2u, "at most the batch");
        run.inflightBatches = 1;
        NS_TEST_EXPECT_MSG_EQ(run.InflightBatches(), 1u, "the whole batch at a time");
        RunSpec single = fixture::InferenceJob(2, 1, 8, 64, 4);
        NS_TEST_EXPECT_MSG_EQ(single.InflightBatches(), 1u, "no pipeline");
        NS_TEST_EXPECT_MSG_EQ(fixture::TrainingJob(1, 4, 1, 1, 8).InflightBatches(),
                              1u,
                              "training has micro-batches");

        run.inflightBatches = 3;
        NS_TEST_EXPECT_MSG_EQ(ThrowsWith(
                                  [&]()
                                  {
                                      run.Validate(model, "job.yaml");
                                  },
                                  {"job.yaml", "inflight_batches", "batch is 2"}),
                              true,
                              "more batches than requests");
        single.inflightBatches = 2;
        NS_TEST_EXPECT_MSG_EQ(ThrowsWith(
                                  [&]()
                                  {
                                      single.Validate(model, "job.yaml");
                                  },
                                  {"inflight_batches", "pp is 1"}),
                              true,
                              "nothing to fill");
    }
};

/**
 * \brief The graphs: each pass runs every batch in flight in order; the last stage samples each
 * batch's tokens and returns them, the first receives one token message per batch and step; the
 * engine's step (one host sync) ends with the last batch's sampling.
 */
class InflightGraphTestCase : public TestCase
{
  public:
    InflightGraphTestCase()
        : TestCase("in-flight batches: each stage's graph and the host's steps")
    {}

  private:
    void
    DoRun() override
    {
        const ModelSpec model = fixture::SmallGpt();
        RunSpec run = fixture::InferenceJob(1, 2, 5, 64, 4);
        run.engine = "vllm";
        Workload w = Workload::Build(model, run);
        RAPIDLLM_REQUIRE_EQ(w.stages.size(), 2u, "two stages");
        const auto samples = NodesOf(w.stages[1], OpType::SAMPLING);
        // The prefill and 3 decode steps, two batches each (3 and 2 requests).
        RAPIDLLM_REQUIRE_EQ(samples.size(), 8u, "4 passes x 2 batches");
        for (std::size_t i = 0; i < samples.size(); i += 2)
        {
            NS_TEST_EXPECT_MSG_EQ(samples[i]->microBatch, samples[i + 1]->microBatch, "a pass");
        }
        NS_TEST_EXPECT_MSG_EQ(Named(w.stages[0], "recv_token"), 6u, "3 steps x 2 batches");
        NS_TEST_EXPECT_MSG_EQ(Named(w.stages[1], "send_token"), 6u, "not after the last pass");
        NS_TEST_EXPECT_MSG_EQ(NodesOf(w.stages[0], OpType::EMBEDDING).size(), 8u, "per batch");

        ApplyHostDispatch(w, HardwareSpec::Load("h100-sxm-80gb").gpu.host);
        uint32_t syncs = 0;
        for (const auto& n : w.stages[1].nodes)
        {
            syncs += n.hostSync ? 1 : 0;
        }
        NS_TEST_EXPECT_MSG_EQ(syncs, 4u, "one host sync per pass, at its last sampling");
        NS_TEST_EXPECT_MSG_EQ(samples[1]->hostSync, true, "the pass's last batch");
        NS_TEST_EXPECT_MSG_EQ(samples[0]->hostSync, false, "not its first");

        // One batch at a time: the graph before batches in flight.
        run.inflightBatches = 1;
        Workload one = Workload::Build(model, run);
        NS_TEST_EXPECT_MSG_EQ(NodesOf(one.stages[1], OpType::SAMPLING).size(), 4u, "per pass");
        // The prefill's activations are the largest batch's (where a profiled forward, kept to
        // one token here, is narrower; vLLM's scheduler would hold every step to its tokens, so
        // the engine is none here).
        w.run.profileTokens = 1;
        one.run.profileTokens = 1;
        w.run.engine = "none";
        one.run.engine = "none";
        const GpuSpec gpu = HardwareSpec::Load("h100-sxm-80gb").gpu;
        const MemoryReport split = AnalyzeMemory(w, gpu);
        const MemoryReport whole = AnalyzeMemory(one, gpu);
        NS_TEST_EXPECT_MSG_EQ(split.worst.kvCache, whole.worst.kvCache, "the same cache");
        NS_TEST_EXPECT_MSG_EQ(split.worst.activations * 5, whole.worst.activations * 3, "3 of 5");
    }
};

/**
 * \brief Time: a compute-bound prefill of M batches through pp stages takes (M + pp - 1) / M
 * stage times of a batch, against pp stage times of the whole batch: 3/4 for two and two; the
 * first token is every request's (the last batch's sampling).
 */
class InflightTimeTestCase : public TestCase
{
  public:
    InflightTimeTestCase()
        : TestCase("in-flight batches: the prefill's pipeline fill, the first token")
    {}

  private:
    void
    DoRun() override
    {
        auto report = [](uint32_t inflight, uint32_t generated)
        {
            Ptr<RapidLlmHelper> h = CreateObject<RapidLlmHelper>();
            h->Load("llama2-7b", "h100-sxm-80gb");
            RunSpec run = fixture::InferenceJob(1, 2, 8, 2048, generated);
            run.inflightBatches = inflight;
            h->SetRun(run);
            const RunReport r = h->Run();
            h->Dispose();
            return r;
        };
        const RunReport whole = report(1, 1);
        const RunReport split = report(2, 1);
        // With one token the request ends at its first token: every batch's.
        NS_TEST_EXPECT_MSG_EQ_TOL(split.ttftS, split.stepTimeS, 1e-12, "the last batch's");
        const double ratio = split.ttftS / whole.ttftS;
        // 3/4, less what does not split (the LM head on the last stage only, the activation
        // sends).
        NS_TEST_EXPECT_MSG_GT(ratio, 0.70, "the pipeline fills once");
        NS_TEST_EXPECT_MSG_LT(ratio, 0.82, "and then both stages work");
        // Decode at batch 8 is bound by reading the weights: split in two, each stage reads its
        // weights once per batch, twice a step, while both stages work at once; the time per
        // token stays about the same (neither halved nor doubled), each batch waiting for its
        // own token only.
        const double tpotRatio = report(2, 16).tpotS / report(1, 16).tpotS;
        NS_TEST_EXPECT_MSG_GT(tpotRatio, 0.8, "two weight reads a step on each stage");
        NS_TEST_EXPECT_MSG_LT(tpotRatio, 1.2, "done by both stages at once");
    }
};

} // namespace

/** \brief Pipelined inference with batches in flight. */
class InflightBatchesTestSuite : public TestSuite
{
  public:
    InflightBatchesTestSuite()
        : TestSuite("rapid-llm-inflight-batches", UNIT)
    {
        AddTestCase(new InflightSplitTestCase, TestCase::QUICK);
        AddTestCase(new InflightGraphTestCase, TestCase::QUICK);
        AddTestCase(new InflightTimeTestCase, TestCase::QUICK);
    }
};

static InflightBatchesTestSuite g_inflightBatchesTestSuite;
