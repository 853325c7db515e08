/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_COMM_GROUPS_H
#define RAPIDLLM_COMM_GROUPS_H

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief Communicator groups of a trace set: group id -> the ranks in it, in group order.
 *
 * A COMM_COLL node names its group through its pg_name attribute (the decimal id); the groups
 * are stored beside the traces as <prefix>.comm_groups.json, {"1": [0, 1, 2, 3], ...}, the
 * format ASTRA-sim reads with --comm-group-configuration. Ordered by id so output is
 * deterministic.
 */
class CommGroups
{
  public:
    /**
     * \brief Adds a group.
     * \param id group id (anything but kWorldGroup)
     * \param ranks its ranks in group order, each at most once
     * \throws std::invalid_argument on a duplicate id, an empty group or a repeated rank
     */
    void Add(uint32_t id, const std::vector<uint32_t>& ranks);

    /**
     * \param id a group id
     * \return true when the group exists
     */
    bool Has(uint32_t id) const;

    /**
     * \param id a group id
     * \return its ranks
     * \throws std::out_of_range when there is no such group
     */
    const std::vector<uint32_t>& Get(uint32_t id) const;

    /** \return all groups by id */
    const std::map<uint32_t, std::vector<uint32_t>>& GetAll() const;

    /** \return number of groups */
    size_t GetSize() const;

    /**
     * \param id a group id
     * \param rank a rank
     * \return true when rank is a member of group id
     */
    bool Contains(uint32_t id, uint32_t rank) const;

    /** \return the JSON text, one group per line, ids ascending (deterministic) */
    std::string ToJson() const;

    /**
     * \brief Parses the JSON object {"<id>": [rank, ...], ...}.
     * \param text the JSON text
     * \param file the file name for errors
     * \return the groups
     * \throws TraceError naming the file, the byte offset and what is wrong
     */
    static CommGroups FromJson(const std::string& text, const std::string& file);

    /**
     * \brief Reads a comm_groups.json file.
     * \param path the file
     * \return the groups
     * \throws TraceError when it cannot be read or is malformed
     */
    static CommGroups Load(const std::string& path);

    /**
     * \param other other groups
     * \return true when both hold the same groups
     */
    bool operator==(const CommGroups& other) const;

  private:
    std::map<uint32_t, std::vector<uint32_t>> m_groups; //!< id -> ranks
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_COMM_GROUPS_H
