/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "collective-algorithms.h"

#include "ns3/spec-error.h"
#include "ns3/spec-reader.h"
#include "ns3/topology.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

namespace ns3 {
namespace rapidllm {

namespace {
const CollectiveOp kAllOps[] = {CollectiveOp::ALL_REDUCE,
                                CollectiveOp::REDUCE_SCATTER,
                                CollectiveOp::ALL_GATHER,
                                CollectiveOp::ALL_TO_ALL,
                                CollectiveOp::BROADCAST,
                                CollectiveOp::REDUCE,
                                CollectiveOp::SEND_RECV};
const char* const kSource = "collective";
} // namespace

std::string
ToString(CollectiveOp op)
{
    switch (op)
    {
        case CollectiveOp::ALL_REDUCE:
            return "all-reduce";
        case CollectiveOp::REDUCE_SCATTER:
            return "reduce-scatter";
        case CollectiveOp::ALL_GATHER:
            return "all-gather";
        case CollectiveOp::ALL_TO_ALL:
            return "all-to-all";
        case CollectiveOp::BROADCAST:
            return "broadcast";
        case CollectiveOp::REDUCE:
            return "reduce";
        case CollectiveOp::SEND_RECV:
            return "send-recv";
    }
    return "all-reduce";
}

std::vector<std::string>
CollectiveOpNames()
{
    std::vector<std::string> names;
    for (auto op : kAllOps)
    {
        names.push_back(ToString(op));
    }
    return names;
}

CollectiveOp
ParseCollectiveOp(const std::string& name, const std::string& field)
{
    for (auto op : kAllOps)
    {
        if (ToString(op) == name)
        {
            return op;
        }
    }
    throw SpecError(kSource,
                    field,
                    "unknown collective '" + name
                        + "'; allowed: " + JoinNames(CollectiveOpNames()));
}

std::vector<std::string>
CollectiveAlgorithmNames()
{
    return {"auto", "ring", "direct", "halving-doubling", "double-binary-tree", "hierarchical"};
}

double
BusBandwidthFactor(CollectiveOp op, uint32_t n)
{
    if (n == 0)
    {
        return 0;
    }
    switch (op)
    {
        case CollectiveOp::ALL_REDUCE:
            return 2.0 * (n - 1) / n;
        case CollectiveOp::REDUCE_SCATTER:
        case CollectiveOp::ALL_GATHER:
        case CollectiveOp::ALL_TO_ALL:
            return double(n - 1) / n;
        default:
            return 1.0;
    }
}

std::string
DefaultCollectiveAlgorithm(TopologyKind kind)
{
    // NCCL runs rings over NVSwitch and fat trees; a fully connected mesh (e.g. AMD Infinity
    // Fabric, TPU slices' ICI within a node) is used best by direct sends to every peer.
    return kind == TopologyKind::FULLY_CONNECTED ? "direct" : "ring";
}

namespace {

/** \return piece i of S split into k nearly equal pieces */
uint64_t
Split(uint64_t s, uint64_t k, uint64_t i)
{
    return s / k + (i < s % k ? 1 : 0);
}

/** \return true if n is a power of two */
bool
IsPowerOfTwo(uint32_t n)
{
    return n > 0 && (n & (n - 1)) == 0;
}

/**
 * \brief Appends the phases of collective algorithms to a schedule. `ready[r]` is the step
 * rank r waits for before its next phase (-1: nothing); each phase updates it.
 */
class Builder
{
  public:
    using Ready = std::vector<int64_t>;

    Builder(CollectiveSchedule& s, double reduceRate)
        : m_s(s)
        , m_reduceRate(reduceRate)
    {}

    /** \return deps made of one optional step */
    static std::vector<uint32_t>
    Deps(int64_t step)
    {
        return step < 0 ? std::vector<uint32_t>{} : std::vector<uint32_t>{uint32_t(step)};
    }

    /** \brief A message after an optional step. \return its step */
    uint32_t
    AddSend(uint32_t src, uint32_t dst, uint64_t bytes, int64_t after)
    {
        return m_s.AddSend(src, dst, bytes, Deps(after));
    }

    /** \brief A local reduction of `bytes` after `after` (nothing if reductions are free). */
    int64_t
    Reduce(uint32_t rank, uint64_t bytes, int64_t after)
    {
        if (m_reduceRate <= 0 || bytes == 0)
        {
            return after;
        }
        return m_s.AddLocal(rank, bytes / m_reduceRate, Deps(after));
    }

    /** \brief One step done when all of `deps` are (a zero-time local step if several). */
    int64_t
    Join(uint32_t rank, const std::vector<int64_t>& deps)
    {
        std::vector<uint32_t> d;
        for (auto x : deps)
        {
            if (x >= 0 && std::find(d.begin(), d.end(), uint32_t(x)) == d.end())
            {
                d.push_back(uint32_t(x));
            }
        }
        if (d.empty())
        {
            return -1;
        }
        if (d.size() == 1)
        {
            return d[0];
        }
        return m_s.AddLocal(rank, 0, d);
    }

    /** \brief Ring reduce-scatter (reduce=true) or all-gather of S bytes in k-1 steps. */
    void
    Ring(const std::vector<uint32_t>& m, uint64_t s, bool reduce, Ready& ready)
    {
        const auto k = static_cast<uint32_t>(m.size());
        if (k < 2)
        {
            return;
        }
        std::vector<int64_t> cur(k);
        for (uint32_t i = 0; i < k; ++i)
        {
            cur[i] = ready[m[i]];
        }
        // A rank's messages to its ring neighbour go through one connection, in order (as
        // NCCL's per-peer FIFO): step s also waits for the rank's step s-1 message to land.
        // On a uniform ring this changes nothing; behind a slow link it keeps the messages
        // sequential instead of sharing the link among steps that ran ahead.
        std::vector<int64_t> lastSend(k, -1);
        for (uint32_t step = 0; step + 1 < k; ++step)
        {
            std::vector<int64_t> next(k);
            for (uint32_t i = 0; i < k; ++i)
            {
                uint32_t to = (i + 1) % k;
                uint64_t bytes = Split(s, k, (i + k - step) % k);
                std::vector<uint32_t> deps = Deps(cur[i]);
                if (lastSend[i] >= 0 && lastSend[i] != cur[i])
                {
                    deps.push_back(uint32_t(lastSend[i]));
                }
                uint32_t send = m_s.AddSend(m[i], m[to], bytes, std::move(deps));
                lastSend[i] = send;
                next[to] = reduce ? Reduce(m[to], bytes, send) : int64_t(send);
            }
            cur = next;
        }
        for (uint32_t i = 0; i < k; ++i)
        {
            ready[m[i]] = cur[i];
        }
    }

    /** \brief Direct reduce-scatter / all-gather / all-to-all: one message per pair. */
    void
    Direct(const std::vector<uint32_t>& m, uint64_t s, CollectiveOp op, Ready& ready)
    {
        const auto k = static_cast<uint32_t>(m.size());
        if (k < 2)
        {
            return;
        }
        std::vector<std::vector<int64_t>> received(k);
        for (uint32_t i = 0; i < k; ++i)
        {
            for (uint32_t j = 0; j < k; ++j)
            {
                if (i == j)
                {
                    continue;
                }
                // Reduce-scatter and all-to-all send block j to rank j; all-gather sends the
                // sender's own block.
                uint64_t bytes = Split(s, k, op == CollectiveOp::ALL_GATHER ? i : j);
                received[j].push_back(m_s.AddSend(m[i], m[j], bytes, Deps(ready[m[i]])));
            }
        }
        for (uint32_t j = 0; j < k; ++j)
        {
            int64_t done = Join(m[j], received[j]);
            if (op == CollectiveOp::REDUCE_SCATTER)
            {
                done = Reduce(m[j], (k - 1) * Split(s, k, j), done);
            }
            ready[m[j]] = done;
        }
    }

    /**
     * \brief Recursive halving reduce-scatter (reduce=true) or recursive doubling all-gather
     * (Thakur, Rabenseifner, Gropp, IJHPCA 2005); k must be a power of two.
     */
    void
    HalvingDoubling(const std::vector<uint32_t>& m, uint64_t s, bool reduce, Ready& ready)
    {
        const auto k = static_cast<uint32_t>(m.size());
        if (k < 2)
        {
            return;
        }
        uint32_t steps = 0;
        while ((1u << steps) < k)
        {
            ++steps;
        }
        std::vector<int64_t> cur(k);
        for (uint32_t i = 0; i < k; ++i)
        {
            cur[i] = ready[m[i]];
        }
        for (uint32_t t = 0; t < steps; ++t)
        {
            // Halving: distance k/2, k/4, ..., data S/2, S/4, ...; doubling: the reverse.
            uint32_t distance = reduce ? k >> (t + 1) : 1u << t;
            uint64_t parts = reduce ? (uint64_t(1) << (t + 1)) : k / (uint64_t(1) << t);
            uint64_t bytes = (s + parts - 1) / parts;
            std::vector<int64_t> next(k);
            for (uint32_t i = 0; i < k; ++i)
            {
                uint32_t partner = i ^ distance;
                uint32_t send = m_s.AddSend(m[i], m[partner], bytes, Deps(cur[i]));
                next[partner] = reduce ? Reduce(m[partner], bytes, send) : int64_t(send);
            }
            cur = next;
        }
        for (uint32_t i = 0; i < k; ++i)
        {
            ready[m[i]] = cur[i];
        }
    }

    /**
     * \brief NCCL's double binary tree all-reduce (NCCL 2.4, Sanders et al. 2009): two
     * binary trees, each rank a leaf in one and inner in the other (for even k); each tree
     * reduces half the data up to its root and broadcasts it back down.
     */
    void
    DoubleBinaryTree(const std::vector<uint32_t>& m, uint64_t s, Ready& ready)
    {
        const auto k = static_cast<uint32_t>(m.size());
        if (k < 2)
        {
            return;
        }
        // Tree 0 over positions: node p's parent clears its lowest set bit and sets the next
        // (an in-order tree by trailing zeros), or just clears it when that leaves the range;
        // position 0 is the root.
        std::vector<int64_t> parent0(k, -1);
        for (uint32_t p = 1; p < k; ++p)
        {
            uint32_t low = p & (~p + 1);
            uint32_t up = (p ^ low) | (low << 1);
            parent0[p] = up < k ? up : (p ^ low);
        }
        // Tree 1: mirrored positions (even k) or shifted by one (odd k), as NCCL does.
        auto toPos1 = [k](uint32_t r)
        {
            return k % 2 == 0 ? k - 1 - r : (r + k - 1) % k;
        };
        auto fromPos1 = [k](uint32_t p)
        {
            return k % 2 == 0 ? k - 1 - p : (p + 1) % k;
        };
        std::vector<int64_t> finals[2];
        for (int tree = 0; tree < 2; ++tree)
        {
            std::vector<int64_t> parent(k, -1);
            for (uint32_t r = 0; r < k; ++r)
            {
                uint32_t p = tree == 0 ? r : toPos1(r);
                if (parent0[p] >= 0)
                {
                    parent[r] = tree == 0 ? parent0[p] : fromPos1(uint32_t(parent0[p]));
                }
            }
            std::vector<uint32_t> depth(k, 0);
            for (uint32_t r = 0; r < k; ++r)
            {
                for (int64_t x = parent[r]; x >= 0; x = parent[x])
                {
                    ++depth[r];
                }
            }
            std::vector<uint32_t> order(k);
            for (uint32_t r = 0; r < k; ++r)
            {
                order[r] = r;
            }
            std::stable_sort(order.begin(),
                             order.end(),
                             [&](uint32_t a, uint32_t b)
                             {
                                 return depth[a] > depth[b];
                             });
            uint64_t bytes = tree == 0 ? s / 2 : s - s / 2;
            // Reduce up: deepest first, each after its children's data arrived and was summed.
            std::vector<std::vector<int64_t>> fromChildren(k);
            std::vector<int64_t> reduced(k, -1);
            for (uint32_t r : order)
            {
                std::vector<int64_t> deps = fromChildren[r];
                deps.push_back(ready[m[r]]);
                reduced[r] = Join(m[r], deps);
                if (parent[r] >= 0)
                {
                    uint32_t send = m_s.AddSend(m[r], m[parent[r]], bytes, Deps(reduced[r]));
                    fromChildren[parent[r]].push_back(Reduce(m[parent[r]], bytes, send));
                }
            }
            // Broadcast down: shallowest first.
            std::vector<int64_t> have(k, -1);
            for (auto it = order.rbegin(); it != order.rend(); ++it)
            {
                uint32_t r = *it;
                if (parent[r] < 0)
                {
                    have[r] = reduced[r];
                }
                else
                {
                    have[r] = m_s.AddSend(m[parent[r]], m[r], bytes, Deps(have[parent[r]]));
                }
            }
            finals[tree] = have;
        }
        for (uint32_t r = 0; r < k; ++r)
        {
            ready[m[r]] = Join(m[r], {finals[0][r], finals[1][r]});
        }
    }

    /** \brief Chain broadcast from m[root] along the ring order (pipelined by chunks). */
    void
    Chain(const std::vector<uint32_t>& m, uint32_t root, uint64_t s, bool reduce, Ready& ready)
    {
        const auto k = static_cast<uint32_t>(m.size());
        if (k < 2)
        {
            return;
        }
        if (!reduce)
        {
            int64_t have = ready[m[root]];
            for (uint32_t i = 1; i < k; ++i)
            {
                uint32_t from = m[(root + i - 1) % k];
                uint32_t to = m[(root + i) % k];
                uint32_t send = m_s.AddSend(from, to, s, Deps(Join(from, {have, ready[from]})));
                have = Join(to, {int64_t(send), ready[to]});
                ready[to] = have;
            }
        }
        else
        {
            // Reduce toward the root: the rank farthest downstream starts.
            int64_t have = -1;
            for (uint32_t i = k - 1; i >= 1; --i)
            {
                uint32_t from = m[(root + i) % k];
                uint32_t to = m[(root + i - 1) % k];
                uint32_t send = m_s.AddSend(from, to, s, Deps(Join(from, {have, ready[from]})));
                have = Reduce(to, s, send);
                ready[to] = have;
            }
        }
    }

    /** \brief Direct broadcast (root sends to all) or reduce (all send to the root). */
    void
    Star(const std::vector<uint32_t>& m, uint32_t root, uint64_t s, bool reduce, Ready& ready)
    {
        const auto k = static_cast<uint32_t>(m.size());
        std::vector<int64_t> received;
        for (uint32_t i = 0; i < k; ++i)
        {
            if (i == root)
            {
                continue;
            }
            if (reduce)
            {
                uint32_t send = m_s.AddSend(m[i], m[root], s, Deps(ready[m[i]]));
                received.push_back(Reduce(m[root], s, send));
            }
            else
            {
                ready[m[i]] = m_s.AddSend(m[root], m[i], s, Deps(ready[m[root]]));
            }
        }
        if (reduce)
        {
            received.push_back(ready[m[root]]);
            ready[m[root]] = Join(m[root], received);
        }
    }

    /**
     * \brief Runs `phase` `chunks` times on pieces of `s`; the q-th message of piece j waits
     * for the q-th message of piece j-1 (one message in flight per position: pipelining).
     */
    void
    Chunked(uint32_t chunks,
            uint64_t s,
            uint32_t ranks,
            Ready& ready,
            const std::function<void(uint64_t, Ready&)>& phase)
    {
        if (chunks <= 1)
        {
            phase(s, ready);
            return;
        }
        const Ready initial = ready;
        std::vector<std::vector<int64_t>> finals(ranks);
        std::vector<uint32_t> previous;
        for (uint32_t j = 0; j < chunks; ++j)
        {
            Ready r = initial;
            const auto mark = static_cast<uint32_t>(m_s.GetSteps().size());
            phase(Split(s, chunks, j), r);
            std::vector<uint32_t> sends;
            for (uint32_t i = mark; i < m_s.GetSteps().size(); ++i)
            {
                if (m_s.GetSteps()[i].isSend)
                {
                    sends.push_back(i);
                }
            }
            for (std::size_t q = 0; q < sends.size() && q < previous.size(); ++q)
            {
                m_s.AddDependency(sends[q], previous[q]);
            }
            previous = sends;
            for (uint32_t x = 0; x < ranks; ++x)
            {
                finals[x].push_back(r[x]);
            }
        }
        for (uint32_t x = 0; x < ranks; ++x)
        {
            ready[x] = Join(x, finals[x]);
        }
    }

  private:
    CollectiveSchedule& m_s;
    double m_reduceRate;
};

/** \brief Checks that an algorithm can run an op on k ranks; throws SpecError if not. */
void
CheckAlgorithm(const std::string& algorithm, CollectiveOp op, uint32_t k, const std::string& where)
{
    const std::vector<std::string> known = {
        "ring", "direct", "halving-doubling", "double-binary-tree"};
    if (std::find(known.begin(), known.end(), algorithm) == known.end())
    {
        throw SpecError(kSource,
                        where,
                        "unknown collective algorithm '" + algorithm
                            + "'; allowed: " + JoinNames(known));
    }
    if (algorithm == "halving-doubling")
    {
        if (op != CollectiveOp::ALL_REDUCE && op != CollectiveOp::REDUCE_SCATTER
            && op != CollectiveOp::ALL_GATHER)
        {
            throw SpecError(kSource,
                            where,
                            "halving-doubling runs all-reduce, reduce-scatter and all-gather, not "
                                + ToString(op));
        }
        if (!IsPowerOfTwo(k) && op != CollectiveOp::ALL_REDUCE)
        {
            throw SpecError(kSource,
                            where,
                            "halving-doubling " + ToString(op) + " needs a power-of-two group, got "
                                + std::to_string(k) + " ranks; use ring or direct");
        }
    }
    if (algorithm == "double-binary-tree" && op != CollectiveOp::ALL_REDUCE)
    {
        throw SpecError(
            kSource, where, "double-binary-tree runs all-reduce only, not " + ToString(op));
    }
    if (algorithm == "ring" && op == CollectiveOp::ALL_TO_ALL)
    {
        throw SpecError(kSource, where, "all-to-all runs with the direct algorithm only");
    }
}

/** \brief One flat algorithm over members (group indices). */
void
RunFlat(Builder& b,
        const std::string& algorithm,
        CollectiveOp op,
        const std::vector<uint32_t>& m,
        uint64_t s,
        uint32_t root,
        Builder::Ready& ready)
{
    if (algorithm == "ring")
    {
        switch (op)
        {
            case CollectiveOp::ALL_REDUCE:
                b.Ring(m, s, true, ready);
                b.Ring(m, s, false, ready);
                return;
            case CollectiveOp::REDUCE_SCATTER:
                b.Ring(m, s, true, ready);
                return;
            case CollectiveOp::ALL_GATHER:
                b.Ring(m, s, false, ready);
                return;
            case CollectiveOp::BROADCAST:
                b.Chain(m, root, s, false, ready);
                return;
            case CollectiveOp::REDUCE:
                b.Chain(m, root, s, true, ready);
                return;
            default:
                break;
        }
    }
    else if (algorithm == "direct")
    {
        switch (op)
        {
            case CollectiveOp::ALL_REDUCE:
                b.Direct(m, s, CollectiveOp::REDUCE_SCATTER, ready);
                b.Direct(m, s, CollectiveOp::ALL_GATHER, ready);
                return;
            case CollectiveOp::BROADCAST:
                b.Star(m, root, s, false, ready);
                return;
            case CollectiveOp::REDUCE:
                b.Star(m, root, s, true, ready);
                return;
            default:
                b.Direct(m, s, op, ready);
                return;
        }
    }
    else if (algorithm == "halving-doubling" && op == CollectiveOp::ALL_REDUCE
             && !IsPowerOfTwo(static_cast<uint32_t>(m.size())))
    {
        // Rabenseifner's fold for k = p + r ranks (p a power of two): the first 2r ranks pair
        // up, the odd one of each pair hands its whole buffer to the even one, the p remaining
        // ranks run halving-doubling, and the even ranks hand the result back.
        const auto k = static_cast<uint32_t>(m.size());
        uint32_t p = 1;
        while (p * 2 <= k)
        {
            p *= 2;
        }
        const uint32_t r = k - p;
        std::vector<uint32_t> active;
        for (uint32_t i = 0; i < r; ++i)
        {
            uint32_t send = b.AddSend(m[2 * i + 1], m[2 * i], s, ready[m[2 * i + 1]]);
            ready[m[2 * i]] =
                b.Reduce(m[2 * i], s, b.Join(m[2 * i], {int64_t(send), ready[m[2 * i]]}));
            active.push_back(m[2 * i]);
        }
        for (uint32_t i = 2 * r; i < k; ++i)
        {
            active.push_back(m[i]);
        }
        b.HalvingDoubling(active, s, true, ready);
        b.HalvingDoubling(active, s, false, ready);
        for (uint32_t i = 0; i < r; ++i)
        {
            ready[m[2 * i + 1]] = b.AddSend(m[2 * i], m[2 * i + 1], s, ready[m[2 * i]]);
        }
        return;
    }
    else if (algorithm == "halving-doubling")
    {
        if (op != CollectiveOp::ALL_GATHER)
        {
            b.HalvingDoubling(m, s, true, ready);
        }
        if (op != CollectiveOp::REDUCE_SCATTER)
        {
            b.HalvingDoubling(m, s, false, ready);
        }
        return;
    }
    else if (algorithm == "double-binary-tree")
    {
        b.DoubleBinaryTree(m, s, ready);
        return;
    }
    throw SpecError(kSource, "algorithm", algorithm + " cannot run " + ToString(op));
}

/** \return the algorithm configured for dimension d (its `collective` field or the default) */
std::string
DimensionAlgorithm(const Topology& t, uint32_t d)
{
    const auto& dim = t.GetDimension(d);
    return dim.collective.empty() ? DefaultCollectiveAlgorithm(dim.kind) : dim.collective;
}

/** \return for each dimension the sub-groups (group indices ordered by that coordinate) */
std::vector<std::vector<uint32_t>>
SubGroups(const Topology& t, const std::vector<uint32_t>& endpoints, uint32_t d)
{
    std::map<std::vector<uint32_t>, std::vector<std::pair<uint32_t, uint32_t>>> groups;
    for (uint32_t i = 0; i < endpoints.size(); ++i)
    {
        std::vector<uint32_t> key;
        for (uint32_t e = 0; e < t.GetDimensionCount(); ++e)
        {
            key.push_back(e == d ? 0 : t.GetCoordinate(endpoints[i], e));
        }
        groups[key].push_back({t.GetCoordinate(endpoints[i], d), i});
    }
    std::vector<std::vector<uint32_t>> out;
    for (auto& [key, members] : groups)
    {
        std::sort(members.begin(), members.end());
        std::vector<uint32_t> m;
        for (auto& p : members)
        {
            m.push_back(p.second);
        }
        out.push_back(m);
    }
    return out;
}

} // namespace

CollectivePlan
BuildCollective(const CollectiveRequest& req, const Topology& t)
{
    const auto n = static_cast<uint32_t>(req.endpoints.size());
    if (n == 0)
    {
        throw SpecError(kSource, "gpus", "a collective needs at least one rank");
    }
    {
        std::set<uint32_t> seen;
        for (uint32_t e : req.endpoints)
        {
            if (e >= t.GetEndpointCount())
            {
                throw SpecError(kSource,
                                "gpus",
                                "endpoint " + std::to_string(e)
                                    + " does not exist (the network has "
                                    + std::to_string(t.GetEndpointCount()) + ")");
            }
            if (!seen.insert(e).second)
            {
                throw SpecError(
                    kSource, "gpus", "endpoint " + std::to_string(e) + " appears twice");
            }
        }
    }
    if (req.root >= n)
    {
        throw SpecError(kSource,
                        "root",
                        "the root must be a rank of the group (0.." + std::to_string(n - 1) + ")");
    }
    const auto& names = CollectiveAlgorithmNames();
    if (std::find(names.begin(), names.end(), req.algorithm) == names.end())
    {
        throw SpecError(kSource,
                        "algorithm",
                        "unknown algorithm '" + req.algorithm + "'; allowed: " + JoinNames(names));
    }
    CollectivePlan plan;
    plan.schedule = CollectiveSchedule(n);
    Builder b(plan.schedule, req.reduceBytesPerSecond);
    Builder::Ready ready(n, -1);
    std::vector<uint32_t> all(n);
    for (uint32_t i = 0; i < n; ++i)
    {
        all[i] = i;
    }
    if (req.op == CollectiveOp::SEND_RECV)
    {
        if (n != 2)
        {
            throw SpecError(kSource, "gpus", "send-recv runs between exactly 2 ranks");
        }
        plan.schedule.AddSend(0, 1, req.bytes, {});
        plan.algorithm = "direct";
        return plan;
    }

    // The dimensions the group spans, and whether it is a full grid over them.
    std::vector<uint32_t> spanned;
    uint64_t gridSize = 1;
    for (uint32_t d = 0; d < t.GetDimensionCount(); ++d)
    {
        std::set<uint32_t> coords;
        for (uint32_t e : req.endpoints)
        {
            coords.insert(t.GetCoordinate(e, d));
        }
        if (coords.size() > 1)
        {
            spanned.push_back(d);
            gridSize *= coords.size();
        }
    }
    const bool grid = gridSize == n;
    const bool layered = req.op == CollectiveOp::ALL_REDUCE
                         || req.op == CollectiveOp::REDUCE_SCATTER
                         || req.op == CollectiveOp::ALL_GATHER;
    std::string algorithm = req.algorithm;
    if (algorithm == "auto")
    {
        if (req.op == CollectiveOp::ALL_TO_ALL)
        {
            algorithm = "direct";
        }
        else if (spanned.size() > 1 && grid && layered)
        {
            algorithm = "hierarchical";
        }
        else
        {
            algorithm = spanned.empty() ? "ring" : DimensionAlgorithm(t, spanned.back());
            if (algorithm == "double-binary-tree" && req.op != CollectiveOp::ALL_REDUCE)
            {
                algorithm = "ring";
            }
        }
    }
    uint32_t chunks = req.chunks;
    if (chunks == 0)
    {
        // Trees and chains only pay off pipelined; 1 MiB pieces, at most 64 (NCCL pipelines
        // its trees in chunks of this order).
        bool pipelined = algorithm == "double-binary-tree" || algorithm == "hierarchical"
                         || ((req.op == CollectiveOp::BROADCAST || req.op == CollectiveOp::REDUCE)
                             && algorithm == "ring");
        chunks =
            pipelined ? static_cast<uint32_t>(std::clamp<uint64_t>(req.bytes >> 20, 1, 64)) : 1;
        if (algorithm == "hierarchical")
        {
            chunks = std::min<uint32_t>(chunks, 8);
        }
    }

    if (algorithm != "hierarchical")
    {
        CheckAlgorithm(algorithm, req.op, n, "algorithm");
        b.Chunked(chunks,
                  req.bytes,
                  n,
                  ready,
                  [&](uint64_t s, Builder::Ready& r)
                  {
                      RunFlat(b, algorithm, req.op, all, s, req.root, r);
                  });
        plan.algorithm = algorithm;
        return plan;
    }

    if (!layered)
    {
        throw SpecError(kSource,
                        "algorithm",
                        "hierarchical runs all-reduce, reduce-scatter and all-gather, not "
                            + ToString(req.op));
    }
    if (!grid)
    {
        throw SpecError(kSource,
                        "algorithm",
                        "hierarchical needs a group that is a full grid over the network "
                        "dimensions it spans (e.g. whole nodes); use ring");
    }
    // Per-dimension choice; the all-reduce-only tree falls back to ring for the reduce-scatter
    // and all-gather phases (as NCCL uses trees for all-reduce only).
    std::vector<std::vector<std::vector<uint32_t>>> subgroups;
    std::vector<std::string> algos;
    plan.algorithm = "hierarchical(";
    for (std::size_t i = 0; i < spanned.size(); ++i)
    {
        uint32_t d = spanned[i];
        subgroups.push_back(SubGroups(t, req.endpoints, d));
        uint32_t k = static_cast<uint32_t>(subgroups.back().front().size());
        std::string a = DimensionAlgorithm(t, d);
        bool outer = i + 1 == spanned.size() && req.op == CollectiveOp::ALL_REDUCE;
        CheckAlgorithm(a == "double-binary-tree" && !outer ? "ring" : a,
                       outer ? CollectiveOp::ALL_REDUCE : CollectiveOp::REDUCE_SCATTER,
                       k,
                       "network.dimensions." + t.GetDimension(d).name + ".collective");
        algos.push_back(a);
        plan.algorithm += (i ? "," : "") + t.GetDimension(d).name + ":" + a;
    }
    plan.algorithm += ")";
    b.Chunked(chunks,
              req.bytes,
              n,
              ready,
              [&](uint64_t s, Builder::Ready& r)
              {
                  const std::size_t last = spanned.size() - 1;
                  std::vector<uint64_t> sizes(spanned.size());
                  uint64_t size = s;
                  for (std::size_t i = 0; i < spanned.size(); ++i)
                  {
                      sizes[i] = size;
                      size /= subgroups[i].front().size();
                  }
                  auto phase = [&](std::size_t i, CollectiveOp op)
                  {
                      std::string a = algos[i];
                      if (a == "double-binary-tree" && op != CollectiveOp::ALL_REDUCE)
                      {
                          a = "ring";
                      }
                      for (const auto& m : subgroups[i])
                      {
                          RunFlat(b, a, op, m, sizes[i], 0, r);
                      }
                  };
                  if (req.op == CollectiveOp::ALL_REDUCE)
                  {
                      for (std::size_t i = 0; i < last; ++i)
                      {
                          phase(i, CollectiveOp::REDUCE_SCATTER);
                      }
                      phase(last, CollectiveOp::ALL_REDUCE);
                      for (std::size_t i = last; i-- > 0;)
                      {
                          phase(i, CollectiveOp::ALL_GATHER);
                      }
                  }
                  else if (req.op == CollectiveOp::REDUCE_SCATTER)
                  {
                      for (std::size_t i = 0; i <= last; ++i)
                      {
                          phase(i, CollectiveOp::REDUCE_SCATTER);
                      }
                  }
                  else
                  {
                      for (std::size_t i = last + 1; i-- > 0;)
                      {
                          phase(i, CollectiveOp::ALL_GATHER);
                      }
                  }
              });
    return plan;
}

} // namespace rapidllm
} // namespace ns3
