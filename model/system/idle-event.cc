/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "idle-event.h"

namespace ns3 {
namespace rapidllm {

std::string
ToString(IdleCause cause)
{
    switch (cause)
    {
        case IdleCause::BUBBLE:
            return "bubble";
        case IdleCause::COMMUNICATION:
            return "communication";
        case IdleCause::HOST:
            return "host";
    }
    return "communication";
}

} // namespace rapidllm
} // namespace ns3
