/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "worker-pool.h"

#include "ns3/rapidllm-error.h"

#include <poll.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <set>
#include <stdexcept>

namespace ns3 {
namespace rapidllm {

namespace {

/** Writes all of \p size bytes; false on error. */
bool
WriteAll(int fd, const void* data, std::size_t size)
{
    const char* p = static_cast<const char*>(data);
    while (size > 0)
    {
        const ssize_t n = ::write(fd, p, size);
        if (n < 0 && errno == EINTR)
        {
            continue;
        }
        if (n <= 0)
        {
            return false;
        }
        p += n;
        size -= static_cast<std::size_t>(n);
    }
    return true;
}

/** Reads exactly \p size bytes; false on end of file or error. */
bool
ReadAll(int fd, void* data, std::size_t size)
{
    char* p = static_cast<char*>(data);
    while (size > 0)
    {
        const ssize_t n = ::read(fd, p, size);
        if (n < 0 && errno == EINTR)
        {
            continue;
        }
        if (n <= 0)
        {
            return false;
        }
        p += n;
        size -= static_cast<std::size_t>(n);
    }
    return true;
}

/** One worker as the calling process sees it. */
struct Worker
{
    pid_t pid = -1;      //!< its process
    int toWorker = -1;   //!< items go here
    int fromWorker = -1; //!< results come from here
    bool busy = false;   //!< an item is out
    uint64_t item = 0;   //!< the item out
};

/** The worker's loop: read items until end of file, write each result back. */
[[noreturn]] void
WorkerMain(int in, int out, const WorkerPool::Task& task)
{
    // The calling process decides what an interrupt ends.
    std::signal(SIGINT, SIG_IGN);
    uint64_t item = 0;
    while (ReadAll(in, &item, sizeof(item)))
    {
        std::string result;
        char status = 0;
        try
        {
            result = task(item);
        }
        catch (const Error& e)
        {
            // The input's fault (a spec, an unreachable pair): the caller's error to report.
            status = 2;
            result = e.what();
        }
        catch (const std::exception& e)
        {
            status = 1;
            result = e.what();
        }
        const uint64_t size = result.size();
        if (!WriteAll(out, &status, 1) || !WriteAll(out, &size, sizeof(size))
            || !WriteAll(out, result.data(), result.size()))
        {
            ::_exit(1);
        }
    }
    // No static destructors or atexit handlers of the parent's copy run here.
    ::_exit(0);
}

/** Ends the workers: closes their pipes, stops them if \p kill, reaps them. */
void
EndWorkers(std::vector<Worker>& workers, bool kill)
{
    for (auto& w : workers)
    {
        if (w.toWorker >= 0)
        {
            ::close(w.toWorker);
            w.toWorker = -1;
        }
        if (kill && w.pid > 0)
        {
            ::kill(w.pid, SIGKILL);
        }
    }
    for (auto& w : workers)
    {
        if (w.fromWorker >= 0)
        {
            ::close(w.fromWorker);
            w.fromWorker = -1;
        }
        if (w.pid > 0)
        {
            int status = 0;
            while (::waitpid(w.pid, &status, 0) < 0 && errno == EINTR)
            {}
            w.pid = -1;
        }
    }
}

} // namespace

WorkerPool::WorkerPool(uint32_t workers)
    : m_workers(workers == 0 ? 1 : workers)
{}

uint32_t
WorkerPool::Processors()
{
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) == 0)
    {
        const int n = CPU_COUNT(&set);
        return n > 0 ? static_cast<uint32_t>(n) : 1;
    }
    const long n = ::sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? static_cast<uint32_t>(n) : 1;
}

bool
WorkerPool::Run(const std::vector<uint64_t>& items,
                const Task& task,
                const Done& done,
                const volatile std::sig_atomic_t* stop)
{
    if (items.empty())
    {
        return true;
    }
    const std::size_t count = std::min<std::size_t>(m_workers, items.size());
    std::vector<Worker> workers(count);
    // Starts worker w (a fork of this process as it is now, taking items from a pipe).
    auto start = [&](Worker& w)
    {
        // Output buffered by the caller must not be written twice (once by a worker's copy).
        std::fflush(nullptr);
        int down[2];
        int up[2];
        if (::pipe(down) != 0 || ::pipe(up) != 0)
        {
            EndWorkers(workers, true);
            throw std::runtime_error(std::string("cannot create a worker pipe: ")
                                     + std::strerror(errno));
        }
        const pid_t parent = ::getpid();
        const pid_t pid = ::fork();
        if (pid < 0)
        {
            EndWorkers(workers, true);
            throw std::runtime_error(std::string("cannot start a worker process: ")
                                     + std::strerror(errno));
        }
        if (pid == 0)
        {
            // A worker ends with the process that started it (interrupted, killed): it would
            // go on computing items nobody reads, for as long as one takes.
            ::prctl(PR_SET_PDEATHSIG, SIGKILL);
            if (::getppid() != parent)
            {
                ::_exit(1); // the parent ended before the line above
            }
            // The worker keeps its own two ends only.
            for (const auto& other : workers)
            {
                for (int fd : {other.toWorker, other.fromWorker})
                {
                    if (fd >= 0)
                    {
                        ::close(fd);
                    }
                }
            }
            ::close(down[1]);
            ::close(up[0]);
            WorkerMain(down[0], up[1], task);
        }
        ::close(down[0]);
        ::close(up[1]);
        w.pid = pid;
        w.toWorker = down[1];
        w.fromWorker = up[0];
    };
    for (auto& w : workers)
    {
        start(w);
    }
    std::set<uint64_t> retried; // items whose worker died once
    std::size_t next = 0;
    std::size_t finished = 0;
    auto hand = [&](Worker& w)
    {
        if (next < items.size())
        {
            w.item = items[next++];
            w.busy = WriteAll(w.toWorker, &w.item, sizeof(w.item));
            if (!w.busy)
            {
                throw std::runtime_error("worker process " + std::to_string(w.pid)
                                         + " stopped taking work");
            }
        }
        else if (w.toWorker >= 0)
        {
            ::close(w.toWorker); // no more work: the worker exits
            w.toWorker = -1;
        }
    };
    try
    {
        for (auto& w : workers)
        {
            hand(w);
        }
        std::vector<pollfd> fds(count);
        while (finished < items.size())
        {
            if (stop && *stop)
            {
                EndWorkers(workers, true);
                return false;
            }
            for (std::size_t i = 0; i < count; ++i)
            {
                fds[i].fd = workers[i].busy ? workers[i].fromWorker : -1;
                fds[i].events = POLLIN;
                fds[i].revents = 0;
            }
            const int ready = ::poll(fds.data(), fds.size(), 100);
            if (ready < 0 && errno != EINTR)
            {
                throw std::runtime_error(std::string("poll: ") + std::strerror(errno));
            }
            for (std::size_t i = 0; ready > 0 && i < count; ++i)
            {
                if (fds[i].revents == 0)
                {
                    continue;
                }
                Worker& w = workers[i];
                char status = 0;
                uint64_t size = 0;
                std::string result;
                bool ok =
                    ReadAll(w.fromWorker, &status, 1) && ReadAll(w.fromWorker, &size, sizeof(size));
                if (ok)
                {
                    result.resize(size);
                    ok = ReadAll(w.fromWorker, result.data(), size);
                }
                if (!ok)
                {
                    // Reaped, replaced, and its item handed to the new worker once more.
                    ::close(w.toWorker);
                    ::close(w.fromWorker);
                    w.toWorker = w.fromWorker = -1;
                    int how = 0;
                    while (::waitpid(w.pid, &how, 0) < 0 && errno == EINTR)
                    {}
                    w.pid = -1;
                    const std::string death =
                        "the worker process of item " + std::to_string(w.item) + " died"
                        + (WIFSIGNALED(how)
                               ? " (signal " + std::to_string(WTERMSIG(how)) + ")"
                               : " (exit status " + std::to_string(WEXITSTATUS(how)) + ")");
                    if (!retried.insert(w.item).second)
                    {
                        throw WorkerLost(death + ", twice");
                    }
                    std::fprintf(stderr, "note: %s; running it again\n", death.c_str());
                    start(w);
                    w.busy = WriteAll(w.toWorker, &w.item, sizeof(w.item));
                    if (!w.busy)
                    {
                        throw WorkerLost(death + ", and its replacement took no work");
                    }
                    continue;
                }
                if (status == 2)
                {
                    throw Error(result);
                }
                if (status != 0)
                {
                    throw std::runtime_error("item " + std::to_string(w.item) + ": " + result);
                }
                w.busy = false;
                ++finished;
                done(w.item, result);
                hand(w);
            }
        }
    }
    catch (...)
    {
        EndWorkers(workers, true);
        throw;
    }
    EndWorkers(workers, false);
    return true;
}

} // namespace rapidllm
} // namespace ns3
