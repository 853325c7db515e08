/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// Chakra execution traces: graphs written and read back are identical node by node, plain and
// gzip; output is byte-identical run to run; the bytes decode with the stock protobuf library
// against the official et_def.proto field numbers (not through our generated classes); a
// trace from another tool (unsorted ids, ctrl_deps, other integer types) loads; sets are
// written all-or-nothing.

#include "chakra-test-encoder.h"
#include "ns3/chakra-trace-reader.h"
#include "ns3/chakra-trace-writer.h"
#include "ns3/dep-list.h"
#include "ns3/execution-trace.h"
#include "ns3/name-table.h"
#include "ns3/test.h"
#include "ns3/trace-error.h"
#include "scratch-dir.h"
#include "test-require.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/unknown_field_set.h>
#include <unistd.h>
#include <zlib.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>

using namespace ns3;
using namespace ns3::rapidllm;
namespace fs = std::filesystem;

namespace {

using namespace chakratest;

std::string
ReadAll(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

/// Four ranks doing a small TP=2 x DP=2 step: GEMMs, TP all-reduces, DP reduce-scatter and
/// all-gather, a world barrier and a pipeline-style send/recv pair, with exact durations.
TraceSet
BuildSampleSet()
{
    TraceSet set;
    set.groups.Add(1, {0, 1}); // TP groups
    set.groups.Add(2, {2, 3});
    set.groups.Add(3, {0, 2}); // DP groups
    set.groups.Add(4, {1, 3});
    for (uint32_t r = 0; r < 4; ++r)
    {
        ExecutionTrace t(r);
        uint32_t tp = r < 2 ? 1 : 2;
        uint32_t dp = r % 2 == 0 ? 3 : 4;
        uint32_t qkv = t.AddCompute("layer0.qkv", 1234567 + r, 3ull << 40, 96ull << 20);
        uint32_t attn = t.AddCompute("layer0.attn", 499, 1ull << 30, 4096, {qkv});
        uint32_t proj = t.AddCompute("layer0.proj", 500, 1ull << 30, 4096, {attn});
        uint32_t ar = t.AddCollective(
            "layer0.tp_allreduce", CollectiveType::ALL_REDUCE, 16ull << 20, tp, {proj});
        uint32_t mlp = t.AddCompute("layer0.mlp", 2000000, 5ull << 40, 200ull << 20, {ar});
        // How the kernels share the SMs with the collectives (sm_scaling, sm_count).
        t.SetSmScaling(qkv, 0.875f);
        t.SetSmScaling(mlp, 0.1f);
        if (r % 2 == 0)
        {
            t.SetCommSms(ar, 4);
        }
        uint32_t last = mlp;
        if (r == 0)
        {
            last = t.AddSend("pp.send_act", 1, 7, 8ull << 20, {mlp}, 1); // on group 1
        }
        else if (r == 1)
        {
            last = t.AddRecv("pp.recv_act", 0, 7, 8ull << 20, {mlp}, 1);
        }
        uint32_t rs = t.AddCollective(
            "dp.reduce_scatter", CollectiveType::REDUCE_SCATTER, 64ull << 20, dp, {last});
        uint32_t opt = t.AddCompute("optimizer", 777, 1000, 2000, {rs});
        uint32_t ag =
            t.AddCollective("dp.all_gather", CollectiveType::ALL_GATHER, 64ull << 20, dp, {opt});
        uint32_t barrier =
            t.AddCollective("barrier", CollectiveType::BARRIER, 0, kWorldGroup, {ag});
        // An ordering found late: the optimizer also waits for the first GEMM (moves its list).
        t.AddDependency(opt, qkv);
        (void) barrier;
        set.ranks.push_back(std::move(t));
    }
    return set;
}

/// Describes the first difference between two traces, or returns "".
std::string
FirstDifference(const ExecutionTrace& a, const ExecutionTrace& b)
{
    if (a.GetRank() != b.GetRank())
    {
        return "rank";
    }
    if (a.GetNNodes() != b.GetNNodes())
    {
        return "node count " + std::to_string(a.GetNNodes()) + " vs "
               + std::to_string(b.GetNNodes());
    }
    for (uint32_t i = 0; i < a.GetNNodes(); ++i)
    {
        const TraceNode& x = a.GetNode(i);
        const TraceNode& y = b.GetNode(i);
        std::string at = "node index " + std::to_string(i) + ": ";
        if (x.id != y.id)
            return at + "id";
        if (a.GetName(i) != b.GetName(i))
            return at + "name " + std::string(a.GetName(i)) + " vs " + std::string(b.GetName(i));
        if (x.type != y.type)
            return at + "type";
        if (x.durationNs != y.durationNs)
            return at + "duration " + std::to_string(x.durationNs) + " vs "
                   + std::to_string(y.durationNs);
        if (x.numOps != y.numOps)
            return at + "num_ops";
        if (x.bytes != y.bytes)
            return at + "bytes";
        if (x.commType != y.commType)
            return at + "comm_type";
        if (x.group != y.group)
            return at + "group";
        if (x.commSrc != y.commSrc || x.commDst != y.commDst || x.commTag != y.commTag)
            return at + "src/dst/tag";
        if (a.GetSmScaling(i) != b.GetSmScaling(i) || a.GetCommSms(i) != b.GetCommSms(i))
            return at + "sm_scaling / sm_count";
        auto dx = a.GetDeps(i);
        auto dy = b.GetDeps(i);
        if (std::vector<uint32_t>(dx.begin(), dx.end())
            != std::vector<uint32_t>(dy.begin(), dy.end()))
            return at + "dependencies";
    }
    return a == b ? "" : "operator== disagrees";
}

/// Splits a Chakra ET byte stream into its length-prefixed messages with the stock library.
std::vector<std::string>
SplitDelimited(const std::string& bytes)
{
    std::vector<std::string> messages;
    google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()),
                                              static_cast<int>(bytes.size()));
    uint32_t length = 0;
    while (in.ReadVarint32(&length))
    {
        std::string message;
        if (!in.ReadString(&message, static_cast<int>(length)))
        {
            messages.push_back("<truncated>");
            break;
        }
        messages.push_back(message);
    }
    return messages;
}

/// One decoded message: each field number -> its values (varints as numbers, 64-bit fixed
/// fields as their bits, others as bytes).
struct RawMessage
{
    std::multimap<int, uint64_t> varints;
    std::multimap<int, uint64_t> fixed64s;
    std::multimap<int, std::string> bytes;
};

RawMessage
Decode(const std::string& message, bool& ok)
{
    google::protobuf::UnknownFieldSet set;
    ok = set.ParseFromString(message);
    RawMessage m;
    for (int i = 0; i < set.field_count(); ++i)
    {
        const auto& f = set.field(i);
        if (f.type() == google::protobuf::UnknownField::TYPE_VARINT)
        {
            m.varints.emplace(f.number(), f.varint());
        }
        else if (f.type() == google::protobuf::UnknownField::TYPE_LENGTH_DELIMITED)
        {
            m.bytes.emplace(f.number(), f.length_delimited());
        }
        else if (f.type() == google::protobuf::UnknownField::TYPE_FIXED64)
        {
            m.fixed64s.emplace(f.number(), f.fixed64()); // a double attribute (sm_scaling)
        }
        else
        {
            ok = false; // we write no 32-bit fixed fields
        }
    }
    return m;
}

/// Decodes a packed repeated uint64 field.
std::vector<uint64_t>
DecodePacked(const std::string& bytes)
{
    std::vector<uint64_t> values;
    google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()),
                                              static_cast<int>(bytes.size()));
    uint64_t v = 0;
    while (in.ReadVarint64(&v))
    {
        values.push_back(v);
    }
    return values;
}

} // namespace

/** \brief Write a four-rank set, read it back: same graphs, same groups, plain and gzip. */
class TraceRoundTripTestCase : public TestCase
{
  public:
    TraceRoundTripTestCase()
        : TestCase("write then read gives the same graph node by node (plain and gzip)")
    {}

  private:
    void
    DoRun() override
    {
        TraceSet set = BuildSampleSet();
        ScratchDir dir("trace-roundtrip");
        for (bool gzip : {false, true})
        {
            std::string prefix = dir.File(gzip ? "gz" : "plain");
            ChakraTraceWriter::WriteTraceSet(prefix, set, gzip);
            std::string first = ReadAll(ChakraTraceWriter::RankFileName(prefix, 0));
            RAPIDLLM_REQUIRE_EQ((first.size() > 2 && static_cast<uint8_t>(first[0]) == 0x1f
                                 && static_cast<uint8_t>(first[1]) == 0x8b),
                                gzip,
                                "gzip magic present exactly when asked for");
            TraceSet back = ChakraTraceReader::ReadTraceSet(prefix);
            RAPIDLLM_REQUIRE_EQ(back.ranks.size(), 4u, "four ranks");
            NS_TEST_ASSERT_MSG_EQ((back.groups == set.groups), true, "groups read back");
            NS_TEST_ASSERT_MSG_EQ(back.ranks[0].GetHardware(), "", "no machine recorded");
            for (uint32_t r = 0; r < 4; ++r)
            {
                NS_TEST_ASSERT_MSG_EQ(FirstDifference(set.ranks[r], back.ranks[r]),
                                      "",
                                      "rank " << r << (gzip ? " (gzip)" : ""));
            }
            // The hardware that costed the kernels travels in the metadata.
            ExecutionTrace costed = set.ranks[0];
            costed.SetHardware("h100-sxm-80gb");
            NS_TEST_ASSERT_MSG_EQ(
                ChakraTraceReader::DecodeRank(
                    ChakraTraceWriter::EncodeRank(costed, 4, gzip), "costed", 0, &set.groups, 4)
                    .GetHardware(),
                "h100-sxm-80gb",
                "the machine read back");
            // So do an inference request's tokens: where its first comes out (a node id,
            // read back as that node's index), how many each request generates, the requests.
            ExecutionTrace served = set.ranks[2];
            served.SetTokens(1, 128, 64);
            const ExecutionTrace tokens = ChakraTraceReader::DecodeRank(
                ChakraTraceWriter::EncodeRank(served, 4, gzip), "served", 2, &set.groups, 4);
            NS_TEST_EXPECT_MSG_EQ(tokens.GetFirstTokenNode(), 1u, "first token node");
            NS_TEST_EXPECT_MSG_EQ(tokens.GetGeneratedTokens(), 128u, "generated tokens");
            NS_TEST_EXPECT_MSG_EQ(tokens.GetRequests(), 64u, "requests");
            NS_TEST_EXPECT_MSG_EQ(back.ranks[2].GetGeneratedTokens(), 0u, "none recorded");
            NS_TEST_ASSERT_MSG_EQ(ReadAll(ChakraTraceWriter::CommGroupsFileName(prefix)),
                                  "{\n  \"1\": [0, 1],\n  \"2\": [2, 3],\n  \"3\": [0, 2],\n"
                                  "  \"4\": [1, 3]\n}\n",
                                  "ASTRA-sim comm group JSON");
        }
        // Exact nanoseconds survive although duration_micros rounds (499 ns -> 0 us).
        const ExecutionTrace& t = set.ranks[2];
        NS_TEST_ASSERT_MSG_EQ(t.GetNode(0).durationNs, 1234569u, "exact duration kept in memory");
    }
};

namespace {
/**
 * zlib's one-shot gzip of \p bytes (level 6, default window and memory, no header of ours, so
 * a zero time stamp): the reference the streamed compression must match byte for byte.
 */
std::string
OneShotGzip(const std::string& bytes)
{
    z_stream z;
    std::memset(&z, 0, sizeof(z));
    deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
    std::string out(deflateBound(&z, bytes.size()) + 64, '\0');
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
    z.avail_in = static_cast<uInt>(bytes.size());
    z.next_out = reinterpret_cast<Bytef*>(&out[0]);
    z.avail_out = static_cast<uInt>(out.size());
    int status = deflate(&z, Z_FINISH);
    out.resize(status == Z_STREAM_END ? z.total_out : 0);
    deflateEnd(&z);
    return out;
}
} // namespace

/** \brief The same graph always gives the same bytes; files of a set are deterministic. */
class TraceDeterminismTestCase : public TestCase
{
  public:
    TraceDeterminismTestCase()
        : TestCase("writing is deterministic (byte-identical files)")
    {}

  private:
    void
    DoRun() override
    {
        TraceSet a = BuildSampleSet();
        TraceSet b = BuildSampleSet();
        for (bool gzip : {false, true})
        {
            for (uint32_t r = 0; r < 4; ++r)
            {
                std::string x = ChakraTraceWriter::EncodeRank(a.ranks[r], 4, gzip);
                std::string y = ChakraTraceWriter::EncodeRank(b.ranks[r], 4, gzip);
                NS_TEST_ASSERT_MSG_EQ((x == y), true, "rank " << r << " bytes identical");
                if (gzip)
                {
                    // The streamed compression (in 64 KiB buffers) gives zlib's one-shot bytes.
                    std::string plain = ChakraTraceWriter::EncodeRank(a.ranks[r], 4, false);
                    NS_TEST_ASSERT_MSG_EQ((x == OneShotGzip(plain)), true, "rank " << r << " gzip");
                }
            }
        }
        // The same across many buffer boundaries, on 3 MB of text that compresses unevenly.
        std::string text;
        for (uint32_t i = 0; text.size() < (3u << 20); ++i)
        {
            text += "node " + std::to_string(i * 2654435761u % 100003) + (i % 7 ? " comp;" : "\n");
        }
        NS_TEST_ASSERT_MSG_EQ(
            (ChakraTraceWriter::Gzip(text) == OneShotGzip(text)), true, "3 MB gzip bytes");
        NS_TEST_ASSERT_MSG_EQ(
            (ChakraTraceReader::Gunzip(ChakraTraceWriter::Gzip(text), "text") == text),
            true,
            "3 MB gzip round trip");
        ScratchDir dir("trace-determinism");
        ChakraTraceWriter::WriteTraceSet(dir.File("one"), a);
        ChakraTraceWriter::WriteTraceSet(dir.File("two"), b);
        for (uint32_t r = 0; r < 4; ++r)
        {
            NS_TEST_ASSERT_MSG_EQ((ReadAll(ChakraTraceWriter::RankFileName(dir.File("one"), r))
                                   == ReadAll(ChakraTraceWriter::RankFileName(dir.File("two"), r))),
                                  true,
                                  "rank file " << r << " identical");
        }
        // A graph read back and written again gives the same bytes as the original.
        TraceSet back = ChakraTraceReader::ReadTraceSet(dir.File("one"));
        NS_TEST_ASSERT_MSG_EQ((ChakraTraceWriter::EncodeRank(back.ranks[1], 4, false)
                               == ChakraTraceWriter::EncodeRank(a.ranks[1], 4, false)),
                              true,
                              "re-encoding is a fixed point");
    }
};

/**
 * \brief The writer's bytes decode with the stock protobuf library (UnknownFieldSet, by field
 * number) into what Chakra's schema and ASTRA-sim's feeder expect.
 */
class TraceWireFormatTestCase : public TestCase
{
  public:
    TraceWireFormatTestCase()
        : TestCase("bytes decode against the official et_def.proto field numbers")
    {}

  private:
    void
    DoRun() override
    {
        TraceSet set = BuildSampleSet();
        for (uint32_t r = 0; r < 4; ++r)
        {
            const ExecutionTrace& t = set.ranks[r];
            std::vector<std::string> messages =
                SplitDelimited(ChakraTraceWriter::EncodeRank(t, 4, false));
            RAPIDLLM_REQUIRE_EQ(messages.size(), t.GetNNodes() + 1, "metadata + one per node");
            bool ok = false;
            RawMessage meta = Decode(messages[0], ok);
            NS_TEST_ASSERT_MSG_EQ(ok, true, "GlobalMetadata parses");
            NS_TEST_ASSERT_MSG_EQ(meta.bytes.count(kMetaVersion), 1u, "version present");
            NS_TEST_ASSERT_MSG_EQ(meta.bytes.find(kMetaVersion)->second, "0.0.4", "version");
            NS_TEST_ASSERT_MSG_EQ((meta.bytes.count(kMetaAttr) >= 2), true, "metadata attributes");

            uint64_t previousId = 0;
            for (uint32_t i = 0; i < t.GetNNodes(); ++i)
            {
                const TraceNode& n = t.GetNode(i);
                RawMessage m = Decode(messages[i + 1], ok);
                NS_TEST_ASSERT_MSG_EQ(ok, true, "node parses");
                NS_TEST_ASSERT_MSG_EQ((m.varints.find(kNodeId) != m.varints.end()
                                       || n.id == 0), // proto3 omits zero values
                                      true,
                                      "id field");
                uint64_t id = m.varints.count(kNodeId) ? m.varints.find(kNodeId)->second : 0;
                NS_TEST_ASSERT_MSG_EQ(id, n.id, "id");
                NS_TEST_ASSERT_MSG_EQ((i == 0 || id > previousId), true, "sorted by id");
                previousId = id;
                NS_TEST_ASSERT_MSG_EQ(m.bytes.find(kNodeName)->second, t.GetName(i), "name");
                int expectedType = n.type == TraceNodeType::COMP        ? kCompNode
                                   : n.type == TraceNodeType::COMM_COLL ? kCollNode
                                   : n.type == TraceNodeType::COMM_SEND ? kSendNode
                                                                        : kRecvNode;
                NS_TEST_ASSERT_MSG_EQ(
                    m.varints.find(kNodeType)->second, uint64_t(expectedType), "type");
                std::vector<uint64_t> deps;
                if (m.bytes.count(kNodeDataDeps))
                {
                    deps = DecodePacked(m.bytes.find(kNodeDataDeps)->second);
                }
                std::vector<uint64_t> expectedDeps;
                for (uint32_t d : t.GetDeps(i))
                {
                    expectedDeps.push_back(t.GetNode(d).id);
                }
                NS_TEST_ASSERT_MSG_EQ((deps == expectedDeps), true, "data_deps of " << id);
                NS_TEST_ASSERT_MSG_EQ(m.varints.count(kNodeCtrlDeps), 0u, "no ctrl_deps");
                uint64_t micros = m.varints.count(kNodeDurationMicros)
                                      ? m.varints.find(kNodeDurationMicros)->second
                                      : 0;
                NS_TEST_ASSERT_MSG_EQ(
                    micros, (n.durationNs + 500) / 1000, "duration_micros rounds to nearest");

                // Attributes: name -> (value field number, value).
                std::map<std::string, std::pair<int, std::string>> attrs;
                std::map<std::string, uint64_t> values;
                for (auto it = m.bytes.lower_bound(kNodeAttr); it != m.bytes.upper_bound(kNodeAttr);
                     ++it)
                {
                    RawMessage a = Decode(it->second, ok);
                    NS_TEST_ASSERT_MSG_EQ(ok, true, "attribute parses");
                    std::string name = a.bytes.find(kAttrName)->second;
                    if (a.bytes.count(kAttrString))
                    {
                        attrs[name] = {kAttrString, a.bytes.find(kAttrString)->second};
                    }
                    else if (a.fixed64s.count(kAttrDouble))
                    {
                        attrs[name] = {kAttrDouble, ""};
                        double v = 0;
                        const uint64_t bits = a.fixed64s.find(kAttrDouble)->second;
                        std::memcpy(&v, &bits, sizeof(v));
                        NS_TEST_EXPECT_MSG_EQ(v, double(t.GetSmScaling(i)), name << " value");
                    }
                    else
                    {
                        RAPIDLLM_REQUIRE_EQ(a.varints.size(), 1u, name << " has one value");
                        attrs[name] = {a.varints.begin()->first, ""};
                        values[name] = a.varints.begin()->second;
                    }
                }
                NS_TEST_ASSERT_MSG_EQ(attrs["is_cpu_op"].first, kAttrBool, "is_cpu_op is bool");
                NS_TEST_ASSERT_MSG_EQ(values["is_cpu_op"], 0u, "is_cpu_op false");
                if (n.type == TraceNodeType::COMP)
                {
                    NS_TEST_ASSERT_MSG_EQ(attrs["num_ops"].first, kAttrInt64, "num_ops int64");
                    NS_TEST_ASSERT_MSG_EQ(values["num_ops"], n.numOps, "num_ops");
                    NS_TEST_ASSERT_MSG_EQ(attrs["tensor_size"].first, kAttrUint64, "tensor_size");
                    NS_TEST_ASSERT_MSG_EQ(values["tensor_size"], n.bytes, "tensor_size");
                    NS_TEST_ASSERT_MSG_EQ(attrs["duration_ns"].first, kAttrUint64, "duration_ns");
                    NS_TEST_ASSERT_MSG_EQ(values["duration_ns"], n.durationNs, "duration_ns");
                }
                else if (n.type == TraceNodeType::COMM_COLL)
                {
                    NS_TEST_ASSERT_MSG_EQ(attrs["comm_type"].first, kAttrInt64, "comm_type int64");
                    NS_TEST_ASSERT_MSG_EQ(attrs["comm_size"].first, kAttrInt64, "comm_size int64");
                    NS_TEST_ASSERT_MSG_EQ(values["comm_size"], n.bytes, "comm_size");
                    std::string name(t.GetName(i));
                    uint64_t expected = name == "layer0.tp_allreduce" ? kAllReduce
                                        : name == "dp.reduce_scatter" ? kReduceScatter
                                        : name == "dp.all_gather"     ? kAllGather
                                                                      : 9; // BARRIER
                    NS_TEST_ASSERT_MSG_EQ(
                        values["comm_type"], expected, "Chakra value of " << name);
                    if (n.group == kWorldGroup)
                    {
                        NS_TEST_ASSERT_MSG_EQ(attrs.count("pg_name"), 0u, "world: no pg_name");
                    }
                    else
                    {
                        NS_TEST_ASSERT_MSG_EQ(attrs["pg_name"].first, kAttrString, "pg_name");
                        NS_TEST_ASSERT_MSG_EQ(attrs["pg_name"].second,
                                              std::to_string(n.group),
                                              "pg_name is the group id");
                    }
                }
                else
                {
                    for (const char* a : {"comm_src", "comm_dst", "comm_tag"})
                    {
                        NS_TEST_ASSERT_MSG_EQ(attrs[a].first, kAttrInt32, a << " is int32");
                    }
                    NS_TEST_ASSERT_MSG_EQ(values["comm_src"], 0u, "sender is rank 0");
                    NS_TEST_ASSERT_MSG_EQ(values["comm_dst"], 1u, "receiver is rank 1");
                    NS_TEST_ASSERT_MSG_EQ(values["comm_tag"], 7u, "tag");
                    NS_TEST_ASSERT_MSG_EQ(attrs["comm_size"].first, kAttrInt64, "comm_size int64");
                    NS_TEST_ASSERT_MSG_EQ(values["comm_size"], 8u << 20, "comm_size");
                }
            }
        }
    }
};

/**
 * \brief A trace as another tool writes it (ids out of order and sparse, ctrl_deps, other
 * integer types, extra fields, no duration_ns, gzip) loads with the right meaning.
 */
class ForeignTraceTestCase : public TestCase
{
  public:
    ForeignTraceTestCase()
        : TestCase("a trace from another tool loads (unsorted ids, ctrl_deps, gzip)")
    {}

  private:
    void
    DoRun() override
    {
        std::string meta;
        PutBytesField(meta, kMetaVersion, "0.0.3");
        std::string file = Delimited(meta);

        std::string n100; // a collective after two others, via data and ctrl deps
        PutVarintField(n100, kNodeId, 100);
        PutBytesField(n100, kNodeName, "nccl:all_gather");
        PutVarintField(n100, kNodeType, kCollNode);
        PutBytesField(n100, kNodeCtrlDeps, std::string(1, char(7))); // packed [7]
        PutBytesField(n100, kNodeDataDeps, std::string(1, char(50)));
        PutBytesField(n100, kNodeAttr, IntAttr("comm_type", kAttrInt64, kAllGather));
        PutBytesField(n100, kNodeAttr, IntAttr("comm_size", kAttrUint64, 1 << 20));
        PutBytesField(n100, kNodeAttr, StringAttr("pg_name", "5"));
        PutBytesField(n100, kNodeAttr, StringAttr("other_tool_note", "ignored"));
        file += Delimited(n100);

        std::string n7;
        PutVarintField(n7, kNodeId, 7);
        PutBytesField(n7, kNodeName, "aten::mm");
        PutVarintField(n7, kNodeType, kCompNode);
        PutVarintField(n7, kNodeDurationMicros, 42);
        std::string inputs;
        PutBytesField(inputs, 1, "[[1,2],[3,4]]");
        PutBytesField(n7, kNodeInputs, inputs);
        PutBytesField(n7, kNodeAttr, IntAttr("num_ops", kAttrUint64, 123456789));
        PutBytesField(n7, kNodeAttr, IntAttr("tensor_size", kAttrInt64, 4096));
        file += Delimited(n7);

        std::string n50;
        PutVarintField(n50, kNodeId, 50);
        PutBytesField(n50, kNodeName, "aten::add");
        PutVarintField(n50, kNodeType, kCompNode);
        PutBytesField(n50, kNodeDataDeps, std::string(1, char(7)));
        PutVarintField(n50, kNodeDurationMicros, 3);
        file += Delimited(n50);

        CommGroups groups;
        groups.Add(5, {0, 1});
        for (bool gzip : {false, true})
        {
            std::string bytes = gzip ? ChakraTraceWriter::Gzip(file) : file;
            ExecutionTrace t = ChakraTraceReader::DecodeRank(bytes, "foreign.0.et", 0, &groups, 2);
            NS_TEST_ASSERT_MSG_EQ(t.GetNNodes(), 3u, "three nodes");
            NS_TEST_ASSERT_MSG_EQ(t.GetNode(0).id, 7u, "sorted by id");
            NS_TEST_ASSERT_MSG_EQ(t.GetNode(1).id, 50u, "sorted by id");
            NS_TEST_ASSERT_MSG_EQ(t.GetNode(2).id, 100u, "sorted by id");
            NS_TEST_ASSERT_MSG_EQ(t.GetNode(0).durationNs, 42000u, "micros -> ns");
            NS_TEST_ASSERT_MSG_EQ(t.GetNode(0).numOps, 123456789u, "uint64 num_ops accepted");
            NS_TEST_ASSERT_MSG_EQ(t.GetNode(0).bytes, 4096u, "int64 tensor_size accepted");
            NS_TEST_ASSERT_MSG_EQ(t.GetName(2), "nccl:all_gather", "name");
            NS_TEST_ASSERT_MSG_EQ(
                (t.GetNode(2).commType == CollectiveType::ALL_GATHER), true, "comm_type");
            NS_TEST_ASSERT_MSG_EQ(t.GetNode(2).group, 5u, "pg_name -> group");
            NS_TEST_ASSERT_MSG_EQ(t.GetNode(2).bytes, 1u << 20, "comm_size");
            auto deps = t.GetDeps(2);
            RAPIDLLM_REQUIRE_EQ(deps.size(), 2u, "data and ctrl deps both kept");
            NS_TEST_ASSERT_MSG_EQ(deps[0], 1u, "data dep on id 50 (index 1)");
            NS_TEST_ASSERT_MSG_EQ(deps[1], 0u, "ctrl dep on id 7 (index 0)");
            std::vector<uint32_t> order = t.TopologicalOrder();
            RAPIDLLM_REQUIRE_EQ(order.size(), 3u, "acyclic");
            NS_TEST_ASSERT_MSG_EQ(order.back(), 2u, "collective last");
        }
    }
};

/** \brief The in-memory graph: dependencies, children, id lookup, guards against misuse. */
class ExecutionTraceApiTestCase : public TestCase
{
  public:
    ExecutionTraceApiTestCase()
        : TestCase("ExecutionTrace: edges, children, id lookup, misuse")
    {}

  private:
    void
    DoRun() override
    {
        ExecutionTrace t(3);
        uint32_t a = t.AddCompute("a", 10, 1, 1);
        uint32_t b = t.AddCompute("b", 10, 1, 1, {a, a}); // duplicate dropped
        uint32_t c = t.AddCompute("c", 10, 1, 1, {a});
        uint32_t d = t.AddCompute("d", 10, 1, 1, {b});
        RAPIDLLM_REQUIRE_EQ(t.GetDeps(b).size(), 1u, "duplicate dependency dropped");
        t.AddDependency(b, c); // c is added after b: b's list moves to the end of storage
        t.AddDependency(b, c); // again: no-op
        RAPIDLLM_REQUIRE_EQ(t.GetDeps(b).size(), 2u, "b waits for a and c");
        NS_TEST_ASSERT_MSG_EQ(t.GetDeps(b)[1], c, "c appended");
        NS_TEST_ASSERT_MSG_EQ(t.GetDeps(d)[0], b, "d's list intact after the move");
        NS_TEST_ASSERT_MSG_EQ(t.GetNEdges(), 4u, "edges: b<-a, c<-a, d<-b, b<-c");
        std::vector<uint32_t> order = t.TopologicalOrder();
        std::vector<uint32_t> expected = {a, c, b, d};
        NS_TEST_ASSERT_MSG_EQ((order == expected), true, "topological order");
        t.BuildChildIndex();
        RAPIDLLM_REQUIRE_EQ(t.GetChildren(a).size(), 2u, "a releases b and c");
        NS_TEST_ASSERT_MSG_EQ(t.GetChildren(c)[0], b, "c releases b");
        RAPIDLLM_REQUIRE_EQ(t.GetChildren(d).size(), 0u, "d releases nothing");
        NS_TEST_ASSERT_MSG_EQ(t.FindById(2), c, "id lookup (sorted)");
        NS_TEST_ASSERT_MSG_EQ(t.FindById(99), ExecutionTrace::kNotFound, "absent id");

        bool threw = false;
        try
        {
            t.AddCompute("bad", 1, 1, 1, {7});
        }
        catch (const std::out_of_range&)
        {
            threw = true;
        }
        NS_TEST_ASSERT_MSG_EQ(threw, true, "dependency on a node not yet added");

        TraceNode n;
        n.id = 1; // taken by b
        threw = false;
        try
        {
            t.AddNode(n, "dup", nullptr, 0);
        }
        catch (const std::invalid_argument&)
        {
            threw = true;
        }
        NS_TEST_ASSERT_MSG_EQ(threw, true, "duplicate id rejected");
        NS_TEST_ASSERT_MSG_EQ(t.GetNNodes(), 4u, "failed adds leave the graph unchanged");

        // Ids out of order still work (hash index), and the writer sorts them.
        ExecutionTrace u(0);
        n.id = 50;
        uint32_t i50 = u.AddNode(n, "fifty", nullptr, 0);
        n.id = 10;
        uint32_t i10 = u.AddNode(n, "ten", &i50, 1);
        NS_TEST_ASSERT_MSG_EQ(u.IsSortedById(), false, "unsorted");
        NS_TEST_ASSERT_MSG_EQ(u.FindById(10), i10, "hash lookup");
        ExecutionTrace back = ChakraTraceReader::DecodeRank(
            ChakraTraceWriter::EncodeRank(u, 1, false), "u", 0, nullptr, 1);
        NS_TEST_ASSERT_MSG_EQ(back.GetNode(0).id, 10u, "written sorted by id");
        NS_TEST_ASSERT_MSG_EQ(back.GetDeps(0)[0], 1u, "dependency follows the node");

        // Copies own their names: intern into a copy after the original is gone.
        ExecutionTrace* original = new ExecutionTrace(t);
        ExecutionTrace copy(*original);
        ExecutionTrace assigned;
        assigned = *original;
        delete original;
        uint32_t e1 = copy.AddCompute("a", 1, 1, 1);
        uint32_t e2 = assigned.AddCompute("c", 1, 1, 1);
        NS_TEST_ASSERT_MSG_EQ(copy.GetNode(e1).name, copy.GetNode(a).name, "name reused");
        NS_TEST_ASSERT_MSG_EQ(assigned.GetNode(e2).name, assigned.GetNode(c).name, "name reused");
        NS_TEST_ASSERT_MSG_EQ(copy.GetName(d), "d", "names survive the copy");

        // Distinct names (a workload's) are stored unshared: the same names and graph, and so
        // the same trace, as when they are looked up; copies keep them.
        ExecutionTrace shared(3);
        ExecutionTrace distinct(3);
        distinct.SetDistinctNames();
        for (ExecutionTrace* g : {&shared, &distinct})
        {
            uint32_t x = g->AddCompute("x", 5, 10, 20);
            g->AddCompute("x", 6, 10, 20, {x});
            g->AddCompute("y", 7, 10, 20, {x});
        }
        NS_TEST_ASSERT_MSG_EQ(shared.GetNode(1).name, shared.GetNode(0).name, "looked up");
        NS_TEST_ASSERT_MSG_NE(distinct.GetNode(1).name, distinct.GetNode(0).name, "unshared");
        NS_TEST_ASSERT_MSG_EQ(distinct.GetName(1), "x", "the name as given");
        NS_TEST_ASSERT_MSG_EQ((shared == distinct), true, "the same trace");
        ExecutionTrace distinctCopy(distinct);
        NS_TEST_ASSERT_MSG_EQ((distinctCopy == distinct), true, "copied");
        NS_TEST_ASSERT_MSG_EQ(distinctCopy.GetName(distinctCopy.AddCompute("x", 1, 1, 1)),
                              "x",
                              "a copy adds names as given");

        // Cycles made through AddDependency are reported with the ids along them.
        t.AddDependency(a, d);
        threw = false;
        try
        {
            t.Validate("mem");
        }
        catch (const TraceError& e)
        {
            threw = std::string(e.what()).find("cycle") != std::string::npos;
        }
        NS_TEST_ASSERT_MSG_EQ(threw, true, "cycle reported");
    }
};

/**
 * \brief A set is written all or nothing, and a smaller set replaces a larger one with the
 * same prefix completely.
 */
class TraceSetFilesTestCase : public TestCase
{
  public:
    TraceSetFilesTestCase()
        : TestCase("sets are written atomically and replace stale rank files")
    {}

  private:
    void
    DoRun() override
    {
        ScratchDir dir("trace-files");
        std::string prefix = dir.File("job");
        TraceSet four = BuildSampleSet();
        ChakraTraceWriter::WriteTraceSet(prefix, four);

        TraceSet two;
        two.groups.Add(1, {0, 1});
        for (uint32_t r = 0; r < 2; ++r)
        {
            ExecutionTrace t(r);
            uint32_t g = t.AddCompute("gemm", 100, 10, 10);
            t.AddCollective("ar", CollectiveType::ALL_REDUCE, 1024, 1, {g});
            two.ranks.push_back(t);
        }
        ChakraTraceWriter::WriteTraceSet(prefix, two);
        NS_TEST_ASSERT_MSG_EQ(
            fs::exists(ChakraTraceWriter::RankFileName(prefix, 2)), false, "stale rank 2 removed");
        TraceSet back = ChakraTraceReader::ReadTraceSet(prefix);
        RAPIDLLM_REQUIRE_EQ(back.ranks.size(), 2u, "two ranks now");
        NS_TEST_EXPECT_MSG_EQ(back.prefix, prefix, "the set's prefix");
        // Its folder: the prefix of the set in it.
        NS_TEST_EXPECT_MSG_EQ(
            ChakraTraceReader::ReadTraceSet(dir.Path()).prefix, prefix, "a folder's set's prefix");
        // The last rank's file missing: its groups name the rank, and the error the file.
        {
            const std::string cut = dir.File("cut");
            ChakraTraceWriter::WriteTraceSet(cut, two);
            fs::remove(ChakraTraceWriter::RankFileName(cut, 1));
            std::string why;
            try
            {
                ChakraTraceReader::ReadTraceSet(cut);
            }
            catch (const TraceError& e)
            {
                why = e.what();
            }
            NS_TEST_EXPECT_MSG_NE(
                why.find("(is " + ChakraTraceWriter::RankFileName(cut, 1) + " missing?)"),
                std::string::npos,
                why);
            fs::remove(ChakraTraceWriter::RankFileName(cut, 0));
            fs::remove(ChakraTraceWriter::CommGroupsFileName(cut));
        }
        // Ranks that disagree on the request they serve: refused, naming the rank that differs.
        {
            TraceSet tokens = two;
            tokens.ranks[0].SetTokens(0, 8, 4);
            tokens.ranks[1].SetTokens(UINT32_MAX, 16, 4);
            const std::string mixed = dir.File("mixed");
            ChakraTraceWriter::WriteTraceSet(mixed, tokens);
            std::string why;
            try
            {
                ChakraTraceReader::ReadTraceSet(mixed);
            }
            catch (const TraceError& e)
            {
                why = e.what();
            }
            NS_TEST_EXPECT_MSG_NE(why.find("generated_tokens 16 and requests 4 are not rank 0's 8 "
                                           "and 4"),
                                  std::string::npos,
                                  why);
            for (uint32_t r = 0; r < 2; ++r)
            {
                fs::remove(ChakraTraceWriter::RankFileName(mixed, r));
            }
            fs::remove(ChakraTraceWriter::CommGroupsFileName(mixed));
        }

        // Block the temporary name of rank 1 with a directory: writing fails, nothing changes.
        std::string blocked = ChakraTraceWriter::RankFileName(dir.File("fail"), 1) + ".tmp"
                              + std::to_string(::getpid());
        fs::create_directories(blocked);
        bool threw = false;
        try
        {
            ChakraTraceWriter::WriteTraceSet(dir.File("fail"), two);
        }
        catch (const OutputError& e)
        {
            threw = std::string(e.what()).find("cannot write") != std::string::npos;
        }
        NS_TEST_ASSERT_MSG_EQ(threw, true, "write failure reported");
        size_t leftovers = 0;
        for (const auto& entry : fs::directory_iterator(dir.Path()))
        {
            std::string name = entry.path().filename().string();
            leftovers += name.rfind("fail.", 0) == 0 && entry.path() != fs::path(blocked);
        }
        NS_TEST_ASSERT_MSG_EQ(leftovers, 0u, "no half-written files left behind");

        // A directory where a rank's file goes: refused before any file is replaced.
        const std::string rank0 = ChakraTraceWriter::RankFileName(prefix, 0);
        std::string before;
        {
            std::ifstream in(rank0, std::ios::binary);
            before.assign(std::istreambuf_iterator<char>(in), {});
        }
        fs::create_directories(ChakraTraceWriter::RankFileName(prefix, 3));
        threw = false;
        try
        {
            ChakraTraceWriter::WriteTraceSet(prefix, four);
        }
        catch (const TraceError& e)
        {
            threw = std::string(e.what()).find("a directory is in the way") != std::string::npos;
        }
        NS_TEST_ASSERT_MSG_EQ(threw, true, "a directory in the way is reported");
        std::string after;
        {
            std::ifstream in(rank0, std::ios::binary);
            after.assign(std::istreambuf_iterator<char>(in), {});
        }
        NS_TEST_EXPECT_MSG_EQ((after == before), true, "rank 0 of the earlier set kept");
        NS_TEST_EXPECT_MSG_EQ(
            fs::exists(ChakraTraceWriter::RankFileName(prefix, 2)), false, "no rank 2 written");
        fs::remove(ChakraTraceWriter::RankFileName(prefix, 3));

        // The shared-graph overload relabels ranks.
        std::vector<const ExecutionTrace*> shared = {&two.ranks[0], &two.ranks[0]};
        ChakraTraceWriter::WriteTraceSet(dir.File("shared"), shared, two.groups);
        TraceSet s = ChakraTraceReader::ReadTraceSet(dir.File("shared"));
        NS_TEST_ASSERT_MSG_EQ(s.ranks[1].GetRank(), 1u, "relabelled");
        NS_TEST_ASSERT_MSG_EQ(s.ranks[1].GetNNodes(), 2u, "same graph");
    }
};

/**
 * \brief The name table and a work node's dependency list, the two compact stores behind
 * graphs of millions of nodes: every name and id comes back as added, through growth, copies
 * and moves.
 */
class CompactStoresTestCase : public TestCase
{
  public:
    CompactStoresTestCase()
        : TestCase("NameTable and DepList keep what was added through growth, copy and move")
    {}

  private:
    void
    DoRun() override
    {
        NameTable names;
        const uint32_t a = names.Add("decode.mb1.L0.qkv");
        NS_TEST_ASSERT_MSG_EQ(names.Add("decode.mb1.L0.qkv"), a, "Add shares a name");
        NS_TEST_ASSERT_MSG_NE(names.AddDistinct("decode.mb1.L0.qkv"), a, "AddDistinct does not");
        const std::string longName(3 << 20, 'x'); // longer than a block: a block of its own
        const uint32_t big = names.Add(longName);
        const uint32_t empty = names.Add("");
        std::vector<std::string> added;
        for (uint32_t i = 0; i < 200000; ++i) // about 3 MiB: several blocks
        {
            added.push_back("prefill.mb" + std::to_string(i) + ".attention");
            names.AddDistinct(added.back());
        }
        NameTable copy(names);
        NameTable moved(std::move(names));
        names = copy; // the moved-from table is usable again
        for (const NameTable* t : {&copy, &moved, &names})
        {
            NS_TEST_ASSERT_MSG_EQ(t->Size(), 4u + added.size(), "count");
            NS_TEST_ASSERT_MSG_EQ(t->Get(a), "decode.mb1.L0.qkv", "first");
            NS_TEST_ASSERT_MSG_EQ((t->Get(big) == longName), true, "the long name");
            NS_TEST_ASSERT_MSG_EQ(t->Get(empty), "", "the empty name");
            for (uint32_t i = 0; i < added.size(); i += 9973)
            {
                NS_TEST_ASSERT_MSG_EQ(t->Get(4 + i), added[i], "name " << i);
            }
        }
        NS_TEST_ASSERT_MSG_EQ(copy.Add("decode.mb1.L0.qkv"), a, "a copy still shares");
        NS_TEST_ASSERT_MSG_EQ(copy.Get(copy.Add("new")), "new", "and adds");

        DepList deps{7};
        NS_TEST_ASSERT_MSG_EQ(deps.size(), 1u, "in place");
        std::vector<uint32_t> want = {7};
        for (uint32_t id = 100; id < 110; ++id) // past the two held in place: on the heap
        {
            deps.push_back(id);
            want.push_back(id);
            DepList copied(deps);
            DepList assigned;
            assigned = deps;
            DepList taken(std::move(copied));
            for (const DepList* d : {&deps, &assigned, &taken})
            {
                NS_TEST_ASSERT_MSG_EQ((std::vector<uint32_t>(d->begin(), d->end()) == want),
                                      true,
                                      "ids after adding " << id);
            }
            NS_TEST_ASSERT_MSG_EQ(copied.empty(), true, "a moved-from list is empty");
            copied.push_back(1);
            NS_TEST_ASSERT_MSG_EQ(copied[0], 1u, "and usable");
        }
        deps = DepList{};
        NS_TEST_ASSERT_MSG_EQ(deps.empty(), true, "assigned an empty list");
    }
};

/** \brief Chakra execution-trace format tests. */
class TraceFormatTestSuite : public TestSuite
{
  public:
    TraceFormatTestSuite()
        : TestSuite("rapid-llm-trace-format", UNIT)
    {
        AddTestCase(new TraceRoundTripTestCase, TestCase::QUICK);
        AddTestCase(new TraceDeterminismTestCase, TestCase::QUICK);
        AddTestCase(new TraceWireFormatTestCase, TestCase::QUICK);
        AddTestCase(new ForeignTraceTestCase, TestCase::QUICK);
        AddTestCase(new ExecutionTraceApiTestCase, TestCase::QUICK);
        AddTestCase(new CompactStoresTestCase, TestCase::QUICK);
        AddTestCase(new TraceSetFilesTestCase, TestCase::QUICK);
    }
};

static TraceFormatTestSuite g_traceFormatTestSuite; //!< registers the suite
