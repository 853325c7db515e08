/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_NETWORK_VIEW_H
#define RAPIDLLM_NETWORK_VIEW_H

#include "ns3/network-spec.h"

#include <cstdint>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief The logical network that the system layer (collective algorithms, trace replay) sees:
 * the dimensions with their sizes, kinds and collective algorithms, each endpoint's coordinates,
 * and whether any link is degraded. No links, switches or paths: those stay behind the
 * NetworkBackend interface.
 *
 * Endpoint r has one coordinate per dimension (innermost first); the endpoints that share every
 * coordinate but dimension d form one instance of d. Topology implements this view.
 */
class NetworkView
{
  public:
    virtual ~NetworkView() = default;

    /** \return the number of endpoints (GPUs) */
    virtual uint32_t GetEndpointCount() const = 0;
    /** \return the number of dimensions */
    virtual uint32_t GetDimensionCount() const = 0;
    /** \return a dimension's spec (name, kind, resolved size, collective algorithm, ...) */
    virtual const NetworkDimensionSpec& GetDimension(uint32_t d) const = 0;
    /** \return the coordinate of an endpoint along dimension \p d */
    virtual uint32_t GetCoordinate(uint32_t endpoint, uint32_t d) const = 0;
    /** \return the index of the instance of dimension \p d that holds \p endpoint */
    virtual uint32_t GetInstance(uint32_t endpoint, uint32_t d) const = 0;
    /** \return whether any link is degraded or dead now (symmetric copies may then differ) */
    virtual bool HasFaults() const = 0;
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_NETWORK_VIEW_H
