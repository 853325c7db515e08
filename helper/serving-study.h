/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_SERVING_STUDY_H
#define RAPIDLLM_SERVING_STUDY_H

#include "arrival-trace.h"
#include "job-options.h"
#include "kv-handover.h"
#include "ns3/ptr.h"
#include "ns3/report-json.h"
#include "ns3/run-report.h"
#include "serving-queue.h"

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace ns3 {
namespace rapidllm {

class RapidLlmHelper;

/** How a replica batches its requests. */
enum class Batching
{
    AUTO,       //!< the engine's: continuous for lmdeploy and vllm, static otherwise
    STATIC,     //!< the batch runs together from prefill to its last token (`run`'s request)
    CONTINUOUS, //!< a finished request's slot takes a new one at once (iteration-level batching)
    /**
     * prefill and decode on separate instances (DistServe, Splitwise): prefill instances run
     * one request's prefill after another and hand its KV cache over the network to decode
     * instances, which batch continuously
     */
    DISAGGREGATED,
    /**
     * continuous batching with chunked prefill (vLLM V1's and SGLang's schedulers): a new
     * request's prompt goes into the running decode steps, in chunks where it exceeds the
     * step's token budget
     */
    CHUNKED
};

/** \return the allowed names of Batching: auto, static, continuous, disaggregated, chunked */
std::vector<std::string> BatchingNames();

/** \return the routers' names, as QueueRouter orders them: round-robin, least-outstanding */
std::vector<std::string> RouterNames();

/**
 * \param name one of BatchingNames() \return its value; throws std::invalid_argument otherwise
 */
Batching ParseBatching(const std::string& name);

/**
 * \ingroup rapid-llm
 * \brief What a serving study tries: every replica layout (tp x pp) and batch size of an
 * inference job on a budget of GPUs, filled with identical replicas, against optional latency
 * targets.
 */
struct ServingSpace
{
    Batching batching = Batching::AUTO;   //!< how a replica batches its requests
    uint32_t gpus = 8;                    //!< GPUs filled with replicas
    std::vector<uint32_t> tp{1, 2, 4, 8}; //!< tensor parallel degrees
    std::vector<uint32_t> pp{1};          //!< pipeline degrees
    /**
     * Data-parallel attention degrees (mixture-of-experts models): an instance of d x tp x pp
     * GPUs whose d attention replicas each serve their own batch, with the experts spread over
     * the d replicas and the tokens dispatched among them (SGLang's DP attention, vLLM's DP + EP)
     */
    std::vector<uint32_t> dp{1};
    std::vector<uint32_t> batch{1, 2, 4, 8, 16, 32, 64, 128, 256}; //!< requests per replica
    /**
     * Hardware to try (presets or files, as --hardware names them), each with every engine and
     * precision; empty: the job's
     */
    std::vector<std::string> hardware;
    /**
     * Serving engines to try (--engine's names: lmdeploy, vllm, hf), each with every precision;
     * empty: the job's. Under automatic batching they must batch alike (lmdeploy and vllm
     * continuously)
     */
    std::vector<std::string> engines;
    /**
     * Weights' types to try (--dtype's names: bf16, fp8, int4, ...), each with every KV cache
     * type of `kvCacheDtypes`; empty: the job's
     */
    std::vector<std::string> dtypes;
    /** KV cache types to try (--kv-cache-dtype's names: auto, fp8, int8); empty: the job's */
    std::vector<std::string> kvCacheDtypes;
    /**
     * \return the lists the study varies besides the layout and batch, each with the option it
     * sets, in the order the variants nest (the first outermost): hardware, engine, dtype,
     * kv-cache-dtype
     */
    std::vector<std::pair<std::string, const std::vector<std::string>*>> VariantLists() const;
    double tpotSloS = 0; //!< time per output token target, s (0: none)
    double ttftSloS = 0; //!< time to first token target, s (0: none)
    /**
     * Chunked batching: the tokens one step may carry, decodes and prefill chunks together
     * (vLLM's max_num_batched_tokens). Continuous batching (and disaggregated prefill instances
     * under arrivals): the prompt tokens one prefill iteration may carry. 0: the engine's
     * default (ServingStudy::TokenBudget)
     */
    uint32_t tokenBudget = 0;
    /**
     * Open-loop arrivals: requests per second arriving at the whole budget, a Poisson process
     * (as vLLM's benchmark_serving.py --request-rate sends them), dealt to the instances by
     * the router (0: closed loop, every slot always busy)
     */
    double rateRps = 0;
    /**
     * Under arrivals, how the requests are dealt to a layout's co-located instances: in turn,
     * or each to the one with the fewest outstanding as it comes (SimulateInstances)
     */
    QueueRouter router = QueueRouter::ROUND_ROBIN;
    /**
     * Requests simulated at the rate (0: each row's SteadyRequests, at least 1,000,
     * benchmark_serving's default, and at most 50,000)
     */
    uint32_t requests = 0;
    /**
     * Share of the requests that must meet both targets for a row to meet them under a rate
     * (DistServe's SLO attainment, 90% in its evaluation)
     */
    double attainment = 0.9;
    uint64_t seed = 1; //!< the arrival process's seed
    /**
     * Shape of the gamma-distributed gaps between arrivals (GammaArrivals; vLLM's
     * benchmark_serving.py --burstiness): 1 Poisson, below 1 burstier, above 1 more even
     */
    double burstiness = 1;
    /**
     * Static batching under arrivals: how long an idle instance waits for its batch to fill
     * (QueueEngine::batchDelayS; Triton's max_queue_delay_microseconds), s
     */
    double batchDelayS = 0;
    /**
     * Recorded requests replayed instead of drawn ones (their lengths too where the trace has
     * them), their times scaled to the rate; empty: drawn arrivals
     */
    ArrivalTrace trace;
    /**
     * Spread of the requests' lengths under arrivals: each request's prompt and generated
     * tokens uniform from L (1 - spread) to L (1 + spread) (DrawLengths; 0: all the job's)
     */
    double spread = 0;
    /**
     * Share of the requests that find the job's cached prefix in the cache (vLLM's prefix
     * cache hit rate; the others compute their whole prompt): below 1 the candidates are
     * replayed at the mean cached tokens, and under drawn arrivals each request's hit is drawn
     * (DrawPrefixHits). 1: every request finds it
     */
    double prefixHit = 1;
    /**
     * Under arrivals, K prefix groups (0: none): each request's prompt starts with one of K
     * distinct prefixes of the job's cached-prefix tokens, drawn uniformly (as SGLang's
     * bench_serving.py generated-shared-prefix dataset spreads its requests over system
     * prompts) or by `prefixSkew`, found in the cache of an instance that computed it before
     * and holds it still (QueueEngine::prefixTokens, PrefixCache); the candidates are
     * replayed with the prefix cached
     */
    uint32_t prefixes = 0;
    /**
     * With prefix groups, their popularity: 0 uniform, above 0 Zipf's law of that exponent
     * (group g drawn with weight 1 / g^prefixSkew; DrawPrefixGroups)
     */
    double prefixSkew = 0;
    /**
     * Find each row's goodput instead of taking a rate: the highest rate at which `attainment`
     * of the requests meet both targets (DistServe's goodput), each row simulated at it
     */
    bool goodput = false;
    /**
     * Size each row for the rate instead of filling the GPUs: the fewest instances (at most
     * the GPUs'; disaggregated, prefill and decode instances taking the fewest GPUs) at which
     * `attainment` of the requests arriving at the rate meet both targets, each row simulated
     * with them; rows ranked by the GPUs they take
     */
    bool size = false;
};

/**
 * \ingroup rapid-llm
 * \brief A serving-study row under open-loop arrivals (ServingStudy::Load): the queue
 * simulation's latencies, target attainment and energy at the rate.
 */
struct ServingLoad
{
    double rateRps = 0;     //!< requests per second arriving at the budget
    uint32_t requests = 0;  //!< requests simulated (ServingStudy::SimulatedRequests)
    double goodputRps = -1; //!< with ServingSpace::goodput: the rate found (-1: not searched)
    /**
     * generated tokens per second and GPU delivered: the rate's (the arrivals' own lengths),
     * at most the row's capacity's (an overloaded row generates at its capacity)
     */
    double tokensPerSPerGpu = 0;
    /**
     * the rate over the row's capacity for the arrivals' lengths (ServingStudy::
     * ArrivalsCapacity: requestsPerS at the job's, scaled to a trace's own)
     */
    double utilization = 0;
    bool overloaded = false;    //!< the rate reaches the capacity: the queue grows without end
    QueueSummary summary;       //!< latencies and attainment (not set when overloaded)
    bool haveEnergy = false;    //!< whether the energy figures are known
    double energyPerTokenJ = 0; //!< GPU energy per generated token, idle time included
    double avgPowerW = 0;       //!< average board power per GPU
    /** with prefix groups (ServingSpace::prefixes): the share of requests that found theirs */
    double prefixHitShare = -1;
    /**
     * disaggregated, with prefix groups: the share whose decode instance held their group's
     * prefix, so that their KV transfer carried the rest only
     */
    double decodePrefixHitShare = -1;

    /** \return the figures as JSON */
    Json ToJson() const;
};

/**
 * \ingroup rapid-llm
 * \brief One layout and batch of a serving study and what became of it. With static batching
 * a replica serves `batch` requests together from prefill to their last token (`run`'s
 * request); with continuous batching it keeps `batch` requests in flight, a finished one's slot
 * taken by a new request (ServingStudy). The replicas are independent, so one is predicted and
 * the budget's throughput is its own times the replicas.
 */
struct ServingRow
{
    uint64_t layout = 0;      //!< index among the study's candidates
    uint32_t tp = 0;          //!< tensor parallel degree
    uint32_t pp = 0;          //!< pipeline stages
    uint32_t cp = 1;          //!< context parallel degree (1: inference has none)
    uint32_t dp = 1;          //!< data-parallel attention replicas of an instance (ep = dp)
    uint32_t replicas = 0;    //!< instances in the budget: gpus / (tp x pp x dp)
    uint32_t batch = 0;       //!< requests per replica (per attention replica when dp > 1)
    std::string hardware;     //!< the hardware as --hardware names it (preset or file)
    std::string engine;       //!< the serving engine (lmdeploy, vllm, hf, none)
    std::string dtype;        //!< the weights' type (its name: bf16, fp8, int4, ...)
    std::string kvCacheDtype; //!< the KV cache's type, resolved (auto: the activations')
    bool fits = false;        //!< whether a replica fits in memory (then the figures below)
    /**
     * where the batch's whole lengths overflow the KV cache but the engine admits requests on
     * the tokens they hold and preempts when it fills (vLLM, continuous or chunked): the most
     * requests the cache holds whole (0: the batch fits whole). Its closed-loop figures are
     * then a saturated queue's (ServingStudy::FillSaturated)
     */
    uint32_t kvWhole = 0;
    /**
     * beyond the KV cache: the requests in flight on average in its saturated queue (per
     * attention replica, as `batch`)
     */
    double kvInFlight = 0;
    std::string reason;          //!< why it does not fit
    double ttftS = 0;            //!< time to first token
    double tpotS = 0;            //!< time per output token after the first
    double requestS = 0;         //!< one request, from its prefill to its last token
    double tokensPerSPerGpu = 0; //!< generated tokens per second and GPU
    double requestsPerS = 0;     //!< requests finished per second by all replicas
    bool haveEnergy = false;     //!< whether the energy figures are known
    double energyPerTokenJ = 0;  //!< GPU energy per generated token
    double avgPowerW = 0;        //!< average board power per GPU
    uint64_t peakBytes = 0;      //!< peak memory per GPU
    uint64_t capacityBytes = 0;  //!< device memory per GPU
    bool meetsSlo = false;       //!< fits and meets both targets (RankServingRows)
    bool frontier = false;       //!< on the throughput-latency frontier (RankServingRows)

    // Continuous and disaggregated batching: the replays the figures are put together from.
    bool replayed = false; //!< they were made (the JSON carries them only then)
    double prefillS = 0;   //!< one request's prefill (and first token) on this layout
    double prefillJ = 0;   //!< its dynamic energy (the boards' idle power not included)
    double idleW = 0;      //!< the instance's idle board power (all its GPUs)
    double stepS = 0;      //!< a decode step of the whole batch at the mean context
    double stepJ = 0;      //!< its dynamic energy
    /**
     * continuous batching where more than one request finishes per decode step: the prompts a
     * prefill iteration takes on average (0: one at a time)
     */
    double prefillPrompts = 0;
    bool prefillFits = false;      //!< whether the layout holds one request's prefill
    uint64_t prefillPeakBytes = 0; //!< its peak memory per GPU (disaggregated; 0: not its own)

    // Disaggregated batching (ServingStudy::Pair): this row's layout decodes; the best
    // prefill layout and instance counts for it.
    uint32_t prefillTp = 0;        //!< the prefill instances' tensor parallel degree
    uint32_t prefillPp = 0;        //!< their pipeline stages
    uint32_t prefillInstances = 0; //!< prefill instances (`replicas` counts the decode ones)
    uint32_t gpusUsed = 0;         //!< GPUs of all instances (at most the budget)
    uint32_t sets = 1; //!< copies of one placed set of instances (DisaggregatedPlacement)
    /**
     * one request's KV cache from its prefill to its decode GPUs: the mean over the pairs of a
     * prefill and a decode instance (a queue simulation times each pair's own)
     */
    double kvTransferS = 0;

    // Chunked batching (ServingStudy::EvaluateChunked).
    uint32_t chunkTokens = 0; //!< prompt tokens a step prefills of one request
    uint32_t chunkCount = 0;  //!< chunks of one prompt
    double mixedStepS = 0;    //!< a decode step of the batch carrying its prefill chunks
    double mixedShare = 0;    //!< share of the steps that carry chunks (1: all, paced by them)
    double chunkTokenS = 0;   //!< under a rate: a step's time per prompt token it carries
    double chunkTokenJ = 0;   //!< its dynamic energy per prompt token

    // Open-loop arrivals (ServingSpace::rateRps).
    /**
     * the KV cache a replica holds, in tokens of its requests beyond a shared prefix (the
     * tokens of `batch` requests at the job's lengths and what the memory left holds; 0: no
     * limit), QueueEngine::kvTokens
     */
    double kvTokens = 0;
    StepCurve stepCurve; //!< the decode step against the requests in flight, 1 to batch
    /**
     * continuous and disaggregated batching: a prefill iteration against the prompts it takes,
     * 1 to as many as the token budget holds (co-located, at most the batch)
     */
    StepCurve prefillCurve;
    bool loaded = false; //!< whether `load` is set (ServingStudy::Load)
    ServingLoad load;    //!< the row under the rate

    /** \return "bf16/bf16": the weights' and the KV cache's types, which a study may vary */
    std::string Precision() const;
    /**
     * \return "h100-sxm-80gb vllm bf16/bf16": the hardware, the engine and the precision, what a
     * study may vary besides the layout and batch
     */
    std::string Variant() const;
    /** \return the row as JSON (every field; RankServingRows' flags included) */
    Json ToJson() const;
    /**
     * \param j a row as ToJson wrote it
     * \return the row; throws std::runtime_error if a field is missing
     */
    static ServingRow FromJson(const Json& j);
};

/**
 * \ingroup rapid-llm
 * \brief What a serving study may vary besides the layout and batch: the hardware and the
 * weights' and KV cache's types (their names, resolved).
 */
struct ServingVariant
{
    std::string hardware;     //!< the hardware as --hardware names it (preset or file)
    std::string engine;       //!< the serving engine
    std::string dtype;        //!< the weights' type
    std::string kvCacheDtype; //!< the KV cache's type (auto resolved)
    /**
     * why none of its layouts is tried ("" when they are): its GPU lists no rate for the
     * weights' type (an A100 and fp8); a study that lists machines and types tries the others
     */
    std::string ruledOut;

    /** \return whether the two name the same variant (its machine, engine and types) */
    bool operator==(const ServingVariant& o) const;
};

/**
 * \ingroup rapid-llm
 * \brief Why combinations of a serving study's lists are not tried: one reason and the
 * combinations (variant x layout x batch) it rules out.
 */
struct ServingSkip
{
    std::string field;  //!< the option to blame ("gpus", "tp", "dp", "dtype")
    std::string reason; //!< why, as the error names it where no layout is left
    uint32_t count = 0; //!< the combinations it rules out
};

/**
 * A layout that may prefill for a disaggregated decode row: its variant (ServingRow::Variant),
 * tp and pp (a decode row takes prefill instances of its own hardware and precision)
 */
using ServingPrefillKey = std::tuple<std::string, uint32_t, uint32_t>;

/** A replayed prefill iteration: its time, dynamic energy and attention kernels' time. */
struct PrefillReplay
{
    double seconds = 0;    //!< the iteration, to its prompts' first tokens
    double joules = 0;     //!< its dynamic energy
    double attentionS = 0; //!< its attention kernels on the critical rank
};

/**
 * \ingroup rapid-llm
 * \brief Predicts the serving layouts of an inference job: for every tp x pp x batch (and
 * hardware and precision, where the space lists them) of a ServingSpace, one replica's time to
 * first token, time per output token, throughput per GPU, energy per token and memory verdict.
 * Combinations the model or the budget rule out (tp x pp not dividing the GPUs, heads not
 * divisible by tp, ...) are skipped and counted, each distinct reason kept once (GetSkips).
 * With whole experts (the job's etp 1) each layout's expert parallelism is its tp.
 *
 * Continuous batching (closed loop: `batch` requests in flight, each of P prompt and G
 * generated tokens, a new one admitted as one finishes) is put together from three replays of
 * the model: a decode step t_d of `batch` requests at their mean context P + G/2 (the
 * difference of two runs two steps apart, so without their prefill), and one request's prefill
 * t_p. Over its G - 1 decode steps every slot turns over once, so each cycle of (G - 1) t_d +
 * batch t_p / M yields batch x G tokens (M the batches in flight through a pipeline, which
 * keep its other stages busy while one holds a prefill; 1 without): time per output token
 * (cycle - t_p / M) / (G - 1) (the decode steps and the other requests' prefills, as an engine
 * that pauses decoding for prefills or chunks them into the steps spends it), time to first
 * token t_p (its own prefill, admitted as its slot frees; no queue); energy per token the
 * replays' dynamic energy of the cycle's work plus the boards' idle power over the cycle. Where
 * f = batch / (G - 1) > 1 requests finish per decode step, the engine prefills their
 * replacements together (up to its token budget): batch / f iterations of f prompts replace the
 * batch t_p, each the replayed prefill of floor(f) and ceil(f) prompts interpolated, which is
 * also the time to first token. Memory holds every request's whole KV cache (P + G tokens) and
 * one step's activations, or those of the forward of the token budget that vLLM profiles before
 * it sizes its cache (RunSpec::profileTokens, set to TokenBudget where the job leaves it 0;
 * a static batch, `run`'s job, keeps `run`'s, RunSpec::ProfileTokensOn).
 *
 * Chunked batching (vLLM V1, SGLang) puts each new prompt into the running decode steps: whole
 * where the step's token budget T holds it beside the batch's decodes, else in n = ceil(P / (T -
 * batch)) equal chunks. In the steady state each slot prefills over n steps and decodes over G -
 * 1, so batch x n / (n + G - 1) chunks run per step; the steps that carry them (as many chunks
 * each as the budget allows, the same in each batch in flight) are replayed as decode steps
 * with the chunks' rows beside the batch's (RunSpec::chunkSequences, at the chunks' mean
 * prefix), the others as plain decode steps. Time per output token is the mean step, time to
 * first token n mixed steps, and batch / (n + G - 1) requests finish per step. Where the chunks
 * need more than the budget holds beside the batch's decodes, the budget sets the pace (vLLM
 * V1's scheduler: the running decodes first, then the waiting prompts' tokens, as many as fit):
 * every step is full, r = T / (P + G - 1) requests start per step (fewer where the slots cannot
 * hold them), r (G - 1) decode, and the rest of the budget carries the prompts, each over
 * ceil(P / (T - decodes)) steps; the first token waits (Little's law).
 *
 * Disaggregated batching takes the same replays (and a layout's prefill where only one prompt
 * fits) and pairs each decode row with prefill instances (Pair).
 */
class ServingStudy
{
  public:
    /**
     * \param options the job (mode inference; its tp, pp, batch, gpus and dp are set per layout)
     * \param space the layouts and targets
     * \param backend the network backend \param routing the routing policy ("" = hardware's)
     * \param symmetry the replayer's Symmetry
     * Throws SpecError when no combination is a valid layout (naming the first reason).
     */
    ServingStudy(const JobOptions& options,
                 const ServingSpace& space,
                 const std::string& backend,
                 const std::string& routing,
                 bool symmetry);

    /**
     * \return the valid combinations' job options, in the order variant, tp, pp, dp, batch of
     * the space
     */
    const std::vector<JobOptions>& Candidates() const;
    /**
     * \return the variants tried, resolved: each hardware of the space with each weights' type
     * and each KV cache type, in that order (their names as ServingRow has them; two settings
     * that name one variant count once)
     */
    const std::vector<ServingVariant>& Variants() const;
    /**
     * \return a job of each hardware tried, in the order of the space (a one-GPU replica of the
     * first variant on it): what the output names and echoes of each machine
     */
    const std::vector<ResolvedJob>& HardwareJobs() const;
    /** \return a job of each variant (a one-GPU replica), in the order of Variants() */
    const std::vector<ResolvedJob>& VariantJobs() const;
    /** \return combinations ruled out by the model or the budget */
    uint32_t GetSkipped() const;
    /**
     * \return why they were ruled out: each distinct reason once, in the order first met, with
     * the combinations it rules out (the counts add up to GetSkipped())
     */
    const std::vector<ServingSkip>& GetSkips() const;
    /** \return the first candidate's job, resolved (what the study's input echo shows) */
    ResolvedJob FirstJob() const;
    /**
     * \return the cached prefix a request finds in the cache (the job's --cached-prefix; with
     * ServingSpace::prefixHit below 1 the candidates run at its mean instead)
     */
    uint32_t PrefixTokens() const;
    /** \return the batching in force: the space's, or for AUTO the job's engine's */
    Batching GetBatching() const;
    /** \param engine a serving engine \return how it batches (AUTO's batching under it) */
    static Batching EngineBatching(const std::string& engine);
    /**
     * \param job a candidate resolved
     * \return the tokens one iteration may carry: the space's, else the engine's default. Chunked
     * batching: vLLM V1's for the GPU (8192 on GPUs of 70 GiB or more but the A100, 2048
     * otherwise). Continuous batching, where it bounds the prompts one prefill iteration takes:
     * lmdeploy's max_prefill_token_num, 8192; otherwise vLLM's before V1, max(max_model_len,
     * 2048), max_model_len the model's max_sequence.
     */
    uint32_t TokenBudget(const ResolvedJob& job) const;

    /**
     * \brief Predicts one candidate: its memory, and its timing when it fits.
     * \param index the candidate's index \return its row (meetsSlo and frontier not yet set)
     */
    ServingRow Evaluate(uint64_t index) const;

    /**
     * \brief Under disaggregated batching, gives each decode row its prefill instances: of the
     * layouts that hold a prefill, those meeting the first-token target first, then the most
     * tokens per second per GPU, with y decode and x prefill instances in the budget (x g_p +
     * y g_d GPUs) and x just enough to admit what the y decode instances finish (y b / ((G - 1)
     * t_d + t_kv) requests/s against x pp_p / t_p, consecutive prompts pipelining through the
     * prefill stages). t_kv: one request's KV cache sent from the prefill ranks holding each
     * layer's KV heads to the decode ranks needing them, timed on the network with the
     * instances placed in order (prefill first). Time to first token t_p, time per output
     * token (t_kv + (G - 1) t_d) / (G - 1). A row without a prefill layout that fits, or whose
     * instances exceed the budget, is marked as not fitting. Other batchings: nothing.
     * \param rows the evaluated rows (Evaluate), in place
     */
    void Pair(std::vector<ServingRow>& rows) const;

    /**
     * \brief Under a rate (ServingSpace::rateRps), simulates each fitting row's instances
     * serving Poisson arrivals (SimulateEngine; with disaggregated batching the prefill pool,
     * SimulatePrefillPool, the KV transfer, then the decode instances), the requests dealt to the
     * instances in turn, and sets its `load`. A row whose capacity the rate reaches is marked
     * overloaded and not simulated. With ServingSpace::goodput, each row's rate is found by
     * bisection (to 0.1% of its capacity) as the highest that meets the targets, and the row is
     * loaded at it. Without a rate or goodput: nothing.
     * \param rows the evaluated and paired rows, in place
     * \param progress called after each fitting row is loaded, with the rows loaded and the
     *        rows to load (may be null)
     */
    void Load(std::vector<ServingRow>& rows,
              const std::function<void(std::size_t, std::size_t)>& progress = nullptr) const;

    /**
     * \brief The share of a row's requests within the targets against the request rate, on the
     * study's arrivals (DistServe's attainment curve).
     * \param rows the study's rows (the prefill layouts' among them) \param row a fitting row of
     * them, its step curve set \param rates requests per second arriving at the budget
     * \return the attainment at each rate (0 where the rate reaches the row's capacity)
     */
    std::vector<double> Attainment(const std::vector<ServingRow>& rows,
                                   const ServingRow& row,
                                   const std::vector<double>& rates) const;

    /** \return every candidate's row, paired (Pair), loaded (Load) and ranked (RankServingRows) */
    std::vector<ServingRow> Run() const;

    /**
     * \param r a row \return the requests simulated for it under arrivals: the space's, the
     * trace's, or enough for its steady state (SteadyRequests; at least 1,000, at most 50,000)
     */
    uint32_t SimulatedRequests(const ServingRow& r) const;

    /**
     * \param row a co-located row whose queue curves are set (under a rate, or beyond its KV
     * cache) \return it with the closed-loop figures of a saturated queue, as a row beyond its
     * KV cache has them (FillSaturated); for a row that fits whole, the queue's closed loop to
     * set beside the analytic steady state
     */
    ServingRow Saturated(const ServingRow& row) const;

  private:
    /**
     * The layouts that hold a prefill, by variant (ServingRow::Variant), tp and pp: the row
     * and the candidate resolved
     */
    using PrefillLayouts = std::map<ServingPrefillKey, std::pair<ServingRow, ResolvedJob>>;

    /**
     * \param rows the evaluated rows \return the layouts that hold a prefill (the first row of
     * each), each resolved once
     */
    PrefillLayouts PrefillJobs(const std::vector<ServingRow>& rows) const;
    /**
     * \brief Places x prefill instances of \p p beside y decode instances of \p r
     * (DisaggregatedPlacement) and times a request's KV transfer as the mean over the pairs of
     * a prefill and a decode instance (a request's two instances are dealt apart).
     * \param r a decode row \param decode its candidate resolved \param p a prefill layout's
     * row \param prefill its candidate resolved \param x prefill instances \param y decode
     * instances \param copies whether the budget holds as many copies of the set as fit (Pair)
     * or the set alone (sizing)
     * \return \p r with the set's instances, GPUs, KV transfer and capacity (the lower of the
     * decode instances' and the prefill instances'), or nothing where it ends past the budget
     */
    std::optional<ServingRow> PlaceSet(const ServingRow& r,
                                       const ResolvedJob& decode,
                                       const ServingRow& p,
                                       const ResolvedJob& prefill,
                                       uint64_t x,
                                       uint64_t y,
                                       bool copies) const;
    /**
     * \brief Fills the row's figures under continuous batching from its replays (see the class).
     * \param options the candidate \param job the candidate resolved
     * \param row the row (its layout fields set)
     */
    void EvaluateContinuous(const JobOptions& options,
                            const ResolvedJob& job,
                            ServingRow& row) const;
    /**
     * \brief Fills the row's figures under chunked batching (see the class), from its decode
     * step (row.stepS, stepJ, idleW, set by EvaluateContinuous) and the same step carrying the
     * prefill chunks.
     * \param options the candidate \param job the candidate resolved
     * \param row the row
     */
    void EvaluateChunked(const JobOptions& options, const ResolvedJob& job, ServingRow& row) const;
    /**
     * \return whether the study's engine admits requests on the KV tokens they hold and
     * preempts when the cache fills (vLLM, continuous or chunked), so that a batch whose whole
     * lengths overflow the cache still runs (ServingRow::kvWhole)
     */
    bool AdmitsOnHeld(const ResolvedJob& job) const;
    /**
     * \brief A row whose batch overflows the KV cache (ServingRow::kvWhole): its closed-loop
     * throughput, time per output token and energy from one instance's queue of
     * ServingSpace::requests at the job's lengths arriving evenly, faster than it serves (so one
     * always waits, and the slots fill staggered), between the first and last quarter of the
     * requests to finish (the steady state), the first-token time from each request's admission
     * (its prefill or chunks, not its wait).
     * \param job the candidate resolved \param row the row, its curves and analytic figures set
     */
    void FillSaturated(const ResolvedJob& job, ServingRow& row) const;
    /**
     * \return the queue simulation's engine for one instance of a row (disaggregated: a decode
     * instance): its slots, lengths, KV cache, curves, scheduler and prefix cache
     */
    QueueEngine EngineOf(const ServingRow& r, const ResolvedJob& job) const;
    /**
     * \param options a job \param changes options to set first \param chunk the prefill
     * chunk of each decode pass (RunSpec::chunkSequences, chunkTokens, chunkPrefix; none when
     * the sequences are 0)
     * \return the job's replay
     */
    RunReport Replay(const JobOptions& options,
                     const std::vector<std::pair<std::string, std::string>>& changes,
                     const std::array<uint32_t, 3>& chunk = {0, 0, 0}) const;
    /**
     * \brief A decode step of the batch at the requests' mean context, from two replays two
     * steps apart (their difference has no prefill).
     * \param options the candidate \param job the candidate resolved \param chunk as Replay
     * \param prompt the replays' prompt (0: the requests' mean context, less the two tokens the
     * shorter replay generates)
     * \return its time and dynamic energy per token, and whether the energy is known
     */
    std::tuple<double, double, bool> DecodeStep(const JobOptions& options,
                                                const ResolvedJob& job,
                                                const std::array<uint32_t, 3>& chunk,
                                                uint64_t prompt = 0) const;
    /**
     * \brief One request's prefill on the row's layout: its time, dynamic energy and the
     * instance's idle power (row.prefillS, prefillJ, idleW).
     * \param options the candidate \param row the row \return whether the energy is known
     */
    bool FillOnePrefill(const JobOptions& options, ServingRow& row) const;
    /**
     * \brief The decode step of the row's layout at 1, 2, 4, ... requests and at its batch (the
     * row's own step), each also at half the context (with cascade attention, half of each
     * request's own keys) for what a key adds, for the queue simulation.
     * \param options the candidate \param row the row, its stepS and stepJ set; stepCurve set
     */
    void FillStepCurve(const JobOptions& options, ServingRow& row) const;
    /**
     * \brief The layout's prefill iteration of 1, 2, 4, ... prompts and of as many as the token
     * budget holds (co-located, at most the batch; fewer where their activations do not fit;
     * static batching, up to the batch itself), for the queue simulation.
     * \param options the candidate \param row the row, its prefillS and prefillJ set;
     * prefillCurve set
     */
    void FillPrefillCurve(const JobOptions& options, ServingRow& row) const;
    /**
     * \brief The KV cache a replica of the row holds, in tokens (ServingRow::kvTokens): the
     * memory check \p check again with every request twice as long gives its bytes per token.
     * \param options the candidate \param check the options of the memory check whose peak the
     * row has (its requests at the job's lengths) \param row the row, fitting, its peakBytes and
     * capacityBytes set; kvTokens set
     */
    void FillKvTokens(const JobOptions& options,
                      const std::vector<std::pair<std::string, std::string>>& check,
                      ServingRow& row) const;
    /**
     * \param job a candidate resolved
     * \return the most prompts one prefill iteration takes: the token budget's worth, at least
     * one; co-located, at most the batch
     */
    uint32_t PromptsPerPrefill(const ResolvedJob& job) const;
    /**
     * \param options the candidate \param prompts prompts prefilled together, one batch
     * through the pipeline (static batching: in the job's in-flight batches, as `run` has it)
     * \return the iteration's time, dynamic energy and attention time, or nothing where it does
     * not fit
     */
    std::optional<PrefillReplay> PrefillIteration(const JobOptions& options,
                                                  uint32_t prompts) const;
    /**
     * \param options the candidate \param prompts prompts prefilled together
     * \return PrefillIteration's, under --prefix-hit the mean of the prompts finding their
     * prefix and not finding it (PrefixCases)
     */
    std::optional<PrefillReplay> MeanPrefillIteration(const JobOptions& options,
                                                      uint32_t prompts) const;
    /**
     * \param options a candidate (at the mean cached prefix under --prefix-hit)
     * \return the candidate as its requests run it, each with its share: itself alone, or under
     * --prefix-hit one finding the whole prefix (the hit share) and one finding none
     */
    std::vector<std::pair<JobOptions, double>> PrefixCases(const JobOptions& options) const;
    /**
     * \brief Sizes a co-located row for the space's rate (ServingSpace::size): its instances
     * the fewest at which it meets the targets (bisection; the whole budget's where even it
     * misses), its capacity in proportion and its load at the rate.
     * \param row a fitting row (set in place) \param job its candidate resolved
     * \param unit the requests arriving at one per second
     */
    void Size(ServingRow& row, const ResolvedJob& job, const std::vector<QueueRequest>& unit) const;
    /**
     * \brief Sizes a disaggregated decode row for the space's rate: of every prefill layout's
     * sets of x prefill and y decode instances in the budget, the one taking the fewest GPUs
     * at which the row meets the targets, loaded at the rate (the whole budget's pairing where
     * none does). x starts at the fewest whose first tokens alone meet the attainment
     * (PrefillAttainment, bisection) and grows while the requests' time per output token alone
     * still meets it with the most decode instances left beside x; for each x, the fewest y by
     * bisection below the best set so far.
     * \param row a fitting row, paired (set in place) \param job its candidate resolved
     * \param prefills the prefill layouts \param unit the requests arriving at one per second
     */
    void SizeDisaggregated(ServingRow& row,
                           const ResolvedJob& job,
                           const PrefillLayouts& prefills,
                           const std::vector<QueueRequest>& unit) const;
    /**
     * \param row a fitting row, its step curve set \param job its candidate resolved
     * \param prefill with disaggregated batching its prefill layout's row
     * \param rate requests per second arriving at the budget
     * \param unit the requests arriving at one per second (UnitRequests; divided by the rate)
     * \return the row under the rate (see Load)
     */
    ServingLoad LoadAt(const ServingRow& row,
                       const ResolvedJob& job,
                       const ServingRow* prefill,
                       double rate,
                       const std::vector<QueueRequest>& unit) const;
    /**
     * \param kvTokens an instance's KV cache in tokens (0: no limit) \param slots the requests
     * (or prompts) it runs at once \param slotTokens the tokens each holds at most
     * \return the prefix groups' prefixes it holds (QueueEngine::prefixCapacity): those of what
     * it runs and, in the tokens a full batch leaves free, the most recently used others (0: no
     * limit); where it is continuous or chunked its cache follows its free KV cache instead
     * (EngineInstance::PrefixRoom), so this counts for static batches and a prefill pool
     */
    uint32_t PrefixCapacity(double kvTokens, uint32_t slots, double slotTokens) const;
    /**
     * \return whether the requests of a prefix group in flight on an instance share its
     * prefix's KV cache blocks (RunSpec::prefixGroups): with prefix groups under continuous,
     * chunked and disaggregated batching (static batches pad each row)
     */
    bool GroupsShared() const;
    /**
     * \param job a candidate resolved \param rate requests per second arriving
     * \param unit the requests arriving at one per second \param kvShare each request's KV
     * cache over the job's prompt's (set)
     * \return the requests arriving at the rate, each with the prompt tokens its prefill
     * computes (after its cached ones) and those cached
     */
    std::vector<QueueRequest> ArrivingAt(const ResolvedJob& job,
                                         double rate,
                                         const std::vector<QueueRequest>& unit,
                                         std::vector<double>* kvShare) const;
    /**
     * \brief Runs the prefill pool of a disaggregated set (SimulatePrefillPool) with the space's
     * prefix groups and router.
     * \param job the decode row's candidate resolved \param prefill a prefill layout's row
     * \param instances its instances \param requests arriving at the rate (ArrivingAt), their
     * first tokens set \param prefillOf each one's prefill instance (set)
     * \return the iterations' dynamic energy, J
     */
    double PrefillPool(const ResolvedJob& job,
                       const ServingRow& prefill,
                       uint32_t instances,
                       std::vector<QueueRequest>& requests,
                       std::vector<uint32_t>& prefillOf) const;
    /**
     * \param job the decode row's candidate resolved \param prefill a prefill layout's row
     * \param instances its instances \param unit the requests arriving at one per second
     * \return the share of the requests arriving at the space's rate whose first token, at the
     * end of their prefill on the pool (SimulatePrefillPool), meets the first-token target: a
     * disaggregated set's attainment at most, whatever its decode instances
     */
    double PrefillAttainment(const ResolvedJob& job,
                             const ServingRow& prefill,
                             uint32_t instances,
                             const std::vector<QueueRequest>& unit) const;
    /**
     * \brief The requests per second a row serves of the study's arrivals, what a rate's
     * utilization is taken against: its steady state's (requestsPerS, at the job's lengths)
     * over a request's work at the arrivals' mean lengths against the job's. A request's work
     * is its share of the decode steps (the share of its time in the engine, its first token
     * and G - 1 steps between tokens, that G - 1 plain decode steps take), in proportion to the
     * tokens it generates, and the rest (its prefill) to its prompt; the same lengths as the
     * job's give requestsPerS.
     * \param r a row \param job its job \param unit the arrivals (UnitRequests)
     * \return requests per second over the row's instances
     */
    double ArrivalsCapacity(const ServingRow& r,
                            const ResolvedJob& job,
                            const std::vector<QueueRequest>& unit) const;
    /**
     * \return the space's requests arriving at one per second on average (drawn with the
     * space's burstiness, or its trace's times scaled), with their lengths (the job's, the
     * trace's, or drawn with the space's spread); the same at every rate
     */
    std::vector<QueueRequest> UnitRequests(uint32_t count) const;
    /**
     * \param options a job \param changes options to set first
     * \return the job's helper, set up with the study's backend, routing and symmetry
     */
    Ptr<RapidLlmHelper> HelperFor(
        JobOptions options, const std::vector<std::pair<std::string, std::string>>& changes) const;
    /**
     * \param job a candidate resolved (its network the study's)
     * \return the KV transfer times between disaggregated instances, kept across the study
     */
    KvHandoverTimes& Handovers(const ResolvedJob& job) const;

    ServingSpace m_space;              //!< what to try
    std::vector<JobOptions> m_options; //!< the valid candidates
    std::string m_backend;             //!< network backend
    std::string m_routing;             //!< routing policy
    bool m_symmetry;                   //!< replay one rank per symmetric set
    uint32_t m_skipped = 0;            //!< ruled-out combinations
    std::vector<ServingSkip> m_skips;  //!< why, each reason once (GetSkips)
    uint32_t m_prefixTokens = 0;       //!< the cached prefix a request finds (the job's)
    std::string m_engine;              //!< the job's serving engine
    /** the variants tried, resolved (Variants) */
    std::vector<ServingVariant> m_variants;
    /** a job of each hardware tried (HardwareJobs) */
    std::vector<ResolvedJob> m_hardwareJobs;
    std::vector<ResolvedJob> m_variantJobs; //!< a job of each variant
    /**
     * the replays so far (Replay), by job options and chunk: the rows of a layout share their
     * curves' smaller sizes and their one-request prefill
     */
    mutable std::map<std::string, RunReport> m_replays;
    /** the prefill iterations so far (PrefillIteration), the same way */
    mutable std::map<std::string, std::optional<PrefillReplay>> m_prefills;
    /** the KV transfers between instances so far, by hardware (Handovers) */
    mutable std::map<std::string, KvHandoverTimes> m_handovers;
};

/**
 * \brief Marks and ranks a study's rows. A row meets the targets when it fits and neither
 * target (those not 0) is exceeded (loaded: it is not overloaded, has a goodput where one was
 * searched, and at least the space's attainment of its requests meet both); it is on the
 * frontier when it fits and no other fitting row has both a lower-or-equal time per output
 * token and a higher-or-equal throughput per GPU, one of them strictly. Order: the rows that
 * meet the targets by throughput per GPU (highest first; with goodput, by goodput per GPU),
 * then the other fitting rows the same way, then the rows that do not fit by peak memory; ties
 * by candidate index.
 * \param rows the rows (marked and sorted in place) \param space the targets
 */
void RankServingRows(std::vector<ServingRow>& rows, const ServingSpace& space);

/** \return the GPUs a row's instances take (disaggregated: its prefill and decode instances) */
uint64_t ServingRowGpus(const ServingRow& row);

/**
 * \return the row's plan in a few words: instances x layout (data-parallel attention replicas
 * too), and with disaggregation its prefill instances, e.g. "2x tp4 pp1 + 1x tp1 pp2"
 */
std::string ServingPlanName(const ServingRow& row);

/**
 * \return the rows as CSV: a header line (tp,pp,cp,dp,replicas,batch,...), one line each;
 * with \p disaggregated also each row's prefill layout, instances, GPUs and KV transfer; when
 * rows are loaded (ServingStudy::Load) also the rate's figures; where a row runs beyond its KV
 * cache, last its kv_whole (ServingRow::kvWhole)
 */
std::string ServingStudyCsv(const std::vector<ServingRow>& rows, bool disaggregated = false);

/**
 * \param r a row \return the requests a run under arrivals needs before its figures are a
 * steady state's: every slot of every replica filled and turned over ten times (100 a replica
 * at least), so that the warm-up, when the slots fill, is a tenth of the run. A run of 1,000 at
 * 98% of the capacity of eight replicas of 256 slots measured its warm-up: attainment 100%,
 * against 9% in the long run.
 */
uint32_t SteadyRequests(const ServingRow& r);

/**
 * \return the study as results.json holds it: the input (the job as the first candidate
 * resolves it, its layout replaced by the space), the counts and every row
 */
Json ServingStudyJson(const ServingStudy& study,
                      const ServingSpace& space,
                      const std::vector<ServingRow>& rows,
                      const std::string& backend,
                      const std::string& routing,
                      const std::string& packet = "");

/**
 * \brief Writes DIR/results.csv, DIR/results.json and DIR/throughput-latency.png (throughput
 * per GPU against time per output token of the fitting rows, a line per tp x pp through its
 * batch sizes, the targets marked).
 * \param dir the directory (created) \param json the study's JSON (ServingStudyJson)
 * \param rows the ranked rows \param space the targets \param title the plot's title
 */
void WriteServingStudy(const std::string& dir,
                       const Json& json,
                       const std::vector<ServingRow>& rows,
                       const ServingSpace& space,
                       const std::string& title);

/**
 * \brief Writes DIR/attainment-rate.png for a loaded study with targets: the share of requests
 * within the targets against requests per second per GPU, from 5% to all of each row's
 * capacity, for the first six loaded rows of the ranking (as DistServe's evaluation plots it).
 * \param dir the directory (WriteServingStudy's) \param study the study \param rows its ranked,
 * loaded rows \param space the targets \param title the plot's title
 */
void WriteServingLoadPlot(const std::string& dir,
                          const ServingStudy& study,
                          const std::vector<ServingRow>& rows,
                          const ServingSpace& space,
                          const std::string& title);

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_SERVING_STUDY_H
