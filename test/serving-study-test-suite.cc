/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// The serving study: which replica layouts and batches it tries and skips, that each row is the
// `run` of its job with throughput derived as stated, how rows are ranked against the targets
// and which are on the throughput-latency frontier; and the command, as a user runs it (one
// worker or two give the same bytes, bad input is an error that names the option).

#include "cli-process.h"
#include "ns3/collective-probe.h"
#include "ns3/job-options.h"
#include "ns3/rapid-llm-helper.h"
#include "ns3/serving-study.h"
#include "ns3/spec-error.h"
#include "ns3/test.h"
#include "spec-error-check.h"
#include "test-require.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <tuple>

using namespace ns3;
using namespace ns3::rapidllm;

namespace {

/**
 * \return what one key of context adds to a step of one request (a request alone attends on
 * average to its prompt and half its generation, the step curve's context within a key)
 */
double
OneKey(const StepCurve& c)
{
    return c.secondsPerToken.empty() ? 1e-12 : std::abs(c.secondsPerToken.front());
}

/** \return a small inference job: Llama-2 7B cut to two layers on H100, a short request */
JobOptions
SmallServingJob()
{
    JobOptions o;
    o.Set("model", "llama2-7b");
    o.Set("hardware", "h100-sxm-80gb");
    o.Set("layers", "2");
    o.Set("prompt", "256");
    o.Set("gen", "16");
    o.Set("engine", "vllm");
    return o;
}

/** \return Llama-2 7B served by vLLM on \p hardware, \p prompt + \p gen tokens a request */
JobOptions
VllmLlama2(const std::string& hardware, uint32_t prompt, uint32_t gen)
{
    JobOptions o;
    o.Set("model", "llama2-7b");
    o.Set("hardware", hardware);
    o.Set("prompt", std::to_string(prompt));
    o.Set("gen", std::to_string(gen));
    o.Set("engine", "vllm");
    return o;
}

/** \return continuous batching of TP1 replicas on \p gpus GPUs, \p batch requests each */
ServingSpace
ContinuousTp1(uint32_t gpus, uint32_t batch)
{
    ServingSpace space;
    space.gpus = gpus;
    space.tp = {1};
    space.batch = {batch};
    space.batching = Batching::CONTINUOUS;
    return space;
}

/**
 * \return TP1 instances of 16 in flight on up to 16 GPUs sized for 30 requests/s (300
 * simulated) within TPOT 50 ms and TTFT 300 ms
 */
ServingSpace
SizedForThirty()
{
    ServingSpace space = ContinuousTp1(16, 16);
    space.requests = 300;
    space.tpotSloS = 0.05;
    space.ttftSloS = 0.3;
    space.rateRps = 30;
    space.size = true;
    return space;
}

/** \return the weights' and KV cache's types of the variants a study tries */
std::vector<std::pair<std::string, std::string>>
Precisions(const ServingStudy& study)
{
    std::vector<std::pair<std::string, std::string>> precisions;
    for (const ServingVariant& v : study.Variants())
    {
        precisions.emplace_back(v.dtype, v.kvCacheDtype);
    }
    return precisions;
}

/**
 * \return the space of the variant-list tests: tp 1 and 2 replicas on 4 GPUs, batches of 4
 * and 32, \p batching
 */
ServingSpace
TwoLayoutsTwoBatches(Batching batching)
{
    ServingSpace space;
    space.gpus = 4;
    space.tp = {1, 2};
    space.batch = {4, 32};
    space.batching = batching;
    return space;
}

/**
 * \brief Finds each row of \p alone (a study of one variant) among \p rows (a study of several)
 * by its variant, tp and batch, and compares what the variant decides: the memory verdict, peak
 * and capacity, TPOT, TTFT, throughput, the prefill pairing and the KV handover.
 * \param[out] differs the first figure that differs ("" when none does)
 * \return the rows of \p alone found
 */
uint32_t
SameRows(const std::vector<ServingRow>& rows,
         const std::vector<ServingRow>& alone,
         std::string& differs)
{
    uint32_t matched = 0;
    differs.clear();
    for (const ServingRow& one : alone)
    {
        for (const ServingRow& r : rows)
        {
            if (r.Variant() != one.Variant() || r.tp != one.tp || r.batch != one.batch)
            {
                continue;
            }
            ++matched;
            const std::vector<std::pair<const char*, bool>> same = {
                {"fits", r.fits == one.fits},
                {"peak", r.peakBytes == one.peakBytes},
                {"capacity", r.capacityBytes == one.capacityBytes},
                {"TPOT", r.tpotS == one.tpotS},
                {"TTFT", r.ttftS == one.ttftS},
                {"throughput", r.tokensPerSPerGpu == one.tokensPerSPerGpu},
                {"prefill tp", r.prefillTp == one.prefillTp},
                {"prefill instances", r.prefillInstances == one.prefillInstances},
                {"KV handover", r.kvTransferS == one.kvTransferS}};
            for (const auto& [figure, equal] : same)
            {
                if (!equal && differs.empty())
                {
                    differs = one.Variant() + " tp " + std::to_string(one.tp) + " batch "
                              + std::to_string(one.batch) + ": its " + figure;
                }
            }
        }
    }
    return matched;
}

/**
 * \return the KV handover of the first fitting disaggregated row of \p variant whose decode and
 * prefill instances are both tp 1 (0: none)
 */
double
Tp1Transfer(const std::vector<ServingRow>& rows, const std::string& variant)
{
    for (const ServingRow& r : rows)
    {
        if (r.fits && r.Variant() == variant && r.tp == 1 && r.prefillTp == 1)
        {
            return r.kvTransferS;
        }
    }
    return 0.0;
}

/** \return a fitting row of a synthetic study */
ServingRow
Row(uint64_t layout, double tpotS, double ttftS, double tokensPerSPerGpu)
{
    ServingRow r;
    r.layout = layout;
    r.fits = true;
    r.tpotS = tpotS;
    r.ttftS = ttftS;
    r.tokensPerSPerGpu = tokensPerSPerGpu;
    return r;
}

} // namespace

/**
 * \ingroup rapid-llm-tests
 * \brief A list of precisions: each weights' type with each KV cache type is a row of every
 * layout and batch, each the row of the study of its precision alone (only the frontier is
 * drawn over all of them), and a disaggregated decode row takes prefill instances of its own
 * precision, whose KV cache it receives.
 */
class ServingPrecisionsTestCase : public TestCase
{
  public:
    ServingPrecisionsTestCase()
        : TestCase("serving study: a list of weights' and KV cache types")
    {}

  private:
    void
    DoRun() override
    {
        for (Batching batching : {Batching::CONTINUOUS, Batching::DISAGGREGATED})
        {
            ServingSpace space = TwoLayoutsTwoBatches(batching);
            space.dtypes = {"bf16", "fp8", "int4"};
            space.kvCacheDtypes = {"auto", "fp8"};
            const ServingStudy study(SmallServingJob(), space, "flow", "", true);
            const std::vector<std::pair<std::string, std::string>> resolved = {{"bf16", "bf16"},
                                                                               {"bf16", "fp8"},
                                                                               {"fp8", "bf16"},
                                                                               {"fp8", "fp8"},
                                                                               {"int4", "fp16"},
                                                                               {"int4", "fp8"}};
            NS_TEST_EXPECT_MSG_EQ((Precisions(study) == resolved),
                                  true,
                                  "each weights' type with each KV cache type, auto resolved");
            RAPIDLLM_REQUIRE_EQ(study.Candidates().size(), 6u * 2 * 2, "6 precisions x 2 x 2");
            std::vector<ServingRow> rows = study.Run();
            std::map<std::string, uint32_t> perPrecision;
            for (const ServingRow& r : rows)
            {
                ++perPrecision[r.Precision()];
            }
            NS_TEST_EXPECT_MSG_EQ(perPrecision.size(), 6u, "every precision has its rows");
            for (const auto& [weights, cache] : resolved)
            {
                NS_TEST_EXPECT_MSG_EQ(perPrecision[weights + "/" + cache], 4u, weights + cache);
            }
            // fp8 weights with an fp8 cache, alone: the same rows.
            ServingSpace alone = space;
            alone.dtypes = {"fp8"};
            alone.kvCacheDtypes = {"fp8"};
            const std::vector<ServingRow> single =
                ServingStudy(SmallServingJob(), alone, "flow", "", true).Run();
            RAPIDLLM_REQUIRE_EQ(single.front().Precision(), std::string("fp8/fp8"), "its own");
            std::string differs;
            NS_TEST_EXPECT_MSG_EQ(
                SameRows(rows, single, differs), 4u, "each row of the precision alone");
            NS_TEST_EXPECT_MSG_EQ(differs, "", "the same figures");
            if (batching != Batching::DISAGGREGATED)
            {
                continue;
            }
            // A one-byte cache sends half the bytes: the same pair of layouts transfers faster.
            const double oneByte = Tp1Transfer(rows, "h100-sxm-80gb vllm bf16/fp8");
            NS_TEST_EXPECT_MSG_GT(oneByte, 0, "a tp1 pair");
            NS_TEST_EXPECT_MSG_LT(oneByte,
                                  0.75 * Tp1Transfer(rows, "h100-sxm-80gb vllm bf16/bf16"),
                                  "the prefill instances hold the decode row's cache type");
        }

        // int8 weights (W8A8) keep a 16-bit cache unless it is quantized apart; a precision
        // given twice is tried once.
        ServingSpace int8;
        int8.gpus = 1;
        int8.tp = {1};
        int8.batch = {4};
        int8.batching = Batching::CONTINUOUS;
        int8.dtypes = {"int8", "int8"};
        int8.kvCacheDtypes = {"auto", "int8"};
        // An int8 cache is lmdeploy's (vLLM's is fp8).
        JobOptions lmdeploy = SmallServingJob();
        lmdeploy.Set("engine", "lmdeploy");
        const ServingStudy once(lmdeploy, int8, "flow", "", true);
        const std::vector<std::pair<std::string, std::string>> twoOf = {{"int8", "fp16"},
                                                                        {"int8", "int8"}};
        NS_TEST_EXPECT_MSG_EQ((Precisions(once) == twoOf), true, "each once");
        NS_TEST_EXPECT_MSG_EQ(once.Candidates().size(), 2u, "a row each");

        // A type a GPU cannot run rules its variant out with the reason (the others run); alone,
        // it is the study's error.
        ServingSpace a100;
        a100.gpus = 1;
        a100.tp = {1};
        a100.batch = {4, 8};
        a100.hardware = {"h100-sxm-80gb", "a100-sxm-80gb"};
        a100.dtypes = {"bf16", "fp8"};
        const ServingStudy mixed(SmallServingJob(), a100, "flow", "", true);
        NS_TEST_EXPECT_MSG_EQ(mixed.Candidates().size(), 6u, "3 runnable variants x 2 batches");
        NS_TEST_EXPECT_MSG_EQ(mixed.GetSkipped(), 2u, "the A100's fp8 batches");
        RAPIDLLM_REQUIRE_EQ(mixed.Variants().size(), 4u, "every variant listed");
        NS_TEST_EXPECT_MSG_NE(mixed.Variants()[3].ruledOut.find("lists no rate for fp8"),
                              std::string::npos,
                              mixed.Variants()[3].ruledOut);
        NS_TEST_EXPECT_MSG_EQ(mixed.Run().size(), 6u, "the others run");
        a100.hardware = {"a100-sxm-80gb"};
        a100.dtypes = {"fp8"};
        const std::string alone = ErrorOf(
            [&]()
            {
                ServingStudy(SmallServingJob(), a100, "flow", "", true);
            });
        NS_TEST_EXPECT_MSG_NE(alone.find("lists no rate for fp8 (it lists fp32, tf32, fp16"),
                              std::string::npos,
                              alone);
    }
};

/**
 * \ingroup rapid-llm-tests
 * \brief A list of engines: every layout and batch under each, each row the study of its
 * engine alone gives (its memory share, token budget, host costs), a disaggregated decode row fed
 * by prefill instances of its own engine; engines that batch differently under automatic
 * batching are an error naming --engine.
 */
class ServingEnginesTestCase : public TestCase
{
  public:
    ServingEnginesTestCase()
        : TestCase("serving study: a list of engines")
    {}

  private:
    void
    DoRun() override
    {
        for (Batching batching : {Batching::CONTINUOUS, Batching::DISAGGREGATED})
        {
            ServingSpace space = TwoLayoutsTwoBatches(batching);
            space.engines = {"lmdeploy", "vllm"};
            const ServingStudy study(SmallServingJob(), space, "flow", "", true);
            RAPIDLLM_REQUIRE_EQ(study.Variants().size(), 2u, "an engine each");
            NS_TEST_EXPECT_MSG_EQ(study.Variants()[1].engine, std::string("vllm"), "in order");
            // lmdeploy's prefill iterations carry 8,192 tokens, vLLM's max(model length, 2,048).
            NS_TEST_EXPECT_MSG_EQ(study.TokenBudget(study.VariantJobs()[0]), 8192u, "lmdeploy's");
            NS_TEST_EXPECT_MSG_EQ(study.TokenBudget(study.VariantJobs()[1]), 4096u, "vLLM's");
            const std::vector<ServingRow> rows = study.Run();
            RAPIDLLM_REQUIRE_EQ(rows.size(), 8u, "2 engines x 2 tp x 2 batches");
            ServingSpace alone = space;
            alone.engines = {"vllm"};
            const std::vector<ServingRow> vllm =
                ServingStudy(SmallServingJob(), alone, "flow", "", true).Run();
            NS_TEST_EXPECT_MSG_EQ(vllm.front().engine, std::string("vllm"), "its own");
            std::string differs;
            NS_TEST_EXPECT_MSG_EQ(SameRows(rows, vllm, differs), 4u, "each row of vLLM alone");
            NS_TEST_EXPECT_MSG_EQ(differs, "", "the same figures");
            // vLLM keeps 10% of the GPU out of its reach; lmdeploy (its cache share apart) not.
            for (const ServingRow& r : rows)
            {
                for (const ServingRow& s : rows)
                {
                    if (r.engine == "vllm" && s.engine == "lmdeploy" && r.tp == s.tp)
                    {
                        NS_TEST_EXPECT_MSG_LT(r.capacityBytes, s.capacityBytes, "vLLM's 90%");
                    }
                }
            }
        }
        // transformers' generate() runs static batches, vLLM continuous ones: no one batching.
        ServingSpace mixed;
        mixed.engines = {"hf", "vllm"};
        mixed.batch = {4};
        try
        {
            ServingStudy(SmallServingJob(), mixed, "flow", "", true);
            NS_TEST_EXPECT_MSG_EQ(true, false, "hf and vllm under auto batching");
        }
        catch (const SpecError& e)
        {
            NS_TEST_EXPECT_MSG_EQ(e.GetField(), std::string("engine"), e.what());
        }
        mixed.batching = Batching::STATIC;
        NS_TEST_EXPECT_MSG_EQ(ServingStudy(SmallServingJob(), mixed, "flow", "", true).Run().size(),
                              8u,
                              "both in static batches");
    }
};

/**
 * \ingroup rapid-llm-tests
 * \brief A list of hardware: every layout and batch on each, each row the study of its hardware
 * alone gives (its own network for the KV handover, its own token budget and vLLM's budget
 * reserved on it), a disaggregated decode row fed by prefill instances of its own hardware.
 */
class ServingHardwareTestCase : public TestCase
{
  public:
    ServingHardwareTestCase()
        : TestCase("serving study: a list of hardware")
    {}

  private:
    void
    DoRun() override
    {
        for (Batching batching : {Batching::CHUNKED, Batching::DISAGGREGATED})
        {
            ServingSpace space = TwoLayoutsTwoBatches(batching);
            space.hardware = {"h100-sxm-80gb", "a100-sxm-80gb"};
            space.dtypes = {"bf16", "int4"};
            const ServingStudy study(SmallServingJob(), space, "flow", "", true);
            RAPIDLLM_REQUIRE_EQ(study.Variants().size(), 4u, "2 hardware x 2 precisions");
            RAPIDLLM_REQUIRE_EQ(study.HardwareJobs().size(), 2u, "a job of each");
            NS_TEST_EXPECT_MSG_EQ(study.Variants()[2].hardware,
                                  std::string("a100-sxm-80gb"),
                                  "hardware first, then the precisions");
            const std::vector<ServingRow> rows = study.Run();
            RAPIDLLM_REQUIRE_EQ(rows.size(), 16u, "4 variants x 2 tp x 2 batches");
            ServingSpace alone = space;
            alone.hardware = {"a100-sxm-80gb"};
            alone.dtypes = {"int4"};
            const ServingStudy a100(SmallServingJob(), alone, "flow", "", true);
            NS_TEST_EXPECT_MSG_EQ(a100.TokenBudget(a100.FirstJob()),
                                  (batching == Batching::CHUNKED ? 2048u : 4096u),
                                  "the A100's own budget");
            std::string differs;
            NS_TEST_EXPECT_MSG_EQ(SameRows(rows, a100.Run(), differs), 4u, "the A100's rows");
            NS_TEST_EXPECT_MSG_EQ(differs, "", "the same figures (its network, its budget)");
            if (batching == Batching::DISAGGREGATED)
            {
                // The A100 node's NVLink is slower: the same pair hands a cache over slower.
                const double h100 = Tp1Transfer(rows, "h100-sxm-80gb vllm bf16/bf16");
                NS_TEST_EXPECT_MSG_GT(h100, 0, "a tp1 pair");
                NS_TEST_EXPECT_MSG_GT(Tp1Transfer(rows, "a100-sxm-80gb vllm bf16/bf16"),
                                      1.2 * h100,
                                      "300 against 450 GB/s");
            }
        }
    }
};

/**
 * \ingroup rapid-llm-tests
 * \brief The candidates: every tp x pp x batch whose replica divides the GPUs and that the
 * model allows, in list order; the rest counted.
 */
class ServingCandidatesTestCase : public TestCase
{
  public:
    ServingCandidatesTestCase()
        : TestCase("serving study: the layouts tried and those ruled out")
    {}

  private:
    void
    DoRun() override
    {
        ServingSpace space;
        space.gpus = 4;
        space.tp = {1, 2, 3, 8};
        space.pp = {1, 2};
        space.batch = {1, 8};
        ServingStudy study(SmallServingJob(), space, "flow", "", true);
        // tp 3 and tp 8 do not divide 4 GPUs (8 combinations), tp 2 x pp 2 does; pp 2 splits
        // the two layers one per stage.
        RAPIDLLM_REQUIRE_EQ(study.Candidates().size(), 8u, "tp 1, 2 x pp 1, 2 x batch 1, 8");
        NS_TEST_EXPECT_MSG_EQ(study.GetSkipped(), 8u, "tp 3 and tp 8");
        // Each reason once, with the batches it rules out.
        RAPIDLLM_REQUIRE_EQ(study.GetSkips().size(), 4u, "tp 3, 8 x pp 1, 2");
        for (const ServingSkip& s : study.GetSkips())
        {
            NS_TEST_EXPECT_MSG_EQ(s.count, 2u, s.reason << ": batches 1 and 8");
            NS_TEST_EXPECT_MSG_EQ(s.field, "gpus", s.reason);
            NS_TEST_EXPECT_MSG_NE(
                s.reason.find("does not divide the 4 GPUs"), std::string::npos, s.reason);
        }
        NS_TEST_EXPECT_MSG_EQ(
            study.GetSkips().front().reason.find("tp 3 x pp 1"), 0u, "in the order met");
        const ResolvedJob first = study.FirstJob();
        NS_TEST_EXPECT_MSG_EQ(
            (first.run.mode == RunMode::INFERENCE), true, "a serving study infers");
        NS_TEST_EXPECT_MSG_EQ(first.run.parallel.Gpus(), 1u, "one replica of tp 1 pp 1");
        const ResolvedJob last = study.Candidates().back().ToSpecs();
        NS_TEST_EXPECT_MSG_EQ(last.run.parallel.tp, 2u, "list order: tp, pp, batch");
        NS_TEST_EXPECT_MSG_EQ(last.run.parallel.pp, 2u, "list order");
        NS_TEST_EXPECT_MSG_EQ(last.run.batch, 8u, "list order");

        // A layout the model rules out (32 heads over 64 ranks) is skipped, not an error ...
        space.gpus = 64;
        space.tp = {64, 1};
        space.pp = {1};
        ServingStudy heads(SmallServingJob(), space, "flow", "", true);
        NS_TEST_EXPECT_MSG_EQ(heads.Candidates().size(), 2u, "tp 1 only");
        NS_TEST_EXPECT_MSG_EQ(heads.GetSkipped(), 2u, "tp 64");
        // ... unless no layout is left, which names the first reason.
        space.tp = {64};
        const std::string none = ErrorOf(
            [&]()
            {
                ServingStudy(SmallServingJob(), space, "flow", "", true);
            });
        NS_TEST_EXPECT_MSG_NE(none.find("no layout"), std::string::npos, none);
        NS_TEST_EXPECT_MSG_NE(none.find("tp 64"), std::string::npos, none);
        // A hardware file's link faults: refused, naming the file and the field (one replica's
        // job stands for every replica, which the fault would slow alike).
        {
            const std::string file =
                (std::filesystem::temp_directory_path() / "rapid-llm-serving-faulty.yaml").string();
            std::ofstream(file) << "base: h100-sxm-80gb\nname: faulty\nnetwork:\n  faults:\n"
                                   "    - link: gpu0\n      bandwidth_factor: 0.5\n";
            JobOptions faulty = SmallServingJob();
            faulty.Set("hardware", file);
            const std::string refused = ErrorOf(
                [&]()
                {
                    ServingStudy(faulty, space, "flow", "", true);
                });
            for (const std::string& part :
                 {file, std::string("network.faults"), std::string("study faults")})
            {
                NS_TEST_EXPECT_MSG_NE(refused.find(part), std::string::npos, refused);
            }
            std::filesystem::remove(file);
        }
        // Batches in flight that a batch cannot fill rule out that batch only.
        JobOptions inflight = SmallServingJob();
        inflight.Set("inflight-batches", "3");
        space.gpus = 2;
        space.tp = {1};
        space.pp = {2};
        space.batch = {1, 4};
        ServingStudy three(inflight, space, "flow", "", true);
        NS_TEST_EXPECT_MSG_EQ(three.Candidates().size(), 1u, "batch 4 in three");
        NS_TEST_EXPECT_MSG_EQ(three.GetSkipped(), 1u, "batch 1");
        space.pp = {1};
        space.batch = {1, 8};
        // Whole experts (etp 1): each layout's expert groups are its tensor-parallel group.
        JobOptions moe = SmallServingJob();
        moe.Set("model", "mixtral-8x7b");
        moe.Set("etp", "1");
        space.gpus = 4;
        space.tp = {2, 4};
        ServingStudy experts(moe, space, "flow", "", true);
        RAPIDLLM_REQUIRE_EQ(experts.Candidates().size(), 4u, "tp 2, 4 x batch 1, 8");
        for (const JobOptions& c : experts.Candidates())
        {
            const ParallelSpec p = c.ToSpecs().run.parallel;
            NS_TEST_EXPECT_MSG_EQ(p.ep, p.tp, "ep = tp");
            NS_TEST_EXPECT_MSG_EQ(p.ExpertTp(), 1u, "whole experts");
        }
        // ... which rules data-parallel attention out, saying why once for its batches.
        space.tp = {2};
        space.dp = {1, 2};
        ServingStudy replicas(moe, space, "flow", "", true);
        NS_TEST_EXPECT_MSG_EQ(replicas.Candidates().size(), 2u, "dp 1 x batch 1, 8");
        NS_TEST_EXPECT_MSG_EQ(replicas.GetSkipped(), 2u, "dp 2 x batch 1, 8");
        RAPIDLLM_REQUIRE_EQ(replicas.GetSkips().size(), 1u, "one reason");
        const ServingSkip& whole = replicas.GetSkips().front();
        NS_TEST_EXPECT_MSG_EQ(whole.field, "dp", whole.reason);
        NS_TEST_EXPECT_MSG_EQ(whole.count, 2u, "both batches");
        NS_TEST_EXPECT_MSG_NE(
            whole.reason.find("dp 2: with --etp=1"), std::string::npos, whole.reason);
        space.dp = {1};
        // What no layout changes is the job's error, as `run` gives it.
        JobOptions bad = SmallServingJob();
        bad.Set("set", "gpu.clock_mhz=0");
        space.tp = {1};
        const std::string clock = ErrorOf(
            [&]()
            {
                ServingStudy(bad, space, "flow", "", true);
            });
        NS_TEST_EXPECT_MSG_EQ(clock.find("no layout"), std::string::npos, clock);
        NS_TEST_EXPECT_MSG_NE(clock.find("gpu.clock_mhz"), std::string::npos, clock);

        // vLLM profiles a forward of the budget in force before it sizes its cache: before V1
        // (continuous batching) Llama-2's max_model_len, 4,096; V1's (chunked) 8,192 on an H100;
        // the job's own setting kept.
        for (const auto& [batching, tokens] : {std::make_pair(Batching::CONTINUOUS, 4096u),
                                               std::make_pair(Batching::CHUNKED, 8192u)})
        {
            space.batching = batching;
            const ServingStudy profiled(SmallServingJob(), space, "flow", "", true);
            for (const JobOptions& c : profiled.Candidates())
            {
                NS_TEST_EXPECT_MSG_EQ(c.ToSpecs().run.profileTokens, tokens, "the budget's");
            }
            JobOptions given = SmallServingJob();
            given.Set("profile-tokens", "1");
            const ServingStudy kept(given, space, "flow", "", true);
            NS_TEST_EXPECT_MSG_EQ(kept.FirstJob().run.profileTokens, 1u, "as given");
        }
        // A request beyond the model's context: max_model_len holds it (8,000 + 16 tokens).
        space.batching = Batching::CONTINUOUS;
        JobOptions longer = SmallServingJob();
        longer.Set("prompt", "8000");
        const ServingStudy held(longer, space, "flow", "", true);
        NS_TEST_EXPECT_MSG_EQ(held.FirstJob().run.profileTokens, 8016u, "the request's length");
    }
};

/**
 * \ingroup rapid-llm-tests
 * \brief A row is the prediction of its job: the same times as `run`, throughput per GPU =
 * batch x generated tokens / (request time x replica GPUs), requests per second over every
 * replica; a batch that does not fit has no times and says why.
 */
class ServingRowTestCase : public TestCase
{
  public:
    ServingRowTestCase()
        : TestCase("serving study: each row is its job's prediction")
    {}

  private:
    void
    DoRun() override
    {
        ServingSpace space;
        space.gpus = 8;
        space.tp = {2};
        space.pp = {1};
        space.batch = {4};
        space.batching = Batching::STATIC;
        ServingStudy study(SmallServingJob(), space, "flow", "", true);
        RAPIDLLM_REQUIRE_EQ(study.Candidates().size(), 1u, "one candidate");
        const ServingRow row = study.Evaluate(0);

        JobOptions direct = SmallServingJob();
        direct.Set("mode", "inference");
        direct.Set("tp", "2");
        direct.Set("batch", "4");
        Ptr<RapidLlmHelper> h = CreateObject<RapidLlmHelper>();
        direct.Apply(h);
        const RunReport report = h->Run();
        h->Dispose();
        RAPIDLLM_REQUIRE_EQ(row.fits, true, "two layers of 7B fit");
        NS_TEST_EXPECT_MSG_EQ(row.replicas, 4u, "8 GPUs / tp 2");
        NS_TEST_EXPECT_MSG_EQ(row.ttftS, report.ttftS, "the run's time to first token");
        NS_TEST_EXPECT_MSG_EQ(row.tpotS, report.tpotS, "the run's time per output token");
        NS_TEST_EXPECT_MSG_EQ(row.requestS, report.stepTimeS, "the run's request");
        NS_TEST_EXPECT_MSG_EQ_TOL(row.tokensPerSPerGpu,
                                  4.0 * 16 / (report.stepTimeS * 2),
                                  1e-9 * row.tokensPerSPerGpu,
                                  "4 requests x 16 tokens per request time and 2 GPUs");
        NS_TEST_EXPECT_MSG_EQ_TOL(row.requestsPerS,
                                  4.0 * 4 / report.stepTimeS,
                                  1e-9 * row.requestsPerS,
                                  "4 replicas x 4 requests per request time");
        NS_TEST_EXPECT_MSG_EQ(row.haveEnergy, true, "the H100 preset has a power model");
        NS_TEST_EXPECT_MSG_EQ(row.energyPerTokenJ, report.energyPerTokenJ, "the run's energy");

        // The row survives its JSON (the workers' transport) exactly.
        const ServingRow back = ServingRow::FromJson(Json::parse(DumpJson(row.ToJson())));
        NS_TEST_EXPECT_MSG_EQ(DumpJson(back.ToJson()), DumpJson(row.ToJson()), "round trip");
        NS_TEST_EXPECT_MSG_NE(ErrorOf<std::runtime_error>(
                                  []()
                                  {
                                      ServingRow::FromJson(Json::parse("{\"tp\": 1}"));
                                  })
                                  .find("not a serving-study row"),
                              std::string::npos,
                              "a partial row");

        // A batch whose KV cache cannot fit: no times, the reason, the peak.
        JobOptions small = SmallServingJob();
        small.Set("set", "gpu.hbm_gib=2");
        space.batch = {256};
        ServingStudy tight(small, space, "flow", "", true);
        const ServingRow unfit = tight.Evaluate(0);
        NS_TEST_EXPECT_MSG_EQ(unfit.fits, false, "256 sequences in 2 GiB");
        NS_TEST_EXPECT_MSG_NE(unfit.reason, "", "says why");
        NS_TEST_EXPECT_MSG_EQ(unfit.tpotS, 0.0, "no time");
        NS_TEST_EXPECT_MSG_GT(unfit.peakBytes, unfit.capacityBytes, "peak above capacity");
        // It names the largest batch that fits: that one fits, one more does not.
        const std::size_t at = unfit.reason.find("; at most ");
        RAPIDLLM_REQUIRE_EQ((at != std::string::npos), true, unfit.reason);
        const uint32_t most = std::stoul(unfit.reason.substr(at + 10));
        for (uint32_t batch : {most, most + 1})
        {
            space.batch = {batch};
            NS_TEST_EXPECT_MSG_EQ(ServingStudy(small, space, "flow", "", true).Evaluate(0).fits,
                                  (batch == most),
                                  "batch " << batch);
        }
    }
};

/**
 * \ingroup rapid-llm-tests
 * \brief Continuous batching: the engine decides by default; one request in flight is the
 * static request (its prefill, then its decode steps); more requests
 * in flight share each step and pay for each other's prefills, so the time per token and the
 * throughput both grow; memory holds every request's whole KV cache but one step's
 * activations, not the whole batch's prefill.
 */
class ServingContinuousTestCase : public TestCase
{
  public:
    ServingContinuousTestCase()
        : TestCase("serving study: continuous batching")
    {}

  private:
    void
    DoRun() override
    {
        ServingSpace space;
        space.gpus = 2;
        space.tp = {2};
        space.batch = {1, 16, 64};
        JobOptions job = SmallServingJob();
        job.Set("gen", "64");
        NS_TEST_EXPECT_MSG_EQ(
            (ServingStudy(job, space, "flow", "", true).GetBatching() == Batching::CONTINUOUS),
            true,
            "vLLM admits requests at every iteration");
        job.Set("engine", "hf");
        NS_TEST_EXPECT_MSG_EQ(
            (ServingStudy(job, space, "flow", "", true).GetBatching() == Batching::STATIC),
            true,
            "generate() runs its batch to the end");
        job.Set("engine", "vllm");

        space.batching = Batching::STATIC;
        const std::vector<ServingRow> fixed = ServingStudy(job, space, "flow", "", true).Run();
        space.batching = Batching::CONTINUOUS;
        std::vector<ServingRow> rows = ServingStudy(job, space, "flow", "", true).Run();
        RAPIDLLM_REQUIRE_EQ(rows.size(), 3u, "three batches");
        std::sort(rows.begin(),
                  rows.end(),
                  [](const ServingRow& a, const ServingRow& b)
                  {
                      return a.batch < b.batch;
                  });
        const ServingRow one = rows[0];
        const ServingRow& staticOne = *std::find_if(fixed.begin(),
                                                    fixed.end(),
                                                    [](const ServingRow& r)
                                                    {
                                                        return r.batch == 1;
                                                    });
        RAPIDLLM_REQUIRE_EQ(one.fits && staticOne.fits, true, "batch 1 fits");
        NS_TEST_EXPECT_MSG_EQ_TOL(one.tpotS / staticOne.tpotS,
                                  1.0,
                                  0.02,
                                  "one request in flight decodes as the static request");
        NS_TEST_EXPECT_MSG_EQ_TOL(
            one.ttftS, staticOne.ttftS, 1e-6 * one.ttftS, "its first token from its own prefill");
        NS_TEST_EXPECT_MSG_EQ_TOL(one.tokensPerSPerGpu * one.requestS * 2,
                                  64.0,
                                  1e-6,
                                  "one request's tokens per its time on 2 GPUs");
        for (std::size_t i = 1; i < rows.size(); ++i)
        {
            NS_TEST_EXPECT_MSG_GT(rows[i].tpotS, rows[i - 1].tpotS, "more requests share steps");
            NS_TEST_EXPECT_MSG_GT(
                rows[i].tokensPerSPerGpu, rows[i - 1].tokensPerSPerGpu, "and yield more tokens");
            NS_TEST_EXPECT_MSG_EQ(rows[i].haveEnergy, true, "the H100's power model");
            NS_TEST_EXPECT_MSG_LT(rows[i].energyPerTokenJ,
                                  rows[i - 1].energyPerTokenJ,
                                  "weights read once for more tokens");
        }
        const ServingRow& staticMany = *std::find_if(fixed.begin(),
                                                     fixed.end(),
                                                     [](const ServingRow& r)
                                                     {
                                                         return r.batch == 64;
                                                     });
        NS_TEST_EXPECT_MSG_LT(rows[2].peakBytes,
                              staticMany.peakBytes,
                              "one step's activations, not 64 prompts' prefill");
        NS_TEST_EXPECT_MSG_LT(
            rows[2].ttftS, staticMany.ttftS, "its own prefill, not the whole batch's");

        NS_TEST_EXPECT_MSG_EQ(rows[1].prefillPrompts, 0.0, "16 over 63 steps: one at a time");
        // Short generations: 16 requests over 3 decode steps finish 16/3 a step, and their
        // prompts are prefilled together (Llama-2's 4,096-token budget holds 16 of 256).
        {
            ServingSpace shortGen = space;
            shortGen.batch = {16};
            JobOptions few = job;
            few.Set("gen", "4");
            const ServingRow r = ServingStudy(few, shortGen, "flow", "", true).Run().at(0);
            RAPIDLLM_REQUIRE_EQ(r.fits, true, "fits");
            NS_TEST_EXPECT_MSG_EQ_TOL(r.prefillPrompts, 16.0 / 3, 1e-12, "16/3 a step");
            NS_TEST_EXPECT_MSG_GT(r.ttftS, r.prefillS, "more than one prompt's prefill");
            NS_TEST_EXPECT_MSG_LT(
                r.ttftS, 16.0 / 3 * r.prefillS, "less than as many prefills one by one");
            NS_TEST_EXPECT_MSG_EQ_TOL(r.tpotS,
                                      r.stepS + (3 - 1) * r.ttftS / 3,
                                      1e-12 * r.tpotS,
                                      "3 iterations a cycle, the other two in the steps");
        }

        // Speculative decoding: the time per token comes from whole passes, each yielding the
        // expected accepted drafts; one request in flight still decodes as the static request.
        job.Set("spec-tokens", "2");
        job.Set("spec-acceptance", "0.8");
        space.batch = {1};
        space.batching = Batching::STATIC;
        const ServingRow specStatic = ServingStudy(job, space, "flow", "", true).Evaluate(0);
        space.batching = Batching::CONTINUOUS;
        const ServingRow specOne = ServingStudy(job, space, "flow", "", true).Evaluate(0);
        RAPIDLLM_REQUIRE_EQ(specOne.fits && specStatic.fits, true, "fits");
        NS_TEST_EXPECT_MSG_EQ_TOL(specOne.tpotS / specStatic.tpotS,
                                  1.0,
                                  0.02,
                                  "the static request's passes, over the tokens they yield");
        NS_TEST_EXPECT_MSG_LT(specOne.tpotS, one.tpotS, "fewer passes than tokens");
        // A request that needs fewer tokens than a pass yields still runs a whole pass: two
        // generated (one decode token) with 16 drafts all accepted took a seventeenth of a
        // pass a token, faster than without speculation.
        JobOptions twoTokens = job;
        twoTokens.Set("gen", "2");
        twoTokens.Set("spec-tokens", "16");
        twoTokens.Set("spec-acceptance", "1");
        const ServingRow specTwo = ServingStudy(twoTokens, space, "flow", "", true).Evaluate(0);
        twoTokens.Set("spec-tokens", "0");
        twoTokens.Set("spec-acceptance", "0");
        const ServingRow plainTwo = ServingStudy(twoTokens, space, "flow", "", true).Evaluate(0);
        RAPIDLLM_REQUIRE_EQ(specTwo.fits && plainTwo.fits, true, "fits");
        NS_TEST_EXPECT_MSG_GT(specTwo.tpotS, plainTwo.tpotS, "a whole pass for one token");
    }
};

/**
 * \ingroup rapid-llm-tests
 * \brief Chunked prefill: the steps that carry new prompts are replayed with them beside the
 * batch, and the figures follow from the two step times as the closed form says; a prompt
 * beyond the token budget splits into chunks over several steps; where the chunks need more
 * than the steps hold beside the batch the budget sets the pace, every step filled with the
 * decodes first and the prompts' tokens beside them (Little's law gives the first token's
 * wait); a budget the decodes fill is a reason, not a figure. A prompt inside a decode step costs
 * less than its own prefill step beside it (the weights read once).
 */
class ServingChunkedTestCase : public TestCase
{
  public:
    ServingChunkedTestCase()
        : TestCase("serving study: chunked prefill in the decode steps")
    {}

  private:
    void
    DoRun() override
    {
        ServingSpace space;
        space.gpus = 2;
        space.tp = {2};
        space.batch = {16};
        space.batching = Batching::CHUNKED;
        JobOptions job = SmallServingJob();
        job.Set("gen", "64");
        const double generated = 64;
        const ServingRow r = ServingStudy(job, space, "flow", "", true).Evaluate(0);
        RAPIDLLM_REQUIRE_EQ(r.fits, true, "fits");
        // H100: 8192 tokens a step, so each prompt goes into one step whole.
        NS_TEST_EXPECT_MSG_EQ(r.chunkCount, 1u, "one chunk");
        NS_TEST_EXPECT_MSG_EQ(r.chunkTokens, 256u, "the whole prompt");
        const double share = 16.0 * 1 / (1 + generated - 1);
        NS_TEST_EXPECT_MSG_EQ_TOL(r.mixedShare, share, 1e-12, "16 prompts per 64 steps");
        // A request's 63 tokens after its first: the cycle's 16 mixed steps less the one that
        // carried its own prompt (its first token's) ride with another prompt, 48 are plain.
        NS_TEST_EXPECT_MSG_EQ_TOL(r.tpotS,
                                  (15 * r.mixedStepS + 48 * r.stepS) / 63,
                                  1e-12,
                                  "its decode steps, not its own prompt's");
        NS_TEST_EXPECT_MSG_EQ_TOL(r.ttftS, r.mixedStepS, 1e-12, "its prompt's step");
        const double meanStep = (1 - share) * r.stepS + share * r.mixedStepS;
        NS_TEST_EXPECT_MSG_EQ_TOL(r.tokensPerSPerGpu * 2 * meanStep,
                                  16.0 / generated * generated,
                                  1e-9,
                                  "16 / 64 requests finish per step");
        // Little's law: the requests in flight are the batch.
        NS_TEST_EXPECT_MSG_EQ_TOL(r.requestsPerS * r.requestS, 16.0, 1e-9, "16 in flight");
        const Json chunkedJson = r.ToJson();
        NS_TEST_EXPECT_MSG_EQ(DumpJson(ServingRow::FromJson(chunkedJson).ToJson()),
                              DumpJson(chunkedJson),
                              "a chunked row's round trip");
        NS_TEST_EXPECT_MSG_GT(r.mixedStepS, r.stepS, "the prompt's rows cost");
        NS_TEST_EXPECT_MSG_LT(r.mixedStepS, r.stepS + r.prefillS, "less than a step of its own");
        space.batching = Batching::CONTINUOUS;
        const ServingRow c = ServingStudy(job, space, "flow", "", true).Evaluate(0);
        NS_TEST_EXPECT_MSG_LT(r.tpotS, c.tpotS, "no step of its own for a prefill");
        NS_TEST_EXPECT_MSG_EQ_TOL(r.stepS, c.stepS, 1e-12, "the same plain decode step");

        // A budget of 16 decodes + 100 tokens: each prompt in three chunks of 86.
        space.batching = Batching::CHUNKED;
        space.tokenBudget = 116;
        const ServingRow split = ServingStudy(job, space, "flow", "", true).Evaluate(0);
        RAPIDLLM_REQUIRE_EQ(split.fits, true, "fits");
        NS_TEST_EXPECT_MSG_EQ(split.chunkCount, 3u, "three chunks");
        NS_TEST_EXPECT_MSG_EQ(split.chunkTokens, 86u, "of 86");
        NS_TEST_EXPECT_MSG_EQ_TOL(split.ttftS, 3 * split.mixedStepS, 1e-12, "three steps");
        NS_TEST_EXPECT_MSG_EQ_TOL(
            split.mixedShare, 16.0 * 3 / (3 + 63), 1e-12, "the chunks' share");
        NS_TEST_EXPECT_MSG_EQ_TOL(split.tpotS,
                                  (45 * split.mixedStepS + 18 * split.stepS) / 63,
                                  1e-12,
                                  "48 mixed steps a cycle, 3 of them its own prompt's");
        NS_TEST_EXPECT_MSG_EQ_TOL(split.requestsPerS * split.requestS, 16.0, 1e-9, "in flight");
        // Four tokens each: 16 prompts of three chunks per 6-step cycle would need 8 chunks a
        // step where the budget holds one beside 16 decodes. The budget sets the pace: every
        // step is full, its decodes first (vLLM V1), so 116 / (256 + 3) requests start a step,
        // as many x 3 decode (2 a step, rounded up) and the 114 tokens beside them carry the
        // prompts, each in three chunks of 86; a slot turns over every 16 / r steps, 3 of them
        // decoding.
        JobOptions shortGen = job;
        shortGen.Set("gen", "4");
        const ServingRow paced = ServingStudy(shortGen, space, "flow", "", true).Evaluate(0);
        RAPIDLLM_REQUIRE_EQ(paced.fits, true, "fits");
        const double started = 116.0 / (256 + 4 - 1);
        NS_TEST_EXPECT_MSG_EQ(paced.mixedShare, 1.0, "every step carries a chunk");
        NS_TEST_EXPECT_MSG_EQ(paced.tpotS, paced.mixedStepS, "every step a mixed one");
        NS_TEST_EXPECT_MSG_EQ(paced.chunkCount, 3u, "three chunks beside two decodes");
        NS_TEST_EXPECT_MSG_EQ(paced.chunkTokens, 86u, "of 86");
        NS_TEST_EXPECT_MSG_EQ_TOL(paced.ttftS,
                                  (16 / started - 3) * paced.mixedStepS,
                                  1e-9 * paced.ttftS,
                                  "the wait and the chunks");
        NS_TEST_EXPECT_MSG_EQ_TOL(paced.tokensPerSPerGpu * 2 * paced.tpotS,
                                  started * 4,
                                  1e-9,
                                  "the budget's requests' four tokens per step");

        // A budget one token above the batch: the decodes do not fill it, since only the
        // requests whose prompts are done decode. Every step holds the budget's 17 tokens,
        // 17 / (256 + 63) requests' worth, not one prompt token beside 16 decodes.
        space.tokenBudget = 17;
        const ServingRow tight = ServingStudy(job, space, "flow", "", true).Evaluate(0);
        RAPIDLLM_REQUIRE_EQ(tight.fits, true, "fits");
        const double tightStarted = 17.0 / (256 + generated - 1);
        NS_TEST_EXPECT_MSG_EQ(tight.mixedShare, 1.0, "every step full");
        NS_TEST_EXPECT_MSG_EQ_TOL(tight.tokensPerSPerGpu * 2 * tight.tpotS,
                                  tightStarted * generated,
                                  1e-9,
                                  "the budget's requests' tokens per step");
        // ceil(r x 63) = 4 decodes, 13 tokens of prompt beside them: 20 chunks.
        NS_TEST_EXPECT_MSG_EQ(tight.chunkCount, 20u, "a prompt over 20 steps");
        NS_TEST_EXPECT_MSG_LT(tight.tpotS, split.tpotS, "fewer decodes a step");
        NS_TEST_EXPECT_MSG_LT(
            tight.tokensPerSPerGpu, split.tokensPerSPerGpu, "less than the larger budget");
        space.tokenBudget = 16;
        const ServingRow full = ServingStudy(job, space, "flow", "", true).Evaluate(0);
        NS_TEST_EXPECT_MSG_EQ(full.fits, false, "the decodes fill the budget");
        NS_TEST_EXPECT_MSG_NE(full.reason.find("--token-budget"), std::string::npos, full.reason);

        // Refused: latent attention (its decode absorbed, its prefill not); context
        // parallelism with the disaggregated study's.
        JobOptions mla = job;
        mla.Set("model", "deepseek-v2-lite");
        space.tokenBudget = 0;
        NS_TEST_EXPECT_MSG_EQ(ThrowsWith(
                                  [&]
                                  {
                                      ServingStudy(mla, space, "flow", "", true);
                                  },
                                  {"batching", "MLA"}),
                              true,
                              "MLA");
    }
};

/**
 * \brief Continuous batching holds a prefill's activations beside the batch's caches: one
 * 256,000-token prompt of Llama-3 8B on an H100 needs 18 GiB of them, so two requests, whose
 * caches alone fit (78 of 79.65 GiB), do not; one does, at the prefill's peak.
 */
class ServingPrefillMemoryTestCase : public TestCase
{
  public:
    ServingPrefillMemoryTestCase()
        : TestCase("serving study: a prefill's activations count beside the batch's caches")
    {}

  private:
    void
    DoRun() override
    {
        JobOptions job;
        job.Set("model", "llama3-8b");
        job.Set("hardware", "h100-sxm-80gb");
        job.Set("prompt", "256000");
        job.Set("gen", "16");
        ServingSpace space;
        space.gpus = 1;
        space.tp = {1};
        space.batch = {1, 2};
        space.batching = Batching::CONTINUOUS;
        const ServingStudy study(job, space, "flow", "", true);
        std::map<uint32_t, ServingRow> rows;
        for (std::size_t i = 0; i < 2; ++i)
        {
            const ServingRow r = study.Evaluate(i);
            rows[r.batch] = r;
        }
        RAPIDLLM_REQUIRE_EQ(rows.size(), 2u, "batches 1 and 2");
        NS_TEST_EXPECT_MSG_EQ(rows[1].fits, true, rows[1].reason);
        NS_TEST_EXPECT_MSG_GT(rows[1].peakBytes, 60ull << 30, "the prefill's peak (65.9 GiB)");
        NS_TEST_EXPECT_MSG_EQ(rows[2].fits, false, "the second cache and a prefill: 97.9 GiB");
        NS_TEST_EXPECT_MSG_NE(
            rows[2].reason.find("the prefill of one request's 256000 prompt tokens"),
            std::string::npos,
            rows[2].reason);
    }
};

/**
 * \ingroup rapid-llm-tests
 * \brief Disaggregated serving: each decode row gets prefill instances just enough to feed
 * it, in the budget; its first token is the prefill's, its time per token the decode step's
 * plus the KV transfer spread over the steps, and that transfer is the request's KV cache
 * timed on the network. A layout that holds a prefill but not the batch still prefills; a job
 * with context parallelism (also under chunked batching) and data-parallel attention are
 * refused with their reason.
 */
class ServingDisaggregatedTestCase : public TestCase
{
  public:
    ServingDisaggregatedTestCase()
        : TestCase("serving study: disaggregated prefill and decode")
    {}

  private:
    void
    DoRun() override
    {
        ServingSpace space;
        space.gpus = 8;
        space.tp = {1, 2};
        space.batch = {4, 32};
        space.batching = Batching::DISAGGREGATED;
        JobOptions job = SmallServingJob();
        const ServingStudy study(job, space, "flow", "", true);
        std::vector<ServingRow> evaluated;
        for (uint64_t i = 0; i < study.Candidates().size(); ++i)
        {
            evaluated.push_back(study.Evaluate(i));
        }
        std::vector<ServingRow> rows = evaluated;
        study.Pair(rows);
        const double steps = 15;
        const double generated = 16;
        // Llama-2 7B cut to 2 layers: 32 KV heads of 128, K and V in 2 bytes, 256 prompt tokens.
        const uint64_t kvBytes = 2ull * 32 * 128 * 2 * 2 * 256;
        const ResolvedJob first = study.FirstJob();
        uint32_t paired = 0;
        for (std::size_t i = 0; i < rows.size(); ++i)
        {
            const ServingRow& r = rows[i];
            const ServingRow& decode = evaluated[i];
            RAPIDLLM_REQUIRE_EQ(r.layout, decode.layout, "in place");
            RAPIDLLM_REQUIRE_EQ(r.fits, decode.fits, "every batch fits on 8 GPUs");
            auto prefill = std::find_if(evaluated.begin(),
                                        evaluated.end(),
                                        [&](const ServingRow& e)
                                        {
                                            return e.tp == r.prefillTp && e.pp == r.prefillPp;
                                        });
            RAPIDLLM_REQUIRE_EQ((prefill != evaluated.end()), true, "a prefill layout");
            ++paired;
            NS_TEST_EXPECT_MSG_EQ(r.ttftS, prefill->prefillS, "the first token is the prefill's");
            NS_TEST_EXPECT_MSG_EQ_TOL(r.tpotS,
                                      (r.kvTransferS + steps * decode.stepS) / steps,
                                      1e-12,
                                      "the steps and the transfer");
            NS_TEST_EXPECT_MSG_LT(r.tpotS, decode.tpotS, "no other request's prefill in a step");
            NS_TEST_EXPECT_MSG_EQ_TOL(r.requestsPerS,
                                      r.replicas * r.batch / (steps * r.tpotS),
                                      1e-9 * r.requestsPerS,
                                      "each decode instance turns its batch over");
            NS_TEST_EXPECT_MSG_EQ_TOL(r.tokensPerSPerGpu * r.gpusUsed,
                                      r.requestsPerS * generated,
                                      1e-9 * r.requestsPerS * generated,
                                      "tokens per GPU of the instances");
            const double prefillRate = r.prefillInstances / prefill->prefillS;
            NS_TEST_EXPECT_MSG_GT_OR_EQ(prefillRate, r.requestsPerS, "the prefills keep up");
            // And no more of them than do: one fewer would not, at the decode instances' rate
            // with the handover (without it, more were asked for).
            NS_TEST_EXPECT_MSG_LT((r.prefillInstances - 1) * r.prefillPp / prefill->prefillS,
                                  r.requestsPerS * (1 - 1e-9),
                                  "just enough prefill instances");
            NS_TEST_EXPECT_MSG_EQ(r.gpusUsed,
                                  r.prefillInstances * r.prefillTp + r.replicas * r.tp,
                                  "the instances' GPUs");
            NS_TEST_EXPECT_MSG_LT_OR_EQ(r.gpusUsed, space.gpus, "in the budget");
            // One NVLink switch: the KV cache goes from one prefill GPU to one decode GPU
            // with tp 1 on both sides, split over the tensor ranks otherwise.
            if (r.tp == 1 && r.prefillTp == 1)
            {
                const double alone =
                    RunTransferProbe(first.hardware.network, 8, {{1, 0, kvBytes}}, "flow");
                NS_TEST_EXPECT_MSG_EQ_TOL(
                    r.kvTransferS, alone, 1e-12, "the whole KV cache, GPU to GPU");
            }
            NS_TEST_EXPECT_MSG_GT(r.kvTransferS, 0, "timed on the network");
            NS_TEST_EXPECT_MSG_EQ(r.haveEnergy, true, "the H100's power model");
        }
        NS_TEST_EXPECT_MSG_EQ(paired, rows.size(), "every row paired");
        const Json pairedJson = rows.front().ToJson();
        NS_TEST_EXPECT_MSG_EQ(DumpJson(ServingRow::FromJson(pairedJson).ToJson()),
                              DumpJson(pairedJson),
                              "a paired row's round trip");

        // The transfers run at once on the network: disjoint pairs across nodes in parallel,
        // two from one GPU to the same rank of two other nodes through its one network port,
        // one after the other (the routing's dimension order sends 0 > 9 through GPU 1's port).
        const NetworkSpec& net = first.hardware.network;
        const uint64_t mib = 256ull << 20;
        const double single = RunTransferProbe(net, 24, {{0, 8, mib}});
        const double disjoint = RunTransferProbe(net, 24, {{0, 8, mib}, {1, 9, mib}});
        const double shared = RunTransferProbe(net, 24, {{0, 8, mib}, {0, 16, mib}});
        NS_TEST_EXPECT_MSG_EQ_TOL(RunTransferProbe(net, 24, {{0, 8, mib}, {0, 9, mib}}) / single,
                                  1.0,
                                  0.01,
                                  "through GPU 1's port");
        NS_TEST_EXPECT_MSG_EQ_TOL(disjoint / single, 1.0, 1e-6, "each GPU its own port");
        NS_TEST_EXPECT_MSG_EQ_TOL(shared / single, 2.0, 0.01, "one port for both");
        NS_TEST_EXPECT_MSG_EQ(RunTransferProbe(net, 24, {}), 0.0, "nothing to send");

        // A prefill instance needs one prompt's KV cache, a decode instance every request's:
        // with a long generation at a large batch only the prefill fits on one GPU.
        JobOptions big = job;
        big.Set("gen", "16384");
        ServingSpace one = space;
        one.tp = {1};
        one.batch = {256};
        const ServingRow tight = ServingStudy(big, one, "flow", "", true).Evaluate(0);
        NS_TEST_EXPECT_MSG_EQ(tight.fits, false, "256 requests of 16,640 tokens do not fit");
        NS_TEST_EXPECT_MSG_EQ(tight.prefillFits, true, "one prompt does");
        NS_TEST_EXPECT_MSG_GT(tight.prefillS, 0, "and is timed");

        // Refused: context parallelism (modelled in training only, whatever the batching) and,
        // disaggregated, data-parallel attention (each request goes to one attention replica).
        JobOptions withCp = job;
        withCp.Set("cp", "2");
        for (const Batching batching :
             {Batching::CONTINUOUS, Batching::DISAGGREGATED, Batching::CHUNKED})
        {
            ServingSpace split = space;
            split.batching = batching;
            NS_TEST_EXPECT_MSG_EQ(
                ThrowsWith(
                    [&]
                    {
                        ServingStudy(withCp, split, "flow", "", true);
                    },
                    {"cp", "modelled in training only", "allowed in inference: 1"}),
                true,
                "cp 2");
        }
        JobOptions moe = job;
        moe.Set("model", "mixtral-8x7b");
        ServingSpace dp = space;
        dp.dp = {2};
        NS_TEST_EXPECT_MSG_EQ(ThrowsWith(
                                  [&]
                                  {
                                      ServingStudy(moe, dp, "flow", "", true);
                                  },
                                  {"dp 2", "one attention replica"}),
                              true,
                              "dp attention replicas");
        NS_TEST_EXPECT_MSG_EQ(ThrowsWith(
                                  [&]
                                  {
                                      RunTransferProbe(first.hardware.network, 8, {{0, 8, 1}});
                                  },
                                  {"transfers", "0 to 7"}),
                              true,
                              "a GPU outside the network");
    }
};

/**
 * \ingroup rapid-llm-tests
 * \brief Data-parallel attention (a MoE model's dp list): an instance of dp x tp GPUs whose
 * attention replicas each serve their batch and share the experts (ep = dp); its row is the
 * `run` of that instance, its tokens every replica's. Ruled out for a dense model and with whole
 * experts kept in the tensor-parallel group (etp 1), each with its reason.
 */
class ServingDpAttentionTestCase : public TestCase
{
  public:
    ServingDpAttentionTestCase()
        : TestCase("serving study: data-parallel attention replicas sharing their experts")
    {}

  private:
    void
    DoRun() override
    {
        JobOptions moe = SmallServingJob();
        moe.Set("model", "mixtral-8x7b");
        ServingSpace space;
        space.gpus = 8;
        space.tp = {1};
        space.dp = {1, 2, 8};
        space.batch = {4};
        space.batching = Batching::STATIC;
        ServingStudy study(moe, space, "flow", "", true);
        RAPIDLLM_REQUIRE_EQ(study.Candidates().size(), 3u, "dp 1, 2, 8");
        const ParallelSpec eight = study.Candidates()[2].ToSpecs().run.parallel;
        NS_TEST_EXPECT_MSG_EQ((eight.dp == 8 && eight.ep == 8 && eight.Gpus() == 8),
                              true,
                              "eight attention replicas over the eight experts");

        const ServingRow row = study.Evaluate(1);
        JobOptions direct = moe;
        direct.Set("mode", "inference");
        direct.Set("dp", "2");
        direct.Set("ep", "2");
        direct.Set("gpus", "2");
        direct.Set("batch", "4");
        Ptr<RapidLlmHelper> h = CreateObject<RapidLlmHelper>();
        direct.Apply(h);
        const RunReport report = h->Run();
        h->Dispose();
        RAPIDLLM_REQUIRE_EQ(row.fits, true, "two layers of Mixtral on two GPUs");
        NS_TEST_EXPECT_MSG_EQ(row.dp, 2u, "the row's attention replicas");
        NS_TEST_EXPECT_MSG_EQ(row.replicas, 4u, "8 GPUs / (dp 2 x tp 1)");
        NS_TEST_EXPECT_MSG_EQ(row.tpotS, report.tpotS, "the instance's time per output token");
        NS_TEST_EXPECT_MSG_EQ_TOL(row.tokensPerSPerGpu,
                                  2.0 * 4 * 16 / (report.stepTimeS * 2),
                                  1e-9 * row.tokensPerSPerGpu,
                                  "2 replicas x 4 requests x 16 tokens on 2 GPUs");
        NS_TEST_EXPECT_MSG_EQ_TOL(row.tokensPerSPerGpu,
                                  report.tokensPerSPerGpu,
                                  1e-9 * row.tokensPerSPerGpu,
                                  "as run counts them");
        NS_TEST_EXPECT_MSG_EQ_TOL(row.requestsPerS,
                                  4.0 * 2 * 4 / report.stepTimeS,
                                  1e-9 * row.requestsPerS,
                                  "4 instances x 2 replicas x 4 requests");

        // Continuous batching: one request in flight on each of the two replicas.
        space.dp = {2};
        space.batch = {1};
        space.batching = Batching::CONTINUOUS;
        const ServingRow one = ServingStudy(moe, space, "flow", "", true).Evaluate(0);
        RAPIDLLM_REQUIRE_EQ(one.fits, true, "fits");
        NS_TEST_EXPECT_MSG_EQ_TOL(one.tokensPerSPerGpu * one.requestS * 2,
                                  2.0 * 16,
                                  1e-6,
                                  "two requests' tokens per their time on 2 GPUs");

        // More than one request finishing a step on each replica: each prefills the prompts
        // replacing them together, as a replica without data-parallel attention does (it
        // prefilled one prompt an iteration: 16 prefills to a 2-token request's token).
        {
            JobOptions shortGen = moe;
            shortGen.Set("gen", "2");
            ServingSpace sixteen = space;
            sixteen.batch = {16};
            const ServingRow r = ServingStudy(shortGen, sixteen, "flow", "", true).Evaluate(0);
            RAPIDLLM_REQUIRE_EQ(r.fits, true, "fits");
            NS_TEST_EXPECT_MSG_GT(r.prefillPrompts, 1.0, "prompts together");
            NS_TEST_EXPECT_MSG_LT(r.tpotS, 2 * (r.stepS + r.prefillS), "not 16 prefills a token");
        }

        // Under a light rate each request is alone on its replica: the row's prefill (every
        // replica prefilling one), then the steps of one request per replica.
        {
            ServingSpace light = space;
            light.rateRps = one.requestsPerS / 100;
            const ServingRow r = ServingStudy(moe, light, "flow", "", true).Run().at(0);
            RAPIDLLM_REQUIRE_EQ(r.loaded && !r.load.overloaded, true, "simulated");
            NS_TEST_EXPECT_MSG_EQ_TOL(
                r.load.summary.ttftP50S, r.prefillS, 1e-12, "alone: the prefill");
            NS_TEST_EXPECT_MSG_EQ_TOL(r.load.summary.tpotP50S,
                                      r.stepCurve.seconds.front(),
                                      OneKey(r.stepCurve),
                                      "steps of one");
        }

        // Ruled out, with the reason: a dense model, and whole experts kept in each TP group.
        space.dp = {2};
        const std::string dense = ErrorOf(
            [&]()
            {
                ServingStudy(SmallServingJob(), space, "flow", "", true);
            });
        NS_TEST_EXPECT_MSG_NE(dense.find("has none"), std::string::npos, dense);
        moe.Set("etp", "1");
        const std::string whole = ErrorOf(
            [&]()
            {
                ServingStudy(moe, space, "flow", "", true);
            });
        NS_TEST_EXPECT_MSG_NE(whole.find("--etp=1"), std::string::npos, whole);
    }
};

/**
 * \ingroup rapid-llm-tests
 * \brief Ranking: the rows within the targets by throughput per GPU, then the other fitting
 * rows, then those that do not fit by peak memory; the frontier is the rows no other row beats
 * on both throughput and time per output token.
 */
class ServingRankTestCase : public TestCase
{
  public:
    ServingRankTestCase()
        : TestCase("serving study: ranking against the targets, the frontier")
    {}

  private:
    void
    DoRun() override
    {
        std::vector<ServingRow> rows = {
            Row(0, 0.010, 0.1, 100), // fast, little throughput: frontier
            Row(1, 0.020, 0.2, 300), // frontier
            Row(2, 0.030, 0.3, 250), // beaten by row 1 on both
            Row(3, 0.060, 0.5, 900), // frontier, misses the 50 ms target
            Row(4, 0.020, 3.0, 300), // as row 1 but misses the TTFT target; ties row 1
        };
        ServingRow unfitSmall;
        unfitSmall.layout = 5;
        unfitSmall.peakBytes = 10;
        ServingRow unfitLarge;
        unfitLarge.layout = 6;
        unfitLarge.peakBytes = 20;
        rows.push_back(unfitLarge);
        rows.push_back(unfitSmall);
        ServingSpace space;
        space.tpotSloS = 0.050;
        space.ttftSloS = 1.0;
        RankServingRows(rows, space);
        std::vector<uint64_t> order;
        for (const auto& r : rows)
        {
            order.push_back(r.layout);
        }
        const std::vector<uint64_t> expected = {1, 2, 0, 3, 4, 5, 6};
        NS_TEST_EXPECT_MSG_EQ((order == expected), true, "within targets, fitting, unfit");
        auto find = [&](uint64_t layout) -> const ServingRow&
        {
            return *std::find_if(rows.begin(),
                                 rows.end(),
                                 [&](const ServingRow& r)
                                 {
                                     return r.layout == layout;
                                 });
        };
        NS_TEST_EXPECT_MSG_EQ(find(0).frontier, true, "the fastest token");
        NS_TEST_EXPECT_MSG_EQ(find(1).frontier, true, "nothing beats it");
        NS_TEST_EXPECT_MSG_EQ(find(2).frontier, false, "row 1 beats it on both");
        NS_TEST_EXPECT_MSG_EQ(find(3).frontier, true, "the most throughput");
        NS_TEST_EXPECT_MSG_EQ(find(4).frontier, true, "a tie is not beaten");
        NS_TEST_EXPECT_MSG_EQ(find(5).frontier, false, "does not fit");
        NS_TEST_EXPECT_MSG_EQ(find(1).meetsSlo, true, "20 ms, 0.2 s");
        NS_TEST_EXPECT_MSG_EQ(find(3).meetsSlo, false, "60 ms > 50 ms");
        NS_TEST_EXPECT_MSG_EQ(find(4).meetsSlo, false, "3 s > 1 s");
        // Without targets every fitting row meets them and throughput alone ranks.
        RankServingRows(rows, ServingSpace());
        NS_TEST_EXPECT_MSG_EQ(rows.front().layout, 3u, "the most throughput first");
        NS_TEST_EXPECT_MSG_EQ(rows.front().meetsSlo, true, "no targets");
    }
};

/**
 * \ingroup rapid-llm-tests
 * \brief Open-loop arrivals: each fitting row's step curve holds the replayed decode steps (at
 * one request the batch-1 row's own step); lightly loaded, a request's first token is its
 * prefill and its tokens come at the one-request step (disaggregated: the prefill layout's
 * prefill, the KV transfer spread over the tokens); at 70% of the capacity requests queue; at
 * twice it a row is overloaded and misses its targets; idle boards cost energy per token at a
 * low rate. The batchings the simulation does not follow are refused.
 */
class ServingLoadTestCase : public TestCase
{
  public:
    ServingLoadTestCase()
        : TestCase("serving study: open-loop arrivals")
    {}

  private:
    void
    DoRun() override
    {
        ServingSpace space;
        space.gpus = 2;
        space.tp = {2};
        space.batch = {1, 8};
        space.batching = Batching::CONTINUOUS;
        space.tpotSloS = 1;
        JobOptions job = SmallServingJob();
        std::vector<ServingRow> closed = ServingStudy(job, space, "flow", "", true).Run();
        const ServingRow& one = closed[0].batch == 1 ? closed[0] : closed[1];
        const ServingRow& eight = closed[0].batch == 8 ? closed[0] : closed[1];
        RAPIDLLM_REQUIRE_EQ(one.fits && eight.fits, true, "both fit");
        NS_TEST_EXPECT_MSG_EQ(eight.loaded, false, "no rate: closed loop");

        // A light load: one request in 100 closed-loop request times.
        space.rateRps = eight.requestsPerS / 100;
        const ServingStudy light(job, space, "flow", "", true);
        std::vector<ServingRow> rows = light.Run();
        for (const ServingRow& r : rows)
        {
            RAPIDLLM_REQUIRE_EQ(r.loaded && !r.load.overloaded, true, "simulated");
            const StepCurve& c = r.stepCurve;
            RAPIDLLM_REQUIRE_EQ(c.requests.back(), r.batch, "the curve ends at the batch");
            NS_TEST_EXPECT_MSG_EQ(c.seconds.back(), r.stepS, "the row's own step");
            NS_TEST_EXPECT_MSG_EQ(c.seconds.front(), one.stepS, "one request: batch 1's step");
            NS_TEST_EXPECT_MSG_EQ_TOL(
                r.load.summary.ttftP50S, r.prefillS, 1e-12, "alone: its own prefill");
            NS_TEST_EXPECT_MSG_EQ_TOL(
                r.load.summary.tpotP50S, one.stepS, OneKey(r.stepCurve), "alone: steps of one");
            NS_TEST_EXPECT_MSG_EQ(r.meetsSlo, true, "within a second a token");
            NS_TEST_EXPECT_MSG_GT(
                r.load.energyPerTokenJ, eight.energyPerTokenJ, "idle boards between requests");
            // The three figures agree: power is the energy per token at the row's token rate
            // (the offered one, not the sample's span, whose ramp and drain run below it).
            NS_TEST_EXPECT_MSG_EQ_TOL(r.load.avgPowerW,
                                      r.load.energyPerTokenJ * r.load.tokensPerSPerGpu,
                                      1e-9 * r.load.avgPowerW,
                                      "power = J/token x tokens/s");
        }
        if (rows[0].batch == 8)
        {
            NS_TEST_EXPECT_MSG_EQ(rows[0].stepCurve.requests.size(), 4u, "1, 2, 4 and 8");
        }
        const std::vector<double> curve = light.Attainment(
            rows, rows[0], {space.rateRps, rows[0].requestsPerS * 0.999, rows[0].requestsPerS});
        RAPIDLLM_REQUIRE_EQ(curve.size(), 3u, "one per rate");
        NS_TEST_EXPECT_MSG_EQ(curve[0], 1.0, "all within a second a token at the row's rate");
        NS_TEST_EXPECT_MSG_EQ(curve[2], 0.0, "none at the capacity: the queue grows");

        // Queueing at 70% of the capacity, and past it.
        space.batch = {8};
        space.rateRps = eight.requestsPerS * 0.7;
        const ServingRow busy = ServingStudy(job, space, "flow", "", true).Run().at(0);
        NS_TEST_EXPECT_MSG_EQ_TOL(busy.load.utilization, 0.7, 1e-9, "the rate over the capacity");
        NS_TEST_EXPECT_MSG_GT(
            busy.load.summary.ttftP99S, 1.5 * busy.prefillS, "some wait for a slot or a prefill");
        // Burstier arrivals at the same rate wait longer.
        {
            ServingSpace bursty = space;
            bursty.burstiness = 0.25;
            const ServingRow b = ServingStudy(job, bursty, "flow", "", true).Run().at(0);
            NS_TEST_EXPECT_MSG_GT(
                b.load.summary.ttftP90S, busy.load.summary.ttftP90S, "bursts queue");
        }
        space.rateRps = eight.requestsPerS * 2;
        const ServingRow over = ServingStudy(job, space, "flow", "", true).Run().at(0);
        NS_TEST_EXPECT_MSG_EQ(over.load.overloaded, true, "twice the capacity");
        NS_TEST_EXPECT_MSG_EQ(over.meetsSlo, false, "misses the targets");
        // It delivers its capacity's tokens, not the offered load's (twice that).
        NS_TEST_EXPECT_MSG_EQ_TOL(over.load.tokensPerSPerGpu,
                                  over.tokensPerSPerGpu,
                                  1e-9 * over.tokensPerSPerGpu,
                                  "an overloaded row generates at its capacity");

        // Disaggregated, lightly loaded: the prefill layout's prefill, then the transfer.
        ServingSpace split;
        split.gpus = 4;
        split.tp = {1, 2};
        split.batch = {4};
        split.batching = Batching::DISAGGREGATED;
        split.rateRps = 0.5;
        for (const ServingRow& r : ServingStudy(job, split, "flow", "", true).Run())
        {
            if (!r.fits)
            {
                continue;
            }
            RAPIDLLM_REQUIRE_EQ(r.loaded && !r.load.overloaded, true, "simulated");
            NS_TEST_EXPECT_MSG_EQ_TOL(
                r.load.summary.ttftP50S, r.ttftS, 1e-12, "the prefill instance's prefill");
            NS_TEST_EXPECT_MSG_EQ_TOL(r.load.summary.tpotP50S,
                                      (r.kvTransferS + 15 * r.stepCurve.seconds.front()) / 15,
                                      OneKey(r.stepCurve),
                                      "the transfer and steps of one");
        }

        // Chunked, lightly loaded: the prompt whole in one step beside no decode, then steps
        // of one; at the capacity's 90% the same as the closed form's mean step (within 2%).
        {
            ServingSpace chunked = space;
            chunked.batching = Batching::CHUNKED;
            chunked.batch = {8};
            chunked.rateRps = eight.requestsPerS / 100;
            const ServingRow c = ServingStudy(job, chunked, "flow", "", true).Run().at(0);
            RAPIDLLM_REQUIRE_EQ(c.loaded && c.chunkTokenS > 0, true, "simulated");
            NS_TEST_EXPECT_MSG_EQ_TOL(c.load.summary.ttftP50S,
                                      c.stepCurve.seconds.front() + 256 * c.chunkTokenS,
                                      1e-12,
                                      "one step carrying the 256-token prompt");
            NS_TEST_EXPECT_MSG_EQ_TOL(c.load.summary.tpotP50S,
                                      c.stepCurve.seconds.front(),
                                      OneKey(c.stepCurve),
                                      "alone: steps of one");
            chunked.rateRps = c.requestsPerS * 0.9;
            chunked.requests = 5000;
            const ServingRow busy = ServingStudy(job, chunked, "flow", "", true).Run().at(0);
            NS_TEST_EXPECT_MSG_EQ_TOL(busy.load.summary.tpotP50S / busy.tpotS,
                                      1.0,
                                      0.05,
                                      "near the capacity, the closed form's mean step");
            // Through two stages (two batches in flight) a token's share of the mixed step is
            // half its passage, but the lone prompt rides in one batch through both: its first
            // token after its whole passage, no sooner than its prefill.
            ServingSpace piped = chunked;
            piped.tp = {1};
            piped.pp = {2};
            piped.requests = 200;
            piped.rateRps = eight.requestsPerS / 100;
            const ServingRow p = ServingStudy(job, piped, "flow", "", true).Run().at(0);
            RAPIDLLM_REQUIRE_EQ(p.loaded && p.chunkTokenS > 0, true, "simulated");
            NS_TEST_EXPECT_MSG_EQ_TOL(p.load.summary.ttftP50S,
                                      p.stepCurve.seconds.front() + 2 * 256 * p.chunkTokenS,
                                      1e-12,
                                      "one step carrying the prompt through both stages");
            NS_TEST_EXPECT_MSG_GT_OR_EQ(
                p.load.summary.ttftP50S, p.prefillS, "alone: no sooner than its prefill");
        }

        // Goodput: the rows loaded at the highest rate within the targets, ranked by it.
        ServingSpace good;
        good.gpus = 2;
        good.tp = {1, 2};
        good.batch = {2, 8};
        good.batching = Batching::CONTINUOUS;
        good.tpotSloS = 1.2 * eight.tpotS;
        good.ttftSloS = 3 * eight.ttftS;
        good.goodput = true;
        const std::vector<ServingRow> ranked = ServingStudy(job, good, "flow", "", true).Run();
        double previous = 1e300;
        for (const ServingRow& r : ranked)
        {
            if (!r.meetsSlo)
            {
                continue;
            }
            NS_TEST_EXPECT_MSG_GT(r.load.goodputRps, 0, "a rate within the targets");
            NS_TEST_EXPECT_MSG_EQ(r.load.rateRps, r.load.goodputRps, "loaded at its goodput");
            NS_TEST_EXPECT_MSG_GT_OR_EQ(r.load.summary.attainment, 0.9, "90% within");
            NS_TEST_EXPECT_MSG_LT_OR_EQ(r.load.tokensPerSPerGpu, previous, "by goodput per GPU");
            previous = r.load.tokensPerSPerGpu;
            // 5% above it the targets are missed. (Not just above: a finite arrival trace's
            // attainment moves in steps of one request and is not monotone in the rate within
            // the search's precision; 0.2% above it, 0.903 once met the 0.9 again.)
            ServingSpace above = good;
            above.goodput = false;
            above.tp = {r.tp};
            above.batch = {r.batch};
            above.rateRps = r.load.goodputRps * 1.05;
            const ServingRow more = ServingStudy(job, above, "flow", "", true).Run().at(0);
            NS_TEST_EXPECT_MSG_EQ(more.meetsSlo, false, "tp " << r.tp << " batch " << r.batch);
        }
        NS_TEST_EXPECT_MSG_EQ(ranked.front().meetsSlo, true, "some layout meets the targets");
        for (const std::string& both : {"rate", "targets"})
        {
            ServingSpace bad = good;
            bad.rateRps = both == "rate" ? 1 : 0;
            bad.tpotSloS = both == "rate" ? bad.tpotSloS : 0;
            bad.ttftSloS = both == "rate" ? bad.ttftSloS : 0;
            NS_TEST_EXPECT_MSG_EQ(ThrowsWith(
                                      [&]
                                      {
                                          ServingStudy(job, bad, "flow", "", true);
                                      },
                                      {"goodput"}),
                                  true,
                                  both);
        }

        // Static batching: a whole batch as `run` times it, from the curves; lightly loaded a
        // request alone; under load the requests wait for the batch before them, where
        // continuous batching lets them in.
        {
            ServingSpace whole = space;
            whole.batching = Batching::STATIC;
            whole.batch = {8};
            whole.rateRps = eight.requestsPerS / 100;
            const ServingRow r = ServingStudy(job, whole, "flow", "", true).Run().at(0);
            RAPIDLLM_REQUIRE_EQ(r.loaded && !r.load.overloaded, true, "simulated");
            RAPIDLLM_REQUIRE_EQ(r.prefillCurve.requests.back(), 8u, "prefills up to the batch");
            NS_TEST_EXPECT_MSG_EQ_TOL((r.prefillCurve.seconds.back() + 15 * r.stepS) / r.requestS,
                                      1.0,
                                      0.02,
                                      "the curves give the batch's time as run has it");
            NS_TEST_EXPECT_MSG_EQ_TOL(
                r.load.summary.ttftP50S, r.prefillS, 1e-12, "alone: its own prefill");
            NS_TEST_EXPECT_MSG_EQ_TOL(r.load.summary.tpotP50S,
                                      r.stepCurve.seconds.front(),
                                      OneKey(r.stepCurve),
                                      "alone: steps of one");
            whole.rateRps = r.requestsPerS * 0.5;
            const ServingRow busy = ServingStudy(job, whole, "flow", "", true).Run().at(0);
            ServingSpace joined = whole;
            joined.batching = Batching::CONTINUOUS;
            const ServingRow other = ServingStudy(job, joined, "flow", "", true).Run().at(0);
            NS_TEST_EXPECT_MSG_GT(busy.load.summary.ttftP50S,
                                  other.load.summary.ttftP50S,
                                  "waiting for the batch before");
        }

        // Batches in flight set by the job: a curve's smaller batches split into no more.
        for (Batching b : {Batching::CONTINUOUS, Batching::STATIC})
        {
            ServingSpace piped;
            piped.gpus = 2;
            piped.tp = {1};
            piped.pp = {2};
            piped.batch = {4};
            piped.batching = b;
            piped.rateRps = 1;
            JobOptions two = job;
            two.Set("inflight-batches", "2");
            const ServingRow r = ServingStudy(two, piped, "flow", "", true).Run().at(0);
            NS_TEST_EXPECT_MSG_EQ((r.loaded && r.stepCurve.requests.front() == 1), true, "loaded");
        }

        // Refused: dp attention under static batching.
        space.rateRps = 1;
        space.batching = Batching::STATIC;
        space.dp = {1, 2};
        NS_TEST_EXPECT_MSG_EQ(ThrowsWith(
                                  [&]
                                  {
                                      ServingStudy(job, space, "flow", "", true);
                                  },
                                  {"dp", "allowed: dp 1, or --batching=continuous"}),
                              true,
                              "static replicas");
    }
};

/**
 * \ingroup rapid-llm-tests
 * \brief A cached prefix in a serving study: the prefill computes the rest of the prompt, the
 * decode step is the same, so the capacity grows; chunked prefill chunks only the computed
 * tokens; under a rate a request's first token is the shorter prefill, and the token budget
 * counts computed tokens.
 */
class ServingCachedPrefixTestCase : public TestCase
{
  public:
    ServingCachedPrefixTestCase()
        : TestCase("serving study: a cached prefix")
    {}

  private:
    void
    DoRun() override
    {
        ServingSpace space = ContinuousTp1(1, 8);
        const JobOptions job = SmallServingJob();
        JobOptions cachedJob = job;
        cachedJob.Set("cached-prefix", "192");
        const ServingRow whole = ServingStudy(job, space, "flow", "", true).Run().at(0);
        const ServingRow cached = ServingStudy(cachedJob, space, "flow", "", true).Run().at(0);
        RAPIDLLM_REQUIRE_EQ(whole.fits && cached.fits, true, "both fit");
        NS_TEST_EXPECT_MSG_EQ(cached.stepS, whole.stepS, "the same decode step");
        NS_TEST_EXPECT_MSG_LT(cached.prefillS, whole.prefillS, "64 tokens computed, not 256");
        NS_TEST_EXPECT_MSG_GT(cached.prefillS, 0.2 * whole.prefillS, "attending to all 256");
        NS_TEST_EXPECT_MSG_GT(cached.requestsPerS, whole.requestsPerS, "more capacity");
        JobOptions sharedJob = cachedJob;
        sharedJob.Set("shared-prefix", "true");
        const ServingRow shared = ServingStudy(sharedJob, space, "flow", "", true).Run().at(0);
        NS_TEST_EXPECT_MSG_LT(shared.peakBytes, cached.peakBytes, "the prefix cached once");
        NS_TEST_EXPECT_MSG_EQ(shared.stepS, cached.stepS, "the same steps");
        // Read once a step too (cascade attention): where the prefix's reads outweigh the two
        // more kernels (1,536 of 2,048 tokens shared by 64), faster steps, under a rate as
        // well; the step curve's keys beyond the prefix halved for what a key adds.
        JobOptions longShared = sharedJob;
        longShared.Set("prompt", "2048");
        longShared.Set("cached-prefix", "1536");
        JobOptions cascadeJob = longShared;
        cascadeJob.Set("cascade-attention", "true");
        ServingSpace loadedSpace = space;
        loadedSpace.batch = {64};
        const double capacity =
            ServingStudy(longShared, loadedSpace, "flow", "", true).Run().at(0).requestsPerS;
        loadedSpace.rateRps = 0.8 * capacity;
        loadedSpace.requests = 400;
        const ServingRow sharedLoaded =
            ServingStudy(longShared, loadedSpace, "flow", "", true).Run().at(0);
        const ServingRow cascade =
            ServingStudy(cascadeJob, loadedSpace, "flow", "", true).Run().at(0);
        RAPIDLLM_REQUIRE_EQ(cascade.loaded && cascade.stepCurve.FollowsTokens(), true, "loaded");
        NS_TEST_EXPECT_MSG_LT(cascade.stepS, sharedLoaded.stepS, "the prefix read once");
        NS_TEST_EXPECT_MSG_LT(cascade.load.summary.tpotP50S,
                              sharedLoaded.load.summary.tpotP50S,
                              "faster under the rate");

        ServingSpace chunked = space;
        chunked.batching = Batching::CHUNKED;
        chunked.tokenBudget = 40;
        const ServingRow c = ServingStudy(cachedJob, chunked, "flow", "", true).Run().at(0);
        RAPIDLLM_REQUIRE_EQ(c.fits, true, "fits");
        NS_TEST_EXPECT_MSG_EQ(c.chunkCount * c.chunkTokens, 64u, "two chunks of the 64 computed");

        ServingSpace light = space;
        light.rateRps = cached.requestsPerS / 100;
        light.tokenBudget = 128;
        const ServingRow loaded = ServingStudy(cachedJob, light, "flow", "", true).Run().at(0);
        RAPIDLLM_REQUIRE_EQ(loaded.loaded, true, "simulated");
        NS_TEST_EXPECT_MSG_EQ_TOL(
            loaded.load.summary.ttftP50S, cached.prefillS, 1e-12, "alone: the shorter prefill");
        NS_TEST_EXPECT_MSG_EQ(loaded.prefillCurve.requests.back(), 2u, "128 / 64 prompts at once");

        // A hit rate: at 0% every request computes its whole prompt (the rows without a cached
        // prefix), at 100% the prefix's; in between the candidates run at the mean (96 of 192
        // at 50%) and each request finds all of the prefix or none.
        ServingSpace busy = space;
        busy.rateRps = whole.requestsPerS * 0.6;
        const ServingRow plain = ServingStudy(job, busy, "flow", "", true).Run().at(0);
        ServingSpace never = busy;
        never.prefixHit = 0;
        const ServingStudy neverStudy(cachedJob, never, "flow", "", true);
        NS_TEST_EXPECT_MSG_EQ(neverStudy.FirstJob().run.cachedPrefix, 0u, "none cached");
        NS_TEST_EXPECT_MSG_EQ(neverStudy.PrefixTokens(), 192u, "the prefix a hit finds");
        const ServingRow missed = neverStudy.Run().at(0);
        NS_TEST_EXPECT_MSG_EQ(missed.load.summary.ttftP90S, plain.load.summary.ttftP90S, "0%");
        NS_TEST_EXPECT_MSG_EQ(missed.load.summary.tpotP90S, plain.load.summary.tpotP90S, "0%");
        // At 0% no prefix is cached, so none is shared nor read once a step: the same rows,
        // not a refusal of the sharing for want of a cached prefix.
        JobOptions longPlain = job;
        longPlain.Set("prompt", "2048");
        ServingSpace longLoaded = space;
        longLoaded.rateRps =
            0.6 * ServingStudy(longPlain, space, "flow", "", true).Run().at(0).requestsPerS;
        ServingSpace neverLong = longLoaded;
        neverLong.prefixHit = 0;
        const ServingStudy neverShared(cascadeJob, neverLong, "flow", "", true);
        NS_TEST_EXPECT_MSG_EQ((neverShared.FirstJob().run.sharedPrefix
                               || neverShared.FirstJob().run.cascadeAttention),
                              false,
                              "nothing shared");
        const ServingRow neverSharedRow = neverShared.Run().at(0);
        const ServingRow longRow =
            ServingStudy(longPlain, longLoaded, "flow", "", true).Run().at(0);
        RAPIDLLM_REQUIRE_EQ(longRow.loaded && !longRow.load.overloaded, true, "simulated");
        NS_TEST_EXPECT_MSG_EQ(neverSharedRow.load.summary.ttftP90S,
                              longRow.load.summary.ttftP90S,
                              "0%, shared or not");
        NS_TEST_EXPECT_MSG_EQ(neverSharedRow.requestsPerS, longRow.requestsPerS, "0%");
        ServingSpace half = busy;
        half.prefixHit = 0.5;
        const ServingStudy halfStudy(cachedJob, half, "flow", "", true);
        NS_TEST_EXPECT_MSG_EQ(halfStudy.FirstJob().run.cachedPrefix, 96u, "the mean");
        const ServingRow halfRow = halfStudy.Run().at(0);
        const ServingRow all = ServingStudy(cachedJob, busy, "flow", "", true).Run().at(0);
        NS_TEST_EXPECT_MSG_LT(halfRow.load.summary.ttftP50S, plain.load.summary.ttftP50S, "half");
        NS_TEST_EXPECT_MSG_GT(halfRow.load.summary.ttftP50S, all.load.summary.ttftP50S, "half");
        NS_TEST_EXPECT_MSG_GT(halfRow.requestsPerS, whole.requestsPerS, "more capacity");
        NS_TEST_EXPECT_MSG_LT(halfRow.requestsPerS, cached.requestsPerS, "less than all hits");
        const Json echo = ServingStudyJson(halfStudy, half, {halfRow}, "flow", "");
        NS_TEST_EXPECT_MSG_EQ(echo.at("prefix_hit").at("share").get<double>(), 0.5, "echoed");
        NS_TEST_EXPECT_MSG_EQ(
            echo.at("prefix_hit").at("cached_prefix").get<uint32_t>(), 192u, "the prefix");
        ServingSpace uncached = half;
        NS_TEST_EXPECT_MSG_NE(ErrorOf(
                                  [&]()
                                  {
                                      ServingStudy(job, uncached, "flow", "", true);
                                  })
                                  .find("--cached-prefix"),
                              std::string::npos,
                              "a hit rate needs a prefix");
    }
};

/**
 * \ingroup rapid-llm-tests
 * \brief A hit rate on a long prompt: a row's prefill is the mean of a request that finds the
 * prefix and one that does not, and under arrivals each request's prefill is its own (the
 * candidates replayed at the mean prefix, whose attention is not the mean's: at 128k tokens and
 * 50% a row's first token was 32% slow, a miss's under arrivals 71%).
 */
class ServingPrefixHitLongTestCase : public TestCase
{
  public:
    ServingPrefixHitLongTestCase()
        : TestCase("serving study: a hit rate prefills each request as it finds its prefix")
    {}

  private:
    void
    DoRun() override
    {
        JobOptions job;
        job.Set("model", "llama3-8b");
        job.Set("hardware", "h100-sxm-80gb");
        job.Set("prompt", "32768");
        job.Set("cached-prefix", "30720");
        job.Set("gen", "8");
        ServingSpace space = ContinuousTp1(1, 1);
        auto row = [&](double hit, double rate)
        {
            ServingSpace s = space;
            s.prefixHit = hit;
            s.rateRps = rate;
            s.requests = rate > 0 ? 200 : 0;
            return ServingStudy(job, s, "flow", "", true).Run().at(0);
        };
        const ServingRow found = row(1, 0);
        const ServingRow missed = row(0, 0);
        const ServingRow half = row(0.5, 0);
        NS_TEST_EXPECT_MSG_EQ_TOL(half.prefillS,
                                  0.5 * (found.prefillS + missed.prefillS),
                                  1e-9 * missed.prefillS,
                                  "the mean of a hit and a miss");
        NS_TEST_EXPECT_MSG_EQ_TOL(half.ttftS, half.prefillS, 1e-12, "one at a time");
        // Under a light load each request alone, at its own prefill: the median request a hit
        // at 70%, a miss at 30% (each was 22% fast and 34% slow at 50%; the rest is the curve's
        // replay at the mean prefix, 2,355 tokens to compute where a hit computes 2,048).
        const double rate = 0.01 / missed.prefillS;
        const ServingRow mostlyFound = row(0.7, rate);
        const ServingRow mostlyMissed = row(0.3, rate);
        RAPIDLLM_REQUIRE_EQ(mostlyFound.loaded && mostlyMissed.loaded, true, "simulated");
        NS_TEST_EXPECT_MSG_EQ_TOL(
            mostlyFound.load.summary.ttftP50S / found.prefillS, 1.0, 0.05, "a hit");
        NS_TEST_EXPECT_MSG_EQ_TOL(
            mostlyMissed.load.summary.ttftP50S / missed.prefillS, 1.0, 0.05, "a miss");
    }
};

/**
 * \ingroup rapid-llm-tests
 * \brief Decode steps against the context under a rate: the step curve's keys predict a replay
 * at three times the prompt, and requests of spread lengths, each alone, decode at their own
 * contexts (longer prompts, slower steps).
 */
class ServingContextTestCase : public TestCase
{
  public:
    ServingContextTestCase()
        : TestCase("serving study: decode steps at each request's context")
    {}

  private:
    void
    DoRun() override
    {
        ServingSpace space = ContinuousTp1(1, 8);
        space.rateRps = 1;
        space.requests = 50;
        const JobOptions job = SmallServingJob();
        JobOptions longer = job;
        longer.Set("prompt", "768");
        const ServingRow r = ServingStudy(job, space, "flow", "", true).Run().at(0);
        const ServingRow l = ServingStudy(longer, space, "flow", "", true).Run().at(0);
        RAPIDLLM_REQUIRE_EQ(r.loaded && l.loaded, true, "simulated");
        const StepCurve& c = r.stepCurve;
        RAPIDLLM_REQUIRE_EQ(c.secondsPerToken.size(), c.requests.size(), "a key's cost each size");
        NS_TEST_EXPECT_MSG_EQ_TOL(c.tokens, 256 + 7.5, 1e-12, "the replayed steps' mean keys");
        NS_TEST_EXPECT_MSG_EQ_TOL(l.stepCurve.tokens - c.tokens, 512.0, 1e-12, "512 more");
        for (std::size_t i = 0; i < c.requests.size(); ++i)
        {
            const uint32_t n = c.requests[i];
            NS_TEST_EXPECT_MSG_GT(c.secondsPerToken[i], 0.0, "a key costs time");
            NS_TEST_EXPECT_MSG_GT(c.joulesPerToken[i], 0.0, "and energy");
            NS_TEST_EXPECT_MSG_EQ_TOL(c.SecondsAt(n, n * l.stepCurve.tokens)
                                          / l.stepCurve.seconds[i],
                                      1.0,
                                      0.01,
                                      n << " requests at three times the prompt");
        }
        NS_TEST_EXPECT_MSG_GT(l.stepS, r.stepS, "the longer context's step is slower");
        // The prefill curve the same way: a prompt of a quarter as many tokens keeps the
        // iteration's fixed costs (within 3% of its replay, where scaling the prefill by its
        // tokens gave 26-41% of it); three times as many, within 10% (the attention grows
        // with the square of the tokens).
        const StepCurve& p = r.prefillCurve;
        RAPIDLLM_REQUIRE_EQ(p.FollowsTokens(), true, "the prefill follows its tokens");
        NS_TEST_EXPECT_MSG_EQ(p.tokens, 256.0, "the prompt's tokens");
        JobOptions shorter = job;
        shorter.Set("prompt", "64");
        const ServingRow q = ServingStudy(shorter, space, "flow", "", true).Run().at(0);
        for (uint32_t n : p.requests)
        {
            NS_TEST_EXPECT_MSG_EQ_TOL(p.SecondsAt(n, n * 64.0) / q.prefillCurve.SecondsAt(n),
                                      1.0,
                                      0.03,
                                      n << " prompts of 64 tokens");
            if (n <= l.prefillCurve.requests.back())
            {
                NS_TEST_EXPECT_MSG_EQ_TOL(p.SecondsAt(n, n * 768.0) / l.prefillCurve.SecondsAt(n),
                                          1.0,
                                          0.1,
                                          n << " prompts of 768 tokens");
            }
        }

        // A long prompt's prefill is led by its attention, which grows with the square of its
        // tokens: Llama-3 8B at 4,096 tokens a prompt predicts prompts of a quarter and of 1.9
        // times as many within 4% of their replays (0.7-2.1%; affine in the tokens they came
        // out 4-8% short).
        JobOptions longJob = job;
        longJob.Set("model", "llama3-8b");
        longJob.Set("hardware", "h100-sxm-80gb");
        longJob.Set("prompt", "4096");
        ServingSpace longSpace = space;
        longSpace.batch = {2};
        const StepCurve lp =
            ServingStudy(longJob, longSpace, "flow", "", true).Run().at(0).prefillCurve;
        RAPIDLLM_REQUIRE_EQ(lp.secondsPerTokenSq.size(), lp.requests.size(), "squares followed");
        for (const uint32_t tokens : {1024u, 7782u})
        {
            JobOptions other = longJob;
            other.Set("prompt", std::to_string(tokens));
            const StepCurve op =
                ServingStudy(other, longSpace, "flow", "", true).Run().at(0).prefillCurve;
            for (std::size_t i = 0; i < lp.requests.size() && i < op.requests.size(); ++i)
            {
                const uint32_t n = lp.requests[i];
                NS_TEST_EXPECT_MSG_GT(lp.secondsPerTokenSq[i], 0.0, "the attention's squares");
                NS_TEST_EXPECT_MSG_EQ_TOL(
                    lp.SecondsAt(n, double(n) * tokens, double(n) * tokens * tokens)
                        / op.seconds[i],
                    1.0,
                    0.04,
                    n << " prompts of " << tokens << " tokens");
            }
        }

        // Lengths spread by 90% either way, lightly loaded: each request alone, its steps
        // attending to its own prompt.
        ServingSpace spread = space;
        spread.spread = 0.9;
        spread.rateRps = r.requestsPerS / 100;
        const ServingRow s = ServingStudy(job, spread, "flow", "", true).Run().at(0);
        RAPIDLLM_REQUIRE_EQ(s.loaded && !s.load.overloaded, true, "simulated");
        const double perKey = c.secondsPerToken.front();
        NS_TEST_EXPECT_MSG_GT(s.load.summary.tpotP90S - s.load.summary.tpotP50S,
                              perKey * 0.5 * 256,
                              "the long prompts' steps slower (the 90th: 72% of the prompt more)");
        NS_TEST_EXPECT_MSG_LT(s.load.summary.tpotP90S - s.load.summary.tpotP50S,
                              perKey * 0.9 * (256 + 16 / 2),
                              "by their keys: at most 90% of the prompt and half the generation");
    }
};

/**
 * \ingroup rapid-llm-tests
 * \brief The KV cache a replica holds under a rate: the tokens of its batch at the job's lengths
 * and what the memory left holds at Llama-2 7B's 512 KiB a token (32 layers x 2 x 4,096 bf16
 * values), with the prefix stored once when shared; vLLM preempts where long requests fill it,
 * with or without chunked prefill.
 */
class ServingKvTokensTestCase : public TestCase
{
  public:
    ServingKvTokensTestCase()
        : TestCase("serving study: the KV cache a replica holds")
    {}

  private:
    void
    DoRun() override
    {
        JobOptions job = VllmLlama2("a100-sxm-40gb", 1024, 64);
        ServingSpace space = ContinuousTp1(1, 8);
        space.rateRps = 1;
        space.requests = 20;
        const ServingRow r = ServingStudy(job, space, "flow", "", true).Run().at(0);
        RAPIDLLM_REQUIRE_EQ(r.fits && r.loaded, true, "fits, simulated");
        const double perToken = 32.0 * 2 * 4096 * 2;
        NS_TEST_EXPECT_MSG_EQ_TOL(r.kvTokens,
                                  8.0 * 1088 + double(r.capacityBytes - r.peakBytes) / perToken,
                                  1e-6 * r.kvTokens,
                                  "the batch's tokens and the memory left");
        NS_TEST_EXPECT_MSG_LT(r.kvTokens, 40.0 * 1024 * 1024 * 1024 / perToken, "within 40 GiB");
        NS_TEST_EXPECT_MSG_GT(r.kvTokens, 20.0 * 1024 * 1024 * 1024 / perToken, "beside 13 GB");
        JobOptions shared = job;
        shared.Set("cached-prefix", "512");
        shared.Set("shared-prefix", "true");
        const ServingRow s = ServingStudy(shared, space, "flow", "", true).Run().at(0);
        NS_TEST_EXPECT_MSG_EQ_TOL(s.kvTokens,
                                  8.0 * (1088 - 512)
                                      + double(s.capacityBytes - s.peakBytes) / perToken,
                                  1e-6 * s.kvTokens,
                                  "a request's own tokens, the prefix stored once");

        // Twenty in flight of 2,048 + 256 tokens spread by 90%: a run of long requests fills
        // the cache; vLLM preempts (and recomputes) some, an engine that reserves never does.
        job.Set("prompt", "2048");
        job.Set("gen", "256");
        space.batch = {20};
        space.rateRps = 1.6;
        space.requests = 1000;
        space.spread = 0.9;
        const ServingRow v = ServingStudy(job, space, "flow", "", true).Run().at(0);
        RAPIDLLM_REQUIRE_EQ(v.fits && v.loaded, true, "fits, simulated");
        NS_TEST_EXPECT_MSG_LT(v.kvTokens, 20.0 * 1.9 * 2304, "the long ones do not all fit");
        NS_TEST_EXPECT_MSG_GT(v.load.summary.preemptions, 0u, "vLLM preempts");
        NS_TEST_EXPECT_MSG_EQ(v.load.ToJson().at("preemptions").get<uint64_t>(),
                              v.load.summary.preemptions,
                              "reported");
        JobOptions reserving = job;
        reserving.Set("engine", "lmdeploy");
        const ServingRow l = ServingStudy(reserving, space, "flow", "", true).Run().at(0);
        NS_TEST_EXPECT_MSG_EQ(l.load.summary.preemptions, 0u, "a reserving engine never");
        // vLLM V1 (chunked prefill) preempts there too.
        space.batching = Batching::CHUNKED;
        const ServingRow c = ServingStudy(job, space, "flow", "", true).Run().at(0);
        RAPIDLLM_REQUIRE_EQ(c.fits && c.loaded, true, "chunked: fits, simulated");
        NS_TEST_EXPECT_MSG_GT(c.load.summary.preemptions, 0u, "vLLM V1 preempts");
        const ServingRow lc = ServingStudy(reserving, space, "flow", "", true).Run().at(0);
        NS_TEST_EXPECT_MSG_EQ(lc.load.summary.preemptions, 0u, "chunked, reserving: never");
    }
};

/**
 * \ingroup rapid-llm-tests
 * \brief A batch beyond the KV cache: vLLM (continuous or chunked) runs it, admitting on the
 * tokens held and preempting, with the closed-loop figures of a saturated queue (which for a
 * batch that fits whole agree with the analytic steady state); engines that reserve whole
 * lengths, and disaggregated decode instances, are refused naming the batch that fits.
 */
class ServingKvLimitedTestCase : public TestCase
{
  public:
    ServingKvLimitedTestCase()
        : TestCase("serving study: a batch beyond the KV cache under vLLM")
    {}

  private:
    void
    DoRun() override
    {
        // Llama-2 7B on one A100-40GB, 2,048 + 256 tokens a request: 16 fit whole, 64 do not.
        const JobOptions job = VllmLlama2("a100-sxm-40gb", 2048, 256);
        ServingSpace space = ContinuousTp1(1, 16);
        space.rateRps = 0.5;
        space.requests = 400;
        for (const Batching batching : {Batching::CONTINUOUS, Batching::CHUNKED})
        {
            // The saturated queue of a batch that fits whole is the analytic steady state: every
            // slot busy, staggered (continuous: one prompt a prefill iteration; chunked: the
            // prompts' chunks beside the decodes, where the analytic mix of steps is within 2%).
            space.batching = batching;
            const ServingStudy sixteen(job, space, "flow", "", true);
            const ServingRow whole = sixteen.Run().at(0);
            RAPIDLLM_REQUIRE_EQ((whole.fits && whole.kvWhole == 0), true, "16 fit whole");
            const ServingRow queued = sixteen.Saturated(whole);
            NS_TEST_EXPECT_MSG_EQ_TOL(queued.tokensPerSPerGpu,
                                      whole.tokensPerSPerGpu,
                                      0.01 * whole.tokensPerSPerGpu,
                                      "the same throughput");
            NS_TEST_EXPECT_MSG_EQ_TOL(queued.tpotS, whole.tpotS, 0.02 * whole.tpotS, "TPOT");
            NS_TEST_EXPECT_MSG_EQ_TOL(queued.ttftS, whole.ttftS, 0.02 * whole.ttftS, "TTFT");
            NS_TEST_EXPECT_MSG_EQ_TOL(queued.energyPerTokenJ,
                                      whole.energyPerTokenJ,
                                      0.01 * whole.energyPerTokenJ,
                                      "energy per token");
        }

        // 64 in flight: lmdeploy (given vLLM's 0.9 of the memory) reserves whole lengths and is
        // refused naming the 18 that fit; vLLM runs it, admitting while a prompt fits beside the
        // tokens held and preempting (recomputing) when the cache fills: the cache bounds it
        // near the 18 whole.
        space.batching = Batching::CONTINUOUS;
        space.rateRps = 0;
        space.batch = {64};
        const ServingRow beyond = ServingStudy(job, space, "flow", "", true).Run().at(0);
        JobOptions reserving = job;
        reserving.Set("engine", "lmdeploy");
        reserving.Set("gpu-memory-utilization", "0.9");
        const ServingRow refused = ServingStudy(reserving, space, "flow", "", true).Run().at(0);
        RAPIDLLM_REQUIRE_EQ(refused.fits, false, "lmdeploy: refused");
        RAPIDLLM_REQUIRE_EQ((beyond.fits && beyond.kvWhole > 0), true, "vLLM runs it");
        NS_TEST_EXPECT_MSG_NE(
            refused.reason.find("at most " + std::to_string(beyond.kvWhole) + " requests fit"),
            std::string::npos,
            "the batch that fits whole");
        NS_TEST_EXPECT_MSG_EQ(beyond.peakBytes, beyond.capacityBytes, "the cache filled");
        NS_TEST_EXPECT_MSG_EQ((beyond.kvInFlight > 0.8 * beyond.kvWhole && beyond.kvInFlight < 64),
                              true,
                              "in flight: about what the cache holds, fewer than the slots");
        const double length = 2048 + 256;
        NS_TEST_EXPECT_MSG_GT(beyond.kvTokens, beyond.kvWhole * length, "holds those whole");
        NS_TEST_EXPECT_MSG_LT(beyond.kvTokens, (beyond.kvWhole + 1) * length, "not one more");
        space.batch = {beyond.kvWhole};
        const ServingRow fewer = ServingStudy(job, space, "flow", "", true).Run().at(0);
        NS_TEST_EXPECT_MSG_EQ_TOL(beyond.tokensPerSPerGpu,
                                  fewer.tokensPerSPerGpu,
                                  0.05 * fewer.tokensPerSPerGpu,
                                  "about what the batch it holds whole gives");
        // The same board with 200 GiB holds 64 whole (its analytic steady state): an upper
        // bound the cache keeps it well below.
        JobOptions larger = job;
        larger.Set("set", "gpu.hbm_gib=200");
        space.batch = {64};
        const ServingRow unbounded = ServingStudy(larger, space, "flow", "", true).Run().at(0);
        RAPIDLLM_REQUIRE_EQ((unbounded.fits && unbounded.kvWhole == 0), true, "64 whole");
        NS_TEST_EXPECT_MSG_LT(
            beyond.tokensPerSPerGpu, 0.9 * unbounded.tokensPerSPerGpu, "bounded by its cache");
        // Under arrivals near its capacity it preempts; disaggregated decode instances reserve
        // whole lengths and are refused.
        space.batch = {64};
        space.rateRps = 0.9 * beyond.requestsPerS;
        space.requests = 400;
        const ServingRow loaded = ServingStudy(job, space, "flow", "", true).Run().at(0);
        RAPIDLLM_REQUIRE_EQ((loaded.fits && loaded.loaded), true, "simulated");
        NS_TEST_EXPECT_MSG_GT(loaded.load.summary.preemptions, 0u, "preempts");
        NS_TEST_EXPECT_MSG_EQ(
            loaded.ToJson().at("kv_whole").get<uint32_t>(), beyond.kvWhole, "reported");
        const std::string csv = ServingStudyCsv({fewer, loaded});
        NS_TEST_EXPECT_MSG_NE(csv.find(",kv_whole\n"), std::string::npos, "a last column");
        NS_TEST_EXPECT_MSG_NE(
            csv.find("," + std::to_string(beyond.kvWhole) + "\n"), std::string::npos, csv);
        space.batching = Batching::DISAGGREGATED;
        space.gpus = 2;
        const std::vector<ServingRow> split = ServingStudy(job, space, "flow", "", true).Run();
        NS_TEST_EXPECT_MSG_EQ(std::none_of(split.begin(),
                                           split.end(),
                                           [](const ServingRow& r)
                                           {
                                               return r.fits;
                                           }),
                              true,
                              "decode instances reserve whole lengths");
    }
};

/**
 * \ingroup rapid-llm-tests
 * \brief Requests dealt to the least outstanding of two replicas wait less for their first
 * token than dealt in turn where their lengths spread; disaggregated decode instances are dealt
 * to as well; the router is echoed and refused where it deals nothing.
 */
class ServingRouterTestCase : public TestCase
{
  public:
    ServingRouterTestCase()
        : TestCase("serving study: requests dealt to the least outstanding")
    {}

  private:
    void
    DoRun() override
    {
        const JobOptions job = VllmLlama2("a100-sxm-80gb", 512, 128);
        ServingSpace space = ContinuousTp1(2, 8);
        space.spread = 0.9;
        space.requests = 400;
        const ServingRow closed = ServingStudy(job, space, "flow", "", true).Run().at(0);
        space.rateRps = 0.8 * closed.requestsPerS;
        const ServingRow turn = ServingStudy(job, space, "flow", "", true).Run().at(0);
        space.router = QueueRouter::LEAST_OUTSTANDING;
        const ServingStudy leastStudy(job, space, "flow", "", true);
        const ServingRow least = leastStudy.Run().at(0);
        RAPIDLLM_REQUIRE_EQ(turn.loaded && least.loaded, true, "simulated");
        NS_TEST_EXPECT_MSG_LT(least.load.summary.ttftP90S,
                              turn.load.summary.ttftP90S,
                              "fewer wait behind a long request");
        NS_TEST_EXPECT_MSG_EQ(ServingStudyJson(leastStudy, space, {least}, "flow", "")
                                  .at("arrivals")
                                  .at("router")
                                  .get<std::string>(),
                              "least-outstanding",
                              "echoed");
        // Disaggregated: the decode instances chosen as the prefills end; a closed loop deals
        // nothing.
        ServingSpace split = space;
        split.gpus = 4;
        split.batching = Batching::DISAGGREGATED;
        const ServingRow splitLeast = ServingStudy(job, split, "flow", "", true).Run().at(0);
        split.router = QueueRouter::ROUND_ROBIN;
        const ServingRow splitTurn = ServingStudy(job, split, "flow", "", true).Run().at(0);
        RAPIDLLM_REQUIRE_EQ(splitLeast.loaded && splitLeast.replicas > 1, true, "decode instances");
        NS_TEST_EXPECT_MSG_NE(
            splitLeast.load.summary.tpotP90S, splitTurn.load.summary.tpotP90S, "dealt otherwise");
        ServingSpace closedLoop = space;
        closedLoop.rateRps = 0;
        NS_TEST_EXPECT_MSG_EQ(ThrowsWith(
                                  [&]
                                  {
                                      ServingStudy(job, closedLoop, "flow", "", true);
                                  },
                                  {"router", "--rate or --goodput"}),
                              true,
                              "a closed loop");
    }
};

/**
 * \ingroup rapid-llm-tests
 * \brief Sized for a rate: a layout's fewest instances meet the targets and one fewer does not
 * (the same rate on that many GPUs); the rows rank by the GPUs they take; sizing is refused
 * without a rate or without targets.
 */
class ServingSizeTestCase : public TestCase
{
  public:
    ServingSizeTestCase()
        : TestCase("serving study: sized for a rate")
    {}

  private:
    void
    DoRun() override
    {
        const JobOptions job = VllmLlama2("a100-sxm-80gb", 512, 128);
        ServingSpace space = SizedForThirty();
        space.tp = {1, 2};
        const std::vector<ServingRow> rows = ServingStudy(job, space, "flow", "", true).Run();
        RAPIDLLM_REQUIRE_EQ(rows.size(), 2u, "two layouts");
        for (std::size_t k = 0; k < rows.size(); ++k)
        {
            const ServingRow& r = rows[k];
            RAPIDLLM_REQUIRE_EQ(r.meetsSlo && r.replicas > 1, true, "sized within 16 GPUs");
            NS_TEST_EXPECT_MSG_LT(r.replicas, 16u / r.tp, "fewer than the budget's");
            ServingSpace fewer = space;
            fewer.size = false;
            fewer.tp = {r.tp};
            fewer.gpus = (r.replicas - 1) * r.tp;
            const ServingRow one = ServingStudy(job, fewer, "flow", "", true).Run().at(0);
            NS_TEST_EXPECT_MSG_EQ(one.meetsSlo, false, "one instance fewer misses");
            fewer.gpus = r.replicas * r.tp;
            const ServingRow same = ServingStudy(job, fewer, "flow", "", true).Run().at(0);
            NS_TEST_EXPECT_MSG_EQ(same.meetsSlo, true, "as many meet");
            NS_TEST_EXPECT_MSG_EQ_TOL(
                same.load.summary.ttftP90S, r.load.summary.ttftP90S, 1e-12, "the same simulation");
            if (k > 0)
            {
                NS_TEST_EXPECT_MSG_GT_OR_EQ(
                    r.replicas * r.tp, rows[k - 1].replicas * rows[k - 1].tp, "ranked by GPUs");
            }
        }
        // The GPUs are a budget: a layout need not divide it, only fit it once (TP2 in 15).
        ServingSpace odd = space;
        odd.tp = {2};
        odd.gpus = 15;
        const std::vector<ServingRow> oddRows = ServingStudy(job, odd, "flow", "", true).Run();
        RAPIDLLM_REQUIRE_EQ(oddRows.size(), 1u, "TP2 in a budget of 15 GPUs");
        NS_TEST_EXPECT_MSG_EQ(oddRows[0].meetsSlo, true, "sized");
        NS_TEST_EXPECT_MSG_LT_OR_EQ(oddRows[0].replicas * 2u, 15u, "within the budget");
        for (const auto& refused : {std::make_pair(0.0, 0.3), std::make_pair(30.0, 0.0)})
        {
            ServingSpace bad = space;
            bad.rateRps = refused.first;
            bad.tpotSloS = refused.second;
            bad.ttftSloS = refused.second;
            NS_TEST_EXPECT_MSG_EQ(ThrowsWith(
                                      [&]
                                      {
                                          ServingStudy(job, bad, "flow", "", true);
                                      },
                                      {"size"}),
                                  true,
                                  "refused");
        }
    }
};

/**
 * \ingroup rapid-llm-tests
 * \brief Disaggregated serving sized for a rate: each decode row's set of prefill and decode
 * instances meets the targets, no set on one GPU fewer does (the budget one GPU smaller), the
 * budget of its own GPUs finds as many; where no set meets, the row is the whole budget's
 * pairing under the rate, as without sizing.
 */
class ServingSizeDisaggregatedTestCase : public TestCase
{
  public:
    ServingSizeDisaggregatedTestCase()
        : TestCase("serving study: disaggregated serving sized for a rate")
    {}

  private:
    void
    DoRun() override
    {
        const JobOptions job = VllmLlama2("a100-sxm-80gb", 512, 128);
        ServingSpace space = SizedForThirty();
        space.batch = {16, 64};
        space.batching = Batching::DISAGGREGATED;
        space.ttftSloS = 0.1;
        const std::vector<ServingRow> rows = ServingStudy(job, space, "flow", "", true).Run();
        RAPIDLLM_REQUIRE_EQ(rows.size(), 2u, "two batches");
        for (std::size_t k = 0; k < rows.size(); ++k)
        {
            const ServingRow& r = rows[k];
            RAPIDLLM_REQUIRE_EQ(r.meetsSlo && r.prefillInstances > 0, true, "sized within 16 GPUs");
            NS_TEST_EXPECT_MSG_EQ(r.gpusUsed, r.prefillInstances + r.replicas, "TP1 instances");
            NS_TEST_EXPECT_MSG_LT(r.gpusUsed, 16u, "fewer than the budget's");
            NS_TEST_EXPECT_MSG_LT(r.load.utilization, 1.0, "within its capacity");
            if (k > 0)
            {
                NS_TEST_EXPECT_MSG_GT_OR_EQ(r.gpusUsed, rows[k - 1].gpusUsed, "ranked by GPUs");
            }
            ServingSpace own = space;
            own.batch = {r.batch};
            own.gpus = r.gpusUsed;
            const ServingRow same = ServingStudy(job, own, "flow", "", true).Run().at(0);
            NS_TEST_EXPECT_MSG_EQ(same.meetsSlo, true, "its own GPUs meet");
            NS_TEST_EXPECT_MSG_EQ(same.gpusUsed, r.gpusUsed, "as many");
            own.gpus = r.gpusUsed - 1;
            const ServingRow fewer = ServingStudy(job, own, "flow", "", true).Run().at(0);
            NS_TEST_EXPECT_MSG_EQ(fewer.meetsSlo, false, "one GPU fewer misses");
        }
        // A first-token target no prefill meets: the whole budget's pairing, loaded as
        // without sizing.
        ServingSpace tight = space;
        tight.ttftSloS = 0.02;
        const ServingRow missed = ServingStudy(job, tight, "flow", "", true).Run().at(0);
        tight.size = false;
        const ServingRow plain = ServingStudy(job, tight, "flow", "", true).Run().at(0);
        NS_TEST_EXPECT_MSG_EQ(missed.meetsSlo, false, "missed");
        NS_TEST_EXPECT_MSG_EQ(missed.gpusUsed, plain.gpusUsed, "the whole budget's pairing");
        NS_TEST_EXPECT_MSG_EQ(
            missed.load.summary.attainment, plain.load.summary.attainment, "the same simulation");
    }
};

/**
 * \ingroup rapid-llm-tests
 * \brief Prefix groups under arrivals: with one group every request but each instance's first
 * finds it; with more groups than an instance holds, the cache-aware router finds more of them
 * than dealing in turn, and the first tokens come sooner; disaggregated, the prefill
 * instances' caches, their prompts from one queue or dealt cache-aware; refusals name the
 * option.
 */
class ServingPrefixGroupsTestCase : public TestCase
{
  public:
    ServingPrefixGroupsTestCase()
        : TestCase("serving study: prefix groups and the cache-aware router")
    {}

  private:
    void
    DoRun() override
    {
        JobOptions job = VllmLlama2("a100-sxm-40gb", 1024, 64);
        job.Set("cached-prefix", "768");
        ServingSpace space = ContinuousTp1(4, 16);
        space.requests = 600;
        space.rateRps = 24;
        space.ttftSloS = 0.5;
        space.prefixes = 1;
        const ServingRow one = ServingStudy(job, space, "flow", "", true).Run().at(0);
        RAPIDLLM_REQUIRE_EQ(one.loaded && !one.load.overloaded && one.replicas == 4, true, "run");
        NS_TEST_EXPECT_MSG_EQ_TOL(
            one.load.prefixHitShare, (600.0 - 4) / 600, 1e-12, "all but each instance's first");
        space.prefixes = 256;
        const ServingRow turn = ServingStudy(job, space, "flow", "", true).Run().at(0);
        space.router = QueueRouter::CACHE_AWARE;
        const ServingRow aware = ServingStudy(job, space, "flow", "", true).Run().at(0);
        NS_TEST_EXPECT_MSG_GT(
            aware.load.prefixHitShare, turn.load.prefixHitShare + 0.3, "their groups kept apart");
        NS_TEST_EXPECT_MSG_LT(
            aware.load.summary.ttftP50S, turn.load.summary.ttftP50S, "shorter prefills");
        NS_TEST_EXPECT_MSG_GT(turn.load.summary.ttftP50S,
                              one.load.summary.ttftP50S,
                              "whole prompts where the groups are many");
        // Disaggregated: the prefill instances' caches (one group: found but by the first
        // prompts each instance prefills).
        ServingSpace split = space;
        split.batching = Batching::DISAGGREGATED;
        split.router = QueueRouter::ROUND_ROBIN;
        split.prefixes = 1;
        const ServingRow splitOne = ServingStudy(job, split, "flow", "", true).Run().at(0);
        RAPIDLLM_REQUIRE_EQ(splitOne.loaded && !splitOne.load.overloaded, true, "run");
        NS_TEST_EXPECT_MSG_GT(splitOne.load.prefixHitShare, 0.98, "found by nearly all");
        NS_TEST_EXPECT_MSG_LT(splitOne.load.prefixHitShare, 1.0, "not by the first");
        // Many groups: the prompts dealt cache-aware find theirs more often than taken from one
        // queue; the decode instances' router does not move the prefill's hits.
        split.gpus = 8; // two prefill instances
        split.prefixes = 128;
        const ServingRow splitShared = ServingStudy(job, split, "flow", "", true).Run().at(0);
        split.router = QueueRouter::LEAST_OUTSTANDING;
        const ServingRow splitLeast = ServingStudy(job, split, "flow", "", true).Run().at(0);
        split.router = QueueRouter::CACHE_AWARE;
        const ServingRow splitAware = ServingStudy(job, split, "flow", "", true).Run().at(0);
        NS_TEST_EXPECT_MSG_EQ(
            splitLeast.load.prefixHitShare, splitShared.load.prefixHitShare, "the prefill's");
        NS_TEST_EXPECT_MSG_GT(splitAware.load.prefixHitShare,
                              splitShared.load.prefixHitShare + 0.2,
                              "dealt to their holders");

        // A group's requests in flight share its prefix's blocks: 32 requests of 2,048 + 256
        // tokens, 1,536 the prefix, on one A100-40GB (~50k tokens of KV cache) fit in two
        // groups (32 x 768 + 2 x 1,536 tokens), not whole in 64 (a copy each, 32 x 2,304), so
        // vLLM runs that batch beyond its cache (ServingKvLimitedTestCase); the cache holds the
        // same tokens however they are shared.
        JobOptions grouped = VllmLlama2("a100-sxm-40gb", 2048, 256);
        grouped.Set("cached-prefix", "1536");
        ServingSpace groups = ContinuousTp1(1, 32);
        groups.rateRps = 1;
        groups.prefixes = 2;
        const ServingRow two = ServingStudy(grouped, groups, "flow", "", true).Evaluate(0);
        groups.prefixes = 64;
        const ServingRow each = ServingStudy(grouped, groups, "flow", "", true).Evaluate(0);
        NS_TEST_EXPECT_MSG_EQ((two.fits && two.kvWhole == 0), true, "two copies fit");
        NS_TEST_EXPECT_MSG_EQ((each.fits && each.kvWhole > 0 && each.kvWhole < 32),
                              true,
                              "a copy a request does not fit whole");
        NS_TEST_EXPECT_MSG_EQ_TOL(each.kvTokens, two.kvTokens, 1e-6 * two.kvTokens, "one cache");
        // A disaggregated decode instance shares them too (beside a prefill instance on the
        // other GPU): 32 in two groups fit, as co-located.
        ServingSpace pairs = groups;
        pairs.batching = Batching::DISAGGREGATED;
        pairs.gpus = 2;
        pairs.prefixes = 2;
        const std::vector<ServingRow> paired = ServingStudy(grouped, pairs, "flow", "", true).Run();
        RAPIDLLM_REQUIRE_EQ((paired.size() == 1 && paired[0].fits && paired[0].loaded),
                            true,
                            "the decode instance of 32 fits");
        NS_TEST_EXPECT_MSG_EQ(paired[0].prefillInstances, 1u, "beside one prefill instance");
        const double decodeHits = paired[0].load.decodePrefixHitShare;
        NS_TEST_EXPECT_MSG_EQ((decodeHits > 0.9 && decodeHits <= 1), true, "two groups: held");
        NS_TEST_EXPECT_MSG_EQ(paired[0].load.ToJson().at("decode_prefix_hit_share").get<double>(),
                              decodeHits,
                              "in JSON");
        // Beyond the cache (128 slots) the saturated queue shares the groups' prefixes too: two
        // groups keep more in flight than 64, which hold a copy a request.
        groups.batch = {128};
        groups.prefixes = 2;
        const ServingRow twoBeyond = ServingStudy(grouped, groups, "flow", "", true).Evaluate(0);
        groups.prefixes = 64;
        const ServingRow eachBeyond = ServingStudy(grouped, groups, "flow", "", true).Evaluate(0);
        NS_TEST_EXPECT_MSG_EQ((twoBeyond.kvWhole > 2 * eachBeyond.kvWhole), true, "held whole");
        NS_TEST_EXPECT_MSG_GT(
            twoBeyond.tokensPerSPerGpu, 1.3 * eachBeyond.tokensPerSPerGpu, "more in flight");
        // Its KV cache in tokens: the requests' own and the copies, and what is left free.
        const double perToken = 512 << 10;
        NS_TEST_EXPECT_MSG_EQ_TOL(two.kvTokens,
                                  32.0 * 768 + 2 * 1536
                                      + double(two.capacityBytes - two.peakBytes) / perToken,
                                  1e-6,
                                  "the cache's tokens");

        // Each refused case: the job, the space and what the error names besides the option.
        std::vector<std::tuple<JobOptions, ServingSpace, std::string, std::string>> refused;
        JobOptions uncached = job;
        uncached.Set("cached-prefix", "0");
        refused.emplace_back(uncached, space, "prefixes", "--cached-prefix");
        JobOptions shared = job;
        shared.Set("shared-prefix", "true");
        refused.emplace_back(shared, space, "prefixes", "--shared-prefix");
        ServingSpace drawn = space;
        drawn.prefixHit = 0.5;
        refused.emplace_back(job, drawn, "prefixes", "--prefix-hit");
        ServingSpace closed = space;
        closed.rateRps = 0;
        closed.router = QueueRouter::ROUND_ROBIN;
        refused.emplace_back(job, closed, "prefixes", "--rate");
        ServingSpace ungrouped = space;
        ungrouped.prefixes = 0;
        refused.emplace_back(job, ungrouped, "router", "--prefixes");
        for (const auto& [badJob, bad, option, mention] : refused)
        {
            NS_TEST_EXPECT_MSG_EQ(ThrowsWith(
                                      [&]
                                      {
                                          ServingStudy(badJob, bad, "flow", "", true);
                                      },
                                      {option, mention}),
                                  true,
                                  mention);
        }
    }
};

#ifdef RAPIDLLM_CLI

/**
 * \ingroup rapid-llm-tests
 * \brief The command as a user runs it: one worker or two give the same JSON; --out writes
 * the CSV, JSON and plot; bad input is an error naming the option, with a non-zero exit.
 */
class CliServingStudyTestCase : public TestCase
{
  public:
    CliServingStudyTestCase()
        : TestCase("study serving: workers give the same bytes, outputs, bad input")
    {}

  private:
    void
    DoRun() override
    {
        const ScratchDir scratch("serving");
        const std::string dir = scratch.Path();
        const std::vector<std::string> study = {"study",
                                                "serving",
                                                "--model=llama2-7b",
                                                "--hardware=h100-sxm-80gb",
                                                "--layers=2",
                                                "--gpus=4",
                                                "--tp=1,2,4",
                                                "--batch=1,16",
                                                "--prompt=256",
                                                "--gen=16",
                                                "--tpot-slo=5"};
        CliResult one = RunCli(Cat(study, {"--workers=1", "--json"}), dir);
        NS_TEST_ASSERT_MSG_EQ(one.status, 0, one.err);
        CliResult two = RunCli(Cat(study, {"--workers=2", "--json"}), dir);
        NS_TEST_ASSERT_MSG_EQ(two.status, 0, two.err);
        NS_TEST_EXPECT_MSG_EQ((one.out == two.out), true, "one worker or two: the same bytes");
        const Json j = Json::parse(one.out);
        NS_TEST_EXPECT_MSG_EQ(j.at("rows").size(), 6u, "3 tp x 2 batches");
        NS_TEST_EXPECT_MSG_EQ(j.at("input").at("layout").at("tp").size(), 3u, "the lists echoed");
        NS_TEST_EXPECT_MSG_EQ(j.at("batching").get<std::string>(), "static", "no engine: static");
        CliResult continuous = RunCli(Cat(study, {"--batching=continuous", "--json"}), dir);
        NS_TEST_ASSERT_MSG_EQ(continuous.status, 0, continuous.err);
        NS_TEST_EXPECT_MSG_EQ(Json::parse(continuous.out).at("batching").get<std::string>(),
                              "continuous",
                              "as asked");
        NS_TEST_EXPECT_MSG_EQ(Json::parse(continuous.out).at("token_budget").get<uint32_t>(),
                              4096u,
                              "vLLM before V1: Llama-2's 4,096-token max_model_len");

        CliResult split = RunCli(Cat(study, {"--batching=disaggregated", "--csv"}), dir);
        NS_TEST_ASSERT_MSG_EQ(split.status, 0, split.err);
        NS_TEST_EXPECT_MSG_NE(split.out.find("prefill_tp,prefill_pp,prefill_instances,gpus_used,"
                                             "kv_transfer_s"),
                              std::string::npos,
                              split.out);
        NS_TEST_EXPECT_MSG_EQ(continuous.out.find("kv_transfer_s\":"),
                              std::string::npos,
                              "only where the rows are paired");

        CliResult chunked =
            RunCli(Cat(study, {"--batching=chunked", "--token-budget=64", "--json"}), dir);
        NS_TEST_ASSERT_MSG_EQ(chunked.status, 0, chunked.err);
        const Json chunkedRows = Json::parse(chunked.out).at("rows");
        bool fiveChunks = false;
        for (const Json& row : chunkedRows)
        {
            fiveChunks = fiveChunks || (row.contains("chunk_count") && row.at("chunk_count") == 5);
        }
        NS_TEST_EXPECT_MSG_EQ(fiveChunks, true, "256 tokens beside 1 decode in 64: 5 chunks");
        NS_TEST_EXPECT_MSG_EQ(Json::parse(chunked.out).at("skipped_reasons").size(),
                              0u,
                              "nothing ruled out: no reason");

        // What rules layouts out is said once, however many batches it takes: a note on stderr,
        // and in the JSON beside the count.
        {
            CliResult whole = RunCli({"study",
                                      "serving",
                                      "--model=mixtral-8x7b",
                                      "--hardware=h100-sxm-80gb",
                                      "--layers=2",
                                      "--gpus=4",
                                      "--tp=2",
                                      "--etp=1",
                                      "--dp=1,2",
                                      "--batch=1,8",
                                      "--prompt=256",
                                      "--gen=16",
                                      "--engine=vllm",
                                      "--json"},
                                     dir);
            NS_TEST_ASSERT_MSG_EQ(whole.status, 0, whole.err);
            const std::string why = "dp 2: with --etp=1 the experts stay in each tensor-parallel";
            const std::size_t note = whole.err.find("note: " + why);
            NS_TEST_EXPECT_MSG_NE(note, std::string::npos, whole.err);
            NS_TEST_EXPECT_MSG_EQ(
                whole.err.find(why, note + why.size()), std::string::npos, "once");
            NS_TEST_EXPECT_MSG_NE(
                whole.err.find("; 2 layouts and batches not tried"), std::string::npos, whole.err);
            const Json j = Json::parse(whole.out);
            NS_TEST_EXPECT_MSG_EQ(j.at("skipped").get<uint32_t>(), 2u, "dp 2 x batch 1, 8");
            const Json skips = j.at("skipped_reasons");
            RAPIDLLM_REQUIRE_EQ(skips.size(), 1u, "one reason");
            NS_TEST_EXPECT_MSG_EQ(skips[0].at("field").get<std::string>(), "dp", "to blame");
            NS_TEST_EXPECT_MSG_EQ(skips[0].at("count").get<uint32_t>(), 2u, "both batches");
            NS_TEST_EXPECT_MSG_EQ(
                skips[0].at("reason").get<std::string>().find(why), 0u, "the note's reason");
        }

        // A static batch is `run`'s job, vLLM's profiled forward included: `run` and the study
        // give one verdict and one peak at the edge of the memory (Llama-2 7B on an H100, 128 +
        // 3,000 tokens: 38 requests need 72.05 of the 72 GiB vLLM may use).
        {
            const std::vector<std::string> edge = {"--model=llama2-7b",
                                                   "--hardware=h100-sxm-80gb",
                                                   "--gpus=1",
                                                   "--tp=1",
                                                   "--prompt=128",
                                                   "--gen=3000",
                                                   "--engine=vllm",
                                                   "--batch=38",
                                                   "--json"};
            CliResult ran = RunCli(Cat({"run", "--mode=inference"}, edge), dir);
            CliResult studied = RunCli(Cat({"study", "serving", "--batching=static"}, edge), dir);
            NS_TEST_ASSERT_MSG_EQ(studied.status, 0, studied.err);
            const Json memory = Json::parse(ran.out).at("memory");
            const Json row = Json::parse(studied.out).at("rows").at(0);
            NS_TEST_EXPECT_MSG_EQ(
                row.at("fits").get<bool>(), memory.at("feasible").get<bool>(), "one verdict");
            NS_TEST_EXPECT_MSG_EQ(row.at("peak_memory_bytes").get<uint64_t>(),
                                  memory.at("peak_bytes").get<uint64_t>(),
                                  "one peak");
            NS_TEST_EXPECT_MSG_EQ(row.at("fits").get<bool>(), false, "38 do not fit");
            // Its figures are null, as results.csv leaves them empty (they read 0).
            for (const char* field :
                 {"ttft_s", "tpot_s", "tokens_per_s_per_gpu", "energy_per_token_j"})
            {
                NS_TEST_EXPECT_MSG_EQ(row.at(field).is_null(), true, field << ": " << row.dump());
            }
        }

        // A vLLM batch beyond the KV cache is ranked and listed under the table.
        CliResult beyond = RunCli({"study",
                                   "serving",
                                   "--model=llama2-7b",
                                   "--hardware=a100-sxm-40gb",
                                   "--gpus=1",
                                   "--batch=16,64",
                                   "--prompt=2048",
                                   "--gen=256",
                                   "--engine=vllm"},
                                  dir);
        NS_TEST_ASSERT_MSG_EQ(beyond.status, 0, beyond.err);
        NS_TEST_EXPECT_MSG_NE(
            beyond.out.find("Beyond the KV cache, which holds fewer requests whole "
                            "than the batch: rank 1 (19 whole, "),
            std::string::npos,
            beyond.out);

        CliResult loaded = RunCli(
            Cat(study,
                {"--batching=continuous", "--rate=50", "--requests=200", "--csv", "--workers=1"}),
            dir);
        NS_TEST_ASSERT_MSG_EQ(loaded.status, 0, loaded.err);
        // At the goodput, loose targets put rows near their capacity: 20 requests over four
        // replicas is too short a run to fill them (a note), 2,000 is not, nor the default
        // (each row's ten turns of its slots).
        const std::vector<std::string> loose = {
            "--batching=continuous", "--goodput", "--ttft-slo=100000", "--workers=1", "--csv"};
        const std::string note = "fewer requests than ten turns of their slots";
        CliResult brief = RunCli(Cat(Cat(study, loose), {"--requests=20"}), dir);
        NS_TEST_EXPECT_MSG_NE(brief.err.find(note), std::string::npos, brief.err);
        // Percentiles of 20 requests: said too.
        NS_TEST_EXPECT_MSG_NE(
            brief.err.find("are of 20 requests (a p99 of fewer than 100 is the largest)"),
            std::string::npos,
            brief.err);
        CliResult longer = RunCli(Cat(Cat(study, loose), {"--requests=2000"}), dir);
        NS_TEST_EXPECT_MSG_EQ(longer.err.find(note), std::string::npos, longer.err);
        NS_TEST_EXPECT_MSG_EQ(longer.err.find("a p99 of fewer"), std::string::npos, longer.err);
        CliResult steady = RunCli(Cat(study, loose), dir);
        NS_TEST_EXPECT_MSG_EQ(steady.status, 0, steady.err);
        NS_TEST_EXPECT_MSG_EQ(steady.err.find(note), std::string::npos, steady.err);
        NS_TEST_EXPECT_MSG_NE(
            loaded.out.find(",rate_per_s,goodput_per_s,load_tokens_per_s_per_gpu,utilization"),
            std::string::npos,
            loaded.out);
        CliResult loadedTwo = RunCli(
            Cat(study,
                {"--batching=continuous", "--rate=50", "--requests=200", "--csv", "--workers=2"}),
            dir);
        NS_TEST_EXPECT_MSG_EQ((loadedTwo.out == loaded.out), true, "under a rate, the same bytes");
        CliResult loadedText =
            RunCli(Cat(study, {"--batching=continuous", "--rate=50", "--requests=200"}), dir);
        NS_TEST_ASSERT_MSG_EQ(loadedText.status, 0, loadedText.err);
        NS_TEST_EXPECT_MSG_NE(loadedText.out.find("TTFT_p99"), std::string::npos, loadedText.out);
        CliResult good = RunCli(Cat(study,
                                    {"--batching=continuous",
                                     "--goodput",
                                     "--requests=200",
                                     "--json",
                                     "--out=" + dir + "/good"}),
                                dir);
        NS_TEST_EXPECT_MSG_EQ(std::filesystem::exists(dir + "/good/attainment-rate.png"),
                              true,
                              "the attainment against the rate");
        NS_TEST_ASSERT_MSG_EQ(good.status, 0, good.err);
        NS_TEST_EXPECT_MSG_EQ(
            Json::parse(good.out).at("rows").at(0).at("load").contains("goodput_per_s"),
            true,
            "each row's goodput");

        // Static batching under a rate too (the study's batching without an engine).
        CliResult whole = RunCli(Cat(study, {"--rate=2", "--requests=100", "--csv"}), dir);
        NS_TEST_ASSERT_MSG_EQ(whole.status, 0, whole.err);
        NS_TEST_EXPECT_MSG_NE(whole.out.find("ttft_p99_s"), std::string::npos, whole.out);
        CliResult delayed =
            RunCli(Cat(study, {"--rate=2", "--requests=100", "--batch-delay=20", "--json"}), dir);
        NS_TEST_ASSERT_MSG_EQ(delayed.status, 0, delayed.err);
        NS_TEST_EXPECT_MSG_EQ(
            Json::parse(delayed.out).at("arrivals").at("batch_delay_s").get<double>(),
            0.02,
            "the delay echoed");
        // Prefix groups dealt by the cache-aware router: echoed, each load's hit share, and the
        // text's note of them.
        const std::vector<std::string> grouped = {"--rate=2",
                                                  "--requests=100",
                                                  "--batching=continuous",
                                                  "--cached-prefix=128",
                                                  "--prefixes=4",
                                                  "--prefix-skew=0.5",
                                                  "--router=cache-aware"};
        CliResult groupsJson = RunCli(Cat(study, Cat(grouped, {"--json"})), dir);
        NS_TEST_ASSERT_MSG_EQ(groupsJson.status, 0, groupsJson.err);
        const Json groupsOut = Json::parse(groupsJson.out);
        NS_TEST_EXPECT_MSG_EQ(
            groupsOut.at("arrivals").at("prefixes").get<uint32_t>(), 4u, "prefixes echoed");
        NS_TEST_EXPECT_MSG_EQ(
            groupsOut.at("arrivals").at("prefix_skew").get<double>(), 0.5, "skew echoed");
        NS_TEST_EXPECT_MSG_EQ(groupsOut.at("arrivals").at("router").get<std::string>(),
                              "cache-aware",
                              "router echoed");
        const double hits = groupsOut.at("rows").at(0).at("load").at("prefix_hit_share");
        NS_TEST_EXPECT_MSG_EQ((hits > 0 && hits < 1), true, "some groups new, most found");
        CliResult groupsText = RunCli(Cat(study, grouped), dir);
        for (const char* said : {"Prefix groups: 4 prefixes of 128 tokens",
                                 "by Zipf's law (group g with weight 1 / g^0.5)",
                                 "dealt cache-aware"})
        {
            NS_TEST_EXPECT_MSG_NE(groupsText.out.find(said), std::string::npos, groupsText.out);
        }
        CliResult notStatic =
            RunCli(Cat(study, {"--rate=2", "--batch-delay=20", "--batching=continuous"}), dir);
        NS_TEST_EXPECT_MSG_NE(notStatic.status, 0, "continuous batching has no batch delay");
        NS_TEST_EXPECT_MSG_NE(
            notStatic.err.find("the batching is continuous"), std::string::npos, notStatic.err);

        CliResult half = RunCli(Cat(study, {"--cached-prefix=192", "--prefix-hit=50"}), dir);
        NS_TEST_ASSERT_MSG_EQ(half.status, 0, half.err);
        NS_TEST_EXPECT_MSG_NE(half.out.find("50% of the requests find the 192-token cached "
                                            "prefix"),
                              std::string::npos,
                              half.out);
        NS_TEST_EXPECT_MSG_NE(
            half.out.find("the mean, 96 cached tokens"), std::string::npos, half.out);

        // A list of precisions: a column of them, the lists echoed, each row's own named.
        CliResult precise =
            RunCli(Cat(study, {"--dtype=bf16,int4", "--kv-cache-dtype=auto,fp8"}), dir);
        NS_TEST_ASSERT_MSG_EQ(precise.status, 0, precise.err);
        for (const char* said : {"bf16 or int4 weights, bf16, fp8 or fp16 KV cache",
                                 "weights/KV",
                                 "int4/fp16",
                                 "\"dtype\":[\"bf16\",\"int4\"]"})
        {
            NS_TEST_EXPECT_MSG_NE(precise.out.find(said), std::string::npos, precise.out);
        }
        CliResult preciseCsv = RunCli(Cat(study, {"--dtype=bf16,int4", "--csv"}), dir);
        NS_TEST_ASSERT_MSG_EQ(preciseCsv.status, 0, preciseCsv.err);
        NS_TEST_EXPECT_MSG_EQ(std::count(preciseCsv.out.begin(), preciseCsv.out.end(), '\n'),
                              13,
                              "a heading and 2 precisions x 3 tp x 2 batches");
        NS_TEST_EXPECT_MSG_NE(
            preciseCsv.out.find("tp,pp,cp,dp,hardware,engine,dtype,kv_cache_dtype,"),
            std::string::npos,
            "named");
        // A list of engines: a column of them, each one's memory share and prefill budget.
        CliResult engines = RunCli(Cat(study, {"--engine=lmdeploy,vllm"}), dir);
        NS_TEST_ASSERT_MSG_EQ(engines.status, 0, engines.err);
        for (const char* said : {"engine lmdeploy or vllm, bf16 weights",
                                 "90% of each GPU's memory under vllm",
                                 "rank engine    tp",
                                 "  lmdeploy 4x tp1 pp1",
                                 "\"gpu_memory_utilization\":{\"lmdeploy\":1.0,\"vllm\":0.9}"})
        {
            NS_TEST_EXPECT_MSG_NE(engines.out.find(said), std::string::npos, engines.out);
        }
        CliResult enginesJson = RunCli(Cat(study, {"--engine=lmdeploy,vllm", "--json"}), dir);
        NS_TEST_ASSERT_MSG_EQ(enginesJson.status, 0, enginesJson.err);
        NS_TEST_EXPECT_MSG_EQ(Json::parse(enginesJson.out).at("token_budget").dump(),
                              "{\"h100-sxm-80gb lmdeploy\":8192,\"h100-sxm-80gb vllm\":4096}",
                              "each engine's prefill iterations");
        CliResult unlike = RunCli(Cat(study, {"--engine=hf,lmdeploy"}), dir);
        NS_TEST_EXPECT_MSG_EQ(unlike.status, 2, unlike.err);
        NS_TEST_EXPECT_MSG_NE(unlike.err.find("option --engine: hf and lmdeploy batch differently"),
                              std::string::npos,
                              unlike.err);
        // A list of hardware: a column of them, each echoed, each chunked budget its own.
        std::vector<std::string> twoMachines = study;
        std::replace(twoMachines.begin(),
                     twoMachines.end(),
                     std::string("--hardware=h100-sxm-80gb"),
                     std::string("--hardware=h100-sxm-80gb,a100-sxm-80gb"));
        CliResult machines = RunCli(Cat(twoMachines, {"--batching=chunked"}), dir);
        NS_TEST_ASSERT_MSG_EQ(machines.status, 0, machines.err);
        for (const char* said : {"4 x NVIDIA H100-SXM5-80GB or NVIDIA A100-SXM4-80GB",
                                 "rank hardware       tp",
                                 "(8192 on h100-sxm-80gb, 2048 on a100-sxm-80gb)",
                                 "Best of each within the targets (else the best that fits):\n"
                                 "  h100-sxm-80gb ",
                                 "# hardware: [{\"source\":\"h100-sxm-80gb\""})
        {
            NS_TEST_EXPECT_MSG_NE(machines.out.find(said), std::string::npos, machines.out);
        }
        CliResult machinesJson = RunCli(Cat(twoMachines, {"--batching=chunked", "--json"}), dir);
        NS_TEST_ASSERT_MSG_EQ(machinesJson.status, 0, machinesJson.err);
        NS_TEST_EXPECT_MSG_EQ(
            Json::parse(machinesJson.out).at("token_budget").at("a100-sxm-80gb").get<uint32_t>(),
            2048u,
            "the A100's budget");
        CliResult unknown = RunCli(Cat(study, {"--dtype=bf16,fp6"}), dir);
        NS_TEST_EXPECT_MSG_NE(unknown.status, 0, "fp6 is no type");
        NS_TEST_EXPECT_MSG_NE(
            unknown.err.find("--dtype: 'fp6' (in 'bf16,fp6')"), std::string::npos, unknown.err);

        CliResult text = RunCli(Cat(study, {"--out=" + dir + "/out"}), dir);
        NS_TEST_ASSERT_MSG_EQ(text.status, 0, text.err);
        NS_TEST_EXPECT_MSG_NE(text.out.find("tok/s/GPU"), std::string::npos, text.out);
        for (const char* file : {"results.csv", "results.json", "throughput-latency.png"})
        {
            NS_TEST_EXPECT_MSG_EQ(std::filesystem::exists(dir + "/out/" + file), true, file);
        }

        // Recorded arrivals: at their own times by default; scaled to a rate, a trace and the
        // same trace twice as slow give the same rows; with lengths, the job's are their means.
        {
            std::ofstream fast(dir + "/fast.csv");
            std::ofstream slow(dir + "/slow.csv");
            std::ofstream sized(dir + "/sized.csv");
            std::ofstream hits(dir + "/hits.csv");
            fast << "arrival_s\n";
            slow << "arrival_s\n";
            sized << "arrival_s,prompt,generated\n";
            hits << "arrival_s,prompt,generated,cached\n";
            for (int i = 0; i < 40; ++i)
            {
                const double t = 0.3 * i + 0.2 * (i % 3);
                fast << t << "\n";
                slow << 2 * t << "\n";
                sized << t << "," << (i % 2 ? 312 : 200) << "," << (i % 2 ? 22 : 10) << "\n";
                hits << t << "," << (i % 2 ? 312 : 200) << "," << (i % 2 ? 22 : 10) << ",192\n";
            }
        }
        const std::vector<std::string> replay = Cat(study, {"--batching=continuous", "--json"});
        CliResult own = RunCli(Cat(replay, {"--arrivals=" + dir + "/fast.csv"}), dir);
        NS_TEST_ASSERT_MSG_EQ(own.status, 0, own.err);
        const Json ownJson = Json::parse(own.out);
        const Json& trace = ownJson.at("arrivals").at("trace");
        NS_TEST_EXPECT_MSG_EQ(trace.at("requests").get<uint32_t>(), 40u, "every request");
        // The few requests' note names the trace, not a --requests the user did not give.
        NS_TEST_EXPECT_MSG_NE(
            own.err.find("note: the arrivals trace holds 40 requests"), std::string::npos, own.err);
        NS_TEST_EXPECT_MSG_EQ(own.err.find("--requests="), std::string::npos, own.err);
        NS_TEST_EXPECT_MSG_EQ(ownJson.at("rows").at(0).at("load").at("rate_per_s").get<double>(),
                              trace.at("rate_per_s").get<double>(),
                              "the trace's own rate");
        CliResult scaledFast =
            RunCli(Cat(replay, {"--arrivals=" + dir + "/fast.csv", "--rate=2"}), dir);
        CliResult scaledSlow =
            RunCli(Cat(replay, {"--arrivals=" + dir + "/slow.csv", "--rate=2"}), dir);
        NS_TEST_ASSERT_MSG_EQ(scaledFast.status + scaledSlow.status, 0, scaledSlow.err);
        NS_TEST_EXPECT_MSG_EQ(
            (Json::parse(scaledFast.out).at("rows") == Json::parse(scaledSlow.out).at("rows")),
            true,
            "scaled to one rate: the same");
        std::vector<std::string> unsized;
        for (const std::string& a : replay)
        {
            if (a.rfind("--prompt=", 0) != 0 && a.rfind("--gen=", 0) != 0)
            {
                unsized.push_back(a);
            }
        }
        CliResult sized = RunCli(Cat(unsized, {"--arrivals=" + dir + "/sized.csv"}), dir);
        NS_TEST_ASSERT_MSG_EQ(sized.status, 0, sized.err);
        const Json sizedJson = Json::parse(sized.out);
        const Json& software = sizedJson.at("input").at("software");
        NS_TEST_EXPECT_MSG_EQ(software.at("prompt").get<uint32_t>(), 256u, "the mean prompt");
        NS_TEST_EXPECT_MSG_EQ(software.at("generated").get<uint32_t>(), 16u, "the mean output");
        // Replayed at --gen=64, the trace's requests still generate their own 16 on average:
        // they set the tokens the rate asks for, and the capacity the rate is measured against
        // is the row's for requests of 16 tokens: a request's share of the decode steps (63
        // plain steps of its time in the engine) is for 15 steps, its prefill the same (its 256
        // prompt tokens are the job's).
        CliResult replayedLonger =
            RunCli(Cat(unsized, {"--arrivals=" + dir + "/sized.csv", "--gen=64"}), dir);
        NS_TEST_ASSERT_MSG_EQ(replayedLonger.status, 0, replayedLonger.err);
        uint32_t loadedRows = 0;
        const Json replayedJson = Json::parse(replayedLonger.out);
        for (const Json& row : replayedJson.at("rows"))
        {
            if (!row.contains("load"))
            {
                continue;
            }
            ++loadedRows;
            const Json& l = row.at("load");
            const double rate = l.at("rate_per_s").get<double>();
            const double gpus = row.at("replicas").get<double>() * row.at("tp").get<double>()
                                * row.at("pp").get<double>();
            NS_TEST_EXPECT_MSG_EQ_TOL(l.at("tokens_per_s_per_gpu").get<double>(),
                                      rate * 16 / gpus,
                                      1e-9 * rate,
                                      "the trace's 16 tokens a request, not --gen's 64");
            const double decoding =
                63 * row.at("decode_step_s").get<double>()
                / (row.at("ttft_s").get<double>() + 63 * row.at("tpot_s").get<double>());
            RAPIDLLM_REQUIRE_EQ((decoding > 0 && decoding < 1), true, "a share");
            NS_TEST_EXPECT_MSG_EQ_TOL(l.at("utilization").get<double>(),
                                      rate * (decoding * 15 / 63 + 1 - decoding)
                                          / row.at("requests_per_s").get<double>(),
                                      1e-9,
                                      "the capacity for requests of 16 tokens");
            NS_TEST_EXPECT_MSG_LT(l.at("utilization").get<double>(),
                                  rate / row.at("requests_per_s").get<double>(),
                                  "shorter requests than the job's: more of them served");
        }
        NS_TEST_EXPECT_MSG_GT(loadedRows, 0u, "rows simulated");
        // Three requests within 20 us arrive faster than any row's capacity, yet a finite trace
        // drains: every row is simulated, with latencies (each was declared to queue without
        // end, with none).
        {
            std::ofstream threeAtOnce(dir + "/burst.csv");
            threeAtOnce << "arrival_s\n0\n0.00001\n0.00002\n";
        }
        CliResult burstRun = RunCli(Cat(replay, {"--arrivals=" + dir + "/burst.csv"}), dir);
        NS_TEST_ASSERT_MSG_EQ(burstRun.status, 0, burstRun.err);
        uint32_t pastCapacity = 0;
        const Json burstJson = Json::parse(burstRun.out);
        for (const Json& row : burstJson.at("rows"))
        {
            if (!row.contains("load"))
            {
                continue;
            }
            const Json& l = row.at("load");
            pastCapacity += l.at("utilization").get<double>() >= 1 ? 1 : 0;
            NS_TEST_EXPECT_MSG_EQ(l.at("overloaded").get<bool>(), false, "a trace drains");
            NS_TEST_EXPECT_MSG_EQ(l.contains("ttft_p50_s"), true, l.dump());
        }
        NS_TEST_EXPECT_MSG_GT(pastCapacity, 0u, "rows past their capacity");
        // A trace of one token a request has no time between tokens (as --gen=1): refused, not
        // replayed at two tokens.
        {
            std::ofstream ones(dir + "/ones.csv");
            ones << "arrival_s,prompt,generated\n";
            for (int i = 0; i < 40; ++i)
            {
                ones << 0.3 * i << ",256,1\n";
            }
        }
        CliResult ones = RunCli(Cat(unsized, {"--arrivals=" + dir + "/ones.csv"}), dir);
        NS_TEST_EXPECT_MSG_NE(ones.status, 0, "one token a request");
        NS_TEST_EXPECT_MSG_NE(ones.err.find("--arrivals"), std::string::npos, ones.err);
        NS_TEST_EXPECT_MSG_NE(ones.err.find("generates one token"), std::string::npos, ones.err);
        CliResult hit = RunCli(Cat(unsized, {"--arrivals=" + dir + "/hits.csv"}), dir);
        NS_TEST_ASSERT_MSG_EQ(hit.status, 0, hit.err);
        const Json hitJson = Json::parse(hit.out);
        NS_TEST_EXPECT_MSG_EQ(
            hitJson.at("input").at("software").at("cached_prefix").get<uint32_t>(),
            192u,
            "the mean cached prefix");
        const Json& plain = sizedJson.at("rows").at(0);
        uint32_t compared = 0;
        for (const Json& row : hitJson.at("rows"))
        {
            if (row.at("tp") == plain.at("tp") && row.at("batch") == plain.at("batch"))
            {
                ++compared;
                NS_TEST_EXPECT_MSG_LT(row.at("load").at("ttft_p50_s").get<double>(),
                                      plain.at("load").at("ttft_p50_s").get<double>(),
                                      "cached prompts prefill faster");
            }
        }
        NS_TEST_EXPECT_MSG_EQ(compared, 1u, "the same layout and batch");
        CliResult twice =
            RunCli(Cat(unsized, {"--arrivals=" + dir + "/hits.csv", "--prefix-hit=50"}), dir);
        NS_TEST_EXPECT_MSG_NE(twice.status, 0, "a hit rate beside the trace's cached column");
        NS_TEST_EXPECT_MSG_NE(twice.err.find("cached column"), std::string::npos, twice.err);
        for (const auto& [option, mention] : std::vector<std::pair<std::string, std::string>>{
                 {"--seed=3", "give one or the other"},
                 {"--requests=1", "allowed: 2 to 40"},
                 {"--requests=41", "allowed: 2 to 40"}})
        {
            CliResult r = RunCli(Cat(replay, {"--arrivals=" + dir + "/fast.csv", option}), dir);
            NS_TEST_EXPECT_MSG_NE(r.status, 0, option);
            NS_TEST_EXPECT_MSG_NE(r.err.find(mention), std::string::npos, r.err);
        }
        CliResult missing = RunCli(Cat(replay, {"--arrivals=" + dir + "/none.csv"}), dir);
        NS_TEST_EXPECT_MSG_NE(missing.status, 0, "no such file");
        NS_TEST_EXPECT_MSG_NE(missing.err.find("none.csv"), std::string::npos, missing.err);

        struct Bad
        {
            std::string option;
            std::string mention;
        };
        for (const Bad& bad : {Bad{"--tpot-slo=-1", "tpot-slo"},
                               Bad{"--mode=training", "mode"},
                               Bad{"--gbs=8", "gbs"},
                               Bad{"--pp=3", "no layout"},
                               Bad{"--batch=0", "batch"},
                               Bad{"--batching=dynamic", "batching"},
                               Bad{"--rate=-2", "rate"},
                               Bad{"--requests=0", "requests"},
                               Bad{"--requests=10", "give --rate or --goodput"},
                               Bad{"--spread=0.5", "give --rate or --goodput"},
                               Bad{"--burstiness=0.5", "give --rate or --goodput"},
                               Bad{"--burstiness=0", "burstiness"},
                               Bad{"--batch-delay=5", "without arrivals"},
                               Bad{"--router=least-outstanding", "--rate or --goodput"},
                               Bad{"--router=random", "router"},
                               Bad{"--size", "give --rate"},
                               Bad{"--prefix-hit=50", "give --cached-prefix too"},
                               Bad{"--prefix-hit=101", "prefix-hit"},
                               Bad{"--prefixes=8", "give --rate, --goodput or --size"},
                               Bad{"--prefix-skew=1", "give --prefixes too"},
                               Bad{"--token-budget=64", "the batching is static"}})
        {
            CliResult r = RunCli(Cat(study, {bad.option}), dir);
            NS_TEST_EXPECT_MSG_NE(r.status, 0, bad.option);
            NS_TEST_EXPECT_MSG_NE(r.err.find(bad.mention), std::string::npos, r.err);
        }
        // Continuous batching prefills a prompt whole: a budget below one was silently one
        // prompt an iteration.
        CliResult small = RunCli(Cat(study, {"--batching=continuous", "--token-budget=10"}), dir);
        NS_TEST_EXPECT_MSG_EQ(small.status, 2, small.err);
        NS_TEST_EXPECT_MSG_NE(
            small.err.find("less than one prompt of"), std::string::npos, small.err);
    }
};

#endif

/** \brief The serving study and its command. */
class ServingStudyTestSuite : public TestSuite
{
  public:
    ServingStudyTestSuite()
        : TestSuite("rapid-llm-serving-study", UNIT)
    {
        AddTestCase(new ServingCandidatesTestCase, TestCase::QUICK);
        AddTestCase(new ServingRowTestCase, TestCase::QUICK);
        AddTestCase(new ServingContinuousTestCase, TestCase::QUICK);
        AddTestCase(new ServingDpAttentionTestCase, TestCase::QUICK);
        AddTestCase(new ServingDisaggregatedTestCase, TestCase::QUICK);
        AddTestCase(new ServingPrecisionsTestCase, TestCase::QUICK);
        AddTestCase(new ServingHardwareTestCase, TestCase::QUICK);
        AddTestCase(new ServingEnginesTestCase, TestCase::QUICK);
        AddTestCase(new ServingChunkedTestCase, TestCase::QUICK);
        AddTestCase(new ServingPrefillMemoryTestCase, TestCase::QUICK);
        AddTestCase(new ServingRankTestCase, TestCase::QUICK);
        AddTestCase(new ServingLoadTestCase, TestCase::QUICK);
        AddTestCase(new ServingCachedPrefixTestCase, TestCase::QUICK);
        AddTestCase(new ServingContextTestCase, TestCase::QUICK);
        AddTestCase(new ServingPrefixHitLongTestCase, TestCase::QUICK);
        AddTestCase(new ServingKvTokensTestCase, TestCase::QUICK);
        AddTestCase(new ServingKvLimitedTestCase, TestCase::QUICK);
        AddTestCase(new ServingRouterTestCase, TestCase::QUICK);
        AddTestCase(new ServingSizeTestCase, TestCase::QUICK);
        AddTestCase(new ServingSizeDisaggregatedTestCase, TestCase::QUICK);
        AddTestCase(new ServingPrefixGroupsTestCase, TestCase::QUICK);
#ifdef RAPIDLLM_CLI
        AddTestCase(new CliServingStudyTestCase, TestCase::QUICK);
#endif
    }
};

static ServingStudyTestSuite g_servingStudyTestSuite;
