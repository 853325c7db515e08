/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "network-stats.h"

#include <algorithm>

namespace ns3 {
namespace rapidllm {

std::vector<LinkStats>
NetworkStats::MostLoaded(uint32_t count) const
{
    std::vector<LinkStats> loaded;
    for (const auto& l : links)
    {
        if (l.bytes > 0)
        {
            loaded.push_back(l);
        }
    }
    std::stable_sort(loaded.begin(),
                     loaded.end(),
                     [](const LinkStats& a, const LinkStats& b)
                     {
                         return a.utilization != b.utilization ? a.utilization > b.utilization
                                                               : a.bytes > b.bytes;
                     });
    if (loaded.size() > count)
    {
        loaded.resize(count);
    }
    return loaded;
}

} // namespace rapidllm
} // namespace ns3
