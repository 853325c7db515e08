/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// rapid-llm trace: writes every rank's operator graph as a Chakra execution trace.

#include "cli-commands.h"
#include "cli-job-options.h"
#include "ns3/fault-options.h"
#include "ns3/rapid-llm-helper.h"
#include "ns3/report-output.h"
#include "ns3/spec-error.h"
#include "ns3/spec-override.h"
#include "ns3/workload-trace.h"
#include "ns3/workload.h"

#include <filesystem>
#include <iostream>

namespace ns3 {
namespace rapidllm {

int
RunTraceCommand(const CliArgs& args)
{
    ResolvedJob job = ReadJobOptions(args);
    // A file name in --out: no directory in it, not a hidden or dot name.
    const std::string prefix = args.Text("prefix");
    if (prefix.empty() || prefix.find('/') != std::string::npos || prefix.front() == '.')
    {
        throw SpecError(kCommandLine,
                        "prefix",
                        "'" + prefix
                            + "' is not a file name: the traces are --out's PREFIX.<rank>.et, "
                              "PREFIX a name without '/' that does not start with '.' (the "
                              "directory is --out)");
    }
    const std::string out = args.Text("out");
    CreateOutputDir(out);
    // The workload `run` replays: costed, and with the host's issue times (host_ns, host_sync).
    Ptr<RapidLlmHelper> helper = CreateObject<RapidLlmHelper>();
    helper->SetModel(job.model);
    helper->SetHardware(job.hardware);
    helper->SetRun(job.run);
    const Workload w = helper->BuildWorkload();
    const std::string path = (std::filesystem::path(out) / prefix).string();
    WriteWorkloadTraces(w, path, args.Flag("gzip"), job.CostedFor());
    std::cout << "wrote " << w.layout.Ranks() << " rank traces to " << path << ".<rank>.et and "
              << path << ".comm_groups.json\n";
    // A job file's network (its faults, routing, backend and the --set of network paths and
    // gpu.sm_count, which replay takes) and slow GPUs belong to a replay of the traces, not to
    // the traces: the note gives the replay command that runs them as `run` would.
    std::string replaySets;
    for (const std::string& o : job.overrides)
    {
        if (ReplayTakesSet(SpecOverride::Parse(o).GetPath()))
        {
            replaySets += (replaySets.empty() ? "" : ",") + o;
        }
    }
    if (!job.faults.empty() || !job.slowGpus.empty() || !job.routing.empty() || !job.backend.empty()
        || !replaySets.empty())
    {
        std::cerr << "rapid-llm trace: note: the traces hold the "
                  << (job.faults.empty() && job.slowGpus.empty() ? "job's" : "healthy job's")
                  << " kernels; replay them on the job's network as run does: replay --trace="
                  << path << " --hardware=" << job.hardwareSource
                  << (replaySets.empty() ? "" : " --set=" + replaySets)
                  << (job.backend.empty() ? "" : " --backend=" + job.backend)
                  << (job.routing.empty() ? "" : " --routing=" + job.routing)
                  << (job.faults.empty() ? "" : " --fault=" + FaultOptionText(job.faults))
                  << (job.slowGpus.empty() ? "" : " --slow-gpus=" + SlowGpusText(job.slowGpus))
                  << "\n";
    }
    if (!job.gpuSets.empty())
    {
        std::cerr
            << "rapid-llm trace: note: the traces hold every rank's kernels on the job's GPU; "
               "the job file's gpu_set (GPUs of their own spec) applies to run and the studies, "
               "not to a replay of traces\n";
    }
    return 0;
}

static CliCommandRegistrar g_traceCommand(
    "trace",
    "write each rank's operator graph as a Chakra trace",
    "Builds each rank's operator graph for one training iteration or inference request, costs "
    "every operator with the compute model and writes the graphs as Chakra execution traces: "
    "DIR/PREFIX.<rank>.et and DIR/PREFIX.comm_groups.json.",
    RunTraceCommand);

} // namespace rapidllm
} // namespace ns3
