/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "chakra-trace-reader.h"

#include "chakra-stream.h"
#include "chakra-trace-writer.h"
#include "ns3/log.h"
#include "trace-error.h"

#include "et_def.pb.h"
#include <google/protobuf/stubs/logging.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <numeric>
#include <set>
#include <sstream>
#include <tuple>

namespace ns3 {
namespace rapidllm {

NS_LOG_COMPONENT_DEFINE("ChakraTraceReader");

namespace {

using ChakraProtoMsg::AttributeProto;

constexpr uint64_t kInt64Max = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());

/// Where we are, for error messages.
struct Context
{
    const std::string& file; //!< file name
    uint32_t rank;           //!< file's rank
};

[[noreturn]] void
Fail(const Context& ctx, const std::string& message)
{
    throw TraceError(ctx.file, ctx.rank, TraceError::kNone, message);
}

[[noreturn]] void
NodeFail(const Context& ctx, uint64_t id, const std::string& message)
{
    if (id > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
    {
        throw TraceError(
            ctx.file, ctx.rank, TraceError::kNone, "node " + std::to_string(id) + ": " + message);
    }
    throw TraceError(ctx.file, ctx.rank, static_cast<int64_t>(id), message);
}

/// An integer attribute's value, whatever integer type the producer chose.
struct IntegerValue
{
    bool negative = false;
    uint64_t magnitude = 0;

    std::string
    ToString() const
    {
        return (negative ? "-" : "") + std::to_string(magnitude);
    }
};

IntegerValue
FromSigned(int64_t v)
{
    IntegerValue r;
    r.negative = v < 0;
    r.magnitude = r.negative ? static_cast<uint64_t>(-(v + 1)) + 1 : static_cast<uint64_t>(v);
    return r;
}

IntegerValue
FromUnsigned(uint64_t v)
{
    IntegerValue r;
    r.magnitude = v;
    return r;
}

/// Reads an integer-typed attribute; returns false when it holds another type.
bool
TryInteger(const AttributeProto& a, IntegerValue& value)
{
    switch (a.value_case())
    {
        case AttributeProto::kInt32Val:
            value = FromSigned(a.int32_val());
            return true;
        case AttributeProto::kInt64Val:
            value = FromSigned(a.int64_val());
            return true;
        case AttributeProto::kUint32Val:
            value = FromUnsigned(a.uint32_val());
            return true;
        case AttributeProto::kUint64Val:
            value = FromUnsigned(a.uint64_val());
            return true;
        case AttributeProto::kSint32Val:
            value = FromSigned(a.sint32_val());
            return true;
        case AttributeProto::kSint64Val:
            value = FromSigned(a.sint64_val());
            return true;
        case AttributeProto::kFixed32Val:
            value = FromUnsigned(a.fixed32_val());
            return true;
        case AttributeProto::kFixed64Val:
            value = FromUnsigned(a.fixed64_val());
            return true;
        case AttributeProto::kSfixed32Val:
            value = FromSigned(a.sfixed32_val());
            return true;
        case AttributeProto::kSfixed64Val:
            value = FromSigned(a.sfixed64_val());
            return true;
        default:
            return false;
    }
}

/// \return the name of the value field \p a holds ("double_val", ...; "no value")
std::string
ValueFieldName(const AttributeProto& a)
{
    const auto* field = AttributeProto::descriptor()->FindFieldByNumber(a.value_case());
    return field != nullptr ? field->name() : std::string("no value");
}

/// Reads an integer-typed attribute of a node; any other type is an error naming it.
IntegerValue
ReadInteger(const Context& ctx, uint64_t id, const AttributeProto& a)
{
    IntegerValue value;
    if (!TryInteger(a, value))
    {
        NodeFail(ctx,
                 id,
                 "attribute '" + a.name() + "' must hold an integer (it holds " + ValueFieldName(a)
                     + ")");
    }
    return value;
}

/**
 * The longest time a node may give (duration_ns, host_ns): 10^18 ns, a replay's simulated-time
 * limit (TraceReplayer MaxSimulatedTime, 10^9 s): beyond it, a replay would stop on its watchdog
 * and name another node, or a cycle, not this value.
 */
constexpr uint64_t kMaxNodeNs = 1000000000000000000ull;

uint64_t
ReadUnsigned(const Context& ctx, uint64_t id, const AttributeProto& a, uint64_t max)
{
    IntegerValue v = ReadInteger(ctx, id, a);
    if (v.negative || v.magnitude > max)
    {
        NodeFail(ctx,
                 id,
                 "attribute '" + a.name() + "' is " + v.ToString() + "; allowed 0.."
                     + std::to_string(max));
    }
    return v.magnitude;
}

int32_t
ReadInt32(const Context& ctx, uint64_t id, const AttributeProto& a)
{
    IntegerValue v = ReadInteger(ctx, id, a);
    uint64_t limit = v.negative ? 2147483648ull : 2147483647ull;
    if (v.magnitude > limit)
    {
        NodeFail(ctx, id, "attribute '" + a.name() + "' is " + v.ToString() + "; not an int32");
    }
    return v.negative ? static_cast<int32_t>(-static_cast<int64_t>(v.magnitude))
                      : static_cast<int32_t>(v.magnitude);
}

/// Parses a pg_name: a decimal group id.
uint32_t
ParseGroupName(const Context& ctx, uint64_t id, const std::string& text)
{
    uint64_t value = 0;
    bool ok = !text.empty() && text.size() <= 10;
    for (char c : text)
    {
        ok = ok && c >= '0' && c <= '9';
        value = value * 10 + static_cast<uint64_t>(c - '0');
    }
    if (!ok || value >= kWorldGroup)
    {
        std::string shown = text.size() > 40 ? text.substr(0, 40) + "..." : text;
        for (char& c : shown)
        {
            c = (c >= 0x20 && c < 0x7f) ? c : '?';
        }
        NodeFail(ctx,
                 id,
                 "pg_name \"" + shown
                     + "\" is not a communicator group id (a decimal integer below 4294967295 "
                       "that comm_groups.json defines)");
    }
    return static_cast<uint32_t>(value);
}

std::string
ListGroups(const CommGroups& groups)
{
    if (groups.GetSize() == 0)
    {
        return "no groups are defined (is the comm_groups.json file missing?)";
    }
    std::string text = "groups defined: ";
    size_t shown = 0;
    for (const auto& entry : groups.GetAll())
    {
        if (shown == 16)
        {
            text += ", ...";
            break;
        }
        text += (shown++ ? ", " : "") + std::to_string(entry.first);
    }
    return text;
}

/// One node as parsed, before ids are resolved to indices.
struct ParsedNode
{
    uint64_t hostNs = 0;   //!< attribute host_ns
    bool hostSync = false; //!< attribute host_sync
    double smScaling = 0;  //!< attribute sm_scaling (compute)
    uint32_t commSms = 0;  //!< attribute sm_count (collective)
    TraceNode node;
    std::string name;
    size_t depBegin;
    size_t depCount;
};

} // namespace

std::string
ChakraTraceReader::Gunzip(const std::string& bytes, const std::string& file)
{
    return GunzipBytes(bytes, file, TraceError::kNone);
}

ExecutionTrace
ChakraTraceReader::DecodeRank(const std::string& rawBytes,
                              const std::string& file,
                              uint32_t rank,
                              const CommGroups* groups,
                              uint32_t worldSize)
{
    Context ctx{file, rank};
    ChakraInputStream stream(rawBytes, file, rank);
    // Damage is reported through TraceError; keep protobuf's own log lines (e.g. invalid
    // UTF-8 in a string field) off stderr while parsing.
    google::protobuf::LogSilencer quiet;
    if (stream.Empty())
    {
        Fail(ctx, "empty file: a Chakra trace starts with a GlobalMetadata message");
    }

    ChakraMessage message;
    stream.Next(0, message);
    ChakraProtoMsg::GlobalMetadata meta;
    if (!meta.ParseFromArray(message.data, static_cast<int>(message.length)))
    {
        Fail(ctx, "message 0 (GlobalMetadata) is not a valid protobuf message");
    }
    std::string hardware;
    // An inference request's tokens (ExecutionTrace::SetTokens): 0 where not recorded.
    uint64_t generated = 0;
    uint64_t requests = 0;
    bool haveFirstToken = false;
    uint64_t firstTokenId = 0;
    for (const auto& a : meta.attr())
    {
        if (a.name() == "hardware" && a.value_case() == ChakraProtoMsg::AttributeProto::kStringVal)
        {
            hardware = a.string_val();
        }
        if (a.name() == "generated_tokens" || a.name() == "requests"
            || a.name() == "first_token_node")
        {
            IntegerValue v;
            const uint64_t most = a.name() == "generated_tokens" ? UINT32_MAX : (1ull << 62);
            if (!TryInteger(a, v) || v.negative || v.magnitude > most
                || (a.name() != "first_token_node" && v.magnitude == 0))
            {
                Fail(ctx,
                     "metadata attribute '" + a.name() + "' must hold a whole number from "
                         + (a.name() == "first_token_node" ? "0" : "1") + " to "
                         + std::to_string(most));
            }
            (a.name() == "generated_tokens" ? generated
             : a.name() == "requests"       ? requests
                                            : firstTokenId) = v.magnitude;
            haveFirstToken = haveFirstToken || a.name() == "first_token_node";
        }
        if (a.name() == "rank" || a.name() == "world_size")
        {
            IntegerValue v;
            if (!TryInteger(a, v))
            {
                Fail(ctx, "metadata attribute '" + a.name() + "' must hold an integer");
            }
            uint64_t expected = a.name() == "rank" ? rank : worldSize;
            if ((a.name() == "rank" || worldSize > 0) && (v.negative || v.magnitude != expected))
            {
                Fail(ctx,
                     "the metadata says " + a.name() + " " + v.ToString() + " but it is read as "
                         + a.name() + " " + std::to_string(expected)
                         + (a.name() == "rank"
                                ? " (file renamed?)"
                                : " (rank files missing or left from another run?)"));
            }
        }
    }

    std::vector<ParsedNode> parsed;
    std::vector<uint64_t> depIds;
    ChakraProtoMsg::Node msg;
    for (size_t number = 1; stream.Next(number, message); ++number)
    {
        if (message.length == 0)
        {
            // A node has at least an id, a name and a type; zero bytes read as endless empty
            // messages (a file padded with zeros), each a node, until memory runs out.
            Fail(
                ctx,
                "message " + std::to_string(number) + " (a Node) at byte "
                    + std::to_string(message.offset)
                    + " is empty: a node has an id, a name and a type (a file padded with zeros?)");
        }
        if (!msg.ParseFromArray(message.data, static_cast<int>(message.length)))
        {
            Fail(ctx,
                 "message " + std::to_string(number) + " (a Node) at byte "
                     + std::to_string(message.offset) + " is not a valid protobuf message"
                     + (parsed.empty() ? std::string()
                                       : " (the previous node has id "
                                             + std::to_string(parsed.back().node.id) + ")"));
        }
        if (parsed.size() >= ExecutionTrace::kNotFound - 1)
        {
            Fail(ctx, "more than 2^32-2 nodes in one file");
        }

        ParsedNode p;
        TraceNode& n = p.node;
        n.id = msg.id();
        auto typeValue = static_cast<int>(msg.type());
        if (typeValue < 0 || typeValue > kMaxTraceNodeType)
        {
            NodeFail(ctx,
                     n.id,
                     "unknown node type " + std::to_string(typeValue)
                         + " (allowed: Chakra NodeType 0..10, e.g. COMP_NODE=4, COMM_COLL_NODE=7)");
        }
        n.type = static_cast<TraceNodeType>(typeValue);
        p.name = msg.name();

        // Durations become ns-3 times, signed 64-bit nanoseconds: beyond 2^63 - 1 one would
        // wrap to a negative (or a tiny) time, and the node would run faster than it should.
        if (msg.duration_micros() > kMaxNodeNs / 1000)
        {
            NodeFail(ctx,
                     n.id,
                     "duration_micros " + std::to_string(msg.duration_micros())
                         + " is beyond a replay's time limit; allowed 0.."
                         + std::to_string(kMaxNodeNs / 1000));
        }
        n.durationNs = msg.duration_micros() * 1000;

        bool hasCommType = false;
        bool hasSrc = false;
        bool hasDst = false;
        uint64_t tensorSize = 0;
        uint64_t commSize = 0;
        int32_t src = -1;
        int32_t dst = -1;
        const bool coll = n.type == TraceNodeType::COMM_COLL;
        const bool p2p = n.type == TraceNodeType::COMM_SEND || n.type == TraceNodeType::COMM_RECV;
        for (const auto& a : msg.attr())
        {
            const std::string& name = a.name();
            if (name == "duration_ns")
            {
                n.durationNs = ReadUnsigned(ctx, n.id, a, kMaxNodeNs);
            }
            else if (name == "host_ns")
            {
                p.hostNs = ReadUnsigned(ctx, n.id, a, kMaxNodeNs);
            }
            else if (name == "sm_scaling" && n.type == TraceNodeType::COMP)
            {
                const bool real = a.value_case() == AttributeProto::kDoubleVal
                                  || a.value_case() == AttributeProto::kFloatVal;
                const double v =
                    a.value_case() == AttributeProto::kFloatVal ? a.float_val() : a.double_val();
                if (!real || !(v >= 0 && v <= 1))
                {
                    NodeFail(ctx,
                             n.id,
                             "attribute 'sm_scaling' must hold a double (or float) in [0, 1]");
                }
                p.smScaling = v;
            }
            else if (name == "sm_count" && coll)
            {
                p.commSms = static_cast<uint32_t>(ReadUnsigned(ctx, n.id, a, 65535));
            }
            else if (name == "host_sync")
            {
                if (a.value_case() != AttributeProto::kBoolVal)
                {
                    NodeFail(ctx, n.id, "attribute 'host_sync' must hold a bool");
                }
                p.hostSync = a.bool_val();
            }
            else if (name == "num_ops" && n.type == TraceNodeType::COMP)
            {
                // int64 in Chakra's feeder, so at most 2^63-1.
                n.numOps = ReadUnsigned(ctx, n.id, a, kInt64Max);
            }
            else if (name == "tensor_size")
            {
                tensorSize = ReadUnsigned(ctx, n.id, a, std::numeric_limits<uint64_t>::max());
            }
            else if (name == "comm_size")
            {
                commSize = ReadUnsigned(ctx, n.id, a, kInt64Max);
            }
            else if (name == "comm_type" && coll)
            {
                IntegerValue v = ReadInteger(ctx, n.id, a);
                if (v.negative || v.magnitude > kMaxCollectiveType)
                {
                    NodeFail(ctx,
                             n.id,
                             "unknown collective type " + v.ToString()
                                 + " in comm_type (allowed: " + AllowedCollectiveTypes() + ")");
                }
                n.commType = static_cast<CollectiveType>(v.magnitude);
                hasCommType = true;
            }
            else if (name == "pg_name" && (coll || p2p))
            {
                if (a.value_case() != AttributeProto::kStringVal)
                {
                    NodeFail(ctx, n.id, "attribute 'pg_name' must hold a string");
                }
                n.group = a.string_val().empty() ? kWorldGroup
                                                 : ParseGroupName(ctx, n.id, a.string_val());
            }
            else if ((name == "comm_src" || name == "comm_dst") && p2p)
            {
                int32_t v = ReadInt32(ctx, n.id, a);
                if (v < 0 || (worldSize > 0 && static_cast<uint32_t>(v) >= worldSize))
                {
                    NodeFail(ctx,
                             n.id,
                             name + " " + std::to_string(v) + " is not a rank (allowed 0.."
                                 + (worldSize > 0 ? std::to_string(worldSize - 1) : "2^31-1")
                                 + ")");
                }
                (name == "comm_src" ? src : dst) = v;
                (name == "comm_src" ? hasSrc : hasDst) = true;
            }
            else if (name == "comm_tag" && p2p)
            {
                n.commTag = ReadInt32(ctx, n.id, a);
            }
        }
        if (n.type == TraceNodeType::COMP || n.type == TraceNodeType::MEM_LOAD
            || n.type == TraceNodeType::MEM_STORE)
        {
            n.bytes = tensorSize;
        }
        else if (IsCommunication(n.type))
        {
            n.bytes = commSize;
        }
        if (coll)
        {
            if (!hasCommType)
            {
                NodeFail(ctx,
                         n.id,
                         "COMM_COLL_NODE without a comm_type attribute (allowed: "
                             + AllowedCollectiveTypes() + ")");
            }
        }
        // Peers are global ranks: a send leaves, and a receive arrives at, its file's rank.
        const auto own = static_cast<int32_t>(rank);
        auto ownEnd = [&](const char* field, int32_t value, const char* what)
        {
            NodeFail(ctx,
                     n.id,
                     std::string(field) + " " + std::to_string(value) + ": " + what
                         + " the rank whose file holds it (rank " + std::to_string(rank)
                         + "); give " + field + " " + std::to_string(rank) + " or leave it out");
        };
        if (n.type == TraceNodeType::COMM_SEND)
        {
            if (!hasDst)
            {
                NodeFail(ctx, n.id, "COMM_SEND_NODE without a comm_dst attribute");
            }
            if (hasSrc && src != own)
            {
                ownEnd("comm_src", src, "a send leaves");
            }
            n.commSrc = own;
            n.commDst = dst;
        }
        else if (n.type == TraceNodeType::COMM_RECV)
        {
            if (!hasSrc)
            {
                NodeFail(ctx, n.id, "COMM_RECV_NODE without a comm_src attribute");
            }
            if (hasDst && dst != own)
            {
                ownEnd("comm_dst", dst, "a receive arrives at");
            }
            n.commSrc = src;
            n.commDst = own;
        }
        if (n.group != kWorldGroup && groups != nullptr)
        {
            if (!groups->Has(n.group))
            {
                NodeFail(ctx,
                         n.id,
                         "pg_name \"" + std::to_string(n.group) + "\" names no communicator group; "
                             + ListGroups(*groups));
            }
            // A collective's group holds the rank; a send's or receive's holds both ends.
            for (int32_t member :
                 {static_cast<int32_t>(rank), p2p ? n.commSrc : -1, p2p ? n.commDst : -1})
            {
                if (member >= 0 && !groups->Contains(n.group, static_cast<uint32_t>(member)))
                {
                    NodeFail(ctx,
                             n.id,
                             std::string(coll ? "collective" : "point-to-point message")
                                 + " on group " + std::to_string(n.group)
                                 + ", which does not contain rank " + std::to_string(member));
                }
            }
        }

        p.depBegin = depIds.size();
        depIds.insert(depIds.end(), msg.data_deps().begin(), msg.data_deps().end());
        depIds.insert(depIds.end(), msg.ctrl_deps().begin(), msg.ctrl_deps().end());
        p.depCount = depIds.size() - p.depBegin;
        parsed.push_back(std::move(p));
    }

    // Sort by id (stable: equal ids stay in file order for the duplicate report).
    std::vector<uint32_t> order(parsed.size());
    std::iota(order.begin(), order.end(), 0u);
    std::stable_sort(order.begin(),
                     order.end(),
                     [&parsed](uint32_t a, uint32_t b)
                     {
                         return parsed[a].node.id < parsed[b].node.id;
                     });
    std::vector<uint64_t> sortedIds(parsed.size());
    for (size_t i = 0; i < order.size(); ++i)
    {
        sortedIds[i] = parsed[order[i]].node.id;
        if (i > 0 && sortedIds[i] == sortedIds[i - 1])
        {
            NodeFail(ctx,
                     sortedIds[i],
                     "duplicate node id (messages " + std::to_string(order[i - 1] + 1) + " and "
                         + std::to_string(order[i] + 1) + " both use it)");
        }
    }
    if (depIds.size() > std::numeric_limits<uint32_t>::max())
    {
        Fail(ctx, "more than 2^32-1 dependencies in one file");
    }

    ExecutionTrace trace(rank);
    trace.SetHardware(hardware);
    if (generated > 0)
    {
        uint32_t firstToken = UINT32_MAX;
        if (haveFirstToken)
        {
            auto it = std::lower_bound(sortedIds.begin(), sortedIds.end(), firstTokenId);
            if (it == sortedIds.end() || *it != firstTokenId)
            {
                Fail(ctx,
                     "metadata attribute 'first_token_node' names node "
                         + std::to_string(firstTokenId) + ", which is not in this file");
            }
            firstToken = static_cast<uint32_t>(it - sortedIds.begin());
        }
        trace.SetTokens(firstToken, static_cast<uint32_t>(generated), requests);
    }
    trace.Reserve(parsed.size(), depIds.size());
    std::vector<uint32_t> deps;
    for (uint32_t index : order)
    {
        const ParsedNode& p = parsed[index];
        deps.clear();
        for (size_t k = 0; k < p.depCount; ++k)
        {
            uint64_t depId = depIds[p.depBegin + k];
            auto it = std::lower_bound(sortedIds.begin(), sortedIds.end(), depId);
            if (it == sortedIds.end() || *it != depId)
            {
                NodeFail(ctx,
                         p.node.id,
                         "depends on node " + std::to_string(depId)
                             + ", which is not in this file");
            }
            deps.push_back(static_cast<uint32_t>(it - sortedIds.begin()));
        }
        const uint32_t added = trace.AppendNode(p.node, p.name, deps.data(), deps.size());
        if (p.hostNs != 0 || p.hostSync)
        {
            trace.SetHost(added, p.hostNs, p.hostSync);
        }
        if (p.smScaling > 0)
        {
            trace.SetSmScaling(added, static_cast<float>(p.smScaling));
        }
        if (p.commSms > 0)
        {
            trace.SetCommSms(added, p.commSms);
        }
    }
    trace.Validate(file);
    return trace;
}

ExecutionTrace
ChakraTraceReader::ReadRankFile(const std::string& path,
                                uint32_t rank,
                                const CommGroups* groups,
                                uint32_t worldSize)
{
    RequireRegularFile(path, rank);
    std::ifstream in(path, std::ios::binary);
    if (!in)
    {
        throw TraceError(path, rank, TraceError::kNone, "cannot open the file");
    }
    std::ostringstream content;
    content << in.rdbuf();
    if (in.bad())
    {
        throw TraceError(path, rank, TraceError::kNone, "cannot read the file");
    }
    return DecodeRank(content.str(), path, rank, groups, worldSize);
}

TraceSet
ChakraTraceReader::ReadTraceSet(const std::string& prefix,
                                const std::string& groupsFile,
                                bool checkSet)
{
    namespace fs = std::filesystem;
    fs::path prefixPath(prefix);
    std::error_code dirError;
    if (fs::is_directory(prefixPath, dirError))
    {
        // A directory (what `rapid-llm trace --out=DIR` writes): the one set of rank files in it.
        std::set<std::string> stems;
        for (fs::directory_iterator it(prefixPath, dirError), end; !dirError && it != end;
             it.increment(dirError))
        {
            const std::string name = it->path().filename().string();
            const std::string rankZero = ".0.et";
            if (name.size() > rankZero.size()
                && name.compare(name.size() - rankZero.size(), rankZero.size(), rankZero) == 0)
            {
                stems.insert(name.substr(0, name.size() - rankZero.size()));
            }
        }
        if (dirError)
        {
            throw TraceError(prefix,
                             TraceError::kNone,
                             TraceError::kNone,
                             "cannot list the directory: " + dirError.message());
        }
        if (stems.size() == 1)
        {
            return ReadTraceSet((prefixPath / *stems.begin()).string(), groupsFile, checkSet);
        }
        std::string found;
        for (const auto& stem : stems)
        {
            found += (found.empty() ? "" : ", ") + (prefixPath / stem).string();
        }
        throw TraceError(prefix,
                         TraceError::kNone,
                         TraceError::kNone,
                         stems.empty() ? "is a directory without a trace set (no PREFIX.0.et)"
                                       : "is a directory with several trace sets; pass one "
                                         "prefix: "
                                             + found);
    }
    std::string base = prefixPath.filename().string();
    if (base.empty())
    {
        throw TraceError(prefix,
                         TraceError::kNone,
                         TraceError::kNone,
                         "the trace prefix must end in a file name stem, e.g. out/gpt3 for "
                         "out/gpt3.0.et");
    }
    fs::path dir = prefixPath.has_parent_path() ? prefixPath.parent_path() : fs::path(".");
    std::vector<uint32_t> ranks;
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    {
        std::string name = it->path().filename().string();
        if (name.size() <= base.size() + 4 || name.compare(0, base.size() + 1, base + ".") != 0
            || name.compare(name.size() - 3, 3, ".et") != 0)
        {
            continue;
        }
        std::string digits = name.substr(base.size() + 1, name.size() - base.size() - 4);
        bool canonical = !digits.empty() && digits.size() <= 9
                         && (digits == "0" || digits[0] != '0')
                         && std::all_of(digits.begin(),
                                        digits.end(),
                                        [](char c)
                                        {
                                            return c >= '0' && c <= '9';
                                        });
        if (canonical)
        {
            ranks.push_back(static_cast<uint32_t>(std::stoul(digits)));
        }
    }
    if (ec)
    {
        throw TraceError(prefix,
                         TraceError::kNone,
                         TraceError::kNone,
                         "cannot list directory " + dir.string() + ": " + ec.message());
    }
    if (ranks.empty())
    {
        // A rank file given for the set: name the prefix it belongs to.
        std::string hint;
        const std::size_t dot = base.rfind('.', base.size() > 3 ? base.size() - 4 : 0);
        if (base.size() > 3 && base.compare(base.size() - 3, 3, ".et") == 0
            && dot != std::string::npos && dot + 4 < base.size()
            && std::all_of(base.begin() + dot + 1,
                           base.end() - 3,
                           [](char c)
                           {
                               return c >= '0' && c <= '9';
                           }))
        {
            hint = " (" + prefix + " is a rank file: give its set's prefix, "
                   + (dir / base.substr(0, dot)).string() + ")";
        }
        throw TraceError(prefix,
                         TraceError::kNone,
                         TraceError::kNone,
                         "no trace files " + prefix + ".<rank>.et found" + hint);
    }
    std::sort(ranks.begin(), ranks.end());
    for (uint32_t i = 0; i < ranks.size(); ++i)
    {
        if (ranks[i] != i)
        {
            throw TraceError(ChakraTraceWriter::RankFileName(prefix, i),
                             i,
                             TraceError::kNone,
                             "missing: found " + std::to_string(ranks.size())
                                 + " rank files up to rank " + std::to_string(ranks.back())
                                 + ", but ranks must be 0.." + std::to_string(ranks.size() - 1));
        }
    }

    TraceSet set;
    set.prefix = prefix;
    const std::string groupsPath =
        groupsFile.empty() ? ChakraTraceWriter::CommGroupsFileName(prefix) : groupsFile;
    if (!groupsFile.empty() || fs::exists(groupsPath, ec))
    {
        set.groups = CommGroups::Load(groupsPath);
        set.groupsFile = groupsPath;
    }
    auto worldSize = static_cast<uint32_t>(ranks.size());
    for (const auto& [id, members] : set.groups.GetAll())
    {
        for (uint32_t r : members)
        {
            if (r >= worldSize)
            {
                throw TraceError(
                    groupsPath,
                    TraceError::kNone,
                    TraceError::kNone,
                    "group " + std::to_string(id) + " names rank " + std::to_string(r)
                        + ", but there are only " + std::to_string(worldSize) + " rank files (is "
                        + ChakraTraceWriter::RankFileName(prefix, worldSize) + " missing?)");
            }
        }
    }
    set.ranks.reserve(worldSize);
    for (uint32_t r = 0; r < worldSize; ++r)
    {
        set.ranks.push_back(
            ReadRankFile(ChakraTraceWriter::RankFileName(prefix, r), r, &set.groups, worldSize));
        NS_LOG_INFO("read rank " << r << ": " << set.ranks.back().GetNNodes() << " nodes");
    }
    if (checkSet)
    {
        CheckSet(set, prefix);
    }
    return set;
}

void
ChakraTraceReader::CheckSet(const TraceSet& set, const std::string& prefix)
{
    // Point to point: (src, dst, tag, bytes) -> sends, receives and the first of each's node.
    using Key = std::tuple<int32_t, int32_t, int32_t, uint64_t>;
    struct Ends
    {
        uint64_t sends = 0;
        uint64_t receives = 0;
        uint64_t firstSend = 0;    //!< node id of the first send (on rank src)
        uint64_t firstReceive = 0; //!< node id of the first receive (on rank dst)
    };
    std::map<Key, Ends> p2p;
    // Collectives: group -> per-rank count.
    std::map<uint32_t, std::map<uint32_t, uint64_t>> collectives;
    for (const auto& trace : set.ranks)
    {
        // One inference job: every rank's request, as the first rank's (a replay reads one).
        const ExecutionTrace& first = set.ranks.front();
        if (trace.GetGeneratedTokens() != first.GetGeneratedTokens()
            || trace.GetRequests() != first.GetRequests())
        {
            throw TraceError(ChakraTraceWriter::RankFileName(prefix, trace.GetRank()),
                             trace.GetRank(),
                             TraceError::kNone,
                             "its metadata's generated_tokens "
                                 + std::to_string(trace.GetGeneratedTokens()) + " and requests "
                                 + std::to_string(trace.GetRequests()) + " are not rank "
                                 + std::to_string(first.GetRank()) + "'s "
                                 + std::to_string(first.GetGeneratedTokens()) + " and "
                                 + std::to_string(first.GetRequests())
                                 + ": the ranks of one job serve one request");
        }
        for (const auto& n : trace.GetNodes())
        {
            if (n.type == TraceNodeType::COMM_SEND)
            {
                Ends& e = p2p[Key(n.commSrc, n.commDst, n.commTag, n.bytes)];
                e.firstSend = e.sends++ == 0 ? n.id : e.firstSend;
            }
            else if (n.type == TraceNodeType::COMM_RECV)
            {
                Ends& e = p2p[Key(n.commSrc, n.commDst, n.commTag, n.bytes)];
                e.firstReceive = e.receives++ == 0 ? n.id : e.firstReceive;
            }
            else if (n.type == TraceNodeType::COMM_COLL)
            {
                ++collectives[n.group][trace.GetRank()];
            }
        }
    }
    for (const auto& [key, ends] : p2p)
    {
        if (ends.sends != ends.receives)
        {
            // Name the first node of the side in excess, and what the other side has with the
            // same peers and tag in other sizes (a size edited on one side only).
            const auto [src, dst, tag, bytes] = key;
            const bool sendsOver = ends.sends > ends.receives;
            const auto rank = static_cast<uint32_t>(sendsOver ? src : dst);
            std::string others;
            for (const auto& [k, e] : p2p)
            {
                if (std::get<0>(k) == src && std::get<1>(k) == dst && std::get<2>(k) == tag
                    && std::get<3>(k) != bytes && (sendsOver ? e.receives : e.sends) > 0)
                {
                    others += (others.empty() ? "" : ", ") + std::to_string(std::get<3>(k));
                }
            }
            throw TraceError(
                ChakraTraceWriter::RankFileName(prefix, rank),
                rank,
                static_cast<int64_t>(sendsOver ? ends.firstSend : ends.firstReceive),
                std::to_string(ends.sends) + " send(s) from rank " + std::to_string(src)
                    + " to rank " + std::to_string(dst) + " (tag " + std::to_string(tag) + ", "
                    + std::to_string(bytes) + " bytes) but " + std::to_string(ends.receives)
                    + " matching receive(s)"
                    + (others.empty() ? std::string()
                                      : std::string(sendsOver ? "; the receives" : "; the sends")
                                            + " with that tag are of " + others + " bytes")
                    + ": a replay would hang");
        }
    }
    for (const auto& entry : collectives)
    {
        // Plain references: clang 14 cannot capture structured bindings in the lambda below.
        uint32_t group = entry.first;
        const std::map<uint32_t, uint64_t>& perRank = entry.second;
        std::vector<uint32_t> members;
        if (group == kWorldGroup)
        {
            members.resize(set.ranks.size());
            std::iota(members.begin(), members.end(), 0u);
        }
        else if (set.groups.Has(group))
        {
            members = set.groups.Get(group);
        }
        else
        {
            throw TraceError(prefix,
                             TraceError::kNone,
                             TraceError::kNone,
                             "collectives name group " + std::to_string(group)
                                 + ", which the comm groups do not define");
        }
        auto countOf = [&perRank](uint32_t r)
        {
            auto it = perRank.find(r);
            return it == perRank.end() ? uint64_t(0) : it->second;
        };
        uint64_t expected = countOf(members.front());
        for (uint32_t r : members)
        {
            if (countOf(r) != expected)
            {
                std::string name = group == kWorldGroup ? "all ranks (no pg_name)"
                                                        : "group " + std::to_string(group);
                throw TraceError(
                    prefix,
                    TraceError::kNone,
                    TraceError::kNone,
                    "collectives on " + name + ": rank " + std::to_string(members.front())
                        + " issues " + std::to_string(expected) + " but rank " + std::to_string(r)
                        + " issues " + std::to_string(countOf(r)) + ": a replay would hang");
            }
        }
    }
}

} // namespace rapidllm
} // namespace ns3
