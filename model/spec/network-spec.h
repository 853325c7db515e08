/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_NETWORK_SPEC_H
#define RAPIDLLM_NETWORK_SPEC_H

#include <cstdint>
#include <string>
#include <vector>

namespace ns3 {
namespace rapidllm {

class SpecReader;

/**
 * \ingroup rapid-llm
 * \brief How the endpoints of one network dimension are wired.
 */
enum class TopologyKind
{
    RING,            //!< bidirectional ring
    FULLY_CONNECTED, //!< a direct link between every pair
    SWITCH,          //!< one non-blocking switch (e.g. NVSwitch)
    MESH,            //!< 1D to 3D mesh, extents in NetworkDimensionSpec::shape
    TORUS,           //!< 1D to 3D torus (a ring), extents in NetworkDimensionSpec::shape
    FAT_TREE         //!< two-tier leaf/spine fat tree with an oversubscription ratio
};

/** \return the YAML name ("fat_tree") */
std::string ToString(TopologyKind kind);
/** \return every kind's YAML name */
std::vector<std::string> TopologyKindNames();

/**
 * \ingroup rapid-llm
 * \brief What NCCL's topology search finds on one dimension (its ring graph and NVLink SHARP),
 * as NCCL's tuning model uses it (model/system/nccl-collective.h). Zero channels = not given:
 * the ring's bus bandwidth is then the link's payload rate.
 */
struct NcclGraphSpec
{
    uint32_t ringChannels = 0; //!< ring graph channels (nChannels after NCCL's duplication)
    double channelBps = 0;     //!< bytes/s per ring channel (the graph's bwIntra)
    /** The GPUs' compute capability x10 (80, 90): without ringChannels, NCCL's ring search
     * for that generation derives the graph from the link (SearchNcclRing); 0: not given */
    uint32_t sm = 0;
    double ll128ChannelBps = 0; //!< LL128's ceiling per channel, bytes/s (0 = none)
    bool nvls = false;          //!< NVLink SHARP (multicast and reduction in the switch)
    /** Across the network: a communicator's channels per GPU it has in a node (its rings run
     * through each GPU's NIC), which its kernels' CTAs take SMs for (0: not given) */
    uint32_t channelsPerGpu = 0;

    /** \return true when every field is equal */
    bool operator==(const NcclGraphSpec& other) const;
};

/**
 * \ingroup rapid-llm
 * \brief One dimension of the cluster network, innermost first (e.g. NVSwitch in a node, then the
 * InfiniBand fabric across nodes).
 */
struct NetworkDimensionSpec
{
    std::string name;  //!< e.g. "nvlink"
    uint32_t size = 0; //!< endpoints along this dimension; 0 = sized to fit the job
    TopologyKind kind = TopologyKind::SWITCH; //!< wiring
    std::vector<uint32_t> shape;              //!< mesh/torus extents (product = size)
    double bandwidthBps = 0;                  //!< per link, per direction, bytes/s
    double latencyS = 0;           //!< per link propagation + serialization start, seconds
    double switchLatencyS = 0;     //!< per switch traversed, seconds
    double wireEfficiency = 1.0;   //!< payload fraction of the line rate (headers, encoding)
    double oversubscription = 1.0; //!< fat tree: leaf down-bandwidth / up-bandwidth
    uint32_t leafSize = 0;         //!< fat tree: endpoints per leaf switch (0 = automatic)
    std::string collective;        //!< preferred CollectiveAlgorithm name ("" = the default)
    NcclGraphSpec nccl;            //!< NCCL's graph on this dimension (optional)

    /** \return true when every field is equal (add new fields to it) */
    bool operator==(const NetworkDimensionSpec& other) const;
};

/**
 * \ingroup rapid-llm
 * \brief A link's fault: a bandwidth factor in (0, 1] (soft) or removal (hard).
 *
 * The link is named by its dimension and the two endpoint coordinates it joins, as the
 * topology numbers them (see Topology).
 */
struct LinkFaultSpec
{
    std::string link;    //!< link selector, e.g. "0-1" (endpoint indices) as Topology parses it
    double factor = 1.0; //!< bandwidth factor; 0 means the link is dead

    /** The smallest soft-fault factor: below it a link is dead (factor 0) or an error. */
    static constexpr double kMinFactor = 1e-6;

    /** \return true when every field is equal */
    bool operator==(const LinkFaultSpec& other) const;
};

/**
 * \ingroup rapid-llm
 * \brief The whole cluster network: dimensions innermost first, routing and faults.
 */
struct NetworkSpec
{
    std::vector<NetworkDimensionSpec> dimensions; //!< innermost first
    std::string routing = "shortest-path";        //!< RoutingPolicy name
    std::vector<LinkFaultSpec> faults;            //!< degraded or dead links

    /** \return the product of the fixed dimension sizes (auto dimensions count as 1) */
    uint64_t FixedSize() const;

    /**
     * \brief Reads the "network" mapping of a hardware file.
     * \param reader the mapping
     * \return the spec; throws SpecError on bad input
     */
    static NetworkSpec Read(SpecReader& reader);

    /**
     * \brief Checks the links' numbers against the ranges Read() takes: a spec built in code
     * (RapidLlmHelper::SetHardware) gets the file's errors, not a crash or a runaway.
     * \param source named in errors; throws SpecError naming the field
     */
    void Validate(const std::string& source) const;

    /**
     * \return what a reader of the results should know about fields given but not used: a
     * dimension's nccl section where the dimension does not run nccl (it describes NCCL's graph
     * for that algorithm alone)
     */
    std::vector<std::string> Notes() const;

    /** \return true when every field is equal (add new fields to it) */
    bool operator==(const NetworkSpec& other) const;
    /** \return true when a field differs */
    bool operator!=(const NetworkSpec& other) const;
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_NETWORK_SPEC_H
