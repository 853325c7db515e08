/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// The GEMM model against measured kernel times. Vidur's Llama-2 projection profiles, run under
// sustained load (20 layers back to back on every GPU of a node): A100-SXM4-80GB
// (data/validation/vidur-a100-llama2-gemm.csv): the Llama-2-7B rows set the preset's per-clock
// tensor and HBM efficiencies, the Llama-2-70B rows are held out; H100-SXM5-80GB
// (vidur-h100-llama2-gemm.csv): no row sets anything. Rows must also be right for the right
// reason: 4096-token rows compute bound, 1-token rows HBM bound. XLA's H100 GEMM table
// (xla-h100-gemm-sweep.csv, 375 shapes, short bursts at the boost clock): nothing fitted. And
// the published matmul rates and clocks of the hardware presets' sources that no value was
// fitted to.

#include "ns3/csv-table.h"
#include "ns3/gpu-compute-model.h"
#include "ns3/hardware-spec.h"
#include "ns3/test.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>
#include <string>
#include <vector>

using namespace ns3;
using namespace ns3::rapidllm;

/** \brief One GPU's profiled GEMMs: every row within a bound, the unfitted rows' mean too. */
class VidurGemmTestCase : public TestCase
{
  public:
    /**
     * \param csv file under data/validation
     * \param preset the hardware preset
     * \param rows rows the file holds
     * \param rowBound bound on every row's |error|
     * \param meanBound bound on the mean |error| of the rows not used for calibration
     */
    VidurGemmTestCase(const std::string& csv,
                      const std::string& preset,
                      uint32_t rows,
                      double rowBound,
                      double meanBound)
        : TestCase("Llama-2 projection GEMMs on " + preset + " against Vidur's profiles")
        , m_csv(csv)
        , m_preset(preset)
        , m_rows(rows)
        , m_rowBound(rowBound)
        , m_meanBound(meanBound)
    {}

  private:
    void
    DoRun() override
    {
        CsvTable t = CsvTable::Load(std::string(RAPIDLLM_SOURCE_DIR) + "/data/validation/" + m_csv);
        NS_TEST_ASSERT_MSG_EQ(t.Rows(), m_rows, "rows in " + m_csv);
        Ptr<GpuComputeModel> model = CreateObject<GpuComputeModel>();
        model->SetGpu(HardwareSpec::Load(m_preset).gpu);
        model->SetClockPolicy(ClockPolicy::SUSTAINED); // Vidur: 20 layers back to back
        double sum = 0;
        uint32_t unfitted = 0;
        for (std::size_t i = 0; i < t.Rows(); ++i)
        {
            const auto m = static_cast<uint64_t>(t.Number(i, "m"));
            const auto n = static_cast<uint64_t>(t.Number(i, "n"));
            const auto k = static_cast<uint64_t>(t.Number(i, "k"));
            const double measured = t.Number(i, "measured_ms");
            const std::string label = t.Text(i, "model") + "/" + t.Text(i, "operator") + "/"
                                      + t.Text(i, "tokens") + " tokens";
            OperatorCost c = model->Gemm(m, n, k, DataType::FP16);
            const double predicted = c.timeS * 1e3;
            const double err = predicted / measured - 1;
            if (t.Text(i, "role") != "calibration")
            {
                sum += std::fabs(err);
                ++unfitted;
            }
            std::ostringstream msg;
            msg << m_preset << " " << label << " (" << m << "x" << n << "x" << k << "): predicted "
                << predicted << " ms, measured " << measured << " ms, error " << 100 * err << "%";
            NS_TEST_EXPECT_MSG_LT(std::fabs(err), m_rowBound, msg.str());
            BoundLevel expected = m >= 1024 ? BoundLevel::COMPUTE : BoundLevel::HBM;
            NS_TEST_EXPECT_MSG_EQ(c.bound, expected, label + " bounding level");
        }
        NS_TEST_ASSERT_MSG_GT(unfitted, 0u, "rows not used for calibration");
        NS_TEST_EXPECT_MSG_LT(sum / unfitted, m_meanBound, m_preset + " mean absolute error");
    }

    std::string m_csv;    //!< data file
    std::string m_preset; //!< hardware preset
    uint32_t m_rows;      //!< rows expected
    double m_rowBound;    //!< per-row bound
    double m_meanBound;   //!< mean bound over the rows not used for calibration
};

/**
 * \brief XLA's H100 GEMM table: 375 batched bf16 GEMMs (b in {1, 2, 4}, m, n, k in 256..4096),
 * each measured as the median CUPTI kernel time of ten executions after one warm-up: short
 * bursts, so the model runs at the boost clock. Nothing of the h100-sxm-80gb preset comes from
 * this table. Bars set before the comparison: mean |error| at most 10% over all shapes and 5%
 * over the compute-bound ones (measured 64 us or more); the message names each time class.
 */
class XlaGemmSweepTestCase : public TestCase
{
  public:
    XlaGemmSweepTestCase()
        : TestCase("XLA's 375-shape H100 GEMM table at the boost clock")
    {}

  private:
    void
    DoRun() override
    {
        CsvTable t = CsvTable::Load(std::string(RAPIDLLM_SOURCE_DIR)
                                    + "/data/validation/xla-h100-gemm-sweep.csv");
        NS_TEST_ASSERT_MSG_EQ(t.Rows(), 375u, "rows in xla-h100-gemm-sweep.csv");
        Ptr<GpuComputeModel> model = CreateObject<GpuComputeModel>();
        model->SetGpu(HardwareSpec::Load("h100-sxm-80gb").gpu);
        model->SetClockPolicy(ClockPolicy::BOOST);
        // Classes by measured kernel time: the launch floor, small, medium, compute bound.
        const std::vector<std::pair<double, std::string>> classes{
            {8, "under 8 us"}, {16, "8-16 us"}, {64, "16-64 us"}, {1e9, "64 us and more"}};
        std::map<std::string, std::pair<double, uint32_t>> byClass;
        double sum = 0;
        double worst = 0;
        std::string worstShape;
        for (std::size_t i = 0; i < t.Rows(); ++i)
        {
            const auto b = static_cast<uint64_t>(t.Number(i, "b"));
            const auto m = static_cast<uint64_t>(t.Number(i, "m"));
            const auto n = static_cast<uint64_t>(t.Number(i, "n"));
            const auto k = static_cast<uint64_t>(t.Number(i, "k"));
            const double measured = t.Number(i, "bf16_time_us");
            OperatorCost c = model->Gemm(m, n, k, DataType::BF16, b);
            NS_TEST_EXPECT_MSG_EQ(
                c.clockHz, model->GetGpu().power.boostClockHz, "boost clock in a short burst");
            const double err = c.timeS * 1e6 / measured - 1;
            sum += std::fabs(err);
            if (std::fabs(err) > worst)
            {
                worst = std::fabs(err);
                std::ostringstream shape;
                shape << b << "x" << m << "x" << n << "x" << k;
                worstShape = shape.str();
            }
            for (const auto& cl : classes)
            {
                if (measured < cl.first)
                {
                    byClass[cl.second].first += std::fabs(err);
                    byClass[cl.second].second++;
                    break;
                }
            }
        }
        std::ostringstream msg;
        msg << "mean |error| " << 100 * sum / t.Rows() << "%, largest " << 100 * worst << "% ("
            << worstShape << ");";
        for (const auto& cl : classes)
        {
            const auto& c = byClass[cl.second];
            msg << " " << cl.second << ": " << c.second << " shapes, mean "
                << 100 * c.first / std::max<uint32_t>(1, c.second) << "%;";
        }
        NS_TEST_EXPECT_MSG_LT_OR_EQ(sum / t.Rows(), 0.10, msg.str());
        const auto& big = byClass["64 us and more"];
        NS_TEST_ASSERT_MSG_GT(big.second, 0u, "compute-bound shapes");
        NS_TEST_EXPECT_MSG_LT_OR_EQ(big.first / big.second, 0.05, msg.str());
    }
};

/**
 * \brief Published matmul rates and clocks that no preset value was fitted to: the best shape
 * of a newer MAMF search on H100 (794.5 TFLOP/s at 2048x2048x13312, a burst), H100's sustained
 * 4096^3 rate and clock at its power limit (743 TFLOP/s at 1792 MHz, MSMF; its power sets the
 * energy per FLOP, not the rate), and the clock NVIDIA rates A100 at for dense tensor work at
 * its power limit (1305 MHz, HPL); H200's (the same die) bf16 burst and sustained rate; in fp8,
 * H200's sustained rate and clock (1354 TFLOP/s at 1767-1848 MHz, MSMF: the fit of tensor_fp8,
 * within 2%; its power sets the fp8 energy per FLOP), H200's fp8 burst (1525) and H100's best
 * fp8 MAMF shape (1402.6, within 8%: the model's fp8 tiles are shared-memory bound there). Each
 * within 5% unless stated.
 */
class PublishedMatmulTestCase : public TestCase
{
  public:
    PublishedMatmulTestCase()
        : TestCase("published max-achievable and sustained matmul rates and clocks")
    {}

  private:
    void
    DoRun() override
    {
        struct Figure
        {
            const char* what;
            const char* preset;
            ClockPolicy policy;
            uint64_t m;
            uint64_t n;
            uint64_t k;
            double tflops; //!< 0: not checked
            double mhz;    //!< 0: not checked
            DataType type;
            double tolerance = 0.05; //!< on the rate and the clock
        };

        const Figure figures[] = {
            {"H100 MAMF (torch 2.7) best shape",
             "h100-sxm-80gb",
             ClockPolicy::BOOST,
             2048,
             2048,
             13312,
             794.5,
             0,
             DataType::BF16,
             0.05},
            {"H100 MSMF 4096^3",
             "h100-sxm-80gb",
             ClockPolicy::SUSTAINED,
             4096,
             4096,
             4096,
             743,
             1792,
             DataType::BF16,
             0.05},
            {"A100 HPL-rated clock, 16384^3",
             "a100-sxm-80gb",
             ClockPolicy::SUSTAINED,
             16384,
             16384,
             16384,
             0,
             1305,
             DataType::BF16,
             0.05},
            // fp8: tensor_fp8 is fitted to H200's sustained fp8 rate (the same die as H100,
            // every GPU of the node busy), whose power also gives the fp8 energy per FLOP: its
            // rate checks the fit, its clock (1767-1848 MHz) the two together.
            {"H200 fp8 MSMF 1536x2816x10240 (the fit)",
             "h200-sxm-141gb",
             ClockPolicy::SUSTAINED,
             1536,
             2816,
             10240,
             1354,
             1808,
             DataType::FP8,
             0.02},
            // Held out: H200's fp8 burst, and H200's bf16 burst and sustained rate (the bf16
            // efficiency is H100's).
            {"H200 fp8 MAMF 1280x16896x16384",
             "h200-sxm-141gb",
             ClockPolicy::BOOST,
             1280,
             16896,
             16384,
             1525,
             0,
             DataType::FP8,
             0.05},
            {"H200 bf16 MAMF 1536x2816x40960",
             "h200-sxm-141gb",
             ClockPolicy::BOOST,
             1536,
             2816,
             40960,
             850,
             0,
             DataType::BF16,
             0.05},
            {"H200 bf16 MSMF 1536x2816x6144",
             "h200-sxm-141gb",
             ClockPolicy::SUSTAINED,
             1536,
             2816,
             6144,
             755,
             1889,
             DataType::BF16,
             0.05},
            // Held out, and out of the model's reach: H100's fp8 MAMF best shape. Its m = 1024
            // rows leave the model's fp8 tiles bound by shared memory and the L2 at 1303
            // TFLOP/s whatever the efficiency; 7.1% below the measurement.
            {"H100 fp8 MAMF (torch 2.7) best shape",
             "h100-sxm-80gb",
             ClockPolicy::BOOST,
             1024,
             9216,
             14336,
             1402.6,
             0,
             DataType::FP8,
             0.08},
        };
        for (const Figure& f : figures)
        {
            Ptr<GpuComputeModel> model = CreateObject<GpuComputeModel>();
            model->SetGpu(HardwareSpec::Load(f.preset).gpu);
            model->SetClockPolicy(f.policy);
            OperatorCost c = model->Gemm(f.m, f.n, f.k, f.type);
            std::ostringstream msg;
            msg << f.what << ": " << c.FlopRate() / 1e12 << " TFLOP/s at " << c.clockHz / 1e6
                << " MHz, " << c.powerW << " W";
            if (f.tflops > 0)
            {
                NS_TEST_EXPECT_MSG_LT(
                    std::fabs(c.FlopRate() / 1e12 / f.tflops - 1), f.tolerance, msg.str());
            }
            if (f.mhz > 0)
            {
                NS_TEST_EXPECT_MSG_LT(
                    std::fabs(c.clockHz / 1e6 / f.mhz - 1), f.tolerance, msg.str());
            }
            if (f.policy == ClockPolicy::SUSTAINED)
            {
                NS_TEST_EXPECT_MSG_LT_OR_EQ(
                    c.powerW, model->GetGpu().power.limitW * (1 + 1e-9), msg.str());
            }
        }
    }
};

/**
 * \brief A power cap against a published pair of boards: Fire-Flyer 2's artifact (An et al.,
 * SC24; github.com/haswelliris/sc_ad A1) times torch's 16384^3 GEMMs on an A100 PCIe 40GB, whose
 * board limit is 250 W, at 220 TFLOP/s fp16 and 107 tf32, against 263 and 131 on a DGX A100
 * (SXM4 40GB, 400 W): 84% and 82%. The model's absolute A100 rate is fitted to Vidur's profiles
 * (about 12% below these), so the ratio is what checks the cap: the power-limited clock with the
 * idle power of the board's measured DVFS curve and an energy per operation by the clock squared,
 * within 5% of each. (The idle board's measured voltage, flat below 1110 MHz, would give 71%.)
 */
class PowerCapRatioTestCase : public TestCase
{
  public:
    PowerCapRatioTestCase()
        : TestCase("an A100 at a 250 W board limit keeps the measured share of its GEMM rate")
    {}

  private:
    void
    DoRun() override
    {
        const struct
        {
            DataType type;
            double capped;   //!< TFLOP/s at 250 W
            double uncapped; //!< TFLOP/s at 400 W
        } pairs[] = {{DataType::FP16, 220, 263}, {DataType::TF32, 107, 131}};
        for (const auto& pair : pairs)
        {
            double rate[2];
            for (int i = 0; i < 2; ++i)
            {
                GpuSpec g = HardwareSpec::Load("a100-sxm-40gb").gpu;
                g.power.limitW = i == 0 ? 250 : 400;
                Ptr<GpuComputeModel> model = CreateObject<GpuComputeModel>(g);
                model->SetClockPolicy(ClockPolicy::SUSTAINED);
                rate[i] = model->Gemm(16384, 16384, 16384, pair.type).FlopRate();
            }
            const double measured = pair.capped / pair.uncapped;
            std::ostringstream msg;
            msg << ToString(pair.type) << ": the model keeps " << rate[0] / rate[1]
                << " of its rate at 250 W, measured " << measured;
            NS_TEST_EXPECT_MSG_LT(std::fabs(rate[0] / rate[1] / measured - 1), 0.05, msg.str());
        }
    }
};

/** \brief The compute validation suite. */
class ComputeValidationTestSuite : public TestSuite
{
  public:
    ComputeValidationTestSuite()
        : TestSuite("rapid-llm-compute-validation", UNIT)
    {
        // A100: 7 calibration rows and 5 held out; every row within 6%, held-out mean 4%.
        AddTestCase(
            new VidurGemmTestCase("vidur-a100-llama2-gemm.csv", "a100-sxm-80gb", 12, 0.06, 0.04),
            TestCase::QUICK);
        // H100: nothing fitted (tensor efficiency from a cuBLAS shape search at the boost clock,
        // HBM from a read kernel); every row within 15%, mean 6%.
        AddTestCase(
            new VidurGemmTestCase("vidur-h100-llama2-gemm.csv", "h100-sxm-80gb", 16, 0.15, 0.06),
            TestCase::QUICK);
        AddTestCase(new XlaGemmSweepTestCase, TestCase::QUICK);
        AddTestCase(new PowerCapRatioTestCase, TestCase::QUICK);
        AddTestCase(new PublishedMatmulTestCase, TestCase::QUICK);
    }
};

static ComputeValidationTestSuite g_computeValidationTestSuite; //!< registers the suite
