/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// Extensions from a shared library: `rapid-llm <command> --load=libvaliant-routing.so` makes
// the Valiant routing policy of examples/plugins/valiant-routing.cc (a subclass and one
// registration line, built as a MODULE library) usable by name, as a researcher's own library.

#include "cli-process.h"
#include "ns3/report-json.h"
#include "ns3/test.h"

#include <filesystem>

using namespace ns3;
using namespace ns3::rapidllm;

#if defined(RAPIDLLM_CLI) && defined(RAPIDLLM_VALIANT_PLUGIN) && defined(RAPIDLLM_THROWING_PLUGIN)

/**
 * \brief The policy is unknown without --load and known with it: run succeeds with it, the
 * collective reports it and runs the same messages on longer (Valiant) paths, and --help
 * lists it among the routing policies.
 */
class CliLoadTestCase : public TestCase
{
  public:
    CliLoadTestCase()
        : TestCase("--load=PLUGIN.so makes a shared library's routing policy usable by name")
    {}

  private:
    void
    DoRun() override
    {
        const ScratchDir scratch("load");
        const std::string dir = scratch.Path();
        const std::string load = std::string("--load=") + RAPIDLLM_VALIANT_PLUGIN;
        const std::vector<std::string> job = {"--model=gpt-1.7b", "--gpus=16", "--tp=8"};

        CliResult without = RunCli({"run", "--model=gpt-1.7b", "--routing=valiant"}, dir);
        NS_TEST_EXPECT_MSG_EQ(without.status, 2, without.err);
        NS_TEST_EXPECT_MSG_NE(without.err.find("option --routing: unknown routing policy "
                                               "'valiant'"),
                              std::string::npos,
                              without.err);

        CliResult run = RunCli(
            {"run", "--model=gpt-1.7b", "--gpus=16", "--tp=8", load, "--routing=valiant"}, dir);
        NS_TEST_EXPECT_MSG_EQ(run.status, 0, run.err);
        NS_TEST_EXPECT_MSG_NE(run.out.find("step time"), std::string::npos, run.out);
        // The plugin does not declare RoutesSymmetrically (its detours hash the message id), so
        // the replay is not folded: the same step as with every rank replayed (folded, it was
        // 31% fast).
        const std::vector<std::string> valiantRun = {
            "run", "--model=gpt-1.7b", "--gpus=16", "--tp=8", load, "--routing=valiant", "--json"};
        CliResult folded = RunCli(valiantRun, dir);
        std::vector<std::string> fullJob = valiantRun;
        fullJob.push_back("--symmetry=false");
        CliResult full = RunCli(fullJob, dir);
        NS_TEST_ASSERT_MSG_EQ(folded.status, 0, folded.err);
        NS_TEST_ASSERT_MSG_EQ(full.status, 0, full.err);
        NS_TEST_EXPECT_MSG_EQ(Json::parse(folded.out).at("step_time_s").get<double>(),
                              Json::parse(full.out).at("step_time_s").get<double>(),
                              "valiant: not folded");

        const std::vector<std::string> collective = {
            "collective", "--hardware=a100-sxm-80gb", "--gpus=16", "--bytes=256MiB", "--json"};
        CliResult base = RunCli(collective, dir);
        std::vector<std::string> withValiant = collective;
        withValiant.insert(withValiant.end(), {load, "--routing=valiant"});
        CliResult valiant = RunCli(withValiant, dir);
        NS_TEST_ASSERT_MSG_EQ(base.status, 0, base.err);
        NS_TEST_ASSERT_MSG_EQ(valiant.status, 0, valiant.err);
        const Json b = Json::parse(base.out);
        const Json v = Json::parse(valiant.out);
        NS_TEST_EXPECT_MSG_EQ(v.at("routing").get<std::string>(), "valiant", valiant.out);
        NS_TEST_EXPECT_MSG_EQ(v.at("messages").get<uint64_t>(),
                              b.at("messages").get<uint64_t>(),
                              "the same algorithm sends the same messages");
        // Through a random intermediate GPU, each message crosses the fabric twice.
        NS_TEST_EXPECT_MSG_GT(v.at("time_s").get<double>(),
                              b.at("time_s").get<double>(),
                              "Valiant's detours take longer than the shortest paths");

        CliResult help = RunCli({"run", load, "--help"}, dir);
        NS_TEST_EXPECT_MSG_EQ(help.status, 0, help.err);
        NS_TEST_EXPECT_MSG_NE(help.out.find("valiant"), std::string::npos, "--help lists it");

        // A bare file name is the one in the current folder (dlopen searched the library
        // path for it: "cannot open shared object file"). A second build of the plugin
        // defines the same type, which the dynamic linker binds to the first's code: refused
        // (its code silently never ran).
        std::filesystem::copy_file(RAPIDLLM_VALIANT_PLUGIN, dir + "/libvaliant-copy.so");
        const std::vector<std::string> small = {
            "collective", "--hardware=a100-sxm-80gb", "--gpus=16", "--bytes=1MiB"};
        const std::string inDir = "cd " + ShellQuote(dir) + " &&";
        CliResult bare =
            RunCli(Cat(small, {"--load=libvaliant-copy.so", "--routing=valiant"}), dir, inDir);
        NS_TEST_EXPECT_MSG_EQ(bare.status, 0, bare.err);
        CliResult twice = RunCli(Cat(small, {load, "--load=libvaliant-copy.so"}), dir, inDir);
        NS_TEST_EXPECT_MSG_EQ(twice.status, 2, twice.err);
        NS_TEST_EXPECT_MSG_NE(twice.err.find("registers 'valiant'"), std::string::npos, twice.err);
        NS_TEST_EXPECT_MSG_NE(twice.err.find("load one of them"), std::string::npos, twice.err);
    }
};

/**
 * \brief An exception thrown inside a loaded extension is an internal error (exit 1) that names
 * the loaded library, so the extension's author knows where to look.
 */
class CliLoadThrowingTestCase : public TestCase
{
  public:
    CliLoadThrowingTestCase()
        : TestCase("an exception from a loaded extension names the library")
    {}

  private:
    void
    DoRun() override
    {
        const ScratchDir scratch("load-throwing");
        const std::string path = RAPIDLLM_THROWING_PLUGIN;
        CliResult r = RunCli({"collective",
                              "--hardware=a100-sxm-80gb",
                              "--gpus=16",
                              "--bytes=1MiB",
                              "--load=" + path,
                              "--routing=throwing"},
                             scratch.Path());
        NS_TEST_EXPECT_MSG_EQ(r.status, 1, r.err);
        NS_TEST_EXPECT_MSG_NE(r.err.find("internal error: throwing-routing: no route table"),
                              std::string::npos,
                              r.err);
        NS_TEST_EXPECT_MSG_NE(r.err.find("extensions loaded: " + path), std::string::npos, r.err);
    }
};

/** \brief Extensions loaded from shared libraries by the command line. */
class CliLoadTestSuite : public TestSuite
{
  public:
    CliLoadTestSuite()
        : TestSuite("rapid-llm-cli-load", UNIT)
    {
        AddTestCase(new CliLoadTestCase, TestCase::QUICK);
        AddTestCase(new CliLoadThrowingTestCase, TestCase::QUICK);
    }
};

static CliLoadTestSuite g_cliLoadTestSuite; //!< registers the suite

#endif // RAPIDLLM_CLI && RAPIDLLM_VALIANT_PLUGIN && RAPIDLLM_THROWING_PLUGIN
