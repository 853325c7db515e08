/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// Built with the flags of rapid-llm.pc only: lists the job options a script's CommandLine gets
// and the registered network backends and routing policies.

#include "ns3/job-options.h"
#include "ns3/network-backend.h"
#include "ns3/routing-policy.h"

#include <iostream>

using namespace ns3::rapidllm;

int
main()
{
    std::cout << JobOptions::GetDeclarations().size() << " job options, backends:";
    for (const auto& name : NetworkBackend::Names())
    {
        std::cout << " " << name;
    }
    std::cout << ", routing:";
    for (const auto& name : RoutingPolicy::Names())
    {
        std::cout << " " << name;
    }
    std::cout << "\n";
    return JobOptions::Find("tp") != nullptr && !NetworkBackend::Names().empty() ? 0 : 1;
}
