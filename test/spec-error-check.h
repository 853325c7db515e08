/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_SPEC_ERROR_CHECK_H
#define RAPIDLLM_SPEC_ERROR_CHECK_H

#include "ns3/network-error.h"
#include "ns3/spec-error.h"

#include <string>
#include <vector>

namespace ns3 {
namespace rapidllm {

/**
 * \brief For error-path tests: whether evaluating \p f throws an \p E (SpecError unless
 * given, e.g. ThrowsWith<NetworkError>) whose message contains every one of \p needles.
 */
template<typename E = SpecError, typename F>
bool
ThrowsWith(F f, const std::vector<std::string>& needles)
{
    try
    {
        f();
    }
    catch (const E& e)
    {
        std::string what = e.what();
        for (const auto& n : needles)
        {
            if (what.find(n) == std::string::npos)
            {
                return false;
            }
        }
        return true;
    }
    return false;
}

/**
 * \return the message of the \p E that \p f throws, or "" when it throws none (another
 *         exception passes through)
 */
template<typename E = SpecError, typename F>
std::string
ErrorOf(F f)
{
    try
    {
        f();
    }
    catch (const E& e)
    {
        return e.what();
    }
    return "";
}

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_SPEC_ERROR_CHECK_H
