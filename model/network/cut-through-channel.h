/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_CUT_THROUGH_CHANNEL_H
#define RAPIDLLM_CUT_THROUGH_CHANNEL_H

#include "ns3/point-to-point-channel.h"
#include "ns3/point-to-point-net-device.h"

#include <array>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief A PointToPoint channel into a cut-through switch: the switch gets a frame once enough
 * of it has arrived that sending it on will not outrun its tail, not once all of it has.
 *
 * NVSwitch and InfiniBand switches cut through; an ns-3 node stores and forwards, which adds a
 * frame's time per switch to every path. Towards a switch whose fastest port sends at R, a
 * frame of B bits that takes T on the wire is handed over T - B / R after its head arrives
 * (at once on a link as fast as the switch's ports, T later, as store-and-forward, never), so
 * the switch's copy leaves as its tail comes in. A frame that finds the port busy waits in the
 * queue as in a real switch; one that finds it just freed may leave up to that much early.
 * The base channel's TxRxPointToPoint trace (NetAnim's) does not fire; the devices' traces do.
 */
class CutThroughChannel : public PointToPointChannel
{
  public:
    /** \return the TypeId */
    static TypeId GetTypeId();

    /**
     * \brief Makes the receiver of device \p device's frames a cut-through switch whose fastest
     * port sends \p portBps bits per second (0: it stores and forwards, the default).
     * \param device 0 or 1, the device as attached \param portBps the rate
     */
    void SetCutThrough(std::size_t device, double portBps);

    bool TransmitStart(Ptr<const Packet> p, Ptr<PointToPointNetDevice> src, Time txTime) override;

  private:
    std::array<double, 2> m_portBps{0, 0}; //!< per sending device: the receiver's port rate
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_CUT_THROUGH_CHANNEL_H
