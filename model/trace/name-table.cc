/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "name-table.h"

#include <algorithm>
#include <cstring>

namespace ns3 {
namespace rapidllm {

NameTable::NameTable(const NameTable& other)
{
    *this = other;
}

NameTable&
NameTable::operator=(const NameTable& other)
{
    if (this != &other)
    {
        NameTable copy;
        copy.m_names.reserve(other.m_names.size());
        for (std::string_view name : other.m_names)
        {
            copy.m_names.push_back(copy.Store(name));
        }
        copy.m_index.reserve(other.m_index.size());
        for (const auto& [name, index] : other.m_index)
        {
            copy.m_index.emplace(copy.m_names[index], index);
        }
        *this = std::move(copy);
    }
    return *this;
}

NameTable::NameTable(NameTable&& other) noexcept
{
    *this = std::move(other);
}

NameTable&
NameTable::operator=(NameTable&& other) noexcept
{
    if (this != &other)
    {
        // The blocks move with their characters, so the views stay valid; the source is left
        // empty, not pointing into blocks it no longer owns.
        m_blocks = std::move(other.m_blocks);
        m_names = std::move(other.m_names);
        m_index = std::move(other.m_index);
        m_next = other.m_next;
        m_free = other.m_free;
        m_blockBytes = other.m_blockBytes;
        other.m_blocks.clear();
        other.m_names.clear();
        other.m_index.clear();
        other.m_next = nullptr;
        other.m_free = 0;
        other.m_blockBytes = 0;
    }
    return *this;
}

uint32_t
NameTable::Add(std::string_view name)
{
    auto it = m_index.find(name);
    if (it != m_index.end())
    {
        return it->second;
    }
    const uint32_t index = AddDistinct(name);
    m_index.emplace(m_names.back(), index);
    return index;
}

uint32_t
NameTable::AddDistinct(std::string_view name)
{
    const auto index = static_cast<uint32_t>(m_names.size());
    m_names.push_back(Store(name));
    return index;
}

void
NameTable::Reserve(std::size_t names, bool distinct)
{
    if (distinct)
    {
        m_names.reserve(names);
    }
    else
    {
        m_index.reserve(names);
    }
}

std::string_view
NameTable::Store(std::string_view name)
{
    if (name.empty())
    {
        return {};
    }
    if (name.size() > m_free)
    {
        // Blocks double from kFirstBlockBytes to kBlockBytes, so that a small trace (one rank of
        // a large trace set) takes little; a name longer than a block gets a block of its own.
        // The characters are left uninitialized: only what names fill is ever touched.
        const std::size_t size =
            m_blocks.empty() ? kFirstBlockBytes : std::min(2 * m_blockBytes, kBlockBytes);
        const std::size_t bytes = std::max(size, name.size());
        std::unique_ptr<char[]> block(new char[bytes]);
        m_blocks.push_back(std::move(block)); // if this throws, the table is as it was
        m_next = m_blocks.back().get();
        m_blockBytes = size;
        m_free = bytes;
    }
    std::memcpy(m_next, name.data(), name.size());
    const std::string_view stored(m_next, name.size());
    m_next += name.size();
    m_free -= name.size();
    return stored;
}

} // namespace rapidllm
} // namespace ns3
