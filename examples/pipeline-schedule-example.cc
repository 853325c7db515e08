/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// Does a zero-bubble pipeline schedule pay for my layout? A scenario script takes a training job
// on its own CommandLine (JobOptions: every job option, with `rapid-llm run`'s defaults; here a
// small GPT on four pipeline stages) and predicts it under each pipeline schedule the layout
// takes: 1F1B and ZB-H1 on one model chunk a stage, interleaved 1F1B and ZB-V on two (the
// schedule and the chunks a stage are the script's to vary). For each it prints the step, the
// bubble (the mean over the ranks: ZB-V moves the critical rank to the first stage, whose own
// bubble is nearly none while the others' stays), the critical rank's exposed communication and
// the peak memory against the GPU's; then
// the fastest, and what each zero-bubble schedule gains on its 1F1B counterpart.
//
// It checks what the schedules promise (exit status 1 otherwise): ZB-H1 runs 1F1B's kernels
// (the GEMMs' time on the critical rank), and neither zero-bubble schedule leaves more pipeline
// bubble than the 1F1B schedule of its chunks.
//
//   build/bin/pipeline-schedule-example [--model=gpt-1.7b] [--pp=4] [--gbs=16] [--seq=1024]
//       [--tp=... --sp --recompute=... and any other job option]

#include "ns3/command-line.h"
#include "ns3/job-options.h"
#include "ns3/rapid-llm-helper.h"
#include "ns3/spec-error.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <map>
#include <vector>

using namespace ns3;
using namespace ns3::rapidllm;

namespace {

/** \return the pipeline bubble of \p r's ranks, on average */
double
MeanBubble(const RunReport& r)
{
    double sum = 0;
    for (const RankBreakdown& b : r.ranks)
    {
        sum += b.bubbleS;
    }
    return r.ranks.empty() ? r.bubbleS : sum / double(r.ranks.size());
}

} // namespace

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
        // Each schedule on the model chunks a stage it runs: (name, schedule, vpp).
        const std::vector<std::array<std::string, 3>> variants = {{"1f1b", "1f1b", "1"},
                                                                  {"zb-h1", "zb-h1", "1"},
                                                                  {"1f1b-i", "1f1b", "2"},
                                                                  {"zb-v", "zb-v", "2"}};
        std::map<std::string, RunReport> reports;
        std::cout << "(mean bubble: the pipeline bubble averaged over the ranks; run's "
                     "\"pipeline bubble\" is the critical rank's)\n";
        for (const auto& [name, schedule, vpp] : variants)
        {
            JobOptions variant = job;
            variant.Set("pp-schedule", schedule);
            variant.Set("vpp", vpp);
            Ptr<RapidLlmHelper> helper = CreateObject<RapidLlmHelper>();
            try
            {
                variant.Apply(helper); // validates the layout under the schedule
            }
            catch (const SpecError& e)
            {
                std::cout << std::left << std::setw(7) << name
                          << " not for this layout: " << e.GetMessage() << "\n";
                continue;
            }
            // The memory verdict first; only a job that fits is replayed.
            RunReport r = helper->CheckMemory();
            if (r.feasible)
            {
                r = helper->Run();
            }
            std::cout << std::left << std::setw(7) << name << std::right << std::fixed
                      << std::setprecision(4);
            if (r.feasible)
            {
                std::cout << " step " << r.stepTimeS << " s, mean bubble " << MeanBubble(r)
                          << " s, exposed communication " << r.exposedCommS << " s,";
            }
            else
            {
                std::cout << " does not fit:";
            }
            std::cout << std::setprecision(2) << " peak " << r.memory.peak / double(1ull << 30)
                      << " of " << r.capacityBytes / double(1ull << 30) << " GiB\n";
            if (r.feasible)
            {
                reports.emplace(name, r);
            }
        }
        if (reports.empty())
        {
            return 0; // nothing to compare
        }
        auto fastest = std::min_element(reports.begin(),
                                        reports.end(),
                                        [](const auto& a, const auto& b)
                                        {
                                            return a.second.stepTimeS < b.second.stepTimeS;
                                        });
        std::cout << "fastest: " << fastest->first << "\n";
        // Each zero-bubble schedule against the 1F1B schedule of its chunks.
        bool kept = true;
        for (const auto& [base, zb] : {std::pair<std::string, std::string>{"1f1b", "zb-h1"},
                                       std::pair<std::string, std::string>{"1f1b-i", "zb-v"}})
        {
            auto a = reports.find(base);
            auto b = reports.find(zb);
            if (a == reports.end() || b == reports.end())
            {
                continue;
            }
            const RunReport& x = a->second;
            const RunReport& y = b->second;
            const double gain = 1 - y.stepTimeS / x.stepTimeS;
            std::cout << zb << " against " << base << ": " << (gain > 0 ? "faster" : "slower")
                      << " by " << std::setprecision(1) << 100 * std::abs(gain)
                      << "%, the mean bubble shrinks by " << std::setprecision(4)
                      << MeanBubble(x) - MeanBubble(y)
                      << " s, the exposed communication changes by " << std::showpos
                      << y.exposedCommS - x.exposedCommS << std::noshowpos << " s\n";
            if (MeanBubble(y) > MeanBubble(x) + 1e-12
                || (zb == "zb-h1" && std::abs(y.gemmS - x.gemmS) > 1e-9 * x.gemmS))
            {
                std::cerr << "pipeline-schedule-example: " << zb << " left more bubble than "
                          << base << ", or zb-h1 ran other GEMMs than 1f1b (" << x.gemmS << " s, "
                          << y.gemmS << " s)\n";
                kept = false;
            }
        }
        if (!kept)
        {
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
