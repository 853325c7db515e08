/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// FP8 training as Transformer Engine runs it on Hopper (issue 12, NeMo H100 table): only the
// linear layers' GEMMs run in fp8; their inputs and output gradients are cast to fp8 with a
// transposed copy; weights are cast once per step; everything else stays bf16.

#include "ns3/compute-coster.h"
#include "ns3/gpu-compute-model.h"
#include "ns3/hardware-spec.h"
#include "ns3/test.h"
#include "ns3/workload.h"
#include "test-require.h"

#include <cstring>

using namespace ns3;
using namespace ns3::rapidllm;

namespace {

/** A one-GPU (or tensor-parallel) llama2-7b training step in fp8, micro-batches of 2 x 512. */
RunSpec
Fp8Run(uint32_t tp, uint32_t microBatches)
{
    RunSpec run;
    run.mode = RunMode::TRAINING;
    run.dtype = DataType::FP8;
    run.parallel.tp = tp;
    run.parallel.sequenceParallel = tp > 1;
    run.parallel.zeroStage = 1;
    run.microBatch = 2;
    run.sequence = 512;
    run.globalBatch = run.microBatch * microBatches;
    return run;
}

bool
Is(const WorkNode& n, const char* label)
{
    return std::strcmp(n.label, label) == 0;
}

/**
 * \brief The graph of an fp8 step: linear-layer GEMMs in fp8, the LM head, attention, norms
 * and communication in bf16; per layer and micro-batch four casts in the forward pass (the
 * inputs of QKV, out-projection, fc1 and fc2) and four in the backward pass (their output
 * gradients), of the closed-form sizes; one weight cast per step of every linear weight.
 */
class Fp8GraphTestCase : public TestCase
{
  public:
    Fp8GraphTestCase()
        : TestCase("fp8 recipe: which operators run in fp8, and the casts' closed forms")
    {}

  private:
    void
    DoRun() override
    {
        const ModelSpec model = ModelSpec::Load("llama2-7b");
        const uint32_t tp = 2;
        const uint32_t mbs = 3;
        RunSpec run = Fp8Run(tp, mbs);
        Workload w = Workload::Build(model, run);
        RAPIDLLM_REQUIRE_EQ(w.stages.size(), 1u, "one stage");
        const uint64_t rows = uint64_t(run.microBatch) * run.sequence;
        const uint64_t h = model.hidden;
        const uint64_t hd = h / model.heads;
        const uint64_t heads = model.heads / tp;
        const uint64_t qkvOut = (heads + 2 * (model.kvHeads / tp)) * hd;
        const uint64_t ffn = model.ffn / tp;
        const double forward = double(rows) * (h + heads * hd + h + ffn);
        const double backward = double(rows) * (h + 2 * ffn + h + qkvOut);
        const double weights =
            double(model.layers) * (h * qkvOut + heads * hd * h + h * 2 * ffn + ffn * h);

        double castElements = 0;
        double weightElements = 0;
        uint32_t casts = 0;
        for (const WorkNode& n : w.stages[0].nodes)
        {
            if (n.kind == WorkNodeKind::COLLECTIVE && Is(n, "ag_qkv"))
            {
                NS_TEST_EXPECT_MSG_EQ(n.commBytes, 2 * rows * h, "bf16 all-gather");
            }
            if (n.kind != WorkNodeKind::COMPUTE)
            {
                continue;
            }
            const OperatorDesc& op = w.stages[0].OpOf(n);
            const OpType t = op.type;
            if (t == OpType::FP8_CAST_TRANSPOSE)
            {
                NS_TEST_EXPECT_MSG_EQ(int(op.dtype), int(DataType::BF16), "casts bf16 input");
                const ElementwiseShape& e = op.Elementwise();
                (Is(n, "fp8_weight_cast") ? weightElements : castElements) +=
                    double(e.rows) * e.width;
                casts += Is(n, "fp8_weight_cast") ? 0 : 1;
                continue;
            }
            const bool linear = t == OpType::GEMM && !Is(n, "logits") && !Is(n, "logits_dgrad")
                                && !Is(n, "logits_wgrad");
            NS_TEST_EXPECT_MSG_EQ(
                int(op.dtype), int(linear ? DataType::FP8 : DataType::BF16), n.label);
        }
        const double perLayerMb = model.layers * double(mbs);
        NS_TEST_EXPECT_MSG_EQ(casts, uint32_t(8 * perLayerMb), "8 casts per layer and mb");
        NS_TEST_EXPECT_MSG_EQ_TOL(
            castElements, perLayerMb * (forward + backward), 1e-9 * castElements, "cast elements");
        NS_TEST_EXPECT_MSG_EQ_TOL(weightElements, weights, 1e-9 * weights, "weight cast");

        // Kept for the backward pass: the fp8 (columnwise) copy of each linear layer's input, one
        // byte per element; the attention output in bf16 and fp8.
        auto keptBy = [](const Workload& wl, const char* label)
        {
            for (const WorkNode& n : wl.stages[0].nodes)
            {
                if (n.kind == WorkNodeKind::COMPUTE && Is(n, label))
                {
                    return n.memDelta;
                }
            }
            return int64_t(-1);
        };
        NS_TEST_EXPECT_MSG_EQ(keptBy(w, "qkv"), int64_t(rows / tp * h), "fp8 qkv input (SP)");
        NS_TEST_EXPECT_MSG_EQ(keptBy(w, "fc1"), int64_t(rows / tp * h), "fp8 fc1 input (SP)");
        NS_TEST_EXPECT_MSG_EQ(keptBy(w, "fc2"), int64_t(rows * ffn), "fp8 fc2 input");
        NS_TEST_EXPECT_MSG_EQ(keptBy(w, "proj"), int64_t(3 * rows * heads * hd), "bf16 + fp8");

        // bf16: no casts, the same graph otherwise.
        run.dtype = DataType::BF16;
        Workload b = Workload::Build(model, run);
        NS_TEST_EXPECT_MSG_EQ(keptBy(b, "qkv"), int64_t(2 * rows / tp * h), "bf16 qkv input");
        NS_TEST_EXPECT_MSG_EQ(keptBy(b, "fc2"), int64_t(2 * rows * ffn), "bf16 fc2 input");
        NS_TEST_EXPECT_MSG_EQ(keptBy(b, "proj"), int64_t(2 * rows * heads * hd), "bf16");
        NS_TEST_EXPECT_MSG_EQ(b.stages[0].nodes.size() + 8 * perLayerMb + 1,
                              w.stages[0].nodes.size(),
                              "the casts are the only extra nodes");
        for (const WorkNode& n : b.stages[0].nodes)
        {
            NS_TEST_EXPECT_MSG_EQ((n.kind == WorkNodeKind::COMPUTE
                                   && b.stages[0].OpOf(n).type == OpType::FP8_CAST_TRANSPOSE),
                                  false,
                                  "no cast in bf16");
        }

        // Inference in fp8: fp8 linear GEMMs, no casts (engines fuse them), bf16 KV cache.
        RunSpec inf;
        inf.mode = RunMode::INFERENCE;
        inf.dtype = DataType::FP8;
        inf.batch = 1;
        inf.promptTokens = 16;
        inf.generatedTokens = 2;
        Workload iw = Workload::Build(model, inf);
        for (const WorkNode& n : iw.stages[0].nodes)
        {
            if (n.kind != WorkNodeKind::COMPUTE)
            {
                continue;
            }
            const OperatorDesc& op = iw.stages[0].OpOf(n);
            NS_TEST_EXPECT_MSG_EQ((op.type == OpType::FP8_CAST_TRANSPOSE), false, n.label);
            if (op.type == OpType::DECODE_ATTENTION)
            {
                NS_TEST_EXPECT_MSG_EQ(int(op.dtype), int(DataType::BF16), "bf16 KV cache");
            }
        }
    }
};

/**
 * \brief Costs: a cast reads 2 bytes and writes 2 per element (the fp8 copy and its
 * transpose), a streaming kernel; an fp8 GEMM's main loop issues at tensor_fp8 of the fp8
 * peak (the same tiling in bf16 at tensor of the bf16 peak) and writes a bf16 output.
 */
class Fp8CostTestCase : public TestCase
{
  public:
    Fp8CostTestCase()
        : TestCase("fp8 recipe: cast and fp8 GEMM costs in closed form")
    {}

  private:
    void
    DoRun() override
    {
        GpuSpec g = HardwareSpec::Load("h100-sxm-80gb").gpu;
        NS_TEST_ASSERT_MSG_GT(g.efficiency.tensorFp8, 0.0, "h100 has its fp8 efficiency");
        NS_TEST_EXPECT_MSG_EQ(g.efficiency.Tensor(DataType::FP8), g.efficiency.tensorFp8, "fp8");
        NS_TEST_EXPECT_MSG_EQ(g.efficiency.Tensor(DataType::BF16), g.efficiency.tensor, "bf16");
        g.power = GpuPower(); // no power model: the rated clock, closed forms
        Ptr<GpuComputeModel> model = CreateObject<GpuComputeModel>(g);

        const uint64_t rows = 16384;
        const uint64_t width = 8192;
        OperatorDesc cast =
            MakeElementwise(OpType::FP8_CAST_TRANSPOSE, rows, width, DataType::BF16);
        OperatorCost c = CostOperator(*model, cast);
        const double elements = double(rows) * width;
        NS_TEST_EXPECT_MSG_EQ_TOL(c.hbmBytes, 4 * elements, 1e-6, "2 B read, 2 x 1 B written");
        const double stream = 4 * elements / (g.hbmBandwidthBps * g.efficiency.hbm);
        NS_TEST_EXPECT_MSG_EQ_TOL(
            c.timeS, stream + g.launchOverheadS + g.memoryLatencyS, 1e-12, "a streaming kernel");

        KernelTiling t;
        t.blockM = 128;
        t.blockN = 256;
        t.blockK = 64;
        t.stages = 3;
        const uint64_t m = 8192;
        const uint64_t n = 8192;
        const uint64_t k = 8192;
        OperatorCost f8 = model->GemmWithTiling(m, n, k, DataType::FP8, 1, t);
        OperatorCost b16 = model->GemmWithTiling(m, n, k, DataType::BF16, 1, t);
        const double expected = (g.TensorFlops(DataType::BF16) * g.efficiency.tensor)
                                / (g.TensorFlops(DataType::FP8) * g.efficiency.tensorFp8);
        NS_TEST_EXPECT_MSG_EQ_TOL(f8.computeTimeS / b16.computeTimeS,
                                  expected,
                                  1e-9,
                                  "main loop at tensor_fp8 of the fp8 peak");
        // Compulsory HBM traffic without L2 re-reads: fp8 A and B, bf16 C.
        OperatorCost small = model->GemmWithTiling(1024, 1024, 1024, DataType::FP8, 1, t);
        NS_TEST_EXPECT_MSG_EQ_TOL(small.hbmBytes,
                                  1024.0 * 1024 + 1024.0 * 1024 + 2 * 1024.0 * 1024,
                                  1e-6,
                                  "fp8 operands, bf16 output");
    }
};

/**
 * \brief Current scaling (Transformer Engine's "FP8 current scaling": the tensor is read twice,
 * once for its amax, once for the cast): the same casts as delayed scaling, each with an amax
 * kernel before it that reads the 16-bit values and writes one fp32 amax.
 */
class Fp8CurrentScalingTestCase : public TestCase
{
  public:
    Fp8CurrentScalingTestCase()
        : TestCase("fp8 recipe: current scaling adds one read of every cast tensor")
    {}

  private:
    void
    DoRun() override
    {
        const ModelSpec model = ModelSpec::Load("llama2-7b");
        RunSpec delayed = Fp8Run(2, 2);
        RunSpec current = delayed;
        current.fp8Scaling = "current";
        const Workload d = Workload::Build(model, delayed);
        const Workload c = Workload::Build(model, current);
        RAPIDLLM_REQUIRE_EQ(c.stages[0].nodes.size(), d.stages[0].nodes.size(), "same graph");
        uint32_t casts = 0;
        for (std::size_t i = 0; i < d.stages[0].nodes.size(); ++i)
        {
            const WorkNode& a = d.stages[0].nodes[i];
            const WorkNode& b = c.stages[0].nodes[i];
            if (a.kind != WorkNodeKind::COMPUTE)
            {
                continue;
            }
            const OperatorDesc& aOp = d.stages[0].OpOf(a);
            const OperatorDesc& bOp = c.stages[0].OpOf(b);
            const bool cast = aOp.type == OpType::FP8_CAST_TRANSPOSE;
            casts += cast ? 1 : 0;
            NS_TEST_EXPECT_MSG_EQ(
                int(bOp.type), int(cast ? OpType::FP8_AMAX_CAST_TRANSPOSE : aOp.type), a.label);
            NS_TEST_EXPECT_MSG_EQ((aOp.shape == bOp.shape), true, a.label);
        }
        NS_TEST_EXPECT_MSG_EQ(casts, 8u * model.layers * 2 + 1, "every cast, weights included");

        GpuSpec g = HardwareSpec::Load("h100-sxm-80gb").gpu;
        g.power = GpuPower();
        Ptr<GpuComputeModel> gpu = CreateObject<GpuComputeModel>(g);
        const uint64_t rows = 16384;
        const uint64_t width = 8192;
        const double elements = double(rows) * width;
        OperatorCost one = CostOperator(
            *gpu, MakeElementwise(OpType::FP8_CAST_TRANSPOSE, rows, width, DataType::BF16));
        OperatorCost two = CostOperator(
            *gpu, MakeElementwise(OpType::FP8_AMAX_CAST_TRANSPOSE, rows, width, DataType::BF16));
        NS_TEST_EXPECT_MSG_EQ(two.kernels, one.kernels + 1, "an amax kernel, then the cast");
        NS_TEST_EXPECT_MSG_EQ_TOL(
            two.hbmBytes - one.hbmBytes, 2 * elements + 4, 1e-6, "a second 2-byte read");
        const double amax = (2 * elements + 4) / (g.hbmBandwidthBps * g.efficiency.hbm)
                            + g.launchOverheadS + g.memoryLatencyS;
        NS_TEST_EXPECT_MSG_EQ_TOL(two.timeS - one.timeS, amax, 1e-12, "a streaming kernel");
    }
};

/** \brief The fp8 recipe suite. */
class Fp8RecipeTestSuite : public TestSuite
{
  public:
    Fp8RecipeTestSuite()
        : TestSuite("rapid-llm-fp8-recipe", UNIT)
    {
        AddTestCase(new Fp8GraphTestCase, TestCase::QUICK);
        AddTestCase(new Fp8CostTestCase, TestCase::QUICK);
        AddTestCase(new Fp8CurrentScalingTestCase, TestCase::QUICK);
    }
};

static Fp8RecipeTestSuite g_fp8RecipeTestSuite; //!< registers the suite

} // namespace
