/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "rapidllm-error.h"

#include <cerrno>
#include <cstring>

namespace ns3 {
namespace rapidllm {

Error::Error(const std::string& message)
    : std::runtime_error(message)
{}

OutputError::OutputError(const std::string& path, const std::string& why)
    : Error("cannot write '" + path + "'" + (why.empty() ? "" : ": " + why))
{}

OutputError::OutputError(const std::string& path)
    : OutputError(path, errno == 0 ? std::string() : std::strerror(errno))
{}

InternalError::InternalError(const std::string& message)
    : std::logic_error(message)
{}

} // namespace rapidllm
} // namespace ns3
