/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "fault-study.h"

#include "job-echo.h"
#include "ns3/boolean.h"
#include "ns3/network-error.h"
#include "ns3/rapidllm-error.h"
#include "ns3/replay-error.h"
#include "ns3/spec-error.h"
#include "ns3/topology.h"
#include "ns3/workload.h"
#include "rapid-llm-helper.h"
#include "report-output.h"
#include "staged-output-dir.h"
#include "study-plot.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace ns3 {
namespace rapidllm {

namespace {

/** \return the next value of a SplitMix64 stream (reproducible on every platform) */
uint64_t
SplitMix(uint64_t& state)
{
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/** What one run of the study measured. */
struct Measured
{
    RunReport report;                  //!< the report
    std::vector<LinkStats> mostLoaded; //!< the busiest links
};

/**
 * A study's GPU sets, instead of links: "compute:gpu3" slows GPU 3 to the factor of its speed,
 * "hbm:gpu3" leaves its HBM the factor of its bandwidth, "power:gpu3" caps it at the factor of
 * its board power; the prefix and, for the last two, the gpu. field the factor scales.
 */
const std::vector<std::pair<std::string, std::string>> kGpuSets = {
    {"compute:", ""},
    {"hbm:", "gpu.hbm_bandwidth_GBps"},
    {"power:", "gpu.power.board_limit_w"},
};

/** \return the GPU set \p links names (kGpuSets's index), or kGpuSets.size() for links */
std::size_t
GpuSetKind(const std::string& links)
{
    for (std::size_t k = 0; k < kGpuSets.size(); ++k)
    {
        if (links.compare(0, kGpuSets[k].first.size(), kGpuSets[k].first) == 0)
        {
            return k;
        }
    }
    return kGpuSets.size();
}

/**
 * Runs \p job with \p routing, its links (selectors) at \p factor, or the GPU of a compute
 * selector at that share of its speed, on \p backend.
 */
Measured
RunOne(const ResolvedJob& job,
       const std::string& routing,
       const std::vector<std::string>& selectors,
       double factor,
       const std::string& backend,
       bool symmetry,
       uint32_t topLinks)
{
    HardwareSpec hw = job.hardware;
    std::map<uint32_t, double> slow = job.slowGpus;
    std::map<uint32_t, GpuSpec> variants = job.gpuVariants;
    if (factor < 1)
    {
        for (const auto& s : selectors)
        {
            const std::size_t kind = GpuSetKind(s);
            if (kind < kGpuSets.size())
            {
                const auto& [prefix, field] = kGpuSets[kind];
                if (factor <= 0)
                {
                    throw ReplayError("a GPU set's factors must be above 0 (a GPU at speed 0, "
                                      "without HBM or power, never finishes its kernels)");
                }
                uint64_t index = 0;
                ParseGpuName(s.substr(prefix.size()), index); // checked by RunFaultStudy
                const auto gpu = static_cast<uint32_t>(index);
                if (field.empty())
                {
                    slow[gpu] = factor;
                    continue;
                }
                // The job's overrides, the GPU's own (--gpu-set), then the set's factor.
                std::vector<SpecOverride> overrides;
                for (const auto& text : job.overrides)
                {
                    overrides.push_back(SpecOverride::Parse(text));
                }
                const auto own = job.gpuSets.find(gpu);
                for (std::size_t i = 0; own != job.gpuSets.end() && i < own->second.size(); ++i)
                {
                    overrides.push_back(SpecOverride::Parse(own->second[i]));
                }
                overrides.push_back(SpecOverride::Parse(field + "=" + FormatNumber(factor) + "x"));
                try
                {
                    variants[gpu] = GpuVariantOf(job.hardwareSource, overrides, gpu, "study");
                }
                catch (const SpecError& e)
                {
                    // This row's error, not the study's. A cap at or below the idle board's
                    // power says what the factor gives and the lowest that this GPU takes.
                    const GpuPower& p = hw.gpu.power;
                    if (prefix == "power:" && p.Has() && factor * p.limitW <= p.idleW)
                    {
                        throw ReplayError(
                            "a cap of " + FormatNumber(factor * p.limitW, 4) + " W ("
                            + FormatNumber(factor) + " x the board's " + FormatNumber(p.limitW, 4)
                            + " W) is not above the idle board's " + FormatNumber(p.idleW, 4)
                            + " W: this GPU takes factors above "
                            + FormatNumber(p.idleW / p.limitW, 3));
                    }
                    throw ReplayError(e.GetMessage());
                }
                continue;
            }
            LinkFaultSpec f;
            f.link = s;
            f.factor = factor;
            hw.network.faults.push_back(f);
        }
    }
    Ptr<RapidLlmHelper> helper = CreateObject<RapidLlmHelper>();
    helper->SetBackend(backend);
    helper->SetRoutingPolicy(routing);
    helper->SetReplayerAttribute("Symmetry", BooleanValue(symmetry));
    // The most loaded links need every collective's bytes on the network: none timed from an
    // earlier identical one or from its recorded run alone (the healthy row's tensor-parallel
    // collectives were counted once per group, kind and size: its NVLink bytes 200x low).
    helper->SetReplayerAttribute("TraceAllMessages", BooleanValue(true));
    helper->SetModel(job.model);
    helper->SetHardware(hw);
    helper->SetRun(job.run);
    helper->SetTimedFaults(job.timedFaults);
    helper->SetSlowGpus(slow);
    helper->SetGpuVariants(variants);
    Measured m;
    m.report = helper->Run();
    m.mostLoaded = helper->GetBackend()->GetStats().MostLoaded(topLinks);
    helper->Dispose();
    return m;
}

/** \return the scaled-down job of the packet checks, and a description in \p words */
ResolvedJob
ScaledDown(const ResolvedJob& job, std::string& words)
{
    ResolvedJob s = job;
    ParallelSpec& p = s.run.parallel;
    p.virtualStages = 1;
    p.firstStageLayers = 0;
    p.lastStageLayers = 0;
    p.embeddingInSplit = false;
    p.lossInSplit = false;
    s.model.layers = p.pp; // one layer per stage
    // The width cut to tp heads of the same head size (the messages shrink with it; the ranks,
    // groups and so the links they cross stay), so that ns-3's packets stay countable.
    const uint32_t heads = std::max<uint32_t>(p.tp, 1);
    if (heads < s.model.heads)
    {
        const double scale = double(heads) / s.model.heads;
        s.model.kvHeads =
            s.model.kvHeads == s.model.heads ? heads : std::min(s.model.kvHeads, heads);
        if (s.model.kvHeads % p.tp != 0 && p.tp % s.model.kvHeads != 0)
        {
            s.model.kvHeads = heads;
        }
        s.model.heads = heads;
        s.model.hidden = heads * s.model.headDim;
        s.model.ffn = std::max<uint32_t>(1, uint32_t(s.model.ffn * scale));
        if (s.model.expertFfn > 0)
        {
            s.model.expertFfn = std::max<uint32_t>(1, uint32_t(s.model.expertFfn * scale));
        }
        s.model.vocab = std::max<uint32_t>(p.tp, uint32_t(s.model.vocab * scale) / p.tp * p.tp);
    }
    if (s.run.mode == RunMode::TRAINING)
    {
        s.run.globalBatch = s.run.microBatch * p.dp; // one micro-batch per pipeline
        s.run.sequence = std::min<uint32_t>(s.run.sequence, 512);
    }
    else
    {
        s.run.generatedTokens = std::min<uint32_t>(s.run.generatedTokens, 4);
    }
    s.run.Validate(s.model, "packet check");
    std::ostringstream os;
    os << s.model.name << " cut to " << s.model.layers << " layers of width " << s.model.hidden
       << " (" << s.model.heads << " heads), tp " << p.tp << " pp " << p.pp << " dp " << p.dp
       << " (" << p.Gpus() << " GPUs)";
    if (s.run.mode == RunMode::TRAINING)
    {
        os << ", one micro-batch of " << s.run.microBatch << " x " << s.run.sequence
           << " tokens per pipeline";
    }
    else
    {
        os << ", " << s.run.generatedTokens << " generated tokens";
    }
    words = os.str();
    return s;
}

} // namespace

bool
IsGpuSet(const std::string& links)
{
    return GpuSetKind(links) < kGpuSets.size();
}

std::vector<std::string>
ExpandLinkSet(const HardwareSpec& hardware, uint32_t gpus, const std::string& links)
{
    const std::string random = "random:";
    if (links.compare(0, random.size(), random) != 0)
    {
        return {links};
    }
    uint64_t count = 0;
    uint64_t seed = 0;
    const std::string rest = links.substr(random.size());
    const std::size_t colon = rest.find(':');
    if (colon == std::string::npos || !ParseWholeNumber(rest.substr(0, colon), count)
        || !ParseWholeNumber(rest.substr(colon + 1), seed) || count == 0)
    {
        throw SpecError("command line",
                        "links",
                        "'" + links
                            + "': use random:K:SEED with K >= 1 links and a whole-number "
                              "SEED, e.g. random:4:1");
    }
    Ptr<Topology> t = Topology::Build(hardware.network, gpus, hardware.name);
    // Physical links: one per node pair, in construction order.
    std::vector<uint32_t> physical;
    std::set<std::pair<uint32_t, uint32_t>> seen;
    for (uint32_t l = 0; l < t->GetLinkCount(); ++l)
    {
        const TopologyLink& link = t->GetLink(l);
        const auto key = std::minmax(link.src, link.dst);
        if (seen.insert({key.first, key.second}).second)
        {
            physical.push_back(l);
        }
    }
    if (count > physical.size())
    {
        throw SpecError("command line",
                        "links",
                        "'" + links + "': the network of " + std::to_string(gpus) + " GPUs has "
                            + std::to_string(physical.size()) + " links");
    }
    // A partial Fisher-Yates shuffle driven by SplitMix64: the same K links for the same seed.
    uint64_t state = seed;
    std::vector<std::string> selectors;
    for (uint64_t i = 0; i < count; ++i)
    {
        const uint64_t j = i + SplitMix(state) % (physical.size() - i);
        std::swap(physical[i], physical[j]);
        const TopologyLink& link = t->GetLink(physical[i]);
        selectors.push_back(t->GetNode(link.src).name + "-" + t->GetNode(link.dst).name);
    }
    return selectors;
}

FaultStudyResult
RunFaultStudy(const ResolvedJob& job, const FaultStudyConfig& config)
{
    FaultStudyResult result;
    const uint32_t gpus = static_cast<uint32_t>(job.run.parallel.Gpus());
    std::vector<std::vector<std::string>> sets;
    // Every selector must name links of this network: checked once, before any run. A link the
    // job already faults (--fault, the hardware file's faults) would have its fault replaced by
    // the study's factor: the rows would not degrade it from there.
    Ptr<Topology> t = Topology::Build(job.hardware.network, gpus, job.hardware.name);
    std::map<uint32_t, std::string> faulted; // link: the fault that names it
    for (const LinkFaultSpec& f : job.hardware.network.faults)
    {
        for (uint32_t link : t->SelectLinks(f.link, "command line"))
        {
            faulted.emplace(link, f.link);
        }
    }
    for (const auto& links : config.links)
    {
        sets.push_back(ExpandLinkSet(job.hardware, gpus, links));
        const std::size_t kind = GpuSetKind(links);
        if (kind < kGpuSets.size())
        {
            const std::string& prefix = kGpuSets[kind].first;
            uint64_t index = 0;
            if (!ParseGpuName(links.substr(prefix.size()), index) || index >= gpus)
            {
                throw SpecError("command line",
                                "links",
                                "'" + links + "': a GPU set is " + prefix
                                    + "gpu<i>, a GPU of the job from gpu0 to gpu"
                                    + std::to_string(gpus - 1) + " (e.g. " + prefix + "gpu3)");
            }
            continue; // a GPU's speed, HBM or power, no link
        }
        for (const auto& s : sets.back())
        {
            std::vector<uint32_t> selected;
            try
            {
                selected = t->SelectLinks(s, "command line");
            }
            catch (const SpecError& e)
            {
                // The selector is the study's --links (the topology names its own field).
                throw SpecError("command line", "links", e.GetMessage());
            }
            for (uint32_t link : selected)
            {
                const auto it = faulted.find(link);
                if (it != faulted.end())
                {
                    const TopologyLink& l = t->GetLink(link);
                    throw SpecError("command line",
                                    "links",
                                    "'" + links + "' studies link " + t->GetNode(l.src).name + "-"
                                        + t->GetNode(l.dst).name
                                        + ", which the job already faults ('" + it->second
                                        + "', from --fault or the hardware file): the study sets "
                                          "its studied links' factors itself; drop that fault, or "
                                          "study other links");
                }
            }
        }
    }
    for (const auto& routing : config.routings)
    {
        RoutingPolicy::Create(routing); // an unknown name is an error before anything runs
    }
    result.memory = AnalyzeMemory(job.model, job.run, job.hardware.gpu);
    const std::size_t degraded = std::count_if(config.factors.begin(),
                                               config.factors.end(),
                                               [](double f)
                                               {
                                                   return f < 1;
                                               });
    const std::size_t total =
        config.routings.size() * (1 + sets.size() * degraded) + 2 * config.packetCheck;
    std::size_t done = 0;
    auto ran = [&]()
    {
        ++done;
        if (config.onRun)
        {
            config.onRun(done, total);
        }
    };
    for (const auto& routing : config.routings)
    {
        double healthy = 0;
        std::string healthyError;
        Measured healthyRun; // also the rows of factor 1 (the same run)
        try
        {
            healthyRun = RunOne(job, routing, {}, 1.0, "flow", config.symmetry, config.topLinks);
            healthy = healthyRun.report.stepTimeS;
        }
        catch (const SpecError&)
        {
            throw;
        }
        catch (const Error& e)
        {
            healthyError = e.what();
        }
        ran();
        result.healthyS.push_back(healthy);
        for (std::size_t s = 0; s < sets.size(); ++s)
        {
            for (double factor : config.factors)
            {
                FaultStudyRow row;
                row.routing = routing;
                row.links = config.links[s];
                row.selectors = sets[s];
                row.factor = factor;
                try
                {
                    if (!healthyError.empty())
                    {
                        throw NetworkError("the healthy run failed: " + healthyError);
                    }
                    const Measured m = factor >= 1 ? healthyRun
                                                   : RunOne(job,
                                                            routing,
                                                            sets[s],
                                                            factor,
                                                            "flow",
                                                            config.symmetry,
                                                            config.topLinks);
                    row.ok = true;
                    row.stepTimeS = m.report.stepTimeS;
                    row.slowdown = healthy > 0 ? row.stepTimeS / healthy : 0;
                    row.computeS = m.report.computeS;
                    row.exposedCommS = m.report.exposedCommS;
                    row.exposedByOpS = m.report.exposedCommByOpS;
                    row.bubbleS = m.report.bubbleS;
                    row.hostS = m.report.hostWaitS;
                    row.inference = job.run.mode == RunMode::INFERENCE;
                    row.ttftS = m.report.ttftS;
                    row.tpotS = m.report.tpotDefined ? m.report.tpotS : -1;
                    row.haveEnergy = m.report.haveEnergy;
                    row.energyJ = m.report.energyJ;
                    row.avgPowerW = m.report.avgPowerW;
                    row.mostLoaded = m.mostLoaded;
                }
                catch (const SpecError&)
                {
                    throw;
                }
                catch (const Error& e)
                {
                    row.error = e.what();
                }
                if (factor < 1)
                {
                    ran();
                }
                result.rows.push_back(row);
            }
        }
    }
    if (config.packetCheck == 0)
    {
        return result;
    }
    // Spot checks: degraded (not dead, not healthy) rows that ran, spread over the table.
    std::vector<const FaultStudyRow*> candidates;
    for (const auto& r : result.rows)
    {
        if (r.ok && r.factor > 0 && r.factor < 1)
        {
            candidates.push_back(&r);
        }
    }
    const ResolvedJob small = ScaledDown(job, result.scaledJob);
    // Round robin over the link sets, then the policies; in each, the most degraded factor.
    std::vector<const FaultStudyRow*> picked;
    for (std::size_t i = 0; picked.size() < config.packetCheck && i < candidates.size() * 4; ++i)
    {
        const std::string& links = config.links[i % config.links.size()];
        const std::string& routing =
            config.routings[(i / config.links.size()) % config.routings.size()];
        const FaultStudyRow* best = nullptr;
        for (const FaultStudyRow* c : candidates)
        {
            if (c->links == links && c->routing == routing
                && std::find(picked.begin(), picked.end(), c) == picked.end()
                && (!best || c->factor < best->factor))
            {
                best = c;
            }
        }
        if (best)
        {
            picked.push_back(best);
        }
    }
    for (const FaultStudyRow* row : picked)
    {
        const FaultStudyRow& r = *row;
        PacketCheckRow c;
        c.routing = r.routing;
        c.links = r.links;
        c.factor = r.factor;
        try
        {
            c.flowS =
                RunOne(small, r.routing, r.selectors, r.factor, "flow", false, 0).report.stepTimeS;
            c.packetS = RunOne(small, r.routing, r.selectors, r.factor, "packet", false, 0)
                            .report.stepTimeS;
            c.relDiff = c.packetS > 0 ? (c.flowS - c.packetS) / c.packetS : 0;
            c.ok = true;
        }
        catch (const Error& e)
        {
            c.error = e.what();
        }
        ran();
        ran();
        result.checks.push_back(c);
    }
    return result;
}

std::string
FaultStudyCsv(const FaultStudyResult& result)
{
    std::ostringstream os;
    os << "routing,links,factor,step_time_s,slowdown,compute_s,exposed_comm_s,bubble_s,energy_j,"
          "avg_power_w,most_loaded_link,most_loaded_link_bytes,error,selectors,ttft_s,tpot_s,"
          "host_s\n";
    for (const auto& r : result.rows)
    {
        // The links the row's set selects (a random set's draw), ';'-separated, last.
        std::string selectors;
        for (const auto& s : r.selectors)
        {
            selectors += (selectors.empty() ? "" : ";") + s;
        }
        os << CsvField(r.routing) << "," << CsvField(r.links) << "," << FormatNumber(r.factor)
           << ",";
        if (r.ok)
        {
            os << FormatNumber(r.stepTimeS) << "," << FormatNumber(r.slowdown) << ","
               << FormatNumber(r.computeS) << "," << FormatNumber(r.exposedCommS) << ","
               << FormatNumber(r.bubbleS) << ","
               << (r.haveEnergy ? FormatNumber(r.energyJ) + "," + FormatNumber(r.avgPowerW) : ",")
               << ",";
            if (!r.mostLoaded.empty())
            {
                os << CsvField(r.mostLoaded.front().name) << ","
                   << FormatExact(r.mostLoaded.front().bytes);
            }
            else
            {
                os << ",";
            }
            os << ",," << CsvField(selectors) << ",";
            if (r.inference)
            {
                os << FormatNumber(r.ttftS) << "," << (r.tpotS >= 0 ? FormatNumber(r.tpotS) : "");
            }
            else
            {
                os << ",";
            }
            os << "," << FormatNumber(r.hostS) << "\n";
        }
        else
        {
            os << ",,,,,,,,," << CsvField(r.error) << "," << CsvField(selectors) << ",,,\n";
        }
    }
    return os.str();
}

Json
FaultStudyJson(const ResolvedJob& job,
               const FaultStudyConfig& config,
               const FaultStudyResult& result)
{
    Json j;
    std::string routings;
    for (const auto& r : config.routings)
    {
        routings += (routings.empty() ? "" : ",") + r;
    }
    j["input"] = JobInputJson(job, "flow", routings, config.packet);
    j["memory"] = result.memory;
    j["study"] = {
        {"links", config.links}, {"factors", config.factors}, {"routing", config.routings}};
    Json healthy = Json::object();
    for (std::size_t i = 0; i < config.routings.size(); ++i)
    {
        healthy[config.routings[i]] = result.healthyS[i];
    }
    j["healthy_step_time_s"] = healthy;
    Json rows = Json::array();
    for (const auto& r : result.rows)
    {
        Json row = {{"routing", r.routing},
                    {"links", r.links},
                    {"selectors", r.selectors},
                    {"factor", r.factor}};
        if (r.ok)
        {
            row["step_time_s"] = r.stepTimeS;
            row["slowdown"] = r.slowdown;
            row["breakdown_s"] = {{"compute", r.computeS},
                                  {"exposed_communication", r.exposedCommS},
                                  {"pipeline_bubble", r.bubbleS},
                                  {"host", r.hostS}};
            row["exposed_communication_by_op_s"] = r.exposedByOpS;
            if (r.inference)
            {
                // A request's latencies, as run reports them (a serving study of faults).
                row["ttft_s"] = r.ttftS;
                row["tpot_s"] = r.tpotS >= 0 ? Json(r.tpotS) : Json(nullptr);
            }
            if (r.haveEnergy)
            {
                row["energy_j"] = r.energyJ;
                row["avg_power_w"] = r.avgPowerW;
            }
            row["most_loaded_links"] = r.mostLoaded;
        }
        else
        {
            row["error"] = r.error;
        }
        rows.push_back(row);
    }
    j["rows"] = rows;
    if (!result.checks.empty())
    {
        Json checks = Json::array();
        for (const auto& c : result.checks)
        {
            Json check = {{"routing", c.routing}, {"links", c.links}, {"factor", c.factor}};
            if (c.ok)
            {
                check["flow_step_time_s"] = c.flowS;
                check["packet_step_time_s"] = c.packetS;
                check["relative_difference"] = c.relDiff;
            }
            else
            {
                check["error"] = c.error;
            }
            checks.push_back(check);
        }
        j["packet_checks"] = {{"job", result.scaledJob}, {"rows", checks}};
    }
    return j;
}

void
WriteFaultStudy(const std::string& dir,
                const ResolvedJob& job,
                const FaultStudyConfig& config,
                const FaultStudyResult& result)
{
    StagedOutputDir staged(dir);
    const std::filesystem::path out(staged.GetPath());
    WriteOutputFiles(
        {{(out / "results.csv").string(), FaultStudyCsv(result)},
         {(out / "results.json").string(), DumpJson(FaultStudyJson(job, config, result))}});

    // slowdown.png: every routing policy and link set; with several link sets also
    // slowdown-<k>.png, link set k (1-based) alone, one line per policy.
    auto draw = [&](const std::string& name, const std::vector<std::string>& linkSets)
    {
        PlotSpec plot;
        plot.title = "Step-time slowdown of " + job.model.name + " on " + job.hardware.name
                     + (linkSets.size() == 1 ? ", faulted: " + linkSets.front() : "");
        plot.xLabel = "bandwidth factor of the faulted links (0 = dead)";
        plot.yLabel = "slowdown vs healthy";
        plot.reverseX = true;
        plot.yFromZero = false;
        for (const auto& links : linkSets)
        {
            for (const auto& routing : config.routings)
            {
                PlotSeries s;
                s.title = linkSets.size() > 1 ? routing + ", " + links : routing;
                for (const auto& r : result.rows)
                {
                    if (r.ok && r.routing == routing && r.links == links)
                    {
                        s.points.push_back({r.factor, r.slowdown});
                    }
                }
                if (!s.points.empty())
                {
                    plot.series.push_back(s);
                }
            }
        }
        if (!plot.series.empty())
        {
            WritePlotPng((out / name).string(), plot);
        }
    };
    draw("slowdown.png", config.links);
    const std::size_t sets = config.links.size() > 1 ? config.links.size() : 0;
    for (std::size_t k = 0; k < sets; ++k)
    {
        draw("slowdown-" + std::to_string(k + 1) + ".png", {config.links[k]});
    }
    staged.Commit();
    // An earlier study's plots of link sets this one does not have would be taken for its own.
    std::error_code ec;
    for (std::size_t k = sets + 1;; ++k)
    {
        bool removed = false;
        for (const char* ext : {".png", ".plt"})
        {
            removed = std::filesystem::remove(
                          std::filesystem::path(dir) / ("slowdown-" + std::to_string(k) + ext), ec)
                      || removed;
        }
        if (!removed)
        {
            break;
        }
    }
}

} // namespace rapidllm
} // namespace ns3
