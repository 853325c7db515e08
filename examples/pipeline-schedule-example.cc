/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// Does a zero-bubble pipeline schedule pay for my layout? A scenario script takes a training job
// on its own CommandLine (JobOptions: every job option, with `rapid-llm run`'s defaults; here a
// small GPT on four pipeline stages) and predicts it under each pipeline schedule the layout
// takes: 1F1B, and ZB-H1 where it has a pipeline and one model chunk per stage (the schedule
// option is the script's to vary). For each it prints the step, the critical rank's bubble and
// exposed communication, and the peak memory against the GPU's; then which schedule is faster,
// and by how much.
//
// It checks what the schedules promise (exit status 1 otherwise): the same kernels (the GEMMs'
// time on the critical rank), and no more pipeline bubble under ZB-H1.
//
//   build/bin/pipeline-schedule-example [--model=gpt-1.7b] [--pp=4] [--gbs=16] [--seq=1024]
//       [--tp=... --sp --recompute=... and any other job option]

#include "ns3/command-line.h"
#include "ns3/job-options.h"
#include "ns3/rapid-llm-helper.h"
#include "ns3/spec-error.h"

#include <cmath>
#include <iomanip>
#include <iostream>
#include <map>

using namespace ns3;
using namespace ns3::rapidllm;

int
main(int argc, char* argv[])
{
    JobOptions job;
    job.SetDefault("model", "gpt-1.7b");
    job.SetDefault("pp", "4");
    job.SetDefault("gbs", "16");
    job.SetDefault("seq", "1024");
    CommandLine cmd(__FILE__);
    job.AddTo(cmd);
    try
    {
        cmd.Parse(argc, argv);
        std::map<std::string, RunReport> reports;
        for (const std::string& schedule : RunSpec::Choices("pp_schedule"))
        {
            JobOptions variant = job;
            variant.Set("pp-schedule", schedule);
            Ptr<RapidLlmHelper> helper = CreateObject<RapidLlmHelper>();
            try
            {
                variant.Apply(helper); // validates the layout under the schedule
            }
            catch (const SpecError& e)
            {
                std::cout << std::left << std::setw(6) << schedule
                          << " not for this layout: " << e.GetMessage() << "\n";
                continue;
            }
            // The memory verdict first; only a job that fits is replayed.
            RunReport r = helper->CheckMemory();
            if (r.feasible)
            {
                r = helper->Run();
            }
            std::cout << std::left << std::setw(6) << schedule << std::right << std::fixed
                      << std::setprecision(4);
            if (r.feasible)
            {
                std::cout << " step " << r.stepTimeS << " s, bubble " << r.bubbleS
                          << " s, exposed communication " << r.exposedCommS << " s,";
            }
            else
            {
                std::cout << " does not fit:";
            }
            std::cout << std::setprecision(2) << " peak " << r.memory.peak / double(1ull << 30)
                      << " of " << r.capacityBytes / double(1ull << 30) << " GiB\n";
            reports.emplace(schedule, r);
        }
        auto oneF = reports.find("1f1b");
        auto zb = reports.find("zb-h1");
        if (oneF == reports.end() || zb == reports.end() || !oneF->second.feasible
            || !zb->second.feasible)
        {
            return 0; // nothing to compare
        }
        const RunReport& a = oneF->second;
        const RunReport& b = zb->second;
        const double gain = 1 - b.stepTimeS / a.stepTimeS;
        std::cout << (gain > 0 ? "zb-h1" : "1f1b") << " is faster by " << std::setprecision(1)
                  << 100 * std::abs(gain) << "%: the bubble shrinks by " << std::setprecision(4)
                  << a.bubbleS - b.bubbleS << " s, the exposed communication grows by "
                  << b.exposedCommS - a.exposedCommS << " s\n";
        if (std::abs(b.gemmS - a.gemmS) > 1e-9 * a.gemmS || b.bubbleS > a.bubbleS + 1e-12)
        {
            std::cerr << "pipeline-schedule-example: the schedules ran different GEMMs (" << a.gemmS
                      << " s, " << b.gemmS << " s) or zb-h1 has more bubble\n";
            return 1;
        }
    }
    catch (const std::exception& e)
    {
        std::cerr << "pipeline-schedule-example: error: " << JobOptions::DescribeError(e) << "\n";
        return 1;
    }
    return 0;
}
