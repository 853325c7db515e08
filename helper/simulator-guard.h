/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_SIMULATOR_GUARD_H
#define RAPIDLLM_SIMULATOR_GUARD_H

#include "ns3/object.h"
#include "ns3/ptr.h"

#include <vector>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief Ends one simulation however its scope is left (return or exception): disposes the
 * objects handed to Dispose(), last first, then calls Simulator::Destroy().
 *
 * One per simulation run, declared before the run is scheduled:
 * \code
 *   SimulatorGuard guard;
 *   guard.Dispose(backend);
 *   ... Simulator::Run(); read the results ...
 * \endcode
 * replaces the try { Run } catch (...) { Destroy; throw; } Destroy; pattern.
 */
class SimulatorGuard
{
  public:
    SimulatorGuard();
    /** \brief Disposes the registered objects, last first, then destroys the simulator. */
    ~SimulatorGuard();

    SimulatorGuard(const SimulatorGuard&) = delete;
    SimulatorGuard& operator=(const SimulatorGuard&) = delete;

    /**
     * \brief Disposes \p object (Object::Dispose) when the guard ends, before the simulator is
     * destroyed (e.g. a network backend whose sockets hold callbacks into it).
     * \param object the object
     */
    void Dispose(Ptr<Object> object);

  private:
    std::vector<Ptr<Object>> m_objects; //!< disposed at the end, last first
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_SIMULATOR_GUARD_H
