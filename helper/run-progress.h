/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_RUN_PROGRESS_H
#define RAPIDLLM_RUN_PROGRESS_H

#include "progress-line.h"
#include "rapid-llm-helper.h"

#include <chrono>
#include <csignal>
#include <cstdint>
#include <functional>
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
 * \brief Progress of a long simulation (packet-level runs and collectives, large replays) on
 * stderr: simulated time, share of the work done, rate and ETA; and a clean stop on SIGINT or
 * SIGTERM, which prints the same and throws Interrupted out of the simulator.
 *
 * It is an event of the simulator that reads the run's counters and reschedules itself at a
 * simulated interval adapted to about four checks per wall-clock second; it changes nothing in
 * the simulation, so the results are those of a run without it.
 */
class RunProgress
{
  public:
    /** What a run has done so far, as its counters say. */
    struct Status
    {
        uint64_t done = 0;     //!< units of work done
        uint64_t total = 0;    //!< units of work in all (0: not started)
        std::string unit;      //!< what they are, plural ("operators", "messages")
        std::string detail;    //!< more of the state, e.g. "12 messages delivered" ("": none)
        bool finished = false; //!< nothing left: the checks stop
    };

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
    /**
     * \brief Schedules the first check now, of any run.
     * \param status reads the run's counters (called from the simulator's events)
     */
    void Attach(std::function<Status()> status);

    /** \brief Ends the line (call once the run returned). */
    void Finish();

  private:
    /** One check: print, stop if interrupted, reschedule while the replay runs. */
    void Tick();
    /** \return the state as text: simulated time, share done, detail, ETA */
    std::string Describe(const Status& s) const;

    std::string m_command;            //!< the command's name
    bool m_show;                      //!< print the progress line
    ProgressLine m_line;              //!< the output
    std::function<Status()> m_status; //!< the run's counters
    int64_t m_intervalNs = 1000;      //!< simulated time between checks
    double m_lastWall = 0;            //!< wall time of the last check, s
    void (*m_oldInt)(int) = nullptr;  //!< previous SIGINT handler
    void (*m_oldTerm)(int) = nullptr; //!< previous SIGTERM handler
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_RUN_PROGRESS_H
