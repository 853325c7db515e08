/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// The outputs of the real command line: every --json output parses with a strict JSON parser
// and carries values that agree with an independent expectation; the memory object of
// `run --json` is the one `memory --json` prints (byte-identical outputs and --timing:
// cli-determinism-test-suite.cc).

#include "cli-process.h"
#include "ns3/report-json.h"
#include "ns3/test.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>

using namespace ns3;
using namespace ns3::rapidllm;

#ifdef RAPIDLLM_CLI

namespace {

/** A small training job that runs in well under a second. */
const std::vector<std::string> kSmallTraining = {
    "--model=gpt-1.7b", "--gpus=8", "--tp=2", "--pp=2", "--gbs=8", "--seq=1024"};
/** A small inference job. */
const std::vector<std::string> kSmallInference = {
    "--model=llama2-7b", "--mode=inference", "--tp=2", "--batch=4", "--prompt=256", "--gen=16"};

/** \return \p a followed by \p b */
std::vector<std::string>
Cat(std::vector<std::string> a, const std::vector<std::string>& b)
{
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

/** \return whether any key anywhere in \p j contains \p text */
bool
HasKeyWith(const Json& j, const std::string& text)
{
    if (j.is_object())
    {
        for (auto it = j.begin(); it != j.end(); ++it)
        {
            if (it.key().find(text) != std::string::npos || HasKeyWith(it.value(), text))
            {
                return true;
            }
        }
    }
    if (j.is_array())
    {
        for (const auto& e : j)
        {
            if (HasKeyWith(e, text))
            {
                return true;
            }
        }
    }
    return false;
}

/** \return a data folder with the first row of each published table (for a quick validate) */
std::string
SmallValidationData(const std::string& dir)
{
    const std::string data = dir + "/data";
    std::filesystem::create_directories(data);
    for (const char* name : {"megatron-sc21-table1.csv",
                             "lmdeploy-llama2-a100.csv",
                             "mlenergy-llama2-energy.csv",
                             "nemo-h100-training.csv",
                             "xla-h100-collectives.csv"})
    {
        std::ifstream in(std::string(RAPIDLLM_SOURCE_DIR) + "/data/validation/" + name);
        std::ofstream out(data + "/" + name);
        std::string line;
        int kept = 0;
        while (std::getline(in, line) && kept < 2)
        {
            if (!line.empty() && line[0] != '#')
            {
                out << line << "\n";
                ++kept; // the header, then the first row
            }
        }
    }
    return data;
}

} // namespace

/**
 * \brief Each command's --json output is strict JSON (nlohmann::json::parse accepts no NaN,
 * no trailing text), has no wall time by default, and holds values that agree with a second
 * path to the same number.
 */
class CliJsonTestCase : public TestCase
{
  public:
    CliJsonTestCase()
        : TestCase("every --json output parses strictly and agrees with independent values")
    {}

  private:
    /** Runs \p args, checks exit 0 and strict JSON without wall times, and returns it. */
    Json
    JsonOf(const std::vector<std::string>& args, const std::string& dir)
    {
        CliResult r = RunCli(args, dir);
        NS_TEST_EXPECT_MSG_EQ(r.status, 0, Joined(args) + ": " + r.err);
        Json j;
        try
        {
            j = Json::parse(r.out);
        }
        catch (const Json::exception& e)
        {
            NS_TEST_EXPECT_MSG_EQ(true, false, Joined(args) + ": not JSON: " + e.what());
        }
        NS_TEST_EXPECT_MSG_EQ(HasKeyWith(j, "wall"), false, Joined(args) + ": a wall time");
        return j;
    }

    void
    DoRun() override
    {
        const std::string dir = ScratchDir("json");
        // run: the breakdown of the critical rank covers its step.
        Json run = JsonOf(Cat({"run", "--json"}, kSmallTraining), dir);
        const Json& b = run.at("breakdown_s");
        NS_TEST_EXPECT_MSG_EQ_TOL(b.at("compute").get<double>()
                                      + b.at("exposed_communication").get<double>()
                                      + b.at("pipeline_bubble").get<double>(),
                                  run.at("step_time_s").get<double>(),
                                  1e-9 * run.at("step_time_s").get<double>(),
                                  "run: compute + exposed + bubble = step");
        NS_TEST_EXPECT_MSG_EQ(run.at("gpus").get<uint32_t>(), 8, "run: gpus");
        Json inference = JsonOf(Cat({"run", "--json"}, kSmallInference), dir);
        NS_TEST_EXPECT_MSG_LT(inference.at("ttft_s").get<double>(),
                              inference.at("step_time_s").get<double>(),
                              "inference: the first token comes before the last");

        // gemm: the FLOPs are 2 m n k per GEMM.
        Json gemm = JsonOf({"gemm", "--m=1024", "--n=2048", "--k=512", "--batch=3", "--json"}, dir);
        NS_TEST_EXPECT_MSG_EQ(gemm.at("flops").get<double>(),
                              2.0 * 1024 * 2048 * 512 * 3,
                              "gemm: 2 m n k batch FLOPs");
        NS_TEST_EXPECT_MSG_EQ(gemm.at("tile").is_object(), true, "gemm: tile");

        // collective: bus bandwidth = algorithm bandwidth x 2 (n - 1) / n for an all-reduce
        // (nccl-tests' definition), and the links asked for are listed.
        Json coll = JsonOf({"collective",
                            "--hardware=a100-sxm-80gb",
                            "--gpus=8",
                            "--bytes=64MiB",
                            "--links=3",
                            "--json"},
                           dir);
        NS_TEST_EXPECT_MSG_EQ(coll.at("bytes").get<uint64_t>(), 64ull << 20, "collective: bytes");
        NS_TEST_EXPECT_MSG_EQ_TOL(coll.at("bus_bandwidth_GBps").get<double>(),
                                  coll.at("algorithm_bandwidth_GBps").get<double>() * 2 * 7 / 8,
                                  1e-9 * coll.at("bus_bandwidth_GBps").get<double>(),
                                  "collective: bus bandwidth");
        NS_TEST_EXPECT_MSG_EQ_TOL(coll.at("algorithm_bandwidth_GBps").get<double>(),
                                  (64 << 20) / coll.at("time_s").get<double>() / 1e9,
                                  1e-6 * coll.at("algorithm_bandwidth_GBps").get<double>(),
                                  "collective: bytes / time");
        NS_TEST_EXPECT_MSG_EQ(coll.at("most_loaded_links").size(), 3, "collective: 3 links");

        // sweep: one row per layout of 8 GPUs with tp in {1, 2} and pp in {1, 2} (mbs 1).
        Json sweep = JsonOf({"sweep",
                             "--model=gpt-1.7b",
                             "--gpus=8",
                             "--gbs=16",
                             "--seq=1024",
                             "--tp=1,2",
                             "--pp=1,2",
                             "--mbs=1",
                             "--json"},
                            dir);
        NS_TEST_EXPECT_MSG_EQ(sweep.size(), 4, "sweep: 2 x 2 layouts");
        for (const auto& p : sweep)
        {
            NS_TEST_EXPECT_MSG_EQ(p.at("tp").get<uint32_t>() * p.at("pp").get<uint32_t>()
                                      * p.at("dp").get<uint32_t>(),
                                  8,
                                  "sweep: tp x pp x dp = 8");
        }

        // replay of traces the tool wrote: the same step as the run that wrote them.
        const std::string traces = dir + "/traces";
        CliResult t = RunCli(Cat({"trace", "--out=" + traces}, kSmallTraining), dir);
        NS_TEST_EXPECT_MSG_EQ(t.status, 0, t.err);
        Json replay = JsonOf({"replay", "--trace=" + traces + "/trace", "--json"}, dir);
        NS_TEST_EXPECT_MSG_EQ_TOL(replay.at("step_time_s").get<double>(),
                                  run.at("step_time_s").get<double>(),
                                  1e-6 * run.at("step_time_s").get<double>(),
                                  "replay of the written traces = run");

        // validate on the first row of each table: the published values are the tables'.
        Json validate = JsonOf({"validate", "--data=" + SmallValidationData(dir), "--json"}, dir);
        NS_TEST_ASSERT_MSG_GT(validate.size(), 1, "validate: rows");
        NS_TEST_EXPECT_MSG_EQ(validate[0].at("config").get<std::string>().find("gpt-1.7b"),
                              0,
                              "validate: the first training row");
        NS_TEST_EXPECT_MSG_EQ(validate[0].at("published").get<double>(), 3.53, "published");
        NS_TEST_EXPECT_MSG_EQ_TOL(validate[0].at("error").get<double>(),
                                  validate[0].at("predicted").get<double>() / 3.53 - 1,
                                  1e-12,
                                  "validate: error = predicted / published - 1");

        // xval: one small workload on both networks.
        Json xval = JsonOf({"xval", "--quick", "--only=ring-allreduce-8gpu-1MiB", "--json"}, dir);
        NS_TEST_ASSERT_MSG_EQ(xval.size(), 1, "xval: one row");
        const double flow = xval[0].at("flow_s").get<double>();
        const double packet = xval[0].at("packet_s").get<double>();
        NS_TEST_EXPECT_MSG_EQ_TOL(xval[0].at("rel_diff").get<double>(),
                                  (flow - packet) / packet,
                                  1e-12,
                                  "xval: rel_diff = (flow - packet) / packet");

        // A non-finite number never reaches the text: DumpJson writes null.
        const std::string text =
            DumpJson(Json{{"nan", std::nan("")}, {"inf", std::numeric_limits<double>::infinity()}});
        Json parsed = Json::parse(text);
        NS_TEST_EXPECT_MSG_EQ(parsed.at("nan").is_null(), true, text);
        NS_TEST_EXPECT_MSG_EQ(parsed.at("inf").is_null(), true, text);
        std::filesystem::remove_all(dir);
    }
};

/**
 * \brief `run --json` carries the memory verdict as the very object `memory --json` prints
 * (one function writes both): training with a pipeline, inference with a KV cache, and a job
 * that does not fit.
 */
class CliMemoryObjectTestCase : public TestCase
{
  public:
    CliMemoryObjectTestCase()
        : TestCase("the memory object is identical in run --json and memory --json")
    {}

  private:
    void
    DoRun() override
    {
        const std::string dir = ScratchDir("memory");
        const std::vector<std::vector<std::string>> jobs = {
            kSmallTraining,
            Cat(kSmallTraining, {"--recompute=full"}),
            kSmallInference,
            {"--model=gpt3-175b", "--gpus=8", "--tp=8"}, // does not fit
        };
        for (const auto& job : jobs)
        {
            CliResult run = RunCli(Cat({"run", "--json"}, job), dir);
            CliResult memory = RunCli(Cat({"memory", "--json"}, job), dir);
            NS_TEST_ASSERT_MSG_EQ(run.status, 0, run.err);
            NS_TEST_ASSERT_MSG_EQ(memory.status, 0, memory.err);
            const Json fromRun = Json::parse(run.out).at("memory");
            const Json fromMemory = Json::parse(memory.out);
            NS_TEST_EXPECT_MSG_EQ(fromRun.dump(), fromMemory.dump(), Joined(job));
            NS_TEST_EXPECT_MSG_EQ(fromRun.at("feasible").get<bool>(),
                                  Json::parse(run.out).at("feasible").get<bool>(),
                                  "the run's verdict is the memory verdict");
        }
        CliResult big =
            RunCli({"memory", "--json", "--model=gpt3-175b", "--gpus=8", "--tp=8"}, dir);
        NS_TEST_EXPECT_MSG_EQ(
            Json::parse(big.out).at("feasible").get<bool>(), false, "175B on 8 GPUs does not fit");
        std::filesystem::remove_all(dir);
    }
};

/**
 * \brief `run --per-rank` and `replay --per-rank`: every rank's row, the slowest finishing at
 * the step with the report's own breakdown; without the option the JSON has no ranks.
 */
class CliPerRankTestCase : public TestCase
{
  public:
    CliPerRankTestCase()
        : TestCase("--per-rank adds every rank's breakdown, only when asked for")
    {}

  private:
    void
    DoRun() override
    {
        const std::string dir = ScratchDir("per-rank");
        CliResult plain = RunCli(Cat({"run", "--json"}, kSmallTraining), dir);
        NS_TEST_ASSERT_MSG_EQ(plain.status, 0, plain.err);
        NS_TEST_EXPECT_MSG_EQ(Json::parse(plain.out).contains("ranks"), false, "run --json");
        CliResult result = RunCli(Cat({"run", "--json", "--per-rank"}, kSmallTraining), dir);
        NS_TEST_ASSERT_MSG_EQ(result.status, 0, result.err);
        const Json run = Json::parse(result.out);
        const Json& ranks = run.at("ranks");
        NS_TEST_ASSERT_MSG_EQ(ranks.size(), 8u, "one row per GPU");
        const double step = run.at("step_time_s").get<double>();
        double latest = 0;
        for (std::size_t i = 0; i < ranks.size(); ++i)
        {
            const Json& r = ranks.at(i);
            NS_TEST_EXPECT_MSG_EQ(r.at("rank").get<std::size_t>(), i, "by rank");
            const Json& b = r.at("breakdown_s");
            NS_TEST_EXPECT_MSG_EQ_TOL(b.at("compute").get<double>()
                                          + b.at("exposed_communication").get<double>()
                                          + b.at("pipeline_bubble").get<double>(),
                                      r.at("finish_s").get<double>(),
                                      1e-9 * step,
                                      "a rank's breakdown covers its finish");
            latest = std::max(latest, r.at("finish_s").get<double>());
        }
        NS_TEST_EXPECT_MSG_EQ(latest, step, "the slowest rank finishes at the step");
        const Json& critical = ranks.at(run.at("critical_rank").get<std::size_t>());
        NS_TEST_EXPECT_MSG_EQ(critical.at("breakdown_s"), run.at("breakdown_s"), "critical rank");
        // The same job written as traces and replayed gives the same rows.
        CliResult trace = RunCli(Cat({"trace", "--out=" + dir + "/t"}, kSmallTraining), dir);
        NS_TEST_ASSERT_MSG_EQ(trace.status, 0, trace.err);
        CliResult replay =
            RunCli({"replay", "--trace=" + dir + "/t/trace", "--json", "--per-rank"}, dir);
        NS_TEST_ASSERT_MSG_EQ(replay.status, 0, replay.err);
        NS_TEST_EXPECT_MSG_EQ(Json::parse(replay.out).at("ranks"), ranks, "replay --per-rank");
        // Text: a line per rank.
        CliResult text = RunCli(Cat({"run", "--per-rank"}, kSmallTraining), dir);
        NS_TEST_EXPECT_MSG_EQ((text.out.find("per rank:") != std::string::npos), true, "text");
    }
};

/** \brief The outputs of the command line. */
class CliOutputTestSuite : public TestSuite
{
  public:
    CliOutputTestSuite()
        : TestSuite("rapid-llm-cli-output", UNIT)
    {
        AddTestCase(new CliJsonTestCase, TestCase::QUICK);
        AddTestCase(new CliMemoryObjectTestCase, TestCase::QUICK);
        AddTestCase(new CliPerRankTestCase, TestCase::QUICK);
    }
};

static CliOutputTestSuite g_cliOutputTestSuite; //!< registers the suite

#endif // RAPIDLLM_CLI
