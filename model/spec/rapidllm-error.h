/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_RAPIDLLM_ERROR_H
#define RAPIDLLM_RAPIDLLM_ERROR_H

#include <stdexcept>
#include <string>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief The common base of every error RAPID-LLM reports to its user: bad input (SpecError),
 * a damaged trace (TraceError), a replay that cannot finish (ReplayError) or a network that
 * cannot carry a message (NetworkError).
 *
 * Entry points catch this one type, print what() (which already says where the problem is and
 * what is allowed) and exit with status 2; anything else escaping is an internal fault.
 */
class Error : public std::runtime_error
{
  public:
    /** \param message the whole message, including where the problem is */
    explicit Error(const std::string& message);
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_RAPIDLLM_ERROR_H
