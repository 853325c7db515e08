/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// The published measurements of data/validation/ against the whole model (workload, compute
// model, network, replay): Megatron-LM SC21 Table 1 training iteration times and lmdeploy's
// Llama-2 inference latencies on A100-80GB, with the a100-sxm-80gb preset and the settings each
// source states. Each metric must meet the bar ValidationSuite::Bars() gives.

#include "ns3/test.h"
#include "ns3/validation-suite.h"

#include <sstream>

using namespace ns3;
using namespace ns3::rapidllm;

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
            if (s.rows == 0)
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

/** \brief Megatron-LM SC21 Table 1: iteration time of all ten rows (32 to 3072 GPUs). */
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
        NS_TEST_ASSERT_MSG_EQ(rows.size(), 10u, "ten rows");
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
        NS_TEST_ASSERT_MSG_EQ(rows.size(), 17u, "11 per-token and 6 first-token rows");
        CheckBars(rows);
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
    }
};

static ValidationTestSuite g_validationTestSuite; //!< registers the suite
