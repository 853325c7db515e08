/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_CLI_INTERRUPT_H
#define RAPIDLLM_CLI_INTERRUPT_H

#include <string>

namespace ns3 {
namespace rapidllm {

/**
 * \brief While it lives, SIGINT and SIGTERM end the process at once with status 130 (as a shell
 * reports an interrupted job) after printing \p line on stderr: for commands that write their
 * files only once everything has run (the studies of hardware and faults), so that an interrupt
 * says what it left (nothing written) instead of a silent death. The previous handlers come
 * back when it goes.
 */
class InterruptExit
{
  public:
    /** \param line what to print, without newline (e.g. "rapid-llm study hardware: ...") */
    explicit InterruptExit(const std::string& line);
    ~InterruptExit();

    InterruptExit(const InterruptExit&) = delete;
    InterruptExit& operator=(const InterruptExit&) = delete;

  private:
    void (*m_oldInt)(int);  //!< the SIGINT handler before
    void (*m_oldTerm)(int); //!< the SIGTERM handler before
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_CLI_INTERRUPT_H
