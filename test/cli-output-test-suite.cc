/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// The outputs of the real command line: every --json output parses with a strict JSON parser
// and carries values that agree with an independent expectation; the memory object of
// `run --json` is the one `memory --json` prints (byte-identical outputs and --timing:
// cli-determinism-test-suite.cc).

#include "cli-process.h"
#include "ns3/chakra-trace-writer.h"
#include "ns3/execution-trace.h"
#include "ns3/report-json.h"
#include "ns3/report-output.h"
#include "ns3/test.h"
#include "test-require.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <tuple>

using namespace ns3;
using namespace ns3::rapidllm;

#ifdef RAPIDLLM_CLI

namespace {

/** The exit status of run and memory for a job that does not fit in GPU memory. */
constexpr int kDoesNotFitStatus = 3;

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
                             "llmfoundry-h100-bf16-training.csv",
                             "llmfoundry-a100-bf16-training.csv",
                             "xla-h100-collectives.csv",
                             "nccl-tests-h100-4gpu-allreduce.csv",
                             "nccl-tests-h100-hgx-slices.csv",
                             "flash-attention-h100.csv"})
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
        const ScratchDir scratch("json");
        const std::string dir = scratch.Path();
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
        NS_TEST_EXPECT_MSG_EQ(run.at("attention_kernel").get<std::string>(),
                              "flash",
                              "run: auto is FlashAttention-2 on the A100 default");
        NS_TEST_EXPECT_MSG_EQ(
            JsonOf(Cat({"run", "--json", "--hardware=h100-sxm-80gb"}, kSmallTraining), dir)
                .at("attention_kernel")
                .get<std::string>(),
            "flash3",
            "run: auto is the Hopper kernel on H100");
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
        // A type the GPU has no tensor rate for runs on its CUDA cores: said, as run says it.
        for (const std::vector<std::string>& call :
             {std::vector<std::string>{"gemm", "--m=64", "--n=64", "--k=64"},
              std::vector<std::string>{"attention", "--batch=1", "--heads=2", "--seq=128"}})
        {
            const std::string& command = call.front();
            CliResult cuda =
                RunCli(Cat(call, {"--hardware=h100-sxm-80gb", "--dtype=fp32", "--json"}), dir);
            NS_TEST_EXPECT_MSG_EQ(cuda.status, 0, cuda.err);
            NS_TEST_EXPECT_MSG_NE(
                cuda.err.find("lists no tensor_tflops.fp32: GEMMs run on its CUDA cores"),
                std::string::npos,
                command + ": " + cuda.err);
        }

        // attention: the kernel auto resolves to, forward FLOPs 4 b h d over the query-key
        // pairs the causal mask keeps, the backward 2.5x; the same call by its kernel's name costs
        // the same.
        const std::vector<std::string> attArgs = {
            "attention", "--hardware=h100-sxm-80gb", "--batch=2", "--heads=16", "--seq=8192"};
        Json att = JsonOf(Cat(attArgs, {"--json"}), dir);
        NS_TEST_EXPECT_MSG_EQ(att.at("kernel").get<std::string>(), "flash3", "auto on H100");
        NS_TEST_EXPECT_MSG_EQ(att.at("forward").at("flops").get<double>(),
                              4.0 * 2 * 16 * 128 * (8192.0 * 8193 / 2),
                              "attention: causal forward FLOPs (each query sees itself and the "
                              "keys before it)");
        NS_TEST_EXPECT_MSG_EQ(att.at("backward").at("flops").get<double>(),
                              2.5 * att.at("forward").at("flops").get<double>(),
                              "attention: backward 2.5x");
        Json named = JsonOf(Cat(attArgs, {"--attention=flash3", "--json"}), dir);
        NS_TEST_EXPECT_MSG_EQ(named.at("forward").at("time_s").get<double>(),
                              att.at("forward").at("time_s").get<double>(),
                              "attention: auto is flash3 on H100");
        NS_TEST_EXPECT_MSG_EQ(JsonOf({"attention", "--json"}, dir).at("kernel").get<std::string>(),
                              "flash",
                              "auto on A100");
        // One query a sequence over a long cache: a decode step's split-KV kernel, bound by the
        // cache's reads (it was timed with the prefill kernel, 5x slower).
        const std::vector<std::string> decodeArgs = {"attention",
                                                     "--hardware=h100-sxm-80gb",
                                                     "--batch=64",
                                                     "--heads=8",
                                                     "--kv-heads=1",
                                                     "--seq=1",
                                                     "--kv-seq=4096",
                                                     "--causal=false",
                                                     "--json"};
        Json decode = JsonOf(decodeArgs, dir);
        NS_TEST_EXPECT_MSG_EQ(decode.at("kernel").get<std::string>(), "split-kv-decode", "decode");
        NS_TEST_EXPECT_MSG_EQ(decode.at("backward_kernel").get<std::string>(), "flash3", "");
        // The cache read once: 64 x 4096 tokens x 2 (K and V) x 128 x 2 bytes, at most the HBM's
        // rate.
        const double cacheBytes = 64.0 * 4096 * 2 * 128 * 2;
        NS_TEST_EXPECT_MSG_GT_OR_EQ(decode.at("forward").at("time_s").get<double>(),
                                    cacheBytes / 3350e9,
                                    "no faster than reading the cache");
        NS_TEST_EXPECT_MSG_LT(decode.at("forward").at("time_s").get<double>(),
                              3 * cacheBytes / 3350e9,
                              "bound by reading the cache");

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
        // The record names the machine and the options that move the time, so it reruns.
        NS_TEST_EXPECT_MSG_EQ(coll.at("hardware").at("source").get<std::string>(),
                              "a100-sxm-80gb",
                              "collective: the machine");
        NS_TEST_EXPECT_MSG_EQ(coll.at("chunks").get<uint32_t>(), 0u, "collective: chunks (auto)");
        NS_TEST_EXPECT_MSG_EQ(coll.at("reduce_GBps").get<double>(), 0.0, "collective: reduce");
        NS_TEST_EXPECT_MSG_EQ(
            coll.at("granularity").get<std::string>(), "message", "collective: granularity");
        // --set on the machine: twice the NVLink, NCCL's ring searched on it (16 x 30 GB/s, not
        // 12 x 20), the override echoed.
        Json faster = JsonOf({"collective",
                              "--hardware=a100-sxm-80gb",
                              "--gpus=8",
                              "--bytes=64MiB",
                              "--set=network.nvlink.bandwidth_GBps=2x",
                              "--json"},
                             dir);
        NS_TEST_EXPECT_MSG_EQ(
            faster.at("set"), Json::array({"network.nvlink.bandwidth_GBps=2x"}), "echoed");
        NS_TEST_EXPECT_MSG_LT(faster.at("time_s").get<double>(),
                              coll.at("time_s").get<double>() * 0.6,
                              "collective --set: 480 against 240 GB/s of bus bandwidth");
        // Over the collective (the simulator runs on to its watchdog's stop): a ring keeps its
        // links busy (it was 1e-13, over 1e9 s).
        const double utilization = coll.at("most_loaded_links")[0].at("utilization").get<double>();
        NS_TEST_EXPECT_MSG_GT(utilization, 0.5, "collective: the busiest link's utilization");
        NS_TEST_EXPECT_MSG_LT(utilization, 1.0 + 1e-9, "collective: at most its bandwidth");
        // A transfer beside it on one of its links (GPU 0's NVLink) slows it.
        Json beside = JsonOf({"collective",
                              "--hardware=a100-sxm-80gb",
                              "--gpus=8",
                              "--bytes=64MiB",
                              "--beside=0>1:64MiB",
                              "--json"},
                             dir);
        NS_TEST_EXPECT_MSG_GT(beside.at("time_s").get<double>(),
                              coll.at("time_s").get<double>() * 1.01,
                              "collective: slower beside a transfer on its links");
        NS_TEST_EXPECT_MSG_EQ(beside.value("beside", ""), "0>1:64MiB", "the transfer echoed");
        // The packet network's drops, which a shallow queue turns into retransmission timeouts.
        const Json dropping = JsonOf({"collective",
                                      "--hardware=a100-sxm-80gb",
                                      "--gpus=4",
                                      "--op=all-to-all",
                                      "--bytes=1MiB",
                                      "--backend=packet",
                                      "--packet=QueueDisc=fifo,QueueDiscPackets=2",
                                      "--json"},
                                     dir);
        NS_TEST_EXPECT_MSG_GT(dropping.at("packet_drops").get<uint64_t>(), 0u, "drops reported");
        NS_TEST_EXPECT_MSG_GT(dropping.at("data_packets").get<uint64_t>(), 0u, "data packets");
        NS_TEST_EXPECT_MSG_EQ(coll.contains("packet_drops"), false, "none on the flow network");
        NS_TEST_EXPECT_MSG_EQ(coll.contains("beside"), false, "none echoed without one");
        // On the packet network a transfer on one of the collective's own pairs runs beside
        // its messages on a connection of its own, prepared with the collective's, as on the
        // flow network (it ran after them on the pair's one connection: 8 A100s, 8 MiB beside
        // 64 MiB on 0>1, 349.6 us packet against 122.9 flow; then a 16-byte transfer beside a
        // 4 KiB ring made the ring open a connection inside the timed run, 9.66 against 8.44).
        for (const auto& [bytes, beside, tolerance] :
             std::vector<std::tuple<std::string, std::string, double>>{{"8MiB", "0>1:64MiB", 0.05},
                                                                       {"4KiB", "0>1:16B", 0.01}})
        {
            std::vector<double> times;
            for (const std::string backend : {"flow", "packet"})
            {
                times.push_back(JsonOf({"collective",
                                        "--hardware=a100-sxm-80gb",
                                        "--gpus=8",
                                        "--bytes=" + bytes,
                                        "--algorithm=ring",
                                        "--backend=" + backend,
                                        "--beside=" + beside,
                                        "--json"},
                                       dir)
                                    .at("time_s")
                                    .get<double>());
            }
            NS_TEST_EXPECT_MSG_EQ_TOL(times[1] / times[0], 1.0, tolerance, beside);
        }

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
                            dir)
                         .at("rows");
        NS_TEST_EXPECT_MSG_EQ(sweep.size(), 4, "sweep: 2 x 2 layouts");
        for (const auto& p : sweep)
        {
            NS_TEST_EXPECT_MSG_EQ(p.at("tp").get<uint32_t>() * p.at("pp").get<uint32_t>()
                                      * p.at("dp").get<uint32_t>(),
                                  8,
                                  "sweep: tp x pp x dp = 8");
        }

        // study faults drawing its plot: with one factor gnuplot warns of an empty x range, and
        // the warning once went to stdout ahead of the JSON.
        const std::vector<std::string> faultStudy = {"study",
                                                     "faults",
                                                     "--model=gpt-1.7b",
                                                     "--set=model.layers=2",
                                                     "--gpus=2",
                                                     "--dp=2",
                                                     "--gbs=2",
                                                     "--seq=1024",
                                                     "--routing=dimension-order"};
        Json faults = JsonOf(
            Cat(faultStudy,
                {"--links=tier:nvlink", "--factors=0.5", "--out=" + dir + "/faults", "--json"}),
            dir);
        NS_TEST_EXPECT_MSG_EQ(faults.at("rows").size(), 1, "study faults: one row");
        // The same for the sweep's plot of one layout ("empty y range").
        Json plotted = JsonOf({"sweep",
                               "--model=gpt-1.7b",
                               "--set=model.layers=2",
                               "--gpus=2",
                               "--gbs=4",
                               "--seq=1024",
                               "--tp=1",
                               "--pp=1",
                               "--mbs=1",
                               "--plot",
                               "--out=" + dir + "/plotted",
                               "--json"},
                              dir);
        NS_TEST_EXPECT_MSG_EQ(plotted.at("rows").size(), 1, "sweep --plot: one layout");
        // A study does not replace a sweep's results.csv: refused before it runs.
        CliResult overSweep = RunCli({"study",
                                      "hardware",
                                      "--model=gpt-1.7b",
                                      "--gpus=2",
                                      "--gbs=4",
                                      "--vary=gpu.hbm_gib=1x",
                                      "--out=" + dir + "/plotted"},
                                     dir);
        NS_TEST_EXPECT_MSG_EQ(overSweep.status, 2, overSweep.err);
        NS_TEST_EXPECT_MSG_NE(
            overSweep.err.find("holds a sweep (sweep.json)"), std::string::npos, overSweep.err);
        // A fault study of two link sets draws each; rerun with one into the same folder, the
        // earlier per-set plots go.
        const std::vector<std::string> setsOut = {"--factors=1,0.5", "--out=" + dir + "/sets"};
        const std::vector<std::string> twoSets =
            Cat(Cat(faultStudy, {"--links=tier:nvlink;gpu0-nvlink.sw0"}), setsOut);
        CliResult sets = RunCli(twoSets, dir);
        NS_TEST_EXPECT_MSG_EQ(sets.status, 0, sets.err);
        NS_TEST_EXPECT_MSG_NE(
            sets.out.find("slowdown-1.png to slowdown-2.png"), std::string::npos, sets.out);
        NS_TEST_EXPECT_MSG_EQ(std::filesystem::exists(dir + "/sets/slowdown-2.png"), true, "");
        sets = RunCli(Cat(Cat(faultStudy, {"--links=tier:nvlink"}), setsOut), dir);
        NS_TEST_EXPECT_MSG_EQ(sets.status, 0, sets.err);
        for (const char* stale : {"slowdown-1.png", "slowdown-2.png", "slowdown-2.plt"})
        {
            NS_TEST_EXPECT_MSG_EQ(std::filesystem::exists(dir + "/sets/" + stale), false, stale);
        }

        // sweep with whole experts (--etp=1): expert groups folded over tp, so ep 8 fits dp 4
        // (ep / tp = 4 divides it), which the default layouts (ep divides dp) rule out.
        const std::vector<std::string> moeSweep = {"sweep",
                                                   "--model=mixtral-8x7b",
                                                   "--set=model.layers=2",
                                                   "--gpus=8",
                                                   "--gbs=8",
                                                   "--seq=1024",
                                                   "--tp=2",
                                                   "--pp=1",
                                                   "--ep=4,8",
                                                   "--sp",
                                                   "--mbs=1",
                                                   "--recompute=none",
                                                   "--json"};
        NS_TEST_EXPECT_MSG_EQ(JsonOf(moeSweep, dir).at("rows").size(), 1, "sweep: ep 4 only");
        Json folded = JsonOf(Cat(moeSweep, {"--etp=1"}), dir).at("rows");
        NS_TEST_EXPECT_MSG_EQ(folded.size(), 2, "sweep --etp=1: ep 4 and 8");
        for (const auto& p : folded)
        {
            NS_TEST_EXPECT_MSG_EQ(p.at("dp").get<uint32_t>(), 4, "sweep --etp=1: dp");
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
        // ... and with a slow GPU (a straggler), which both take and echo.
        const Json slowRun =
            JsonOf(Cat(Cat({"run", "--json"}, kSmallTraining), {"--slow-gpus=gpu1:0.5"}), dir);
        const Json slowReplay = JsonOf(
            {"replay", "--trace=" + traces + "/trace", "--json", "--slow-gpus=gpu1:0.5"}, dir);
        const double slowStep = slowRun.at("step_time_s").get<double>();
        NS_TEST_EXPECT_MSG_GT(slowStep, run.at("step_time_s").get<double>(), "a slow GPU waits");
        NS_TEST_EXPECT_MSG_EQ_TOL(slowReplay.at("step_time_s").get<double>(),
                                  slowStep,
                                  1e-6 * slowStep,
                                  "replay with a slow GPU = run with it");
        NS_TEST_EXPECT_MSG_EQ(slowReplay.at("input").at("hardware").at("slow_gpus").dump(),
                              "[{\"gpu\":1,\"speed\":0.5}]",
                              "the replay's echo names it");
        NS_TEST_EXPECT_MSG_EQ(run.at("input").at("hardware").contains("slow_gpus"),
                              false,
                              "and no echo names one where none is slow");
        // A GPU of its own spec: run costs its kernels on it and echoes it.
        const Json ownSpec = JsonOf(Cat(Cat({"run", "--json"}, kSmallTraining),
                                        {"--gpu-set=gpu1:gpu.hbm_bandwidth_GBps=0.5x"}),
                                    dir);
        NS_TEST_EXPECT_MSG_GT(ownSpec.at("step_time_s").get<double>(),
                              run.at("step_time_s").get<double>(),
                              "GPU 1's HBM at half its bandwidth slows the step");
        NS_TEST_EXPECT_MSG_EQ(ownSpec.at("input").at("hardware").at("gpu_set").dump(),
                              "[{\"gpu\":1,\"set\":[\"gpu.hbm_bandwidth_GBps=0.5x\"]}]",
                              "the echo names it");
        NS_TEST_EXPECT_MSG_EQ(run.at("input").at("hardware").contains("gpu_set"),
                              false,
                              "and none where no GPU has its own");
        // A job file's slow GPUs and network (routing, faults, network --set): trace writes
        // the healthy job and says how to replay it on them; that replay is run's step. (The
        // printed command named the faults and slow GPUs only: a dead link then had no path.)
        const std::string jobFile = dir + "/slow.yaml";
        std::ofstream(jobFile) << "model: gpt-1.7b\ngpus: 8\nparallel: {tp: 2, pp: 2}\n"
                                  "global_batch: 8\nsequence: 1024\nslow_gpus: [gpu1:0.5]\n"
                                  "routing: fault-aware\nfault: [gpu1-nvlink.sw0:0.5]\n"
                                  "set: [network.nvlink.latency_ns=2000, gpu.hbm_gib=160]\n";
        const double slowNetworkStep =
            JsonOf({"run", "--run=" + jobFile, "--json"}, dir).at("step_time_s").get<double>();
        NS_TEST_EXPECT_MSG_GT(slowNetworkStep, slowStep, "the network's changes cost time");
        t = RunCli({"trace", "--run=" + jobFile, "--out=" + dir + "/slow"}, dir);
        NS_TEST_EXPECT_MSG_EQ(t.status, 0, t.err);
        const std::string hint = "as run does: ";
        RAPIDLLM_REQUIRE_EQ((t.err.find(hint) != std::string::npos), true, t.err);
        std::vector<std::string> suggested;
        std::istringstream words(t.err.substr(t.err.find(hint) + hint.size()));
        for (std::string w; words >> w;)
        {
            suggested.push_back(w);
        }
        NS_TEST_EXPECT_MSG_EQ_TOL(
            JsonOf(Cat(suggested, {"--json"}), dir).at("step_time_s").get<double>(),
            slowNetworkStep,
            1e-6 * slowNetworkStep,
            "trace's suggested replay = run with the slow GPU and the job's network");
        // ... an inference request's too, with its engine's host costs in the traces.
        const std::vector<std::string> served = Cat(kSmallInference, {"--engine=vllm"});
        const std::string servedTraces = dir + "/served";
        t = RunCli(Cat({"trace", "--out=" + servedTraces}, served), dir);
        NS_TEST_EXPECT_MSG_EQ(t.status, 0, t.err);
        const Json servedJson = JsonOf(Cat({"run", "--json"}, served), dir);
        const double servedRun = servedJson.at("step_time_s");
        const Json replayed =
            JsonOf({"replay", "--trace=" + servedTraces + "/trace", "--json"}, dir);
        NS_TEST_EXPECT_MSG_EQ_TOL(replayed.at("step_time_s").get<double>(),
                                  servedRun,
                                  1e-6 * servedRun,
                                  "replay of the written inference traces = run");
        // The traces say where the first token comes out: replay reports the request's
        // latencies and throughput as run does (it gave the step time alone).
        for (const char* field : {"ttft_s", "tpot_s", "tokens_per_s_per_gpu"})
        {
            RAPIDLLM_REQUIRE_EQ(replayed.contains(field), true, field);
            const double expected = servedJson.at(field).get<double>();
            NS_TEST_EXPECT_MSG_EQ_TOL(
                replayed.at(field).get<double>(), expected, 1e-6 * expected, field);
        }

        // validate on the first row of each table: the published values are the tables'.
        Json validate =
            JsonOf({"validate", "--data=" + SmallValidationData(dir), "--json"}, dir).at("rows");
        NS_TEST_ASSERT_MSG_GT(validate.size(), 1, "validate: rows");
        NS_TEST_EXPECT_MSG_EQ(validate[0].at("config").get<std::string>().find("gpt-1.7b"),
                              0,
                              "validate: the first training row");
        NS_TEST_EXPECT_MSG_EQ(validate[0].at("published").get<double>(), 3.53, "published");
        NS_TEST_EXPECT_MSG_EQ_TOL(validate[0].at("error").get<double>(),
                                  validate[0].at("predicted").get<double>() / 3.53 - 1,
                                  1e-12,
                                  "validate: error = predicted / published - 1");
        // --only: the tables whose file name contains the text, every row of them.
        Json only = JsonOf(
            {"validate", "--data=" + SmallValidationData(dir), "--only=megatron", "--json"}, dir);
        NS_TEST_EXPECT_MSG_EQ(only.at("input").at("tables").size(), 1, "validate --only: a table");
        NS_TEST_EXPECT_MSG_EQ(only.at("rows").size(), 1, "validate --only: its first row");
        NS_TEST_EXPECT_MSG_EQ(only.at("rows")[0].at("set").get<std::string>(),
                              validate[0].at("set").get<std::string>(),
                              "validate --only: the Megatron row");

        // xval: one small workload on both networks.
        Json xval = JsonOf({"xval", "--quick", "--only=ring-allreduce-8gpu-1MiB", "--json"}, dir)
                        .at("rows");
        RAPIDLLM_REQUIRE_EQ(xval.size(), 1, "xval: one row");
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
    }
};

/**
 * \brief `run --json` carries the memory verdict as the very object `memory --json` prints
 * (one function writes both): training with a pipeline, inference with a KV cache (memory adds
 * the largest batch that fits beside it), and a job that does not fit.
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
        const ScratchDir scratch("memory");
        const std::string dir = scratch.Path();
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
            // 3: the job does not fit (the last one), its report printed all the same.
            const int status = &job == &jobs.back() ? kDoesNotFitStatus : 0;
            NS_TEST_ASSERT_MSG_EQ(run.status, status, run.err);
            NS_TEST_ASSERT_MSG_EQ(memory.status, status, memory.err);
            const Json fromRun = Json::parse(run.out).at("memory");
            Json fromMemory = Json::parse(memory.out);
            // Beside the memory object, memory echoes its input as run does, without the
            // network's backend and routing (it runs nothing on the network).
            RAPIDLLM_REQUIRE_EQ(fromMemory.contains("input"), true, "memory --json: input");
            Json input = fromMemory.at("input");
            Json runInput = Json::parse(run.out).at("input");
            NS_TEST_EXPECT_MSG_EQ(input.contains("backend"), false, "no backend");
            NS_TEST_EXPECT_MSG_EQ(input.contains("routing"), false, "no routing");
            // run also says how its network ran the collectives.
            NS_TEST_EXPECT_MSG_EQ(runInput.at("granularity").get<std::string>(), "auto", "run");
            NS_TEST_EXPECT_MSG_EQ(runInput.at("symmetry").get<bool>(), true, "run");
            for (const char* key : {"backend", "routing", "granularity", "symmetry"})
            {
                runInput.erase(key);
            }
            NS_TEST_EXPECT_MSG_EQ(input.dump(), runInput.dump(), "the input run echoes");
            fromMemory.erase("input");
            // And for inference the largest batch that fits (at least the job as given, 4).
            const bool inference = &job == &jobs[2];
            NS_TEST_EXPECT_MSG_EQ(fromMemory.contains("largest_batch"), inference, Joined(job));
            if (inference)
            {
                NS_TEST_EXPECT_MSG_GT_OR_EQ(
                    fromMemory.at("largest_batch").get<uint32_t>(), 4u, "the batch given fits");
                fromMemory.erase("largest_batch");
            }
            // And for a job that does not fit the single changes its text lists.
            NS_TEST_EXPECT_MSG_EQ(fromMemory.contains("alternatives"),
                                  !fromRun.at("feasible").get<bool>(),
                                  Joined(job));
            fromMemory.erase("alternatives");
            NS_TEST_EXPECT_MSG_EQ(fromRun.dump(), fromMemory.dump(), Joined(job));
            NS_TEST_EXPECT_MSG_EQ(fromRun.at("feasible").get<bool>(),
                                  Json::parse(run.out).at("feasible").get<bool>(),
                                  "the run's verdict is the memory verdict");
        }
        CliResult big =
            RunCli({"memory", "--json", "--model=gpt3-175b", "--gpus=8", "--tp=8"}, dir);
        NS_TEST_EXPECT_MSG_EQ(
            Json::parse(big.out).at("feasible").get<bool>(), false, "175B on 8 GPUs does not fit");
        // Every pipeline stage, as memory --csv's rows; the peak is the largest.
        const Json staged = Json::parse(RunCli({"memory",
                                                "--json",
                                                "--model=gpt-1.7b",
                                                "--gpus=8",
                                                "--tp=2",
                                                "--pp=2",
                                                "--gbs=8",
                                                "--seq=512"},
                                               dir)
                                            .out);
        RAPIDLLM_REQUIRE_EQ(staged.at("stages").size(), 2u, "two stages");
        uint64_t largest = 0;
        for (const Json& stage : staged.at("stages"))
        {
            largest = std::max(largest, stage.at("peak_bytes").get<uint64_t>());
        }
        NS_TEST_EXPECT_MSG_EQ(largest, staged.at("peak_bytes").get<uint64_t>(), "the peak stage");
        // A job that does not fit lists the single changes with their verdicts; one that fits
        // does not.
        CliResult bigText = RunCli({"memory", "--model=gpt3-175b", "--gpus=8", "--tp=8"}, dir);
        NS_TEST_ASSERT_MSG_EQ(bigText.status, kDoesNotFitStatus, bigText.err);
        NS_TEST_EXPECT_MSG_NE(
            bigText.out.find("One change at a time"), std::string::npos, bigText.out);
        NS_TEST_EXPECT_MSG_NE(bigText.out.find("--recompute=full"), std::string::npos, bigText.out);
        NS_TEST_EXPECT_MSG_EQ(
            bigText.out.find("--zero=1"), std::string::npos, "no data parallelism to shard over");
        CliResult bigRun = RunCli({"run", "--model=gpt3-175b", "--gpus=8", "--tp=8"}, dir);
        NS_TEST_ASSERT_MSG_EQ(bigRun.status, kDoesNotFitStatus, bigRun.err);
        NS_TEST_EXPECT_MSG_NE(bigRun.out.find("rapid-llm memory with the same options"),
                              std::string::npos,
                              "run points to the changes: " << bigRun.out);
        // A counted rate above the GPU's peak (the whole attention matrix at a long sequence)
        // says why; a short one says nothing.
        const std::vector<std::string> longContext = {"run",
                                                      "--model=llama3-8b",
                                                      "--hardware=h100-sxm-80gb",
                                                      "--gpus=8",
                                                      "--cp=8",
                                                      "--gbs=1",
                                                      "--layers=2",
                                                      "--recompute=full"};
        CliResult longRun = RunCli(Cat(longContext, {"--seq=524288"}), dir);
        NS_TEST_ASSERT_MSG_EQ(longRun.status, 0, longRun.err);
        NS_TEST_EXPECT_MSG_NE(
            longRun.out.find("above the 989 peak: the count has the whole attention matrix"),
            std::string::npos,
            longRun.out);
        CliResult shortRun = RunCli(Cat(longContext, {"--seq=8192"}), dir);
        NS_TEST_ASSERT_MSG_EQ(shortRun.status, 0, shortRun.err);
        NS_TEST_EXPECT_MSG_EQ(shortRun.out.find("peak:"), std::string::npos, shortRun.out);
        // The framework assumption is stated: Megatron-LM by default, NeMo 1.0's Apex optimizer
        // when asked for.
        CliResult megatron = RunCli(Cat({"memory"}, kSmallTraining), dir);
        NS_TEST_ASSERT_MSG_EQ(megatron.status, 0, megatron.err);
        NS_TEST_EXPECT_MSG_EQ(
            megatron.out.find("One change at a time"), std::string::npos, "it fits: no changes");
        NS_TEST_EXPECT_MSG_NE(
            megatron.out.find("Assumed: Megatron-LM"), std::string::npos, megatron.out);
        // The text echo leaves out what does not apply (no "backend: , routing: ...").
        NS_TEST_EXPECT_MSG_NE(megatron.out.find("# set: "), std::string::npos, megatron.out);
        NS_TEST_EXPECT_MSG_EQ(megatron.out.find("backend:"), std::string::npos, megatron.out);
        CliResult apex =
            RunCli(Cat({"memory", "--memory-layout=apex", "--zero=1"}, kSmallTraining), dir);
        NS_TEST_ASSERT_MSG_EQ(apex.status, 0, apex.err);
        NS_TEST_EXPECT_MSG_NE(
            apex.out.find("Assumed: NeMo 1.0 distributed_fused_adam"), std::string::npos, apex.out);
        // ... and in the JSON, the same sentence.
        CliResult apexJson = RunCli(
            Cat({"memory", "--memory-layout=apex", "--zero=1", "--json"}, kSmallTraining), dir);
        NS_TEST_ASSERT_MSG_EQ(apexJson.status, 0, apexJson.err);
        NS_TEST_EXPECT_MSG_EQ(Json::parse(apexJson.out)
                                  .at("assumption")
                                  .get<std::string>()
                                  .rfind("NeMo 1.0 distributed_fused_adam", 0),
                              0u,
                              "memory --json: the framework assumption");
    }
};

/**
 * \brief A job that does not fit in GPU memory is not a success to a script: `run` and `memory`
 * print their report in full (text, JSON or CSV) and exit with status 3, saying why on stderr;
 * a job that fits exits 0 and says nothing there. Training (optimizer state) and inference (KV
 * cache) alike.
 */
class CliDoesNotFitStatusTestCase : public TestCase
{
  public:
    CliDoesNotFitStatusTestCase()
        : TestCase("run and memory exit with status 3 when the job does not fit")
    {}

  private:
    void
    DoRun() override
    {
        const ScratchDir scratch("does-not-fit");
        const std::string dir = scratch.Path();
        // 175B on 8 GPUs needs about 300 GiB a GPU; Llama-2 7B's KV cache of 64 x 4,008 tokens
        // (0.5 MiB a token, 125 GiB) does not fit one A100 either.
        const std::vector<std::vector<std::string>> tooBig = {
            {"--model=gpt3-175b", "--gpus=8", "--tp=8"},
            {"--model=llama2-7b", "--mode=inference", "--batch=64", "--prompt=4000", "--gen=8"},
        };
        const std::vector<std::vector<std::string>> fits = {kSmallTraining, kSmallInference};
        for (const char* command : {"run", "memory"})
        {
            for (const char* format : {"--json", "--csv", "--json=false"})
            {
                for (const auto& job : tooBig)
                {
                    const std::vector<std::string> args = Cat({command, format}, job);
                    CliResult r = RunCli(args, dir);
                    NS_TEST_EXPECT_MSG_EQ(r.status, kDoesNotFitStatus, Joined(args) + ": " + r.err);
                    NS_TEST_EXPECT_MSG_NE(r.err.find("does not fit in GPU memory"),
                                          std::string::npos,
                                          Joined(args) + ": " + r.err);
                    NS_TEST_EXPECT_MSG_EQ(r.err.find("error"), std::string::npos, r.err);
                    if (std::string(format) == "--json")
                    {
                        const Json j = Json::parse(r.out);
                        NS_TEST_EXPECT_MSG_EQ(j.at("feasible").get<bool>(), false, Joined(args));
                        // memory's single changes, as its text lists them: training's
                        // first with dp 1 (no ZeRO to shard), inference's the largest batch.
                        const bool training = job[0] == "--model=gpt3-175b";
                        const bool memory = std::string(command) == "memory";
                        NS_TEST_EXPECT_MSG_EQ(j.contains("alternatives"), memory, Joined(args));
                        if (j.contains("alternatives"))
                        {
                            NS_TEST_EXPECT_MSG_EQ(
                                j.at("alternatives").at(0).at("option").get<std::string>(),
                                (training
                                     ? std::string("--recompute=selective")
                                     : "--batch="
                                           + std::to_string(j.at("largest_batch").get<uint32_t>())),
                                Joined(args));
                            // Each with the framework it assumes (ZeRO-3 is DeepSpeed's or
                            // FSDP's layout, not Megatron-LM's).
                            for (const Json& a : j.at("alternatives"))
                            {
                                NS_TEST_EXPECT_MSG_EQ(a.at("assumption").get<std::string>().empty(),
                                                      false,
                                                      Joined(args));
                            }
                        }
                    }
                    else
                    {
                        NS_TEST_EXPECT_MSG_EQ(r.out.empty(), false, "the report is printed");
                    }
                }
                for (const auto& job : fits)
                {
                    const std::vector<std::string> args = Cat({command, format}, job);
                    CliResult r = RunCli(args, dir);
                    NS_TEST_EXPECT_MSG_EQ(r.status, 0, Joined(args) + ": " + r.err);
                    NS_TEST_EXPECT_MSG_EQ(r.err, "", Joined(args));
                }
            }
        }
    }
};

/**
 * \brief An output that cannot be written (stdout on a full disk) exits with status 5 and says
 * so: a script must not take cut or empty JSON for a result, nor for bad input (2); xval's missed
 * bar exits with 4 (not 1, an internal fault's).
 */
class CliOutputErrorStatusTestCase : public TestCase
{
  public:
    CliOutputErrorStatusTestCase()
        : TestCase("a command whose stdout cannot be written exits with status 5")
    {}

  private:
    void
    DoRun() override
    {
        const ScratchDir scratch("output-error");
        const std::string err = scratch.Path() + "/stderr.txt";
        // Help and the version too, which ns-3's CommandLine prints and exits after.
        for (const std::vector<std::string>& args : {std::vector<std::string>{"presets"},
                                                     Cat({"run", "--json"}, kSmallTraining),
                                                     {"--help"},
                                                     {"run", "--help"},
                                                     {"--version"},
                                                     {"study", "--help"}})
        {
            std::string command = ShellQuote(RAPIDLLM_CLI);
            for (const std::string& a : args)
            {
                command += " " + ShellQuote(a);
            }
            // /dev/full takes the open but fails every write with "no space left on device".
            const int raw = std::system((command + " >/dev/full 2>" + ShellQuote(err)).c_str());
            NS_TEST_EXPECT_MSG_EQ(WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, 5, Joined(args));
            NS_TEST_EXPECT_MSG_NE(ReadText(err).find("error: cannot write 'standard output'"),
                                  std::string::npos,
                                  ReadText(err));
        }
        // A check that misses its bar: 4, its rows saying so, stderr naming the first.
        const CliResult xval = RunCli(
            {"xval", "--quick", "--only=ring-allreduce-8gpu", "--bar=0", "--json"}, scratch.Path());
        NS_TEST_EXPECT_MSG_EQ(xval.status, 4, xval.err);
        NS_TEST_EXPECT_MSG_EQ(
            Json::parse(xval.out).at("rows").at(0).at("within_bar").get<bool>(), false, xval.out);
        NS_TEST_EXPECT_MSG_NE(xval.err.find("1 of 1 workloads differ by more than the bar (0%): "
                                            "ring-allreduce-8gpu-1MiB"),
                              std::string::npos,
                              xval.err);
    }
};

/**
 * \brief Without the gnuplot program, `--plot` is refused before the sweep runs, and `run --out`
 * writes its plot's script and its report, saying on stderr that the PNG is not drawn.
 */
class CliWithoutGnuplotTestCase : public TestCase
{
  public:
    CliWithoutGnuplotTestCase()
        : TestCase("without gnuplot, --plot is refused up front and --out writes scripts")
    {}

  private:
    void
    DoRun() override
    {
        const ScratchDir scratch("no-gnuplot");
        const std::string dir = scratch.Path();
        const std::string noGnuplot = "env PATH=/nonexistent";
        const std::string sweepOut = dir + "/sweep";
        CliResult r = RunCli(
            {"sweep", "--model=gpt-1.7b", "--gpus=8", "--gbs=8", "--out=" + sweepOut, "--plot"},
            dir,
            noGnuplot);
        NS_TEST_EXPECT_MSG_EQ(r.status, 2, r.err);
        NS_TEST_EXPECT_MSG_NE(
            r.err.find("option --plot: draws with the gnuplot program"), std::string::npos, r.err);
        NS_TEST_EXPECT_MSG_EQ(std::filesystem::exists(sweepOut), false, "nothing ran");
        const std::string runOut = dir + "/run";
        // An earlier run's PNG in the folder is not left beside this run's script.
        std::filesystem::create_directories(runOut);
        std::ofstream(runOut + "/breakdown.png") << "an earlier plot";
        r = RunCli(Cat({"run", "--json", "--out=" + runOut}, kSmallTraining), dir, noGnuplot);
        NS_TEST_EXPECT_MSG_EQ(r.status, 0, r.err);
        NS_TEST_EXPECT_MSG_NE(r.err.find("gets its plots' gnuplot scripts (.plt), not their PNGs"),
                              std::string::npos,
                              r.err);
        NS_TEST_EXPECT_MSG_EQ(Json::parse(r.out).at("feasible").get<bool>(), true, "the report");
        NS_TEST_EXPECT_MSG_EQ(std::filesystem::exists(runOut + "/breakdown.plt"), true, "script");
        NS_TEST_EXPECT_MSG_EQ(std::filesystem::exists(runOut + "/breakdown.png"), false, "PNG");
        NS_TEST_EXPECT_MSG_EQ(std::filesystem::exists(runOut + "/report.json"), true, "report");
    }
};

/**
 * \brief The fluid form of a data-parallel all-reduce that a pipeline's embedding transfer
 * slows part-way gives its messages' step: the message floor's walk charged a message already
 * going when the transfer came its slowed share throughout (0.0138 against 0.0130 s, +6.8%).
 */
class CliFluidBesideTransferTestCase : public TestCase
{
  public:
    CliFluidBesideTransferTestCase()
        : TestCase("run: fluid collectives slowed part-way give their messages' step")
    {}

  private:
    void
    DoRun() override
    {
        const ScratchDir scratch("fluid-beside");
        const std::vector<std::string> job = {"run",
                                              "--json",
                                              "--model=gpt-1.7b",
                                              "--layers=2",
                                              "--seq=256",
                                              "--gpus=4",
                                              "--pp=2",
                                              "--dp=2",
                                              "--gbs=2"};
        std::vector<double> steps;
        for (const char* granularity : {"--granularity=fluid", "--granularity=message"})
        {
            const CliResult r = RunCli(Cat(job, {granularity}), scratch.Path());
            RAPIDLLM_REQUIRE_EQ(r.status, 0, r.err);
            steps.push_back(Json::parse(r.out).at("step_time_s").get<double>());
        }
        NS_TEST_EXPECT_MSG_EQ_TOL(steps[0], steps[1], 1e-6 * steps[1], "fluid = messages");
    }
};

/**
 * \brief A spec file's input echo carries a digest of its contents: a file edited between two
 * runs gave the same record for different results (its path and summary fields alike).
 */
class CliSpecDigestTestCase : public TestCase
{
  public:
    CliSpecDigestTestCase()
        : TestCase("a spec file's echo carries its contents' digest")
    {}

  private:
    void
    DoRun() override
    {
        const ScratchDir scratch("spec-digest");
        const std::string dir = scratch.Path();
        const std::string file = dir + "/hw.yaml";
        std::vector<Json> echoes;
        for (const char* extra : {"", "  sm_count: 54\n"})
        {
            std::ofstream(file) << "base: a100-sxm-80gb\nname: mine\ngpu:\n  hbm_gib: 40\n"
                                << extra;
            const CliResult r =
                RunCli(Cat({"run", "--json", "--hardware=" + file}, kSmallTraining), dir);
            RAPIDLLM_REQUIRE_EQ(r.status, 0, r.err);
            echoes.push_back(Json::parse(r.out).at("input").at("hardware"));
        }
        NS_TEST_EXPECT_MSG_EQ(
            echoes[0].at("digest").get<std::string>().rfind("fnv1a64 ", 0), 0u, echoes[0].dump());
        NS_TEST_EXPECT_MSG_NE(echoes[0].at("digest"), echoes[1].at("digest"), "the edit shows");
        echoes[0].erase("digest");
        echoes[1].erase("digest");
        NS_TEST_EXPECT_MSG_EQ(echoes[0], echoes[1], "the rest of the echo reads alike");
        // A preset's name says what it is: no digest.
        const CliResult preset = RunCli(Cat({"run", "--json"}, kSmallTraining), dir);
        RAPIDLLM_REQUIRE_EQ(preset.status, 0, preset.err);
        NS_TEST_EXPECT_MSG_EQ(Json::parse(preset.out).at("input").at("hardware").contains("digest"),
                              false,
                              preset.out);
    }
};

/**
 * \brief When gnuplot fails, the error quotes gnuplot's own last words: the script it names
 * may be in a folder already taken away (a study's staging folder), so a command to rerun it
 * would not help.
 */
class CliGnuplotFailsTestCase : public TestCase
{
  public:
    CliGnuplotFailsTestCase()
        : TestCase("a failing gnuplot's own error reaches the message")
    {}

  private:
    void
    DoRun() override
    {
        const ScratchDir scratch("gnuplot-fails");
        const std::string dir = scratch.Path();
        std::filesystem::create_directories(dir + "/bin");
        {
            std::ofstream fake(dir + "/bin/gnuplot");
            fake << "#!/bin/sh\necho '\"x.plt\" line 3: unknown terminal type' >&2\nexit 1\n";
        }
        std::filesystem::permissions(dir + "/bin/gnuplot", std::filesystem::perms::owner_all);
        // A relative PATH entry: the program found is the one run, from the PNG's folder too.
        const CliResult r = RunCli(Cat({"run", "--out=" + dir + "/run"}, kSmallTraining),
                                   dir,
                                   "cd " + dir + " && env PATH=bin:/usr/bin:/bin");
        NS_TEST_EXPECT_MSG_EQ(r.status, 5, r.err);
        NS_TEST_EXPECT_MSG_NE(
            r.err.find("line 3: unknown terminal type"), std::string::npos, r.err);
        NS_TEST_EXPECT_MSG_EQ(r.err.find("(run: "), std::string::npos, r.err);
        NS_TEST_EXPECT_MSG_EQ(
            std::filesystem::exists(dir + "/run/breakdown.plt.err"), false, r.err);
    }
};

/**
 * \brief The input echo holds ns-3 attribute defaults from NS_ATTRIBUTE_DEFAULT, which move a
 * step (a replayer's SerializeGroups=false did, with the same echo).
 */
class CliEchoSettingsTestCase : public TestCase
{
  public:
    CliEchoSettingsTestCase()
        : TestCase("the input echo holds NS_ATTRIBUTE_DEFAULT")
    {}

  private:
    void
    DoRun() override
    {
        const ScratchDir scratch("echo-settings");
        const std::string dir = scratch.Path();
        const std::string defaults = "ns3::rapidllm::TraceReplayer::SerializeGroups=false";
        CliResult r = RunCli(
            Cat({"run", "--json"}, kSmallTraining), dir, "env NS_ATTRIBUTE_DEFAULT=" + defaults);
        NS_TEST_ASSERT_MSG_EQ(r.status, 0, r.err);
        const Json input = Json::parse(r.out).at("input");
        NS_TEST_EXPECT_MSG_EQ(input.at("ns_attribute_default").get<std::string>(), defaults, r.out);
        r = RunCli(Cat({"run"}, kSmallTraining), dir, "env NS_ATTRIBUTE_DEFAULT=" + defaults);
        NS_TEST_EXPECT_MSG_NE(
            r.out.find("\n# NS_ATTRIBUTE_DEFAULT: " + defaults + "\n"), std::string::npos, r.out);
        // The other commands' echoes (sweep, replay, validate and xval ran with them unsaid).
        const std::string env = "env NS_ATTRIBUTE_DEFAULT=" + defaults;
        RAPIDLLM_REQUIRE_EQ(
            RunCli(Cat({"trace", "--out=" + dir + "/t"}, kSmallTraining), dir).status, 0, "");
        const std::vector<std::vector<std::string>> commands = {
            {"sweep",
             "--json",
             "--workers=1",
             "--model=gpt-1.7b",
             "--set=model.layers=2",
             "--gpus=2",
             "--gbs=2"},
            {"replay", "--json", "--trace=" + dir + "/t"},
            {"validate", "--json", "--quick", "--only=llmfoundry-a100"},
            {"xval", "--json", "--quick", "--only=ring-allreduce-8gpu-1MiB"}};
        for (const std::vector<std::string>& command : commands)
        {
            r = RunCli(command, dir, env);
            RAPIDLLM_REQUIRE_EQ(r.status, 0, r.err);
            const Json echo = Json::parse(r.out).at("input");
            NS_TEST_EXPECT_MSG_EQ(echo.value("ns_attribute_default", std::string()),
                                  defaults,
                                  command[0] << ": " << echo.dump());
        }
        // Those that echo their input at the top level (they echoed neither it nor a version).
        const std::vector<std::vector<std::string>> flat = {
            {"collective", "--json", "--hardware=a100-sxm-80gb", "--gpus=8", "--bytes=1MiB"},
            {"gemm", "--json", "--m=64", "--n=64", "--k=64"},
            {"attention", "--json"}};
        for (const std::vector<std::string>& command : flat)
        {
            r = RunCli(command, dir, env);
            RAPIDLLM_REQUIRE_EQ(r.status, 0, r.err);
            const Json echo = Json::parse(r.out);
            NS_TEST_EXPECT_MSG_EQ(echo.value("ns_attribute_default", std::string()),
                                  defaults,
                                  command[0] << ": " << r.out);
            NS_TEST_EXPECT_MSG_EQ(echo.contains("version"), true, command[0]);
        }
    }
};

/**
 * \brief run prefills a static batch in one forward; under vLLM, whose scheduler runs at most
 * its token budget a step (and whose memory verdict counts such a step), it says so.
 */
class CliVllmBatchNoteTestCase : public TestCase
{
  public:
    CliVllmBatchNoteTestCase()
        : TestCase("run notes a vLLM batch prefilled beyond the engine's token budget")
    {}

  private:
    void
    DoRun() override
    {
        const ScratchDir scratch("vllm-batch-note");
        const std::vector<std::string> job = {"run",
                                              "--mode=inference",
                                              "--model=llama2-7b",
                                              "--prompt=1024",
                                              "--gen=4",
                                              "--engine=vllm"};
        CliResult r = RunCli(Cat(job, {"--batch=16"}), scratch.Path());
        NS_TEST_EXPECT_MSG_EQ(r.status, 0, r.err);
        NS_TEST_EXPECT_MSG_NE(r.err.find("16384 prompt tokens are prefilled in one forward"),
                              std::string::npos,
                              r.err);
        r = RunCli(Cat(job, {"--batch=2"}), scratch.Path()); // the A100 default budget, 2048
        NS_TEST_EXPECT_MSG_EQ(r.err.find("prefilled in one forward"), std::string::npos, r.err);
    }
};

/**
 * \brief Settings that change nothing are said: a fault timed after the step ended (a bare
 * @2 is seconds; the step ran healthy, silently) and ZeRO over one data-parallel rank.
 */
class CliNoEffectNotesTestCase : public TestCase
{
  public:
    CliNoEffectNotesTestCase()
        : TestCase("run notes a fault after the step's end and ZeRO over one rank")
    {}

  private:
    void
    DoRun() override
    {
        const ScratchDir scratch("no-effect-notes");
        const std::vector<std::string> job = {
            "run", "--model=gpt-1.7b", "--layers=2", "--gpus=16", "--tp=8", "--gbs=16"};
        CliResult r = RunCli(Cat(job, {"--fault=tier:infiniband:0.1@2"}), scratch.Path());
        NS_TEST_EXPECT_MSG_EQ(r.status, 0, r.err);
        NS_TEST_EXPECT_MSG_NE(
            r.err.find("starts at 2 s, after the step ended"), std::string::npos, r.err);
        r = RunCli(Cat(job, {"--fault=tier:infiniband:0.1@2us"}), scratch.Path());
        NS_TEST_EXPECT_MSG_EQ(r.err.find("after the step ended"), std::string::npos, r.err);
        r = RunCli(
            {"run", "--model=gpt-1.7b", "--layers=2", "--gpus=8", "--tp=8", "--gbs=4", "--zero=2"},
            scratch.Path());
        NS_TEST_EXPECT_MSG_NE(r.err.find("it shards nothing"), std::string::npos, r.err);
    }
};

/**
 * \brief gemm and attention at the boost clock (--clock=boost) give validate's kernel-table
 * figures, which run so (the sustained clock, the default, was the only one: 0.11572 ms for
 * the FlashAttention-3 row validate predicts at 0.10818).
 */
class CliKernelClockTestCase : public TestCase
{
  public:
    CliKernelClockTestCase()
        : TestCase("gemm and attention --clock=boost run at the boost clock")
    {}

  private:
    /** \return \p args' JSON (exit 0 required) */
    Json
    JsonOf(const std::vector<std::string>& args, const std::string& dir)
    {
        const CliResult r = RunCli(args, dir);
        NS_TEST_EXPECT_MSG_EQ(r.status, 0, Joined(args) + ": " + r.err);
        return Json::accept(r.out) ? Json::parse(r.out) : Json::object();
    }

    void
    DoRun() override
    {
        const ScratchDir scratch("kernel-clock");
        const std::string dir = scratch.Path();
        const std::vector<std::string> call = {"attention",
                                               "--hardware=h100-sxm-80gb",
                                               "--seq=512",
                                               "--batch=32",
                                               "--heads=8",
                                               "--head-dim=256",
                                               "--causal=false",
                                               "--attention=flash3",
                                               "--json"};
        const Json sustained = JsonOf(call, dir);
        const Json boost = JsonOf(Cat(call, {"--clock=boost"}), dir);
        NS_TEST_EXPECT_MSG_EQ(boost.at("clock").get<std::string>(), "boost", "echoed");
        NS_TEST_EXPECT_MSG_EQ(boost.at("forward").at("clock_mhz").get<double>(), 1980.0, "boost");
        NS_TEST_EXPECT_MSG_LT(
            sustained.at("forward").at("clock_mhz").get<double>(), 1980.0, "power-limited");
        NS_TEST_EXPECT_MSG_EQ_TOL(boost.at("forward").at("time_s").get<double>(),
                                  0.10818e-3,
                                  0.00001e-3,
                                  "validate's fa3-paper flash3 fwd d256 s512");
        const Json gemm = JsonOf({"gemm",
                                  "--hardware=h100-sxm-80gb",
                                  "--m=8192",
                                  "--n=8192",
                                  "--k=8192",
                                  "--clock=boost",
                                  "--json"},
                                 dir);
        NS_TEST_EXPECT_MSG_EQ(gemm.at("clock_mhz").get<double>(), 1980.0, "the GEMM too");
    }
};

/**
 * \brief study serving's default tensor-parallel degrees are those that can hold a replica of
 * its GPUs: on one GPU, tp 1 without a note per machine and type for tp 2, 4 and 8; a --tp given
 * is tried as given (and its impossible degrees noted).
 */
class CliServingDefaultTpTestCase : public TestCase
{
  public:
    CliServingDefaultTpTestCase()
        : TestCase("study serving: the default tp degrees fit the GPUs, a --tp given is kept")
    {}

  private:
    void
    DoRun() override
    {
        const ScratchDir scratch("serving-default-tp");
        const std::string dir = scratch.Path();
        const std::vector<std::string> study = {"study",
                                                "serving",
                                                "--model=llama2-7b",
                                                "--gpus=1",
                                                "--batch=1",
                                                "--prompt=128",
                                                "--gen=8",
                                                "--json"};
        CliResult r = RunCli(study, dir);
        RAPIDLLM_REQUIRE_EQ(r.status, 0, r.err);
        NS_TEST_EXPECT_MSG_EQ(r.err.find("does not divide"), std::string::npos, r.err);
        NS_TEST_EXPECT_MSG_EQ(
            Json::parse(r.out).at("input").at("layout").at("tp").dump(), "[1]", r.out);
        r = RunCli(Cat(study, {"--tp=1,2"}), dir);
        RAPIDLLM_REQUIRE_EQ(r.status, 0, r.err);
        NS_TEST_EXPECT_MSG_NE(
            r.err.find("tp 2 x pp 1 does not divide the 1 GPUs"), std::string::npos, r.err);
    }
};

/**
 * \brief Names from spec files reach gnuplot as text, never as commands: a model named with a
 * backquoted command (gnuplot runs those even in double-quoted titles) and an unmatched double
 * quote (which broke the script) plot, and the command does not run.
 */
class CliPlotNamesTestCase : public TestCase
{
  public:
    CliPlotNamesTestCase()
        : TestCase("a spec's name with backquotes and quotes is plotted as text, not run")
    {}

  private:
    void
    DoRun() override
    {
        const ScratchDir scratch("plot-names");
        const std::string dir = scratch.Path();
        std::ofstream(dir + "/evil.yaml")
            << "base: gpt-1.7b\nname: \"x `touch " << dir << "/ran` \\\" y\"\nlayers: 2\n";
        const CliResult r = RunCli({"run",
                                    "--model=" + dir + "/evil.yaml",
                                    "--gpus=2",
                                    "--tp=2",
                                    "--gbs=2",
                                    "--out=" + dir + "/o"},
                                   dir);
        NS_TEST_EXPECT_MSG_EQ(r.status, 0, r.err);
        NS_TEST_EXPECT_MSG_EQ(std::filesystem::exists(dir + "/ran"), false, "no command ran");
        const std::string script = ReadText(dir + "/o/breakdown.plt");
        NS_TEST_EXPECT_MSG_EQ(script.find('`'), std::string::npos, script);
        NS_TEST_EXPECT_MSG_NE(script.find("set title \"x 'touch "), std::string::npos, script);
    }
};

/**
 * \brief `sweep --json` is shaped as the other tables' JSON (`study serving`, `study faults`,
 * `validate`, `xval`): `{"input": ..., "rows": [...]}`, the input holding the version and what
 * DIR/sweep.json holds (the lists tried, the job, the number of layouts), so that a script can
 * tell what produced the rows; and its rows are those of `--csv`, in the same order.
 */
class CliSweepJsonTestCase : public TestCase
{
  public:
    CliSweepJsonTestCase()
        : TestCase("sweep --json is an object of the input and the rows, as the studies print")
    {}

  private:
    void
    DoRun() override
    {
        const ScratchDir scratch("sweep-json");
        const std::string dir = scratch.Path();
        const std::vector<std::string> sweep = {"sweep",
                                                "--model=gpt-1.7b",
                                                "--gpus=8",
                                                "--gbs=16",
                                                "--seq=1024",
                                                "--tp=1,2",
                                                "--pp=1,2",
                                                "--mbs=1",
                                                "--workers=1"};
        CliResult r = RunCli(Cat(sweep, {"--json", "--out=" + dir + "/out"}), dir);
        RAPIDLLM_REQUIRE_EQ(r.status, 0, r.err);
        const Json j = Json::parse(r.out);
        RAPIDLLM_REQUIRE_EQ(j.is_object(), true, "an object, not a bare array: " << r.out);
        RAPIDLLM_REQUIRE_EQ(j.contains("input") && j.contains("rows"), true, r.out);
        const Json& input = j.at("input");
        NS_TEST_EXPECT_MSG_EQ(input.at("version").is_string(), true, "the version");
        // Everything DIR/sweep.json holds, with the same values.
        const Json written = Json::parse(ReadText(dir + "/out/sweep.json"));
        for (auto it = written.begin(); it != written.end(); ++it)
        {
            NS_TEST_EXPECT_MSG_EQ(input.contains(it.key()), true, it.key());
            if (input.contains(it.key()))
            {
                NS_TEST_EXPECT_MSG_EQ(input.at(it.key()).dump(), it.value().dump(), it.key());
            }
        }
        NS_TEST_EXPECT_MSG_EQ(input.at("model").get<std::string>(), "gpt-1.7b", "the model");
        NS_TEST_EXPECT_MSG_EQ(input.at("tp").dump(), "[1,2]", "the tensor degrees tried");
        NS_TEST_EXPECT_MSG_EQ(input.at("layouts").get<uint64_t>(), 4, "the layouts");
        // The rows are those of --csv, in its order.
        const Json& rows = j.at("rows");
        RAPIDLLM_REQUIRE_EQ(rows.size(), 4, "2 x 2 layouts");
        CliResult csv = RunCli(Cat(sweep, {"--csv"}), dir);
        RAPIDLLM_REQUIRE_EQ(csv.status, 0, csv.err);
        std::istringstream lines(csv.out);
        std::string line;
        std::getline(lines, line); // the header
        for (const auto& row : rows)
        {
            const bool more = bool(std::getline(lines, line));
            RAPIDLLM_REQUIRE_EQ(more, true, csv.out);
            NS_TEST_EXPECT_MSG_EQ(line.substr(0, line.find(',')),
                                  std::to_string(row.at("layout").get<uint64_t>()),
                                  "the same order as --csv");
        }
    }
};

/**
 * \brief `study faults` on a job that does not fit in GPU memory says so (it studied a job that
 * could not run): the text names the verdict, the JSON carries the memory object `memory
 * --json` prints, stderr a note; a job that fits carries its verdict too.
 */
class CliFaultStudyMemoryTestCase : public TestCase
{
  public:
    CliFaultStudyMemoryTestCase()
        : TestCase("study faults reports the job's memory verdict")
    {}

  private:
    void
    DoRun() override
    {
        const ScratchDir scratch("fault-study-memory");
        const std::string dir = scratch.Path();
        for (const bool fits : {true, false})
        {
            // gpt-1.7b at tp 2, pp 2 needs about 9 GiB a GPU: it fits 80 GiB, not 4.
            const std::vector<std::string> job = {"--model=gpt-1.7b",
                                                  "--gpus=8",
                                                  "--tp=2",
                                                  "--pp=2",
                                                  "--gbs=8",
                                                  "--seq=1024",
                                                  fits ? "--set=gpu.hbm_gib=80"
                                                       : "--set=gpu.hbm_gib=4"};
            const std::vector<std::string> study = Cat({"study",
                                                        "faults",
                                                        "--out=" + dir + "/s",
                                                        "--links=gpu0-nvlink.sw0",
                                                        "--factors=1,0.5",
                                                        "--routing=fault-aware"},
                                                       job);
            CliResult json = RunCli(Cat(study, {"--json"}), dir);
            RAPIDLLM_REQUIRE_EQ(json.status, 0, json.err);
            const Json j = Json::parse(json.out);
            RAPIDLLM_REQUIRE_EQ(j.contains("memory"), true, "the verdict in the JSON");
            CliResult memory = RunCli(Cat({"memory", "--json"}, job), dir);
            Json alone = Json::parse(memory.out);
            alone.erase("input");
            alone.erase("alternatives"); // memory's own, beside run's object
            NS_TEST_EXPECT_MSG_EQ(j.at("memory").dump(), alone.dump(), "memory --json's object");
            NS_TEST_EXPECT_MSG_EQ(j.at("memory").at("feasible").get<bool>(), fits, "the verdict");
            const bool noted = json.err.find("does not fit") != std::string::npos;
            NS_TEST_EXPECT_MSG_EQ(noted, !fits, json.err);
            CliResult text = RunCli(study, dir);
            RAPIDLLM_REQUIRE_EQ(text.status, 0, text.err);
            const bool said = text.out.find("DOES NOT FIT") != std::string::npos;
            NS_TEST_EXPECT_MSG_EQ(said, !fits, text.out);
            NS_TEST_EXPECT_MSG_NE(
                text.out.find("peak memory per GPU"), std::string::npos, text.out);
            std::filesystem::remove_all(dir + "/s");
        }
    }
};

/**
 * \brief With both --json and --csv, stdout is the one JSON document (--json wins), on every
 * command that takes both: a script that asks for JSON can parse what it gets.
 */
class CliJsonWinsOverCsvTestCase : public TestCase
{
  public:
    CliJsonWinsOverCsvTestCase()
        : TestCase("--json --csv prints one JSON document on every command")
    {}

  private:
    void
    DoRun() override
    {
        const ScratchDir scratch("json-wins");
        const std::string dir = scratch.Path();
        const std::vector<std::vector<std::string>> commands = {
            Cat({"run"}, kSmallTraining),
            Cat({"memory"}, kSmallTraining),
            {"gemm", "--m=512", "--n=512", "--k=512"},
            {"collective", "--hardware=a100-sxm-80gb", "--gpus=8", "--bytes=1MiB"},
            Cat({"study",
                 "faults",
                 "--out=" + dir + "/faults",
                 "--links=gpu0-nvlink.sw0",
                 "--factors=1,0.5",
                 "--routing=fault-aware"},
                kSmallTraining),
            Cat({"study", "hardware", "--out=" + dir + "/hardware", "--vary=gpu.hbm_gib=40,80"},
                kSmallTraining),
            {"sweep",
             "--model=gpt-1.7b",
             "--gpus=8",
             "--gbs=8",
             "--seq=1024",
             "--tp=2",
             "--pp=2",
             "--mbs=1",
             "--workers=1"},
        };
        for (const auto& command : commands)
        {
            const std::vector<std::string> args = Cat(command, {"--json", "--csv"});
            CliResult r = RunCli(args, dir);
            NS_TEST_EXPECT_MSG_EQ(r.status, 0, Joined(args) + ": " + r.err);
            bool parsed = true;
            try
            {
                parsed = !Json::parse(r.out).is_discarded();
            }
            catch (const std::exception&)
            {
                parsed = false;
            }
            NS_TEST_EXPECT_MSG_EQ(parsed, true, Joined(args) + ": not one JSON document: " + r.out);
        }
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
        const ScratchDir scratch("per-rank");
        const std::string dir = scratch.Path();
        CliResult plain = RunCli(Cat({"run", "--json"}, kSmallTraining), dir);
        NS_TEST_ASSERT_MSG_EQ(plain.status, 0, plain.err);
        NS_TEST_EXPECT_MSG_EQ(Json::parse(plain.out).contains("ranks"), false, "run --json");
        CliResult result = RunCli(Cat({"run", "--json", "--per-rank"}, kSmallTraining), dir);
        NS_TEST_ASSERT_MSG_EQ(result.status, 0, result.err);
        const Json run = Json::parse(result.out);
        const Json& ranks = run.at("ranks");
        RAPIDLLM_REQUIRE_EQ(ranks.size(), 8u, "one row per GPU");
        const double step = run.at("step_time_s").get<double>();
        double latest = 0;
        for (std::size_t i = 0; i < ranks.size(); ++i)
        {
            const Json& r = ranks.at(i);
            NS_TEST_EXPECT_MSG_EQ(r.at("rank").get<std::size_t>(), i, "by rank");
            // tp 2, dp 2, pp 2 in Megatron-LM's order: the pipeline axis varies slowest.
            NS_TEST_EXPECT_MSG_EQ(r.at("stage").get<std::size_t>(), i / 4, "its stage");
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
        // The busiest rank: the most compute, exposed communication and host waits.
        const Json& busiest = ranks.at(run.at("busiest_rank").get<std::size_t>());
        auto busy = [](const Json& r)
        {
            const Json& b = r.at("breakdown_s");
            return b.at("compute").get<double>() + b.at("exposed_communication").get<double>()
                   + b.at("host").get<double>();
        };
        for (const Json& r : ranks)
        {
            NS_TEST_EXPECT_MSG_LT_OR_EQ(busy(r), busy(busiest), "no rank busier");
        }
        // The same job written as traces and replayed gives the same rows, without the stages
        // (a trace set does not say them).
        CliResult trace = RunCli(Cat({"trace", "--out=" + dir + "/t"}, kSmallTraining), dir);
        NS_TEST_ASSERT_MSG_EQ(trace.status, 0, trace.err);
        CliResult replay =
            RunCli({"replay", "--trace=" + dir + "/t/trace", "--json", "--per-rank"}, dir);
        NS_TEST_ASSERT_MSG_EQ(replay.status, 0, replay.err);
        Json withoutStages = ranks;
        for (Json& r : withoutStages)
        {
            r.erase("stage");
        }
        NS_TEST_EXPECT_MSG_EQ(
            Json::parse(replay.out).at("ranks"), withoutStages, "replay --per-rank");
        // Text: a line per rank.
        CliResult text = RunCli(Cat({"run", "--per-rank"}, kSmallTraining), dir);
        NS_TEST_EXPECT_MSG_EQ((text.out.find("per rank:") != std::string::npos), true, "text");
        // The last stage (the LM head's) is busier than the first, which finishes last: the
        // text names it, its stage and its own breakdown.
        NS_TEST_EXPECT_MSG_EQ(busiest.at("stage").get<int>(), 1, "the head's stage");
        NS_TEST_EXPECT_MSG_NE(text.out.find("busiest rank           " + busiest.at("rank").dump()
                                            + " (stage 1): compute "),
                              std::string::npos,
                              text.out);
    }
};

/**
 * \brief `run --backend=packet --packet=NAME=VALUE`: the attributes reach the packet network
 * (a 64 KiB send window, below the NVLink path's bandwidth-delay product, slows the step) and
 * the input echo names them; the same option on `replay` of the job's traces gives the same step,
 * and on `collective` it slows a 4 MiB all-reduce.
 */
class CliPacketAttributesTestCase : public TestCase
{
  public:
    CliPacketAttributesTestCase()
        : TestCase("run, replay and collective --packet set the packet network's attributes")
    {}

  private:
    void
    DoRun() override
    {
        const ScratchDir scratch("packet-attributes");
        const std::string dir = scratch.Path();
        const std::vector<std::string> job = {
            "--model=gpt-1.7b", "--layers=1", "--gpus=2", "--tp=2", "--gbs=1", "--seq=512"};
        CliResult plain = RunCli(Cat({"run", "--json", "--backend=packet"}, job), dir);
        NS_TEST_ASSERT_MSG_EQ(plain.status, 0, plain.err);
        CliResult held = RunCli(
            Cat({"run", "--json", "--backend=packet", "--packet=SendBuffer=65536"}, job), dir);
        NS_TEST_ASSERT_MSG_EQ(held.status, 0, held.err);
        const Json a = Json::parse(plain.out);
        const Json b = Json::parse(held.out);
        NS_TEST_EXPECT_MSG_EQ(a.at("input").contains("packet"), false, "no --packet, no echo");
        // What the packet network did: one connection each way, nothing dropped.
        NS_TEST_EXPECT_MSG_EQ(a.at("packets").at("connections").get<uint32_t>(), 2u, "connections");
        NS_TEST_EXPECT_MSG_EQ(a.at("packets").at("dropped").get<uint64_t>(), 0u, "no drops");
        NS_TEST_EXPECT_MSG_GT(a.at("packets").at("data").get<uint64_t>(), 0u, "data packets");
        NS_TEST_EXPECT_MSG_EQ(
            b.at("input").at("packet").get<std::string>(), "SendBuffer=65536", "echoed");
        const double step = b.at("step_time_s").get<double>();
        NS_TEST_EXPECT_MSG_GT(step, a.at("step_time_s").get<double>() * 1.01, "windows bind");
        CliResult trace = RunCli(Cat({"trace", "--out=" + dir + "/t"}, job), dir);
        NS_TEST_ASSERT_MSG_EQ(trace.status, 0, trace.err);
        CliResult replay = RunCli({"replay",
                                   "--trace=" + dir + "/t/trace",
                                   "--json",
                                   "--backend=packet",
                                   "--packet=SendBuffer=65536"},
                                  dir);
        NS_TEST_ASSERT_MSG_EQ(replay.status, 0, replay.err);
        // (The packet network runs at picoseconds, and the traces hold times to the nanosecond.)
        NS_TEST_EXPECT_MSG_EQ_TOL(
            Json::parse(replay.out).at("step_time_s").get<double>(), step, 2e-9, "replay");
        // One collective: a 4 MiB all-reduce between 2 GPUs is held to a window per round trip.
        const std::vector<std::string> collective = {"collective",
                                                     "--op=all-reduce",
                                                     "--hardware=a100-sxm-80gb",
                                                     "--bytes=4MiB",
                                                     "--gpus=2",
                                                     "--json",
                                                     "--backend=packet"};
        CliResult free = RunCli(collective, dir);
        NS_TEST_ASSERT_MSG_EQ(free.status, 0, free.err);
        CliResult bound = RunCli(Cat(collective, {"--packet=SendBuffer=65536"}), dir);
        NS_TEST_ASSERT_MSG_EQ(bound.status, 0, bound.err);
        const Json c = Json::parse(free.out);
        const Json d = Json::parse(bound.out);
        NS_TEST_EXPECT_MSG_EQ(c.contains("packet"), false, "collective: no --packet, no echo");
        NS_TEST_EXPECT_MSG_EQ(d.at("packet").get<std::string>(), "SendBuffer=65536", "echoed");
        NS_TEST_EXPECT_MSG_GT(d.at("time_s").get<double>(),
                              c.at("time_s").get<double>() * 1.5,
                              "collective: windows bind");
        // Small frames are timed at picoseconds: a 576-byte frame at 240 GB/s (2.4 ns) took 2 ns
        // at nanoseconds, and 4 MiB crossed the link 10% faster than its payload rate allows.
        CliResult small = RunCli({"collective",
                                  "--op=send-recv",
                                  "--hardware=a100-sxm-80gb",
                                  "--bytes=4MiB",
                                  "--gpus=2",
                                  "--json",
                                  "--backend=packet",
                                  "--packet=Mtu=576"},
                                 dir);
        NS_TEST_ASSERT_MSG_EQ(small.status, 0, small.err);
        NS_TEST_EXPECT_MSG_GT_OR_EQ(Json::parse(small.out).at("time_s").get<double>(),
                                    4.0 * 1024 * 1024 / (300e9 * 0.8),
                                    "no faster than NVLink's payload rate, 300 GB/s x 0.8");
    }
};

namespace {

/** A CSV output parsed: the header's columns and each row's fields by column. */
struct CsvTable
{
    std::vector<std::string> columns;                     //!< the header
    std::vector<std::map<std::string, std::string>> rows; //!< the rows, by column name
    std::string error; //!< what is wrong with the text ("" = none)
};

/** \return \p text parsed as CSV: a header, then rows with as many fields */
CsvTable
ParseCsv(const std::string& text)
{
    CsvTable t;
    std::istringstream in(text);
    std::string line;
    if (!std::getline(in, line) || !SplitCsvLine(line, t.columns))
    {
        t.error = "no header line";
        return t;
    }
    while (std::getline(in, line))
    {
        std::vector<std::string> fields;
        if (!SplitCsvLine(line, fields) || fields.size() != t.columns.size())
        {
            t.error = "row of " + std::to_string(fields.size()) + " fields under a header of "
                      + std::to_string(t.columns.size()) + ": " + line;
            return t;
        }
        std::map<std::string, std::string> row;
        for (std::size_t i = 0; i < fields.size(); ++i)
        {
            row[t.columns[i]] = fields[i];
        }
        t.rows.push_back(row);
    }
    return t;
}

/** \return the number in a CSV field (NaN if it is not one) */
double
Number(const std::string& field)
{
    try
    {
        std::size_t used = 0;
        const double v = std::stod(field, &used);
        return used == field.size() ? v : std::nan("");
    }
    catch (const std::exception&)
    {
        return std::nan("");
    }
}

/**
 * \return the items repeated within one parenthesized, comma-separated list of a --help line
 * ("(known: auto, auto, direct)" gives "auto"), joined by spaces; "" if none
 */
std::string
RepeatedListItems(const std::string& helpLine)
{
    static const std::regex kGroup("\\(([^()]*)\\)");
    std::string repeated;
    for (std::sregex_iterator it(helpLine.begin(), helpLine.end(), kGroup), end; it != end; ++it)
    {
        std::string list = (*it)[1].str();
        if (list.rfind("known: ", 0) == 0)
        {
            list = list.substr(7);
        }
        list = list.substr(0, list.find(';')); // "...; required"
        std::set<std::string> seen;
        std::istringstream items(list);
        std::string item;
        while (std::getline(items, item, ','))
        {
            item.erase(0, item.find_first_not_of(' '));
            item.erase(item.find_last_not_of(' ') + 1);
            if (!item.empty() && !seen.insert(item).second)
            {
                repeated += (repeated.empty() ? "" : " ") + item;
            }
        }
    }
    return repeated;
}

} // namespace

/**
 * \brief `--csv` on validate, xval, presets, gemm, trace-info and collective: a header with the
 * documented columns, rows of as many fields, values equal to the --json output's (a second
 * path to the same numbers), and the same bytes run to run.
 */
class CliCsvTestCase : public TestCase
{
  public:
    CliCsvTestCase()
        : TestCase("--csv on every command with a table: columns, rows, values as --json")
    {}

  private:
    /** Runs \p args and returns the parsed CSV; checks exit 0 and the header. */
    CsvTable
    CsvOf(const std::vector<std::string>& args,
          const std::vector<std::string>& columns,
          const std::string& dir)
    {
        CliResult r = RunCli(args, dir);
        NS_TEST_EXPECT_MSG_EQ(r.status, 0, Joined(args) + ": " + r.err);
        CsvTable t = ParseCsv(r.out);
        NS_TEST_EXPECT_MSG_EQ(t.error, "", Joined(args));
        std::string expected;
        std::string got;
        for (const auto& c : columns)
        {
            expected += c + ",";
        }
        for (const auto& c : t.columns)
        {
            got += c + ",";
        }
        NS_TEST_EXPECT_MSG_EQ(got, expected, Joined(args) + ": columns");
        return t;
    }

    /** Checks that CSV field \p field is the JSON number \p value (9 significant digits). */
    void
    ExpectNumber(const std::string& field, const Json& value, const std::string& what)
    {
        const double expected = value.get<double>();
        NS_TEST_EXPECT_MSG_EQ_TOL(Number(field),
                                  expected,
                                  1e-8 * std::max(1e-300, std::fabs(expected)),
                                  what + ": " + field);
    }

    void
    DoRun() override
    {
        const ScratchDir scratch("csv");
        const std::string dir = scratch.Path();

        // validate: a row per published measurement, as --json has them.
        const std::string data = SmallValidationData(dir);
        CsvTable v = CsvOf({"validate", "--data=" + data, "--csv"},
                           {"set", "config", "metric", "published", "predicted", "error"},
                           dir);
        const Json vj = Json::parse(RunCli({"validate", "--data=" + data, "--json"}, dir).out);
        RAPIDLLM_REQUIRE_EQ(v.rows.size(), vj.at("rows").size(), "validate: one row each");
        for (std::size_t i = 0; i < v.rows.size(); ++i)
        {
            const Json& row = vj.at("rows").at(i);
            NS_TEST_EXPECT_MSG_EQ(v.rows[i].at("config"), row.at("config").get<std::string>(), "");
            NS_TEST_EXPECT_MSG_EQ(v.rows[i].at("metric"), row.at("metric").get<std::string>(), "");
            ExpectNumber(v.rows[i].at("published"), row.at("published"), "validate published");
            ExpectNumber(v.rows[i].at("predicted"), row.at("predicted"), "validate predicted");
            ExpectNumber(v.rows[i].at("error"), row.at("error"), "validate error");
        }

        // xval: the workload's row on both networks.
        const std::vector<std::string> xvalArgs = {
            "xval", "--quick", "--only=ring-allreduce-8gpu-1MiB"};
        CsvTable x = CsvOf(Cat(xvalArgs, {"--csv"}),
                           {"workload",
                            "flow_s",
                            "packet_s",
                            "rel_diff",
                            "packet_data_packets",
                            "packet_drops",
                            "messages",
                            "within_bar"},
                           dir);
        const Json xj = Json::parse(RunCli(Cat(xvalArgs, {"--json"}), dir).out).at("rows");
        RAPIDLLM_REQUIRE_EQ(x.rows.size(), 1u, "xval: one row");
        NS_TEST_EXPECT_MSG_EQ(x.rows[0].at("workload"), "ring-allreduce-8gpu-1MiB", "xval");
        for (const char* key :
             {"flow_s", "packet_s", "rel_diff", "packet_data_packets", "messages"})
        {
            ExpectNumber(x.rows[0].at(key), xj[0].at(key), std::string("xval ") + key);
        }
        NS_TEST_EXPECT_MSG_EQ(x.rows[0].at("within_bar"), "true", "xval: within the bar");

        // presets: a row per preset of each kind, the other kind's columns empty.
        CsvTable p = CsvOf({"presets", "--csv"},
                           {"kind",
                            "name",
                            "parameters",
                            "layers",
                            "hidden",
                            "heads",
                            "kv_heads",
                            "moe",
                            "gpu",
                            "hbm_gib",
                            "hbm_bandwidth_GBps"},
                           dir);
        std::map<std::string, std::map<std::string, std::string>> byName;
        for (const auto& row : p.rows)
        {
            byName[row.at("name")] = row;
        }
        NS_TEST_ASSERT_MSG_EQ(byName.count("gpt3-175b"), 1u, "presets: gpt3-175b");
        NS_TEST_ASSERT_MSG_EQ(byName.count("a100-sxm-80gb"), 1u, "presets: a100-sxm-80gb");
        NS_TEST_EXPECT_MSG_EQ(byName["gpt3-175b"].at("kind"), "model", "presets");
        NS_TEST_EXPECT_MSG_EQ(byName["gpt3-175b"].at("layers"), "96", "GPT-3 175B: 96 layers");
        NS_TEST_EXPECT_MSG_EQ(byName["gpt3-175b"].at("hidden"), "12288", "GPT-3 175B: 12288");
        NS_TEST_EXPECT_MSG_EQ_TOL(Number(byName["gpt3-175b"].at("parameters")) / 1e9,
                                  175.0,
                                  1.5,
                                  "GPT-3 175B: about 175 billion parameters");
        NS_TEST_EXPECT_MSG_EQ(byName["gpt3-175b"].at("gpu"), "", "a model has no GPU");
        NS_TEST_EXPECT_MSG_EQ(byName["a100-sxm-80gb"].at("kind"), "hardware", "presets");
        NS_TEST_EXPECT_MSG_EQ(Number(byName["a100-sxm-80gb"].at("hbm_gib")), 80, "80 GiB");
        NS_TEST_EXPECT_MSG_EQ(byName["a100-sxm-80gb"].at("layers"), "", "hardware has no layers");
        NS_TEST_EXPECT_MSG_EQ(RunCli({"presets", "--csv"}, dir).out,
                              RunCli({"presets", "--csv"}, dir).out,
                              "presets --csv: the same bytes run to run");

        // gemm: one row, the numbers of --json.
        const std::vector<std::string> gemmArgs = {
            "gemm", "--m=1024", "--n=2048", "--k=512", "--batch=3"};
        CsvTable g = CsvOf(Cat(gemmArgs, {"--csv"}),
                           {"hardware",
                            "m",
                            "n",
                            "k",
                            "batch",
                            "dtype",
                            "time_s",
                            "tflops",
                            "utilization",
                            "bound",
                            "overhead_dominated",
                            "tile_m",
                            "tile_n",
                            "tile_k",
                            "stages",
                            "split_k",
                            "threads",
                            "blocks_per_sm",
                            "tiles",
                            "waves",
                            "sm_utilization",
                            "flops",
                            "smem_bytes",
                            "l2_bytes",
                            "hbm_bytes",
                            "compute_s",
                            "smem_s",
                            "l2_s",
                            "hbm_s",
                            "overhead_s",
                            "clock_mhz",
                            "power_w",
                            "energy_j",
                            "board_energy_j",
                            "tile_smem_bytes"},
                           dir);
        const Json gj = Json::parse(RunCli(Cat(gemmArgs, {"--json"}), dir).out);
        // The tile's shared memory, apart from the traffic smem_bytes counts.
        ExpectNumber(g.rows[0].at("tile_smem_bytes"), gj.at("tile").at("smem_bytes"), "tile smem");
        RAPIDLLM_REQUIRE_EQ(g.rows.size(), 1u, "gemm: one row");
        ExpectNumber(g.rows[0].at("time_s"), gj.at("time_s"), "gemm time");
        ExpectNumber(g.rows[0].at("flops"), gj.at("flops"), "gemm flops");
        ExpectNumber(g.rows[0].at("waves"), gj.at("waves"), "gemm waves");
        ExpectNumber(g.rows[0].at("hbm_bytes"), gj.at("bytes").at("hbm"), "gemm HBM bytes");
        ExpectNumber(g.rows[0].at("tile_m"), gj.at("tile").at("m"), "gemm tile m");
        NS_TEST_EXPECT_MSG_EQ(g.rows[0].at("bound"), gj.at("bound").get<std::string>(), "bound");
        // energy_j is what the kernel adds to the idle board; board_energy_j the text's
        // "energy", its power times its time (only the first was machine-readable).
        ExpectNumber(g.rows[0].at("board_energy_j"), gj.at("board_energy_j"), "gemm board energy");
        NS_TEST_EXPECT_MSG_EQ_TOL(gj.at("board_energy_j").get<double>(),
                                  gj.at("power_w").get<double>() * gj.at("time_s").get<double>(),
                                  1e-12,
                                  "board energy = power x time");
        NS_TEST_EXPECT_MSG_GT(gj.at("board_energy_j").get<double>(),
                              gj.at("energy_j").get<double>(),
                              "the idle board's share on top");

        // trace-info: a row per rank; the bytes add up to what the traces hold.
        const std::string traces = dir + "/traces";
        CliResult t = RunCli(Cat({"trace", "--out=" + traces}, kSmallTraining), dir);
        NS_TEST_ASSERT_MSG_EQ(t.status, 0, t.err);
        CsvTable ti = CsvOf({"trace-info", "--trace=" + traces + "/trace", "--csv"},
                            {"rank",
                             "nodes",
                             "edges",
                             "comp",
                             "coll",
                             "send",
                             "recv",
                             "other",
                             "compute_ns",
                             "compute_path_ns",
                             "coll_bytes",
                             "send_bytes"},
                            dir);
        RAPIDLLM_REQUIRE_EQ(ti.rows.size(), 8u, "trace-info: a row per rank");
        for (std::size_t i = 0; i < ti.rows.size(); ++i)
        {
            const auto& row = ti.rows[i];
            NS_TEST_EXPECT_MSG_EQ(row.at("rank"), std::to_string(i), "by rank");
            NS_TEST_EXPECT_MSG_EQ(Number(row.at("nodes")),
                                  Number(row.at("comp")) + Number(row.at("coll"))
                                      + Number(row.at("send")) + Number(row.at("recv"))
                                      + Number(row.at("other")),
                                  "nodes = the sum by type");
            NS_TEST_EXPECT_MSG_LT_OR_EQ(Number(row.at("compute_path_ns")),
                                        Number(row.at("compute_ns")),
                                        "the longest compute chain is within all compute");
            NS_TEST_EXPECT_MSG_GT(Number(row.at("compute_path_ns")), 0, "compute");
        }
        // Sums past 2^64 do not wrap: five all-reduces of 2^62 bytes a rank (a trace's sizes
        // reach 2^63 - 1 each).
        {
            TraceSet huge;
            huge.groups.Add(1, {0, 1});
            for (uint32_t r = 0; r < 2; ++r)
            {
                ExecutionTrace et(r);
                uint32_t last = et.AddCompute("g", 10, 1, 1);
                for (int i = 0; i < 5; ++i)
                {
                    last =
                        et.AddCollective("ar", CollectiveType::ALL_REDUCE, 1ull << 62, 1, {last});
                }
                huge.ranks.push_back(et);
            }
            std::filesystem::create_directories(dir + "/huge");
            ChakraTraceWriter::WriteTraceSet(dir + "/huge/trace", huge);
            CsvTable h =
                CsvOf({"trace-info", "--trace=" + dir + "/huge/trace", "--csv"}, ti.columns, dir);
            RAPIDLLM_REQUIRE_EQ(h.rows.size(), 2u, "trace-info: two ranks");
            NS_TEST_EXPECT_MSG_EQ_TOL(Number(h.rows[0].at("coll_bytes")),
                                      5 * std::ldexp(1.0, 62),
                                      1e-9 * std::ldexp(1.0, 64),
                                      "5 x 2^62 bytes, not wrapped");
            CliResult text = RunCli({"trace-info", "--trace=" + dir + "/huge/trace"}, dir);
            NS_TEST_EXPECT_MSG_NE(
                text.out.find("collectives 42949672960.00 GiB"), std::string::npos, text.out);
        }
        // A set whose ranks disagree (one more all-reduce on rank 0) is still summarized, and
        // the command then exits 2 naming the mismatch, as replay would refuse it.
        {
            TraceSet uneven;
            uneven.groups.Add(1, {0, 1});
            for (uint32_t r = 0; r < 2; ++r)
            {
                ExecutionTrace et(r);
                uint32_t last = et.AddCompute("g", 10, 1, 1);
                for (uint32_t i = 0; i < 2 - r; ++i)
                {
                    last = et.AddCollective("ar", CollectiveType::ALL_REDUCE, 64, 1, {last});
                }
                uneven.ranks.push_back(et);
            }
            std::filesystem::create_directories(dir + "/uneven");
            ChakraTraceWriter::WriteTraceSet(dir + "/uneven/trace", uneven);
            CliResult u = RunCli({"trace-info", "--trace=" + dir + "/uneven/trace"}, dir);
            NS_TEST_EXPECT_MSG_EQ(u.status, 2, u.err);
            NS_TEST_EXPECT_MSG_NE(u.out.find("total: "), std::string::npos, u.out);
            NS_TEST_EXPECT_MSG_NE(
                u.err.find("rank 0 issues 2 but rank 1 issues 1"), std::string::npos, u.err);
        }
        // A Chakra collective replay has no algorithm for (GATHER): named by trace-info, with
        // its file and node, before a replay would stop on it; a folder's files named as in it.
        {
            TraceSet gather;
            gather.groups.Add(1, {0, 1});
            for (uint32_t r = 0; r < 2; ++r)
            {
                ExecutionTrace et(r);
                et.AddCollective("gather", CollectiveType::GATHER, 1024, 1);
                gather.ranks.push_back(et);
            }
            std::filesystem::create_directories(dir + "/gather");
            ChakraTraceWriter::WriteTraceSet(dir + "/gather/trace", gather);
            CliResult g = RunCli({"trace-info", "--trace=" + dir + "/gather"}, dir);
            NS_TEST_EXPECT_MSG_EQ(g.status, 2, g.err);
            NS_TEST_EXPECT_MSG_NE(g.err.find(dir
                                             + "/gather/trace.0.et: rank 0: node 0: collective "
                                               "type GATHER cannot be replayed"),
                                  std::string::npos,
                                  g.err);
        }

        // run: one row; the energy of --json at its end; no time per output token with one
        // generated token (empty), where --json has null.
        const std::vector<std::string> runColumns = {"mode",
                                                     "gpus",
                                                     "backend",
                                                     "step_time_s",
                                                     "ttft_s",
                                                     "tpot_s",
                                                     "tflops_per_gpu",
                                                     "mfu",
                                                     "compute_s",
                                                     "exposed_comm_s",
                                                     "bubble_s",
                                                     "critical_rank",
                                                     "feasible",
                                                     "peak_memory_gib",
                                                     "capacity_gib",
                                                     "host_s",
                                                     "tokens_per_s_per_gpu",
                                                     "energy_j",
                                                     "energy_per_token_j",
                                                     "avg_power_w",
                                                     "idle_energy_j",
                                                     "compute_energy_j",
                                                     "nvlink_energy_j",
                                                     "network_energy_j",
                                                     "busiest_rank",
                                                     "gemm_s",
                                                     "attention_s",
                                                     "attention_kernel",
                                                     "elementwise_s",
                                                     "optimizer_s",
                                                     "sm_sharing_s",
                                                     "waiting_on",
                                                     "path_compute_s",
                                                     "path_communication_s",
                                                     "path_host_s"};
        CsvTable rt = CsvOf(Cat({"run", "--csv"}, kSmallTraining), runColumns, dir);
        const Json rj = Json::parse(RunCli(Cat({"run", "--json"}, kSmallTraining), dir).out);
        RAPIDLLM_REQUIRE_EQ(rt.rows.size(), 1u, "run: one row");
        ExpectNumber(rt.rows[0].at("step_time_s"), rj.at("step_time_s"), "run step");
        ExpectNumber(rt.rows[0].at("energy_j"), rj.at("energy_j"), "run energy");
        ExpectNumber(rt.rows[0].at("avg_power_w"), rj.at("avg_power_w"), "run power");
        for (const char* part : {"idle", "compute", "nvlink", "network"})
        {
            ExpectNumber(rt.rows[0].at(std::string(part) + "_energy_j"),
                         rj.at("energy_breakdown_j").at(part),
                         std::string("run energy: ") + part);
        }
        // memory: a row per stage; an inference job's largest batch on each (the text's "Fits up
        // to batch"), empty in training.
        const std::vector<std::string> memoryColumns = {"stage",
                                                        "weights_gib",
                                                        "gradients_gib",
                                                        "optimizer_gib",
                                                        "activations_gib",
                                                        "kv_cache_gib",
                                                        "framework_gib",
                                                        "peak_gib",
                                                        "capacity_gib",
                                                        "fits",
                                                        "largest_batch"};
        CsvTable mt = CsvOf(Cat({"memory", "--csv"}, kSmallInference), memoryColumns, dir);
        const Json mj = Json::parse(RunCli(Cat({"memory", "--json"}, kSmallInference), dir).out);
        RAPIDLLM_REQUIRE_EQ(mt.rows.empty(), false, "memory: a row per stage");
        NS_TEST_EXPECT_MSG_EQ(mt.rows[0].at("largest_batch"),
                              std::to_string(mj.at("largest_batch").get<uint64_t>()),
                              "memory: the largest batch");
        CsvTable mtt = CsvOf(Cat({"memory", "--csv"}, kSmallTraining), memoryColumns, dir);
        RAPIDLLM_REQUIRE_EQ(mtt.rows.empty(), false, "memory: training rows");
        NS_TEST_EXPECT_MSG_EQ(mtt.rows[0].at("largest_batch"), "", "training: no batch to find");
        // The text's busiest rank, compute by kind and "waiting on" (every operator).
        NS_TEST_EXPECT_MSG_EQ(rt.rows[0].at("busiest_rank"),
                              std::to_string(rj.at("busiest_rank").get<int>()),
                              "run busiest rank");
        for (const char* kind : {"gemm", "attention", "elementwise", "optimizer", "sm_sharing"})
        {
            ExpectNumber(rt.rows[0].at(std::string(kind) + "_s"),
                         rj.at("compute_by_kind_s").at(kind),
                         std::string("run compute: ") + kind);
        }
        NS_TEST_EXPECT_MSG_EQ(rt.rows[0].at("attention_kernel"),
                              rj.at("attention_kernel").get<std::string>(),
                              "run attention kernel");
        {
            const Json& byOp = rj.at("exposed_communication_by_op_s");
            std::size_t pairs = 0;
            std::istringstream waits(rt.rows[0].at("waiting_on"));
            for (std::string pair; std::getline(waits, pair, ';'); ++pairs)
            {
                const std::size_t eq = pair.find('=');
                RAPIDLLM_REQUIRE_EQ((eq != std::string::npos), true, pair);
                ExpectNumber(pair.substr(eq + 1), byOp.at(pair.substr(0, eq)), pair);
            }
            NS_TEST_EXPECT_MSG_EQ(pairs, byOp.size(), rt.rows[0].at("waiting_on"));
            NS_TEST_EXPECT_MSG_GT(pairs, 0u, "the small job waits on some communication");
        }
        for (const char* part : {"compute", "communication", "host"})
        {
            ExpectNumber(rt.rows[0].at(std::string("path_") + part + "_s"),
                         rj.at("critical_path").at("breakdown_s").at(part),
                         std::string("run critical path: ") + part);
        }
        NS_TEST_EXPECT_MSG_EQ(rt.rows[0].at("energy_per_token_j"), "", "training: no tokens");
        NS_TEST_EXPECT_MSG_EQ(rt.rows[0].at("ttft_s"), "", "training: no first token");
        ExpectNumber(rt.rows[0].at("tflops_per_gpu"), rj.at("tflops_per_gpu"), "run TFLOP/s");
        NS_TEST_EXPECT_MSG_EQ(rt.rows[0].at("feasible"), "true", "training: fits");
        // A replayed trace set: no model TFLOP/s and no memory verdict (it read 0 and true).
        const std::string replayTraces = dir + "/csv-traces";
        CliResult written = RunCli(Cat({"trace", "--out=" + replayTraces}, kSmallTraining), dir);
        NS_TEST_ASSERT_MSG_EQ(written.status, 0, written.err);
        CsvTable rp =
            CsvOf({"replay", "--trace=" + replayTraces + "/trace", "--csv"}, runColumns, dir);
        RAPIDLLM_REQUIRE_EQ(rp.rows.size(), 1u, "replay: one row");
        for (const char* column :
             {"tflops_per_gpu", "mfu", "feasible", "peak_memory_gib", "ttft_s"})
        {
            NS_TEST_EXPECT_MSG_EQ(rp.rows[0].at(column), "", column);
        }
        ExpectNumber(rp.rows[0].at("step_time_s"), rj.at("step_time_s"), "replay = run");
        const Json rpj = Json::parse(
            RunCli({"replay", "--trace=" + replayTraces + "/trace", "--json"}, dir).out);
        NS_TEST_EXPECT_MSG_EQ(rpj.at("feasible").is_null(), true, rpj.dump());
        const std::vector<std::string> oneToken = {
            "--model=llama2-7b", "--mode=inference", "--layers=2", "--prompt=128", "--gen=1"};
        CsvTable ri = CsvOf(Cat({"run", "--csv"}, oneToken), runColumns, dir);
        const Json ij = Json::parse(RunCli(Cat({"run", "--json"}, oneToken), dir).out);
        RAPIDLLM_REQUIRE_EQ(ri.rows.size(), 1u, "run: one row");
        NS_TEST_EXPECT_MSG_EQ(ri.rows[0].at("tpot_s"), "", "one generated token: no TPOT");
        NS_TEST_EXPECT_MSG_EQ(ij.at("tpot_s").is_null(), true, "null in JSON: " << ij.dump());
        ExpectNumber(ri.rows[0].at("energy_per_token_j"),
                     ij.at("energy_per_token_j"),
                     "run energy per token");
        const std::string text = RunCli(Cat({"run"}, oneToken), dir).out;
        NS_TEST_EXPECT_MSG_NE(text.find("time per output token    n/a (one generated token)"),
                              std::string::npos,
                              text);
        // Energy in one form, four significant digits.
        NS_TEST_EXPECT_MSG_EQ(
            std::regex_search(text,
                              std::regex("energy, all GPUs +[0-9]\\.[0-9]{3}e[+-][0-9]+ J\n")),
            true,
            text);
        const Json two = Json::parse(
            RunCli(
                {"run", "--json", "--model=llama2-7b", "--mode=inference", "--layers=2", "--gen=2"},
                dir)
                .out);
        NS_TEST_EXPECT_MSG_GT(two.at("tpot_s").get<double>(), 0.0, "two tokens: a TPOT");
        // A request past a rotary model's context runs, with a note (none within it).
        for (const std::string prompt : {"8000", "3000"})
        {
            CliResult past = RunCli({"run",
                                     "--model=llama2-7b",
                                     "--mode=inference",
                                     "--layers=2",
                                     "--prompt=" + prompt,
                                     "--gen=128"},
                                    dir);
            NS_TEST_EXPECT_MSG_EQ(past.status, 0, past.err);
            NS_TEST_EXPECT_MSG_EQ(
                (past.err.find("a request of 8128 tokens is longer than llama2-7b's 4096-token "
                               "context")
                 != std::string::npos),
                (prompt == "8000"),
                prompt << ": " << past.err);
        }

        // collective: the result's row, or with --links the link table.
        const std::vector<std::string> collArgs = {
            "collective", "--hardware=a100-sxm-80gb", "--gpus=8", "--bytes=64MiB"};
        CsvTable c = CsvOf(Cat(collArgs, {"--csv"}),
                           {"op",
                            "gpus",
                            "bytes",
                            "algorithm",
                            "routing",
                            "messages",
                            "time_s",
                            "algorithm_bandwidth_GBps",
                            "bus_bandwidth_GBps"},
                           dir);
        const Json cj = Json::parse(RunCli(Cat(collArgs, {"--json", "--links=3"}), dir).out);
        RAPIDLLM_REQUIRE_EQ(c.rows.size(), 1u, "collective: one row");
        NS_TEST_EXPECT_MSG_EQ(c.rows[0].at("bytes"), std::to_string(64 << 20), "bytes");
        ExpectNumber(c.rows[0].at("time_s"), cj.at("time_s"), "collective time");
        ExpectNumber(c.rows[0].at("bus_bandwidth_GBps"), cj.at("bus_bandwidth_GBps"), "bus bw");
        NS_TEST_EXPECT_MSG_EQ(c.rows[0].at("algorithm"), cj.at("algorithm").get<std::string>(), "");
        CsvTable links = CsvOf(
            Cat(collArgs, {"--csv", "--links=3"}), {"link", "bytes", "busy_s", "utilization"}, dir);
        RAPIDLLM_REQUIRE_EQ(links.rows.size(), 3u, "collective --links=3: three links");
        for (std::size_t i = 0; i < 3; ++i)
        {
            const Json& l = cj.at("most_loaded_links").at(i);
            NS_TEST_EXPECT_MSG_EQ(links.rows[i].at("link"), l.at("link").get<std::string>(), "");
            ExpectNumber(links.rows[i].at("bytes"), l.at("bytes"), "link bytes");
        }
        // Byte counts exactly (nine digits lost 20 bytes of 10 GiB's 18790481920).
        const std::vector<std::string> big = {"collective",
                                              "--hardware=a100-sxm-80gb",
                                              "--bytes=10GiB",
                                              "--granularity=fluid",
                                              "--links=1"};
        CsvTable bigLinks =
            CsvOf(Cat(big, {"--csv"}), {"link", "bytes", "busy_s", "utilization"}, dir);
        const Json bigJson = Json::parse(RunCli(Cat(big, {"--json"}), dir).out);
        RAPIDLLM_REQUIRE_EQ(bigLinks.rows.size(), 1u, "one link");
        NS_TEST_EXPECT_MSG_EQ(std::stod(bigLinks.rows[0].at("bytes")),
                              bigJson.at("most_loaded_links").at(0).at("bytes").get<double>(),
                              "exact link bytes");
        // A whole number as one, as the collective's own bytes (it read 18790481920.0).
        NS_TEST_EXPECT_MSG_EQ(
            bigJson.at("most_loaded_links").at(0).at("bytes").is_number_unsigned(),
            true,
            "integer");
    }
};

/**
 * \brief The input echo of replay, validate and xval --json: the trace set and the machine
 * (with --set and --fault as applied), and the options that shape a validate or xval run.
 */
class CliInputEchoTestCase : public TestCase
{
  public:
    CliInputEchoTestCase()
        : TestCase("replay, validate and xval --json echo their input")
    {}

  private:
    void
    DoRun() override
    {
        const ScratchDir scratch("echo");
        const std::string dir = scratch.Path();
        const std::string traces = dir + "/traces";
        CliResult t = RunCli(Cat({"trace", "--out=" + traces}, kSmallTraining), dir);
        NS_TEST_ASSERT_MSG_EQ(t.status, 0, t.err);
        CliResult r = RunCli({"replay",
                              "--trace=" + traces + "/trace",
                              "--hardware=a100-sxm-80gb",
                              "--set=network.infiniband.bandwidth_GBps=12.5",
                              "--fault=gpu0-nvlink.sw0:0.5@1ms",
                              "--routing=ecmp",
                              "--json"},
                             dir);
        NS_TEST_ASSERT_MSG_EQ(r.status, 0, r.err);
        // A selector naming no link of the trace set's network is an error of the option, as
        // in run (not of the hardware file the fault is added to).
        CliResult bad = RunCli({"replay",
                                "--trace=" + traces + "/trace",
                                "--hardware=a100-sxm-80gb",
                                "--fault=gpu0-nosuch:0.5"},
                               dir);
        NS_TEST_EXPECT_MSG_EQ(bad.status, 2, bad.err);
        NS_TEST_EXPECT_MSG_NE(
            bad.err.find("option --fault: unknown node 'nosuch'"), std::string::npos, bad.err);
        const Json in = Json::parse(r.out).at("input");
        NS_TEST_EXPECT_MSG_EQ(in.at("version").get<std::string>().empty(), false, "version");
        NS_TEST_EXPECT_MSG_EQ(
            in.at("trace").at("prefix").get<std::string>(), traces + "/trace", "the trace set");
        NS_TEST_EXPECT_MSG_EQ(in.at("trace").at("ranks").get<uint32_t>(), 8u, "8 ranks");
        NS_TEST_EXPECT_MSG_EQ(in.at("trace").at("comm_groups").get<std::string>(),
                              traces + "/trace.comm_groups.json",
                              "the communicator groups read");
        NS_TEST_EXPECT_MSG_EQ(
            in.at("hardware").at("source").get<std::string>(), "a100-sxm-80gb", "hardware");
        NS_TEST_EXPECT_MSG_EQ(
            in.at("hardware").at("network").at(1).at("bandwidth_GBps").get<double>(),
            12.5,
            "--set");
        NS_TEST_EXPECT_MSG_EQ(
            in.at("set"), Json::array({"network.infiniband.bandwidth_GBps=12.5"}), "--set echoed");
        NS_TEST_EXPECT_MSG_EQ(in.at("trace").at("costed_for").get<std::string>(),
                              "a100-sxm-80gb",
                              "the hardware the trace's kernels were costed for");
        // Kernels costed with a GPU override: recorded with it; replayed on another machine, the
        // note names the source that replays them on their own.
        {
            const std::string costed = dir + "/costed";
            CliResult t =
                RunCli(Cat({"trace", "--out=" + costed, "--set=gpu.hbm_bandwidth_GBps=0.5x"},
                           kSmallTraining),
                       dir);
            NS_TEST_ASSERT_MSG_EQ(t.status, 0, t.err);
            CliResult r = RunCli(
                {"replay", "--trace=" + costed + "/trace", "--hardware=h100-sxm-80gb", "--json"},
                dir);
            NS_TEST_ASSERT_MSG_EQ(r.status, 0, r.err);
            NS_TEST_EXPECT_MSG_EQ(
                Json::parse(r.out).at("input").at("trace").at("costed_for").get<std::string>(),
                "a100-sxm-80gb with gpu.hbm_bandwidth_GBps=0.5x",
                "the override recorded");
            NS_TEST_EXPECT_MSG_NE(r.err.find("(--hardware=a100-sxm-80gb replays it on its own)"),
                                  std::string::npos,
                                  r.err);
        }
        // Without --hardware, a set costed for the H100 replays on the H100, to run's step time
        // (it replayed on the default A100's network, 15% slower, with only a note).
        {
            const std::string h100 = dir + "/h100";
            // With the SMs it was costed with: replay takes those (the collectives share them).
            const std::vector<std::string> job =
                Cat({"--hardware=h100-sxm-80gb", "--set=gpu.sm_count=33"}, kSmallTraining);
            CliResult t = RunCli(Cat({"trace", "--out=" + h100}, job), dir);
            NS_TEST_ASSERT_MSG_EQ(t.status, 0, t.err);
            CliResult run = RunCli(Cat({"run", "--json"}, job), dir);
            NS_TEST_ASSERT_MSG_EQ(run.status, 0, run.err);
            CliResult r = RunCli({"replay", "--trace=" + h100 + "/trace", "--json"}, dir);
            NS_TEST_ASSERT_MSG_EQ(r.status, 0, r.err);
            const Json j = Json::parse(r.out);
            NS_TEST_EXPECT_MSG_EQ(j.at("step_time_s").get<double>(),
                                  Json::parse(run.out).at("step_time_s").get<double>(),
                                  "run's step");
            NS_TEST_EXPECT_MSG_EQ(j.at("input").at("hardware").at("source").get<std::string>(),
                                  "h100-sxm-80gb",
                                  "echoed");
            NS_TEST_EXPECT_MSG_EQ(r.err, "", "no note");
        }
        RAPIDLLM_REQUIRE_EQ(in.at("hardware").at("faults").size(), 1u, "--fault echoed");
        const Json& fault = in.at("hardware").at("faults").at(0);
        NS_TEST_EXPECT_MSG_EQ(fault.at("link").get<std::string>(), "gpu0-nvlink.sw0", "fault link");
        NS_TEST_EXPECT_MSG_EQ(fault.at("factor").get<double>(), 0.5, "fault factor");
        NS_TEST_EXPECT_MSG_EQ_TOL(fault.at("start_s").get<double>(), 1e-3, 1e-15, "fault time");
        NS_TEST_EXPECT_MSG_EQ(in.at("backend").get<std::string>(), "flow", "backend");
        NS_TEST_EXPECT_MSG_EQ(in.at("routing").get<std::string>(), "ecmp", "routing");
        // The hardware object is the one run --json echoes for the same machine.
        CliResult run = RunCli(Cat({"run",
                                    "--json",
                                    "--hardware=a100-sxm-80gb",
                                    "--set=network.infiniband.bandwidth_GBps=12.5",
                                    "--fault=gpu0-nvlink.sw0:0.5@1ms"},
                                   kSmallTraining),
                               dir);
        NS_TEST_ASSERT_MSG_EQ(run.status, 0, run.err);
        NS_TEST_EXPECT_MSG_EQ(Json::parse(run.out).at("input").at("hardware"),
                              in.at("hardware"),
                              "replay and run echo the machine alike");

        // validate: the data folder, --quick and each table's rows and limit.
        const std::string data = SmallValidationData(dir);
        CliResult v = RunCli({"validate", "--data=" + data, "--quick", "--json"}, dir);
        NS_TEST_ASSERT_MSG_EQ(v.status, 0, v.err);
        const Json vj = Json::parse(v.out);
        const Json& vin = vj.at("input");
        NS_TEST_EXPECT_MSG_EQ(vin.at("data").get<std::string>(), data, "validate: data");
        NS_TEST_EXPECT_MSG_EQ(vin.at("quick").get<bool>(), true, "validate: --quick");
        RAPIDLLM_REQUIRE_EQ(vin.at("tables").size(), 11u, "validate: eleven tables");
        NS_TEST_EXPECT_MSG_EQ(vin.at("tables").at(0).at("file").get<std::string>(),
                              "megatron-sc21-table1.csv",
                              "validate: the training table first");
        NS_TEST_EXPECT_MSG_EQ(vin.at("tables").at(0).at("sets").size(),
                              (vin.at("tables").at(0).at("rows").get<std::size_t>() > 0 ? 1u : 0u),
                              "validate: the sets a table's rows belong to");
        NS_TEST_EXPECT_MSG_EQ(vin.at("tables").at(0).at("max_gpus").get<uint32_t>(),
                              256u,
                              "validate --quick: up to 256 GPUs");
        std::size_t rows = 0;
        for (const auto& table : vin.at("tables"))
        {
            rows += table.at("rows").get<std::size_t>();
        }
        NS_TEST_EXPECT_MSG_EQ(rows, vj.at("rows").size(), "validate: the tables' rows");

        // xval: the options and the workloads run.
        CliResult x = RunCli(
            {"xval", "--quick", "--only=ring-allreduce-8gpu-1MiB", "--bar=0.2", "--json"}, dir);
        NS_TEST_ASSERT_MSG_EQ(x.status, 0, x.err);
        const Json xin = Json::parse(x.out).at("input");
        NS_TEST_EXPECT_MSG_EQ(xin.at("quick").get<bool>(), true, "xval: --quick");
        NS_TEST_EXPECT_MSG_EQ(xin.at("bar").get<double>(), 0.2, "xval: --bar");
        NS_TEST_EXPECT_MSG_EQ(xin.at("only").get<std::string>(), "ring-allreduce-8gpu-1MiB", "");
        NS_TEST_EXPECT_MSG_EQ(xin.at("workloads"),
                              Json::array({"ring-allreduce-8gpu-1MiB"}),
                              "xval: the workloads run");
    }
};

/**
 * \brief No command's --help lists a value twice among the allowed values of an option (as
 * `collective --help` once listed "auto" twice); the check itself finds a repeated item.
 */
class CliHelpListsTestCase : public TestCase
{
  public:
    CliHelpListsTestCase()
        : TestCase("every command's --help lists each allowed value once")
    {}

  private:
    void
    DoRun() override
    {
        NS_TEST_EXPECT_MSG_EQ(
            RepeatedListItems("    --algorithm:    collective algorithm (known: auto, auto, "
                              "direct, ring) [auto]"),
            "auto",
            "the check finds a repeated value");
        NS_TEST_EXPECT_MSG_EQ(RepeatedListItems("    --op:  collective (all-reduce, broadcast)"),
                              "",
                              "and none where there is none");
        const ScratchDir scratch("help-lists");
        const std::string dir = scratch.Path();
        // The commands, as the usage text lists them.
        CliResult usage = RunCli({}, dir);
        std::istringstream in(usage.out + usage.err);
        std::string line;
        std::vector<std::string> commands;
        bool listing = false;
        while (std::getline(in, line))
        {
            if (line == "Commands:")
            {
                listing = true;
                continue;
            }
            if (listing && line.rfind("  ", 0) == 0 && line.size() > 2 && line[2] != ' ')
            {
                // "  study faults    ..." names a two-word command: words up to two spaces.
                commands.push_back(line.substr(2, line.find("  ", 2) - 2));
            }
        }
        NS_TEST_ASSERT_MSG_GT(commands.size(), 10u, "the commands are listed");
        uint32_t lists = 0;
        for (const auto& command : commands)
        {
            std::vector<std::string> args;
            std::istringstream words(command);
            std::string word;
            while (words >> word)
            {
                args.push_back(word);
            }
            args.push_back("--help");
            CliResult help = RunCli(args, dir);
            std::istringstream text(help.out + help.err);
            uint32_t options = 0;
            while (std::getline(text, line))
            {
                if (line.rfind("    --", 0) != 0)
                {
                    continue;
                }
                ++options;
                lists += line.find(", ") != std::string::npos ? 1 : 0;
                NS_TEST_EXPECT_MSG_EQ(RepeatedListItems(line), "", command + ": " + line);
            }
            NS_TEST_EXPECT_MSG_GT(options, 0u, command + " --help lists its options");
            // "help <command>" is "<command> --help".
            args.pop_back();
            args.insert(args.begin(), "help");
            const CliResult asked = RunCli(args, dir);
            NS_TEST_EXPECT_MSG_EQ(asked.status, 0, command);
            NS_TEST_EXPECT_MSG_EQ(asked.out, help.out, "help " + command);
        }
        NS_TEST_EXPECT_MSG_GT(lists, 10u, "lists of values were checked");
        // A two-word command's first word lists its kinds; --version names the version.
        const CliResult study = RunCli({"study", "--help"}, dir);
        NS_TEST_EXPECT_MSG_EQ(study.status, 0, study.err);
        NS_TEST_EXPECT_MSG_NE(study.out.find("  faults "), std::string::npos, study.out);
        const CliResult version = RunCli({"--version"}, dir);
        NS_TEST_EXPECT_MSG_EQ(version.status, 0, version.err);
        NS_TEST_EXPECT_MSG_EQ(version.out.rfind("rapid-llm ", 0), 0u, version.out);
    }
};

/**
 * \brief What the help says matches what the commands do: --granularity where collectives run
 * only, collective's summary names both networks, study hardware names memory.png and prints
 * MFU as run does (a percentage).
 */
class CliHelpConsistencyTestCase : public TestCase
{
  public:
    CliHelpConsistencyTestCase()
        : TestCase("help lists what applies; study hardware prints MFU as run does")
    {}

  private:
    void
    DoRun() override
    {
        const ScratchDir scratch("help-consistency");
        const std::string dir = scratch.Path();
        auto help = [&](const std::vector<std::string>& command)
        {
            CliResult r = RunCli(Cat(command, {"--help"}), dir);
            return r.out + r.err;
        };
        for (const char* command :
             {"memory", "trace", "gemm", "attention", "presets", "merge", "trace-info"})
        {
            NS_TEST_EXPECT_MSG_EQ(help({command}).find("--granularity"),
                                  std::string::npos,
                                  command << " does not run collectives");
        }
        for (const char* command : {"run", "replay", "sweep", "collective", "xval"})
        {
            NS_TEST_EXPECT_MSG_NE(help({command}).find("--granularity"),
                                  std::string::npos,
                                  command << " runs collectives");
        }
        // collective and sweep reject @TIME: their help does not offer it.
        for (const char* command : {"collective", "sweep"})
        {
            NS_TEST_EXPECT_MSG_EQ(help({command}).find("starts it mid-run"),
                                  std::string::npos,
                                  command << " takes faults from the start only");
        }
        NS_TEST_EXPECT_MSG_NE(help({"run"}).find("starts it mid-run"), std::string::npos, "run");
        CliResult usage = RunCli({"--help"}, dir);
        const std::size_t at = usage.out.find("  collective ");
        RAPIDLLM_REQUIRE_EQ((at != std::string::npos), true, usage.out);
        const std::string line = usage.out.substr(at, usage.out.find('\n', at) - at);
        NS_TEST_EXPECT_MSG_NE(line.find("packet"), std::string::npos, line);
        // ns-3's listings need no command (the errors that point to them say so).
        CliResult types = RunCli({"--PrintTypeIds"}, dir);
        NS_TEST_EXPECT_MSG_EQ(types.status, 0, types.err);
        NS_TEST_EXPECT_MSG_NE(
            types.out.find("ns3::rapidllm::PacketNetwork"), std::string::npos, "our TypeIds");
        NS_TEST_EXPECT_MSG_NE(help({"study", "hardware"}).find("step-time.png and memory.png"),
                              std::string::npos,
                              "study hardware --out names memory.png");

        CliResult study = RunCli({"study",
                                  "hardware",
                                  "--model=llama2-7b",
                                  "--gpus=2",
                                  "--tp=2",
                                  "--gbs=2",
                                  "--seq=256",
                                  "--vary=model.layers=2,4",
                                  "--out=" + dir + "/hw"},
                                 dir);
        NS_TEST_ASSERT_MSG_EQ(study.status, 0, study.err);
        const Json rows = Json::parse(ReadText(dir + "/hw/results.json")).at("rows");
        RAPIDLLM_REQUIRE_EQ(rows.size(), 2u, "two rows");
        NS_TEST_EXPECT_MSG_EQ(rows.at(0).at("input").at("model").at("layers").get<uint32_t>(),
                              2u,
                              "the varied value ran");
        char mfu[32];
        std::snprintf(
            mfu, sizeof(mfu), "%.1f %%", 100 * rows.at(0).at("report").at("mfu").get<double>());
        NS_TEST_EXPECT_MSG_NE(study.out.find(mfu), std::string::npos, mfu << " in " << study.out);
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
        AddTestCase(new CliDoesNotFitStatusTestCase, TestCase::QUICK);
        AddTestCase(new CliOutputErrorStatusTestCase, TestCase::QUICK);
        AddTestCase(new CliWithoutGnuplotTestCase, TestCase::QUICK);
        AddTestCase(new CliGnuplotFailsTestCase, TestCase::QUICK);
        AddTestCase(new CliSpecDigestTestCase, TestCase::QUICK);
        AddTestCase(new CliFluidBesideTransferTestCase, TestCase::QUICK);
        AddTestCase(new CliPlotNamesTestCase, TestCase::QUICK);
        AddTestCase(new CliEchoSettingsTestCase, TestCase::QUICK);
        AddTestCase(new CliServingDefaultTpTestCase, TestCase::QUICK);
        AddTestCase(new CliKernelClockTestCase, TestCase::QUICK);
        AddTestCase(new CliNoEffectNotesTestCase, TestCase::QUICK);
        AddTestCase(new CliVllmBatchNoteTestCase, TestCase::QUICK);
        AddTestCase(new CliSweepJsonTestCase, TestCase::QUICK);
        AddTestCase(new CliFaultStudyMemoryTestCase, TestCase::QUICK);
        AddTestCase(new CliJsonWinsOverCsvTestCase, TestCase::QUICK);
        AddTestCase(new CliPerRankTestCase, TestCase::QUICK);
        AddTestCase(new CliPacketAttributesTestCase, TestCase::QUICK);
        AddTestCase(new CliCsvTestCase, TestCase::QUICK);
        AddTestCase(new CliInputEchoTestCase, TestCase::QUICK);
        AddTestCase(new CliHelpListsTestCase, TestCase::QUICK);
        AddTestCase(new CliHelpConsistencyTestCase, TestCase::QUICK);
    }
};

static CliOutputTestSuite g_cliOutputTestSuite; //!< registers the suite

#endif // RAPIDLLM_CLI
