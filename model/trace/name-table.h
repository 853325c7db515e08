/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_NAME_TABLE_H
#define RAPIDLLM_NAME_TABLE_H

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief The node names of a trace, packed into character blocks that never move (4 KiB, then
 * doubling up to 1 MiB).
 *
 * A workload's trace names millions of nodes: a std::string each would cost a heap block per
 * node. Names added with Add() are looked up first and shared; AddDistinct() skips the lookup
 * for a caller whose names are all different (a workload's).
 */
class NameTable
{
  public:
    NameTable() = default;
    NameTable(const NameTable& other);
    NameTable& operator=(const NameTable& other);
    NameTable(NameTable&& other) noexcept;
    NameTable& operator=(NameTable&& other) noexcept;

    /** \param name a name \return its index, the existing one if it was added before */
    uint32_t Add(std::string_view name);

    /** \param name a name \return its index: a new one, without looking it up */
    uint32_t AddDistinct(std::string_view name);

    /** \param index an index Add or AddDistinct returned \return the name */
    std::string_view
    Get(uint32_t index) const
    {
        return m_names[index];
    }

    /** \return the number of names */
    std::size_t
    Size() const
    {
        return m_names.size();
    }

    /**
     * \brief Makes room for \p names names: in the table when they are distinct, else in the
     * index that shares them. \param names how many \param distinct whether AddDistinct adds them
     */
    void Reserve(std::size_t names, bool distinct);

  private:
    /** \return a copy of \p name in the blocks */
    std::string_view Store(std::string_view name);

    static constexpr std::size_t kFirstBlockBytes = 1 << 12; //!< characters in the first block
    static constexpr std::size_t kBlockBytes = 1 << 20;      //!< at most, in later blocks

    std::vector<std::unique_ptr<char[]>> m_blocks; //!< the characters; blocks never move
    char* m_next = nullptr;                        //!< the next free character
    std::size_t m_free = 0;                        //!< characters left in the last block
    std::size_t m_blockBytes = 0; //!< the last block's size (before a long name's own block)
    std::vector<std::string_view> m_names;                  //!< by index, into the blocks
    std::unordered_map<std::string_view, uint32_t> m_index; //!< names Add() shares
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_NAME_TABLE_H
