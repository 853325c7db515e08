/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_PREFIX_CACHE_H
#define RAPIDLLM_PREFIX_CACHE_H

#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

namespace ns3 {
namespace rapidllm {

/**
 * \brief The prefixes an engine instance holds in its KV cache, the least recently used first
 * to go (vLLM's and SGLang's prefix caches evict in LRU order): a request of a prefix group
 * finds its prefix or computes it, and it is then the most recent. A prefix its requests in
 * flight use is pinned and never goes (the engines evict only blocks no request references).
 */
class PrefixCache
{
  public:
    /** \param capacity the prefixes it holds at most (0: no limit) */
    explicit PrefixCache(uint32_t capacity = 0);
    /** \param prefix a group \return whether it holds the group's prefix */
    bool Holds(uint32_t prefix) const;
    /**
     * \brief Uses a group's prefix: it becomes the most recent, computed and kept if it was not
     * held (evicting the least recently used beyond the capacity).
     * \param prefix a group \return whether it was held (a hit)
     */
    bool Use(uint32_t prefix);
    /** \return the prefixes it holds */
    std::size_t Size() const;
    /**
     * \brief Sets the prefixes it holds at most, the least recently used unpinned going first
     * where it holds more (an engine's free KV cache shrinking under load, or growing).
     * \param capacity 1 or more
     */
    void Resize(uint32_t capacity);
    /**
     * \brief Pins the prefixes of the requests in flight, unpinning the others: a pinned
     * prefix stays beyond the capacity (the blocks its requests hold), and Use keeps one it
     * brings in when all those held are pinned.
     * \param prefixes the groups in flight
     */
    void Pin(std::vector<uint32_t> prefixes);

  private:
    /** \brief Evicts the least recently used unpinned prefix while it holds more than \p most. */
    void EvictBeyond(std::size_t most);

    uint32_t m_capacity;                  //!< the most it holds (0: no limit)
    uint64_t m_clock = 0;                 //!< uses so far
    std::map<uint32_t, uint64_t> m_used;  //!< each held prefix's last use
    std::map<uint64_t, uint32_t> m_byUse; //!< the held prefixes by their last use
    std::vector<uint32_t> m_pinned;       //!< the groups in flight, ascending (Pin)
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_PREFIX_CACHE_H
