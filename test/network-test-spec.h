/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_NETWORK_TEST_SPEC_H
#define RAPIDLLM_NETWORK_TEST_SPEC_H

#include "ns3/network-spec.h"

#include <string>
#include <vector>

namespace ns3 {
namespace rapidllm {

/**
 * \brief A one-dimension network spec for tests: `OneDimension(kind, size, GB/s, ns)` with
 * optional settings chained, e.g. `.Shape({4, 4}).Routing("shortest-path")`. Defaults: no
 * switch delay, wire efficiency 1, dimension-order routing.
 */
class OneDimension
{
  public:
    /**
     * \param kind the wiring \param size endpoints \param bandwidthGBps per link and direction
     * \param latencyNs per link
     */
    OneDimension(TopologyKind kind, uint32_t size, double bandwidthGBps, double latencyNs)
    {
        NetworkDimensionSpec d;
        d.name = "net";
        d.kind = kind;
        d.size = size;
        d.bandwidthBps = bandwidthGBps * 1e9;
        d.latencyS = latencyNs * 1e-9;
        m_spec.dimensions.push_back(d);
        m_spec.routing = "dimension-order";
    }

    /** \param shape mesh/torus extents \return this */
    OneDimension&
    Shape(const std::vector<uint32_t>& shape)
    {
        m_spec.dimensions[0].shape = shape;
        return *this;
    }

    /** \param ns delay of each switch traversed \return this */
    OneDimension&
    SwitchNs(double ns)
    {
        m_spec.dimensions[0].switchLatencyS = ns * 1e-9;
        return *this;
    }

    /** \param efficiency payload fraction of the line rate \return this */
    OneDimension&
    Efficiency(double efficiency)
    {
        m_spec.dimensions[0].wireEfficiency = efficiency;
        return *this;
    }

    /** \param name routing policy \return this */
    OneDimension&
    Routing(const std::string& name)
    {
        m_spec.routing = name;
        return *this;
    }

    /** \return the spec */
    operator NetworkSpec() const
    {
        return m_spec;
    }

  private:
    NetworkSpec m_spec; //!< the spec being built
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_NETWORK_TEST_SPEC_H
