/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// The studies and the job options they build on: the fault study's slowdown against the
// factor, --fault (selectors, tiers, start times, the smallest factor), --set and base:
// through the job options, Hugging Face configs through a whole prediction, and --run job
// files against the same options given one by one.

#include "cli-process.h"
#include "ns3/fault-options.h"
#include "ns3/fault-study.h"
#include "ns3/hardware-study.h"
#include "ns3/job-options.h"
#include "ns3/memory-alternatives.h"
#include "ns3/rapid-llm-helper.h"
#include "ns3/report-output.h"
#include "ns3/spec-error.h"
#include "ns3/test.h"
#include "ns3/topology.h"
#include "spec-error-check.h"
#include "test-require.h"

#include <filesystem>
#include <fstream>

using namespace ns3;
using namespace ns3::rapidllm;

namespace {

/** \return a small training job of the GPT 1.7B shape on two DGX A100 nodes (16 GPUs) */
JobOptions
SmallTwoNodeJob()
{
    JobOptions o;
    o.Set("model", "gpt-1.7b");
    o.Set("hardware", "a100-sxm-80gb");
    o.Set("layers", "2");
    o.Set("tp", "8");
    o.Set("dp", "2");
    o.Set("mbs", "1");
    o.Set("gbs", "2");
    o.Set("seq", "1024");
    // The gradient all-reduce after the backward: on the critical path.
    o.Set("grad-reduce", "after_backward");
    return o;
}

/** \return the name of the switch gpu0's link of dimension \p d leads to */
std::string
FirstHop(const HardwareSpec& hw, uint32_t gpus, uint32_t d)
{
    Ptr<Topology> t = Topology::Build(hw.network, gpus, hw.name);
    for (uint32_t l : t->GetOutLinks(0))
    {
        if (t->GetLink(l).dimension == d)
        {
            return t->GetNode(t->GetLink(l).dst).name;
        }
    }
    return "";
}

/** \return the step time of a resolved job (its faults and slow GPUs too) on the flow backend */
double
StepTime(const ResolvedJob& job)
{
    Ptr<RapidLlmHelper> h = CreateObject<RapidLlmHelper>();
    h->SetModel(job.model);
    h->SetHardware(job.hardware);
    h->SetRun(job.run);
    h->SetTimedFaults(job.timedFaults);
    h->SetSlowGpus(job.slowGpus);
    h->SetGpuVariants(job.gpuVariants);
    const double t = h->Run().stepTimeS;
    h->Dispose();
    return t;
}

} // namespace

/**
 * \brief The fault study: on a link of the critical path (gpu0's InfiniBand uplink, carrying
 * its rail's gradient all-reduce after the backward), the slowdown does not decrease as the
 * factor drops, is 1 for a healthy link and grows well above 1; a dead NIC link is a detour
 * or an error row, not a crash; results.csv has the documented columns.
 */
class FaultStudySlowdownTestCase : public TestCase
{
  public:
    FaultStudySlowdownTestCase()
        : TestCase("fault study: slowdown never decreases as a critical link's factor drops")
    {}

  private:
    void
    DoRun() override
    {
        const ResolvedJob job = SmallTwoNodeJob().ToSpecs();
        const std::string leaf = FirstHop(job.hardware, 16, 1);
        NS_TEST_ASSERT_MSG_EQ(leaf.empty(), false, "gpu0 has an InfiniBand link");
        FaultStudyConfig config;
        config.links = {"gpu0-" + leaf};
        config.factors = {1, 0.75, 0.5, 0.25, 0.1, 0};
        config.routings = {"shortest-path", "ecmp"};
        FaultStudyResult r = RunFaultStudy(job, config);
        RAPIDLLM_REQUIRE_EQ(r.rows.size(), 12, "routing x links x factors rows");
        for (std::size_t p = 0; p < 2; ++p)
        {
            double previous = 0;
            for (std::size_t i = 0; i < 5; ++i)
            {
                const FaultStudyRow& row = r.rows[p * 6 + i];
                NS_TEST_ASSERT_MSG_EQ(row.ok, true, row.error);
                NS_TEST_EXPECT_MSG_GT_OR_EQ(
                    row.slowdown, previous - 1e-12, row.routing << " factor " << row.factor);
                // Each row says which operators the slowed links left exposed, all of it.
                double waited = 0;
                for (const auto& [op, seconds] : row.exposedByOpS)
                {
                    waited += seconds;
                }
                NS_TEST_EXPECT_MSG_EQ_TOL(waited, row.exposedCommS, 1e-9, row.routing);
                // The busiest link's utilization is its bytes over the run (it read 0 once the
                // helper had destroyed the simulator: the window ended at time 0).
                RAPIDLLM_REQUIRE_EQ(row.mostLoaded.empty(), false, "most loaded links");
                const LinkStats& busiest = row.mostLoaded.front();
                NS_TEST_EXPECT_MSG_GT(busiest.utilization, 0.0, busiest.name);
                NS_TEST_EXPECT_MSG_LT_OR_EQ(busiest.utilization, 1.0 + 1e-9, busiest.name);
                previous = row.slowdown;
            }
            NS_TEST_EXPECT_MSG_EQ_TOL(r.rows[p * 6].slowdown, 1.0, 1e-9, "factor 1 is healthy");
            NS_TEST_EXPECT_MSG_GT(r.rows[p * 6 + 4].slowdown, 1.2, "a 10% link slows the step");
            // Dead: a detour (no faster than the slowest soft fault) or an error row.
            const FaultStudyRow& dead = r.rows[p * 6 + 5];
            if (dead.ok)
            {
                NS_TEST_EXPECT_MSG_GT_OR_EQ(dead.slowdown, 1.0, "a detour is not faster");
            }
            else
            {
                NS_TEST_EXPECT_MSG_EQ(dead.error.empty(), false, "the dead row carries its error");
            }
        }
        const std::string csv = FaultStudyCsv(r);
        NS_TEST_EXPECT_MSG_EQ(
            csv.rfind("routing,links,factor,step_time_s,slowdown,", 0), 0, "results.csv columns");
        // Inference: each row has the request's latencies (a serving study of faults).
        JobOptions serve;
        serve.Set("model", "gpt-1.7b");
        serve.Set("hardware", "a100-sxm-80gb");
        serve.Set("layers", "2");
        serve.Set("tp", "8");
        serve.Set("mode", "inference");
        serve.Set("batch", "2");
        serve.Set("prompt", "256");
        serve.Set("gen", "4");
        serve.Set("engine", "vllm"); // a host that dispatches (its per-step costs)
        FaultStudyConfig latency;
        latency.links = {"tier:nvlink"};
        latency.factors = {1, 0.25};
        latency.routings = {"dimension-order"};
        const FaultStudyResult inf = RunFaultStudy(serve.ToSpecs(), latency);
        RAPIDLLM_REQUIRE_EQ(inf.rows.size(), 2, "one row per factor");
        NS_TEST_EXPECT_MSG_EQ(inf.rows[1].inference, true, "inference");
        NS_TEST_EXPECT_MSG_GT(inf.rows[0].ttftS, 0.0, "a first token");
        NS_TEST_EXPECT_MSG_GT(inf.rows[1].ttftS, inf.rows[0].ttftS, "slower links, later");
        NS_TEST_EXPECT_MSG_GT(inf.rows[1].tpotS, inf.rows[0].tpotS, "and slower tokens");
        NS_TEST_EXPECT_MSG_NE(FaultStudyCsv(inf).find(",selectors,ttft_s,tpot_s,host_s\n"),
                              std::string::npos,
                              "columns");
        // The breakdown has run's four parts: a request's host dispatch is its fourth (it was
        // left out, and the parts fell short of the step by it).
        for (const FaultStudyRow& row : inf.rows)
        {
            NS_TEST_EXPECT_MSG_GT(row.hostS, 0.0, "a request waits on its host");
            NS_TEST_EXPECT_MSG_EQ_TOL(row.computeS + row.exposedCommS + row.bubbleS + row.hostS,
                                      row.stepTimeS,
                                      1e-9 * row.stepTimeS + 1e-12,
                                      "the parts make the step");
        }
        // The links each row faulted, last (a random set's draw is not in its name).
        NS_TEST_EXPECT_MSG_NE(csv.find(",error,selectors,"), std::string::npos, csv);
        NS_TEST_EXPECT_MSG_NE(csv.find(",gpu0-" + leaf + ",,,0\n"), std::string::npos, csv);
        // random:K:SEED draws the same links for the same seed, others for another.
        auto a = ExpandLinkSet(job.hardware, 16, "random:3:7");
        auto b = ExpandLinkSet(job.hardware, 16, "random:3:7");
        auto c = ExpandLinkSet(job.hardware, 16, "random:3:8");
        NS_TEST_EXPECT_MSG_EQ(a.size(), 3, "K links");
        NS_TEST_EXPECT_MSG_EQ((a == b), true, "same seed, same links");
        NS_TEST_EXPECT_MSG_EQ((a == c), false, "another seed, other links");
        // Found by fuzzing: a link the job already faults, studied, had its fault replaced by
        // each row's factor (its 0.5 row ran faster than its healthy one); refused now.
        ResolvedJob faulted = job;
        LinkFaultSpec background;
        background.link = "tier:infiniband";
        background.factor = 0.2;
        faulted.hardware.network.faults.push_back(background);
        const std::string overlap = ErrorOf(
            [&]()
            {
                RunFaultStudy(faulted, config);
            });
        NS_TEST_EXPECT_MSG_NE(overlap.find("which the job already faults ('tier:infiniband'"),
                              std::string::npos,
                              overlap);
    }
};

/**
 * \brief The fault study's compute sets (compute:gpu<i>, a straggler): each row is the job with
 * that GPU at the factor of its speed, as run --slow-gpus gives it; factor 1 is the healthy
 * step, the slowdown grows as the speed drops, and a speed of 0 is an error row.
 */
class FaultStudyComputeTestCase : public TestCase
{
  public:
    FaultStudyComputeTestCase()
        : TestCase("fault study: a straggler GPU's rows are run --slow-gpus")
    {}

  private:
    void
    DoRun() override
    {
        const ResolvedJob job = SmallTwoNodeJob().ToSpecs();
        FaultStudyConfig config;
        config.links = {"compute:gpu5"};
        config.factors = {1, 0.8, 0.5, 0};
        config.routings = {"ecmp"};
        FaultStudyResult r = RunFaultStudy(job, config);
        RAPIDLLM_REQUIRE_EQ(r.rows.size(), 4, "one row per factor");
        NS_TEST_EXPECT_MSG_EQ_TOL(r.rows[0].slowdown, 1.0, 1e-12, "speed 1 is healthy");
        NS_TEST_EXPECT_MSG_GT(r.rows[1].slowdown, 1.0, "a GPU at 80% slows the step");
        NS_TEST_EXPECT_MSG_GT(r.rows[2].slowdown, r.rows[1].slowdown, "at 50% more");
        NS_TEST_EXPECT_MSG_EQ(r.rows[3].ok, false, "speed 0 is no row");
        NS_TEST_EXPECT_MSG_NE(r.rows[3].error.find("above 0"), std::string::npos, r.rows[3].error);
        // A slow GPU moves the same bytes: over every link, the healthy row carries what the
        // 80% row does (it had counted each tensor-parallel collective once per group, kind
        // and size: its NVLink links 200x low).
        const auto bytesOf = [](const FaultStudyRow& row)
        {
            double sum = 0;
            for (const LinkStats& l : row.mostLoaded)
            {
                sum += l.bytes;
            }
            return sum;
        };
        FaultStudyConfig all = config;
        all.factors = {1, 0.8};
        all.topLinks = 1000; // every link
        const FaultStudyResult traffic = RunFaultStudy(job, all);
        RAPIDLLM_REQUIRE_EQ(traffic.rows.size(), 2, "one row per factor");
        NS_TEST_EXPECT_MSG_GT(bytesOf(traffic.rows[0]), 0.0, "the healthy row's bytes");
        NS_TEST_EXPECT_MSG_EQ_TOL(
            bytesOf(traffic.rows[0]), bytesOf(traffic.rows[1]), 1.0, "the same bytes at 80% speed");
        Ptr<RapidLlmHelper> h = CreateObject<RapidLlmHelper>();
        h->SetModel(job.model);
        h->SetHardware(job.hardware);
        h->SetRun(job.run);
        h->SetRoutingPolicy("ecmp");
        h->SetSlowGpus({{5, 0.5}});
        const RunReport slowed = h->Run();
        NS_TEST_EXPECT_MSG_EQ_TOL(r.rows[2].stepTimeS,
                                  slowed.stepTimeS,
                                  1e-12,
                                  "the 50% row is run --slow-gpus=gpu5:0.5");
        // Each row carries its energy: the others idle while they wait for the slow GPU.
        NS_TEST_EXPECT_MSG_EQ(r.rows[2].haveEnergy, true, "a power model");
        NS_TEST_EXPECT_MSG_EQ_TOL(r.rows[2].energyJ, slowed.energyJ, 1e-9, "run's energy");
        NS_TEST_EXPECT_MSG_GT(r.rows[2].energyJ, r.rows[0].energyJ, "waiting costs energy");
        NS_TEST_EXPECT_MSG_NE(FaultStudyCsv(r).find(",bubble_s,energy_j,avg_power_w,"),
                              std::string::npos,
                              "results.csv columns");
        h->Dispose();
        // A GPU the job does not have is refused before anything runs.
        config.links = {"compute:gpu16"};
        const std::string outside = ErrorOf(
            [&]()
            {
                RunFaultStudy(job, config);
            });
        NS_TEST_EXPECT_MSG_NE(outside.find("gpu0 to gpu15"), std::string::npos, outside);
        config.links = {"hbm:gpu16"};
        NS_TEST_EXPECT_MSG_NE(ErrorOf(
                                  [&]()
                                  {
                                      RunFaultStudy(job, config);
                                  })
                                  .find("hbm:gpu<i>"),
                              std::string::npos,
                              "an hbm set names its GPU too");

        // An HBM set: GPU 5 of its own spec, the HBM at the factor of its bandwidth (as
        // --gpu-set=gpu5:gpu.hbm_bandwidth_GBps=0.5x); a power set below the idle power is its
        // row's error, not the study's.
        config.links = {"hbm:gpu5", "power:gpu5"};
        config.factors = {1, 0.5, 0.1};
        FaultStudyResult g = RunFaultStudy(job, config);
        RAPIDLLM_REQUIRE_EQ(g.rows.size(), 6, "two sets of three factors");
        NS_TEST_EXPECT_MSG_EQ_TOL(g.rows[0].slowdown, 1.0, 1e-12, "full bandwidth is healthy");
        GpuSpec halfHbm = job.hardware.gpu;
        halfHbm.hbmBandwidthBps *= 0.5;
        Ptr<RapidLlmHelper> v = CreateObject<RapidLlmHelper>();
        v->SetModel(job.model);
        v->SetHardware(job.hardware);
        v->SetRun(job.run);
        v->SetRoutingPolicy("ecmp");
        v->SetGpuVariants({{5, halfHbm}});
        NS_TEST_EXPECT_MSG_EQ_TOL(g.rows[1].stepTimeS,
                                  v->Run().stepTimeS,
                                  1e-12,
                                  "the 50% row is GPU 5 with half its HBM bandwidth");
        v->Dispose();
        NS_TEST_EXPECT_MSG_GT(g.rows[2].slowdown, g.rows[1].slowdown, "10% slower still");
        NS_TEST_EXPECT_MSG_GT(g.rows[4].slowdown, 1.0, "half its power slows it");
        NS_TEST_EXPECT_MSG_EQ(g.rows[5].ok, false, "a cap below the idle power is no row");
        // It says what the factor gives and the lowest the GPU takes (it quoted idle_w's check).
        NS_TEST_EXPECT_MSG_NE(
            g.rows[5].error.find("a cap of 40 W (0.1 x the board's 400 W) is not above the idle "
                                 "board's 88 W: this GPU takes factors above 0.22"),
            std::string::npos,
            g.rows[5].error);
    }
};

/**
 * \brief --fault: the shared parser (selectors, tier:, @TIME, the smallest factor) and its
 * effect: a fault from the start equals a fault at time 0; a fault after the step changes
 * nothing; a tier at 0.5 slows the step.
 */
class FaultOptionTestCase : public TestCase
{
  public:
    FaultOptionTestCase()
        : TestCase("--fault: selectors, tiers, start times and the smallest factor")
    {}

  private:
    void
    DoRun() override
    {
        auto f = ParseFaultOption("gpu0-gpu1:0.5,tier:infiniband:0.25@2ms,gpu3>gpu4", "cli");
        RAPIDLLM_REQUIRE_EQ(f.size(), 3, "three faults");
        NS_TEST_EXPECT_MSG_EQ(f[0].selector, "gpu0-gpu1", "selector");
        NS_TEST_EXPECT_MSG_EQ(f[0].factor, 0.5, "factor");
        NS_TEST_EXPECT_MSG_EQ(f[0].timed, false, "from the start");
        NS_TEST_EXPECT_MSG_EQ(f[1].selector, "tier:infiniband", "tier selector");
        NS_TEST_EXPECT_MSG_EQ(f[1].factor, 0.25, "tier factor");
        NS_TEST_EXPECT_MSG_EQ(f[1].timed, true, "timed");
        NS_TEST_EXPECT_MSG_EQ_TOL(f[1].startS, 2e-3, 1e-15, "@2ms");
        NS_TEST_EXPECT_MSG_EQ(f[2].factor, 0.0, "no factor: dead");
        const std::string tiny = ErrorOf(
            []()
            {
                ParseFaultOption("gpu0-gpu1:1e-9", "cli");
            });
        NS_TEST_EXPECT_MSG_NE(tiny.find("1e-06"), std::string::npos, tiny);
        NS_TEST_EXPECT_MSG_NE(ErrorOf(
                                  []()
                                  {
                                      ParseFaultOption("gpu0-gpu1:0.5@soon", "cli");
                                  })
                                  .find("start time"),
                              std::string::npos,
                              "a bad time");
        // Found by fuzzing: 1e10 s wrapped ns-3's clock to a negative start, 1e308 s to 0.
        for (const char* late : {"gpu0-gpu1:0.5@1e10s",
                                 "gpu0-gpu1:0.5@1e308s",
                                 "gpu0-gpu1:0.5@18446744073709551616ns"})
        {
            const std::string error = ErrorOf(
                [late]()
                {
                    ParseFaultOption(late, "cli");
                });
            NS_TEST_EXPECT_MSG_NE(error.find("from 0 to 1e6 s"), std::string::npos, error);
        }
        // The same links twice from the same time: refused; from two times: a schedule.
        const std::string twice = ErrorOf(
            []()
            {
                ParseFaultOption("gpu0-gpu1:0.5,gpu0-gpu1:0.2", "cli");
            });
        NS_TEST_EXPECT_MSG_NE(twice.find("'gpu0-gpu1' is given twice"), std::string::npos, twice);
        NS_TEST_EXPECT_MSG_EQ(ParseFaultOption("gpu0-gpu1:0.5,gpu0-gpu1:0@2ms", "cli").size(),
                              2u,
                              "degraded, then dead");
        NS_TEST_EXPECT_MSG_NE(ErrorOf(
                                  []()
                                  {
                                      ParseFaultOption("gpu0-gpu1:0.5,,", "cli");
                                  })
                                  .find("empty item"),
                              std::string::npos,
                              "an empty item");

        JobOptions base = SmallTwoNodeJob();
        const ResolvedJob healthy = base.ToSpecs();
        const std::string link = "gpu0-" + FirstHop(healthy.hardware, 16, 1);
        const double t0 = StepTime(healthy);
        JobOptions fromStart = base;
        fromStart.Set("fault", link + ":0.25");
        JobOptions atZero = base;
        atZero.Set("fault", link + ":0.25@0s");
        JobOptions late = base;
        late.Set("fault", link + ":0.25@100s");
        JobOptions tier = base;
        tier.Set("fault", "tier:infiniband:0.5");
        const ResolvedJob atZeroJob = atZero.ToSpecs();
        NS_TEST_EXPECT_MSG_EQ(atZeroJob.timedFaults.size(), 1, "@0s is a timed fault");
        NS_TEST_EXPECT_MSG_EQ(atZeroJob.hardware.network.faults.size(), 0, "not in the hardware");
        const double tStart = StepTime(fromStart.ToSpecs());
        NS_TEST_EXPECT_MSG_GT(tStart, t0 * 1.01, "a quarter-speed critical link slows the step");
        NS_TEST_EXPECT_MSG_EQ_TOL(StepTime(atZeroJob), tStart, 1e-6 * tStart, "@0 = from start");
        NS_TEST_EXPECT_MSG_EQ_TOL(StepTime(late.ToSpecs()), t0, 1e-9 * t0, "after the step");
        NS_TEST_EXPECT_MSG_GT(StepTime(tier.ToSpecs()), t0 * 1.01, "a slower tier");
        // A tier that is not a dimension names the ones there are.
        JobOptions bad = base;
        bad.Set("fault", "tier:ethernet:0.5");
        const std::string noTier = ErrorOf(
            [&]()
            {
                StepTime(bad.ToSpecs());
            });
        NS_TEST_EXPECT_MSG_NE(noTier.find("nvlink, infiniband"), std::string::npos, noTier);
    }
};

/**
 * \brief --set through the job options changes exactly the named field; a hardware file made
 * of `base:` and one changed field equals the preset with that --set; a Hugging Face config of
 * Llama-2-7B predicts the same step as the preset.
 */
class JobVariantsTestCase : public TestCase
{
  public:
    JobVariantsTestCase()
        : TestCase("--set, base: and Hugging Face configs through whole predictions")
    {}

  private:
    void
    DoRun() override
    {
        JobOptions o = SmallTwoNodeJob();
        const ResolvedJob base = o.ToSpecs();
        JobOptions half = o;
        half.Set("set", "gpu.hbm_bandwidth_GBps=0.5x,network.infiniband.oversubscription=2");
        const ResolvedJob changed = half.ToSpecs();
        NS_TEST_EXPECT_MSG_EQ_TOL(changed.hardware.gpu.hbmBandwidthBps,
                                  0.5 * base.hardware.gpu.hbmBandwidthBps,
                                  1e-6,
                                  "scaled");
        NS_TEST_EXPECT_MSG_EQ(changed.hardware.network.dimensions[1].oversubscription, 2, "set");
        HardwareSpec back = changed.hardware;
        back.gpu.hbmBandwidthBps = base.hardware.gpu.hbmBandwidthBps;
        back.network.dimensions[1].oversubscription = 1;
        NS_TEST_EXPECT_MSG_EQ((back == base.hardware), true, "nothing else changed");
        NS_TEST_EXPECT_MSG_EQ((changed.model == base.model), true, "the model unchanged");
        NS_TEST_EXPECT_MSG_EQ((changed.run == base.run), true, "the run unchanged");

        // base: + the changed field = the preset with --set.
        const ScratchDir scratch("studies-variants");
        const std::string dir = scratch.Path();
        const std::string file = dir + "/a100-2to1.yaml";
        std::ofstream(file) << "base: a100-sxm-80gb\nname: a100-2to1\nnetwork:\n  dimensions:\n"
                               "    - name: infiniband\n      oversubscription: 2\n";
        JobOptions inherited = o;
        inherited.Set("hardware", file);
        JobOptions overridden = o;
        overridden.Set("set", "network.infiniband.oversubscription=2");
        const ResolvedJob a = inherited.ToSpecs();
        const ResolvedJob b = overridden.ToSpecs();
        HardwareSpec named = a.hardware;
        named.name = b.hardware.name;
        NS_TEST_EXPECT_MSG_EQ((named == b.hardware), true, "base: = --set");
        NS_TEST_EXPECT_MSG_EQ(StepTime(a), StepTime(b), "the same prediction");

        // A Hugging Face config.json of Llama-2-7B: the preset's prediction.
        JobOptions preset;
        preset.Set("model", "llama2-7b");
        preset.Set("hardware", "a100-sxm-80gb");
        preset.Set("layers", "4");
        preset.Set("tp", "2");
        preset.Set("dp", "2");
        preset.Set("gbs", "4");
        preset.Set("seq", "1024");
        JobOptions hf = preset;
        hf.Set("model",
               std::string(RAPIDLLM_SOURCE_DIR) + "/test/data/hf/Llama-2-7b-hf/config.json");
        const double tPreset = StepTime(preset.ToSpecs());
        NS_TEST_EXPECT_MSG_GT(tPreset, 0, "a step");
        NS_TEST_EXPECT_MSG_EQ(StepTime(hf.ToSpecs()), tPreset, "config.json = preset");
    }
};

/**
 * \brief --run: a job file gives the same job as its options on the command line (rank order,
 * uneven stages, memory layout and overrides included), and options given on the command line
 * override the file's.
 */
class JobFileTestCase : public TestCase
{
  public:
    JobFileTestCase()
        : TestCase("--run job file = the same options on the command line; the command line wins")
    {}

  private:
    void
    DoRun() override
    {
        const ScratchDir scratch("studies-run");
        const std::string dir = scratch.Path();
        const std::string file = dir + "/job.yaml";
        std::ofstream(file) << "model: gpt-1.7b\nhardware: a100-sxm-80gb\n"
                               "set: [gpu.hbm_gib=40, model.layers=6]\n"
                               "mode: training\ndtype: fp16\n"
                               "parallel: {tp: 2, pp: 2, dp: 2, rank_order: tp-cp-ep-pp-dp, "
                               "first_stage_layers: 2, last_stage_layers: 4}\n"
                               "recompute: full\nmicro_batch: 2\nglobal_batch: 16\n"
                               "sequence: 1024\nmemory_layout: deepspeed\n"
                               "grad_reduce: after_backward\n";
        JobOptions fromFile;
        fromFile.Set("run", file);
        JobOptions byHand;
        for (const auto& [k, v] : std::vector<std::pair<std::string, std::string>>{
                 {"model", "gpt-1.7b"},
                 {"hardware", "a100-sxm-80gb"},
                 {"set", "gpu.hbm_gib=40,model.layers=6"},
                 {"mode", "training"},
                 {"dtype", "fp16"},
                 {"tp", "2"},
                 {"pp", "2"},
                 {"dp", "2"},
                 {"rank-order", "tp-cp-ep-pp-dp"},
                 {"first-stage-layers", "2"},
                 {"last-stage-layers", "4"},
                 {"recompute", "full"},
                 {"mbs", "2"},
                 {"gbs", "16"},
                 {"seq", "1024"},
                 {"memory-layout", "deepspeed"},
                 {"grad-reduce", "after_backward"}})
        {
            byHand.Set(k, v);
        }
        const ResolvedJob a = fromFile.ToSpecs();
        const ResolvedJob b = byHand.ToSpecs();
        NS_TEST_EXPECT_MSG_EQ((a.model == b.model), true, "model");
        NS_TEST_EXPECT_MSG_EQ((a.hardware == b.hardware), true, "hardware");
        NS_TEST_EXPECT_MSG_EQ((a.run == b.run), true, "run settings");
        NS_TEST_EXPECT_MSG_EQ(a.run.parallel.rankOrder, "tp-cp-ep-pp-dp", "rank order");
        NS_TEST_EXPECT_MSG_EQ(a.hardware.gpu.hbmBytes, 40ull << 30, "the file's set:");
        NS_TEST_EXPECT_MSG_EQ(StepTime(a), StepTime(b), "the same prediction");

        JobOptions overridden = fromFile;
        overridden.Set("mbs", "1");
        overridden.Set("set", "gpu.hbm_gib=60");
        const ResolvedJob c = overridden.ToSpecs();
        NS_TEST_EXPECT_MSG_EQ(c.run.microBatch, 1, "the command line's mbs wins");
        NS_TEST_EXPECT_MSG_EQ(c.run.globalBatch, 16, "the file's gbs stays");
        NS_TEST_EXPECT_MSG_EQ(c.hardware.gpu.hbmBytes, 60ull << 30, "--set after the file's");
        NS_TEST_EXPECT_MSG_EQ(c.model.layers, 6, "the file's model.layers stays");

        // A job file's expert tensor parallelism (folded expert groups) reaches the layout.
        const std::string moeFile = dir + "/moe.yaml";
        std::ofstream(moeFile) << "model: mixtral-8x7b\nhardware: h100-sxm-80gb\n"
                                  "set: [model.layers=2]\ngpus: 8\n"
                                  "parallel: {tp: 2, ep: 4, etp: 1, sp: true}\n"
                                  "global_batch: 4\nsequence: 1024\n";
        JobOptions moe;
        moe.Set("run", moeFile);
        NS_TEST_EXPECT_MSG_EQ(moe.ToSpecs().run.parallel.etp, 1u, "the file's etp");
        moe.Set("etp", "2");
        NS_TEST_EXPECT_MSG_EQ(moe.ToSpecs().run.parallel.FoldedExperts(), false, "--etp wins");

        // Faults and slow GPUs: the options' text, one text or a list of items.
        const std::string faulty = dir + "/faulty.yaml";
        std::ofstream(faulty)
            << "model: gpt-1.7b\nset: [model.layers=2]\ngpus: 16\n"
               "parallel: {tp: 8}\nglobal_batch: 2\n"
               "fault: [gpu0-infiniband.leaf0.0:0.5, 'tier:nvlink:0.8@1ms']\n"
               "slow_gpus: gpu1:0.5,gpu3:0.9\n"
               "gpu_set: [gpu2:gpu.hbm_bandwidth_GBps=0.5x, "
               "'gpu5:gpu.power.board_limit_w=200,gpu.hbm_bandwidth_GBps=0.8x']\n";
        JobOptions withFaults;
        withFaults.Set("run", faulty);
        JobOptions sameByHand;
        for (const auto& [k, v] : std::vector<std::pair<std::string, std::string>>{
                 {"model", "gpt-1.7b"},
                 {"set", "model.layers=2"},
                 {"gpus", "16"},
                 {"tp", "8"},
                 {"gbs", "2"},
                 {"fault", "gpu0-infiniband.leaf0.0:0.5,tier:nvlink:0.8@1ms"},
                 {"slow-gpus", "gpu1:0.5,gpu3:0.9"},
                 {"gpu-set",
                  "gpu2:gpu.hbm_bandwidth_GBps=0.5x;gpu5:gpu.power.board_limit_w=200,gpu.hbm_"
                  "bandwidth_GBps=0.8x"}})
        {
            sameByHand.Set(k, v);
        }
        const ResolvedJob f = withFaults.ToSpecs();
        const ResolvedJob g = sameByHand.ToSpecs();
        NS_TEST_EXPECT_MSG_EQ(f.faults.size(), 2u, "the file's faults");
        NS_TEST_EXPECT_MSG_EQ(f.timedFaults.size(), 1u, "one starts mid-run");
        NS_TEST_EXPECT_MSG_EQ((f.hardware == g.hardware), true, "the same network faults");
        NS_TEST_EXPECT_MSG_EQ((f.slowGpus == g.slowGpus), true, "the same slow GPUs");
        NS_TEST_EXPECT_MSG_EQ(f.slowGpus.at(1), 0.5, "gpu1 at half speed");
        RAPIDLLM_REQUIRE_EQ(f.gpuVariants.size(), 2u, "two GPUs of their own spec");
        NS_TEST_EXPECT_MSG_EQ(f.gpuVariants.at(5).power.limitW, 200.0, "gpu5's power cap");
        NS_TEST_EXPECT_MSG_EQ(f.gpuSets.at(5).size(), 2u, "and its HBM: two overrides");
        NS_TEST_EXPECT_MSG_EQ(
            (f.gpuVariants.at(2).hbmBandwidthBps == 0.5 * f.hardware.gpu.hbmBandwidthBps),
            true,
            "gpu2's HBM at half its bandwidth");
        NS_TEST_EXPECT_MSG_EQ(StepTime(f), StepTime(g), "the same prediction");
        JobOptions healthier = withFaults;
        healthier.Set("slow-gpus", "gpu1:1");
        NS_TEST_EXPECT_MSG_EQ(healthier.ToSpecs().slowGpus.at(1), 1.0, "--slow-gpus wins");
        NS_TEST_EXPECT_MSG_EQ(healthier.ToSpecs().slowGpus.count(3), 0u, "the whole list");
    }
};

/**
 * \brief study hardware: one row per value, the named field varied (HBM capacity: the memory
 * verdict follows it, the step time does not move).
 */
class HardwareStudyTestCase : public TestCase
{
  public:
    HardwareStudyTestCase()
        : TestCase("hardware study: one row per value of the varied field")
    {}

  private:
    void
    DoRun() override
    {
        JobOptions o = SmallTwoNodeJob();
        std::string field;
        const auto values = ParseVary("gpu.hbm_gib=0.01x,1x,2x", field);
        RAPIDLLM_REQUIRE_EQ(values.size(), 3, "values");
        NS_TEST_EXPECT_MSG_EQ(field, "gpu.hbm_gib", "field");
        const auto rows = RunHardwareStudy(o, field, values, "flow", "", true);
        RAPIDLLM_REQUIRE_EQ(rows.size(), 3, "rows");
        NS_TEST_EXPECT_MSG_EQ(rows[0].report.feasible, false, "0.8 GiB cannot hold the job");
        NS_TEST_EXPECT_MSG_EQ(rows[1].report.feasible, true, "80 GiB can");
        NS_TEST_EXPECT_MSG_EQ(
            rows[2].job.hardware.gpu.hbmBytes, 2 * rows[1].job.hardware.gpu.hbmBytes, "2x");
        NS_TEST_EXPECT_MSG_EQ(rows[2].report.stepTimeS,
                              rows[1].report.stepTimeS,
                              "capacity does not change the speed");
        NS_TEST_EXPECT_MSG_EQ(rows[0].largestBatch, 0u, "training: no batch of requests");
        // The variant that does not fit is predicted all the same, in the CSV as in the JSON.
        const std::string table = HardwareStudyCsv(field, rows);
        NS_TEST_EXPECT_MSG_NE(table.find(",false," + FormatNumber(rows[0].report.stepTimeS) + ","),
                              std::string::npos,
                              table);

        // A power cap: the capped GPUs clock down where a kernel would draw more, so the step
        // is slower and takes less energy; the CSV carries the energy and the average power.
        const auto capped =
            RunHardwareStudy(o, "gpu.power.board_limit_w", {"1x", "0.5x"}, "flow", "", true);
        RAPIDLLM_REQUIRE_EQ(capped.size(), 2, "rows");
        const RunReport& full = capped[0].report;
        const RunReport& half = capped[1].report;
        RAPIDLLM_REQUIRE_EQ((full.haveEnergy && half.haveEnergy), true, "a power model");
        NS_TEST_EXPECT_MSG_GT(half.stepTimeS, full.stepTimeS, "a capped GPU computes slower");
        NS_TEST_EXPECT_MSG_LT(half.energyJ, full.energyJ, "and spends less energy");
        NS_TEST_EXPECT_MSG_LT(half.avgPowerW, full.avgPowerW, "at a lower power");
        const std::string csv = HardwareStudyCsv("gpu.power.board_limit_w", capped);
        NS_TEST_EXPECT_MSG_NE(
            csv.find(",bubble_s,energy_j,energy_per_token_j,avg_power_w,"), std::string::npos, csv);
        NS_TEST_EXPECT_MSG_NE(
            csv.find("," + FormatNumber(half.energyJ) + ",," + FormatNumber(half.avgPowerW) + ","),
            std::string::npos,
            csv);

        // Inference: a variant that does not fit names the most requests it holds (Llama-2 7B cut
        // to two layers, 256 requests of 2,048 + 256 tokens: 4 GiB hold 9, 1.6 GiB none).
        JobOptions serving;
        serving.Set("model", "llama2-7b");
        serving.Set("layers", "2");
        serving.Set("hardware", "h100-sxm-80gb");
        serving.Set("mode", "inference");
        serving.Set("batch", "256");
        serving.Set("prompt", "2048");
        serving.Set("gen", "256");
        const auto held = RunHardwareStudy(serving, field, {"0.02x", "0.05x"}, "flow", "", true);
        RAPIDLLM_REQUIRE_EQ(held.size(), 2, "rows");
        NS_TEST_EXPECT_MSG_EQ(held[0].largestBatch, 0u, "not one");
        NS_TEST_EXPECT_MSG_NE(
            held[0].report.reason.find("; not one request fits"), std::string::npos, "said");
        NS_TEST_EXPECT_MSG_EQ(
            held[1].largestBatch,
            LargestFittingBatch(held[1].job.model, held[1].job.run, held[1].job.hardware.gpu),
            "the largest batch of the variant");
        NS_TEST_EXPECT_MSG_EQ(
            (held[1].largestBatch > 0 && held[1].largestBatch < 256), true, "some");
        NS_TEST_EXPECT_MSG_NE(held[1].report.reason.find("; at most "
                                                         + std::to_string(held[1].largestBatch)
                                                         + " requests fit"),
                              std::string::npos,
                              held[1].report.reason);
        NS_TEST_EXPECT_MSG_NE(ErrorOf(
                                  []()
                                  {
                                      std::string f;
                                      ParseVary("gpu.hbm_gib", f);
                                  })
                                  .find("FIELD=V1,V2"),
                              std::string::npos,
                              "a malformed --vary");
        // A list value's commas belong to it: two torus shapes, not three broken values.
        const auto shapes = ParseVary("network.nvlink.shape=[8],[2,4]", field);
        RAPIDLLM_REQUIRE_EQ(shapes.size(), 2, "two values");
        NS_TEST_EXPECT_MSG_EQ(shapes[1], "[2,4]", "the second shape whole");
        // A quote opens a value only at its start: an apostrophe inside one is text.
        NS_TEST_EXPECT_MSG_EQ(ParseVary("gpu.name=it's,y", field).size(), 2u, "two names");
        NS_TEST_EXPECT_MSG_EQ(ParseVary("gpu.name='a,b',y", field).size(), 2u, "a quoted comma");
        NS_TEST_EXPECT_MSG_NE(ErrorOf(
                                  []()
                                  {
                                      std::string f;
                                      ParseVary("gpu.hbm_gib=1x,", f);
                                  })
                                  .find("an empty value"),
                              std::string::npos,
                              "a trailing comma");
    }
};

/** \brief The studies and the job options they use. */
class StudiesTestSuite : public TestSuite
{
  public:
    StudiesTestSuite()
        : TestSuite("rapid-llm-studies", UNIT)
    {
        AddTestCase(new FaultOptionTestCase, TestCase::QUICK);
        AddTestCase(new JobVariantsTestCase, TestCase::QUICK);
        AddTestCase(new JobFileTestCase, TestCase::QUICK);
        AddTestCase(new HardwareStudyTestCase, TestCase::QUICK);
        AddTestCase(new FaultStudySlowdownTestCase, TestCase::QUICK);
        AddTestCase(new FaultStudyComputeTestCase, TestCase::QUICK);
    }
};

static StudiesTestSuite g_studiesTestSuite;
