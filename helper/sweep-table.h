/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_SWEEP_TABLE_H
#define RAPIDLLM_SWEEP_TABLE_H

#include "layout-sweep.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief One row of a sweep's results.csv: a layout (by its index in the sweep's candidate
 * order) and what became of it. The row's text is its canonical form: a row read back from a
 * file ranks and prints exactly as the one computed, so an interrupted and resumed, a sharded
 * and merged, and a one-worker sweep all write the same bytes.
 */
struct SweepRow
{
    uint64_t layout = 0;           //!< index of the layout among the sweep's candidates
    std::string hardware;          //!< the machine as --hardware names it ("" in an older file)
    uint32_t tp = 0;               //!< tensor parallel degree
    uint32_t pp = 0;               //!< pipeline degree
    uint32_t dp = 0;               //!< data parallel degree
    uint32_t cp = 1;               //!< context parallel degree
    uint32_t ep = 1;               //!< expert parallel degree
    uint32_t vpp = 0;              //!< virtual stages per rank
    std::string schedule = "1f1b"; //!< pipeline schedule (ParallelSpec::schedule)
    uint32_t firstStageLayers = 0; //!< an uneven split's first stage's layers (0: an even share)
    uint32_t lastStageLayers = 0;  //!< an uneven split's last stage's layers (0: an even share)
    uint32_t mbs = 0;              //!< micro-batch size
    std::string recompute;         //!< recomputation mode
    std::string dtype;             //!< compute type ("" in a file written before the sweep had it)
    bool fits = false;             //!< whether it fits in memory (only then the timing columns)
    double stepTimeS = 0;          //!< step time, s
    double tflopsPerGpu = 0;       //!< Megatron-LM's TFLOP/s per GPU
    double mfu = 0;                //!< model FLOPs utilization
    double computeS = 0;           //!< critical rank: compute
    double exposedCommS = 0;       //!< critical rank: exposed communication
    double bubbleS = 0;            //!< critical rank: pipeline bubble
    bool haveEnergy = false; //!< whether it ran on a machine with a power model (then the energy)
    double energyJ = 0;      //!< energy of a step, all GPUs, J
    double avgPowerW = 0;    //!< average power per GPU over the step, W
    uint64_t peakBytes = 0;  //!< peak memory per GPU, bytes
    std::string reason;      //!< why it does not fit

    /** \return the CSV line (no newline) */
    std::string ToCsv() const;
    /** \return the GPUs of its layout (tp x pp x cp x dp) */
    uint64_t Gpus() const;
};

/** \return the header line of results.csv (no newline) */
std::string SweepCsvHeader();

/**
 * \brief Parses one line of results.csv (this version's columns, SweepCsvHeader()).
 * \param line the line (no newline) \param row set to the row
 * \return false if the line is not a complete row (e.g. cut short by a kill)
 */
bool ParseSweepRow(const std::string& line, SweepRow& row);

/**
 * \param layout the layout's index among the sweep's candidates
 * \param point what became of it
 * \param hardware the machine it ran on, as --hardware names it
 * \return the row, in its canonical (parsed-back) form
 */
SweepRow MakeSweepRow(uint64_t layout, const SweepPoint& point, const std::string& hardware);

/**
 * \brief Ranks rows as LayoutSweep::Run does: the ones that fit by step time, then the rest by
 * peak memory; ties by layout index.
 * \param rows the rows (sorted in place)
 */
void RankSweepRows(std::vector<SweepRow>& rows);

/**
 * \brief Reads the rows of a results.csv: a last line cut short (by a kill: no newline) is
 * dropped, any other line that is not a row is an error naming the file and line. A file of
 * an older version reads its columns by name, the ones it lacks as that version ran them: the
 * cp and ep degrees 1, the pipeline schedule 1f1b, the compute type, machine and energy empty.
 * \param path the file \param[out] dropped lines dropped
 * \return the rows, in file order; throws SpecError naming the file if it is not a results.csv
 */
std::vector<SweepRow> ReadSweepCsv(const std::string& path, uint32_t* dropped = nullptr);

/**
 * \brief Writes rows (header first) to \p path atomically (a temporary file renamed).
 * \param path the file \param rows the rows, in order; throws SpecError if it cannot
 */
void WriteSweepCsv(const std::string& path, const std::vector<SweepRow>& rows);

/** \return \p rows as results.csv holds them: the header line, then one line per row */
std::string SweepCsvText(const std::vector<SweepRow>& rows);

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_SWEEP_TABLE_H
