/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_SCRATCH_DIR_H
#define RAPIDLLM_SCRATCH_DIR_H

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

namespace ns3 {
namespace rapidllm {

/**
 * \brief A fresh folder below the system's temporary directory, removed when the test case
 * leaves it, however it leaves (a failed check returns early).
 */
class ScratchDir
{
  public:
    /** Makes an empty folder named after \p tag and this process. */
    explicit ScratchDir(const std::string& tag)
        : m_path(std::filesystem::temp_directory_path()
                 / ("rapid-llm-" + tag + "-" + std::to_string(::getpid())))
    {
        std::filesystem::remove_all(m_path);
        std::filesystem::create_directories(m_path);
    }

    ~ScratchDir()
    {
        std::error_code ignored;
        std::filesystem::remove_all(m_path, ignored);
    }

    ScratchDir(const ScratchDir&) = delete;
    ScratchDir& operator=(const ScratchDir&) = delete;

    /** \return the folder's path */
    std::string
    Path() const
    {
        return m_path.string();
    }

    /** \return the path of \p name inside the folder */
    std::string
    File(const std::string& name) const
    {
        return (m_path / name).string();
    }

    /** Writes \p text to \p name (making its folders) and returns its path. */
    std::string
    Put(const std::string& name, const std::string& text) const
    {
        const std::filesystem::path path = m_path / name;
        std::filesystem::create_directories(path.parent_path());
        std::ofstream(path) << text;
        return path.string();
    }

  private:
    std::filesystem::path m_path; //!< the folder
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_SCRATCH_DIR_H
