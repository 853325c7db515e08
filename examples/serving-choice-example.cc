/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// Which machine, engine and precision serve a model best? A scenario script asks the serving
// study through the public API (ServingStudy, the same that `rapid-llm study serving` runs):
// every replica layout and batch of an inference job on a budget of GPUs, on each machine of a
// list, under each engine and in each precision of a list, against latency targets. It prints,
// for each machine, engine and precision, the row that gives the most generated tokens per second
// per GPU within the targets, and the one the whole study ranks first. A machine that lists no rate
// for a type (an A100 and fp8) rules that pair out, and the study says why.
//
// It checks what the study promises (exit status 1 otherwise): each variant's rows are those the
// study of that variant alone gives, and the first-ranked row is the best of the variants' own.
//
//   build/bin/serving-choice-example [--model=llama3-8b] [--gpus=8] [--prompt=1024] [--gen=256]
//       [--machines=h100-sxm-80gb,a100-sxm-80gb] [--engines=vllm] [--precisions=bf16,fp8]
//       [--tpot-ms=30]

#include "ns3/command-line.h"
#include "ns3/job-options.h"
#include "ns3/serving-study.h"
#include "ns3/spec-error.h"

#include <iomanip>
#include <iostream>
#include <map>
#include <sstream>

using namespace ns3;
using namespace ns3::rapidllm;

namespace {

/** \return the comma-separated items of \p text */
std::vector<std::string>
Items(const std::string& text)
{
    std::vector<std::string> items;
    std::stringstream ss(text);
    for (std::string item; std::getline(ss, item, ',');)
    {
        items.push_back(item);
    }
    return items;
}

/** \return a row as one line: layout, batch, TPOT, TTFT, tokens/s per GPU, energy */
std::string
Describe(const ServingRow& r)
{
    std::ostringstream os;
    os << std::fixed << std::setprecision(1) << r.replicas << " x tp" << r.tp << " pp" << r.pp
       << " at " << r.batch << " in flight: " << r.tokensPerSPerGpu << " tokens/s per GPU, TPOT "
       << r.tpotS * 1e3 << " ms, TTFT " << r.ttftS * 1e3 << " ms";
    if (r.haveEnergy)
    {
        os << std::setprecision(3) << ", " << r.energyPerTokenJ << " J a token";
    }
    return os.str();
}

} // namespace

int
main(int argc, char* argv[])
{
    std::string model = "llama3-8b";
    uint32_t gpus = 8;
    uint32_t prompt = 1024;
    uint32_t gen = 256;
    std::string machines = "h100-sxm-80gb,a100-sxm-80gb";
    std::string engines = "vllm";
    std::string precisions = "bf16,fp8";
    double tpotMs = 30;
    CommandLine cmd(__FILE__);
    cmd.AddValue("model", "model preset or file", model);
    cmd.AddValue("gpus", "GPUs to fill with replicas", gpus);
    cmd.AddValue("prompt", "prompt tokens a request", prompt);
    cmd.AddValue("gen", "generated tokens a request", gen);
    cmd.AddValue("machines", "hardware presets or files to compare", machines);
    cmd.AddValue("engines", "serving engines to compare (e.g. lmdeploy,vllm)", engines);
    cmd.AddValue(
        "precisions", "weights' types to compare (a GPU without one is an error)", precisions);
    cmd.AddValue("tpot-ms", "time per output token target, ms", tpotMs);
    cmd.Parse(argc, argv);

    try
    {
        JobOptions job;
        job.Set("model", model);
        job.Set("prompt", std::to_string(prompt));
        job.Set("gen", std::to_string(gen));
        ServingSpace space;
        space.gpus = gpus;
        space.tp = {1, 2, 4, 8};
        space.batch = {1, 4, 16, 32, 64, 128, 256};
        space.hardware = Items(machines);
        space.engines = Items(engines);
        space.dtypes = Items(precisions);
        space.tpotSloS = tpotMs * 1e-3;
        space.ttftSloS = 2.0;
        const ServingStudy study(job, space, "flow", "", true);
        const std::vector<ServingRow> rows = study.Run(); // ranked, the targets' rows first
        std::cout << model << " on " << gpus << " GPUs, " << prompt << " + " << gen << " tokens, "
                  << engines << ", within TPOT " << tpotMs << " ms and TTFT 2 s: " << rows.size()
                  << " rows\n";

        bool consistent = true;
        double bestOfVariants = 0;
        for (const ServingVariant& v : study.Variants())
        {
            if (!v.ruledOut.empty())
            {
                // A type the GPU lists no rate for (an A100 and fp8): the others are tried.
                std::cout << "  not tried: " << v.ruledOut << "\n";
                continue;
            }
            // The variant alone: the same rows.
            ServingSpace alone = space;
            alone.hardware = {v.hardware};
            alone.engines = {v.engine};
            alone.dtypes = {v.dtype};
            const std::vector<ServingRow> ownRows =
                ServingStudy(job, alone, "flow", "", true).Run();
            std::map<std::pair<uint32_t, uint32_t>, double> own;
            const ServingRow* best = nullptr;
            for (const ServingRow& r : ownRows)
            {
                own[{r.tp, r.batch}] = r.tokensPerSPerGpu;
                if (r.meetsSlo && (!best || r.tokensPerSPerGpu > best->tokensPerSPerGpu))
                {
                    best = &r;
                }
            }
            for (const ServingRow& r : rows)
            {
                if (r.hardware == v.hardware && r.engine == v.engine && r.dtype == v.dtype)
                {
                    consistent = consistent && own.at({r.tp, r.batch}) == r.tokensPerSPerGpu;
                }
            }
            std::cout << "  " << std::left << std::setw(16) << v.hardware
                      << std::setw(space.engines.size() > 1 ? 9 : 0)
                      << (space.engines.size() > 1 ? v.engine : std::string()) << std::setw(6)
                      << v.dtype << (best ? Describe(*best) : "no row within the targets") << "\n";
            bestOfVariants = std::max(bestOfVariants, best ? best->tokensPerSPerGpu : 0.0);
        }
        const ServingRow& first = rows.front();
        std::cout << "ranked first: " << first.hardware << " "
                  << (space.engines.size() > 1 ? first.engine + " " : std::string())
                  << first.Precision() << ", " << Describe(first) << "\n";
        if (!consistent || (first.meetsSlo && first.tokensPerSPerGpu != bestOfVariants))
        {
            std::cerr << "serving-choice-example: the study's rows are not its variants' own\n";
            return 1;
        }
    }
    catch (const std::exception& e)
    {
        std::cerr << "serving-choice-example: error: " << e.what() << "\n";
        return 1;
    }
    return 0;
}
