/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// Validation of the GEMM model against measured A100-SXM4-80GB kernel times of Llama-2
// projections (Vidur's public profiling data, data/validation/vidur-a100-llama2-gemm.csv):
// every row within 12% with the a100-sxm-80gb preset's single calibration, and for the right
// reason (4096-token rows compute bound, 1-token rows HBM bound).

#include "ns3/gpu-compute-model.h"
#include "ns3/hardware-spec.h"
#include "ns3/test.h"

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using namespace ns3;
using namespace ns3::rapidllm;

namespace {
/** One measured row. */
struct MeasuredGemm
{
    std::string label; //!< model/operator/tokens
    uint64_t m;        //!< tokens
    uint64_t n;        //!< output features
    uint64_t k;        //!< input features
    double ms;         //!< measured median kernel time
};

/** Reads the CSV (comment lines start with '#', then a header). */
std::vector<MeasuredGemm>
ReadRows(const std::string& path, std::string& error)
{
    std::vector<MeasuredGemm> rows;
    std::ifstream in(path);
    if (!in)
    {
        error = "cannot open " + path;
        return rows;
    }
    std::string line;
    bool header = false;
    while (std::getline(in, line))
    {
        if (line.empty() || line[0] == '#')
        {
            continue;
        }
        if (!header)
        {
            header = true;
            if (line != "model,operator,vidur_column,tokens,m,n,k,measured_ms")
            {
                error = "unexpected header: " + line;
                return rows;
            }
            continue;
        }
        std::vector<std::string> f;
        std::stringstream ss(line);
        std::string cell;
        while (std::getline(ss, cell, ','))
        {
            f.push_back(cell);
        }
        if (f.size() != 8)
        {
            error = "bad row: " + line;
            return rows;
        }
        rows.push_back({f[0] + "/" + f[1] + "/" + f[3] + " tokens",
                        std::stoull(f[4]),
                        std::stoull(f[5]),
                        std::stoull(f[6]),
                        std::stod(f[7])});
    }
    return rows;
}
} // namespace

/** \brief Each Vidur row is predicted within 12% with one A100 calibration. */
class VidurA100GemmTestCase : public TestCase
{
  public:
    VidurA100GemmTestCase()
        : TestCase("Llama-2 projection GEMMs on A100-80GB within 12% of Vidur's measurements")
    {}

  private:
    void
    DoRun() override
    {
        std::string error;
        auto rows = ReadRows(std::string(RAPIDLLM_SOURCE_DIR)
                                 + "/data/validation/vidur-a100-llama2-gemm.csv",
                             error);
        NS_TEST_ASSERT_MSG_EQ(error, "", "reading the validation data");
        NS_TEST_ASSERT_MSG_EQ(rows.size(), 8u, "eight measured rows");
        Ptr<GpuComputeModel> model = CreateObject<GpuComputeModel>();
        model->SetGpu(HardwareSpec::Load("a100-sxm-80gb").gpu);
        double sumAbs = 0;
        for (const auto& r : rows)
        {
            OperatorCost c = model->Gemm(r.m, r.n, r.k, DataType::BF16);
            double predicted = c.timeS * 1e3;
            double err = predicted / r.ms - 1;
            sumAbs += std::fabs(err);
            std::ostringstream msg;
            msg << r.label << " (" << r.m << "x" << r.n << "x" << r.k << "): predicted "
                << predicted << " ms, measured " << r.ms << " ms, error " << 100 * err << "%";
            NS_TEST_EXPECT_MSG_LT(std::fabs(err), 0.12, msg.str());
            // Right for the right reason.
            BoundLevel expected = r.m >= 1024 ? BoundLevel::COMPUTE : BoundLevel::HBM;
            NS_TEST_EXPECT_MSG_EQ(c.bound, expected, r.label + " bounding level");
        }
        NS_TEST_ASSERT_MSG_LT(sumAbs / rows.size(), 0.10, "mean absolute error");
    }
};

/** \brief The validation suite. */
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
