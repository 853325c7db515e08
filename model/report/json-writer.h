/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_JSON_WRITER_H
#define RAPIDLLM_JSON_WRITER_H

#include <cstdint>
#include <string>
#include <vector>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief Builds JSON text for reports: keys in the order written, numbers formatted the same on
 * every machine (deterministic output), strings escaped.
 */
class JsonWriter
{
  public:
    /** \brief Starts an object (as a value of \p key inside an object, or at the top level). */
    JsonWriter& BeginObject(const std::string& key = "");
    /** \brief Ends the current object. */
    JsonWriter& EndObject();
    /** \brief Starts an array. */
    JsonWriter& BeginArray(const std::string& key = "");
    /** \brief Ends the current array. */
    JsonWriter& EndArray();

    /** \brief Writes a string value. */
    JsonWriter& Value(const std::string& key, const std::string& value);
    /** \brief Writes a string value. */
    JsonWriter& Value(const std::string& key, const char* value);
    /** \brief Writes a number (%.10g: enough digits, stable across platforms). */
    JsonWriter& Value(const std::string& key, double value);
    /** \brief Writes an integer. */
    JsonWriter& Value(const std::string& key, uint64_t value);
    /** \brief Writes an integer. */
    JsonWriter& Value(const std::string& key, int64_t value);
    /** \brief Writes an integer. */
    JsonWriter& Value(const std::string& key, uint32_t value);
    /** \brief Writes an integer. */
    JsonWriter& Value(const std::string& key, int value);
    /** \brief Writes a boolean. */
    JsonWriter& Value(const std::string& key, bool value);

    /** \return the text written so far, with a final newline once everything is closed */
    std::string Str() const;

  private:
    /** Writes the separator and the key (inside objects). */
    void Key(const std::string& key);
    /** Writes raw text as a value. */
    JsonWriter& Raw(const std::string& key, const std::string& text);

    std::string m_text;          //!< output
    std::vector<bool> m_first;   //!< per open container: no element written yet
    std::vector<bool> m_isArray; //!< per open container: array or object
};

/** \return \p text as a quoted, escaped JSON string */
std::string JsonQuote(const std::string& text);

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_JSON_WRITER_H
