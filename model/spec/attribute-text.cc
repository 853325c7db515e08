/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "attribute-text.h"

#include "spec-error.h"

#include <cstdlib>
#include <regex>
#include <sstream>

namespace ns3 {
namespace rapidllm {

bool
AttributeTextParses(const std::string& text, Ptr<const AttributeChecker> checker)
{
    const std::string type = checker->GetValueTypeName();
    static const std::regex kNumber(R"([+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?)");
    static const std::regex kUnsigned(R"(\+?\d+)");
    static const std::regex kSigned(R"([+-]?\d+)");
    // ns-3's Time strings: a number and an optional unit (time.cc, Time::Time(std::string)).
    static const std::regex kTime(
        R"([+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?(s|ms|us|ns|ps|fs|min|h|d|y)?)");
    if (type == "ns3::TimeValue")
    {
        return std::regex_match(text, kTime);
    }
    if (type == "ns3::UintegerValue")
    {
        return std::regex_match(text, kUnsigned);
    }
    if (type == "ns3::IntegerValue")
    {
        return std::regex_match(text, kSigned);
    }
    if (type == "ns3::DoubleValue")
    {
        return std::regex_match(text, kNumber);
    }
    if (type == "ns3::BooleanValue")
    {
        return text == "true" || text == "false" || text == "1" || text == "0";
    }
    Ptr<AttributeValue> value = checker->Create();
    return value->DeserializeFromString(text, checker);
}

std::string
CheckAttributeText(TypeId tid, const std::string& name, const std::string& text)
{
    TypeId::AttributeInformation info;
    if (!tid.LookupAttributeByName(name, &info))
    {
        return "no attribute " + name;
    }
    // ns-3 3.37 describes an unbounded Time as "Time +9.22337e+18ps:+9.22337e+18ps"; say what a
    // time is instead.
    const std::string allowed =
        info.checker->GetValueTypeName() == "ns3::TimeValue"
            ? " (a time: a number and a unit, s, ms, us, ns, ps, fs, min, h, d or y, e.g. 200ms)"
            : " (" + info.checker->GetUnderlyingTypeInformation() + ")";
    if (!AttributeTextParses(text, info.checker))
    {
        return "'" + text + "' is not a value of " + name + allowed;
    }
    Ptr<AttributeValue> value = info.checker->Create();
    if (!value->DeserializeFromString(text, info.checker) || !info.checker->Check(*value))
    {
        return "'" + text + "' is out of range for " + name + allowed;
    }
    return "";
}

std::string
CheckAttributeEntry(const std::string& entry, const std::string& program)
{
    const auto eq = entry.find('=');
    const auto colons = entry.rfind("::", eq);
    if (eq == std::string::npos || colons == std::string::npos || colons == 0)
    {
        return "'" + entry + "' is not ns3::Class::Attribute=value";
    }
    const std::string typeName = entry.substr(0, colons);
    const std::string attribute = entry.substr(colons + 2, eq - colons - 2);
    TypeId tid;
    if (!TypeId::LookupByNameFailSafe(typeName, &tid))
    {
        return "'" + entry + "': no class " + typeName + " (" + program
               + " --PrintTypeIds lists them)";
    }
    TypeId::AttributeInformation info;
    if (!tid.LookupAttributeByName(attribute, &info))
    {
        return "'" + entry + "': " + typeName + " has no attribute " + attribute + " (" + program
               + " --PrintAttributes=" + typeName + " lists them)";
    }
    const std::string why = CheckAttributeText(tid, attribute, entry.substr(eq + 1));
    return why.empty() ? why : "'" + entry + "': " + why;
}

void
CheckAttributeDefaultsVariable(const std::string& program)
{
    const char* env = std::getenv("NS_ATTRIBUTE_DEFAULT");
    std::istringstream entries(env ? env : "");
    for (std::string entry; std::getline(entries, entry, ';');)
    {
        std::string why = entry.empty() ? "" : CheckAttributeEntry(entry, program);
        if (!why.empty())
        {
            if (why.find(" is not ns3::Class::Attribute=value") != std::string::npos)
            {
                why += " (entries are separated by ';')";
            }
            throw SpecError("NS_ATTRIBUTE_DEFAULT", "", why);
        }
    }
}

} // namespace rapidllm
} // namespace ns3
