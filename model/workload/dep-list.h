/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_DEP_LIST_H
#define RAPIDLLM_DEP_LIST_H

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <vector>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief A work node's (or a collective step's) dependency ids: up to two held in place, more
 * on the heap.
 *
 * Nearly every node waits for one or two others (the stream's previous node, an operand sent
 * beside it), and a graph holds millions of nodes: a std::vector would cost 24 bytes and a heap
 * block per node, this costs 16 bytes and no allocation.
 */
class DepList
{
  public:
    DepList() = default;

    /** \param ids the dependencies */
    DepList(std::initializer_list<uint32_t> ids)
    {
        for (uint32_t id : ids)
        {
            push_back(id);
        }
    }

    /** \param ids the dependencies (a list as the collective schedules' callers build them) */
    DepList(const std::vector<uint32_t>& ids)
    {
        for (uint32_t id : ids)
        {
            push_back(id);
        }
    }

    DepList(const DepList& other)
    {
        Assign(other);
    }

    DepList(DepList&& other) noexcept
        : m_size(other.m_size)
        , m_capacity(other.m_capacity)
    {
        std::memcpy(&m_store, &other.m_store, sizeof(m_store));
        other.m_size = 0;
        other.m_capacity = kInline;
    }

    DepList&
    operator=(const DepList& other)
    {
        if (this != &other)
        {
            Release();
            Assign(other);
        }
        return *this;
    }

    DepList&
    operator=(DepList&& other) noexcept
    {
        if (this != &other)
        {
            Release();
            m_size = other.m_size;
            m_capacity = other.m_capacity;
            std::memcpy(&m_store, &other.m_store, sizeof(m_store));
            other.m_size = 0;
            other.m_capacity = kInline;
        }
        return *this;
    }

    ~DepList()
    {
        Release();
    }

    /** \param id a dependency to add at the end */
    void
    push_back(uint32_t id)
    {
        if (m_size == m_capacity)
        {
            Grow();
        }
        data()[m_size++] = id;
    }

    /** \return the number of dependencies */
    uint32_t
    size() const
    {
        return m_size;
    }

    /** \return whether there are none */
    bool
    empty() const
    {
        return m_size == 0;
    }

    /** \return the first id */
    const uint32_t*
    data() const
    {
        return m_capacity > kInline ? m_store.heap : m_store.ids;
    }

    /** \return the first id */
    uint32_t*
    data()
    {
        return m_capacity > kInline ? m_store.heap : m_store.ids;
    }

    /** \return the first id */
    const uint32_t*
    begin() const
    {
        return data();
    }

    /** \return one past the last id */
    const uint32_t*
    end() const
    {
        return data() + m_size;
    }

    /** \param i an index below size() \return the id */
    uint32_t
    operator[](uint32_t i) const
    {
        return data()[i];
    }

  private:
    static constexpr uint32_t kInline = 2; //!< ids held in place

    /** Copies \p other into this empty list. */
    void
    Assign(const DepList& other)
    {
        m_size = 0;
        m_capacity = kInline;
        if (other.m_size > kInline)
        {
            m_store.heap = new uint32_t[other.m_size];
            m_capacity = other.m_size;
        }
        std::copy(other.begin(), other.end(), data());
        m_size = other.m_size;
    }

    /** Doubles the capacity, moving the ids to the heap. */
    void
    Grow()
    {
        const uint32_t capacity = 2 * m_capacity;
        auto* heap = new uint32_t[capacity];
        std::copy(begin(), end(), heap);
        Release();
        m_store.heap = heap;
        m_capacity = capacity;
    }

    /** Frees the heap block, if any. */
    void
    Release()
    {
        if (m_capacity > kInline)
        {
            delete[] m_store.heap;
            m_capacity = kInline;
        }
    }

    uint32_t m_size = 0;           //!< ids held
    uint32_t m_capacity = kInline; //!< ids the storage holds (above kInline: on the heap)

    union Store
    {
        uint32_t ids[kInline]; //!< in place
        uint32_t* heap;        //!< on the heap
    } m_store{};               //!< the ids
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_DEP_LIST_H
