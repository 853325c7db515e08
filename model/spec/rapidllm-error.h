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
 * a damaged trace (TraceError), a replay that cannot finish (ReplayError), a network that
 * cannot carry a message (NetworkError) or an output that cannot be written (OutputError).
 *
 * Entry points catch this one type, print what() (which already says where the problem is and
 * what is allowed) and exit with status 2 (5 for OutputError); anything else escaping is an
 * internal fault.
 */
class Error : public std::runtime_error
{
  public:
    /** \param message the whole message, including where the problem is */
    explicit Error(const std::string& message);
};

/**
 * \ingroup rapid-llm
 * \brief An output that could not be written (a full disk, a closed stream): the input was
 * fine and the prediction ran, so entry points exit with status 5, which a script can tell
 * from bad input (2) and retry.
 */
class OutputError : public Error
{
  public:
    /**
     * \param path the file, or "standard output"
     * \param why what failed (the system's reason), or "" when unknown
     */
    OutputError(const std::string& path, const std::string& why);

    /**
     * \brief The write that just failed: the reason is errno's, read here (none when 0).
     * \param path the file, or "standard output"
     */
    explicit OutputError(const std::string& path);
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
