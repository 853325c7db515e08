/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "chakra-trace-writer.h"

#include "chakra-stream.h"
#include "ns3/log.h"
#include "trace-error.h"

#include "et_def.pb.h"
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <numeric>

namespace ns3 {
namespace rapidllm {

NS_LOG_COMPONENT_DEFINE("ChakraTraceWriter");

const char* const ChakraTraceWriter::kSchemaVersion = "0.0.4";

namespace {

using ChakraProtoMsg::AttributeProto;
using ChakraProtoMsg::Node;

constexpr uint64_t kInt64Max = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());

void
AddInt64(Node& msg, const char* name, int64_t value)
{
    AttributeProto* a = msg.add_attr();
    a->set_name(name);
    a->set_int64_val(value);
}

void
AddUint64(Node& msg, const char* name, uint64_t value)
{
    AttributeProto* a = msg.add_attr();
    a->set_name(name);
    a->set_uint64_val(value);
}

void
AddInt32(Node& msg, const char* name, int32_t value)
{
    AttributeProto* a = msg.add_attr();
    a->set_name(name);
    a->set_int32_val(value);
}

/// Checks that a value fits the int64 field Chakra's feeder reads it from.
int64_t
AsInt64(uint64_t value, const ExecutionTrace& trace, const TraceNode& node, const char* what)
{
    if (value > kInt64Max)
    {
        throw TraceError("(writing)",
                         trace.GetRank(),
                         static_cast<int64_t>(node.id),
                         std::string(what) + " " + std::to_string(value)
                             + " does not fit Chakra's int64 attribute");
    }
    return static_cast<int64_t>(value);
}

void
WriteFile(const std::string& path, const std::string& bytes)
{
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (out)
    {
        out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
        out.flush();
    }
    if (!out)
    {
        throw OutputError(path);
    }
}

} // namespace

std::string
ChakraTraceWriter::EncodeRank(const ExecutionTrace& trace, uint32_t worldSize, bool gzip)
{
    return EncodeRankAs(trace, trace.GetRank(), worldSize, gzip);
}

std::string
ChakraTraceWriter::EncodeRankAs(const ExecutionTrace& trace,
                                uint32_t rank,
                                uint32_t worldSize,
                                bool gzip)
{
    std::string bytes;
    {
        ChakraOutputStream out(&bytes, gzip);

        ChakraProtoMsg::GlobalMetadata meta;
        meta.set_version(kSchemaVersion);
        AttributeProto* a = meta.add_attr();
        a->set_name("generator");
        a->set_string_val("rapid-llm");
        a = meta.add_attr();
        a->set_name("rank");
        a->set_uint64_val(rank);
        if (worldSize > 0)
        {
            a = meta.add_attr();
            a->set_name("world_size");
            a->set_uint64_val(worldSize);
        }
        if (!trace.GetHardware().empty())
        {
            a = meta.add_attr();
            a->set_name("hardware");
            a->set_string_val(trace.GetHardware());
        }
        if (trace.GetGeneratedTokens() > 0)
        {
            // An inference request: where its first token comes out, and how many follow.
            a = meta.add_attr();
            a->set_name("generated_tokens");
            a->set_uint64_val(trace.GetGeneratedTokens());
            a = meta.add_attr();
            a->set_name("requests");
            a->set_uint64_val(trace.GetRequests());
            if (trace.GetFirstTokenNode() != UINT32_MAX)
            {
                a = meta.add_attr();
                a->set_name("first_token_node");
                a->set_uint64_val(trace.GetNodes()[trace.GetFirstTokenNode()].id);
            }
        }
        out.Write(meta);

        const auto& nodes = trace.GetNodes();
        std::vector<uint32_t> order(nodes.size());
        std::iota(order.begin(), order.end(), 0u);
        if (!trace.IsSortedById())
        {
            std::sort(order.begin(),
                      order.end(),
                      [&nodes](uint32_t a, uint32_t b)
                      {
                          return nodes[a].id < nodes[b].id;
                      });
        }

        Node msg;
        for (uint32_t index : order)
        {
            const TraceNode& n = nodes[index];
            msg.Clear();
            msg.set_id(n.id);
            const std::string_view name = trace.GetName(index);
            msg.set_name(name.data(), name.size());
            msg.set_type(static_cast<ChakraProtoMsg::NodeType>(n.type));
            for (uint32_t dep : trace.GetDeps(index))
            {
                msg.add_data_deps(trace.GetNode(dep).id);
            }
            // Whole microseconds, rounded to nearest; the exact value rides in duration_ns.
            msg.set_duration_micros(n.durationNs / 1000 + (n.durationNs % 1000 >= 500 ? 1 : 0));
            AttributeProto* cpu = msg.add_attr();
            cpu->set_name("is_cpu_op");
            cpu->set_bool_val(false);
            switch (n.type)
            {
                case TraceNodeType::COMP:
                    AddInt64(msg, "num_ops", AsInt64(n.numOps, trace, n, "num_ops"));
                    AddUint64(msg, "tensor_size", n.bytes);
                    break;
                case TraceNodeType::MEM_LOAD:
                case TraceNodeType::MEM_STORE:
                    AddUint64(msg, "tensor_size", n.bytes);
                    break;
                case TraceNodeType::COMM_COLL:
                    AddInt64(msg, "comm_type", static_cast<int64_t>(n.commType));
                    AddInt64(msg, "comm_size", AsInt64(n.bytes, trace, n, "comm_size"));
                    break;
                case TraceNodeType::COMM_SEND:
                case TraceNodeType::COMM_RECV:
                    AddInt32(msg, "comm_src", n.commSrc);
                    AddInt32(msg, "comm_dst", n.commDst);
                    AddInt32(msg, "comm_tag", n.commTag);
                    AddInt64(msg, "comm_size", AsInt64(n.bytes, trace, n, "comm_size"));
                    break;
                case TraceNodeType::INVALID:
                case TraceNodeType::METADATA:
                case TraceNodeType::STORAGE:
                case TraceNodeType::BATCH:
                case TraceNodeType::CHECKPOINT:
                    break; // no attributes beyond the common ones
            }
            if (IsCommunication(n.type) && n.group != kWorldGroup)
            {
                AttributeProto* pg = msg.add_attr();
                pg->set_name("pg_name");
                pg->set_string_val(std::to_string(n.group));
            }
            if (n.durationNs != 0 || n.type == TraceNodeType::COMP)
            {
                AddUint64(msg, "duration_ns", n.durationNs);
            }
            if (trace.GetHostNs(index) != 0)
            {
                AddUint64(msg, "host_ns", trace.GetHostNs(index));
            }
            if (n.type == TraceNodeType::COMP && trace.GetSmScaling(index) > 0)
            {
                AttributeProto* share = msg.add_attr();
                share->set_name("sm_scaling");
                share->set_double_val(trace.GetSmScaling(index));
            }
            if (n.type == TraceNodeType::COMM_COLL && trace.GetCommSms(index) > 0)
            {
                AddUint64(msg, "sm_count", trace.GetCommSms(index));
            }
            if (trace.IsHostSync(index))
            {
                AttributeProto* sync = msg.add_attr();
                sync->set_name("host_sync");
                sync->set_bool_val(true);
            }
            out.Write(msg);
        }
        out.Close();
    }
    return bytes;
}

std::string
ChakraTraceWriter::Gzip(const std::string& bytes)
{
    return GzipBytes(bytes);
}

std::string
ChakraTraceWriter::RankFileName(const std::string& prefix, uint32_t rank)
{
    return prefix + "." + std::to_string(rank) + ".et";
}

std::string
ChakraTraceWriter::CommGroupsFileName(const std::string& prefix)
{
    return prefix + ".comm_groups.json";
}

void
ChakraTraceWriter::WriteTraceSet(const std::string& prefix, const TraceSet& set, bool gzip)
{
    std::vector<const ExecutionTrace*> graphs;
    graphs.reserve(set.ranks.size());
    for (const auto& t : set.ranks)
    {
        graphs.push_back(&t);
    }
    WriteTraceSet(prefix, graphs, set.groups, gzip);
}

void
ChakraTraceWriter::WriteTraceSet(const std::string& prefix,
                                 const std::vector<const ExecutionTrace*>& graphs,
                                 const CommGroups& groups,
                                 bool gzip)
{
    auto worldSize = static_cast<uint32_t>(graphs.size());
    WriteEncodedSet(
        prefix,
        worldSize,
        [&graphs, worldSize, gzip](uint32_t r)
        {
            return EncodeRankAs(*graphs[r], r, worldSize, gzip);
        },
        groups);
}

void
ChakraTraceWriter::WriteTraceSet(const std::string& prefix,
                                 uint32_t worldSize,
                                 const std::function<ExecutionTrace(uint32_t)>& rankGraph,
                                 const CommGroups& groups,
                                 bool gzip)
{
    WriteEncodedSet(
        prefix,
        worldSize,
        [&rankGraph, worldSize, gzip](uint32_t r)
        {
            return EncodeRankAs(rankGraph(r), r, worldSize, gzip);
        },
        groups);
}

namespace {

/** While it lives, SIGINT and SIGTERM are held (blocked) for this thread; Pending() tells. */
class DeferredInterrupts
{
  public:
    DeferredInterrupts()
    {
        sigemptyset(&m_held);
        sigaddset(&m_held, SIGINT);
        sigaddset(&m_held, SIGTERM);
        pthread_sigmask(SIG_BLOCK, &m_held, &m_old);
    }

    ~DeferredInterrupts()
    {
        // A held signal is delivered here, as it would have been (a handler runs, or the
        // default ends the process).
        pthread_sigmask(SIG_SETMASK, &m_old, nullptr);
    }

    DeferredInterrupts(const DeferredInterrupts&) = delete;
    DeferredInterrupts& operator=(const DeferredInterrupts&) = delete;

    /** \return whether an interrupt came and is held */
    bool
    Pending() const
    {
        sigset_t pending;
        sigpending(&pending);
        // One the process ignores (a script's background job ignores SIGINT) is no interrupt:
        // it is dropped as the mask is restored.
        for (int signal : {SIGINT, SIGTERM})
        {
            struct sigaction now = {};
            if (sigismember(&pending, signal) == 1
                && !(sigaction(signal, nullptr, &now) == 0 && now.sa_handler == SIG_IGN))
            {
                return true;
            }
        }
        return false;
    }

  private:
    sigset_t m_held; //!< the signals held
    sigset_t m_old;  //!< the thread's mask before
};

} // namespace

void
ChakraTraceWriter::WriteEncodedSet(const std::string& prefix,
                                   uint32_t worldSize,
                                   const std::function<std::string(uint32_t)>& encodeRank,
                                   const CommGroups& groups)
{
    namespace fs = std::filesystem;
    if (worldSize == 0)
    {
        throw TraceError(prefix, TraceError::kNone, TraceError::kNone, "no ranks to write");
    }
    for (const auto& [id, ranks] : groups.GetAll())
    {
        for (uint32_t r : ranks)
        {
            if (r >= worldSize)
            {
                throw TraceError(CommGroupsFileName(prefix),
                                 TraceError::kNone,
                                 TraceError::kNone,
                                 "group " + std::to_string(id) + " names rank " + std::to_string(r)
                                     + ", but the set has only " + std::to_string(worldSize)
                                     + " ranks");
            }
        }
    }
    std::string suffix = ".tmp" + std::to_string(::getpid());
    // An interrupt (SIGINT, SIGTERM) waits while the set is written: one that comes while the
    // files are encoded ends the write between two files with its temporary files removed (it
    // killed the process and left them); one that comes while they are moved into place is
    // delivered once the whole set is in.
    const DeferredInterrupts deferred;
    std::vector<std::pair<std::string, std::string>> files; // temporary -> final
    auto cleanup = [&files]()
    {
        std::error_code ignored;
        for (const auto& f : files)
        {
            fs::remove(f.first, ignored);
        }
    };
    try
    {
        for (uint32_t r = 0; r < worldSize; ++r)
        {
            if (deferred.Pending())
            {
                // Said here: the interrupt is delivered as this returns, and its default ends
                // the process without a word.
                std::cerr << "rapid-llm: interrupted while writing the trace set " << prefix
                          << "; none of its files was written\n";
                throw OutputError(prefix,
                                  "interrupted while writing the trace set; no file of it was "
                                  "written");
            }
            std::string path = RankFileName(prefix, r);
            std::string bytes = encodeRank(r);
            files.emplace_back(path + suffix, path);
            WriteFile(files.back().first, bytes);
            NS_LOG_INFO("wrote " << bytes.size() << " bytes to " << path);
        }
        std::string groupsPath = CommGroupsFileName(prefix);
        files.emplace_back(groupsPath + suffix, groupsPath);
        WriteFile(files.back().first, groups.ToJson());
    }
    catch (...)
    {
        cleanup();
        throw;
    }
    // Into place all or nothing: a file the set replaces is moved aside until every new one is
    // in, and put back if one cannot be.
    for (const auto& f : files)
    {
        std::error_code ec;
        if (fs::is_directory(f.second, ec))
        {
            cleanup();
            throw TraceError(f.second,
                             TraceError::kNone,
                             TraceError::kNone,
                             "a directory is in the way of the trace file; nothing was written");
        }
    }
    const std::string aside = ".old" + std::to_string(::getpid());
    std::vector<bool> moved(files.size(), false);
    for (std::size_t i = 0; i < files.size(); ++i)
    {
        const auto& [temporary, path] = files[i];
        std::error_code ec;
        if (fs::exists(path, ec))
        {
            fs::rename(path, path + aside, ec);
            moved[i] = !ec;
        }
        if (!ec)
        {
            fs::rename(temporary, path, ec);
        }
        if (ec)
        {
            std::error_code ignored;
            for (std::size_t j = 0; j <= i; ++j)
            {
                if (j < i)
                {
                    fs::remove(files[j].second, ignored);
                }
                if (moved[j])
                {
                    fs::rename(files[j].second + aside, files[j].second, ignored);
                }
            }
            cleanup();
            throw OutputError(path,
                              "cannot rename " + temporary + " into place: " + ec.message()
                                  + "; the files there before were kept");
        }
    }
    for (std::size_t i = 0; i < files.size(); ++i)
    {
        std::error_code ignored;
        if (moved[i])
        {
            fs::remove(files[i].second + aside, ignored);
        }
    }
    // Remove higher-numbered rank files of an earlier, larger run with the same prefix.
    for (uint32_t r = worldSize;; ++r)
    {
        std::error_code ec;
        if (!fs::remove(RankFileName(prefix, r), ec))
        {
            break;
        }
    }
}

} // namespace rapidllm
} // namespace ns3
