/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "cli-interrupt.h"

#include "ns3/caught-signal.h"

#include <unistd.h>

#include <csignal>
#include <cstring>

namespace ns3 {
namespace rapidllm {

namespace {

/** The line the handler prints (with its newline); set before the handler is installed. */
char g_line[512];

/** Prints the line and ends the process: only async-signal-safe calls. */
void
OnInterrupt(int)
{
    const ssize_t ignored = ::write(STDERR_FILENO, g_line, std::strlen(g_line));
    (void) ignored;
    ::_exit(130);
}

} // namespace

InterruptExit::InterruptExit(const std::string& line)
{
    std::strncpy(g_line, (line + "\n").c_str(), sizeof(g_line) - 1);
    g_line[sizeof(g_line) - 2] = '\n';
    m_oldInt = CatchSignal(SIGINT, OnInterrupt);
    m_oldTerm = CatchSignal(SIGTERM, OnInterrupt);
}

InterruptExit::~InterruptExit()
{
    std::signal(SIGINT, m_oldInt);
    std::signal(SIGTERM, m_oldTerm);
}

} // namespace rapidllm
} // namespace ns3
