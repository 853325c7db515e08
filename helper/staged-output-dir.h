/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_STAGED_OUTPUT_DIR_H
#define RAPIDLLM_STAGED_OUTPUT_DIR_H

#include "report-output.h"

#include <csignal>
#include <optional>
#include <string>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief An output folder a study writes whole or not at all: its files (tables, JSON, plots
 * and their scripts) go to a hidden folder inside it first and are moved into place by
 * Commit(), so a write that fails part-way (a full disk, gnuplot) leaves the folder as it was,
 * or none at all where it was new. While it lives SIGINT, SIGTERM and SIGHUP wait (they are
 * blocked, and act once it is gone): an interrupt during the plots left the hidden folder.
 */
class StagedOutputDir
{
  public:
    /** \param dir the output folder, created with its parents (NewOutputDir) */
    explicit StagedOutputDir(const std::string& dir);
    /** Removes the staged files unless committed (and the folder, if new and left empty). */
    ~StagedOutputDir();
    StagedOutputDir(const StagedOutputDir&) = delete;
    StagedOutputDir& operator=(const StagedOutputDir&) = delete;

    /** \return the folder to write the files to */
    const std::string& GetPath() const;
    /**
     * \brief Moves every staged file into the output folder, replacing one of the same name;
     * an OutputError, naming the file, when one cannot be moved.
     */
    void Commit();

  private:
    std::string m_dir;                 //!< the output folder
    std::string m_staging;             //!< the hidden folder inside it
    std::optional<NewOutputDir> m_new; //!< the folders made for it (removed on failure)
    sigset_t m_oldMask;                //!< the signals blocked before
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_STAGED_OUTPUT_DIR_H
