/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// The GEMM model against measured A100-SXM4-80GB kernel times of Llama-2 projections (Vidur's
// public profiling data, data/validation/vidur-a100-llama2-gemm.csv). The Llama-2-7B rows set
// the a100-sxm-80gb preset's tensor and HBM efficiencies; the Llama-2-70B rows are held out.
// Every row must come within 6%, and for the right reason (4096-token rows compute bound,
// 1-token rows HBM bound): the tile model has to carry the shapes, not the calibration.

#include "ns3/csv-table.h"
#include "ns3/gpu-compute-model.h"
#include "ns3/hardware-spec.h"
#include "ns3/test.h"

#include <cmath>
#include <sstream>
#include <string>

using namespace ns3;
using namespace ns3::rapidllm;

/** \brief Each Vidur row, calibration or held out, is predicted within 6%. */
class VidurA100GemmTestCase : public TestCase
{
  public:
    VidurA100GemmTestCase()
        : TestCase("Llama-2 projection GEMMs on A100-80GB within 6% of Vidur's measurements")
    {}

  private:
    void
    DoRun() override
    {
        CsvTable t = CsvTable::Load(std::string(RAPIDLLM_SOURCE_DIR)
                                    + "/data/validation/vidur-a100-llama2-gemm.csv");
        NS_TEST_ASSERT_MSG_EQ(t.Rows(), 12u, "twelve measured rows");
        Ptr<GpuComputeModel> model = CreateObject<GpuComputeModel>();
        model->SetGpu(HardwareSpec::Load("a100-sxm-80gb").gpu);
        double sumHeldOut = 0;
        uint32_t heldOut = 0;
        for (std::size_t i = 0; i < t.Rows(); ++i)
        {
            const auto m = static_cast<uint64_t>(t.Number(i, "m"));
            const auto n = static_cast<uint64_t>(t.Number(i, "n"));
            const auto k = static_cast<uint64_t>(t.Number(i, "k"));
            const double measured = t.Number(i, "measured_ms");
            const std::string label = t.Text(i, "model") + "/" + t.Text(i, "operator") + "/"
                                      + t.Text(i, "tokens") + " tokens";
            OperatorCost c = model->Gemm(m, n, k, DataType::BF16);
            const double predicted = c.timeS * 1e3;
            const double err = predicted / measured - 1;
            if (t.Text(i, "role") == "held_out")
            {
                sumHeldOut += std::fabs(err);
                ++heldOut;
            }
            std::ostringstream msg;
            msg << label << " (" << m << "x" << n << "x" << k << "): predicted " << predicted
                << " ms, measured " << measured << " ms, error " << 100 * err << "%";
            NS_TEST_EXPECT_MSG_LT(std::fabs(err), 0.06, msg.str());
            BoundLevel expected = m >= 1024 ? BoundLevel::COMPUTE : BoundLevel::HBM;
            NS_TEST_EXPECT_MSG_EQ(c.bound, expected, label + " bounding level");
        }
        NS_TEST_ASSERT_MSG_EQ(heldOut, 5u, "five held-out rows");
        NS_TEST_EXPECT_MSG_LT(sumHeldOut / heldOut, 0.04, "held-out mean absolute error");
    }
};

/** \brief The compute validation suite. */
class ComputeValidationTestSuite : public TestSuite
{
  public:
    ComputeValidationTestSuite()
        : TestSuite("rapid-llm-compute-validation", UNIT)
    {
        AddTestCase(new VidurA100GemmTestCase, TestCase::QUICK);
    }
};

static ComputeValidationTestSuite g_computeValidationTestSuite; //!< registers the suite
