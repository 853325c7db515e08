/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_ARRIVAL_TRACE_H
#define RAPIDLLM_ARRIVAL_TRACE_H

#include "serving-queue.h"

#include <string>
#include <vector>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief Requests recorded by a serving system, replayed instead of drawn arrivals: each one's
 * arrival time and, where the file gives them, its prompt and generated tokens. Real traffic
 * has bursts, lulls and lengths that no Poisson process with uniform lengths has (the Azure LLM
 * inference traces that Splitwise and DynamoLLM publish are the common public ones).
 */
struct ArrivalTrace
{
    std::string path;   //!< the file read
    std::string format; //!< "arrival_s" (this tool's columns) or "azure"
    /**
     * the requests in arrival order, the first at 0 s; prompt and generated 0 where the file
     * gives no lengths
     */
    std::vector<QueueRequest> requests;
    /** whether the file gave each request's cached prompt tokens (QueueRequest::cached) */
    bool hasCached = false;

    /** \return whether the file gave each request's prompt and generated tokens */
    bool HasLengths() const;
    /** \return the requests per second over the trace: requests - 1 over the first to last */
    double RateRps() const;
    /** \return the mean prompt tokens (0 without lengths) */
    double MeanPrompt() const;
    /** \return the mean generated tokens (0 without lengths) */
    double MeanGenerated() const;
    /** \return the mean cached prompt tokens (0 without them) */
    double MeanCached() const;
};

/**
 * \brief Reads a trace of requests from a CSV file ('#' lines are comments), in either of two
 * forms, told apart by the header:
 * - `arrival_s[,prompt,generated[,cached]]`: seconds from any origin, and optionally each
 *   request's prompt and generated tokens, and of its prompt the tokens found in the cache
 *   (as a serving engine's logs give them: vLLM's num_cached_tokens; 0 to prompt - 1);
 * - `TIMESTAMP,ContextTokens,GeneratedTokens`: the Azure LLM inference traces
 *   (github.com/Azure/AzurePublicDataset, 2023 and 2024), TIMESTAMP a date and time
 *   `YYYY-MM-DD HH:MM:SS[.fraction][+HH:MM|Z]`.
 * Rows out of time order are put in order (stably); times become seconds from the first.
 * \param path the file
 * \return the trace
 * \throw SpecError naming the file, the column and the line of a bad value: no such form, a
 * time that is not one, tokens that are not a whole number of at least 1, fewer than two
 * requests or all at one time, cached tokens without lengths or not below the prompt
 */
ArrivalTrace ReadArrivalTrace(const std::string& path);

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_ARRIVAL_TRACE_H
