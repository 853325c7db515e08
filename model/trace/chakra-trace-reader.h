/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_CHAKRA_TRACE_READER_H
#define RAPIDLLM_CHAKRA_TRACE_READER_H

#include "chakra-stream.h"
#include "comm-groups.h"
#include "execution-trace.h"
#include "trace-set.h"

#include <cstdint>
#include <string>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief Loads Chakra ET files, ours or another tool's, plain or gzip-compressed, into
 * ExecutionTraces, and rejects damaged input with a TraceError naming the file, rank, node and
 * what is wrong.
 *
 * Checked: length prefixes (truncated, malformed, oversized), protobuf validity, node types,
 * attribute types and ranges, duplicate ids, dependencies on missing ids, cycles, collective
 * types, groups named by pg_name (they must exist and contain the rank), peer ranks, and
 * across a set: every send has its receive and every group member issues as many collectives.
 * No byte sequence makes it crash (a libFuzzer target, test/fuzz/, exercises that).
 * Nodes come back sorted by id; ctrl_deps and data_deps both become dependencies.
 */
class ChakraTraceReader
{
  public:
    /** Largest single message accepted (a node of a real trace is a few hundred bytes). */
    static constexpr uint32_t kMaxMessageBytes = kChakraMaxMessageBytes;
    /** Largest decompressed size of one gzip file accepted (guards against gzip bombs). */
    static constexpr uint64_t kMaxInflatedBytes = kChakraMaxInflatedBytes;

    /**
     * \brief Decodes one rank's file from memory.
     * \param bytes the file's content (gzip is detected by its magic bytes)
     * \param file the name used in errors
     * \param rank the file's rank
     * \param groups groups that pg_name must name, or nullptr to skip that check
     * \param worldSize ranks in the set, bounding peer ranks; 0 when unknown
     * \return the graph, sorted by id and validated
     * \throws TraceError on any damage
     */
    static ExecutionTrace DecodeRank(const std::string& bytes,
                                     const std::string& file,
                                     uint32_t rank,
                                     const CommGroups* groups,
                                     uint32_t worldSize);

    /**
     * \brief Reads one rank's file.
     * \param path the file
     * \param rank its rank
     * \param groups groups that pg_name must name, or nullptr to skip that check
     * \param worldSize ranks in the set; 0 when unknown
     * \return the graph
     * \throws TraceError when unreadable or damaged
     */
    static ExecutionTrace ReadRankFile(const std::string& path,
                                       uint32_t rank,
                                       const CommGroups* groups,
                                       uint32_t worldSize);

    /**
     * \brief Reads <prefix>.<r>.et for r = 0..N-1 (all present, none missing) and
     * <prefix>.comm_groups.json (optional when no node names a group), then checks the set.
     * \param prefix the path prefix the writer was given, or a directory holding exactly one
     * set (as `rapid-llm trace --out=DIR` writes)
     * \param groupsFile a groups file to read instead of <prefix>.comm_groups.json (it must
     * exist), or "" for that one; every rank's nodes are checked against it
     * \param checkSet run CheckSet on the whole set (false: each file is still checked)
     * \return the traces and groups
     * \throws TraceError on a missing rank, damaged file or inconsistent set
     */
    static TraceSet ReadTraceSet(const std::string& prefix,
                                 const std::string& groupsFile = "",
                                 bool checkSet = true);

    /**
     * \brief Checks what only the whole set shows: sends and receives pair up
     * (src, dst, tag, bytes), and each group's members issue the same number of collectives
     * on it. Replaying a set that fails this would hang.
     * \param set the traces and groups
     * \param prefix the name used in errors
     * \throws TraceError describing the first mismatch
     */
    static void CheckSet(const TraceSet& set, const std::string& prefix);

    /**
     * \brief Inflates a gzip stream (possibly several members back to back).
     * \param bytes gzip data
     * \param file name used in errors
     * \return the decompressed bytes
     * \throws TraceError when the data is corrupt, truncated or inflates past kMaxInflatedBytes
     */
    static std::string Gunzip(const std::string& bytes, const std::string& file);
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_CHAKRA_TRACE_READER_H
