/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_NETWORK_ERROR_H
#define RAPIDLLM_NETWORK_ERROR_H

#include "ns3/rapidllm-error.h"

#include <string>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief The network cannot do what was asked: a pair of endpoints is unreachable under the
 * routing policy and fault set, an endpoint does not exist, or a backend is used before it has a
 * topology. The message names the endpoints, the policy and, where it helps, one that can.
 */
class NetworkError : public Error
{
  public:
    /** \param message what failed, naming the endpoints or links involved */
    explicit NetworkError(const std::string& message);
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_NETWORK_ERROR_H
