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
    else if (m_capacity > 0 && m_used.size() >= m_capacity)
    {
        // The least recently used goes.
        m_used.erase(m_byUse.begin()->second);
        m_byUse.erase(m_byUse.begin());
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
    while (m_used.size() > m_capacity)
    {
        m_used.erase(m_byUse.begin()->second);
        m_byUse.erase(m_byUse.begin());
    }
}

} // namespace rapidllm
} // namespace ns3
