/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "spec-error.h"

namespace ns3 {
namespace rapidllm {

namespace {
std::string
Compose(const std::string& file, const std::string& field, const std::string& message, int line)
{
    std::string text = file;
    if (line > 0)
    {
        text += ":" + std::to_string(line);
    }
    if (!text.empty())
    {
        text += ": ";
    }
    if (!field.empty())
    {
        text += "field '" + field + "': ";
    }
    return text + message;
}
} // namespace

SpecError::SpecError(const std::string& file,
                     const std::string& field,
                     const std::string& message,
                     int line)
    : Error(Compose(file, field, message, line))
    , m_file(file)
    , m_field(field)
    , m_message(message)
    , m_line(line)
{}

const std::string&
SpecError::GetFile() const
{
    return m_file;
}

const std::string&
SpecError::GetField() const
{
    return m_field;
}

int
SpecError::GetLine() const
{
    return m_line;
}

const std::string&
SpecError::GetMessage() const
{
    return m_message;
}

} // namespace rapidllm
} // namespace ns3
