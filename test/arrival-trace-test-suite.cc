/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// Recorded arrival traces: this tool's columns and the Azure LLM inference trace's, times made
// relative to the first request and put in order, dates across months, years and time zones,
// and every bad value named by file, column and line.

#include "ns3/arrival-trace.h"
#include "ns3/test.h"
#include "spec-error-check.h"
#include "test-require.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

using namespace ns3;
using namespace ns3::rapidllm;

namespace {

/** \return the path of a new file in the temporary folder holding \p text */
std::string
WriteTrace(const std::string& name, const std::string& text)
{
    const std::filesystem::path path =
        std::filesystem::temp_directory_path()
        / ("rapidllm-trace-" + std::to_string(::getpid()) + "-" + name + ".csv");
    std::ofstream(path) << text;
    return path.string();
}

} // namespace

/**
 * \ingroup rapid-llm-tests
 * \brief Traces read as written: times from the first request, in order, lengths where given,
 * the rate and the means.
 */
class ArrivalTraceReadTestCase : public TestCase
{
  public:
    ArrivalTraceReadTestCase()
        : TestCase("arrival trace: both forms read")
    {}

  private:
    void
    DoRun() override
    {
        // This tool's form, one row out of order, a comment.
        const std::string own = WriteTrace("own",
                                           "# recorded by hand\n"
                                           "arrival_s,prompt,generated\n"
                                           "10.5,100,20\n"
                                           "12.5,300,40\n"
                                           "11.0,200,30\n");
        const ArrivalTrace a = ReadArrivalTrace(own);
        RAPIDLLM_REQUIRE_EQ(a.requests.size(), 3u, "three requests");
        NS_TEST_EXPECT_MSG_EQ(a.format, "arrival_s", "this tool's form");
        NS_TEST_EXPECT_MSG_EQ(a.requests[0].arrivalS, 0.0, "from the first");
        NS_TEST_EXPECT_MSG_EQ_TOL(a.requests[1].arrivalS, 0.5, 1e-12, "in order");
        NS_TEST_EXPECT_MSG_EQ(a.requests[1].prompt, 200u, "its prompt moved with it");
        NS_TEST_EXPECT_MSG_EQ(a.requests[2].generated, 40u, "its generated tokens");
        NS_TEST_EXPECT_MSG_EQ(a.HasLengths(), true, "lengths given");
        NS_TEST_EXPECT_MSG_EQ_TOL(a.RateRps(), 1.0, 1e-12, "two gaps over 2 s");
        NS_TEST_EXPECT_MSG_EQ_TOL(a.MeanPrompt(), 200.0, 1e-12, "mean prompt");
        NS_TEST_EXPECT_MSG_EQ_TOL(a.MeanGenerated(), 30.0, 1e-12, "mean generated");

        // Blanks after the commas (as many writers put them) are not part of the names.
        const std::string spaced =
            WriteTrace("spaced", "arrival_s, prompt, generated\n0, 100, 10\n1, 300, 30\n");
        NS_TEST_EXPECT_MSG_EQ_TOL(
            ReadArrivalTrace(spaced).MeanPrompt(), 200.0, 1e-12, "the lengths of 'a, b' read");

        // Cached prompt tokens per request, as an engine's logs give them.
        const std::string hits = WriteTrace("cached",
                                            "arrival_s,prompt,generated,cached\n"
                                            "0,100,10,60\n"
                                            "1,50,5,0\n");
        const ArrivalTrace c = ReadArrivalTrace(hits);
        NS_TEST_EXPECT_MSG_EQ(c.hasCached, true, "a cached column");
        NS_TEST_EXPECT_MSG_EQ(c.requests[0].cached, 60u, "60 of 100 cached");
        NS_TEST_EXPECT_MSG_EQ_TOL(c.MeanCached(), 30.0, 1e-12, "mean cached");
        NS_TEST_EXPECT_MSG_EQ(a.hasCached, false, "none without the column");

        // Times only, after a byte-order mark.
        const std::string timed = WriteTrace("times",
                                             "\xEF\xBB\xBF"
                                             "arrival_s\n0\n4\n");
        const ArrivalTrace times = ReadArrivalTrace(timed);
        NS_TEST_EXPECT_MSG_EQ(times.HasLengths(), false, "times only");
        NS_TEST_EXPECT_MSG_EQ(times.requests[1].prompt, 0u, "the job's lengths");

        // The Azure form: 100 ns fractions, across midnight, a month's and a leap year's end,
        // and a time zone.
        const std::string azure = WriteTrace("azure",
                                             "TIMESTAMP,ContextTokens,GeneratedTokens\r\n"
                                             "2024-02-28 23:59:59.9000000,4808,10\r\n"
                                             "2024-02-29 00:00:00.1000000,1200,250\r\n"
                                             "2024-03-01T00:00:00Z,50,1\r\n"
                                             "2024-03-01 02:00:00.5+02:00,70,3\r\n");
        const ArrivalTrace z = ReadArrivalTrace(azure);
        RAPIDLLM_REQUIRE_EQ(z.requests.size(), 4u, "four requests");
        NS_TEST_EXPECT_MSG_EQ(z.format, "azure", "the Azure form");
        NS_TEST_EXPECT_MSG_EQ_TOL(z.requests[1].arrivalS, 0.2, 1e-9, "across midnight");
        NS_TEST_EXPECT_MSG_EQ_TOL(z.requests[2].arrivalS, 86400.1, 1e-9, "the leap day");
        NS_TEST_EXPECT_MSG_EQ_TOL(z.requests[3].arrivalS, 86400.6, 1e-9, "two hours east");
        NS_TEST_EXPECT_MSG_EQ(z.requests[0].prompt, 4808u, "ContextTokens");
        NS_TEST_EXPECT_MSG_EQ(z.requests[1].generated, 250u, "GeneratedTokens");
        for (const std::string& path : {own, hits, timed, azure})
        {
            std::filesystem::remove(path);
        }
    }
};

/**
 * \ingroup rapid-llm-tests
 * \brief Bad traces: an error naming the file, the column, the line and what is allowed.
 */
class ArrivalTraceErrorTestCase : public TestCase
{
  public:
    ArrivalTraceErrorTestCase()
        : TestCase("arrival trace: bad input named")
    {}

  private:
    void
    DoRun() override
    {
        struct Bad
        {
            std::string name;
            std::string text;
            std::vector<std::string> mentions;
        };
        for (const Bad& bad : {
                 Bad{"header", "time,prompt\n1,2\n", {"neither arrival_s nor TIMESTAMP"}},
                 Bad{"time",
                     "arrival_s\n1\nsoon\n",
                     {"arrival_s", ":3", "expected a finite number"}},
                 Bad{"nan", "arrival_s\n0\nnan\n", {"arrival_s", ":3", "finite number, got 'nan'"}},
                 Bad{"hex", "arrival_s\n0\n0x1\n", {"arrival_s", ":3", "got '0x1'"}},
                 // Which of two columns of one name a reader takes is a guess: refused.
                 Bad{"twice",
                     "arrival_s,prompt,prompt,generated\n0,1,2,1\n1,1,2,1\n",
                     {"'prompt'", ":1", "names this column twice"}},
                 Bad{"date",
                     "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46,1,1\n"
                     "2023-02-30 00:00:00,1,1\n",
                     {"TIMESTAMP", ":3", "not a date and time", "YYYY-MM-DD"}},
                 Bad{"zero",
                     "arrival_s,prompt,generated\n0,10,1\n1,10,0\n",
                     {"generated", ":3", "from 1"}},
                 Bad{"half", "arrival_s,prompt\n0,10\n1,10\n", {"generated", "no such column"}},
                 Bad{"one", "arrival_s\n5\n", {"holds 1 request ", "two or more"}},
                 Bad{"all cached",
                     "arrival_s,prompt,generated,cached\n0,10,1,9\n1,10,1,10\n",
                     {"cached", ":3", "less 1"}},
                 Bad{"cached alone", "arrival_s,cached\n0,1\n1,1\n", {"cached", "prompt"}},
                 Bad{"together", "arrival_s\n5\n5\n", {"arrival_s", "the same time"}},
                 Bad{"fields", "arrival_s,prompt,generated\n0,1\n", {":2", "fields"}},
                 // A length column under another name would be ignored: refused, with a hint.
                 Bad{"capitals",
                     "arrival_s,Prompt,Generated\n0,10,1\n1,10,1\n",
                     {"'Prompt'", "not a column of an arrivals trace", "did you mean 'prompt'"}},
                 Bad{"vllm names",
                     "arrival_s,prompt_tokens,output_tokens\n0,10,1\n1,10,1\n",
                     {"'prompt_tokens'", "did you mean 'prompt'"}},
             })
        {
            const std::string path = WriteTrace(bad.name, bad.text);
            std::vector<std::string> mentions = bad.mentions;
            mentions.push_back(path);
            NS_TEST_EXPECT_MSG_EQ(ThrowsWith(
                                      [&]
                                      {
                                          ReadArrivalTrace(path);
                                      },
                                      mentions),
                                  true,
                                  bad.name);
            std::filesystem::remove(path);
        }
        NS_TEST_EXPECT_MSG_EQ(ThrowsWith(
                                  []
                                  {
                                      ReadArrivalTrace("/nonexistent/trace.csv");
                                  },
                                  {"/nonexistent/trace.csv", "cannot open"}),
                              true,
                              "no such file");
    }
};

/** \brief Recorded arrival traces. */
class ArrivalTraceTestSuite : public TestSuite
{
  public:
    ArrivalTraceTestSuite()
        : TestSuite("rapid-llm-arrival-trace", UNIT)
    {
        AddTestCase(new ArrivalTraceReadTestCase, TestCase::QUICK);
        AddTestCase(new ArrivalTraceErrorTestCase, TestCase::QUICK);
    }
};

static ArrivalTraceTestSuite g_arrivalTraceTestSuite;
