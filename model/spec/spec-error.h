/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_SPEC_ERROR_H
#define RAPIDLLM_SPEC_ERROR_H

#include "ns3/rapidllm-error.h"

#include <string>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief Bad input: names the file, the field (with the YAML line where known) and what is
 * allowed, so that a user can fix it without reading our code.
 *
 * Every user-facing entry point catches it, prints what() and exits non-zero.
 */
class SpecError : public Error
{
  public:
    /**
     * \param file the file (or preset, or "command line") the value came from; empty when the
     *        value was set through the API and its origin is unknown to the model
     * \param field the dotted path of the field, e.g. "gpu.hbm_bandwidth_GBps"; may be empty
     * \param message what is wrong and what is allowed
     * \param line 1-based YAML line, or 0 when unknown
     */
    SpecError(const std::string& file,
              const std::string& field,
              const std::string& message,
              int line = 0);

    /** \return the file the bad value came from */
    const std::string& GetFile() const;
    /** \return the dotted field path */
    const std::string& GetField() const;
    /** \return the 1-based line, or 0 when unknown */
    int GetLine() const;
    /** \return what is wrong, without the file and field (for callers that name them their way,
     * e.g. the command line naming the option a field came from) */
    const std::string& GetMessage() const;

  private:
    std::string m_file;    //!< source file
    std::string m_field;   //!< field path
    std::string m_message; //!< what is wrong
    int m_line;            //!< line, 0 when unknown
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_SPEC_ERROR_H
