/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// Replay speed where symmetry cannot help (issue 11): 10 x (1 ms compute + 64 MiB all-reduce
// over all ranks) on one switch of 25 GB/s links (1 us per link, no switch delay: a ring step
// pays 2 us), written as Chakra files with the library's writer and replayed from the files as
// `rapid-llm replay` does (ChakraTraceReader::ReadTraceSet, RapidLlmHelper::Replay). One case
// per process, so that the peak RSS is the case's own:
//   allreduce-replay-bench [--ranks=1024] [--rounds=10] [--granularity=auto|message|fluid]
//                          [--dir=/tmp/rapid-llm-allreduce-bench]
// prints the CPU and wall seconds of reading + replaying, the process's peak RSS, and the
// simulated step time against 10 ms + 10 x (2(N-1)/N x S/B + 2(N-1) x 2 us).
// Targets: 1,024 ranks < 1 s CPU and < 200 MB; 4,096 ranks < 5 s and < 1 GB; within 0.5%.

#include "ns3/chakra-trace-reader.h"
#include "ns3/chakra-trace-writer.h"
#include "ns3/command-line.h"
#include "ns3/hardware-spec.h"
#include "ns3/rapid-llm-helper.h"
#include "ns3/string.h"

#include <sys/resource.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>

using namespace ns3;
using namespace ns3::rapidllm;

namespace {
/** \return CPU seconds of this process so far */
double
CpuSeconds()
{
    return double(std::clock()) / CLOCKS_PER_SEC;
}

/** \return rank \p r's trace: \p rounds x (1 ms compute, then an all-reduce on group 1) */
ExecutionTrace
RankGraph(uint32_t r, uint32_t rounds, uint64_t bytes)
{
    ExecutionTrace g(r);
    int64_t last = -1;
    for (uint32_t i = 0; i < rounds; ++i)
    {
        std::vector<uint32_t> deps;
        if (last >= 0)
        {
            deps.push_back(uint32_t(last));
        }
        const uint32_t c = g.AddCompute("compute" + std::to_string(i), 1000000, 0, 0, deps);
        last = g.AddCollective(
            "allreduce" + std::to_string(i), CollectiveType::ALL_REDUCE, bytes, 1, {c});
    }
    return g;
}
} // namespace

int
main(int argc, char** argv)
{
    uint32_t ranks = 1024;
    uint32_t rounds = 10;
    std::string granularity = "auto";
    std::string dir = "/tmp/rapid-llm-allreduce-bench";
    CommandLine cmd;
    cmd.AddValue("ranks", "ranks (GPUs on the switch)", ranks);
    cmd.AddValue("rounds", "compute + all-reduce rounds", rounds);
    cmd.AddValue("granularity", "auto, message or fluid", granularity);
    cmd.AddValue("dir", "where the trace files go", dir);
    cmd.Parse(argc, argv);
    const uint64_t bytes = uint64_t(64) << 20;
    const double bandwidth = 25e9;
    const double stepLatency = 2e-6;

    // The traces, written once per (ranks, rounds) with the library's writer.
    const std::string prefix =
        dir + "/ar" + std::to_string(ranks) + "x" + std::to_string(rounds) + "/trace";
    if (!std::filesystem::exists(ChakraTraceWriter::CommGroupsFileName(prefix)))
    {
        std::filesystem::create_directories(std::filesystem::path(prefix).parent_path());
        CommGroups groups;
        std::vector<uint32_t> all(ranks);
        for (uint32_t r = 0; r < ranks; ++r)
        {
            all[r] = r;
        }
        groups.Add(1, all);
        ChakraTraceWriter::WriteTraceSet(
            prefix,
            ranks,
            [&](uint32_t r)
            {
                return RankGraph(r, rounds, bytes);
            },
            groups);
    }

    // One switch of 25 GB/s links (the GPU model is unused: the traces carry durations).
    HardwareSpec hw = HardwareSpec::Load("a100-sxm-80gb");
    NetworkDimensionSpec sw;
    sw.name = "switch";
    sw.kind = TopologyKind::SWITCH;
    sw.size = ranks;
    sw.bandwidthBps = bandwidth;
    sw.latencyS = stepLatency / 2;
    sw.switchLatencyS = 0;
    sw.wireEfficiency = 1.0;
    hw.network = NetworkSpec();
    hw.network.dimensions.push_back(sw);
    hw.network.routing = "dimension-order";

    const double cpu0 = CpuSeconds();
    const auto wall0 = std::chrono::steady_clock::now();
    Ptr<RapidLlmHelper> helper = CreateObject<RapidLlmHelper>();
    helper->SetReplayerAttribute("Granularity", StringValue(granularity));
    helper->SetHardware(hw);
    TraceSet set = ChakraTraceReader::ReadTraceSet(prefix);
    const RunReport report = helper->Replay(std::move(set));
    const double cpu = CpuSeconds() - cpu0;
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    const double n = ranks;
    const double expected =
        rounds * (1e-3 + 2 * (n - 1) / n * bytes / bandwidth + 2 * (n - 1) * stepLatency);
    std::printf("allreduce-replay ranks=%u rounds=%u granularity=%s: cpu_s=%.3f wall_s=%.3f "
                "peak_rss_mb=%.1f step_s=%.9f expected_s=%.9f rel=%+.2e\n",
                ranks,
                rounds,
                granularity.c_str(),
                cpu,
                wall,
                usage.ru_maxrss / 1024.0,
                report.stepTimeS,
                expected,
                report.stepTimeS / expected - 1);
    return 0;
}
