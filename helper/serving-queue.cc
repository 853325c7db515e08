/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "serving-queue.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <memory>
#include <stdexcept>
#include <utility>

namespace ns3 {
namespace rapidllm {

namespace {

/** \return the value of a piecewise-linear curve through (requests[i], values[i]) at n */
double
Interpolate(const std::vector<uint32_t>& requests, const std::vector<double>& values, uint32_t n)
{
    if (requests.empty() || requests.size() != values.size())
    {
        throw std::logic_error("a step curve needs one value per batch size");
    }
    const auto upper = std::lower_bound(requests.begin(), requests.end(), n);
    if (upper == requests.end())
    {
        return values.back();
    }
    const auto i = static_cast<std::size_t>(upper - requests.begin());
    if (*upper == n || i == 0)
    {
        return values[i];
    }
    const double f = double(n - requests[i - 1]) / double(requests[i] - requests[i - 1]);
    return values[i - 1] + f * (values[i] - values[i - 1]);
}

/**
 * \brief Ends a decode step at \p t for the requests decoding: each has a step less to go, and
 * those with none left finish (their finishS set, \p lag later where given, removed from the
 * list).
 * \return how many finished
 */
std::size_t
EndDecodeStep(std::vector<std::pair<std::size_t, uint32_t>>& decoding,
              double t,
              std::vector<QueueRequest*>& requests,
              const std::vector<double>* lag = nullptr)
{
    std::size_t finished = 0;
    for (std::size_t k = 0; k < decoding.size();)
    {
        if (--decoding[k].second == 0)
        {
            const std::size_t i = decoding[k].first;
            requests[i]->finishS = t + (lag != nullptr ? (*lag)[i] : 0.0);
            ++finished;
            decoding[k] = decoding.back();
            decoding.pop_back();
        }
        else
        {
            ++k;
        }
    }
    return finished;
}

/** \return the request's prompt tokens: its own, else \p prompt (the curves') */
uint32_t
PromptOf(uint32_t prompt, const QueueRequest& r)
{
    return r.prompt > 0 ? r.prompt : prompt;
}

/** \return the tokens cached before the request's prompt: its own, else the curve's */
double
CachedOf(const StepCurve& curve, const QueueRequest& r)
{
    return r.prompt > 0 ? double(r.cached) : curve.cached;
}

/**
 * \return a prefill's squares (StepCurve::cached) for \p computed tokens after \p cached
 */
double
PrefillSquares(const StepCurve& curve, double computed, double cached)
{
    return computed * computed + 2 * computed * (cached - curve.cached);
}

/** A prefill iteration: the prompts it takes, its time and its dynamic energy. */
struct Prefill
{
    uint32_t prompts = 0; //!< prompts taken, the next ones in order
    double seconds = 0;   //!< to their first tokens
    double joules = 0;    //!< dynamic energy
};

/**
 * \return a prefill iteration of \p k prompts of \p tokens in all, \p tokensSq the sum of their
 * squares: the curve at their tokens where it follows them, else the curve's k scaled by their
 * tokens against k of \p prompt (its fixed costs with them)
 */
Prefill
PrefillOf(const StepCurve& curve, uint32_t prompt, uint32_t k, double tokens, double tokensSq)
{
    Prefill p;
    p.prompts = k;
    if (curve.FollowsTokens())
    {
        p.seconds = curve.SecondsAt(k, tokens, tokensSq);
        p.joules = curve.JoulesAt(k, tokens);
        return p;
    }
    const double scale = prompt > 0 ? tokens / (double(k) * prompt) : 1.0;
    p.seconds = curve.SecondsAt(k) * scale;
    p.joules = curve.JoulesAt(k) * scale;
    return p;
}

/**
 * \brief A prefill iteration of the next prompts, oldest first: at least one, at most \p most,
 * within the token budget; its time and energy the curve's for as many prompts at their tokens
 * (PrefillOf).
 * \param curve the prefill curve \param prompt the curve's prompt tokens (0: no scaling)
 * \param budget tokens an iteration carries (0: no limit) \param most prompts at most (1 or more)
 * \param tokensOfNext the tokens the k-th next prompt computes and those cached before them
 */
template<typename TokensOf>
Prefill
NextPrefill(const StepCurve& curve,
            uint32_t prompt,
            uint32_t budget,
            std::size_t most,
            TokensOf tokensOfNext)
{
    uint32_t k = 0;
    uint64_t tokens = 0;
    double tokensSq = 0;
    while (k < most)
    {
        const auto [tokensOf, cachedOf] = tokensOfNext(k);
        if (k > 0 && budget > 0 && tokens + tokensOf > budget)
        {
            break;
        }
        tokens += tokensOf;
        tokensSq += PrefillSquares(curve, tokensOf, cachedOf);
        ++k;
    }
    return PrefillOf(curve, prompt, k, double(tokens), tokensSq);
}

/**
 * \brief Splits a prefix group's request's prompt: with its prefix found (\p held) the rest is
 * computed (one token at least) and the prefix cached, else the whole prompt is computed.
 */
void
SplitPrompt(QueueRequest& r, uint32_t prefixTokens, bool held)
{
    const uint32_t whole = r.prompt + r.cached;
    r.cached = held && whole > 1 ? std::min(prefixTokens, whole - 1) : 0;
    r.prompt = whole - r.cached;
}

/** \return the request's decode steps after its first token: its own, else the engine's */
uint32_t
StepsOf(const QueueEngine& e, const QueueRequest& r)
{
    return (r.generated > 0 ? r.generated : e.generated) - 1;
}

/** \return the keys of a request's prompt: its computed and its cached tokens */
double
PromptKeysOf(const QueueEngine& e, const QueueRequest& r)
{
    return r.prompt > 0 ? double(r.prompt) + r.cached : double(e.prompt) + e.cached;
}

/**
 * \return the keys a request attends to in its decode step with \p left steps left (those
 * of its prompt and of the tokens it has generated)
 */
double
KeysOf(const QueueEngine& e, const QueueRequest& r, uint32_t left)
{
    return PromptKeysOf(e, r) + double(StepsOf(e, r)) - double(left) + 1;
}

/**
 * \return the KV cache tokens a request of \p promptKeys prompt keys and \p steps decode
 * steps reserves: its prompt less a shared prefix, and the tokens it generates
 */
double
KvNeedOf(const QueueEngine& e, double promptKeys, uint32_t steps)
{
    return std::max(0.0, promptKeys - e.kvShared) + steps + 1;
}

/**
 * \return the tokens of a prefix group's request's prompt that its group's one copy in the
 * instance's KV cache holds (vLLM's and SGLang's requests of one prefix share its blocks): the
 * group's prefix, all but the prompt's last token at most (0 outside groups)
 */
double
GroupShareOf(const QueueEngine& e, const QueueRequest& r)
{
    if (r.prefix == 0 || e.prefixTokens == 0)
    {
        return 0;
    }
    return std::min(double(e.prefixTokens), PromptKeysOf(e, r) - 1);
}

/** \return the KV cache tokens a request reserves of its own (its group's prefix apart) */
double
KvNeedOf(const QueueEngine& e, const QueueRequest& r)
{
    return KvNeedOf(e, PromptKeysOf(e, r) - GroupShareOf(e, r), StepsOf(e, r));
}

/**
 * \brief The prefix groups' copies in an instance's KV cache: each group with a request in
 * flight holds its prefix once, however many of its requests are in flight (their own needs,
 * KvNeedOf, leave it out). Counts the groups in an instance's table of marks (Marks), a
 * count at a time.
 */
class GroupCopies
{
  public:
    /** An instance's table: the count that last saw each group, and the last count. */
    struct Marks
    {
        std::vector<uint64_t> seen; //!< by group
        uint64_t count = 0;         //!< the counts started
    };

    /** \param e the engine \param marks the instance's table (one count alive at a time) */
    GroupCopies(const QueueEngine& e, Marks& marks)
        : m_engine(&e)
        , m_marks(&marks)
        , m_count(++marks.count)
    {}

    /**
     * \return the tokens \p r's group would add to those counted: its prefix where no request
     * of its group is counted yet, else nothing
     */
    double
    Adds(const QueueRequest& r) const
    {
        const double share = GroupShareOf(*m_engine, r);
        const std::vector<uint64_t>& seen = m_marks->seen;
        return share > 0 && (r.prefix >= seen.size() || seen[r.prefix] != m_count) ? share : 0;
    }

    /** \return what \p r's group adds (Adds), now counted */
    double
    Join(const QueueRequest& r)
    {
        const double adds = Adds(r);
        if (adds > 0)
        {
            if (r.prefix >= m_marks->seen.size())
            {
                m_marks->seen.resize(r.prefix + 1, 0);
            }
            m_marks->seen[r.prefix] = m_count;
            ++m_groups;
            if (m_joined != nullptr)
            {
                m_joined->push_back(r.prefix);
            }
        }
        return adds;
    }

    /** \brief Lists each group counted from now on in \p joined (nullptr: none). */
    void
    ListInto(std::vector<uint32_t>* joined)
    {
        m_joined = joined;
    }

    /** \return the groups counted */
    uint32_t
    Groups() const
    {
        return m_groups;
    }

    /**
     * \return the tokens the groups of the requests listed (pairs whose first is a request's
     * index) add to those counted
     */
    template<typename List>
    double
    JoinAll(const List& list, const std::vector<QueueRequest*>& requests)
    {
        double tokens = 0;
        if (m_engine->prefixTokens > 0)
        {
            for (const auto& entry : list)
            {
                tokens += Join(*requests[entry.first]);
            }
        }
        return tokens;
    }

  private:
    const QueueEngine* m_engine;
    GroupCopies::Marks* m_marks;
    uint64_t m_count;                          //!< this count's mark
    uint32_t m_groups = 0;                     //!< the groups counted
    std::vector<uint32_t>* m_joined = nullptr; //!< where the groups counted go (ListInto)
};

/**
 * \return how many of the next \p count requests in order (at most \p most) the KV cache admits
 * beside \p reserved tokens, the k-th needing needOf(k): while each one's need fits in what is
 * left, and the first whatever its need when nothing is reserved
 */
template<typename NeedOf>
std::size_t
KvAdmits(const QueueEngine& e, std::size_t count, std::size_t most, double reserved, NeedOf needOf)
{
    if (e.kvTokens <= 0)
    {
        return std::min(most, count);
    }
    std::size_t k = 0;
    for (; k < most && k < count; ++k)
    {
        const double need = needOf(k);
        if (reserved + need > e.kvTokens && !(k == 0 && reserved == 0))
        {
            break;
        }
        reserved += need;
    }
    return k;
}

/**
 * \return the keys the requests decoding (index and steps left) attend to in their next step
 */
template<typename Decoding>
double
KeysOf(const QueueEngine& e, const Decoding& decoding, const std::vector<QueueRequest*>& requests)
{
    double keys = 0;
    for (const auto& [i, left] : decoding)
    {
        keys += KeysOf(e, *requests[i], left);
    }
    return keys;
}

/** \return the value at nearest rank p (0-100) of sorted values */
double
Percentile(const std::vector<double>& sorted, double p)
{
    if (sorted.empty())
    {
        return 0;
    }
    const auto rank = static_cast<std::size_t>(std::ceil(p / 100 * double(sorted.size()) - 1e-9));
    return sorted[std::clamp<std::size_t>(rank, 1, sorted.size()) - 1];
}

} // namespace

double
StepCurve::SecondsAt(uint32_t n) const
{
    return Interpolate(requests, seconds, n);
}

double
StepCurve::JoulesAt(uint32_t n) const
{
    return Interpolate(requests, joules, n);
}

bool
StepCurve::FollowsTokens() const
{
    return tokens > 0 && secondsPerToken.size() == requests.size();
}

namespace {

/** \return a curve's value at n requests holding \p total tokens (StepCurve::SecondsAt) */
double
AtTokens(const StepCurve& c,
         const std::vector<double>& values,
         const std::vector<double>& perToken,
         const std::vector<double>& perTokenSq,
         uint32_t n,
         double total,
         double totalSq)
{
    const double at = Interpolate(c.requests, values, n);
    if (!c.FollowsTokens())
    {
        return at;
    }
    double beyond = Interpolate(c.requests, perToken, n) * (total - n * c.tokens);
    if (!perTokenSq.empty())
    {
        beyond += Interpolate(c.requests, perTokenSq, n) * (totalSq - n * c.tokens * c.tokens);
    }
    return std::max(0.0, at + beyond);
}

} // namespace

double
StepCurve::SecondsAt(uint32_t n, double total) const
{
    return AtTokens(*this, seconds, secondsPerToken, {}, n, total, 0);
}

double
StepCurve::JoulesAt(uint32_t n, double total) const
{
    return AtTokens(*this, joules, joulesPerToken, {}, n, total, 0);
}

double
StepCurve::SecondsAt(uint32_t n, double total, double totalSq) const
{
    return AtTokens(*this, seconds, secondsPerToken, secondsPerTokenSq, n, total, totalSq);
}

namespace {

/**
 * An engine instance simulated iteration by iteration as its requests reach it (QueueEngine):
 * given requests in the order they reach it, it runs the iterations that start before a
 * horizon, so that a router can see what it holds at each arrival.
 */
class EngineInstance
{
  public:
    /** \param engine the instance (kept by reference) */
    explicit EngineInstance(const QueueEngine& engine)
        : engine(engine)
    {}

    virtual ~EngineInstance() = default;

    /**
     * \brief Gives it a request that reaches it at \p ready: no earlier than the one before,
     * nor than the horizon it was advanced to.
     */
    void
    Add(double ready, QueueRequest* r)
    {
        open.push_back(requests.size());
        readyS.push_back(ready);
        requests.push_back(r);
        kvNeed.push_back(KvNeedOf(engine, *r));
        r->finishS = std::numeric_limits<double>::infinity();
    }

    /** \brief Runs the iterations that start before \p horizon (infinity: to the end). */
    void
    Advance(double horizon)
    {
        if (t < horizon && done < requests.size())
        {
            Run(horizon);
            moved = true;
        }
    }

    /**
     * \return its requests not finished at \p at (waiting, in flight, or ending later); \p at
     * no earlier than the last call's (those finished by then are not looked at again)
     */
    std::size_t
    Outstanding(double at)
    {
        // Looked at again only where it ran since, or one of them may have finished by now.
        if (!moved && at < nextFinishS)
        {
            return open.size();
        }
        nextFinishS = std::numeric_limits<double>::infinity();
        for (std::size_t k = 0; k < open.size();)
        {
            const double finishS = requests[open[k]]->finishS;
            if (finishS <= at)
            {
                open[k] = open.back();
                open.pop_back();
                continue;
            }
            nextFinishS = std::min(nextFinishS, finishS);
            ++k;
        }
        moved = false;
        return open.size();
    }

    /** \return the dynamic energy of its iterations so far, J */
    double
    Joules() const
    {
        return joules;
    }

    /**
     * \return the prefix groups' prefixes its cache can hold now (QueueEngine::prefixCapacity
     * where it keeps no account of them): those of its requests in flight and as many others
     * as the KV cache they leave free holds (vLLM's and SGLang's unreferenced cached blocks
     * stay until an allocation takes them), one at least (the next request's)
     * \param inFlight filled with the groups of its requests in flight (none where it keeps no
     * account of them)
     */
    virtual uint32_t
    PrefixRoom(std::vector<uint32_t>& inFlight) const
    {
        inFlight.clear();
        return engine.prefixCapacity;
    }

  protected:
    /** \brief Runs the iterations that start before \p horizon (Advance: it has work to do). */
    virtual void Run(double horizon) = 0;

    const QueueEngine& engine;           //!< the instance
    std::vector<double> readyS;          //!< when each request reaches it
    std::vector<QueueRequest*> requests; //!< its requests, in that order
    std::vector<double> kvNeed;          //!< each one's own KV cache tokens (KvNeedOf)
    std::size_t done = 0;                //!< requests finished
    double t = 0;                        //!< when its next iteration may start
    double joules = 0;                   //!< dynamic energy of its iterations

    /**
     * \brief Marks \p r admitted at \p at: its first admission (a readmission keeps it and
     * adds the time since its preemption to its time preempted).
     */
    static void
    Admitted(QueueRequest& r, double at)
    {
        if (r.admittedS < 0)
        {
            r.admittedS = at;
        }
        else if (r.preemptedAtS >= 0)
        {
            r.preemptedS += at - r.preemptedAtS;
        }
        r.preemptedAtS = -1;
    }

    /** \brief Counts \p r preempted now, for its next iteration (t): its cache freed. */
    void
    Preempted(QueueRequest& r) const
    {
        ++r.preemptions;
        r.preemptedAtS = t;
    }

    /** \brief Marks \p r admitted now, for its next iteration (t). */
    void
    Admitted(QueueRequest& r) const
    {
        Admitted(r, t);
    }

    /** \return a count of the prefix groups' copies in the cache, the instance's only one */
    GroupCopies
    Groups() const
    {
        return GroupCopies(engine, groupMarks);
    }

    /**
     * \return a count of the groups' copies (Groups) that lists them in \p inFlight, cleared
     * first (PrefixRoom)
     */
    GroupCopies
    GroupsInto(std::vector<uint32_t>& inFlight) const
    {
        inFlight.clear();
        GroupCopies groups = Groups();
        groups.ListInto(&inFlight);
        return groups;
    }

    /**
     * \param held the KV tokens its requests in flight hold \param groups their groups
     * \return PrefixRoom's count
     */
    uint32_t
    PrefixRoomBeside(double held, uint32_t groups) const
    {
        const double free = std::max(0.0, engine.kvTokens - held);
        return std::max<uint32_t>(
            1, groups + static_cast<uint32_t>(std::floor(free / engine.prefixTokens)));
    }

    /**
     * \return the KV cache tokens the requests listed (pairs whose first is a request's index)
     * reserve, their groups' prefixes counted once in \p groups
     */
    template<typename List>
    double
    Reserved(const List& list, GroupCopies& groups) const
    {
        double reserved = 0;
        if (engine.kvTokens > 0)
        {
            for (const auto& entry : list)
            {
                reserved += kvNeed[entry.first];
            }
            reserved += groups.JoinAll(list, requests);
        }
        return reserved;
    }

    /**
     * \return how many of the waiting requests (their indices, in order; at most \p most) the
     * KV cache admits beside \p reserved tokens, each reserving its whole length (and its
     * group's prefix where \p groups does not count it yet)
     */
    template<typename Waiting>
    std::size_t
    Admits(const Waiting& waiting, std::size_t most, double reserved, GroupCopies& groups) const
    {
        return KvAdmits(engine,
                        waiting.size(),
                        most,
                        reserved,
                        [&](std::size_t k)
                        {
                            return kvNeed[waiting[k]] + groups.Join(*requests[waiting[k]]);
                        });
    }

  private:
    mutable GroupCopies::Marks groupMarks; //!< (Groups)
    std::vector<std::size_t> open;         //!< its requests not seen finished (Outstanding)
    double nextFinishS = std::numeric_limits<double>::infinity(); //!< the first of them to end
    bool moved = false; //!< whether it ran since Outstanding last looked
};

/**
 * An instance with a token budget (chunked prefill), reserving whole lengths or, with
 * QueueEngine::preempt, preempting as vLLM V1's scheduler does.
 */
class ChunkedInstance : public EngineInstance
{
  public:
    using EngineInstance::EngineInstance;

    uint32_t
    PrefixRoom(std::vector<uint32_t>& inFlight) const override
    {
        GroupCopies groups = GroupsInto(inFlight);
        const double held = Held(groups);
        return PrefixRoomBeside(held, groups.Groups());
    }

    void
    Run(double horizon) override
    {
        resume.resize(requests.size(), 0);
        admittedAt.resize(requests.size(), 0);
        retained.resize(requests.size(), 0);
        lag.resize(requests.size(), 0);
        while (done < requests.size() && t < horizon)
        {
            while (next < readyS.size() && readyS[next] <= t)
            {
                waiting.push_back(next++);
            }
            const std::size_t free =
                engine.slots
                - std::min<std::size_t>(engine.slots, prompts.size() + decoding.size());
            if (!Preempting())
            {
                AdmitReserving(free);
            }
            else
            {
                // A step that preempts admits no one (vLLM V1).
                if (!PreemptForStep())
                {
                    AdmitPreempting(free);
                }
                EvictCached();
            }
            if (prompts.empty() && decoding.empty())
            {
                if (next == readyS.size() || readyS[next] >= horizon)
                {
                    return;
                }
                t = readyS[next];
                continue;
            }
            Step();
        }
    }

  private:
    /** \return whether it preempts (QueueEngine::preempt, within a cache) */
    bool
    Preempting() const
    {
        return engine.preempt && engine.kvTokens > 0;
    }

    /** \return the tokens request \p i had generated when preempted (recomputed with its prompt) */
    uint32_t
    Made(std::size_t i) const
    {
        return Preempting() && resume[i] > 0 ? StepsOf(engine, *requests[i]) - resume[i] + 1 : 0;
    }

    /**
     * \return the KV tokens request \p i holds decoding with \p left steps to go: its prompt,
     * the tokens it has generated and its next
     */
    double
    DecodeHolds(std::size_t i, uint32_t left) const
    {
        return kvNeed[i] - left;
    }

    /**
     * \return the KV tokens request \p i holds with \p left prefill tokens to compute: its
     * cached prompt tokens (less a shared prefix and its group's) and those computed
     */
    double
    PromptHolds(std::size_t i, uint32_t left) const
    {
        const double prompt = kvNeed[i] - StepsOf(engine, *requests[i]) - 1;
        return std::max(0.0, prompt + Made(i) - left);
    }

    /**
     * \return the KV tokens the requests in flight hold, each group's prefix counted once in
     * \p groups
     */
    double
    Held(GroupCopies& groups) const
    {
        double tokens = 0;
        for (const auto& [i, left] : decoding)
        {
            tokens += DecodeHolds(i, left) + groups.Join(*requests[i]);
        }
        for (const auto& [i, left] : prompts)
        {
            tokens += PromptHolds(i, left) + groups.Join(*requests[i]);
        }
        return tokens;
    }

    /** \return the budget a step leaves its prompts after its decodes (at least a token) */
    uint32_t
    Room() const
    {
        const auto n = static_cast<uint32_t>(decoding.size());
        return engine.tokenBudget > n ? engine.tokenBudget - n : 1;
    }

    /**
     * \return a step's prompt tokens for the prompts in flight, in order within \p room, each
     * one's take handed to \p take (its index in `prompts`, tokens)
     */
    template<typename Take>
    uint32_t
    Plan(uint32_t room, Take take) const
    {
        uint32_t tokens = 0;
        for (std::size_t k = 0; k < prompts.size() && tokens < room; ++k)
        {
            const uint32_t n = std::min(prompts[k].second, room - tokens);
            take(k, n);
            tokens += n;
        }
        return tokens;
    }

    /**
     * \return the tokens the requests in flight hold and those the next step adds: a token a
     * decode, the prompt tokens it computes (a group's prefix in its one copy) and the token of
     * each prompt it ends
     */
    double
    Need() const
    {
        const bool grouped = engine.prefixTokens > 0;
        GroupCopies groups = Groups();
        double tokens = double(decoding.size()) + Held(groups);
        // A step's prompt tokens, of which a group's prefix goes to its one copy (otherwise
        // each of the n tokens is held anew).
        Plan(Room(),
             [&](std::size_t k, uint32_t n)
             {
                 const auto [i, left] = prompts[k];
                 tokens += (grouped ? PromptHolds(i, left - n) - PromptHolds(i, left) : n)
                           + (n == left ? 1 : 0);
             });
        return tokens;
    }

    /** \brief Admits the waiting, each reserving its whole length (KvAdmits). */
    void
    AdmitReserving(std::size_t free)
    {
        GroupCopies groups = Groups();
        const double reserved = Reserved(prompts, groups) + Reserved(decoding, groups);
        const std::size_t admitted = Admits(waiting, free, reserved, groups);
        for (std::size_t k = 0; k < admitted; ++k)
        {
            prompts.emplace_back(waiting.front(),
                                 PromptOf(engine.prompt, *requests[waiting.front()]));
            Admitted(*requests[waiting.front()]);
            waiting.pop_front();
        }
    }

    /**
     * \brief While the next step does not fit, the latest admitted, decoding or in its prompt,
     * leaves for the front of the queue, its cache freed (its computed tokens left in the
     * prefix cache). \return whether any left
     */
    bool
    PreemptForStep()
    {
        auto later = [this](const auto& a, const auto& b)
        {
            return admittedAt[a.first] < admittedAt[b.first];
        };
        bool preempted = false;
        while (prompts.size() + decoding.size() > 1 && Need() > engine.kvTokens)
        {
            const auto p = std::max_element(prompts.begin(), prompts.end(), later);
            const auto d = std::max_element(decoding.begin(), decoding.end(), later);
            if (d == decoding.end()
                || (p != prompts.end() && admittedAt[p->first] > admittedAt[d->first]))
            {
                retained[p->first] = PromptHolds(p->first, p->second);
                waiting.push_front(p->first);
                prompts.erase(p);
            }
            else
            {
                // (Its next token's key is not computed yet.)
                retained[d->first] = DecodeHolds(d->first, d->second) - 1;
                resume[d->first] = d->second;
                waiting.push_front(d->first);
                *d = decoding.back();
                decoding.pop_back();
            }
            evictable.push_back(waiting.front());
            Preempted(*requests[waiting.front()]);
            preempted = true;
        }
        return preempted;
    }

    /**
     * \brief Admits the waiting while a slot is free, the budget has room and the cache holds
     * what they have and compute in the next step (the first whatever its need). A preempted
     * request computes what it left in the prefix cache no more (its last token at least: a
     * step yields a token only where it computes one).
     */
    void
    AdmitPreempting(std::size_t free)
    {
        const bool idle = prompts.empty() && decoding.empty();
        double tokens = idle ? 0 : Need();
        GroupCopies groups = Groups(); // (Need counts those in flight)
        groups.JoinAll(decoding, requests);
        groups.JoinAll(prompts, requests);
        uint32_t room = Room();
        room -= Plan(room, [](std::size_t, uint32_t) {});
        for (std::size_t k = 0; k < free && room > 0 && !waiting.empty(); ++k)
        {
            const std::size_t i = waiting.front();
            const uint32_t total = PromptOf(engine.prompt, *requests[i]) + Made(i);
            uint32_t left = total;
            if (retained[i] > 0)
            {
                const double rest = PromptHolds(i, 0) - retained[i];
                left = static_cast<uint32_t>(std::clamp(rest, 1.0, double(total)));
            }
            const uint32_t n = std::min(left, room);
            const double joining =
                PromptHolds(i, left - n) + (n == left ? 1 : 0) + groups.Adds(*requests[i]);
            if ((k > 0 || !idle) && tokens + joining > engine.kvTokens)
            {
                break;
            }
            groups.Join(*requests[i]);
            tokens += joining;
            room -= n;
            prompts.emplace_back(i, left);
            Admitted(*requests[i]);
            admittedAt[i] = admissions++;
            retained[i] = 0;
            const auto cached = std::find(evictable.begin(), evictable.end(), i);
            if (cached != evictable.end())
            {
                evictable.erase(cached);
            }
            waiting.pop_front();
        }
    }

    /**
     * \brief The next step's tokens take the room of preempted requests' cached tokens, the
     * earliest preempted first, each from its end.
     */
    void
    EvictCached()
    {
        double excess = prompts.empty() && decoding.empty() ? 0 : Need() - engine.kvTokens;
        for (const std::size_t i : evictable)
        {
            excess += retained[i];
        }
        while (excess > 0 && !evictable.empty())
        {
            const double evicted = std::min(excess, retained[evictable.front()]);
            retained[evictable.front()] -= evicted;
            excess -= evicted;
            if (retained[evictable.front()] <= 0)
            {
                evictable.pop_front();
            }
        }
    }

    /**
     * \brief Runs a step: the decodes, then the prompts in the budget left; the prompts it ends
     * get their first token (a recomputed one its next) and decode on.
     */
    void
    Step()
    {
        const auto n = static_cast<uint32_t>(decoding.size());
        pieces.assign(prompts.size(), 0);
        const uint32_t tokens = Plan(Room(),
                                     [this](std::size_t k, uint32_t take)
                                     {
                                         prompts[k].second -= take;
                                         pieces[k] = take;
                                     });
        // A step of no decodes costs the curve's one-request step at its context.
        const uint32_t base = std::max<uint32_t>(n, 1);
        const double keys = n > 0 ? KeysOf(engine, decoding, requests) : engine.step.tokens;
        const double start = t;
        const double decodeS = engine.step.SecondsAt(base, keys);
        t += decodeS + tokens * engine.chunkTokenS;
        joules += engine.step.JoulesAt(base, keys) + tokens * engine.chunkTokenJ;
        done += EndDecodeStep(decoding, t, requests, &lag);
        for (std::size_t k = 0; !prompts.empty() && prompts.front().second == 0; ++k)
        {
            const std::size_t i = prompts.front().first;
            prompts.pop_front();
            QueueRequest* r = requests[i];
            // Through a pipeline the step costs a prompt token its share (chunkTokenS), while
            // the piece rides in one batch through every stage: its token comes after that
            // passage, and its decodes as much later (the steps' pace is the others').
            const double passage =
                start + decodeS + double(engine.chunkBatches) * pieces[k] * engine.chunkTokenS;
            lag[i] = std::max(0.0, passage - t);
            uint32_t steps = StepsOf(engine, *r);
            if (Preempting() && resume[i] > 0)
            {
                steps = resume[i] - 1;
                resume[i] = 0;
            }
            else
            {
                r->firstTokenS = t + lag[i];
            }
            if (steps == 0)
            {
                r->finishS = t + lag[i];
                ++done;
            }
            else
            {
                decoding.emplace_back(i, steps);
            }
        }
    }

    std::deque<std::size_t> waiting;
    /** requests whose prompts are in flight, oldest first: index and prompt tokens left */
    std::deque<std::pair<std::size_t, uint32_t>> prompts;
    /** requests decoding: index and decode steps left */
    std::vector<std::pair<std::size_t, uint32_t>> decoding;
    std::size_t next = 0; //!< the first request not yet arrived
    // Preemption: a preempted request's decode steps left (0: none, or preempted in its prompt),
    // when each was admitted (the latest leaves first), and the KV tokens a preempted request
    // left in the prefix cache (on in vLLM V1 by default: freed blocks stay cached until their
    // room is needed, the earliest freed first), with the requests holding some in the order
    // they were preempted.
    std::vector<uint32_t> resume;
    std::vector<uint64_t> admittedAt;
    uint64_t admissions = 0;
    std::vector<double> retained;
    std::deque<std::size_t> evictable;
    // Through a pipeline: how much later than the steps' ends a request's tokens come (its
    // last prompt piece's passage through every stage beyond its step).
    std::vector<double> lag;
    std::vector<uint32_t> pieces; //!< the prompts' tokens in the step running (kept allocated)
};

/** An instance under static batching (QueueEngine::wholeBatches). */
class StaticInstance : public EngineInstance
{
  public:
    using EngineInstance::EngineInstance;

    void
    Run(double horizon) override
    {
        while (first < requests.size())
        {
            // The idle instance takes the requests waiting (or the next to come), slots at most,
            // after waiting up to the delay from the oldest's arrival for the batch to fill. (A
            // batch that would start at the horizon or later is not decided yet: requests yet to
            // come may join it.)
            double start = std::max(t, readyS[first]);
            const double deadline = readyS[first] + engine.batchDelayS;
            if (start < deadline)
            {
                const std::size_t last = first + engine.slots - 1;
                start = last < requests.size() && readyS[last] <= deadline
                            ? std::max(start, readyS[last])
                            : deadline;
            }
            if (start >= horizon)
            {
                return;
            }
            t = start;
            // One rectangular batch of those that have come (the first at least), within the slots
            // and the KV cache: every prompt padded to the longest, every request stepped to the
            // longest generation, each row reserving the padded length.
            std::size_t end = first;
            uint32_t prompt = 0;   // computed tokens of the longest prompt
            double promptKeys = 0; // its keys
            uint32_t steps = 0;
            while (end < requests.size() && end - first < engine.slots && readyS[end] <= t)
            {
                const QueueRequest& r = *requests[end];
                const double keys = std::max(promptKeys, PromptKeysOf(engine, r));
                const uint32_t longest = std::max(steps, StepsOf(engine, r));
                if (end > first && engine.kvTokens > 0
                    && double(end - first + 1) * KvNeedOf(engine, keys, longest) > engine.kvTokens)
                {
                    break;
                }
                prompt = std::max(prompt, PromptOf(engine.prompt, r));
                promptKeys = keys;
                steps = longest;
                ++end;
            }
            const auto k = static_cast<uint32_t>(end - first);
            const Prefill padded = PrefillOf(
                engine.prefill, engine.prompt, k, double(k) * prompt, double(k) * prompt * prompt);
            const double prefillS = padded.seconds;
            std::vector<double> stepsEndS(steps + 1, t + prefillS);
            for (uint32_t s = 1; s <= steps; ++s)
            {
                const double batchKeys = double(k) * (promptKeys + s);
                stepsEndS[s] = stepsEndS[s - 1] + engine.step.SecondsAt(k, batchKeys);
                joules += engine.step.JoulesAt(k, batchKeys);
            }
            for (std::size_t i = first; i < end; ++i)
            {
                requests[i]->firstTokenS = t + prefillS;
                requests[i]->finishS = stepsEndS[StepsOf(engine, *requests[i])];
            }
            t = stepsEndS[steps];
            joules += padded.joules;
            first = end;
        }
    }

  private:
    std::size_t first = 0; //!< the first request not yet batched
};

/**
 * An instance under continuous batching, on one or more data-parallel attention replicas in
 * lockstep (QueueEngine::replicas).
 */
class ContinuousInstance : public EngineInstance
{
  public:
    explicit ContinuousInstance(const QueueEngine& engine)
        : EngineInstance(engine)
        , replicas(engine.replicas)
    {}

    uint32_t
    PrefixRoom(std::vector<uint32_t>& inFlight) const override
    {
        GroupCopies groups = GroupsInto(inFlight);
        double held = 0;
        for (const Replica& r : replicas)
        {
            held += Held(r, groups);
        }
        return PrefixRoomBeside(held, groups.Groups());
    }

    void
    Run(double horizon) override
    {
        const bool prefills = !engine.prefill.requests.empty();
        const uint32_t d = engine.replicas;
        // The requests dealt to the replicas in turn, or as each iteration starts to the one
        // with the fewest running and waiting (below).
        const bool balance = engine.replicaRouter == QueueRouter::LEAST_OUTSTANDING && d > 1;
        for (; !balance && dealt < requests.size(); ++dealt)
        {
            replicas[dealt % d].mine.push_back(dealt);
        }
        const bool preempt = Preempts();
        resume.resize(requests.size(), 0);
        admittedAt.resize(requests.size(), 0);
        // The tokens a request holds with `left` steps to go (its prompt less a shared prefix, and
        // those it has generated), and the tokens the waiting k-th needs to be admitted: its prompt
        // (and, preempted, what it had generated, recomputed) and its next token.
        auto holds = [&](std::size_t i, uint32_t left)
        {
            return kvNeed[i] - left;
        };
        auto joinNeed = [&](const Replica& r, std::size_t k)
        {
            const std::size_t i = r.waiting[k];
            return preempt ? holds(i, resume[i] > 0 ? resume[i] - 1 : StepsOf(engine, *requests[i]))
                           : kvNeed[i];
        };
        // A request past its first token decodes its steps, or is done.
        auto join = [&](Replica& r, std::size_t i)
        {
            const uint32_t steps = StepsOf(engine, *requests[i]);
            if (steps == 0)
            {
                requests[i]->finishS = requests[i]->firstTokenS;
                ++done;
            }
            else
            {
                r.running.emplace_back(i, steps);
            }
        };
        while (done < requests.size() && t < horizon)
        {
            for (; balance && dealt < readyS.size() && readyS[dealt] <= t; ++dealt)
            {
                const auto least =
                    std::min_element(replicas.begin(),
                                     replicas.end(),
                                     [](const Replica& a, const Replica& b)
                                     {
                                         return a.running.size() + a.waiting.size()
                                                < b.running.size() + b.waiting.size();
                                     });
                least->waiting.push_back(dealt);
            }
            double nextArrival = balance && dealt < readyS.size()
                                     ? readyS[dealt]
                                     : std::numeric_limits<double>::infinity();
            bool busy = false;
            for (Replica& r : replicas)
            {
                while (r.next < r.mine.size() && readyS[r.mine[r.next]] <= t)
                {
                    r.waiting.push_back(r.mine[r.next++]);
                }
                // Decode only (disaggregated serving): the waiting take the free slots at once, as
                // many as the KV cache admits.
                if (!prefills && !r.waiting.empty())
                {
                    GroupCopies groups = Groups();
                    const double held = Reserved(r.running, groups);
                    const std::size_t admitted =
                        Admits(r.waiting,
                               engine.slots - std::min<std::size_t>(engine.slots, r.running.size()),
                               held,
                               groups);
                    for (std::size_t k = 0; k < admitted; ++k)
                    {
                        join(r, r.waiting.front());
                        r.waiting.pop_front();
                    }
                }
                if (r.next < r.mine.size())
                {
                    nextArrival = std::min(nextArrival, readyS[r.mine[r.next]]);
                }
                // (Decode only, a request left waiting by one that finished at once is
                // admitted at the same time.)
                busy = busy || !r.running.empty() || !r.waiting.empty();
            }
            if (!busy)
            {
                if (!(nextArrival < horizon))
                {
                    return;
                }
                t = nextArrival;
                continue;
            }
            // Each replica's part of the iteration: a prefill of its oldest waiting prompts (as
            // many as slots are free, the iteration takes and the token budget holds), else a
            // decode step of its requests in flight, or nothing.
            double prefillS = 0;
            double stepS = 0;
            double iterationJ = 0;
            std::vector<uint32_t> prefilled(d, 0);
            for (uint32_t k = 0; k < d; ++k)
            {
                Replica& r = replicas[k];
                // The prompts the free slots, the iteration and the KV cache take.
                GroupCopies groups = Groups();
                const std::size_t admitted =
                    prefills && !r.waiting.empty() && r.running.size() < engine.slots ? KvAdmits(
                        engine,
                        r.waiting.size(),
                        std::min<std::size_t>(std::size_t(engine.slots) - r.running.size(),
                                              engine.prefill.requests.back()),
                        Held(r, groups),
                        [&](std::size_t j)
                        {
                            return joinNeed(r, j) + groups.Join(*requests[r.waiting[j]]);
                        })
                                                                                      : 0;
                if (admitted > 0)
                {
                    // (A preempted request recomputes what it had generated too.)
                    const Prefill p = NextPrefill(
                        engine.prefill,
                        engine.prompt,
                        engine.tokenBudget,
                        admitted,
                        [&](std::size_t j)
                        {
                            const std::size_t i = r.waiting[j];
                            const uint32_t made =
                                preempt && resume[i] > 0
                                    ? StepsOf(engine, *requests[i]) - resume[i] + 1
                                    : 0;
                            return std::make_pair(PromptOf(engine.prompt, *requests[i]) + made,
                                                  CachedOf(engine.prefill, *requests[i]));
                        });
                    prefilled[k] = p.prompts;
                    prefillS = std::max(prefillS, p.seconds);
                    iterationJ += p.joules / d;
                }
                else if (!r.running.empty())
                {
                    // Preemption: while the step's new tokens do not fit, the latest admitted
                    // request leaves (its cache freed) for the front of the queue.
                    auto held = [&]
                    {
                        GroupCopies groups = Groups();
                        return Held(r, groups);
                    };
                    while (preempt && r.running.size() > 1
                           && held() + r.running.size() > engine.kvTokens)
                    {
                        const auto latest =
                            std::max_element(r.running.begin(),
                                             r.running.end(),
                                             [&](const auto& a, const auto& b)
                                             {
                                                 return admittedAt[a.first] < admittedAt[b.first];
                                             });
                        resume[latest->first] = latest->second;
                        Preempted(*requests[latest->first]);
                        r.waiting.push_front(latest->first);
                        *latest = r.running.back();
                        r.running.pop_back();
                    }
                    const auto n = static_cast<uint32_t>(r.running.size());
                    const double keys = KeysOf(engine, r.running, requests);
                    stepS = std::max(stepS, engine.step.SecondsAt(n, keys));
                    iterationJ += engine.step.JoulesAt(n, keys) / d;
                }
            }
            // With batches in flight through a pipeline a prefill holds the engine for its share.
            const double start = t;
            t += std::max(engine.prefillHeld * prefillS, stepS);
            joules += iterationJ;
            for (uint32_t k = 0; k < d; ++k)
            {
                Replica& r = replicas[k];
                if (prefilled[k] == 0)
                {
                    done += EndDecodeStep(r.running, t, requests);
                    continue;
                }
                for (uint32_t j = 0; j < prefilled[k]; ++j)
                {
                    const std::size_t i = r.waiting.front();
                    r.waiting.pop_front();
                    Admitted(*requests[i], start);
                    if (preempt)
                    {
                        admittedAt[i] = admissions++;
                    }
                    if (preempt && resume[i] > 0)
                    {
                        // Recomputed: its prefill yields its next token.
                        const uint32_t left = resume[i] - 1;
                        resume[i] = 0;
                        if (left == 0)
                        {
                            requests[i]->finishS = start + std::max(prefillS, stepS);
                            ++done;
                        }
                        else
                        {
                            r.running.emplace_back(i, left);
                        }
                        continue;
                    }
                    requests[i]->firstTokenS = start + std::max(prefillS, stepS);
                    join(r, i);
                }
            }
        }
    }

  private:
    /** A data-parallel attention replica's requests. */
    struct Replica
    {
        std::vector<std::size_t> mine; //!< its requests, in arrival order
        std::size_t next = 0;          //!< the first of them not yet arrived
        std::deque<std::size_t> waiting;
        std::vector<std::pair<std::size_t, uint32_t>> running; //!< index, decode steps left
    };

    /** \return whether it preempts (QueueEngine::preempt, with prefills, within a cache) */
    bool
    Preempts() const
    {
        return engine.preempt && !engine.prefill.requests.empty() && engine.kvTokens > 0;
    }

    /**
     * \return what \p r's requests in flight hold, their groups' prefixes counted once in
     * \p groups: reserving whole lengths, those from their admission; preempting, what each
     * has computed
     */
    double
    Held(const Replica& r, GroupCopies& groups) const
    {
        if (!Preempts())
        {
            return Reserved(r.running, groups);
        }
        double tokens = groups.JoinAll(r.running, requests);
        for (const auto& [i, left] : r.running)
        {
            tokens += kvNeed[i] - left;
        }
        return tokens;
    }

    std::vector<Replica> replicas;
    std::size_t dealt = 0; //!< the requests dealt to the replicas
    // Preemption (QueueEngine::preempt): a preempted request's decode steps left (0: not
    // preempted), and when each was admitted (the latest is preempted first).
    std::vector<uint32_t> resume;
    std::vector<uint64_t> admittedAt;
    uint64_t admissions = 0;
};

/** \return an instance of the engine's batching, the engine checked */
std::unique_ptr<EngineInstance>
MakeInstance(const QueueEngine& engine)
{
    if (engine.slots == 0 || engine.generated == 0)
    {
        throw std::logic_error("SimulateEngine: a slot and a generated token needed");
    }
    if (engine.replicas > 1 && (engine.chunked || engine.wholeBatches))
    {
        throw std::logic_error(
            "SimulateEngine: data-parallel attention replicas need continuous batching");
    }
    if (engine.chunked)
    {
        return std::make_unique<ChunkedInstance>(engine);
    }
    if (engine.wholeBatches)
    {
        if (engine.prefill.requests.empty())
        {
            throw std::logic_error("SimulateEngine: static batching needs a prefill curve");
        }
        return std::make_unique<StaticInstance>(engine);
    }
    return std::make_unique<ContinuousInstance>(engine);
}

/** \return a pool of \p instances instances of the engine */
std::vector<std::unique_ptr<EngineInstance>>
MakePool(const QueueEngine& engine, uint32_t instances)
{
    std::vector<std::unique_ptr<EngineInstance>> pool;
    for (uint32_t k = 0; k < instances; ++k)
    {
        pool.push_back(MakeInstance(engine));
    }
    return pool;
}

/** \return whether the engine prefills nothing (a disaggregated decode instance) */
bool
PrefillsNothing(const QueueEngine& engine)
{
    return engine.prefill.requests.empty() && engine.tokenBudget == 0 && !engine.chunked;
}

/**
 * \brief Uses a group's prefix in an instance's cache (PrefixCache::Use) at \p at: where the
 * instance counts its KV cache, the cache first holds what it holds then, the prefixes of what
 * it runs (pinned) and in what they leave free the most recently used others.
 * \param engine the instances' engine \param instance the instance \param cache its prefixes
 * \param prefix the group \param at when \param inFlight scratch (PrefixRoom)
 * \return whether it held the prefix
 */
bool
UsePrefix(const QueueEngine& engine,
          EngineInstance& instance,
          PrefixCache& cache,
          uint32_t prefix,
          double at,
          std::vector<uint32_t>& inFlight)
{
    if (engine.kvTokens > 0 && !engine.wholeBatches)
    {
        instance.Advance(at);
        const uint32_t room = instance.PrefixRoom(inFlight);
        cache.Pin(inFlight);
        cache.Resize(room);
    }
    return cache.Use(prefix);
}

/** \return each instance's requests not finished at \p at, each advanced to it */
std::vector<std::size_t>
OutstandingAt(std::vector<std::unique_ptr<EngineInstance>>& pool, double at)
{
    std::vector<std::size_t> load(pool.size());
    for (std::size_t j = 0; j < pool.size(); ++j)
    {
        pool[j]->Advance(at);
        load[j] = pool[j]->Outstanding(at);
    }
    return load;
}

/** \return the index of the fewest of \p load (the lowest among equals) */
uint32_t
Fewest(const std::vector<std::size_t>& load)
{
    return static_cast<uint32_t>(std::min_element(load.begin(), load.end()) - load.begin());
}

/**
 * \return the instance of the pool with the fewest requests not finished at \p at, each
 * advanced to it (the lowest index among equals)
 */
uint32_t
LeastOutstanding(std::vector<std::unique_ptr<EngineInstance>>& pool, double at)
{
    return Fewest(OutstandingAt(pool, at));
}

/**
 * \param load each instance's outstanding requests \param caches each one's prefixes
 * \param prefixTokens a group's prefix \param r a request of a group
 * \return the instance the cache-aware router deals \p r to (see SimulateInstances)
 */
uint32_t
CacheAware(const std::vector<std::size_t>& load,
           const std::vector<PrefixCache>& caches,
           uint32_t prefixTokens,
           const QueueRequest& r)
{
    // SGLang's and vLLM's routers' defaults (sgl-router / vllm-router, policy cache_aware).
    const double cacheThreshold = 0.3;
    const double balanceAbs = 64;
    const double balanceRel = 1.5;
    const auto count = static_cast<uint32_t>(load.size());
    const double least = *std::min_element(load.begin(), load.end());
    const double most = *std::max_element(load.begin(), load.end());
    if (most - least > balanceAbs && most > balanceRel * least)
    {
        return Fewest(load);
    }
    const uint32_t whole = r.prompt + r.cached;
    if (double(prefixTokens) > cacheThreshold * whole)
    {
        // The least outstanding of those holding it (the lowest index among equals).
        uint32_t holder = count;
        for (uint32_t j = 0; j < count; ++j)
        {
            if (caches[j].Holds(r.prefix) && (holder == count || load[j] < load[holder]))
            {
                holder = j;
            }
        }
        if (holder < count)
        {
            return holder;
        }
    }
    // The smallest tree: the fewest prefixes held (then the least outstanding, lowest index).
    uint32_t smallest = 0;
    for (uint32_t j = 1; j < count; ++j)
    {
        if (caches[j].Size() < caches[smallest].Size()
            || (caches[j].Size() == caches[smallest].Size() && load[j] < load[smallest]))
        {
            smallest = j;
        }
    }
    return smallest;
}

/** \return the dynamic energy of each instance of the pool, each run to its end */
std::vector<double>
RunToEnd(std::vector<std::unique_ptr<EngineInstance>>& pool)
{
    std::vector<double> joules;
    for (auto& instance : pool)
    {
        instance->Advance(std::numeric_limits<double>::infinity());
        joules.push_back(instance->Joules());
    }
    return joules;
}

/** \return the requests' indices in the order their prefills end (ties: their order) */
std::vector<std::size_t>
ByFirstToken(const std::vector<QueueRequest>& requests)
{
    std::vector<std::size_t> order(requests.size());
    for (std::size_t i = 0; i < order.size(); ++i)
    {
        order[i] = i;
    }
    std::stable_sort(order.begin(),
                     order.end(),
                     [&requests](std::size_t a, std::size_t b)
                     {
                         return requests[a].firstTokenS < requests[b].firstTokenS;
                     });
    return order;
}

} // namespace

double
SimulateEngine(const QueueEngine& engine,
               const std::vector<double>& readyS,
               std::vector<QueueRequest*>& requests)
{
    return SimulateInstances(engine, 1, QueueRouter::ROUND_ROBIN, readyS, requests).at(0);
}

std::vector<double>
SimulateInstances(const QueueEngine& engine,
                  uint32_t instances,
                  QueueRouter router,
                  const std::vector<double>& readyS,
                  std::vector<QueueRequest*>& requests,
                  std::vector<uint32_t>* instanceOf)
{
    if (readyS.size() != requests.size() || instances == 0)
    {
        throw std::logic_error("SimulateInstances: one ready time per request and an instance "
                               "needed");
    }
    if (instanceOf != nullptr)
    {
        instanceOf->clear();
    }
    std::vector<std::unique_ptr<EngineInstance>> pool = MakePool(engine, instances);
    std::vector<PrefixCache> caches(instances, PrefixCache(engine.prefixCapacity));
    std::vector<uint32_t> inFlight; // (PrefixRoom)
    for (std::size_t i = 0; i < requests.size(); ++i)
    {
        QueueRequest& r = *requests[i];
        uint32_t k = static_cast<uint32_t>(i % instances);
        if (router != QueueRouter::ROUND_ROBIN && instances > 1)
        {
            if (i > 0 && readyS[i] < readyS[i - 1])
            {
                throw std::logic_error("SimulateInstances: a router needs requests in the "
                                       "order they arrive");
            }
            k = router == QueueRouter::CACHE_AWARE && r.prefix > 0 && engine.prefixTokens > 0
                    ? CacheAware(OutstandingAt(pool, readyS[i]), caches, engine.prefixTokens, r)
                    : LeastOutstanding(pool, readyS[i]);
        }
        if (r.prefix > 0 && engine.prefixTokens > 0 && !PrefillsNothing(engine))
        {
            SplitPrompt(r,
                        engine.prefixTokens,
                        UsePrefix(engine, *pool[k], caches[k], r.prefix, readyS[i], inFlight));
        }
        pool[k]->Add(readyS[i], requests[i]);
        if (instanceOf != nullptr)
        {
            instanceOf->push_back(k);
        }
    }
    return RunToEnd(pool);
}

namespace {

/**
 * \brief The prompts an iteration of a prefill pool beginning at \p start takes: the oldest of
 * those waiting that have arrived by then, within the curve's last point and the budget (see
 * SimulatePrefillPool for the other parameters).
 * \param waiting how many wait \param at the k-th waiting, oldest first
 * \param cache with prefix groups, the instance's, where its prompts find their prefixes as it
 * held them before the iteration (nullptr: found as they were dealt)
 * \return the iteration
 */
template<typename At>
Prefill
TakeIteration(const StepCurve& prefill,
              uint32_t prompt,
              uint32_t tokenBudget,
              double start,
              std::size_t waiting,
              At at,
              const PrefixCache* cache,
              uint32_t prefixTokens)
{
    std::size_t arrived = 0;
    while (arrived < prefill.requests.back() && arrived < waiting && at(arrived).arrivalS <= start)
    {
        // Prompts of one group prefilled together each compute it.
        QueueRequest& r = at(arrived);
        if (cache != nullptr && r.prefix > 0 && prefixTokens > 0)
        {
            SplitPrompt(r, prefixTokens, cache->Holds(r.prefix));
        }
        ++arrived;
    }
    return NextPrefill(prefill,
                       prompt,
                       tokenBudget,
                       arrived,
                       [&](std::size_t k)
                       {
                           return std::make_pair(PromptOf(prompt, at(k)), CachedOf(prefill, at(k)));
                       });
}

/**
 * A prefill instance of a routed pool: its own queue of prompts, taken oldest first as it
 * frees, as the shared pool's instances take theirs.
 */
struct PrefillQueue
{
    std::deque<std::size_t> waiting; //!< its prompts not begun, in arrival order
    std::vector<double> ending;      //!< the first-token times of its prompts begun
    double free = 0;                 //!< when it can begin its next iteration
};

/**
 * \brief Runs the iterations of \p q (instance \p k) that begin before \p horizon (see
 * SimulatePrefillPool for the other parameters).
 * \return their dynamic energy, J
 */
double
AdvancePrefill(PrefillQueue& q,
               uint32_t k,
               double horizon,
               uint32_t stages,
               const StepCurve& prefill,
               uint32_t prompt,
               uint32_t tokenBudget,
               std::vector<QueueRequest>& requests,
               std::vector<uint32_t>* instanceOf)
{
    double joules = 0;
    while (!q.waiting.empty())
    {
        const double start = std::max(requests[q.waiting.front()].arrivalS, q.free);
        if (start >= horizon)
        {
            break;
        }
        const Prefill p = TakeIteration(
            prefill,
            prompt,
            tokenBudget,
            start,
            q.waiting.size(),
            [&](std::size_t k) -> QueueRequest&
            {
                return requests[q.waiting[k]];
            },
            nullptr,
            0);
        for (uint32_t j = 0; j < p.prompts; ++j)
        {
            QueueRequest& r = requests[q.waiting.front()];
            r.firstTokenS = start + p.seconds;
            q.ending.push_back(r.firstTokenS);
            if (instanceOf != nullptr)
            {
                (*instanceOf)[q.waiting.front()] = k;
            }
            q.waiting.pop_front();
        }
        q.free = start + p.seconds / stages;
        joules += p.joules;
    }
    return joules;
}

/** \return the prompts of \p q not prefilled at \p at (no earlier than the last call's) */
std::size_t
PrefillOutstanding(PrefillQueue& q, double at)
{
    q.ending.erase(std::remove_if(q.ending.begin(),
                                  q.ending.end(),
                                  [at](double end)
                                  {
                                      return end <= at;
                                  }),
                   q.ending.end());
    return q.waiting.size() + q.ending.size();
}

} // namespace

double
SimulatePrefillPool(uint32_t instances,
                    uint32_t stages,
                    const StepCurve& prefill,
                    uint32_t prompt,
                    uint32_t tokenBudget,
                    std::vector<QueueRequest>& requests,
                    std::vector<uint32_t>* instanceOf,
                    uint32_t prefixTokens,
                    uint32_t prefixCapacity,
                    bool cacheAware)
{
    if (instances == 0 || stages == 0 || prefill.requests.empty())
    {
        throw std::logic_error("SimulatePrefillPool: an instance, a stage and a curve needed");
    }
    if (cacheAware && prefixTokens > 0)
    {
        // Each prompt dealt as it comes, to its own instance's queue.
        if (instanceOf != nullptr)
        {
            instanceOf->assign(requests.size(), 0);
        }
        std::vector<PrefillQueue> queues(instances);
        std::vector<PrefixCache> caches(instances, PrefixCache(prefixCapacity));
        std::vector<std::size_t> load(instances);
        double joules = 0;
        auto advance = [&](uint32_t k, double horizon)
        {
            joules += AdvancePrefill(
                queues[k], k, horizon, stages, prefill, prompt, tokenBudget, requests, instanceOf);
        };
        for (std::size_t i = 0; i < requests.size(); ++i)
        {
            QueueRequest& r = requests[i];
            if (i > 0 && r.arrivalS < requests[i - 1].arrivalS)
            {
                throw std::logic_error("SimulatePrefillPool: a router needs requests in the "
                                       "order they arrive");
            }
            for (uint32_t k = 0; k < instances; ++k)
            {
                advance(k, r.arrivalS);
                load[k] = PrefillOutstanding(queues[k], r.arrivalS);
            }
            const uint32_t k =
                r.prefix > 0 ? CacheAware(load, caches, prefixTokens, r) : Fewest(load);
            if (r.prefix > 0)
            {
                SplitPrompt(r, prefixTokens, caches[k].Use(r.prefix));
            }
            queues[k].waiting.push_back(i);
        }
        for (uint32_t k = 0; k < instances; ++k)
        {
            advance(k, std::numeric_limits<double>::infinity());
        }
        return joules;
    }
    std::vector<double> free(instances, 0);
    std::vector<PrefixCache> caches(instances, PrefixCache(prefixCapacity));
    if (instanceOf != nullptr)
    {
        instanceOf->assign(requests.size(), 0);
    }
    double joules = 0;
    for (std::size_t next = 0; next < requests.size();)
    {
        const auto s =
            static_cast<std::size_t>(std::min_element(free.begin(), free.end()) - free.begin());
        const double start = std::max(requests[next].arrivalS, free[s]);
        // A group's prompt finds its prefix where the instance held it before the iteration.
        const Prefill p = TakeIteration(
            prefill,
            prompt,
            tokenBudget,
            start,
            requests.size() - next,
            [&](std::size_t k) -> QueueRequest&
            {
                return requests[next + k];
            },
            &caches[s],
            prefixTokens);
        for (uint32_t j = 0; j < p.prompts; ++j)
        {
            if (requests[next + j].prefix > 0 && prefixTokens > 0)
            {
                caches[s].Use(requests[next + j].prefix);
            }
            requests[next + j].firstTokenS = start + p.seconds;
            if (instanceOf != nullptr)
            {
                (*instanceOf)[next + j] = static_cast<uint32_t>(s);
            }
        }
        free[s] = start + p.seconds / stages;
        joules += p.joules;
        next += p.prompts;
    }
    return joules;
}

std::vector<double>
ScheduleKvTransfers(const std::vector<QueueRequest>& requests,
                    const std::vector<uint32_t>& prefillOf,
                    const std::vector<uint32_t>& decodeOf,
                    const std::vector<double>& seconds)
{
    const std::size_t n = requests.size();
    if (prefillOf.size() != n || decodeOf.size() != n || seconds.size() != n)
    {
        throw std::logic_error("ScheduleKvTransfers: an instance pair and a time per request");
    }
    std::vector<double> out;
    std::vector<double> in;
    std::vector<double> ready(n, 0);
    for (std::size_t i : ByFirstToken(requests))
    {
        if (prefillOf[i] >= out.size())
        {
            out.resize(prefillOf[i] + 1, 0);
        }
        if (decodeOf[i] >= in.size())
        {
            in.resize(decodeOf[i] + 1, 0);
        }
        const double start =
            std::max({requests[i].firstTokenS, out[prefillOf[i]], in[decodeOf[i]]});
        ready[i] = start + seconds[i];
        out[prefillOf[i]] = ready[i];
        in[decodeOf[i]] = ready[i];
    }
    return ready;
}

std::vector<double>
SimulateDecodeInstances(const QueueEngine& engine,
                        uint32_t instances,
                        QueueRouter router,
                        const std::vector<uint32_t>& prefillOf,
                        const std::function<double(std::size_t, uint32_t)>& seconds,
                        std::vector<QueueRequest>& requests,
                        uint64_t* prefixHits)
{
    const std::size_t n = requests.size();
    if (prefixHits != nullptr)
    {
        *prefixHits = 0;
    }
    if (instances == 0 || prefillOf.size() != n || !seconds)
    {
        throw std::logic_error(
            "SimulateDecodeInstances: an instance, and a prefill instance and a time per request");
    }
    std::vector<QueueRequest*> all;
    for (QueueRequest& r : requests)
    {
        all.push_back(&r);
    }
    const bool caching = engine.prefixTokens > 0;
    if ((router == QueueRouter::ROUND_ROBIN || instances == 1) && !caching)
    {
        std::vector<uint32_t> decodeOf(n);
        std::vector<double> alone(n);
        for (std::size_t i = 0; i < n; ++i)
        {
            decodeOf[i] = static_cast<uint32_t>(i % instances);
            alone[i] = seconds(i, decodeOf[i]);
        }
        return SimulateInstances(engine,
                                 instances,
                                 QueueRouter::ROUND_ROBIN,
                                 ScheduleKvTransfers(requests, prefillOf, decodeOf, alone),
                                 all);
    }
    // In the order the prefills end, each to its instance (in turn, or the one with the fewest
    // outstanding then), its transfer after the prefill instance's and the decode instance's
    // previous ones. A decode instance holding the request's prefix group in its own prefix cache
    // loads only the rest (vLLM's KV connectors load what is beyond the locally computed tokens,
    // KVConnectorBase_V1.get_num_new_matched_tokens).
    std::vector<std::unique_ptr<EngineInstance>> pool = MakePool(engine, instances);
    std::vector<PrefixCache> caches(caching ? instances : 0, PrefixCache(engine.prefixCapacity));
    std::vector<uint32_t> inFlight; // (UsePrefix)
    std::vector<double> out;
    std::vector<double> in(instances, 0);
    for (const std::size_t i : ByFirstToken(requests))
    {
        const QueueRequest& r = requests[i];
        const double at = r.firstTokenS;
        const uint32_t k = router == QueueRouter::ROUND_ROBIN || instances == 1
                               ? static_cast<uint32_t>(i % instances)
                               : LeastOutstanding(pool, at);
        if (prefillOf[i] >= out.size())
        {
            out.resize(prefillOf[i] + 1, 0);
        }
        double share = 1; // of its prompt's KV cache that crosses
        if (caching && r.prefix > 0
            && UsePrefix(engine, *pool[k], caches[k], r.prefix, at, inFlight))
        {
            share = 1 - GroupShareOf(engine, r) / PromptKeysOf(engine, r);
            if (prefixHits != nullptr)
            {
                ++*prefixHits;
            }
        }
        const double ready = std::max({at, out[prefillOf[i]], in[k]}) + share * seconds(i, k);
        out[prefillOf[i]] = ready;
        in[k] = ready;
        pool[k]->Add(ready, all[i]);
    }
    return RunToEnd(pool);
}

QueueSummary
SummarizeQueue(const std::vector<QueueRequest>& requests,
               uint32_t generated,
               double ttftSloS,
               double tpotSloS)
{
    QueueSummary s;
    if (requests.empty())
    {
        return s;
    }
    std::vector<double> ttft;
    std::vector<double> tpot;
    uint64_t within = 0;
    uint64_t withinTtft = 0;
    uint64_t withinTpot = 0;
    double first = requests.front().arrivalS;
    double last = 0;
    for (const auto& r : requests)
    {
        const double toFirst = r.firstTokenS - r.arrivalS;
        const uint32_t tokens = r.generated > 0 ? r.generated : generated;
        const double perToken =
            tokens > 1 ? std::max(0.0, r.finishS - r.firstTokenS) / double(tokens - 1) : 0;
        ttft.push_back(toFirst);
        // A one-token request has no time per output token: left out of the percentiles (as
        // vLLM's benchmark leaves it out of its TPOT statistics), and within any TPOT target
        // (vLLM's goodput counts its TPOT as 0).
        if (tokens > 1)
        {
            tpot.push_back(perToken);
        }
        const bool ttftMet = ttftSloS <= 0 || toFirst <= ttftSloS;
        const bool tpotMet = tpotSloS <= 0 || perToken <= tpotSloS;
        within += ttftMet && tpotMet ? 1 : 0;
        withinTtft += ttftMet ? 1 : 0;
        withinTpot += tpotMet ? 1 : 0;
        first = std::min(first, r.arrivalS);
        last = std::max(last, r.finishS);
        s.preemptions += r.preemptions;
    }
    std::sort(ttft.begin(), ttft.end());
    std::sort(tpot.begin(), tpot.end());
    s.ttftP50S = Percentile(ttft, 50);
    s.ttftP90S = Percentile(ttft, 90);
    s.ttftP99S = Percentile(ttft, 99);
    s.tpotP50S = Percentile(tpot, 50);
    s.tpotP90S = Percentile(tpot, 90);
    s.tpotP99S = Percentile(tpot, 99);
    s.attainment = double(within) / double(requests.size());
    s.ttftAttainment = double(withinTtft) / double(requests.size());
    s.tpotAttainment = double(withinTpot) / double(requests.size());
    s.spanS = last - first;
    return s;
}

} // namespace rapidllm
} // namespace ns3
