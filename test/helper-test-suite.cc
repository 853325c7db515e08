/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// RapidLlmHelper: the report a run gives (the fields scripts rely on, and how they relate), the
// trace sources, and replaying written traces through the helper.

#include "job-fixtures.h"
#include "ns3/boolean.h"
#include "ns3/layout-sweep.h"
#include "ns3/rapid-llm-helper.h"
#include "ns3/string.h"
#include "ns3/test.h"

#include <algorithm>
#include <cmath>

using namespace ns3;
using namespace ns3::rapidllm;

namespace {
uint64_t g_ended = 0; //!< operators ended, counted by the trace sink

void
CountEnd(const OperatorEvent& event)
{
    ++g_ended;
}

uint64_t g_messages = 0;   //!< messages delivered, counted by the trace sink
uint64_t g_bytes = 0;      //!< their bytes
double g_minLatency = 1e9; //!< the fastest delivery

void
CountMessage(uint64_t id, uint32_t src, uint32_t dst, uint64_t bytes, double latency)
{
    ++g_messages;
    g_bytes += bytes;
    g_minLatency = std::min(g_minLatency, latency);
}

/** A small GPT on two DGX A100 nodes. */
Ptr<RapidLlmHelper>
SmallJob(RunSpec run)
{
    Ptr<RapidLlmHelper> h = CreateObject<RapidLlmHelper>();
    h->Load("gpt-1.7b", "a100-sxm-80gb");
    h->SetModel(fixture::SmallGpt());
    h->SetRun(run);
    return h;
}
} // namespace

/** \brief A training run's report: fields present and consistent with each other. */
class TrainingReportTestCase : public TestCase
{
  public:
    TrainingReportTestCase()
        : TestCase("training report fields agree with each other")
    {}

  private:
    void
    DoRun() override
    {
        RunSpec run;
        run.parallel.tp = 2;
        run.parallel.pp = 2;
        run.parallel.dp = 4;
        run.globalBatch = 16;
        run.sequence = 512;
        Ptr<RapidLlmHelper> h = SmallJob(run);
        g_ended = 0;
        h->TraceConnectWithoutContext("OperatorEnd", MakeCallback(&CountEnd));
        RunReport r = h->Run();
        NS_TEST_ASSERT_MSG_GT(r.stepTimeS, 0, "a step takes time");
        NS_TEST_EXPECT_MSG_EQ(r.gpus, 16, "gpus");
        NS_TEST_EXPECT_MSG_GT(g_ended, 0, "the OperatorEnd trace source fired");
        // One compute stream: its busy time is the sum of the rank's kernels.
        NS_TEST_EXPECT_MSG_EQ_TOL(r.gemmS + r.attentionS + r.elementwiseS + r.optimizerS,
                                  r.computeS,
                                  1e-6,
                                  "compute by kind adds up");
        NS_TEST_EXPECT_MSG_EQ_TOL(r.computeS + r.exposedCommS + r.bubbleS,
                                  r.stepTimeS,
                                  1e-9,
                                  "the breakdown covers the critical rank's step");
        // TFLOP/s per GPU is the graph's FLOPs (Megatron-LM's formula) over GPUs and time.
        Workload w = h->BuildWorkload();
        NS_TEST_EXPECT_MSG_EQ_TOL(
            r.tflopsPerGpu, w.TotalModelFlops() / (16 * r.stepTimeS) / 1e12, 1e-6, "tflops");
        NS_TEST_EXPECT_MSG_GT(r.mfu, 0.05, "mfu");
        NS_TEST_EXPECT_MSG_LT(r.mfu, 1.0, "mfu");
        NS_TEST_EXPECT_MSG_EQ(r.feasible, true, "fits");
        // The JSON a script reads parses strictly and carries the report's own values.
        const Json json = Json::parse(r.ToJson());
        NS_TEST_EXPECT_MSG_EQ(json.at("mode").get<std::string>(), "training", "mode");
        NS_TEST_EXPECT_MSG_EQ(json.at("feasible").get<bool>(), r.feasible, "feasible");
        NS_TEST_EXPECT_MSG_EQ(json.at("step_time_s").get<double>(), r.stepTimeS, "step");
        NS_TEST_EXPECT_MSG_EQ(json.at("tflops_per_gpu").get<double>(), r.tflopsPerGpu, "tflops");
        NS_TEST_EXPECT_MSG_EQ(json.at("mfu").get<double>(), r.mfu, "mfu");
        const Json& memory = json.at("memory");
        NS_TEST_EXPECT_MSG_EQ(memory.at("peak_bytes").get<uint64_t>(), r.memory.peak, "peak");
        NS_TEST_EXPECT_MSG_EQ(memory.at("capacity_bytes").get<uint64_t>(), r.capacityBytes, "cap");
        NS_TEST_EXPECT_MSG_EQ(
            memory.at("weights").get<uint64_t>() + memory.at("gradients").get<uint64_t>()
                + memory.at("optimizer").get<uint64_t>() + memory.at("activations").get<uint64_t>()
                + memory.at("kv_cache").get<uint64_t>() + memory.at("framework").get<uint64_t>(),
            memory.at("peak_bytes").get<uint64_t>(),
            "the memory categories add up to the peak");
        const Json& breakdown = json.at("breakdown_s");
        NS_TEST_EXPECT_MSG_EQ(breakdown.at("compute").get<double>(), r.computeS, "compute");
        NS_TEST_EXPECT_MSG_EQ(
            breakdown.at("exposed_communication").get<double>(), r.exposedCommS, "exposed");
        NS_TEST_EXPECT_MSG_EQ(breakdown.at("pipeline_bubble").get<double>(), r.bubbleS, "bubble");
        NS_TEST_EXPECT_MSG_EQ(json.at("gpus").get<uint32_t>(), 16, "gpus");
        NS_TEST_EXPECT_MSG_EQ(json.at("backend").get<std::string>(), "flow", "backend");
        NS_TEST_EXPECT_MSG_EQ(json.contains("wall_time_s"),
                              false,
                              "no wall time: the same inputs give the same JSON");
        // The same job replayed in full gives the same step (the symmetry reduction is exact
        // here), and tracing its messages changes nothing.
        Ptr<RapidLlmHelper> full = SmallJob(run);
        full->SetAttribute("Symmetry", BooleanValue(false));
        g_messages = 0;
        g_bytes = 0;
        g_minLatency = 1e9;
        full->TraceConnectWithoutContext("MessageDelivered", MakeCallback(&CountMessage));
        NS_TEST_EXPECT_MSG_EQ_TOL(full->Run().stepTimeS / r.stepTimeS, 1.0, 1e-9, "symmetry");
        NS_TEST_EXPECT_MSG_GT(g_messages, 0u, "the MessageDelivered trace source fired");
        NS_TEST_EXPECT_MSG_GT(g_bytes, 0u, "bytes carried");
        NS_TEST_EXPECT_MSG_GT(g_minLatency, 0, "no message arrives instantly");
    }
};

/** \brief An inference run: first token, then equal decode steps. */
class InferenceReportTestCase : public TestCase
{
  public:
    InferenceReportTestCase()
        : TestCase("inference report: time to first token and per output token")
    {}

  private:
    void
    DoRun() override
    {
        RunSpec run;
        run.mode = RunMode::INFERENCE;
        run.parallel.tp = 2;
        run.batch = 2;
        run.promptTokens = 256;
        run.generatedTokens = 8;
        RunReport r = SmallJob(run)->Run();
        NS_TEST_ASSERT_MSG_GT(r.ttftS, 0, "prefill takes time");
        NS_TEST_EXPECT_MSG_LT(r.ttftS, r.stepTimeS, "first token before the end");
        NS_TEST_EXPECT_MSG_EQ_TOL(r.tpotS * 7 + r.ttftS, r.stepTimeS, 1e-9, "tpot");
        NS_TEST_EXPECT_MSG_GT(r.memory.kvCache, 0, "a KV cache");
        const Json json = Json::parse(r.ToJson());
        NS_TEST_EXPECT_MSG_EQ(json.at("ttft_s").get<double>(), r.ttftS, "ttft_s");
        NS_TEST_EXPECT_MSG_EQ(json.at("tpot_s").get<double>(), r.tpotS, "tpot_s");
        NS_TEST_EXPECT_MSG_EQ(json.contains("mfu"), false, "no mfu for inference");
        NS_TEST_EXPECT_MSG_EQ(
            json.at("memory").at("kv_cache").get<uint64_t>(), r.memory.kvCache, "kv cache");
    }
};

/**
 * \brief Engine semantics of the first token: sampled by the prefill, or (TurboMind) by a first
 * decode step after a prefill of all but the last prompt token; with and without a pipeline.
 */
class FirstTokenPassTestCase : public TestCase
{
  public:
    FirstTokenPassTestCase()
        : TestCase("inference: first token from the prefill or from a first decode step")
    {}

  private:
    void
    DoRun() override
    {
        for (uint32_t pp : {1u, 2u})
        {
            RunSpec run;
            run.mode = RunMode::INFERENCE;
            run.parallel.pp = pp;
            run.batch = 4;
            run.promptTokens = 512;
            run.generatedTokens = 16;
            RunReport prefill = SmallJob(run)->Run();
            run.firstTokenFromPrefill = false;
            RunReport decode = SmallJob(run)->Run();
            const std::string at = " (pp " + std::to_string(pp) + ")";
            // One more decode step before the first token, one prompt token less to prefill;
            // with a pipeline the first stage starts that step while the last still prefills.
            NS_TEST_EXPECT_MSG_GT(decode.ttftS, prefill.ttftS + 0.5 * prefill.tpotS / pp, at);
            NS_TEST_EXPECT_MSG_LT(decode.ttftS, prefill.ttftS + 1.5 * prefill.tpotS, at);
            NS_TEST_EXPECT_MSG_EQ_TOL(decode.tpotS / prefill.tpotS, 1.0, 0.02, at);
            NS_TEST_EXPECT_MSG_EQ_TOL(
                decode.tpotS * 15 + decode.ttftS, decode.stepTimeS, 1e-9, "tpot" + at);
        }
    }
};

/** \brief A blocking TP reduction (Megatron-LM 2021) exposes what overlapping hides. */
class TpReduceTestCase : public TestCase
{
  public:
    TpReduceTestCase()
        : TestCase("training: blocking TP input-gradient reduction is slower than overlapped")
    {}

  private:
    void
    DoRun() override
    {
        RunSpec run;
        run.parallel.tp = 4;
        run.globalBatch = 2;
        run.microBatch = 2;
        run.sequence = 1024;
        RunReport overlap = SmallJob(run)->Run();
        run.overlapTpReduce = false;
        RunReport blocking = SmallJob(run)->Run();
        NS_TEST_EXPECT_MSG_EQ_TOL(blocking.computeS, overlap.computeS, 1e-12, "same kernels");
        NS_TEST_EXPECT_MSG_GT(blocking.exposedCommS, overlap.exposedCommS, "more exposed");
        NS_TEST_EXPECT_MSG_GT(blocking.stepTimeS, overlap.stepTimeS, "slower");
    }
};

/**
 * \brief A layout sweep: invalid layouts skipped and counted, the fitting ones ranked by step
 * time (each the step a direct run of its layout gives), the others after them, deterministic.
 */
class LayoutSweepTestCase : public TestCase
{
  public:
    LayoutSweepTestCase()
        : TestCase("layout sweep ranks the valid layouts, fitting ones by step time")
    {}

  private:
    void
    DoRun() override
    {
        ModelSpec model = ModelSpec::Load("gpt-1.7b");
        HardwareSpec hardware = HardwareSpec::Load("a100-sxm-80gb");
        RunSpec base;
        base.globalBatch = 128;
        base.dtype = DataType::FP16;
        SweepSpace space;
        space.gpus = 8;
        space.tp = {1, 2, 3}; // 3 divides neither the heads' split nor 8 GPUs
        space.pp = {1, 2};
        space.microBatch = {2, 16}; // micro-batch 16 without recomputation overflows tp 1
        space.recompute = {Recompute::NONE};
        LayoutSweep sweep(model, hardware, base, space);
        std::vector<SweepPoint> points = sweep.Run();
        NS_TEST_ASSERT_MSG_EQ(points.size(), 8u, "tp 1, 2 x pp 1, 2 x mbs 2, 16");
        NS_TEST_EXPECT_MSG_EQ(sweep.GetSkipped(), 4u, "tp 3: two pp x two mbs");
        bool seenUnfit = false;
        for (std::size_t i = 0; i < points.size(); ++i)
        {
            const SweepPoint& p = points[i];
            NS_TEST_EXPECT_MSG_EQ(p.run.parallel.Gpus(), 8u, "every layout uses the 8 GPUs");
            seenUnfit = seenUnfit || !p.report.feasible;
            NS_TEST_EXPECT_MSG_EQ(p.report.feasible || seenUnfit, true, "fitting layouts first");
            NS_TEST_EXPECT_MSG_EQ(!p.report.feasible || !seenUnfit, true, "no fitting after unfit");
            if (i > 0 && p.report.feasible)
            {
                NS_TEST_EXPECT_MSG_GT_OR_EQ(
                    p.report.stepTimeS, points[i - 1].report.stepTimeS, "ranked by step time");
            }
        }
        NS_TEST_EXPECT_MSG_EQ(
            points.back().report.feasible, false, "tp 1 pp 1 mbs 16 does not fit");
        NS_TEST_EXPECT_MSG_EQ(points.back().report.reason.empty(), false, "with a reason");
        Ptr<RapidLlmHelper> direct = CreateObject<RapidLlmHelper>();
        direct->SetModel(model);
        direct->SetHardware(hardware);
        direct->SetRun(points[0].run);
        NS_TEST_EXPECT_MSG_EQ(direct->Run().stepTimeS, points[0].report.stepTimeS, "same step");
        std::vector<SweepPoint> again = sweep.Run();
        for (std::size_t i = 0; i < points.size(); ++i)
        {
            NS_TEST_EXPECT_MSG_EQ(again[i].report.stepTimeS, points[i].report.stepTimeS, "again");
            NS_TEST_EXPECT_MSG_EQ(again[i].run.parallel.tp, points[i].run.parallel.tp, "order");
        }
    }
};

/**
 * \brief Every parallel axis runs end to end through the real compute model and network:
 * context parallelism (ring attention), experts, sequence parallelism, ZeRO-3, interleaving.
 */
class LayoutsEndToEndTestCase : public TestCase
{
  public:
    LayoutsEndToEndTestCase()
        : TestCase("every parallel axis runs end to end")
    {}

  private:
    void
    DoRun() override
    {
        struct Case
        {
            const char* what;
            const char* model;
            RunSpec run;
        };

        std::vector<Case> cases;
        RunSpec cp;
        cp.parallel.cp = 4;
        cp.parallel.dp = 2;
        cp.globalBatch = 4;
        cp.sequence = 4096;
        cases.push_back({"context parallel (ring attention)", "llama3-8b", cp});
        RunSpec ep;
        ep.parallel.tp = 2;
        ep.parallel.dp = 4;
        ep.parallel.ep = 4;
        ep.globalBatch = 8;
        ep.sequence = 1024;
        cases.push_back({"experts", "mixtral-8x7b", ep});
        RunSpec sp;
        sp.parallel.tp = 4;
        sp.parallel.pp = 2;
        sp.parallel.dp = 2;
        sp.parallel.virtualStages = 2;
        sp.parallel.sequenceParallel = true;
        sp.parallel.zeroStage = 3;
        sp.recompute = Recompute::SELECTIVE;
        sp.flashAttention = false;
        sp.globalBatch = 8;
        sp.sequence = 1024;
        cases.push_back({"sequence parallel, ZeRO-3, interleaved, selective", "gpt-7.5b", sp});
        for (auto& c : cases)
        {
            Ptr<RapidLlmHelper> h = CreateObject<RapidLlmHelper>();
            h->Load(c.model, "h100-sxm-80gb");
            ModelSpec m = h->GetModel();
            m.layers = 4;
            h->SetModel(m);
            h->SetRun(c.run);
            RunReport r = h->Run();
            NS_TEST_EXPECT_MSG_GT(r.stepTimeS, 0, c.what);
            NS_TEST_EXPECT_MSG_GT(r.mfu, 0.01, c.what);
            NS_TEST_EXPECT_MSG_LT(r.mfu, 1.0, c.what);
        }
    }
};

/**
 * \brief A sweep asked for uneven stages tries the pipeline degrees that do not divide the
 * layers, with Megatron-LM's first/last-stage split; otherwise it leaves them out.
 */
class UnevenSweepTestCase : public TestCase
{
  public:
    UnevenSweepTestCase()
        : TestCase("layout sweep: uneven stages when asked")
    {}

  private:
    void
    DoRun() override
    {
        uint32_t first = 0;
        uint32_t last = 0;
        NS_TEST_EXPECT_MSG_EQ(UnevenStageSplit(126, 16, first, last), true, "Llama-3 405B");
        NS_TEST_EXPECT_MSG_EQ(first * 100 + last, 707u, "7 and 7 around 14 x 8");
        NS_TEST_EXPECT_MSG_EQ(UnevenStageSplit(9, 2, first, last), true, "two stages");
        NS_TEST_EXPECT_MSG_EQ(first * 100 + last, 504u, "the last stage (with the head) less");
        NS_TEST_EXPECT_MSG_EQ(UnevenStageSplit(5, 4, first, last), false, "2 x 2 leaves 1 for 2");

        ModelSpec model = fixture::SmallModel("gpt-1.7b", 6);
        HardwareSpec hardware = HardwareSpec::Load("a100-sxm-80gb");
        RunSpec base;
        base.globalBatch = 8;
        base.sequence = 512;
        SweepSpace space;
        space.gpus = 4;
        space.tp = {1};
        space.microBatch = {1};
        space.recompute = {Recompute::NONE};
        auto pipelines = [](const std::vector<SweepPoint>& points)
        {
            std::vector<uint32_t> pps;
            for (const auto& p : points)
            {
                pps.push_back(p.run.parallel.pp);
            }
            std::sort(pps.begin(), pps.end());
            return pps;
        };
        LayoutSweep even(model, hardware, base, space);
        NS_TEST_EXPECT_MSG_EQ((pipelines(even.Run()) == std::vector<uint32_t>{1, 2}),
                              true,
                              "6 layers: pp 1 and 2 only");
        space.unevenStages = true;
        LayoutSweep uneven(model, hardware, base, space);
        std::vector<SweepPoint> points = uneven.Run();
        NS_TEST_ASSERT_MSG_EQ(
            (pipelines(points) == std::vector<uint32_t>{1, 2, 4}), true, "pp 4 as 1, 2, 2, 1");
        for (const auto& p : points)
        {
            if (p.run.parallel.pp == 4)
            {
                NS_TEST_EXPECT_MSG_EQ(p.run.parallel.firstStageLayers, 1u, "first stage");
                NS_TEST_EXPECT_MSG_EQ(p.run.parallel.lastStageLayers, 1u, "last stage");
                NS_TEST_EXPECT_MSG_EQ(p.report.feasible, true, p.report.reason);
                NS_TEST_EXPECT_MSG_GT(p.report.stepTimeS, 0, "replayed");
            }
            else
            {
                NS_TEST_EXPECT_MSG_EQ(p.run.parallel.UnevenStages(), false, "even where it fits");
            }
        }
    }
};

/** \brief The helper test suite. */
class HelperTestSuite : public TestSuite
{
  public:
    HelperTestSuite()
        : TestSuite("rapid-llm-helper", UNIT)
    {
        AddTestCase(new TrainingReportTestCase, TestCase::QUICK);
        AddTestCase(new InferenceReportTestCase, TestCase::QUICK);
        AddTestCase(new FirstTokenPassTestCase, TestCase::QUICK);
        AddTestCase(new TpReduceTestCase, TestCase::QUICK);
        AddTestCase(new LayoutSweepTestCase, TestCase::QUICK);
        AddTestCase(new LayoutsEndToEndTestCase, TestCase::QUICK);
        AddTestCase(new UnevenSweepTestCase, TestCase::QUICK);
    }
};

static HelperTestSuite g_helperTestSuite; //!< registers the suite
