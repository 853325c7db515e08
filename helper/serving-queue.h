/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_SERVING_QUEUE_H
#define RAPIDLLM_SERVING_QUEUE_H

#include "prefix-cache.h"

#include <cstdint>
#include <functional>
#include <vector>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief An iteration's time and dynamic energy against the requests it carries (a decode step
 * against the requests in flight, a prefill iteration against its prompts), from replays at a
 * few sizes and linear between them (an iteration reads the weights once and costs about the
 * same per request beyond, so it is nearly affine in them). A curve may also know what a token
 * of its requests adds: for a decode step a key its requests attend to (the attention reads
 * every cached key and value once a step), for a prefill a prompt token it computes; replayed
 * at `tokens` a request and again at half as many, the difference per token at each size (an
 * iteration is nearly affine in its tokens too, and its fixed costs do not scale with them).
 */
struct StepCurve
{
    std::vector<uint32_t> requests; //!< the replayed sizes, ascending, the first 1
    std::vector<double> seconds;    //!< an iteration's time at each
    std::vector<double> joules;     //!< its dynamic energy at each
    /**
     * the tokens of each request in the replayed iterations (a decode step: the keys each
     * attended to, on average; a prefill: the prompt tokens each computed); 0: the curve does
     * not follow the tokens
     */
    double tokens = 0;
    std::vector<double> secondsPerToken; //!< at each size, the time per token beyond `tokens`
    std::vector<double> joulesPerToken;  //!< at each size, the dynamic energy per token beyond
    /**
     * a prefill curve: at each size, the time per squared token of a request beyond `tokens`
     * squared, the attention kernels' (a prompt's attention grows with the square of its
     * tokens, its GEMMs with the tokens; the energy is taken as affine); empty: affine
     */
    std::vector<double> secondsPerTokenSq;
    /**
     * a prefill curve: the cached prefix of each request in the replayed iterations. A
     * request's attention pairs are t c + t^2 / 2 for t tokens computed after c cached, so its
     * squares are counted as t^2 + 2 t (c - cached): t^2 for the replayed prefix, and the pairs
     * with the keys a longer or shorter prefix adds or takes (a request that finds its prefix
     * and one that does not, around a curve replayed at the mean prefix)
     */
    double cached = 0;

    /** \param n requests (1 to the last point; beyond it, the last) \return the time */
    double SecondsAt(uint32_t n) const;
    /** \param n requests (1 to the last point; beyond it, the last) \return the energy */
    double JoulesAt(uint32_t n) const;
    /** \return whether the curve follows its requests' tokens */
    bool FollowsTokens() const;
    /**
     * \param n requests \param total the tokens of all of them (keys attended to, or prompt
     * tokens computed) \return the iteration's time: SecondsAt(n) plus the tokens beyond n x
     * `tokens` at the size's time per token (never below 0); SecondsAt(n) where the curve does
     * not follow the tokens
     */
    double SecondsAt(uint32_t n, double total) const;
    /** \param n requests \param total their tokens \return the dynamic energy, the same way */
    double JoulesAt(uint32_t n, double total) const;
    /**
     * \param n requests \param total their tokens \param totalSq the sum of each one's tokens
     * squared \return the iteration's time: SecondsAt(n, total) plus the squares beyond n x
     * `tokens` squared at the size's time per squared token (never below 0)
     */
    double SecondsAt(uint32_t n, double total, double totalSq) const;
};

/** How requests are dealt to an engine's instances (SimulateInstances) or replicas. */
enum class QueueRouter
{
    ROUND_ROBIN,       //!< in turn, whatever they hold
    LEAST_OUTSTANDING, //!< to the one with the fewest requests not finished as it comes
    /**
     * by the prefixes the instances hold (SGLang's and vLLM's routers' cache_aware policy, see
     * SimulateInstances); requests of a prefix group only
     */
    CACHE_AWARE
};

/**
 * \ingroup rapid-llm
 * \brief An engine instance as the queue simulation sees it: it keeps at most `slots` requests
 * in flight and runs iterations one after another, each a prefill of the oldest waiting
 * requests, as many as slots are free, the prefill curve's last point and the token budget
 * allow, when one waits (vLLM's scheduler before V1 puts prefills first and batches the prompts
 * its token budget holds), else a decode step of every request in flight. A decode-only
 * instance (disaggregated serving) has no prefill: a request takes a free slot as it arrives.
 * Chunked (chunked prefill, vLLM V1), every step carries the decodes of the requests past their
 * prompts and, in the budget left, the next tokens of the prompts in flight, oldest first; a
 * request takes a free slot as it arrives and its first token comes with the step that ends its
 * prompt. Static, an idle instance takes up to `slots` waiting requests as one batch: its prompts
 * padded to the longest, its steps to the longest generation (Orca, OSDI '22, section 2.3),
 * each request's tokens streamed as its own steps end. With data-parallel attention replicas
 * (continuous batching), the requests are dealt to them in turn; each replica schedules its own
 * (a prefill when one of its requests waits for a free slot, else a decode step of its own)
 * and an iteration of all of them lasts as long as the longest of those: a prefill of k prompts
 * takes the curve's k (every replica prefilling k), a decode step the step curve at the replica's
 * requests, and its dynamic energy is the replicas' average of the curves' at their own sizes.
 */
struct QueueEngine
{
    uint32_t slots = 1;     //!< requests in flight at most (the study's batch)
    uint32_t generated = 1; //!< tokens each request generates, the first by its prefill
    /**
     * a prefill iteration of k prompts, to their first tokens, against k (1 to the most one
     * iteration takes); empty: no prefill here (decode only, or chunked)
     */
    StepCurve prefill;
    /**
     * share of a prefill iteration that holds the engine: 1, or 1 / batches in flight where they
     * keep a pipeline's other stages busy meanwhile
     */
    double prefillHeld = 1;
    StepCurve step; //!< a decode step against the requests in flight
    /**
     * the prompt tokens the curves were replayed at (computed, after a cached prefix): a
     * request's prefill costs the prefill curve at its own (QueueRequest::prompt), or where the
     * curve does not follow its tokens, the curve's scaled by their ratio
     */
    uint32_t prompt = 0;
    /**
     * prompt tokens of a request at the engine's prompt found in the prefix cache: its decode
     * steps attend to prompt + cached keys and the tokens it has generated
     */
    uint32_t cached = 0;
    /**
     * tokens one iteration carries: chunked, a step's decodes and prompt tokens; otherwise a
     * prefill iteration's prompts (at least one prompt; 0: no limit but the prefill curve's)
     */
    uint32_t tokenBudget = 0;
    bool chunked = false; //!< prompts go into the decode steps (chunked prefill)
    /**
     * static batching: an idle instance takes the waiting requests, `slots` at most, and runs
     * them as one batch from a prefill of them all to its longest generation before it takes
     * more (a prefill curve needed, the token budget unused)
     */
    bool wholeBatches = false;
    /**
     * static batching: how long an idle instance waits, after the oldest waiting request came,
     * for more to fill its batch (Triton's dynamic batcher, max_queue_delay_microseconds; 0:
     * it starts with those waiting)
     */
    double batchDelayS = 0;
    /**
     * data-parallel attention: replicas of `slots` each that share the experts and so run their
     * iterations in lockstep (the experts' all-to-alls join them every layer, SGLang's DP
     * attention); the curves are the instance's with every replica at the same size
     */
    uint32_t replicas = 1;
    /**
     * how arriving requests are dealt to the replicas: in turn, or each as an iteration starts
     * to the one with the fewest running and waiting (vLLM's internal data-parallel load
     * balancing)
     */
    QueueRouter replicaRouter = QueueRouter::ROUND_ROBIN;
    /**
     * a replica's KV cache in tokens of its requests (beyond a shared prefix; 0: no limit): a
     * request is admitted (prefilled, or given a slot) only while its whole length, prompt and
     * generated tokens, fits beside those reserved for the requests in flight, as
     * TensorRT-LLM's GUARANTEED_NO_EVICT scheduler reserves them (a static batch: its padded
     * rows); a request alone is always admitted
     */
    double kvTokens = 0;
    /** prompt tokens every request shares, stored once (a shared prefix): not reserved each */
    uint32_t kvShared = 0;
    /**
     * within kvTokens, continuous batching with prefills: admit a request while its prompt and
     * next token fit beside the tokens the requests in flight hold now, and before a decode
     * step whose new tokens do not fit preempt the latest admitted (its cache freed, back to
     * the front of the queue, its prompt and generated tokens recomputed by a prefill when it
     * is admitted again, which yields its next token), as vLLM's scheduler does (recompute
     * preemption). Chunked, as vLLM V1's: before a step whose tokens (a decode's, a prompt's
     * chunk and the token of a prompt it ends) do not fit beside those held, preempt the latest
     * admitted, decoding or in its prompt, and admit no one in that step; else admit the waiting
     * while their first chunk fits. False: reserve each request's whole length
     */
    bool preempt = false;
    double chunkTokenS = 0; //!< chunked: a step's time per prompt token it carries
    double chunkTokenJ = 0; //!< chunked: its dynamic energy per prompt token
    /**
     * chunked: the batches in flight through a pipeline (1 without one). chunkTokenS is a
     * prompt token's share of a mixed step whose chunks fill every batch in flight, 1 /
     * chunkBatches of its passage through the stages; a prompt's last piece rides in one batch
     * through every stage, so its first token comes no sooner than that passage after the
     * step's decodes (a lone prompt: its whole passage, as without a pipeline)
     */
    uint32_t chunkBatches = 1;
    /**
     * requests of prefix groups (QueueRequest::prefix): the tokens of each group's prefix, which
     * an instance holding it does not compute (a decode instance: does not receive) and,
     * continuous, chunked or decoding, keeps once for the group's requests in flight (0: none)
     */
    uint32_t prefixTokens = 0;
    /**
     * the prefixes an instance holds at most, the least recently used evicted (0: no limit);
     * an instance that counts its KV cache (continuous or chunked, kvTokens above 0) holds
     * instead its requests' in flight and what its free KV cache holds at each dealing
     */
    uint32_t prefixCapacity = 0;
};

/** What became of one request in the queue simulation (times in s from the first arrival). */
struct QueueRequest
{
    double arrivalS = 0;    //!< when it arrived
    double firstTokenS = 0; //!< when its first token came out
    /**
     * continuous and chunked batching: when it was first admitted, its prefill (or first chunk)
     * scheduled (-1: not yet; a preempted request's readmission keeps it)
     */
    double admittedS = -1;
    double finishS = 0; //!< when its last token came out
    /**
     * its prompt tokens (0: the engine's); in the queue simulation, those its prefill computes
     */
    uint32_t prompt = 0;
    uint32_t generated = 0; //!< the tokens it generates (0: the engine's)
    /**
     * its prompt tokens already in the cache, as a trace records them (ArrivalTrace::hasCached;
     * the study computes the rest); in the queue simulation, those of its prompt besides the
     * computed `prompt` (its decode steps attend to both)
     */
    uint32_t cached = 0;
    uint32_t preemptions = 0; //!< times the engine preempted it (QueueEngine::preempt)
    /** the time it spent preempted, its cache freed, before it was admitted again */
    double preemptedS = 0;
    double preemptedAtS = -1; //!< when it was last preempted while it waits (-1: it does not)
    /**
     * its prefix group, 1 to K (0: none): its prompt starts with the group's prefix of
     * QueueEngine::prefixTokens, found in the cache of an instance that holds it; `prompt` is
     * then its whole prompt until it is dealt to an instance
     */
    uint32_t prefix = 0;
};

/**
 * \brief Runs one engine instance over its requests (iteration by iteration, see QueueEngine)
 * and fills their first-token and finish times. With a prefill curve, a request's first token
 * comes at the end of its prefill iteration; with a token budget, at the end of the step that
 * carries its prompt's last token (a step with no decode costs the curve's one-request step plus
 * its prompt tokens); with neither, its firstTokenS must be set already (its prefill ran elsewhere)
 * and `arrivalS` is ignored in favour of `readyS`. \param engine the instance \param readyS when
 * each request reaches the instance, ascending \param requests the requests, one per readyS, filled
 * in place \return the dynamic energy of the instance's iterations, J
 */
double SimulateEngine(const QueueEngine& engine,
                      const std::vector<double>& readyS,
                      std::vector<QueueRequest*>& requests);

/**
 * \brief Runs instances of one engine (SimulateEngine) over requests dealt to them by a
 * router: in turn, or each as it comes to the instance with the fewest requests waiting or in
 * flight then (the lowest index among equals; Vidur's least-outstanding-requests global
 * scheduler, a load balancer's least-requests policy), the instances simulated side by side
 * up to each arrival. With prefix groups (QueueEngine::prefixTokens), each instance keeps a
 * PrefixCache: a request dealt to one that holds its group's prefix computes only the rest of
 * its prompt (QueueRequest::cached, at most all but one token), and the prefix is then held
 * (the router's view of the caches is the caches, as the cache-aware routers mirror them; a
 * request's prefix counts as held from its dealing, not from its prefill's end). The
 * cache-aware router (SGLang's and vLLM's router, policy cache_aware, defaults
 * --cache-threshold 0.3, --balance-abs-threshold 64, --balance-rel-threshold 1.5): while the
 * busiest instance has more than 64 outstanding requests beyond the idlest and more than 1.5
 * times as many, the least outstanding; otherwise, where the prefix is more than 0.3 of the
 * prompt, the least outstanding of the instances holding it, and where none holds it (or it
 * is a smaller share) the instance holding the fewest prefixes (the routers' smallest tree).
 * \param engine the instances \param instances how many \param router how requests are dealt
 * \param readyS when each reaches them (ascending unless dealt in turn)
 * \param requests one per readyS, filled in place
 * \param instanceOf if given, filled with each request's instance
 * \return the dynamic energy of each instance's iterations, J
 */
std::vector<double> SimulateInstances(const QueueEngine& engine,
                                      uint32_t instances,
                                      QueueRouter router,
                                      const std::vector<double>& readyS,
                                      std::vector<QueueRequest*>& requests,
                                      std::vector<uint32_t>* instanceOf = nullptr);

/**
 * \brief Runs a pool of prefill instances (disaggregated serving): the instance that is free
 * first (the lowest index among equals) takes the oldest waiting prompts, as many as have
 * arrived, its prefill curve's last point and the token budget hold (one at least), and can take
 * the next after their iteration's time over its stages (consecutive iterations pipeline through
 * them); their first tokens come at the iteration's end. An iteration costs the curve's time
 * and energy for as many prompts, scaled by their tokens against as many of the curve's.
 * \param instances prefill instances \param stages their pipeline stages
 * \param prefill a prefill iteration against its prompts \param prompt the curve's prompt
 * tokens \param tokenBudget tokens an iteration carries (0: no limit but the curve's)
 * With prefix groups each instance keeps a PrefixCache: a group's prompt that an instance takes
 * computes only the rest where the instance held its prefix before the iteration. Cache-aware
 * (with prefix groups), each prompt is dealt as it comes to an instance's own queue by the
 * cache-aware router (SimulateInstances; the outstanding being the prompts not yet
 * prefilled), which then holds its prefix, and each instance takes its own oldest prompts.
 * \param requests arrival order; firstTokenS filled
 * \param instanceOf if given, filled with each request's instance
 * \param prefixTokens a prefix group's tokens (QueueEngine::prefixTokens; 0: none)
 * \param prefixCapacity the prefixes an instance holds at most (0: no limit)
 * \param cacheAware whether the prompts are dealt by the cache-aware router
 * \return the dynamic energy of the iterations, J
 */
double SimulatePrefillPool(uint32_t instances,
                           uint32_t stages,
                           const StepCurve& prefill,
                           uint32_t prompt,
                           uint32_t tokenBudget,
                           std::vector<QueueRequest>& requests,
                           std::vector<uint32_t>* instanceOf = nullptr,
                           uint32_t prefixTokens = 0,
                           uint32_t prefixCapacity = 0,
                           bool cacheAware = false);

/**
 * \brief Times the KV-cache handovers of disaggregated serving on the links they share: each
 * request's transfer leaves its prefill instance when its prefill ends and takes \p seconds
 * (its own, as replayed alone on the network), one at a time out of a prefill instance and one
 * at a time into a decode instance (both GPU sets' links are what a transfer fills), in the
 * order of the prefills' ends (ties: arrival order).
 * \param requests the requests, their first tokens set \param prefillOf each one's prefill
 * instance \param decodeOf each one's decode instance \param seconds each one's transfer alone
 * \return when each reaches its decode instance
 */
std::vector<double> ScheduleKvTransfers(const std::vector<QueueRequest>& requests,
                                        const std::vector<uint32_t>& prefillOf,
                                        const std::vector<uint32_t>& decodeOf,
                                        const std::vector<double>& seconds);

/**
 * \brief Disaggregated serving's decode side: hands each request's KV cache over to a decode
 * instance as its prefill ends (ScheduleKvTransfers' shared links), the instance chosen by the
 * router (in turn, or the one with the fewest requests not finished as the prefill ends,
 * counting those handed over to it and on their way), and runs the decode instances. With
 * prefix groups (QueueEngine::prefixTokens) each decode instance keeps a prefix cache as the
 * co-located ones do (SimulateInstances): a request whose group's prefix its decode instance
 * holds as it is dealt sends only the rest of its prompt's KV cache (vLLM's KV connectors load
 * what lies beyond the tokens found locally), and its group's requests in flight share one copy.
 * \param engine a decode instance (no prefill curve) \param instances how many
 * \param router how requests are dealt \param prefillOf each request's prefill instance
 * \param seconds a request's transfer alone to a decode instance (the request's index, the
 * instance's) \param requests the requests, their first tokens set (SimulatePrefillPool);
 * filled in place \param prefixHits if given, set to the requests whose decode instance held
 * their group's prefix (their transfers the rest only)
 * \return the dynamic energy of each decode instance's iterations, J
 */
std::vector<double> SimulateDecodeInstances(
    const QueueEngine& engine,
    uint32_t instances,
    QueueRouter router,
    const std::vector<uint32_t>& prefillOf,
    const std::function<double(std::size_t, uint32_t)>& seconds,
    std::vector<QueueRequest>& requests,
    uint64_t* prefixHits = nullptr);

/** Percentiles and target attainment of a simulated set of requests. */
struct QueueSummary
{
    double ttftP50S = 0; //!< median time to first token (queueing included)
    double ttftP90S = 0; //!< 90th percentile of it
    double ttftP99S = 0; //!< 99th percentile of it
    /** median of each request's time per output token after its first (of the requests of
     * two or more tokens; a one-token request has none, and meets any TPOT target) */
    double tpotP50S = 0;
    double tpotP90S = 0;       //!< 90th percentile of it
    double tpotP99S = 0;       //!< 99th percentile of it
    double attainment = 0;     //!< share of the requests within both targets (those not 0)
    double ttftAttainment = 0; //!< share within the time-to-first-token target alone
    double tpotAttainment = 0; //!< share within the time-per-output-token target alone
    double spanS = 0;          //!< from the first arrival to the last token
    uint64_t preemptions = 0;  //!< the requests' preemptions (QueueRequest::preemptions)
};

/**
 * \param requests the simulated requests \param generated tokens each generates (unless
 * its own are set)
 * \param ttftSloS time to first token target (0: none) \param tpotSloS time per output token
 * target (0: none)
 * \return their percentiles (nearest rank) and attainment
 */
QueueSummary SummarizeQueue(const std::vector<QueueRequest>& requests,
                            uint32_t generated,
                            double ttftSloS,
                            double tpotSloS);

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_SERVING_QUEUE_H
