/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "spec-reader.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <vector>

namespace ns3 {
namespace rapidllm {

std::size_t
EditDistance(const std::string& a, const std::string& b)
{
    std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
    for (std::size_t i = 0; i <= a.size(); ++i)
    {
        d[i][0] = i;
    }
    for (std::size_t j = 0; j <= b.size(); ++j)
    {
        d[0][j] = j;
    }
    for (std::size_t i = 1; i <= a.size(); ++i)
    {
        for (std::size_t j = 1; j <= b.size(); ++j)
        {
            const std::size_t replace = d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
            d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, replace});
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
            {
                d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
            }
        }
    }
    return d[a.size()][b.size()];
}

/** \return \p name's words, split at its underscores */
std::vector<std::string>
Words(const std::string& name)
{
    std::vector<std::string> words(1);
    for (char c : name)
    {
        if (c == '_')
        {
            words.emplace_back();
        }
        else
        {
            words.back() += c;
        }
    }
    return words;
}

bool
LooksMisspelt(const std::string& given, const std::string& meant)
{
    if (given == meant || EditDistance(given, meant) > std::max<std::size_t>(1, meant.size() / 5))
    {
        return false;
    }
    // A word of the name swapped for another (vector_pj_per_flop for tensor_pj_per_flop) is
    // another field, not a slip of the keyboard: each word differs by a slip at most.
    const std::vector<std::string> a = Words(given);
    const std::vector<std::string> b = Words(meant);
    if (a.size() != b.size())
    {
        return true;
    }
    for (std::size_t i = 0; i < a.size(); ++i)
    {
        if (EditDistance(a[i], b[i]) > std::max<std::size_t>(1, b[i].size() / 3))
        {
            return false;
        }
    }
    return true;
}

SpecReader::SpecReader(const YAML::Node& node, const std::string& file, const std::string& path)
    : m_node(node)
    , m_file(file)
    , m_path(path)
{
    if (m_node && !m_node.IsNull() && !m_node.IsMap())
    {
        throw SpecError(
            m_file, m_path, "expected a mapping of 'key: value' fields", m_node.Mark().line + 1);
    }
}

std::string
SpecReader::PathOf(const std::string& key) const
{
    return m_path.empty() ? key : m_path + "." + key;
}

const std::string&
SpecReader::GetFile() const
{
    return m_file;
}

int
SpecReader::LineOf(const std::string& key) const
{
    if (m_node && m_node.IsMap() && m_node[key])
    {
        return m_node[key].Mark().line + 1;
    }
    if (m_node && m_node.Mark().line >= 0)
    {
        return m_node.Mark().line + 1;
    }
    return 0;
}

void
SpecReader::Fail(const std::string& key, const std::string& message) const
{
    throw SpecError(m_file, PathOf(key), message, LineOf(key));
}

bool
SpecReader::Has(const std::string& key)
{
    m_known.insert(key);
    return m_node && m_node.IsMap() && m_node[key] && !m_node[key].IsNull();
}

YAML::Node
SpecReader::Require(const std::string& key)
{
    if (!Has(key))
    {
        // A key of this mapping a few edits away is likely the field, misspelt: name it.
        std::string near;
        if (m_node && m_node.IsMap())
        {
            for (const auto& item : m_node)
            {
                const std::string other = item.first.Scalar();
                if (near.empty() && m_known.count(other) == 0 && LooksMisspelt(other, key))
                {
                    near = " (is '" + other + "', line " + std::to_string(LineOf(other))
                           + ", a misspelling of it?)";
                }
            }
        }
        Fail(key, "missing required field" + near);
    }
    return m_node[key];
}

YAML::Node
SpecReader::GetNode(const std::string& key)
{
    if (!Has(key))
    {
        return YAML::Node();
    }
    return m_node[key];
}

double
SpecReader::ToNumber(const std::string& key, const YAML::Node& node) const
{
    if (!node.IsScalar())
    {
        Fail(key, "expected a number");
    }
    if (node.Tag() == "!")
    {
        // A quoted scalar is text in YAML: "80" where 80 was meant is a typo to point out.
        Fail(key,
             "expected a number, got the quoted text '" + node.Scalar() + "'; drop the quotes");
    }
    double value = 0;
    try
    {
        value = node.as<double>();
    }
    catch (const YAML::Exception&)
    {
        Fail(key, "expected a number, got '" + node.Scalar() + "'");
    }
    if (!std::isfinite(value))
    {
        Fail(key, "expected a finite number, got '" + node.Scalar() + "'");
    }
    return value;
}

std::string
SpecReader::GetString(const std::string& key)
{
    auto node = Require(key);
    if (!node.IsScalar())
    {
        Fail(key, "expected a text value");
    }
    return node.Scalar();
}

std::string
SpecReader::GetName(const std::string& key)
{
    const std::string name = GetString(key);
    if (name.empty()
        || std::any_of(name.begin(),
                       name.end(),
                       [](char c)
                       {
                           return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
                       }))
    {
        Fail(key,
             "a name needs at least one character and no control characters (a newline, a "
             "tab)");
    }
    return name;
}

std::string
SpecReader::GetString(const std::string& key, const std::string& fallback)
{
    return Has(key) ? GetString(key) : fallback;
}

std::string
SpecReader::GetChoice(const std::string& key, const std::vector<std::string>& allowed)
{
    std::string value = GetString(key);
    for (const auto& a : allowed)
    {
        if (a == value)
        {
            return value;
        }
    }
    Fail(key, "'" + value + "' is not allowed; allowed values: " + JoinNames(allowed));
}

std::string
SpecReader::GetChoice(const std::string& key,
                      const std::vector<std::string>& allowed,
                      const std::string& fallback)
{
    return Has(key) ? GetChoice(key, allowed) : fallback;
}

double
SpecReader::GetPositive(const std::string& key)
{
    double value = ToNumber(key, Require(key));
    if (value <= 0)
    {
        Fail(key, "must be a positive number, got " + m_node[key].Scalar());
    }
    return value;
}

double
SpecReader::GetPositive(const std::string& key, double fallback)
{
    return Has(key) ? GetPositive(key) : fallback;
}

double
SpecReader::GetInRange(const std::string& key, double lo, double hi)
{
    double value = ToNumber(key, Require(key));
    if (value < lo || value > hi)
    {
        std::ostringstream os;
        os << "must be between " << lo << " and " << hi << ", got " << m_node[key].Scalar();
        Fail(key, os.str());
    }
    return value;
}

double
SpecReader::GetInRange(const std::string& key, double lo, double hi, double fallback)
{
    return Has(key) ? GetInRange(key, lo, hi) : fallback;
}

double
SpecReader::GetSize(const std::string& key, double maximum)
{
    double value = ToNumber(key, Require(key));
    if (value <= 0 || value > maximum)
    {
        std::ostringstream os;
        os.precision(15);
        os << "must be a number above 0 and at most " << maximum << ", got "
           << m_node[key].Scalar();
        Fail(key, os.str());
    }
    return value;
}

double
SpecReader::GetSize(const std::string& key, double maximum, double fallback)
{
    return Has(key) ? GetSize(key, maximum) : fallback;
}

uint32_t
SpecReader::ToCount(const std::string& key,
                    const YAML::Node& node,
                    uint64_t minimum,
                    const std::string& what) const
{
    double value = ToNumber(key, node);
    if (value != std::floor(value) || value < static_cast<double>(minimum)
        || value > static_cast<double>(kMaxCount))
    {
        Fail(key,
             (what.empty() ? std::string() : what + " ") + "must be a whole number from "
                 + std::to_string(minimum) + " to " + std::to_string(kMaxCount) + ", got "
                 + node.Scalar());
    }
    return static_cast<uint32_t>(value);
}

uint32_t
SpecReader::GetCount(const std::string& key, uint64_t minimum)
{
    return ToCount(key, Require(key), minimum, "");
}

uint32_t
SpecReader::GetCount(const std::string& key, uint64_t minimum, uint64_t fallback)
{
    return Has(key) ? GetCount(key, minimum) : static_cast<uint32_t>(fallback);
}

bool
SpecReader::GetBool(const std::string& key, bool fallback)
{
    if (!Has(key))
    {
        return fallback;
    }
    auto node = m_node[key];
    try
    {
        if (node.IsScalar())
        {
            return node.as<bool>();
        }
    }
    catch (const YAML::Exception&)
    {}
    Fail(key,
         "expected true or false, got "
             + (node.IsScalar() ? "'" + node.Scalar() + "'"
                                : std::string(node.IsSequence() ? "a list" : "a mapping")));
}

std::vector<uint32_t>
SpecReader::GetCountList(const std::string& key, uint64_t minimum)
{
    auto node = Require(key);
    if (!node.IsSequence())
    {
        Fail(key, "expected a list of whole numbers, e.g. [4, 4]");
    }
    std::vector<uint32_t> values;
    for (std::size_t i = 0; i < node.size(); ++i)
    {
        values.push_back(ToCount(key, node[i], minimum, "every entry"));
    }
    return values;
}

SpecReader
SpecReader::GetMap(const std::string& key)
{
    return SpecReader(Require(key), m_file, PathOf(key));
}

std::vector<SpecReader>
SpecReader::GetMapList(const std::string& key)
{
    auto node = Require(key);
    if (!node.IsSequence())
    {
        Fail(key, "expected a list");
    }
    std::vector<SpecReader> readers;
    for (std::size_t i = 0; i < node.size(); ++i)
    {
        readers.emplace_back(node[i], m_file, PathOf(key) + "[" + std::to_string(i) + "]");
    }
    return readers;
}

void
SpecReader::Finish() const
{
    if (!m_node || !m_node.IsMap())
    {
        return;
    }
    for (const auto& item : m_node)
    {
        std::string key = item.first.Scalar();
        if (m_known.count(key) == 0 && item.second.Tag() != kRemovedFieldTag)
        {
            std::vector<std::string> known(m_known.begin(), m_known.end());
            // A key merged over a base's is written anew, without a place in the file: its
            // value keeps the file's.
            const YAML::Mark at =
                item.first.Mark().line >= 0 ? item.first.Mark() : item.second.Mark();
            throw SpecError(m_file,
                            PathOf(key),
                            "unknown field; known fields here: " + JoinNames(known),
                            at.line + 1);
        }
    }
}

namespace {
/**
 * The most values a spec file may hold once its aliases are expanded: a spec is a few hundred;
 * aliases of aliases double at each level (a "billion laughs" file of 600 bytes holds 2^30).
 */
constexpr uint64_t kMaxSpecValues = 100000;

/**
 * Throws on a key given twice in any mapping below \p node (YAML 1.2 requires unique keys), and
 * on a document whose values, counted in \p values, are far more than a spec holds.
 */
void
RejectDuplicateKeys(const YAML::Node& node,
                    const std::string& file,
                    const std::string& path,
                    int depth,
                    uint64_t& values)
{
    if (depth > 64)
    {
        throw SpecError(file, path, "nested more than 64 levels deep", node.Mark().line + 1);
    }
    if (++values > kMaxSpecValues)
    {
        throw SpecError(file,
                        path,
                        "holds more than " + std::to_string(kMaxSpecValues)
                            + " values once its aliases are expanded (aliases of aliases?); a "
                              "spec is a few hundred",
                        node.Mark().line + 1);
    }
    if (node.IsSequence())
    {
        for (std::size_t i = 0; i < node.size(); ++i)
        {
            RejectDuplicateKeys(
                node[i], file, path + "[" + std::to_string(i) + "]", depth + 1, values);
        }
    }
    if (!node.IsMap())
    {
        return;
    }
    std::map<std::string, int> lines;
    for (const auto& item : node)
    {
        const std::string key = item.first.IsScalar() ? item.first.Scalar() : std::string();
        const std::string keyPath = path.empty() ? key : path + "." + key;
        const int line = item.first.Mark().line + 1;
        auto [it, inserted] = lines.emplace(key, line);
        if (!inserted)
        {
            throw SpecError(file,
                            keyPath,
                            "duplicate key (first given on line " + std::to_string(it->second)
                                + "); give each key once",
                            line);
        }
        RejectDuplicateKeys(item.second, file, keyPath, depth + 1, values);
    }
}
} // namespace

void
RejectDocumentStartComma(const std::string& text)
{
    // A document's first token follows only blank lines, comments, directives and '---'.
    bool atStart = true;
    std::size_t begin = 0;
    for (int line = 0; begin <= text.size(); ++line)
    {
        std::size_t end = text.find('\n', begin);
        if (end == std::string::npos)
        {
            end = text.size();
        }
        std::size_t i = text.find_first_not_of(" \t\r", begin);
        if (i != std::string::npos && i < end)
        {
            if (text.compare(i, 3, "---") == 0)
            {
                atStart = true;
                i = text.find_first_not_of(" \t\r", i + 3);
            }
            if (i != std::string::npos && i < end && text[i] != '#' && !(atStart && text[i] == '%'))
            {
                if (atStart && text[i] == ',')
                {
                    YAML::Mark mark;
                    mark.line = line;
                    mark.column = static_cast<int>(i - begin);
                    throw YAML::ParserException(mark, "a document cannot start with ','");
                }
                atStart = false;
            }
        }
        begin = end + 1;
    }
}

YAML::Node
ParseYaml(const std::string& text, const std::string& file)
{
    YAML::Node root;
    try
    {
        RejectDocumentStartComma(text);
        std::vector<YAML::Node> documents;
        for (const YAML::Node& d : YAML::LoadAll(text))
        {
            if (!d.IsNull() || documents.empty())
            {
                documents.push_back(d); // an empty document (a trailing ---) holds nothing
            }
        }
        if (documents.size() > 1)
        {
            // A second document (after ---) would be ignored: say so instead.
            throw SpecError(file,
                            "",
                            "holds " + std::to_string(documents.size())
                                + " YAML documents (separated by ---); a spec is one",
                            documents[1].Mark().line + 1);
        }
        if (!documents.empty())
        {
            root = documents.front();
        }
    }
    catch (const YAML::Exception& e)
    {
        throw SpecError(file, "", "YAML syntax error: " + e.msg, e.mark.line + 1);
    }
    uint64_t values = 0;
    RejectDuplicateKeys(root, file, "", 0, values);
    return root;
}

YAML::Node
LoadYamlFile(const std::string& path)
{
    std::ifstream in(path);
    if (!in)
    {
        throw SpecError(path, "", "cannot open file");
    }
    return ParseYaml(ReadSpecFile(path, "", "a YAML file"), path);
}

std::string
ReadSpecFile(const std::string& path, const std::string& field, const std::string& what)
{
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec))
    {
        throw SpecError("", field, "'" + path + "' is a directory, not " + what);
    }
    // Opening a FIFO would wait for a writer, a device never ends: only regular files.
    if (std::filesystem::exists(path, ec) && !std::filesystem::is_regular_file(path, ec))
    {
        throw SpecError("",
                        field,
                        "'" + path + "' is not a regular file (a FIFO, socket or device), not "
                            + what);
    }
    std::ifstream in(path, std::ios::binary);
    if (!in)
    {
        throw SpecError("", field, "cannot open file '" + path + "'");
    }
    std::string text;
    char buffer[65536];
    while (in.read(buffer, sizeof(buffer)) || in.gcount() > 0)
    {
        text.append(buffer, static_cast<std::size_t>(in.gcount()));
        if (text.size() > kMaxSpecFileBytes)
        {
            throw SpecError("",
                            field,
                            "'" + path + "' is larger than "
                                + std::to_string(kMaxSpecFileBytes >> 20)
                                + " MiB; a spec file is a few KiB of text");
        }
    }
    if (in.bad())
    {
        throw SpecError("", field, "cannot read '" + path + "'");
    }
    return text;
}

std::string
JoinNames(const std::vector<std::string>& names)
{
    std::string text;
    for (std::size_t i = 0; i < names.size(); ++i)
    {
        text += (i ? ", " : "") + names[i];
    }
    return text;
}

bool
FindYamlKey(const YAML::Node& map, const std::string& key, YAML::Node& out)
{
    for (const auto& item : map)
    {
        if (item.first.IsScalar() && item.first.Scalar() == key)
        {
            out.reset(item.second);
            return true;
        }
    }
    return false;
}

bool
IsNamedList(const YAML::Node& node)
{
    if (!node.IsSequence() || node.size() == 0)
    {
        return false;
    }
    for (const auto& item : node)
    {
        if (!item.IsMap() || !item["name"] || !item["name"].IsScalar())
        {
            return false;
        }
    }
    return true;
}

} // namespace rapidllm
} // namespace ns3
