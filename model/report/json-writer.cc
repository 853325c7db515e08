/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "json-writer.h"

#include <cmath>
#include <cstdio>

namespace ns3 {
namespace rapidllm {

std::string
JsonQuote(const std::string& text)
{
    std::string out = "\"";
    for (unsigned char c : text)
    {
        switch (c)
        {
            case '"':
                out += "\\\"";
                break;
            case '\\':
                out += "\\\\";
                break;
            case '\n':
                out += "\\n";
                break;
            case '\t':
                out += "\\t";
                break;
            default:
                if (c < 0x20)
                {
                    char buffer[8];
                    std::snprintf(buffer, sizeof(buffer), "\\u%04x", c);
                    out += buffer;
                }
                else
                {
                    out += static_cast<char>(c);
                }
        }
    }
    return out + "\"";
}

void
JsonWriter::Key(const std::string& key)
{
    if (!m_first.empty())
    {
        if (!m_first.back())
        {
            m_text += ",";
        }
        m_first.back() = false;
        m_text += "\n" + std::string(2 * m_first.size(), ' ');
        if (!m_isArray.back())
        {
            m_text += JsonQuote(key) + ": ";
        }
    }
}

JsonWriter&
JsonWriter::Raw(const std::string& key, const std::string& text)
{
    Key(key);
    m_text += text;
    return *this;
}

JsonWriter&
JsonWriter::BeginObject(const std::string& key)
{
    Key(key);
    m_text += "{";
    m_first.push_back(true);
    m_isArray.push_back(false);
    return *this;
}

JsonWriter&
JsonWriter::EndObject()
{
    bool empty = m_first.back();
    m_first.pop_back();
    m_isArray.pop_back();
    if (!empty)
    {
        m_text += "\n" + std::string(2 * m_first.size(), ' ');
    }
    m_text += "}";
    return *this;
}

JsonWriter&
JsonWriter::BeginArray(const std::string& key)
{
    Key(key);
    m_text += "[";
    m_first.push_back(true);
    m_isArray.push_back(true);
    return *this;
}

JsonWriter&
JsonWriter::EndArray()
{
    bool empty = m_first.back();
    m_first.pop_back();
    m_isArray.pop_back();
    if (!empty)
    {
        m_text += "\n" + std::string(2 * m_first.size(), ' ');
    }
    m_text += "]";
    return *this;
}

JsonWriter&
JsonWriter::Value(const std::string& key, const std::string& value)
{
    return Raw(key, JsonQuote(value));
}

JsonWriter&
JsonWriter::Value(const std::string& key, const char* value)
{
    return Raw(key, JsonQuote(value));
}

JsonWriter&
JsonWriter::Value(const std::string& key, double value)
{
    if (!std::isfinite(value))
    {
        return Raw(key, "null");
    }
    char buffer[40];
    std::snprintf(buffer, sizeof(buffer), "%.10g", value);
    return Raw(key, buffer);
}

JsonWriter&
JsonWriter::Value(const std::string& key, uint64_t value)
{
    return Raw(key, std::to_string(value));
}

JsonWriter&
JsonWriter::Value(const std::string& key, int64_t value)
{
    return Raw(key, std::to_string(value));
}

JsonWriter&
JsonWriter::Value(const std::string& key, uint32_t value)
{
    return Raw(key, std::to_string(value));
}

JsonWriter&
JsonWriter::Value(const std::string& key, int value)
{
    return Raw(key, std::to_string(value));
}

JsonWriter&
JsonWriter::Value(const std::string& key, bool value)
{
    return Raw(key, value ? "true" : "false");
}

std::string
JsonWriter::Str() const
{
    return m_first.empty() ? m_text + "\n" : m_text;
}

} // namespace rapidllm
} // namespace ns3
