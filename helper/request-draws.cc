/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "request-draws.h"

#include <boost/random/gamma_distribution.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>

namespace ns3 {
namespace rapidllm {

std::vector<double>
PoissonArrivals(double rate, uint32_t count, uint64_t seed)
{
    if (!(rate > 0))
    {
        throw std::invalid_argument("a Poisson arrival rate must be above 0");
    }
    std::mt19937_64 generator(seed);
    std::vector<double> arrivals;
    arrivals.reserve(count);
    double t = 0;
    for (uint32_t i = 0; i < count; ++i)
    {
        // 53 random bits in [0, 1): the same draws from the same seed everywhere, unlike the
        // library's distributions, whose algorithms are the implementation's.
        const double u = double(generator() >> 11) * 0x1.0p-53;
        t += -std::log1p(-u) / rate;
        arrivals.push_back(t);
    }
    return arrivals;
}

std::vector<double>
GammaArrivals(double rate, double burstiness, uint32_t count, uint64_t seed)
{
    if (!(burstiness > 0))
    {
        throw std::invalid_argument("an arrival burstiness (gamma shape) must be above 0");
    }
    if (burstiness == 1)
    {
        return PoissonArrivals(rate, count, seed);
    }
    if (!(rate > 0))
    {
        throw std::invalid_argument("an arrival rate must be above 0");
    }
    std::mt19937_64 generator(seed);
    boost::random::gamma_distribution<double> gap(burstiness, 1 / (rate * burstiness));
    std::vector<double> arrivals;
    arrivals.reserve(count);
    double t = 0;
    for (uint32_t i = 0; i < count; ++i)
    {
        t += gap(generator);
        arrivals.push_back(t);
    }
    return arrivals;
}

void
DrawLengths(std::vector<QueueRequest>& requests,
            uint32_t prompt,
            uint32_t generated,
            double spread,
            uint64_t seed)
{
    if (!(spread >= 0 && spread < 1))
    {
        throw std::invalid_argument("a length spread must be from 0 to below 1");
    }
    std::mt19937_64 generator(seed);
    // Uniform integers from L (1 - spread) to L (1 + spread): the same draws everywhere.
    auto draw = [&](uint32_t mean, uint32_t least)
    {
        const auto low = static_cast<uint64_t>(std::llround(mean * (1 - spread)));
        const auto high = static_cast<uint64_t>(std::llround(mean * (1 + spread)));
        const uint64_t value = low + generator() % (high - low + 1);
        return static_cast<uint32_t>(std::max<uint64_t>(value, std::min(least, mean)));
    };
    for (auto& r : requests)
    {
        r.prompt = draw(prompt, 1);
        r.generated = draw(generated, 2);
    }
}

void
DrawPrefixHits(std::vector<QueueRequest>& requests,
               double share,
               uint32_t tokens,
               uint32_t prompt,
               uint64_t seed)
{
    if (!(share >= 0 && share <= 1))
    {
        throw std::invalid_argument("a prefix hit share must be from 0 to 1");
    }
    std::mt19937_64 generator(seed);
    for (auto& r : requests)
    {
        const double u = double(generator() >> 11) * 0x1.0p-53;
        if (r.prompt == 0)
        {
            r.prompt = prompt;
        }
        r.cached = u < share ? std::min(tokens, r.prompt > 0 ? r.prompt - 1 : 0) : 0;
    }
}

void
DrawPrefixGroups(std::vector<QueueRequest>& requests,
                 uint32_t groups,
                 double skew,
                 uint32_t prompt,
                 uint64_t seed)
{
    if (groups == 0 || !(skew >= 0))
    {
        throw std::invalid_argument("prefix groups need one group or more and a skew of 0 or more");
    }
    std::mt19937_64 generator(seed);
    // Zipf's law: the cumulative weights of groups 1..K.
    std::vector<double> cumulative;
    if (skew > 0)
    {
        double sum = 0;
        for (uint32_t g = 1; g <= groups; ++g)
        {
            sum += std::pow(double(g), -skew);
            cumulative.push_back(sum);
        }
    }
    for (auto& r : requests)
    {
        if (skew > 0)
        {
            const double u = double(generator() >> 11) * 0x1.0p-53 * cumulative.back();
            const auto it = std::upper_bound(cumulative.begin(), cumulative.end(), u);
            r.prefix = static_cast<uint32_t>(
                std::min<std::ptrdiff_t>(it - cumulative.begin(), groups - 1) + 1);
        }
        else
        {
            r.prefix = static_cast<uint32_t>(1 + generator() % groups);
        }
        r.prompt = r.prompt == 0 ? prompt : r.prompt + r.cached;
        r.cached = 0;
    }
}

} // namespace rapidllm
} // namespace ns3
