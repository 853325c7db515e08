/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// rapid-llm merge: joins the folders of a sweep's shards (--shard=I/N, e.g. a Slurm job array
// or GNU parallel) into the folder the whole sweep would have written.

#include "cli-commands.h"
#include "ns3/hardware-spec.h"
#include "ns3/sweep-dir.h"
#include "ns3/sweep-plot.h"

#include <cstdio>
#include <filesystem>
#include <fstream>

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
        HardwareSpec h = HardwareSpec::Load(inputs.at("hardware").get<std::string>());
        PlotSweep(rows,
                  (std::filesystem::path(out) / "sweep.png").string(),
                  inputs.at("model").get<std::string>() + " on "
                      + std::to_string(inputs.at("gpus").get<uint64_t>()) + " x " + h.gpu.name
                      + ", global batch " + std::to_string(inputs.at("gbs").get<uint64_t>()),
                  h.gpu.hbmBytes / double(1ull << 30));
    }
    std::printf("merged %zu folders: %zu layouts, %llu fit in memory -> %s/results.csv\n",
                dirs.size(),
                rows.size(),
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
