/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// rapid-llm trace-info: loads a Chakra trace set (<prefix>.<rank>.et + <prefix>.comm_groups.json)
// with the strict reader and summarizes each rank: node counts by type, total compute time, the
// longest chain of compute (a lower bound on the step time when communication is free), and the
// bytes each rank moves in collectives and point-to-point messages.

#include "cli-commands.h"
#include "ns3/chakra-trace-reader.h"
#include "ns3/chakra-trace-writer.h"
#include "ns3/collective-op.h"
#include "ns3/report-output.h"
#include "ns3/trace-error.h"

#include <algorithm>
#include <iomanip>
#include <iostream>
#include <map>
#include <sstream>

namespace ns3 {
namespace rapidllm {

namespace {

/// What trace-info reports for one rank. Times and bytes are summed in double: a trace's values
/// reach 2^63 each, so integer sums could wrap.
struct RankSummary
{
    uint64_t nodes = 0;
    uint64_t edges = 0;
    uint64_t comp = 0;
    uint64_t coll = 0;
    uint64_t send = 0;
    uint64_t recv = 0;
    uint64_t other = 0;
    double computeNs = 0;
    double computePathNs = 0;
    double collBytes = 0;
    double p2pBytes = 0;
};

RankSummary
Summarize(const ExecutionTrace& t)
{
    RankSummary s;
    s.nodes = t.GetNNodes();
    s.edges = t.GetNEdges();
    for (const auto& n : t.GetNodes())
    {
        switch (n.type)
        {
            case TraceNodeType::COMP:
                ++s.comp;
                s.computeNs += n.durationNs;
                break;
            case TraceNodeType::COMM_COLL:
                ++s.coll;
                s.collBytes += n.bytes;
                break;
            case TraceNodeType::COMM_SEND:
                ++s.send;
                s.p2pBytes += n.bytes;
                break;
            case TraceNodeType::COMM_RECV:
                ++s.recv;
                break;
            default:
                ++s.other;
        }
    }
    // Longest path where compute nodes take their duration and everything else takes no time.
    std::vector<double> finish(t.GetNNodes(), 0);
    for (uint32_t i : t.TopologicalOrder())
    {
        double start = 0;
        for (uint32_t d : t.GetDeps(i))
        {
            start = std::max(start, finish[d]);
        }
        const TraceNode& n = t.GetNode(i);
        finish[i] = start + (n.type == TraceNodeType::COMP ? double(n.durationNs) : 0.0);
        s.computePathNs = std::max(s.computePathNs, finish[i]);
    }
    return s;
}

/** \return \p x (a sum of whole numbers) without a fraction */
std::string
Whole(double x)
{
    std::ostringstream out;
    out << std::fixed << std::setprecision(0) << x;
    return out.str();
}

std::string
Bytes(double b)
{
    std::ostringstream out;
    out << std::fixed << std::setprecision(2);
    if (b >= double(1ull << 30))
    {
        out << b / double(1ull << 30) << " GiB";
    }
    else if (b >= double(1ull << 20))
    {
        out << b / double(1ull << 20) << " MiB";
    }
    else if (b >= double(1ull << 10))
    {
        out << b / double(1ull << 10) << " KiB";
    }
    else
    {
        out << std::setprecision(0) << b << " B";
    }
    return out.str();
}

/** Prints \p set's summary as text or CSV (--csv); \return 0 */
int
PrintSummary(const CliArgs& args, const std::string& prefix, const TraceSet& set)
{
    if (args.Flag("csv"))
    {
        // The per-rank table, in exact units (nanoseconds, bytes).
        std::cout << CsvLine({"rank",
                              "nodes",
                              "edges",
                              "comp",
                              "coll",
                              "send",
                              "recv",
                              "other",
                              "compute_ns",
                              "compute_path_ns",
                              "coll_bytes",
                              "send_bytes"});
        for (const auto& t : set.ranks)
        {
            const RankSummary s = Summarize(t);
            std::cout << CsvLine({std::to_string(t.GetRank()),
                                  std::to_string(s.nodes),
                                  std::to_string(s.edges),
                                  std::to_string(s.comp),
                                  std::to_string(s.coll),
                                  std::to_string(s.send),
                                  std::to_string(s.recv),
                                  std::to_string(s.other),
                                  Whole(s.computeNs),
                                  Whole(s.computePathNs),
                                  Whole(s.collBytes),
                                  Whole(s.p2pBytes)});
        }
        return 0;
    }
    std::cout << "Trace set " << prefix << ": " << set.ranks.size() << " ranks, "
              << set.groups.GetSize() << " communicator groups\n";
    std::cout << std::right << std::setw(6) << "rank" << std::setw(10) << "nodes" << std::setw(10)
              << "edges" << std::setw(9) << "comp" << std::setw(7) << "coll" << std::setw(7)
              << "send" << std::setw(7) << "recv" << std::setw(7) << "other" << std::setw(14)
              << "compute_ms" << std::setw(14) << "comp_path_ms" << std::setw(14) << "coll_bytes"
              << std::setw(14) << "send_bytes"
              << "\n";
    RankSummary total;
    std::map<std::string, std::pair<uint64_t, double>> byCollective; // count, bytes
    for (const auto& t : set.ranks)
    {
        RankSummary s = Summarize(t);
        std::cout << std::setw(6) << t.GetRank() << std::setw(10) << s.nodes << std::setw(10)
                  << s.edges << std::setw(9) << s.comp << std::setw(7) << s.coll << std::setw(7)
                  << s.send << std::setw(7) << s.recv << std::setw(7) << s.other << std::fixed
                  << std::setprecision(3) << std::setw(14) << s.computeNs / 1e6 << std::setw(14)
                  << s.computePathNs / 1e6 << std::setw(14) << Bytes(s.collBytes) << std::setw(14)
                  << Bytes(s.p2pBytes) << "\n";
        total.nodes += s.nodes;
        total.edges += s.edges;
        total.computeNs += s.computeNs;
        total.collBytes += s.collBytes;
        total.p2pBytes += s.p2pBytes;
        total.computePathNs = std::max(total.computePathNs, s.computePathNs);
        for (const auto& n : t.GetNodes())
        {
            if (n.type == TraceNodeType::COMM_COLL)
            {
                auto& entry = byCollective[ToString(n.commType)];
                ++entry.first;
                entry.second += double(n.bytes);
            }
        }
    }
    std::cout << "total: " << total.nodes << " nodes, " << total.edges << " edges, compute "
              << std::setprecision(3) << total.computeNs / 1e6 << " ms (longest rank chain "
              << total.computePathNs / 1e6 << " ms), collectives " << Bytes(total.collBytes)
              << ", point-to-point " << Bytes(total.p2pBytes) << "\n";
    for (const auto& [name, entry] : byCollective)
    {
        std::cout << "  " << std::left << std::setw(22) << name << std::right << std::setw(10)
                  << entry.first << " nodes " << std::setw(14) << Bytes(entry.second) << "\n";
    }
    return 0;
}

} // namespace

int
RunTraceInfoCommand(const CliArgs& args)
{
    const std::string prefix = args.Text("trace");
    // Each file checked as replay checks it; the set's agreement across ranks after the summary,
    // so that a set replay refuses can still be looked at.
    TraceSet set = ChakraTraceReader::ReadTraceSet(prefix, "", false);
    const int status = PrintSummary(args, prefix, set);
    std::cout.flush();
    // A mismatch is the command's error (exit 2), after the summary.
    ChakraTraceReader::CheckSet(set, set.prefix); // a folder's files named as they are
    // What replay would refuse once it got there: a collective type it cannot run (GATHER,
    // SCATTER are Chakra's, not replay's).
    for (const ExecutionTrace& rank : set.ranks)
    {
        for (const TraceNode& n : rank.GetNodes())
        {
            CollectiveOp op;
            if (n.type == TraceNodeType::COMM_COLL && !ToCollectiveOp(n.commType, op))
            {
                throw TraceError(ChakraTraceWriter::RankFileName(set.prefix, rank.GetRank()),
                                 rank.GetRank(),
                                 static_cast<int64_t>(n.id),
                                 UnreplayableCollective(n.commType));
            }
        }
    }
    return status;
}

static CliCommandRegistrar g_traceInfoCommand(
    "trace-info",
    "summarize a Chakra execution-trace set",
    "Loads a Chakra execution-trace set (<prefix>.<rank>.et and <prefix>.comm_groups.json), checks "
    "each file's structure, prints per-rank node counts, compute time and communication bytes, "
    "then checks that the ranks agree (sends and receives pair up, a group's members issue as "
    "many collectives): a set that fails that is still summarized, and the command exits 2 "
    "naming the mismatch, as replay would refuse it.",
    RunTraceInfoCommand);

} // namespace rapidllm
} // namespace ns3
