/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_CAUGHT_SIGNAL_H
#define RAPIDLLM_CAUGHT_SIGNAL_H

namespace ns3 {
namespace rapidllm {

/**
 * \brief Installs \p handler for \p signal unless the process was started with the signal
 * ignored: a script's background job ignores SIGINT (POSIX shells set it so), and an interrupt
 * meant for the script's foreground must not stop it, as it stops no other program.
 * \param signal SIGINT, SIGTERM or another catchable signal
 * \param handler the handler to install
 * \return the disposition before, for std::signal to restore (SIG_IGN when kept ignored)
 */
void (*CatchSignal(int signal, void (*handler)(int)))(int);

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_CAUGHT_SIGNAL_H
