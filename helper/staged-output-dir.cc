/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "staged-output-dir.h"

#include "ns3/rapidllm-error.h"

#include <pthread.h>

#include <algorithm>
#include <filesystem>
#include <vector>

namespace ns3 {
namespace rapidllm {

StagedOutputDir::StagedOutputDir(const std::string& dir)
    : m_dir(dir)
    , m_staging((std::filesystem::path(dir) / ".rapid-llm-partial").string())
{
    m_new.emplace(dir);
    // A partial folder an earlier, killed, run left is not this run's.
    std::error_code ec;
    std::filesystem::remove_all(m_staging, ec);
    CreateOutputDir(m_staging);
    // Last, so that a constructor that throws leaves the signals as they were.
    sigset_t interrupts;
    sigemptyset(&interrupts);
    for (int signal : {SIGINT, SIGTERM, SIGHUP})
    {
        sigaddset(&interrupts, signal);
    }
    pthread_sigmask(SIG_BLOCK, &interrupts, &m_oldMask);
}

StagedOutputDir::~StagedOutputDir()
{
    std::error_code ignored;
    std::filesystem::remove_all(m_staging, ignored);
    m_new.reset(); // a new folder left empty goes before a waiting signal acts
    pthread_sigmask(SIG_SETMASK, &m_oldMask, nullptr);
}

const std::string&
StagedOutputDir::GetPath() const
{
    return m_staging;
}

void
StagedOutputDir::Commit()
{
    // In name order, so that a failure part-way is the same on every run.
    std::vector<std::filesystem::path> files;
    std::error_code listed;
    for (const auto& entry : std::filesystem::directory_iterator(m_staging, listed))
    {
        files.push_back(entry.path());
    }
    if (listed)
    {
        throw OutputError(m_staging, listed.message());
    }
    std::sort(files.begin(), files.end());
    // First the files they replace move aside (into the staging folder), then the new ones
    // move in; a move that fails puts back what moved before it, so the folder is either as it
    // was or wholly this run's (an immutable results.json left a new results.csv beside it).
    const std::filesystem::path aside = std::filesystem::path(m_staging) / ".replaced";
    std::error_code made;
    std::filesystem::create_directory(aside, made);
    if (made)
    {
        throw OutputError(aside.string(), made.message());
    }
    std::vector<std::pair<std::filesystem::path, std::filesystem::path>> moved; // from, to
    auto undo = [&moved]()
    {
        std::error_code ignored;
        for (auto it = moved.rbegin(); it != moved.rend(); ++it)
        {
            std::filesystem::rename(it->second, it->first, ignored);
        }
    };
    auto move = [&](const std::filesystem::path& from, const std::filesystem::path& to)
    {
        std::error_code ec;
        std::filesystem::rename(from, to, ec);
        if (ec)
        {
            undo();
            throw OutputError(to == aside / from.filename() ? from.string() : to.string(),
                              ec.message());
        }
        moved.emplace_back(from, to);
    };
    // The files replaced; a folder where a file goes is the user's: refused before anything
    // moves (not moved aside, nor deleted with the staging folder).
    std::vector<std::filesystem::path> replaced;
    for (const auto& file : files)
    {
        const std::filesystem::path target = std::filesystem::path(m_dir) / file.filename();
        std::error_code ec;
        const auto type = std::filesystem::symlink_status(target, ec).type();
        if (type == std::filesystem::file_type::directory)
        {
            throw OutputError(target.string(), "a folder is where the file goes");
        }
        if (type != std::filesystem::file_type::not_found)
        {
            replaced.push_back(target);
        }
    }
    for (const auto& target : replaced)
    {
        move(target, aside / target.filename());
    }
    for (const auto& file : files)
    {
        move(file, std::filesystem::path(m_dir) / file.filename());
    }
    m_new->Keep();
}

} // namespace rapidllm
} // namespace ns3
