/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "replay-error.h"

namespace ns3 {
namespace rapidllm {

ReplayError::ReplayError(const std::string& message)
    : Error("replay: " + message)
{}

} // namespace rapidllm
} // namespace ns3
