/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_SPEC_DOCUMENT_H
#define RAPIDLLM_SPEC_DOCUMENT_H

#include "spec-override.h"

#include <yaml-cpp/yaml.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief The YAML tree of one model or hardware spec, ready for its typed parse: the preset
 * or file, merged over its `base:` chain, with overrides applied, and knowing which file each
 * field came from so that errors name the right one.
 *
 * Inheritance: a top-level `base: NAME` (a preset, or a file path relative to the file that
 * names it; a model may also name a Hugging Face config.json) makes the file hold only what
 * changes. Mappings merge recursively (the file's value wins); a list of named mappings
 * (network.dimensions) merges by `name`: an element naming a base element is merged into it,
 * in the base's order, and an element with a new name is appended; any other list (shape,
 * faults, ...) is replaced as a whole. A base may have its own base; a cycle is an error
 * naming the chain. A file with `base:` gives its own `name`.
 */
class SpecDocument
{
  public:
    /**
     * \brief Loads a preset by name or a file by path, resolving `base:` chains. For
     * \p kind "models", a Hugging Face config.json is read too (HuggingFaceConfig).
     * \param kind "models" or "hardware"
     * \param nameOrPath the preset name or path
     * \param field the field it was given as, for errors ("model", "hardware", "base")
     * \return the document; throws SpecError on bad input
     */
    static SpecDocument Load(const std::string& kind,
                             const std::string& nameOrPath,
                             const std::string& field);

    /**
     * \brief Parses YAML text, resolving `base:` chains.
     * \param kind "models" or "hardware"
     * \param text the document
     * \param source the file or preset name used in errors
     * \param directory where a relative `base:` path is looked up ("" = the working directory)
     * \return the document
     */
    static SpecDocument Parse(const std::string& kind,
                              const std::string& text,
                              const std::string& source,
                              const std::string& directory = "");

    /**
     * \brief Applies, in order, the overrides aimed at this document's spec (model overrides to
     * a model, gpu/network overrides to hardware); the others are skipped.
     * \param overrides the overrides
     */
    void Apply(const std::vector<SpecOverride>& overrides);

    /**
     * \brief Runs the typed parse. A SpecError it throws is rethrown naming the file the field
     * came from (a base file, for an inherited field) and, for a field an override set, the
     * override; when overrides were applied, other errors list them.
     * \param read the typed parse: gets the tree and the source name
     */
    void Read(const std::function<void(const YAML::Node&, const std::string&)>& read) const;

    /** \return the merged tree */
    const YAML::Node& GetRoot() const;
    /** \return the name of the file or preset, for errors */
    const std::string& GetSource() const;
    /**
     * \return the name of the file or preset and the overrides applied to it, for errors found
     * after the parse (a kernel the overridden GPU cannot tile)
     */
    std::string GetOrigin() const;

  private:
    SpecDocument() = default;

    /** \return " (after overrides A, B)" naming the overrides applied, or empty without any */
    std::string AfterOverrides() const;

    /** Replaces the top-level `base:` of m_root by the merged base; \p chain the bases so far. */
    void ResolveBase(const std::string& directory, std::vector<std::string> chain);

    std::string m_kind;                           //!< "models" or "hardware"
    std::string m_source;                         //!< the file or preset name
    YAML::Node m_root;                            //!< the tree
    std::map<std::string, std::string> m_origins; //!< field path -> file, where not m_source
    std::vector<std::pair<std::string, std::string>> m_applied; //!< field path, override text
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_SPEC_DOCUMENT_H
