/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// A scenario built out of tree against the installed module (find_package(rapid-llm)): the job
// from its command line, the replay installed and run by the script, the report as JSON with
// the input it echoes (as `rapid-llm run --json` prints it).
//
//   oot-scenario --model=gpt-1.7b --tp=2 --dp=4 --layers=4 --gbs=32 [--routing=NAME]
//   oot-scenario --run=job.yaml   (the job file's backend: and routing: included)

#include "ns3/command-line.h"
#include "ns3/job-echo.h"
#include "ns3/job-options.h"
#include "ns3/packet-resolution.h"
#include "ns3/rapid-llm-helper.h"
#include "ns3/simulator.h"

#include <iostream>

using namespace ns3;
using namespace ns3::rapidllm;

int
main(int argc, char** argv)
{
    JobOptions job;
    job.SetDefault("model", "gpt-1.7b");
    std::string routing;
    CommandLine cmd(__FILE__);
    job.AddTo(cmd);
    cmd.AddValue("routing", "routing policy (default: the hardware file's)", routing);
    try
    {
        cmd.Parse(argc, argv);
        Ptr<RapidLlmHelper> helper = CreateObject<RapidLlmHelper>();
        // Apply sets the job file's backend and routing too (--run=FILE.yaml); --routing here
        // overrides the routing. The echo names what ran, as `rapid-llm run --json` does.
        const ResolvedJob spec = job.ToSpecs();
        const std::string backend = spec.backend.empty() ? "flow" : spec.backend;
        if (backend == "packet")
        {
            UsePicoseconds(); // before the first simulation: frames timed to the picosecond
        }
        job.Apply(helper);
        routing = routing.empty() ? spec.routing : routing;
        if (!routing.empty())
        {
            helper->SetRoutingPolicy(routing);
        }
        helper->Install();
        Simulator::Run();
        Json report = helper->Collect();
        report["input"] = JobInputJson(spec, backend, routing);
        // How the network ran the collectives and whether symmetric copies were folded: the
        // helper's defaults, as run echoes its options.
        report["input"]["granularity"] = "auto";
        report["input"]["symmetry"] = true;
        std::cout << DumpJson(report);
        Simulator::Destroy();
    }
    catch (const std::exception& e)
    {
        std::cerr << "oot-scenario: error: " << JobOptions::DescribeError(e) << "\n";
        return 2;
    }
    return 0;
}
