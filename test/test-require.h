/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_TEST_REQUIRE_H
#define RAPIDLLM_TEST_REQUIRE_H

#include "ns3/test.h"

/**
 * \brief NS_TEST_ASSERT_MSG_EQ that also leaves the test case when it fails.
 *
 * ns-3's runner continues after a failed assertion unless it is run with --stop-on-failure (and
 * CTest runs it without), so a test that indexes by the size it has just asserted would crash
 * instead of failing with its message. Use it where later lines rely on the assertion.
 */
#define RAPIDLLM_REQUIRE_EQ(actual, limit, msg)                                  \
    do                                                                           \
    {                                                                            \
        const auto rapidllmRequired = (actual);                                  \
        NS_TEST_ASSERT_MSG_EQ(rapidllmRequired, limit, msg << " [" #actual "]"); \
        if (!(rapidllmRequired == (limit)))                                      \
        {                                                                        \
            return;                                                              \
        }                                                                        \
    }                                                                            \
    while (false)

/** \brief NS_TEST_ASSERT_MSG_NE that also leaves the test case when it fails (a null pointer). */
#define RAPIDLLM_REQUIRE_NE(actual, limit, msg)                                  \
    do                                                                           \
    {                                                                            \
        const auto rapidllmRequired = (actual);                                  \
        NS_TEST_ASSERT_MSG_NE(rapidllmRequired, limit, msg << " [" #actual "]"); \
        if (!(rapidllmRequired != (limit)))                                      \
        {                                                                        \
            return;                                                              \
        }                                                                        \
    }                                                                            \
    while (false)

#endif // RAPIDLLM_TEST_REQUIRE_H
