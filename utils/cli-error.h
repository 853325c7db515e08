/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_CLI_ERROR_H
#define RAPIDLLM_CLI_ERROR_H

#include "ns3/rapidllm-error.h"

#include <string>

namespace ns3 {
namespace rapidllm {

class CliArgs;

/**
 * \brief The message the command prints for an error. model/ names the field a bad value sat
 * in ("backend", "global_batch"); when that value came from an option of this command (given,
 * or its default), the message names the option instead: "option --backend: ..." or
 * "option --gbs: ...". Other errors are printed as they are.
 * \param command the command \param e the error
 * \param args the command's parsed options, or nullptr if parsing itself failed
 * \return one line, without the "rapid-llm <command>: error: " prefix
 */
std::string DescribeError(const std::string& command, const Error& e, const CliArgs* args);

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_CLI_ERROR_H
