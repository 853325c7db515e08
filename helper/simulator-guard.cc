/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "simulator-guard.h"

#include "ns3/simulator.h"
#include "packet-resolution.h"

namespace ns3 {
namespace rapidllm {

SimulatorGuard::SimulatorGuard()
{
    NoteSimulation();
}

SimulatorGuard::~SimulatorGuard()
{
    for (auto it = m_objects.rbegin(); it != m_objects.rend(); ++it)
    {
        (*it)->Dispose();
    }
    m_objects.clear();
    Simulator::Destroy();
}

void
SimulatorGuard::Dispose(Ptr<Object> object)
{
    m_objects.push_back(object);
}

} // namespace rapidllm
} // namespace ns3
