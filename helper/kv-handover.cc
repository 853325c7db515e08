/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "kv-handover.h"

#include "ns3/layer-shapes.h"

#include <algorithm>
#include <limits>
#include <utility>

namespace ns3 {
namespace rapidllm {

namespace {

/** \return \p at rounded up to a multiple of \p size */
uint64_t
Aligned(uint64_t at, uint64_t size)
{
    return (at + size - 1) / size * size;
}

/** \return each decoder layer's pipeline stage, in layer order (model chunks interleaved) */
std::vector<uint32_t>
LayerStages(const ModelSpec& model, const ParallelSpec& p)
{
    std::vector<uint32_t> stages;
    for (uint32_t v = 0; v < p.pp * p.virtualStages; ++v)
    {
        stages.insert(stages.end(), p.VirtualStageLayers(model.layers, v), v % p.pp);
    }
    return stages;
}

/** The distance class of pairs further apart than an instance reaches. */
constexpr int64_t kApart = std::numeric_limits<int64_t>::max();

} // namespace

std::optional<DisaggregatedPlacement>
DisaggregatedPlacement::Place(
    uint64_t prefillGpus, uint64_t decodeGpus, uint64_t x, uint64_t y, uint64_t budget, bool copies)
{
    DisaggregatedPlacement at;
    at.prefillGpus = prefillGpus;
    at.decodeGpus = decodeGpus;
    at.prefill = x;
    at.decode = y;
    uint64_t end = 0;
    if (decodeGpus >= prefillGpus)
    {
        at.prefillAt = Aligned(y * decodeGpus, prefillGpus);
        end = at.prefillAt + x * prefillGpus;
    }
    else
    {
        at.decodeAt = Aligned(x * prefillGpus, decodeGpus);
        end = at.decodeAt + y * decodeGpus;
    }
    if (end > budget)
    {
        return std::nullopt;
    }
    at.span = Aligned(end, std::max(prefillGpus, decodeGpus));
    at.sets = copies ? budget / at.span : 1;
    return at;
}

uint64_t
DisaggregatedPlacement::PrefillFirst(uint64_t k) const
{
    return k / prefill * span + prefillAt + k % prefill * prefillGpus;
}

uint64_t
DisaggregatedPlacement::DecodeFirst(uint64_t k) const
{
    return k / decode * span + decodeAt + k % decode * decodeGpus;
}

uint64_t
DisaggregatedPlacement::Used() const
{
    return sets * (prefill * prefillGpus + decode * decodeGpus);
}

std::vector<ProbeTransfer>
KvCacheTransfers(const ResolvedJob& prefill,
                 const ResolvedJob& decode,
                 uint32_t prefillFirst,
                 uint32_t decodeFirst)
{
    const LayerShapes shapes(decode.model, decode.run);
    // What tensor ranks hold whole: a KV head, or MLA's latent (every rank keeps it).
    const uint64_t units = shapes.mla ? 1 : decode.model.kvHeads;
    const uint64_t unitBytesPerToken =
        shapes.KvCacheBytesPerToken() / (shapes.mla ? 1 : shapes.kvHeads);
    const ParallelSpec& p = prefill.run.parallel;
    const ParallelSpec& d = decode.run.parallel;
    const std::vector<uint32_t> prefillStages = LayerStages(prefill.model, p);
    const std::vector<uint32_t> decodeStages = LayerStages(decode.model, d);
    std::map<std::pair<uint32_t, uint32_t>, uint64_t> bytes;
    for (std::size_t layer = 0; layer < decodeStages.size(); ++layer)
    {
        // A sliding-window layer keeps only the window's last tokens.
        const uint64_t window = decode.model.WindowOf(static_cast<uint32_t>(layer));
        const uint64_t tokens = window > 0 ? std::min<uint64_t>(window, decode.run.promptTokens)
                                           : decode.run.promptTokens;
        const uint64_t unitBytes = unitBytesPerToken * tokens;
        for (uint64_t h = 0; h < units; ++h)
        {
            const uint64_t firstHolder = h * p.tp / units;
            const uint64_t holders = units >= p.tp ? 1 : p.tp / units;
            const uint64_t firstNeed = h * d.tp / units;
            const uint64_t endNeed = units >= d.tp ? firstNeed + 1 : (h + 1) * d.tp / units;
            for (uint64_t t = firstNeed; t < endNeed; ++t)
            {
                const auto src = static_cast<uint32_t>(prefillFirst + firstHolder + t % holders
                                                       + uint64_t(p.tp) * prefillStages[layer]);
                const auto dst =
                    static_cast<uint32_t>(decodeFirst + t + uint64_t(d.tp) * decodeStages[layer]);
                bytes[{src, dst}] += unitBytes;
            }
        }
    }
    std::vector<ProbeTransfer> transfers;
    for (const auto& [pair, n] : bytes)
    {
        transfers.push_back({pair.first, pair.second, n});
    }
    return transfers;
}

KvHandoverTimes::KvHandoverTimes(const NetworkSpec& network,
                                 uint32_t gpus,
                                 std::string backend,
                                 std::string routing)
    : m_network(network)
    , m_gpus(gpus)
    , m_backend(std::move(backend))
    , m_routing(std::move(routing))
    , m_group(gpus)
    , m_exact(!network.faults.empty())
{
    if (!network.dimensions.empty() && network.dimensions.front().size > 0
        && network.dimensions.front().size < gpus)
    {
        m_group = network.dimensions.front().size;
    }
}

uint64_t
KvHandoverTimes::Reach(uint64_t prefillGpus, uint64_t decodeGpus) const
{
    return (std::max(prefillGpus, decodeGpus) + m_group - 1) / m_group;
}

KvHandoverTimes::Key
KvHandoverTimes::ClassOf(uint64_t prefillLayout,
                         uint64_t decodeLayout,
                         uint64_t reach,
                         uint64_t prefillFirst,
                         uint64_t decodeFirst) const
{
    if (m_exact)
    {
        return {prefillLayout, decodeLayout, prefillFirst, decodeFirst, 0};
    }
    const auto apart =
        static_cast<int64_t>(decodeFirst / m_group) - static_cast<int64_t>(prefillFirst / m_group);
    return {prefillLayout,
            decodeLayout,
            prefillFirst % m_group,
            decodeFirst % m_group,
            uint64_t(std::abs(apart)) <= reach ? apart : kApart};
}

double
KvHandoverTimes::Between(uint64_t prefillLayout,
                         uint64_t decodeLayout,
                         const ResolvedJob& prefill,
                         const ResolvedJob& decode,
                         uint64_t prefillFirst,
                         uint64_t decodeFirst)
{
    const Key key = ClassOf(prefillLayout,
                            decodeLayout,
                            Reach(prefill.run.parallel.Gpus(), decode.run.parallel.Gpus()),
                            prefillFirst,
                            decodeFirst);
    auto it = m_times.find(key);
    if (it == m_times.end())
    {
        const double t = RunTransferProbe(m_network,
                                          m_gpus,
                                          KvCacheTransfers(prefill,
                                                           decode,
                                                           static_cast<uint32_t>(prefillFirst),
                                                           static_cast<uint32_t>(decodeFirst)),
                                          m_backend,
                                          m_routing,
                                          "KV cache transfer");
        it = m_times.emplace(key, t).first;
    }
    return it->second;
}

double
KvHandoverTimes::Mean(uint64_t prefillLayout,
                      uint64_t decodeLayout,
                      const ResolvedJob& prefill,
                      const ResolvedJob& decode,
                      const DisaggregatedPlacement& at)
{
    // The instances' first GPUs by group and offset in it.
    std::map<std::pair<uint64_t, uint64_t>, uint64_t> prefills;
    std::map<uint64_t, std::map<uint64_t, uint64_t>> decodes; // by group, then offset
    std::map<uint64_t, uint64_t> prefillsAt;                  // by offset
    std::map<uint64_t, uint64_t> decodesAt;
    std::map<uint64_t, std::pair<uint64_t, uint64_t>> decodeGroups; // by offset: first, last
    for (uint64_t k = 0; k < at.sets * at.prefill; ++k)
    {
        const uint64_t first = at.PrefillFirst(k);
        ++prefills[{first / m_group, first % m_group}];
        ++prefillsAt[first % m_group];
    }
    for (uint64_t k = 0; k < at.sets * at.decode; ++k)
    {
        const uint64_t first = at.DecodeFirst(k);
        const uint64_t group = first / m_group;
        ++decodes[group][first % m_group];
        ++decodesAt[first % m_group];
        const auto it = decodeGroups.emplace(first % m_group, std::make_pair(group, group)).first;
        it->second.first = std::min(it->second.first, group);
        it->second.second = std::max(it->second.second, group);
    }
    const uint64_t reach =
        m_exact ? std::numeric_limits<uint64_t>::max() / 4 : Reach(at.prefillGpus, at.decodeGpus);
    // Pairs within reach of each other one by one, counted by offsets; the pairs of each time.
    std::map<double, uint64_t> pairs;
    std::map<std::pair<uint64_t, uint64_t>, uint64_t> near;
    for (const auto& [p, pn] : prefills)
    {
        const auto [group, offset] = p;
        const auto end = decodes.upper_bound(group + reach);
        for (auto g = decodes.lower_bound(group > reach ? group - reach : 0); g != end; ++g)
        {
            for (const auto& [dOffset, dn] : g->second)
            {
                pairs[Between(prefillLayout,
                              decodeLayout,
                              prefill,
                              decode,
                              group * m_group + offset,
                              g->first * m_group + dOffset)] += pn * dn;
                near[{offset, dOffset}] += pn * dn;
            }
        }
    }
    // The others by offsets, each class timed as a pair of it: a prefill instance and the decode
    // instance of the offset in the first or the last group, whichever is out of reach.
    for (const auto& [pOffset, pn] : prefillsAt)
    {
        for (const auto& [dOffset, dn] : decodesAt)
        {
            const uint64_t n = pn * dn - near[{pOffset, dOffset}];
            if (n == 0)
            {
                continue;
            }
            const auto [low, high] = decodeGroups.at(dOffset);
            for (const auto& [p, count] : prefills)
            {
                const uint64_t group = p.first;
                if (p.second != pOffset)
                {
                    continue;
                }
                const uint64_t other = group > low + reach ? low : high;
                if (other > group + reach || group > other + reach)
                {
                    pairs[Between(prefillLayout,
                                  decodeLayout,
                                  prefill,
                                  decode,
                                  group * m_group + pOffset,
                                  other * m_group + dOffset)] += n;
                    break;
                }
            }
        }
    }
    if (pairs.size() == 1)
    {
        return pairs.begin()->first; // every pair alike (exactly)
    }
    double sum = 0;
    for (const auto& [seconds, n] : pairs)
    {
        sum += seconds * double(n);
    }
    return sum / double(at.sets * at.prefill * at.sets * at.decode);
}

std::size_t
KvHandoverTimes::Probes() const
{
    return m_times.size();
}

} // namespace rapidllm
} // namespace ns3
