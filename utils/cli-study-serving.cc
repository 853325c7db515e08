/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// rapid-llm study serving: every replica layout and batch size of an inference job on a budget
// of GPUs (helper/serving-study.*), ranked by throughput per GPU within latency targets, with
// its CSV, JSON and PNG outputs. The layouts run on worker processes (one ns-3 simulator each).

#include "cli-commands.h"
#include "cli-interrupt.h"
#include "cli-job-options.h"
#include "cli-ns3-checks.h"
#include "ns3/job-echo.h"
#include "ns3/progress-line.h"
#include "ns3/report-output.h"
#include "ns3/serving-study.h"
#include "ns3/spec-error.h"
#include "ns3/staged-output-dir.h"
#include "ns3/worker-pool.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>

namespace ns3 {
namespace rapidllm {

namespace {

/** \return "TPOT <= 50 ms and TTFT <= 2000 ms", or "" without targets */
std::string
TargetsText(const ServingSpace& space)
{
    std::string text;
    char buffer[64];
    if (space.tpotSloS > 0)
    {
        std::snprintf(buffer, sizeof(buffer), "TPOT <= %g ms", space.tpotSloS * 1e3);
        text = buffer;
    }
    if (space.ttftSloS > 0)
    {
        std::snprintf(buffer, sizeof(buffer), "TTFT <= %g ms", space.ttftSloS * 1e3);
        text += (text.empty() ? "" : " and ") + std::string(buffer);
    }
    return text;
}

/** \return "bf16, fp8 or int4": \p names as alternatives */
std::string
AlternativesText(const std::vector<std::string>& names)
{
    std::string text;
    for (std::size_t i = 0; i < names.size(); ++i)
    {
        text += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
    }
    return text;
}

/** Appends \p name to \p names unless it is there (the names in the order first met). */
void
AddOnce(std::vector<std::string>& names, const std::string& name)
{
    if (std::find(names.begin(), names.end(), name) == names.end())
    {
        names.push_back(name);
    }
}

/** \return a row's energy per token, J, or "-" when unknown */
std::string
EnergyText(const ServingRow& r)
{
    char energy[32] = "-";
    if (r.haveEnergy)
    {
        std::snprintf(energy, sizeof(energy), "%.3f", r.energyPerTokenJ);
    }
    return energy;
}

/**
 * The table's columns of what the study varies besides the layout and batch: the hardware and
 * the precision, each shown where the study tries more than one.
 */
struct VariantColumns
{
    std::size_t hardware = 0; //!< the hardware column's width (0: not shown)
    bool engine = false;      //!< whether the engine column is shown
    bool precision = false;   //!< whether the precision column is shown

    /**
     * \return the row's cells, each with its space ("h100-sxm-80gb bf16/fp8   "; the headings
     * with \p r null)
     */
    std::string
    Cells(const ServingRow* r) const
    {
        return (hardware > 0 ? TableCell(r ? r->hardware : "hardware", hardware) : "")
               + (engine ? TableCell(r ? r->engine : "engine", 8) : "")
               + (precision ? TableCell(r ? r->Precision() : "weights/KV", 10) : "");
    }
};

/**
 * Prints a row that does not fit, with its reason, under a heading before the first
 * (\p index 0); \p gpu names the GPUs its peak is of, \p variant the columns of its variant.
 */
void
PrintUnfitRow(const ServingRow& r, uint64_t index, const char* gpu, const VariantColumns& variant)
{
    if (index == 0)
    {
        std::printf("does not fit (lowest peak first):\n");
    }
    std::printf("%4s %stp%u pp%u batch %u: %.2f GiB per %s; %s\n",
                "-",
                variant.Cells(&r).c_str(),
                r.tp,
                r.pp,
                r.batch,
                ToGib(r.peakBytes),
                gpu,
                r.reason.c_str());
}

/**
 * Prints the ranked table of a disaggregated study (--top fitting rows): each decode layout and
 * batch with its prefill instances, then the rows that do not fit with their reason.
 */
void
PrintDisaggregatedTable(const std::vector<ServingRow>& rows,
                        uint64_t shown,
                        bool targets,
                        const VariantColumns& variant)
{
    std::printf("%4s %s%9s %6s %9s %7s %4s %5s %9s %8s %7s %10s %10s %8s %8s %9s %4s %3s\n",
                "rank",
                variant.Cells(nullptr).c_str(),
                "decode",
                "x_dec",
                "prefill",
                "x_pre",
                "GPUs",
                "batch",
                "TTFT_ms",
                "TPOT_ms",
                "KV_ms",
                "request_s",
                "tok/s/GPU",
                "req/s",
                "J/token",
                "peak_GiB",
                "slo",
                "pf");
    uint64_t rank = 0;
    uint64_t unfit = 0;
    for (const auto& r : rows)
    {
        if (r.fits && (shown == 0 || rank < shown))
        {
            const std::string decode = "tp" + std::to_string(r.tp) + " pp" + std::to_string(r.pp);
            const std::string prefill =
                "tp" + std::to_string(r.prefillTp) + " pp" + std::to_string(r.prefillPp);
            std::printf(
                "%4llu %s%9s %6u %9s %7u %4u %5u %9.2f %8.2f %7.3f %10.3f %10.1f %8.2f %8s %9.2f "
                "%4s %3s\n",
                static_cast<unsigned long long>(++rank),
                variant.Cells(&r).c_str(),
                decode.c_str(),
                r.replicas,
                prefill.c_str(),
                r.prefillInstances,
                r.gpusUsed,
                r.batch,
                r.ttftS * 1e3,
                r.tpotS * 1e3,
                r.kvTransferS * 1e3,
                r.requestS,
                r.tokensPerSPerGpu,
                r.requestsPerS,
                EnergyText(r).c_str(),
                ToGib(r.peakBytes),
                targets ? (r.meetsSlo ? "yes" : "no") : "-",
                r.frontier ? "*" : "");
        }
        else if (!r.fits && (shown == 0 || unfit < shown))
        {
            PrintUnfitRow(r, unfit++, "decode GPU", variant);
        }
    }
}

/** Prints the ranked table (--top rows of each kind: fitting, not fitting). */
void
PrintTable(const std::vector<ServingRow>& rows,
           uint64_t shown,
           bool targets,
           const VariantColumns& variant)
{
    std::printf("%4s %s%3s %3s %3s %8s %5s %10s %9s %10s %11s %9s %8s %9s %4s %3s\n",
                "rank",
                variant.Cells(nullptr).c_str(),
                "tp",
                "pp",
                "dp",
                "replicas",
                "batch",
                "TTFT_ms",
                "TPOT_ms",
                "request_s",
                "tok/s/GPU",
                "req/s",
                "J/token",
                "peak_GiB",
                "slo",
                "pf");
    uint64_t rank = 0;
    uint64_t unfit = 0;
    for (const auto& r : rows)
    {
        const double gib = ToGib(r.peakBytes);
        if (r.fits)
        {
            if (shown > 0 && rank >= shown)
            {
                continue;
            }
            std::printf(
                "%4llu %s%3u %3u %3u %8u %5u %10.2f %9.2f %10.3f %11.1f %9.2f %8s %9.2f %4s %3s\n",
                static_cast<unsigned long long>(++rank),
                variant.Cells(&r).c_str(),
                r.tp,
                r.pp,
                r.dp,
                r.replicas,
                r.batch,
                r.ttftS * 1e3,
                r.tpotS * 1e3,
                r.requestS,
                r.tokensPerSPerGpu,
                r.requestsPerS,
                EnergyText(r).c_str(),
                gib,
                targets ? (r.meetsSlo ? "yes" : "no") : "-",
                r.frontier ? "*" : "");
            continue;
        }
        if (shown > 0 && unfit >= shown)
        {
            continue;
        }
        if (unfit++ == 0)
        {
            std::printf("does not fit (lowest peak first):\n");
        }
        // Its reason after the row: the GPU's memory, or what else rules it out (a token
        // budget too small for a prefill) that the peak alone would not say.
        std::printf("%4s %s%3u %3u %3u %8u %5u %10s %9s %10s %11s %9s %8s %9.2f %4s %3s  %s\n",
                    "-",
                    variant.Cells(&r).c_str(),
                    r.tp,
                    r.pp,
                    r.dp,
                    r.replicas,
                    r.batch,
                    "-",
                    "-",
                    "-",
                    "-",
                    "-",
                    "-",
                    gib,
                    "-",
                    "",
                    r.reason.c_str());
    }
}

/**
 * Prints the ranked table of a study under a rate (--top rows of each kind): each layout (with
 * its prefill instances when disaggregated) and batch, its utilization, latency percentiles and
 * target attainment, then the rows that do not fit with their reason.
 */
void
PrintLoadTable(const std::vector<ServingRow>& rows,
               uint64_t shown,
               bool targets,
               const VariantColumns& variant)
{
    // The layout column as wide as the longest plan shown (disaggregated plans name both kinds).
    int width = 22;
    uint64_t fitting = 0;
    for (const auto& r : rows)
    {
        if (r.fits && (shown == 0 || fitting++ < shown))
        {
            width = std::max(width, static_cast<int>(ServingPlanName(r).size()));
        }
    }
    std::printf("%4s %s%-*s %5s %5s %7s %9s %5s %9s %9s %9s %8s %8s %8s %7s %8s %4s\n",
                "rank",
                variant.Cells(nullptr).c_str(),
                width,
                "layout",
                "GPUs",
                "batch",
                "req/s",
                "tok/s/GPU",
                "util",
                "TTFT_p50",
                "TTFT_p90",
                "TTFT_p99",
                "TPOT_p50",
                "TPOT_p90",
                "TPOT_p99",
                "attain",
                "J/token",
                "slo");
    uint64_t rank = 0;
    uint64_t unfit = 0;
    for (const auto& r : rows)
    {
        if (r.fits && (shown == 0 || rank < shown))
        {
            const std::string layout = ServingPlanName(r);
            const ServingLoad& l = r.load;
            const QueueSummary& q = l.summary;
            char util[16];
            // Past 10x the capacity the figure says no more than its sign.
            std::snprintf(util, sizeof(util), "%.0f%%", std::min(l.utilization, 9.99) * 100);
            if (l.utilization >= 10)
            {
                std::snprintf(util, sizeof(util), ">999%%");
            }
            if (l.overloaded)
            {
                std::printf("%4llu %s%-*s %5llu %5u %7.2f %9.1f %5s %s\n",
                            static_cast<unsigned long long>(++rank),
                            variant.Cells(&r).c_str(),
                            width,
                            layout.c_str(),
                            static_cast<unsigned long long>(ServingRowGpus(r)),
                            r.batch,
                            l.goodputRps >= 0 ? l.goodputRps : l.rateRps,
                            l.tokensPerSPerGpu,
                            util,
                            "over capacity: the queue grows without end");
                continue;
            }
            char energy[32] = "-";
            if (l.haveEnergy)
            {
                std::snprintf(energy, sizeof(energy), "%.3f", l.energyPerTokenJ);
            }
            char attained[16] = "-";
            if (targets)
            {
                std::snprintf(attained, sizeof(attained), "%.1f%%", q.attainment * 100);
            }
            std::printf("%4llu %s%-*s %5llu %5u %7.2f %9.1f %5s %9.1f %9.1f %9.1f %8.2f %8.2f "
                        "%8.2f %7s %8s "
                        "%4s\n",
                        static_cast<unsigned long long>(++rank),
                        variant.Cells(&r).c_str(),
                        width,
                        layout.c_str(),
                        static_cast<unsigned long long>(ServingRowGpus(r)),
                        r.batch,
                        l.goodputRps >= 0 ? l.goodputRps : l.rateRps,
                        l.tokensPerSPerGpu,
                        l.goodputRps == 0 ? "-" : util,
                        q.ttftP50S * 1e3,
                        q.ttftP90S * 1e3,
                        q.ttftP99S * 1e3,
                        q.tpotP50S * 1e3,
                        q.tpotP90S * 1e3,
                        q.tpotP99S * 1e3,
                        attained,
                        energy,
                        targets ? (r.meetsSlo ? "yes" : "no") : "-");
        }
        else if (!r.fits && (shown == 0 || unfit < shown))
        {
            PrintUnfitRow(r, unfit++, "GPU", variant);
        }
    }
}

/**
 * Prints which ranked rows run a batch beyond their KV cache (ServingRow::kvWhole): the engine
 * admits on the tokens held, so their closed-loop figures come from a saturated queue.
 */
void
PrintKvLimited(const std::vector<ServingRow>& rows, uint64_t shown)
{
    std::string listed;
    uint64_t rank = 0;
    for (const auto& r : rows)
    {
        if (!r.fits || (shown > 0 && rank >= shown))
        {
            continue;
        }
        ++rank;
        if (r.kvWhole > 0)
        {
            char inFlight[32];
            std::snprintf(inFlight, sizeof(inFlight), "%.1f", r.kvInFlight);
            listed += (listed.empty() ? "" : ", ") + std::string("rank ") + std::to_string(rank)
                      + " (" + std::to_string(r.kvWhole) + " whole, " + inFlight + " in flight)";
        }
    }
    if (!listed.empty())
    {
        std::printf("Beyond the KV cache, which holds fewer requests whole than the batch: %s; "
                    "the engine admits a request while its prompt fits beside the tokens held and "
                    "preempts when the cache fills, so these run with fewer in flight (their "
                    "closed-loop figures from a queue that never empties, their peak the "
                    "whole memory)\n",
                    listed.c_str());
    }
}

/**
 * Prints, where the study tries several machines or precisions, each one's first-ranked row:
 * the answer to "which machine, which precision" without reading the whole table.
 */
void
PrintBestByVariant(const std::vector<ServingRow>& rows,
                   const std::vector<ServingVariant>& variants,
                   const VariantColumns& columns,
                   bool targets)
{
    std::printf("Best of each%s:\n",
                targets ? " within the targets (else the best that fits)" : "");
    for (const ServingVariant& v : variants)
    {
        if (!v.ruledOut.empty())
        {
            continue; // noted on stderr
        }
        // The rows are ranked: a variant's first one is its best.
        const auto best = std::find_if(rows.begin(),
                                       rows.end(),
                                       [&v](const ServingRow& r)
                                       {
                                           return r.hardware == v.hardware && r.engine == v.engine
                                                  && r.dtype == v.dtype
                                                  && r.kvCacheDtype == v.kvCacheDtype;
                                       });
        ServingRow named;
        named.hardware = v.hardware;
        named.engine = v.engine;
        named.dtype = v.dtype;
        named.kvCacheDtype = v.kvCacheDtype;
        std::printf("  %s", columns.Cells(&named).c_str());
        if (best == rows.end() || !best->fits)
        {
            std::printf("no layout fits\n");
            continue;
        }
        const ServingRow& r = *best;
        // With --goodput the rows rank by it, else by capacity (with --size by the GPUs taken).
        const bool goodput = r.loaded && r.load.goodputRps >= 0;
        const std::string tpot =
            r.loaded ? "" : ", TPOT " + FormatNumber(std::round(r.tpotS * 1e4) / 10) + " ms";
        // Under a rate the table's delivered figure, the capacity beside it (they differed
        // unsaid: 106.7 in the table, 215.7 here).
        char capacity[64];
        std::snprintf(
            capacity, sizeof(capacity), " at the rate (capacity %.1f)", r.tokensPerSPerGpu);
        std::printf("%s (%llu GPUs), batch %u: %.1f tokens/s per GPU%s%s%s\n",
                    ServingPlanName(r).c_str(),
                    static_cast<unsigned long long>(ServingRowGpus(r)),
                    r.batch,
                    r.loaded ? r.load.tokensPerSPerGpu : r.tokensPerSPerGpu,
                    goodput    ? " at its goodput"
                    : r.loaded ? capacity
                               : "",
                    tpot.c_str(),
                    targets && !r.meetsSlo ? " (misses the targets)" : "");
    }
}

} // namespace

int
RunStudyServingCommand(const CliArgs& args)
{
    if (args.HasValue("out"))
    {
        RefuseSweepFolder(args.Text("out"), "study serving");
    }
    JobOptions options = ReadJobOptionValues(args);
    ServingSpace space;
    space.gpus = static_cast<uint32_t>(args.Count("gpus"));
    space.tp = args.Counts32("tp");
    space.pp = args.Counts32("pp");
    space.dp = args.Counts32("dp");
    space.batch = args.Counts32("batch");
    // The hardware and precisions: the lists given, else the job's.
    if (args.Has("hardware"))
    {
        space.hardware = args.Choices("hardware");
    }
    if (args.Has("engine"))
    {
        space.engines = args.Choices("engine");
    }
    if (args.Has("dtype"))
    {
        space.dtypes = args.Choices("dtype");
    }
    if (args.Has("kv-cache-dtype"))
    {
        space.kvCacheDtypes = args.Choices("kv-cache-dtype");
    }
    space.batching = ParseBatching(args.Text("batching"));
    space.tpotSloS = args.Real("tpot-slo") * 1e-3;
    space.ttftSloS = args.Real("ttft-slo") * 1e-3;
    space.tokenBudget = static_cast<uint32_t>(args.Count("token-budget"));
    space.rateRps = args.Real("rate");
    space.requests = static_cast<uint32_t>(args.Count("requests"));
    space.attainment = args.Real("attainment") / 100;
    space.seed = args.Count("seed");
    space.goodput = args.Flag("goodput");
    space.size = args.Flag("size");
    if (!args.Has("tp"))
    {
        // The default degrees that could hold a replica of these GPUs (on one GPU, tp 2, 4
        // and 8 filled the output with notes about layouts nobody asked for).
        std::vector<uint32_t> fitting;
        for (uint32_t tp : space.tp)
        {
            if (tp <= space.gpus && (space.size || space.gpus % tp == 0))
            {
                fitting.push_back(tp);
            }
        }
        space.tp = fitting.empty() ? space.tp : fitting;
    }
    space.spread = args.Real("spread");
    space.burstiness = args.Real("burstiness");
    space.prefixHit = args.Real("prefix-hit") / 100;
    space.prefixes = static_cast<uint32_t>(args.Count("prefixes"));
    space.prefixSkew = args.Real("prefix-skew");
    space.batchDelayS = args.Real("batch-delay") * 1e-3;
    {
        const std::vector<std::string> routers = RouterNames();
        space.router = static_cast<QueueRouter>(
            std::find(routers.begin(), routers.end(), args.Text("router")) - routers.begin());
    }
    const std::string traceFile = args.Text("arrivals");
    if (!traceFile.empty())
    {
        for (const char* name : {"seed", "burstiness", "spread"})
        {
            if (args.Has(name))
            {
                throw SpecError(kCommandLine,
                                name,
                                std::string("--") + name
                                    + " shapes drawn arrivals, and --arrivals replays recorded "
                                      "ones: give one or the other");
            }
        }
        space.trace = ReadArrivalTrace(traceFile);
        std::vector<QueueRequest>& recorded = space.trace.requests;
        if (args.Has("requests"))
        {
            // The trace's first ones.
            if (space.requests < 2 || space.requests > recorded.size())
            {
                throw SpecError(kCommandLine,
                                "requests",
                                "--requests takes the first of the trace's "
                                    + std::to_string(recorded.size()) + " requests (allowed: 2 to "
                                    + std::to_string(recorded.size()) + ")");
            }
            recorded.resize(space.requests);
            if (!(recorded.back().arrivalS > 0))
            {
                throw SpecError(kCommandLine,
                                "requests",
                                "the trace's first " + std::to_string(space.requests)
                                    + " requests all arrive at one time: take more");
            }
        }
        space.requests = static_cast<uint32_t>(recorded.size());
        if (space.trace.HasLengths())
        {
            if (std::none_of(space.trace.requests.begin(),
                             space.trace.requests.end(),
                             [](const QueueRequest& q)
                             {
                                 return q.generated > 1;
                             }))
            {
                // As --gen=1 is refused (ServingStudy): one token each has no time between
                // tokens to rank or target, and the requests simulated are the trace's.
                throw SpecError(kCommandLine,
                                "arrivals",
                                "every request of the trace (" + traceFile
                                    + ") generates one token: no time between tokens to rank "
                                      "(allowed: a generated column with at least one request "
                                      "of 2 tokens or more; a prefill-only job is `run`'s)");
            }
            // The curves are replayed at the job's lengths (and cached prefix): the trace's
            // means unless given.
            if (!args.Has("prompt"))
            {
                options.Set("prompt", std::to_string(std::llround(space.trace.MeanPrompt())));
            }
            if (space.trace.hasCached && !args.Has("cached-prefix"))
            {
                // (Below a prompt given shorter than the trace's.)
                const long long prompt = std::stoll(options.Get("prompt"));
                options.Set("cached-prefix",
                            std::to_string(std::min<long long>(
                                std::llround(space.trace.MeanCached()), prompt - 1)));
            }
            if (!args.Has("gen"))
            {
                options.Set("gen",
                            std::to_string(
                                std::max<long long>(2, std::llround(space.trace.MeanGenerated()))));
            }
        }
        if (space.rateRps <= 0 && !space.goodput)
        {
            space.rateRps = space.trace.RateRps();
        }
    }
    // The arrival options mean nothing in a closed loop: given there, they are a mistake to
    // name, not to ignore (ServingStudy does the same for the token budget).
    for (const char* name : {"requests", "attainment", "seed", "spread", "burstiness"})
    {
        if (args.Has(name) && space.rateRps <= 0 && !space.goodput)
        {
            throw SpecError(kCommandLine,
                            name,
                            std::string("--") + name
                                + " sets the open-loop arrivals: give --rate or --goodput too");
        }
    }
    // The lists and the budget are the study's (each candidate sets its own tp, pp, batch and
    // GPUs); the backend and routing the command line's, else the defaults.
    std::string backend;
    std::string routing;
    JobBackendAndRouting(args, ResolvedJob(), backend, routing);
    RefusePacketCaptures(args.Text("packet"), "a serving study runs a network per layout");
    const ServingStudy study(options, space, backend, routing, args.Flag("symmetry"));
    // A target below a millisecond is no GPU's: most likely seconds given for milliseconds.
    for (const char* slo : {"tpot-slo", "ttft-slo"})
    {
        const double ms = args.Real(slo);
        if (ms > 0 && ms < 1)
        {
            std::cerr << "rapid-llm study serving: note: --" << slo << "=" << args.Text(slo)
                      << " is in milliseconds (" << FormatNumber(ms * 1e3, 4)
                      << " us); a target of " << args.Text(slo) << " s is --" << slo << "="
                      << FormatNumber(ms * 1e3, 6) << "\n";
        }
    }
    // A percent of 1 or less is most likely a fraction given for a percent (0.9 for 90%).
    for (const char* percent : {"attainment", "prefix-hit"})
    {
        const double value = args.Real(percent);
        if (args.Has(percent) && value > 0 && value <= 1)
        {
            std::cerr << "rapid-llm study serving: note: --" << percent << "=" << args.Text(percent)
                      << " is a percent: " << FormatNumber(value, 6) << "% of the requests; "
                      << FormatNumber(value * 100, 6) << "% is --" << percent << "="
                      << FormatNumber(value * 100, 6) << "\n";
        }
    }
    std::set<std::string> noted; // once per hardware and type (a KV cache list repeats them)
    for (const ServingVariant& v : study.Variants())
    {
        if (!v.ruledOut.empty() && noted.insert(v.ruledOut).second)
        {
            std::fprintf(stderr,
                         "rapid-llm study serving: note: %s; its %s rows are not tried\n",
                         v.ruledOut.c_str(),
                         v.dtype.c_str());
        }
    }
    // The layouts and batches ruled out, each reason once (a variant's is noted above).
    for (const ServingSkip& s : study.GetSkips())
    {
        if (noted.insert(s.reason).second)
        {
            std::fprintf(stderr,
                         "rapid-llm study serving: note: %s; %u %s not tried\n",
                         s.reason.c_str(),
                         s.count,
                         s.count == 1 ? "layout and batch" : "layouts and batches");
        }
    }
    if (space.trace.requests.empty())
    {
        NoteJob(args, study.FirstJob());
    }
    else
    {
        const ModelSpec& model = study.FirstJob().model;
        const auto longer =
            std::count_if(space.trace.requests.begin(),
                          space.trace.requests.end(),
                          [&model](const QueueRequest& r)
                          {
                              return uint64_t(r.prompt) + r.generated > model.maxSequence;
                          });
        if (longer > 0 && model.maxSequence > 0)
        {
            std::fprintf(stderr,
                         "rapid-llm study serving: note: %ld of the trace's %zu requests are "
                         "longer than %s's %u-token "
                         "context; they are simulated as recorded\n",
                         static_cast<long>(longer),
                         space.trace.requests.size(),
                         model.name.c_str(),
                         model.maxSequence);
        }
    }

    const uint64_t workers =
        args.Count("workers") > 0 ? args.Count("workers") : WorkerPool::Processors();
    // A worker evaluates every batch of a layout (the candidates come variant, tp, pp, dp,
    // then batch):
    // they share their curves' replays, which the study remembers; with more workers than
    // layouts, each batch on its own.
    const std::vector<JobOptions>& candidates = study.Candidates();
    auto sameLayout = [&space](const JobOptions& a, const JobOptions& b)
    {
        for (const auto& [name, list] : space.VariantLists())
        {
            if (a.Get(name) != b.Get(name))
            {
                return false;
            }
        }
        return a.Get("tp") == b.Get("tp") && a.Get("pp") == b.Get("pp")
               && a.Get("dp") == b.Get("dp");
    };
    std::vector<std::vector<uint64_t>> layouts;
    for (uint64_t i = 0; i < candidates.size(); ++i)
    {
        if (layouts.empty() || !sameLayout(candidates[layouts.back().front()], candidates[i]))
        {
            layouts.emplace_back();
        }
        layouts.back().push_back(i);
    }
    if (layouts.size() < workers)
    {
        layouts.clear();
        for (uint64_t i = 0; i < candidates.size(); ++i)
        {
            layouts.push_back({i});
        }
    }
    std::vector<uint64_t> items;
    for (uint64_t g = 0; g < layouts.size(); ++g)
    {
        items.push_back(g);
    }
    const bool terminal = ProgressLine::StderrIsTerminal();
    ProgressLine progress(args.Has("progress") ? args.Flag("progress") : terminal, terminal);
    // "study serving: 7/112 layouts and batches (6.3%), 2.10/s, ETA 50 s, 2 workers"
    auto progressText = [&](const char* what, std::size_t done, std::size_t total, double since = 0)
    {
        const double elapsed = progress.Elapsed() - since;
        const double rate = elapsed > 0 ? done / elapsed : 0;
        char line[192];
        std::snprintf(line,
                      sizeof(line),
                      "study serving: %zu/%zu %s (%.1f%%), %.2f/s, ETA %s, %llu workers",
                      done,
                      total,
                      what,
                      total > 0 ? 100.0 * done / total : 100.0,
                      rate,
                      rate > 0 ? ProgressLine::Duration((total - done) / rate).c_str() : "?",
                      static_cast<unsigned long long>(workers));
        return std::string(line);
    };
    std::vector<ServingRow> rows;
    // Until every row is in, an interrupt ends the study at once (its workers with it).
    auto interrupt = std::make_unique<InterruptExit>(
        "rapid-llm study serving: interrupted; nothing written (the study writes its files once "
        "every row has run)");
    WorkerPool pool(static_cast<uint32_t>(workers));
    // Every row comes back as JSON text, in one worker or many: the same bytes either way.
    pool.Run(
        items,
        [&](uint64_t g)
        {
            Json evaluated = Json::array();
            for (uint64_t i : layouts[g])
            {
                try
                {
                    evaluated.push_back(study.Evaluate(i).ToJson());
                }
                catch (const Error& e)
                {
                    const JobOptions& c = candidates[i];
                    std::string varied; // the hardware and types, where the study lists them
                    for (const auto& [name, list] : space.VariantLists())
                    {
                        if (!list->empty())
                        {
                            varied += name + " " + c.Get(name) + ", ";
                        }
                    }
                    throw Error(varied + "tp " + c.Get("tp") + ", pp " + c.Get("pp") + ", dp "
                                + c.Get("dp") + ", batch " + c.Get("batch") + ": " + e.what());
                }
            }
            return DumpJson(evaluated);
        },
        [&](uint64_t g, const std::string& text)
        {
            const Json evaluated = Json::parse(text);
            if (evaluated.size() != layouts[g].size())
            {
                throw std::runtime_error("a worker returned another layout's rows");
            }
            for (std::size_t k = 0; k < evaluated.size(); ++k)
            {
                ServingRow r = ServingRow::FromJson(evaluated[k]);
                if (r.layout != layouts[g][k])
                {
                    throw std::runtime_error("a worker returned the row of another layout");
                }
                rows.push_back(r);
            }
            progress.Show(progressText("layouts and batches", rows.size(), candidates.size()),
                          rows.size() == candidates.size());
        });
    study.Pair(rows);
    // Under a rate each fitting row's engine is simulated (at several rates for --goodput):
    // its own phase, with its own rate and ETA.
    const double loadStart = progress.Elapsed();
    study.Load(rows,
               [&](std::size_t done, std::size_t total)
               {
                   progress.Show(
                       progressText("rows simulated at their rates", done, total, loadStart),
                       done == total);
               });
    progress.Finish();
    interrupt.reset();
    RankServingRows(rows, space);
    // A run of few requests a replica near capacity ends before its queues and batches fill:
    // its figures are a light load's (a warning, not a model figure). A recorded trace is the
    // load asked for, however short.
    uint32_t steady = 0; // the most any such row needs
    const auto shortRuns =
        !space.trace.requests.empty()
            ? 0
            : std::count_if(rows.begin(),
                            rows.end(),
                            [&](const ServingRow& r)
                            {
                                const bool shortRun = r.loaded && !r.load.overloaded
                                                      && r.load.utilization >= 0.9
                                                      && r.load.requests < SteadyRequests(r);
                                steady = shortRun ? std::max(steady, SteadyRequests(r)) : steady;
                                return shortRun;
                            });
    if (space.requests > 0 && space.requests < 100 && (space.rateRps > 0 || space.goodput))
    {
        // A percentile of a few requests is one of them: p99 of 10 is the largest.
        const bool traced = !space.trace.requests.empty();
        std::fprintf(stderr,
                     "rapid-llm study serving: note: %s%u%s: the latency percentiles and the "
                     "attainment are of %u request%s (a p99 of fewer than 100 is the largest); "
                     "%s\n",
                     traced && !args.Has("requests") ? "the arrivals trace holds " : "--requests=",
                     space.requests,
                     traced && !args.Has("requests") ? " requests" : "",
                     space.requests,
                     space.requests == 1 ? "" : "s",
                     traced ? "a longer trace gives steadier ones"
                            : "the default (0) runs each layout's steady state");
    }
    if (shortRuns > 0)
    {
        std::fprintf(stderr,
                     "rapid-llm study serving: note: %ld rows run at 90%% or more of their "
                     "capacity on fewer requests "
                     "than ten turns of their slots; a run this short can end before their "
                     "queues and batches fill, so their latencies may be a lighter load's "
                     "(--requests=%u shows the long run)\n",
                     static_cast<long>(shortRuns),
                     steady);
    }
    // How many requests each row's run simulates, for the headers.
    const std::string simulated =
        space.requests > 0 ? std::to_string(space.requests) + " simulated"
                           : "each layout's run ten turns of its slots, 1000 to 50000 requests";

    const Json json = ServingStudyJson(study, space, rows, backend, routing, args.Text("packet"));
    const ResolvedJob first = study.FirstJob();
    std::vector<std::string> gpus; // the hardware's GPUs, each once
    for (const ResolvedJob& job : study.HardwareJobs())
    {
        AddOnce(gpus, job.hardware.GpuLabel());
    }
    const bool machines = study.HardwareJobs().size() > 1;
    const std::string title = first.model.name + " serving on " + std::to_string(space.gpus) + " x "
                              + AlternativesText(gpus);
    const bool loadPlot =
        (space.rateRps > 0 || space.goodput) && (space.tpotSloS > 0 || space.ttftSloS > 0);
    if (args.HasValue("out"))
    {
        // Whole or not at all: a failed plot leaves the folder as it was.
        StagedOutputDir staged(args.Text("out"));
        WriteServingStudy(staged.GetPath(), json, rows, space, title);
        if (loadPlot)
        {
            WriteServingLoadPlot(staged.GetPath(), study, rows, space, title);
        }
        staged.Commit();
        if (!loadPlot)
        {
            // An earlier study's in the same folder would read as this one's.
            for (const char* stale : {"attainment-rate.png", "attainment-rate.plt"})
            {
                std::error_code ignored;
                std::filesystem::remove(std::filesystem::path(args.Text("out")) / stale, ignored);
            }
        }
    }
    if (args.Flag("json"))
    {
        std::cout << DumpJson(json);
        return 0;
    }
    const Batching batching = study.GetBatching();
    if (args.Flag("csv"))
    {
        std::cout << ServingStudyCsv(rows, batching == Batching::DISAGGREGATED);
        return 0;
    }
    uint64_t fit = 0;
    uint64_t meet = 0;
    uint64_t overBudget = 0; // fit in memory, not otherwise (disaggregated's prefill, a budget)
    for (const auto& r : rows)
    {
        fit += r.fits ? 1 : 0;
        meet += r.meetsSlo ? 1 : 0;
        overBudget += !r.fits && r.peakBytes > 0 && r.peakBytes <= r.capacityBytes ? 1 : 0;
    }
    const std::string targets = TargetsText(space);
    // The GPUs, the precisions and the memory share, which decide what a replica holds and
    // reads; each varied one a column of the table.
    std::vector<std::string> weights;
    std::vector<std::string> caches;
    VariantColumns variant;
    for (const ResolvedJob& job : study.HardwareJobs())
    {
        variant.hardware = std::max(variant.hardware, job.hardwareSource.size());
    }
    if (!machines)
    {
        variant.hardware = 0;
    }
    std::vector<std::string> engines;
    for (const ServingVariant& v : study.Variants())
    {
        AddOnce(engines, v.engine);
        AddOnce(weights, v.dtype);
        AddOnce(caches, v.kvCacheDtype);
    }
    variant.engine = engines.size() > 1;
    variant.precision = weights.size() > 1 || caches.size() > 1;
    std::ostringstream setup;
    setup << AlternativesText(engines) << ", " << AlternativesText(weights) << " weights, "
          << AlternativesText(caches) << " KV cache";
    // The memory share follows the engine (vLLM's gpu_memory_utilization): each engine's that
    // is below the whole GPU, named where the study lists engines.
    std::vector<std::string> shares;
    for (const ResolvedJob& job : study.VariantJobs())
    {
        if (job.run.MemoryShare() < 1)
        {
            std::ostringstream share;
            share << job.run.MemoryShare() * 100 << "% of each GPU's memory"
                  << (variant.engine ? " under " + job.run.engine : "");
            AddOnce(shares, share.str());
        }
    }
    for (const std::string& share : shares)
    {
        setup << ", " << share;
    }
    std::printf("%s serving on %u x %s: prompt %u, %u generated tokens, engine %s; %zu %s, %llu "
                "fit in memory%s%s, %u ruled out by the model or the GPUs\n",
                first.model.name.c_str(),
                space.gpus,
                AlternativesText(gpus).c_str(),
                first.run.promptTokens,
                first.run.generatedTokens,
                setup.str().c_str(),
                rows.size(),
                rows.size() == 1 ? "layout and batch" : "layouts and batches",
                static_cast<unsigned long long>(fit),
                overBudget == 0 ? ""
                                : (" and in the " + std::to_string(space.gpus) + " GPUs ("
                                   + std::to_string(overBudget)
                                   + " more fit in memory alone, each with its reason below)")
                                      .c_str(),
                targets.empty() ? "" : (", " + std::to_string(meet) + " meet " + targets).c_str(),
                study.GetSkipped());
    const char* how =
        batching == Batching::CONTINUOUS
            ? "continuous batching: batch = requests in flight per replica, a finished one's slot "
              "taken at once"
        : batching == Batching::CHUNKED
            ? "chunked prefill: batch = requests in flight per replica, each new prompt "
              "prefilled inside the running decode steps, up to the token budget a step"
        : batching == Batching::DISAGGREGATED
            ? "disaggregated: x_dec decode instances of the row's layout, each with batch "
              "requests in flight, fed by x_pre prefill instances, which send each request's KV "
              "cache over the network (KV_ms: the mean over the pairs of instances)"
            : "static batching: a replica serves its batch from prefill to the last token";
    std::string budget; // chunked: each hardware's token budget
    for (const ResolvedJob& job : study.HardwareJobs())
    {
        if (batching == Batching::CHUNKED)
        {
            budget += std::string(budget.empty() ? " (" : ", ")
                      + std::to_string(study.TokenBudget(job))
                      + (machines ? " on " + job.hardwareSource : "");
        }
    }
    budget += budget.empty() ? "" : ")";
    const std::string process =
        !space.trace.requests.empty()
            ? "recorded in " + space.trace.path
                  + (args.Has("rate") || space.goodput
                         ? ", their times scaled from its " + FormatNumber(space.trace.RateRps(), 4)
                               + " requests/s"
                         : ", at their own times")
        : space.burstiness == 1 ? "Poisson"
                                : "gamma gaps of burstiness " + FormatNumber(space.burstiness);
    // The rate as given, or a trace's own (measured: four significant digits).
    const std::string rate = FormatNumber(space.rateRps, args.Has("rate") ? 9 : 4);
    const char* dealt =
        space.router == QueueRouter::ROUND_ROBIN ? "dealt to the instances in turn"
        : space.router == QueueRouter::LEAST_OUTSTANDING
            ? "each dealt to the instance with the fewest outstanding"
            : "each dealt cache-aware: to the least loaded instance holding its prefix while the "
              "load is balanced";
    if (space.goodput)
    {
        std::printf("Each layout at its goodput: the highest rate of arrivals (%s, %s, "
                    "%s) at which %s%% of the requests "
                    "meet %s; ranked by goodput per GPU; %s%s; req/s and tok/s/GPU: the goodput; "
                    "util: it over the capacity (every slot busy); TTFT and TPOT percentiles in "
                    "ms, queueing included\n",
                    process.c_str(),
                    simulated.c_str(),
                    dealt,
                    FormatNumber(space.attainment * 100).c_str(),
                    targets.c_str(),
                    how,
                    budget.c_str());
        PrintLoadTable(rows, args.Count("top"), true, variant);
    }
    else if (space.size)
    {
        std::printf("%s requests/s arriving (%s, %s, %s); each layout with the fewest "
                    "instances (at most %u GPUs) at which %s%% of the requests meet %s, ranked "
                    "by the GPUs they take; %s%s; util: the rate over their capacity; TTFT and "
                    "TPOT percentiles in ms, queueing included\n",
                    rate.c_str(),
                    process.c_str(),
                    simulated.c_str(),
                    dealt,
                    space.gpus,
                    FormatNumber(space.attainment * 100).c_str(),
                    targets.c_str(),
                    how,
                    budget.c_str());
        PrintLoadTable(rows, args.Count("top"), true, variant);
    }
    else if (space.rateRps > 0)
    {
        std::printf("%s requests/s arriving (%s, %s, %s); ranked by capacity (generated "
                    "tokens per second per GPU with every "
                    "slot busy)%s; %s%s; util: the rate over the capacity; TTFT and TPOT "
                    "percentiles in ms, queueing included; attain: requests within %s\n",
                    rate.c_str(),
                    process.c_str(),
                    simulated.c_str(),
                    dealt,
                    targets.empty() ? ""
                                    : (", those where " + FormatNumber(space.attainment * 100)
                                       + "% of the requests meet the targets first")
                                          .c_str(),
                    how,
                    budget.c_str(),
                    targets.empty() ? "(no targets)" : targets.c_str());
        PrintLoadTable(rows, args.Count("top"), !targets.empty(), variant);
    }
    else
    {
        std::printf("Ranked by generated tokens per second per GPU%s; %s%s; pf: on the "
                    "throughput-TPOT frontier\n",
                    targets.empty() ? "" : ", the layouts meeting the targets first",
                    how,
                    budget.c_str());
        if (batching == Batching::DISAGGREGATED)
        {
            PrintDisaggregatedTable(rows, args.Count("top"), !targets.empty(), variant);
        }
        else
        {
            PrintTable(rows, args.Count("top"), !targets.empty(), variant);
        }
    }
    PrintKvLimited(rows, args.Count("top"));
    if (study.Variants().size() > 1)
    {
        PrintBestByVariant(rows, study.Variants(), variant, !targets.empty());
    }
    if (space.prefixHit < 1)
    {
        std::printf("Prefix cache: %s%% of the requests find the %u-token cached prefix, the "
                    "others compute their whole prompt%s; the layouts are replayed at the mean, "
                    "%s cached tokens\n",
                    FormatNumber(space.prefixHit * 100).c_str(),
                    study.PrefixTokens(),
                    space.rateRps > 0 || space.goodput ? " (each request's drawn)" : "",
                    std::to_string(first.run.cachedPrefix).c_str());
    }
    if (space.prefixes > 0)
    {
        // The share of requests that found their group's prefix, over the rows simulated.
        // One figure, or the rows' range; disaggregated also at the decode instances.
        auto range = [&rows](double ServingLoad::*share, const std::string& what)
        {
            double least = 1;
            double most = 0;
            for (const auto& r : rows)
            {
                if (r.loaded && !r.load.overloaded && r.load.*share >= 0)
                {
                    least = std::min(least, r.load.*share);
                    most = std::max(most, r.load.*share);
                }
            }
            auto percent = [](double x)
            {
                return FormatNumber(std::round(x * 1000) / 10);
            };
            return most < least ? std::string()
                                : "; " + percent(least) + (most > least ? "-" + percent(most) : "")
                                      + "% " + what;
        };
        const std::string found =
            range(&ServingLoad::prefixHitShare, "of the requests found theirs (prefix_hit_share)")
            + range(&ServingLoad::decodePrefixHitShare,
                    "found it at their decode instance (decode_prefix_hit_share)");
        const std::string drawn = space.prefixSkew > 0 ? "by Zipf's law (group g with weight 1 / g^"
                                                             + FormatNumber(space.prefixSkew) + ")"
                                                       : std::string("uniformly");
        std::printf("Prefix groups: %u prefixes of %u tokens, each request's drawn %s; an "
                    "instance holds those of the requests it runs and, in the KV cache they "
                    "leave free (static batching: a full batch leaves), the most recently used "
                    "others, from empty caches (each group's first request on an instance "
                    "computes it; a decode instance holding it receives only the rest); the "
                    "layouts are replayed with the prefix cached%s\n",
                    space.prefixes,
                    study.PrefixTokens(),
                    drawn.c_str(),
                    found.c_str());
    }
    std::cout << InputText(json.at("input"));
    if (args.HasValue("out"))
    {
        std::cout << "Wrote " << args.Text("out")
                  << "/results.csv, results.json, throughput-latency.png"
                  << (loadPlot ? ", attainment-rate.png" : "") << "\n";
    }
    return 0;
}

static CliCommandRegistrar g_studyServing(
    "study serving",
    "serving layouts and batch sizes on N GPUs: throughput per GPU within latency targets",
    "Predicts an inference job (--gen of 2 or more) for every replica layout (tp x pp, and for "
    "mixture-of-experts models dp attention replicas sharing their experts; the GPUs filled "
    "with identical replicas), batch size, hardware, engine and precision (each --hardware with "
    "each --engine, each --dtype and each --kv-cache-dtype) of the lists, on worker processes, "
    "and ranks "
    "them by generated "
    "tokens per second per GPU: those that meet --tpot-slo and --ttft-slo first, then the other "
    "fitting ones, then those that do not fit by peak memory; marks the throughput-latency "
    "frontier. --batching=disaggregated runs each layout as decode instances fed by prefill "
    "instances of the best layout of the lists (the KV-cache handover timed on the network). "
    "--rate=R simulates R requests per second arriving at random on each layout's engine, "
    "step by step, for latency percentiles and the share of requests within the targets; "
    "--goodput finds each layout's highest such rate and ranks by it. "
    "With --out=DIR writes DIR/results.csv, DIR/results.json and DIR/throughput-latency.png "
    "(and under a rate with targets DIR/attainment-rate.png).",
    RunStudyServingCommand);

} // namespace rapidllm
} // namespace ns3
