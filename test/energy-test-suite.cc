/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// The power model (the clock a kernel runs at under the board's power limit, and its energy)
// and the energy of a step: where a run's joules go and how the report states them.

#include "job-fixtures.h"
#include "ns3/gpu-compute-model.h"
#include "ns3/hardware-spec.h"
#include "ns3/rapid-llm-helper.h"
#include "ns3/spec-override.h"
#include "ns3/step-energy.h"
#include "ns3/test.h"
#include "spec-error-check.h"
#include "test-require.h"

#include <cmath>
#include <fstream>
#include <sstream>

using namespace ns3;
using namespace ns3::rapidllm;

namespace {
/** \return a compute model of a preset with \p policy */
Ptr<GpuComputeModel>
ModelOf(const std::string& preset, ClockPolicy policy)
{
    Ptr<GpuComputeModel> model = CreateObject<GpuComputeModel>();
    model->SetGpu(HardwareSpec::Load(preset).gpu);
    model->SetClockPolicy(policy);
    return model;
}

/** \return a one-GPU fp16 inference of \p batch requests, \p prompt tokens, \p generated new */
RunSpec
Inference(uint32_t batch, uint32_t prompt, uint32_t generated)
{
    RunSpec run;
    run.mode = RunMode::INFERENCE;
    run.batch = batch;
    run.promptTokens = prompt;
    run.generatedTokens = generated;
    run.dtype = DataType::FP16;
    return run;
}
} // namespace

/**
 * \brief Under sustained load a big GEMM meets the board limit at a clock below the boost
 * clock; a GEMV, far from the limit, keeps the boost clock; a short burst always runs at the
 * boost clock and is never slower.
 */
class PowerLimitedClockTestCase : public TestCase
{
  public:
    PowerLimitedClockTestCase()
        : TestCase("a kernel's clock is the highest its board power limit allows")
    {}

  private:
    void
    DoRun() override
    {
        for (const char* preset : {"a100-sxm-80gb", "h100-sxm-80gb"})
        {
            auto sustained = ModelOf(preset, ClockPolicy::SUSTAINED);
            auto boost = ModelOf(preset, ClockPolicy::BOOST);
            const GpuPower& p = sustained->GetGpu().power;
            NS_TEST_ASSERT_MSG_EQ(p.Has(), true, std::string(preset) + " has a power model");

            OperatorCost big = sustained->Gemm(8192, 8192, 8192, DataType::BF16);
            OperatorCost burst = boost->Gemm(8192, 8192, 8192, DataType::BF16);
            std::ostringstream msg;
            msg << preset << " 8192^3: " << big.clockHz / 1e6 << " MHz, " << big.powerW
                << " W sustained; " << burst.powerW << " W at the boost clock";
            NS_TEST_EXPECT_MSG_EQ(burst.clockHz, p.boostClockHz, msg.str());
            NS_TEST_EXPECT_MSG_GT(burst.powerW, p.limitW, "a big GEMM at boost exceeds the limit");
            NS_TEST_EXPECT_MSG_LT(big.clockHz, p.boostClockHz, msg.str());
            // At the power-limited clock the board draws the limit: idle plus dynamic energy
            // over time (a second path to the power the bisection stopped at).
            NS_TEST_EXPECT_MSG_EQ_TOL(
                p.idleW + big.energyJ / big.timeS, p.limitW, 1e-3 * p.limitW, msg.str());
            NS_TEST_EXPECT_MSG_LT_OR_EQ(big.powerW, p.limitW * (1 + 1e-12), msg.str());
            NS_TEST_EXPECT_MSG_GT(big.timeS, burst.timeS, "throttled is slower");
            // The energy per FLOP scales as clock^2 (CMOS C V^2 with V following the clock):
            // tensor energy per FLOP at two clocks, HBM energy and the idle power the lower clock
            // saves taken out.
            const double saved = (p.IdleWAt(big.clockHz) - p.idleW) * big.timeS;
            NS_TEST_EXPECT_MSG_LT(saved, 0.0, "a lower clock idles lower");
            const double perFlopSustained =
                (big.energyJ - saved - p.hbmJPerByte * big.hbmBytes) / big.flops;
            const double perFlopBurst =
                (burst.energyJ - p.hbmJPerByte * burst.hbmBytes) / burst.flops;
            const double ratio = big.clockHz / burst.clockHz;
            NS_TEST_EXPECT_MSG_EQ_TOL(
                perFlopSustained / perFlopBurst, ratio * ratio, 1e-9, msg.str());

            // One token's GEMV streams weights: far below the limit, at the boost clock.
            OperatorCost gemv = sustained->Gemm(1, 22016, 4096, DataType::BF16);
            NS_TEST_EXPECT_MSG_EQ(gemv.clockHz, p.boostClockHz, "a GEMV is not power limited");
            NS_TEST_EXPECT_MSG_LT(gemv.powerW, p.limitW, "a GEMV is under the limit");
            NS_TEST_EXPECT_MSG_GT(gemv.powerW, p.idleW, "a GEMV draws more than idle");
            // HBM-bound: its dynamic energy is mostly its bytes.
            NS_TEST_EXPECT_MSG_GT(p.hbmJPerByte * gemv.hbmBytes, 0.5 * gemv.energyJ, "bytes");

            // A cap that even the lowest clock exceeds (the HBM's traffic does not slow with
            // the SMs' clock; 200 W is the H100's lowest nvidia-smi cap, 100 W the A100's): the
            // kernel slows as a whole and the board holds the cap (an H100 LM-head GEMM at
            // 200 W drew 215.1 W at 495 MHz).
            GpuSpec capped = sustained->GetGpu();
            capped.power.limitW = preset == std::string("h100-sxm-80gb") ? 200 : 100;
            Ptr<GpuComputeModel> low = CreateObject<GpuComputeModel>();
            low->SetGpu(capped);
            low->SetClockPolicy(ClockPolicy::SUSTAINED);
            OperatorCost head = low->Gemm(64, 128256, 4096, DataType::BF16);
            OperatorCost free = sustained->Gemm(64, 128256, 4096, DataType::BF16);
            NS_TEST_EXPECT_MSG_LT_OR_EQ(head.powerW,
                                        capped.power.limitW * (1 + 1e-9),
                                        preset << ": " << head.powerW << " W at "
                                               << head.clockHz / 1e6 << " MHz");
            NS_TEST_EXPECT_MSG_GT(head.timeS, free.timeS, "the cap slows it");
        }
    }
};

/** \brief A GPU without a power section runs at its rated clock and reports no energy. */
class NoPowerModelTestCase : public TestCase
{
  public:
    NoPowerModelTestCase()
        : TestCase("without a power model kernels run at the rated clock and have no energy")
    {}

  private:
    void
    DoRun() override
    {
        GpuSpec g = HardwareSpec::Load("h100-sxm-80gb").gpu;
        g.power = GpuPower();
        Ptr<GpuComputeModel> model = CreateObject<GpuComputeModel>(g);
        OperatorCost c = model->Gemm(4096, 4096, 4096, DataType::BF16);
        NS_TEST_EXPECT_MSG_EQ(c.clockHz, 0.0, "no clock reported");
        NS_TEST_EXPECT_MSG_EQ(c.energyJ, 0.0, "no energy");
        // The rated clock (1830 MHz) lies between the sustained and boost clocks of the
        // preset with its power model.
        auto boost = ModelOf("h100-sxm-80gb", ClockPolicy::BOOST);
        NS_TEST_EXPECT_MSG_GT(c.timeS, boost->Gemm(4096, 4096, 4096, DataType::BF16).timeS, "");
    }
};

/** \brief Bytes each member sends for a collective, as ring algorithms count them. */
class BytesSentTestCase : public TestCase
{
  public:
    BytesSentTestCase()
        : TestCase("bytes sent per member of a collective")
    {}

  private:
    void
    DoRun() override
    {
        // 8 ranks, 800 bytes: a ring all-reduce sends 7 chunks of 100 twice; an all-gather once.
        NS_TEST_EXPECT_MSG_EQ_TOL(
            BytesSentPerMember(CollectiveKind::ALL_REDUCE, 8, 800), 1400, 1e-9, "");
        NS_TEST_EXPECT_MSG_EQ_TOL(
            BytesSentPerMember(CollectiveKind::ALL_GATHER, 8, 800), 700, 1e-9, "");
        NS_TEST_EXPECT_MSG_EQ_TOL(
            BytesSentPerMember(CollectiveKind::REDUCE_SCATTER, 8, 800), 700, 1e-9, "");
        NS_TEST_EXPECT_MSG_EQ(BytesSentPerMember(CollectiveKind::ALL_REDUCE, 1, 800), 0.0, "alone");
    }
};

/**
 * \brief A training step on two DGX nodes (tensor parallelism 8 inside a node, data parallelism
 * 2 across them): tensor-parallel traffic on NVLink, data-parallel traffic on the network;
 * every kernel's energy counted once per rank; idle energy over the step.
 */
class StepEnergyTestCase : public TestCase
{
  public:
    StepEnergyTestCase()
        : TestCase("step energy: kernels once per rank, traffic split by the innermost domain")
    {}

  private:
    void
    DoRun() override
    {
        HardwareSpec hw = HardwareSpec::Load("a100-sxm-80gb");
        RunSpec run = fixture::TrainingJob(8, 1, 2, 1, 4, 512);
        Workload w = Workload::Build(fixture::SmallGpt(), run);
        const double step = 2.0;
        StepEnergy e = EstimateStepEnergy(
            w,
            [](const OperatorDesc&)
            {
                return 1.0;
            }, // 1 J per kernel: counts them
            hw,
            step);
        double kernels = 0;
        double tpBytes = 0;
        double dpBytes = 0;
        for (const WorkNode& n : w.stages[0].nodes)
        {
            if (n.kind == WorkNodeKind::COMPUTE)
            {
                kernels += 1;
            }
            else if (n.kind == WorkNodeKind::COLLECTIVE && n.group == GroupKind::TP)
            {
                tpBytes += BytesSentPerMember(n.collective, 8, n.commBytes);
            }
            else if (n.kind == WorkNodeKind::COLLECTIVE && n.group == GroupKind::DP)
            {
                dpBytes += BytesSentPerMember(n.collective, 2, n.commBytes);
            }
        }
        NS_TEST_ASSERT_MSG_GT(tpBytes, 0, "tensor-parallel traffic");
        NS_TEST_ASSERT_MSG_GT(dpBytes, 0, "data-parallel traffic");
        NS_TEST_EXPECT_MSG_EQ_TOL(e.computeJ, 16 * kernels, 1e-9, "every kernel of every rank");
        NS_TEST_EXPECT_MSG_EQ_TOL(e.idleJ, 16 * hw.gpu.power.idleW * step, 1e-9, "idle");
        NS_TEST_EXPECT_MSG_EQ_TOL(e.nvlinkBytes, 16 * tpBytes, 1e-6, "TP on NVLink");
        NS_TEST_EXPECT_MSG_EQ_TOL(e.networkBytes, 16 * dpBytes, 1e-6, "DP on the network");
        NS_TEST_EXPECT_MSG_EQ_TOL(
            e.nvlinkJ, e.nvlinkBytes * hw.gpu.power.nvlinkJPerByte, 1e-12, "");
        NS_TEST_EXPECT_MSG_EQ_TOL(
            e.TotalJ(), e.idleJ + e.computeJ + e.nvlinkJ + e.networkJ, 1e-9, "total");
        // The same tensor groups of 8 over two 4-GPU NVLink domains: each ring crosses the
        // network on 2 of its 8 hops, so a quarter of their bytes go at the network's energy,
        // the rest at NVLink's (the data-parallel pairs are a domain apart, all network).
        HardwareSpec quads = hw;
        quads.network.dimensions.front().size = 4;
        const StepEnergy split = EstimateStepEnergy(
            w,
            [](const OperatorDesc&)
            {
                return 1.0;
            },
            quads,
            step);
        NS_TEST_EXPECT_MSG_EQ_TOL(
            split.networkBytes, 16 * (tpBytes / 4 + dpBytes), 1e-6, "2 hops of 8, and DP");
        NS_TEST_EXPECT_MSG_EQ_TOL(split.nvlinkBytes, 16 * tpBytes * 3 / 4, 1e-6, "6 hops of 8");
        // Without a power model, no energy at all.
        hw.gpu.power = GpuPower();
        NS_TEST_EXPECT_MSG_EQ(EstimateStepEnergy(
                                  w,
                                  [](const OperatorDesc&)
                                  {
                                      return 1.0;
                                  },
                                  hw,
                                  step)
                                  .TotalJ(),
                              0.0,
                              "no power model");
    }
};

/**
 * \brief Routed experts: the graph times the busiest rank's experts, the step's energy counts
 * every rank's own. An imbalance (--moe-imbalance) moves tokens between experts, so the kernels'
 * energy and the all-to-all bytes stay those of the balanced step while the step takes longer;
 * whole experts per rank (ep 8, etp 1) at batch 1 read the two routed experts' weights, as the
 * sharded experts do, not one expert on each of the 8 ranks.
 */
class MoeEnergyTestCase : public TestCase
{
  public:
    MoeEnergyTestCase()
        : TestCase("routed experts: energy counts every rank's own work, not the busiest rank's")
    {}

  private:
    /** \return the report of Mixtral (2 layers) on H100s with \p run */
    static RunReport
    RunMixtral(const RunSpec& run)
    {
        Ptr<RapidLlmHelper> h = CreateObject<RapidLlmHelper>();
        h->Load("mixtral-8x7b", "h100-sxm-80gb");
        ModelSpec model = h->GetModel();
        model.layers = 2;
        h->SetModel(model);
        h->SetRun(run);
        return h->Run();
    }

    void
    DoRun() override
    {
        RunSpec train = fixture::TrainingJob(1, 1, 8, 1, 8, 1024);
        train.parallel.ep = 8;
        const RunReport even = RunMixtral(train);
        train.moeImbalance = 2.0;
        const RunReport skewed = RunMixtral(train);
        NS_TEST_ASSERT_MSG_EQ((even.haveEnergy && skewed.haveEnergy), true, "energy known");
        NS_TEST_EXPECT_MSG_GT(skewed.stepTimeS, 1.2 * even.stepTimeS, "the busiest expert waits");
        // It was 1.5x: every rank charged the busiest rank's expert GEMMs.
        NS_TEST_EXPECT_MSG_EQ_TOL(
            skewed.computeEnergyJ / even.computeEnergyJ, 1.0, 0.01, "the same kernels' energy");
        NS_TEST_EXPECT_MSG_EQ_TOL(
            skewed.nvlinkEnergyJ / even.nvlinkEnergyJ, 1.0, 1e-3, "the same all-to-all bytes");
        NS_TEST_EXPECT_MSG_EQ_TOL(skewed.idleEnergyJ / even.idleEnergyJ,
                                  skewed.stepTimeS / even.stepTimeS,
                                  1e-9,
                                  "idle power for the longer step");

        RunSpec decode = fixture::InferenceJob(8, 1, 1, 512, 32);
        const RunReport sharded = RunMixtral(decode);
        decode.parallel.ep = 8;
        decode.parallel.etp = 1;
        const RunReport whole = RunMixtral(decode);
        NS_TEST_EXPECT_MSG_GT(whole.stepTimeS, sharded.stepTimeS, "one expert a rank is slower");
        // It was 3.4x: the two routed experts' weights read once, not one expert on each rank.
        NS_TEST_EXPECT_MSG_EQ_TOL(whole.computeEnergyJ / sharded.computeEnergyJ,
                                  1.0,
                                  0.02,
                                  "the routed experts' weights, read once");
    }
};

/**
 * \brief What `run` reports: one GPU serving one request draws between its idle power and its
 * limit on average; the energy per token times the tokens is the request's energy; the JSON
 * carries the fields (energy_per_token_j only for inference).
 */
class EnergyReportTestCase : public TestCase
{
  public:
    EnergyReportTestCase()
        : TestCase("run reports energy per step and per token and the average power")
    {}

  private:
    void
    DoRun() override
    {
        Ptr<RapidLlmHelper> h = CreateObject<RapidLlmHelper>();
        h->Load("llama2-7b", "a100-sxm-80gb");
        h->SetRun(Inference(2, 64, 8));
        RunReport r = h->Run();
        const GpuPower& p = h->GetHardware().gpu.power;
        NS_TEST_ASSERT_MSG_EQ(r.haveEnergy, true, "energy known");
        NS_TEST_EXPECT_MSG_GT(r.avgPowerW, p.idleW, "above idle");
        NS_TEST_EXPECT_MSG_LT(r.avgPowerW, p.limitW, "below the limit");
        NS_TEST_EXPECT_MSG_EQ_TOL(r.energyPerTokenJ * 16, r.energyJ, 1e-9 * r.energyJ, "per token");
        NS_TEST_EXPECT_MSG_EQ_TOL(r.idleEnergyJ, p.idleW * r.stepTimeS, 1e-9, "one GPU idles");
        NS_TEST_EXPECT_MSG_EQ(r.nvlinkEnergyJ + r.networkEnergyJ, 0.0, "one GPU sends nothing");
        // Decode streams the weights every step: at least their bytes' energy per step.
        const double weights = 2.0 * 6.7e9; // Llama-2-7B in fp16, bytes
        NS_TEST_EXPECT_MSG_GT(r.computeEnergyJ, 8 * weights * p.hbmJPerByte, "weights");
        const Json json = Json::parse(r.ToJson());
        NS_TEST_EXPECT_MSG_EQ(json.at("energy_j").get<double>(), r.energyJ, "json energy");
        NS_TEST_EXPECT_MSG_EQ(json.at("energy_per_token_j").get<double>(), r.energyPerTokenJ, "");
        NS_TEST_EXPECT_MSG_EQ(json.at("avg_power_w").get<double>(), r.avgPowerW, "json power");
        NS_TEST_EXPECT_MSG_EQ(json.at("energy_breakdown_j").at("idle").get<double>(),
                              r.idleEnergyJ,
                              "json breakdown");

        Ptr<RapidLlmHelper> t = CreateObject<RapidLlmHelper>();
        t->Load("gpt-1.7b", "a100-sxm-80gb");
        t->SetModel(fixture::SmallGpt());
        t->SetRun(fixture::TrainingJob(2, 1, 2, 1, 4, 512));
        const Json training = Json::parse(t->Run().ToJson());
        NS_TEST_EXPECT_MSG_EQ(training.contains("energy_j"), true, "training energy");
        NS_TEST_EXPECT_MSG_EQ(training.contains("energy_per_token_j"), false, "inference only");
    }
};

/**
 * \brief A clock lock (gpu.power.clock_lock_mhz, as nvidia-smi --lock-gpu-clocks): a kernel runs
 * at the lower of the lock and its power-limited clock, so a GEMV at the boost clock slows as the
 * lock, with each FLOP's energy by the clock squared, while a GEMM the power limit already holds
 * below the lock keeps its clock; the lock is read and bounded.
 */
class ClockLockTestCase : public TestCase
{
  public:
    ClockLockTestCase()
        : TestCase("a clock lock caps every kernel's clock")
    {}

  private:
    void
    DoRun() override
    {
        auto free = ModelOf("a100-sxm-80gb", ClockPolicy::SUSTAINED);
        GpuSpec g = free->GetGpu();
        const double boost = g.power.boostClockHz;
        OperatorCost big = free->Gemm(8192, 8192, 8192, DataType::BF16);
        RAPIDLLM_REQUIRE_EQ((big.clockHz < boost), true, "the big GEMM is power-limited");
        // Locked just above the big GEMM's clock: it keeps that clock; a compute-bound small
        // GEMM, at boost before, runs at the lock.
        g.power.clockLockHz = big.clockHz * 1.05;
        Ptr<GpuComputeModel> locked = CreateObject<GpuComputeModel>();
        locked->SetGpu(g);
        locked->SetClockPolicy(ClockPolicy::SUSTAINED);
        OperatorCost bigLocked = locked->Gemm(8192, 8192, 8192, DataType::BF16);
        // (the same clock within the bisection's step, 1.2e-5 of the top clock)
        NS_TEST_EXPECT_MSG_EQ_TOL(bigLocked.timeS, big.timeS, 1e-4 * big.timeS, "below the lock");
        OperatorCost small = free->Gemm(1024, 1024, 1024, DataType::BF16);
        OperatorCost smallLocked = locked->Gemm(1024, 1024, 1024, DataType::BF16);
        NS_TEST_EXPECT_MSG_EQ(small.clockHz, boost, "a small GEMM at boost");
        NS_TEST_EXPECT_MSG_EQ(smallLocked.clockHz, g.power.clockLockHz, "locked");
        NS_TEST_EXPECT_MSG_GT(smallLocked.timeS, small.timeS, "slower at the lock");
        const double perFlop = (small.energyJ - g.power.hbmJPerByte * small.hbmBytes) / small.flops;
        const double perFlopLocked =
            (smallLocked.energyJ - g.power.hbmJPerByte * smallLocked.hbmBytes) / smallLocked.flops;
        const double ratio = smallLocked.clockHz / small.clockHz;
        NS_TEST_EXPECT_MSG_EQ_TOL(perFlopLocked / perFlop, ratio * ratio, 1e-9, "clock squared");
        // The spec: 0 is no lock; a lock outside a quarter of the boost clock to it is an error.
        HardwareSpec h = HardwareSpec::Load("a100-sxm-80gb",
                                            {SpecOverride::Parse("gpu.power.clock_lock_mhz=705")});
        NS_TEST_EXPECT_MSG_EQ(h.gpu.power.TopClockHz(), 705e6, "read in MHz");
        NS_TEST_EXPECT_MSG_EQ(ThrowsWith(
                                  []
                                  {
                                      HardwareSpec::Load(
                                          "a100-sxm-80gb",
                                          {SpecOverride::Parse("gpu.power.clock_lock_mhz=2000")});
                                  },
                                  {"clock_lock_mhz", "352.5 to 1410 MHz"}),
                              true,
                              "a lock above the boost clock");
    }
};

/**
 * \brief A measured DVFS curve (gpu.power.dvfs, the A100 preset's from EnergAIzer): the idle
 * power at a lower clock is idle_w less the fall the curve measures, linear between its points
 * and flat below its first; a power-limited kernel draws the limit with the idle power of its
 * own clock, and a clock lock lowers the step's idle energy to the locked clock's.
 */
class DvfsCurveTestCase : public TestCase
{
  public:
    DvfsCurveTestCase()
        : TestCase("idle power follows the measured DVFS curve")
    {}

  private:
    void
    DoRun() override
    {
        const GpuPower p = HardwareSpec::Load("a100-sxm-80gb").gpu.power;
        RAPIDLLM_REQUIRE_EQ((p.dvfs.Points().size() > 2), true, "the A100 preset has a curve");
        // The preset's points at 1200 and 1230 MHz: 68.37 and 69.89 W; at 1410 MHz 82.29 W;
        // flat 60.28 W below 210 MHz.
        NS_TEST_EXPECT_MSG_EQ_TOL(p.IdleWAt(p.boostClockHz), p.idleW, 1e-12, "idle_w at boost");
        const double at1220 = 68.37 + (20.0 / 30.0) * (69.89 - 68.37);
        NS_TEST_EXPECT_MSG_EQ_TOL(p.IdleWAt(1220e6), p.idleW - (82.29 - at1220), 1e-9, "between");
        NS_TEST_EXPECT_MSG_EQ_TOL(p.IdleWAt(100e6), p.idleW - (82.29 - 60.28), 1e-9, "flat below");

        // A power-limited kernel draws the limit: its own clock's idle plus its dynamic power;
        // its energy is what it adds to the idle board's at the boost clock.
        auto model = ModelOf("a100-sxm-80gb", ClockPolicy::SUSTAINED);
        OperatorCost big = model->Gemm(8192, 8192, 8192, DataType::BF16);
        RAPIDLLM_REQUIRE_EQ((big.clockHz < p.boostClockHz), true, "power-limited");
        NS_TEST_EXPECT_MSG_EQ_TOL(big.powerW, p.limitW, 1e-3 * p.limitW, "at the limit");
        NS_TEST_EXPECT_MSG_EQ_TOL(
            big.energyJ, (big.powerW - p.idleW) * big.timeS, 1e-9 * big.energyJ, "above idle");

        // A lock at 705 MHz: the step idles at 705 MHz's power (one GPU, idle over the step).
        Ptr<RapidLlmHelper> helper = CreateObject<RapidLlmHelper>();
        helper->Load("llama2-7b", "a100-sxm-80gb");
        helper->SetHardware(HardwareSpec::Load(
            "a100-sxm-80gb", {SpecOverride::Parse("gpu.power.clock_lock_mhz=705")}));
        helper->SetRun(Inference(1, 32, 4));
        RunReport r = helper->Run();
        NS_TEST_EXPECT_MSG_EQ_TOL(r.idleEnergyJ,
                                  p.IdleWAt(705e6) * r.stepTimeS,
                                  1e-9 * r.idleEnergyJ,
                                  "idle at the locked clock");
        NS_TEST_EXPECT_MSG_LT(p.IdleWAt(705e6), p.idleW - 15, "some 19 W lower");
    }
};

/**
 * \brief A hardware file's power section is checked like every other field: a boost clock
 * below the rated clock, an idle power at or above the limit, a negative energy or an unknown
 * key are errors naming the field; the section is optional.
 */
class PowerSectionErrorsTestCase : public TestCase
{
  public:
    PowerSectionErrorsTestCase()
        : TestCase("bad power sections are errors naming the field")
    {}

  private:
    /** \return the a100-sxm-80gb preset's text with \p from replaced by \p to */
    static std::string
    Edited(const std::string& from, const std::string& to)
    {
        std::ifstream in(std::string(RAPIDLLM_SOURCE_DIR)
                         + "/data/presets/hardware/a100-sxm-80gb.yaml");
        std::stringstream text;
        text << in.rdbuf();
        std::string s = text.str();
        const std::size_t at = s.find(from);
        NS_ABORT_MSG_IF(at == std::string::npos, "the preset has no '" << from << "'");
        return s.replace(at, from.size(), to);
    }

    void
    DoRun() override
    {
        auto parse = [](const std::string& text)
        {
            return [text]()
            {
                HardwareSpec::Parse(text, "t.yaml");
            };
        };
        NS_TEST_EXPECT_MSG_EQ(
            ThrowsWith(parse(Edited("boost_clock_mhz: 1410", "boost_clock_mhz: 1200")),
                       {"t.yaml", "boost_clock_mhz", "clock_mhz"}),
            true,
            "boost below the rated clock");
        NS_TEST_EXPECT_MSG_EQ(ThrowsWith(parse(Edited("idle_w: 88", "idle_w: 400")),
                                         {"t.yaml", "idle_w", "board_limit_w"}),
                              true,
                              "idle at the limit");
        NS_TEST_EXPECT_MSG_EQ(
            ThrowsWith(parse(Edited("hbm_pj_per_byte: 60", "hbm_pj_per_byte: -1")),
                       {"t.yaml", "hbm_pj_per_byte"}),
            true,
            "negative energy");
        NS_TEST_EXPECT_MSG_EQ(
            ThrowsWith(parse(Edited("idle_w: 88", "idle_w: 88\n    idle_watts: 88")),
                       {"t.yaml", "idle_watts"}),
            true,
            "unknown key");
        // The DVFS curve: ascending, ending at the boost clock, never falling further than
        // idle_w nor rising as the clock falls.
        NS_TEST_EXPECT_MSG_EQ(ThrowsWith(parse(Edited("{mhz: 510,", "{mhz: 200,")),
                                         {"t.yaml", "dvfs", "mhz", "ascend"}),
                              true,
                              "a clock below the previous point's");
        NS_TEST_EXPECT_MSG_EQ(ThrowsWith(parse(Edited("      - {mhz: 1410, idle_w: 82.29}\n", "")),
                                         {"t.yaml", "dvfs", "boost_clock_mhz"}),
                              true,
                              "a curve short of the boost clock");
        NS_TEST_EXPECT_MSG_EQ(
            ThrowsWith(parse(Edited("{mhz: 1410, idle_w: 82.29}", "{mhz: 1410, idle_w: 182.29}")),
                       {"t.yaml", "dvfs", "more than idle_w"}),
            true,
            "a fall below zero");
        NS_TEST_EXPECT_MSG_EQ(
            ThrowsWith(parse(Edited("{mhz: 510, idle_w: 60.88}", "{mhz: 510, idle_w: 120}")),
                       {"t.yaml", "dvfs", "510 MHz", "falls with the clock"}),
            true,
            "idle power rising as the clock falls");
        // Without the section the spec loads and has no power model.
        std::string text = Edited("  power:\n", "  power:\n");
        const std::size_t from = text.find("  power:\n");
        text.erase(from, text.find("\nnetwork:") + 1 - from);
        HardwareSpec plain = HardwareSpec::Parse(text, "t.yaml");
        NS_TEST_EXPECT_MSG_EQ(plain.gpu.power.Has(), false, "no power model");
    }
};

/** \brief The energy suite. */
class EnergyTestSuite : public TestSuite
{
  public:
    EnergyTestSuite()
        : TestSuite("rapid-llm-energy", UNIT)
    {
        AddTestCase(new PowerLimitedClockTestCase, TestCase::QUICK);
        AddTestCase(new NoPowerModelTestCase, TestCase::QUICK);
        AddTestCase(new BytesSentTestCase, TestCase::QUICK);
        AddTestCase(new StepEnergyTestCase, TestCase::QUICK);
        AddTestCase(new EnergyReportTestCase, TestCase::QUICK);
        AddTestCase(new MoeEnergyTestCase, TestCase::QUICK);
        AddTestCase(new PowerSectionErrorsTestCase, TestCase::QUICK);
        AddTestCase(new ClockLockTestCase, TestCase::QUICK);
        AddTestCase(new DvfsCurveTestCase, TestCase::QUICK);
    }
};

static EnergyTestSuite g_energyTestSuite; //!< registers the suite
