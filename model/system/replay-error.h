/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_REPLAY_ERROR_H
#define RAPIDLLM_REPLAY_ERROR_H

#include "ns3/rapidllm-error.h"

#include <string>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief A replay that cannot run or cannot finish: a receive without a send, a group member
 * that never arrives, a dependency cycle, a collective the system layer cannot execute. The
 * message names the rank and the node (id, name, kind) where the replay stopped.
 */
class ReplayError : public Error
{
  public:
    /** \param message what stopped the replay, naming the rank and node */
    explicit ReplayError(const std::string& message);
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_REPLAY_ERROR_H
