/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// libFuzzer target for the Chakra trace reader (opt-in: configure with clang++ and
// -DRAPIDLLM_FUZZ=ON, build the trace-reader-fuzz target, run it on a corpus directory).
//
// The first input byte picks what is fuzzed: even -> a rank's .et bytes (plain or gzip),
// odd -> a comm_groups.json text. Properties checked on every input:
//  - the reader either returns or throws TraceError (any other exception aborts the fuzzer,
//    and ASan/UBSan catch memory errors and undefined behaviour);
//  - whatever it accepts, the writer encodes, and reading that back gives the same graph
//    (and the same groups for JSON).

#include "ns3/chakra-trace-reader.h"
#include "ns3/chakra-trace-writer.h"
#include "ns3/comm-groups.h"
#include "ns3/trace-error.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

using namespace ns3::rapidllm;

namespace {

const CommGroups&
FuzzGroups()
{
    static const CommGroups groups = []()
    {
        CommGroups g;
        g.Add(1, {0, 1});
        g.Add(2, {0, 1, 2, 3});
        g.Add(7, {3, 0});
        return g;
    }();
    return groups;
}

[[noreturn]] void
Violation(const char* what)
{
    std::fprintf(stderr, "trace-reader-fuzz: property violated: %s\n", what);
    std::abort();
}

void
FuzzTrace(const std::string& bytes)
{
    ExecutionTrace trace;
    try
    {
        trace = ChakraTraceReader::DecodeRank(bytes, "fuzz.0.et", 0, &FuzzGroups(), 4);
    }
    catch (const TraceError&)
    {
        return;
    }
    // An accepted graph is a DAG the replayer can walk.
    if (trace.TopologicalOrder().size() != trace.GetNNodes())
    {
        Violation("accepted graph has no complete topological order");
    }
    trace.BuildChildIndex();
    for (bool gzip : {false, true})
    {
        std::string again = ChakraTraceWriter::EncodeRank(trace, 4, gzip);
        ExecutionTrace back =
            ChakraTraceReader::DecodeRank(again, "again.0.et", 0, &FuzzGroups(), 4);
        if (back != trace)
        {
            Violation("write(read(x)) read back differs");
        }
    }
}

void
FuzzGroupsJson(const std::string& text)
{
    CommGroups groups;
    try
    {
        groups = CommGroups::FromJson(text, "fuzz.comm_groups.json");
    }
    catch (const TraceError&)
    {
        return;
    }
    if (!(CommGroups::FromJson(groups.ToJson(), "again.json") == groups))
    {
        Violation("comm groups JSON round trip differs");
    }
}

} // namespace

extern "C" int
LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    if (size == 0)
    {
        return 0;
    }
    std::string payload(reinterpret_cast<const char*>(data + 1), size - 1);
    if (data[0] % 2 == 0)
    {
        FuzzTrace(payload);
    }
    else
    {
        FuzzGroupsJson(payload);
    }
    return 0;
}
