/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_RUN_PROGRESS_H
#define RAPIDLLM_RUN_PROGRESS_H

#include "progress-line.h"
#include "rapid-llm-helper.h"

#include <chrono>
#include <csignal>
#include <stdexcept>
#include <string>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief Thrown out of the simulator when a run is interrupted (SIGINT or SIGTERM) after
 * RunProgress printed what was known.
 */
class Interrupted : public std::runtime_error
{
  public:
    /** \param message what was done */
    explicit Interrupted(const std::string& message);
};

/**
 * \ingroup rapid-llm
 * \brief Progress of a long replay (packet-level runs, large replays) on stderr: simulated time,
 * share of the operators done, messages delivered, rate and ETA; and a clean stop on SIGINT or
 * SIGTERM, which prints the same and throws Interrupted out of the simulator.
 *
 * It is an event of the simulator that reads the replayer's and the backend's counters and
 * reschedules itself at a simulated interval adapted to about four checks per wall-clock
 * second; it changes nothing in the replay, so the results are those of a run without it.
 */
class RunProgress
{
  public:
    /**
     * \param command the command's name, for the lines ("run", "replay")
     * \param show print the progress line (else only react to an interrupt)
     * \param terminal rewrite the line in place
     */
    RunProgress(const std::string& command, bool show, bool terminal);
    ~RunProgress();

    /**
     * \brief Schedules the first check now; call before the helper's Run() or Replay() (the
     * simulator's pending events are kept by its scheduler change).
     * \param helper the helper that will run
     */
    void Attach(Ptr<RapidLlmHelper> helper);

    /** \brief Ends the line (call once the run returned). */
    void Finish();

  private:
    /** One check: print, stop if interrupted, reschedule while the replay runs. */
    void Tick();
    /** \return the state as text: simulated time, share done, messages, ETA */
    std::string Describe() const;

    std::string m_command;            //!< the command's name
    bool m_show;                      //!< print the progress line
    ProgressLine m_line;              //!< the output
    Ptr<RapidLlmHelper> m_helper;     //!< the run
    int64_t m_intervalNs = 1000;      //!< simulated time between checks
    double m_lastWall = 0;            //!< wall time of the last check, s
    void (*m_oldInt)(int) = nullptr;  //!< previous SIGINT handler
    void (*m_oldTerm)(int) = nullptr; //!< previous SIGTERM handler
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_RUN_PROGRESS_H
