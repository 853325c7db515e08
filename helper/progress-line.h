/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_PROGRESS_LINE_H
#define RAPIDLLM_PROGRESS_LINE_H

#include <chrono>
#include <cstdio>
#include <string>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief A progress line on stderr for long studies and runs: rewritten in place on a terminal,
 * else a line at most every few seconds, so that logs stay short.
 */
class ProgressLine
{
  public:
    /**
     * \param enabled whether to print at all
     * \param terminal rewrite one line in place (stderr is a terminal) rather than print lines
     */
    ProgressLine(bool enabled, bool terminal);
    ~ProgressLine();

    /** \return whether stderr is a terminal */
    static bool StderrIsTerminal();

    /**
     * \brief Shows \p text (at most a few times a second; always when \p force).
     * \param text the line \param force print even if one was printed just now
     */
    void Show(const std::string& text, bool force = false);
    /** \brief Ends the line (a newline on a terminal after a line in place). */
    void Finish();

    /** \return seconds since construction */
    double Elapsed() const;

    /** \return "1:02:03", "2:03" or "3 s" for \p seconds */
    static std::string Duration(double seconds);

  private:
    bool m_enabled;                                //!< printing at all
    bool m_terminal;                               //!< rewriting in place
    bool m_open = false;                           //!< a line in place was printed and not ended
    std::chrono::steady_clock::time_point m_start; //!< construction
    double m_last = -1e9; //!< when a line was last printed, s since construction
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_PROGRESS_LINE_H
