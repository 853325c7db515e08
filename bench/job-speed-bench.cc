/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// `rapid-llm run` speed where symmetry cannot help, or helps little (issue 11). One case per
// process, so that the peak RSS is the case's own:
//   job-speed-bench --case=NAME [--granularity=auto|message|fluid] [--symmetry=true|false]
// prints CPU and wall seconds of the run (build, memory check, replay), the process's peak RSS
// and the predicted step time. Cases (targets on a 2-core machine, CPU seconds):
//   gpt18-tp16       GPT 18.4B, 256 A100, TP16 PP1 DP16 (tensor groups span two nodes), mbs 2,
//                    gbs 1024, full recompute: < 5 s
//   gpt3-full        GPT-3 175B, 1024 A100, TP8 PP8 DP16, mbs 1, gbs 1536, full recompute, fp16,
//                    every rank replayed (symmetry off): < 10 s
//   gpt3-full-fault  the same with one inter-node link (gpu0's InfiniBand link) at 50%: < 10 s
//   gpt3-full-fault-at  the same link degraded to 50% during the step (a FaultSchedule given
//                    to the helper's backend, starting 5 s into the replay): < 10 s
//   gpt3-tp8         GPT-3 175B as above, symmetry on (the layout sweep's way)
//   gpt3-tp4         the same at TP4 PP8 DP32: at most 2x gpt3-tp8
//   gpt3-ub          GPT-3 175B on 1024 H100, TP8 PP8 DP16, sequence parallelism, fp8, no
//                    recompute, Transformer Engine's userbuffers TP overlap (ring messages inside
//                    tensor groups), symmetry on: < 10 s
//   llama70-cp2      Llama-3 70B on 1024 H100, TP8 CP2 PP4 DP16, sequence parallelism, seq 8192,
//                    gbs 512, fp8, no recompute: ring attention's messages across nodes, the
//                    context axis folded
//   llama405-16k     Llama-3 405B on 16,384 H100, TP8 PP16 DP128, seq 8192, mbs 1, gbs 2048,
//                    full recompute, bf16, its 126 layers as 7 on the first and the last stage
//                    and 8 on the others (as Meta trained it): < 60 s and < 8 GB
//   llama405-16k-128 the same with 128 layers, 8 per stage
//   dsv3-ep64        DeepSeek-V3 (MLA, 256 experts, its prediction module) on 2,048 H100, TP1
//                    PP16 DP128 EP64 (expert all-to-alls across 8 nodes), seq 4096, gbs 2048,
//                    fp8, ZeRO-1, selective recompute, 4 layers on the first stage and 1 on the
//                    last: < 10 s
//   llama70-dp1024   Llama-3 70B on 1,024 H100, TP1 DP1024, ZeRO-3, seq 4096, gbs 1024, full
//                    recompute, bf16: data-parallel collectives of whole nodes (hierarchical
//                    over NVLink and 128 nodes, plans of 78k steps): 10.5 CPU s at stop 70
//                    (from 440 GPUs on, each plan rebuilt at every layer), 0.35 s at stop 71
// Inference (a request's graph grows with its generated tokens; step_s is the request time):
//   llama70-gen4k    Llama-3 70B on 8 H100, TP8, vLLM, batch 64, 1,024-token prompts, 4,096
//                    generated tokens (4.6 million operators): 5.5 CPU s (user + sys), 1.26 GB
//                    at stop 41, with compact work nodes and huge pages (8.5 s and 1.8 GB
//                    before; 19.8 s, 2.0 GB before its traces stopped sharing names, stop 38)
// Scale (issue 14: complete within 8 GB of peak RSS):
//   llama405-32k     Llama-3 405B on 32,768 H100, TP8 PP16 DP256, seq 8192, mbs 1, gbs 4096
//                    (16 micro-batches per pipeline, as llama405-16k), full recompute, bf16,
//                    126 layers as 7 + 14 x 8 + 7
//   gpt3-16k         GPT-3 175B on 16,384 A100, TP8 PP8 DP256, mbs 1, gbs 2048 (8 micro-batches
//                    per pipeline), full recompute, fp16

#include "ns3/boolean.h"
#include "ns3/command-line.h"
#include "ns3/fault-schedule.h"
#include "ns3/network-backend.h"
#include "ns3/priority-queue-scheduler.h"
#include "ns3/rapid-llm-helper.h"
#include "ns3/simulator.h"
#include "ns3/string.h"

#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <stdexcept>

using namespace ns3;
using namespace ns3::rapidllm;

int
main(int argc, char** argv)
{
    std::string name = "gpt3-full";
    std::string granularity = "auto";
    std::string symmetry = "";
    CommandLine cmd;
    cmd.AddValue("case", "the case (see the file's header)", name);
    cmd.AddValue("granularity", "auto, message or fluid", granularity);
    cmd.AddValue("symmetry", "override the case's symmetry reduction: true or false", symmetry);
    cmd.Parse(argc, argv);

    std::string model = "gpt3-175b";
    std::string hardware = "a100-sxm-80gb";
    RunSpec run;
    run.microBatch = 1;
    run.sequence = 2048;
    run.recompute = Recompute::FULL;
    run.dtype = DataType::FP16;
    bool reduce = true;
    uint32_t layers = 0;
    std::string fault;
    bool scheduled = false; // the fault starts during the run (FaultSchedule), not at build
    auto layout = [&](uint32_t tp, uint32_t pp, uint32_t dp, uint32_t gbs)
    {
        run.parallel.tp = tp;
        run.parallel.pp = pp;
        run.parallel.dp = dp;
        run.globalBatch = gbs;
    };
    if (name == "gpt18-tp16")
    {
        model = "gpt-18.4b";
        layout(16, 1, 16, 1024);
        run.microBatch = 2;
    }
    else if (name == "gpt3-full" || name == "gpt3-full-fault" || name == "gpt3-full-fault-at")
    {
        layout(8, 8, 16, 1536);
        reduce = false;
        fault = name != "gpt3-full" ? "gpu0-infiniband.leaf0.0" : "";
        scheduled = name == "gpt3-full-fault-at";
    }
    else if (name == "gpt3-tp8")
    {
        layout(8, 8, 16, 1536);
    }
    else if (name == "gpt3-tp4")
    {
        layout(4, 8, 32, 1536);
    }
    else if (name == "gpt3-ub")
    {
        hardware = "h100-sxm-80gb";
        layout(8, 8, 16, 1536);
        run.parallel.sequenceParallel = true;
        run.recompute = Recompute::NONE;
        run.dtype = DataType::FP8;
        run.tpCommOverlap = "userbuffers";
    }
    else if (name == "llama70-cp2")
    {
        model = "llama3-70b";
        hardware = "h100-sxm-80gb";
        layout(8, 4, 16, 512);
        run.parallel.cp = 2;
        run.parallel.sequenceParallel = true;
        run.sequence = 8192;
        run.recompute = Recompute::NONE;
        run.dtype = DataType::FP8;
    }
    else if (name == "llama70-dp1024")
    {
        model = "llama3-70b";
        hardware = "h100-sxm-80gb";
        layout(1, 1, 1024, 1024);
        run.parallel.zeroStage = 3;
        run.sequence = 4096;
        run.dtype = DataType::BF16;
    }
    else if (name == "dsv3-ep64")
    {
        model = "deepseek-v3";
        hardware = "h100-sxm-80gb";
        layout(1, 16, 128, 2048);
        run.parallel.ep = 64;
        run.parallel.zeroStage = 1;
        run.parallel.firstStageLayers = 4;
        run.parallel.lastStageLayers = 1;
        run.sequence = 4096;
        run.recompute = Recompute::SELECTIVE;
        run.dtype = DataType::FP8;
    }
    else if (name == "llama70-gen4k")
    {
        model = "llama3-70b";
        hardware = "h100-sxm-80gb";
        layout(8, 1, 1, 1);
        run.mode = RunMode::INFERENCE;
        run.batch = 64;
        run.promptTokens = 1024;
        run.generatedTokens = 4096;
        run.engine = "vllm";
        run.dtype = DataType::BF16;
        run.recompute = Recompute::NONE;
    }
    else if (name == "gpt3-16k")
    {
        layout(8, 8, 256, 2048);
    }
    else if (name == "llama405-16k" || name == "llama405-16k-128" || name == "llama405-32k")
    {
        model = "llama3-405b";
        hardware = "h100-sxm-80gb";
        if (name == "llama405-32k")
        {
            layout(8, 16, 256, 4096);
        }
        else
        {
            layout(8, 16, 128, 2048);
        }
        run.sequence = 8192;
        run.dtype = DataType::BF16;
        if (name != "llama405-16k-128")
        {
            run.parallel.firstStageLayers = 7;
            run.parallel.lastStageLayers = 7;
        }
        else
        {
            layers = 128;
        }
    }
    else
    {
        std::fprintf(stderr, "unknown case '%s'\n", name.c_str());
        return 2;
    }
    if (!symmetry.empty())
    {
        reduce = symmetry == "true";
    }

    const double cpu0 = double(std::clock()) / CLOCKS_PER_SEC;
    const auto wall0 = std::chrono::steady_clock::now();
    Ptr<RapidLlmHelper> helper = CreateObject<RapidLlmHelper>();
    helper->SetReplayerAttribute("Granularity", StringValue(granularity));
    helper->SetReplayerAttribute("Symmetry", BooleanValue(reduce));
    helper->Load(model, hardware);
    if (layers > 0)
    {
        ModelSpec m = helper->GetModel();
        m.layers = layers;
        helper->SetModel(m);
    }
    if (!fault.empty() && !scheduled)
    {
        // A degraded link, as Topology::ApplyFault applies it when the topology is built.
        HardwareSpec hw = helper->GetHardware();
        hw.network.faults.push_back({fault, 0.5});
        helper->SetHardware(hw);
    }
    helper->SetRun(run);
    RunReport report;
    if (!scheduled)
    {
        report = helper->Run();
    }
    else
    {
        // The backend takes the fault schedule between Install() and the run, as a scenario
        // script gives it one.
        ObjectFactory scheduler;
        scheduler.SetTypeId(PriorityQueueScheduler::GetTypeId());
        Simulator::SetScheduler(scheduler);
        helper->Install();
        Ptr<FaultSchedule> faults = CreateObject<FaultSchedule>();
        faults->Add(fault, 0.5, Seconds(5), "job-speed-bench");
        helper->GetBackend()->SetFaultSchedule(faults);
        Simulator::Run();
        report = helper->Collect();
        Simulator::Destroy();
    }
    const double cpu = double(std::clock()) / CLOCKS_PER_SEC - cpu0;
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    std::printf("%s granularity=%s symmetry=%s: cpu_s=%.2f wall_s=%.2f peak_rss_mb=%.0f "
                "step_s=%.6f gpus=%u events=%llu\n",
                name.c_str(),
                granularity.c_str(),
                reduce ? "true" : "false",
                cpu,
                wall,
                usage.ru_maxrss / 1024.0,
                report.stepTimeS,
                report.gpus,
                static_cast<unsigned long long>(helper->GetResult().events));
    return 0;
}
