/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "spec-override.h"

#include "spec-error.h"
#include "spec-reader.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace ns3 {
namespace rapidllm {

namespace {

const char* const kExamples =
    "e.g. gpu.hbm_gib=160, gpu.hbm_bandwidth_GBps=0.5x, network.infiniband.oversubscription=2 or "
    "model.hidden=8192";

/** \return \p text without leading and trailing blanks */
std::string
Trim(const std::string& text)
{
    const auto first = text.find_first_not_of(" \t\r\n");
    if (first == std::string::npos)
    {
        return "";
    }
    const auto last = text.find_last_not_of(" \t\r\n");
    return text.substr(first, last - first + 1);
}

/** \return the number \p text holds entirely (strtod syntax), or false */
bool
ParseNumber(const std::string& text, double& value)
{
    if (text.empty() || std::isspace(static_cast<unsigned char>(text[0])))
    {
        return false;
    }
    errno = 0;
    char* end = nullptr;
    value = std::strtod(text.c_str(), &end);
    return end == text.c_str() + text.size() && errno != ERANGE;
}

/** \return \p x as the shortest text that reads back as the same double */
std::string
NumberText(double x)
{
    char buffer[64];
    if (x == std::floor(x) && std::fabs(x) < 1e15)
    {
        std::snprintf(buffer, sizeof(buffer), "%.0f", x);
        return buffer;
    }
    for (int precision : {15, 16, 17})
    {
        std::snprintf(buffer, sizeof(buffer), "%.*g", precision, x);
        if (std::strtod(buffer, nullptr) == x)
        {
            break;
        }
    }
    return buffer;
}

/** One component of a path: "key" or "key[index]". */
struct Segment
{
    std::string key;       //!< the mapping key (or element name)
    bool hasIndex = false; //!< "[i]" given
    std::size_t index = 0; //!< the index
};

/** \return \p text split at '.' */
std::vector<std::string>
SplitPath(const std::string& text)
{
    std::vector<std::string> parts;
    std::string part;
    for (char c : text)
    {
        if (c == '.')
        {
            parts.push_back(part);
            part.clear();
        }
        else
        {
            part += c;
        }
    }
    parts.push_back(part);
    return parts;
}

/** \return a copy of \p node without source marks (its lines belong to no file) */
YAML::Node
Unmarked(const YAML::Node& node, int depth)
{
    if (depth > 16)
    {
        throw std::length_error("nested too deeply");
    }
    switch (node.Type())
    {
        case YAML::NodeType::Scalar:
            return YAML::Node(node.Scalar());
        case YAML::NodeType::Sequence:
        {
            YAML::Node out(YAML::NodeType::Sequence);
            for (const auto& item : node)
            {
                out.push_back(Unmarked(item, depth + 1));
            }
            return out;
        }
        case YAML::NodeType::Map:
        {
            YAML::Node out(YAML::NodeType::Map);
            for (const auto& item : node)
            {
                out[item.first.Scalar()] = Unmarked(item.second, depth + 1);
            }
            return out;
        }
        default:
            return YAML::Node();
    }
}

/** \return the keys of mapping \p map, in file order */
std::vector<std::string>
KeysOf(const YAML::Node& map)
{
    std::vector<std::string> keys;
    for (const auto& item : map)
    {
        keys.push_back(item.first.IsScalar() ? item.first.Scalar() : "?");
    }
    return keys;
}

/** \return "; dimensions: nvlink, infiniband" for each named list of \p map */
std::string
NamedListsText(const YAML::Node& map)
{
    std::string text;
    for (const auto& item : map)
    {
        if (IsNamedList(item.second))
        {
            std::vector<std::string> names;
            for (const auto& element : item.second)
            {
                names.push_back(element["name"].Scalar());
            }
            text += "; " + item.first.Scalar() + " by name: " + JoinNames(names);
        }
    }
    return text;
}

/** Finds the element named \p name in a named list of \p map. */
bool
FindNamed(const YAML::Node& map,
          const std::string& name,
          YAML::Node& list,
          std::size_t& index,
          std::string& listKey)
{
    for (const auto& item : map)
    {
        if (!IsNamedList(item.second))
        {
            continue;
        }
        for (std::size_t i = 0; i < item.second.size(); ++i)
        {
            if (item.second[i]["name"].Scalar() == name)
            {
                list.reset(item.second);
                index = i;
                listKey = item.first.Scalar();
                return true;
            }
        }
    }
    return false;
}

} // namespace

std::vector<std::string>
SpecOverride::Roots()
{
    return {"model", "gpu", "network"};
}

SpecOverride
SpecOverride::Parse(const std::string& rawText, const std::string& origin)
{
    const std::string text = Trim(rawText);
    auto fail = [&](const std::string& message)
    {
        throw SpecError(origin, "set", "'" + text + "' " + message);
    };
    const auto equals = text.find('=');
    if (equals == std::string::npos)
    {
        fail(std::string("is not PATH=VALUE; ") + kExamples);
    }
    SpecOverride o;
    o.m_text = text;
    o.m_path = Trim(text.substr(0, equals));
    o.m_value = Trim(text.substr(equals + 1));
    if (o.m_path.empty())
    {
        fail(std::string("has no path before '='; ") + kExamples);
    }
    if (o.m_value.empty())
    {
        fail("has no value after '='; give a value or a scale such as 0.5x");
    }
    const std::vector<std::string> parts = SplitPath(o.m_path);
    for (const auto& part : parts)
    {
        if (part.empty())
        {
            fail("has an empty component in its path '" + o.m_path + "'");
        }
    }
    if (parts[0] == "model")
    {
        o.m_target = Target::MODEL;
    }
    else if (parts[0] == "gpu" || parts[0] == "network")
    {
        o.m_target = Target::HARDWARE;
    }
    else
    {
        fail("does not start with a spec: a path starts with model., gpu. or network. (the "
             "model file's fields are model.<field>, e.g. model.hidden=8192)");
    }
    if (parts.size() < 2)
    {
        fail("names a whole spec section; give a field below it, " + std::string(kExamples));
    }
    // "0.5x" scales the number the spec gives; anything else is a YAML value.
    double factor = 0;
    if (o.m_value.size() > 1 && o.m_value.back() == 'x'
        && ParseNumber(o.m_value.substr(0, o.m_value.size() - 1), factor))
    {
        if (!std::isfinite(factor))
        {
            fail("has a scale factor that is not a finite number");
        }
        o.m_scale = true;
        o.m_factor = factor;
        o.m_value.pop_back();
    }
    else
    {
        try
        {
            RejectDocumentStartComma(o.m_value);
            Unmarked(YAML::Load(o.m_value), 0);
        }
        catch (const YAML::Exception& e)
        {
            fail("has a value that is not valid YAML: " + e.msg);
        }
        catch (const std::length_error&)
        {
            fail("has a value nested more than 16 levels deep");
        }
    }
    return o;
}

SpecOverride
SpecOverride::Named(const std::string& text) const
{
    SpecOverride o = *this;
    o.m_text = text;
    return o;
}

std::vector<std::string>
SpecOverride::SplitTopLevel(const std::string& text)
{
    std::vector<std::string> items(1);
    int depth = 0;
    char quote = 0;
    char prev = ','; // a quote opens a YAML scalar only at its start (it's is plain text)
    for (char c : text)
    {
        const char before = prev;
        prev = c;
        if (quote)
        {
            quote = c == quote ? 0 : quote;
        }
        else if ((c == '\'' || c == '"') && std::string(",=[{: ").find(before) != std::string::npos)
        {
            quote = c;
        }
        else if (c == '[' || c == '{')
        {
            ++depth;
        }
        else if ((c == ']' || c == '}') && depth > 0)
        {
            --depth;
        }
        else if (c == ',' && depth == 0)
        {
            items.emplace_back();
            continue;
        }
        items.back() += c;
    }
    return items;
}

std::vector<SpecOverride>
SpecOverride::ParseList(const std::string& text, const std::string& origin)
{
    std::vector<SpecOverride> overrides;
    for (const std::string& item : SplitTopLevel(text))
    {
        if (Trim(item).empty())
        {
            throw SpecError(origin,
                            "set",
                            "'" + text + "' has an empty entry; give PATH=VALUE[,PATH=VALUE...], "
                                + kExamples);
        }
        overrides.push_back(Parse(item, origin));
    }
    RejectRepeatedPaths(overrides, origin);
    return overrides;
}

void
SpecOverride::RejectRepeatedPaths(const std::vector<SpecOverride>& overrides,
                                  const std::string& origin)
{
    // One list sets each path once: a second would silently win (or chain a relative value).
    for (std::size_t i = 0; i < overrides.size(); ++i)
    {
        for (std::size_t j = 0; j < i; ++j)
        {
            if (overrides[j].GetPath() == overrides[i].GetPath())
            {
                throw SpecError(origin,
                                "set",
                                "'" + overrides[i].GetPath() + "' is given twice ('"
                                    + overrides[j].GetText() + "' and '" + overrides[i].GetText()
                                    + "'); give each path once");
            }
        }
    }
}

SpecOverride::Target
SpecOverride::GetTarget() const
{
    return m_target;
}

const std::string&
SpecOverride::GetPath() const
{
    return m_path;
}

const std::string&
SpecOverride::GetText() const
{
    return m_text;
}

bool
SpecOverride::IsScale() const
{
    return m_scale;
}

double
SpecOverride::GetFactor() const
{
    return m_factor;
}

std::string
SpecOverride::Apply(YAML::Node& root, const std::string& source) const
{
    auto fail = [&](const std::string& message)
    {
        throw SpecError(source, m_path, "override '" + m_text + "': " + message);
    };
    std::vector<std::string> parts = SplitPath(m_path);
    if (m_target == Target::MODEL)
    {
        parts.erase(parts.begin()); // the model file's fields are at its top level
    }
    if (root.IsNull())
    {
        root = YAML::Node(YAML::NodeType::Map);
    }
    if (!root.IsMap())
    {
        fail("the spec is not a mapping of fields");
    }
    auto sectionName = [&](const std::string& resolved)
    {
        if (!resolved.empty())
        {
            return "'" + resolved + "'";
        }
        return std::string(m_target == Target::MODEL ? "the model file" : "the hardware file");
    };
    auto listing = [&](const YAML::Node& map)
    {
        return "fields given there: " + JoinNames(KeysOf(map)) + NamedListsText(map);
    };
    auto valueNode = [&]()
    {
        return Unmarked(YAML::Load(m_value), 0);
    };

    YAML::Node node;
    node.reset(root);
    std::string resolved; // the path as the typed parse names it
    for (std::size_t i = 0; i < parts.size(); ++i)
    {
        const bool last = i + 1 == parts.size();
        Segment s;
        s.key = parts[i];
        const auto bracket = s.key.find('[');
        if (bracket != std::string::npos)
        {
            const std::string digits = s.key.substr(bracket + 1, s.key.size() - bracket - 2);
            if (s.key.back() != ']' || bracket == 0 || digits.empty() || digits.size() > 9
                || digits.find_first_not_of("0123456789") != std::string::npos)
            {
                fail("'" + parts[i] + "' is not KEY or KEY[INDEX], e.g. dimensions[1]");
            }
            s.hasIndex = true;
            s.index = std::stoul(digits);
            s.key = s.key.substr(0, bracket);
        }
        if (node.IsSequence())
        {
            // network.dimensions.0.bandwidth_GBps: the index belongs in brackets.
            const std::string list = parts[i - 1];
            std::string byName;
            if (IsNamedList(node))
            {
                const std::string parent = resolved.substr(0, resolved.size() - list.size());
                for (const auto& element : node)
                {
                    byName += (byName.empty() ? "" : ", ") + parent + element["name"].Scalar();
                }
                byName = " or by its name in place of the list's (" + byName + ")";
            }
            fail(sectionName(resolved) + " is a list: name an entry as " + list + "[INDEX] (e.g. "
                 + list + "[0])" + byName + ", not " + list + "." + parts[i]);
        }
        if (!node.IsMap())
        {
            fail(sectionName(resolved) + " holds a value, not a section of fields");
        }
        const std::string keyPath = resolved.empty() ? s.key : resolved + "." + s.key;
        // Where the value lives: a mapping entry, or an element of a sequence.
        YAML::Node child;
        YAML::Node list;
        std::size_t listIndex = 0;
        bool inList = false;
        bool found = false;
        std::string childPath;
        if (FindYamlKey(node, s.key, child))
        {
            found = true;
            childPath = keyPath;
            if (s.hasIndex)
            {
                if (!child.IsSequence())
                {
                    fail("'" + childPath + "' is not a list, so it has no entry ["
                         + std::to_string(s.index) + "]");
                }
                if (s.index >= child.size())
                {
                    fail("'" + childPath + "' has " + std::to_string(child.size())
                         + " entries (indices from 0)");
                }
                list.reset(child);
                listIndex = s.index;
                inList = true;
                child.reset(list[listIndex]);
                childPath += "[" + std::to_string(listIndex) + "]";
            }
        }
        else if (!s.hasIndex)
        {
            std::string listKey;
            if (FindNamed(node, s.key, list, listIndex, listKey))
            {
                found = true;
                inList = true;
                child.reset(list[listIndex]);
                childPath = (resolved.empty() ? listKey : resolved + "." + listKey) + "["
                            + std::to_string(listIndex) + "]";
            }
        }
        if (!found)
        {
            // Absent: a value may add a field (the typed parse judges it); a scale needs a number.
            if (m_scale)
            {
                // A misspelt field is named as such first: "hbm_gb" for "hbm_gib".
                std::string meant;
                for (const std::string& key : KeysOf(node))
                {
                    if (meant.empty() && LooksMisspelt(s.key, key))
                    {
                        meant = key;
                    }
                }
                fail("'" + s.key + "' is not given in " + sectionName(resolved)
                     + (meant.empty() ? "" : " (did you mean '" + meant + "'?)")
                     + ", so there is no number to scale; " + listing(node));
            }
            // Where named lists are, a missing name on the way is no element of them; a last
            // one adds a field (network.faults), which the typed parse judges.
            if (s.hasIndex || (!last && !NamedListsText(node).empty()))
            {
                fail("there is no field or element '" + parts[i] + "' in " + sectionName(resolved)
                     + "; " + listing(node));
            }
            if (last)
            {
                node[s.key] = valueNode();
                return keyPath;
            }
            node[s.key] = YAML::Node(YAML::NodeType::Map);
            child.reset(node[s.key]);
            childPath = keyPath;
        }
        if (last)
        {
            YAML::Node value;
            if (m_scale)
            {
                double old = 0;
                if (!child.IsScalar() || !ParseNumber(child.Scalar(), old) || !std::isfinite(old))
                {
                    fail("scales a number, but '" + childPath + "' is "
                         + (child.IsScalar() ? "'" + child.Scalar() + "'" : "not a single value"));
                }
                value = YAML::Node(NumberText(old * m_factor));
            }
            else
            {
                value = valueNode();
            }
            if (inList)
            {
                list[listIndex] = value;
            }
            else
            {
                node[s.key] = value;
            }
            return childPath;
        }
        node.reset(child);
        resolved = childPath;
    }
    return resolved;
}

} // namespace rapidllm
} // namespace ns3
