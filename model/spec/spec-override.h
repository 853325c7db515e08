/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_SPEC_OVERRIDE_H
#define RAPIDLLM_SPEC_OVERRIDE_H

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief One change of a spec field by its path in the spec files: "gpu.hbm_gib=160" sets a
 * value, "gpu.hbm_bandwidth_GBps=0.5x" scales the number the spec gives.
 *
 * A path starts with the spec it changes: "model." for a model file's fields
 * ("model.hidden", "model.moe.top_k"), "gpu." and "network." for a hardware file's sections.
 * Below that it is the file's own key path; a list of named mappings (network.dimensions) is
 * addressed by element name ("network.infiniband.oversubscription") or by index
 * ("network.dimensions[1].oversubscription", as error messages print it). An override is
 * applied to the YAML tree before the typed parse, so every check of the spec (types, ranges,
 * consistency) applies to the overridden value as to a value in the file.
 */
class SpecOverride
{
  public:
    /** \brief Which spec an override changes. */
    enum class Target
    {
        MODEL,   //!< a model file ("model." paths)
        HARDWARE //!< a hardware file ("gpu." and "network." paths)
    };

    /**
     * \brief Parses "PATH=VALUE" or "PATH=FACTORx".
     * \param text the override
     * \param origin where the text came from, for errors (e.g. "command line" or a job file)
     * \return the override; throws SpecError (field "set") on malformed text
     */
    static SpecOverride Parse(const std::string& text, const std::string& origin = "");

    /**
     * \brief Parses comma-separated overrides ("gpu.hbm_gib=160,model.layers=40"); commas
     * inside [] or {} belong to a value ("network.torus.shape=[4,4]").
     * \param text the list
     * \param origin where the text came from, for errors
     * \return the overrides, in order; throws SpecError when one path is set twice
     */
    static std::vector<SpecOverride> ParseList(const std::string& text,
                                               const std::string& origin = "");

    /**
     * \brief Splits \p text at its commas outside [], {} and quotes: one item per override
     * (or per value of `study hardware --vary`), empty ones kept for the caller to refuse.
     * \param text the list \return the items, in order (one for text without such a comma)
     */
    static std::vector<std::string> SplitTopLevel(const std::string& text);

    /**
     * \brief Refuses a list that sets one path twice (the second would silently win).
     * \param overrides one list's overrides \param origin where they came from, for errors
     */
    static void RejectRepeatedPaths(const std::vector<SpecOverride>& overrides,
                                    const std::string& origin);

    /** \return MODEL or HARDWARE */
    Target GetTarget() const;
    /** \return the path as given, e.g. "network.infiniband.oversubscription" */
    const std::string& GetPath() const;
    /** \return the text as given, e.g. "gpu.hbm_gib=160" */
    const std::string& GetText() const;
    /**
     * \return this override told as \p text in errors and echoes (e.g. "--heads=16" for the
     *         command-line option that stands for "model.heads=16")
     */
    SpecOverride Named(const std::string& text) const;
    /** \return true for a scale ("0.5x") */
    bool IsScale() const;
    /** \return the scale factor (1 for a value) */
    double GetFactor() const;

    /**
     * \brief Changes \p root, the YAML tree of a spec of this override's target.
     * \param root the tree (a mapping)
     * \param source the spec's file or preset name, for errors
     * \return the field's path as the typed parse names it in errors
     *         ("network.dimensions[1].oversubscription"); throws SpecError naming the path, the
     *         fields or dimension names there, and the value when the path cannot be applied
     */
    std::string Apply(YAML::Node& root, const std::string& source) const;

    /** \return "model, gpu or network": the first path components an override may have */
    static std::vector<std::string> Roots();

  private:
    SpecOverride() = default;

    std::string m_text;                 //!< the override as given
    std::string m_path;                 //!< the path as given
    std::string m_value;                //!< the value text (without the 'x' of a scale)
    bool m_scale = false;               //!< the value scales the spec's number
    double m_factor = 1.0;              //!< the scale factor
    Target m_target = Target::HARDWARE; //!< which spec
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_SPEC_OVERRIDE_H
