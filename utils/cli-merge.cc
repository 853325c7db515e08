/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// rapid-llm merge: joins the folders of a sweep's shards (--shard=I/N, e.g. a Slurm job array
// or GNU parallel) into the folder the whole sweep would have written.

#include "cli-commands.h"
#include "ns3/hardware-spec.h"
#include "ns3/spec-error.h"
#include "ns3/spec-override.h"
#include "ns3/sweep-dir.h"
#include "ns3/sweep-plot.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace ns3 {
namespace rapidllm {

int
RunMergeCommand(const CliArgs& args)
{
    const std::string out = args.Text("out");
    const std::vector<std::string> dirs = args.Texts("dirs");
    std::vector<SweepRow> rows = SweepDir::Merge(dirs, out);
    uint64_t fit = 0;
    for (const auto& r : rows)
    {
        fit += r.fits ? 1 : 0;
    }
    if (args.Flag("plot"))
    {
        const Json inputs =
            Json::parse(std::ifstream((std::filesystem::path(out) / "sweep.json").string()));
        // The sweep's machines (a comma-separated list), with its --set, as it ran them.
        const std::string set = inputs.value("set", std::string());
        const std::vector<SpecOverride> overrides =
            set.empty() ? std::vector<SpecOverride>() : SpecOverride::ParseList(set, kCommandLine);
        std::vector<HardwareSpec> machines;
        std::stringstream sources(inputs.at("hardware").get<std::string>());
        for (std::string source; std::getline(sources, source, ',');)
        {
            machines.push_back(HardwareSpec::Load(source, overrides));
        }
        // One GPU count (a number) or several (a list).
        const Json& gpus = inputs.at("gpus");
        const std::vector<uint32_t> counts =
            (gpus.is_array() ? gpus : Json::array({gpus})).get<std::vector<uint32_t>>();
        PlotSweep(rows,
                  (std::filesystem::path(out) / "sweep.png").string(),
                  inputs.at("model").get<std::string>(),
                  SweepGpuCountText(counts),
                  inputs.at("gbs").get<uint64_t>(),
                  machines);
    }
    std::printf("merged %zu folder%s: %zu layout%s, %llu fit in memory -> %s/results.csv\n",
                dirs.size(),
                dirs.size() == 1 ? "" : "s",
                rows.size(),
                rows.size() == 1 ? "" : "s",
                static_cast<unsigned long long>(fit),
                out.c_str());
    return 0;
}

static CliCommandRegistrar g_mergeCommand(
    "merge",
    "join the folders of a sweep's shards",
    "Usage: rapid-llm merge DIR... --out=DIR. Joins the folders that `rapid-llm sweep "
    "--shard=I/N --out=DIR_I` wrote (every shard of one sweep) into one folder: the ranked "
    "results.csv and sweep.json the whole sweep would have written, byte for byte.",
    RunMergeCommand);

} // namespace rapidllm
} // namespace ns3
