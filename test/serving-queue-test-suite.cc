/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// The serving queue simulation against queueing theory and hand-worked schedules: Poisson
// arrivals, an M/D/1 queue (Pollaczek-Khinchine), a saturated engine (the closed-loop cycle), a
// lightly loaded one (a request alone), decode-only instances, static batches, data-parallel
// attention replicas, the prefill pool and the summary.

#include "ns3/prefix-cache.h"
#include "ns3/request-draws.h"
#include "ns3/serving-queue.h"
#include "ns3/test.h"
#include "test-require.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>

using namespace ns3;
using namespace ns3::rapidllm;

namespace {

/** \return a step curve of time a + b n at 1, 2, 4 and 8 requests, energy n J */
StepCurve
AffineCurve(double a, double b)
{
    StepCurve c;
    for (uint32_t n : {1u, 2u, 4u, 8u})
    {
        c.requests.push_back(n);
        c.seconds.push_back(a + b * n);
        c.joules.push_back(n);
    }
    return c;
}

/** \return a prefill curve of one prompt a iteration: \p seconds and \p joules */
StepCurve
OnePrompt(double seconds, double joules)
{
    return StepCurve{{1}, {seconds}, {joules}};
}

/**
 * \return the engine most schedules here are worked for: four slots, 100-token prompts, 11
 * tokens generated, a prefill of 0.5 s (1 J) a prompt, decode steps of 10 ms + 1 ms a request
 */
QueueEngine
FourSlots()
{
    QueueEngine e;
    e.slots = 4;
    e.generated = 11;
    e.prompt = 100;
    e.prefill = OnePrompt(0.5, 1);
    e.step = AffineCurve(0.01, 0.001);
    return e;
}

/** \return requests arriving at the given times, with a pointer list to them */
std::vector<QueueRequest>
Arriving(const std::vector<double>& times)
{
    std::vector<QueueRequest> requests(times.size());
    for (std::size_t i = 0; i < times.size(); ++i)
    {
        requests[i].arrivalS = times[i];
    }
    return requests;
}

/** \return pointers to every request */
std::vector<QueueRequest*>
All(std::vector<QueueRequest>& requests)
{
    std::vector<QueueRequest*> all;
    for (auto& r : requests)
    {
        all.push_back(&r);
    }
    return all;
}

/**
 * \return requests arriving at \p ready after the engine ran them (SimulateEngine), the
 * iterations' energy in \p joules if given
 */
std::vector<QueueRequest>
Simulated(const QueueEngine& e, const std::vector<double>& ready, double* joules = nullptr)
{
    std::vector<QueueRequest> requests = Arriving(ready);
    std::vector<QueueRequest*> all = All(requests);
    const double j = SimulateEngine(e, ready, all);
    if (joules != nullptr)
    {
        *joules = j;
    }
    return requests;
}

/** \return whether \p f throws an \p E (a refusal) */
template<typename E, typename F>
bool
Throws(F f)
{
    try
    {
        f();
    }
    catch (const E&)
    {
        return true;
    }
    return false;
}

/** \return whether the engine refuses to run one request (a logic_error: not set up for it) */
bool
Refuses(const QueueEngine& e)
{
    return Throws<std::logic_error>(
        [&e]
        {
            Simulated(e, {0});
        });
}

} // namespace

/**
 * \ingroup rapid-llm-tests
 * \brief The step curve: the replayed points exactly, linear between them, the last beyond.
 */
class StepCurveTestCase : public TestCase
{
  public:
    StepCurveTestCase()
        : TestCase("serving queue: step curve (and a prefill's squares)")
    {}

  private:
    void
    DoRun() override
    {
        const StepCurve c = AffineCurve(0.01, 0.001);
        NS_TEST_EXPECT_MSG_EQ_TOL(c.SecondsAt(1), 0.011, 1e-15, "a point");
        NS_TEST_EXPECT_MSG_EQ_TOL(c.SecondsAt(3), 0.013, 1e-15, "between 2 and 4");
        NS_TEST_EXPECT_MSG_EQ_TOL(c.SecondsAt(6), 0.016, 1e-15, "between 4 and 8");
        NS_TEST_EXPECT_MSG_EQ_TOL(c.JoulesAt(5), 5.0, 1e-12, "the energy the same way");
        NS_TEST_EXPECT_MSG_EQ_TOL(c.SecondsAt(9), 0.018, 1e-15, "the last point beyond it");
        // A prefill curve at 100 tokens a prompt, 1 ms a token and 10 us a squared token beyond:
        // two prompts of 50 and 250 tokens add 200 tokens and 62,500 - 20,000 squares.
        StepCurve p = AffineCurve(0.01, 0.001);
        p.tokens = 100;
        p.secondsPerToken.assign(4, 0.001);
        p.joulesPerToken.assign(4, 0.5);
        NS_TEST_EXPECT_MSG_EQ_TOL(
            p.SecondsAt(2, 300, 65000), 0.012 + 0.1, 1e-12, "affine without squares");
        p.secondsPerTokenSq.assign(4, 1e-5);
        NS_TEST_EXPECT_MSG_EQ_TOL(
            p.SecondsAt(2, 300, 65000), 0.012 + 0.1 + 0.45, 1e-12, "and the squares");
        NS_TEST_EXPECT_MSG_EQ_TOL(
            p.SecondsAt(2, 200, 20000), 0.012, 1e-15, "the replayed length exactly");
        NS_TEST_EXPECT_MSG_EQ_TOL(p.JoulesAt(2, 300), 2.0 + 50, 1e-12, "energy affine");
    }
};

/**
 * \ingroup rapid-llm-tests
 * \brief Curves that follow their tokens: a step's time and energy grow with the keys its
 * requests attend to; each request's decode steps attend to its prompt (computed and cached)
 * and the tokens it has generated; static batches attend to the longest prompt's padding; a
 * prefill costs its own prompt tokens beside its fixed costs.
 */
class ContextStepsTestCase : public TestCase
{
  public:
    ContextStepsTestCase()
        : TestCase("serving queue: steps against the context")
    {}

  private:
    void
    DoRun() override
    {
        // Replayed at 105.5 keys a request (a 100-token prompt and half of ten steps), each key
        // beyond it 10 us and 0.01 J.
        StepCurve curve = AffineCurve(0.01, 0.001);
        curve.tokens = 105.5;
        curve.secondsPerToken.assign(4, 1e-5);
        curve.joulesPerToken.assign(4, 0.01);
        NS_TEST_EXPECT_MSG_EQ_TOL(curve.SecondsAt(2, 311), 0.013, 1e-15, "100 keys more");
        NS_TEST_EXPECT_MSG_EQ_TOL(curve.JoulesAt(2, 111), 1.0, 1e-12, "100 keys fewer");
        NS_TEST_EXPECT_MSG_EQ_TOL(curve.SecondsAt(3, 316.5), 0.013, 1e-15, "between sizes");
        StepCurve steep = curve;
        steep.secondsPerToken.assign(4, 1e-3);
        NS_TEST_EXPECT_MSG_EQ(steep.SecondsAt(1, 0), 0.0, "never below 0");
        StepCurve flat = curve;
        flat.tokens = 0;
        NS_TEST_EXPECT_MSG_EQ(flat.SecondsAt(2, 1e6), flat.SecondsAt(2), "not followed");

        QueueEngine e = FourSlots();
        e.slots = 2;
        e.step = curve;
        // Alone at the engine's prompt: its steps attend to 101 to 110 keys, 105.5 on average,
        // so the curve's own steps; a 300-token prompt 200 keys more each step; a prompt of
        // 50 computed tokens after 250 cached the same keys as 300 computed, a quarter of the
        // prefill.
        {
            std::vector<QueueRequest> requests = Arriving({0, 10, 20});
            requests[1].prompt = 300;
            requests[2].prompt = 50;
            requests[2].cached = 250;
            std::vector<QueueRequest*> all = All(requests);
            const double joules = SimulateEngine(e, {0, 10, 20}, all);
            NS_TEST_EXPECT_MSG_EQ_TOL(
                requests[0].finishS - requests[0].firstTokenS, 0.11, 1e-12, "the mean context");
            NS_TEST_EXPECT_MSG_EQ_TOL(
                requests[1].finishS - requests[1].firstTokenS, 0.13, 1e-12, "200 keys more");
            NS_TEST_EXPECT_MSG_EQ_TOL(
                requests[2].firstTokenS - requests[2].arrivalS, 0.25, 1e-12, "50 computed");
            NS_TEST_EXPECT_MSG_EQ_TOL(
                requests[2].finishS - requests[2].firstTokenS, 0.13, 1e-12, "300 attended");
            NS_TEST_EXPECT_MSG_EQ_TOL(joules,
                                      1 + 3 + 0.5 + 10 * 1.0 + 10 * 3.0 + 10 * 3.0,
                                      1e-9,
                                      "prefills by their tokens, steps 2 J more at 200 keys more");
        }
        // Decode only, both together: step j attends to 100 + j and 300 + j keys, 189 + 2 j
        // more than two at the curve's context.
        {
            QueueEngine d = e;
            d.prefill = StepCurve();
            std::vector<QueueRequest> requests = Arriving({0, 0});
            requests[1].prompt = 300;
            std::vector<QueueRequest*> all = All(requests);
            SimulateEngine(d, {0, 0}, all);
            NS_TEST_EXPECT_MSG_EQ_TOL(requests[0].finishS, 0.12 + 0.02, 1e-12, "steps of two");
            NS_TEST_EXPECT_MSG_EQ_TOL(requests[1].finishS, 0.14, 1e-12, "the same steps");
        }
        // Static: prompts of 50 and 150 padded to 150, step s attending to 2 (150 + s) keys.
        {
            QueueEngine b = e;
            b.prefill = StepCurve{{1, 2}, {0.5, 0.6}, {1, 2}};
            b.wholeBatches = true;
            std::vector<QueueRequest> requests = Arriving({0, 0});
            requests[0].prompt = 50;
            requests[0].generated = 3;
            requests[1].prompt = 150;
            std::vector<QueueRequest*> all = All(requests);
            SimulateEngine(b, {0, 0}, all);
            NS_TEST_EXPECT_MSG_EQ_TOL(
                requests[0].finishS, 0.9 + 0.024 + 1e-5 * (178 + 6), 1e-12, "two padded steps");
            NS_TEST_EXPECT_MSG_EQ_TOL(
                requests[1].finishS, 0.9 + 0.12 + 1e-5 * (890 + 110), 1e-12, "ten steps");
        }
        // A prefill curve that follows its prompt tokens: replayed at 100 a prompt, 4 ms and
        // 8 mJ a token beyond; a 50-token prompt keeps the fixed 0.1 s (scaled, 0.25 s).
        {
            QueueEngine f = e;
            f.prefill.tokens = 100;
            f.prefill.secondsPerToken = {0.004};
            f.prefill.joulesPerToken = {0.008};
            std::vector<QueueRequest> requests = Arriving({0});
            requests[0].prompt = 50;
            requests[0].generated = 1;
            std::vector<QueueRequest*> all = All(requests);
            const double joules = SimulateEngine(f, {0}, all);
            NS_TEST_EXPECT_MSG_EQ_TOL(requests[0].firstTokenS, 0.3, 1e-12, "0.5 - 50 x 4 ms");
            NS_TEST_EXPECT_MSG_EQ_TOL(joules, 0.6, 1e-12, "1 - 50 x 8 mJ");
        }
        // Chunked: a 300-token request decoding beside another's prompt chunk.
        {
            QueueEngine c = e;
            c.prefill = StepCurve();
            c.chunked = true;
            c.tokenBudget = 1000;
            c.generated = 2;
            std::vector<QueueRequest> requests = Arriving({0});
            requests[0].prompt = 300;
            std::vector<QueueRequest*> all = All(requests);
            SimulateEngine(c, {0}, all);
            // A step of no decode at the curve's context carries the prompt, then one decode
            // attending to 301 keys.
            NS_TEST_EXPECT_MSG_EQ_TOL(requests[0].firstTokenS, 0.011, 1e-12, "the prompt");
            NS_TEST_EXPECT_MSG_EQ_TOL(requests[0].finishS - requests[0].firstTokenS,
                                      0.011 + 1e-5 * (301 - 105.5),
                                      1e-12,
                                      "one step at 301 keys");
        }
    }
};

/**
 * \ingroup rapid-llm-tests
 * \brief Prefix hits: none at 0, all at 1 (within each prompt), the share over many draws, the
 * same for the same seed; a request without a prompt of its own gets the job's.
 */
class PrefixHitsTestCase : public TestCase
{
  public:
    PrefixHitsTestCase()
        : TestCase("serving queue: prefix hits drawn")
    {}

  private:
    void
    DoRun() override
    {
        std::vector<QueueRequest> requests(100000);
        requests[0].prompt = 50;
        DrawPrefixHits(requests, 1, 80, 100, 3);
        NS_TEST_EXPECT_MSG_EQ(requests[0].cached, 49u, "within its own 50 tokens");
        NS_TEST_EXPECT_MSG_EQ(requests[1].prompt, 100u, "the job's prompt");
        NS_TEST_EXPECT_MSG_EQ(requests[1].cached, 80u, "every one a hit");
        DrawPrefixHits(requests, 0, 80, 100, 3);
        NS_TEST_EXPECT_MSG_EQ(std::count_if(requests.begin(),
                                            requests.end(),
                                            [](const QueueRequest& r)
                                            {
                                                return r.cached > 0;
                                            }),
                              0,
                              "none at 0");
        DrawPrefixHits(requests, 0.3, 80, 100, 3);
        const auto hits = std::count_if(requests.begin(),
                                        requests.end(),
                                        [](const QueueRequest& r)
                                        {
                                            return r.cached == 80;
                                        });
        // Binomial: 30,000 expected, standard deviation 145.
        NS_TEST_EXPECT_MSG_EQ_TOL(double(hits), 30000.0, 600.0, "30% of them");
        std::vector<QueueRequest> again(100000);
        again[0].prompt = 50;
        DrawPrefixHits(again, 0.3, 80, 100, 3);
        bool same = true;
        for (std::size_t i = 1; i < again.size(); ++i)
        {
            same = same && again[i].cached == requests[i].cached;
        }
        NS_TEST_EXPECT_MSG_EQ(same, true, "the same seed, the same hits");
        DrawPrefixHits(again, 0.3, 80, 100, 4);
        std::size_t differ = 0;
        for (std::size_t i = 1; i < again.size(); ++i)
        {
            differ += again[i].cached != requests[i].cached ? 1 : 0;
        }
        NS_TEST_EXPECT_MSG_GT(differ, 30000u, "another seed, other hits (42% expected)");
        NS_TEST_EXPECT_MSG_EQ(Throws<std::invalid_argument>(
                                  [&]
                                  {
                                      DrawPrefixHits(again, 1.5, 80, 100, 3);
                                  }),
                              true,
                              "a share above 1");
    }
};

/**
 * \ingroup rapid-llm-tests
 * \brief A KV cache of 250 tokens for requests of 111 (100-token prompts, 11 generated): two
 * in flight at most, whatever the slots, under every batching; a request larger than the cache
 * runs alone; vLLM's preemption admits on the prompt and recomputes the request it preempts;
 * vLLM V1's (chunked) admits on the first chunk, preempts in a prompt too, and readmits on the
 * tokens the prefix cache kept.
 */
class KvAdmissionTestCase : public TestCase
{
  public:
    KvAdmissionTestCase()
        : TestCase("serving queue: admission within the KV cache")
    {}

  private:
    void
    DoRun() override
    {
        QueueEngine e = FourSlots();
        const std::vector<double> four(4, 0.0);
        {
            // Two prefills, ten steps of two, then the other two.
            QueueEngine limited = e;
            limited.kvTokens = 250;
            const std::vector<QueueRequest> r = Simulated(limited, four);
            NS_TEST_EXPECT_MSG_EQ_TOL(r[1].firstTokenS, 1.0, 1e-12, "the second prefill");
            NS_TEST_EXPECT_MSG_EQ_TOL(r[2].firstTokenS, 1.0 + 0.12 + 0.5, 1e-12, "waits for room");
            NS_TEST_EXPECT_MSG_EQ_TOL(r[3].firstTokenS, 2.12, 1e-12, "then the fourth");
            const std::vector<QueueRequest> free = Simulated(e, four);
            NS_TEST_EXPECT_MSG_EQ_TOL(free[2].firstTokenS, 1.5, 1e-12, "no limit: slots only");
            // A shared prefix of 60 tokens is not reserved each time: three fit (3 x 51).
            QueueEngine shared = limited;
            shared.kvTokens = 160;
            shared.kvShared = 60;
            NS_TEST_EXPECT_MSG_EQ_TOL(
                Simulated(shared, four)[2].firstTokenS, 1.5, 1e-12, "three within 160");
            // Prefix groups share their prefix's blocks (60 of each 100-token prompt): one group
            // holds 60 once beside 51 a request, three within 250; two groups hold a copy each,
            // two requests within 250 as without groups.
            auto grouped = [&](const std::vector<uint32_t>& groups)
            {
                QueueEngine g = limited;
                g.prefixTokens = 60;
                std::vector<QueueRequest> r = Arriving(four);
                for (std::size_t i = 0; i < r.size(); ++i)
                {
                    r[i].prefix = groups[i];
                }
                std::vector<QueueRequest*> all = All(r);
                SimulateEngine(g, four, all);
                return r;
            };
            const std::vector<QueueRequest> one = grouped({1, 1, 1, 1});
            NS_TEST_EXPECT_MSG_EQ_TOL(one[2].firstTokenS, 1.5, 1e-12, "three within 250");
            NS_TEST_EXPECT_MSG_GT(one[3].firstTokenS, one[0].finishS - 1e-12, "the fourth waits");
            NS_TEST_EXPECT_MSG_EQ_TOL(
                grouped({1, 2, 1, 2})[2].firstTokenS, 1.62, 1e-12, "two copies: two within 250");
            // A cache smaller than one request: each runs alone.
            QueueEngine tiny = e;
            tiny.kvTokens = 50;
            const std::vector<QueueRequest> alone = Simulated(tiny, {0, 0});
            NS_TEST_EXPECT_MSG_EQ_TOL(alone[1].firstTokenS, 0.5 + 0.11 + 0.5, 1e-12, "alone");
        }
        {
            // vLLM's preemption, 220 tokens: two admitted on their prompts (2 x 101), nine steps
            // of two fill the cache (2 x 110), so before the tenth the later one leaves with a
            // step to go; the first ends alone, then the other's 100 prompt and 10 generated
            // tokens are recomputed (a prefill of 110 tokens, 0.55 s) and yield its last token.
            QueueEngine vllm = e;
            vllm.kvTokens = 220;
            vllm.preempt = true;
            const std::vector<QueueRequest> r = Simulated(vllm, four);
            NS_TEST_EXPECT_MSG_EQ_TOL(r[1].firstTokenS, 1.0, 1e-12, "admitted on its prompt");
            NS_TEST_EXPECT_MSG_EQ_TOL(r[0].finishS, 1.0 + 9 * 0.012 + 0.011, 1e-12, "alone");
            NS_TEST_EXPECT_MSG_EQ_TOL(r[1].finishS, 1.119 + 0.55, 1e-12, "recomputed");
            NS_TEST_EXPECT_MSG_EQ_TOL(r[2].firstTokenS, 1.669 + 0.5, 1e-12, "then the third");
            NS_TEST_EXPECT_MSG_EQ(r[1].preemptions, 1u, "preempted once");
            NS_TEST_EXPECT_MSG_EQ_TOL(r[1].admittedS, 0.5, 1e-12, "first admitted");
            NS_TEST_EXPECT_MSG_EQ_TOL(r[1].preemptedS, 0.011, 1e-12, "out while the first ends");
            NS_TEST_EXPECT_MSG_EQ(r[3].preemptions, 1u, "the later of the next pair too");
            NS_TEST_EXPECT_MSG_EQ(SummarizeQueue(r, 11, 0, 0).preemptions, 2u, "two in all");
            // Reserving whole lengths instead: one at a time.
            QueueEngine reserving = vllm;
            reserving.preempt = false;
            const std::vector<QueueRequest> one = Simulated(reserving, four);
            NS_TEST_EXPECT_MSG_EQ_TOL(one[1].firstTokenS, 0.61 + 0.5, 1e-12, "after the first");
        }
        {
            // Decode only: two take slots at once, the others as they finish.
            QueueEngine d = e;
            d.prefill = StepCurve();
            d.kvTokens = 250;
            const std::vector<QueueRequest> r = Simulated(d, four);
            NS_TEST_EXPECT_MSG_EQ_TOL(r[1].finishS, 0.12, 1e-12, "steps of two");
            NS_TEST_EXPECT_MSG_EQ_TOL(r[3].finishS, 0.24, 1e-12, "then two more");
        }
        {
            // Static: batches of two padded rows.
            QueueEngine b = e;
            b.prefill = StepCurve{{1, 2, 4}, {0.5, 0.6, 0.8}, {1, 2, 4}};
            b.wholeBatches = true;
            b.kvTokens = 250;
            const std::vector<QueueRequest> r = Simulated(b, four);
            NS_TEST_EXPECT_MSG_EQ_TOL(r[1].firstTokenS, 0.6, 1e-12, "two prefilled");
            NS_TEST_EXPECT_MSG_EQ_TOL(r[2].firstTokenS, 0.72 + 0.6, 1e-12, "then two");
        }
        {
            // vLLM V1 (chunked, 1,000 tokens a step at 5 ms each), 220 tokens: both prompts in
            // one step (0.011 + 1.0 s), nine decode steps of two, then the later one preempted
            // with a step to go; its 109 computed tokens stay in the prefix cache (the first
            // alone needs 111 of the 220), so on readmission it computes its last token only.
            QueueEngine v1 = e;
            v1.prefill = StepCurve();
            v1.chunked = true;
            v1.tokenBudget = 1000;
            v1.chunkTokenS = 0.005;
            v1.kvTokens = 220;
            v1.preempt = true;
            const std::vector<QueueRequest> r = Simulated(v1, {0, 0});
            NS_TEST_EXPECT_MSG_EQ_TOL(r[1].firstTokenS, 1.011, 1e-12, "admitted on its prompt");
            NS_TEST_EXPECT_MSG_EQ_TOL(r[0].finishS, 1.011 + 9 * 0.012 + 0.011, 1e-12, "alone");
            NS_TEST_EXPECT_MSG_EQ_TOL(r[1].finishS, 1.13 + 0.011 + 0.005, 1e-12, "a token");
            NS_TEST_EXPECT_MSG_EQ(r[1].preemptions, 1u, "preempted once");
            NS_TEST_EXPECT_MSG_EQ_TOL(r[1].admittedS, 0, 1e-12, "first admitted");
            NS_TEST_EXPECT_MSG_EQ_TOL(r[1].preemptedS, 0.011, 1e-12, "out while the first ends");
            // One prefix group, 60 tokens of each prompt held once: 60 + 2 x 51 fit in 220,
            // neither is preempted; the two run as in an unlimited cache.
            QueueEngine sharing = v1;
            sharing.prefixTokens = 60;
            auto group = [&](const QueueEngine& engine)
            {
                std::vector<QueueRequest> g = Arriving({0, 0});
                g[0].prefix = g[1].prefix = 1;
                std::vector<QueueRequest*> both = All(g);
                SimulateEngine(engine, {0, 0}, both);
                return g;
            };
            const std::vector<QueueRequest> g = group(sharing);
            NS_TEST_EXPECT_MSG_EQ(g[0].preemptions + g[1].preemptions, 0u, "no preemption");
            sharing.kvTokens = 0;
            NS_TEST_EXPECT_MSG_EQ_TOL(
                g[1].finishS, group(sharing)[1].finishS, 1e-12, "as in an unlimited cache");
            NS_TEST_EXPECT_MSG_LT(g[1].finishS, r[1].finishS, "sooner than preempted");
            QueueEngine reserving = v1;
            reserving.preempt = false;
            NS_TEST_EXPECT_MSG_EQ_TOL(Simulated(reserving, {0, 0})[1].firstTokenS,
                                      0.621 + 0.511,
                                      1e-12,
                                      "reserving: after the first");
            // 60 tokens a step, 200 in the cache, the first generating 41: it takes 60 of its
            // prompt, then 40 and the second's first 20, then a decode and 59 (181 tokens
            // held and added); the next step (204) preempts the second in its prompt, its 79
            // tokens cached. Beside them the first grows a token a step, and from 20 steps
            // before its end (122 held and added + 79 = 201) takes a cached token a step: the
            // second, readmitted once the first is done, computes 100 - 59 tokens.
            v1.tokenBudget = 60;
            v1.kvTokens = 200;
            std::vector<QueueRequest> c = Arriving({0, 0});
            c[0].generated = 41;
            std::vector<QueueRequest*> all = All(c);
            SimulateEngine(v1, {0, 0}, all);
            NS_TEST_EXPECT_MSG_EQ_TOL(c[0].firstTokenS, 0.622, 1e-12, "two chunks");
            NS_TEST_EXPECT_MSG_EQ_TOL(c[0].finishS, 0.928 + 39 * 0.011, 1e-12, "then alone");
            NS_TEST_EXPECT_MSG_EQ_TOL(c[1].firstTokenS, 1.357 + 0.011 + 41 * 0.005, 1e-12, "41");
            NS_TEST_EXPECT_MSG_EQ_TOL(c[1].finishS, 1.573 + 10 * 0.011, 1e-12, "its decodes");
            NS_TEST_EXPECT_MSG_EQ(c[1].preemptions, 1u, "preempted in its prompt");
        }
        {
            // Chunked: a slot taken only with room in the cache.
            QueueEngine c = e;
            c.prefill = StepCurve();
            c.chunked = true;
            c.tokenBudget = 1000;
            c.kvTokens = 150;
            const std::vector<QueueRequest> r = Simulated(c, {0, 0});
            NS_TEST_EXPECT_MSG_GT(r[1].firstTokenS, r[0].finishS - 1e-12, "after the first");
            c.kvTokens = 0;
            const std::vector<QueueRequest> free = Simulated(c, {0, 0});
            NS_TEST_EXPECT_MSG_LT(free[1].firstTokenS, free[0].finishS, "no limit: together");
        }
    }
};

/**
 * \ingroup rapid-llm-tests
 * \brief KV-cache handovers on shared links: one at a time out of a prefill instance and into a
 * decode instance, in the order of the prefills' ends; apart, side by side.
 */
class KvTransfersTestCase : public TestCase
{
  public:
    KvTransfersTestCase()
        : TestCase("serving queue: KV-cache handovers on shared links")
    {}

  private:
    void
    DoRun() override
    {
        std::vector<QueueRequest> r(3);
        for (auto& q : r)
        {
            q.firstTokenS = 1;
        }
        const std::vector<double> half(3, 0.5);
        const std::vector<double> out = ScheduleKvTransfers(r, {0, 0, 0}, {0, 1, 2}, half);
        NS_TEST_EXPECT_MSG_EQ_TOL(out[2], 2.5, 1e-12, "one prefill instance: one at a time");
        const std::vector<double> apart = ScheduleKvTransfers(r, {0, 1, 2}, {0, 1, 2}, half);
        NS_TEST_EXPECT_MSG_EQ_TOL(apart[2], 1.5, 1e-12, "three pairs: side by side");
        const std::vector<double> in = ScheduleKvTransfers(r, {0, 1, 2}, {0, 0, 1}, half);
        NS_TEST_EXPECT_MSG_EQ_TOL(in[1], 2.0, 1e-12, "one decode instance: one at a time");
        NS_TEST_EXPECT_MSG_EQ_TOL(in[2], 1.5, 1e-12, "the other at once");
        r[0].firstTokenS = 2;
        const std::vector<double> later = ScheduleKvTransfers(r, {0, 0, 0}, {0, 0, 0}, half);
        NS_TEST_EXPECT_MSG_EQ_TOL(later[1], 1.5, 1e-12, "the first prefill to end goes first");
        NS_TEST_EXPECT_MSG_EQ_TOL(later[0], 2.5, 1e-12, "then the last, when it ends");
        NS_TEST_EXPECT_MSG_EQ(Throws<std::logic_error>(
                                  [&]
                                  {
                                      ScheduleKvTransfers(r, {0}, {0, 0, 0}, half);
                                  }),
                              true,
                              "an instance pair per request");
    }
};

/**
 * \ingroup rapid-llm-tests
 * \brief Poisson arrivals: ascending, the mean gap 1 / rate, the same for the same seed and
 * not for another; a rate of 0 refused.
 */
class PoissonArrivalsTestCase : public TestCase
{
  public:
    PoissonArrivalsTestCase()
        : TestCase("serving queue: Poisson arrivals")
    {}

  private:
    void
    DoRun() override
    {
        const std::vector<double> a = PoissonArrivals(4, 100000, 1);
        RAPIDLLM_REQUIRE_EQ(a.size(), 100000u, "as many as asked");
        NS_TEST_EXPECT_MSG_EQ(std::is_sorted(a.begin(), a.end()), true, "ascending");
        NS_TEST_EXPECT_MSG_EQ_TOL(a.back() / double(a.size()), 0.25, 0.005, "mean gap 1/rate");
        // The share of gaps above their mean: e^-1 for exponential gaps.
        uint64_t above = a.front() > 0.25 ? 1 : 0;
        for (std::size_t i = 1; i < a.size(); ++i)
        {
            above += a[i] - a[i - 1] > 0.25 ? 1 : 0;
        }
        NS_TEST_EXPECT_MSG_EQ_TOL(
            double(above) / double(a.size()), std::exp(-1.0), 0.005, "exponential gaps");
        NS_TEST_EXPECT_MSG_EQ((PoissonArrivals(4, 10, 1) == PoissonArrivals(4, 10, 1)),
                              true,
                              "the same seed, the same arrivals");
        NS_TEST_EXPECT_MSG_EQ(
            (PoissonArrivals(4, 10, 1) != PoissonArrivals(4, 10, 2)), true, "another seed, others");
        NS_TEST_EXPECT_MSG_EQ(Throws<std::invalid_argument>(
                                  [&]
                                  {
                                      PoissonArrivals(0, 10, 1);
                                  }),
                              true,
                              "no arrivals at rate 0");
    }
};

/**
 * \ingroup rapid-llm-tests
 * \brief Gamma-distributed gaps (burstiness): shape 1 is the Poisson process draw for draw; the
 * mean gap is 1 / rate and the gaps' squared coefficient of variation 1 / shape, bursty or even;
 * the same seed gives the same draws; a shape of 0 refused.
 */
class GammaArrivalsTestCase : public TestCase
{
  public:
    GammaArrivalsTestCase()
        : TestCase("serving queue: gamma arrivals (burstiness)")
    {}

  private:
    void
    DoRun() override
    {
        NS_TEST_EXPECT_MSG_EQ((GammaArrivals(4, 1, 1000, 3) == PoissonArrivals(4, 1000, 3)),
                              true,
                              "shape 1: the Poisson draws");
        for (double shape : {0.25, 0.5, 2.0, 8.0})
        {
            const std::vector<double> a = GammaArrivals(4, shape, 200000, 1);
            RAPIDLLM_REQUIRE_EQ(a.size(), 200000u, "as many as asked");
            NS_TEST_EXPECT_MSG_EQ(std::is_sorted(a.begin(), a.end()), true, "ascending");
            double sum = 0;
            double squares = 0;
            double previous = 0;
            for (double t : a)
            {
                sum += t - previous;
                squares += (t - previous) * (t - previous);
                previous = t;
            }
            const double mean = sum / double(a.size());
            const double variance = squares / double(a.size()) - mean * mean;
            NS_TEST_EXPECT_MSG_EQ_TOL(mean, 0.25, 0.0025, "mean gap 1/rate, shape " << shape);
            NS_TEST_EXPECT_MSG_EQ_TOL(
                variance / (mean * mean) * shape, 1.0, 0.05, "squared CV 1/shape, shape " << shape);
        }
        NS_TEST_EXPECT_MSG_EQ((GammaArrivals(4, 0.5, 10, 1) == GammaArrivals(4, 0.5, 10, 1)),
                              true,
                              "the same seed, the same arrivals");
        NS_TEST_EXPECT_MSG_EQ((GammaArrivals(4, 0.5, 10, 1) != GammaArrivals(4, 0.5, 10, 2)),
                              true,
                              "another seed, others");
        NS_TEST_EXPECT_MSG_EQ(Throws<std::invalid_argument>(
                                  [&]
                                  {
                                      GammaArrivals(4, 0, 10, 1);
                                  }),
                              true,
                              "no gaps of shape 0");
    }
};

/**
 * \ingroup rapid-llm-tests
 * \brief One slot and one generated token make an engine an M/D/1 queue: the mean time to the
 * first token is the prefill plus Pollaczek-Khinchine's wait rho s / (2 (1 - rho)).
 */
class MD1QueueTestCase : public TestCase
{
  public:
    MD1QueueTestCase()
        : TestCase("serving queue: one slot waits as Pollaczek-Khinchine says (M-D-1)")
    {}

  private:
    void
    DoRun() override
    {
        QueueEngine e;
        e.slots = 1;
        e.generated = 1;
        e.prefill = OnePrompt(0.1, 2);
        e.step = AffineCurve(0, 1);
        for (double rho : {0.5, 0.8})
        {
            const std::vector<double> arrivals = PoissonArrivals(rho / 0.1, 200000, 7);
            std::vector<QueueRequest> requests = Arriving(arrivals);
            std::vector<QueueRequest*> all = All(requests);
            const double joules = SimulateEngine(e, arrivals, all);
            NS_TEST_EXPECT_MSG_EQ_TOL(joules, 2.0 * 200000, 1e-6, "one prefill each");
            double sum = 0;
            for (const auto& r : requests)
            {
                sum += r.firstTokenS - r.arrivalS;
                NS_TEST_EXPECT_MSG_EQ(r.finishS, r.firstTokenS, "one token: done at the first");
            }
            const double expected = 0.1 + rho * 0.1 / (2 * (1 - rho));
            NS_TEST_EXPECT_MSG_EQ_TOL(
                sum / double(requests.size()) / expected, 1.0, 0.03, "rho " << rho);
        }
    }
};

/**
 * \ingroup rapid-llm-tests
 * \brief Schedules worked by hand: requests all waiting at once fill the slots with prefills and
 * then decode together (the closed-loop cycle B t_p + (G - 1) t_d(B)); a request alone takes
 * its prefill and steps of one; a decode-only instance admits at arrival and holds the rest
 * until a slot frees; chunked prefill carries the prompts in the budget the decodes leave; the
 * prefill pool pipelines prompts through its instances' stages.
 */
class EngineScheduleTestCase : public TestCase
{
  public:
    EngineScheduleTestCase()
        : TestCase("serving queue: schedules worked by hand")
    {}

  private:
    void
    DoRun() override
    {
        QueueEngine e;
        e.slots = 4;
        e.generated = 11;
        e.prefill = OnePrompt(0.5, 1);
        e.step = AffineCurve(0.01, 0.001);

        // Twelve requests waiting at 0: three cycles of four prefills and ten steps of four.
        {
            const std::vector<double> ready(12, 0.0);
            std::vector<QueueRequest> requests = Arriving(ready);
            std::vector<QueueRequest*> all = All(requests);
            const double joules = SimulateEngine(e, ready, all);
            const double cycle = 4 * 0.5 + 10 * 0.014;
            double last = 0;
            for (const auto& r : requests)
            {
                last = std::max(last, r.finishS);
            }
            NS_TEST_EXPECT_MSG_EQ_TOL(last, 3 * cycle, 1e-12, "three closed-loop cycles");
            NS_TEST_EXPECT_MSG_EQ_TOL(requests[3].firstTokenS, 2.0, 1e-12, "the fourth prefill");
            NS_TEST_EXPECT_MSG_EQ_TOL(
                requests[4].firstTokenS, cycle + 0.5, 1e-12, "the fifth waits for a slot");
            NS_TEST_EXPECT_MSG_EQ_TOL(joules, 12 * 1 + 30 * 4.0, 1e-9, "prefills and steps");
        }
        // Requests far apart: each alone.
        {
            const std::vector<double> ready = {1, 100, 200};
            std::vector<QueueRequest> requests = Arriving(ready);
            std::vector<QueueRequest*> all = All(requests);
            SimulateEngine(e, ready, all);
            for (const auto& r : requests)
            {
                NS_TEST_EXPECT_MSG_EQ_TOL(r.firstTokenS - r.arrivalS, 0.5, 1e-12, "its prefill");
                NS_TEST_EXPECT_MSG_EQ_TOL(
                    r.finishS - r.firstTokenS, 10 * 0.011, 1e-12, "ten steps of one");
            }
        }
        // A prefill held by a pipeline's share: the engine takes the next after 0.25 s.
        {
            QueueEngine piped = e;
            piped.prefillHeld = 0.5;
            const std::vector<double> ready = {0, 0};
            std::vector<QueueRequest> requests = Arriving(ready);
            std::vector<QueueRequest*> all = All(requests);
            SimulateEngine(piped, ready, all);
            NS_TEST_EXPECT_MSG_EQ_TOL(requests[1].firstTokenS, 0.75, 1e-12, "after the share");
        }
        // Prompts batched: up to four an iteration, 0.5 s for one, 0.1 s more for each other.
        {
            QueueEngine b = e;
            b.slots = 3;
            b.prefill = StepCurve{{1, 2, 4}, {0.5, 0.6, 0.8}, {1, 2, 4}};
            const std::vector<double> ready = {0, 0, 0, 0};
            std::vector<QueueRequest> requests = Arriving(ready);
            std::vector<QueueRequest*> all = All(requests);
            const double joules = SimulateEngine(b, ready, all);
            NS_TEST_EXPECT_MSG_EQ_TOL(requests[2].firstTokenS, 0.7, 1e-12, "three slots: three");
            NS_TEST_EXPECT_MSG_EQ_TOL(requests[3].firstTokenS,
                                      0.7 + 10 * 0.013 + 0.5,
                                      1e-12,
                                      "the fourth after them, alone");
            NS_TEST_EXPECT_MSG_EQ_TOL(joules, 3 + 10 * 3 + 1 + 10 * 1, 1e-9, "two prefills");
        }
        // Decode only, two slots, three requests whose first tokens came at 0.
        {
            QueueEngine d = e;
            d.slots = 2;
            d.prefill = StepCurve();
            const std::vector<double> ready = {0, 0, 0};
            std::vector<QueueRequest> requests = Arriving(ready);
            std::vector<QueueRequest*> all = All(requests);
            SimulateEngine(d, ready, all);
            NS_TEST_EXPECT_MSG_EQ_TOL(requests[0].finishS, 10 * 0.012, 1e-12, "steps of two");
            NS_TEST_EXPECT_MSG_EQ_TOL(requests[2].finishS,
                                      10 * 0.012 + 10 * 0.011,
                                      1e-12,
                                      "the third after a slot frees, alone");
        }
        // Chunked prefill: two slots, prompts of 10 tokens under a budget of 6 a step.
        {
            QueueEngine c = e;
            c.slots = 2;
            c.generated = 3;
            c.prefill = StepCurve();
            c.chunked = true;
            c.tokenBudget = 6;
            c.prompt = 10;
            c.chunkTokenS = 0.001;
            c.chunkTokenJ = 0.1;
            const std::vector<double> ready = {0, 0};
            std::vector<QueueRequest> requests = Arriving(ready);
            std::vector<QueueRequest*> all = All(requests);
            const double joules = SimulateEngine(c, ready, all);
            // Steps: 6 tokens; 4 + 2; a decode + 5; a decode + 3; two decodes of the second.
            NS_TEST_EXPECT_MSG_EQ_TOL(requests[0].firstTokenS, 0.034, 1e-12, "two steps");
            NS_TEST_EXPECT_MSG_EQ_TOL(requests[0].finishS, 0.064, 1e-12, "two decodes");
            NS_TEST_EXPECT_MSG_EQ_TOL(requests[1].firstTokenS, 0.064, 1e-12, "behind the first");
            NS_TEST_EXPECT_MSG_EQ_TOL(requests[1].finishS, 0.086, 1e-12, "then alone");
            NS_TEST_EXPECT_MSG_EQ_TOL(joules, 6 * 1 + 20 * 0.1, 1e-9, "six steps, 20 tokens");
            // Through a pipeline of two batches in flight the steps keep their pace (a token
            // costs its share), but a prompt's last piece rides in one batch through both
            // stages: the first ends its 4 tokens at 0.017 + 0.011 + 2 x 4 ms, the second its 3
            // at 0.050 + 0.011 + 2 x 3 ms, and each decodes as much later.
            QueueEngine piped = c;
            piped.chunkBatches = 2;
            std::vector<QueueRequest> staged = Arriving(ready);
            std::vector<QueueRequest*> allStaged = All(staged);
            const double stagedJ = SimulateEngine(piped, ready, allStaged);
            NS_TEST_EXPECT_MSG_EQ_TOL(staged[0].firstTokenS, 0.036, 1e-12, "its passage");
            NS_TEST_EXPECT_MSG_EQ_TOL(staged[0].finishS, 0.066, 1e-12, "two decodes, later");
            NS_TEST_EXPECT_MSG_EQ_TOL(staged[1].firstTokenS, 0.067, 1e-12, "its passage");
            NS_TEST_EXPECT_MSG_EQ_TOL(staged[1].finishS, 0.089, 1e-12, "then alone");
            NS_TEST_EXPECT_MSG_EQ_TOL(stagedJ, joules, 1e-9, "the same work");
            // A lone prompt takes its whole passage: twice the 6 tokens' share.
            const std::vector<double> lone = {0};
            std::vector<QueueRequest> one = Arriving(lone);
            std::vector<QueueRequest*> allOne = All(one);
            piped.prompt = 6;
            SimulateEngine(piped, lone, allOne);
            NS_TEST_EXPECT_MSG_EQ_TOL(one[0].firstTokenS, 0.011 + 12 * 0.001, 1e-12, "passage");
            NS_TEST_EXPECT_MSG_EQ_TOL(
                one[0].finishS, 0.017 + 2 * 0.011 + 0.006, 1e-12, "its decodes as much later");
        }
        // One prefill instance batching the prompts that have arrived.
        {
            std::vector<QueueRequest> requests = Arriving({0, 0, 0, 1});
            const double joules = SimulatePrefillPool(
                1, 1, StepCurve{{1, 2, 4}, {1.0, 1.5, 2.0}, {1, 2, 4}}, 0, 0, requests);
            NS_TEST_EXPECT_MSG_EQ_TOL(requests[2].firstTokenS, 1.75, 1e-12, "three together");
            NS_TEST_EXPECT_MSG_EQ_TOL(requests[3].firstTokenS, 2.75, 1e-12, "then the fourth");
            NS_TEST_EXPECT_MSG_EQ_TOL(joules, 3.0 + 1.0, 1e-12, "two iterations");
        }
        // Two prefill instances of two stages, five prompts at 0.
        {
            std::vector<QueueRequest> requests = Arriving({0, 0, 0, 0, 0});
            std::vector<uint32_t> instanceOf;
            SimulatePrefillPool(2, 2, OnePrompt(1.0, 1), 0, 0, requests, &instanceOf);
            const std::vector<double> first = {1, 1, 1.5, 1.5, 2};
            const std::vector<uint32_t> instance = {0, 1, 0, 1, 0};
            for (std::size_t i = 0; i < first.size(); ++i)
            {
                NS_TEST_EXPECT_MSG_EQ_TOL(requests[i].firstTokenS, first[i], 1e-12, "prompt " << i);
                NS_TEST_EXPECT_MSG_EQ(instanceOf.at(i), instance[i], "its instance " << i);
            }
        }
    }
};

/**
 * \ingroup rapid-llm-tests
 * \brief Static batching: an idle instance takes the waiting requests as one batch and runs it to
 * its longest generation before it takes more; prompts padded to the longest; one slot is the
 * same queue as continuous batching's.
 */
class StaticBatchTestCase : public TestCase
{
  public:
    StaticBatchTestCase()
        : TestCase("serving queue: static batches")
    {}

  private:
    void
    DoRun() override
    {
        QueueEngine e = FourSlots();
        e.prefill = StepCurve{{1, 2, 4}, {0.5, 0.6, 0.8}, {1, 2, 4}};
        e.wholeBatches = true;

        // Six requests at 0: a batch of four, then one of two.
        {
            double joules = 0;
            const std::vector<QueueRequest> requests =
                Simulated(e, std::vector<double>(6, 0.0), &joules);
            NS_TEST_EXPECT_MSG_EQ_TOL(requests[3].firstTokenS, 0.8, 1e-12, "four prefilled");
            NS_TEST_EXPECT_MSG_EQ_TOL(requests[3].finishS, 0.94, 1e-12, "ten steps of four");
            NS_TEST_EXPECT_MSG_EQ_TOL(requests[4].firstTokenS, 1.54, 1e-12, "then two");
            NS_TEST_EXPECT_MSG_EQ_TOL(requests[5].finishS, 1.66, 1e-12, "ten steps of two");
            NS_TEST_EXPECT_MSG_EQ_TOL(joules, 4 + 10 * 4 + 2 + 10 * 2, 1e-9, "two batches");
        }
        // A request that comes while a batch runs waits for the whole batch, free slots or not
        // (continuous batching prefills it once the running iteration ends).
        {
            const std::vector<QueueRequest> requests = Simulated(e, {0, 0.1});
            NS_TEST_EXPECT_MSG_EQ_TOL(requests[0].finishS, 0.61, 1e-12, "alone");
            NS_TEST_EXPECT_MSG_EQ_TOL(requests[1].firstTokenS, 1.11, 1e-12, "after the batch");
            QueueEngine continuous = e;
            continuous.wholeBatches = false;
            const std::vector<QueueRequest> joined = Simulated(continuous, {0, 0.1});
            NS_TEST_EXPECT_MSG_LT(
                joined[1].firstTokenS, joined[0].finishS, "continuous: it joins the first");
        }
        // Lengths of their own: the prompts padded to the longest (150 of 100: 1.5 times the
        // prefill); each request's last token at its own step, the batch held to the longest.
        {
            const std::vector<double> ready = {0, 0, 0.95};
            std::vector<QueueRequest> requests = Arriving(ready);
            requests[0].prompt = 50;
            requests[0].generated = 3;
            requests[1].prompt = 150;
            requests[1].generated = 11;
            std::vector<QueueRequest*> all = All(requests);
            const double joules = SimulateEngine(e, ready, all);
            NS_TEST_EXPECT_MSG_EQ_TOL(requests[0].firstTokenS, 0.9, 1e-12, "padded to 150");
            NS_TEST_EXPECT_MSG_EQ_TOL(requests[0].finishS, 0.924, 1e-12, "its own two steps");
            NS_TEST_EXPECT_MSG_EQ_TOL(requests[1].finishS, 1.02, 1e-12, "ten steps");
            NS_TEST_EXPECT_MSG_EQ_TOL(
                requests[2].firstTokenS, 1.52, 1e-12, "after the longest, not the first");
            NS_TEST_EXPECT_MSG_EQ_TOL(requests[2].finishS, 1.63, 1e-12, "alone");
            NS_TEST_EXPECT_MSG_EQ_TOL(joules, 2 * 1.5 + 10 * 2 + 1 + 10 * 1, 1e-9, "padded");
        }
        // One slot: the same schedule as continuous batching, request by request.
        {
            QueueEngine one = e;
            one.slots = 1;
            QueueEngine continuous = one;
            continuous.wholeBatches = false;
            const std::vector<double> ready = PoissonArrivals(2, 200, 7);
            double ja = 0;
            double jb = 0;
            const std::vector<QueueRequest> a = Simulated(one, ready, &ja);
            const std::vector<QueueRequest> b = Simulated(continuous, ready, &jb);
            bool same = ja == jb;
            for (std::size_t i = 0; i < a.size(); ++i)
            {
                same = same && std::abs(a[i].firstTokenS - b[i].firstTokenS) < 1e-9
                       && std::abs(a[i].finishS - b[i].finishS) < 1e-9;
            }
            NS_TEST_EXPECT_MSG_EQ(same, true, "one slot: one queue");
        }
        // A batch delay (Triton's max_queue_delay): the idle instance waits up to 0.3 s after
        // the oldest request for the batch to fill, and starts at once when it does.
        {
            QueueEngine delayed = e;
            delayed.batchDelayS = 0.3;
            const std::vector<QueueRequest> partial = Simulated(delayed, {0, 0.1, 0.2, 2.0});
            NS_TEST_EXPECT_MSG_EQ_TOL(partial[2].firstTokenS, 0.3 + 0.7, 1e-12, "three at 0.3");
            NS_TEST_EXPECT_MSG_EQ_TOL(
                partial[3].firstTokenS, 2.3 + 0.5, 1e-12, "alone after its wait");
            const std::vector<QueueRequest> full = Simulated(delayed, {0, 0.05, 0.1, 0.15});
            NS_TEST_EXPECT_MSG_EQ_TOL(full[0].firstTokenS, 0.15 + 0.8, 1e-12, "full at 0.15");
        }
        // Static batching needs the prefill curve.
        QueueEngine bare = e;
        bare.prefill = StepCurve();
        NS_TEST_EXPECT_MSG_EQ(Refuses(bare), true, "no prefill curve");
    }
};

/**
 * \ingroup rapid-llm-tests
 * \brief Data-parallel attention replicas: each prefills its own requests, side by side in one
 * iteration, and a replica's decode step waits for another's prefill (lockstep).
 */
class LockstepReplicasTestCase : public TestCase
{
  public:
    LockstepReplicasTestCase()
        : TestCase("serving queue: data-parallel attention replicas in lockstep")
    {}

  private:
    void
    DoRun() override
    {
        QueueEngine e;
        e.slots = 2;
        e.generated = 21;
        e.prefill = OnePrompt(0.5, 1);
        e.step = AffineCurve(0.01, 0.001);
        e.replicas = 2;

        // Two requests at once, one per replica: prefilled in the same iteration, where one
        // replica of two slots prefills them one after the other.
        {
            double joules = 0;
            const std::vector<QueueRequest> requests = Simulated(e, {0, 0}, &joules);
            NS_TEST_EXPECT_MSG_EQ_TOL(requests[1].firstTokenS, 0.5, 1e-12, "side by side");
            NS_TEST_EXPECT_MSG_EQ_TOL(
                requests[1].finishS, 0.5 + 20 * 0.011, 1e-12, "steps of one each");
            NS_TEST_EXPECT_MSG_EQ_TOL(joules, 1 + 20 * 1.0, 1e-9, "each replica's half");
            QueueEngine one = e;
            one.replicas = 1;
            NS_TEST_EXPECT_MSG_EQ_TOL(
                Simulated(one, {0, 0})[1].firstTokenS, 1.0, 1e-12, "one replica: in turn");
        }
        // The second request's prefill on replica 1 holds replica 0's decode step.
        {
            const std::vector<QueueRequest> requests = Simulated(e, {0, 0.6});
            // Replica 0's tenth step ends at 0.61; then the prefill, its eleventh step with it.
            NS_TEST_EXPECT_MSG_EQ_TOL(requests[1].firstTokenS, 1.11, 1e-12, "at 0.61 + 0.5");
            NS_TEST_EXPECT_MSG_EQ_TOL(
                requests[0].finishS, 1.11 + 9 * 0.011, 1e-12, "its step held by the prefill");
            NS_TEST_EXPECT_MSG_EQ_TOL(requests[1].finishS, 1.11 + 20 * 0.011, 1e-12, "lockstep");
        }
        // One slot a replica, a long request, a short one and a third at 0.7 s: in turn it waits
        // for the long one's replica; dealt to the replica with the fewest running and waiting
        // (vLLM's), it takes the idle one as the iteration at 0.5 + 19 x 0.011 s starts.
        {
            QueueEngine single = e;
            single.slots = 1;
            single.generated = 11;
            auto run = [&](QueueRouter router)
            {
                single.replicaRouter = router;
                std::vector<QueueRequest> r = Arriving({0, 0, 0.7});
                r[0].generated = 101;
                std::vector<QueueRequest*> all = All(r);
                SimulateEngine(single, {0, 0, 0.7}, all);
                return r;
            };
            NS_TEST_EXPECT_MSG_EQ_TOL(run(QueueRouter::ROUND_ROBIN)[2].firstTokenS,
                                      0.5 + 100 * 0.011 + 0.5,
                                      1e-9,
                                      "in turn, behind the long one");
            NS_TEST_EXPECT_MSG_EQ_TOL(run(QueueRouter::LEAST_OUTSTANDING)[2].firstTokenS,
                                      0.5 + 19 * 0.011 + 0.5,
                                      1e-9,
                                      "the idle replica");
        }
        // Only continuous batching runs replicas.
        QueueEngine chunked = e;
        chunked.chunked = true;
        NS_TEST_EXPECT_MSG_EQ(Refuses(chunked), true, "chunked replicas refused");
    }
};

/**
 * \ingroup rapid-llm-tests
 * \brief Requests of their own lengths: drawn uniformly within the spread (the same for the same
 * seed, the mean without a spread); each decodes its own tokens; a prefill iteration takes the
 * prompts the token budget holds and costs in proportion to their tokens; so does a prefill
 * instance's prompt.
 */
class RequestLengthsTestCase : public TestCase
{
  public:
    RequestLengthsTestCase()
        : TestCase("serving queue: requests of their own lengths")
    {}

  private:
    void
    DoRun() override
    {
        std::vector<QueueRequest> drawn(20000);
        DrawLengths(drawn, 1000, 100, 0.5, 3);
        double prompts = 0;
        bool within = true;
        for (const auto& r : drawn)
        {
            prompts += r.prompt;
            within = within && r.prompt >= 500 && r.prompt <= 1500 && r.generated >= 50
                     && r.generated <= 150;
        }
        NS_TEST_EXPECT_MSG_EQ(within, true, "from L/2 to 3L/2");
        NS_TEST_EXPECT_MSG_EQ_TOL(prompts / double(drawn.size()), 1000.0, 10.0, "mean L");
        std::vector<QueueRequest> again(20000);
        DrawLengths(again, 1000, 100, 0.5, 3);
        NS_TEST_EXPECT_MSG_EQ((again[7].prompt == drawn[7].prompt), true, "the same seed");
        std::vector<QueueRequest> fixed(10);
        DrawLengths(fixed, 1000, 2, 0, 3);
        NS_TEST_EXPECT_MSG_EQ(
            (fixed[4].prompt == 1000 && fixed[4].generated == 2), true, "no spread: the mean");
        DrawLengths(fixed, 3, 3, 0.9, 5);
        bool least = true;
        for (const auto& r : fixed)
        {
            least = least && r.prompt >= 1 && r.generated >= 2;
        }
        NS_TEST_EXPECT_MSG_EQ(least, true, "a token of prompt, two generated at least");

        QueueEngine e;
        e.slots = 4;
        e.generated = 11;
        e.prompt = 600;
        e.tokenBudget = 1000;
        e.prefill = StepCurve{{1, 2, 4}, {0.5, 0.6, 0.8}, {1, 2, 4}};
        e.step = AffineCurve(0.01, 0.001);
        // Two prompts of 600 at 0: the budget holds one an iteration.
        {
            std::vector<QueueRequest> requests = Arriving({0, 0});
            std::vector<QueueRequest*> all = All(requests);
            SimulateEngine(e, {0, 0}, all);
            NS_TEST_EXPECT_MSG_EQ_TOL(requests[0].firstTokenS, 0.5, 1e-12, "one in 1000 tokens");
            NS_TEST_EXPECT_MSG_EQ_TOL(requests[1].firstTokenS, 1.0, 1e-12, "then the other");
        }
        // Prompts of 300 and 200 tokens together: two prompts' time at 500 / 1200 of their
        // tokens; then one decoding 2 tokens, the other 10.
        {
            std::vector<QueueRequest> requests = Arriving({0, 0});
            requests[0].prompt = 300;
            requests[0].generated = 3;
            requests[1].prompt = 200;
            std::vector<QueueRequest*> all = All(requests);
            const double joules = SimulateEngine(e, {0, 0}, all);
            const double prefill = 0.6 * 500 / 1200;
            NS_TEST_EXPECT_MSG_EQ_TOL(requests[1].firstTokenS, prefill, 1e-12, "scaled");
            NS_TEST_EXPECT_MSG_EQ_TOL(
                requests[0].finishS, prefill + 2 * 0.012, 1e-12, "its own two steps");
            NS_TEST_EXPECT_MSG_EQ_TOL(
                requests[1].finishS, prefill + 2 * 0.012 + 8 * 0.011, 1e-12, "the other's ten");
            NS_TEST_EXPECT_MSG_EQ_TOL(joules, 2 * 500.0 / 1200 + 2 * 2 + 8 * 1, 1e-9, "energy");
            const QueueSummary q = SummarizeQueue(requests, 11, 0, 0);
            NS_TEST_EXPECT_MSG_EQ_TOL(q.tpotP99S, 0.012, 1e-12, "two steps over two tokens");
            NS_TEST_EXPECT_MSG_EQ_TOL(
                q.tpotP50S, (2 * 0.012 + 8 * 0.011) / 10, 1e-12, "ten over ten");
        }
        // A prefill instance: a prompt of twice the length takes twice as long.
        {
            std::vector<QueueRequest> requests = Arriving({0, 10});
            requests[1].prompt = 1200;
            SimulatePrefillPool(1, 1, OnePrompt(1.0, 1), 600, 0, requests);
            NS_TEST_EXPECT_MSG_EQ_TOL(requests[0].firstTokenS, 1.0, 1e-12, "the job's prompt");
            NS_TEST_EXPECT_MSG_EQ_TOL(requests[1].firstTokenS, 12.0, 1e-12, "twice the prompt");
        }
    }
};

/**
 * \ingroup rapid-llm-tests
 * \brief The summary: nearest-rank percentiles, each request's time per output token after its
 * first, attainment of both targets and of each alone, the span.
 */
class QueueSummaryTestCase : public TestCase
{
  public:
    QueueSummaryTestCase()
        : TestCase("serving queue: percentiles and attainment")
    {}

  private:
    void
    DoRun() override
    {
        std::vector<QueueRequest> requests(100);
        for (std::size_t i = 0; i < requests.size(); ++i)
        {
            // Time to first token i + 1 ms; time per output token 1 ms, the last ten 3 ms.
            requests[i].arrivalS = double(i);
            requests[i].firstTokenS = double(i) + double(i + 1) * 1e-3;
            requests[i].finishS = requests[i].firstTokenS + (i >= 90 ? 3e-2 : 1e-2);
        }
        const QueueSummary s = SummarizeQueue(requests, 11, 0.0805, 0.002);
        NS_TEST_EXPECT_MSG_EQ_TOL(s.ttftP50S, 0.050, 1e-12, "the 50th of 100");
        NS_TEST_EXPECT_MSG_EQ_TOL(s.ttftP90S, 0.090, 1e-12, "the 90th");
        NS_TEST_EXPECT_MSG_EQ_TOL(s.ttftP99S, 0.099, 1e-12, "the 99th");
        NS_TEST_EXPECT_MSG_EQ_TOL(s.tpotP90S, 0.001, 1e-12, "ninety at 1 ms");
        NS_TEST_EXPECT_MSG_EQ_TOL(s.tpotP99S, 0.003, 1e-12, "the slow ten");
        NS_TEST_EXPECT_MSG_EQ_TOL(s.attainment, 0.80, 1e-12, "80 within 80 ms and 2 ms");
        NS_TEST_EXPECT_MSG_EQ_TOL(s.ttftAttainment, 0.80, 1e-12, "80 within 80 ms alone");
        NS_TEST_EXPECT_MSG_EQ_TOL(s.tpotAttainment, 0.90, 1e-12, "90 within 2 ms alone");
        const QueueSummary looser = SummarizeQueue(requests, 11, 0.0955, 0.002);
        NS_TEST_EXPECT_MSG_EQ_TOL(looser.ttftAttainment, 0.95, 1e-12, "95 within 95.5 ms alone");
        NS_TEST_EXPECT_MSG_EQ_TOL(
            looser.attainment, 0.90, 1e-12, "both: the per-token target binds");
        NS_TEST_EXPECT_MSG_EQ_TOL(s.spanS, 99 + 0.1 + 0.03, 1e-9, "first arrival to last token");
        NS_TEST_EXPECT_MSG_EQ_TOL(
            SummarizeQueue(requests, 11, 0, 0).attainment, 1.0, 1e-12, "no targets: all within");
        // One-token requests have no time per output token: left out of its percentiles (they
        // read 0 and made a 1 ms target look met), within any TPOT target (vLLM's goodput).
        std::vector<QueueRequest> mixed = requests;
        for (std::size_t i = 0; i < 60; ++i)
        {
            mixed[i].generated = 1;
            mixed[i].finishS = mixed[i].firstTokenS;
        }
        const QueueSummary m = SummarizeQueue(mixed, 11, 0, 0.002);
        NS_TEST_EXPECT_MSG_EQ_TOL(
            m.tpotP50S, 0.001, 1e-12, "the forty with tokens after the first");
        NS_TEST_EXPECT_MSG_EQ_TOL(m.tpotP90S, 0.003, 1e-12, "their slow ten");
        NS_TEST_EXPECT_MSG_EQ_TOL(m.tpotAttainment, 0.90, 1e-12, "the one-token sixty within");
    }
};

/**
 * \ingroup rapid-llm-tests
 * \brief Two one-slot instances: a long request, a short one and a third while the long one
 * runs; in turn the third waits behind the long one, to the least outstanding it takes the
 * instance the short one freed; the same for disaggregated decode instances as prefills end.
 */
class RouterTestCase : public TestCase
{
  public:
    RouterTestCase()
        : TestCase("serving queue: requests dealt in turn or to the least outstanding")
    {}

  private:
    void
    DoRun() override
    {
        QueueEngine e = FourSlots();
        e.slots = 1;
        const std::vector<double> ready = {0, 0, 0.7};
        auto run = [&](QueueRouter router, std::vector<double>* joules = nullptr)
        {
            std::vector<QueueRequest> r = Arriving(ready);
            r[0].generated = 101; // 0.5 + 100 x 0.011 s
            std::vector<QueueRequest*> all = All(r);
            const std::vector<double> j = SimulateInstances(e, 2, router, ready, all);
            if (joules != nullptr)
            {
                *joules = j;
            }
            return r;
        };
        std::vector<double> joules;
        const std::vector<QueueRequest> turn = run(QueueRouter::ROUND_ROBIN, &joules);
        NS_TEST_EXPECT_MSG_EQ_TOL(turn[0].finishS, 1.6, 1e-12, "the long one");
        NS_TEST_EXPECT_MSG_EQ_TOL(turn[2].firstTokenS, 1.6 + 0.5, 1e-12, "behind it");
        NS_TEST_EXPECT_MSG_EQ(joules.size(), 2u, "an energy per instance");
        NS_TEST_EXPECT_MSG_EQ_TOL(joules[0], 2 + 110 * 1.0, 1e-9, "two prefills, 110 steps");
        const std::vector<QueueRequest> least = run(QueueRouter::LEAST_OUTSTANDING);
        NS_TEST_EXPECT_MSG_EQ_TOL(least[1].firstTokenS, 0.5, 1e-12, "the second instance");
        NS_TEST_EXPECT_MSG_EQ_TOL(least[2].firstTokenS, 0.7 + 0.5, 1e-12, "the idle one");
        NS_TEST_EXPECT_MSG_EQ_TOL(least[0].finishS, 1.6, 1e-12, "the long one alone");
        // Disaggregated decode instances (one slot each, 0.1 s handovers from three prefill
        // instances): the third, its prefill ending at 0.5, behind the long one in turn, to the
        // idle instance at once by the least outstanding.
        QueueEngine d = e;
        d.prefill = StepCurve();
        // Each handover's time is its decode instance's (the second further away: 0.3 s).
        auto decode = [&](QueueRouter router, double second = 0.1)
        {
            std::vector<QueueRequest> r = Arriving({0, 0, 0.5});
            r[0].generated = 101;
            for (QueueRequest& q : r)
            {
                q.firstTokenS = q.arrivalS;
            }
            SimulateDecodeInstances(
                d,
                2,
                router,
                {0, 1, 2},
                [second](std::size_t, uint32_t k)
                {
                    return k == 0 ? 0.1 : second;
                },
                r);
            return r;
        };
        const std::vector<QueueRequest> inTurn = decode(QueueRouter::ROUND_ROBIN);
        NS_TEST_EXPECT_MSG_EQ_TOL(inTurn[0].finishS, 0.1 + 1.1, 1e-12, "handed over, 100 steps");
        NS_TEST_EXPECT_MSG_EQ_TOL(inTurn[2].finishS, 1.2 + 0.11, 1e-12, "behind the long one");
        const std::vector<QueueRequest> fewest = decode(QueueRouter::LEAST_OUTSTANDING);
        NS_TEST_EXPECT_MSG_EQ_TOL(fewest[1].finishS, 0.1 + 0.11, 1e-12, "the other instance");
        NS_TEST_EXPECT_MSG_EQ_TOL(fewest[2].finishS, 0.6 + 0.11, 1e-12, "the idle one");
        NS_TEST_EXPECT_MSG_EQ_TOL(decode(QueueRouter::ROUND_ROBIN, 0.3)[1].finishS,
                                  0.3 + 0.11,
                                  1e-12,
                                  "in turn to the far instance");
        const std::vector<QueueRequest> far = decode(QueueRouter::LEAST_OUTSTANDING, 0.3);
        NS_TEST_EXPECT_MSG_EQ_TOL(far[2].finishS, 0.8 + 0.11, 1e-12, "the idle far one");
        NS_TEST_EXPECT_MSG_EQ_TOL(far[0].finishS, 0.1 + 1.1, 1e-12, "the near one's own");
        // A decode instance's own prefix cache (60 of 100 prompt tokens): a request whose group
        // it holds receives only the rest (0.04 s of 0.1), and a group's requests in flight
        // share one copy (170 tokens hold two of group 1: 2 x 51 + 60, not 2 x 111).
        QueueEngine cached = FourSlots();
        cached.prefill = StepCurve();
        cached.prefixTokens = 60;
        uint64_t hits = 0;
        auto decodeGroups = [&](const std::vector<double>& at, const std::vector<uint32_t>& groups)
        {
            std::vector<QueueRequest> r = Arriving(at);
            for (std::size_t i = 0; i < r.size(); ++i)
            {
                r[i].firstTokenS = r[i].arrivalS;
                r[i].prompt = 100;
                r[i].prefix = groups[i];
            }
            SimulateDecodeInstances(
                cached,
                1,
                QueueRouter::ROUND_ROBIN,
                std::vector<uint32_t>(r.size(), 0),
                [](std::size_t, uint32_t)
                {
                    return 0.1;
                },
                r,
                &hits);
            return r;
        };
        const std::vector<QueueRequest> apart = decodeGroups({0, 1, 2}, {1, 1, 2});
        NS_TEST_EXPECT_MSG_EQ_TOL(apart[0].finishS, 0.1 + 0.11, 1e-12, "a first sight: all");
        NS_TEST_EXPECT_MSG_EQ_TOL(apart[1].finishS, 1.04 + 0.11, 1e-12, "held: the rest");
        NS_TEST_EXPECT_MSG_EQ_TOL(apart[2].finishS, 2.1 + 0.11, 1e-12, "another group: all");
        NS_TEST_EXPECT_MSG_EQ(hits, 1u, "one found at the decode instance");
        cached.kvTokens = 170;
        const std::vector<QueueRequest> together = decodeGroups({0, 0}, {1, 1});
        NS_TEST_EXPECT_MSG_LT(together[1].finishS, together[0].finishS + 0.1, "side by side");
        // Arrivals out of order: refused.
        NS_TEST_EXPECT_MSG_EQ(
            Throws<std::logic_error>(
                [&]
                {
                    std::vector<QueueRequest> r = Arriving({1, 0});
                    std::vector<QueueRequest*> all = All(r);
                    SimulateInstances(e, 2, QueueRouter::LEAST_OUTSTANDING, {1, 0}, all);
                }),
            true,
            "out of order");
    }
};

/**
 * \ingroup rapid-llm-tests
 * \brief Prefix groups: an instance's cache in LRU order, worked by hand; one-slot instances
 * dealt requests of two groups in turn, to the least outstanding and cache-aware (a request
 * finding its prefix prefills only the rest); the cache-aware router's smallest tree for a
 * short prefix and its fallback to the least outstanding past the imbalance thresholds; a
 * disaggregated prefill pool's caches, its prompts taken from one queue or dealt cache-aware.
 */
class PrefixGroupsTestCase : public TestCase
{
  public:
    PrefixGroupsTestCase()
        : TestCase("serving queue: prefix groups found in the instances' caches")
    {}

  private:
    void
    DoRun() override
    {
        PrefixCache lru(2);
        NS_TEST_EXPECT_MSG_EQ(lru.Use(1), false, "computed");
        NS_TEST_EXPECT_MSG_EQ(lru.Use(2), false, "computed");
        NS_TEST_EXPECT_MSG_EQ(lru.Use(1), true, "found, now the most recent");
        NS_TEST_EXPECT_MSG_EQ(lru.Use(3), false, "computed, the least recent (2) evicted");
        NS_TEST_EXPECT_MSG_EQ(lru.Holds(2), false, "evicted");
        NS_TEST_EXPECT_MSG_EQ((lru.Holds(1) && lru.Holds(3) && lru.Size() == 2), true, "kept");
        PrefixCache unlimited;
        for (uint32_t g = 1; g <= 1000; ++g)
        {
            unlimited.Use(g);
        }
        NS_TEST_EXPECT_MSG_EQ((unlimited.Use(1) && unlimited.Size() == 1000), true, "no limit");
        lru.Use(1); // 3, then 1 the most recent
        lru.Resize(1);
        NS_TEST_EXPECT_MSG_EQ((lru.Holds(1) && lru.Size() == 1), true, "shrunk: the LRU gone");
        // Pinned prefixes (those in flight) stay: the least recent unpinned goes instead, and
        // none where every one is pinned.
        PrefixCache pinned(2);
        pinned.Use(1);
        pinned.Use(2);
        pinned.Pin({1});
        pinned.Use(3);
        NS_TEST_EXPECT_MSG_EQ((pinned.Holds(1) && !pinned.Holds(2)), true, "2 went, not 1");
        pinned.Pin({3, 1});
        pinned.Use(4);
        NS_TEST_EXPECT_MSG_EQ(pinned.Size(), 3u, "both pinned: held beyond the capacity");
        pinned.Resize(1);
        NS_TEST_EXPECT_MSG_EQ((pinned.Size() == 2 && !pinned.Holds(4)), true, "4 unpinned");
        pinned.Pin({});
        pinned.Resize(1);
        NS_TEST_EXPECT_MSG_EQ((pinned.Size() == 1 && pinned.Holds(3)), true, "unpinned: LRU");

        // The cache holds what the KV cache leaves free at each moment: an idle instance of
        // four 111-token slots and 504 tokens holds 8 prefixes of 60, where a full batch leaves
        // room for one beside its four (a fixed capacity of 5 would lose group 1 to 2..6).
        {
            QueueEngine idle = FourSlots();
            idle.kvTokens = 504;
            idle.prefixTokens = 60;
            idle.prefixCapacity = 5;
            const std::vector<double> apart = {0, 10, 20, 30, 40, 50, 60};
            std::vector<QueueRequest> r = Arriving(apart);
            const uint32_t group[] = {1, 2, 3, 4, 5, 6, 1};
            for (std::size_t i = 0; i < r.size(); ++i)
            {
                r[i].prompt = 100;
                r[i].prefix = group[i];
            }
            std::vector<QueueRequest*> all = All(r);
            SimulateInstances(idle, 1, QueueRouter::ROUND_ROBIN, apart, all);
            NS_TEST_EXPECT_MSG_EQ(r[6].cached, 60u, "group 1 still held");
            NS_TEST_EXPECT_MSG_EQ_TOL(r[6].firstTokenS, 60.2, 1e-12, "the rest prefilled");
        }
        // A prefix in use stays however long ago it was dealt: group 1's request decodes 2,000
        // steps (2,101 tokens with its prefix), leaving 115 free, room for one other prefix;
        // groups 2 and 3 come and go one at a time, and 3 evicts 2, not group 1, so group 1's
        // next request finds it.
        {
            QueueEngine busy = FourSlots();
            busy.kvTokens = 2101 + 115;
            busy.prefixTokens = 60;
            const std::vector<double> apart = {0, 1, 2, 3};
            std::vector<QueueRequest> r = Arriving(apart);
            const uint32_t group[] = {1, 2, 3, 1};
            for (std::size_t i = 0; i < r.size(); ++i)
            {
                r[i].prompt = 100;
                r[i].prefix = group[i];
            }
            r[0].generated = 2001;
            std::vector<QueueRequest*> all = All(r);
            SimulateInstances(busy, 1, QueueRouter::ROUND_ROBIN, apart, all);
            NS_TEST_EXPECT_MSG_EQ((r[0].finishS > r[3].arrivalS), true, "group 1 still in flight");
            NS_TEST_EXPECT_MSG_EQ((r[2].cached == 0 && r[2].finishS < 3), true, "3 computed");
            NS_TEST_EXPECT_MSG_EQ((r[3].cached == 60 && r[3].prompt == 40), true, "1 pinned");
        }

        // Prompts of 100 tokens, a 60-token prefix: a hit prefills 40 (0.2 s of the curve's 0.5).
        QueueEngine e = FourSlots();
        e.slots = 1;
        e.prefixTokens = 60;
        auto run = [&](QueueRouter router, std::vector<uint32_t>& instanceOf)
        {
            const std::vector<double> ready = {0, 10, 20, 30};
            std::vector<QueueRequest> r = Arriving(ready);
            const uint32_t group[] = {1, 1, 2, 1};
            for (std::size_t i = 0; i < r.size(); ++i)
            {
                r[i].prompt = 100;
                r[i].prefix = group[i];
            }
            std::vector<QueueRequest*> all = All(r);
            SimulateInstances(e, 2, router, ready, all, &instanceOf);
            return r;
        };
        std::vector<uint32_t> at;
        const std::vector<QueueRequest> turn = run(QueueRouter::ROUND_ROBIN, at);
        NS_TEST_EXPECT_MSG_EQ((at == std::vector<uint32_t>{0, 1, 0, 1}), true, "in turn");
        NS_TEST_EXPECT_MSG_EQ(turn[1].cached, 0u, "group 1 new to instance 1");
        NS_TEST_EXPECT_MSG_EQ_TOL(turn[1].firstTokenS, 10.5, 1e-12, "its whole prompt");
        NS_TEST_EXPECT_MSG_EQ((turn[3].cached == 60 && turn[3].prompt == 40), true, "found");
        NS_TEST_EXPECT_MSG_EQ_TOL(turn[3].firstTokenS, 30.2, 1e-12, "the rest prefilled");
        const std::vector<QueueRequest> least = run(QueueRouter::LEAST_OUTSTANDING, at);
        NS_TEST_EXPECT_MSG_EQ(
            (at == std::vector<uint32_t>{0, 0, 0, 0}), true, "all idle: the first");
        NS_TEST_EXPECT_MSG_EQ(
            least[1].cached + least[2].cached + least[3].cached, 120u, "1 and 3 hit");
        const std::vector<QueueRequest> aware = run(QueueRouter::CACHE_AWARE, at);
        NS_TEST_EXPECT_MSG_EQ((at == std::vector<uint32_t>{0, 0, 1, 0}),
                              true,
                              "group 1 to its holder, group 2 to the smaller tree");
        NS_TEST_EXPECT_MSG_EQ_TOL(aware[1].firstTokenS, 10.2, 1e-12, "found");
        NS_TEST_EXPECT_MSG_EQ(aware[2].cached, 0u, "group 2 computed");
        // A prefix of 20 tokens, 0.2 of the prompt (the routers' threshold 0.3): the smaller
        // tree, not the holder.
        e.prefixTokens = 20;
        run(QueueRouter::CACHE_AWARE, at);
        NS_TEST_EXPECT_MSG_EQ(
            (at == std::vector<uint32_t>{0, 1, 0, 1}), true, "the instance holding fewer prefixes");
        // 70 requests of one group at once on one-slot instances: its holder takes them until
        // it has more than 64 outstanding beyond the other (and 1.5 times as many); the other
        // then holds the prefix too and, less loaded, takes the next.
        e.prefixTokens = 60;
        const std::vector<double> burst(70, 0.0);
        std::vector<QueueRequest> r = Arriving(burst);
        for (QueueRequest& q : r)
        {
            q.prompt = 100;
            q.prefix = 1;
        }
        std::vector<QueueRequest*> all = All(r);
        SimulateInstances(e, 2, QueueRouter::CACHE_AWARE, burst, all, &at);
        NS_TEST_EXPECT_MSG_EQ(at[64], 0u, "64 beyond the idle one: still the holder");
        NS_TEST_EXPECT_MSG_EQ(at[65], 1u, "65 beyond: the least outstanding");
        NS_TEST_EXPECT_MSG_EQ(at[66], 1u, "now a holder, and the less loaded");
        NS_TEST_EXPECT_MSG_EQ(r[66].cached, 60u, "found there");

        // Groups drawn uniformly or by Zipf's law (exponent 1 over 100 groups: the first with
        // 1 / H_100 = 19.3% of the requests, the second half as many); whole prompts.
        std::vector<QueueRequest> drawn(20000);
        drawn[0].prompt = 50;
        drawn[0].cached = 10;
        DrawPrefixGroups(drawn, 100, 1.0, 300, 5);
        std::vector<double> share(101, 0);
        for (const QueueRequest& q : drawn)
        {
            RAPIDLLM_REQUIRE_EQ((q.prefix >= 1 && q.prefix <= 100), true, "a group");
            share[q.prefix] += 1.0 / drawn.size();
        }
        double harmonic = 0;
        for (int g = 1; g <= 100; ++g)
        {
            harmonic += 1.0 / g;
        }
        NS_TEST_EXPECT_MSG_EQ_TOL(share[1], 1 / harmonic, 0.01, "Zipf: the first group");
        NS_TEST_EXPECT_MSG_EQ_TOL(share[2], 0.5 / harmonic, 0.01, "half as many");
        NS_TEST_EXPECT_MSG_EQ((drawn[0].prompt == 60 && drawn[0].cached == 0), true, "whole");
        NS_TEST_EXPECT_MSG_EQ(drawn[1].prompt, 300u, "the job's prompt");
        DrawPrefixGroups(drawn, 100, 0, 300, 5);
        std::fill(share.begin(), share.end(), 0);
        for (const QueueRequest& q : drawn)
        {
            share[q.prefix] += 1.0 / drawn.size();
        }
        NS_TEST_EXPECT_MSG_EQ_TOL(share[1], 0.01, 0.003, "uniform");
        NS_TEST_EXPECT_MSG_EQ_TOL(share[100], 0.01, 0.003, "uniform");
        NS_TEST_EXPECT_MSG_EQ(Throws<std::invalid_argument>(
                                  [&]
                                  {
                                      DrawPrefixGroups(drawn, 0, 0, 300, 5);
                                  }),
                              true,
                              "no group");

        // A prefill pool of one instance (disaggregated) taking up to two prompts an iteration
        // (1 s for one, 1.5 s for two, scaled by their tokens): group 1, then two prompts of
        // group 2 together (each computes it: neither was held before the iteration), then
        // group 2 again, found (40 tokens, 0.4 s).
        std::vector<QueueRequest> pooled = Arriving({0, 10, 10, 20});
        const uint32_t pooledGroup[] = {1, 2, 2, 2};
        for (std::size_t i = 0; i < pooled.size(); ++i)
        {
            pooled[i].prompt = 100;
            pooled[i].prefix = pooledGroup[i];
        }
        const StepCurve two{{1, 2}, {1.0, 1.5}, {1, 1.5}};
        SimulatePrefillPool(1, 1, two, 100, 0, pooled, nullptr, 60, 0);
        NS_TEST_EXPECT_MSG_EQ_TOL(pooled[0].firstTokenS, 1.0, 1e-12, "computed");
        NS_TEST_EXPECT_MSG_EQ_TOL(pooled[2].firstTokenS, 11.5, 1e-12, "two together");
        NS_TEST_EXPECT_MSG_EQ(pooled[1].cached + pooled[2].cached, 0u, "each computed it");
        NS_TEST_EXPECT_MSG_EQ((pooled[3].cached == 60 && pooled[3].prompt == 40), true, "held");
        NS_TEST_EXPECT_MSG_EQ_TOL(pooled[3].firstTokenS, 20.4, 1e-12, "the rest");

        // Two prefill instances, groups 1, 2, 2, 1: from the shared queue the first free
        // instance takes the third and fourth, which it does not hold; dealt cache-aware, each
        // goes to its group's holder (1 s a whole prompt, 0.4 s the rest).
        auto routedPool = [&](bool cacheAware)
        {
            std::vector<QueueRequest> q = Arriving({0, 0.1, 10, 10.1});
            const uint32_t g[] = {1, 2, 2, 1};
            for (std::size_t i = 0; i < q.size(); ++i)
            {
                q[i].prompt = 100;
                q[i].prefix = g[i];
            }
            std::vector<uint32_t> of;
            SimulatePrefillPool(2, 1, OnePrompt(1.0, 1), 100, 0, q, &of, 60, 0, cacheAware);
            return std::make_pair(q, of);
        };
        const auto [shared, sharedOf] = routedPool(false);
        NS_TEST_EXPECT_MSG_EQ((sharedOf == std::vector<uint32_t>{0, 1, 0, 1}), true, "first free");
        NS_TEST_EXPECT_MSG_EQ_TOL(shared[3].firstTokenS, 11.1, 1e-12, "computed");
        const auto [routed, routedOf] = routedPool(true);
        NS_TEST_EXPECT_MSG_EQ((routedOf == std::vector<uint32_t>{0, 1, 1, 0}), true, "holders");
        NS_TEST_EXPECT_MSG_EQ_TOL(routed[2].firstTokenS, 10.4, 1e-12, "found");
        NS_TEST_EXPECT_MSG_EQ_TOL(routed[3].firstTokenS, 10.5, 1e-12, "found");
    }
};

/**
 * \ingroup rapid-llm-tests
 * \brief Random engines under every batching (continuous with attention replicas), caches,
 * prefix groups and lengths: every request finishes, its first token after its arrival and its last
 * after its first; only an engine that preempts does, and where its cache never binds it is the
 * engine that reserves; requests dealt to the least outstanding of a few instances get the times
 * each instance gives them alone.
 */
class RandomEnginesTestCase : public TestCase
{
  public:
    RandomEnginesTestCase()
        : TestCase("serving queue: random engines finish every request")
    {}

  private:
    void
    DoRun() override
    {
        std::mt19937_64 rng(7);
        auto uniform = [&rng](uint32_t lo, uint32_t hi)
        {
            return std::uniform_int_distribution<uint32_t>(lo, hi)(rng);
        };
        for (int trial = 0; trial < 300; ++trial)
        {
            QueueEngine e = FourSlots();
            e.slots = uniform(1, 6);
            e.generated = uniform(1, 12);
            e.prompt = uniform(1, 120);
            const uint32_t batching = uniform(0, 3); // continuous, chunked, static, decode only
            if (batching == 1)
            {
                e.prefill = StepCurve();
                e.chunked = true;
                e.tokenBudget = uniform(1, 200);
                e.chunkTokenS = 0.001;
            }
            if (batching == 0 || batching == 3)
            {
                // Data-parallel attention replicas, dealt in turn or to the least loaded.
                e.replicas = uniform(1, 3);
                e.replicaRouter =
                    uniform(0, 1) == 1 ? QueueRouter::LEAST_OUTSTANDING : QueueRouter::ROUND_ROBIN;
            }
            e.wholeBatches = batching == 2;
            e.batchDelayS = batching == 2 && uniform(0, 1) == 1 ? 0.1 * uniform(0, 10) : 0;
            if (batching == 3)
            {
                e.prefill = StepCurve();
            }
            const bool limited = uniform(0, 3) > 0;
            e.kvTokens = limited ? uniform(20, 600) : 0;
            e.kvShared = uniform(0, 1) == 1 ? uniform(0, e.prompt) : 0;
            e.preempt = uniform(0, 1) == 1;
            // Prefix groups (co-located): up to three prefixes kept an instance.
            const bool groups = batching < 3 && uniform(0, 1) == 1;
            e.prefixTokens = groups ? uniform(1, 100) : 0;
            e.prefixCapacity = uniform(0, 3);
            const uint32_t n = uniform(1, 30);
            std::vector<double> ready(n);
            std::vector<QueueRequest> requests = Arriving(ready);
            double t = 0;
            for (uint32_t i = 0; i < n; ++i)
            {
                t += uniform(0, 3) == 0 ? 0 : 0.05 * uniform(0, 20);
                ready[i] = t;
                requests[i].arrivalS = batching == 3 ? 0 : t;
                requests[i].firstTokenS = t; // decode only: its prefill ran elsewhere
                requests[i].prompt = uniform(0, 1) == 1 ? uniform(1, 240) : 0;
                requests[i].generated = uniform(0, 1) == 1 ? uniform(1, 20) : 0;
                if (groups && uniform(0, 1) == 1)
                {
                    // A group's request carries its whole prompt.
                    requests[i].prompt = uniform(1, 240);
                    requests[i].prefix = uniform(1, 4);
                }
            }
            std::vector<QueueRequest*> all = All(requests);
            SimulateEngine(e, ready, all);
            uint64_t preemptions = 0;
            for (uint32_t i = 0; i < n; ++i)
            {
                const QueueRequest& r = requests[i];
                const bool ordered = r.firstTokenS >= ready[i] && r.finishS >= r.firstTokenS
                                     && std::isfinite(r.finishS);
                NS_TEST_EXPECT_MSG_EQ(ordered, true, "trial " << trial << ", request " << i);
                preemptions += r.preemptions;
            }
            if (!e.preempt || e.kvTokens == 0 || batching >= 2)
            {
                NS_TEST_EXPECT_MSG_EQ(preemptions, 0u, "trial " << trial << ": none preempts");
            }
            // Dealt to the least outstanding of two to four instances: each instance runs its
            // requests as it would alone.
            {
                const auto k = uniform(2, 4);
                std::vector<QueueRequest> routed = requests;
                std::vector<QueueRequest*> pr = All(routed);
                std::vector<uint32_t> instanceOf;
                SimulateInstances(e, k, QueueRouter::LEAST_OUTSTANDING, ready, pr, &instanceOf);
                for (uint32_t j = 0; j < k; ++j)
                {
                    std::vector<double> mineReady;
                    std::vector<QueueRequest> mine;
                    for (uint32_t i = 0; i < n; ++i)
                    {
                        if (instanceOf.at(i) == j)
                        {
                            mineReady.push_back(ready[i]);
                            mine.push_back(requests[i]);
                        }
                    }
                    std::vector<QueueRequest*> pm = All(mine);
                    SimulateEngine(e, mineReady, pm);
                    for (uint32_t i = 0, m = 0; i < n; ++i)
                    {
                        if (instanceOf[i] == j)
                        {
                            const bool same = mine[m].firstTokenS == routed[i].firstTokenS
                                              && mine[m].finishS == routed[i].finishS;
                            NS_TEST_EXPECT_MSG_EQ(
                                same, true, "trial " << trial << ", routed " << i);
                            ++m;
                        }
                    }
                }
            }
            // A cache that never binds: the preempting engine schedules as the reserving one.
            if (batching < 2)
            {
                QueueEngine huge = e;
                huge.kvTokens = 1e9;
                huge.preempt = true;
                std::vector<QueueRequest> a = requests;
                std::vector<QueueRequest*> pa = All(a);
                SimulateEngine(huge, ready, pa);
                huge.preempt = false;
                std::vector<QueueRequest> b = requests;
                std::vector<QueueRequest*> pb = All(b);
                SimulateEngine(huge, ready, pb);
                for (uint32_t i = 0; i < n; ++i)
                {
                    const bool same =
                        a[i].firstTokenS == b[i].firstTokenS && a[i].finishS == b[i].finishS;
                    NS_TEST_EXPECT_MSG_EQ(same, true, "trial " << trial << ", request " << i);
                }
            }
        }
    }
};

/** \brief The serving queue simulation. */
class ServingQueueTestSuite : public TestSuite
{
  public:
    ServingQueueTestSuite()
        : TestSuite("rapid-llm-serving-queue", UNIT)
    {
        AddTestCase(new StepCurveTestCase, TestCase::QUICK);
        AddTestCase(new ContextStepsTestCase, TestCase::QUICK);
        AddTestCase(new PoissonArrivalsTestCase, TestCase::QUICK);
        AddTestCase(new GammaArrivalsTestCase, TestCase::QUICK);
        AddTestCase(new MD1QueueTestCase, TestCase::QUICK);
        AddTestCase(new EngineScheduleTestCase, TestCase::QUICK);
        AddTestCase(new StaticBatchTestCase, TestCase::QUICK);
        AddTestCase(new LockstepReplicasTestCase, TestCase::QUICK);
        AddTestCase(new RequestLengthsTestCase, TestCase::QUICK);
        AddTestCase(new PrefixHitsTestCase, TestCase::QUICK);
        AddTestCase(new KvAdmissionTestCase, TestCase::QUICK);
        AddTestCase(new KvTransfersTestCase, TestCase::QUICK);
        AddTestCase(new QueueSummaryTestCase, TestCase::QUICK);
        AddTestCase(new RouterTestCase, TestCase::QUICK);
        AddTestCase(new PrefixGroupsTestCase, TestCase::QUICK);
        AddTestCase(new RandomEnginesTestCase, TestCase::QUICK);
    }
};

static ServingQueueTestSuite g_servingQueueTestSuite;
