/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "caught-signal.h"

#include <csignal>

namespace ns3 {
namespace rapidllm {

void (*CatchSignal(int signal, void (*handler)(int)))(int)
{
    struct sigaction now = {};
    if (sigaction(signal, nullptr, &now) == 0 && now.sa_handler == SIG_IGN)
    {
        return SIG_IGN;
    }
    void (*old)(int) = std::signal(signal, handler);
    return old == SIG_ERR ? SIG_DFL : old;
}

} // namespace rapidllm
} // namespace ns3
