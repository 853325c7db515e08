/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_TOPOLOGY_H
#define RAPIDLLM_TOPOLOGY_H

#include "ns3/network-spec.h"
#include "ns3/network-view.h"
#include "ns3/object.h"

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief A node of the network graph: an endpoint (GPU) or a switch.
 *
 * Endpoints are numbered 0..E-1 (the endpoint index is the rank), switches follow.
 */
struct TopologyNode
{
    std::string name;      //!< "gpu12", "nvlink.sw0", "infiniband.leaf3.1", "infiniband.spine3.0"
    bool isSwitch = false; //!< false for endpoints
    double switchLatencyS = 0; //!< forwarding delay of a switch, seconds
    uint32_t dimension = 0;    //!< dimension a switch belongs to (endpoints: 0)
};

/**
 * \ingroup rapid-llm
 * \brief A directed link with its payload bandwidth, latency and fault state.
 *
 * Every physical connection is two TopologyLinks, one per direction, so that faults and
 * statistics can be per direction.
 */
struct TopologyLink
{
    uint32_t src = 0;        //!< tail node
    uint32_t dst = 0;        //!< head node
    uint32_t dimension = 0;  //!< the network dimension it belongs to
    double lineRateBps = 0;  //!< line rate, bytes/s
    double efficiency = 1.0; //!< payload fraction of the line rate (wire efficiency)
    double latencyS = 0;     //!< propagation + port delay, seconds
    double factor = 1.0;     //!< fault factor in [Topology::kMinLinkFactor, 1]; 0 = dead (hard)

    /** \return the payload bandwidth available now: line rate x efficiency x factor (bytes/s) */
    double
    Bandwidth() const
    {
        return lineRateBps * efficiency * factor;
    }

    /** \return false if a hard fault removed the link */
    bool
    IsAlive() const
    {
        return factor > 0;
    }
};

/**
 * \ingroup rapid-llm
 * \brief The cluster network as an explicit graph of endpoints, switches and directed links,
 * built from the hardware's network dimensions (innermost first).
 *
 * Endpoint r has one coordinate per dimension, r = c0 + s0 * (c1 + s1 * (c2 + ...)). The
 * endpoints that share every coordinate but dimension d form one "instance" of dimension d and
 * are wired by its kind (ring, fully connected, switch, mesh, torus, two-tier fat tree). Both
 * network backends (flow and packet level) and every RoutingPolicy consume this one graph.
 */
class Topology
    : public Object
    , public NetworkView
{
  public:
    /** \brief Register this type. \return the TypeId */
    static TypeId GetTypeId();

    Topology();
    ~Topology() override;

    /** The most GPUs a network may have (a resource guard: about 2.2 KB of host each). */
    static constexpr uint64_t kMaxEndpoints = uint64_t(1) << 22;
    /**
     * \brief Refuses, before anything is allocated, a network too big for the host.
     * \param endpoints GPUs asked for \param source where the request came from (for errors)
     * Throws SpecError (field gpus) with the estimated memory above kMaxEndpoints.
     */
    static void CheckEndpoints(uint64_t endpoints, const std::string& source);
    /**
     * \brief Builds the graph of a network spec, then applies the spec's faults.
     * \param spec the network section of a hardware spec
     * \param endpoints endpoints needed; an `auto` outermost dimension is sized to hold them
     *        (0 = the fixed size; then no dimension may be `auto`)
     * \param source file name used in error messages
     * \return the topology; throws SpecError when the spec cannot hold \p endpoints
     */
    static Ptr<Topology> Build(const NetworkSpec& spec,
                               uint64_t endpoints,
                               const std::string& source = "network");

    /** \return the number of endpoints (GPUs), a multiple of the inner dimension sizes */
    uint32_t GetEndpointCount() const override;
    /** \return endpoints plus switches */
    uint32_t GetNodeCount() const;
    /** \return the number of directed links */
    uint32_t GetLinkCount() const;
    /** \return a node */
    const TopologyNode& GetNode(uint32_t node) const;
    /** \return a link */
    const TopologyLink& GetLink(uint32_t link) const;
    /** \return the links leaving a node, in construction order */
    const std::vector<uint32_t>& GetOutLinks(uint32_t node) const;
    /** \return the first link from \p a to \p b (dead or alive), or UINT32_MAX */
    uint32_t FindLink(uint32_t a, uint32_t b) const;

    /** \return the number of dimensions */
    uint32_t GetDimensionCount() const override;
    /** \return a dimension's spec, with its size resolved */
    const NetworkDimensionSpec& GetDimension(uint32_t d) const override;
    /** \return the coordinate of an endpoint along a dimension */
    uint32_t GetCoordinate(uint32_t endpoint, uint32_t d) const override;
    /** \return the endpoint whose coordinate along \p d is replaced by \p c */
    uint32_t WithCoordinate(uint32_t endpoint, uint32_t d, uint32_t c) const;
    /** \return the instance index of dimension \p d that holds \p endpoint */
    uint32_t GetInstance(uint32_t endpoint, uint32_t d) const override;
    /**
     * \return the switches of one instance of dimension d: the switch (switch kind), or the
     * leaves followed by the spines (fat tree); empty for switchless kinds
     */
    const std::vector<uint32_t>& GetInstanceSwitches(uint32_t d, uint32_t instance) const;
    /** \return fat tree: endpoints per leaf of dimension d (0 for other kinds) */
    uint32_t GetLeafSize(uint32_t d) const;
    /** \return fat tree: leaves per instance of dimension d */
    uint32_t GetLeafCount(uint32_t d) const;

    /**
     * \brief Finds a node by name ("gpu3", "3", "nvlink.sw0").
     * \param name the name \param[out] node its id
     * \return false if there is no such node
     */
    bool FindNode(const std::string& name, uint32_t& node) const;
    /**
     * \return a node id by name ("gpu3", "3", "nvlink.sw0"); throws SpecError naming \p source
     * and \p field if unknown
     */
    uint32_t LookupNode(const std::string& name,
                        const std::string& source,
                        const std::string& field = "faults.link") const;

    /**
     * The smallest soft-fault factor. A link slowed further (1e-12 of 25 GB/s moves 0.025 B/s)
     * would take longer than the simulator's clock can count (2^63 ns, 292 years) for an
     * ordinary message; such a factor is a typo or a dead link, so it is rejected: use 0.
     */
    static constexpr double kMinLinkFactor = 1e-6;

    /**
     * \brief Checks a fault factor: 0 (dead) or in [kMinLinkFactor, 1].
     * \param factor the factor
     * \param what the selector or link it is for, named in the error
     * \param source where it came from (file, "command line")
     * Throws SpecError (field faults.bandwidth_factor) naming \p what and the allowed values.
     */
    static void CheckLinkFactor(double factor, const std::string& what, const std::string& source);

    /**
     * \brief Sets a link's fault factor: 1 healthy, [kMinLinkFactor, 1) degraded (soft), 0 dead
     * (hard).
     * \param link the directed link
     * \param factor 0 or a factor in [kMinLinkFactor, 1]; anything else is a SpecError
     */
    void SetLinkFactor(uint32_t link, double factor);

    /**
     * \brief The directed links a fault selector names: "A-B" (both directions between nodes A
     * and B), "A>B" (one direction), "A" (every link to and from node A, e.g. a switch down)
     * or "tier:NAME" (every link of the network dimension NAME, e.g. "tier:infiniband").
     * Nodes are named as LookupNode accepts. Changes nothing.
     * \param selector the link selector
     * \param source where the selector came from, for errors
     * \param field the field errors name (a fault's link, a capture's PcapLinks)
     * \return the links (not empty); throws SpecError when the selector is malformed, names an
     *         unknown node or no link matches (listing the node's neighbours)
     */
    std::vector<uint32_t> SelectLinks(const std::string& selector,
                                      const std::string& source,
                                      const std::string& field = "faults.link") const;

    /**
     * \brief Applies a fault given by a selector (see SelectLinks).
     * \param selector the link selector
     * \param factor 0 (dead) or a bandwidth factor in [kMinLinkFactor, 1]
     * \param source where the selector came from, for errors
     * \return the directed links changed; throws SpecError when no link matches or the factor
     *         is out of range (naming the selector), changing nothing then
     */
    std::vector<uint32_t> ApplyFault(const std::string& selector,
                                     double factor,
                                     const std::string& source);

    /** \return whether any link is degraded or dead */
    bool HasFaults() const override;

    /** \return a counter bumped by every fault change (lets routing caches invalidate) */
    uint64_t GetVersion() const;
    /** \return an id unique to this topology object in the process (for routing caches) */
    uint64_t GetUid() const;

    /** \return sum of link latencies plus the switch delay of every switch traversed */
    double PathLatency(const std::vector<uint32_t>& path) const;
    /** \return the latency of the path of \p length links at \p path (see above) */
    double PathLatency(const uint32_t* path, std::size_t length) const;
    /** \return the smallest payload bandwidth along a path (bytes/s) */
    double PathBandwidth(const std::vector<uint32_t>& path) const;
    /** \return "gpu0>nvlink.sw0>gpu1" */
    std::string DescribePath(const std::vector<uint32_t>& path) const;
    /** \return "gpu0>nvlink.sw0" */
    std::string DescribeLink(uint32_t link) const;

  private:
    /** \brief Adds one node. \return its id */
    uint32_t AddNode(const std::string& name, bool isSwitch, double switchLatency, uint32_t d);
    /** \brief Adds the two directed links joining a and b with one dimension's parameters */
    void AddDuplex(uint32_t a, uint32_t b, uint32_t d, double lineRateBps);
    /** \brief Builds m_outByHead (FindLink's index) once the links are wired */
    void IndexLinks();
    /** \brief Wires one instance of dimension d whose members are \p members (by coordinate) */
    void WireInstance(uint32_t d, uint32_t instance, const std::vector<uint32_t>& members);

    std::vector<NetworkDimensionSpec> m_dims; //!< resolved dimensions
    std::vector<uint32_t> m_strides;          //!< rank stride per dimension
    uint32_t m_endpoints = 0;                 //!< endpoint count
    std::vector<TopologyNode> m_nodes;        //!< all nodes
    std::vector<TopologyLink> m_links;        //!< all directed links
    std::vector<std::vector<uint32_t>> m_out; //!< out-links per node
    std::vector<std::vector<std::pair<uint32_t, uint32_t>>> m_outByHead; //!< (head, link) sorted
    std::vector<std::vector<std::vector<uint32_t>>> m_switches; //!< [dim][instance] switches
    std::vector<uint32_t> m_leafSize;         //!< fat tree leaf size per dimension
    std::vector<uint32_t> m_leafCount;        //!< fat tree leaves per instance
    std::map<std::string, uint32_t> m_byName; //!< node lookup
    uint64_t m_uid = 0;                       //!< unique id, see GetUid()
    uint64_t m_version = 0;                   //!< fault change counter
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_TOPOLOGY_H
