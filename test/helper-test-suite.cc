/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// RapidLlmHelper: the report a run gives (the fields scripts rely on, checked against
// independent expectations: Megatron-LM's closed-form FLOPs, the compute model's sums, the
// operator activity the trace sources report), the trace sources, the ns-3 helper API
// (factories, Install + Simulator::Run + Collect) and the job options of a script's CommandLine.

#include "job-fixtures.h"
#include "ns3/boolean.h"
#include "ns3/command-line.h"
#include "ns3/config.h"
#include "ns3/double.h"
#include "ns3/global-value.h"
#include "ns3/hardware-spec.h"
#include "ns3/job-options.h"
#include "ns3/layout-sweep.h"
#include "ns3/packet-resolution.h"
#include "ns3/rapid-llm-helper.h"
#include "ns3/replay-error.h"
#include "ns3/report-json.h"
#include "ns3/report-output.h"
#include "ns3/simulator.h"
#include "ns3/spec-error.h"
#include "ns3/staged-output-dir.h"
#include "ns3/string.h"
#include "ns3/test.h"
#include "ns3/uinteger.h"
#include "ns3/workload-size.h"
#include "scratch-dir.h"
#include "spec-error-check.h"
#include "test-require.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <utility>
#include <vector>

using namespace ns3;
using namespace ns3::rapidllm;

namespace {
uint64_t g_ended = 0; //!< operators ended, counted by the trace sink

void
CountEnd(const OperatorEvent& event)
{
    ++g_ended;
}

std::map<std::string, double> g_sampleEnds; //!< sampling kernel name -> its latest end, s

/** Records when each sampling kernel ends, found by name (the helper finds it by structure). */
void
RecordSample(const OperatorEvent& event)
{
    const std::string name(event.name);
    if (name.size() > 7 && name.compare(name.size() - 7, 7, ".sample") == 0)
    {
        double& end = g_sampleEnds[name];
        end = std::max(end, event.time.GetSeconds());
    }
}

std::vector<std::pair<double, double>> g_activity; //!< (start, end) of every operator, s
double g_executedFlops = 0;                        //!< FLOPs of the kernels that ran

/** Records every operator's active interval and the FLOPs of the kernels. */
void
RecordActivity(const OperatorEvent& event)
{
    if (event.kind == OperatorKind::OTHER)
    {
        return;
    }
    const double end = event.time.GetSeconds();
    g_activity.emplace_back(end - event.duration.GetSeconds(), end);
    g_executedFlops += double(event.flops);
}

uint64_t g_messages = 0;   //!< messages delivered, counted by the trace sink
uint64_t g_bytes = 0;      //!< their bytes
double g_minLatency = 1e9; //!< the fastest delivery, s

void
CountMessage(uint64_t id, uint32_t src, uint32_t dst, uint64_t bytes, Time latency)
{
    ++g_messages;
    g_bytes += bytes;
    g_minLatency = std::min(g_minLatency, latency.GetSeconds());
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
/** \return four GPUs, TP2 x DP2, two sequences of 512 tokens each replica */
RunSpec
TwoByTwo()
{
    RunSpec run;
    run.parallel.tp = 2;
    run.parallel.dp = 2;
    run.globalBatch = 4;
    run.sequence = 512;
    return run;
}
} // namespace

/**
 * \brief A scenario script's misuse gets the command's errors: specs built in code are checked
 * as files are (a NaN bandwidth aborted in the flow solver; a model of no layers ran), and
 * UsePicoseconds() after a simulation is refused (ns-3 crashed in it).
 */
class ScriptMisuseTestCase : public TestCase
{
  public:
    ScriptMisuseTestCase()
        : TestCase("a script's specs are checked as files are; late UsePicoseconds is refused")
    {}

  private:
    void
    DoRun() override
    {
        Ptr<RapidLlmHelper> h = CreateObject<RapidLlmHelper>();
        h->Load("gpt-1.7b", "a100-sxm-80gb");
        for (double bad : {-1.0, std::nan(""), 0.0})
        {
            HardwareSpec hw = h->GetHardware();
            hw.network.dimensions[0].bandwidthBps = bad;
            NS_TEST_EXPECT_MSG_EQ(
                ThrowsWith(
                    [&]
                    {
                        h->SetHardware(hw);
                    },
                    {"network.dimensions[0].bandwidth_GBps", "allowed: 0.001 to 1e+09"}),
                true,
                "bandwidth " << bad);
        }
        HardwareSpec wire = h->GetHardware();
        wire.network.dimensions[1].wireEfficiency = 5;
        NS_TEST_EXPECT_MSG_EQ(ThrowsWith(
                                  [&]
                                  {
                                      h->SetHardware(wire);
                                  },
                                  {"dimensions[1].wire_efficiency"}),
                              true,
                              "wire efficiency 5");
        // A model with a zero count, or heads no KV-head count divides.
        for (const auto& [what, change] :
             std::vector<std::pair<std::string, std::function<void(ModelSpec&)>>>{
                 {"layers",
                  [](ModelSpec& x)
                  {
                      x.layers = 0;
                  }},
                 {"kv_heads",
                  [](ModelSpec& x)
                  {
                      x.kvHeads = 0;
                  }},
                 {"multiple of kv_heads",
                  [](ModelSpec& x)
                  {
                      x.kvHeads = 5;
                  }}})
        {
            ModelSpec m = h->GetModel();
            change(m);
            NS_TEST_EXPECT_MSG_EQ(ThrowsWith(
                                      [&]
                                      {
                                          h->SetModel(m);
                                      },
                                      {what}),
                                  true,
                                  what);
        }

        // After a simulation the switch to picoseconds is an error, not a crash (the
        // resolution stays).
        h->SetRun(fixture::TrainingJob(2, 1, 1, 1, 1, 256));
        ModelSpec small = h->GetModel();
        small.layers = 2;
        h->SetModel(small);
        h->Run();
        NS_TEST_EXPECT_MSG_EQ(ThrowsWith<Error>(
                                  []
                                  {
                                      UsePicoseconds();
                                  },
                                  {"after this process's first simulation"}),
                              true,
                              "late UsePicoseconds");
        NS_TEST_EXPECT_MSG_EQ((Time::GetResolution() == Time::NS), true, "unchanged");

        // Run() inside a running simulation (it would destroy the simulator under the outer
        // Simulator::Run, which then crashed): an error naming the way out.
        bool refused = false;
        Simulator::Schedule(Seconds(1),
                            [&]
                            {
                                refused = ThrowsWith<ReplayError>(
                                    [&]
                                    {
                                        h->Run();
                                    },
                                    {"Install() and Collect()"});
                            });
        Simulator::Run();
        Simulator::Destroy();
        NS_TEST_EXPECT_MSG_EQ(refused, true, "nested Run()");
        NS_TEST_EXPECT_MSG_GT(h->Run().stepTimeS, 0.0, "and a fresh simulator runs it");
    }
};

/**
 * \brief A slow GPU (a straggler): its kernels take 1 / speed as long, its tensor-parallel
 * partner and the other data-parallel replica wait for it, and every rank is replayed; at full
 * speed the full replay gives the folded one's step exactly.
 */
class SlowGpuTestCase : public TestCase
{
  public:
    SlowGpuTestCase()
        : TestCase("slow GPUs: their kernels stretch, the others wait, nothing folds")
    {}

  private:
    void
    DoRun() override
    {
        const RunSpec run = TwoByTwo();
        Ptr<RapidLlmHelper> healthy = SmallJob(run);
        const double step = healthy->Run().stepTimeS;
        const ReplayResult h = healthy->GetResult();
        NS_TEST_EXPECT_MSG_LT(h.simulatedRanks, 4u, "the healthy job folds its copies");

        Ptr<RapidLlmHelper> same = SmallJob(run);
        same->SetSlowGpus({{1, 1.0}});
        NS_TEST_EXPECT_MSG_EQ(same->Run().stepTimeS, step, "full speed: the folded step, exactly");
        NS_TEST_EXPECT_MSG_EQ(same->GetResult().simulatedRanks, 4u, "every rank replayed");

        Ptr<RapidLlmHelper> slow = SmallJob(run);
        slow->SetSlowGpus({{1, 0.5}});
        const double slowStep = slow->Run().stepTimeS;
        const ReplayResult r = slow->GetResult();
        RAPIDLLM_REQUIRE_EQ(r.ranks.size(), 4u, "four ranks");
        const double own0 = r.ranks[0].computeS - r.ranks[0].smSharingS;
        const double own1 = r.ranks[1].computeS - r.ranks[1].smSharingS;
        NS_TEST_EXPECT_MSG_EQ_TOL(own1 / own0, 2.0, 1e-6, "GPU 1's kernels take twice as long");
        NS_TEST_EXPECT_MSG_GT(slowStep, step + 0.9 * own0, "the step waits for GPU 1");
        NS_TEST_EXPECT_MSG_GT(r.ranks[0].exposedCommS,
                              h.ranks[0].exposedCommS + 0.5 * own0,
                              "its tensor-parallel partner waits in their collectives (all but "
                              "GPU 1's work after the last of them)");
        NS_TEST_EXPECT_MSG_GT(r.ranks[2].exposedCommS,
                              h.ranks[2].exposedCommS,
                              "the other replica waits in the gradient reduction");

        // One GPU, nothing to wait for: the step is its compute at the speed left.
        RunSpec one;
        one.globalBatch = 1;
        one.sequence = 512;
        const double alone = SmallJob(one)->Run().stepTimeS;
        Ptr<RapidLlmHelper> quarter = SmallJob(one);
        quarter->SetSlowGpus({{0, 0.25}});
        const RunReport q = quarter->Run();
        NS_TEST_EXPECT_MSG_EQ_TOL(q.stepTimeS / alone, 4.0, 1e-9, "4x at 0.25");
        // Its compute by kind is of its kernels as they ran (it was the healthy GPU's).
        NS_TEST_EXPECT_MSG_EQ_TOL(q.gemmS + q.attentionS + q.elementwiseS + q.optimizerS
                                      + q.smSharingS,
                                  q.computeS,
                                  1e-6 * q.computeS,
                                  "the kinds add up to the slow GPU's compute");

        Ptr<RapidLlmHelper> outside = SmallJob(one);
        outside->SetSlowGpus({{1, 0.5}});
        NS_TEST_EXPECT_MSG_EQ(ThrowsWith<ReplayError>(
                                  [&]
                                  {
                                      outside->Run();
                                  },
                                  {"slow GPU gpu1", "a GPU of the job's 1"}),
                              true,
                              "a GPU the job does not have is refused");
    }
};

/**
 * \brief GPUs of their own spec (SetGpuVariants): a listed GPU's kernels take the time its own
 * spec gives them, so alone it runs as a job whose every GPU is that spec, and in a group its own
 * compute is that job's rank's while the others' stays theirs; its energy follows; the job's own
 * GPU as a variant changes nothing; a capacity of its own and a trace set are refused.
 */
class GpuVariantTestCase : public TestCase
{
  public:
    GpuVariantTestCase()
        : TestCase("GPUs of their own spec: their kernels costed on it, the others unchanged")
    {}

  private:
    void
    DoRun() override
    {
        // One GPU with its HBM at half its bandwidth: the job of that GPU, time and energy.
        RunSpec one;
        one.globalBatch = 1;
        one.sequence = 512;
        Ptr<RapidLlmHelper> healthy = SmallJob(one);
        GpuSpec degraded = healthy->GetHardware().gpu;
        degraded.hbmBandwidthBps *= 0.5;
        const RunReport alone = healthy->Run();
        Ptr<RapidLlmHelper> variant = SmallJob(one);
        variant->SetGpuVariants({{0, degraded}});
        const RunReport v = variant->Run();
        Ptr<RapidLlmHelper> everywhere = SmallJob(one);
        HardwareSpec slowHbm = everywhere->GetHardware();
        slowHbm.gpu = degraded;
        everywhere->SetHardware(slowHbm);
        const RunReport all = everywhere->Run();
        NS_TEST_EXPECT_MSG_GT(v.stepTimeS, 1.05 * alone.stepTimeS, "half the HBM bandwidth");
        NS_TEST_EXPECT_MSG_EQ_TOL(v.stepTimeS, all.stepTimeS, 1e-6 * all.stepTimeS, "its own job");
        NS_TEST_EXPECT_MSG_EQ_TOL(v.energyJ, all.energyJ, 1e-6 * all.energyJ, "and its energy");

        // Four GPUs (TP2 x DP2), GPU 1 degraded: its own kernels as in the degraded job, GPU 0's
        // as in the healthy one, and the others wait for it.
        const RunSpec run = TwoByTwo();
        Ptr<RapidLlmHelper> base = SmallJob(run);
        const double step = base->Run().stepTimeS;
        const ReplayResult h = base->GetResult();
        Ptr<RapidLlmHelper> same = SmallJob(run);
        same->SetGpuVariants({{1, same->GetHardware().gpu}});
        NS_TEST_EXPECT_MSG_EQ(same->Run().stepTimeS, step, "the job's own GPU: the same step");
        NS_TEST_EXPECT_MSG_EQ(same->GetResult().simulatedRanks, 4u, "every rank replayed");
        Ptr<RapidLlmHelper> one1 = SmallJob(run);
        one1->SetGpuVariants({{1, degraded}});
        const double slowStep = one1->Run().stepTimeS;
        const ReplayResult r = one1->GetResult();
        Ptr<RapidLlmHelper> allDegraded = SmallJob(run);
        allDegraded->SetHardware(slowHbm);
        allDegraded->Run();
        const ReplayResult d = allDegraded->GetResult();
        RAPIDLLM_REQUIRE_EQ(r.ranks.size(), 4u, "four ranks");
        RAPIDLLM_REQUIRE_EQ(d.ranks.size(), 4u, "four ranks");
        auto own = [](const ReplayResult& x, uint32_t k)
        {
            return x.ranks[k].computeS - x.ranks[k].smSharingS;
        };
        NS_TEST_EXPECT_MSG_EQ_TOL(own(r, 1), own(d, 1), 1e-6 * own(d, 1), "GPU 1: degraded");
        NS_TEST_EXPECT_MSG_EQ_TOL(own(r, 0), own(h, 0), 1e-9 * own(h, 0), "GPU 0: healthy");
        NS_TEST_EXPECT_MSG_GT(slowStep, step, "the step waits for GPU 1");

        // Refused: a capacity of its own (the memory verdict is per stage), a trace set.
        GpuSpec bigger = degraded;
        bigger.hbmBytes *= 2;
        Ptr<RapidLlmHelper> capacity = SmallJob(run);
        capacity->SetGpuVariants({{1, bigger}});
        NS_TEST_EXPECT_MSG_EQ(ThrowsWith<SpecError>(
                                  [&]
                                  {
                                      capacity->Run();
                                  },
                                  {"gpu1", "HBM capacity is not modelled"}),
                              true,
                              "a capacity of its own is refused");
        Ptr<RapidLlmHelper> traces = SmallJob(run);
        TraceSet set;
        set.ranks.emplace_back(0);
        set.ranks.emplace_back(1);
        traces->SetGpuVariants({{1, degraded}});
        NS_TEST_EXPECT_MSG_EQ(ThrowsWith<SpecError>(
                                  [&]
                                  {
                                      traces->Install(std::move(set));
                                  },
                                  {"trace set", "run"}),
                              true,
                              "a trace set has no operators to cost again");
    }
};

/**
 * \brief The replay's own state within the host-memory budget: a context-parallel ring's ranks
 * are not copies of each other, so each keeps a state per node of its graph; a job whose graphs
 * fit but whose ranks' state would not is refused before it is allocated, naming the budget.
 */
class ReplayStateBudgetTestCase : public TestCase
{
  public:
    ReplayStateBudgetTestCase()
        : TestCase("replay state beyond the host-memory budget is refused before it is taken")
    {}

  private:
    void
    DoRun() override
    {
        struct Restore
        {
            ~Restore()
            {
                GlobalValue::Bind("RapidLlmHostMemoryGiB", DoubleValue(kDefaultWorkloadHostGiB));
            }
        } restore;
        GlobalValue::Bind("RapidLlmHostMemoryGiB", DoubleValue(0.125));
        auto ring = [](uint32_t cp)
        {
            RunSpec run;
            run.parallel.cp = cp;
            run.globalBatch = 1;
            run.sequence = 8192;
            Ptr<RapidLlmHelper> h = CreateObject<RapidLlmHelper>();
            h->Load("llama3-8b", "h100-sxm-80gb");
            h->SetRun(run);
            return h;
        };
        // 256 ranks of about 124 k nodes: 33 MB of graph, about 300 MB of state.
        std::string refused;
        try
        {
            ring(256)->Run();
        }
        catch (const ReplayError& e)
        {
            refused = e.what();
        }
        for (const char* said : {"256 simulated ranks",
                                 "above the budget of 0.125 GiB",
                                 "--host-memory=GIB",
                                 "context-parallel"})
        {
            NS_TEST_EXPECT_MSG_NE(refused.find(said), std::string::npos, refused);
        }
        // A ring of 8 fits the same budget and runs.
        NS_TEST_EXPECT_MSG_GT(ring(8)->Run().stepTimeS, 0.0, "cp 8 runs");
    }
};

/**
 * \brief Training in fp32: the GEMMs run on the CUDA cores (the A100 lists no fp32 tensor rate),
 * and the MFU is against that path's peak, the same model FLOPs over the fp32 vector rate.
 */
class Fp32TrainingTestCase : public TestCase
{
  public:
    Fp32TrainingTestCase()
        : TestCase("fp32 training: MFU against the fp32 GEMMs' peak")
    {}

  private:
    void
    DoRun() override
    {
        RunSpec run;
        run.parallel.tp = 2;
        run.parallel.dp = 4;
        run.globalBatch = 16;
        run.sequence = 512;
        const RunReport bf16 = SmallJob(run)->Run();
        run.dtype = DataType::FP32;
        const RunReport fp32 = SmallJob(run)->Run(); // its MFU was infinite (a zero peak)
        NS_TEST_EXPECT_MSG_GT(fp32.stepTimeS, 4 * bf16.stepTimeS, "CUDA cores, not tensor cores");
        NS_TEST_EXPECT_MSG_GT(fp32.mfu, 0.0, "a finite share");
        NS_TEST_EXPECT_MSG_LT(fp32.mfu, 1.0, "of the fp32 peak");
        // The same model FLOPs a GPU and second, over 19.5 against 312 TFLOP/s.
        const double perGpuS = bf16.mfu * bf16.stepTimeS * 312;
        NS_TEST_EXPECT_MSG_EQ_TOL(
            fp32.mfu * fp32.stepTimeS * 19.5, perGpuS, 1e-9 * perGpuS, "the fp32 vector peak");
    }
};

double g_weightS = 0; //!< weight-gradient kernel time on rank 1

/** Sums rank 1's weight-gradient kernels. */
void
SumWeightGradients(const OperatorEvent& e)
{
    if (e.rank == 1 && e.kind == OperatorKind::COMPUTE
        && e.name.find("_wgrad") != std::string_view::npos)
    {
        g_weightS += e.duration.GetSeconds();
    }
}

/**
 * \return the step time of \p run's schedule on the packet-level network over the flow model's:
 * four micro-batches of 256 tokens of a model of \p layers layers without tied embeddings
 * (whose gradient exchange between the first and the last stage would take the packet replay
 * seconds)
 */
double
PacketOverFlow(RunSpec run, uint32_t layers)
{
    run.globalBatch = 4;
    run.sequence = 256;
    auto on = [&](const std::string& backend)
    {
        Ptr<RapidLlmHelper> h = SmallJob(run);
        h->SetModel(fixture::SmallModel("llama3-8b", layers));
        h->SetBackend(backend);
        return h->Run().stepTimeS;
    };
    return on("packet") / on("flow");
}

/**
 * \brief ZB-H1 against 1F1B on a four-stage pipeline of one layer a stage: the same kernels,
 * less bubble and a shorter step; Qi et al. 2024 (Sec. 3.1) put 1F1B's bubble at
 * (p - 1)(T_F + T_B + T_W) and ZB-H1's at (p - 1)(T_F + T_B - T_W), so the step shrinks by up
 * to 2 (p - 1) T_W, T_W a stage's weight gradients of one micro-batch.
 */
class ZeroBubbleRunTestCase : public TestCase
{
  public:
    ZeroBubbleRunTestCase()
        : TestCase("ZB-H1 shortens a pipelined step by filling its bubbles with weight passes")
    {}

  private:
    void
    DoRun() override
    {
        RunSpec run;
        run.parallel.pp = 4;
        run.globalBatch = 8;
        run.sequence = 1024;
        // Equal stages: a vocabulary small enough that the embedding and the head (whose
        // weight gradient ZB-H1 defers too) cost the first and the last stage next to nothing.
        ModelSpec model = fixture::SmallGpt();
        model.vocab = 256;
        auto job = [&]()
        {
            Ptr<RapidLlmHelper> h = SmallJob(run);
            h->SetModel(model);
            return h;
        };
        const RunReport oneF = job()->Run();
        run.parallel.schedule = "zb-h1";
        Ptr<RapidLlmHelper> h = job();
        g_weightS = 0;
        h->TraceConnectWithoutContext("OperatorEnd", MakeCallback(&SumWeightGradients));
        const RunReport zb = h->Run();
        NS_TEST_EXPECT_MSG_EQ_TOL(zb.gemmS, oneF.gemmS, 1e-9 * oneF.gemmS, "the same GEMMs");
        NS_TEST_EXPECT_MSG_LT(zb.bubbleS, oneF.bubbleS, "less bubble");
        // T_W: the weight-gradient GEMMs of one micro-batch on a middle stage (one layer).
        const double weightS = g_weightS / 8;
        NS_TEST_ASSERT_MSG_GT(weightS, 0, "weight gradients ran");
        // Equal stages (one layer each) and little communication: the paper's closed form, an
        // idealized schedule (passes back to back, sends free; 6% under it here).
        NS_TEST_EXPECT_MSG_EQ_TOL(oneF.stepTimeS - zb.stepTimeS,
                                  2 * 3 * weightS,
                                  0.1 * 2 * 3 * weightS,
                                  "1F1B's step less ZB-H1's: 2 (p - 1) T_W");
        // The packet-level network times the same schedule within the backends' few percent.
        const double ratio = PacketOverFlow(run, 4);
        NS_TEST_EXPECT_MSG_EQ_TOL(ratio, 1.0, 0.05, "packet over flow");
    }
};

/**
 * \brief ZB-V against ZB-H1 and interleaved 1F1B on four stages of two one-layer chunks: less
 * bubble than both (Qi et al. 2024, Sec. 6: ZB-V's bubble is near
 * zero where the passes take equal times), and the packet-level network times it as the flow
 * model does.
 */
class ZeroBubbleVRunTestCase : public TestCase
{
  public:
    ZeroBubbleVRunTestCase()
        : TestCase("ZB-V leaves less bubble than ZB-H1 and interleaved 1F1B")
    {}

  private:
    void
    DoRun() override
    {
        RunSpec run;
        run.parallel.pp = 4;
        run.globalBatch = 8;
        run.sequence = 1024;
        ModelSpec model = fixture::SmallModel("gpt-1.7b", 8);
        model.vocab = 256;
        auto job = [&](const std::string& schedule, uint32_t vpp)
        {
            run.parallel.schedule = schedule;
            run.parallel.virtualStages = vpp;
            Ptr<RapidLlmHelper> h = SmallJob(run);
            h->SetModel(model);
            return h->Run();
        };
        const RunReport interleaved = job("1f1b", 2);
        const RunReport h1 = job("zb-h1", 1);
        const RunReport v = job("zb-v", 2);
        // Here 4.2 ms of bubble against ZB-H1's 6.7 and interleaved 1F1B's 7.0 (the first
        // rank, which holds the embedding and the LM head, the busiest).
        NS_TEST_EXPECT_MSG_LT(v.bubbleS, h1.bubbleS, "less bubble than ZB-H1");
        NS_TEST_EXPECT_MSG_LT(v.bubbleS, interleaved.bubbleS, "and than interleaved 1F1B");
        NS_TEST_EXPECT_MSG_LT(v.stepTimeS, h1.stepTimeS, "a shorter step");
        // The packet-level network: within the backends' few percent.
        NS_TEST_EXPECT_MSG_EQ_TOL(PacketOverFlow(run, 8), 1.0, 0.05, "packet over flow");
    }
};

/**
 * \brief The critical path: its parts add up to the step on every kind of job (pipelines with
 * each schedule, data and context parallelism, folded copies, an engine's host); a later
 * stage's bubble becomes the earlier stages' kernels (the path holds every stage's compute and
 * more compute than the last rank's own), and an engine's host time shows on it.
 */
class CriticalPathTestCase : public TestCase
{
  public:
    CriticalPathTestCase()
        : TestCase("the critical path adds up to the step and replaces waits by their causes")
    {}

  private:
    /** Checks that \p r's path adds up to its step. \return the report */
    RunReport
    Check(const RunReport& r, const std::string& what)
    {
        const PathBreakdown& p = r.criticalPath;
        NS_TEST_EXPECT_MSG_EQ(p.known, true, what + ": walked");
        NS_TEST_EXPECT_MSG_EQ_TOL(p.computeS + p.communicationS + p.hostS + p.otherS,
                                  r.stepTimeS,
                                  1e-9 * r.stepTimeS + 2e-9,
                                  what + ": the parts add up to the step");
        for (const auto* places : {&p.computeByRankS, &p.computeByStageS})
        {
            double byPlace = 0;
            for (const auto& [place, s] : *places)
            {
                byPlace += s;
            }
            NS_TEST_EXPECT_MSG_EQ_TOL(byPlace, p.computeS, 1e-12 + 1e-9 * p.computeS, what);
        }
        double byOp = 0;
        for (const auto& [op, s] : p.communicationByOpS)
        {
            byOp += s;
        }
        NS_TEST_EXPECT_MSG_EQ_TOL(byOp, p.communicationS, 1e-12 + 1e-9 * p.communicationS, what);
        const Json json = Json::parse(r.ToJson());
        NS_TEST_EXPECT_MSG_EQ(
            json.at("critical_path").at("breakdown_s").at("compute").get<double>(),
            p.computeS,
            what + ": in the JSON");
        return r;
    }

    void
    DoRun() override
    {
        ModelSpec model = fixture::SmallModel("gpt-1.7b", 8);
        model.vocab = 256;
        auto job = [&](RunSpec run)
        {
            Ptr<RapidLlmHelper> h = SmallJob(run);
            h->SetModel(model);
            return h->Run();
        };
        RunSpec run;
        run.parallel.pp = 4;
        run.globalBatch = 8;
        run.sequence = 1024;
        const RunReport oneF = Check(job(run), "1f1b");
        NS_TEST_EXPECT_MSG_EQ(oneF.criticalPath.computeByStageS.size(), 4u, "every stage on it");
        NS_TEST_EXPECT_MSG_GT(oneF.criticalPath.computeS,
                              oneF.computeS + 0.5 * oneF.bubbleS,
                              "the bubble is the other stages' compute");
        run.parallel.virtualStages = 2;
        Check(job(run), "interleaved");
        run.parallel.virtualStages = 1;
        run.parallel.schedule = "zb-h1";
        Check(job(run), "zb-h1");
        RunSpec mixed = fixture::TrainingJob(2, 2, 2, 1, 8, 1024);
        mixed.parallel.zeroStage = 1;
        Check(job(mixed), "tp 2, pp 2, dp 2, ZeRO-1");
        RunSpec folded = fixture::TrainingJob(1, 1, 8, 1, 8, 1024);
        const RunReport dp = Check(job(folded), "dp 8 (folded)");
        NS_TEST_EXPECT_MSG_EQ(dp.criticalPath.computeByStageS.size(), 1u, "one stage");
        RunSpec ring = fixture::TrainingJob(1, 1, 1, 1, 2, 2048);
        ring.parallel.cp = 2;
        Check(job(ring), "cp 2");
        RunSpec serve;
        serve.mode = RunMode::INFERENCE;
        serve.parallel.tp = 2;
        serve.parallel.pp = 2;
        serve.batch = 2;
        serve.promptTokens = 128;
        serve.generatedTokens = 8;
        serve.engine = "vllm";
        const RunReport vllm = Check(job(serve), "vllm tp 2 pp 2");
        NS_TEST_EXPECT_MSG_GT(vllm.criticalPath.hostS, 0, "the engine's host time is on it");
    }
};

/**
 * \brief WriteOutputFiles writes all or none: when one file cannot be written, the others keep
 * their earlier contents and no temporary file is left (a study's new CSV stood beside its old
 * JSON after a full disk).
 */
class OutputFilesTestCase : public TestCase
{
  public:
    OutputFilesTestCase()
        : TestCase("WriteOutputFiles replaces every file or none")
    {}

  private:
    void
    DoRun() override
    {
        const ScratchDir scratch("output-files");
        const std::string dir = scratch.Path();
        std::ofstream(dir + "/a.csv") << "old";
        bool refused = false;
        try
        {
            WriteOutputFiles({{dir + "/a.csv", "new"}, {dir + "/missing/b.json", "new"}});
        }
        catch (const OutputError& e)
        {
            refused = std::string(e.what()).find("missing/b.json") != std::string::npos;
        }
        NS_TEST_EXPECT_MSG_EQ(refused, true, "the file that cannot be written is named");
        std::ifstream in(dir + "/a.csv");
        std::string text;
        in >> text;
        NS_TEST_EXPECT_MSG_EQ(text, "old", "the other file keeps its contents");
        NS_TEST_EXPECT_MSG_EQ(std::filesystem::exists(dir + "/a.csv.tmp"), false, "no temporary");
        WriteOutputFiles({{dir + "/a.csv", "new"}, {dir + "/b.json", "new"}});
        std::ifstream again(dir + "/b.json");
        again >> text;
        NS_TEST_EXPECT_MSG_EQ(text, "new", "both written");
    }
};

/**
 * \brief A study's folder is written whole or not at all (StagedOutputDir): files staged but
 * not committed (a plot that failed part-way) leave an existing folder as it was and a new one
 * not there at all; committed, they replace the old ones (a full disk left a study's new CSV
 * and JSON beside an empty plot script).
 */
class StagedOutputDirTestCase : public TestCase
{
  public:
    StagedOutputDirTestCase()
        : TestCase("a study's output folder is written whole or not at all")
    {}

  private:
    void
    DoRun() override
    {
        const ScratchDir scratch("staged-output");
        const std::string old = scratch.Path() + "/old";
        std::filesystem::create_directories(old);
        std::ofstream(old + "/results.csv") << "old";
        const std::string fresh = scratch.Path() + "/new/study";
        for (const std::string& dir : {old, fresh})
        {
            StagedOutputDir staged(dir);
            std::ofstream(staged.GetPath() + "/results.csv") << "new";
            std::ofstream(staged.GetPath() + "/plot.plt") << "";
            // Not committed: the write failed.
        }
        std::string text;
        std::ifstream(old + "/results.csv") >> text;
        NS_TEST_EXPECT_MSG_EQ(text, "old", "the old folder is as it was");
        NS_TEST_EXPECT_MSG_EQ(std::filesystem::exists(old + "/plot.plt"), false, "nothing added");
        NS_TEST_EXPECT_MSG_EQ(std::distance(std::filesystem::directory_iterator(old),
                                            std::filesystem::directory_iterator()),
                              1,
                              "no staging folder left");
        NS_TEST_EXPECT_MSG_EQ(
            std::filesystem::exists(scratch.Path() + "/new"), false, "no new folder left");
        {
            StagedOutputDir staged(old);
            std::ofstream(staged.GetPath() + "/results.csv") << "new";
            std::ofstream(staged.GetPath() + "/plot.plt") << "plot";
            staged.Commit();
        }
        std::ifstream(old + "/results.csv") >> text;
        NS_TEST_EXPECT_MSG_EQ(text, "new", "committed: replaced");
        NS_TEST_EXPECT_MSG_EQ(std::filesystem::exists(old + "/plot.plt"), true, "and added");
        NS_TEST_EXPECT_MSG_EQ(std::distance(std::filesystem::directory_iterator(old),
                                            std::filesystem::directory_iterator()),
                              2,
                              "no staging folder left");
        // A file that cannot be replaced (here a folder where it goes; an immutable file
        // likewise) refuses the commit before anything moved: the folder stays as it was (a
        // new results.csv stood beside the old results.json).
        std::filesystem::create_directory(old + "/z.png");
        bool refused = false;
        {
            StagedOutputDir staged(old);
            std::ofstream(staged.GetPath() + "/results.csv") << "newer";
            std::ofstream(staged.GetPath() + "/z.png") << "png";
            try
            {
                staged.Commit();
            }
            catch (const OutputError& e)
            {
                refused = std::string(e.what()).find("z.png") != std::string::npos;
            }
        }
        NS_TEST_EXPECT_MSG_EQ(refused, true, "the file in the way is named");
        std::ifstream(old + "/results.csv") >> text;
        NS_TEST_EXPECT_MSG_EQ(text, "new", "the folder as it was");
        NS_TEST_EXPECT_MSG_EQ(
            std::filesystem::is_directory(old + "/z.png"), true, "the user's folder kept");
        NS_TEST_EXPECT_MSG_EQ(
            std::filesystem::exists(old + "/.rapid-llm-partial"), false, "no staging folder");
    }
};

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
        NS_TEST_EXPECT_MSG_EQ_TOL(r.gemmS + r.attentionS + r.elementwiseS + r.optimizerS
                                      + r.smSharingS,
                                  r.computeS,
                                  1e-6,
                                  "compute by kind adds up");
        NS_TEST_EXPECT_MSG_EQ_TOL(r.computeS + r.exposedCommS + r.bubbleS,
                                  r.stepTimeS,
                                  1e-9,
                                  "the breakdown covers the critical rank's step");
        // Without host costs the operators waited for account for all the exposed time, each
        // operator once over its micro-batches and layers (labels, not node names).
        double waited = 0;
        for (const auto& [label, seconds] : r.exposedCommByOpS)
        {
            NS_TEST_EXPECT_MSG_EQ(label.find(".mb"), std::string::npos, label);
            waited += seconds;
        }
        NS_TEST_EXPECT_MSG_GT(r.exposedCommByOpS.size(), 0u, "some communication is exposed");
        NS_TEST_EXPECT_MSG_EQ_TOL(waited, r.exposedCommS, 1e-9, "by operator");
        NS_TEST_EXPECT_MSG_EQ(Json::parse(r.ToJson()).at("exposed_communication_by_op_s").size(),
                              r.exposedCommByOpS.size(),
                              "in the JSON report");
        // TFLOP/s per GPU against Megatron-LM's closed form (Narayanan et al. 2021, without
        // recomputation): 72 B s l h^2 (1 + s/(6h) + V/(12 l h)) FLOPs per iteration.
        const ModelSpec m = fixture::SmallGpt();
        const double B = 16;
        const double s = 512;
        const double l = m.layers;
        const double hid = m.hidden;
        const double V = m.vocab;
        const double flops = 72 * B * s * l * hid * hid * (1 + s / (6 * hid) + V / (12 * l * hid));
        NS_TEST_EXPECT_MSG_EQ_TOL(r.tflopsPerGpu * 1e12 * 16 * r.stepTimeS / flops,
                                  1.0,
                                  1e-9,
                                  "TFLOP/s: Megatron-LM's FLOPs over GPUs and step time");
        // Without recomputation everything that runs is model FLOPs: MFU is the same FLOPs
        // over the A100's dense bf16 peak, 312 TFLOP/s (A100 white paper, Table 1).
        NS_TEST_EXPECT_MSG_EQ_TOL(r.mfu / (flops / (16 * r.stepTimeS * 312e12)),
                                  1.0,
                                  1e-9,
                                  "MFU: the same FLOPs over the datasheet peak");
        // Every rank: its breakdown covers its own finish, the slowest finishes at the step,
        // and its compute is its stage graph's kernel time by the compute model (a second
        // path: the workload's sum, not the replayer's stream).
        Workload w = h->BuildWorkload();
        RAPIDLLM_REQUIRE_EQ(r.ranks.size(), 16u, "one row per rank");
        double latest = 0;
        for (const RankBreakdown& rank : r.ranks)
        {
            const StageGraph& g = w.GraphOf(rank.rank);
            const std::string at = " (rank " + std::to_string(rank.rank) + ")";
            NS_TEST_EXPECT_MSG_EQ_TOL(rank.computeS + rank.exposedCommS + rank.bubbleS,
                                      rank.finishS,
                                      1e-9,
                                      "a rank's breakdown covers its step" + at);
            NS_TEST_EXPECT_MSG_EQ_TOL(rank.computeS - rank.smSharingS,
                                      g.ComputeSeconds(),
                                      1e-9 * g.nodes.size(),
                                      "compute = its graph's kernel time" + at);
            NS_TEST_EXPECT_MSG_LT_OR_EQ(rank.finishS, r.stepTimeS, "no rank after the step" + at);
            latest = std::max(latest, rank.finishS);
        }
        NS_TEST_EXPECT_MSG_EQ(latest, r.stepTimeS, "the slowest rank finishes at the step");
        NS_TEST_EXPECT_MSG_EQ(r.ranks[r.criticalRank].finishS, r.stepTimeS, "critical rank");
        const Json ranks = Json::parse(DumpJson(r.ranks));
        NS_TEST_EXPECT_MSG_EQ(ranks.size(), 16u, "ranks as JSON");
        NS_TEST_EXPECT_MSG_EQ(ranks.at(3).at("breakdown_s").at("pipeline_bubble").get<double>(),
                              r.ranks[3].bubbleS,
                              "a rank's JSON");
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
        NS_TEST_EXPECT_MSG_EQ(json.contains("ranks"), false, "ranks only when asked for");
        // The same job replayed in full gives the same step (the symmetry reduction is exact
        // here), and tracing its messages changes nothing.
        Ptr<RapidLlmHelper> full = SmallJob(run);
        full->SetReplayerAttribute("Symmetry", BooleanValue(false));
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
        Ptr<RapidLlmHelper> h = SmallJob(run);
        g_sampleEnds.clear();
        h->TraceConnectWithoutContext("OperatorEnd", MakeCallback(&RecordSample));
        RunReport r = h->Run();
        NS_TEST_ASSERT_MSG_GT(r.ttftS, 0, "prefill takes time");
        NS_TEST_EXPECT_MSG_LT(r.ttftS, r.stepTimeS, "first token before the end");
        // A second path to the first token: the prefill's sampling kernel by its name.
        NS_TEST_EXPECT_MSG_EQ_TOL(
            r.ttftS, g_sampleEnds["prefill.mb0.sample"], 1e-12, "ttft: the prefill's sample");
        // The 7 decode steps each end with their sample, the last one the request; each step
        // takes about the mean (the KV cache grows by 7 of 263 tokens).
        RAPIDLLM_REQUIRE_EQ(g_sampleEnds.size(), 8u, "one sample per pass");
        NS_TEST_EXPECT_MSG_EQ_TOL(
            g_sampleEnds["decode.mb7.sample"], r.stepTimeS, 1e-12, "the last sample ends it");
        double previous = g_sampleEnds["prefill.mb0.sample"];
        for (uint32_t j = 1; j <= 7; ++j)
        {
            const double end = g_sampleEnds["decode.mb" + std::to_string(j) + ".sample"];
            NS_TEST_EXPECT_MSG_EQ_TOL((end - previous) / r.tpotS,
                                      1.0,
                                      0.05,
                                      "decode step " + std::to_string(j) + " takes the tpot");
            previous = end;
        }
        NS_TEST_EXPECT_MSG_GT(r.memory.kvCache, 0, "a KV cache");
        const Json json = Json::parse(r.ToJson());
        NS_TEST_EXPECT_MSG_EQ(json.at("ttft_s").get<double>(), r.ttftS, "ttft_s");
        NS_TEST_EXPECT_MSG_EQ(json.at("tpot_s").get<double>(), r.tpotS, "tpot_s");
        // 2 requests x 8 tokens over the request on 2 GPUs.
        NS_TEST_EXPECT_MSG_EQ_TOL(
            r.tokensPerSPerGpu * r.stepTimeS * 2, 16.0, 1e-9, "tokens_per_s_per_gpu");
        NS_TEST_EXPECT_MSG_EQ(
            json.at("tokens_per_s_per_gpu").get<double>(), r.tokensPerSPerGpu, "in the JSON");
        NS_TEST_EXPECT_MSG_EQ(json.contains("mfu"), false, "no mfu for inference");
        NS_TEST_EXPECT_MSG_EQ(
            json.at("memory").at("kv_cache").get<uint64_t>(), r.memory.kvCache, "kv cache");
        // A long request's throughput in three digits (0.0152 printed as 0.0).
        RunReport slow = r;
        slow.tokensPerSPerGpu = 0.0152;
        NS_TEST_EXPECT_MSG_NE(
            slow.ToText().find("0.0152 tokens/s per GPU"), std::string::npos, slow.ToText());
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
            run.firstToken = "decode";
            Ptr<RapidLlmHelper> h = SmallJob(run);
            g_sampleEnds.clear();
            h->TraceConnectWithoutContext("OperatorEnd", MakeCallback(&RecordSample));
            RunReport decode = h->Run();
            const std::string at = " (pp " + std::to_string(pp) + ")";
            // The prefill samples nothing: the first token is the first decode step's sample.
            NS_TEST_EXPECT_MSG_EQ(g_sampleEnds.count("prefill.mb0.sample"), 0u, at);
            NS_TEST_EXPECT_MSG_EQ_TOL(
                decode.ttftS, g_sampleEnds["decode.mb1.sample"], 1e-12, "ttft by name" + at);
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
        NS_TEST_EXPECT_MSG_EQ_TOL(blocking.computeS - blocking.smSharingS,
                                  overlap.computeS - overlap.smSharingS,
                                  1e-12,
                                  "same kernels");
        NS_TEST_EXPECT_MSG_GT(overlap.smSharingS,
                              blocking.smSharingS,
                              "the overlapped reduction holds SMs beside the wgrad");
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
        RAPIDLLM_REQUIRE_EQ(points.size(), 8u, "tp 1, 2 x pp 1, 2 x mbs 2, 16");
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
            // Every rank replayed, so that the trace sources see all of them.
            h->SetReplayerAttribute("Symmetry", BooleanValue(false));
            g_activity.clear();
            g_executedFlops = 0;
            h->TraceConnectWithoutContext("OperatorEnd", MakeCallback(&RecordActivity));
            RunReport r = h->Run();
            const Workload w = h->BuildWorkload();
            const double gpus = c.run.parallel.Gpus();
            NS_TEST_ASSERT_MSG_EQ(r.gpus, gpus, c.what);
            // Lower bound: no rank finishes before its own kernels, summed by the compute model.
            double slowestCompute = 0;
            for (const auto& g : w.stages)
            {
                slowestCompute = std::max(slowestCompute, g.ComputeSeconds());
            }
            NS_TEST_EXPECT_MSG_GT_OR_EQ(r.stepTimeS, slowestCompute, c.what);
            NS_TEST_EXPECT_MSG_EQ_TOL(r.computeS - r.smSharingS,
                                      w.GraphOf(r.criticalRank).ComputeSeconds(),
                                      1e-9 * w.GraphOf(r.criticalRank).nodes.size(),
                                      c.what << ": critical compute = its graph's kernels");
            // Upper bound: something runs at every instant of the step (a kernel, or a
            // collective or transfer on the network), so the step is no longer than the union
            // of the operators' active intervals, itself at most compute plus communication
            // summed over all ranks.
            double summed = 0;
            for (const auto& [start, end] : g_activity)
            {
                summed += end - start;
            }
            std::sort(g_activity.begin(), g_activity.end());
            double covered = 0;
            double reach = 0;
            for (const auto& [start, end] : g_activity)
            {
                covered += std::max(0.0, end - std::max(start, reach));
                reach = std::max(reach, end);
            }
            NS_TEST_EXPECT_MSG_LT_OR_EQ(r.stepTimeS, summed, c.what);
            NS_TEST_EXPECT_MSG_EQ_TOL(r.stepTimeS, covered, 1e-9, c.what << ": no idle instant");
            NS_TEST_EXPECT_MSG_EQ_TOL(reach, r.stepTimeS, 1e-9, c.what << ": last operator");
            // TFLOP/s by a second path: the FLOPs of the kernels the replayer ran (every rank)
            // over GPUs and step, against the helper's count from the workload.
            NS_TEST_EXPECT_MSG_EQ_TOL(g_executedFlops / (gpus * r.stepTimeS) / 1e12
                                          / r.tflopsPerGpu,
                                      1.0,
                                      1e-6,
                                      c.what << ": TFLOP/s from the executed kernels");
            // MFU leaves recomputation out: equal to the executed FLOPs over the dense bf16
            // peak (H100 SXM datasheet: 989 TFLOP/s) without it, below with it.
            const double executedMfu = g_executedFlops / (gpus * r.stepTimeS * 989e12);
            if (c.run.recompute == Recompute::NONE)
            {
                NS_TEST_EXPECT_MSG_EQ_TOL(r.mfu / executedMfu, 1.0, 1e-3, c.what << ": MFU");
            }
            else
            {
                NS_TEST_EXPECT_MSG_LT(r.mfu, 0.99 * executedMfu, c.what << ": MFU w/o recompute");
                NS_TEST_EXPECT_MSG_GT(r.mfu, 0.5 * executedMfu, c.what << ": MFU w/o recompute");
            }
        }
    }
};

/**
 * \brief A step on the packet network is timed with the job's TCP connections open, as a
 * steady-state training step finds NCCL's (and as the flow network, which has none, charges
 * it): Install() opens and warms every pair the replay sends between first
 * (TraceReplayer::GetPairs, NetworkBackend::Prepare). Two DGX A100 nodes: rank 0 sends 1 MiB
 * to rank 8 (one InfiniBand rail, leaf-local), then ranks 0 and 8 all-reduce 1 MiB. Opened at
 * the first message instead, each pair paid its TCP handshake and warm-up round trip inside the
 * step (about 8.6 us on the 47.3 us transfer, 18%; doc/case-studies.md, "Packet spot checks").
 */
class PacketPreparedStepTestCase : public TestCase
{
  public:
    PacketPreparedStepTestCase()
        : TestCase("a packet replay is timed with its connections open, as the flow one")
    {}

  private:
    static RunReport
    ReplayOn(const std::string& backend)
    {
        TraceSet set;
        set.groups.Add(1, {0, 8});
        for (uint32_t r = 0; r < 16; ++r)
        {
            set.ranks.emplace_back(r);
        }
        const uint64_t bytes = 1 << 20;
        uint32_t send = set.ranks[0].AddSend("send", 8, 7, bytes);
        set.ranks[0].AddCollective("ar", CollectiveType::ALL_REDUCE, bytes, 1, {send});
        uint32_t recv = set.ranks[8].AddRecv("recv", 0, 7, bytes);
        set.ranks[8].AddCollective("ar", CollectiveType::ALL_REDUCE, bytes, 1, {recv});
        Ptr<RapidLlmHelper> h = CreateObject<RapidLlmHelper>();
        h->SetHardware(HardwareSpec::Load("a100-sxm-80gb"));
        h->SetBackend(backend);
        RunReport report = h->Replay(std::move(set));
        const NetworkStats stats = h->GetBackend()->GetStats();
        NS_ASSERT(stats.messagesDelivered == stats.messagesSent);
        return report;
    }

    void
    DoRun() override
    {
        // An empty set says so (it was refused for the network's size, 'auto' with no GPUs).
        std::string empty;
        try
        {
            Ptr<RapidLlmHelper> h = CreateObject<RapidLlmHelper>();
            h->Replay(TraceSet{});
        }
        catch (const ReplayError& e)
        {
            empty = e.what();
        }
        NS_TEST_EXPECT_MSG_NE(empty.find("the trace set has no ranks"), std::string::npos, empty);
        const RunReport flow = ReplayOn("flow");
        const RunReport packet = ReplayOn("packet");
        // The transfer alone: 1 MiB at 25 GB/s x 0.94 plus two links' 1285 ns and a switch's
        // 130 ns (the a100-sxm-80gb preset).
        const double transfer = double(1 << 20) / (25e9 * 0.94) + 2 * 1285e-9 + 130e-9;
        NS_TEST_EXPECT_MSG_GT(flow.stepTimeS, transfer, "the all-reduce follows the transfer");
        // What remains between the backends is per packet (the last short segment, the frame
        // header, the ACKs): well under 1% here, against 10% with the handshakes inside the
        // step.
        NS_TEST_EXPECT_MSG_EQ_TOL(packet.stepTimeS / flow.stepTimeS,
                                  1.0,
                                  0.01,
                                  "packet " << packet.stepTimeS << " s, flow " << flow.stepTimeS
                                            << " s");
        Simulator::Destroy();
    }
};

/**
 * \brief A script that owns the simulator: Install() schedules the replay without running it,
 * the script runs the simulator with its own events, Collect() gives exactly Run()'s report;
 * a replay installed later in simulated time reports the same times (from its own start).
 */
class InstallCollectTestCase : public TestCase
{
  public:
    InstallCollectTestCase()
        : TestCase("Install + Simulator::Run + Collect: the report Run() gives")
    {}

  private:
    void
    DoRun() override
    {
        for (RunSpec run :
             {fixture::TrainingJob(2, 2, 2, 1, 8, 512), fixture::InferenceJob(2, 2, 2, 128, 4)})
        {
            const std::string what = ToString(run.mode);
            const RunReport direct = SmallJob(run)->Run();

            Ptr<RapidLlmHelper> h = SmallJob(run);
            NS_TEST_EXPECT_MSG_EQ(h->GetReplayer(), nullptr, "nothing before Install");
            Ptr<TraceReplayer> replayer = h->Install();
            RAPIDLLM_REQUIRE_NE(replayer, nullptr, what);
            NS_TEST_EXPECT_MSG_EQ(replayer, h->GetReplayer(), what);
            RAPIDLLM_REQUIRE_NE(h->GetBackend(), nullptr, what);
            NS_TEST_EXPECT_MSG_EQ(Simulator::Now(), Seconds(0), what << ": nothing ran yet");
            NS_TEST_EXPECT_MSG_EQ(Simulator::IsFinished(), false, what << ": replay scheduled");
            // A sink connected to the replayer itself, after Install, and an event of the script.
            g_ended = 0;
            replayer->TraceConnectWithoutContext("OperatorEnd", MakeCallback(&CountEnd));
            uint64_t endedAtHalf = 0;
            Simulator::Schedule(Seconds(direct.stepTimeS / 2),
                                [&endedAtHalf]()
                                {
                                    endedAtHalf = g_ended;
                                });
            Simulator::Run();
            RunReport collected = h->Collect();
            NS_TEST_EXPECT_MSG_EQ(collected.stepTimeS, direct.stepTimeS, what);
            NS_TEST_EXPECT_MSG_EQ(collected.ttftS, direct.ttftS, what);
            NS_TEST_EXPECT_MSG_EQ(collected.mfu, direct.mfu, what);
            NS_TEST_EXPECT_MSG_EQ(collected.memory.peak, direct.memory.peak, what);
            RAPIDLLM_REQUIRE_EQ(collected.ranks.size(), direct.ranks.size(), what);
            for (std::size_t i = 0; i < collected.ranks.size(); ++i)
            {
                NS_TEST_EXPECT_MSG_EQ(collected.ranks[i].finishS, direct.ranks[i].finishS, what);
            }
            NS_TEST_EXPECT_MSG_GT(endedAtHalf, 0u, what << ": the script's event ran mid-step");
            NS_TEST_EXPECT_MSG_LT(endedAtHalf, g_ended, what << ": ... before the end");
            NS_TEST_EXPECT_MSG_EQ(h->Collect().stepTimeS, collected.stepTimeS, "Collect again");
            NS_TEST_EXPECT_MSG_EQ(h->GetResult().ranks.size(), collected.ranks.size(), what);
            const NetworkStats stats = h->GetBackend()->GetStats();
            NS_TEST_EXPECT_MSG_GT(stats.messagesDelivered, 0u, what);
            NS_TEST_EXPECT_MSG_EQ(stats.messagesDelivered, stats.messagesSent, what);
            Simulator::Destroy();

            // Installed at 1 s of simulated time: the same times, counted from its start.
            Ptr<RapidLlmHelper> later = SmallJob(run);
            Simulator::Schedule(Seconds(1),
                                [later]()
                                {
                                    later->Install();
                                });
            Simulator::Run();
            RunReport shifted = later->Collect();
            Simulator::Destroy();
            // The flow network's completions fall on whole nanoseconds of simulated time
            // (FlowNetwork::ScheduleNext), so a replay started elsewhere rounds each message's
            // end differently: at most 1 ns per message on the critical path.
            const double rounding = 1e-9 * double(stats.messagesDelivered + 1);
            NS_TEST_EXPECT_MSG_EQ_TOL(shifted.stepTimeS, direct.stepTimeS, rounding, what);
            NS_TEST_EXPECT_MSG_EQ_TOL(shifted.ttftS, direct.ttftS, rounding, what);
        }
        // Collect before anything was installed is an error a script can catch.
        bool threw = false;
        try
        {
            CreateObject<RapidLlmHelper>()->Collect();
        }
        catch (const ReplayError&)
        {
            threw = true;
        }
        NS_TEST_EXPECT_MSG_EQ(threw, true, "Collect before Install");
    }
};

/** \return the ReplayError message \p f throws ("" if none) */
template<typename F>
std::string
ReplayErrorOf(F f)
{
    try
    {
        f();
    }
    catch (const ReplayError& e)
    {
        return e.what();
    }
    return "";
}

/**
 * \brief A script that misuses Install and Collect gets a ReplayError, not a crash: Collect()
 * before the simulator ran (it dereferenced an empty result), Collect() after the script stopped
 * the simulator mid-replay (it blamed the trace for a cycle), and a second Install() before the
 * simulator ran (the first replay started anyway, and its watchdog event outlived it).
 */
class InstallMisuseTestCase : public TestCase
{
  public:
    InstallMisuseTestCase()
        : TestCase("Install and Collect misuse: ReplayErrors that say what happened")
    {}

  private:
    void
    DoRun() override
    {
        const RunSpec run = fixture::TrainingJob(2, 2, 2, 1, 8, 512);
        const RunReport direct = SmallJob(run)->Run();

        Ptr<RapidLlmHelper> h = SmallJob(run);
        h->Install();
        const std::string notRun = ReplayErrorOf(
            [h]()
            {
                h->Collect();
            });
        NS_TEST_EXPECT_MSG_NE(notRun.find("run the simulator"), std::string::npos, notRun);
        Simulator::Destroy();

        Ptr<RapidLlmHelper> stopped = SmallJob(run);
        stopped->Install();
        Simulator::Stop(MicroSeconds(10));
        Simulator::Run();
        const std::string early = ReplayErrorOf(
            [stopped]()
            {
                stopped->Collect();
            });
        NS_TEST_EXPECT_MSG_NE(early.find("has not finished"), std::string::npos, early);
        NS_TEST_EXPECT_MSG_NE(early.find("Simulator::Stop"), std::string::npos, early);
        NS_TEST_EXPECT_MSG_EQ(early.find("cycle"), std::string::npos, early);
        Simulator::Destroy();

        // Installed twice before the run: only the second replay runs, and it gives Run()'s
        // report (the first never starts, so no event of it is left behind).
        Ptr<RapidLlmHelper> twice = SmallJob(run);
        Ptr<TraceReplayer> first = twice->Install();
        twice->Install();
        NS_TEST_EXPECT_MSG_NE(first, twice->GetReplayer(), "a new replayer");
        first = nullptr;
        Simulator::Run();
        NS_TEST_EXPECT_MSG_EQ(twice->Collect().stepTimeS, direct.stepTimeS, "second Install");
        Simulator::Destroy();

        // Installed again while the first replay runs: the first runs on (kept alive), the
        // second is collected.
        Ptr<RapidLlmHelper> during = SmallJob(run);
        during->Install();
        Simulator::Schedule(Seconds(direct.stepTimeS / 2),
                            [during]()
                            {
                                during->Install();
                            });
        Simulator::Run();
        const double rounding =
            1e-9 * double(during->GetBackend()->GetStats().messagesDelivered + 1);
        NS_TEST_EXPECT_MSG_EQ_TOL(
            during->Collect().stepTimeS, direct.stepTimeS, rounding, "mid-run");
        Simulator::Destroy();
    }
};

/** \return whether \p f throws a SpecError naming \p field */
template<typename F>
bool
ThrowsSpecError(F f, const std::string& field)
{
    try
    {
        f();
    }
    catch (const SpecError& e)
    {
        return e.GetField() == field;
    }
    return false;
}

/**
 * \brief The factories: a script chooses the backend, routing policy and replayer settings by
 * name and sets any of their attributes; unknown names, attributes and bad values are
 * SpecErrors, not aborts.
 */
class HelperFactoriesTestCase : public TestCase
{
  public:
    HelperFactoriesTestCase()
        : TestCase("SetBackend, SetRoutingPolicy, SetReplayerAttribute reach the created objects")
    {}

  private:
    void
    DoRun() override
    {
        RunSpec run = fixture::TrainingJob(2, 1, 2, 1, 4, 512);
        // Defaults: the flow backend, the hardware file's routing, Symmetry on.
        Ptr<RapidLlmHelper> h = SmallJob(run);
        h->Install();
        NS_TEST_EXPECT_MSG_EQ(h->GetBackend()->GetInstanceTypeId().GetName(),
                              NetworkBackend::Create("flow")->GetInstanceTypeId().GetName(),
                              "default backend");
        NS_TEST_EXPECT_MSG_EQ(
            h->GetBackend()->GetRouting()->GetInstanceTypeId().GetName(),
            RoutingPolicy::Create(h->GetHardware().network.routing)->GetInstanceTypeId().GetName(),
            "the hardware file's routing");
        BooleanValue symmetry;
        h->GetReplayer()->GetAttribute("Symmetry", symmetry);
        NS_TEST_EXPECT_MSG_EQ(symmetry.Get(), true, "the helper replays by symmetry");
        Simulator::Destroy();

        // Chosen by short name, with attributes (not run: the packet backend is slow).
        Ptr<RapidLlmHelper> p = SmallJob(run);
        p->SetBackend("packet", "Mtu", UintegerValue(4000), "InitialCwnd", UintegerValue(20));
        p->SetBackendAttribute("DelAckCount", UintegerValue(1));
        p->SetRoutingPolicy("ecmp");
        p->SetReplayerAttribute("ComputeStreams", UintegerValue(2));
        p->SetReplayerAttribute("Symmetry", BooleanValue(false));
        p->SetReplayerAttribute("CollectiveAlgorithm", StringValue("ring"));
        p->Install();
        NS_TEST_EXPECT_MSG_EQ(p->GetBackend()->GetInstanceTypeId().GetName(),
                              "ns3::rapidllm::PacketNetwork",
                              "packet backend");
        UintegerValue value;
        p->GetBackend()->GetAttribute("Mtu", value);
        NS_TEST_EXPECT_MSG_EQ(value.Get(), 4000u, "Mtu");
        p->GetBackend()->GetAttribute("InitialCwnd", value);
        NS_TEST_EXPECT_MSG_EQ(value.Get(), 20u, "InitialCwnd");
        p->GetBackend()->GetAttribute("DelAckCount", value);
        NS_TEST_EXPECT_MSG_EQ(value.Get(), 1u, "DelAckCount");
        NS_TEST_EXPECT_MSG_EQ(p->GetBackend()->GetRouting()->GetInstanceTypeId().GetName(),
                              "ns3::rapidllm::EcmpRouting",
                              "routing");
        p->GetReplayer()->GetAttribute("ComputeStreams", value);
        NS_TEST_EXPECT_MSG_EQ(value.Get(), 2u, "ComputeStreams");
        p->GetReplayer()->GetAttribute("Symmetry", symmetry);
        NS_TEST_EXPECT_MSG_EQ(symmetry.Get(), false, "Symmetry");
        StringValue algorithm;
        p->GetReplayer()->GetAttribute("CollectiveAlgorithm", algorithm);
        NS_TEST_EXPECT_MSG_EQ(algorithm.Get(), "ring", "CollectiveAlgorithm");
        NS_TEST_EXPECT_MSG_EQ(p->GetBackendName(), "packet", "the name it was chosen by");
        Simulator::Destroy();

        // ns-3's attribute defaults reach the created objects too.
        Config::SetDefault("ns3::rapidllm::TraceReplayer::ComputeStreams", UintegerValue(3));
        Ptr<RapidLlmHelper> config = SmallJob(run);
        config->Install();
        config->GetReplayer()->GetAttribute("ComputeStreams", value);
        NS_TEST_EXPECT_MSG_EQ(value.Get(), 3u, "Config::SetDefault");
        Config::SetDefault("ns3::rapidllm::TraceReplayer::ComputeStreams", UintegerValue(1));
        Simulator::Destroy();

        // By TypeId name; and an attribute reaches the replay (an unknown algorithm fails it).
        Ptr<RapidLlmHelper> byType = SmallJob(run);
        byType->SetBackend("ns3::rapidllm::FlowNetwork");
        NS_TEST_EXPECT_MSG_EQ(byType->Run().backend, "ns3::rapidllm::FlowNetwork", "TypeId name");
        Ptr<RapidLlmHelper> bogus = SmallJob(run);
        bogus->SetReplayerAttribute("CollectiveAlgorithm", StringValue("no-such-algorithm"));
        NS_TEST_EXPECT_MSG_EQ(ThrowsSpecError(
                                  [bogus]()
                                  {
                                      bogus->Run();
                                  },
                                  "CollectiveAlgorithm"),
                              true,
                              "the replayer's attribute is the one set");

        // Errors name what is wrong.
        Ptr<RapidLlmHelper> e = SmallJob(run);
        NS_TEST_EXPECT_MSG_EQ(ThrowsSpecError(
                                  [e]()
                                  {
                                      e->SetBackend("bogus");
                                  },
                                  "backend"),
                              true,
                              "unknown backend");
        NS_TEST_EXPECT_MSG_EQ(ThrowsSpecError(
                                  [e]()
                                  {
                                      e->SetRoutingPolicy("bogus");
                                  },
                                  "routing"),
                              true,
                              "unknown routing policy");
        NS_TEST_EXPECT_MSG_EQ(ThrowsSpecError(
                                  [e]()
                                  {
                                      e->SetBackendAttribute("Mtu", UintegerValue(1));
                                  },
                                  "Mtu"),
                              true,
                              "the flow backend has no Mtu");
        NS_TEST_EXPECT_MSG_EQ(ThrowsSpecError(
                                  [e]()
                                  {
                                      e->SetReplayerAttribute("ComputeStreams", UintegerValue(65));
                                  },
                                  "ComputeStreams"),
                              true,
                              "a value out of the attribute's range (1 to 64)");
        // Values given as text: ns-3's own parsers abort on bad text, the helper checks it.
        for (const auto& [attribute, text] : std::vector<std::pair<std::string, std::string>>{
                 {"Mtu", "abc"}, {"Mtu", "0"}, {"MinRto", "abc"}})
        {
            NS_TEST_EXPECT_MSG_EQ(ThrowsSpecError(
                                      [e, attribute = attribute, text = text]()
                                      {
                                          e->SetBackend("packet", attribute, StringValue(text));
                                      },
                                      attribute),
                                  true,
                                  attribute << "=" << text);
        }
        std::string range;
        try
        {
            e->SetBackend("packet", "Mtu", StringValue("0"));
        }
        catch (const SpecError& err)
        {
            range = err.what();
        }
        NS_TEST_EXPECT_MSG_NE(range.find("576:65000"), std::string::npos, range);
        Ptr<RapidLlmHelper> cc = SmallJob(run);
        cc->SetBackend("packet", "CongestionControl", StringValue("ns3::Nope"));
        NS_TEST_EXPECT_MSG_EQ(ThrowsSpecError(
                                  [cc]()
                                  {
                                      cc->Run();
                                  },
                                  "PacketNetwork::CongestionControl"),
                              true,
                              "an unknown congestion control is an error, not an abort");
        // ns-3.37's TcpCubic names TcpSocketBase as its TypeId's parent; it is a
        // TcpCongestionOps all the same.
        Ptr<RapidLlmHelper> cubic = SmallJob(run);
        cubic->SetBackend("packet", "CongestionControl", StringValue("ns3::TcpCubic"));
        NS_TEST_EXPECT_MSG_GT(cubic->Run().stepTimeS, 0, "TcpCubic runs");
        e->SetRoutingPolicyAttribute("NoSuch", UintegerValue(1));
        NS_TEST_EXPECT_MSG_EQ(ThrowsSpecError(
                                  [e]()
                                  {
                                      e->Install();
                                  },
                                  "NoSuch"),
                              true,
                              "checked against the hardware file's policy at Install");
        Simulator::Destroy();
    }
};

/**
 * \brief A script's CommandLine takes the job options in one call (JobOptions::AddTo): the
 * job it describes is the one set by hand, values are checked as they are parsed, options of
 * the other mode and inconsistent layouts are errors naming the option.
 */
class JobOptionsTestCase : public TestCase
{
  public:
    JobOptionsTestCase()
        : TestCase("JobOptions on a script's CommandLine")
    {}

  private:
    /** \return the job options parsed from \p args by an ns-3 CommandLine */
    static JobOptions
    Parse(const std::vector<std::string>& args)
    {
        JobOptions job;
        job.SetDefault("model", "gpt-1.7b");
        CommandLine cmd("job-options-test");
        job.AddTo(cmd);
        std::vector<std::string> argv = {"job-options-test"};
        argv.insert(argv.end(), args.begin(), args.end());
        cmd.Parse(argv);
        return job;
    }

    void
    DoRun() override
    {
        // The training job of TrainingReportTestCase, from a command line.
        JobOptions job =
            Parse({"--gpus=16", "--tp=2", "--pp=2", "--gbs=16", "--seq=512", "--layers=4", "--sp"});
        ResolvedJob spec = job.ToSpecs();
        NS_TEST_EXPECT_MSG_EQ(spec.model.name, "gpt-1.7b", "the script's default model");
        NS_TEST_EXPECT_MSG_EQ(spec.model.layers, 4u, "a shape override");
        NS_TEST_EXPECT_MSG_EQ(spec.run.parallel.dp, 4u, "dp = gpus / (tp x pp)");
        NS_TEST_EXPECT_MSG_EQ(spec.run.parallel.sequenceParallel, true, "--sp alone is true");
        NS_TEST_EXPECT_MSG_EQ(spec.run.globalBatch, 16u, "gbs");
        NS_TEST_EXPECT_MSG_EQ(spec.run.microBatch, 1u, "mbs default");
        NS_TEST_EXPECT_MSG_EQ(spec.hardware.name, HardwareSpec::Load("a100-sxm-80gb").name, "hw");
        Ptr<RapidLlmHelper> fromOptions = CreateObject<RapidLlmHelper>();
        job.Apply(fromOptions);
        RunSpec run;
        run.parallel.tp = 2;
        run.parallel.pp = 2;
        run.parallel.dp = 4;
        run.parallel.sequenceParallel = true;
        run.globalBatch = 16;
        run.sequence = 512;
        NS_TEST_EXPECT_MSG_EQ(fromOptions->Run().stepTimeS,
                              SmallJob(run)->Run().stepTimeS,
                              "the same job as set by hand");

        // A head width the model gives (Qwen3: 128, not hidden / heads = 64; DeepSeek-V3's
        // latent attention: 192) survives shape overrides; a derived one follows them.
        NS_TEST_EXPECT_MSG_EQ(
            Parse({"--model=qwen3-30b-a3b", "--layers=4"}).ToSpecs().model.headDim, 128u, "qwen3");
        NS_TEST_EXPECT_MSG_EQ(
            Parse({"--model=deepseek-v3", "--layers=4", "--heads=16"}).ToSpecs().model.headDim,
            192u,
            "deepseek-v3");
        NS_TEST_EXPECT_MSG_EQ(
            Parse({"--hidden=1024", "--heads=8"}).ToSpecs().model.headDim, 128u, "gpt-1.7b");
        // The shape options act as --set's model fields do: a head width the model gives
        // stays even where it equals hidden / heads, and the KV heads stay (Llama-3's GQA was
        // turned into 64 KV heads by --heads=64).
        const ModelSpec given =
            Parse({"--model=llama3-8b", "--set=model.head_dim=128", "--hidden=8192"})
                .ToSpecs()
                .model;
        NS_TEST_EXPECT_MSG_EQ(given.headDim, 128u, "a given head width");
        const ModelSpec heads = Parse({"--model=llama3-8b", "--heads=64"}).ToSpecs().model;
        NS_TEST_EXPECT_MSG_EQ(heads.kvHeads, 8u, "the KV heads stay");
        NS_TEST_EXPECT_MSG_EQ(heads.headDim, 64u, "a derived head width follows");
        NS_TEST_EXPECT_MSG_EQ(
            (heads == Parse({"--model=llama3-8b", "--set=model.heads=64"}).ToSpecs().model),
            true,
            "as --set=model.heads=64");

        // Inference, and the default global batch mbs x dp.
        spec = Parse({"--mode=inference", "--tp=2", "--batch=4", "--gen=16"}).ToSpecs();
        NS_TEST_EXPECT_MSG_EQ((spec.run.mode == RunMode::INFERENCE), true, "mode");
        NS_TEST_EXPECT_MSG_EQ(spec.run.batch, 4u, "batch");
        NS_TEST_EXPECT_MSG_EQ(spec.run.generatedTokens, 16u, "gen");
        NS_TEST_EXPECT_MSG_EQ(Parse({"--dp=4", "--mbs=2"}).ToSpecs().run.globalBatch, 8u, "gbs");

        // Errors, each naming its option.
        NS_TEST_EXPECT_MSG_EQ(ThrowsSpecError(
                                  []()
                                  {
                                      Parse({"--tp=abc"});
                                  },
                                  "tp"),
                              true,
                              "a bad value, while parsing");
        NS_TEST_EXPECT_MSG_EQ(ThrowsSpecError(
                                  []()
                                  {
                                      Parse({"--recompute=most"});
                                  },
                                  "recompute"),
                              true,
                              "not a choice");
        NS_TEST_EXPECT_MSG_EQ(ThrowsSpecError(
                                  []()
                                  {
                                      Parse({"--mode=inference", "--gbs=8"}).ToSpecs();
                                  },
                                  "gbs"),
                              true,
                              "a training option in inference");
        NS_TEST_EXPECT_MSG_EQ(ThrowsSpecError(
                                  []()
                                  {
                                      Parse({"--gpus=15", "--tp=2"}).ToSpecs();
                                  },
                                  "gpus"),
                              true,
                              "GPUs not divisible by tp");
        // As the command: an option given twice is an error, not the last value silently.
        NS_TEST_EXPECT_MSG_EQ(ThrowsSpecError(
                                  []()
                                  {
                                      Parse({"--tp=2", "--tp=4"});
                                  },
                                  "tp"),
                              true,
                              "an option given twice");
        // A --model that names nothing is worded as the command words it.
        try
        {
            Parse({"--model=no-such-model"}).ToSpecs();
            NS_TEST_EXPECT_MSG_EQ(true, false, "an unknown model is an error");
        }
        catch (const SpecError& e)
        {
            NS_TEST_EXPECT_MSG_EQ(JobOptions::DescribeError(e).rfind("option --model: ", 0),
                                  0,
                                  JobOptions::DescribeError(e));
        }
        NS_TEST_EXPECT_MSG_EQ(ThrowsSpecError(
                                  []()
                                  {
                                      JobOptions j;
                                      j.SetDefault("dp", "none");
                                  },
                                  "dp"),
                              true,
                              "a bad default");
        try
        {
            Parse({"--tp=0"});
        }
        catch (const SpecError& e)
        {
            NS_TEST_EXPECT_MSG_EQ(JobOptions::DescribeError(e),
                                  "option --tp: '0' is not allowed; give a whole number from 1 "
                                  "to 16777216",
                                  "the message a script prints");
        }
        // Notes: none for a plain job; one each for KV heads replicated by training's tp, for
        // GEMMs off the tensor cores and for a request past a rotary model's context.
        NS_TEST_EXPECT_MSG_EQ(Parse({"--gpus=8"}).ToSpecs().Notes().size(), 0u, "a plain job");
        auto noted = [](const std::vector<std::string>& args, const std::string& text)
        {
            const std::vector<std::string> notes = Parse(args).ToSpecs().Notes();
            return notes.size() == 1 && notes[0].find(text) != std::string::npos;
        };
        NS_TEST_EXPECT_MSG_EQ(
            noted({"--model=llama3-8b", "--gpus=16", "--tp=16", "--layers=2"}, "on 2 ranks"),
            true,
            "tp 16 over 8 KV heads");
        NS_TEST_EXPECT_MSG_EQ(
            Parse({"--model=llama3-8b", "--mode=inference", "--tp=16", "--layers=2"})
                .ToSpecs()
                .Notes()
                .size(),
            0u,
            "serving replicates KV heads as vLLM does");
        NS_TEST_EXPECT_MSG_EQ(
            noted({"--dtype=fp32", "--gpus=8"}, "CUDA cores (vector_tflops.fp32)"), true, "fp32");
        // fp8 GEMMs whose widths Transformer Engine would refuse (not multiples of 16).
        NS_TEST_EXPECT_MSG_EQ(noted({"--hardware=h100-sxm-80gb",
                                     "--dtype=fp8",
                                     "--hidden=1000",
                                     "--heads=8",
                                     "--ffn=3000",
                                     "--layers=2"},
                                    "divide by 16: hidden 1000"),
                              true,
                              "fp8 widths");
        NS_TEST_EXPECT_MSG_EQ(
            Parse({"--hardware=h100-sxm-80gb", "--dtype=fp8", "--gpus=8", "--layers=2"})
                .ToSpecs()
                .Notes()
                .size(),
            0u,
            "fp8 on widths that divide");
        NS_TEST_EXPECT_MSG_EQ(
            noted({"--model=mixtral-8x7b", "--gpus=8", "--tp=8", "--layers=2", "--moe-imbalance=2"},
                  "changes nothing at ep 1"),
            true,
            "an imbalance without expert parallelism");
        NS_TEST_EXPECT_MSG_EQ(
            noted({"--gpus=8", "--sp"}, "at tp 1 it changes nothing"), true, "sp");
        NS_TEST_EXPECT_MSG_EQ(noted({"--model=llama3-8b",
                                     "--mode=inference",
                                     "--prompt=8192",
                                     "--gen=128",
                                     "--layers=2"},
                                    "8320 tokens is longer"),
                              true,
                              "past the context");
        // A GPU without a host section issues kernels for free whatever the engine, and an
        // nccl section of a dimension that runs another algorithm is unused: said where the job
        // is replayed (memory prices neither).
        auto replayNoted = [](const std::vector<std::string>& args, const std::string& text)
        {
            const ResolvedJob job = Parse(args).ToSpecs();
            const std::vector<std::string> notes = job.ReplayNotes();
            return job.Notes().empty() && notes.size() == 1
                   && notes[0].find(text) != std::string::npos;
        };
        NS_TEST_EXPECT_MSG_EQ(
            replayNoted({"--mode=inference", "--engine=hf", "--layers=2", "--set=gpu.host=~"},
                        "dispatch eager and engine hf cost nothing"),
            true,
            "no host section");
        NS_TEST_EXPECT_MSG_EQ(replayNoted({"--set=network.nvlink.collective=ring", "--gpus=8"},
                                          "section is not used"),
                              true,
                              "an nccl section for another algorithm");
        NS_TEST_EXPECT_MSG_EQ(Parse({"--gpus=8"}).ToSpecs().ReplayNotes().size(), 0u, "a preset");
        // SMs given alone: the GPU's rates are its totals, said.
        NS_TEST_EXPECT_MSG_EQ(
            noted({"--gpus=8", "--set=gpu.sm_count=192"}, "not the GPU's rates"), true, "SMs");
        // Whole experts in serving spread over the tensor-parallel group: ep = tp implied.
        NS_TEST_EXPECT_MSG_EQ(
            Parse({"--model=mixtral-8x7b", "--mode=inference", "--tp=2", "--etp=1", "--layers=2"})
                .ToSpecs()
                .run.parallel.ep,
            2u,
            "--etp=1 in inference: ep = tp");
        // 12 GPUs on 8-GPU NVLink domains, tp 3: a part-filled domain, groups across its edge.
        const std::vector<std::string> domains =
            Parse({"--gpus=12", "--tp=3", "--gbs=4", "--layers=2"}).ToSpecs().Notes();
        RAPIDLLM_REQUIRE_EQ(domains.size(), 2u, "two notes");
        NS_TEST_EXPECT_MSG_EQ(domains[0],
                              "12 GPUs do not fill whole nvlink domains of 8: 1 full and one of 4",
                              "a part-filled domain");
        NS_TEST_EXPECT_MSG_NE(domains[1].find("tp 3 and the nvlink domain of 8 GPUs do not divide"),
                              std::string::npos,
                              domains[1]);
        // The declarations are the command's: every one has help and a kind-checked default.
        for (const OptionSpec& o : JobOptions::GetDeclarations())
        {
            NS_TEST_EXPECT_MSG_EQ(o.help.empty(), false, o.name);
            NS_TEST_EXPECT_MSG_EQ(o.fallback.empty() || o.Check(o.fallback).empty(), true, o.name);
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
        auto split = [&](uint32_t layers, uint32_t pp, uint32_t vpp)
        {
            ParallelSpec p;
            p.pp = pp;
            p.virtualStages = vpp;
            return p.UnevenSplit(layers, first, last);
        };
        NS_TEST_EXPECT_MSG_EQ(split(126, 16, 1), true, "Llama-3 405B");
        NS_TEST_EXPECT_MSG_EQ(first * 100 + last, 707u, "7 and 7 around 14 x 8");
        NS_TEST_EXPECT_MSG_EQ(split(9, 2, 1), true, "two stages");
        NS_TEST_EXPECT_MSG_EQ(first * 100 + last, 504u, "the last stage (with the head) less");
        NS_TEST_EXPECT_MSG_EQ(split(5, 4, 1), true, "5 on 4 stages");
        NS_TEST_EXPECT_MSG_EQ(first * 100 + last, 201u, "2, 1, 1, 1");
        // The fullest stage as light as it can be: 61 on 30 stages is 3, 2 x 28, 2 (not 17, 1
        // x 28, 16), where a share of ceil(61 / 30) = 3 leaves nothing for the ends.
        NS_TEST_EXPECT_MSG_EQ(split(61, 30, 1), true, "DeepSeek-V3 on 30 stages");
        NS_TEST_EXPECT_MSG_EQ(first * 100 + last, 302u, "3, 2 x 28, 2");
        // Whole chunks on every stage: 62 on 4 stages of 2 chunks is 16, 16, 16, 14; an odd
        // count has no split over chunks of two, nor fewer layers than stages one.
        NS_TEST_EXPECT_MSG_EQ(split(62, 4, 2), true, "two chunks a stage");
        NS_TEST_EXPECT_MSG_EQ(first * 100 + last, 1614u, "16, 16 x 2, 14");
        NS_TEST_EXPECT_MSG_EQ(split(61, 4, 2), false, "odd over chunks of two");
        NS_TEST_EXPECT_MSG_EQ(split(3, 4, 1), false, "fewer layers than stages");
        NS_TEST_EXPECT_MSG_EQ(split(61, 40, 1), false, "12, 1 x 38, 11: ends far above a share");
        NS_TEST_EXPECT_MSG_EQ(split(126, 16, 3), false, "21, 6 x 14, 21 on three chunks");
        NS_TEST_EXPECT_MSG_EQ(split(8, 1, 1), false, "no pipeline");

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
        space.pipelineSplit = PipelineSplit::FIRST_LAST;
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
        // Megatron-Bridge's split: 6 layers + 2 places, 4 per stage at pp 2 (3 and 3), 2 at
        // pp 4 (1, 2, 2, 1); without a pipeline nothing is counted.
        space.pipelineSplit = PipelineSplit::EMBEDDING_LOSS;
        LayoutSweep counted(model, hardware, base, space);
        points = counted.Run();
        NS_TEST_ASSERT_MSG_EQ(
            (pipelines(points) == std::vector<uint32_t>{1, 2, 4}), true, "pp 1, 2 and 4");
        for (const auto& p : points)
        {
            const ParallelSpec& q = p.run.parallel;
            NS_TEST_EXPECT_MSG_EQ(q.SplitExtraLayers(), (q.pp > 1 ? 2u : 0u), "pp " << q.pp);
            NS_TEST_EXPECT_MSG_EQ(q.StageLayers(6, 0),
                                  (q.pp == 4 ? 1u : (q.pp == 2 ? 3u : 6u)),
                                  "pp " << q.pp << " first stage");
            NS_TEST_EXPECT_MSG_GT(p.report.stepTimeS, 0, "replayed");
        }
        NS_TEST_EXPECT_MSG_EQ(
            (ParsePipelineSplit("first-last") == PipelineSplit::FIRST_LAST), true, "names");
    }
};

/**
 * \brief A sweep over compute types: each layout in each type, the type innermost (a one-type
 * sweep numbers its layouts as before), each candidate the one-type sweep's; fp8's scaling only
 * on the fp8 rows; a layout's fp8 row predicts what it predicts alone.
 */
class DtypeSweepTestCase : public TestCase
{
  public:
    DtypeSweepTestCase()
        : TestCase("layout sweep over compute types")
    {}

  private:
    void
    DoRun() override
    {
        const HardwareSpec hardware = HardwareSpec::Load("h100-sxm-80gb");
        const ModelSpec model = ModelSpec::Load("gpt-1.7b");
        RunSpec base;
        base.globalBatch = 64;
        base.sequence = 2048;
        base.fp8Scaling = "current";
        SweepSpace space;
        space.gpus = 8;
        space.tp = {1, 2};
        space.pp = {1};
        space.microBatch = {2, 4};
        space.recompute = {Recompute::SELECTIVE};
        LayoutSweep bf16(model, hardware, base, space);
        const std::vector<RunSpec> one = bf16.Candidates();
        space.dtypes = {DataType::BF16, DataType::FP8};
        LayoutSweep both(model, hardware, base, space);
        const std::vector<RunSpec> candidates = both.Candidates();
        RAPIDLLM_REQUIRE_EQ(candidates.size(), 2 * one.size(), "each layout in each type");
        NS_TEST_EXPECT_MSG_EQ(both.GetSkipped(), 2 * bf16.GetSkipped(), "each skip twice");
        for (std::size_t i = 0; i < one.size(); ++i)
        {
            RunSpec typed = one[i];
            NS_TEST_EXPECT_MSG_EQ((candidates[2 * i] == typed), true, "bf16 first, as alone");
            NS_TEST_EXPECT_MSG_EQ(candidates[2 * i].fp8Scaling,
                                  std::string("delayed"),
                                  "no fp8 casts to scale in bf16");
            typed.dtype = DataType::FP8;
            typed.fp8Scaling = "current";
            NS_TEST_EXPECT_MSG_EQ((candidates[2 * i + 1] == typed), true, "then fp8");
        }
        // The fp8 row of a layout is its prediction alone.
        space.dtypes = {DataType::FP8};
        LayoutSweep fp8(model, hardware, base, space);
        const SweepPoint alone = fp8.Evaluate(fp8.Candidates().front());
        const SweepPoint within = both.Evaluate(candidates[1]);
        NS_TEST_EXPECT_MSG_EQ(within.report.stepTimeS, alone.report.stepTimeS, "the same step");
        NS_TEST_EXPECT_MSG_LT(within.report.stepTimeS,
                              both.Evaluate(candidates[0]).report.stepTimeS,
                              "fp8 GEMMs faster than bf16 ones on the H100");
    }
};

namespace {

/** \return the run of the machine and GPU count sweeps: a global batch of 64 x 2,048 tokens */
RunSpec
SmallSweepRun()
{
    RunSpec base;
    base.globalBatch = 64;
    base.sequence = 2048;
    return base;
}

/**
 * \return the space of the machine and GPU count sweeps: tp 1, 2 and 3 (which no GPU count of
 * theirs takes), micro-batches 2 and 4, selective recomputation
 */
SweepSpace
SmallSweepSpace()
{
    SweepSpace space;
    space.tp = {1, 2, 3};
    space.microBatch = {2, 4};
    space.recompute = {Recompute::SELECTIVE};
    return space;
}

} // namespace

/**
 * \brief A sweep over machines: each machine's layouts as its sweep alone would number them,
 * the machine outermost; a point on a machine predicts what that machine's sweep does (the
 * machine really is the one the point names); a machine whose GPU lacks a compute type's rate
 * tries the others and says so.
 */
class MachineSweepTestCase : public TestCase
{
  public:
    MachineSweepTestCase()
        : TestCase("layout sweep over machines")
    {}

  private:
    void
    DoRun() override
    {
        const HardwareSpec h100 = HardwareSpec::Load("h100-sxm-80gb");
        const HardwareSpec a100 = HardwareSpec::Load("a100-sxm-80gb");
        const ModelSpec model = ModelSpec::Load("gpt-1.7b");
        const RunSpec base = SmallSweepRun();
        SweepSpace space = SmallSweepSpace();
        space.pp = {1};
        space.dtypes = {DataType::BF16, DataType::FP8};
        LayoutSweep alone(model, h100, base, space);
        const std::vector<RunSpec> one = alone.Candidates();
        LayoutSweep both(model, std::vector<HardwareSpec>{a100, h100}, base, space);
        const std::vector<RunSpec> candidates = both.Candidates();
        // The A100 runs bf16 only: half of the H100's layouts, then all of them.
        RAPIDLLM_REQUIRE_EQ(candidates.size(), one.size() / 2 + one.size(), "a100 bf16, h100 both");
        const auto ruledOut = both.GetRuledOut();
        RAPIDLLM_REQUIRE_EQ(ruledOut.size(), std::size_t(1), "one machine and type not tried");
        NS_TEST_EXPECT_MSG_EQ(ruledOut.front().first, 0u, "the A100");
        NS_TEST_EXPECT_MSG_EQ((ruledOut.front().second == DataType::FP8), true, "in fp8");
        NS_TEST_EXPECT_MSG_EQ(both.GetSkipped(),
                              alone.GetSkipped() / 2 + alone.GetSkipped(),
                              "tp 3 skipped on each machine, for each type it runs");
        const std::size_t first = one.size() / 2;
        for (std::size_t i = 0; i < candidates.size(); ++i)
        {
            NS_TEST_EXPECT_MSG_EQ(both.GetMachine(i), (i < first ? 0u : 1u), "machine outermost");
            if (i < first)
            {
                NS_TEST_EXPECT_MSG_EQ((candidates[i] == one[2 * i]), true, "the bf16 layouts");
            }
            else
            {
                NS_TEST_EXPECT_MSG_EQ((candidates[i] == one[i - first]), true, "as alone");
            }
        }
        // The H100's first layout predicts what it does alone; the A100's, slower, its own.
        const SweepPoint h100Point = both.Evaluate(candidates[first], both.GetMachine(first));
        NS_TEST_EXPECT_MSG_EQ(h100Point.machine, 1u, "named");
        NS_TEST_EXPECT_MSG_EQ(h100Point.report.stepTimeS,
                              alone.Evaluate(one.front()).report.stepTimeS,
                              "the H100's prediction");
        const SweepPoint a100Point = both.Evaluate(candidates[0], both.GetMachine(0));
        NS_TEST_EXPECT_MSG_EQ(
            a100Point.report.stepTimeS,
            LayoutSweep(model, a100, base, SweepSpace()).Evaluate(candidates[0]).report.stepTimeS,
            "the A100's prediction");
        NS_TEST_EXPECT_MSG_GT(a100Point.report.stepTimeS,
                              1.5 * h100Point.report.stepTimeS,
                              "bf16 on the A100 well behind the H100");
    }
};

/**
 * \brief A sweep over GPU counts: each count's layouts as its sweep alone numbers them, one
 * count after the other, each with its data-parallel degree; the skipped ones counted on each.
 */
class GpuCountSweepTestCase : public TestCase
{
  public:
    GpuCountSweepTestCase()
        : TestCase("layout sweep over GPU counts")
    {}

  private:
    void
    DoRun() override
    {
        const HardwareSpec hardware = HardwareSpec::Load("h100-sxm-80gb");
        const ModelSpec model = ModelSpec::Load("gpt-1.7b");
        const RunSpec base = SmallSweepRun();
        SweepSpace space = SmallSweepSpace();
        std::vector<RunSpec> alone;
        uint32_t skipped = 0;
        for (uint32_t gpus : {8u, 32u})
        {
            space.gpus = gpus;
            LayoutSweep one(model, hardware, base, space);
            for (const RunSpec& run : one.Candidates())
            {
                NS_TEST_EXPECT_MSG_EQ(run.parallel.tp * run.parallel.pp * run.parallel.cp
                                          * run.parallel.dp,
                                      gpus,
                                      "every GPU used");
                alone.push_back(run);
            }
            skipped += one.GetSkipped();
        }
        space.gpus = 8;
        space.gpuCounts = {8, 32};
        LayoutSweep both(model, hardware, base, space);
        const std::vector<RunSpec> candidates = both.Candidates();
        RAPIDLLM_REQUIRE_EQ(candidates.size(), alone.size(), "each count's layouts");
        for (std::size_t i = 0; i < candidates.size(); ++i)
        {
            NS_TEST_EXPECT_MSG_EQ((candidates[i] == alone[i]), true, "as alone, 8 GPUs first");
        }
        NS_TEST_EXPECT_MSG_EQ(both.GetSkipped(), skipped, "tp 3 skipped on each count");
    }
};

/**
 * \brief A sweep over context and expert parallel degrees: every candidate uses the GPUs as
 * tp x pp x cp x dp, its expert degree divides the experts and dp x cp, the others are skipped
 * and counted; a context-parallel layout predicts what a direct run of it does.
 */
class ContextExpertSweepTestCase : public TestCase
{
  public:
    ContextExpertSweepTestCase()
        : TestCase("layout sweep over context and expert parallel degrees")
    {}

  private:
    void
    DoRun() override
    {
        HardwareSpec hardware = HardwareSpec::Load("h100-sxm-80gb");
        ModelSpec moe = ModelSpec::Load("mixtral-8x7b"); // 8 experts, 32 heads, 8 KV heads
        RunSpec base;
        base.globalBatch = 64;
        base.sequence = 4096;
        SweepSpace space;
        space.gpus = 16;
        space.tp = {1, 2};
        space.pp = {1, 2};
        space.cp = {1, 2, 3};        // 3 divides neither 16 GPUs nor the sequence
        space.ep = {1, 2, 4, 8, 16}; // 16 is more than the experts
        space.microBatch = {1};
        space.recompute = {Recompute::FULL};
        LayoutSweep sweep(moe, hardware, base, space);
        const std::vector<RunSpec> candidates = sweep.Candidates();
        // Closed form: for each tp, pp, cp (not 3), dp = 16 / (tp pp cp) and ep in {1,2,4,8}
        // with ep | dp (expert parallelism splits the data-parallel ranks).
        uint32_t expected = 0;
        for (uint32_t tp : space.tp)
        {
            for (uint32_t pp : space.pp)
            {
                for (uint32_t cp : {1u, 2u})
                {
                    for (uint32_t ep : {1u, 2u, 4u, 8u})
                    {
                        expected += (16 / (tp * pp * cp)) % ep == 0 ? 1 : 0;
                    }
                }
            }
        }
        RAPIDLLM_REQUIRE_EQ(candidates.size(), expected, "every valid combination");
        const uint32_t all = 2 * 2 * 3 * 5;
        NS_TEST_EXPECT_MSG_EQ(sweep.GetSkipped(), all - expected, "the others skipped, counted");
        std::set<uint32_t> cps;
        std::set<uint32_t> eps;
        for (const RunSpec& r : candidates)
        {
            const ParallelSpec& p = r.parallel;
            NS_TEST_EXPECT_MSG_EQ(p.tp * p.pp * p.cp * p.dp, 16u, "tp x pp x cp x dp = GPUs");
            NS_TEST_EXPECT_MSG_EQ(p.dp % p.ep, 0u, "ep divides dp");
            NS_TEST_EXPECT_MSG_EQ(8 % p.ep, 0u, "ep divides the experts");
            cps.insert(p.cp);
            eps.insert(p.ep);
        }
        NS_TEST_EXPECT_MSG_EQ((cps == std::set<uint32_t>{1, 2}), true, "cp 1 and 2 swept");
        NS_TEST_EXPECT_MSG_EQ((eps == std::set<uint32_t>{1, 2, 4, 8}), true, "ep 1 to 8 swept");

        // A dense model: context parallel layouts replay as a direct run of them does.
        ModelSpec dense = fixture::SmallModel("gpt-1.7b", 4);
        RunSpec small;
        small.globalBatch = 8;
        small.sequence = 1024;
        SweepSpace cpOnly;
        cpOnly.gpus = 8;
        cpOnly.tp = {2};
        cpOnly.pp = {1};
        cpOnly.cp = {1, 2};
        cpOnly.microBatch = {1};
        cpOnly.recompute = {Recompute::NONE};
        LayoutSweep contexts(dense, hardware, small, cpOnly);
        std::vector<SweepPoint> points = contexts.Run();
        RAPIDLLM_REQUIRE_EQ(points.size(), 2u, "cp 1 and cp 2");
        for (const SweepPoint& p : points)
        {
            NS_TEST_ASSERT_MSG_EQ(p.report.feasible, true, p.report.reason);
            Ptr<RapidLlmHelper> direct = CreateObject<RapidLlmHelper>();
            direct->SetModel(dense);
            direct->SetHardware(hardware);
            direct->SetRun(p.run);
            NS_TEST_EXPECT_MSG_EQ(
                direct->Run().stepTimeS, p.report.stepTimeS, "the step a direct run gives");
        }
        NS_TEST_EXPECT_MSG_NE(
            points[0].run.parallel.cp, points[1].run.parallel.cp, "both degrees ranked");
    }
};

/**
 * \brief ZeRO-1's parameter gather overlapped with the next forward (Megatron's
 * overlap_param_gather) shortens the step by at most what the gather at the end of the step
 * exposed, and gathers the same bytes.
 */
class ParamGatherStepTestCase : public TestCase
{
  public:
    ParamGatherStepTestCase()
        : TestCase("ZeRO-1: the overlapped parameter gather hides what the step's end exposed")
    {}

  private:
    void
    DoRun() override
    {
        // Data parallelism over the two nodes (tp 2, dp 8: each gather crosses InfiniBand).
        RunSpec run;
        run.parallel.tp = 2;
        run.parallel.dp = 8;
        run.parallel.zeroStage = 1;
        run.globalBatch = 16;
        run.sequence = 512;
        run.paramGather = "after_step";
        const RunReport atEnd = SmallJob(run)->Run();
        run.paramGather = "overlap";
        const RunReport overlapped = SmallJob(run)->Run();
        NS_TEST_EXPECT_MSG_LT(overlapped.stepTimeS, atEnd.stepTimeS, "the gather is hidden");
        NS_TEST_EXPECT_MSG_GT_OR_EQ(overlapped.stepTimeS,
                                    atEnd.stepTimeS - atEnd.exposedCommS - 1e-12,
                                    "by at most the communication the step's end exposed");
        // The same bytes on the links (their energy counts the bytes sent).
        const double sent = atEnd.nvlinkEnergyJ + atEnd.networkEnergyJ;
        NS_TEST_EXPECT_MSG_GT(atEnd.networkEnergyJ, 0, "the gathers cross the network");
        NS_TEST_EXPECT_MSG_EQ_TOL(
            overlapped.nvlinkEnergyJ + overlapped.networkEnergyJ, sent, 1e-9 * sent, "");
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
        AddTestCase(new CriticalPathTestCase, TestCase::QUICK);
        AddTestCase(new OutputFilesTestCase, TestCase::QUICK);
        AddTestCase(new StagedOutputDirTestCase, TestCase::QUICK);
        AddTestCase(new ZeroBubbleRunTestCase, TestCase::QUICK);
        AddTestCase(new ZeroBubbleVRunTestCase, TestCase::QUICK);
        AddTestCase(new Fp32TrainingTestCase, TestCase::QUICK);
        AddTestCase(new ReplayStateBudgetTestCase, TestCase::QUICK);
        AddTestCase(new InferenceReportTestCase, TestCase::QUICK);
        AddTestCase(new FirstTokenPassTestCase, TestCase::QUICK);
        AddTestCase(new TpReduceTestCase, TestCase::QUICK);
        AddTestCase(new LayoutSweepTestCase, TestCase::QUICK);
        AddTestCase(new MachineSweepTestCase, TestCase::QUICK);
        AddTestCase(new GpuCountSweepTestCase, TestCase::QUICK);
        AddTestCase(new LayoutsEndToEndTestCase, TestCase::QUICK);
        AddTestCase(new UnevenSweepTestCase, TestCase::QUICK);
        AddTestCase(new ContextExpertSweepTestCase, TestCase::QUICK);
        AddTestCase(new DtypeSweepTestCase, TestCase::QUICK);
        AddTestCase(new InstallCollectTestCase, TestCase::QUICK);
        AddTestCase(new InstallMisuseTestCase, TestCase::QUICK);
        AddTestCase(new PacketPreparedStepTestCase, TestCase::QUICK);
        AddTestCase(new HelperFactoriesTestCase, TestCase::QUICK);
        AddTestCase(new JobOptionsTestCase, TestCase::QUICK);
        AddTestCase(new ParamGatherStepTestCase, TestCase::QUICK);
        AddTestCase(new SlowGpuTestCase, TestCase::QUICK);
        AddTestCase(new ScriptMisuseTestCase, TestCase::QUICK);
        AddTestCase(new GpuVariantTestCase, TestCase::QUICK);
    }
};

static HelperTestSuite g_helperTestSuite; //!< registers the suite
