/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// Reproducible outputs (issue 14): every command that reports is run twice as a user would run
// it, each time in a fresh process (so address-space layout, hash seeds and allocation order
// differ), and the two outputs must be byte-identical: stdout of run --json, run, memory --json,
// sweep, sweep --json, collective --json, replay --json and validate --quick --json, and every
// file trace and run --out write (the .et files, gzip-compressed or not, comm_groups.json and
// report.json). Nothing reaches stderr unless asked for; wall and CPU time appear only with
// --timing.

#include "cli-process.h"
#include "ns3/report-json.h"
#include "ns3/test.h"

#include <algorithm>
#include <filesystem>

using namespace ns3;
using namespace ns3::rapidllm;

#ifdef RAPIDLLM_CLI

namespace {

/** \return the names of the files in \p dir, sorted */
std::vector<std::string>
FilesIn(const std::string& dir)
{
    std::vector<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(dir))
    {
        names.push_back(entry.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    return names;
}

} // namespace

/**
 * \brief Two runs of each reporting command give byte-identical stdout and nothing on stderr.
 */
class CliSameStdoutTestCase : public TestCase
{
  public:
    CliSameStdoutTestCase()
        : TestCase("two runs of each command print byte-identical output")
    {}

  private:
    void
    DoRun() override
    {
        const ScratchDir scratch("determinism-stdout");
        const std::string dir = scratch.Path();
        const std::vector<std::vector<std::string>> commands = {
            Cat({"run", "--json"}, kSmallTraining),
            Cat({"run", "--json", "--symmetry=false", "--per-rank"}, kSmallTraining),
            Cat({"run"}, kSmallInference),
            Cat({"run", "--json"}, kSmallInference),
            Cat({"memory", "--json"}, kSmallTraining),
            {"sweep", "--model=gpt-1.7b", "--gpus=8", "--gbs=16", "--seq=1024", "--tp=1,2"},
            {"sweep", "--model=gpt-1.7b", "--gpus=8", "--gbs=16", "--seq=1024", "--json"},
            {"collective", "--hardware=a100-sxm-80gb", "--gpus=16", "--links=4", "--json"},
            {"collective",
             "--hardware=h100-sxm-80gb",
             "--gpus=16",
             "--op=all-gather",
             "--fault=gpu0-infiniband.leaf0.0:0.5",
             "--json"},
            {"validate", "--quick", "--json"},
        };
        for (const auto& c : commands)
        {
            const CliResult first = RunCli(c, dir);
            const CliResult second = RunCli(c, dir);
            NS_TEST_EXPECT_MSG_EQ(first.status, 0, Joined(c) + ": " + first.err);
            NS_TEST_EXPECT_MSG_EQ(second.status, 0, Joined(c) + ": " + second.err);
            NS_TEST_EXPECT_MSG_NE(first.out, "", Joined(c));
            NS_TEST_EXPECT_MSG_EQ(first.out, second.out, Joined(c) + ": stdout differs");
            NS_TEST_EXPECT_MSG_EQ(first.err, "", Joined(c) + ": stderr without --timing");
        }
    }
};

/**
 * \brief Two runs of trace (plain and gzip) and of run --out write byte-identical files, and
 * replays of the two trace sets print the same report.
 */
class CliSameFilesTestCase : public TestCase
{
  public:
    CliSameFilesTestCase()
        : TestCase("two runs of trace and run --out write byte-identical files")
    {}

  private:
    /** Checks that \p a and \p b hold the same files, byte for byte; \return how many */
    uint32_t
    CheckSameFiles(const std::string& a, const std::string& b)
    {
        const std::vector<std::string> names = FilesIn(a);
        NS_TEST_EXPECT_MSG_EQ((names == FilesIn(b)), true, a + " and " + b + ": same files");
        for (const auto& name : names)
        {
            const std::string first = ReadText(a + "/" + name);
            NS_TEST_EXPECT_MSG_NE(first, "", a + "/" + name);
            NS_TEST_EXPECT_MSG_EQ((first == ReadText(b + "/" + name)), true, name + " differs");
        }
        return static_cast<uint32_t>(names.size());
    }

    void
    DoRun() override
    {
        const ScratchDir scratch("determinism-files");
        const std::string dir = scratch.Path();
        for (const std::string gzip : {"false", "true"})
        {
            std::vector<std::string> printed;
            for (const char* name : {"a", "b"})
            {
                const std::string out = dir + "/" + gzip + "-" + name;
                const CliResult t =
                    RunCli(Cat({"trace", "--out=" + out, "--gzip=" + gzip}, kSmallTraining), dir);
                NS_TEST_EXPECT_MSG_EQ(t.status, 0, t.err);
                // What trace prints names its folder: compare it with the folder left out.
                std::string text = t.out;
                for (std::size_t at; (at = text.find(out)) != std::string::npos;)
                {
                    text.replace(at, out.size(), "OUT");
                }
                printed.push_back(text);
            }
            NS_TEST_EXPECT_MSG_EQ(printed[0], printed[1], "trace prints the same");
            const std::string a = dir + "/" + gzip + "-a";
            const std::string b = dir + "/" + gzip + "-b";
            NS_TEST_EXPECT_MSG_EQ(CheckSameFiles(a, b), 9, "8 rank traces and the groups");
            const CliResult r1 = RunCli({"replay", "--trace=" + a + "/trace", "--json"}, dir);
            const CliResult r2 = RunCli({"replay", "--trace=" + b + "/trace", "--json"}, dir);
            NS_TEST_EXPECT_MSG_EQ(r1.status, 0, r1.err);
            NS_TEST_EXPECT_MSG_NE(r1.out, "", "replay --json prints");
            // The input echo names the trace set's folder: compare with the folder left out.
            auto withoutFolder = [](std::string text, const std::string& folder)
            {
                for (std::size_t at; (at = text.find(folder)) != std::string::npos;)
                {
                    text.replace(at, folder.size(), "OUT");
                }
                return text;
            };
            NS_TEST_EXPECT_MSG_NE(r1.out.find(a + "/trace"), std::string::npos, "echoes the set");
            NS_TEST_EXPECT_MSG_EQ(withoutFolder(r1.out, a),
                                  withoutFolder(r2.out, b),
                                  "replay --json differs (gzip " + gzip + ")");
        }
        // run --out: the report and the traces it writes.
        for (const char* name : {"run-a", "run-b"})
        {
            const CliResult r =
                RunCli(Cat({"run", "--json", "--out=" + dir + "/" + name}, kSmallTraining), dir);
            NS_TEST_EXPECT_MSG_EQ(r.status, 0, r.err);
        }
        NS_TEST_EXPECT_MSG_GT(CheckSameFiles(dir + "/run-a", dir + "/run-b"), 1, "report.json");
    }
};

/** \brief Wall and CPU time are reported only with --timing. */
class CliTimingTestCase : public TestCase
{
  public:
    CliTimingTestCase()
        : TestCase("--timing adds wall time to the report and wall and CPU time on stderr")
    {}

  private:
    void
    DoRun() override
    {
        const ScratchDir scratch("determinism-timing");
        const std::string dir = scratch.Path();
        const CliResult plain = RunCli(Cat({"run", "--json"}, kSmallTraining), dir);
        NS_TEST_EXPECT_MSG_EQ(plain.out.find("wall"), std::string::npos, "no wall time");
        const CliResult timed = RunCli(Cat({"run", "--json", "--timing"}, kSmallTraining), dir);
        NS_TEST_EXPECT_MSG_EQ(timed.status, 0, timed.err);
        NS_TEST_EXPECT_MSG_GT(Json::parse(timed.out).at("wall_time_s").get<double>(),
                              0.0,
                              "wall_time_s with --timing");
        NS_TEST_EXPECT_MSG_NE(timed.err.find("rapid-llm run: wall "), std::string::npos, timed.err);
        NS_TEST_EXPECT_MSG_NE(timed.err.find(" cpu "), std::string::npos, timed.err);
    }
};

/** \brief Reproducible outputs of the command line. */
class CliDeterminismTestSuite : public TestSuite
{
  public:
    CliDeterminismTestSuite()
        : TestSuite("rapid-llm-cli-determinism", UNIT)
    {
        AddTestCase(new CliSameStdoutTestCase, TestCase::QUICK);
        AddTestCase(new CliSameFilesTestCase, TestCase::QUICK);
        AddTestCase(new CliTimingTestCase, TestCase::QUICK);
    }
};

static CliDeterminismTestSuite g_cliDeterminismTestSuite; //!< registers the suite

#endif // RAPIDLLM_CLI
