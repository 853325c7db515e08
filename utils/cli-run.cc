/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// rapid-llm run: predicts one training iteration or inference request of a job on a cluster.

#include "cli-commands.h"
#include "cli-job-options.h"
#include "ns3/boolean.h"
#include "ns3/network-backend.h"
#include "ns3/rapid-llm-helper.h"
#include "ns3/spec-error.h"
#include "ns3/spec-reader.h"
#include "ns3/string.h"
#include "ns3/workload-trace.h"

#include <filesystem>
#include <fstream>
#include <iostream>

namespace ns3 {
namespace rapidllm {

int
RunRunCommand(int argc, char** argv)
{
    JobOptions job;
    std::string backend = "flow";
    std::string routing;
    std::string out;
    bool json = false;
    std::string symmetry = "true";
    CommandLine cmd("rapid-llm run");
    cmd.Usage("Predicts the step time of a job (one training iteration of the global batch, or "
              "one inference request) by replaying every rank's operator graph on the cluster "
              "network, with the memory verdict and a breakdown.");
    job.AddTo(cmd);
    cmd.AddValue("backend", "network backend: " + JoinNames(NetworkBackend::Names()), backend);
    cmd.AddValue("routing", "routing policy (default: the hardware file's)", routing);
    cmd.AddValue("json", "print the report as one JSON object", json);
    cmd.AddValue("symmetry",
                 "replay one rank per set of symmetric copies (exact on symmetric networks; "
                 "false replays every rank)",
                 symmetry);
    cmd.AddValue("out", "also write the traces and report.json to this directory", out);
    auto names = job.Names();
    names.insert(names.end(), {"backend", "routing", "json", "out", "symmetry"});
    auto args = job.WithFlagValues(argc, argv);
    CheckOptions(static_cast<int>(args.size()), args.data(), names);
    cmd.Parse(static_cast<int>(args.size()), args.data());
    job.Resolve();

    Ptr<RapidLlmHelper> helper = CreateObject<RapidLlmHelper>();
    helper->SetAttribute("Backend", StringValue(backend));
    helper->SetAttribute("Routing", StringValue(routing));
    if (symmetry != "true" && symmetry != "false")
    {
        throw SpecError(
            "command line", "--symmetry", "'" + symmetry + "' is not allowed; use true or false");
    }
    helper->SetAttribute("Symmetry", BooleanValue(symmetry == "true"));
    helper->SetModel(job.model);
    helper->SetHardware(job.hardware);
    helper->SetRun(job.run);
    RunReport report = helper->Run();
    if (!out.empty())
    {
        std::error_code ec;
        std::filesystem::create_directories(out, ec);
        if (ec)
        {
            throw SpecError(out, "--out", "cannot create the directory: " + ec.message());
        }
        WriteWorkloadTraces(helper->BuildWorkload(),
                            (std::filesystem::path(out) / "trace").string());
        const std::string path = (std::filesystem::path(out) / "report.json").string();
        std::ofstream file(path + ".tmp");
        file << report.ToJson();
        file.close();
        std::filesystem::rename(path + ".tmp", path, ec);
        if (!file || ec)
        {
            throw SpecError(path, "--out", "cannot write the report");
        }
    }
    if (json)
    {
        std::cout << report.ToJson();
    }
    else
    {
        std::cout << job.model.name << " " << report.mode << " on " << report.gpus << " x "
                  << job.hardware.gpu.name << " (tp " << job.run.parallel.tp << ", pp "
                  << job.run.parallel.pp << ", dp " << job.run.parallel.dp << ")\n"
                  << report.ToText();
    }
    return 0;
}

static CliCommandRegistrar g_runCommand("run",
                                        "predict a job's step time on a cluster, and why",
                                        RunRunCommand);

} // namespace rapidllm
} // namespace ns3
