/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_CHAKRA_TRACE_WRITER_H
#define RAPIDLLM_CHAKRA_TRACE_WRITER_H

#include "comm-groups.h"
#include "execution-trace.h"
#include "trace-set.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief Writes execution graphs as MLCommons Chakra ET files that ASTRA-sim's feeder reads.
 *
 * Each rank's file is a stream of varint32-length-prefixed protobuf messages: GlobalMetadata,
 * then one Node per graph node in ascending id order. Nodes follow the feeder's attribute
 * conventions (see doc/chakra-traces.md) and also carry "duration_ns", the exact duration,
 * because duration_micros is whole microseconds. Output is deterministic: the same graph gives
 * the same bytes.
 */
class ChakraTraceWriter
{
  public:
    /** The GlobalMetadata.version we write (Chakra's current schema version). */
    static const char* const kSchemaVersion;

    /**
     * \brief Encodes one rank's graph as the bytes of a Chakra ET file.
     * \param trace the graph (its rank goes into the metadata)
     * \param worldSize number of ranks in the set (recorded in the metadata; 0 = not recorded)
     * \param gzip compress with gzip (deterministic: no time stamp in the header)
     * \return the file's bytes
     * \throws TraceError when a value does not fit Chakra's field types
     */
    static std::string EncodeRank(const ExecutionTrace& trace, uint32_t worldSize, bool gzip);

    /**
     * \brief Writes <prefix>.<r>.et for every rank and <prefix>.comm_groups.json, all or
     * nothing: every file goes to a temporary name first and is renamed once all are written.
     * Rank files of the same prefix beyond the set's size (left by an earlier, larger run) are
     * removed so that the set on disk is exactly this one.
     * \param prefix path prefix, e.g. "out/gpt3"
     * \param set the graphs (ranks[r] is written as rank r) and the groups
     * \param gzip compress the .et files
     * \throws OutputError when a file cannot be written, TraceError when a directory is in the
     * way of one (nothing written either way)
     */
    static void WriteTraceSet(const std::string& prefix, const TraceSet& set, bool gzip = false);

    /**
     * \brief Same, for graphs held elsewhere (e.g. shared between symmetric ranks: rank r is
     * written with graphs[r], its rank label replaced by r).
     * \param prefix path prefix
     * \param graphs one pointer per rank
     * \param groups communicator groups
     * \param gzip compress the .et files
     */
    static void WriteTraceSet(const std::string& prefix,
                              const std::vector<const ExecutionTrace*>& graphs,
                              const CommGroups& groups,
                              bool gzip = false);

    /**
     * \brief Same, for graphs made one at a time (e.g. from a workload, so that memory holds one
     * rank's graph at once): rank r is written with rankGraph(r).
     * \param prefix path prefix
     * \param worldSize number of ranks
     * \param rankGraph makes rank r's graph
     * \param groups communicator groups
     * \param gzip compress the .et files
     */
    static void WriteTraceSet(const std::string& prefix,
                              uint32_t worldSize,
                              const std::function<ExecutionTrace(uint32_t)>& rankGraph,
                              const CommGroups& groups,
                              bool gzip = false);

    /**
     * \param prefix path prefix
     * \param rank a rank
     * \return "<prefix>.<rank>.et"
     */
    static std::string RankFileName(const std::string& prefix, uint32_t rank);

    /**
     * \param prefix path prefix
     * \return "<prefix>.comm_groups.json"
     */
    static std::string CommGroupsFileName(const std::string& prefix);

    /**
     * \brief gzip-compresses bytes (zlib, level 6, no time stamp).
     * \param bytes input
     * \return the gzip stream
     */
    static std::string Gzip(const std::string& bytes);

  private:
    /**
     * \brief EncodeRank with the rank written into the metadata given explicitly, so that a
     * graph shared by several ranks is encoded without copying it.
     * \param trace the graph
     * \param rank the rank recorded in the metadata
     * \param worldSize number of ranks (0 = not recorded)
     * \param gzip compress with gzip
     * \return the file's bytes
     */
    static std::string EncodeRankAs(const ExecutionTrace& trace,
                                    uint32_t rank,
                                    uint32_t worldSize,
                                    bool gzip);

    /**
     * \brief The all-or-nothing file handling shared by the WriteTraceSet overloads.
     * \param prefix path prefix
     * \param worldSize number of ranks
     * \param encodeRank returns rank r's file bytes
     * \param groups communicator groups
     */
    static void WriteEncodedSet(const std::string& prefix,
                                uint32_t worldSize,
                                const std::function<std::string(uint32_t)>& encodeRank,
                                const CommGroups& groups);
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_CHAKRA_TRACE_WRITER_H
