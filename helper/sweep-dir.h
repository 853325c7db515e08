/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_SWEEP_DIR_H
#define RAPIDLLM_SWEEP_DIR_H

#include "ns3/report-json.h"
#include "sweep-table.h"

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief The folder of a sweep: sweep.json (its inputs, and its shard I/N if it is one) and
 * results.csv (a row appended as each layout finishes; ranked once all have). A resumed sweep
 * must have the same inputs; shards of one sweep merge into the folder the whole sweep would
 * have written, byte for byte.
 */
class SweepDir
{
  public:
    /**
     * \param dir the folder (created if missing)
     * \param inputs the sweep's inputs (what must match to resume or merge)
     * \param shardIndex this shard, 1..shardCount \param shardCount shards (1: the whole sweep)
     */
    SweepDir(const std::string& dir, const Json& inputs, uint64_t shardIndex, uint64_t shardCount);
    ~SweepDir();

    /**
     * \brief Starts the folder, or continues it.
     * \param resume continue the sweep already there (its inputs must be the same); without it
     *        a folder that holds a sweep is an error
     * \return the rows already done (a line cut short by a kill is dropped)
     */
    std::vector<SweepRow> Open(bool resume);
    /** \brief Appends one row (a CSV line without newline) and flushes it. */
    void Append(const std::string& line);
    /** \brief Rewrites results.csv with the rows ranked. \param ranked the rows, ranked */
    void Finish(const std::vector<SweepRow>& ranked);
    /** \return the path of results.csv */
    std::string CsvPath() const;

    /**
     * \brief Merges the folders of a sweep's shards (or of parts of it) into \p out.
     * \param dirs the folders \param out the folder to write (sweep.json, results.csv)
     * \return the rows, ranked; throws SpecError when the folders are not the shards of one
     *         sweep, a shard is missing, or a layout is missing or twice
     */
    static std::vector<SweepRow> Merge(const std::vector<std::string>& dirs,
                                       const std::string& out);

    /**
     * \brief What a sweep's inputs keep of a spec source so that a resume or merge compares
     * contents, not names: "preset NAME" for a built-in preset, else "fnv1a64 HEX" of the file's
     * bytes (FNV-1a, 64 bits), so that an edited file is refused and the same file spelt
     * otherwise ("./hw.yaml") is not.
     * \param sources the --model or --hardware values (presets or files)
     * \return one digest per source, in order
     */
    static Json Digests(const std::vector<std::string>& sources);

    /**
     * \return the machines as \p inputs spell them (their "hardware", split at its commas):
     * a resumed sweep and merged shards name their rows' machines as the folder's (the first
     * shard's) sweep.json does, whatever spelling of the same files this run was given
     */
    static std::vector<std::string> SpeltMachines(const Json& inputs);

    /** \return the sweep's inputs: after Open, a resumed folder's spelling of its specs */
    const Json& GetInputs() const;

  private:
    std::string m_dir;          //!< the folder
    Json m_inputs;              //!< inputs, with the shard
    std::FILE* m_csv = nullptr; //!< results.csv, open for appending
};

/** \return the rows as `sweep --json` prints them (its "rows" array) */
Json SweepRowsJson(const std::vector<SweepRow>& rows);

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_SWEEP_DIR_H
