/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_SPEC_READER_H
#define RAPIDLLM_SPEC_READER_H

#include "spec-error.h"

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace ns3 {
namespace rapidllm {

/**
 * The YAML tag a base's field removed by an inheriting file's `~` carries: it reads as absent
 * and, where the section no longer has such a field, is not an unknown one.
 */
constexpr const char* kRemovedFieldTag = "!rapidllm-removed";

/**
 * \ingroup rapid-llm
 * \brief Typed, strict access to one YAML mapping of a spec file.
 *
 * Every getter records the key it was asked for; Finish() then rejects any key that no getter
 * asked for, listing the known ones. Type and range errors throw SpecError naming the file, the
 * dotted field path and the YAML line. This keeps each spec's parser a plain list of fields.
 */
class SpecReader
{
  public:
    /**
     * \param node a YAML mapping (a null node is treated as an empty mapping)
     * \param file the file or preset name used in error messages
     * \param path the dotted path of this mapping ("" at the top level)
     */
    SpecReader(const YAML::Node& node, const std::string& file, const std::string& path = "");

    /** \return true if the key is present (and marks it known) */
    bool Has(const std::string& key);

    /** \return a required string */
    std::string GetString(const std::string& key);
    /**
     * \param key the field \return its text, a name that reports print: not empty, and
     * without control characters (a newline would break the report's lines)
     */
    std::string GetName(const std::string& key);
    /** \return an optional string */
    std::string GetString(const std::string& key, const std::string& fallback);
    /** \return a required string that must be one of \p allowed */
    std::string GetChoice(const std::string& key, const std::vector<std::string>& allowed);
    /** \return an optional string that must be one of \p allowed */
    std::string GetChoice(const std::string& key,
                          const std::vector<std::string>& allowed,
                          const std::string& fallback);
    /** \return a required number > 0 */
    double GetPositive(const std::string& key);
    /** \return an optional number > 0 */
    double GetPositive(const std::string& key, double fallback);
    /** \return an optional number in [lo, hi] */
    double GetInRange(const std::string& key, double lo, double hi, double fallback);
    /** \return a required number in [lo, hi] */
    double GetInRange(const std::string& key, double lo, double hi);
    /** \return a required size-like number in (0, \p maximum]: a bound that keeps its
     * conversion to bytes (or other integers) exact and far from wrapping */
    double GetSize(const std::string& key, double maximum);
    /** \return an optional size-like number in (0, \p maximum] */
    double GetSize(const std::string& key, double maximum, double fallback);
    /** The largest whole number a count field holds (counts are 32-bit in every spec). */
    static constexpr uint64_t kMaxCount = 4294967295ull;
    /** \return a required whole number in [\p minimum, kMaxCount] */
    uint32_t GetCount(const std::string& key, uint64_t minimum = 1);
    /** \return an optional whole number in [\p minimum, kMaxCount] */
    uint32_t GetCount(const std::string& key, uint64_t minimum, uint64_t fallback);
    /** \return an optional boolean */
    bool GetBool(const std::string& key, bool fallback);
    /** \return a required list of whole numbers, each in [\p minimum, kMaxCount] */
    std::vector<uint32_t> GetCountList(const std::string& key, uint64_t minimum = 1);

    /** \return a reader for a required nested mapping */
    SpecReader GetMap(const std::string& key);
    /** \return readers for each mapping of a required sequence */
    std::vector<SpecReader> GetMapList(const std::string& key);
    /** \return the raw node of a key (marks it known); null if absent */
    YAML::Node GetNode(const std::string& key);

    /** \brief Rejects keys that no getter asked for. Call once, after reading every field. */
    void Finish() const;

    /** \return the dotted path of \p key below this mapping */
    std::string PathOf(const std::string& key) const;
    /** \return the file name used in errors */
    const std::string& GetFile() const;
    /** \return the 1-based line of \p key's value (or of this mapping), 0 if unknown */
    int LineOf(const std::string& key) const;

    /** \brief Throws a SpecError about \p key with this reader's file and line. */
    [[noreturn]] void Fail(const std::string& key, const std::string& message) const;

  private:
    /** \return the node of a required key, or throws "missing" */
    YAML::Node Require(const std::string& key);
    /** \return a number, or throws a type error */
    double ToNumber(const std::string& key, const YAML::Node& node) const;
    /** \return a whole number in [minimum, kMaxCount], or throws naming the range */
    uint32_t ToCount(const std::string& key,
                     const YAML::Node& node,
                     uint64_t minimum,
                     const std::string& what) const;

    YAML::Node m_node;             //!< the mapping
    std::string m_file;            //!< file for errors
    std::string m_path;            //!< dotted path of this mapping
    std::set<std::string> m_known; //!< keys asked for
};

/**
 * \return the edits (insert, delete, replace, swap two neighbours) that turn \p a into \p b:
 * how errors tell a misspelt key or name from another one
 */
std::size_t EditDistance(const std::string& a, const std::string& b);

/**
 * \return whether \p given is likely a misspelling of \p meant (a few edits away: one per
 * five characters, at least one; and, where both have as many underscore-separated words, each
 * word a slip away, so that vector_pj_per_flop is not taken for tensor_pj_per_flop)
 */
bool LooksMisspelt(const std::string& given, const std::string& meant);

/**
 * \brief Throws YAML::ParserException where a YAML document of \p text starts with ',': Debian
 * 12's yaml-cpp (0.7) does not refuse that token there but allocates until memory runs out.
 * Call before handing any user text to YAML::Load or YAML::LoadAll.
 * \param text YAML text (one or more documents)
 */
void RejectDocumentStartComma(const std::string& text);

/**
 * \brief Parses YAML text; syntax errors become SpecError with the line, and so does a key
 * given twice in one mapping (YAML forbids it; yaml-cpp would silently keep the first).
 * \param text the YAML document
 * \param file the name used in errors
 * \return the root node
 */
YAML::Node ParseYaml(const std::string& text, const std::string& file);

/**
 * \brief Reads and parses a YAML file; a missing file or a syntax error throws SpecError.
 * \param path the file
 * \return the root node
 */
YAML::Node LoadYamlFile(const std::string& path);

/** The largest spec file read (a real one is a few KiB; this stops e.g. /dev/zero). */
constexpr std::size_t kMaxSpecFileBytes = 16u << 20;

/**
 * \brief Reads a spec file's text: a directory, an unreadable file or one larger than
 * kMaxSpecFileBytes throws SpecError naming \p field and the path.
 * \param path the file
 * \param field the option or key that named it (e.g. "model", "base"), for errors
 * \param what what the file should be, for errors (e.g. "a YAML file")
 * \return the text
 */
std::string ReadSpecFile(const std::string& path,
                         const std::string& field,
                         const std::string& what);

/** \return "a, b, c" */
std::string JoinNames(const std::vector<std::string>& names);

/**
 * \brief Finds \p key in mapping \p map without adding it (yaml-cpp's operator[] on a
 * non-const node would). \return whether found; \p out is its value
 */
bool FindYamlKey(const YAML::Node& map, const std::string& key, YAML::Node& out);

/**
 * \return whether \p node is a non-empty list of mappings that each have a scalar "name"
 * (network dimensions, overridden and inherited by name rather than by position)
 */
bool IsNamedList(const YAML::Node& node);

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_SPEC_READER_H
