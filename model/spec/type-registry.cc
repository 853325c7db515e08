/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "type-registry.h"

#include "ns3/spec-error.h"
#include "ns3/spec-reader.h"

#include <map>

namespace ns3 {
namespace rapidllm {

namespace {
/** \return base TypeId uid -> (short name -> subclass), built on first use */
std::map<uint16_t, std::map<std::string, TypeId>>&
Tables()
{
    static std::map<uint16_t, std::map<std::string, TypeId>> tables;
    return tables;
}

/** \return the refused registrations not yet taken */
std::vector<std::string>&
Refusals()
{
    static std::vector<std::string> refusals;
    return refusals;
}

/** \return the repeated registrations not yet taken */
std::vector<std::string>&
Repeats()
{
    static std::vector<std::string> repeats;
    return repeats;
}

/** \return the error for a name \p name unknown to the extension point \p base */
std::string
UnknownMessage(TypeId base, const std::string& name, const std::string& what)
{
    return "unknown " + what + " '" + name + "'; known: " + JoinNames(TypeRegistryBase::Names(base))
           + " (or the TypeId name of a " + base.GetName()
           + " subclass; a plugin's names are known once --load=PATH has loaded it, or, in a "
             "scenario script, once its file is linked in)";
}

/** \return the registrations refused and not yet taken, as one sentence ("" if none) */
std::string
RefusedMessage()
{
    std::string text;
    for (const auto& r : Refusals())
    {
        text += (text.empty() ? "" : "; ") + r;
    }
    return text.empty() ? text
                        : "a registration in this program was refused, so the extension it "
                          "names is not the one its file defines: "
                              + text;
}
} // namespace

void
TypeRegistryBase::Register(TypeId base, const std::string& name, TypeId tid)
{
    auto& table = Tables()[base.GetUid()];
    const auto it = table.find(name);
    if (it != table.end() && it->second == tid)
    {
        Repeats().push_back("'" + name + "' (" + tid.GetName() + ")");
        return;
    }
    if (it != table.end())
    {
        // First come, first kept: a plugin must not change what a built-in name means.
        Refusals().push_back("'" + name + "' is already registered as a " + base.GetName() + " ("
                             + it->second.GetName() + "); " + tid.GetName()
                             + " needs a name of its own");
        return;
    }
    if (!tid.HasConstructor())
    {
        Refusals().push_back(tid.GetName() + " (registered as '" + name
                             + "') has no constructor: its GetTypeId needs "
                               ".AddConstructor<...>()");
        return;
    }
    table[name] = tid;
}

std::vector<std::string>
TypeRegistryBase::TakeRefusals()
{
    std::vector<std::string> taken;
    taken.swap(Refusals());
    return taken;
}

std::vector<std::string>
TypeRegistryBase::TakeRepeats()
{
    std::vector<std::string> taken;
    taken.swap(Repeats());
    return taken;
}

std::vector<std::string>
TypeRegistryBase::Names(TypeId base)
{
    std::vector<std::string> names;
    for (const auto& [name, tid] : Tables()[base.GetUid()])
    {
        names.push_back(name);
    }
    return names;
}

bool
TypeRegistryBase::Find(TypeId base, const std::string& name, TypeId& tid)
{
    const auto& table = Tables()[base.GetUid()];
    auto it = table.find(name);
    if (it != table.end())
    {
        tid = it->second;
        return true;
    }
    return TypeId::LookupByNameFailSafe(name, &tid) && tid.IsChildOf(base) && tid != base
           && tid.HasConstructor();
}

TypeId
TypeRegistryBase::Lookup(TypeId base,
                         const std::string& name,
                         const std::string& field,
                         const std::string& what)
{
    // A refused registration compiled into a script: choosing any extension reports it, as
    // --load does a library's (the script would run a built-in of that name, or none).
    const std::string refused = RefusedMessage();
    if (!refused.empty())
    {
        throw SpecError("", field, refused);
    }
    TypeId tid;
    if (!Find(base, name, tid))
    {
        throw SpecError("", field, UnknownMessage(base, name, what));
    }
    return tid;
}

std::string
TypeRegistryBase::Unknown(const std::string& baseName,
                          const std::string& name,
                          const std::string& what)
{
    const std::string refused = RefusedMessage();
    if (!refused.empty())
    {
        return refused;
    }
    TypeId base;
    TypeId tid;
    if (!TypeId::LookupByNameFailSafe(baseName, &base) || Find(base, name, tid))
    {
        return "";
    }
    return UnknownMessage(base, name, what);
}

} // namespace rapidllm
} // namespace ns3
