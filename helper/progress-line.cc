/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "progress-line.h"

#include <unistd.h>

#include <cmath>

namespace ns3 {
namespace rapidllm {

ProgressLine::ProgressLine(bool enabled, bool terminal)
    : m_enabled(enabled)
    , m_terminal(terminal)
    , m_start(std::chrono::steady_clock::now())
{}

ProgressLine::~ProgressLine()
{
    Finish();
}

bool
ProgressLine::StderrIsTerminal()
{
    return ::isatty(STDERR_FILENO) == 1;
}

double
ProgressLine::Elapsed() const
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - m_start).count();
}

std::string
ProgressLine::Duration(double seconds)
{
    if (!std::isfinite(seconds) || seconds < 0)
    {
        return "?";
    }
    const long s = std::lround(seconds);
    char text[32];
    if (s < 60)
    {
        std::snprintf(text, sizeof(text), "%ld s", s);
    }
    else if (s < 3600)
    {
        std::snprintf(text, sizeof(text), "%ld:%02ld", s / 60, s % 60);
    }
    else
    {
        std::snprintf(text, sizeof(text), "%ld:%02ld:%02ld", s / 3600, (s / 60) % 60, s % 60);
    }
    return text;
}

void
ProgressLine::Show(const std::string& text, bool force)
{
    if (!m_enabled)
    {
        return;
    }
    const double now = Elapsed();
    if (!force && now - m_last < (m_terminal ? 0.2 : 5.0))
    {
        return;
    }
    m_last = now;
    if (m_terminal)
    {
        std::fprintf(stderr, "\r%s\033[K", text.c_str());
        m_open = true;
    }
    else
    {
        std::fprintf(stderr, "%s\n", text.c_str());
    }
    std::fflush(stderr);
}

void
ProgressLine::Finish()
{
    if (m_open)
    {
        std::fprintf(stderr, "\n");
        std::fflush(stderr);
        m_open = false;
    }
}

} // namespace rapidllm
} // namespace ns3
