/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_PRESET_REGISTRY_H
#define RAPIDLLM_PRESET_REGISTRY_H

#include <string>
#include <vector>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief The built-in presets (data/presets/<kind>/<name>.yaml, compiled into the library).
 */
class PresetRegistry
{
  public:
    /** \return the preset names of one kind ("models" or "hardware"), sorted */
    static std::vector<std::string> Names(const std::string& kind);

    /**
     * \brief Finds a preset's YAML text.
     * \param kind "models" or "hardware"
     * \param name the preset name
     * \param[out] text the YAML text
     * \return false if there is no such preset
     */
    static bool Find(const std::string& kind, const std::string& name, std::string& text);

    /**
     * \brief Resolves a value that is either a preset name or a YAML file path.
     * \param kind "models" or "hardware"
     * \param nameOrPath the value
     * \param field the field it was given as, for errors, e.g. "model"
     * \param[out] source the name to use in later error messages
     * \return the YAML text; throws SpecError listing the valid names when neither fits
     */
    static std::string Resolve(const std::string& kind,
                               const std::string& nameOrPath,
                               const std::string& field,
                               std::string& source);
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_PRESET_REGISTRY_H
