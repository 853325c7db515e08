/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_CLI_NS3_CHECKS_H
#define RAPIDLLM_CLI_NS3_CHECKS_H

#include <string>
#include <vector>

namespace ns3 {
namespace rapidllm {

/**
 * \brief Checks ns-3's NS_ATTRIBUTE_DEFAULT environment variable before any object reads it:
 * ns-3 aborts the process on a value it cannot parse (a Time "bogus") and ignores a name it
 * does not know. Each `ns3::Class::Attribute=value` entry (';'-separated) must name a
 * registered class and attribute and hold a value of its type; otherwise a SpecError names the
 * variable, the entry and what is allowed.
 */
void CheckAttributeDefaults();

/**
 * \brief Checks ns-3's own --PrintAttributes=TYPE and --PrintGroup=GROUP arguments before ns-3's
 * CommandLine prints them: it aborts on an unknown type or group (or none given). A SpecError
 * names the argument and how to list what exists (--PrintTypeIds, --PrintGroups).
 * \param ns3Args the arguments handed to ns-3's CommandLine
 */
void CheckPrintArguments(const std::vector<std::string>& ns3Args);

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_CLI_NS3_CHECKS_H
