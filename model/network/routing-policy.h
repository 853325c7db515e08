/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_ROUTING_POLICY_H
#define RAPIDLLM_ROUTING_POLICY_H

#include "ns3/object.h"
#include "ns3/topology.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief Chooses the path (a list of directed link ids) of a flow over a Topology as it is,
 * faults included.
 *
 * Written once, it drives both network backends: the flow network uses the paths directly and
 * the packet backend installs them into ns-3 routing. A policy is an ns-3 Object with a TypeId;
 * subclasses register a short name (RoutingPolicy::Register, or a static
 * RoutingPolicyRegistrar) so that hardware files and scenario scripts choose them by name, and
 * a researcher adds one in their own code without touching ours.
 */
class RoutingPolicy : public Object
{
  public:
    /** \brief Register this type. \return the TypeId */
    static TypeId GetTypeId();

    RoutingPolicy();
    ~RoutingPolicy() override;

    /**
     * \brief The path of one flow.
     * \param topology the network, faults included
     * \param src source endpoint (or node)
     * \param dst destination endpoint (or node)
     * \param flowId identifies the flow (hash input for multipath policies): a name of the
     *        logical message where the sender gives one (NetworkBackend::Send), else its
     *        message id
     * \return the links in order (empty when src == dst); throws NetworkError naming the pair when
     *         no path over surviving links exists, and naming the policy, the pair and the bad
     *         link when DoRoute returns a path that is not one: a link id out of range, a link
     *         that does not start where the previous one ends (or at \p src), a dead link, or a
     *         path that does not end at \p dst
     */
    std::vector<uint32_t> Route(const Topology& topology,
                                uint32_t src,
                                uint32_t dst,
                                uint64_t flowId);

    /**
     * \brief Makes a policy chosen by name: a registered short name ("ecmp") or a TypeId
     * name ("ns3::rapidllm::EcmpRouting") of a RoutingPolicy subclass.
     * \param name the name
     * \return the policy; throws SpecError listing the known names
     */
    static Ptr<RoutingPolicy> Create(const std::string& name);

    /**
     * \brief Registers a short name for a RoutingPolicy subclass.
     * \param name the short name used in hardware files ("shortest-path")
     * \param tid the subclass's TypeId (must have a constructor)
     */
    static void Register(const std::string& name, TypeId tid);

    /** \return the registered short names, sorted */
    static std::vector<std::string> Names();

    /**
     * \brief Whether the policy keeps paths inside their dimensions whatever the faults: a
     * path between endpoints that differ in some dimensions uses only links of those
     * dimensions, and a fault moves a path only within the dimension it lies in (never onto
     * another dimension's links). Then a fault outside dimension d leaves what runs on d's
     * links unchanged (NetworkBackend::FaultsSpareDimension). The default is false (a policy
     * may detour anywhere); dimension-order routing keeps dimensions.
     * \return true if it does
     */
    virtual bool KeepsDimensions() const;

    /**
     * \brief Whether the path of a pair may depend on the flow (its id), as ECMP hashes it.
     * A backend reserves the links of a set of pairs (NetworkBackend::Reserve) only when it
     * does not: then the links routed now are those every later message between the pairs
     * takes. The default is true; dimension-order and shortest-path routing choose one path
     * per pair.
     * \return true if two flows between the same endpoints may take different paths
     */
    virtual bool RoutesPerFlow() const;

    /**
     * \brief Whether moving every rank along a parallel axis (a translation that maps the
     * topology onto itself) moves every pair's path with it, whatever the flow id, so that a
     * replay may simulate one rank per set of symmetric copies (SymmetryPlan).
     *
     * A folded replay times only the representatives and takes each copy's messages to run as
     * its representative's do, so a policy that answers true must route a pair and its
     * translated pair alike for any flow id. The default is false: a
     * policy that does not declare the property (a researcher's own, say a Valiant policy that
     * hashes the flow to an intermediate GPU) replays every rank, which is always right and only
     * slower. Dimension-order routing returns true everywhere; ECMP, shortest-path and
     * fault-aware routing return HasOneMinimalPath(topology): hashing (ECMP) and spreading by
     * endpoint index (shortest-path) pick different spines for the moved pairs where there is a
     * choice. A minimal policy of one's own may do the same.
     * \param topology the network
     * \return true if the replay may fold symmetric copies under this policy
     */
    virtual bool RoutesSymmetrically(const Topology& topology) const;

    /**
     * \brief Whether \p topology offers no choice among shortest paths: every dimension is a
     * switch, a full mesh, or a fat tree with one leaf or one spine. On such a topology every
     * minimal policy (one that only ever takes a shortest path) routes symmetrically, whatever
     * the flow; a non-minimal one (Valiant) need not.
     * \param topology the network
     * \return true if every pair has one shortest path
     */
    static bool HasOneMinimalPath(const Topology& topology);

  protected:
    /**
     * \return the policy's registered short name and TypeId name ("'ecmp'
     * (ns3::rapidllm::EcmpRouting)"), or the TypeId name alone if it has no short name
     */
    std::string DescribePolicy() const;

    /**
     * \return "at T s of simulated time": where a route fails, when (a fault that starts
     * mid-run, --fault=LINK@TIME, fails it then)
     */
    static std::string SimulatedTimeText();

    /**
     * \brief The policy itself: return the path from src to dst (src != dst), or an empty
     * vector if dst cannot be reached over surviving links.
     * \param topology the network
     * \param src source node
     * \param dst destination node
     * \param flowId the flow
     * \return the links
     */
    virtual std::vector<uint32_t> DoRoute(const Topology& topology,
                                          uint32_t src,
                                          uint32_t dst,
                                          uint64_t flowId) = 0;

  private:
    /**
     * \brief Throws NetworkError unless \p path is a path of surviving links from \p src to
     * \p dst (see Route).
     * \param topology the network \param src source node \param dst destination node
     * \param path what DoRoute returned (not empty)
     */
    void CheckPath(const Topology& topology,
                   uint32_t src,
                   uint32_t dst,
                   const std::vector<uint32_t>& path) const;
};

/**
 * \ingroup rapid-llm
 * \brief Registers a routing policy's short name at static-initialization time:
 * `static RoutingPolicyRegistrar g_reg("my-policy", MyPolicy::GetTypeId());`
 */
class RoutingPolicyRegistrar
{
  public:
    /**
     * \param name the short name
     * \param tid the policy's TypeId
     */
    RoutingPolicyRegistrar(const std::string& name, TypeId tid);
};

/** \return a well-mixed 64-bit hash of a flow's identity (for ECMP-style choices) */
uint64_t FlowHash(uint64_t src, uint64_t dst, uint64_t flowId, uint64_t salt = 0);

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_ROUTING_POLICY_H
