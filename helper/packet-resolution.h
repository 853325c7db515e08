/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_PACKET_RESOLUTION_H
#define RAPIDLLM_PACKET_RESOLUTION_H

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief Switches the simulator to picoseconds, once, for a process that runs the packet
 * network: ns-3 rounds each frame's transmission time to the resolution, and at nanoseconds a
 * 576-byte frame at 240 GB/s (2.4 ns) took 2 ns, a send 10% faster than the link allows. The
 * replay watchdog's MaxSimulatedTime is lowered to 10^6 s where above (picoseconds wrap after
 * 106 days).
 *
 * Call it before the process's first simulation (ns-3 converts the Time values created so far,
 * e.g. attribute defaults, only until the simulator starts). A call after a simulation this
 * library started (NoteSimulation) throws Error; after one a script started itself, ns-3 aborts.
 */
void UsePicoseconds();

/**
 * \ingroup rapid-llm
 * \brief Records that the process has started a simulation (RapidLlmHelper::Install, a
 * SimulatorGuard), after which UsePicoseconds() is refused.
 */
void NoteSimulation();

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_PACKET_RESOLUTION_H
