/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// Timelines and progress of the real command line: `run --timeline` writes valid trace-event
// JSON (a process per rank, complete events of the four categories, flows that pair up,
// link counters) whose compute, communication, bubble and host slices on every rank add up to
// the breakdown the run reports (host dispatch and userbuffers' TP ring included),
// without changing the prediction, byte-identical from run to run; `replay --timeline` the
// same; a long packet-level run reports progress and stops cleanly on SIGINT.

#include "cli-process.h"
#include "ns3/report-json.h"
#include "ns3/test.h"
#include "scratch-dir.h"
#include "test-require.h"

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <thread>

using namespace ns3;
using namespace ns3::rapidllm;

#ifdef RAPIDLLM_CLI

namespace {

/** A small pipelined training job (tp 2, pp 2, dp 2), in well under a second. */
const std::vector<std::string> kJob = {
    "--model=gpt-1.7b", "--gpus=8", "--tp=2", "--pp=2", "--gbs=8", "--seq=1024"};

/** \return trace-event microseconds as seconds */
double
Seconds(const Json& us)
{
    return us.get<double>() * 1e-6;
}

} // namespace

/**
 * \ingroup rapid-llm-tests
 * \brief `run --timeline`: valid trace-event JSON that agrees with the report.
 */
class CliTimelineTestCase : public TestCase
{
  public:
    CliTimelineTestCase()
        : TestCase(
            "run and replay --timeline: trace-event JSON, each rank's slices = its breakdown")
    {}

  private:
    /**
     * Checks one timeline against a report with --per-rank: on every rank, the slices of each
     * category on the compute track add up to its breakdown; \p categories must all appear.
     */
    void
    Check(const std::string& file,
          const Json& report,
          const std::string& what,
          const std::set<std::string>& categories = {"compute", "communication", "bubble"})
    {
        Json t;
        try
        {
            t = Json::parse(ReadText(file));
        }
        catch (const Json::exception& e)
        {
            NS_TEST_ASSERT_MSG_EQ(true, false, what + ": not JSON: " + e.what());
        }
        NS_TEST_ASSERT_MSG_EQ((t.contains("traceEvents") && t.at("traceEvents").is_array()),
                              true,
                              what + ": traceEvents");
        // Per rank: seconds of each category on the compute track (waits) or any (compute).
        std::map<uint32_t, std::map<std::string, double>> sums;
        std::set<std::string> seen;
        std::set<uint32_t> pids;
        std::map<uint64_t, std::string> flows;
        uint64_t counters = 0;
        for (const Json& e : t.at("traceEvents"))
        {
            const std::string ph = e.at("ph").get<std::string>();
            NS_TEST_EXPECT_MSG_EQ(e.contains("pid"), true, what + ": every event has a pid");
            if (ph == "X")
            {
                const std::string cat = e.at("cat").get<std::string>();
                seen.insert(cat);
                NS_TEST_EXPECT_MSG_EQ((cat == "compute" || cat == "communication" || cat == "bubble"
                                       || cat == "host"),
                                      true,
                                      what + ": category " + cat);
                NS_TEST_EXPECT_MSG_GT_OR_EQ(e.at("dur").get<double>(), 0.0, what + ": duration");
                NS_TEST_EXPECT_MSG_EQ((e.contains("tid") && e.contains("ts") && e.contains("name")),
                                      true,
                                      what + ": tid, ts, name");
                const auto pid = e.at("pid").get<uint32_t>();
                pids.insert(pid);
                if (cat == "compute" || e.at("tid").get<uint32_t>() == 0)
                {
                    sums[pid][cat] += Seconds(e.at("dur"));
                }
            }
            else if (ph == "s" || ph == "f")
            {
                flows[e.at("id").get<uint64_t>()] += ph;
            }
            else if (ph == "C")
            {
                ++counters;
                const double busy = e.at("args").at("busy").get<double>();
                NS_TEST_EXPECT_MSG_EQ((busy >= 0 && busy <= 1), true, what + ": busy share");
            }
            else
            {
                NS_TEST_EXPECT_MSG_EQ(ph, "M", what + ": only X, s, f, C and M events");
            }
        }
        const Json ranks = report.at("ranks");
        for (const Json& rank : ranks)
        {
            const auto r = rank.at("rank").get<uint32_t>();
            if (!pids.count(r))
            {
                continue; // a symmetric copy: its representative's events stand for it
            }
            const Json& breakdown = rank.at("breakdown_s");
            const double compute = breakdown.at("compute").get<double>();
            NS_TEST_EXPECT_MSG_GT(compute, 0.0, what + ": rank computes");
            const std::string where = what + ", rank " + std::to_string(r) + ": ";
            for (const auto& [cat, field] :
                 std::map<std::string, std::string>{{"compute", "compute"},
                                                    {"communication", "exposed_communication"},
                                                    {"bubble", "pipeline_bubble"},
                                                    {"host", "host"}})
            {
                NS_TEST_EXPECT_MSG_EQ_TOL(sums[r][cat],
                                          breakdown.at(field).get<double>(),
                                          1e-9 + 1e-6 * compute,
                                          where + cat + " slices = its " + field);
            }
        }
        NS_TEST_EXPECT_MSG_EQ(pids.count(0), 1u, what + ": rank 0 is a process");
        for (const std::string& cat : categories)
        {
            NS_TEST_EXPECT_MSG_EQ(seen.count(cat), 1u, what + ": " + cat + " slices");
        }
        if (pids.size() > 1)
        {
            NS_TEST_EXPECT_MSG_GT(flows.size(), 0u, what + ": flows between the ranks");
        }
        for (const auto& [id, phases] : flows)
        {
            NS_TEST_EXPECT_MSG_EQ(phases, "sf", what + ": flow " + std::to_string(id));
        }
        NS_TEST_EXPECT_MSG_GT(counters, 0u, what + ": link counters");
    }

    void
    DoRun() override
    {
        const ScratchDir scratch("timeline");
        const std::string dir = scratch.Path();
        CliResult plain = RunCli(Cat({"run", "--json", "--per-rank"}, kJob), dir);
        NS_TEST_ASSERT_MSG_EQ(plain.status, 0, plain.err);
        const std::string file = dir + "/timeline.json";
        CliResult traced =
            RunCli(Cat({"run", "--json", "--per-rank", "--timeline=" + file}, kJob), dir);
        NS_TEST_ASSERT_MSG_EQ(traced.status, 0, traced.err);
        NS_TEST_EXPECT_MSG_EQ(traced.out, plain.out, "the timeline changes no figure");
        Check(file, Json::parse(traced.out), "run");
        // Deterministic.
        const std::string first = ReadText(file);
        RunCli(Cat({"run", "--timeline=" + file}, kJob), dir);
        NS_TEST_EXPECT_MSG_EQ(ReadText(file), first, "byte-identical timelines");
        // Every rank replayed (no symmetry reduction): a process per rank.
        CliResult all = RunCli(
            Cat({"run", "--json", "--per-rank", "--symmetry=false", "--timeline=" + file}, kJob),
            dir);
        NS_TEST_ASSERT_MSG_EQ(all.status, 0, all.err);
        Check(file, Json::parse(all.out), "run, every rank");
        std::set<uint32_t> ranks;
        const Json everyRank = Json::parse(ReadText(file));
        for (const Json& e : everyRank.at("traceEvents"))
        {
            if (e.at("ph").get<std::string>() == "X")
            {
                ranks.insert(e.at("pid").get<uint32_t>());
            }
        }
        NS_TEST_EXPECT_MSG_EQ(ranks.size(), 8u, "8 ranks, 8 processes");
        // replay of the traces the run writes.
        CliResult t = RunCli(Cat({"trace", "--out=" + dir + "/traces"}, kJob), dir);
        NS_TEST_ASSERT_MSG_EQ(t.status, 0, t.err);
        CliResult replay = RunCli({"replay",
                                   "--trace=" + dir + "/traces/trace",
                                   "--json",
                                   "--per-rank",
                                   "--timeline=" + file},
                                  dir);
        NS_TEST_ASSERT_MSG_EQ(replay.status, 0, replay.err);
        Check(file, Json::parse(replay.out), "replay");
        // Host dispatch (vLLM's engine step) and userbuffers' TP ring exchange: the host's
        // waits are host slices, the ring's waits communication, as the report counts them.
        CliResult host = RunCli({"run",
                                 "--json",
                                 "--per-rank",
                                 "--timeline=" + file,
                                 "--mode=inference",
                                 "--model=llama3-8b",
                                 "--gpus=2",
                                 "--tp=2",
                                 "--batch=8",
                                 "--prompt=256",
                                 "--gen=16",
                                 "--engine=vllm"},
                                dir);
        NS_TEST_ASSERT_MSG_EQ(host.status, 0, host.err);
        Check(file, Json::parse(host.out), "vllm", {"compute", "communication", "host"});
        CliResult ring = RunCli({"run",
                                 "--json",
                                 "--per-rank",
                                 "--timeline=" + file,
                                 "--model=llama3-8b",
                                 "--hardware=h100-sxm-80gb",
                                 "--gpus=8",
                                 "--tp=4",
                                 "--pp=2",
                                 "--layers=4",
                                 "--seq=4096",
                                 "--gbs=8",
                                 "--sp",
                                 "--tp-comm-overlap=userbuffers",
                                 "--pp-schedule=zb-h1"},
                                dir);
        NS_TEST_ASSERT_MSG_EQ(ring.status, 0, ring.err);
        Check(file, Json::parse(ring.out), "userbuffers");
        // A run that fails (GPU 0's links dead) leaves no timeline behind, nor its temporary
        // file, and an existing one as it was.
        const std::string failed = dir + "/failed.json";
        CliResult dead = RunCli(Cat({"run", "--fault=gpu0", "--timeline=" + failed}, kJob), dir);
        NS_TEST_EXPECT_MSG_EQ(dead.status, 2, dead.err);
        NS_TEST_EXPECT_MSG_EQ(std::filesystem::exists(failed), false, "no timeline on failure");
        NS_TEST_EXPECT_MSG_EQ(std::filesystem::exists(failed + ".tmp"), false, "no temporary");
        const std::string kept = ReadText(file);
        dead = RunCli(Cat({"run", "--fault=gpu0", "--timeline=" + file}, kJob), dir);
        NS_TEST_EXPECT_MSG_EQ(dead.status, 2, dead.err);
        NS_TEST_EXPECT_MSG_EQ(ReadText(file), kept, "an existing timeline is left as it was");
    }
};

/**
 * \ingroup rapid-llm-tests
 * \brief A packet-level run reports progress, and stops cleanly on SIGINT.
 */
class CliProgressTestCase : public TestCase
{
  public:
    CliProgressTestCase()
        : TestCase("run --progress: simulated time, share done, ETA; SIGINT prints and exits 130")
    {}

  private:
    void
    DoRun() override
    {
        const ScratchDir scratch("progress");
        const std::string dir = scratch.Path();
        // A packet-level step of a few seconds of wall time.
        const std::vector<std::string> args = {"run",
                                               "--backend=packet",
                                               "--progress",
                                               "--model=gpt-1.7b",
                                               "--gpus=16",
                                               "--tp=2",
                                               "--pp=2",
                                               "--gbs=64",
                                               "--seq=1024"};
        const pid_t pid = StartCli(args, dir);
        NS_TEST_ASSERT_MSG_GT(pid, 0, "started");
        const std::string errFile = dir + "/stderr.bg.txt";
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
        while (ReadText(errFile).find("of operators done") == std::string::npos
               && std::chrono::steady_clock::now() < deadline)
        {
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        ::kill(pid, SIGINT);
        const int status = WaitCli(pid);
        const std::string err = ReadText(errFile);
        NS_TEST_EXPECT_MSG_NE(err.find("simulated"), std::string::npos, err);
        NS_TEST_EXPECT_MSG_NE(err.find("ETA"), std::string::npos, err);
        NS_TEST_EXPECT_MSG_EQ(status, 130, "interrupted: " + err);
        NS_TEST_EXPECT_MSG_NE(err.find("interrupted; what is known"), std::string::npos, err);
        NS_TEST_EXPECT_MSG_EQ(ReadText(dir + "/stdout.bg.txt"), "", "no report");
    }
};

/**
 * \ingroup rapid-llm-tests
 * \brief A command started with SIGINT ignored (a script's background job) keeps it ignored, as
 * every other program does: an interrupt meant for the script's foreground neither stops it
 * (130) nor cuts its trace set short (it said "cannot write", exit 5).
 */
class CliIgnoredInterruptTestCase : public TestCase
{
  public:
    CliIgnoredInterruptTestCase()
        : TestCase("a command started with SIGINT ignored runs to the end through interrupts")
    {}

  private:
    void
    DoRun() override
    {
        const ScratchDir scratch("ignored-interrupt");
        const std::string dir = scratch.Path();
        const std::vector<std::vector<std::string>> commands = {
            {"run", "--model=gpt-1.7b", "--tp=2", "--pp=4", "--dp=8", "--gbs=4096"},
            {"trace",
             "--model=gpt-1.7b",
             "--tp=2",
             "--pp=4",
             "--dp=8",
             "--gbs=512",
             "--out=" + dir + "/trace"}};
        for (const auto& args : commands)
        {
            // Inherited through fork and exec, as a shell without job control passes it on.
            void (*old)(int) = std::signal(SIGINT, SIG_IGN);
            const pid_t pid = StartCli(args, dir);
            std::signal(SIGINT, old);
            NS_TEST_ASSERT_MSG_GT(pid, 0, "started");
            // Interrupts all along, from its start to its end.
            int status = 0;
            pid_t done = 0;
            uint32_t sent = 0;
            while ((done = ::waitpid(pid, &status, WNOHANG)) == 0)
            {
                ::kill(pid, SIGINT);
                ++sent;
                std::this_thread::sleep_for(std::chrono::milliseconds(10));
            }
            const std::string err = ReadText(dir + "/stderr.bg.txt");
            NS_TEST_EXPECT_MSG_EQ(done, pid, "waited");
            NS_TEST_EXPECT_MSG_EQ((WIFEXITED(status) && WEXITSTATUS(status) == 0),
                                  true,
                                  Joined(args) + " after " + std::to_string(sent)
                                      + " interrupts: " + err);
            NS_TEST_EXPECT_MSG_GT(sent, 5u, "interrupted while it ran");
        }
        NS_TEST_EXPECT_MSG_EQ(std::filesystem::exists(dir + "/trace/trace.0.et"), true, "written");
    }
};

/**
 * \ingroup rapid-llm-tests
 * \brief A packet-level collective of a minute or more says how far it is, changes nothing in
 * its result, and stops cleanly on SIGINT.
 */
class CliCollectiveProgressTestCase : public TestCase
{
  public:
    CliCollectiveProgressTestCase()
        : TestCase("collective --progress: messages done and ETA; the same result; SIGINT exits "
                   "130")
    {}

  private:
    void
    DoRun() override
    {
        const ScratchDir scratch("collective-progress");
        const std::string dir = scratch.Path();
        const std::vector<std::string> small = {
            "collective", "--hardware=a100-sxm-80gb", "--backend=packet", "--bytes=2MiB", "--json"};
        CliResult quiet = RunCli(small, dir);
        std::vector<std::string> watched = small;
        watched.push_back("--progress");
        CliResult shown = RunCli(watched, dir);
        NS_TEST_EXPECT_MSG_EQ(quiet.status, 0, quiet.err);
        NS_TEST_EXPECT_MSG_EQ((shown.out == quiet.out), true, "progress changes nothing");
        NS_TEST_EXPECT_MSG_NE(shown.err.find("of messages done"), std::string::npos, shown.err);

        // The default 1 GiB on the packet network takes minutes: interrupted at its first line.
        const pid_t pid = StartCli(
            {"collective", "--hardware=a100-sxm-80gb", "--backend=packet", "--progress"}, dir);
        NS_TEST_ASSERT_MSG_GT(pid, 0, "started");
        const std::string errFile = dir + "/stderr.bg.txt";
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
        while (ReadText(errFile).find("data packets delivered") == std::string::npos
               && std::chrono::steady_clock::now() < deadline)
        {
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        ::kill(pid, SIGINT);
        const int status = WaitCli(pid);
        const std::string err = ReadText(errFile);
        NS_TEST_EXPECT_MSG_EQ(status, 130, "interrupted: " + err);
        NS_TEST_EXPECT_MSG_NE(err.find("interrupted; what is known"), std::string::npos, err);
        NS_TEST_EXPECT_MSG_EQ(ReadText(dir + "/stdout.bg.txt"), "", "no result");
    }
};

/**
 * \ingroup rapid-llm-tests
 * \brief SIGTERM ends a packet-level run within a few seconds with status 130, even where a
 * burst of packet events keeps the progress check away (a ring attention over 16 GPUs ran
 * minutes past `timeout`'s SIGTERM until SIGKILL).
 */
class CliTerminateTestCase : public TestCase
{
  public:
    CliTerminateTestCase()
        : TestCase("SIGTERM ends a packet-level run within seconds, exit 130")
    {}

  private:
    void
    DoRun() override
    {
        const ScratchDir scratch("terminate");
        const std::string dir = scratch.Path();
        const pid_t pid = StartCli({"run",
                                    "--model=llama3-8b",
                                    "--hardware=h100-sxm-80gb",
                                    "--seq=16384",
                                    "--layers=1",
                                    "--cp=16",
                                    "--backend=packet"},
                                   dir);
        NS_TEST_ASSERT_MSG_GT(pid, 0, "started");
        std::this_thread::sleep_for(std::chrono::seconds(3));
        ::kill(pid, SIGTERM);
        const auto sent = std::chrono::steady_clock::now();
        const int status = WaitCli(pid);
        const double waited =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - sent).count();
        const std::string err = ReadText(dir + "/stderr.bg.txt");
        NS_TEST_EXPECT_MSG_EQ(status, 130, err);
        NS_TEST_EXPECT_MSG_LT(waited, 10.0, "ended within the grace period: " + err);
        NS_TEST_EXPECT_MSG_EQ(ReadText(dir + "/stdout.bg.txt"), "", "no report");
    }
};

/**
 * \ingroup rapid-llm-tests
 * \brief Timelines and progress of the command line.
 */
namespace {

/**
 * \brief Reads a process's state and parent from /proc/PID/stat ("pid (comm) state ppid ...";
 * comm may hold spaces, not ')').
 * \return false if the process is gone
 */
bool
ProcessStat(const std::string& pid, char& state, int& ppid)
{
    const std::string stat = ReadText("/proc/" + pid + "/stat");
    const std::size_t close = stat.rfind(')');
    return close != std::string::npos
           && std::sscanf(stat.c_str() + close + 1, " %c %d", &state, &ppid) == 2;
}

/** \return the processes whose parent is \p parent (from /proc) */
std::vector<pid_t>
ChildrenOf(pid_t parent)
{
    std::vector<pid_t> children;
    for (const auto& entry : std::filesystem::directory_iterator("/proc"))
    {
        const std::string name = entry.path().filename().string();
        char state = 0;
        int ppid = 0;
        if (name.find_first_not_of("0123456789") == std::string::npos
            && ProcessStat(name, state, ppid) && ppid == parent)
        {
            children.push_back(std::stoi(name));
        }
    }
    return children;
}

} // namespace

/**
 * \brief An interrupted `study serving` ends at once with status 130 and a line saying nothing
 * was written, and its worker processes end with it (they went on for the length of a row).
 */
class CliServingInterruptTestCase : public TestCase
{
  public:
    CliServingInterruptTestCase()
        : TestCase("SIGINT ends study serving and its workers, exit 130, nothing written")
    {}

  private:
    void
    DoRun() override
    {
        const ScratchDir scratch("serving-interrupt");
        const std::string dir = scratch.Path();
        const pid_t pid = StartCli({"study",
                                    "serving",
                                    "--model=llama2-70b",
                                    "--gpus=8",
                                    "--tp=4,8",
                                    "--batch=1,2,4,8,16,32,64,128",
                                    "--prompt=4096",
                                    "--gen=2048",
                                    "--workers=2",
                                    "--out=" + dir + "/out"},
                                   dir);
        NS_TEST_ASSERT_MSG_GT(pid, 0, "started");
        std::vector<pid_t> workers;
        for (int i = 0; i < 100 && workers.size() < 2; ++i)
        {
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
            workers = ChildrenOf(pid);
        }
        NS_TEST_EXPECT_MSG_EQ(workers.size(), 2u, "two workers running");
        ::kill(pid, SIGINT);
        const int status = WaitCli(pid);
        const std::string err = ReadText(dir + "/stderr.bg.txt");
        NS_TEST_EXPECT_MSG_EQ(status, 130, err);
        NS_TEST_EXPECT_MSG_NE(
            err.find("study serving: interrupted; nothing written"), std::string::npos, err);
        NS_TEST_EXPECT_MSG_EQ(std::filesystem::exists(dir + "/out"), false, "nothing written");
        for (pid_t w : workers)
        {
            bool gone = false;
            for (int i = 0; i < 100 && !gone; ++i)
            {
                // Gone, or a zombie until init reaps it.
                char state = 0;
                int ppid = 0;
                gone = !ProcessStat(std::to_string(w), state, ppid) || state == 'Z';
                std::this_thread::sleep_for(std::chrono::milliseconds(50));
            }
            NS_TEST_EXPECT_MSG_EQ(gone, true, "worker " + std::to_string(w) + " ended");
        }
    }
};

/**
 * \brief --timeline writes where a shell's > would: through a symbolic link to its target (the
 * link stays), into a FIFO's reader, inside run's --out; a directory is refused before the
 * run. (Renaming the
 * written file onto the path replaced links, FIFOs and devices: /dev/null as root.)
 */
class CliTimelineTargetsTestCase : public TestCase
{
  public:
    CliTimelineTargetsTestCase()
        : TestCase("--timeline follows links, writes through FIFOs, refuses directories")
    {}

  private:
    void
    DoRun() override
    {
        const ScratchDir scratch("timeline-targets");
        const std::string dir = scratch.Path();
        const std::vector<std::string> run = {
            "run", "--model=gpt-1.7b", "--layers=2", "--tp=2", "--gbs=2"};
        std::ofstream(dir + "/real.json") << "old";
        std::filesystem::create_symlink("real.json", dir + "/link.json");
        CliResult r = RunCli(Cat(run, {"--timeline=" + dir + "/link.json"}), dir);
        NS_TEST_EXPECT_MSG_EQ(r.status, 0, r.err);
        NS_TEST_EXPECT_MSG_EQ(std::filesystem::is_symlink(dir + "/link.json"), true, "link kept");
        NS_TEST_EXPECT_MSG_EQ(Json::parse(ReadText(dir + "/real.json")).contains("traceEvents"),
                              true,
                              "its target holds the timeline");
        const std::string fifo = dir + "/pipe";
        RAPIDLLM_REQUIRE_EQ(::mkfifo(fifo.c_str(), 0600), 0, "a FIFO");
        const std::string copy = dir + "/copy.json";
        const std::string reader = "cat " + ShellQuote(fifo) + " > " + ShellQuote(copy) + " &";
        RAPIDLLM_REQUIRE_EQ(std::system(reader.c_str()), 0, "a reader");
        r = RunCli(Cat(run, {"--timeline=" + fifo}), dir);
        NS_TEST_EXPECT_MSG_EQ(r.status, 0, r.err);
        NS_TEST_EXPECT_MSG_EQ(std::filesystem::is_fifo(fifo), true, "the FIFO stays one");
        for (int i = 0; i < 100 && !Json::accept(ReadText(copy)); ++i)
        {
            ::usleep(50000); // the reader finishes after the writer closes
        }
        NS_TEST_EXPECT_MSG_EQ(Json::accept(ReadText(copy)), true, "the reader got the timeline");
        r = RunCli(Cat(run, {"--timeline=" + dir}), dir);
        NS_TEST_EXPECT_MSG_EQ(r.status, 2, r.err);
        NS_TEST_EXPECT_MSG_NE(r.err.find("option --timeline: '" + dir + "' is a directory"),
                              std::string::npos,
                              r.err);
        // Inside the directory --out makes (it was refused as not writable), and in a
        // directory that does not exist (said so).
        r = RunCli(Cat(run, {"--out=" + dir + "/o", "--timeline=" + dir + "/o/t.json"}), dir);
        NS_TEST_EXPECT_MSG_EQ(r.status, 0, r.err);
        NS_TEST_EXPECT_MSG_EQ(Json::accept(ReadText(dir + "/o/t.json")), true, "in --out");
        NS_TEST_EXPECT_MSG_EQ(std::filesystem::exists(dir + "/o/report.json"), true, "report");
        r = RunCli(Cat(run, {"--timeline=" + dir + "/none/t.json"}), dir);
        NS_TEST_EXPECT_MSG_EQ(r.status, 2, r.err);
        NS_TEST_EXPECT_MSG_NE(r.err.find("its directory '" + dir + "/none' does not exist"),
                              std::string::npos,
                              r.err);
    }
};

class CliTimelineTestSuite : public TestSuite
{
  public:
    CliTimelineTestSuite()
        : TestSuite("rapid-llm-cli-timeline", UNIT)
    {
        AddTestCase(new CliTimelineTestCase, TestCase::QUICK);
        AddTestCase(new CliProgressTestCase, TestCase::QUICK);
        AddTestCase(new CliIgnoredInterruptTestCase, TestCase::QUICK);
        AddTestCase(new CliCollectiveProgressTestCase, TestCase::QUICK);
        AddTestCase(new CliTerminateTestCase, TestCase::QUICK);
        AddTestCase(new CliTimelineTargetsTestCase, TestCase::QUICK);
        AddTestCase(new CliServingInterruptTestCase, TestCase::QUICK);
    }
};

static CliTimelineTestSuite g_cliTimelineTestSuite;

#endif // RAPIDLLM_CLI
