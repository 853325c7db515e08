/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// Damaged Chakra traces: each class of damage is rejected with a TraceError that names the
// file, the rank, the node where there is one, and what is wrong; random and mutated bytes
// never produce anything but a trace or a TraceError.

#include "chakra-test-encoder.h"
#include "ns3/chakra-trace-reader.h"
#include "ns3/chakra-trace-writer.h"
#include "ns3/comm-groups.h"
#include "ns3/test.h"
#include "ns3/trace-error.h"

#include <signal.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <functional>

using namespace ns3;
using namespace ns3::rapidllm;
namespace fs = std::filesystem;

namespace {

using namespace chakratest;

/// A node message built field by field.
struct RawNode
{
    std::string bytes;

    RawNode(uint64_t id, int type)
    {
        PutVarintField(bytes, kNodeId, id);
        PutBytesField(bytes, kNodeName, "n" + std::to_string(id));
        PutVarintField(bytes, kNodeType, static_cast<uint64_t>(type));
    }

    RawNode&
    Deps(const std::vector<uint64_t>& deps)
    {
        std::string packed;
        for (uint64_t d : deps)
        {
            PutVarint(packed, d);
        }
        PutBytesField(bytes, kNodeDataDeps, packed);
        return *this;
    }

    RawNode&
    Int(const std::string& name, int field, uint64_t v)
    {
        std::string a;
        PutBytesField(a, kAttrName, name);
        PutVarintField(a, field, v);
        PutBytesField(bytes, kNodeAttr, a);
        return *this;
    }

    RawNode&
    Str(const std::string& name, const std::string& v)
    {
        std::string a;
        PutBytesField(a, kAttrName, name);
        PutBytesField(a, kAttrString, v);
        PutBytesField(bytes, kNodeAttr, a);
        return *this;
    }
};

/// A file: metadata then the given nodes.
std::string
File(const std::vector<RawNode>& nodes)
{
    std::string meta;
    PutBytesField(meta, 1, "0.0.4");
    std::string file = Delimited(meta);
    for (const auto& n : nodes)
    {
        file += Delimited(n.bytes);
    }
    return file;
}

/// A valid file of our own writer, to damage.
std::string
ValidFile()
{
    ExecutionTrace t(0);
    uint32_t a = t.AddCompute("gemm", 1500, 1000, 64);
    uint32_t b = t.AddCollective("ar", CollectiveType::ALL_REDUCE, 4096, 1, {a});
    t.AddCompute("gemm2", 2500, 1000, 64, {b});
    return ChakraTraceWriter::EncodeRank(t, 2, false);
}

CommGroups
Groups()
{
    CommGroups g;
    g.Add(1, {0, 1});
    g.Add(2, {1});
    g.Add(3, {0});
    return g;
}

/// Decodes and returns the TraceError's text ("" when nothing was thrown); other exception
/// types propagate and fail the test.
std::string
ErrorOf(const std::string& bytes, int64_t* nodeId = nullptr)
{
    CommGroups groups = Groups();
    try
    {
        ChakraTraceReader::DecodeRank(bytes, "bad.0.et", 0, &groups, 2);
    }
    catch (const TraceError& e)
    {
        if (nodeId)
        {
            *nodeId = e.GetNodeId();
        }
        return e.what();
    }
    return "";
}

bool
Contains(const std::string& text, const std::string& part)
{
    return text.find(part) != std::string::npos;
}

} // namespace

/** \brief Damaged framing: length prefixes and protobuf bytes. */
class FramingErrorsTestCase : public TestCase
{
  public:
    FramingErrorsTestCase()
        : TestCase("truncated or oversized length prefixes and bad protobuf are rejected")
    {}

  private:
    void
    DoRun() override
    {
        std::string valid = ValidFile();
        NS_TEST_ASSERT_MSG_EQ(ErrorOf(valid), "", "the undamaged file loads");

        std::string e = ErrorOf("");
        NS_TEST_ASSERT_MSG_EQ((Contains(e, "bad.0.et") && Contains(e, "empty file")), true, e);

        e = ErrorOf(valid + "\x80");
        NS_TEST_ASSERT_MSG_EQ(
            (Contains(e, "truncated length prefix") && Contains(e, "rank 0")), true, e);

        e = ErrorOf(valid + std::string("\xff\xff\xff\xff\x07", 5));
        NS_TEST_ASSERT_MSG_EQ(Contains(e, "oversized length prefix"), true, e);

        e = ErrorOf(valid + std::string("\xff\xff\xff\xff\x7f", 5));
        NS_TEST_ASSERT_MSG_EQ(Contains(e, "oversized length prefix"), true, e);

        e = ErrorOf(valid + std::string("\xff\xff\xff\xff\xff\x01", 6));
        NS_TEST_ASSERT_MSG_EQ(Contains(e, "malformed length prefix"), true, e);

        e = ErrorOf(valid.substr(0, valid.size() - 3));
        NS_TEST_ASSERT_MSG_EQ((Contains(e, "announces") && Contains(e, "truncated")), true, e);

        e = ErrorOf(valid + std::string("\x02\x0f\x00", 3)); // wire type 7 does not exist
        NS_TEST_ASSERT_MSG_EQ(
            (Contains(e, "not a valid protobuf") && Contains(e, "previous node has id 2")),
            true,
            e);

        // 100000 nested group starts: protobuf's recursion limit, not the stack, stops them.
        std::string deep(100000, '\x7b');
        std::string deepLength;
        PutVarint(deepLength, deep.size());
        e = ErrorOf(valid + deepLength + deep);
        NS_TEST_ASSERT_MSG_EQ(Contains(e, "not a valid protobuf"), true, e);

        e = ErrorOf(std::string("\x01\x07", 2)); // metadata itself broken
        NS_TEST_ASSERT_MSG_EQ(Contains(e, "GlobalMetadata"), true, e);

        std::string gz = ChakraTraceWriter::Gzip(valid);
        NS_TEST_ASSERT_MSG_EQ(ErrorOf(gz), "", "gzip loads");
        e = ErrorOf(gz.substr(0, gz.size() - 6));
        NS_TEST_ASSERT_MSG_EQ((Contains(e, "gzip") && Contains(e, "truncated")), true, e);
        std::string corrupt = gz;
        corrupt[12] = static_cast<char>(corrupt[12] ^ 0x55);
        corrupt[13] = static_cast<char>(corrupt[13] ^ 0xaa);
        e = ErrorOf(corrupt);
        NS_TEST_ASSERT_MSG_EQ(Contains(e, "gzip"), true, e);
        e = ErrorOf(gz + "junk");
        NS_TEST_ASSERT_MSG_EQ(Contains(e, "after the end of the compressed stream"), true, e);
        NS_TEST_ASSERT_MSG_EQ(ErrorOf(ChakraTraceWriter::Gzip(valid.substr(0, 10))
                                      + ChakraTraceWriter::Gzip(valid.substr(10))),
                              "",
                              "concatenated gzip members");
        e = ErrorOf(gz + gz); // inflates to two files back to back: metadata is no Node
        NS_TEST_ASSERT_MSG_EQ(Contains(e, "not a valid protobuf"), true, e);
    }
};

/** \brief Damaged graphs: ids, dependencies, cycles. */
class GraphErrorsTestCase : public TestCase
{
  public:
    GraphErrorsTestCase()
        : TestCase("duplicate ids, missing dependencies and cycles are rejected")
    {}

  private:
    void
    DoRun() override
    {
        int64_t node = -1;
        std::string e = ErrorOf(File({RawNode(1, kCompNode), RawNode(1, kCompNode)}), &node);
        NS_TEST_ASSERT_MSG_EQ((Contains(e, "duplicate node id") && node == 1), true, e);

        e = ErrorOf(File({RawNode(1, kCompNode), RawNode(2, kCompNode).Deps({1, 99})}), &node);
        NS_TEST_ASSERT_MSG_EQ((Contains(e, "depends on node 99") && node == 2), true, e);

        e = ErrorOf(File({RawNode(1, kCompNode).Deps({3}),
                          RawNode(2, kCompNode).Deps({1}),
                          RawNode(3, kCompNode).Deps({2}),
                          RawNode(4, kCompNode).Deps({3})}),
                    &node);
        NS_TEST_ASSERT_MSG_EQ((Contains(e, "cycle") && Contains(e, " -> ")), true, e);
        NS_TEST_ASSERT_MSG_EQ((node >= 1 && node <= 3), true, "a node on the cycle: " << e);

        e = ErrorOf(File({RawNode(5, kCompNode).Deps({5})}), &node);
        NS_TEST_ASSERT_MSG_EQ((Contains(e, "cycle") && node == 5), true, e);

        e = ErrorOf(File({RawNode(1, 42)}), &node);
        NS_TEST_ASSERT_MSG_EQ((Contains(e, "unknown node type 42") && node == 1), true, e);

        // Ids above 2^63 are still named in the text.
        e = ErrorOf(File({RawNode(~0ull, kCompNode).Deps({7})}), &node);
        NS_TEST_ASSERT_MSG_EQ((Contains(e, "node 18446744073709551615") && node == -1), true, e);
    }
};

/** \brief Damaged communication nodes. */
class CommErrorsTestCase : public TestCase
{
  public:
    CommErrorsTestCase()
        : TestCase("bad collective types, groups, peers and attribute types are rejected")
    {}

  private:
    void
    DoRun() override
    {
        int64_t node = -1;
        std::string e =
            ErrorOf(File({RawNode(3, kCollNode).Int("comm_type", kAttrInt64, 42)}), &node);
        NS_TEST_ASSERT_MSG_EQ((Contains(e, "unknown collective type 42")
                               && Contains(e, "ALL_REDUCE=0") && Contains(e, "BARRIER=9")
                               && node == 3),
                              true,
                              e);

        e = ErrorOf(File({RawNode(3, kCollNode).Int("comm_type", kAttrInt64, ~0ull)}));
        NS_TEST_ASSERT_MSG_EQ(Contains(e, "unknown collective type -1"), true, e);

        e = ErrorOf(File({RawNode(3, kCollNode).Int("comm_size", kAttrInt64, 8)}));
        NS_TEST_ASSERT_MSG_EQ(Contains(e, "without a comm_type"), true, e);

        e = ErrorOf(File({RawNode(5, kCompNode).Int("sm_scaling", kAttrInt64, 1)}), &node);
        NS_TEST_ASSERT_MSG_EQ(
            (Contains(e, "'sm_scaling' must hold a double (or float) in [0, 1]") && node == 5),
            true,
            e);

        e = ErrorOf(
            File({RawNode(4, kCollNode).Int("comm_type", kAttrInt64, 0).Str("pg_name", "9")}),
            &node);
        NS_TEST_ASSERT_MSG_EQ((Contains(e, "pg_name \"9\" names no communicator group")
                               && Contains(e, "groups defined: 1, 2, 3") && node == 4),
                              true,
                              e);

        e = ErrorOf(
            File({RawNode(4, kCollNode).Int("comm_type", kAttrInt64, 0).Str("pg_name", "tp")}));
        NS_TEST_ASSERT_MSG_EQ(Contains(e, "not a communicator group id"), true, e);

        e = ErrorOf(
            File({RawNode(4, kCollNode).Int("comm_type", kAttrInt64, 0).Str("pg_name", "2")}));
        NS_TEST_ASSERT_MSG_EQ(Contains(e, "does not contain rank 0"), true, e);

        e = ErrorOf(
            File({RawNode(6, kCollNode).Int("comm_type", kAttrInt64, 0).Str("comm_size", "lots")}));
        NS_TEST_ASSERT_MSG_EQ(Contains(e, "'comm_size' must hold an integer"), true, e);

        e = ErrorOf(File({RawNode(6, kCollNode)
                              .Int("comm_type", kAttrInt64, 0)
                              .Int("comm_size", kAttrInt64, ~0ull)}));
        NS_TEST_ASSERT_MSG_EQ(Contains(e, "'comm_size' is -1"), true, e);

        e = ErrorOf(File({RawNode(6, kCollNode)
                              .Int("comm_type", kAttrInt64, 0)
                              .Int("comm_size", kAttrUint64, 1ull << 63)}));
        NS_TEST_ASSERT_MSG_EQ(
            Contains(e, "'comm_size' is 9223372036854775808; allowed 0.."), true, e);

        // Found by fuzzing: a duration of 2^64 - 1 ns wrapped in ns-3's signed nanoseconds and
        // replayed faster than the original.
        e = ErrorOf(File({RawNode(3, kCompNode).Int("duration_ns", kAttrUint64, ~0ull)}));
        NS_TEST_ASSERT_MSG_EQ(
            Contains(e, "'duration_ns' is 18446744073709551615; allowed 0..1000000000000000000"),
            true,
            e);
        // Beyond a replay's time limit (10^18 ns): named here, not as a cycle or the watchdog.
        e = ErrorOf(File({RawNode(3, kCompNode).Int("host_ns", kAttrUint64, 1ull << 62)}));
        NS_TEST_ASSERT_MSG_EQ(
            Contains(e, "'host_ns' is 4611686018427387904; allowed 0..1000000000000000000"),
            true,
            e);

        // A value of the wrong type is named by its field, as the schema names it.
        e = ErrorOf(
            File({RawNode(6, kCollNode).Int("comm_type", kAttrInt64, 0).Str("comm_size", "1024")}));
        NS_TEST_ASSERT_MSG_EQ(
            Contains(e, "'comm_size' must hold an integer (it holds string_val)"), true, e);

        e = ErrorOf(File({RawNode(7, kSendNode).Int("comm_tag", kAttrInt32, 1)}));
        NS_TEST_ASSERT_MSG_EQ(Contains(e, "without a comm_dst"), true, e);

        e = ErrorOf(File({RawNode(7, kSendNode).Int("comm_dst", kAttrInt32, 5)}));
        NS_TEST_ASSERT_MSG_EQ(Contains(e, "comm_dst 5 is not a rank (allowed 0..1)"), true, e);

        NS_TEST_ASSERT_MSG_EQ(ErrorOf(File({RawNode(7, kSendNode).Int("comm_dst", kAttrInt32, 1)})),
                              "",
                              "a valid send");
        // Peers are global ranks: a send leaves, a receive arrives at, its own file's rank (0).
        e = ErrorOf(File({RawNode(7, kSendNode)
                              .Int("comm_src", kAttrInt32, 1)
                              .Int("comm_dst", kAttrInt32, 1)}),
                    &node);
        NS_TEST_ASSERT_MSG_EQ(
            (Contains(e, "comm_src 1: a send leaves the rank whose file holds it") && node == 7),
            true,
            e);
        e = ErrorOf(File(
            {RawNode(7, kRecvNode).Int("comm_src", kAttrInt32, 1).Int("comm_dst", kAttrInt32, 1)}));
        NS_TEST_ASSERT_MSG_EQ(Contains(e, "comm_dst 1: a receive arrives"), true, e);
        NS_TEST_ASSERT_MSG_EQ(ErrorOf(File({RawNode(7, kRecvNode)
                                                .Int("comm_src", kAttrInt32, 1)
                                                .Int("comm_dst", kAttrInt32, 0)})),
                              "",
                              "a valid receive");
        // A send's communicator (pg_name) must hold both ends.
        auto send = [](const char* group)
        {
            return File(
                {RawNode(7, kSendNode).Int("comm_dst", kAttrInt32, 1).Str("pg_name", group)});
        };
        NS_TEST_ASSERT_MSG_EQ(ErrorOf(send("1")), "", "a send on a group of both ends");
        e = ErrorOf(send("3"), &node);
        NS_TEST_ASSERT_MSG_EQ((Contains(e,
                                        "point-to-point message on group 3, which does not "
                                        "contain rank 1")
                               && node == 7),
                              true,
                              e);
        e = ErrorOf(send("2"));
        NS_TEST_ASSERT_MSG_EQ(Contains(e, "does not contain rank 0"), true, e);
    }
};

/**
 * \brief An interrupt while a trace set is written leaves no file of it (the process died with
 * every temporary rank file in place): the write stops between two files, removes what it wrote
 * and says so; the interrupt stays pending for the caller.
 */
class InterruptedWriteTestCase : public TestCase
{
  public:
    InterruptedWriteTestCase()
        : TestCase("an interrupt while a set is written leaves none of its files")
    {}

  private:
    void
    DoRun() override
    {
        namespace fs = std::filesystem;
        const fs::path dir =
            fs::temp_directory_path() / ("rapidllm-trace-interrupt-" + std::to_string(::getpid()));
        fs::remove_all(dir);
        fs::create_directories(dir);
        // An interrupt that came and is held (blocked here, as the writer holds it).
        sigset_t held;
        sigset_t old;
        sigemptyset(&held);
        sigaddset(&held, SIGINT);
        pthread_sigmask(SIG_BLOCK, &held, &old);
        ::raise(SIGINT);
        TraceSet set;
        set.groups.Add(1, {0, 1});
        for (uint32_t r = 0; r < 2; ++r)
        {
            ExecutionTrace t(r);
            t.AddCollective("ar", CollectiveType::ALL_REDUCE, 64, 1, {t.AddCompute("g", 10, 1, 1)});
            set.ranks.push_back(t);
        }
        std::string error;
        try
        {
            ChakraTraceWriter::WriteTraceSet((dir / "trace").string(), set);
        }
        catch (const OutputError& e)
        {
            error = e.what();
        }
        // The held interrupt is the test's to drop: ignored while it is let through.
        auto previous = std::signal(SIGINT, SIG_IGN);
        pthread_sigmask(SIG_SETMASK, &old, nullptr);
        std::signal(SIGINT, previous);
        NS_TEST_EXPECT_MSG_EQ(
            Contains(error, "interrupted while writing the trace set"), true, error);
        NS_TEST_EXPECT_MSG_EQ(fs::is_empty(dir), true, "no file of the set, no temporary one");
        fs::remove_all(dir);
    }
};

/** \brief Damaged sets: missing ranks, metadata mismatch, unpaired messages, groups file. */
class SetErrorsTestCase : public TestCase
{
  public:
    SetErrorsTestCase()
        : TestCase("missing ranks, unpaired sends, uneven collectives and bad group files")
    {}

  private:
    static std::string
    SetError(const std::function<void(const std::string&)>& make)
    {
        fs::path dir =
            fs::temp_directory_path() / ("rapidllm-trace-errors-" + std::to_string(::getpid()));
        fs::remove_all(dir);
        fs::create_directories(dir);
        std::string prefix = (dir / "job").string();
        make(prefix);
        std::string text;
        try
        {
            ChakraTraceReader::ReadTraceSet(prefix);
        }
        catch (const TraceError& e)
        {
            text = e.what();
        }
        fs::remove_all(dir);
        return text;
    }

    static void
    Put(const std::string& path, const std::string& bytes)
    {
        std::ofstream(path, std::ios::binary) << bytes;
    }

    static TraceSet
    TwoRanks()
    {
        TraceSet set;
        set.groups.Add(1, {0, 1});
        for (uint32_t r = 0; r < 2; ++r)
        {
            ExecutionTrace t(r);
            uint32_t g = t.AddCompute("g", 10, 1, 1);
            t.AddCollective("ar", CollectiveType::ALL_REDUCE, 64, 1, {g});
            set.ranks.push_back(t);
        }
        return set;
    }

    void
    DoRun() override
    {
        std::string e = SetError([](const std::string& p) {});
        NS_TEST_ASSERT_MSG_EQ(Contains(e, "no trace files"), true, e);

        // A directory stands for the one set in it (what `rapid-llm trace --out=DIR` writes);
        // with none or several it says so, naming the candidates.
        {
            fs::path dir =
                fs::temp_directory_path() / ("rapidllm-trace-dir-" + std::to_string(::getpid()));
            fs::remove_all(dir);
            fs::create_directories(dir);
            auto errorOf = [&]()
            {
                try
                {
                    ChakraTraceReader::ReadTraceSet(dir.string());
                }
                catch (const TraceError& te)
                {
                    return std::string(te.what());
                }
                return std::string();
            };
            const std::string empty = errorOf();
            NS_TEST_EXPECT_MSG_EQ(Contains(empty, "without a trace set"), true, empty);
            ChakraTraceWriter::WriteTraceSet((dir / "trace").string(), TwoRanks());
            const TraceSet one = ChakraTraceReader::ReadTraceSet(dir.string());
            NS_TEST_EXPECT_MSG_EQ(one.ranks.size(), 2u, "the directory's set");
            NS_TEST_EXPECT_MSG_EQ(one.groups.Has(1), true, "with its groups");
            NS_TEST_EXPECT_MSG_EQ(
                one.groupsFile, (dir / "trace.comm_groups.json").string(), "the file read");
            // A rank file given for the set names the set's prefix.
            std::string file;
            try
            {
                ChakraTraceReader::ReadTraceSet((dir / "trace.1.et").string());
            }
            catch (const TraceError& te)
            {
                file = te.what();
            }
            NS_TEST_EXPECT_MSG_EQ(
                Contains(file,
                         "is a rank file: give its set's prefix, " + (dir / "trace").string()),
                true,
                file);
            // Another groups file (replay --comm-groups) stands in for a missing default one,
            // and the ranks' nodes are checked against it.
            const fs::path alt = dir / "alt-groups.json";
            fs::rename(dir / "trace.comm_groups.json", alt);
            const std::string none = errorOf();
            NS_TEST_EXPECT_MSG_EQ(Contains(none, "no groups are defined"), true, none);
            const TraceSet given = ChakraTraceReader::ReadTraceSet(dir.string(), alt.string());
            NS_TEST_EXPECT_MSG_EQ(given.groups.Has(1), true, "the given groups");
            NS_TEST_EXPECT_MSG_EQ(given.groupsFile, alt.string(), "the given file");
            CommGroups wide;
            wide.Add(1, {0, 5});
            std::ofstream(alt) << wide.ToJson();
            std::string beyond;
            try
            {
                ChakraTraceReader::ReadTraceSet(dir.string(), alt.string());
            }
            catch (const TraceError& te)
            {
                beyond = te.what();
            }
            NS_TEST_EXPECT_MSG_EQ(Contains(beyond, "names rank 5"), true, beyond);
            fs::rename(alt, dir / "trace.comm_groups.json");
            ChakraTraceWriter::WriteTraceSet((dir / "other").string(), TwoRanks());
            const std::string two = errorOf();
            NS_TEST_EXPECT_MSG_EQ((Contains(two, "several trace sets") && Contains(two, "other")
                                   && Contains(two, "trace")),
                                  true,
                                  two);
            fs::remove_all(dir);
        }

        e = SetError(
            [](const std::string& p)
            {
                ChakraTraceWriter::WriteTraceSet(p, TwoRanks());
                fs::rename(ChakraTraceWriter::RankFileName(p, 1),
                           ChakraTraceWriter::RankFileName(p, 2));
            });
        NS_TEST_ASSERT_MSG_EQ((Contains(e, "job.1.et") && Contains(e, "missing")), true, e);

        e = SetError(
            [](const std::string& p)
            {
                ChakraTraceWriter::WriteTraceSet(p, TwoRanks());
                fs::copy_file(ChakraTraceWriter::RankFileName(p, 1),
                              ChakraTraceWriter::RankFileName(p, 2));
            });
        NS_TEST_ASSERT_MSG_EQ(
            (Contains(e, "metadata says rank 1") || Contains(e, "metadata says world_size 2")),
            true,
            e);

        e = SetError(
            [](const std::string& p)
            {
                TraceSet set = TwoRanks();
                set.ranks[0].AddSend("s", 1, 3, 100);
                ChakraTraceWriter::WriteTraceSet(p, set);
            });
        NS_TEST_ASSERT_MSG_EQ((Contains(e, "1 send(s) from rank 0 to rank 1 (tag 3, 100 bytes)")
                               && Contains(e, "0 matching receive")),
                              true,
                              e);
        // It names the send's file and node (ids g 0, ar 1, s 2).
        NS_TEST_ASSERT_MSG_EQ((Contains(e, "job.0.et") && Contains(e, "node 2")), true, e);
        // A size edited on one side: the other side's sizes with that tag are named.
        e = SetError(
            [](const std::string& p)
            {
                TraceSet set = TwoRanks();
                set.ranks[0].AddSend("s", 1, 3, 100);
                set.ranks[1].AddRecv("r", 0, 3, 200);
                ChakraTraceWriter::WriteTraceSet(p, set);
            });
        NS_TEST_ASSERT_MSG_EQ(Contains(e, "the receives with that tag are of 200 bytes"), true, e);

        e = SetError(
            [](const std::string& p)
            {
                TraceSet set = TwoRanks();
                set.ranks[1].AddCollective("extra", CollectiveType::ALL_REDUCE, 64, 1);
                ChakraTraceWriter::WriteTraceSet(p, set);
            });
        NS_TEST_ASSERT_MSG_EQ(Contains(e,
                                       "collectives on group 1: rank 0 issues 1 but rank 1 "
                                       "issues 2"),
                              true,
                              e);

        e = SetError(
            [](const std::string& p)
            {
                ChakraTraceWriter::WriteTraceSet(p, TwoRanks());
                fs::remove(ChakraTraceWriter::CommGroupsFileName(p));
            });
        NS_TEST_ASSERT_MSG_EQ(Contains(e, "no groups are defined"), true, e);

        // CheckSet on a set built in memory names an undefined group too.
        TraceSet orphan = TwoRanks();
        orphan.groups = CommGroups();
        std::string text;
        try
        {
            ChakraTraceReader::CheckSet(orphan, "memory");
        }
        catch (const TraceError& err)
        {
            text = err.what();
        }
        NS_TEST_ASSERT_MSG_EQ(
            Contains(text, "name group 1, which the comm groups do not define"), true, text);

        const std::pair<const char*, const char*> badJson[] = {
            {"{\"1\": [0, 1], \"1\": [0]}", "defined twice"},
            {"{\"1\": [0, 0]}", "twice"},
            {"{\"a\": [0, 1]}", "group id"},
            {"{\"1\": [0, 7]}", "names rank 7"},
            {"{\"1\": [0, -1]}", "non-negative integer"},
            {"{\"1\": [0, 1]", "expected ',' or '}'"},
            {"[0, 1]", "expected a JSON object"},
            {"{\"1\": [0, 1]} x", "unexpected text"},
            {"{\"1\": []}", "empty"},
            {"{\"99999999999\": [0]}", "larger than"},
        };
        for (const auto& [json, expected] : badJson)
        {
            std::string text = json;
            e = SetError(
                [&text](const std::string& p)
                {
                    ChakraTraceWriter::WriteTraceSet(p, TwoRanks());
                    Put(ChakraTraceWriter::CommGroupsFileName(p), text);
                });
            NS_TEST_ASSERT_MSG_EQ((Contains(e, "job.comm_groups.json") && Contains(e, expected)),
                                  true,
                                  json << " -> " << e);
        }
    }
};

/**
 * \brief Random bytes and random mutations of a valid file (a fixed-seed generator, so the
 * test is repeatable) give a trace or a TraceError, never another exception or a crash.
 * test/fuzz/ has the coverage-guided version.
 */
class RandomBytesTestCase : public TestCase
{
  public:
    RandomBytesTestCase()
        : TestCase("random and mutated bytes give a trace or a TraceError")
    {}

  private:
    void
    DoRun() override
    {
        uint64_t state = 0x9E3779B97F4A7C15ull;
        auto next = [&state]()
        {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            return state;
        };
        std::string valid = ValidFile();
        std::string gz = ChakraTraceWriter::Gzip(valid);
        size_t loaded = 0;
        size_t rejected = 0;
        for (int i = 0; i < 3000; ++i)
        {
            std::string bytes;
            if (i % 3 == 0)
            {
                bytes.resize(next() % 64);
                for (char& c : bytes)
                {
                    c = static_cast<char>(next());
                }
            }
            else
            {
                bytes = i % 3 == 1 ? valid : gz;
                int flips = 1 + static_cast<int>(next() % 4);
                for (int f = 0; f < flips; ++f)
                {
                    bytes[next() % bytes.size()] = static_cast<char>(next());
                }
                if (next() % 4 == 0)
                {
                    bytes.resize(next() % bytes.size());
                }
            }
            std::string e = ErrorOf(bytes);
            (e.empty() ? loaded : rejected)++;
        }
        NS_TEST_ASSERT_MSG_EQ(loaded + rejected, 3000u, "every input handled");
        NS_TEST_ASSERT_MSG_GT(rejected, 1000u, "most damage is detected");
    }
};

/** \brief Damaged-trace tests. */
class TraceErrorsTestSuite : public TestSuite
{
  public:
    TraceErrorsTestSuite()
        : TestSuite("rapid-llm-trace-errors", UNIT)
    {
        AddTestCase(new FramingErrorsTestCase, TestCase::QUICK);
        AddTestCase(new GraphErrorsTestCase, TestCase::QUICK);
        AddTestCase(new CommErrorsTestCase, TestCase::QUICK);
        AddTestCase(new SetErrorsTestCase, TestCase::QUICK);
        AddTestCase(new InterruptedWriteTestCase, TestCase::QUICK);
        AddTestCase(new RandomBytesTestCase, TestCase::QUICK);
    }
};

static TraceErrorsTestSuite g_traceErrorsTestSuite; //!< registers the suite
