/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "routing-policy.h"

#include "ns3/log.h"
#include "ns3/network-error.h"
#include "ns3/object-factory.h"
#include "ns3/simulator.h"
#include "ns3/spec-reader.h"
#include "ns3/type-registry.h"

#include <map>
#include <sstream>

namespace ns3 {
namespace rapidllm {

NS_LOG_COMPONENT_DEFINE("RapidLlmRoutingPolicy");
NS_OBJECT_ENSURE_REGISTERED(RoutingPolicy);

TypeId
RoutingPolicy::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::rapidllm::RoutingPolicy").SetParent<Object>().SetGroupName("RapidLlm");
    return tid;
}

RoutingPolicy::RoutingPolicy() = default;
RoutingPolicy::~RoutingPolicy() = default;

bool
RoutingPolicy::KeepsDimensions() const
{
    return false;
}

bool
RoutingPolicy::RoutesPerFlow() const
{
    return true;
}

bool
RoutingPolicy::RoutesSymmetrically(const Topology& /* topology */) const
{
    // A policy that does not say otherwise may route anywhere (non-minimal, by a hash of the
    // flow): replaying every rank is always right.
    return false;
}

bool
RoutingPolicy::HasOneMinimalPath(const Topology& topology)
{
    for (uint32_t d = 0; d < topology.GetDimensionCount(); ++d)
    {
        switch (topology.GetDimension(d).kind)
        {
            case TopologyKind::SWITCH:
            case TopologyKind::FULLY_CONNECTED:
                break;
            case TopologyKind::FAT_TREE:
            {
                // Leaves, then spines: a choice of spine only with several of each.
                const uint32_t leaves = topology.GetLeafCount(d);
                const auto switches = topology.GetInstanceSwitches(d, 0).size();
                if (leaves > 1 && switches > leaves + 1)
                {
                    return false;
                }
                break;
            }
            default:
                return false; // rings, meshes and tori: ties between minimal paths
        }
    }
    return true;
}

std::vector<uint32_t>
RoutingPolicy::Route(const Topology& topology, uint32_t src, uint32_t dst, uint64_t flowId)
{
    if (src >= topology.GetNodeCount() || dst >= topology.GetNodeCount())
    {
        throw NetworkError("node " + std::to_string(std::max(src, dst)) + " does not exist ("
                           + std::to_string(topology.GetNodeCount()) + " nodes)");
    }
    if (src == dst)
    {
        return {};
    }
    std::vector<uint32_t> path = DoRoute(topology, src, dst, flowId);
    if (path.empty())
    {
        std::vector<uint32_t> dead;
        for (uint32_t l = 0; l < topology.GetLinkCount(); ++l)
        {
            if (!topology.GetLink(l).IsAlive())
            {
                dead.push_back(l);
            }
        }
        if (dead.empty())
        {
            // Every link is up, and the built topologies join every pair: the policy's fault.
            throw NetworkError("routing " + DescribePolicy() + " returned no path from "
                               + topology.GetNode(src).name + " to " + topology.GetNode(dst).name
                               + " though no link is down: a policy's DoRoute must return a path "
                                 "between any two nodes the network joins");
        }
        // Which links are down, and when: a fault that starts mid-run (--fault=LINK:0@TIME)
        // stops the run at the first message it leaves without a path, which reads otherwise
        // as a fault of the network's shape.
        std::string down;
        for (std::size_t i = 0; i < dead.size() && i < 3; ++i)
        {
            down += (i > 0 ? ", " : "") + topology.DescribeLink(dead[i]);
        }
        if (dead.size() > 3)
        {
            down += " and " + std::to_string(dead.size() - 3) + " more";
        }
        throw NetworkError("no path from " + topology.GetNode(src).name + " to "
                           + topology.GetNode(dst).name + " over the surviving links (routing "
                           + DescribePolicy() + ") " + SimulatedTimeText() + ", with " + down
                           + " down; the pair is unreachable (a policy that finds detours, "
                             "such as shortest-path, needs a topology that has one)");
    }
    CheckPath(topology, src, dst, path);
    return path;
}

std::string
RoutingPolicy::SimulatedTimeText()
{
    std::ostringstream now;
    now << "at " << Simulator::Now().GetSeconds() << " s of simulated time";
    return now.str();
}

std::string
RoutingPolicy::DescribePolicy() const
{
    const TypeId tid = GetInstanceTypeId();
    for (const auto& name : Names())
    {
        TypeId registered;
        if (TypeRegistryBase::Find(RoutingPolicy::GetTypeId(), name, registered)
            && registered == tid)
        {
            return "'" + name + "' (" + tid.GetName() + ")";
        }
    }
    return tid.GetName();
}

void
RoutingPolicy::CheckPath(const Topology& topology,
                         uint32_t src,
                         uint32_t dst,
                         const std::vector<uint32_t>& path) const
{
    const auto fail = [&](uint32_t index, const std::string& why)
    {
        throw NetworkError("the routing policy " + DescribePolicy() + " returned a bad path from "
                           + topology.GetNode(src).name + " to " + topology.GetNode(dst).name
                           + ": link " + std::to_string(index) + " of "
                           + std::to_string(path.size()) + " (id " + std::to_string(path[index])
                           + ") " + why
                           + "; a path must be link ids of the topology, each starting where the "
                             "previous one ends, from the source to the destination over "
                             "surviving links");
    };
    const auto links = topology.GetLinkCount();
    uint32_t at = src;
    for (uint32_t i = 0; i < path.size(); ++i)
    {
        const uint32_t l = path[i];
        if (l >= links)
        {
            fail(i, "does not exist (the topology has " + std::to_string(links) + " links)");
        }
        const TopologyLink& link = topology.GetLink(l);
        if (link.src != at)
        {
            fail(i,
                 "is " + topology.DescribeLink(l) + ", which does not start at "
                     + topology.GetNode(at).name
                     + (i == 0 ? std::string(" (the source)")
                               : " (where link " + std::to_string(i - 1) + " ends)"));
        }
        if (!link.IsAlive())
        {
            fail(i, "is the dead link " + topology.DescribeLink(l));
        }
        at = link.dst;
    }
    if (at != dst)
    {
        fail(static_cast<uint32_t>(path.size() - 1),
             "ends at " + topology.GetNode(at).name + ", not at the destination");
    }
}

void
RoutingPolicy::Register(const std::string& name, TypeId tid)
{
    TypeRegistry<RoutingPolicy>::Register(name, tid);
}

std::vector<std::string>
RoutingPolicy::Names()
{
    return TypeRegistry<RoutingPolicy>::Names();
}

Ptr<RoutingPolicy>
RoutingPolicy::Create(const std::string& name)
{
    return TypeRegistry<RoutingPolicy>::Create(name, "routing", "routing policy");
}

RoutingPolicyRegistrar::RoutingPolicyRegistrar(const std::string& name, TypeId tid)
{
    RoutingPolicy::Register(name, tid);
}

uint64_t
FlowHash(uint64_t src, uint64_t dst, uint64_t flowId, uint64_t salt)
{
    // splitmix64 finalizer (Steele, Lea, Flood 2014) over the combined key.
    uint64_t x = src * 0x9E3779B97F4A7C15ull ^ (dst + 0x632BE59BD9B4E019ull) * 0xBF58476D1CE4E5B9ull
                 ^ (flowId + 1) * 0x94D049BB133111EBull ^ salt * 0xD6E8FEB86659FD93ull;
    x ^= x >> 30;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 27;
    x *= 0x94D049BB133111EBull;
    x ^= x >> 31;
    return x;
}

} // namespace rapidllm
} // namespace ns3
