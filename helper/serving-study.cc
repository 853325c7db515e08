/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "serving-study.h"

#include "collective-probe.h"
#include "job-echo.h"
#include "kv-handover.h"
#include "ns3/boolean.h"
#include "ns3/memory-alternatives.h"
#include "ns3/spec-error.h"
#include "rapid-llm-helper.h"
#include "report-output.h"
#include "request-draws.h"
#include "study-plot.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <tuple>

namespace ns3 {
namespace rapidllm {

namespace {

/** vLLM's benchmark_serving.py --num-prompts default: the fewest requests a run simulates */
constexpr uint32_t kBenchmarkServingRequests = 1000;

/**
 * \brief Sets a job's batch to \p n requests, and its batches in flight (where the job gives
 * them) to at most as many: a curve's smaller batch splits into no more batches than requests.
 */
void
SetBatch(JobOptions& options, uint32_t n)
{
    options.Set("batch", std::to_string(n));
    if (std::stoul(options.Get("inflight-batches")) > n)
    {
        options.Set("inflight-batches", std::to_string(n));
    }
}

/**
 * \return a length of the arrivals on average (QueueRequest::prompt or ::generated): each
 * request's own (a trace's, or drawn by --spread), else the job's \p fallback
 */
double
MeanLength(const std::vector<QueueRequest>& unit, uint32_t QueueRequest::*length, uint32_t fallback)
{
    if (unit.empty())
    {
        return fallback;
    }
    double sum = 0;
    for (const QueueRequest& q : unit)
    {
        sum += q.*length > 0 ? q.*length : fallback;
    }
    return sum / double(unit.size());
}

/** Refuses \p option: one replica's prediction stands for every replica, alike. */
[[noreturn]] void
RefuseOwnGpus(const std::string& option)
{
    throw SpecError(kCommandLine,
                    option,
                    "the serving study predicts one replica for all of them, so a GPU unlike the "
                    "others (on one replica) is not taken: remove --"
                        + option + ", or predict the layout with `run`");
}

/** \return the generated tokens of the arrivals on average (MeanLength) */
double
MeanGenerated(const std::vector<QueueRequest>& unit, uint32_t generated)
{
    return MeanLength(unit, &QueueRequest::generated, generated);
}

/**
 * \return why a layout's memory check failed, and the largest batch of the same job that
 * fits (the list's batch to try instead)
 */
std::string
NotFitting(const RunReport& report, const ModelSpec& model, const RunSpec& run, const GpuSpec& gpu)
{
    return report.reason + "; " + LargestBatchText(LargestFittingBatch(model, run, gpu));
}

/**
 * \return the rows of the layouts that hold a prefill, by tp and pp (the first of each): the
 * disaggregated prefill pools' prefill time, energy and idle power
 */
std::map<ServingPrefillKey, ServingRow>
PrefillRows(const std::vector<ServingRow>& rows)
{
    std::map<ServingPrefillKey, ServingRow> prefills;
    for (const auto& r : rows)
    {
        if (r.prefillFits && r.prefillS > 0)
        {
            prefills.emplace(ServingPrefillKey(r.Variant(), r.tp, r.pp), r);
        }
    }
    return prefills;
}

/**
 * \return a step curve as JSON: [{requests, step_s, step_energy_j}, ...], each point with
 * tokens, step_s_per_token and step_energy_j_per_token where the curve follows its tokens (and
 * step_s_per_token_sq where its time follows their squares)
 */
Json
CurveJson(const StepCurve& c)
{
    Json curve = Json::array();
    for (std::size_t i = 0; i < c.requests.size(); ++i)
    {
        Json point = {
            {"requests", c.requests[i]}, {"step_s", c.seconds[i]}, {"step_energy_j", c.joules[i]}};
        if (c.FollowsTokens())
        {
            point["tokens"] = c.tokens;
            if (c.cached > 0)
            {
                point["cached"] = c.cached;
            }
            point["step_s_per_token"] = c.secondsPerToken[i];
            point["step_energy_j_per_token"] = c.joulesPerToken[i];
            if (!c.secondsPerTokenSq.empty())
            {
                point["step_s_per_token_sq"] = c.secondsPerTokenSq[i];
            }
        }
        curve.push_back(point);
    }
    return curve;
}

/** \return a step curve as CurveJson wrote it */
StepCurve
CurveFromJson(const Json& j)
{
    StepCurve c;
    for (const auto& point : j)
    {
        c.requests.push_back(point.at("requests").get<uint32_t>());
        c.seconds.push_back(point.at("step_s").get<double>());
        c.joules.push_back(point.at("step_energy_j").get<double>());
        if (point.contains("tokens"))
        {
            c.tokens = point.at("tokens").get<double>();
            c.cached = point.value("cached", 0.0);
            c.secondsPerToken.push_back(point.at("step_s_per_token").get<double>());
            c.joulesPerToken.push_back(point.at("step_energy_j_per_token").get<double>());
            if (point.contains("step_s_per_token_sq"))
            {
                c.secondsPerTokenSq.push_back(point.at("step_s_per_token_sq").get<double>());
            }
        }
    }
    if ((!c.secondsPerToken.empty() && c.secondsPerToken.size() != c.requests.size())
        || (!c.secondsPerTokenSq.empty() && c.secondsPerTokenSq.size() != c.requests.size()))
    {
        throw std::runtime_error("a step curve's points follow their tokens in part only");
    }
    return c;
}

/**
 * \return what a replay depends on besides the study's backend, routing and symmetry: every job
 * option's value and the prefill chunk
 */
std::string
ReplayKey(const JobOptions& options, const std::array<uint32_t, 3>& chunk)
{
    std::ostringstream key;
    for (const OptionSpec& o : JobOptions::GetDeclarations())
    {
        key << o.name << '=' << options.Get(o.name) << '\n';
    }
    key << chunk[0] << ' ' << chunk[1] << ' ' << chunk[2];
    return key.str();
}

/** The two replays whose difference is a decode step (ServingStudy::DecodeStep). */
struct DecodeReplays
{
    uint64_t prompt = 0;  //!< their prompt
    uint32_t longGen = 0; //!< the longer one's generated tokens (the shorter generates 2)
    double tokens = 0;    //!< the tokens the longer one's extra passes yield
    double keys = 0;      //!< the keys a request attends to in those passes, on average
};

/**
 * \param run the job \param prompt the replays' prompt (0: the requests' mean context less
 * the shorter replay's two tokens) \return the replays
 */
DecodeReplays
DecodeReplaysOf(const RunSpec& run, uint64_t prompt)
{
    DecodeReplays d;
    const uint64_t mean = run.promptTokens + (run.generatedTokens - 1) / 2;
    d.prompt = prompt > 0 ? prompt : (mean > 3 ? mean - 2 : 1);
    // The two runs differ by whole decode passes: two of one token each, or with speculative
    // decoding at least two passes of TokensPerDecodePass() tokens each; the time per token is
    // their difference over the tokens those passes yield. They generate tokens 3 to longGen,
    // the j-th attending to prompt + j - 1 keys.
    const double perPass = run.TokensPerDecodePass();
    d.longGen = 2 + 2 * static_cast<uint32_t>(std::ceil(perPass - 1e-9));
    RunSpec shortRun = run;
    shortRun.generatedTokens = 2;
    RunSpec longRun = run;
    longRun.generatedTokens = d.longGen;
    d.tokens = double(longRun.DecodePasses() - shortRun.DecodePasses()) * perPass;
    d.keys = double(d.prompt) + double(d.longGen + 1) / 2;
    return d;
}

/** \return whether a share of requests within a target reaches the space's attainment */
bool
Attains(double share, const ServingSpace& space)
{
    return share >= space.attainment - 1e-12;
}

/** \return whether a load is within the space's capacity and attainment */
bool
MeetsAttainment(const ServingLoad& load, const ServingSpace& space)
{
    return !load.overloaded && Attains(load.summary.attainment, space);
}

/**
 * \return whether \p r fits and no other fitting row of \p rows (of its own precision, with
 * \p sameVariant) has both a lower-or-equal time per output token and a higher-or-equal
 * throughput per GPU, one of them strictly: the throughput-TPOT frontier
 */
bool
OnFrontier(const ServingRow& r, const std::vector<ServingRow>& rows, bool sameVariant)
{
    return r.fits
           && std::none_of(
               rows.begin(),
               rows.end(),
               [&](const ServingRow& s)
               {
                   return s.fits && s.tpotS <= r.tpotS && s.tokensPerSPerGpu >= r.tokensPerSPerGpu
                          && (s.tpotS < r.tpotS || s.tokensPerSPerGpu > r.tokensPerSPerGpu)
                          && (!sameVariant || s.Variant() == r.Variant());
               });
}

/** \return the row's paired prefill layout's row, or nullptr when it is not paired */
const ServingRow*
PrefillOf(const std::map<ServingPrefillKey, ServingRow>& prefills, const ServingRow& row)
{
    const auto it = prefills.find(ServingPrefillKey(row.Variant(), row.prefillTp, row.prefillPp));
    return row.prefillTp == 0 || it == prefills.end() ? nullptr : &it->second;
}

} // namespace

std::vector<std::string>
BatchingNames()
{
    return {"auto", "static", "continuous", "disaggregated", "chunked"};
}

std::vector<std::string>
RouterNames()
{
    return {"round-robin", "least-outstanding", "cache-aware"};
}

Batching
ParseBatching(const std::string& name)
{
    const std::vector<std::string> names = BatchingNames();
    for (std::size_t i = 0; i < names.size(); ++i)
    {
        if (names[i] == name)
        {
            return static_cast<Batching>(i);
        }
    }
    throw std::invalid_argument("unknown batching '" + name + "'");
}

bool
ServingVariant::operator==(const ServingVariant& o) const
{
    return hardware == o.hardware && engine == o.engine && dtype == o.dtype
           && kvCacheDtype == o.kvCacheDtype;
}

std::string
ServingRow::Precision() const
{
    return dtype + "/" + kvCacheDtype;
}

std::string
ServingRow::Variant() const
{
    return hardware + " " + engine + " " + Precision();
}

Json
ServingRow::ToJson() const
{
    Json j;
    j["layout"] = layout;
    j["tp"] = tp;
    j["pp"] = pp;
    j["cp"] = cp;
    j["dp"] = dp;
    j["replicas"] = replicas;
    j["batch"] = batch;
    j["hardware"] = hardware;
    j["engine"] = engine;
    j["dtype"] = dtype;
    j["kv_cache_dtype"] = kvCacheDtype;
    j["fits"] = fits;
    j["reason"] = reason;
    j["ttft_s"] = ttftS;
    j["tpot_s"] = tpotS;
    j["request_s"] = requestS;
    j["tokens_per_s_per_gpu"] = tokensPerSPerGpu;
    j["requests_per_s"] = requestsPerS;
    j["have_energy"] = haveEnergy;
    j["energy_per_token_j"] = energyPerTokenJ;
    j["avg_power_w"] = avgPowerW;
    j["peak_memory_bytes"] = peakBytes;
    j["capacity_bytes"] = capacityBytes;
    j["meets_slo"] = meetsSlo;
    j["frontier"] = frontier;
    // The replays continuous and disaggregated batching are put together from: left out of a
    // static row, which has none (a field that does not apply is left out).
    if (replayed)
    {
        j["prefill_s"] = prefillS;
        j["prefill_energy_j"] = prefillJ;
        j["idle_power_w"] = idleW;
        j["decode_step_s"] = stepS;
        j["decode_step_energy_j"] = stepJ;
        j["prefill_fits"] = prefillFits;
    }
    if (prefillPeakBytes > 0)
    {
        j["prefill_peak_memory_bytes"] = prefillPeakBytes;
    }
    if (prefillPrompts > 0)
    {
        j["prefill_prompts"] = prefillPrompts;
    }
    if (chunkTokens > 0)
    {
        // Chunked batching (EvaluateChunked).
        j["chunk_tokens"] = chunkTokens;
        j["chunk_count"] = chunkCount;
        j["mixed_step_s"] = mixedStepS;
        j["mixed_share"] = mixedShare;
        if (chunkTokenS > 0)
        {
            j["chunk_token_s"] = chunkTokenS;
            j["chunk_token_energy_j"] = chunkTokenJ;
        }
    }
    if (prefillTp > 0)
    {
        // Paired (ServingStudy::Pair): its prefill instances.
        j["prefill_tp"] = prefillTp;
        j["prefill_pp"] = prefillPp;
        j["prefill_instances"] = prefillInstances;
        j["sets"] = sets;
        j["gpus_used"] = gpusUsed;
        j["kv_transfer_s"] = kvTransferS;
    }
    if (kvWhole > 0)
    {
        j["kv_whole"] = kvWhole;
        j["kv_in_flight"] = kvInFlight;
    }
    if (kvTokens > 0)
    {
        j["kv_tokens"] = kvTokens;
    }
    if (!stepCurve.requests.empty())
    {
        // Under a rate: the decode step against the requests in flight.
        j["step_curve"] = CurveJson(stepCurve);
    }
    if (!prefillCurve.requests.empty())
    {
        j["prefill_curve"] = CurveJson(prefillCurve);
    }
    if (loaded)
    {
        j["load"] = load.ToJson();
    }
    return j;
}

Json
ServingLoad::ToJson() const
{
    Json j;
    j["rate_per_s"] = rateRps;
    j["requests"] = requests;
    if (goodputRps >= 0)
    {
        j["goodput_per_s"] = goodputRps;
    }
    j["tokens_per_s_per_gpu"] = tokensPerSPerGpu;
    j["utilization"] = utilization;
    j["overloaded"] = overloaded;
    if (!overloaded)
    {
        j["ttft_p50_s"] = summary.ttftP50S;
        j["ttft_p90_s"] = summary.ttftP90S;
        j["ttft_p99_s"] = summary.ttftP99S;
        j["tpot_p50_s"] = summary.tpotP50S;
        j["tpot_p90_s"] = summary.tpotP90S;
        j["tpot_p99_s"] = summary.tpotP99S;
        j["slo_attainment"] = summary.attainment;
        // Each target alone: which of them binds.
        j["ttft_attainment"] = summary.ttftAttainment;
        j["tpot_attainment"] = summary.tpotAttainment;
        j["span_s"] = summary.spanS;
        if (summary.preemptions > 0)
        {
            // vLLM's: requests preempted for room in the KV cache, recomputed later.
            j["preemptions"] = summary.preemptions;
        }
        if (prefixHitShare >= 0)
        {
            j["prefix_hit_share"] = prefixHitShare;
        }
        if (decodePrefixHitShare >= 0)
        {
            j["decode_prefix_hit_share"] = decodePrefixHitShare;
        }
        j["have_energy"] = haveEnergy;
        j["energy_per_token_j"] = energyPerTokenJ;
        j["avg_power_w"] = avgPowerW;
    }
    return j;
}

ServingRow
ServingRow::FromJson(const Json& j)
{
    ServingRow r;
    try
    {
        r.layout = j.at("layout").get<uint64_t>();
        r.tp = j.at("tp").get<uint32_t>();
        r.pp = j.at("pp").get<uint32_t>();
        r.cp = j.at("cp").get<uint32_t>();
        r.dp = j.at("dp").get<uint32_t>();
        r.replicas = j.at("replicas").get<uint32_t>();
        r.batch = j.at("batch").get<uint32_t>();
        r.hardware = j.at("hardware").get<std::string>();
        r.engine = j.at("engine").get<std::string>();
        r.dtype = j.at("dtype").get<std::string>();
        r.kvCacheDtype = j.at("kv_cache_dtype").get<std::string>();
        r.fits = j.at("fits").get<bool>();
        r.reason = j.at("reason").get<std::string>();
        r.ttftS = j.at("ttft_s").get<double>();
        r.tpotS = j.at("tpot_s").get<double>();
        r.requestS = j.at("request_s").get<double>();
        r.tokensPerSPerGpu = j.at("tokens_per_s_per_gpu").get<double>();
        r.requestsPerS = j.at("requests_per_s").get<double>();
        r.haveEnergy = j.at("have_energy").get<bool>();
        r.energyPerTokenJ = j.at("energy_per_token_j").get<double>();
        r.avgPowerW = j.at("avg_power_w").get<double>();
        r.peakBytes = j.at("peak_memory_bytes").get<uint64_t>();
        r.capacityBytes = j.at("capacity_bytes").get<uint64_t>();
        r.meetsSlo = j.at("meets_slo").get<bool>();
        r.frontier = j.at("frontier").get<bool>();
        r.replayed = j.contains("prefill_fits");
        if (r.replayed)
        {
            r.prefillS = j.at("prefill_s").get<double>();
            r.prefillJ = j.at("prefill_energy_j").get<double>();
            r.idleW = j.at("idle_power_w").get<double>();
            r.stepS = j.at("decode_step_s").get<double>();
            r.stepJ = j.at("decode_step_energy_j").get<double>();
            r.prefillFits = j.at("prefill_fits").get<bool>();
        }
        if (j.contains("prefill_peak_memory_bytes"))
        {
            r.prefillPeakBytes = j.at("prefill_peak_memory_bytes").get<uint64_t>();
        }
        if (j.contains("prefill_prompts"))
        {
            r.prefillPrompts = j.at("prefill_prompts").get<double>();
        }
        if (j.contains("chunk_tokens"))
        {
            r.chunkTokens = j.at("chunk_tokens").get<uint32_t>();
            r.chunkCount = j.at("chunk_count").get<uint32_t>();
            r.mixedStepS = j.at("mixed_step_s").get<double>();
            r.mixedShare = j.at("mixed_share").get<double>();
            if (j.contains("chunk_token_s"))
            {
                r.chunkTokenS = j.at("chunk_token_s").get<double>();
                r.chunkTokenJ = j.at("chunk_token_energy_j").get<double>();
            }
        }
        if (j.contains("prefill_tp"))
        {
            r.prefillTp = j.at("prefill_tp").get<uint32_t>();
            r.prefillPp = j.at("prefill_pp").get<uint32_t>();
            r.prefillInstances = j.at("prefill_instances").get<uint32_t>();
            r.sets = j.at("sets").get<uint32_t>();
            r.gpusUsed = j.at("gpus_used").get<uint32_t>();
            r.kvTransferS = j.at("kv_transfer_s").get<double>();
        }
        if (j.contains("kv_whole"))
        {
            r.kvWhole = j.at("kv_whole").get<uint32_t>();
            r.kvInFlight = j.at("kv_in_flight").get<double>();
        }
        if (j.contains("kv_tokens"))
        {
            r.kvTokens = j.at("kv_tokens").get<double>();
        }
        if (j.contains("step_curve"))
        {
            r.stepCurve = CurveFromJson(j.at("step_curve"));
        }
        if (j.contains("prefill_curve"))
        {
            r.prefillCurve = CurveFromJson(j.at("prefill_curve"));
        }
    }
    catch (const Json::exception& e)
    {
        throw std::runtime_error(std::string("not a serving-study row: ") + e.what());
    }
    return r;
}

ServingStudy::ServingStudy(const JobOptions& options,
                           const ServingSpace& space,
                           const std::string& backend,
                           const std::string& routing,
                           bool symmetry)
    : m_space(space)
    , m_backend(backend.empty() ? "flow" : backend)
    , m_routing(routing)
    , m_symmetry(symmetry)
{
    // What does not depend on the layout (the model, the hardware, the request, the engine) is
    // an error of the job, not a layout to skip: checked once on a one-GPU replica.
    if (options.Get("cp") != "1")
    {
        // As a run refuses it (RunSpec::Validate): said once, before any layout.
        throw SpecError(kCommandLine,
                        "cp",
                        options.Get("cp")
                            + ": context parallelism is modelled in training only; allowed in "
                              "inference: 1");
    }
    for (const char* own : {"gpu-set", "slow-gpus"})
    {
        if (!options.Get(own).empty())
        {
            RefuseOwnGpus(own);
        }
    }
    const std::string etp = options.Get("etp");
    if (!etp.empty() && etp != "1")
    {
        // Each layout's tp is the study's: the experts either follow it (unset) or stay whole.
        throw SpecError(kCommandLine,
                        "etp",
                        etp
                            + ": a serving study takes 1 (whole experts) or no --etp (each "
                              "expert sharded over the layout's tensor-parallel ranks)");
    }
    JobOptions base = options;
    base.Set("mode", "inference");
    for (const char* name : {"tp", "pp", "batch", "gpus"})
    {
        base.Set(name, "1");
    }
    // The variants to try, as the lists give them: each choice of every list, the first list
    // outermost (VariantLists), the job's own setting where a list is empty.
    std::vector<JobOptions> settings{base};
    for (const auto& [name, list] : space.VariantLists())
    {
        std::vector<JobOptions> each;
        for (const JobOptions& setting : settings)
        {
            if (list->empty())
            {
                each.push_back(setting);
            }
            for (const std::string& value : *list)
            {
                each.push_back(setting);
                each.back().Set(name, value);
            }
        }
        settings = std::move(each);
    }
    bool moe = false;
    bool sharedPrefix = false;
    for (const JobOptions& setting : settings)
    {
        // The batches in flight depend on the batch and the pipeline: the candidates' to check.
        JobOptions check = setting;
        check.Set("inflight-batches", "0");
        const ResolvedJob job = check.ToSpecs();
        m_variants.push_back({job.hardwareSource,
                              job.run.engine,
                              ToString(job.run.dtype),
                              ToString(job.run.KvCacheType()),
                              job.hardware.gpu.Runs(job.run.dtype)
                                  ? ""
                                  : job.hardwareSource + ": " + job.hardware.gpu.name
                                        + " lists no rate for " + ToString(job.run.dtype)
                                        + " (it lists " + job.hardware.gpu.ListedTypes() + ")"});
        m_variantJobs.push_back(job);
        if (std::none_of(m_hardwareJobs.begin(),
                         m_hardwareJobs.end(),
                         [&job](const ResolvedJob& known)
                         {
                             return known.hardwareSource == job.hardwareSource;
                         }))
        {
            m_hardwareJobs.push_back(job);
        }
        if (!job.hardware.network.faults.empty())
        {
            // Every row is one replica's job, standing for all of them: a fault on one replica's
            // links would slow every replica alike.
            throw SpecError(job.hardwareSource,
                            "network.faults",
                            "the serving study predicts one replica for all of them, so link "
                            "faults (on one replica's links) are not taken: remove them, or "
                            "predict the faulty layout with `run` or `study faults`");
        }
        if (!job.gpuVariants.empty() || !job.slowGpus.empty())
        {
            RefuseOwnGpus(!job.gpuVariants.empty() ? "gpu-set" : "slow-gpus");
        }
        moe = job.model.IsMoe();
        sharedPrefix = job.run.sharedPrefix;
        m_prefixTokens = job.run.cachedPrefix;
        if (space.batching == Batching::AUTO && !m_engine.empty()
            && EngineBatching(job.run.engine) != EngineBatching(m_engine))
        {
            // One batching for every row: the engines of a list must batch alike.
            throw SpecError(kCommandLine,
                            "engine",
                            m_engine + " and " + job.run.engine
                                + " batch differently (lmdeploy and vllm continuously, hf and "
                                  "none in static batches): list engines that batch alike, or "
                                  "give --batching");
        }
        m_engine = job.run.engine;
        if (job.run.generatedTokens < 2)
        {
            // One generated token has no time between tokens: no TPOT to rank, target or draw
            // the throughput-TPOT frontier with (a prefill-only job is `run`'s).
            throw SpecError(kCommandLine,
                            space.tpotSloS > 0 ? "tpot-slo" : "gen",
                            "the serving study needs --gen of 2 or more (gen is "
                                + std::to_string(job.run.generatedTokens)
                                + ": no time between tokens for the time per output token, its "
                                  "target and the throughput-TPOT frontier)");
        }
        if (space.batching == Batching::CHUNKED && (job.model.IsMla() || job.run.specTokens > 0))
        {
            // A mixed step of MLA would run its decode absorbed and its chunk not; speculative
            // passes yield tokens at a rate the chunk schedule does not follow.
            throw SpecError(kCommandLine,
                            job.model.IsMla() ? "batching" : "spec-tokens",
                            job.model.IsMla()
                                ? "chunked prefill is not modelled for latent attention (MLA: "
                                      + job.model.name + "); allowed: --batching=continuous"
                                : "chunked prefill is not modelled with speculative decoding");
        }
        if (!options.Get("etp").empty() && !job.model.IsMoe())
        {
            // As run refuses it; not a reason to rule out every layout with tp > 1.
            throw SpecError(kCommandLine,
                            "etp",
                            "expert tensor parallelism needs a mixture-of-experts model ("
                                + job.model.name + " has no experts)");
        }
    }
    // Two settings may name one variant (int8 weights' auto cache is int8): tried once.
    for (std::size_t q = settings.size(); q-- > 1;)
    {
        const auto earlier = m_variants.begin() + static_cast<std::ptrdiff_t>(q);
        if (std::find(m_variants.begin(), earlier, m_variants[q]) != earlier)
        {
            settings.erase(settings.begin() + static_cast<std::ptrdiff_t>(q));
            m_variants.erase(earlier);
            m_variantJobs.erase(m_variantJobs.begin() + static_cast<std::ptrdiff_t>(q));
        }
    }
    if (space.prefixHit < 1)
    {
        if (!(space.prefixHit >= 0) || m_prefixTokens == 0 || space.trace.hasCached)
        {
            throw SpecError(kCommandLine,
                            "prefix-hit",
                            !(space.prefixHit >= 0) ? "a prefix hit rate is a share from 0 to 100%"
                            : m_prefixTokens == 0
                                ? "a prefix hit rate is that of the cached prefix: give "
                                  "--cached-prefix too"
                                : "the trace's cached column gives each request's cached tokens: "
                                  "drop --prefix-hit or the column");
        }
        // The candidates run at the mean cached prefix (a prefill's time is nearly affine in
        // the tokens it computes); under arrivals each request finds all of it or none. At 0%
        // none does: no prefix is cached, so none is shared (nor read once a step), and the
        // rows are those without a cached prefix.
        const double mean = space.prefixHit * m_prefixTokens;
        for (JobOptions& setting : settings)
        {
            setting.Set("cached-prefix",
                        std::to_string(
                            space.prefixHit > 0 ? std::max<long long>(1, std::llround(mean)) : 0));
            if (space.prefixHit == 0)
            {
                setting.Set("shared-prefix", "false");
                setting.Set("cascade-attention", "false");
            }
        }
    }
    const bool disaggregated = space.batching == Batching::DISAGGREGATED;
    const bool chunked = space.batching == Batching::CHUNKED;
    const bool arrivals = space.rateRps > 0 || space.goodput;
    if (space.goodput && (space.rateRps > 0 || (space.tpotSloS <= 0 && space.ttftSloS <= 0)))
    {
        throw SpecError(kCommandLine,
                        "goodput",
                        space.rateRps > 0
                            ? "--goodput finds each layout's rate: give it or --rate, not both"
                            : "--goodput is the highest rate within the targets: give "
                              "--tpot-slo or --ttft-slo");
    }
    if (space.size
        && (space.rateRps <= 0 || space.goodput || (space.tpotSloS <= 0 && space.ttftSloS <= 0)))
    {
        throw SpecError(kCommandLine,
                        "size",
                        "sizing finds each layout's fewest instances for a rate within the "
                        "targets: give --rate (not --goodput) and --tpot-slo or --ttft-slo");
    }
    const bool wholeExperts = options.Get("etp") == "1";
    // Each reason once, with the combinations it rules out (a layout's, every batch of it).
    auto skip = [&](const std::string& field, const std::string& reason)
    {
        ++m_skipped;
        const auto known = std::find_if(m_skips.begin(),
                                        m_skips.end(),
                                        [&reason](const ServingSkip& s)
                                        {
                                            return s.reason == reason;
                                        });
        if (known != m_skips.end())
        {
            ++known->count;
            return;
        }
        m_skips.push_back(ServingSkip{field, reason, 1});
    };
    // What rules a layout out whatever its batch (every batch counted): the option to blame and
    // why, both "" when it is valid.
    auto ruledOut = [&](const std::string& layout,
                        uint32_t dp,
                        uint64_t instanceGpus) -> std::pair<std::string, std::string>
    {
        const std::string degree = "dp " + std::to_string(dp);
        if (instanceGpus == 0
            || (space.size ? instanceGpus > space.gpus : space.gpus % instanceGpus != 0))
        {
            // --size: the GPUs are a budget, which one instance must fit; otherwise the
            // replicas fill them.
            return {"gpus",
                    layout
                        + (space.size ? " needs more than the " + std::to_string(space.gpus)
                                            + " GPUs of the budget"
                                      : " does not divide the " + std::to_string(space.gpus)
                                            + " GPUs into replicas")};
        }
        if (dp > 1 && !moe)
        {
            return {"dp",
                    degree
                        + ": data-parallel attention shares experts, and the model has none "
                          "(its data-parallel ranks are the replicas the study already counts)"};
        }
        if (dp > 1 && disaggregated)
        {
            return {"dp",
                    degree
                        + ": disaggregated serving hands each request to one decode instance "
                          "of one attention replica (allowed: dp 1)"};
        }
        if (dp > 1 && chunked)
        {
            return {"dp",
                    degree
                        + ": chunked prefill is modelled for one attention replica (allowed: "
                          "dp 1)"};
        }
        if (dp > 1 && wholeExperts)
        {
            return {"dp",
                    degree
                        + ": with --etp=1 the experts stay in each tensor-parallel group, so "
                          "data-parallel attention replicas would not share them (leave "
                          "--etp unset to spread the experts over the dp replicas)"};
        }
        return {"", ""};
    };
    // A valid layout's candidate of each batch, or the reason it is not valid.
    auto addCandidate = [&](const JobOptions& setting,
                            uint32_t tp,
                            uint32_t pp,
                            uint32_t dp,
                            uint32_t batch,
                            const std::string& layout)
    {
        JobOptions candidate = setting;
        candidate.Set("tp", std::to_string(tp));
        candidate.Set("pp", std::to_string(pp));
        candidate.Set("batch", std::to_string(batch));
        candidate.Set("gpus", std::to_string(uint64_t(tp) * pp * dp));
        candidate.Set("dp", std::to_string(dp));
        if (wholeExperts)
        {
            // Whole experts spread over the tensor-parallel group, as serving engines run
            // expert parallelism (RunSpec::Validate: ep = tp, cp being 1).
            candidate.Set("ep", std::to_string(tp));
        }
        else if (dp > 1)
        {
            // Data-parallel attention: the experts spread over the attention replicas, which
            // dispatch their tokens to them.
            candidate.Set("ep", std::to_string(dp));
        }
        try
        {
            const ResolvedJob resolved = candidate.ToSpecs();
            if (resolved.run.profileTokens == 0
                && resolved.run.ProfileTokensOn(resolved.hardware.gpu) > 0
                && GetBatching() != Batching::STATIC)
            {
                // The engine profiles a forward of its max_num_batched_tokens before it sizes
                // its KV cache: the budget in force (this batching's). A static batch is `run`'s
                // job, profiled as `run` profiles it (RunSpec::ProfileTokensOn).
                candidate.Set("profile-tokens", std::to_string(TokenBudget(resolved)));
            }
            m_options.push_back(candidate);
        }
        catch (const SpecError& e)
        {
            skip(dp > 1 ? "dp" : "tp",
                 layout + ", batch " + std::to_string(batch) + ": " + JobOptions::DescribeError(e));
        }
    };
    for (std::size_t q = 0; q < settings.size(); ++q)
    {
        // A skipped layout's variant, where the study tries more than one.
        const ServingVariant& v = m_variants[q];
        const std::string named = settings.size() == 1
                                      ? ""
                                      : v.hardware + ", " + v.engine + ", " + v.dtype + " weights, "
                                            + v.kvCacheDtype + " KV cache, ";
        for (uint32_t tp : space.tp)
        {
            for (uint32_t pp : space.pp)
            {
                for (uint32_t dp : space.dp)
                {
                    const uint64_t instanceGpus = uint64_t(tp) * pp * dp;
                    const std::string layout = named + "tp " + std::to_string(tp) + " x pp "
                                               + std::to_string(pp)
                                               + (dp > 1 ? " x dp " + std::to_string(dp) : "");
                    const auto [field, reason] =
                        v.ruledOut.empty() ? ruledOut(layout, dp, instanceGpus)
                                           : std::make_pair(std::string("dtype"), v.ruledOut);
                    for (uint32_t batch : space.batch)
                    {
                        if (!reason.empty())
                        {
                            skip(field, reason);
                        }
                        else
                        {
                            addCandidate(settings[q], tp, pp, dp, batch, layout);
                        }
                    }
                }
            }
        }
    }
    if (m_options.empty())
    {
        const ServingSkip first = m_skips.empty() ? ServingSkip() : m_skips.front();
        throw SpecError(kCommandLine,
                        first.field,
                        "no layout of the lists is valid for the model on "
                            + std::to_string(space.gpus) + " GPUs (" + first.reason + ")");
    }
    const Batching batching = GetBatching();
    if (arrivals && batching == Batching::STATIC
        && std::any_of(space.dp.begin(),
                       space.dp.end(),
                       [](uint32_t dp)
                       {
                           return dp > 1;
                       }))
    {
        throw SpecError(kCommandLine,
                        "dp",
                        "under open-loop arrivals (--rate, --goodput) data-parallel attention "
                        "replicas are simulated with continuous batching (the batching is "
                        "static; allowed: dp 1, or --batching=continuous)");
    }
    if (space.router != QueueRouter::ROUND_ROBIN && !arrivals)
    {
        throw SpecError(kCommandLine,
                        "router",
                        "a router deals the requests arriving under --rate or --goodput: give "
                        "one (or leave the router round-robin)");
    }
    if (space.router == QueueRouter::CACHE_AWARE && space.prefixes == 0)
    {
        throw SpecError(kCommandLine,
                        "router",
                        "the cache-aware router deals requests by the prefixes the instances "
                        "hold: give --prefixes (and --cached-prefix) too");
    }
    if (space.prefixSkew != 0 && (space.prefixes == 0 || !(space.prefixSkew > 0)))
    {
        throw SpecError(kCommandLine,
                        "prefix-skew",
                        space.prefixes == 0
                            ? "the skew is the prefix groups' popularity: give --prefixes too"
                            : "a Zipf exponent is above 0 (0: uniform)");
    }
    if (space.prefixes > 0)
    {
        const bool dpReplicas = std::any_of(space.dp.begin(),
                                            space.dp.end(),
                                            [](uint32_t dp)
                                            {
                                                return dp > 1;
                                            });
        std::string why;
        if (!arrivals)
        {
            why = "prefix groups are found in the instances' caches as requests arrive: give "
                  "--rate, --goodput or --size";
        }
        else if (m_prefixTokens == 0)
        {
            why = "each group's prefix is the cached prefix: give --cached-prefix too";
        }
        else if (space.prefixHit < 1 || space.trace.hasCached || sharedPrefix)
        {
            why = std::string("a request finds its group's prefix where its instance holds it: "
                              "drop ")
                  + (space.prefixHit < 1     ? "--prefix-hit"
                     : space.trace.hasCached ? "the trace's cached column"
                                             : "--shared-prefix");
        }
        else if (dpReplicas)
        {
            why = "prefix groups are modelled for instances of one KV cache (allowed: dp 1)";
        }
        if (!why.empty())
        {
            throw SpecError(kCommandLine, "prefixes", why);
        }
        if (GroupsShared())
        {
            // A replica's requests of one prefix group share its prefix's blocks.
            for (JobOptions& candidate : m_options)
            {
                candidate.Set("prefix-groups", std::to_string(space.prefixes));
            }
        }
    }
    if (space.batchDelayS > 0 && (!arrivals || batching != Batching::STATIC))
    {
        throw SpecError(kCommandLine,
                        "batch-delay",
                        "the delay for a static batch to fill applies to static batching under "
                        "--rate or --goodput (the batching is "
                            + BatchingNames()[static_cast<std::size_t>(batching)]
                            + (arrivals ? ")" : ", without arrivals)"));
    }
    if (space.tokenBudget > 0
        && (batching == Batching::STATIC || (batching == Batching::DISAGGREGATED && !arrivals)))
    {
        // Static batches prefill their whole batch; disaggregated prefill instances take one
        // prompt at a time in their steady state: a budget would be silently ignored.
        throw SpecError(kCommandLine,
                        "token-budget",
                        "the token budget bounds a step of chunked prefill or a prefill iteration "
                        "of continuous batching (and of disaggregated prefill instances under "
                        "--rate or --goodput); the batching is "
                            + BatchingNames()[static_cast<std::size_t>(batching)]);
    }
}

const std::vector<JobOptions>&
ServingStudy::Candidates() const
{
    return m_options;
}

std::vector<std::pair<std::string, const std::vector<std::string>*>>
ServingSpace::VariantLists() const
{
    return {{"hardware", &hardware},
            {"engine", &engines},
            {"dtype", &dtypes},
            {"kv-cache-dtype", &kvCacheDtypes}};
}

const std::vector<ServingVariant>&
ServingStudy::Variants() const
{
    return m_variants;
}

const std::vector<ResolvedJob>&
ServingStudy::HardwareJobs() const
{
    return m_hardwareJobs;
}

const std::vector<ResolvedJob>&
ServingStudy::VariantJobs() const
{
    return m_variantJobs;
}

uint32_t
ServingStudy::GetSkipped() const
{
    return m_skipped;
}

const std::vector<ServingSkip>&
ServingStudy::GetSkips() const
{
    return m_skips;
}

ResolvedJob
ServingStudy::FirstJob() const
{
    return m_options.front().ToSpecs();
}

uint32_t
ServingStudy::PrefixTokens() const
{
    return m_prefixTokens;
}

bool
ServingStudy::GroupsShared() const
{
    return m_space.prefixes > 0 && GetBatching() != Batching::STATIC;
}

Batching
ServingStudy::GetBatching() const
{
    if (m_space.batching != Batching::AUTO)
    {
        return m_space.batching;
    }
    return EngineBatching(m_engine);
}

Batching
ServingStudy::EngineBatching(const std::string& engine)
{
    // TurboMind's persistent batch and vLLM's scheduler admit requests at every iteration;
    // transformers' generate() runs a batch to its end.
    return engine == "lmdeploy" || engine == "vllm" ? Batching::CONTINUOUS : Batching::STATIC;
}

KvHandoverTimes&
ServingStudy::Handovers(const ResolvedJob& job) const
{
    auto it = m_handovers.find(job.hardwareSource);
    if (it == m_handovers.end())
    {
        it = m_handovers
                 .emplace(std::piecewise_construct,
                          std::forward_as_tuple(job.hardwareSource),
                          std::forward_as_tuple(
                              job.hardware.network, m_space.gpus, m_backend, m_routing))
                 .first;
    }
    return it->second;
}

Ptr<RapidLlmHelper>
ServingStudy::HelperFor(JobOptions options,
                        const std::vector<std::pair<std::string, std::string>>& changes) const
{
    for (const auto& [name, value] : changes)
    {
        options.Set(name, value);
    }
    Ptr<RapidLlmHelper> helper = CreateObject<RapidLlmHelper>();
    helper->SetBackend(m_backend);
    if (!m_routing.empty())
    {
        helper->SetRoutingPolicy(m_routing);
    }
    helper->SetReplayerAttribute("Symmetry", BooleanValue(m_symmetry));
    options.Apply(helper);
    return helper;
}

ServingRow
ServingStudy::Evaluate(uint64_t index) const
{
    const JobOptions& options = m_options.at(index);
    const ResolvedJob job = options.ToSpecs();
    const ParallelSpec& p = job.run.parallel;
    ServingRow row;
    row.layout = index;
    row.tp = p.tp;
    row.pp = p.pp;
    row.cp = p.cp;
    row.dp = p.dp;
    row.replicas = static_cast<uint32_t>(m_space.gpus / p.Gpus());
    row.batch = job.run.batch;
    row.hardware = job.hardwareSource;
    row.engine = job.run.engine;
    row.dtype = ToString(job.run.dtype);
    row.kvCacheDtype = ToString(job.run.KvCacheType());
    if (GetBatching() != Batching::STATIC)
    {
        EvaluateContinuous(options, job, row);
        if (row.fits && row.kvWhole > 0)
        {
            FillSaturated(job, row);
        }
        return row;
    }

    Ptr<RapidLlmHelper> helper = HelperFor(options, {});
    // The memory check costs a fraction of the replay; only replicas that fit are replayed.
    RunReport report = helper->CheckMemory();
    if (report.feasible)
    {
        report = helper->Run();
    }
    helper->Dispose();
    row.fits = report.feasible;
    row.reason = report.feasible ? "" : NotFitting(report, job.model, job.run, job.hardware.gpu);
    row.peakBytes = report.memory.peak;
    row.capacityBytes = report.capacityBytes;
    if (row.fits)
    {
        row.ttftS = report.ttftS;
        row.tpotS = report.tpotS;
        row.requestS = report.stepTimeS;
        row.tokensPerSPerGpu = report.tokensPerSPerGpu;
        row.requestsPerS = double(row.replicas) * p.dp * job.run.batch / report.stepTimeS;
        row.haveEnergy = report.haveEnergy;
        row.energyPerTokenJ = report.energyPerTokenJ;
        row.avgPowerW = report.avgPowerW;
        if (m_space.rateRps > 0 || m_space.goodput)
        {
            FillKvTokens(options, {}, row);
            // For the queue simulation: a batch of 1, 2, 4, ... requests as the instance runs
            // it, its prefill, then its decode steps at the requests' mean context.
            const bool prefillEnergy = FillOnePrefill(options, row);
            FillPrefillCurve(options, row);
            const auto [stepS, stepJ, stepEnergy] = DecodeStep(options, job, {0, 0, 0});
            row.stepS = stepS;
            row.stepJ = stepJ;
            row.haveEnergy = row.haveEnergy && prefillEnergy && stepEnergy;
            FillStepCurve(options, row);
        }
    }
    return row;
}

RunReport
ServingStudy::Replay(const JobOptions& options,
                     const std::vector<std::pair<std::string, std::string>>& changes,
                     const std::array<uint32_t, 3>& chunk) const
{
    JobOptions changed = options;
    for (const auto& [name, value] : changes)
    {
        changed.Set(name, value);
    }
    const std::string key = ReplayKey(changed, chunk);
    const auto known = m_replays.find(key);
    if (known != m_replays.end())
    {
        return known->second;
    }
    Ptr<RapidLlmHelper> helper = HelperFor(changed, {});
    if (chunk[0] > 0)
    {
        RunSpec run = changed.ToSpecs().run;
        run.chunkSequences = chunk[0];
        run.chunkTokens = chunk[1];
        run.chunkPrefix = chunk[2];
        helper->SetRun(run);
    }
    const RunReport report = helper->Run();
    helper->Dispose();
    return m_replays[key] = report;
}

std::tuple<double, double, bool>
ServingStudy::DecodeStep(const JobOptions& options,
                         const ResolvedJob& job,
                         const std::array<uint32_t, 3>& chunk,
                         uint64_t prompt) const
{
    const DecodeReplays d = DecodeReplaysOf(job.run, prompt);
    // The decode steps are the same with or without a cached prefix (the difference of the runs
    // has no prefill): the runs prefill their context whole, unless cascade attention reads the
    // shared prefix apart.
    const bool cascade = job.run.cascadeAttention;
    auto changes = [&d, cascade](const std::string& gen)
    {
        std::vector<std::pair<std::string, std::string>> c{{"prompt", std::to_string(d.prompt)},
                                                           {"gen", gen}};
        if (!cascade)
        {
            c.emplace_back("cached-prefix", "0");
            c.emplace_back("shared-prefix", "false");
            c.emplace_back("prefix-groups", "0");
        }
        return c;
    };
    const RunReport shorter = Replay(options, changes("2"), chunk);
    const RunReport longer = Replay(options, changes(std::to_string(d.longGen)), chunk);
    // A speculative pass yields its tokens on average, but a request needs G - 1 of them: its
    // last pass yields what is left, so it runs ceil((G - 1) / yield) passes, as static
    // batching (`run`) counts them (two tokens with 17 a pass took a seventeenth of a pass a
    // token).
    const RunSpec& r = job.run;
    const double passes =
        r.generatedTokens > 1 && r.specTokens > 0
            ? r.TokensPerDecodePass() * r.DecodePasses() / double(r.generatedTokens - 1)
            : 1.0;
    return {passes * (longer.stepTimeS - shorter.stepTimeS) / d.tokens,
            passes * (longer.energyJ - longer.idleEnergyJ - shorter.energyJ + shorter.idleEnergyJ)
                / d.tokens,
            shorter.haveEnergy && longer.haveEnergy};
}

void
ServingStudy::EvaluateContinuous(const JobOptions& options,
                                 const ResolvedJob& job,
                                 ServingRow& row) const
{
    const uint64_t prompt = job.run.promptTokens;
    const uint64_t generated = job.run.generatedTokens;
    const double batch = job.run.batch;
    const double gpus = job.run.parallel.Gpus();
    // Requests in flight on an instance: each data-parallel attention replica's batch. The
    // replays below run every replica at once (their prefills too, together: the experts'
    // all-to-alls couple them), so their times are the instance's and their energies its own.
    const double inFlight = batch * job.run.parallel.dp;

    // Memory: every request's whole KV cache (a one-token prompt and the rest generated) and
    // one step's activations.
    const bool disaggregated = GetBatching() == Batching::DISAGGREGATED;
    auto memory = [this, &options](const std::vector<std::pair<std::string, std::string>>& changes)
    {
        Ptr<RapidLlmHelper> helper = HelperFor(options, changes);
        const RunReport report = helper->CheckMemory();
        helper->Dispose();
        return report;
    };
    {
        // (After a cached prefix, one computed prompt token: a shared prefix stays shared.)
        const uint64_t cached = job.run.cachedPrefix;
        const std::vector<std::pair<std::string, std::string>> check{
            {"prompt", std::to_string(cached + 1)},
            {"gen", std::to_string(prompt + generated - cached - 1)}};
        const RunReport decode = memory(check);
        RunSpec checked = job.run;
        checked.promptTokens = static_cast<uint32_t>(cached + 1);
        checked.generatedTokens = static_cast<uint32_t>(prompt + generated - cached - 1);
        row.fits = decode.feasible;
        row.reason =
            decode.feasible ? "" : NotFitting(decode, job.model, checked, job.hardware.gpu);
        row.peakBytes = decode.memory.peak;
        row.capacityBytes = decode.capacityBytes;
        const std::string reason = row.reason;
        if (!row.fits && AdmitsOnHeld(job))
        {
            // The engine admits on what the requests hold: it runs while one request fits whole.
            row.kvWhole = LargestFittingBatch(job.model, checked, job.hardware.gpu);
            row.fits = row.kvWhole > 0;
            row.reason = row.fits ? "" : reason;
        }
        if (row.fits && (m_space.rateRps > 0 || m_space.goodput || row.kvWhole > 0))
        {
            FillKvTokens(options, check, row);
        }
        if (row.fits && row.kvWhole > 0 && row.kvTokens < double(prompt + generated))
        {
            // The batch's activations leave no room for one request beside the weights (or the
            // cache does not grow with the tokens, a sliding window full: not what binds).
            row.fits = false;
            row.kvWhole = 0;
            row.reason = reason
                         + (row.kvTokens > 0 ? "; the activations of " + std::to_string(row.batch)
                                                   + " requests leave no room for one request's "
                                                     "KV cache"
                                             : "");
        }
        else if (row.fits && row.kvWhole > 0)
        {
            // The engine fills its cache.
            row.peakBytes = row.capacityBytes;
        }
        if (row.fits && row.kvWhole == 0 && !disaggregated)
        {
            // A prefill iteration runs one request's prompt (under chunked batching a chunk of at
            // most the token budget) beside the others' caches: its activations, beyond a
            // decode step's, are on top of the cache (a 262k-token prompt's 18 GiB beside the
            // other request's cache did not fit, and was said to).
            const uint64_t computed = prompt - std::min<uint64_t>(prompt - 1, cached);
            const uint64_t tokens = GetBatching() == Batching::CHUNKED
                                        ? std::min<uint64_t>(computed, TokenBudget(job))
                                        : computed;
            const RunReport one = memory({{"batch", "1"},
                                          {"gen", "1"},
                                          {"inflight-batches", "0"},
                                          {"prompt", std::to_string(cached + tokens)}});
            const uint64_t extra = one.memory.activations > decode.memory.activations
                                       ? one.memory.activations - decode.memory.activations
                                       : 0;
            if (extra > 0 && decode.memory.peak + extra > row.peakBytes)
            {
                row.peakBytes = decode.memory.peak + extra;
                if (row.peakBytes > row.capacityBytes)
                {
                    row.fits = false;
                    char gib[96];
                    std::snprintf(gib,
                                  sizeof(gib),
                                  "%.2f GiB at its peak but the GPU has %.2f GiB",
                                  double(row.peakBytes) / double(1ull << 30),
                                  double(row.capacityBytes) / double(1ull << 30));
                    row.reason = "the prefill of one request's " + std::to_string(tokens)
                                 + " prompt tokens beside the batch's KV caches needs " + gib;
                }
            }
        }
    }
    // A prefill instance holds one request's prompt: it may fit where the decode does not.
    row.replayed = true;
    row.prefillFits = row.fits;
    if (disaggregated)
    {
        const RunReport prefill = memory({{"batch", "1"}, {"gen", "1"}, {"inflight-batches", "0"}});
        row.prefillFits = prefill.feasible;
        row.prefillPeakBytes = prefill.memory.peak;
    }
    if (!row.prefillFits)
    {
        return;
    }
    row.haveEnergy = FillOnePrefill(options, row);
    const double prefillS = row.prefillS;
    const double prefillJ = row.prefillJ;
    const double idleW = row.idleW;
    // The queue simulation's curves: under arrivals, and for the saturated queue of a batch
    // beyond the KV cache.
    const bool arrivals = m_space.rateRps > 0 || m_space.goodput || row.kvWhole > 0;
    if (arrivals && (disaggregated || (row.fits && GetBatching() == Batching::CONTINUOUS)))
    {
        FillPrefillCurve(options, row);
    }
    if (!row.fits)
    {
        return;
    }
    // A decode step of the whole batch at the requests' mean context.
    const uint64_t steps = generated - 1;
    const auto [stepS, stepJ, stepEnergy] = DecodeStep(options, job, {0, 0, 0});
    const bool energy = row.haveEnergy && stepEnergy;
    row.stepS = stepS;
    row.stepJ = stepJ;
    row.haveEnergy = energy;
    if (arrivals)
    {
        FillStepCurve(options, row);
    }
    if (GetBatching() == Batching::CHUNKED)
    {
        EvaluateChunked(options, job, row);
        return;
    }
    // Every slot turns over once per cycle of its decode steps and every slot's prefill. Where
    // more than one request finishes per decode step (batch > G - 1), the engine prefills the
    // prompts that replace them together, as many as its token budget holds (vLLM before V1,
    // lmdeploy): batch / f prefill iterations of f prompts each, the iteration's time linear
    // between the replayed prefills of floor(f) and ceil(f) prompts. With data-parallel
    // attention each replica does so with its own (its own scheduler and token budget, as
    // vLLM's data-parallel engine cores and SGLang's DP attention schedule; one prompt a
    // replica an iteration made a 2-token request's time per token 17 prefills long).
    double iterations = batch;
    double iterationS = prefillS;
    double iterationJ = prefillJ;
    const double perStep = steps > 0 ? batch / double(steps) : 0;
    if (perStep > 1 && GetBatching() == Batching::CONTINUOUS)
    {
        const double f = std::min<double>(perStep, PromptsPerPrefill(job));
        const auto low = static_cast<uint32_t>(std::floor(f));
        const auto high = static_cast<uint32_t>(std::ceil(f));
        const auto lower = low > 1
                               ? MeanPrefillIteration(options, low)
                               : std::optional<PrefillReplay>(PrefillReplay{prefillS, prefillJ, 0});
        const auto upper = high > low ? MeanPrefillIteration(options, high) : lower;
        if (lower && upper)
        {
            const double w = f - low;
            iterations = batch / f;
            iterationS = (1 - w) * lower->seconds + w * upper->seconds;
            iterationJ = (1 - w) * lower->joules + w * upper->joules;
            row.prefillPrompts = f;
        }
    }
    // With batches in flight through a pipeline, a prefill holds each stage for its share only
    // (the other stages work on the other batches meanwhile).
    const double prefillShareS = iterationS / job.run.InflightBatches();
    const double cycleS = double(steps) * stepS + iterations * prefillShareS;
    row.ttftS = iterationS;
    row.tpotS = steps > 0 ? (cycleS - prefillShareS) / double(steps) : 0;
    row.requestS = row.ttftS + double(steps) * row.tpotS;
    row.tokensPerSPerGpu = inFlight * double(generated) / (cycleS * gpus);
    row.requestsPerS = double(row.replicas) * inFlight / cycleS;
    if (energy)
    {
        const double cycleJ = double(steps) * stepJ + iterations * iterationJ + idleW * cycleS;
        row.energyPerTokenJ = cycleJ / (inFlight * double(generated));
        row.avgPowerW = cycleJ / (cycleS * gpus);
    }
}

bool
ServingStudy::FillOnePrefill(const JobOptions& options, ServingRow& row) const
{
    // One request's prefill (and the sampling of its first token); under --prefix-hit the mean
    // of one that finds the prefix and one that does not (attention grows with the square of
    // the tokens computed: a prefill at the mean prefix was 32% slow at 128k tokens).
    const std::vector<std::pair<std::string, std::string>> one = {
        {"batch", "1"}, {"gen", "1"}, {"inflight-batches", "0"}};
    double seconds = 0;
    double joules = 0;
    double idleJ = 0;
    bool energy = true;
    for (const auto& [job, weight] : PrefixCases(options))
    {
        const RunReport first = Replay(job, one);
        seconds += weight * first.stepTimeS;
        // Energies are split into the work's own (dynamic) and the boards' idle power, which
        // the cycle pays over its whole length instead.
        joules += weight * (first.energyJ - first.idleEnergyJ);
        idleJ += weight * first.idleEnergyJ;
        energy = energy && first.haveEnergy;
    }
    row.prefillS = seconds;
    row.prefillJ = joules;
    row.idleW = seconds > 0 ? idleJ / seconds : 0;
    return energy;
}

std::vector<std::pair<JobOptions, double>>
ServingStudy::PrefixCases(const JobOptions& options) const
{
    const double hit = m_space.prefixHit;
    if (!(hit > 0 && hit < 1) || m_prefixTokens == 0)
    {
        return {{options, 1.0}};
    }
    JobOptions found = options;
    found.Set("cached-prefix", std::to_string(m_prefixTokens));
    JobOptions missed = options;
    missed.Set("cached-prefix", "0");
    missed.Set("shared-prefix", "false");
    missed.Set("cascade-attention", "false");
    return {{found, hit}, {missed, 1 - hit}};
}

std::optional<PrefillReplay>
ServingStudy::MeanPrefillIteration(const JobOptions& options, uint32_t prompts) const
{
    PrefillReplay mean{0, 0, 0};
    for (const auto& [job, weight] : PrefixCases(options))
    {
        const auto iteration = PrefillIteration(job, prompts);
        if (!iteration)
        {
            return std::nullopt;
        }
        mean.seconds += weight * iteration->seconds;
        mean.joules += weight * iteration->joules;
        mean.attentionS += weight * iteration->attentionS;
    }
    return mean;
}

void
ServingStudy::FillStepCurve(const JobOptions& options, ServingRow& row) const
{
    StepCurve& curve = row.stepCurve;
    curve = StepCurve();
    // Each size again at half the context: what a key adds to its step (a context too short
    // to halve is not followed).
    // (With cascade attention the shared prefix stays: each request's own keys are halved.)
    const ResolvedJob job = options.ToSpecs();
    const uint64_t kept = job.run.cascadeAttention ? job.run.cachedPrefix : 0;
    const DecodeReplays mean = DecodeReplaysOf(job.run, 0);
    const DecodeReplays half = DecodeReplaysOf(job.run, kept + (mean.prompt - kept) / 2);
    const bool follow = mean.prompt >= kept + 16;
    auto add = [&](uint32_t n, const JobOptions& sized, double s, double j, bool known)
    {
        curve.requests.push_back(n);
        curve.seconds.push_back(s);
        curve.joules.push_back(known ? j : 0);
        if (follow)
        {
            const auto [halfS, halfJ, halfKnown] =
                DecodeStep(sized, sized.ToSpecs(), {0, 0, 0}, half.prompt);
            const double keys = double(n) * (mean.keys - half.keys);
            curve.secondsPerToken.push_back((s - halfS) / keys);
            curve.joulesPerToken.push_back(known && halfKnown ? (j - halfJ) / keys : 0);
        }
    };
    for (uint32_t n = 1; n < row.batch; n *= 2)
    {
        JobOptions smaller = options;
        SetBatch(smaller, n);
        const auto [s, j, known] = DecodeStep(smaller, smaller.ToSpecs(), {0, 0, 0});
        add(n, smaller, s, j, known);
    }
    add(row.batch, options, row.stepS, row.stepJ, true);
    curve.tokens = follow ? mean.keys : 0;
}

void
ServingStudy::FillPrefillCurve(const JobOptions& options, ServingRow& row) const
{
    // Prefill iterations: one prompt (the row's own prefill), then 2, 4, ... and the most the
    // token budget holds (co-located, at most the batch), while their activations fit. An
    // iteration's prompts run as one batch through the pipeline (vLLM runs a virtual engine per
    // stage, each scheduling its own batch; the engine is held for its share,
    // QueueEngine::prefillHeld).
    const uint32_t most =
        GetBatching() == Batching::STATIC ? row.batch : PromptsPerPrefill(options.ToSpecs());
    row.prefillCurve = StepCurve();
    StepCurve& prefill = row.prefillCurve;
    // One prompt at the job's cached prefix (the row's own prefill where every request finds
    // the same; under --prefix-hit the row's is the mean of a hit and a miss).
    const RunReport one =
        Replay(options, {{"batch", "1"}, {"gen", "1"}, {"inflight-batches", "0"}});
    prefill.requests.push_back(1);
    prefill.seconds.push_back(one.stepTimeS);
    prefill.joules.push_back(one.energyJ - one.idleEnergyJ);
    for (uint32_t k = 2; k <= most; k = k == most ? most + 1 : std::min(2 * k, most))
    {
        const auto iteration = PrefillIteration(options, k);
        if (!iteration)
        {
            break;
        }
        prefill.requests.push_back(k);
        prefill.seconds.push_back(iteration->seconds);
        prefill.joules.push_back(iteration->joules);
    }
    // Each size again with half the prompt tokens to compute (after the cached prefix): what a
    // prompt token adds to its iteration, so that a request's prefill costs its own tokens with
    // the iteration's fixed costs kept (a prompt too short to halve is scaled instead). The
    // attention kernels grow with the square of a prompt's tokens (each attends to those before
    // it): per prompt their time over its tokens is affine in them, and its slope through the
    // two replays is what a squared token adds; the rest (GEMMs, the others) is affine.
    const RunSpec run = options.ToSpecs().run;
    const uint32_t computed = run.promptTokens - run.cachedPrefix;
    if (computed < 16)
    {
        return;
    }
    auto replayOf = [&](const JobOptions& job, uint32_t k)
    {
        if (k > 1)
        {
            return PrefillIteration(job, k);
        }
        const RunReport one =
            Replay(job, {{"batch", "1"}, {"gen", "1"}, {"inflight-batches", "0"}});
        return std::optional<PrefillReplay>(
            PrefillReplay{one.stepTimeS,
                          one.energyJ - one.idleEnergyJ,
                          one.haveComputeKinds ? one.attentionS : 0});
    };
    JobOptions half = options;
    half.Set("prompt", std::to_string(run.cachedPrefix + computed / 2));
    const double t0 = computed;
    const double h = computed / 2;
    const double fewer = t0 - h;
    bool squares = false;
    for (std::size_t i = 0; i < prefill.requests.size(); ++i)
    {
        const uint32_t k = prefill.requests[i];
        const auto full = replayOf(options, k);
        const auto shorter = replayOf(half, k);
        if (!full || !shorter)
        {
            throw std::logic_error("a prefill of shorter prompts that does not fit");
        }
        const double c =
            std::max(0.0, (full->attentionS / (k * t0) - shorter->attentionS / (k * h)) / (t0 - h));
        squares = squares || c > 0;
        prefill.secondsPerToken.push_back(
            (prefill.seconds[i] - shorter->seconds - k * c * (t0 * t0 - h * h)) / (k * fewer));
        prefill.joulesPerToken.push_back((prefill.joules[i] - shorter->joules) / (k * fewer));
        prefill.secondsPerTokenSq.push_back(c);
    }
    if (!squares)
    {
        prefill.secondsPerTokenSq.clear();
    }
    prefill.tokens = computed;
    prefill.cached = run.cachedPrefix;
}

void
ServingStudy::FillKvTokens(const JobOptions& options,
                           const std::vector<std::pair<std::string, std::string>>& check,
                           ServingRow& row) const
{
    // Every request holds P + G tokens (less a shared prefix, and less its group's prefix,
    // whose copies the engine counts apart); twice as many add the bytes of P + G tokens a
    // request (the KV cache is linear in its tokens; the activations stay).
    const ResolvedJob job = options.ToSpecs();
    const uint64_t length = uint64_t(job.run.promptTokens) + job.run.generatedTokens;
    std::vector<std::pair<std::string, std::string>> longer = check;
    uint64_t gen = job.run.generatedTokens;
    for (const auto& [name, value] : check)
    {
        gen = name == "gen" ? std::stoull(value) : gen;
    }
    longer.emplace_back("gen", std::to_string(gen + length));
    Ptr<RapidLlmHelper> helper = HelperFor(options, longer);
    const RunReport twice = helper->CheckMemory();
    helper->Dispose();
    const double perToken =
        (double(twice.memory.peak) - double(row.peakBytes)) / (double(row.batch) * length);
    const uint64_t shared = job.run.PrefixCopies() > 0 ? job.run.cachedPrefix : 0;
    const uint64_t copies = job.run.prefixGroups > 0 ? job.run.PrefixCopies() : 0;
    // No growth (a sliding window already full): no limit.
    row.kvTokens =
        perToken > 0 ? double(row.batch) * double(length - shared) + double(copies) * double(shared)
                           + (double(row.capacityBytes) - double(row.peakBytes)) / perToken
                     : 0;
}

uint32_t
ServingStudy::PromptsPerPrefill(const ResolvedJob& job) const
{
    // The budget counts the tokens an iteration computes: a cached prefix's are not.
    const uint32_t budgeted =
        std::max<uint32_t>(1, TokenBudget(job) / (job.run.promptTokens - job.run.cachedPrefix));
    return GetBatching() == Batching::DISAGGREGATED ? budgeted : std::min(budgeted, job.run.batch);
}

std::optional<PrefillReplay>
ServingStudy::PrefillIteration(const JobOptions& options, uint32_t prompts) const
{
    // A static batch runs through a pipeline in its own in-flight batches, as `run` times it.
    JobOptions iteration = options;
    SetBatch(iteration, prompts);
    iteration.Set("gen", "1");
    if (GetBatching() != Batching::STATIC)
    {
        iteration.Set("inflight-batches", "1");
    }
    const std::string key = ReplayKey(iteration, {0, 0, 0});
    const auto known = m_prefills.find(key);
    if (known != m_prefills.end())
    {
        return known->second;
    }
    Ptr<RapidLlmHelper> helper = HelperFor(iteration, {});
    RunReport report = helper->CheckMemory();
    if (report.feasible)
    {
        report = helper->Run();
    }
    helper->Dispose();
    std::optional<PrefillReplay> result;
    if (report.feasible)
    {
        result = PrefillReplay{report.stepTimeS,
                               report.energyJ - report.idleEnergyJ,
                               report.haveComputeKinds ? report.attentionS : 0};
    }
    return m_prefills[key] = result;
}

void
ServingStudy::EvaluateChunked(const JobOptions& options,
                              const ResolvedJob& job,
                              ServingRow& row) const
{
    // The prompt tokens to compute (after a cached prefix, which the chunks attend to).
    const uint64_t cached = job.run.cachedPrefix;
    const uint64_t prompt = job.run.promptTokens - cached;
    const uint64_t generated = job.run.generatedTokens;
    const uint64_t batch = job.run.batch;
    const double gpus = job.run.parallel.Gpus();
    const uint32_t budget = TokenBudget(job);
    if (budget <= batch)
    {
        row.fits = false;
        row.reason = "a step of " + std::to_string(batch) + " decodes fills the token budget of "
                     + std::to_string(budget) + " (--token-budget): no room for a prefill";
        return;
    }
    // vLLM V1's scheduler (SGLang's alike) gives a step's budget first to the running decodes,
    // one token each, then to the prompts in order, the last that does not fit chunked. While
    // the slots bind, a prompt goes into the steps whole where the budget holds it beside the
    // batch's decodes, else in equal chunks.
    const uint64_t room = budget - batch;
    uint64_t chunks = (prompt + room - 1) / room;
    uint64_t chunk = (prompt + chunks - 1) / chunks;
    // In the steady state each of the batch's slots prefills its prompt over `chunks` steps and
    // then decodes G - 1 tokens: per step batch / (chunks + G - 1) requests start, so that many
    // x chunks prefill chunks run beside the decodes.
    const double cycleSteps = double(chunks + generated - 1);
    const double perStep = double(batch) * double(chunks) / cycleSteps;
    // Chunks per step that carry any: as many as the steps need, within the budget; with a
    // pipeline the same in each batch in flight.
    const uint32_t inflight = job.run.InflightBatches();
    const uint64_t fit = std::max<uint64_t>(1, room / chunk);
    const uint64_t wanted =
        std::min<uint64_t>(fit, static_cast<uint64_t>(std::ceil(perStep - 1e-9)));
    uint64_t perPass = (wanted + inflight - 1) / inflight;
    double perMixedStep = double(perPass * inflight);
    // The share of steps that carry chunks; above 1 the budget, not the slots, sets the pace.
    double share = perStep / perMixedStep;
    const bool paced = share > 1;
    double requestsPerStep = double(batch) / cycleSteps;
    uint64_t chunkTokens = chunk;
    uint64_t context = cached + (chunks - 1) * chunk / 2;
    JobOptions mixedJob = options;
    if (paced)
    {
        // Every step is full: r requests start per step, r (G - 1) decode and r P prompt tokens
        // fill the rest of the budget, r = budget / (P + G - 1), fewer only where the slots
        // cannot hold them (each a slot over its prompt's steps and its G - 1 decodes). Those
        // decode (the others wait for their prompt's turn), and the room beside them carries
        // the prompt tokens, a prompt in as many steps as the room takes to hold it.
        requestsPerStep = double(budget) / double(prompt + generated - 1);
        const auto decodes = std::clamp<uint64_t>(
            static_cast<uint64_t>(std::ceil(requestsPerStep * double(generated - 1) - 1e-9)),
            1,
            batch);
        const uint64_t beside = budget - decodes;
        chunks = (prompt + beside - 1) / beside;
        chunk = (prompt + chunks - 1) / chunks;
        requestsPerStep = std::min(requestsPerStep, double(batch) / double(chunks + generated - 1));
        SetBatch(mixedJob, static_cast<uint32_t>(decodes));
        // The step's prompt tokens in the pieces of the prompts it carries (a prompt's last
        // chunk and the next prompt's first), in each batch in flight alike, each at the
        // pieces' mean prefix.
        const double tokens = requestsPerStep * double(prompt);
        const auto pieces =
            std::max<uint64_t>(1, static_cast<uint64_t>(std::llround(tokens / double(chunk))));
        perPass = (pieces + inflight - 1) / inflight;
        perMixedStep = double(perPass * inflight);
        chunkTokens =
            std::clamp<uint64_t>(static_cast<uint64_t>(std::ceil(tokens / perMixedStep - 1e-9)),
                                 1,
                                 std::max<uint64_t>(1, beside / (perPass * inflight)));
        context = cached + (prompt - std::min(prompt, chunkTokens)) / 2;
        share = 1;
    }
    const auto [mixedS, mixedJ, mixedEnergy] = DecodeStep(mixedJob,
                                                          job,
                                                          {static_cast<uint32_t>(perPass),
                                                           static_cast<uint32_t>(chunkTokens),
                                                           static_cast<uint32_t>(context)});
    const double stepS = paced ? mixedS : (1 - share) * row.stepS + share * mixedS;
    const double stepJ = paced ? mixedJ : (1 - share) * row.stepJ + share * mixedJ;
    row.chunkTokens = static_cast<uint32_t>(chunk);
    row.chunkCount = static_cast<uint32_t>(chunks);
    row.mixedStepS = mixedS;
    if (!row.stepCurve.requests.empty())
    {
        // For the queue simulation: what a prompt token adds to a step, the mixed step over the
        // same decodes without chunks, per chunk token it carries.
        const uint32_t decodes = std::stoul(mixedJob.Get("batch"));
        const double tokens = perMixedStep * double(chunkTokens);
        row.chunkTokenS = std::max(0.0, (mixedS - row.stepCurve.SecondsAt(decodes)) / tokens);
        row.chunkTokenJ = std::max(0.0, (mixedJ - row.stepCurve.JoulesAt(decodes)) / tokens);
    }
    row.mixedShare = std::min(share, 1.0);
    // A slot turns over every batch / requestsPerStep steps (Little's law), G - 1 of them
    // decoding: the rest is its prompt's, n mixed steps, and when paced its wait for them.
    row.ttftS = (double(batch) / requestsPerStep - double(generated - 1)) * mixedS;
    // Its tokens after the first come in its G - 1 decode steps: mixed ones where other
    // prompts' chunks ride along (the cycle's mixed steps less the n that carried its own, which
    // the first token counted), plain decodes otherwise. (The mean step, its own chunks' steps
    // included, counted them twice: at batch 1 a 128k prompt's 12 ms tokens came out 335 ms.)
    const double decodes = double(generated - 1);
    const double mixedBeside =
        paced ? decodes : std::clamp(share * cycleSteps - double(chunks), 0.0, decodes);
    row.tpotS = decodes > 0 ? (mixedBeside * mixedS + (decodes - mixedBeside) * row.stepS) / decodes
                            : stepS;
    row.requestS = row.ttftS + decodes * row.tpotS;
    const double tokensPerStep = requestsPerStep * double(generated);
    row.tokensPerSPerGpu = tokensPerStep / (stepS * gpus);
    row.requestsPerS = double(row.replicas) * requestsPerStep / stepS;
    row.haveEnergy = row.haveEnergy && mixedEnergy;
    if (row.haveEnergy)
    {
        const double perStepJ = stepJ + row.idleW * stepS;
        row.energyPerTokenJ = perStepJ / tokensPerStep;
        row.avgPowerW = perStepJ / (stepS * gpus);
    }
}

uint32_t
ServingStudy::TokenBudget(const ResolvedJob& job) const
{
    if (m_space.tokenBudget > 0)
    {
        // The tokens a prefill computes: a cached prefix is not.
        const uint32_t computed = job.run.promptTokens - job.run.cachedPrefix;
        if (GetBatching() == Batching::CONTINUOUS && m_space.tokenBudget < computed)
        {
            // Without chunks a prompt is prefilled in one iteration: vLLM before V1 refuses a
            // max_num_batched_tokens below max_model_len for that reason (SchedulerConfig).
            throw SpecError(kCommandLine,
                            "token-budget",
                            std::to_string(m_space.tokenBudget) + " prompt tokens an iteration "
                                + "is less than one prompt of " + std::to_string(computed)
                                + " computed tokens, which continuous batching prefills whole; "
                                + "give at least " + std::to_string(computed)
                                + ", or --batching=chunked to prefill prompts in pieces");
        }
        return m_space.tokenBudget;
    }
    if (GetBatching() != Batching::CHUNKED)
    {
        // Prefill iterations: lmdeploy's TurbomindEngineConfig.max_prefill_token_num; vLLM's
        // SchedulerConfig before V1 (chunked prefill off): max(max_model_len, 2048), where
        // max_model_len holds the request (a deployment serving 131k-token prompts sets it so;
        // the model's own 8,192 left them in one iteration beyond the budget).
        const uint32_t request = job.run.promptTokens + job.run.generatedTokens;
        return job.run.engine == "lmdeploy"
                   ? 8192
                   : std::max<uint32_t>({job.model.maxSequence, request, 2048});
    }
    return VllmDefaultTokenBudget(job.hardware.gpu);
}

ServingStudy::PrefillLayouts
ServingStudy::PrefillJobs(const std::vector<ServingRow>& rows) const
{
    PrefillLayouts prefills;
    for (const auto& [layout, p] : PrefillRows(rows))
    {
        prefills.emplace(layout, std::make_pair(p, m_options.at(p.layout).ToSpecs()));
    }
    return prefills;
}

std::optional<ServingRow>
ServingStudy::PlaceSet(const ServingRow& r,
                       const ResolvedJob& decode,
                       const ServingRow& p,
                       const ResolvedJob& prefill,
                       uint64_t x,
                       uint64_t y,
                       bool copies) const
{
    const double generated = decode.run.generatedTokens;
    const double steps = generated - 1;
    const std::optional<DisaggregatedPlacement> at = DisaggregatedPlacement::Place(
        prefill.run.parallel.Gpus(), decode.run.parallel.Gpus(), x, y, m_space.gpus, copies);
    if (!at)
    {
        return std::nullopt;
    }
    // The budget holds `units` copies of this set of instances (or the set alone).
    const uint64_t units = at->sets;
    const uint64_t used = at->Used() / units;
    // A request's prefill and decode instances are dealt apart: its transfer is the mean over
    // the pairs.
    const double kvS = Handovers(decode).Mean(p.layout, r.layout, prefill, decode, *at);
    const double cycleS = steps * r.stepS + kvS;
    // Of one set: the decode instances' finishing, at most the prefill instances' admitting
    // (consecutive prompts pipeline through the prefill stages).
    const double requestsPerS =
        std::min(y * r.batch / cycleS, x * prefill.run.parallel.pp / p.prefillS);
    ServingRow set = r;
    set.prefillTp = p.tp;
    set.prefillPp = p.pp;
    set.sets = static_cast<uint32_t>(units);
    set.prefillInstances = static_cast<uint32_t>(units * x);
    set.replicas = static_cast<uint32_t>(units * y);
    set.gpusUsed = static_cast<uint32_t>(units * used);
    set.kvTransferS = kvS;
    set.ttftS = p.prefillS;
    set.tpotS = cycleS / steps;
    set.requestS = p.prefillS + cycleS;
    set.requestsPerS = double(units) * requestsPerS;
    set.tokensPerSPerGpu = requestsPerS * generated / used;
    set.haveEnergy = r.haveEnergy && p.haveEnergy;
    if (set.haveEnergy)
    {
        // Every board's idle power, each prefill's and each decode step's own energy.
        const double powerW =
            x * p.idleW + y * r.idleW + requestsPerS * p.prefillJ + y * r.stepJ / r.stepS;
        set.energyPerTokenJ = powerW / (requestsPerS * generated);
        set.avgPowerW = powerW / used;
    }
    return set;
}

void
ServingStudy::Pair(std::vector<ServingRow>& rows) const
{
    if (GetBatching() != Batching::DISAGGREGATED)
    {
        return;
    }
    const double steps = FirstJob().run.generatedTokens - 1.0;
    const PrefillLayouts prefills = PrefillJobs(rows);
    for (auto& r : rows)
    {
        if (!r.fits)
        {
            continue;
        }
        const ResolvedJob decode = m_options.at(r.layout).ToSpecs();
        // A decode instance's demand, requests/s (the KV transfer only lowers it).
        const double decodeRate = r.batch / (steps * r.stepS);
        bool found = false;
        bool bestMeets = false;
        ServingRow best = r;
        for (const auto& [layout, candidate] : prefills)
        {
            const auto& [p, prefill] = candidate;
            if (std::get<0>(layout) != r.Variant())
            {
                continue; // a request's KV cache stays on its hardware, in its precision
            }
            // Consecutive prompts pipeline through the prefill stages.
            const double prefillRate = prefill.run.parallel.pp / p.prefillS;
            const bool meets = m_space.ttftSloS <= 0 || p.prefillS <= m_space.ttftSloS;
            for (uint64_t y = 1;; ++y)
            {
                // Just enough prefill instances to admit what the decode instances finish: at
                // most as many as their rate without the KV handover needs, fewer where the
                // handover of the placement slows them (128k-token prompts of Llama-3 8B, 0.17 s
                // handovers over 63 steps of 12 ms: 12 prefill instances keep up, not 14).
                const auto most =
                    static_cast<uint64_t>(std::ceil(y * decodeRate / prefillRate - 1e-9));
                std::optional<ServingRow> set;
                for (uint64_t x = 1; x <= most; ++x)
                {
                    set = PlaceSet(r, decode, p, prefill, x, y, true);
                    if (!set)
                    {
                        break; // more prefill instances do not fit either
                    }
                    const double finishing = y * r.batch / (steps * r.stepS + set->kvTransferS);
                    if (double(x) * prefillRate >= finishing * (1 - 1e-9))
                    {
                        break;
                    }
                    set.reset();
                }
                if (!set)
                {
                    break;
                }
                if (found
                    && ((bestMeets && !meets)
                        || (bestMeets == meets && set->tokensPerSPerGpu <= best.tokensPerSPerGpu)))
                {
                    continue;
                }
                found = true;
                bestMeets = meets;
                best = *set;
            }
        }
        if (!found)
        {
            r.fits = false;
            r.reason = prefills.empty()
                           ? "no layout of the lists holds one request's prefill"
                           : "no set of prefill instances that keeps up with a decode instance of "
                             "this layout fits beside it in the "
                                 + std::to_string(m_space.gpus) + " GPUs";
            continue;
        }
        r = best;
    }
}

uint32_t
SteadyRequests(const ServingRow& r)
{
    const double perReplica = std::max(100.0, 10.0 * r.batch);
    return static_cast<uint32_t>(std::min(double(UINT32_MAX), perReplica * r.replicas * r.dp));
}

uint32_t
ServingStudy::SimulatedRequests(const ServingRow& r) const
{
    if (!m_space.trace.requests.empty())
    {
        return static_cast<uint32_t>(m_space.trace.requests.size());
    }
    if (m_space.requests > 0)
    {
        return m_space.requests;
    }
    // (The simulation's time grows with the requests: beyond 50,000 a goodput search of a
    // 64-GPU study takes minutes.)
    return std::clamp<uint32_t>(SteadyRequests(r), kBenchmarkServingRequests, 50000);
}

std::vector<QueueRequest>
ServingStudy::UnitRequests(uint32_t count) const
{
    std::vector<QueueRequest> requests;
    const ResolvedJob first = FirstJob();
    const RunSpec& run = first.run;
    if (!m_space.trace.requests.empty())
    {
        // The recorded times at one request per second on average.
        requests = m_space.trace.requests;
        const double rate = m_space.trace.RateRps();
        for (auto& r : requests)
        {
            r.arrivalS *= rate;
        }
    }
    else
    {
        const std::vector<double> arrivals =
            GammaArrivals(1, m_space.burstiness, count, m_space.seed);
        requests.resize(arrivals.size());
        for (std::size_t i = 0; i < arrivals.size(); ++i)
        {
            requests[i].arrivalS = arrivals[i];
        }
        if (m_space.spread > 0)
        {
            // Their own stream, so that the arrivals do not depend on the spread.
            DrawLengths(requests,
                        run.promptTokens,
                        run.generatedTokens,
                        m_space.spread,
                        m_space.seed ^ 0x9e3779b97f4a7c15ull);
        }
    }
    if (m_space.prefixes > 0)
    {
        // Each request's group from a stream of its own; its whole prompt computed unless its
        // instance holds the group's prefix (SimulateInstances, SimulatePrefillPool).
        DrawPrefixGroups(requests,
                         m_space.prefixes,
                         m_space.prefixSkew,
                         run.promptTokens,
                         m_space.seed ^ 0xbb67ae8584caa73bull);
    }
    if (m_space.prefixHit < 1)
    {
        // A stream of their own too.
        DrawPrefixHits(requests,
                       m_space.prefixHit,
                       m_prefixTokens,
                       run.promptTokens,
                       m_space.seed ^ 0x6a09e667f3bcc909ull);
    }
    return requests;
}

uint32_t
ServingStudy::PrefixCapacity(double kvTokens, uint32_t slots, double slotTokens) const
{
    if (kvTokens <= 0 || m_prefixTokens == 0)
    {
        return 0;
    }
    const double spare = std::max(0.0, kvTokens - slots * slotTokens);
    return slots + static_cast<uint32_t>(std::floor(spare / m_prefixTokens));
}

std::vector<QueueRequest>
ServingStudy::ArrivingAt(const ResolvedJob& job,
                         double rate,
                         const std::vector<QueueRequest>& unit,
                         std::vector<double>* kvShare) const
{
    std::vector<QueueRequest> requests = unit;
    // The queue's clock is absolute seconds in a double: beyond 1e11 s it no longer resolves a
    // latency's microseconds (at 1e15 s a tenth of a second), and every latency would read 0.
    const double spanS = requests.empty() ? 0 : requests.back().arrivalS / rate;
    if (spanS > 1e11)
    {
        throw SpecError(kCommandLine,
                        "rate",
                        "a rate of " + FormatNumber(rate) + " requests/s spreads "
                            + std::to_string(requests.size()) + " requests over "
                            + FormatNumber(spanS)
                            + " s, beyond the 1e11 s whose microseconds the simulation resolves; "
                              "give a rate of at least "
                            + FormatNumber(requests.back().arrivalS / 1e11) + " requests/s");
    }
    // A prefill computes the prompt after the cached prefix (all but one token of a request's
    // own prompt at most); its KV cache is the whole prompt's.
    const uint32_t cached = job.run.cachedPrefix;
    kvShare->assign(requests.size(), 1.0);
    for (std::size_t i = 0; i < requests.size(); ++i)
    {
        QueueRequest& q = requests[i];
        q.arrivalS /= rate;
        if (q.prompt > 0)
        {
            // A trace's own cached tokens or a drawn hit's, else the job's prefix.
            const uint32_t c =
                m_space.trace.hasCached || m_space.prefixHit < 1 || m_space.prefixes > 0 ? q.cached
                                                                                         : cached;
            (*kvShare)[i] = double(q.prompt) / job.run.promptTokens;
            const uint32_t computed = q.prompt > c + 1 ? q.prompt - c : 1;
            q.cached = q.prompt - computed;
            q.prompt = computed;
        }
    }
    return requests;
}

double
ServingStudy::ArrivalsCapacity(const ServingRow& r,
                               const ResolvedJob& job,
                               const std::vector<QueueRequest>& unit) const
{
    // A request's work at the job's lengths in two parts: its share of the decode steps (G - 1
    // plain steps, of the time it spends in the engine, its first token and G - 1 steps
    // between tokens) and the rest, its prefill's (and the pauses it makes in the others'
    // steps). The arrivals' mean lengths scale the first by the tokens they generate, the
    // second by their prompts.
    const double steps = job.run.generatedTokens - 1.0;
    const double residence = r.ttftS + steps * r.tpotS;
    if (unit.empty() || !(residence > 0))
    {
        return r.requestsPerS;
    }
    // (The whole prompts: which prefixes the requests find is the simulation's.)
    const double longer = (MeanGenerated(unit, job.run.generatedTokens) - 1) / steps;
    const double longerPrompt =
        MeanLength(unit, &QueueRequest::prompt, job.run.promptTokens) / job.run.promptTokens;
    if (longer == 1 && longerPrompt == 1)
    {
        return r.requestsPerS;
    }
    const double decoding =
        std::clamp(steps * (r.stepS > 0 ? r.stepS : r.tpotS) / residence, 0.0, 1.0);
    const double work = decoding * longer + (1 - decoding) * longerPrompt;
    return work > 0 ? r.requestsPerS / work : r.requestsPerS;
}

double
ServingStudy::PrefillPool(const ResolvedJob& job,
                          const ServingRow& prefill,
                          uint32_t instances,
                          std::vector<QueueRequest>& requests,
                          std::vector<uint32_t>& prefillOf) const
{
    return SimulatePrefillPool(instances,
                               prefill.pp,
                               prefill.prefillCurve,
                               job.run.promptTokens - job.run.cachedPrefix,
                               TokenBudget(job),
                               requests,
                               &prefillOf,
                               m_space.prefixes > 0 ? m_prefixTokens : 0,
                               PrefixCapacity(prefill.kvTokens, 1, TokenBudget(job)),
                               m_space.router == QueueRouter::CACHE_AWARE);
}

double
ServingStudy::PrefillAttainment(const ResolvedJob& job,
                                const ServingRow& prefill,
                                uint32_t instances,
                                const std::vector<QueueRequest>& unit) const
{
    std::vector<double> kvShare;
    std::vector<QueueRequest> requests = ArrivingAt(job, m_space.rateRps, unit, &kvShare);
    std::vector<uint32_t> prefillOf;
    PrefillPool(job, prefill, instances, requests, prefillOf);
    const auto within = std::count_if(requests.begin(),
                                      requests.end(),
                                      [this](const QueueRequest& q)
                                      {
                                          return m_space.ttftSloS <= 0
                                                 || q.firstTokenS - q.arrivalS <= m_space.ttftSloS;
                                      });
    return double(within) / double(requests.size());
}

QueueEngine
ServingStudy::EngineOf(const ServingRow& r, const ResolvedJob& job) const
{
    const uint32_t cached = job.run.cachedPrefix;
    QueueEngine engine;
    engine.slots = r.batch;
    engine.generated = job.run.generatedTokens;
    engine.prompt = job.run.promptTokens - cached;
    engine.cached = cached;
    engine.kvTokens = r.kvTokens;
    engine.kvShared = job.run.sharedPrefix ? cached : 0;
    engine.step = r.stepCurve;
    engine.replicas = job.run.parallel.dp;
    // vLLM's API server deals a request to the data-parallel rank with the fewest running and
    // waiting (docs/serving/data_parallel_deployment.md, "Internal Load Balancing"); the
    // others' in turn.
    engine.replicaRouter =
        job.run.engine == "vllm" ? QueueRouter::LEAST_OUTSTANDING : QueueRouter::ROUND_ROBIN;
    switch (GetBatching())
    {
        case Batching::CHUNKED:
            engine.chunked = true;
            engine.tokenBudget = TokenBudget(job);
            engine.chunkTokenS = r.chunkTokenS;
            engine.chunkTokenJ = r.chunkTokenJ;
            // chunkTokenS is a token's share of a mixed step with chunks in each batch in
            // flight (EvaluateChunked); a prompt's piece in one of them passes every stage.
            engine.chunkBatches = job.run.InflightBatches();
            break;
        case Batching::STATIC:
            engine.wholeBatches = true;
            engine.prefill = r.prefillCurve;
            engine.batchDelayS = m_space.batchDelayS;
            break;
        case Batching::CONTINUOUS:
            engine.prefill = r.prefillCurve;
            engine.prefillHeld = 1.0 / job.run.InflightBatches();
            engine.tokenBudget = TokenBudget(job);
            break;
        default: // a disaggregated decode instance: its prompts prefilled elsewhere
            break;
    }
    // vLLM admits a request on what it holds and preempts when the cache fills, continuous or
    // chunked; other engines, static batches and decode instances reserve whole lengths.
    engine.preempt = job.run.engine == "vllm";
    if (m_space.prefixes > 0)
    {
        // Its prefix cache (disaggregated, the prefill pool's caches decide what a prefill
        // computes, and a decode instance's what its KV transfer carries).
        engine.prefixTokens = m_prefixTokens;
        engine.prefixCapacity = PrefixCapacity(
            r.kvTokens, r.batch, double(job.run.promptTokens) + job.run.generatedTokens);
    }
    return engine;
}

bool
ServingStudy::AdmitsOnHeld(const ResolvedJob& job) const
{
    return job.run.engine == "vllm"
           && (GetBatching() == Batching::CONTINUOUS || GetBatching() == Batching::CHUNKED);
}

ServingRow
ServingStudy::Saturated(const ServingRow& row) const
{
    ServingRow saturated = row;
    FillSaturated(m_options.at(row.layout).ToSpecs(), saturated);
    return saturated;
}

void
ServingStudy::FillSaturated(const ResolvedJob& job, ServingRow& row) const
{
    // One instance at the job's lengths under arrivals faster than it serves, so that a request
    // always waits (a closed loop: a finished request's slot is taken as soon as the cache has
    // room) and the slots fill staggered as in the steady state (identical requests started
    // together would stay in lockstep): evenly spaced arrivals at 1.2 x the analytic capacity of
    // the whole batch, then at 1.2 x what that run sustained.
    // Enough requests that the measured window spans many turns of the requests in flight (at
    // most the slots, and as many as the cache holds at a request's mean length, its prompt and
    // half its generation): preemption comes in waves, and 100 turns hold the figures to about
    // 0.5% (Llama-2 7B on an A100-40GB at 64 in flight; Llama-3 8B on an H100 at 4,096, chunked).
    const double shared = job.run.sharedPrefix ? job.run.cachedPrefix : 0;
    const double meanTokens =
        job.run.promptTokens - shared + 1 + 0.5 * (double(job.run.generatedTokens) - 1);
    const double held =
        std::min<double>(row.batch, row.kvTokens > 0 ? row.kvTokens / meanTokens : row.batch)
        * job.run.parallel.dp;
    const auto n = static_cast<uint32_t>(std::clamp<double>(
        100 * std::ceil(held),
        m_space.requests > 0 ? std::max<uint32_t>(m_space.requests, 8) : kBenchmarkServingRequests,
        2e5));
    const double generated = job.run.generatedTokens;
    const double gpus = job.run.parallel.Gpus();
    // With prefix groups the requests go to them in turn (EngineOf).
    const QueueEngine engine = EngineOf(row, job);
    struct Saturation
    {
        double perS = 0; //!< requests per second finished in the steady state
        double ttftS = 0;
        double tpotS = 0;
        double joulesPerToken = 0; //!< the iterations' dynamic energy per generated token
        double residenceS = 0;     //!< from a request's admission to its last token, in flight
    };
    auto saturate = [&](double rate)
    {
        std::vector<double> ready(n);
        std::vector<QueueRequest> requests(n);
        std::vector<QueueRequest*> all;
        for (uint32_t i = 0; i < n; ++i)
        {
            ready[i] = double(i) / rate;
            requests[i].arrivalS = ready[i];
            if (engine.prefixTokens > 0)
            {
                requests[i].prefix = 1 + i % m_space.prefixes;
                requests[i].prompt = job.run.promptTokens;
            }
            all.push_back(&requests[i]);
        }
        const double joules =
            SimulateInstances(engine, 1, QueueRouter::ROUND_ROBIN, ready, all).front();
        // The steady state: the requests finishing between the first and the last eighth (the
        // queue never empties before the last few turns: arrivals outpace the finishes).
        std::vector<const QueueRequest*> byFinish;
        for (const QueueRequest& q : requests)
        {
            byFinish.push_back(&q);
        }
        std::sort(byFinish.begin(),
                  byFinish.end(),
                  [](const QueueRequest* a, const QueueRequest* b)
                  {
                      return a->finishS < b->finishS;
                  });
        const uint32_t first = n / 8;
        const uint32_t last = n - 1 - n / 8;
        Saturation got;
        got.perS = double(last - first) / (byFinish[last]->finishS - byFinish[first]->finishS);
        for (uint32_t k = first + 1; k <= last; ++k)
        {
            // From its admission (its prefill or chunks, not its wait).
            const QueueRequest& q = *byFinish[k];
            got.ttftS += (q.firstTokenS - q.admittedS) / double(last - first);
            got.residenceS += (q.finishS - q.admittedS - q.preemptedS) / double(last - first);
            got.tpotS += generated > 1
                             ? (q.finishS - q.firstTokenS) / (generated - 1) / double(last - first)
                             : 0;
        }
        got.joulesPerToken = joules / (double(n) * generated);
        return got;
    };
    const double analytic = row.requestsPerS / double(row.replicas);
    const Saturation s = saturate(1.2 * saturate(1.2 * analytic).perS);
    row.ttftS = s.ttftS;
    row.tpotS = s.tpotS;
    row.requestS = row.ttftS + (generated - 1) * row.tpotS;
    row.tokensPerSPerGpu = s.perS * generated / gpus;
    row.requestsPerS = double(row.replicas) * s.perS;
    // Little's law (a preempted request's time out of the cache left out), per attention
    // replica as the batch and kvWhole count; the window's rate and times are sampled, so the
    // estimate is held to the slots there are (it read 20.000998 for 20).
    row.kvInFlight = std::min(double(row.batch), s.perS * s.residenceS / job.run.parallel.dp);
    if (row.haveEnergy)
    {
        // The work's own energy and the boards' idle power over the steady state's time a token.
        row.energyPerTokenJ = s.joulesPerToken + row.idleW / (s.perS * generated);
        row.avgPowerW = row.energyPerTokenJ * s.perS * generated / gpus;
    }
}

ServingLoad
ServingStudy::LoadAt(const ServingRow& r,
                     const ResolvedJob& job,
                     const ServingRow* prefill,
                     double rate,
                     const std::vector<QueueRequest>& unit) const
{
    const uint32_t generated = job.run.generatedTokens;
    const bool disaggregated = GetBatching() == Batching::DISAGGREGATED;
    const uint32_t gpus =
        disaggregated ? r.gpusUsed : r.replicas * static_cast<uint32_t>(job.run.parallel.Gpus());
    ServingLoad load;
    load.rateRps = rate;
    load.requests = static_cast<uint32_t>(unit.size());
    // The arrivals' own generated tokens (a trace's lengths), which the simulation generates.
    const double capacity = ArrivalsCapacity(r, job, unit);
    load.utilization = rate / capacity;
    // Poisson arrivals at or past the capacity queue without end. A recorded trace is finite:
    // its queue drains after its last arrival, so it is simulated whatever its rate (three
    // requests a static batch of 16 holds were declared to grow without end).
    load.overloaded = load.utilization >= 1 && m_space.trace.requests.empty();
    // What the replicas deliver: the offered load up to their capacity (beyond it the queue
    // grows, and they generate at their capacity's rate).
    load.tokensPerSPerGpu = std::min(rate, capacity) * MeanGenerated(unit, generated) / gpus;
    if (load.overloaded)
    {
        return load;
    }
    std::vector<double> kvShare;
    std::vector<QueueRequest> requests = ArrivingAt(job, rate, unit, &kvShare);
    uint64_t tokens = 0; // the tokens they generate
    for (const QueueRequest& q : requests)
    {
        tokens += q.generated > 0 ? q.generated : generated;
    }
    // Disaggregated: each request's prefill instance and KV-cache transfer alone to a decode
    // instance.
    std::vector<uint32_t> prefillOf;
    std::function<double(std::size_t, uint32_t)> transfer;
    std::optional<ResolvedJob> prefillJob;
    const QueueEngine engine = EngineOf(r, job);
    double joules = 0;
    double idleW = r.replicas * r.idleW;
    bool energy = r.haveEnergy;
    if (disaggregated)
    {
        if (prefill == nullptr)
        {
            throw std::logic_error("a disaggregated row loaded without its prefill layout");
        }
        // The prefill pool, then each request's KV cache crosses to its decode instance (the
        // router's), one at a time out of a prefill instance and into a decode instance, each
        // in proportion to its prompt, taking the time of its two instances' places.
        joules += PrefillPool(job, *prefill, r.prefillInstances, requests, prefillOf);
        prefillJob = m_options.at(prefill->layout).ToSpecs();
        DisaggregatedPlacement at = *DisaggregatedPlacement::Place(prefillJob->run.parallel.Gpus(),
                                                                   job.run.parallel.Gpus(),
                                                                   r.prefillInstances / r.sets,
                                                                   r.replicas / r.sets,
                                                                   m_space.gpus,
                                                                   false);
        at.sets = r.sets;
        KvHandoverTimes& handovers = Handovers(job);
        transfer = [&, at, layout = prefill->layout](std::size_t i, uint32_t k)
        {
            return kvShare[i]
                   * handovers.Between(layout,
                                       r.layout,
                                       *prefillJob,
                                       job,
                                       at.PrefillFirst(prefillOf[i]),
                                       at.DecodeFirst(k));
        };
        idleW += r.prefillInstances * prefill->idleW;
        energy = energy && prefill->haveEnergy;
    }
    // The requests dealt to the instances by the router (disaggregated: as their prefills end).
    std::vector<double> instanceJ;
    uint64_t decodeHits = 0; // (disaggregated with prefix groups)
    if (disaggregated)
    {
        // Cache-aware, the prompts go where their prefixes are and the decodes to the least
        // outstanding (whose own prefix caches then spare the transfers what they hold).
        instanceJ = SimulateDecodeInstances(engine,
                                            r.replicas,
                                            m_space.router == QueueRouter::CACHE_AWARE
                                                ? QueueRouter::LEAST_OUTSTANDING
                                                : m_space.router,
                                            prefillOf,
                                            transfer,
                                            requests,
                                            &decodeHits);
    }
    else
    {
        std::vector<double> ready(requests.size());
        std::vector<QueueRequest*> all(requests.size());
        for (std::size_t i = 0; i < requests.size(); ++i)
        {
            ready[i] = requests[i].arrivalS;
            all[i] = &requests[i];
        }
        instanceJ = SimulateInstances(engine, r.replicas, m_space.router, ready, all);
    }
    for (const double j : instanceJ)
    {
        joules += j;
    }
    load.summary = SummarizeQueue(requests, generated, m_space.ttftSloS, m_space.tpotSloS);
    if (m_space.prefixes > 0)
    {
        const auto hits = std::count_if(requests.begin(),
                                        requests.end(),
                                        [](const QueueRequest& q)
                                        {
                                            return q.cached > 0;
                                        });
        load.prefixHitShare = double(hits) / double(requests.size());
        if (disaggregated)
        {
            load.decodePrefixHitShare = double(decodeHits) / double(requests.size());
        }
    }
    load.haveEnergy = energy;
    if (energy && tokens > 0)
    {
        // The steady state at the offered rate, as the row's tokens per second are: the work's
        // own energy per token, and every board's idle power shared by the tokens delivered per
        // second (not over the sample's span, whose ramp and drain run below the rate). Power is
        // then energy per token at that rate, so the three figures agree.
        const double tokensPerS = load.tokensPerSPerGpu * gpus;
        load.energyPerTokenJ = joules / double(tokens) + idleW / tokensPerS;
        load.avgPowerW = load.energyPerTokenJ * load.tokensPerSPerGpu;
    }
    return load;
}

void
ServingStudy::Load(std::vector<ServingRow>& rows,
                   const std::function<void(std::size_t, std::size_t)>& progress) const
{
    if (m_space.rateRps <= 0 && !m_space.goodput)
    {
        return;
    }
    const auto toLoad = static_cast<std::size_t>(std::count_if(rows.begin(),
                                                               rows.end(),
                                                               [](const ServingRow& r)
                                                               {
                                                                   return r.fits;
                                                               }));
    std::size_t loaded = 0;
    const std::map<ServingPrefillKey, ServingRow> prefills = PrefillRows(rows);
    const bool disaggregated = GetBatching() == Batching::DISAGGREGATED;
    const PrefillLayouts prefillJobs =
        m_space.size && disaggregated ? PrefillJobs(rows) : PrefillLayouts{};
    std::map<uint32_t, std::vector<QueueRequest>> units; // count -> the arrivals drawn
    for (auto& r : rows)
    {
        if (!r.fits)
        {
            continue;
        }
        // Arrivals at one request per second; a rate divides them (the same draws at every
        // rate). Drawn once for each count the rows simulate.
        const uint32_t count = SimulatedRequests(r);
        auto drawn = units.find(count);
        if (drawn == units.end())
        {
            drawn = units.emplace(count, UnitRequests(count)).first;
        }
        const std::vector<QueueRequest>& unit = drawn->second;
        const ServingRow* prefill = PrefillOf(prefills, r);
        if (progress && loaded > 0)
        {
            progress(loaded, toLoad); // the row before this one is done
        }
        ++loaded;
        const ResolvedJob job = m_options.at(r.layout).ToSpecs();
        r.loaded = true;
        if (m_space.size && disaggregated)
        {
            SizeDisaggregated(r, job, prefillJobs, unit);
            continue;
        }
        if (m_space.size)
        {
            Size(r, job, unit);
            continue;
        }
        if (!m_space.goodput)
        {
            r.load = LoadAt(r, job, prefill, m_space.rateRps, unit);
            continue;
        }
        // Goodput: bisection on the rate between a light load and the capacity for the highest
        // rate whose attainment meets the space's (0 when a light load already misses it).
        auto meets = [this](const ServingLoad& l)
        {
            return MeetsAttainment(l, m_space);
        };
        const double capacity = ArrivalsCapacity(r, job, unit);
        double low = capacity * 1e-3;
        ServingLoad best = LoadAt(r, job, prefill, low, unit);
        if (!meets(best))
        {
            // Shown at the light load, which says why.
            r.load = best;
            r.load.goodputRps = 0;
            r.load.tokensPerSPerGpu = 0;
            continue;
        }
        double high = capacity;
        while ((high - low) > 1e-3 * high)
        {
            const double mid = (low + high) / 2;
            ServingLoad l = LoadAt(r, job, prefill, mid, unit);
            if (meets(l))
            {
                low = mid;
                best = l;
            }
            else
            {
                high = mid;
            }
        }
        r.load = best;
        r.load.goodputRps = low;
    }
    if (progress && loaded > 0)
    {
        progress(loaded, toLoad);
    }
}

void
ServingStudy::Size(ServingRow& r,
                   const ResolvedJob& job,
                   const std::vector<QueueRequest>& unit) const
{
    // The row with n instances: each the same, the capacity in proportion.
    const uint32_t most = r.replicas;
    const double perInstance = r.requestsPerS / most;
    auto with = [&](uint32_t n)
    {
        ServingRow sized = r;
        sized.replicas = n;
        sized.requestsPerS = perInstance * n;
        sized.load = LoadAt(sized, job, nullptr, m_space.rateRps, unit);
        return sized;
    };
    auto meets = [this](const ServingRow& sized)
    {
        return MeetsAttainment(sized.load, m_space);
    };
    // Below the capacity's count the queue grows without end; the whole budget first (shown
    // where even it misses), then bisection on the count (more instances, fewer requests each).
    const double perInstanceArriving = ArrivalsCapacity(r, job, unit) / most;
    const auto fewest = static_cast<uint32_t>(
        std::min<double>(most, std::floor(m_space.rateRps / perInstanceArriving) + 1));
    ServingRow best = with(most);
    if (meets(best))
    {
        uint32_t low = fewest - 1; // misses (or none)
        uint32_t high = most;      // meets
        while (high - low > 1)
        {
            const uint32_t mid = low + (high - low) / 2;
            ServingRow sized = with(mid);
            if (meets(sized))
            {
                high = mid;
                best = std::move(sized);
            }
            else
            {
                low = mid;
            }
        }
    }
    r = std::move(best);
}

void
ServingStudy::SizeDisaggregated(ServingRow& r,
                                const ResolvedJob& job,
                                const PrefillLayouts& prefills,
                                const std::vector<QueueRequest>& unit) const
{
    const double rate = m_space.rateRps;
    auto loaded = [&](ServingRow set, const ServingRow& prefill)
    {
        set.load = LoadAt(set, job, &prefill, rate, unit);
        return set;
    };
    auto meets = [this](const ServingRow& set)
    {
        return MeetsAttainment(set.load, m_space);
    };
    const uint64_t decodeGpus = job.run.parallel.Gpus();
    // Fewer decode instances than this cannot keep up with the rate, even without the KV
    // transfer.
    const auto fewestDecode = static_cast<uint64_t>(
        std::floor(rate * (MeanGenerated(unit, job.run.generatedTokens) - 1.0) * r.stepS / r.batch)
        + 1);
    std::optional<ServingRow> best;
    // A set must take fewer GPUs than this: the budget's, then the best's.
    auto bound = [&]
    {
        return best ? uint64_t(best->gpusUsed) : uint64_t(m_space.gpus) + 1;
    };
    for (const auto& [layout, candidate] : prefills)
    {
        const auto& [p, prefill] = candidate;
        if (std::get<0>(layout) != r.Variant())
        {
            continue; // as Pair: prefill instances of the decode row's variant
        }
        const uint64_t prefillGpus = prefill.run.parallel.Gpus();
        // Fewer prefill instances than this are below the rate at the study's prefill capacity
        // (a prompt at a time a stage, as Pair counts it, where a set's load is overloaded); the
        // most leave the fewest decode instances room under the bound.
        uint64_t x =
            static_cast<uint64_t>(std::floor(rate * p.prefillS / prefill.run.parallel.pp)) + 1;
        auto mostPrefill = [&]
        {
            const uint64_t room = bound() - 1;
            return room < fewestDecode * decodeGpus
                       ? 0
                       : (room - fewestDecode * decodeGpus) / prefillGpus;
        };
        if (x > mostPrefill() || !Attains(PrefillAttainment(job, p, mostPrefill(), unit), m_space))
        {
            continue; // even the most prefill instances miss the first-token target
        }
        // The fewest whose first tokens meet it (bisection: more instances, less queueing).
        for (uint64_t high = mostPrefill(); high > x;)
        {
            const uint64_t mid = x + (high - x) / 2;
            if (Attains(PrefillAttainment(job, p, mid, unit), m_space))
            {
                high = mid;
            }
            else
            {
                x = mid + 1;
            }
        }
        // More prefill instances take the decode instances' room: x grows while a set of it
        // can still take fewer GPUs than the bound.
        for (; x <= mostPrefill(); ++x)
        {
            auto with = [&](uint64_t y) -> std::optional<ServingRow>
            {
                std::optional<ServingRow> set = PlaceSet(r, job, p, prefill, x, y, false);
                if (set)
                {
                    set = loaded(*set, p);
                }
                return set;
            };
            // The most decode instances beside x under the bound that fit the budget.
            uint64_t high = (bound() - 1 - x * prefillGpus) / decodeGpus;
            std::optional<ServingRow> found = with(high);
            while (!found && high > fewestDecode)
            {
                found = with(--high);
            }
            if (!found || found->load.overloaded
                || !Attains(found->load.summary.tpotAttainment, m_space))
            {
                break; // a larger x leaves fewer decode instances, which miss too
            }
            if (!meets(*found))
            {
                continue; // each target alone met, not both: more prefill instances
            }
            // Bisection on the decode instances (more of them, fewer requests each).
            uint64_t low = fewestDecode - 1; // misses (or none)
            while (high - low > 1)
            {
                const uint64_t mid = low + (high - low) / 2;
                std::optional<ServingRow> set = with(mid);
                if (set && meets(*set))
                {
                    high = mid;
                    found = std::move(set);
                }
                else
                {
                    low = mid;
                }
            }
            best = std::move(found);
        }
    }
    // Where no set meets the targets, the whole budget's pairing shows why.
    r = best ? std::move(*best)
             : loaded(r,
                      prefills.at(ServingPrefillKey(r.Variant(), r.prefillTp, r.prefillPp)).first);
}

std::vector<double>
ServingStudy::Attainment(const std::vector<ServingRow>& rows,
                         const ServingRow& row,
                         const std::vector<double>& rates) const
{
    const std::map<ServingPrefillKey, ServingRow> prefills = PrefillRows(rows);
    const std::vector<QueueRequest> unit = UnitRequests(SimulatedRequests(row));
    const ServingRow* prefill = PrefillOf(prefills, row);
    const ResolvedJob job = m_options.at(row.layout).ToSpecs();
    std::vector<double> attainment;
    for (double rate : rates)
    {
        const ServingLoad l = LoadAt(row, job, prefill, rate, unit);
        attainment.push_back(l.overloaded ? 0 : l.summary.attainment);
    }
    return attainment;
}

std::vector<ServingRow>
ServingStudy::Run() const
{
    std::vector<ServingRow> rows;
    for (uint64_t i = 0; i < m_options.size(); ++i)
    {
        rows.push_back(Evaluate(i));
    }
    Pair(rows);
    Load(rows);
    RankServingRows(rows, m_space);
    return rows;
}

void
RankServingRows(std::vector<ServingRow>& rows, const ServingSpace& space)
{
    for (auto& r : rows)
    {
        r.meetsSlo = r.loaded ? r.load.goodputRps != 0 && MeetsAttainment(r.load, space)
                              : r.fits && (space.tpotSloS <= 0 || r.tpotS <= space.tpotSloS)
                                    && (space.ttftSloS <= 0 || r.ttftS <= space.ttftSloS);
        r.frontier = OnFrontier(r, rows, false);
    }
    auto group = [](const ServingRow& r)
    {
        return r.meetsSlo ? 0 : r.fits ? 1 : 2;
    };
    std::sort(rows.begin(),
              rows.end(),
              [&](const ServingRow& a, const ServingRow& b)
              {
                  if (group(a) != group(b))
                  {
                      return group(a) < group(b);
                  }
                  if (space.size && a.fits && ServingRowGpus(a) != ServingRowGpus(b))
                  {
                      // Sized for the rate: by the GPUs it takes.
                      return ServingRowGpus(a) < ServingRowGpus(b);
                  }
                  if (space.goodput && a.fits && a.load.tokensPerSPerGpu != b.load.tokensPerSPerGpu)
                  {
                      // By goodput per GPU (the rows are loaded at their goodput).
                      return a.load.tokensPerSPerGpu > b.load.tokensPerSPerGpu;
                  }
                  if (a.fits && a.tokensPerSPerGpu != b.tokensPerSPerGpu)
                  {
                      return a.tokensPerSPerGpu > b.tokensPerSPerGpu;
                  }
                  if (!a.fits && a.peakBytes != b.peakBytes)
                  {
                      return a.peakBytes < b.peakBytes;
                  }
                  return a.layout < b.layout;
              });
}

uint64_t
ServingRowGpus(const ServingRow& r)
{
    return r.prefillTp > 0 ? r.gpusUsed : uint64_t(r.replicas) * r.tp * r.pp * r.cp * r.dp;
}

std::string
ServingPlanName(const ServingRow& r)
{
    std::string name = std::to_string(r.replicas) + "x tp" + std::to_string(r.tp)
                       + (r.dp > 1 ? " dp" + std::to_string(r.dp) : "") + " pp"
                       + std::to_string(r.pp);
    if (r.prefillTp > 0)
    {
        name += " + " + std::to_string(r.prefillInstances) + "x tp" + std::to_string(r.prefillTp)
                + " pp" + std::to_string(r.prefillPp);
    }
    return name;
}

std::string
ServingStudyCsv(const std::vector<ServingRow>& rows, bool disaggregated)
{
    const bool loaded = std::any_of(rows.begin(),
                                    rows.end(),
                                    [](const ServingRow& r)
                                    {
                                        return r.loaded;
                                    });
    const bool beyond = std::any_of(rows.begin(),
                                    rows.end(),
                                    [](const ServingRow& r)
                                    {
                                        return r.kvWhole > 0;
                                    });
    std::ostringstream os;
    os << "tp,pp,cp,dp,hardware,engine,dtype,kv_cache_dtype,replicas,batch,fits,meets_slo,frontier,"
          "ttft_s,"
          "tpot_s,"
          "request_s,"
          "tokens_per_s_per_gpu,requests_per_s,energy_per_token_j,avg_power_w,peak_memory_gib,"
          "capacity_gib,reason"
       << (disaggregated ? ",prefill_tp,prefill_pp,prefill_instances,gpus_used,kv_transfer_s,"
                           "prefill_s,decode_step_s"
                         : "")
       << (loaded ? ",rate_per_s,goodput_per_s,load_tokens_per_s_per_gpu,utilization,ttft_p50_s,"
                    "ttft_p90_s,ttft_p99_s,tpot_p50_s,"
                    "tpot_p90_s,tpot_p99_s,slo_attainment,ttft_attainment,tpot_attainment,"
                    "load_energy_per_token_j,load_avg_power_w"
                  : "")
       << (beyond ? ",kv_whole" : "") << "\n";
    for (const auto& r : rows)
    {
        os << r.tp << "," << r.pp << "," << r.cp << "," << r.dp << "," << CsvField(r.hardware)
           << "," << r.engine << "," << r.dtype << "," << r.kvCacheDtype << "," << r.replicas << ","
           << r.batch << "," << (r.fits ? "true" : "false") << ","
           << (r.meetsSlo ? "true" : "false") << "," << (r.frontier ? "true" : "false") << ",";
        if (r.fits)
        {
            os << FormatNumber(r.ttftS) << "," << FormatNumber(r.tpotS) << ","
               << FormatNumber(r.requestS) << "," << FormatNumber(r.tokensPerSPerGpu) << ","
               << FormatNumber(r.requestsPerS) << ","
               << (r.haveEnergy ? FormatNumber(r.energyPerTokenJ) : "") << ","
               << (r.haveEnergy ? FormatNumber(r.avgPowerW) : "") << ",";
        }
        else
        {
            os << ",,,,,,,";
        }
        os << FormatNumber(ToGib(r.peakBytes)) << "," << FormatNumber(ToGib(r.capacityBytes)) << ","
           << CsvField(r.reason);
        if (disaggregated && r.fits)
        {
            os << "," << r.prefillTp << "," << r.prefillPp << "," << r.prefillInstances << ","
               << r.gpusUsed << "," << FormatNumber(r.kvTransferS) << ","
               << FormatNumber(r.prefillS) << "," << FormatNumber(r.stepS);
        }
        else if (disaggregated)
        {
            os << ",,,,,,,";
        }
        if (loaded)
        {
            const ServingLoad& l = r.load;
            const QueueSummary& q = l.summary;
            const bool figures = r.loaded && !l.overloaded;
            os << "," << (r.loaded ? FormatNumber(l.rateRps) : "") << ","
               << (r.loaded && l.goodputRps >= 0 ? FormatNumber(l.goodputRps) : "") << ","
               << (r.loaded ? FormatNumber(l.tokensPerSPerGpu) : "") << ","
               << (r.loaded ? FormatNumber(l.utilization) : "");
            for (double value : {q.ttftP50S,
                                 q.ttftP90S,
                                 q.ttftP99S,
                                 q.tpotP50S,
                                 q.tpotP90S,
                                 q.tpotP99S,
                                 q.attainment,
                                 q.ttftAttainment,
                                 q.tpotAttainment})
            {
                os << "," << (figures ? FormatNumber(value) : "");
            }
            os << "," << (figures && l.haveEnergy ? FormatNumber(l.energyPerTokenJ) : "") << ","
               << (figures && l.haveEnergy ? FormatNumber(l.avgPowerW) : "");
        }
        if (beyond)
        {
            os << "," << (r.kvWhole > 0 ? std::to_string(r.kvWhole) : "");
        }
        os << "\n";
    }
    return os.str();
}

Json
ServingStudyJson(const ServingStudy& study,
                 const ServingSpace& space,
                 const std::vector<ServingRow>& rows,
                 const std::string& backend,
                 const std::string& routing,
                 const std::string& packet)
{
    const ResolvedJob first = study.FirstJob();
    Json input = JobInputJson(first, backend.empty() ? "flow" : backend, routing, packet);
    // The layout and batch vary by row: the input shows what was tried instead.
    Json layout;
    layout["gpus"] = space.gpus;
    layout["tp"] = Json(space.tp);
    layout["pp"] = Json(space.pp);
    layout["cp"] = first.run.parallel.cp;
    layout["dp"] = Json(space.dp);
    input["layout"] = layout;
    input["software"]["batch"] = Json(space.batch);
    // The hardware and precisions tried, as the lists were given (each row names its own,
    // resolved).
    if (study.HardwareJobs().size() > 1)
    {
        input["hardware"] = Json::array();
        for (const ResolvedJob& job : study.HardwareJobs())
        {
            input["hardware"].push_back(HardwareInputJson(job.hardware, job.hardwareSource, {}));
        }
    }
    if (space.engines.size() > 1)
    {
        // One engine is the job's, echoed as such.
        input["software"]["engine"] = Json(space.engines);
        // The memory share follows the engine (vLLM's 0.9 by default): each one's.
        Json shares = Json::object();
        for (const ResolvedJob& job : study.VariantJobs())
        {
            shares[job.run.engine] = job.run.MemoryShare();
        }
        input["software"]["gpu_memory_utilization"] = shares;
    }
    if (!space.dtypes.empty())
    {
        input["software"]["dtype"] = Json(space.dtypes);
    }
    if (!space.kvCacheDtypes.empty())
    {
        input["software"]["kv_cache_dtype"] = Json(space.kvCacheDtypes);
    }
    // Batches in flight follow each row's pipeline: the setting, not the first row's value.
    input["software"]["inflight_batches"] = first.run.inflightBatches;
    Json j;
    j["input"] = input;
    j["batching"] = BatchingNames()[static_cast<std::size_t>(study.GetBatching())];
    // null: no target (0 would read as a target no row can meet).
    j["tpot_slo_s"] = space.tpotSloS > 0 ? Json(space.tpotSloS) : Json(nullptr);
    j["ttft_slo_s"] = space.ttftSloS > 0 ? Json(space.ttftSloS) : Json(nullptr);
    // The budget in force wherever it bounds an iteration: chunked steps, continuous batching's
    // prefill iterations, and under arrivals the disaggregated prefill instances'.
    const Batching batching = study.GetBatching();
    if (batching == Batching::CHUNKED || batching == Batching::CONTINUOUS
        || (batching == Batching::DISAGGREGATED && (space.rateRps > 0 || space.goodput)))
    {
        // Each hardware's (vLLM V1's default follows the GPU), and each engine's where the
        // study lists engines (prefill iterations follow the engine).
        Json budgets = Json::object(); // in the order of the variants
        for (const ResolvedJob& job : study.VariantJobs())
        {
            budgets[job.hardwareSource
                    + (space.engines.size() > 1 ? " " + job.run.engine : std::string())] =
                study.TokenBudget(job);
        }
        j["token_budget"] = budgets.size() == 1 ? budgets.front() : budgets;
    }
    if (space.prefixHit < 1)
    {
        // The share of requests finding the cached prefix, and the prefix (the input's
        // cached_prefix is the mean the candidates were replayed at).
        j["prefix_hit"] = {{"share", space.prefixHit}, {"cached_prefix", study.PrefixTokens()}};
    }
    if (space.rateRps > 0 || space.goodput)
    {
        Json arrivals;
        arrivals["rate_per_s"] = space.rateRps;
        arrivals["goodput"] = space.goodput;
        // Each row's own count is its load's (0: enough for each row's steady state).
        arrivals["requests"] = space.requests;
        arrivals["attainment"] = space.attainment;
        arrivals["seed"] = space.seed;
        arrivals["spread"] = space.spread;
        arrivals["burstiness"] = space.burstiness;
        if (study.GetBatching() == Batching::STATIC)
        {
            arrivals["batch_delay_s"] = space.batchDelayS;
        }
        if (space.prefixes > 0)
        {
            arrivals["prefixes"] = space.prefixes;
        }
        if (space.prefixSkew > 0)
        {
            arrivals["prefix_skew"] = space.prefixSkew;
        }
        if (space.router != QueueRouter::ROUND_ROBIN)
        {
            arrivals["router"] = RouterNames()[static_cast<std::size_t>(space.router)];
        }
        if (space.size)
        {
            arrivals["size"] = true;
        }
        if (!space.trace.requests.empty())
        {
            Json trace;
            trace["file"] = space.trace.path;
            trace["format"] = space.trace.format;
            trace["requests"] = space.trace.requests.size();
            trace["rate_per_s"] = space.trace.RateRps();
            trace["mean_prompt"] = space.trace.MeanPrompt();
            trace["mean_generated"] = space.trace.MeanGenerated();
            if (space.trace.hasCached)
            {
                trace["mean_cached"] = space.trace.MeanCached();
            }
            arrivals["trace"] = trace;
        }
        j["arrivals"] = arrivals;
    }
    j["layouts"] = study.Candidates().size();
    j["skipped"] = study.GetSkipped();
    // Why, each reason once (their counts add up to `skipped`).
    Json skips = Json::array();
    for (const ServingSkip& s : study.GetSkips())
    {
        Json skip;
        skip["field"] = s.field;
        skip["reason"] = s.reason;
        skip["count"] = s.count;
        skips.push_back(skip);
    }
    j["skipped_reasons"] = skips;
    Json list = Json::array();
    for (const auto& r : rows)
    {
        Json row = r.ToJson();
        // A row that does not fit has no figures: null, as results.csv leaves them empty (a
        // script sorting by TPOT read 0 and picked it). Without a power model, no energy.
        std::vector<const char*> unknown;
        if (!r.fits)
        {
            unknown = {"ttft_s",
                       "tpot_s",
                       "request_s",
                       "tokens_per_s_per_gpu",
                       "requests_per_s",
                       "energy_per_token_j",
                       "avg_power_w",
                       "prefill_s",
                       "prefill_energy_j",
                       "decode_step_s",
                       "decode_step_energy_j"};
        }
        else if (!r.haveEnergy)
        {
            unknown = {
                "energy_per_token_j", "avg_power_w", "prefill_energy_j", "decode_step_energy_j"};
        }
        for (const char* field : unknown)
        {
            row[field] = nullptr;
        }
        list.push_back(row);
    }
    j["rows"] = list;
    return j;
}

void
WriteServingStudy(const std::string& dir,
                  const Json& json,
                  const std::vector<ServingRow>& rows,
                  const ServingSpace& space,
                  const std::string& title)
{
    CreateOutputDir(dir);
    const std::filesystem::path out(dir);
    const std::string batching = json.at("batching").get<std::string>();
    WriteOutputFiles(
        {{(out / "results.csv").string(), ServingStudyCsv(rows, batching == "disaggregated")},
         {(out / "results.json").string(), DumpJson(json)}});

    // One line per replica layout through its batch sizes (the rows' batch order); with
    // several variants (hardware, precisions), one per variant through its own frontier (its
    // layouts and batches that no other of the variant beats on both TPOT and throughput), in
    // TPOT order.
    std::set<std::string> hardware;
    std::set<std::string> engines;
    std::set<std::string> precisions;
    for (const auto& r : rows)
    {
        hardware.insert(r.hardware);
        engines.insert(r.engine);
        precisions.insert(r.Precision());
    }
    const bool variants = hardware.size() > 1 || engines.size() > 1 || precisions.size() > 1;
    std::map<std::tuple<std::string, uint32_t, uint32_t, uint32_t>, std::vector<const ServingRow*>>
        lines;
    double top = 0;
    for (const auto& r : rows)
    {
        if (variants && OnFrontier(r, rows, true))
        {
            lines[{r.Variant(), 0, 0, 0}].push_back(&r);
        }
        else if (!variants && r.fits)
        {
            lines[{r.Variant(), r.tp, r.pp, r.dp}].push_back(&r);
        }
        top = std::max(top, r.fits ? r.tokensPerSPerGpu : 0.0);
    }
    if (lines.empty())
    {
        return;
    }
    PlotSpec plot;
    plot.title = title;
    plot.xLabel = "time per output token (ms)";
    plot.yLabel = "generated tokens per second per GPU";
    const bool continuous = batching != "static";
    for (auto& [layout, points] : lines)
    {
        const auto& [variant, tp, pp, dp] = layout;
        PlotSeries s;
        if (variants)
        {
            std::sort(points.begin(),
                      points.end(),
                      [](const ServingRow* a, const ServingRow* b)
                      {
                          return a->tpotS < b->tpotS;
                      });
            const ServingRow& r = *points.front();
            std::string label = hardware.size() > 1 ? r.hardware : "";
            if (engines.size() > 1)
            {
                label += (label.empty() ? "" : " ") + r.engine;
            }
            if (precisions.size() > 1)
            {
                label += (label.empty() ? "" : " ") + r.Precision() + " weights/KV";
            }
            s.title = label + ": its frontier";
        }
        else
        {
            std::sort(points.begin(),
                      points.end(),
                      [](const ServingRow* a, const ServingRow* b)
                      {
                          return a->batch < b->batch;
                      });
            s.title = std::string(batching == "disaggregated" ? "decode " : "") + "tp "
                      + std::to_string(tp) + " pp " + std::to_string(pp)
                      + (dp > 1 ? " dp " + std::to_string(dp) : "")
                      + (continuous ? " (" : " (batch ") + std::to_string(points.front()->batch)
                      + "-" + std::to_string(points.back()->batch)
                      + (continuous ? " in flight)" : ")");
        }
        for (const ServingRow* r : points)
        {
            s.points.push_back({r->tpotS * 1e3, r->tokensPerSPerGpu});
        }
        plot.series.push_back(s);
    }
    if (space.tpotSloS > 0)
    {
        plot.series.push_back(
            {"TPOT target", {{space.tpotSloS * 1e3, 0}, {space.tpotSloS * 1e3, top}}});
    }
    WritePlotPng((out / "throughput-latency.png").string(), plot);
}

void
WriteServingLoadPlot(const std::string& dir,
                     const ServingStudy& study,
                     const std::vector<ServingRow>& rows,
                     const ServingSpace& space,
                     const std::string& title)
{
    PlotSpec plot;
    plot.title = title;
    plot.xLabel = "requests per second per GPU";
    plot.yLabel = "requests within the targets (%)";
    const std::size_t shown = 6;
    double right = 0;
    for (const auto& r : rows)
    {
        if (!r.loaded || r.load.rateRps <= 0 || r.load.tokensPerSPerGpu <= 0
            || plot.series.size() == shown)
        {
            continue;
        }
        const auto gpus = double(ServingRowGpus(r));
        // The capacity of the arrivals' lengths, what the row's utilization is of.
        const double capacity = r.load.rateRps / r.load.utilization;
        std::vector<double> rates;
        for (uint32_t k = 1; k <= 20; ++k)
        {
            // Up to just below the capacity, where the queue would grow without end.
            rates.push_back(capacity * k / 20.0 * 0.999);
        }
        const std::vector<double> attainment = study.Attainment(rows, r, rates);
        PlotSeries s;
        s.title = (study.Variants().size() > 1 ? r.Variant() + " " : "") + ServingPlanName(r)
                  + " batch " + std::to_string(r.batch);
        for (std::size_t k = 0; k < rates.size(); ++k)
        {
            s.points.push_back({rates[k] / gpus, attainment[k] * 100});
        }
        right = std::max(right, rates.back() / gpus);
        plot.series.push_back(s);
    }
    if (plot.series.empty())
    {
        return;
    }
    plot.series.push_back(
        {"attainment target", {{0, space.attainment * 100}, {right, space.attainment * 100}}});
    WritePlotPng((std::filesystem::path(dir) / "attainment-rate.png").string(), plot);
}

} // namespace rapidllm
} // namespace ns3
