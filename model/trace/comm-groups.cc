/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "comm-groups.h"

#include "trace-error.h"
#include "trace-node.h"

#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

namespace ns3 {
namespace rapidllm {

void
CommGroups::Add(uint32_t id, const std::vector<uint32_t>& ranks)
{
    if (id == kWorldGroup)
    {
        throw std::invalid_argument("CommGroups: id " + std::to_string(id)
                                    + " is reserved for 'all ranks'");
    }
    if (ranks.empty())
    {
        throw std::invalid_argument("CommGroups: group " + std::to_string(id) + " is empty");
    }
    std::set<uint32_t> seen;
    for (uint32_t r : ranks)
    {
        if (!seen.insert(r).second)
        {
            throw std::invalid_argument("CommGroups: group " + std::to_string(id) + " lists rank "
                                        + std::to_string(r) + " twice");
        }
    }
    if (!m_groups.emplace(id, ranks).second)
    {
        throw std::invalid_argument("CommGroups: group " + std::to_string(id)
                                    + " is defined twice");
    }
}

bool
CommGroups::Has(uint32_t id) const
{
    return m_groups.count(id) != 0;
}

const std::vector<uint32_t>&
CommGroups::Get(uint32_t id) const
{
    auto it = m_groups.find(id);
    if (it == m_groups.end())
    {
        throw std::out_of_range("CommGroups: no group " + std::to_string(id));
    }
    return it->second;
}

const std::map<uint32_t, std::vector<uint32_t>>&
CommGroups::GetAll() const
{
    return m_groups;
}

size_t
CommGroups::GetSize() const
{
    return m_groups.size();
}

bool
CommGroups::Contains(uint32_t id, uint32_t rank) const
{
    auto it = m_groups.find(id);
    if (it == m_groups.end())
    {
        return false;
    }
    for (uint32_t r : it->second)
    {
        if (r == rank)
        {
            return true;
        }
    }
    return false;
}

std::string
CommGroups::ToJson() const
{
    std::string text = "{";
    bool first = true;
    for (const auto& [id, ranks] : m_groups)
    {
        text += first ? "\n" : ",\n";
        first = false;
        text += "  \"" + std::to_string(id) + "\": [";
        for (size_t i = 0; i < ranks.size(); ++i)
        {
            text += (i ? ", " : "") + std::to_string(ranks[i]);
        }
        text += "]";
    }
    text += first ? "}\n" : "\n}\n";
    return text;
}

namespace {

/// A strict parser for the one JSON shape we accept: an object of arrays of integers.
class GroupJsonParser
{
  public:
    GroupJsonParser(const std::string& text, const std::string& file)
        : m_text(text)
        , m_file(file)
        , m_pos(0)
    {}

    CommGroups
    Parse()
    {
        CommGroups groups;
        SkipSpace();
        Expect('{', "a JSON object {\"<group id>\": [ranks...], ...}");
        SkipSpace();
        if (Peek() == '}')
        {
            ++m_pos;
        }
        else
        {
            while (true)
            {
                SkipSpace();
                size_t keyAt = m_pos;
                uint32_t id = ParseKey();
                SkipSpace();
                Expect(':', "':' after the group id");
                SkipSpace();
                std::vector<uint32_t> ranks = ParseRanks(id);
                try
                {
                    groups.Add(id, ranks);
                }
                catch (const std::invalid_argument& e)
                {
                    Fail(keyAt, std::string(e.what()).substr(std::string("CommGroups: ").size()));
                }
                SkipSpace();
                if (Peek() == ',')
                {
                    ++m_pos;
                    continue;
                }
                Expect('}', "',' or '}' after a group");
                break;
            }
        }
        SkipSpace();
        if (m_pos != m_text.size())
        {
            Fail(m_pos, "unexpected text after the JSON object");
        }
        return groups;
    }

  private:
    [[noreturn]] void
    Fail(size_t at, const std::string& what) const
    {
        throw TraceError(m_file,
                         TraceError::kNone,
                         TraceError::kNone,
                         "comm groups, byte " + std::to_string(at) + ": " + what
                             + " (expected {\"<group id>\": [rank, ...], ...})");
    }

    int
    Peek() const
    {
        return m_pos < m_text.size() ? static_cast<unsigned char>(m_text[m_pos]) : -1;
    }

    void
    SkipSpace()
    {
        while (m_pos < m_text.size()
               && (m_text[m_pos] == ' ' || m_text[m_pos] == '\n' || m_text[m_pos] == '\r'
                   || m_text[m_pos] == '\t'))
        {
            ++m_pos;
        }
    }

    void
    Expect(char c, const std::string& what)
    {
        if (Peek() != static_cast<unsigned char>(c))
        {
            Fail(m_pos, "expected " + what);
        }
        ++m_pos;
    }

    /// Parses a decimal unsigned integer that fits in 32 bits.
    uint32_t
    ParseNumber(const std::string& what)
    {
        size_t start = m_pos;
        uint64_t value = 0;
        while (Peek() >= '0' && Peek() <= '9')
        {
            value = value * 10 + static_cast<uint64_t>(Peek() - '0');
            ++m_pos;
            if (value > 0xFFFFFFFFull)
            {
                Fail(start, what + " is larger than 4294967295");
            }
        }
        if (m_pos == start)
        {
            Fail(start, "expected " + what + " (a non-negative integer)");
        }
        return static_cast<uint32_t>(value);
    }

    uint32_t
    ParseKey()
    {
        Expect('"', "a quoted group id");
        size_t start = m_pos;
        uint32_t id = ParseNumber("group id");
        if (Peek() != '"')
        {
            Fail(start, "a group id must be a decimal integer in quotes, like \"1\"");
        }
        ++m_pos;
        if (id == kWorldGroup)
        {
            Fail(start, "group id 4294967295 is reserved");
        }
        return id;
    }

    std::vector<uint32_t>
    ParseRanks(uint32_t id)
    {
        std::vector<uint32_t> ranks;
        Expect('[', "'[' starting the ranks of group " + std::to_string(id));
        SkipSpace();
        if (Peek() == ']')
        {
            ++m_pos;
            return ranks;
        }
        while (true)
        {
            SkipSpace();
            ranks.push_back(ParseNumber("a rank of group " + std::to_string(id)));
            SkipSpace();
            if (Peek() == ',')
            {
                ++m_pos;
                continue;
            }
            Expect(']', "',' or ']' in the ranks of group " + std::to_string(id));
            return ranks;
        }
    }

    const std::string& m_text;
    const std::string& m_file;
    size_t m_pos;
};

} // namespace

CommGroups
CommGroups::FromJson(const std::string& text, const std::string& file)
{
    return GroupJsonParser(text, file).Parse();
}

CommGroups
CommGroups::Load(const std::string& path)
{
    RequireRegularFile(path, TraceError::kNone);
    std::ifstream in(path, std::ios::binary);
    if (!in)
    {
        throw TraceError(path, TraceError::kNone, TraceError::kNone, "cannot open the file");
    }
    std::ostringstream text;
    text << in.rdbuf();
    return FromJson(text.str(), path);
}

bool
CommGroups::operator==(const CommGroups& other) const
{
    return m_groups == other.m_groups;
}

} // namespace rapidllm
} // namespace ns3
