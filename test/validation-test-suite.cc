/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// The published measurements of data/validation/ against the whole model (workload, compute
// model, network, replay): Megatron-LM SC21 Table 1 training iteration times and lmdeploy's
// Llama-2 inference latencies on A100-80GB, ML.ENERGY's Llama-2 energy per token on A100, with
// the a100-sxm-80gb preset and the settings each source states. Each metric must meet the bar
// ValidationSuite::Bars() gives, except bars marked pending (they wait for a mechanism the model
// does not have yet, and say which).

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

/**
 * \brief ML.ENERGY's Llama-2 7B/13B energy per response on one A100 (HF transformers, eager,
 * batch 1). The model has no host dispatch yet, and eager PyTorch at batch 1 is launch-bound,
 * so the energy per token at the predicted time stays below the measurement (the bar waits for
 * host dispatch). What holds now: the average power within its bar; the energy per token below
 * the measurement at the predicted time, and closer to it with the measured latency's idle time.
 */
class MlEnergyTestCase : public ValidationTestCase
{
  public:
    MlEnergyTestCase()
        : ValidationTestCase("ML.ENERGY Llama-2 energy per token and average power on A100",
                             "mlenergy")
    {}

  private:
    void
    DoRun() override
    {
        auto rows =
            ValidationSuite::RunEnergy(ValidationSuite::DataDir() + "/mlenergy-llama2-energy.csv");
        NS_TEST_ASSERT_MSG_EQ(rows.size(), 12u, "three metrics for each of four responses");
        CheckBars(rows);
        for (std::size_t i = 0; i + 2 < rows.size(); i += 3)
        {
            const ValidationRow& atPredicted = rows[i];
            const ValidationRow& atMeasured = rows[i + 1];
            NS_TEST_ASSERT_MSG_EQ(atPredicted.metric, "energy_per_token_j", "row order");
            NS_TEST_ASSERT_MSG_EQ(atMeasured.metric, "energy_at_measured_time_j", "row order");
            std::ostringstream msg;
            msg << atPredicted.label << ": " << atPredicted.predicted << " J/token predicted, "
                << atMeasured.predicted << " with the measured latency, " << atPredicted.published
                << " measured";
            NS_TEST_EXPECT_MSG_GT(atPredicted.predicted, 0.0, msg.str());
            NS_TEST_EXPECT_MSG_LT(atPredicted.predicted, atPredicted.published, msg.str());
            NS_TEST_EXPECT_MSG_GT(atMeasured.predicted, atPredicted.predicted, msg.str());
        }
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
    }
};

static ValidationTestSuite g_validationTestSuite; //!< registers the suite
