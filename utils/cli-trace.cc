/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// rapid-llm trace: writes every rank's operator graph as a Chakra execution trace.

#include "cli-commands.h"
#include "cli-job-options.h"
#include "ns3/compute-coster.h"
#include "ns3/spec-error.h"
#include "ns3/workload-trace.h"
#include "ns3/workload.h"

#include <filesystem>
#include <iostream>

namespace ns3 {
namespace rapidllm {

int
RunTraceCommand(int argc, char** argv)
{
    JobOptions job;
    std::string out;
    std::string prefix = "trace";
    bool gzip = false;
    CommandLine cmd("rapid-llm trace");
    cmd.Usage("Builds each rank's operator graph for one training iteration or inference request, "
              "costs every operator with the compute model and writes the graphs as Chakra "
              "execution traces: DIR/PREFIX.<rank>.et and DIR/PREFIX.comm_groups.json.");
    job.AddTo(cmd);
    cmd.AddValue("out", "directory to write the traces to (created if missing)", out);
    cmd.AddValue("prefix", "file name prefix", prefix);
    cmd.AddValue("gzip", "gzip-compress the .et files", gzip);
    auto names = job.Names();
    names.insert(names.end(), {"out", "prefix", "gzip"});
    auto args = job.WithFlagValues(argc, argv);
    CheckOptions(static_cast<int>(args.size()), args.data(), names);
    cmd.Parse(static_cast<int>(args.size()), args.data());
    if (out.empty())
    {
        throw SpecError("command line", "--out", "missing: give the directory to write to");
    }
    job.Resolve();

    std::error_code ec;
    std::filesystem::create_directories(out, ec);
    if (ec)
    {
        throw SpecError(out, "--out", "cannot create the directory: " + ec.message());
    }
    Ptr<GpuComputeModel> compute = CreateObject<GpuComputeModel>(job.hardware.gpu);
    Workload w = Workload::Build(job.model, job.run, MakeComputeCoster(compute));
    const std::string path = (std::filesystem::path(out) / prefix).string();
    WriteWorkloadTraces(w, path, gzip);
    std::cout << "wrote " << w.layout.Ranks() << " rank traces to " << path << ".<rank>.et and "
              << path << ".comm_groups.json\n";
    return 0;
}

static CliCommandRegistrar g_traceCommand("trace",
                                          "write each rank's operator graph as a Chakra trace",
                                          RunTraceCommand);

} // namespace rapidllm
} // namespace ns3
