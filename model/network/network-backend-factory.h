/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_NETWORK_BACKEND_FACTORY_H
#define RAPIDLLM_NETWORK_BACKEND_FACTORY_H

#include "ns3/callback.h"
#include "ns3/network-backend.h"

#include <string>
#include <utility>
#include <vector>

namespace ns3 {
namespace rapidllm {

/**
 * \brief Makes a network backend chosen by name, so that every command takes `--backend`.
 * \param name "flow" (FlowNetwork), "packet" (PacketNetwork) or the TypeId name of any
 *        NetworkBackend subclass
 * \return the backend (topology and routing still to be set); throws SpecError listing the
 *         known names
 */
Ptr<NetworkBackend> CreateNetworkBackend(const std::string& name);

/** \return the short backend names: flow, packet */
std::vector<std::string> NetworkBackendNames();

/**
 * \brief Calls \p start once the backend is ready to carry traffic between \p pairs without
 * set-up cost: at once for the flow network; for the packet network after the pairs' TCP
 * connections are open (PacketNetwork::Preconnect). Measure a workload from the time
 * \p start runs. Call before or during Simulator::Run().
 * \param backend the backend (topology and routing set)
 * \param pairs the (source, destination) endpoint pairs the workload will use (may be empty:
 *        connections then open at each pair's first message and pay a handshake)
 * \param start called as a simulator event
 */
void StartWhenReady(Ptr<NetworkBackend> backend,
                    const std::vector<std::pair<uint32_t, uint32_t>>& pairs,
                    Callback<void> start);

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_NETWORK_BACKEND_FACTORY_H
