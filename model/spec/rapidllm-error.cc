/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "rapidllm-error.h"

namespace ns3 {
namespace rapidllm {

Error::Error(const std::string& message)
    : std::runtime_error(message)
{}

InternalError::InternalError(const std::string& message)
    : std::logic_error(message)
{}

} // namespace rapidllm
} // namespace ns3
