/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_REQUEST_DRAWS_H
#define RAPIDLLM_REQUEST_DRAWS_H

#include "serving-queue.h"

#include <cstdint>
#include <vector>

namespace ns3 {
namespace rapidllm {

/**
 * \brief Draws each request's prompt and generated lengths uniformly from L (1 - spread) to
 * L (1 + spread), rounded (as vLLM's benchmark_serving.py random dataset spreads its lengths by
 * --random-range-ratio), from a Mersenne twister of its own seed; a prompt keeps at least one
 * token and a request that generates two or more keeps at least two (a time between tokens).
 * \param requests the requests (lengths set in place) \param prompt the mean prompt
 * \param generated the mean generated tokens \param spread 0 (all the mean) to below 1
 * \param seed the generator's seed
 */
void DrawLengths(std::vector<QueueRequest>& requests,
                 uint32_t prompt,
                 uint32_t generated,
                 double spread,
                 uint64_t seed);

/**
 * \brief Draws which requests find a cached prefix: each independently with probability
 * \p share (53 random bits from a Mersenne twister of its own seed, the same draws on any
 * platform); those that do get \p tokens cached, the others none; a request without a prompt
 * of its own gets \p prompt (its cached tokens at most its prompt less one).
 * \param requests the requests (set in place) \param share 0 to 1 \param tokens the prefix
 * \param prompt the job's prompt tokens \param seed the generator's seed
 */
void DrawPrefixHits(std::vector<QueueRequest>& requests,
                    double share,
                    uint32_t tokens,
                    uint32_t prompt,
                    uint64_t seed);

/**
 * \brief Draws each request's prefix group (QueueRequest::prefix, 1 to \p groups): uniformly
 * (the group of 64 random bits modulo the groups), or with \p skew above 0 by Zipf's law, group
 * g with weight 1 / g^skew (53 random bits against the weights' cumulative sums), from a
 * Mersenne twister of its own seed, the same draws on any platform; each request's prompt is
 * its whole prompt (\p prompt where it has none of its own) with none of it cached.
 * \param requests the requests (set in place) \param groups how many, 1 or more
 * \param skew the Zipf exponent, 0 (uniform) or more \param prompt the job's prompt tokens
 * \param seed the generator's seed
 */
void DrawPrefixGroups(std::vector<QueueRequest>& requests,
                      uint32_t groups,
                      double skew,
                      uint32_t prompt,
                      uint64_t seed);

/**
 * \param rate requests per second \param count requests \param seed the generator's seed
 * \return the arrival times of a Poisson process (exponential gaps from a Mersenne twister,
 * the same for the same seed on any platform), the first at its first gap
 */
std::vector<double> PoissonArrivals(double rate, uint32_t count, uint64_t seed);

/**
 * \brief Arrivals whose gaps are gamma-distributed with shape \p burstiness and mean 1 / rate,
 * as vLLM's benchmark_serving.py --burstiness draws them: 1 is the Poisson process (exactly
 * PoissonArrivals' draws), below 1 burstier (the gaps' squared coefficient of variation is
 * 1 / burstiness), above 1 more even. Boost.Random's gamma distribution on a Mersenne twister,
 * the same draws from the same seed on any platform.
 * \param rate requests per second \param burstiness the gamma shape, above 0
 * \param count requests \param seed the generator's seed \return the arrival times
 */
std::vector<double> GammaArrivals(double rate, double burstiness, uint32_t count, uint64_t seed);

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_REQUEST_DRAWS_H
