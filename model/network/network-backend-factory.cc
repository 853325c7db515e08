/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "network-backend-factory.h"

#include "ns3/flow-network.h"
#include "ns3/object-factory.h"
#include "ns3/packet-network.h"
#include "ns3/simulator.h"
#include "ns3/spec-error.h"

namespace ns3 {
namespace rapidllm {

std::vector<std::string>
NetworkBackendNames()
{
    return {"flow", "packet"};
}

Ptr<NetworkBackend>
CreateNetworkBackend(const std::string& name)
{
    if (name == "flow")
    {
        return CreateObject<FlowNetwork>();
    }
    if (name == "packet")
    {
        return CreateObject<PacketNetwork>();
    }
    TypeId tid;
    if (TypeId::LookupByNameFailSafe(name, &tid) && tid.IsChildOf(NetworkBackend::GetTypeId())
        && tid.HasConstructor())
    {
        ObjectFactory factory(name);
        return factory.Create<NetworkBackend>();
    }
    throw SpecError("",
                    "backend",
                    "unknown network backend '" + name
                        + "'; use flow, packet or the TypeId name of a NetworkBackend subclass");
}

void
StartWhenReady(Ptr<NetworkBackend> backend,
               const std::vector<std::pair<uint32_t, uint32_t>>& pairs,
               Callback<void> start)
{
    Ptr<PacketNetwork> packet = DynamicCast<PacketNetwork>(backend);
    if (packet)
    {
        packet->Preconnect(pairs, start);
        return;
    }
    Simulator::ScheduleNow(start);
}

} // namespace rapidllm
} // namespace ns3
