/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_REPORT_OUTPUT_H
#define RAPIDLLM_REPORT_OUTPUT_H

#include "ns3/memory-model.h"
#include "ns3/run-report.h"

#include <string>
#include <utility>
#include <vector>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \return \p x with \p digits significant digits ("%.*g"; 9, as every CSV and study table prints
 * numbers; fewer in text reports): reproducible text, no locale
 */
std::string FormatNumber(double x, int digits = 9);

/**
 * \ingroup rapid-llm
 * \return \p x in the fewest digits that read back as the same double (std::to_chars), as
 * the JSON prints it: for what a script reads back exactly (byte counts, a sweep's rows)
 */
std::string FormatExact(double x);

/** \return \p bytes in GiB (2^30 bytes) */
double ToGib(uint64_t bytes);

/**
 * \return \p text as a table's cell: left-aligned in at least \p width characters (a longer
 * text, such as a hardware file's path, is kept whole), then a space
 */
std::string TableCell(std::string text, std::size_t width);

/**
 * \return what an inference job that does not fit can hold instead, for its reason and tables:
 * "at most N requests fit", or "not one request fits" \param largest LargestFittingBatch's
 */
std::string LargestBatchText(uint32_t largest);

/**
 * \ingroup rapid-llm
 * \return \p text as one CSV field: as is, or, when it holds a comma, a quote or a line break,
 * quoted with its quotes doubled and its line breaks turned into spaces (every CSV of the tool is
 * written through this function and CsvLine)
 */
std::string CsvField(const std::string& text);

/**
 * \ingroup rapid-llm
 * \return \p fields as one CSV line, each through CsvField, ending with a newline
 */
std::string CsvLine(const std::vector<std::string>& fields);

/**
 * \ingroup rapid-llm
 * \brief Splits one CSV line as CsvLine writes it (quoted fields, doubled quotes).
 * \param line the line (no newline) \param fields set to its fields
 * \return false if a quote is not closed
 */
bool SplitCsvLine(const std::string& line, std::vector<std::string>& fields);

/**
 * \ingroup rapid-llm
 * \brief Creates the output folder \p dir and its parents; a SpecError on option --out, naming
 * the folder and the cause, when it cannot.
 */
void CreateOutputDir(const std::string& dir);

/**
 * \ingroup rapid-llm
 * \brief An output folder made before a run (CreateOutputDir): unless Keep() is called, the
 * folders it created are removed again while empty, so a run that fails leaves none behind.
 */
class NewOutputDir
{
  public:
    /** \param dir the folder, created with its parents */
    explicit NewOutputDir(const std::string& dir);
    ~NewOutputDir();
    NewOutputDir(const NewOutputDir&) = delete;
    NewOutputDir& operator=(const NewOutputDir&) = delete;
    /** \brief The run wrote its files: the folder stays. */
    void Keep();

  private:
    std::vector<std::string> m_made; //!< folders created, deepest first
};

/**
 * \ingroup rapid-llm
 * \brief Refuses, before a study runs, an --out folder \p dir that holds a sweep (sweep.json):
 * the study's results.csv would replace the sweep's rows. A SpecError on option --out.
 * \param command the study, as the message names it ("study hardware")
 */
void RefuseSweepFolder(const std::string& dir, const std::string& command);

/**
 * \ingroup rapid-llm
 * \brief Writes \p text to \p path through a temporary file renamed over it, so that a failed
 * or interrupted write leaves no half-written file; an OutputError when it fails. A symbolic
 * link's target is replaced (the link stays); a device, a FIFO or a terminal is written through.
 */
void WriteOutputFile(const std::string& path, const std::string& text);

/**
 * \ingroup rapid-llm
 * \brief Writes several files as WriteOutputFile does, all or none: each goes to a temporary
 * file first, and they are renamed into place once every one is written (a study's CSV and JSON
 * stay of one run when the disk fills).
 * \param files (path, text) of each file
 */
void WriteOutputFiles(const std::vector<std::pair<std::string, std::string>>& files);

/**
 * \ingroup rapid-llm
 * \brief Checks before a long run that WriteOutputFile(\p path) can write: a SpecError naming
 * \p option for a directory or a file that cannot be written. Leaves nothing behind.
 */
void CheckOutputFile(const std::string& path, const std::string& option);

/**
 * \ingroup rapid-llm
 * \brief The report's table as CSV (`--csv`): one row with the step time, the breakdown of the
 * critical rank and the memory verdict, or with \p perRank one row per rank
 * (rank,finish_s,compute_s,exposed_comm_s,bubble_s).
 * \param report the report \param perRank the per-rank table instead
 * \return the CSV text, header first
 */
std::string RunReportCsv(const RunReport& report, bool perRank);

/**
 * \brief The memory table as CSV (`memory --csv`): one row per pipeline stage, by category,
 * and the job's largest batch that fits on every row (the text's "Fits up to batch").
 * \param memory the memory report
 * \param largestBatch an inference job's largest batch that fits (< 0: training, left empty)
 * \return the CSV text, header first
 */
std::string MemoryReportCsv(const MemoryReport& memory, int64_t largestBatch = -1);

/**
 * \brief Draws the step breakdown of the critical rank as a bar chart PNG (compute split by
 * kernel kind where known, exposed communication, pipeline bubble).
 * \param pngPath the PNG \param report the report \param title the plot's title
 * (without gnuplot only its script is written: WritePlotPng)
 */
void WriteBreakdownPng(const std::string& pngPath,
                       const RunReport& report,
                       const std::string& title);

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_REPORT_OUTPUT_H
