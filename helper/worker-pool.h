/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_WORKER_POOL_H
#define RAPIDLLM_WORKER_POOL_H

#include <csignal>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief A worker process died twice running the same item (killed, out of memory): not an
 * error of the input, nor of this code's logic, so it is told apart from both.
 */
class WorkerLost : public std::runtime_error
{
  public:
    using std::runtime_error::runtime_error;
};

/**
 * \ingroup rapid-llm
 * \brief Runs independent tasks on worker processes, one ns-3 simulator each (the simulator is
 * one per process): the workers are fork()s of the calling process, started before any task
 * runs and fed one task at a time over a pipe, so a slow task never holds up the others. The
 * results come back to the calling process, as text, in completion order; callers that need a
 * fixed order sort them.
 *
 * Call it while no simulation runs in the calling process. A task that throws ends the run
 * with that error: an Error (bad input: a spec, an unreachable pair) as an Error with its
 * message, anything else as a std::runtime_error naming the task. A worker that dies (killed,
 * out of memory) is replaced and its item run again, once, with a note on stderr; the item's
 * second death ends the run with a WorkerLost.
 */
class WorkerPool
{
  public:
    /** A task: runs in a worker, returns its result as text. */
    using Task = std::function<std::string(uint64_t item)>;
    /** Called in the calling process as each result arrives. */
    using Done = std::function<void(uint64_t item, const std::string& result)>;

    /**
     * \param workers worker processes (>= 1; no more are started than there are items)
     */
    explicit WorkerPool(uint32_t workers);

    /**
     * \brief Runs \p task for every item on the workers.
     * \param items the items, handed out in this order
     * \param task what a worker does with one item
     * \param done called with each result as it arrives
     * \param stop polled while waiting: once it is non-zero the workers are ended
     * \return true if every item ran, false if \p stop ended the run (the results that
     *         arrived before were passed to \p done)
     */
    bool Run(const std::vector<uint64_t>& items,
             const Task& task,
             const Done& done,
             const volatile std::sig_atomic_t* stop = nullptr);

    /** \return the number of processors this process may run on (at least 1) */
    static uint32_t Processors();

  private:
    uint32_t m_workers; //!< worker processes
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_WORKER_POOL_H
