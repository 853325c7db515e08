/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "workload-size.h"

#include "graph-emitter.h"
#include "layer-shapes.h"
#include "ns3/double.h"
#include "ns3/global-value.h"
#include "ns3/log.h"
#include "ns3/spec-error.h"
#include "transformer-layer.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

namespace ns3 {
namespace rapidllm {

NS_LOG_COMPONENT_DEFINE("RapidLlmWorkloadSize");

namespace {

/** The host-memory budget of a job's graphs, GiB (WorkloadHostBudget()). */
GlobalValue g_hostMemoryGiB("RapidLlmHostMemoryGiB",
                            "host memory a job's graphs may take, GiB (rapid-llm --host-memory)",
                            DoubleValue(kDefaultWorkloadHostGiB),
                            MakeDoubleChecker<double>(0.125, 1048576.0));

/**
 * Nodes a training stage emits per micro-batch and model chunk outside its layers: the
 * receive or the embedding (and its reduction), the send or the head (norm, logits, loss and
 * their reductions), forward and backward.
 */
constexpr uint64_t kTrainingPassNodes = 12;

/** The same for one inference pass (prefill or decode step), sampling included. */
constexpr uint64_t kInferencePassNodes = 8;

/** Nodes one training layer emits per micro-batch: forward, backward (with recomputation). */
uint64_t
TrainingLayerNodes(const ModelSpec& model, const RunSpec& run)
{
    StageGraph scratch;
    GraphEmitter e(scratch);
    TransformerLayer layer(model, run, run.sequence / run.parallel.cp, run.microBatch);
    const int64_t held = layer.Forward(e, run.recompute);
    layer.Backward(e, run.recompute, held, nullptr);
    // ZeRO-3 gathers the layer's parameters in both passes and reduce-scatters its gradients.
    const bool zero3 = run.parallel.zeroStage == 3 && run.parallel.DenseReplicas() > 1;
    return scratch.nodes.size() + (zero3 ? 3 : 0);
}

/** Nodes of one inference layer: in the prefill and in one decode step. */
std::pair<uint64_t, uint64_t>
InferenceLayerNodes(const ModelSpec& model, const RunSpec& run)
{
    StageGraph scratch;
    GraphEmitter e(scratch);
    TransformerLayer layer(model, run, run.promptTokens, run.batch);
    layer.Forward(e, Recompute::NONE);
    const uint64_t prefill = scratch.nodes.size();
    layer.Decode(e, 1, 1, true);
    return {prefill, scratch.nodes.size() - prefill};
}

/** The most layers any pipeline stage holds. */
uint32_t
MostStageLayers(const ModelSpec& model, const ParallelSpec& p)
{
    uint32_t most = 0;
    for (uint32_t s = 0; s < p.pp; ++s)
    {
        most = std::max(most, p.StageLayers(model.layers, s));
    }
    return most;
}

std::string
Millions(double n)
{
    char buffer[32];
    std::snprintf(buffer, sizeof(buffer), n < 1e9 ? "%.1f M" : "%.3g", n < 1e9 ? n / 1e6 : n);
    return buffer;
}

std::string
Bytes(double bytes)
{
    char buffer[48];
    if (bytes >= double(1ull << 50))
    {
        std::snprintf(buffer, sizeof(buffer), "%.3g bytes", bytes);
    }
    else
    {
        std::snprintf(buffer, sizeof(buffer), "%.1f GiB", bytes / double(1ull << 30));
    }
    return buffer;
}

} // namespace

WorkloadSize
EstimateWorkloadSize(const ModelSpec& model, const RunSpec& run)
{
    WorkloadSize size;
    const auto& p = run.parallel;
    const LayerShapes shapes(model, run);
    const double eb = shapes.elementBytes;
    const bool training = run.mode == RunMode::TRAINING;

    // Tensors, in floating point so that nothing wraps: the widest activation (the loss keeps
    // fp32 logits), the routed expert rows, the KV cache and the unfused attention's scores.
    const double rows = training ? double(run.microBatch) * (run.sequence / p.cp)
                                 : double(run.batch) * run.promptTokens;
    const double width = std::max<double>({double(shapes.hidden),
                                           double(shapes.qkvOut),
                                           double(shapes.fc1Out),
                                           double(shapes.experts),
                                           4.0 / eb * double(shapes.vocab)});
    size.largestTensor = rows * width * eb;
    if (model.IsMoe())
    {
        size.largestTensor =
            std::max(size.largestTensor,
                     rows * shapes.topK * run.moeImbalance * double(shapes.expertFc1Out) * eb);
    }
    const uint32_t widestStage = MostStageLayers(model, p);
    const double tokens = double(run.promptTokens) + run.generatedTokens;
    if (!training)
    {
        size.largestTensor =
            std::max(size.largestTensor,
                     double(widestStage) * run.batch * tokens * shapes.KvCacheBytesPerToken());
    }
    const double query = training ? double(run.sequence / p.cp) : double(run.promptTokens);
    const double keys = training ? query : tokens;
    size.attentionScores =
        (training ? double(run.microBatch) : double(run.batch)) * shapes.heads * query * keys;
    if (size.largestTensor > kMaxTensorBytes || size.attentionScores > kMaxAttentionScores)
    {
        return size; // the node count below would emit layers of meaningless shapes
    }

    // Nodes, stage by stage.
    if (training)
    {
        const uint64_t perLayer = TrainingLayerNodes(model, run);
        const uint64_t m = run.MicroBatches();
        // ZeRO-3 gathers the embedding's and the head's parameters in the forward pass and
        // reduce-scatters their gradients.
        const uint64_t passNodes =
            kTrainingPassNodes + (p.zeroStage == 3 && p.DenseReplicas() > 1 ? 4 : 0);
        for (uint32_t s = 0; s < p.pp; ++s)
        {
            const uint64_t layers = p.StageLayers(model.layers, s);
            // Gradient buckets: at most one per bucket of the stage's gradients and one per
            // layer (a bucket holds whole layers), plus one per layer and pass where a bucket
            // is cut short.
            const double gradientBytes =
                double(StageParameters(model, run, s) - StageExpertParameters(model, run, s))
                * BytesOf(run.GradientType());
            const uint64_t buckets =
                std::min(static_cast<uint64_t>(gradientBytes / double(run.GradBucketBytes())),
                         layers + 1)
                + 2 * layers + 8;
            const uint64_t nodes =
                m * (layers * perLayer + uint64_t(p.virtualStages) * passNodes) + buckets + layers;
            size.nodes += nodes;
            size.bucketNodes += buckets;
            size.largestStage = std::max(size.largestStage, nodes);
        }
    }
    else
    {
        const auto [prefill, decode] = InferenceLayerNodes(model, run);
        const uint64_t steps = run.generatedTokens + (run.FirstTokenFromPrefill() ? 0 : 1);
        for (uint32_t s = 0; s < p.pp; ++s)
        {
            const uint64_t layers = p.StageLayers(model.layers, s);
            const uint64_t nodes = run.InflightBatches()
                                   * (layers * prefill + kInferencePassNodes
                                      + steps * (layers * decode + kInferencePassNodes));
            size.nodes += nodes;
            size.largestStage = std::max(size.largestStage, nodes);
        }
    }
    size.hostBytes = double(size.nodes) * kHostBytesPerNode;
    return size;
}

namespace {

/**
 * \return the largest count of what makes the graphs grow (training: micro-batches per
 * pipeline; inference: generated tokens) that keeps them within MaxWorkloadNodes(), 0 if none:
 * the nodes are linear in that count, so two estimates give the line.
 */
uint64_t
LargestFittingCount(const ModelSpec& model, const RunSpec& run)
{
    RunSpec one = run;
    RunSpec two = run;
    if (run.mode == RunMode::TRAINING)
    {
        const uint64_t perMicroBatch = uint64_t(run.microBatch) * run.parallel.dp;
        if (2 * perMicroBatch > UINT32_MAX)
        {
            return 0;
        }
        one.globalBatch = static_cast<uint32_t>(perMicroBatch);
        two.globalBatch = static_cast<uint32_t>(2 * perMicroBatch);
    }
    else
    {
        one.generatedTokens = 1;
        two.generatedTokens = 2;
    }
    const uint64_t atOne = EstimateWorkloadSize(model, one).nodes;
    const uint64_t atTwo = EstimateWorkloadSize(model, two).nodes;
    const uint64_t limit = MaxWorkloadNodes();
    if (atTwo <= atOne || atOne > limit)
    {
        return 0;
    }
    return 1 + (limit - atOne) / (atTwo - atOne);
}

} // namespace

double
WorkloadHostBudget()
{
    DoubleValue gib;
    g_hostMemoryGiB.GetValue(gib);
    return gib.Get() * 1073741824.0;
}

uint64_t
MaxWorkloadNodes()
{
    return static_cast<uint64_t>(WorkloadHostBudget() / kHostBytesPerNode);
}

WorkloadSize
CheckWorkloadSize(const ModelSpec& model, const RunSpec& run, const std::string& source)
{
    const WorkloadSize size = EstimateWorkloadSize(model, run);
    const auto& p = run.parallel;
    const bool training = run.mode == RunMode::TRAINING;
    if (size.largestTensor > kMaxTensorBytes)
    {
        std::ostringstream os;
        os << "the largest tensor on one GPU would take " << Bytes(size.largestTensor)
           << ", beyond any machine (limit 2^60 bytes): it grows with "
           << (training ? "micro_batch x sequence" : "batch x (prompt + generated)")
           << " and the model's widths";
        throw SpecError(source, training ? "sequence" : "batch", os.str());
    }
    if (size.attentionScores > kMaxAttentionScores)
    {
        std::ostringstream os;
        os.precision(3);
        os << "one GPU's attention matrix would hold " << size.attentionScores
           << " elements (sequences x heads x query x key tokens), beyond the 2^53 the cost "
              "arithmetic holds exactly: shorten "
           << (training ? "sequence or split it with cp" : "prompt and generated");
        throw SpecError(source, training ? "sequence" : "prompt", os.str());
    }
    const uint64_t limit = MaxWorkloadNodes();
    if (size.nodes > limit)
    {
        std::ostringstream os;
        os << "the job's graphs would hold about " << Millions(double(size.nodes))
           << " nodes (about " << Bytes(size.hostBytes) << " of host memory), above the limit of "
           << Millions(double(limit)) << " nodes (" << Bytes(WorkloadHostBudget())
           << " of host memory; more with --host-memory=GIB, or the ns-3 global value "
              "RapidLlmHostMemoryGiB, on a machine that has it): they grow with ";
        if (2 * size.bucketNodes > size.nodes)
        {
            // Most are gradient buckets: the parameters, not the schedule, are the cause.
            os << "the gradient buckets, one per bucket_mib ("
               << run.GradBucketBytes() / double(1 << 20) << " MiB) of each stage's gradients: the "
               << "model's widths (hidden, ffn, experts, vocab) make its parameters too many";
            throw SpecError(source, "bucket_mib", os.str());
        }
        if (training)
        {
            os << "micro-batches per pipeline (global_batch / (micro_batch x dp) = "
               << run.MicroBatches() << ")";
        }
        else
        {
            os << "decode steps (generated = " << run.generatedTokens << ")";
        }
        os << " times the layers per stage (up to " << MostStageLayers(model, p) << "; layers, pp)";
        const uint64_t fits = LargestFittingCount(model, run);
        if (fits > 0)
        {
            if (training)
            {
                os << "; this job fits up to global_batch = " << fits * run.microBatch * p.dp
                   << " (" << fits << " micro-batches)";
            }
            else
            {
                os << "; this job fits up to generated = " << fits;
            }
        }
        throw SpecError(source, training ? "global_batch" : "generated", os.str());
    }
    NS_LOG_DEBUG("estimated " << size.nodes << " nodes, largest stage " << size.largestStage);
    return size;
}

} // namespace rapidllm
} // namespace ns3
