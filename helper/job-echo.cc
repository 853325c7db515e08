/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "job-echo.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#ifndef RAPIDLLM_VERSION
#    define RAPIDLLM_VERSION "0.1"
#endif

namespace ns3 {
namespace rapidllm {

namespace {

/**
 * \return \p x to 12 significant digits: a unit conversion of a spec value (0.3e-6 s x 1e6)
 * echoes as the value the file holds (0.3), not as its binary neighbour (0.30000000000000004)
 */
double
AsWritten(double x)
{
    char buf[40];
    std::snprintf(buf, sizeof(buf), "%.12g", x);
    return std::strtod(buf, nullptr);
}

} // namespace

std::string
RapidLlmVersion()
{
    return RAPIDLLM_VERSION;
}

std::string
SpecSourceDigest(const std::string& source)
{
    std::error_code error;
    std::ifstream in(source, std::ios::binary);
    if (!std::filesystem::is_regular_file(source, error) || !in)
    {
        return "preset " + source;
    }
    uint64_t hash = 14695981039346656037ULL; // FNV-1a's offset basis and prime
    char buffer[65536];
    while (in.read(buffer, sizeof(buffer)) || in.gcount() > 0)
    {
        for (std::streamsize i = 0; i < in.gcount(); ++i)
        {
            hash = (hash ^ static_cast<unsigned char>(buffer[i])) * 1099511628211ULL;
        }
    }
    char hex[17];
    std::snprintf(hex, sizeof(hex), "%016llx", static_cast<unsigned long long>(hash));
    return std::string("fnv1a64 ") + hex;
}

namespace {
/** Adds \p source's digest to \p echo where it is a file (a preset's name says what it is). */
void
AddDigest(Json& echo, const std::string& source)
{
    const std::string digest = SpecSourceDigest(source);
    if (digest.rfind("preset ", 0) != 0)
    {
        echo["digest"] = digest;
    }
}
} // namespace

Json
HardwareInputJson(const HardwareSpec& hardware,
                  const std::string& source,
                  const std::vector<ScheduledFault>& timedFaults,
                  const std::map<uint32_t, double>& slowGpus)
{
    const GpuSpec& g = hardware.gpu;
    Json dims = Json::array();
    for (const auto& d : hardware.network.dimensions)
    {
        dims.push_back({{"name", d.name},
                        {"size", d.size},
                        {"kind", ToString(d.kind)},
                        {"bandwidth_GBps", AsWritten(d.bandwidthBps / 1e9)},
                        {"latency_us", AsWritten(d.latencyS * 1e6)},
                        {"oversubscription", d.oversubscription}});
    }
    Json faults = Json::array();
    for (const auto& f : hardware.network.faults)
    {
        faults.push_back({{"link", f.link}, {"factor", f.factor}});
    }
    for (const auto& f : timedFaults)
    {
        faults.push_back(
            {{"link", f.selector}, {"factor", f.factor}, {"start_s", f.start.GetSeconds()}});
    }
    Json j = {{"source", source},
              {"name", hardware.name},
              {"gpu", g.name},
              // As given: the bytes hold it to a byte, so 69.9 read back 69.8999999994412.
              {"hbm_gib", std::round(double(g.hbmBytes) / double(1ull << 30) * 1e6) / 1e6},
              {"hbm_bandwidth_GBps", AsWritten(g.hbmBandwidthBps / 1e9)},
              {"network", dims},
              {"faults", faults}};
    AddDigest(j, source);
    for (const auto& [gpu, speed] : slowGpus) // only when given: other echoes stay as they were
    {
        j["slow_gpus"].push_back({{"gpu", gpu}, {"speed", speed}});
    }
    return j;
}

Json
JobInputJson(const ResolvedJob& job,
             const std::string& backend,
             const std::string& routing,
             const std::string& packet)
{
    const ModelSpec& m = job.model;
    const RunSpec& r = job.run;
    const ParallelSpec& p = r.parallel;
    Json j;
    j["version"] = RapidLlmVersion();
    j["model"] = {{"source", job.modelSource},
                  {"name", m.name},
                  {"layers", m.layers},
                  {"hidden", m.hidden},
                  {"heads", m.heads},
                  {"kv_heads", m.kvHeads},
                  {"head_dim", m.headDim},
                  {"ffn", m.ffn},
                  {"vocab", m.vocab},
                  {"experts", m.experts},
                  {"top_k", m.topK}};
    AddDigest(j["model"], job.modelSource);
    if (m.IsMoe())
    {
        j["model"]["expert_ffn"] = m.expertFfn; // each routed expert's width (ffn: the dense's)
    }
    if (m.sharedExpertFfn > 0)
    {
        j["model"]["shared_expert_ffn"] = m.sharedExpertFfn;
    }
    if (m.IsMoe() && m.MoeLayers() != m.layers)
    {
        j["model"]["first_dense_layers"] = m.firstDenseLayers;
        j["model"]["moe_layer_step"] = m.moeLayerStep;
    }
    if (m.IsMla())
    {
        j["model"]["mla"] = {{"kv_lora_rank", m.kvLoraRank},
                             {"q_lora_rank", m.qLoraRank},
                             {"rope_head_dim", m.ropeHeadDim},
                             {"v_head_dim", m.ValueDim()}};
    }
    if (m.mtpLayers > 0)
    {
        j["model"]["mtp_layers"] = m.mtpLayers;
    }
    if (m.HasWindow())
    {
        j["model"]["sliding_window"] = m.slidingWindow;
        j["model"]["sliding_window_pattern"] = m.windowPattern;
    }
    j["hardware"] =
        HardwareInputJson(job.hardware, job.hardwareSource, job.timedFaults, job.slowGpus);
    for (const auto& [gpu, set] : job.gpuSets) // only when given, as the slow GPUs
    {
        j["hardware"]["gpu_set"].push_back({{"gpu", gpu}, {"set", set}});
    }
    // Sequence parallelism as in force: none with tp 1 (Megatron-LM turns it off there too).
    const bool sp = p.sequenceParallel && p.tp > 1;
    j["layout"] = {{"gpus", p.Gpus()},
                   {"tp", p.tp},
                   {"pp", p.pp},
                   {"dp", p.dp},
                   {"cp", p.cp},
                   {"ep", p.ep},
                   {"etp", p.ExpertTp()},
                   {"sp", sp},
                   {"zero", p.zeroStage},
                   {"vpp", p.virtualStages},
                   {"first_stage_layers", p.firstStageLayers},
                   {"last_stage_layers", p.lastStageLayers},
                   {"embedding_in_pipeline_split", p.embeddingInSplit},
                   {"loss_in_pipeline_split", p.lossInSplit},
                   {"rank_order", p.rankOrder}};
    if (p.ZeroBubble())
    {
        j["layout"]["pp_schedule"] = p.schedule;
    }
    Json software = {
        {"mode", ToString(r.mode)}, {"dtype", ToString(r.dtype)}, {"attention", r.AttentionName()}};
    if (r.mode == RunMode::TRAINING)
    {
        software["recompute"] = ToString(r.recompute);
        software["micro_batch"] = r.microBatch;
        software["global_batch"] = r.globalBatch;
        software["sequence"] = r.sequence;
        software["grad_reduce"] = r.overlapGradReduce ? "overlap" : "after_backward";
        software["tp_reduce"] = r.overlapTpReduce ? "overlap" : "blocking";
        software["memory_layout"] = ToString(r.memoryLayout);
        software["main_grads"] = r.mainGrads;
        software["tp_comm_overlap"] = r.tpCommOverlap;
        if (r.moeA2aOverlap)
        {
            software["moe_a2a_overlap"] = true;
        }
        if (r.parallel.zeroStage >= 1 && r.parallel.zeroStage <= 2)
        {
            software["param_gather"] = r.OverlapParamGather() ? "overlap" : "after_step";
        }
        if (r.dtype == DataType::FP8)
        {
            software["fp8_scaling"] = r.fp8Scaling;
            software["fp8_params"] = r.fp8Params;
        }
        // 0: one bucket, the whole gradient buffer (after the backward pass).
        const uint64_t bucket = r.GradBucketBytes();
        software["bucket_mib"] =
            bucket == std::numeric_limits<uint64_t>::max() ? 0.0 : double(bucket) / double(1 << 20);
    }
    else
    {
        software["batch"] = r.batch;
        software["prompt"] = r.promptTokens;
        software["generated"] = r.generatedTokens;
        if (r.cachedPrefix > 0)
        {
            software["cached_prefix"] = r.cachedPrefix;
            software["shared_prefix"] = r.sharedPrefix;
            if (r.prefixGroups > 0)
            {
                software["prefix_groups"] = r.prefixGroups;
            }
            if (r.sharedPrefix)
            {
                software["cascade_attention"] = r.cascadeAttention;
            }
        }
        software["kv_cache_dtype"] = ToString(r.KvCacheType());
        software["decode_attention"] = r.splitKvDecode ? "split_kv" : "per_head";
        software["first_token"] = r.FirstTokenFromPrefill() ? "prefill" : "decode";
        software["inflight_batches"] = r.InflightBatches();
        if (r.specTokens > 0)
        {
            software["spec_tokens"] = r.specTokens;
            software["spec_acceptance"] = r.specAcceptance;
        }
        if (r.chunkSequences > 0)
        {
            software["chunk_sequences"] = r.chunkSequences;
            software["chunk_tokens"] = r.chunkTokens;
            software["chunk_prefix"] = r.chunkPrefix;
        }
    }
    if (r.mode == RunMode::INFERENCE)
    {
        software["engine"] = r.engine;
    }
    software["dispatch"] = r.ResolvedDispatch();
    software["moe_imbalance"] = r.moeImbalance;
    if (r.mode == RunMode::INFERENCE || r.MemoryShare() < 1)
    {
        software["gpu_memory_utilization"] = r.MemoryShare();
    }
    if (r.mode == RunMode::INFERENCE && r.ProfileTokensOn(job.hardware.gpu) > 0)
    {
        software["profile_tokens"] = r.ProfileTokensOn(job.hardware.gpu);
    }
    j["software"] = software;
    j["set"] = job.overrides;
    j["job_file"] = job.jobFile;
    EchoAttributeDefaults(j);
    if (!backend.empty())
    {
        // A job that runs on the network (memory does not: no backend, no routing).
        j["backend"] = backend;
        j["routing"] = routing.empty() ? job.hardware.network.routing : routing;
    }
    if (!packet.empty())
    {
        j["packet"] = packet;
    }
    return j;
}

void
EchoAttributeDefaults(Json& input)
{
    const char* defaults = std::getenv("NS_ATTRIBUTE_DEFAULT");
    if (defaults && *defaults)
    {
        input["ns_attribute_default"] = defaults;
    }
}

std::string
JobInputText(const ResolvedJob& job,
             const std::string& backend,
             const std::string& routing,
             const std::string& packet)
{
    return InputText(JobInputJson(job, backend, routing, packet));
}

std::string
InputText(const Json& j)
{
    std::ostringstream os;
    os << "# rapid-llm " << RapidLlmVersion() << "\n";
    for (const char* key : {"model", "hardware", "layout", "software"})
    {
        os << "# " << key << ": " << j.at(key).dump() << "\n";
    }
    os << "# set: " << j.at("set").dump() << ", job file: " << j.at("job_file").dump();
    if (j.contains("backend"))
    {
        os << ", backend: " << j.at("backend").get<std::string>()
           << ", routing: " << j.at("routing").get<std::string>();
    }
    if (j.contains("granularity"))
    {
        os << ", granularity: " << j.at("granularity").get<std::string>();
    }
    if (j.contains("symmetry"))
    {
        os << ", symmetry: " << (j.at("symmetry").get<bool>() ? "true" : "false");
    }
    os << "\n";
    if (j.contains("ns_attribute_default"))
    {
        os << "# NS_ATTRIBUTE_DEFAULT: " << j.at("ns_attribute_default").get<std::string>() << "\n";
    }
    if (j.contains("packet"))
    {
        os << "# packet: " << j.at("packet").get<std::string>() << "\n";
    }
    return os.str();
}

} // namespace rapidllm
} // namespace ns3
