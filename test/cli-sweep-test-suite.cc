/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// Sweeps at scale, driven through the real command line: one worker or several give the same
// results.csv; the shards of a sweep merged give the unsharded folder byte for byte; a sweep
// killed midway and resumed gives the same file; every row carries the breakdown and the peak
// memory, and no step time where the layout does not fit; merge names what is missing.

#include "cli-process.h"
#include "ns3/report-json.h"
#include "ns3/sweep-table.h"
#include "ns3/test.h"
#include "test-require.h"

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

using namespace ns3;
using namespace ns3::rapidllm;

#ifdef RAPIDLLM_CLI

namespace {

/** A small sweep: 16 layouts of GPT 1.7B on 8 GPUs, a few of which do not fit. */
const std::vector<std::string> kSweep = {"sweep",
                                         "--model=gpt-1.7b",
                                         "--gpus=8",
                                         "--gbs=128",
                                         "--seq=2048",
                                         "--tp=1,2",
                                         "--pp=1,2",
                                         "--mbs=2,16",
                                         "--recompute=none,full"};

/**
 * The job of the machine and GPU count sweeps: two layouts of GPT 1.7B a machine and count
 * (--hardware and --gpus given by each test).
 */
const std::vector<std::string> kTwoLayouts = {"sweep",
                                              "--model=gpt-1.7b",
                                              "--gbs=64",
                                              "--seq=2048",
                                              "--tp=1,2",
                                              "--pp=1",
                                              "--mbs=2",
                                              "--recompute=selective",
                                              "--workers=2"};

/** \return the number of lines of a file */
std::size_t
Lines(const std::string& path)
{
    const std::string text = ReadText(path);
    return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

} // namespace

/**
 * \ingroup rapid-llm-tests
 * \brief Workers, shards and merge, resume after a kill: the same results.csv each way.
 */
class CliSweepTestCase : public TestCase
{
  public:
    CliSweepTestCase()
        : TestCase("sweep: workers, shards + merge and resume after a kill give the same CSV")
    {}

  private:
    void
    DoRun() override
    {
        const ScratchDir scratch("sweep");
        const std::string dir = scratch.Path();
        // One worker: the reference.
        CliResult one = RunCli(Cat(kSweep, {"--workers=1", "--out=" + dir + "/one"}), dir);
        NS_TEST_ASSERT_MSG_EQ(one.status, 0, one.err);
        const std::string reference = ReadText(dir + "/one/results.csv");
        std::vector<SweepRow> rows = ReadSweepCsv(dir + "/one/results.csv");
        RAPIDLLM_REQUIRE_EQ(rows.size(), 16u, "2 tp x 2 pp x 2 mbs x 2 recompute");
        bool fits = false;
        bool unfit = false;
        for (std::size_t i = 0; i < rows.size(); ++i)
        {
            const SweepRow& r = rows[i];
            fits = fits || r.fits;
            unfit = unfit || !r.fits;
            NS_TEST_EXPECT_MSG_GT(r.peakBytes, 0u, "peak memory in every row");
            if (r.fits)
            {
                NS_TEST_EXPECT_MSG_EQ(unfit, false, "the rows that fit come first");
                NS_TEST_EXPECT_MSG_GT(r.stepTimeS, 0.0, "a step time where it fits");
                NS_TEST_EXPECT_MSG_GT(r.computeS, 0.0, "the compute time");
                NS_TEST_EXPECT_MSG_EQ_TOL(r.computeS + r.exposedCommS + r.bubbleS,
                                          r.stepTimeS,
                                          1e-6 * r.stepTimeS,
                                          "the breakdown adds up to the step (critical rank)");
                if (i > 0 && rows[i - 1].fits)
                {
                    NS_TEST_EXPECT_MSG_GT_OR_EQ(r.stepTimeS, rows[i - 1].stepTimeS, "ranked");
                }
            }
            else
            {
                NS_TEST_EXPECT_MSG_EQ(r.reason.empty(), false, "why it does not fit");
            }
        }
        NS_TEST_EXPECT_MSG_EQ((fits && unfit), true, "layouts that fit and layouts that do not");
        // No step time where the layout does not fit: the timing and energy columns are empty.
        const std::string text = ReadText(dir + "/one/results.csv");
        NS_TEST_EXPECT_MSG_NE(
            text.find(",false,,,,,,,,,"), std::string::npos, "empty timing cells");

        // Three workers: the same bytes.
        CliResult three = RunCli(Cat(kSweep, {"--workers=3", "--out=" + dir + "/three"}), dir);
        NS_TEST_EXPECT_MSG_EQ(three.status, 0, three.err);
        NS_TEST_EXPECT_MSG_EQ(ReadText(dir + "/three/results.csv"), reference, "3 workers");
        // --csv prints the ranked rows as results.csv holds them.
        CliResult csv = RunCli(Cat(kSweep, {"--workers=2", "--csv"}), dir);
        NS_TEST_ASSERT_MSG_EQ(csv.status, 0, csv.err);
        NS_TEST_EXPECT_MSG_EQ(csv.out, reference, "sweep --csv = results.csv");
        NS_TEST_EXPECT_MSG_EQ(three.out, one.out, "the same table");

        // Three shards, merged (in another order): the unsharded folder byte for byte.
        for (const char* shard : {"1/3", "2/3", "3/3"})
        {
            const std::string out = dir + "/shard" + std::string(1, shard[0]);
            CliResult s = RunCli(
                Cat(kSweep, {"--workers=2", "--shard=" + std::string(shard), "--out=" + out}), dir);
            NS_TEST_EXPECT_MSG_EQ(s.status, 0, s.err);
        }
        CliResult partial =
            RunCli({"merge", dir + "/shard1", dir + "/shard3", "--out=" + dir + "/merged"}, dir);
        NS_TEST_EXPECT_MSG_EQ(partial.status, 2, "a shard missing is an input error");
        NS_TEST_EXPECT_MSG_NE(
            partial.err.find("shard(s) 2 of 3 missing"), std::string::npos, partial.err);
        CliResult merged = RunCli({"merge",
                                   dir + "/shard3",
                                   dir + "/shard1",
                                   dir + "/shard2",
                                   "--out=" + dir + "/merged"},
                                  dir);
        NS_TEST_EXPECT_MSG_EQ(merged.status, 0, merged.err);
        NS_TEST_EXPECT_MSG_EQ(ReadText(dir + "/merged/results.csv"), reference, "merged shards");
        NS_TEST_EXPECT_MSG_EQ(ReadText(dir + "/merged/sweep.json"),
                              ReadText(dir + "/one/sweep.json"),
                              "merged inputs");

        // A folder that holds a sweep is not overwritten without --resume.
        CliResult again = RunCli(Cat(kSweep, {"--out=" + dir + "/one"}), dir);
        NS_TEST_EXPECT_MSG_EQ(again.status, 2, "existing sweep");
        NS_TEST_EXPECT_MSG_NE(again.err.find("--resume"), std::string::npos, again.err);
        // Nor resumed with other inputs.
        CliResult other = RunCli({"sweep",
                                  "--model=gpt-1.7b",
                                  "--gpus=8",
                                  "--gbs=64",
                                  "--resume",
                                  "--out=" + dir + "/one"},
                                 dir);
        NS_TEST_EXPECT_MSG_EQ(other.status, 2, "another sweep");
        NS_TEST_EXPECT_MSG_NE(other.err.find("gbs"), std::string::npos, other.err);
        // A longer --tp list also changes the layout count: the option is named, not the count.
        std::vector<std::string> moreTp = kSweep;
        for (auto& a : moreTp)
        {
            a = a == "--tp=1,2" ? "--tp=1,2,4" : a;
        }
        CliResult tp = RunCli(Cat(moreTp, {"--resume", "--out=" + dir + "/one"}), dir);
        NS_TEST_EXPECT_MSG_EQ(tp.status, 2, "another sweep");
        NS_TEST_EXPECT_MSG_NE(tp.err.find("its tp is [1,2]"), std::string::npos, tp.err);

        // Killed midway (SIGKILL, a row cut short as a kill during a write leaves it), then
        // resumed: the same file.
        const std::string killed = dir + "/killed";
        const pid_t pid = StartCli(Cat(kSweep, {"--workers=1", "--out=" + killed}), dir);
        NS_TEST_ASSERT_MSG_GT(pid, 0, "started");
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
        while (Lines(killed + "/results.csv") < 1 + 3
               && std::chrono::steady_clock::now() < deadline)
        {
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        ::kill(pid, SIGKILL);
        WaitCli(pid);
        const std::size_t kept = Lines(killed + "/results.csv") - 1;
        NS_TEST_EXPECT_MSG_GT_OR_EQ(kept, 3u, "rows kept by the kill");
        {
            std::ofstream cut(killed + "/results.csv", std::ios::app);
            cut << "7,2,2,2,1,16,fu";
        }
        CliResult resumed =
            RunCli(Cat(kSweep, {"--workers=2", "--resume", "--out=" + killed}), dir);
        NS_TEST_EXPECT_MSG_EQ(resumed.status, 0, resumed.err);
        NS_TEST_EXPECT_MSG_EQ(ReadText(killed + "/results.csv"), reference, "resumed after kill");

        // Folders written before the sweep had the cp and ep columns, the compute type or the
        // machine and energy resume: their rows read with cp = ep = 1 and the sweep's type and
        // machine (their energy unknown), the file is rewritten in today's columns, the rest
        // appended.
        // \return the first \p count rows of \p text without the fields at \p drop (0-based,
        // all before any quoted field)
        auto cut =
            [](const std::string& text, const std::vector<std::size_t>& drop, std::size_t count)
        {
            std::istringstream lines(text);
            std::string out;
            std::string line;
            for (std::size_t i = 0; i < 1 + count && std::getline(lines, line); ++i)
            {
                std::string kept;
                std::size_t field = 0;
                std::size_t at = 0;
                for (; field <= drop.back(); ++field)
                {
                    const std::size_t comma = line.find(',', at);
                    if (std::find(drop.begin(), drop.end(), field) == drop.end())
                    {
                        kept += line.substr(at, comma + 1 - at);
                    }
                    at = comma + 1;
                }
                out += kept + line.substr(at) + "\n";
            }
            return out;
        };
        auto older = [&](const std::vector<std::size_t>& drop, std::size_t count)
        {
            return cut(reference, drop, count);
        };
        // A file's rows without their energy (which rows from an older folder do not have).
        const std::vector<std::size_t> energy = {22, 23};
        auto withoutEnergy = [&](const std::string& text)
        {
            return cut(text, energy, 1000);
        };
        // Each older format: the columns it lacks (the GPUs are 2, the schedule 9, the split 10
        // and 11, the type 14).
        for (const auto& [name, drop] :
             {std::make_pair(std::string("legacy"),
                             std::vector<std::size_t>{1, 2, 6, 7, 9, 10, 11, 14, 22, 23}),
              std::make_pair(std::string("untyped"),
                             std::vector<std::size_t>{1, 2, 9, 10, 11, 14, 22, 23}),
              std::make_pair(std::string("one-machine"),
                             std::vector<std::size_t>{1, 2, 9, 10, 11, 22, 23}),
              std::make_pair(std::string("unscheduled"), std::vector<std::size_t>{2, 9, 10, 11}),
              std::make_pair(std::string("unsplit"), std::vector<std::size_t>{2, 10, 11})})
        {
            const bool keptEnergy = drop.back() != 23; // the format had the energy columns
            const std::string folder = dir + "/" + name;
            std::filesystem::create_directories(folder);
            std::filesystem::copy_file(dir + "/one/sweep.json", folder + "/sweep.json");
            std::ofstream(folder + "/results.csv", std::ios::binary) << older(drop, 6);
            std::set<uint64_t> kept;
            for (const SweepRow& r : ReadSweepCsv(folder + "/results.csv"))
            {
                kept.insert(r.layout);
            }
            NS_TEST_EXPECT_MSG_EQ(kept.size(), 6u, name + ": old rows read");
            CliResult upgraded =
                RunCli(Cat(kSweep, {"--workers=2", "--resume", "--out=" + folder}), dir);
            NS_TEST_EXPECT_MSG_EQ(upgraded.status, 0, upgraded.err);
            const std::string resumed = ReadText(folder + "/results.csv");
            NS_TEST_EXPECT_MSG_EQ(withoutEnergy(resumed),
                                  withoutEnergy(reference),
                                  name + ": an older folder resumed");
            // The rows it ran have their energy; the older rows not.
            for (const SweepRow& r : ReadSweepCsv(folder + "/results.csv"))
            {
                NS_TEST_EXPECT_MSG_EQ(r.haveEnergy,
                                      (r.fits && (keptEnergy || !kept.count(r.layout))),
                                      "energy where it ran here");
            }
            // A whole older folder merges into today's file.
            const std::string whole = folder + "-whole";
            std::filesystem::create_directories(whole);
            std::filesystem::copy_file(dir + "/one/sweep.json", whole + "/sweep.json");
            std::ofstream(whole + "/results.csv", std::ios::binary) << older(drop, 1000);
            CliResult merged = RunCli({"merge", whole, "--out=" + whole + "-merged"}, dir);
            NS_TEST_EXPECT_MSG_EQ(merged.status, 0, merged.err);
            NS_TEST_EXPECT_MSG_EQ(withoutEnergy(ReadText(whole + "-merged/results.csv")),
                                  withoutEnergy(reference),
                                  name + ": an older folder merged");
        }

        // An interrupt (SIGINT) stops cleanly: exit 130, the rows kept, how to go on.
        const std::string stopped = dir + "/stopped";
        const pid_t p2 = StartCli(Cat(kSweep, {"--workers=1", "--out=" + stopped}), dir);
        while (Lines(stopped + "/results.csv") < 1 + 2
               && std::chrono::steady_clock::now() < deadline)
        {
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        ::kill(p2, SIGINT);
        const int status = WaitCli(p2);
        const std::string err = ReadText(dir + "/stderr.bg.txt");
        if (Lines(stopped + "/results.csv") < 1 + 16)
        {
            NS_TEST_EXPECT_MSG_EQ(status, 130, "interrupted: " + err);
            NS_TEST_EXPECT_MSG_NE(err.find("--resume continues"), std::string::npos, err);
        }
        CliResult finished =
            RunCli(Cat(kSweep, {"--workers=2", "--resume", "--out=" + stopped}), dir);
        NS_TEST_EXPECT_MSG_EQ(finished.status, 0, finished.err);
        NS_TEST_EXPECT_MSG_EQ(
            ReadText(stopped + "/results.csv"), reference, "resumed after SIGINT");
    }
};

/**
 * \ingroup rapid-llm-tests
 * \brief What a sweep's folder is kept from: merge never writes into one of its shards or over
 * another sweep, and a sweep that fails on an input error takes back the folder it started.
 */
class CliSweepFolderTestCase : public TestCase
{
  public:
    CliSweepFolderTestCase()
        : TestCase("merge refuses its inputs and other sweeps as --out; a failed sweep leaves "
                   "nothing")
    {}

  private:
    void
    DoRun() override
    {
        const ScratchDir scratch("sweep-folder");
        const std::string dir = scratch.Path();
        const std::vector<std::string> small = {
            "sweep", "--model=gpt-1.7b", "--gpus=4", "--gbs=8", "--tp=1,2", "--mbs=1"};
        for (const char* shard : {"1", "2"})
        {
            CliResult s = RunCli(Cat(small,
                                     {"--workers=1",
                                      "--shard=" + std::string(shard) + "/2",
                                      "--out=" + dir + "/sh_" + shard}),
                                 dir);
            NS_TEST_ASSERT_MSG_EQ(s.status, 0, s.err);
        }
        const std::string shard1 = ReadText(dir + "/sh_1/results.csv");
        // --out one of the shards (as given, or spelled another way).
        for (const std::string& out : {dir + "/sh_1", dir + "/./sh_2/"})
        {
            CliResult r = RunCli({"merge", dir + "/sh_1", dir + "/sh_2", "--out=" + out}, dir);
            NS_TEST_EXPECT_MSG_EQ(r.status, 2, r.err);
            NS_TEST_EXPECT_MSG_NE(
                r.err.find("option --out"), std::string::npos, "names the option: " + r.err);
            NS_TEST_EXPECT_MSG_NE(
                r.err.find("is one of the folders to merge"), std::string::npos, r.err);
        }
        NS_TEST_EXPECT_MSG_EQ(ReadText(dir + "/sh_1/results.csv"), shard1, "the shard is kept");
        // A folder that holds a sweep (either file) is not overwritten.
        CliResult merged =
            RunCli({"merge", dir + "/sh_1", dir + "/sh_2", "--out=" + dir + "/merged"}, dir);
        NS_TEST_ASSERT_MSG_EQ(merged.status, 0, merged.err);
        const std::string victim = dir + "/victim";
        std::filesystem::create_directories(victim);
        std::ofstream(victim + "/sweep.json") << "{}";
        for (const std::string& out : {dir + "/merged", victim})
        {
            CliResult r = RunCli({"merge", dir + "/sh_1", dir + "/sh_2", "--out=" + out}, dir);
            NS_TEST_EXPECT_MSG_EQ(r.status, 2, r.err);
            NS_TEST_EXPECT_MSG_NE(r.err.find("already holds a sweep"), std::string::npos, r.err);
        }
        NS_TEST_EXPECT_MSG_EQ(ReadText(victim + "/sweep.json"), "{}", "the other sweep is kept");

        // Found by fuzzing: a shard's files changed by hand are errors naming the file (and
        // line), not rows trusted (a step of -1 ranked first), layouts called missing, or an
        // internal error.
        auto copyShard = [&dir](const std::string& name)
        {
            std::filesystem::copy(dir + "/sh_2", dir + "/" + name);
            return dir + "/" + name;
        };
        const std::string shard2 = ReadText(dir + "/sh_2/results.csv");
        const std::size_t firstRow = shard2.find('\n') + 1;
        const std::string row = shard2.substr(firstRow, shard2.find('\n', firstRow) - firstRow);
        std::vector<std::string> cells;
        std::stringstream split(row);
        for (std::string cell; std::getline(split, cell, ',');)
        {
            cells.push_back(cell);
        }
        if (row.back() == ',')
        {
            cells.emplace_back(); // the reason, empty where the layout fits
        }
        auto joined = [](std::vector<std::string> c)
        {
            std::string line;
            for (const std::string& x : c)
            {
                line += (line.empty() ? "" : ",") + x;
            }
            return line;
        };
        struct Broken
        {
            std::string what;   //!< how the copy is broken
            std::string row;    //!< the row put in place of the first (empty: none)
            std::string json;   //!< sweep.json (empty: kept)
            std::string needle; //!< what the error says
        };
        std::vector<std::string> negative = cells;
        negative.at(16) = "-1"; // step_time_s
        std::vector<std::string> notANumber = cells;
        notANumber.at(16) = "nan";
        std::vector<std::string> schedule = cells;
        schedule.at(9) = "gpipe"; // a pipeline schedule the model does not have
        std::vector<std::string> beyond = cells;
        beyond.at(0) = "99999"; // a layout the sweep does not have, in place of one it has
        std::vector<std::string> wide = cells;
        wide.at(24) = "18446744073709551616"; // peak bytes beyond 64 bits
        for (const Broken& b :
             {Broken{"negative", joined(negative), "", "results.csv:2"},
              Broken{"nan", joined(notANumber), "", "not a row of the sweep"},
              Broken{"beyond", joined(beyond), "", "99999 is not a layout of the sweep"},
              Broken{"wide", joined(wide), "", "results.csv:2"},
              Broken{"schedule", joined(schedule), "", "results.csv:2"},
              Broken{"list", "", "[1, 2]", "not a sweep's inputs"}})
        {
            const std::string folder = copyShard("broken-" + b.what);
            if (!b.row.empty())
            {
                std::ofstream(folder + "/results.csv", std::ios::binary)
                    << shard2.substr(0, firstRow) << b.row
                    << shard2.substr(shard2.find('\n', firstRow));
            }
            if (!b.json.empty())
            {
                std::ofstream(folder + "/sweep.json") << b.json;
            }
            CliResult r =
                RunCli({"merge", dir + "/sh_1", folder, "--out=" + dir + "/m-" + b.what}, dir);
            NS_TEST_EXPECT_MSG_EQ(r.status, 2, b.what + ": " + r.err);
            NS_TEST_EXPECT_MSG_NE(r.err.find(b.needle), std::string::npos, b.what + ": " + r.err);
        }
        // Resumed, the same: the file and line named.
        CliResult resumed = RunCli(
            Cat(small,
                {"--workers=1", "--shard=2/2", "--resume", "--out=" + dir + "/broken-negative"}),
            dir);
        NS_TEST_EXPECT_MSG_EQ(resumed.status, 2, resumed.err);
        NS_TEST_EXPECT_MSG_NE(resumed.err.find("results.csv:2"), std::string::npos, resumed.err);

        // A sweep failing on an input error in its first layout (a dead GPU cuts every pair)
        // removes the folder it started, or its files from a folder that was there, so that
        // the same command runs again once fixed.
        const std::vector<std::string> cut = Cat(small, {"--workers=1", "--fault=gpu0"});
        CliResult fresh = RunCli(Cat(cut, {"--out=" + dir + "/fresh"}), dir);
        NS_TEST_EXPECT_MSG_EQ(fresh.status, 2, fresh.err);
        NS_TEST_EXPECT_MSG_NE(fresh.err.find("no path"), std::string::npos, fresh.err);
        NS_TEST_EXPECT_MSG_EQ(std::filesystem::exists(dir + "/fresh"), false, "folder removed");
        std::filesystem::create_directories(dir + "/there");
        std::ofstream(dir + "/there/notes.txt") << "mine";
        CliResult there = RunCli(Cat(cut, {"--out=" + dir + "/there"}), dir);
        NS_TEST_EXPECT_MSG_EQ(there.status, 2, there.err);
        NS_TEST_EXPECT_MSG_EQ(std::filesystem::exists(dir + "/there/results.csv"), false, "");
        NS_TEST_EXPECT_MSG_EQ(std::filesystem::exists(dir + "/there/sweep.json"), false, "");
        NS_TEST_EXPECT_MSG_EQ(ReadText(dir + "/there/notes.txt"), "mine", "the user's file kept");
        CliResult again = RunCli(Cat(small, {"--workers=1", "--out=" + dir + "/there"}), dir);
        NS_TEST_EXPECT_MSG_EQ(again.status, 0, "fixed, it runs: " + again.err);
    }
};

namespace {
/** One layout of a 16-GPU job (TP2 PP2 DP4): a sweep of it has one row. */
const std::vector<std::string> kOneLayout = {"--model=gpt-1.7b",
                                             "--gpus=16",
                                             "--gbs=16",
                                             "--seq=1024",
                                             "--tp=2",
                                             "--pp=2",
                                             "--mbs=1",
                                             "--recompute=full"};
} // namespace

/**
 * \ingroup rapid-llm-tests
 * \brief A sweep with a dead link takes the routing policy that routes around it (--routing,
 * as run takes it; the dead link's error names it): its row is the step `run` predicts for the
 * same layout, faults and routing, and the routing is one of the sweep's inputs.
 */
class CliSweepRoutingTestCase : public TestCase
{
  public:
    CliSweepRoutingTestCase()
        : TestCase("sweep --routing routes every layout, as run --routing does")
    {}

  private:
    void
    DoRun() override
    {
        const ScratchDir scratch("sweep-routing");
        const std::string dir = scratch.Path();
        const std::vector<std::string> job = Cat(kOneLayout, {"--fault=gpu0-nvlink.sw0"});
        // Dimension order has no detour around the dead link; fault-aware has.
        CliResult stuck = RunCli(Cat({"sweep", "--workers=1"}, job), dir);
        NS_TEST_EXPECT_MSG_EQ(stuck.status, 2, stuck.err);
        NS_TEST_EXPECT_MSG_NE(stuck.err.find("--routing"), std::string::npos, stuck.err);
        NS_TEST_EXPECT_MSG_NE(stuck.err.find("s of simulated time: its path needs the dead link"),
                              std::string::npos,
                              stuck.err);
        CliResult sweep = RunCli(
            Cat({"sweep", "--workers=1", "--json", "--routing=fault-aware", "--out=" + dir + "/s"},
                job),
            dir);
        RAPIDLLM_REQUIRE_EQ(sweep.status, 0, sweep.err);
        const Json rows = Json::parse(sweep.out).at("rows");
        RAPIDLLM_REQUIRE_EQ(rows.size(), 1u, sweep.out);
        CliResult run = RunCli(Cat({"run", "--json", "--routing=fault-aware"}, job), dir);
        RAPIDLLM_REQUIRE_EQ(run.status, 0, run.err);
        NS_TEST_EXPECT_MSG_EQ(rows.at(0).at("step_time_s").get<double>(),
                              Json::parse(run.out).at("step_time_s").get<double>(),
                              "the row is run's step");
        const double energy = Json::parse(run.out).at("energy_j").get<double>();
        NS_TEST_EXPECT_MSG_EQ_TOL(rows.at(0).at("energy_j").get<double>(),
                                  energy,
                                  1e-9 * energy,
                                  "and run's energy (to the file's 10 digits)");
        NS_TEST_EXPECT_MSG_EQ(
            Json::parse(ReadText(dir + "/s/sweep.json")).at("routing").get<std::string>(),
            "fault-aware",
            "an input of the sweep");
        CliResult bogus = RunCli(Cat({"sweep", "--workers=1", "--routing=bogus"}, job), dir);
        NS_TEST_EXPECT_MSG_EQ(bogus.status, 2, bogus.err);
        NS_TEST_EXPECT_MSG_NE(bogus.err.find("option --routing: unknown routing policy 'bogus'"),
                              std::string::npos,
                              bogus.err);
    }
};

/**
 * \ingroup rapid-llm-tests
 * \brief What a sweep is: lists in any order, the default granularity or the hardware's routing
 * named are the same sweep (a resume was refused, and the layouts' ids followed the lists'
 * order); ns-3 attribute defaults from the environment are not (a resume mixed their rows in).
 */
class CliSweepSameSweepTestCase : public TestCase
{
  public:
    CliSweepSameSweepTestCase()
        : TestCase("sweep: equivalent options are the same sweep, NS_ATTRIBUTE_DEFAULT is not")
    {}

  private:
    void
    DoRun() override
    {
        const ScratchDir scratch("sweep-same");
        const std::string dir = scratch.Path();
        const std::vector<std::string> job = {"sweep",
                                              "--workers=1",
                                              "--model=gpt-1.7b",
                                              "--set=model.layers=4",
                                              "--gpus=8",
                                              "--gbs=8",
                                              "--recompute=none,full"};
        RAPIDLLM_REQUIRE_EQ(
            RunCli(Cat(job, {"--mbs=1,2", "--out=" + dir + "/a"}), dir).status, 0, "");
        CliResult r = RunCli(Cat(job,
                                 {"--mbs=2,1",
                                  "--tp=8,4,2,1",
                                  "--granularity=auto",
                                  "--routing=dimension-order",
                                  "--resume",
                                  "--out=" + dir + "/a"}),
                             dir);
        NS_TEST_EXPECT_MSG_EQ(r.status, 0, r.err);
        RAPIDLLM_REQUIRE_EQ(RunCli(Cat({"sweep",
                                        "--workers=1",
                                        "--model=gpt-1.7b",
                                        "--set=model.layers=4",
                                        "--gpus=8",
                                        "--gbs=8",
                                        "--recompute=full,none",
                                        "--mbs=2,1",
                                        "--out=" + dir + "/b"},
                                       {}),
                                   dir)
                                .status,
                            0,
                            "");
        NS_TEST_EXPECT_MSG_EQ(ReadText(dir + "/a/results.csv"),
                              ReadText(dir + "/b/results.csv"),
                              "the same rows and ids");
        r = RunCli(Cat(job, {"--mbs=1,2", "--resume", "--out=" + dir + "/a"}),
                   dir,
                   "env NS_ATTRIBUTE_DEFAULT=ns3::rapidllm::TraceReplayer::SerializeGroups=false");
        NS_TEST_EXPECT_MSG_EQ(r.status, 2, r.err);
        NS_TEST_EXPECT_MSG_NE(
            r.err.find("its ns_attribute_default is (none)"), std::string::npos, r.err);

        // One hardware file spelt two ways is one machine: a resume and merged shards name it
        // as the folder (the first shard) does (rows took the later spelling, and a merge
        // plotted one machine as two).
        std::filesystem::create_directories(dir + "/specs");
        std::filesystem::copy_file(std::string(RAPIDLLM_SOURCE_DIR)
                                       + "/data/presets/hardware/a100-sxm-80gb.yaml",
                                   dir + "/specs/a100.yaml");
        const std::string relative = "--hardware=specs/a100.yaml";
        const std::string absolute = "--hardware=" + dir + "/specs/a100.yaml";
        const std::string cd = "cd " + dir + " &&";
        RAPIDLLM_REQUIRE_EQ(
            RunCli(Cat(job, {relative, "--out=" + dir + "/c"}), dir, cd).status, 0, "");
        const std::string rows = ReadText(dir + "/c/results.csv");
        r = RunCli(Cat(job, {absolute, "--resume", "--out=" + dir + "/c"}), dir, cd);
        NS_TEST_EXPECT_MSG_EQ(r.status, 0, r.err);
        NS_TEST_EXPECT_MSG_EQ(ReadText(dir + "/c/results.csv"), rows, "the folder's spelling");
        for (const auto& [shard, spelling] :
             std::vector<std::pair<std::string, std::string>>{{"1/2", relative}, {"2/2", absolute}})
        {
            RAPIDLLM_REQUIRE_EQ(
                RunCli(Cat(job, {spelling, "--shard=" + shard, "--out=" + dir + "/s" + shard[0]}),
                       dir,
                       cd)
                    .status,
                0,
                shard);
        }
        r = RunCli({"merge", dir + "/s1", dir + "/s2", "--out=" + dir + "/m"}, dir);
        NS_TEST_EXPECT_MSG_EQ(r.status, 0, r.err);
        NS_TEST_EXPECT_MSG_EQ(ReadText(dir + "/m/results.csv"), rows, "the first shard's spelling");
    }
};

/**
 * \ingroup rapid-llm-tests
 * \brief A sweep where no layout fits names only the changes it has not tried: on one GPU no
 * ZeRO (nothing to shard over) and no more tp or pp, no recomputation it already ran.
 */
class CliSweepNothingFitsTestCase : public TestCase
{
  public:
    CliSweepNothingFitsTestCase()
        : TestCase("sweep: when nothing fits, only the changes not tried are offered")
    {}

  private:
    void
    DoRun() override
    {
        const ScratchDir scratch("sweep-nothing-fits");
        const std::string dir = scratch.Path();
        const std::vector<std::string> job = {
            "sweep", "--workers=1", "--model=gpt-1.7b", "--gbs=4", "--set=gpu.hbm_gib=1"};
        auto note = [&](const std::vector<std::string>& more)
        {
            const CliResult r = RunCli(Cat(job, more), dir);
            NS_TEST_EXPECT_MSG_EQ(r.status, 0, r.err);
            const std::size_t at = r.err.find("Options that lower it: ");
            NS_TEST_EXPECT_MSG_NE(at, std::string::npos, r.err);
            return at == std::string::npos ? "" : r.err.substr(at);
        };
        std::string one = note({"--gpus=1", "--mbs=1,2", "--recompute=full"});
        NS_TEST_EXPECT_MSG_EQ(one.find("Options that lower it: more --gpus, or a GPU with more "
                                       "memory (rapid-llm memory"),
                              0u,
                              one);
        std::string eight = note({"--gpus=8", "--tp=1,2", "--mbs=2", "--recompute=none"});
        NS_TEST_EXPECT_MSG_EQ(eight.find("Options that lower it: --zero=1 (or 3), "
                                         "--recompute=selective,full, a smaller --mbs, more --pp "
                                         "or --tp values, more --gpus, or a GPU"),
                              0u,
                              eight);
        std::string zero = note({"--gpus=8", "--zero=1", "--recompute=selective"});
        NS_TEST_EXPECT_MSG_EQ(zero.find("Options that lower it: --zero=3, --recompute=full, "
                                        "more --gpus, or a GPU"),
                              0u,
                              zero);
        // Every layout ruled out by the global batch: an error of --gbs (an internal error
        // looked up --global-batch, which the sweep has no option for).
        const CliResult batch =
            RunCli({"sweep", "--model=gpt-1.7b", "--gpus=8", "--tp=8", "--gbs=1", "--mbs=2"},
                   scratch.Path());
        NS_TEST_EXPECT_MSG_EQ(batch.status, 2, batch.err);
        NS_TEST_EXPECT_MSG_NE(batch.err.find("option --gbs: no layout of the lists is valid"),
                              std::string::npos,
                              batch.err);
    }
};

/**
 * \ingroup rapid-llm-tests
 * \brief sweep --slow-gpus: the same GPUs slowed in every layout, each row the step `run` gives
 * that layout with them, slower than the healthy row; the sweep's inputs keep them; and --gpu-set
 * alike.
 */
class CliSweepSlowGpusTestCase : public TestCase
{
  public:
    CliSweepSlowGpusTestCase()
        : TestCase("sweep --slow-gpus: every row is run --slow-gpus of its layout")
    {}

  private:
    void
    DoRun() override
    {
        const ScratchDir scratch("sweep-slow");
        const std::string dir = scratch.Path();
        const std::vector<std::string> healthyJob = kOneLayout;
        const std::vector<std::string> job = Cat(kOneLayout, {"--slow-gpus=gpu5:0.5"});
        CliResult sweep =
            RunCli(Cat({"sweep", "--workers=1", "--json", "--out=" + dir + "/s"}, job), dir);
        RAPIDLLM_REQUIRE_EQ(sweep.status, 0, sweep.err);
        const Json rows = Json::parse(sweep.out).at("rows");
        RAPIDLLM_REQUIRE_EQ(rows.size(), 1u, sweep.out);
        CliResult run = RunCli(Cat({"run", "--json"}, job), dir);
        RAPIDLLM_REQUIRE_EQ(run.status, 0, run.err);
        const double step = rows.at(0).at("step_time_s").get<double>();
        NS_TEST_EXPECT_MSG_EQ(
            step, Json::parse(run.out).at("step_time_s").get<double>(), "the row is run's step");
        CliResult healthy = RunCli(Cat({"sweep", "--workers=1", "--json"}, healthyJob), dir);
        RAPIDLLM_REQUIRE_EQ(healthy.status, 0, healthy.err);
        NS_TEST_EXPECT_MSG_GT(
            step,
            1.2 * Json::parse(healthy.out).at("rows").at(0).at("step_time_s").get<double>(),
            "a GPU at half speed paces its pipeline");
        NS_TEST_EXPECT_MSG_EQ(
            Json::parse(ReadText(dir + "/s/sweep.json")).at("slow_gpus").get<std::string>(),
            "gpu5:0.5",
            "an input of the sweep");
        // A GPU of its own spec in every layout, as run gives it.
        const std::string own = "--gpu-set=gpu5:gpu.hbm_bandwidth_GBps=0.5x";
        CliResult ownSweep =
            RunCli(Cat(Cat({"sweep", "--workers=1", "--json"}, healthyJob), {own}), dir);
        RAPIDLLM_REQUIRE_EQ(ownSweep.status, 0, ownSweep.err);
        CliResult ownRun = RunCli(Cat(Cat({"run", "--json"}, healthyJob), {own}), dir);
        RAPIDLLM_REQUIRE_EQ(ownRun.status, 0, ownRun.err);
        NS_TEST_EXPECT_MSG_EQ(
            Json::parse(ownSweep.out).at("rows").at(0).at("step_time_s").get<double>(),
            Json::parse(ownRun.out).at("step_time_s").get<double>(),
            "the row is run --gpu-set's step");
        NS_TEST_EXPECT_MSG_EQ(
            Json::parse(ownSweep.out).at("input").at("gpu_set").get<std::string>(),
            "gpu5:gpu.hbm_bandwidth_GBps=0.5x",
            "an input of the sweep");
        CliResult outside =
            RunCli(Cat(Cat({"sweep", "--workers=1"}, healthyJob), {"--slow-gpus=gpu16:0.5"}), dir);
        NS_TEST_EXPECT_MSG_EQ(outside.status, 2, outside.err);
        NS_TEST_EXPECT_MSG_NE(outside.err.find("option --slow-gpus: gpu16 is not a GPU"),
                              std::string::npos,
                              outside.err);
    }
};

/**
 * \ingroup rapid-llm-tests
 * \brief A sweep row says how its layout split the layers over the stages (the text table's
 * split column, the JSON row's first_stage_layers and last_stage_layers), so that `run` with
 * those options gives the row's step.
 */
class CliSweepSplitTestCase : public TestCase
{
  public:
    CliSweepSplitTestCase()
        : TestCase("sweep rows give their stage split, which run reproduces")
    {}

  private:
    void
    DoRun() override
    {
        const ScratchDir scratch("sweep-split");
        const std::string dir = scratch.Path();
        // gpt-1.7b's 24 layers on 5 stages: fewer on the first or the last, as many on the
        // others.
        const std::vector<std::string> job = {"--model=gpt-1.7b",
                                              "--gpus=5",
                                              "--gbs=5",
                                              "--seq=512",
                                              "--tp=1",
                                              "--pp=5",
                                              "--mbs=1",
                                              "--recompute=none"};
        CliResult json = RunCli(
            Cat({"sweep", "--workers=1", "--json", "--pipeline-split=first-last"}, job), dir);
        RAPIDLLM_REQUIRE_EQ(json.status, 0, json.err);
        const Json rows = Json::parse(json.out).at("rows");
        RAPIDLLM_REQUIRE_EQ(rows.size(), 1u, json.out);
        const uint32_t first = rows.at(0).at("first_stage_layers").get<uint32_t>();
        const uint32_t last = rows.at(0).at("last_stage_layers").get<uint32_t>();
        NS_TEST_EXPECT_MSG_EQ((first + last < 24 && (24 - first - last) % 3 == 0), true, json.out);
        NS_TEST_EXPECT_MSG_EQ((first < 5 || last < 5), true, "fewer on the first or the last");
        CliResult text =
            RunCli(Cat({"sweep", "--workers=1", "--pipeline-split=first-last"}, job), dir);
        NS_TEST_EXPECT_MSG_NE(
            text.out.find(" " + std::to_string(first) + "/" + std::to_string(last) + " "),
            std::string::npos,
            text.out);
        CliResult run = RunCli(Cat({"run",
                                    "--json",
                                    "--first-stage-layers=" + std::to_string(first),
                                    "--last-stage-layers=" + std::to_string(last)},
                                   job),
                               dir);
        RAPIDLLM_REQUIRE_EQ(run.status, 0, run.err);
        NS_TEST_EXPECT_MSG_EQ(rows.at(0).at("step_time_s").get<double>(),
                              Json::parse(run.out).at("step_time_s").get<double>(),
                              "the row is run's step with that split");
    }
};

/**
 * \ingroup rapid-llm-tests
 * \brief A sweep over machines (--hardware=a,b): every layout on each, ranked together, each
 * row named by its machine and the row of that machine's sweep alone; a machine without a
 * type's rate is noted and its other types run (alone, it is an error naming the GPU's field);
 * the machine's best row under the table; shards of it merge into the whole.
 */
class CliSweepMachinesTestCase : public TestCase
{
  public:
    CliSweepMachinesTestCase()
        : TestCase("sweep --hardware=a,b ranks every layout on each machine together")
    {}

  private:
    void
    DoRun() override
    {
        const ScratchDir scratch("sweep-machines");
        const std::string dir = scratch.Path();
        const std::vector<std::string> job = Cat(kTwoLayouts, {"--gpus=8"});
        const std::string both = "--hardware=h100-sxm-80gb,a100-sxm-80gb";
        CliResult whole =
            RunCli(Cat(job, {both, "--dtype=bf16,fp8", "--json", "--out=" + dir + "/whole"}), dir);
        RAPIDLLM_REQUIRE_EQ(whole.status, 0, whole.err);
        NS_TEST_EXPECT_MSG_NE(whole.err.find("a100-sxm-80gb: NVIDIA A100-SXM4-80GB lists no rate "
                                             "for fp8"),
                              std::string::npos,
                              whole.err);
        const Json rows = Json::parse(whole.out).at("rows");
        RAPIDLLM_REQUIRE_EQ(rows.size(), 6u, "h100: 2 layouts x 2 types; a100: 2 in bf16");
        // The A100's rows are its sweep's alone, named so.
        CliResult a100 = RunCli(Cat(job, {"--hardware=a100-sxm-80gb", "--json"}), dir);
        RAPIDLLM_REQUIRE_EQ(a100.status, 0, a100.err);
        std::map<uint32_t, double> alone;
        const Json a100Rows = Json::parse(a100.out).at("rows");
        for (const Json& r : a100Rows)
        {
            alone[r.at("tp").get<uint32_t>()] = r.at("step_time_s").get<double>();
        }
        uint32_t named = 0;
        for (const Json& r : rows)
        {
            if (r.at("hardware") != "a100-sxm-80gb")
            {
                NS_TEST_EXPECT_MSG_EQ(r.at("hardware").get<std::string>(), "h100-sxm-80gb", "");
                continue;
            }
            ++named;
            NS_TEST_EXPECT_MSG_EQ(r.at("dtype").get<std::string>(), "bf16", "no fp8 on the A100");
            NS_TEST_EXPECT_MSG_EQ(r.at("step_time_s").get<double>(),
                                  alone.at(r.at("tp").get<uint32_t>()),
                                  "the A100's own prediction");
        }
        NS_TEST_EXPECT_MSG_EQ(named, 2u, "");
        const std::string csv = ReadText(dir + "/whole/results.csv");
        for (const char* row : {"\n0,h100-sxm-80gb,8,1,1,8,", "\n4,a100-sxm-80gb,8,1,1,8,"})
        {
            NS_TEST_EXPECT_MSG_NE(csv.find(row), std::string::npos, "the machine outermost");
        }
        // The table: a hardware column, each machine and type's best row under it.
        CliResult text = RunCli(Cat(job, {both, "--dtype=bf16,fp8"}), dir);
        RAPIDLLM_REQUIRE_EQ(text.status, 0, text.err);
        NS_TEST_EXPECT_MSG_NE(
            text.out.find("rank hardware      dtype"), std::string::npos, text.out);
        const std::size_t best = text.out.find("Best of each:\n");
        RAPIDLLM_REQUIRE_NE(best, std::string::npos, text.out);
        for (const char* variant :
             {"h100-sxm-80gb bf16", "h100-sxm-80gb fp8", "a100-sxm-80gb bf16"})
        {
            NS_TEST_EXPECT_MSG_NE(
                text.out.find(std::string("  ") + variant, best), std::string::npos, variant);
        }
        NS_TEST_EXPECT_MSG_EQ(text.out.find("a100-sxm-80gb fp8", best), std::string::npos, "");
        // Shards of it merge into the whole, byte for byte.
        for (const char* shard : {"1/2", "2/2"})
        {
            CliResult part = RunCli(Cat(job,
                                        {both,
                                         "--dtype=bf16,fp8",
                                         std::string("--shard=") + shard,
                                         "--out=" + dir + "/part" + std::string(1, shard[0])}),
                                    dir);
            RAPIDLLM_REQUIRE_EQ(part.status, 0, part.err);
        }
        CliResult merged =
            RunCli({"merge", dir + "/part2", dir + "/part1", "--out=" + dir + "/merged"}, dir);
        RAPIDLLM_REQUIRE_EQ(merged.status, 0, merged.err);
        NS_TEST_EXPECT_MSG_EQ(ReadText(dir + "/merged/results.csv"),
                              ReadText(dir + "/whole/results.csv"),
                              "merged shards");
        // Alone, a machine that cannot compute in the type is an error naming its GPU's rates.
        CliResult fp8 = RunCli(Cat(job, {"--hardware=a100-sxm-80gb", "--dtype=fp8"}), dir);
        NS_TEST_EXPECT_MSG_EQ(fp8.status, 2, fp8.err);
        NS_TEST_EXPECT_MSG_NE(
            fp8.err.find("a100-sxm-80gb: field 'gpu.tensor_tflops'"), std::string::npos, fp8.err);
        // A GPU count of the list on which no layout is valid is said, not dropped.
        CliResult seven = RunCli(Cat(kTwoLayouts, {"--gpus=8,7"}), dir);
        NS_TEST_EXPECT_MSG_EQ(seven.status, 0, seven.err);
        NS_TEST_EXPECT_MSG_NE(seven.err.find("no layout of the lists is valid on 7 GPUs (tp 1, pp "
                                             "1, cp 1, ep 1, mbs 2: global_batch:"),
                              std::string::npos,
                              seven.err);
        // A machine file: a resume compares its contents, not its name. The same file spelt
        // otherwise resumes; the file edited is another sweep.
        {
            std::ifstream in(std::string(RAPIDLLM_SOURCE_DIR)
                             + "/data/presets/hardware/a100-sxm-80gb.yaml");
            std::ofstream(dir + "/hw.yaml") << in.rdbuf();
        }
        const std::string file = "--out=" + dir + "/file";
        CliResult fromFile = RunCli(Cat(job, {"--hardware=" + dir + "/hw.yaml", file}), dir);
        RAPIDLLM_REQUIRE_EQ(fromFile.status, 0, fromFile.err);
        CliResult respelt =
            RunCli(Cat(job, {"--hardware=" + dir + "/./hw.yaml", file, "--resume"}), dir);
        NS_TEST_EXPECT_MSG_EQ(respelt.status, 0, respelt.err);
        // A kept row whose degrees are not its layout index's (edited, or from another sweep)
        // is refused, not ranked as that layout.
        std::filesystem::copy(dir + "/file", dir + "/edited-row");
        {
            std::string csv = ReadText(dir + "/edited-row/results.csv");
            std::size_t tp = csv.find('\n') + 1; // the first row: "0,HARDWARE,gpus,tp,..."
            for (int field = 0; field < 3; ++field)
            {
                tp = csv.find(',', tp) + 1; // to its tp
            }
            csv.replace(tp, csv.find(',', tp) - tp, "4");
            std::ofstream(dir + "/edited-row/results.csv", std::ios::binary) << csv;
        }
        CliResult editedRow = RunCli(
            Cat(job,
                {"--hardware=" + dir + "/hw.yaml", "--out=" + dir + "/edited-row", "--resume"}),
            dir);
        NS_TEST_EXPECT_MSG_EQ(editedRow.status, 2, editedRow.err);
        NS_TEST_EXPECT_MSG_NE(
            editedRow.err.find("its row says otherwise"), std::string::npos, editedRow.err);
        std::ofstream(dir + "/hw.yaml", std::ios::app) << "# edited\n";
        CliResult edited =
            RunCli(Cat(job, {"--hardware=" + dir + "/hw.yaml", file, "--resume"}), dir);
        NS_TEST_EXPECT_MSG_EQ(edited.status, 2, edited.err);
        NS_TEST_EXPECT_MSG_NE(edited.err.find("hw.yaml\" had other contents ([\"fnv1a64 "),
                              std::string::npos,
                              edited.err);
    }
};

/**
 * \ingroup rapid-llm-tests
 * \brief A sweep over pipeline schedules (--pp-schedule=1f1b,zb-h1): zb-h1 on the layouts with
 * a pipeline (ruled out without one), zb-v on those of two chunks a stage, each row run's
 * prediction of its layout and schedule, a schedule column in the file and the table and each
 * schedule's best under it.
 */
class CliSweepSchedulesTestCase : public TestCase
{
  public:
    CliSweepSchedulesTestCase()
        : TestCase("sweep --pp-schedule=1f1b,zb-h1 tries each schedule where it applies")
    {}

  private:
    void
    DoRun() override
    {
        const ScratchDir scratch("sweep-schedules");
        const std::string dir = scratch.Path();
        // No tensor parallelism: nothing for the weight gradients to have hidden (ZB-H1 exposes
        // a tensor-parallel input-gradient reduction they overlapped).
        const std::vector<std::string> job = {"--model=gpt-1.7b",
                                              "--gpus=4",
                                              "--gbs=16",
                                              "--seq=1024",
                                              "--tp=1",
                                              "--mbs=1",
                                              "--recompute=selective"};
        const std::vector<std::string> sweep =
            Cat({"sweep", "--workers=2", "--pp=1,4", "--pp-schedule=1f1b,zb-h1"}, job);
        CliResult json = RunCli(Cat(sweep, {"--json", "--plot", "--out=" + dir + "/s"}), dir);
        RAPIDLLM_REQUIRE_EQ(json.status, 0, json.err);
        // The plot's step times, one series per schedule.
        const std::string plot = ReadText(dir + "/s/sweep.plt");
        for (const char* series : {"title \"step time, 1f1b\"", "title \"step time, zb-h1\""})
        {
            NS_TEST_EXPECT_MSG_NE(plot.find(series), std::string::npos, plot);
        }
        // Every layout fits: the GPU's memory line (80 GiB) below the axis's top, whole ranks.
        for (const char* range : {"set y2range [0:92.0", "set xrange [0.5:3.5", "set xtics 1"})
        {
            NS_TEST_EXPECT_MSG_NE(plot.find(range), std::string::npos, plot);
        }
        const Json out = Json::parse(json.out);
        const Json rows = out.at("rows");
        RAPIDLLM_REQUIRE_EQ(rows.size(), 3u, "pp 1 in 1f1b; pp 4 in both");
        NS_TEST_EXPECT_MSG_EQ(out.at("input").at("skipped").get<uint32_t>(), 1u, "pp 1 zb-h1");
        NS_TEST_EXPECT_MSG_EQ(out.at("input").at("pp_schedule").size(), 2u, "echoed");
        std::map<std::string, double> pp4;
        for (const Json& r : rows)
        {
            const std::string schedule = r.at("pp_schedule").get<std::string>();
            if (r.at("pp").get<uint32_t>() == 1)
            {
                NS_TEST_EXPECT_MSG_EQ(schedule, "1f1b", "no zero bubble without a pipeline");
                continue;
            }
            pp4[schedule] = r.at("step_time_s").get<double>();
            CliResult run = RunCli(
                Cat({"run", "--json", "--pp=4", "--dp=1", "--pp-schedule=" + schedule}, job), dir);
            RAPIDLLM_REQUIRE_EQ(run.status, 0, run.err);
            NS_TEST_EXPECT_MSG_EQ(pp4[schedule],
                                  Json::parse(run.out).at("step_time_s").get<double>(),
                                  schedule + ": the row is run's step");
        }
        RAPIDLLM_REQUIRE_EQ(pp4.size(), 2u, json.out);
        // run's heading names a schedule other than 1F1B.
        CliResult heading =
            RunCli(Cat({"run", "--pp=4", "--dp=1", "--pp-schedule=zb-h1"}, job), dir);
        NS_TEST_EXPECT_MSG_NE(
            heading.out.find("pp 4, dp 1, zb-h1)"), std::string::npos, heading.out);
        NS_TEST_EXPECT_MSG_LT(pp4.at("zb-h1"), pp4.at("1f1b"), "the bubble filled");
        NS_TEST_EXPECT_MSG_NE(ReadText(dir + "/s/results.csv").find(",4,1,4,1,1,1,1,zb-h1,,,1,"),
                              std::string::npos,
                              "the schedule after vpp, an even split's layers empty");
        CliResult text = RunCli(sweep, dir);
        RAPIDLLM_REQUIRE_EQ(text.status, 0, text.err);
        NS_TEST_EXPECT_MSG_NE(text.out.find("rank schedule "), std::string::npos, text.out);
        const std::size_t best = text.out.find("Best of each:\n");
        RAPIDLLM_REQUIRE_NE(best, std::string::npos, text.out);
        for (const char* schedule : {"  1f1b ", "  zb-h1 "})
        {
            NS_TEST_EXPECT_MSG_NE(text.out.find(schedule, best), std::string::npos, text.out);
        }
        // Each with what it holds: the schedules trade memory for the bubble.
        NS_TEST_EXPECT_MSG_NE(text.out.find(" GiB", best), std::string::npos, text.out);
        // Shards of it merge into the whole, byte for byte.
        for (const char* shard : {"1/2", "2/2"})
        {
            CliResult part = RunCli(
                Cat(sweep, {std::string("--shard=") + shard, "--out=" + dir + "/p" + shard[0]}),
                dir);
            RAPIDLLM_REQUIRE_EQ(part.status, 0, part.err);
        }
        CliResult merged = RunCli({"merge", dir + "/p1", dir + "/p2", "--out=" + dir + "/m"}, dir);
        RAPIDLLM_REQUIRE_EQ(merged.status, 0, merged.err);
        NS_TEST_EXPECT_MSG_EQ(
            ReadText(dir + "/m/results.csv"), ReadText(dir + "/s/results.csv"), "merged shards");
        // zb-v on the layouts of two chunks a stage, zb-h1 on those of one.
        CliResult zb = RunCli(Cat({"sweep",
                                   "--workers=2",
                                   "--json",
                                   "--pp=4",
                                   "--vpp=1,2",
                                   "--pp-schedule=zb-h1,zb-v"},
                                  job),
                              dir);
        RAPIDLLM_REQUIRE_EQ(zb.status, 0, zb.err);
        const Json zbOut = Json::parse(zb.out);
        RAPIDLLM_REQUIRE_EQ(zbOut.at("rows").size(), 2u, zb.out);
        NS_TEST_EXPECT_MSG_EQ(zbOut.at("input").at("skipped").get<uint32_t>(), 2u, "the others");
        for (const Json& r : zbOut.at("rows"))
        {
            const std::string schedule = r.at("pp_schedule").get<std::string>();
            NS_TEST_EXPECT_MSG_EQ(
                r.at("vpp").get<uint32_t>(), (schedule == "zb-v" ? 2u : 1u), schedule);
        }
        // Only zb-h1 on layouts without a pipeline: nothing to run, the reason named.
        CliResult none =
            RunCli(Cat({"sweep", "--workers=1", "--pp=1", "--pp-schedule=zb-h1"}, job), dir);
        NS_TEST_EXPECT_MSG_EQ(none.status, 2, none.err);
        NS_TEST_EXPECT_MSG_NE(none.err.find("needs pp >= 2"), std::string::npos, none.err);
    }
};

/**
 * \ingroup rapid-llm-tests
 * \brief A sweep over GPU counts (--gpus=8,16): every layout on each count, each row the row
 * of that count's sweep alone; the table's gpus column, each count's best and how it scales
 * under the table; the counts echoed as a list.
 */
class CliSweepGpuCountsTestCase : public TestCase
{
  public:
    CliSweepGpuCountsTestCase()
        : TestCase("sweep --gpus=8,16 ranks every layout on each GPU count together")
    {}

  private:
    void
    DoRun() override
    {
        const ScratchDir scratch("sweep-gpus");
        const std::string dir = scratch.Path();
        const std::vector<std::string> job = Cat(kTwoLayouts, {"--hardware=h100-sxm-80gb"});
        CliResult both = RunCli(Cat(job, {"--gpus=8,16", "--json"}), dir);
        RAPIDLLM_REQUIRE_EQ(both.status, 0, both.err);
        const Json out = Json::parse(both.out);
        NS_TEST_EXPECT_MSG_EQ(out.at("input").at("gpus").dump(), "[8,16]", "the counts echoed");
        const Json rows = out.at("rows");
        RAPIDLLM_REQUIRE_EQ(rows.size(), 4u, "2 layouts on each count");
        for (uint32_t gpus : {8u, 16u})
        {
            CliResult one = RunCli(Cat(job, {"--gpus=" + std::to_string(gpus), "--json"}), dir);
            RAPIDLLM_REQUIRE_EQ(one.status, 0, one.err);
            const Json alone = Json::parse(one.out).at("rows");
            NS_TEST_EXPECT_MSG_EQ(Json::parse(one.out).at("input").at("gpus").dump(),
                                  std::to_string(gpus),
                                  "one count: a number, as older sweeps kept it");
            for (const Json& a : alone)
            {
                const auto same =
                    std::find_if(rows.begin(),
                                 rows.end(),
                                 [&a](const Json& r)
                                 {
                                     return r.at("tp") == a.at("tp") && r.at("dp") == a.at("dp");
                                 });
                RAPIDLLM_REQUIRE_EQ((same != rows.end()), true, a.dump());
                NS_TEST_EXPECT_MSG_EQ(same->at("step_time_s").get<double>(),
                                      a.at("step_time_s").get<double>(),
                                      "the count's own prediction");
            }
        }
        CliResult text = RunCli(Cat(job, {"--gpus=8,16"}), dir);
        RAPIDLLM_REQUIRE_EQ(text.status, 0, text.err);
        NS_TEST_EXPECT_MSG_NE(text.out.find("on 8/16 x"), std::string::npos, text.out);
        NS_TEST_EXPECT_MSG_NE(text.out.find("rank gpus "), std::string::npos, text.out);
        const std::size_t best = text.out.find("Best of each:\n");
        RAPIDLLM_REQUIRE_NE(best, std::string::npos, text.out);
        NS_TEST_EXPECT_MSG_NE(
            text.out.find("x the 8-GPU best (", best), std::string::npos, text.out);
    }
};

/**
 * \ingroup rapid-llm-tests
 * \brief The sweep's command-line tests.
 */
class CliSweepTestSuite : public TestSuite
{
  public:
    CliSweepTestSuite()
        : TestSuite("rapid-llm-cli-sweep", UNIT)
    {
        AddTestCase(new CliSweepTestCase, TestCase::QUICK);
        AddTestCase(new CliSweepFolderTestCase, TestCase::QUICK);
        AddTestCase(new CliSweepRoutingTestCase, TestCase::QUICK);
        AddTestCase(new CliSweepNothingFitsTestCase, TestCase::QUICK);
        AddTestCase(new CliSweepSameSweepTestCase, TestCase::QUICK);
        AddTestCase(new CliSweepSlowGpusTestCase, TestCase::QUICK);
        AddTestCase(new CliSweepSplitTestCase, TestCase::QUICK);
        AddTestCase(new CliSweepMachinesTestCase, TestCase::QUICK);
        AddTestCase(new CliSweepGpuCountsTestCase, TestCase::QUICK);
        AddTestCase(new CliSweepSchedulesTestCase, TestCase::QUICK);
    }
};

static CliSweepTestSuite g_cliSweepTestSuite;

#endif // RAPIDLLM_CLI
