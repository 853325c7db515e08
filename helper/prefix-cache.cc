/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "prefix-cache.h"

#include <algorithm>

namespace ns3 {
namespace rapidllm {

PrefixCache::PrefixCache(uint32_t capacity)
    : m_capacity(capacity)
{}

bool
PrefixCache::Holds(uint32_t prefix) const
{
    return m_used.count(prefix) > 0;
}

bool
PrefixCache::Use(uint32_t prefix)
{
    const auto it = m_used.find(prefix);
    const bool held = it != m_used.end();
    if (held)
    {
        m_byUse.erase(it->second);
    }
    else if (m_capacity > 0)
    {
        // Room for it: the least recently used unpinned goes.
        EvictBeyond(m_capacity - 1);
    }
    m_used[prefix] = ++m_clock;
    m_byUse.emplace(m_clock, prefix);
    return held;
}

std::size_t
PrefixCache::Size() const
{
    return m_used.size();
}

void
PrefixCache::Resize(uint32_t capacity)
{
    m_capacity = std::max<uint32_t>(capacity, 1);
    EvictBeyond(m_capacity);
}

void
PrefixCache::Pin(std::vector<uint32_t> prefixes)
{
    std::sort(prefixes.begin(), prefixes.end());
    m_pinned = std::move(prefixes);
}

void
PrefixCache::EvictBeyond(std::size_t most)
{
    auto it = m_byUse.begin();
    while (m_used.size() > most && it != m_byUse.end())
    {
        if (std::binary_search(m_pinned.begin(), m_pinned.end(), it->second))
        {
            ++it;
            continue;
        }
        m_used.erase(it->second);
        it = m_byUse.erase(it);
    }
}

} // namespace rapidllm
} // namespace ns3
