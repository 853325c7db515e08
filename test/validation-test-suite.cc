/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// The published measurements of data/validation/ against the whole model (workload, compute
// model, network, replay): Megatron-LM SC21 Table 1 training iteration times and lmdeploy's
// Llama-2 inference latencies on A100-80GB, ML.ENERGY's Llama-2 energy per token on A100, with
// the a100-sxm-80gb preset and the settings each source states. Each metric must meet the bar
// ValidationSuite::Bars() gives, except bars marked pending (they wait for a mechanism the model
// does not have yet, and say which).

#include "ns3/csv-table.h"
#include "ns3/model-spec.h"
#include "ns3/test.h"
#include "ns3/validation-suite.h"
#include "test-require.h"

#include <cmath>
#include <sstream>

using namespace ns3;
using namespace ns3::rapidllm;

namespace {
/** \return a summary as a test message: its mean and largest error, and the largest's row */
std::string
Describe(const ValidationSummary& s)
{
    std::ostringstream msg;
    msg << "mean " << 100 * s.mean << "%, largest " << 100 * s.worst << "% at " << s.worstLabel;
    return msg.str();
}
} // namespace

/** \brief A validation table: runs it and checks the bars of the metrics it holds. */
class ValidationTestCase : public TestCase
{
  public:
    /**
     * \param name the test's name
     * \param set the table's name, for messages
     */
    ValidationTestCase(const std::string& name, const std::string& set)
        : TestCase(name)
        , m_set(set)
    {}

  protected:
    /** Checks every bar whose metric \p rows hold, naming the worst row when one fails. */
    void
    CheckBars(const std::vector<ValidationRow>& rows)
    {
        uint32_t checked = 0;
        for (const ValidationBar& bar : ValidationSuite::Bars())
        {
            ValidationSummary s = ValidationSuite::Summarize(rows, bar.metric);
            if (s.rows == 0 || !bar.pending.empty())
            {
                continue;
            }
            ++checked;
            std::ostringstream msg;
            msg << m_set << " " << bar.metric << ": mean |error| " << 100 * s.mean << "% (bar "
                << 100 * bar.mean << "%), largest " << 100 * s.worst << "% at " << s.worstLabel
                << " (bar " << 100 * bar.worst << "%)";
            NS_TEST_EXPECT_MSG_LT_OR_EQ(s.mean, bar.mean, msg.str());
            NS_TEST_EXPECT_MSG_LT_OR_EQ(s.worst, bar.worst, msg.str());
        }
        NS_TEST_EXPECT_MSG_GT(checked, 0u, m_set + ": no rows");
    }

  private:
    std::string m_set; //!< the table's name
};

/**
 * \brief Megatron-LM SC21 Table 1: iteration time of all ten rows (32 to 3072 GPUs); each
 * configuration fits in memory (it ran on 80 GB A100s).
 */
class MegatronTable1TestCase : public ValidationTestCase
{
  public:
    MegatronTable1TestCase()
        : ValidationTestCase("Megatron-LM SC21 Table 1 iteration times within the bar",
                             "megatron-sc21")
    {}

  private:
    void
    DoRun() override
    {
        auto rows =
            ValidationSuite::RunTraining(ValidationSuite::DataDir() + "/megatron-sc21-table1.csv");
        RAPIDLLM_REQUIRE_EQ(rows.size(), 10u, "ten rows");
        for (const ValidationRow& row : rows)
        {
            NS_TEST_EXPECT_MSG_EQ(row.fits, true, row.label << " ran on 80 GB but does not fit");
        }
        CheckBars(rows);
    }
};

/** \brief lmdeploy Llama-2 on A100-80GB: first-token latency and time per output token. */
class LmdeployLlama2TestCase : public ValidationTestCase
{
  public:
    LmdeployLlama2TestCase()
        : ValidationTestCase("lmdeploy Llama-2 first-token and per-token latencies within the bars",
                             "lmdeploy")
    {}

  private:
    void
    DoRun() override
    {
        auto rows =
            ValidationSuite::RunInference(ValidationSuite::DataDir() + "/lmdeploy-llama2-a100.csv");
        RAPIDLLM_REQUIRE_EQ(rows.size(), 17u, "11 per-token and 6 first-token rows");
        CheckBars(rows);
    }
};

/**
 * \brief ML.ENERGY's Llama-2 7B/13B energy per response on one A100 (HF transformers, eager,
 * batch 1). Eager PyTorch at batch 1 is launch-bound: with host dispatch the time per token is
 * the host's, within its bar. The energy and power bars wait for the power of a GPU kept awake
 * between kernels (charged at idle); what holds: the energy per token below the measurement
 * and above what the GPU's kernels alone draw over the measured latency at idle power.
 */
class MlEnergyTestCase : public ValidationTestCase
{
  public:
    MlEnergyTestCase()
        : ValidationTestCase("ML.ENERGY Llama-2 latency, energy per token and power on A100",
                             "mlenergy")
    {}

  private:
    void
    DoRun() override
    {
        auto rows =
            ValidationSuite::RunEnergy(ValidationSuite::DataDir() + "/mlenergy-llama2-energy.csv");
        RAPIDLLM_REQUIRE_EQ(rows.size(), 16u, "four metrics for each of four responses");
        CheckBars(rows);
        for (std::size_t i = 0; i + 3 < rows.size(); i += 4)
        {
            const ValidationRow& atPredicted = rows[i];
            const ValidationRow& latency = rows[i + 3];
            NS_TEST_ASSERT_MSG_EQ(atPredicted.metric, "energy_per_token_j", "row order");
            NS_TEST_ASSERT_MSG_EQ(latency.metric, "latency_per_token_s", "row order");
            std::ostringstream msg;
            msg << atPredicted.label << ": " << atPredicted.predicted << " J/token predicted, "
                << atPredicted.published << " measured";
            NS_TEST_EXPECT_MSG_GT(atPredicted.predicted, 0.0, msg.str());
            NS_TEST_EXPECT_MSG_LT(atPredicted.predicted, atPredicted.published, msg.str());
            NS_TEST_EXPECT_MSG_LT(std::fabs(latency.Error()), 0.15, "launch-bound latency");
        }
    }
};

/**
 * \brief XLA's measured NCCL all-reduce and all-gather among 2, 4 and 8 H100 (8 KiB to 1 GiB).
 * Its bar waits (XLA's timing sits 15-40% above what NCCL itself measures on the same
 * hardware, see doc/validation.md); what holds now: the 8-GPU all-gathers of 64 MiB and more
 * (the ring at NCCL's graph bandwidth, one group) within 10% on average, and the 8-GPU
 * all-reduces from 256 MiB running NVLS with a bus bandwidth above the ring's 360 GB/s, as
 * the table's own 372-398 GB/s show.
 */
class XlaCollectivesTestCase : public TestCase
{
  public:
    XlaCollectivesTestCase()
        : TestCase("XLA's H100 NCCL collectives: 8-GPU ring bandwidth and NVLS")
    {}

  private:
    void
    DoRun() override
    {
        auto rows = ValidationSuite::RunCollectives(ValidationSuite::DataDir()
                                                    + "/xla-h100-collectives.csv");
        RAPIDLLM_REQUIRE_EQ(rows.size(), 108u, "2x3 groups x 18 sizes");
        auto large = ValidationSuite::RunCollectives(
            ValidationSuite::DataDir() + "/xla-h100-collectives.csv", 64ull << 20);
        std::vector<ValidationRow> gathers;
        uint32_t reduces = 0;
        for (const auto& r : large)
        {
            if (r.label.find(" 8 GPUs ") == std::string::npos)
            {
                continue;
            }
            if (r.label.rfind("all-gather", 0) == 0)
            {
                gathers.push_back(r);
                continue;
            }
            const double bytes = std::stod(r.label.substr(r.label.find("GPUs ") + 5));
            if (bytes < double(256ull << 20))
            {
                continue;
            }
            // Bus bandwidth 2(n-1)/n x size / time, measured and predicted above the ring's.
            const double predictedBus = 2.0 * 7 / 8 * bytes / r.predicted;
            const double measuredBus = 2.0 * 7 / 8 * bytes / r.published;
            NS_TEST_EXPECT_MSG_GT(measuredBus, 360e9, "the table shows NVLS: " + r.label);
            NS_TEST_EXPECT_MSG_GT(predictedBus, 360e9, "NVLS: " + r.label);
            ++reduces;
        }
        RAPIDLLM_REQUIRE_EQ(gathers.size(), 5u, "all-gathers, 64 MiB to 1 GiB");
        NS_TEST_ASSERT_MSG_EQ(reduces, 3u, "all-reduces, 256 MiB to 1 GiB");
        ValidationSummary s = ValidationSuite::Summarize(gathers, "collective_s");
        NS_TEST_EXPECT_MSG_LT_OR_EQ(
            s.mean, 0.10, "mean " + std::to_string(s.mean) + ", worst " + s.worstLabel);
    }
};

/**
 * \brief nccl-tests' all-reduce on 4x H100 (NCCL 2.26.2), 2 MiB to 1 GiB: NCCL's ring graph,
 * protocols and NVLS against NCCL itself (bar: mean 5%, each 8%; the link-rate ring before
 * was 5.8% / 8.1%).
 */
class NcclTestsH100TestCase : public ValidationTestCase
{
  public:
    NcclTestsH100TestCase()
        : ValidationTestCase("nccl-tests 4x H100 all-reduce from 2 MiB within the bar",
                             "nccl-tests-h100")
    {}

  private:
    void
    DoRun() override
    {
        auto rows = ValidationSuite::RunNcclTests(ValidationSuite::DataDir()
                                                  + "/nccl-tests-h100-4gpu-allreduce.csv");
        RAPIDLLM_REQUIRE_EQ(rows.size(), 10u, "2 MiB to 1 GiB");
        CheckBars(rows);
    }
};

/**
 * \brief nccl-tests on 2-, 4- and 6-GPU slices of one 8x H100 HGX node (NCCL 2.29.2,
 * nccl-tests-h100-hgx-slices.md), 8 KiB to 1 GiB. The table is as published (every row's algbw
 * is size / time and its busbw nccl-tests' factor times algbw). Issue 12's bar (mean 10%) waits
 * (below 1 MiB the host-launch floor, the all-gather's bandwidth); what holds now: the 4-GPU
 * all-reduce from 1 MiB (NCCL's ring graph, LL/LL128/Simple and NVLS) within 5% on average and
 * 12% each (3.8% and 10.4% measured), and the 6-GPU all-reduce (NVLS, as NCCL's log shows)
 * within 5% each (1.2%, 0.4%, 2.4%).
 */
class NcclTestsSlicesTestCase : public TestCase
{
  public:
    NcclTestsSlicesTestCase()
        : TestCase("nccl-tests on H100 HGX slices: the table as published, 4-GPU all-reduce from "
                   "1 MiB and 6-GPU NVLS all-reduce within their bounds")
    {}

  private:
    void
    DoRun() override
    {
        const std::string csv = ValidationSuite::DataDir() + "/nccl-tests-h100-hgx-slices.csv";
        CsvTable t = CsvTable::Load(csv);
        NS_TEST_ASSERT_MSG_EQ(t.Rows(), 80u, "31 + 31 + 18 rows");
        for (std::size_t i = 0; i < t.Rows(); ++i)
        {
            const double size = t.Number(i, "size_bytes");
            if (size == 0)
            {
                continue; // nccl-tests' own 0-byte all-gather rows
            }
            const double n = t.Number(i, "gpus");
            const double factor = t.Text(i, "op") == "all-reduce" ? 2 * (n - 1) / n : (n - 1) / n;
            for (const char* side : {"oop", "ip"})
            {
                const std::string p = side;
                const double algbw = t.Number(i, p + "_algbw_GBps");
                NS_TEST_EXPECT_MSG_EQ_TOL(size / t.Number(i, p + "_time_us") / 1e3,
                                          algbw,
                                          0.011 + 0.002 * algbw,
                                          csv << " row " << i + 1 << " " << p << ": algbw");
                NS_TEST_EXPECT_MSG_EQ_TOL(algbw * factor,
                                          t.Number(i, p + "_busbw_GBps"),
                                          0.011 + 0.002 * algbw * factor,
                                          csv << " row " << i + 1 << " " << p << ": busbw");
            }
        }
        auto rows = ValidationSuite::RunNcclTestsSlices(csv);
        RAPIDLLM_REQUIRE_EQ(rows.size(), 42u, "18 + 18 (4 GPUs), 3 + 3 (2 and 6 GPUs)");
        std::vector<ValidationRow> ar4;
        for (const auto& r : rows)
        {
            NS_TEST_EXPECT_MSG_GT(r.predicted, 0.0, r.label);
            if (r.label.rfind("all-reduce 4 GPUs ", 0) == 0 && r.published > 0
                && std::stoull(r.label.substr(18)) >= (1ull << 20))
            {
                ar4.push_back(r);
            }
            if (r.label.rfind("all-reduce 6 GPUs ", 0) == 0)
            {
                NS_TEST_EXPECT_MSG_LT_OR_EQ(std::fabs(r.Error()), 0.05, r.label);
            }
        }
        RAPIDLLM_REQUIRE_EQ(ar4.size(), 11u, "1 MiB to 1 GiB");
        ValidationSummary s = ValidationSuite::Summarize(ar4, "nccl_tests_hgx_s");
        NS_TEST_EXPECT_MSG_LT_OR_EQ(s.mean, 0.05, Describe(s));
        NS_TEST_EXPECT_MSG_LT_OR_EQ(s.worst, 0.12, Describe(s));
    }
};

/**
 * \brief Published fused attention kernel rates on one H100 (flash-attention-h100.md):
 * FlashAttention-3's figures (2024) and a run of its benchmark in NVIDIA's 26.02 container. The
 * Hopper kernel (FlashAttention-3, cuDNN) must meet its bar (hopper_attention_s); the cuDNN
 * rows of 2026, the kernels Transformer Engine runs in the NeMo rows, each within 20%.
 * FlashAttention-2's bar waits (flash2_kernel_s: its mma.sync kernels on Hopper).
 */
class AttentionKernelsTestCase : public ValidationTestCase
{
  public:
    AttentionKernelsTestCase()
        : ValidationTestCase("fused attention kernels on H100: FlashAttention-3 and cuDNN rates",
                             "flash-attention-h100")
    {}

  private:
    void
    DoRun() override
    {
        auto rows = ValidationSuite::RunAttentionKernels(ValidationSuite::DataDir()
                                                         + "/flash-attention-h100.csv");
        RAPIDLLM_REQUIRE_EQ(rows.size(), 136u, "126 bars of the paper, 10 rates of 2026");
        uint32_t cudnn = 0;
        for (const ValidationRow& r : rows)
        {
            NS_TEST_EXPECT_MSG_GT(r.predicted, 0.0, r.label);
            if (r.label.rfind("ngc-26.02 cudnn ", 0) == 0)
            {
                ++cudnn;
                NS_TEST_EXPECT_MSG_LT_OR_EQ(std::fabs(r.Error()), 0.20, r.label);
            }
        }
        NS_TEST_EXPECT_MSG_EQ(cudnn, 4u, "cuDNN forward and backward, with and without the mask");
        CheckBars(rows);
    }
};

/**
 * \brief NVIDIA's NeMo DGX-H100 FP8 pre-training rows of up to 16 GPUs (Llama-2 7B/13B, Llama-3
 * 8B; nemo-h100-training.md). Its bar (8% / 15%) waits; what holds now with Transformer Engine's
 * FP8 recipe modelled (bf16 attention, norms and LM head, fp8 casts, fp8 GEMM efficiency) and
 * FSDP's prefetch, with cuDNN's attention as Transformer Engine runs it on Hopper (the Hopper
 * kernel: cuDNN's 2026 forward and backward within 7-18%, 8% together, where FlashAttention-2's
 * tiling was 28% slower together):
 * mean within 21%, every row within 29% (19.4% and 27.0% measured, every row fast; 15.1% and
 * 22.1% with FlashAttention-2's tiling; every row was 24-40% fast when every operator ran in fp8).
 */
class NemoH100TestCase : public TestCase
{
  public:
    NemoH100TestCase()
        : TestCase("NeMo DGX-H100 FP8 rows of up to 16 GPUs: mean within 21%, each within 29%")
    {}

  private:
    void
    DoRun() override
    {
        auto rows = ValidationSuite::RunNemoH100(
            ValidationSuite::DataDir() + "/nemo-h100-training.csv", 16);
        RAPIDLLM_REQUIRE_EQ(rows.size(), 5u, "llama2-7b, llama2-13b, llama3-8b x 3 releases");
        for (const ValidationRow& row : rows)
        {
            // Each configuration trained on 80 GB GPUs, so the memory model must fit it (24.07
            // Llama-3-8B fits only with the bf16 gradient sync its script sets).
            NS_TEST_EXPECT_MSG_EQ(row.fits, true, row.label << " ran on 80 GB but does not fit");
        }
        ValidationSummary s = ValidationSuite::Summarize(rows, "h100_step_s");
        NS_TEST_EXPECT_MSG_LT_OR_EQ(s.mean, 0.21, Describe(s));
        NS_TEST_EXPECT_MSG_LT_OR_EQ(s.worst, 0.29, Describe(s));
    }
};

/**
 * \brief The same table's Qwen3-30B-A3B mixture-of-experts rows (nemo-h100-moe): both run with
 * the published layout (EP8 within each stage's 8 data-parallel ranks) and fit on 80 GB. The
 * Qwen3-235B-A22B rows (256 GPUs, EP32 folded over TP2 x DP16) run in `validate` only: about a
 * minute of replay. No accuracy bar: the model is 2.4-2.7x fast on the 30B rows
 * (doc/validation.md, "Stop 28").
 */
class NemoH100MoeTestCase : public TestCase
{
  public:
    NemoH100MoeTestCase()
        : TestCase("NeMo DGX-H100 MoE rows: the Qwen3-30B-A3B layouts run and fit")
    {}

  private:
    void
    DoRun() override
    {
        auto rows = ValidationSuite::RunNemoH100Moe(
            ValidationSuite::DataDir() + "/nemo-h100-training.csv", 16);
        RAPIDLLM_REQUIRE_EQ(rows.size(), 2u, "Qwen3-30B-A3B in 25.11 and 26.02");
        for (const ValidationRow& row : rows)
        {
            NS_TEST_EXPECT_MSG_NE(row.label.find("qwen3-30b-a3b 16 GPUs"), std::string::npos, "");
            NS_TEST_EXPECT_MSG_EQ(row.fits, true, row.label << " ran on 80 GB but does not fit");
            NS_TEST_EXPECT_MSG_GT(row.predicted, 0, row.label);
        }
    }
};

/**
 * \brief MosaicML LLM Foundry's MPT tables (FSDP, BF16; llmfoundry-*-bf16-training.md). Their bars
 * wait (FSDP's framework time, H100 with a 2023 stack: doc/validation.md); what holds now: each
 * MPT preset with the row's position table has exactly the published num_params, every row runs
 * and fits in memory,
 * and the A100 rows of models of 7B and more at up to 4,096 tokens (where neither missing
 * mechanism weighs) are within 10% on average (7.2% measured with MPT's Triton attention).
 */
class FoundryTestCase : public TestCase
{
  public:
    FoundryTestCase()
        : TestCase("LLM Foundry MPT tables: published parameter counts, large A100 rows within 10%")
    {}

  private:
    void
    DoRun() override
    {
        for (const char* gpu : {"a100", "h100"})
        {
            const std::string csv =
                ValidationSuite::DataDir() + "/llmfoundry-" + gpu + "-bf16-training.csv";
            CsvTable t = CsvTable::Load(csv);
            for (std::size_t i = 0; i < t.Rows(); ++i)
            {
                ModelSpec m = ModelSpec::Load(t.Text(i, "model"));
                m.maxSequence = static_cast<uint32_t>(t.Number(i, "seq_len"));
                NS_TEST_EXPECT_MSG_EQ(double(m.ParameterCount()),
                                      t.Number(i, "num_params"),
                                      csv << " row " << i + 1 << ": num_params");
            }
        }
        auto rows = ValidationSuite::RunFoundry(
            ValidationSuite::DataDir() + "/llmfoundry-a100-bf16-training.csv", "a100", 8);
        RAPIDLLM_REQUIRE_EQ(rows.size(), 59u, "the 8-GPU rows");
        std::vector<ValidationRow> large;
        for (const auto& r : rows)
        {
            NS_TEST_EXPECT_MSG_GT(r.predicted, 0.0, r.label);
            NS_TEST_EXPECT_MSG_EQ(r.fits, true, r.label << " ran on 80 GB but does not fit");
            const bool big = r.label.rfind("mpt-7b ", 0) == 0 || r.label.rfind("mpt-13b ", 0) == 0
                             || r.label.rfind("mpt-30b ", 0) == 0;
            const auto seq = std::stoul(r.label.substr(r.label.find(" seq ") + 5));
            if (big && seq <= 4096)
            {
                large.push_back(r);
            }
        }
        RAPIDLLM_REQUIRE_EQ(large.size(), 10u, "7B, 13B and 30B rows of up to 4,096 tokens");
        ValidationSummary s = ValidationSuite::Summarize(large, "a100_bf16_step_s");
        NS_TEST_EXPECT_MSG_LT_OR_EQ(s.mean, 0.10, Describe(s));
    }
};

/** \brief The end-to-end validation suite. */
class ValidationTestSuite : public TestSuite
{
  public:
    ValidationTestSuite()
        : TestSuite("rapid-llm-validation", SYSTEM)
    {
        AddTestCase(new MegatronTable1TestCase, TestCase::QUICK);
        AddTestCase(new LmdeployLlama2TestCase, TestCase::QUICK);
        AddTestCase(new MlEnergyTestCase, TestCase::QUICK);
        AddTestCase(new XlaCollectivesTestCase, TestCase::QUICK);
        AddTestCase(new NcclTestsH100TestCase, TestCase::QUICK);
        AddTestCase(new NcclTestsSlicesTestCase, TestCase::QUICK);
        AddTestCase(new AttentionKernelsTestCase, TestCase::QUICK);
        AddTestCase(new NemoH100TestCase, TestCase::QUICK);
        AddTestCase(new NemoH100MoeTestCase, TestCase::QUICK);
        AddTestCase(new FoundryTestCase, TestCase::QUICK);
    }
};

static ValidationTestSuite g_validationTestSuite; //!< registers the suite
