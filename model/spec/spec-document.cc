/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "spec-document.h"

#include "hf-model-config.h"
#include "preset-registry.h"
#include "spec-error.h"
#include "spec-reader.h"

#include <filesystem>

namespace ns3 {
namespace rapidllm {

namespace {

/** The longest `base:` chain followed (a cycle is caught before; this bounds honest chains). */
constexpr std::size_t kMaxBaseDepth = 16;

/** \return "a.b" or "b" */
std::string
JoinKey(const std::string& path, const std::string& key)
{
    return path.empty() ? key : path + "." + key;
}

/** \return whether \p path is \p prefix or lies below it ("a.b" below "a", "a[1]" below "a") */
bool
IsUnder(const std::string& path, const std::string& prefix)
{
    if (path.compare(0, prefix.size(), prefix) != 0)
    {
        return false;
    }
    return path.size() == prefix.size() || path[prefix.size()] == '.' || path[prefix.size()] == '[';
}

/** \return the file a field came from: the deepest recorded origin at or above \p path */
std::string
OriginOf(const std::map<std::string, std::string>& origins,
         const std::string& fallback,
         const std::string& path)
{
    std::string best;
    std::string origin = fallback;
    for (const auto& [prefix, file] : origins)
    {
        if (IsUnder(path, prefix) && prefix.size() >= best.size())
        {
            best = prefix;
            origin = file;
        }
    }
    return origin;
}

/** Merges a file's tree over its base's, recording where inherited parts came from. */
class Merger
{
  public:
    Merger(const std::map<std::string, std::string>& baseOrigins,
           const std::string& baseSource,
           const std::string& source,
           std::map<std::string, std::string>& origins)
        : m_baseOrigins(baseOrigins)
        , m_baseSource(baseSource)
        , m_source(source)
        , m_origins(origins)
    {}

    YAML::Node
    Merge(const YAML::Node& base, const YAML::Node& child, const std::string& path)
    {
        if (base.IsMap() && child.IsMap())
        {
            YAML::Node out(YAML::NodeType::Map);
            for (const auto& item : base)
            {
                const std::string key = item.first.Scalar();
                YAML::Node mine;
                if (FindYamlKey(child, key, mine))
                {
                    if (mine.IsNull())
                    {
                        // ~ removes the base's field: it reads as never given, and one that only
                        // the base's kind of section has (a fat tree's oversubscription under a
                        // dimension made a torus) is not unknown (SpecReader::Finish).
                        mine.SetTag(kRemovedFieldTag);
                    }
                    out[key] = Merge(item.second, mine, JoinKey(path, key));
                }
                else
                {
                    out[key] = item.second;
                    Inherit(JoinKey(path, key), JoinKey(path, key));
                }
            }
            for (const auto& item : child)
            {
                YAML::Node unused;
                if (!FindYamlKey(base, item.first.Scalar(), unused))
                {
                    out[item.first.Scalar()] = item.second;
                }
            }
            return out;
        }
        if (IsNamedList(base) && IsNamedList(child))
        {
            return MergeNamed(base, child, path);
        }
        return child;
    }

  private:
    /** Records that the base's \p from is the result's \p to. */
    void
    Inherit(const std::string& from, const std::string& to)
    {
        m_origins[to] = OriginOf(m_baseOrigins, m_baseSource, from);
        for (const auto& [prefix, file] : m_baseOrigins)
        {
            if (prefix != from && IsUnder(prefix, from))
            {
                m_origins[to + prefix.substr(from.size())] = file;
            }
        }
    }

    YAML::Node
    MergeNamed(const YAML::Node& base, const YAML::Node& child, const std::string& path)
    {
        std::map<std::string, std::size_t> childByName;
        for (std::size_t j = 0; j < child.size(); ++j)
        {
            const std::string name = child[j]["name"].Scalar();
            if (!childByName.emplace(name, j).second)
            {
                throw SpecError(m_source,
                                path + "[" + std::to_string(j) + "].name",
                                "'" + name
                                    + "' is given twice; a list merged over its base by "
                                      "name needs unique names",
                                child[j]["name"].Mark().line + 1);
            }
        }
        YAML::Node out(YAML::NodeType::Sequence);
        std::map<std::string, bool> used;
        for (std::size_t i = 0; i < base.size(); ++i)
        {
            const std::string name = base[i]["name"].Scalar();
            const std::string at = path + "[" + std::to_string(i) + "]";
            auto it = childByName.find(name);
            if (it != childByName.end() && !used[name])
            {
                used[name] = true;
                out.push_back(Merge(base[i], child[it->second], at));
            }
            else
            {
                out.push_back(base[i]);
                Inherit(at, at);
            }
        }
        for (std::size_t j = 0; j < child.size(); ++j)
        {
            const std::string name = child[j]["name"].Scalar();
            if (used[name])
            {
                continue;
            }
            // A name matching none of the base's is a new entry, appended; one a few edits from
            // a base entry left unmatched is more likely that entry misspelt.
            for (std::size_t i = 0; i < base.size(); ++i)
            {
                const std::string baseName = base[i]["name"].Scalar();
                // A suffix (infiniband2 beside infiniband) names a new entry on purpose; a
                // truncated name (infiniban) is more likely the base's misspelt.
                const bool extended = name.rfind(baseName, 0) == 0;
                if (!used[baseName] && !extended && LooksMisspelt(name, baseName))
                {
                    std::string names;
                    for (std::size_t k = 0; k < base.size(); ++k)
                    {
                        names += (k > 0 ? ", " : "") + base[k]["name"].Scalar();
                    }
                    throw SpecError(m_source,
                                    path + "[" + std::to_string(j) + "].name",
                                    "'" + name + "' is no entry of the base's (" + names
                                        + "); is it '" + baseName
                                        + "' misspelt? (a new name adds an entry)",
                                    child[j]["name"].Mark().line + 1);
                }
            }
            out.push_back(child[j]);
        }
        return out;
    }

    const std::map<std::string, std::string>& m_baseOrigins; //!< the base's own origins
    const std::string& m_baseSource;                         //!< the base's file
    const std::string& m_source;                             //!< the inheriting file
    std::map<std::string, std::string>& m_origins;           //!< the result's origins
};

/** \return the tree of a spec's text: YAML, or for a model a Hugging Face config too */
YAML::Node
LoadTree(const std::string& kind, const std::string& text, const std::string& source)
{
    if (kind == "models" && HuggingFaceConfig::IsConfig(text, source))
    {
        return HuggingFaceConfig::ToModelTree(text, source);
    }
    return ParseYaml(text, source);
}

/** \return a file's identity for cycle detection */
std::string
FileIdentity(const std::string& path)
{
    std::error_code ec;
    auto canonical = std::filesystem::weakly_canonical(path, ec);
    return "file:" + (ec ? path : canonical.string());
}

} // namespace

SpecDocument
SpecDocument::Load(const std::string& kind, const std::string& nameOrPath, const std::string& field)
{
    SpecDocument d;
    d.m_kind = kind;
    std::string text;
    std::string identity;
    std::string directory;
    if (PresetRegistry::Find(kind, nameOrPath, text))
    {
        d.m_source = "preset '" + nameOrPath + "'";
        identity = "preset:" + nameOrPath;
    }
    else
    {
        text = PresetRegistry::Resolve(kind, nameOrPath, field, d.m_source);
        identity = FileIdentity(nameOrPath);
        directory = std::filesystem::path(nameOrPath).parent_path().string();
    }
    d.m_root = LoadTree(kind, text, d.m_source);
    d.ResolveBase(directory, {identity, d.m_source});
    return d;
}

SpecDocument
SpecDocument::Parse(const std::string& kind,
                    const std::string& text,
                    const std::string& source,
                    const std::string& directory)
{
    SpecDocument d;
    d.m_kind = kind;
    d.m_source = source;
    d.m_root = LoadTree(kind, text, source);
    d.ResolveBase(directory, {"text:" + source, source});
    return d;
}

void
SpecDocument::ResolveBase(const std::string& directory, std::vector<std::string> chain)
{
    YAML::Node ref;
    if (!m_root.IsMap() || !FindYamlKey(m_root, "base", ref))
    {
        return;
    }
    const int line = ref.Mark().line + 1;
    if (!ref.IsScalar() || ref.Scalar().empty())
    {
        throw SpecError(m_source, "base", "expected a preset name or a file path", line);
    }
    YAML::Node name;
    if (!FindYamlKey(m_root, "name", name))
    {
        throw SpecError(m_source,
                        "name",
                        "a spec with 'base: " + ref.Scalar()
                            + "' gives its own name (the name its reports carry)",
                        line);
    }
    // The base: a preset, or a file (relative to the file naming it).
    const std::string target = ref.Scalar();
    SpecDocument base;
    base.m_kind = m_kind;
    std::string text;
    std::string identity;
    std::string baseDirectory;
    if (PresetRegistry::Find(m_kind, target, text))
    {
        base.m_source = "preset '" + target + "'";
        identity = "preset:" + target;
    }
    else
    {
        std::filesystem::path path(target);
        if (path.is_relative() && !directory.empty())
        {
            path = std::filesystem::path(directory) / path;
        }
        try
        {
            text = PresetRegistry::Resolve(m_kind, path.string(), "base", base.m_source);
        }
        catch (const SpecError& e)
        {
            throw SpecError(m_source, "base", e.GetMessage(), line);
        }
        identity = FileIdentity(path.string());
        baseDirectory = path.parent_path().string();
    }
    // chain holds identity, display name pairs.
    std::string shown;
    bool cycle = false;
    for (std::size_t i = 0; i < chain.size(); i += 2)
    {
        shown += chain[i + 1] + " -> ";
        cycle |= chain[i] == identity;
    }
    shown += base.m_source;
    if (cycle)
    {
        throw SpecError(m_source, "base", "the base chain is a cycle: " + shown, line);
    }
    if (chain.size() / 2 >= kMaxBaseDepth)
    {
        throw SpecError(m_source,
                        "base",
                        "the base chain is longer than " + std::to_string(kMaxBaseDepth)
                            + " files: " + shown,
                        line);
    }
    chain.push_back(identity);
    chain.push_back(base.m_source);
    base.m_root = LoadTree(m_kind, text, base.m_source);
    base.ResolveBase(baseDirectory, chain);
    if (!base.m_root.IsMap())
    {
        throw SpecError(base.m_source, "", "expected a mapping of 'key: value' fields");
    }

    m_root.remove("base");
    std::map<std::string, std::string> origins;
    Merger merger(base.m_origins, base.m_source, m_source, origins);
    m_root = merger.Merge(base.m_root, m_root, "");
    m_origins = origins;
}

void
SpecDocument::Apply(const std::vector<SpecOverride>& overrides)
{
    const auto target =
        m_kind == "models" ? SpecOverride::Target::MODEL : SpecOverride::Target::HARDWARE;
    for (const auto& o : overrides)
    {
        if (o.GetTarget() == target)
        {
            m_applied.emplace_back(o.Apply(m_root, m_source), o.GetText());
        }
    }
}

void
SpecDocument::Read(const std::function<void(const YAML::Node&, const std::string&)>& read) const
{
    try
    {
        read(m_root, m_source);
    }
    catch (const SpecError& e)
    {
        const std::string& field = e.GetField();
        std::string file = e.GetFile();
        std::string message = e.GetMessage();
        if (e.GetLine() > 0 && file == m_source && !field.empty())
        {
            file = OriginOf(m_origins, m_source, field);
        }
        bool named = false;
        for (auto it = m_applied.rbegin(); it != m_applied.rend() && !field.empty(); ++it)
        {
            if (IsUnder(field, it->first) || IsUnder(it->first, field))
            {
                message += " (set by override '" + it->second + "')";
                named = true;
                break;
            }
        }
        if (!named && !m_applied.empty())
        {
            message += AfterOverrides();
            named = true;
        }
        if (!named && file == e.GetFile())
        {
            throw;
        }
        throw SpecError(file, field, message, e.GetLine());
    }
}

std::string
SpecDocument::AfterOverrides() const
{
    if (m_applied.empty())
    {
        return "";
    }
    std::vector<std::string> texts;
    for (const auto& applied : m_applied)
    {
        texts.push_back(applied.second);
    }
    return " (after overrides " + JoinNames(texts) + ")";
}

std::string
SpecDocument::GetOrigin() const
{
    return m_source + AfterOverrides();
}

const YAML::Node&
SpecDocument::GetRoot() const
{
    return m_root;
}

const std::string&
SpecDocument::GetSource() const
{
    return m_source;
}

} // namespace rapidllm
} // namespace ns3
