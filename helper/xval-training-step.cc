/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// The cross-validation row that runs a whole training step: GPT (the 1.7B shape cut to 4
// layers, s = 512) with TP2 PP2 DP4 on 16 A100s (two DGX nodes) replayed from its Chakra traces on
// the flow and the packet network. Registered with the xval table from here, the layer that
// knows both the workload and the replayer.

#include "ns3/compute-coster.h"
#include "ns3/cross-validation.h"
#include "ns3/gpu-compute-model.h"
#include "ns3/hardware-spec.h"
#include "ns3/replay-job.h"
#include "ns3/routing-policy.h"
#include "ns3/string.h"
#include "ns3/topology.h"
#include "ns3/trace-replayer.h"

#include <memory>

namespace ns3 {
namespace rapidllm {

namespace {

/** What a replay needs to stay alive while the simulator runs it. */
struct StepReplay
{
    ReplayJob job;               //!< the traces
    Ptr<TraceReplayer> replayer; //!< the replay in progress
};

XvalWorkload
MakeTrainingStepWorkload()
{
    HardwareSpec hw = HardwareSpec::Load("a100-sxm-80gb");
    ModelSpec model = ModelSpec::Load("gpt-1.7b");
    model.layers = 4;
    RunSpec run;
    run.parallel.tp = 2;
    run.parallel.pp = 2;
    run.parallel.dp = 4;
    run.microBatch = 1;
    run.globalBatch = 16;
    run.sequence = 512;
    Ptr<GpuComputeModel> compute = CreateObject<GpuComputeModel>(hw.gpu);
    auto state = std::make_shared<StepReplay>();
    state->job = ReplayJob::FromWorkload(Workload::Build(model, run, MakeComputeCoster(compute)));

    XvalWorkload w;
    w.name = "training-step-gpt-tp2-pp2-dp4";
    w.description = "one training step (GPT 1.7B shape, 4 layers, s 512, TP2 PP2 DP4) from its "
                    "traces on 2 DGX A100 nodes";
    w.quick = false;
    w.network = hw.network;
    w.endpoints = 16;
    // The pairs the replay sends between, opened before the step is timed (as `run` does):
    // the collective engine plans on a network view of the same topology and routing.
    w.pairs = [state, network = hw.network](const Topology&)
    {
        Ptr<NetworkBackend> planning = NetworkBackend::Create("flow");
        planning->SetTopology(Topology::Build(network, 16, "a100-sxm-80gb"));
        planning->SetRouting(RoutingPolicy::Create(network.routing));
        Ptr<TraceReplayer> replayer = CreateObject<TraceReplayer>();
        replayer->SetBackend(planning);
        return replayer->GetPairs(state->job);
    };
    w.start = [state](Ptr<NetworkBackend> backend, std::function<void()> done)
    {
        state->replayer = CreateObject<TraceReplayer>();
        // The xval table runs every row at one granularity: the collective engines' (messages
        // unless `--granularity` says otherwise).
        StringValue granularity;
        CreateObject<CollectiveEngine>()->GetAttribute("Granularity", granularity);
        state->replayer->SetAttribute("Granularity", granularity);
        state->replayer->SetBackend(backend);
        state->replayer->Start(state->job,
                               [state, done]()
                               {
                                   state->replayer->Collect();
                                   done();
                               });
    };
    return w;
}

XvalWorkloadRegistrar g_trainingStep(MakeTrainingStepWorkload);

} // namespace

} // namespace rapidllm
} // namespace ns3
