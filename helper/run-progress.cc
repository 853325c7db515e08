/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "run-progress.h"

#include "caught-signal.h"
#include "ns3/simulator.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace ns3 {
namespace rapidllm {

namespace {

/** Set by SIGINT or SIGTERM. */
volatile std::sig_atomic_t g_interrupted = 0;

/** Wall seconds the next progress check has to honour an interrupt before the process ends. */
constexpr unsigned kGraceSeconds = 3;

/**
 * The check did not come in time (a burst of packet events between two checks): end now, with
 * 130 as the check would; nothing is half-written (outputs are written after the run).
 */
void
OnStuck(int)
{
    const char message[] = "rapid-llm: interrupted; the simulation did not reach its next check "
                           "within 3 s, stopped without a result\n";
    [[maybe_unused]] const ssize_t written = ::write(STDERR_FILENO, message, sizeof(message) - 1);
    ::_exit(130);
}

/** A second interrupt ends the process at once. */
void
OnInterrupt(int signal)
{
    if (g_interrupted)
    {
        std::signal(signal, SIG_DFL);
        std::raise(signal);
        return;
    }
    g_interrupted = 1;
    std::signal(SIGALRM, OnStuck);
    ::alarm(kGraceSeconds);
}

} // namespace

Interrupted::Interrupted(const std::string& message)
    : std::runtime_error(message)
{}

RunProgress::RunProgress(const std::string& command, bool show, bool terminal)
    : m_command(command)
    , m_show(show)
    , m_line(show, terminal)
{
    g_interrupted = 0;
    m_oldInt = CatchSignal(SIGINT, OnInterrupt);
    m_oldTerm = CatchSignal(SIGTERM, OnInterrupt);
}

RunProgress::~RunProgress()
{
    ::alarm(0); // an interrupt honoured in time (or none)
    std::signal(SIGALRM, SIG_DFL);
    std::signal(SIGINT, m_oldInt == SIG_ERR ? SIG_DFL : m_oldInt);
    std::signal(SIGTERM, m_oldTerm == SIG_ERR ? SIG_DFL : m_oldTerm);
}

void
RunProgress::Attach(Ptr<RapidLlmHelper> helper)
{
    Attach(
        [helper]()
        {
            Ptr<TraceReplayer> replayer = helper->GetReplayer();
            Ptr<NetworkBackend> backend = helper->GetBackend();
            Status s;
            s.total = replayer ? replayer->GetOperatorsTotal() : 0;
            s.done = s.total - std::min(s.total, replayer ? replayer->GetOperatorsLeft() : 0);
            s.unit = "operators";
            const uint64_t delivered = backend ? backend->GetDeliveredCount() : 0;
            s.detail = std::to_string(delivered) + " messages delivered";
            s.finished = s.total > 0 && s.done == s.total;
            return s;
        });
}

void
RunProgress::Attach(std::function<Status()> status)
{
    m_status = std::move(status);
    Simulator::ScheduleNow(&RunProgress::Tick, this);
}

void
RunProgress::Finish()
{
    m_line.Finish();
}

std::string
RunProgress::Describe(const Status& s) const
{
    const double wall = m_line.Elapsed();
    const double rate = wall > 0 ? s.done / wall : 0;
    char text[320];
    std::snprintf(text,
                  sizeof(text),
                  "%s: simulated %.6f s, %.1f%% of %s done (%llu of %llu)%s%s, wall %s, ETA %s",
                  m_command.c_str(),
                  Simulator::Now().GetSeconds(),
                  s.total > 0 ? 100.0 * s.done / s.total : 0.0,
                  s.unit.c_str(),
                  static_cast<unsigned long long>(s.done),
                  static_cast<unsigned long long>(s.total),
                  s.detail.empty() ? "" : ", ",
                  s.detail.c_str(),
                  ProgressLine::Duration(wall).c_str(),
                  rate > 0 ? ProgressLine::Duration((s.total - s.done) / rate).c_str() : "?");
    return text;
}

void
RunProgress::Tick()
{
    const Status s = m_status();
    if (g_interrupted)
    {
        const std::string state = Describe(s);
        m_line.Finish();
        std::fflush(stdout);
        std::fprintf(stderr,
                     "rapid-llm %s: interrupted; what is known: %s; no result (the simulation "
                     "did not finish)\n",
                     m_command.c_str(),
                     state.c_str() + m_command.size() + 2);
        std::fflush(stderr);
        throw Interrupted("interrupted");
    }
    if (s.total > 0 && m_show)
    {
        m_line.Show(Describe(s));
    }
    if (s.finished || Simulator::IsFinished())
    {
        return; // done: never keep the simulator going
    }
    // About four checks per wall second: scale the simulated interval, up by at most x4 a
    // check, and down at once to what the last one says (a packet run's interval grown over its
    // sparse start took 5 s of wall time a check once its traffic began, and an interrupt
    // waited for it).
    const double wall = m_line.Elapsed();
    const double spent = std::max(wall - m_lastWall, 1e-6);
    m_lastWall = wall;
    const double scale = std::min(4.0, std::max(1e-6, 0.25 / spent));
    m_intervalNs = std::max<int64_t>(1, static_cast<int64_t>(m_intervalNs * scale));
    Simulator::Schedule(NanoSeconds(m_intervalNs), &RunProgress::Tick, this);
}

} // namespace rapidllm
} // namespace ns3
