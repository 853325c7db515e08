/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_INDEXED_MIN_HEAP_H
#define RAPIDLLM_INDEXED_MIN_HEAP_H

#include <cstdint>
#include <vector>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief A binary min-heap of (key, item) entries with at most one entry per item, where an
 * item's key can be changed or removed in O(log n) (an index records each item's position).
 *
 * Items are small dense integers (e.g. flow slots); the heap keeps one 4-byte position per
 * item ever seen. Order: smaller key first, equal keys by smaller item, so the top is the same
 * whatever the order of the updates (deterministic runs). The flow network keeps its
 * transmission ends here: one entry per transmitting flow, moved whenever its rate changes.
 */
class IndexedMinHeap
{
  public:
    /** \brief One entry. */
    struct Entry
    {
        double key;    //!< e.g. the time a flow finishes
        uint32_t item; //!< the item
    };

    /** \return whether the heap holds no entry */
    bool
    IsEmpty() const
    {
        return m_heap.empty();
    }

    /** \return the number of entries */
    uint32_t
    GetSize() const
    {
        return static_cast<uint32_t>(m_heap.size());
    }

    /** \return the entry with the smallest (key, item); the heap must not be empty */
    const Entry&
    Top() const
    {
        return m_heap.front();
    }

    /** \return whether \p item has an entry */
    bool
    Contains(uint32_t item) const
    {
        return item < m_pos.size() && m_pos[item] != kAbsent;
    }

    /** \return the key of \p item, which must have an entry */
    double
    GetKey(uint32_t item) const
    {
        return m_heap[m_pos[item]].key;
    }

    /**
     * \brief Inserts \p item with \p key, or moves its entry to \p key.
     * \param item the item \param key its key
     */
    void
    Set(uint32_t item, double key)
    {
        if (item >= m_pos.size())
        {
            m_pos.resize(item + 1, kAbsent);
        }
        const uint32_t i = m_pos[item];
        if (i == kAbsent)
        {
            m_heap.push_back({key, item});
            SiftUp(static_cast<uint32_t>(m_heap.size() - 1));
            return;
        }
        const double old = m_heap[i].key;
        m_heap[i].key = key;
        if (key < old)
        {
            SiftUp(i);
        }
        else
        {
            SiftDown(i);
        }
    }

    /**
     * \brief Removes the entry of \p item (nothing if it has none).
     * \param item the item
     */
    void
    Erase(uint32_t item)
    {
        if (!Contains(item))
        {
            return;
        }
        const uint32_t i = m_pos[item];
        m_pos[item] = kAbsent;
        const Entry last = m_heap.back();
        m_heap.pop_back();
        if (i < m_heap.size())
        {
            Place(i, last);
            SiftUp(i);
            SiftDown(m_pos[last.item]);
        }
    }

    /** \brief Removes every entry. */
    void
    Clear()
    {
        m_heap.clear();
        m_pos.clear();
    }

    /** \return the entries in heap order (for checks: entry i is not before its parent) */
    const std::vector<Entry>&
    GetEntries() const
    {
        return m_heap;
    }

    /** \return heap order: smaller key first, ties by smaller item */
    static bool
    Before(const Entry& a, const Entry& b)
    {
        return a.key != b.key ? a.key < b.key : a.item < b.item;
    }

  private:
    /** Position of an item without an entry. */
    static constexpr uint32_t kAbsent = UINT32_MAX;

    /** \brief Puts \p e at heap index \p i and records its position. */
    void
    Place(uint32_t i, const Entry& e)
    {
        m_heap[i] = e;
        m_pos[e.item] = i;
    }

    /** \brief Restores the heap upwards from index \p i. */
    void
    SiftUp(uint32_t i)
    {
        const Entry e = m_heap[i];
        while (i > 0)
        {
            const uint32_t parent = (i - 1) / 2;
            if (!Before(e, m_heap[parent]))
            {
                break;
            }
            Place(i, m_heap[parent]);
            i = parent;
        }
        Place(i, e);
    }

    /** \brief Restores the heap downwards from index \p i. */
    void
    SiftDown(uint32_t i)
    {
        const Entry e = m_heap[i];
        const auto n = static_cast<uint32_t>(m_heap.size());
        while (true)
        {
            uint32_t child = 2 * i + 1;
            if (child >= n)
            {
                break;
            }
            if (child + 1 < n && Before(m_heap[child + 1], m_heap[child]))
            {
                ++child;
            }
            if (!Before(m_heap[child], e))
            {
                break;
            }
            Place(i, m_heap[child]);
            i = child;
        }
        Place(i, e);
    }

    std::vector<Entry> m_heap;   //!< the binary heap
    std::vector<uint32_t> m_pos; //!< per item: index in m_heap, or kAbsent
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_INDEXED_MIN_HEAP_H
