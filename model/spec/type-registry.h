/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_TYPE_REGISTRY_H
#define RAPIDLLM_TYPE_REGISTRY_H

#include "ns3/object-factory.h"
#include "ns3/ptr.h"
#include "ns3/type-id.h"

#include <string>
#include <vector>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief Short names ("ecmp", "flow", "ring") for the subclasses of one extension point,
 * so that hardware files, scenario scripts and the command line choose them by name.
 *
 * Every extension point (routing policies, network backends, collective algorithms) uses it the
 * same way: a researcher writes a subclass with a TypeId and adds one line,
 * `static TypeRegistrar<RoutingPolicy> g_mine("mine", MyPolicy::GetTypeId());`, in their own file
 * or shared library; nothing of ours is edited. The registry is keyed by the base class's TypeId,
 * so one table serves a base across the library and every plugin loaded into the process.
 */
class TypeRegistryBase
{
  public:
    /**
     * \brief Registers \p name for \p tid under the extension point \p base. A name already
     * registered for another type (a plugin reusing "ring"), or a type without a constructor
     * (no AddConstructor), is not registered: the refusal is kept for TakeRefusals, as it
     * happens while a library loads, where nothing can be thrown.
     */
    static void Register(TypeId base, const std::string& name, TypeId tid);
    /**
     * \return the registrations refused since the last call (each a sentence naming the name,
     * the extension point and why), and forgets them: a plugin loader reports them as errors
     */
    static std::vector<std::string> TakeRefusals();
    /**
     * \return the names registered again for the type they already had since the last call
     * (each "'name' (TypeId name)"), and forgets them. Two shared libraries that define one
     * TypeId (two builds of one plugin) do that: the dynamic linker binds the second's to the
     * first's code, so a loader reports them as errors.
     */
    static std::vector<std::string> TakeRepeats();
    /** \return the short names registered under \p base, sorted */
    static std::vector<std::string> Names(TypeId base);
    /**
     * \brief Finds a subclass by short name or by its TypeId name.
     * \param base the extension point \param name the name \param[out] tid the subclass
     * \return false if \p name is neither a registered name nor a constructible subclass of base
     */
    static bool Find(TypeId base, const std::string& name, TypeId& tid);
    /**
     * \brief Like Find, but throws SpecError naming \p field, the unknown \p name and the known
     * names. \param what the extension point in words ("routing policy")
     * \return the subclass
     */
    static TypeId Lookup(TypeId base,
                         const std::string& name,
                         const std::string& field,
                         const std::string& what);
    /**
     * \brief For spec readers, which name an extension point's subclass before any of its code
     * is included: checks \p name against the extension point whose base TypeId is named
     * \p baseName. \param what the extension point in words
     * \return "" when \p name is known (or the extension point is not linked in, so that the
     * layer that uses it checks it), else Lookup()'s message
     */
    static std::string Unknown(const std::string& baseName,
                               const std::string& name,
                               const std::string& what);
};

/**
 * \ingroup rapid-llm
 * \brief The registry of one extension point's base class \p Base (which has GetTypeId()).
 */
template<typename Base>
class TypeRegistry
{
  public:
    /** \brief Registers a short name. \param name the name \param tid the subclass's TypeId */
    static void
    Register(const std::string& name, TypeId tid)
    {
        TypeRegistryBase::Register(Base::GetTypeId(), name, tid);
    }

    /** \return the registered short names, sorted */
    static std::vector<std::string>
    Names()
    {
        return TypeRegistryBase::Names(Base::GetTypeId());
    }

    /** \return whether \p name is a registered short name or a subclass's TypeId name */
    static bool
    Has(const std::string& name)
    {
        TypeId tid;
        return TypeRegistryBase::Find(Base::GetTypeId(), name, tid);
    }

    /**
     * \brief Creates the subclass named \p name (short name or TypeId name).
     * \param name the name \param field the spec field or setting it came from, for errors
     * \param what the extension point in words, for errors
     * \return a new object; throws SpecError listing the known names
     */
    static Ptr<Base>
    Create(const std::string& name, const std::string& field, const std::string& what)
    {
        ObjectFactory factory;
        factory.SetTypeId(TypeRegistryBase::Lookup(Base::GetTypeId(), name, field, what));
        return factory.Create<Base>();
    }
};

/**
 * \ingroup rapid-llm
 * \brief Registers a short name at static-initialization time, from the subclass's own file:
 * `static TypeRegistrar<NetworkBackend> g_flow("flow", FlowNetwork::GetTypeId());`
 */
template<typename Base>
class TypeRegistrar
{
  public:
    /** \param name the short name \param tid the subclass's TypeId */
    TypeRegistrar(const std::string& name, TypeId tid)
    {
        TypeRegistry<Base>::Register(name, tid);
    }
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_TYPE_REGISTRY_H
