/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// The GEMM model against measured kernel times of Llama-2 projections (Vidur's public profiling
// data). A100-SXM4-80GB (data/validation/vidur-a100-llama2-gemm.csv): the Llama-2-7B rows set the
// preset's tensor and HBM efficiencies, the Llama-2-70B rows are held out. H100-SXM5-80GB
// (vidur-h100-llama2-gemm.csv): no row sets anything. Rows must also be right for the right
// reason: 4096-token rows compute bound, 1-token rows HBM bound.

#include "ns3/csv-table.h"
#include "ns3/gpu-compute-model.h"
#include "ns3/hardware-spec.h"
#include "ns3/test.h"

#include <cmath>
#include <sstream>
#include <string>

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
        // H100: nothing fitted (tensor efficiency from a cuBLAS shape search, HBM from a read
        // kernel); every row within 15%, mean 6%.
        AddTestCase(
            new VidurGemmTestCase("vidur-h100-llama2-gemm.csv", "h100-sxm-80gb", 16, 0.15, 0.06),
            TestCase::QUICK);
    }
};

static ComputeValidationTestSuite g_computeValidationTestSuite; //!< registers the suite
