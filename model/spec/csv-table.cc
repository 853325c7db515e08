/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "csv-table.h"

#include "spec-error.h"
#include "spec-reader.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace ns3 {
namespace rapidllm {

namespace {
/** \return \p line's comma-separated fields, each without the blanks around it ("a, b") */
std::vector<std::string>
Split(const std::string& line)
{
    std::vector<std::string> fields;
    std::string field;
    std::istringstream in(line);
    while (std::getline(in, field, ','))
    {
        const std::size_t first = field.find_first_not_of(" \t");
        const std::size_t last = field.find_last_not_of(" \t");
        fields.push_back(first == std::string::npos ? "" : field.substr(first, last + 1 - first));
    }
    if (!line.empty() && line.back() == ',')
    {
        fields.emplace_back();
    }
    return fields;
}
} // namespace

CsvTable
CsvTable::Load(const std::string& path)
{
    std::ifstream in(path);
    if (!in)
    {
        throw SpecError(path, "", "cannot open file");
    }
    CsvTable t;
    t.m_path = path;
    std::string line;
    int number = 0;
    while (std::getline(in, line))
    {
        ++number;
        if (!line.empty() && line.back() == '\r')
        {
            line.pop_back();
        }
        if (number == 1 && line.rfind("\xEF\xBB\xBF", 0) == 0)
        {
            line.erase(0, 3); // a UTF-8 byte-order mark, as spreadsheet exports begin
        }
        if (line.empty() || line[0] == '#')
        {
            continue;
        }
        auto fields = Split(line);
        if (t.m_columns.empty())
        {
            for (std::size_t i = 0; i < fields.size(); ++i)
            {
                if (std::find(fields.begin(), fields.begin() + i, fields[i]) != fields.begin() + i)
                {
                    // Which of the two a reader would take is a guess: refused.
                    throw SpecError(path, fields[i], "the header names this column twice", number);
                }
            }
            t.m_columns = fields;
            continue;
        }
        if (fields.size() != t.m_columns.size())
        {
            throw SpecError(path,
                            "",
                            "has " + std::to_string(fields.size()) + " fields but the header names "
                                + std::to_string(t.m_columns.size()),
                            number);
        }
        t.m_rows.push_back(fields);
        t.m_lines.push_back(number);
    }
    return t;
}

std::size_t
CsvTable::Rows() const
{
    return m_rows.size();
}

std::size_t
CsvTable::Column(const std::string& column) const
{
    for (std::size_t i = 0; i < m_columns.size(); ++i)
    {
        if (m_columns[i] == column)
        {
            return i;
        }
    }
    throw SpecError(m_path, column, "no such column; columns: " + JoinNames(m_columns));
}

const std::vector<std::string>&
CsvTable::Columns() const
{
    return m_columns;
}

bool
CsvTable::Has(const std::string& column) const
{
    return std::find(m_columns.begin(), m_columns.end(), column) != m_columns.end();
}

int
CsvTable::Line(std::size_t row) const
{
    return m_lines.at(row);
}

const std::string&
CsvTable::Path() const
{
    return m_path;
}

const std::string&
CsvTable::Text(std::size_t row, const std::string& column) const
{
    return m_rows.at(row)[Column(column)];
}

bool
CsvTable::Blank(std::size_t row, const std::string& column) const
{
    return Text(row, column).empty();
}

double
CsvTable::Number(std::size_t row, const std::string& column) const
{
    const std::string& text = Text(row, column);
    char* end = nullptr;
    double value = std::strtod(text.c_str(), &end);
    // (strtod also reads hexadecimal, "0x10" as 16: no table writes numbers so)
    if (text.empty() || *end != '\0' || !std::isfinite(value)
        || text.find_first_of("xX") != std::string::npos)
    {
        throw SpecError(
            m_path, column, "expected a finite number, got '" + text + "'", m_lines[row]);
    }
    return value;
}

double
CsvTable::Positive(std::size_t row, const std::string& column) const
{
    const double value = Number(row, column);
    if (value <= 0)
    {
        throw SpecError(m_path,
                        column,
                        "expected a number above 0, got '" + Text(row, column) + "'",
                        m_lines[row]);
    }
    return value;
}

uint64_t
CsvTable::Count(std::size_t row, const std::string& column, uint64_t least, uint64_t most) const
{
    const double value = Number(row, column);
    if (value != std::floor(value) || value < double(least) || value > double(most))
    {
        throw SpecError(m_path,
                        column,
                        "expected a whole number from " + std::to_string(least) + " to "
                            + std::to_string(most) + ", got '" + Text(row, column) + "'",
                        m_lines[row]);
    }
    return static_cast<uint64_t>(value);
}

const std::string&
CsvTable::Choice(std::size_t row,
                 const std::string& column,
                 const std::vector<std::string>& allowed) const
{
    const std::string& text = Text(row, column);
    if (std::find(allowed.begin(), allowed.end(), text) == allowed.end())
    {
        throw SpecError(
            m_path, column, "got '" + text + "'; allowed: " + JoinNames(allowed), m_lines[row]);
    }
    return text;
}

} // namespace rapidllm
} // namespace ns3
