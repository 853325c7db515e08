/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "network-error.h"

namespace ns3 {
namespace rapidllm {

NetworkError::NetworkError(const std::string& message)
    : Error("network: " + message)
{}

} // namespace rapidllm
} // namespace ns3
