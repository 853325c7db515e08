/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_CSV_TABLE_H
#define RAPIDLLM_CSV_TABLE_H

#include <cstdint>
#include <string>
#include <vector>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief A small comma-separated table (published measurements in data/validation/): lines
 * starting with '#' are comments, the first other line names the columns; blanks around a field
 * ("a, b", as many writers put them) are not part of it.
 */
class CsvTable
{
  public:
    /**
     * \brief Reads a file; a missing file, a column named twice or a row with the wrong number
     * of fields throws SpecError naming the file and line.
     * \param path the file
     * \return the table
     */
    static CsvTable Load(const std::string& path);

    /** \return the number of data rows */
    std::size_t Rows() const;
    /** \return the text of \p column in row \p row ("" if blank) */
    const std::string& Text(std::size_t row, const std::string& column) const;
    /**
     * \return the number in \p column of row \p row; throws SpecError naming the file, line
     * and column if it is not a finite one
     */
    double Number(std::size_t row, const std::string& column) const;
    /** \return Number(), which must be above 0 (a measured time or rate); else SpecError */
    double Positive(std::size_t row, const std::string& column) const;
    /**
     * \return Number(), which must be a whole number from \p least to \p most (a count or a
     * size); else SpecError with the range
     */
    uint64_t Count(std::size_t row,
                   const std::string& column,
                   uint64_t least = 1,
                   uint64_t most = UINT32_MAX) const;
    /**
     * \return the text of \p column in row \p row, which must be one of \p allowed; else
     * SpecError listing them
     */
    const std::string& Choice(std::size_t row,
                              const std::string& column,
                              const std::vector<std::string>& allowed) const;
    /** \return whether \p column of row \p row is blank */
    bool Blank(std::size_t row, const std::string& column) const;
    /** \return whether the header names \p column */
    bool Has(const std::string& column) const;
    /** \return the header's column names, in order */
    const std::vector<std::string>& Columns() const;
    /** \return the file line of row \p row, for errors */
    int Line(std::size_t row) const;
    /** \return the file read */
    const std::string& Path() const;

  private:
    /** \return the index of \p column; throws SpecError listing the columns */
    std::size_t Column(const std::string& column) const;

    std::string m_path;                           //!< file, for errors
    std::vector<std::string> m_columns;           //!< header
    std::vector<std::vector<std::string>> m_rows; //!< data
    std::vector<int> m_lines;                     //!< file line of each row
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_CSV_TABLE_H
