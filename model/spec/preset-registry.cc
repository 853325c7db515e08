/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "preset-registry.h"

#include "spec-error.h"
#include "spec-reader.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

namespace ns3 {
namespace rapidllm {

// Defined in the file generated from data/presets/ by utils/cmake/embed-presets.cmake.
const std::map<std::string, std::string>& GetEmbeddedPresets();

std::vector<std::string>
PresetRegistry::Names(const std::string& kind)
{
    std::vector<std::string> names;
    const std::string prefix = kind + "/";
    for (const auto& [key, text] : GetEmbeddedPresets())
    {
        if (key.compare(0, prefix.size(), prefix) == 0)
        {
            names.push_back(key.substr(prefix.size()));
        }
    }
    return names;
}

bool
PresetRegistry::Find(const std::string& kind, const std::string& name, std::string& text)
{
    const auto& presets = GetEmbeddedPresets();
    auto it = presets.find(kind + "/" + name);
    if (it == presets.end())
    {
        return false;
    }
    text = it->second;
    return true;
}

std::string
PresetRegistry::Resolve(const std::string& kind,
                        const std::string& nameOrPath,
                        const std::string& field,
                        std::string& source)
{
    std::string text;
    if (Find(kind, nameOrPath, text))
    {
        source = "preset '" + nameOrPath + "'";
        return text;
    }
    bool looksLikePath = nameOrPath.find('/') != std::string::npos
                         || nameOrPath.find(".yaml") != std::string::npos
                         || nameOrPath.find(".yml") != std::string::npos;
    std::error_code ec;
    if (std::filesystem::is_directory(nameOrPath, ec))
    {
        throw SpecError("", field, "'" + nameOrPath + "' is a directory, not a YAML file");
    }
    if (std::filesystem::exists(nameOrPath, ec))
    {
        source = nameOrPath;
        return ReadSpecFile(nameOrPath, field, "a YAML file");
    }
    if (looksLikePath)
    {
        throw SpecError("", field, "cannot open file '" + nameOrPath + "'");
    }
    throw SpecError("",
                    field,
                    "'" + nameOrPath + "' is neither a preset nor a readable YAML file; presets: "
                        + JoinNames(Names(kind)));
}

} // namespace rapidllm
} // namespace ns3
