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

/**
 * \ingroup rapid-llm
 * \brief A check of the model's own results that failed (a kernel faster than its roofline, an
 * MFU above the peak): a fault of RAPID-LLM, not of the input, so not an Error; entry points
 * report it as an internal error and exit with status 1.
 */
class InternalError : public std::logic_error
{
  public:
    /** \param message what failed, and that it is a bug to report */
    explicit InternalError(const std::string& message);
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_RAPIDLLM_ERROR_H
