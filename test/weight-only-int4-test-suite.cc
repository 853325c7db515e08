/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// Weight-only int4 (W4A16: GPTQ and AWQ checkpoints, run by Marlin-style kernels): the decoder
// layers' weights in half a byte and a 16-bit scale per 128, dequantized in registers and
// multiplied in fp16; activations, attention and the KV cache stay in fp16.

#include "job-fixtures.h"
#include "ns3/compute-coster.h"
#include "ns3/gpu-compute-model.h"
#include "ns3/hardware-spec.h"
#include "ns3/layer-shapes.h"
#include "ns3/memory-model.h"
#include "ns3/run-spec.h"
#include "ns3/spec-override.h"
#include "ns3/test.h"
#include "ns3/workload.h"
#include "spec-error-check.h"

using namespace ns3;
using namespace ns3::rapidllm;

namespace {

/**
 * \brief An int4 GEMM: its weights (B, k x n) come from HBM at 0.515625 bytes an element, its
 * activations and output in fp16; a decode-sized GEMM, bound by reading the weights, runs
 * 3-4x faster than in fp16 (Marlin's near-ideal speedup to batch 16-32, Frantar et al. 2024),
 * and a large one, bound by the fp16 MMAs with the dequantization beside them, as fast as fp16
 * within a few percent; the multiply's rate and energy are fp16's.
 */
class Int4GemmTestCase : public TestCase
{
  public:
    Int4GemmTestCase()
        : TestCase("int4 weights: GEMM bytes, speedup and fp16 multiply")
    {}

  private:
    void
    DoRun() override
    {
        NS_TEST_EXPECT_MSG_EQ(WeightBytesOf(DataType::INT4), 0.5 + 2.0 / 128, "int4 and scales");
        NS_TEST_EXPECT_MSG_EQ(int(MmaTypeOf(DataType::INT4)), int(DataType::FP16), "fp16 MMAs");
        NS_TEST_EXPECT_MSG_EQ(WeightBytesOf(DataType::BF16), 2.0, "others: their bytes");
        for (const char* preset : {"a100-sxm-80gb", "h100-sxm-80gb"})
        {
            Ptr<GpuComputeModel> gpu = CreateObject<GpuComputeModel>(fixture::RatedGpu(preset));
            const GpuSpec& g = gpu->GetGpu();
            NS_TEST_EXPECT_MSG_EQ(
                g.TensorFlops(DataType::INT4), g.TensorFlops(DataType::FP16), preset);
            // Llama-3 70B's fc1 on one GPU (8,192 x 28,672), 16 decode rows.
            const uint64_t n = 28672;
            const uint64_t k = 8192;
            const OperatorCost half = gpu->Gemm(16, n, k, DataType::FP16);
            const OperatorCost quarter = gpu->Gemm(16, n, k, DataType::INT4);
            const double weights = double(k) * n;
            const double io = 16.0 * (k + n) * 2;
            NS_TEST_EXPECT_MSG_EQ(quarter.bound, BoundLevel::HBM, preset);
            NS_TEST_EXPECT_MSG_GT_OR_EQ(quarter.hbmBytes, weights * 0.515625 + io, "compulsory");
            NS_TEST_EXPECT_MSG_LT(quarter.hbmBytes, weights * 0.515625 * 1.02 + io, "read once");
            NS_TEST_EXPECT_MSG_EQ_TOL(quarter.flops, half.flops, 1.0, "the same multiply");
            const double speedup = half.timeS / quarter.timeS;
            NS_TEST_EXPECT_MSG_GT(speedup, 3.0, preset << ": the weights' bytes bound it");
            NS_TEST_EXPECT_MSG_LT(speedup, 4.0, preset << ": at most the bytes' ratio");
            // A prefill of 8,192 rows: compute bound, the dequantization hidden beside the MMAs.
            const OperatorCost big16 = gpu->Gemm(8192, n, k, DataType::FP16);
            const OperatorCost big4 = gpu->Gemm(8192, n, k, DataType::INT4);
            NS_TEST_EXPECT_MSG_EQ(big4.bound, BoundLevel::COMPUTE, preset);
            NS_TEST_EXPECT_MSG_EQ_TOL(big4.timeS, big16.timeS, 0.05 * big16.timeS, preset);
            NS_TEST_EXPECT_MSG_LT(big4.hbmBytes, big16.hbmBytes, "fewer weight bytes");
        }
    }
};

/**
 * \brief An int4 job: its linear layers' GEMMs are int4, everything else (attention, norms,
 * the LM head, communication, the KV cache) fp16; the memory verdict stores the decoder layers'
 * parameters at 0.515625 bytes and the rest at 2, and names the assumption; training refuses it.
 */
class Int4JobTestCase : public TestCase
{
  public:
    Int4JobTestCase()
        : TestCase("int4 weights: the job's operators, memory and errors")
    {}

  private:
    void
    DoRun() override
    {
        const ModelSpec model = fixture::SmallModel("llama3-8b", 4);
        RunSpec run = fixture::InferenceJob(1, 1, 4, 256, 4);
        run.dtype = DataType::INT4;
        NS_TEST_EXPECT_MSG_EQ(int(run.ActivationType()), int(DataType::FP16), "fp16 activations");
        NS_TEST_EXPECT_MSG_EQ(int(run.KvCacheType()), int(DataType::FP16), "fp16 KV cache");
        const Workload w = Workload::Build(model, run);
        uint32_t int4 = 0;
        for (const WorkNode& n : w.stages[0].nodes)
        {
            if (n.kind != WorkNodeKind::COMPUTE)
            {
                continue;
            }
            const OperatorDesc& op = w.stages[0].OpOf(n);
            const bool linear = op.type == OpType::GEMM && std::string(n.label) != "logits";
            NS_TEST_EXPECT_MSG_EQ(
                int(op.dtype), int(linear ? DataType::INT4 : DataType::FP16), n.label);
            int4 += op.dtype == DataType::INT4 ? 1 : 0;
        }
        // QKV, out-projection, fc1 and fc2 of 4 layers in the prefill and 3 decode steps.
        NS_TEST_EXPECT_MSG_EQ(int4, 4u * 4 * 4, "the linear layers' GEMMs");

        const GpuSpec gpu = HardwareSpec::Load("h100-sxm-80gb").gpu;
        const MemoryReport m = AnalyzeMemory(w, gpu);
        const uint64_t layers = StageLayerParameters(model, run, 0);
        const uint64_t all = StageParameters(model, run, 0);
        NS_TEST_EXPECT_MSG_EQ(m.worst.weights,
                              uint64_t(std::ceil(layers * 0.515625)) + (all - layers) * 2,
                              "int4 layers, fp16 embedding and head");
        NS_TEST_EXPECT_MSG_NE(m.assumption.find("int4 weights (the decoder layers'"),
                              std::string::npos,
                              m.assumption);
        // A draft module (speculative decoding): its layer and projection run int4 GEMMs and
        // are stored in int4 too.
        RunSpec drafted = run;
        drafted.specTokens = 2;
        drafted.specAcceptance = 0.8;
        const LayerShapes shapes(model, drafted);
        const uint64_t draft = shapes.LayerParams(shapes.MtpLayer(0)) + shapes.mtpParams;
        const uint64_t allDrafted = StageParameters(model, drafted, 0);
        NS_TEST_EXPECT_MSG_EQ(AnalyzeMemory(model, drafted, gpu).worst.weights,
                              uint64_t(std::ceil((layers + draft) * 0.515625))
                                  + (allDrafted - layers - draft) * 2,
                              "the draft module in int4 too");
        RunSpec half = run;
        half.dtype = DataType::FP16;
        NS_TEST_EXPECT_MSG_EQ(AnalyzeMemory(Workload::Build(model, half), gpu).worst.kvCache,
                              m.worst.kvCache,
                              "the same fp16 KV cache");

        RunSpec training = fixture::TrainingJob(1, 1, 1, 1, 1);
        training.dtype = DataType::INT4;
        NS_TEST_EXPECT_MSG_EQ(ThrowsWith(
                                  [&]()
                                  {
                                      training.Validate(model, "job.yaml");
                                  },
                                  {"job.yaml", "dtype", "int4 is an inference type"}),
                              true,
                              "no training in int4");
        // A GPU lists no int4 rate: its int4 GEMMs run at fp16's.
        NS_TEST_EXPECT_MSG_EQ(ThrowsWith(
                                  []()
                                  {
                                      HardwareSpec::Load(
                                          "h100-sxm-80gb",
                                          {SpecOverride::Parse("gpu.tensor_tflops.int4=2000")});
                                  },
                                  {"tensor_tflops.int4", "unknown field", "fp16"}),
                              true,
                              "no int4 rate key");
    }
};

/** \brief The weight-only int4 tests. */
class WeightOnlyInt4TestSuite : public TestSuite
{
  public:
    WeightOnlyInt4TestSuite()
        : TestSuite("rapid-llm-weight-only-int4", UNIT)
    {
        AddTestCase(new Int4GemmTestCase, TestCase::QUICK);
        AddTestCase(new Int4JobTestCase, TestCase::QUICK);
    }
};

/** The suite's one instance, registered with ns-3's test runner. */
WeightOnlyInt4TestSuite g_weightOnlyInt4TestSuite;

} // namespace
