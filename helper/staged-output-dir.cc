/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "staged-output-dir.h"

#include "ns3/rapidllm-error.h"

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
}

StagedOutputDir::~StagedOutputDir()
{
    std::error_code ignored;
    std::filesystem::remove_all(m_staging, ignored);
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
    for (const auto& entry : std::filesystem::directory_iterator(m_staging))
    {
        files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end());
    for (const auto& file : files)
    {
        const std::filesystem::path target = std::filesystem::path(m_dir) / file.filename();
        std::error_code ec;
        std::filesystem::rename(file, target, ec);
        if (ec)
        {
            throw OutputError(target.string(), ec.message());
        }
    }
    m_new->Keep();
}

} // namespace rapidllm
} // namespace ns3
