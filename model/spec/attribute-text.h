/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_ATTRIBUTE_TEXT_H
#define RAPIDLLM_ATTRIBUTE_TEXT_H

#include "ns3/attribute.h"
#include "ns3/type-id.h"

#include <string>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief Whether \p text parses as a value of \p checker's type, without calling the ns-3
 * parsers that abort the process on bad text (Time, the integers, Double and Boolean are
 * matched here; other types by their own DeserializeFromString, which reports failure).
 * \param text the value as text ("4000", "1ms", "ns3::TcpNewReno")
 * \param checker the attribute's checker
 * \return true if ns-3 can read \p text as a value of that type (its range is not checked)
 */
bool AttributeTextParses(const std::string& text, Ptr<const AttributeChecker> checker);

/**
 * \brief Checks \p text as a value of \p tid's attribute \p name, as ns-3 would set it, but
 * without aborting: it must parse (AttributeTextParses) and be accepted by the attribute's
 * checker (in range).
 * \param tid the type \param name an attribute of \p tid (or of a parent)
 * \param text the value as text
 * \return "" if it is a valid value; else what is wrong, with the allowed type and range, e.g.
 *         "'0' is out of range for Mtu (uint32_t 576:65000)"; or "no attribute NAME" when
 *         \p tid has none of that name
 */
std::string CheckAttributeText(TypeId tid, const std::string& name, const std::string& text);

/**
 * \brief Checks one attribute default as ns-3 takes it from NS_ATTRIBUTE_DEFAULT or a
 * `--ns3::Class::Attribute=value` argument, without aborting on bad text.
 * \param entry "ns3::Class::Attribute=value"
 * \param program the program whose --PrintTypeIds and --PrintAttributes list the names
 * \return "" if ns-3 would take it; else what is wrong: not of that form, no such class, no
 *         such attribute, or a value out of its type or range (CheckAttributeText)
 */
std::string CheckAttributeEntry(const std::string& entry, const std::string& program);

/**
 * \brief Checks every entry of ns-3's NS_ATTRIBUTE_DEFAULT environment variable (';'-separated,
 * CheckAttributeEntry) before any object reads it: ns-3 aborts on a value it cannot read and
 * ignores a misspelt name.
 * \param program the program whose --PrintTypeIds and --PrintAttributes list the names
 * Throws SpecError (file "NS_ATTRIBUTE_DEFAULT") naming the first bad entry.
 */
void CheckAttributeDefaultsVariable(const std::string& program);

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_ATTRIBUTE_TEXT_H
