/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "fault-options.h"

#include "ns3/spec-error.h"
#include "ns3/topology.h"
#include "ns3/trace-replayer.h"
#include "option-spec.h"
#include "report-output.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <set>
#include <sstream>

namespace ns3 {
namespace rapidllm {

namespace {

/**
 * The latest start a fault may have, s: far beyond any step, and within ns-3's nanosecond clock
 * (1e10 s wrapped to a negative time, 1e308 s to 0).
 */
constexpr double kMaxFaultStartS = 1e6;

/** \return seconds of "250ms", "1.5s", "20us", "100ns" or "0.25"; false when malformed */
bool
ParseTime(const std::string& text, double& seconds)
{
    static const std::vector<std::pair<std::string, double>> units = {
        {"ns", 1e-9}, {"us", 1e-6}, {"ms", 1e-3}, {"s", 1.0}};
    for (const auto& [unit, scale] : units)
    {
        if (text.size() > unit.size()
            && text.compare(text.size() - unit.size(), unit.size(), unit) == 0)
        {
            double v = 0;
            if (!ParseFiniteNumber(text.substr(0, text.size() - unit.size()), v))
            {
                return false;
            }
            seconds = v * scale;
            return seconds >= 0 && seconds <= kMaxFaultStartS;
        }
    }
    return ParseFiniteNumber(text, seconds) && seconds >= 0 && seconds <= kMaxFaultStartS;
}

/**
 * \brief Reads a per-GPU option's items, gpu<i>:REST separated by \p separator ("" = none): each
 * GPU named, within the job and given once, else a SpecError (field \p field) saying what an
 * item is (\p usage).
 * \param each called with the GPU, its name ("gpu3") and REST
 */
void
ForEachGpuItem(const std::string& text,
               char separator,
               uint64_t gpus,
               const std::string& source,
               const std::string& field,
               const std::string& usage,
               const std::function<void(uint32_t, const std::string&, const std::string&)>& each)
{
    std::set<uint64_t> seen;
    std::size_t from = 0;
    while (!text.empty() && from <= text.size())
    {
        const std::size_t end = std::min(text.find(separator, from), text.size());
        const std::string item = text.substr(from, end - from);
        from = end + 1;
        const std::size_t colon = std::min(item.find(':'), item.size());
        const std::string name = item.substr(0, colon);
        uint64_t gpu = 0;
        if (colon == item.size() || !ParseGpuName(name, gpu))
        {
            throw SpecError(source, field, "'" + item + "' is not " + usage);
        }
        if (gpu >= gpus)
        {
            throw SpecError(source,
                            field,
                            name + " is not a GPU of the job; allowed: gpu0"
                                + (gpus > 1 ? " to gpu" + std::to_string(gpus - 1) : ""));
        }
        if (!seen.insert(gpu).second)
        {
            throw SpecError(source, field, name + " is given twice");
        }
        each(static_cast<uint32_t>(gpu), name, item.substr(colon + 1));
    }
}
} // namespace

std::vector<FaultOption>
ParseFaultOption(const std::string& text, const std::string& source, const std::string& option)
{
    const std::string usage = "give SELECTOR[:FACTOR][@TIME][,...], e.g. --" + option
                              + "=gpu0-nvlink.sw0:0.5, --" + option + "=gpu3>nvlink.sw0 (dead), --"
                              + option + "=tier:infiniband:0.5 or --" + option
                              + "=gpu0-infiniband.leaf0.0:0.25@2ms";
    std::vector<FaultOption> faults;
    std::size_t begin = 0;
    while (true)
    {
        const std::size_t comma = text.find(',', begin);
        const std::string item =
            text.substr(begin, comma == std::string::npos ? std::string::npos : comma - begin);
        if (item.empty())
        {
            throw SpecError(source, option, "an empty item in '" + text + "'; " + usage);
        }
        FaultOption f;
        std::string rest = item;
        const std::size_t at = rest.rfind('@');
        if (at != std::string::npos)
        {
            if (!ParseTime(rest.substr(at + 1), f.startS))
            {
                throw SpecError(source,
                                option,
                                "'" + item + "': '" + rest.substr(at + 1)
                                    + "' is not a start time; use a time from 0 to 1e6 s (a "
                                      "step is far shorter) such as 250ms, 1.5s, 20us or 100ns");
            }
            f.timed = true;
            rest = rest.substr(0, at);
        }
        // "tier:NAME" holds a colon of its own: the factor's colon comes after it.
        const std::string tier = "tier:";
        const std::size_t from = rest.compare(0, tier.size(), tier) == 0 ? tier.size() : 0;
        const std::size_t colon = rest.find(':', from);
        f.selector = rest.substr(0, colon);
        if (f.selector.empty() || f.selector == tier)
        {
            throw SpecError(source, option, "'" + item + "' names no link; " + usage);
        }
        if (colon != std::string::npos)
        {
            const std::string factor = rest.substr(colon + 1);
            if (!ParseFiniteNumber(factor, f.factor) || !(f.factor >= 0 && f.factor <= 1))
            {
                throw SpecError(source,
                                option,
                                "'" + item + "': FACTOR must be 0 (dead link) or a number from "
                                    + FormatNumber(LinkFaultSpec::kMinFactor) + " to 1; " + usage);
            }
            if (f.factor > 0 && f.factor < LinkFaultSpec::kMinFactor)
            {
                throw SpecError(source,
                                option,
                                "'" + item + "': FACTOR " + FormatNumber(f.factor)
                                    + " is below the smallest soft-fault factor "
                                    + FormatNumber(LinkFaultSpec::kMinFactor)
                                    + " (a link that slow would stall the simulation); allowed: 0 "
                                      "(dead link) or "
                                    + FormatNumber(LinkFaultSpec::kMinFactor) + " to 1");
            }
        }
        for (const FaultOption& earlier : faults)
        {
            // The same links from the same time twice: one would silently replace the other.
            if (earlier.selector == f.selector && earlier.startS == f.startS)
            {
                throw SpecError(source,
                                option,
                                "'" + f.selector + "' is given twice"
                                    + (f.timed ? " from the same time" : "")
                                    + "; give each link's fault once (a later change of the same "
                                      "links takes its own @TIME)");
            }
        }
        faults.push_back(f);
        if (comma == std::string::npos)
        {
            break;
        }
        begin = comma + 1;
    }
    return faults;
}

void
AddFaults(const std::vector<FaultOption>& faults,
          NetworkSpec& network,
          Ptr<FaultSchedule>& schedule,
          const std::string& source)
{
    for (const auto& f : faults)
    {
        if (!f.timed)
        {
            LinkFaultSpec spec;
            spec.link = f.selector;
            spec.factor = f.factor;
            network.faults.push_back(spec);
            continue;
        }
        if (!schedule)
        {
            schedule = CreateObject<FaultSchedule>();
        }
        schedule->Add(f.selector, f.factor, Seconds(f.startS), source);
    }
}

std::string
FaultOptionText(const std::vector<FaultOption>& faults)
{
    std::string out;
    for (const auto& f : faults)
    {
        out += (out.empty() ? "" : ",") + f.selector + ":" + FormatNumber(f.factor);
        if (f.timed)
        {
            out += "@" + FormatNumber(f.startS) + "s";
        }
    }
    return out;
}

std::map<uint32_t, std::vector<SpecOverride>>
ParseGpuSets(const std::string& text, uint64_t gpus, const std::string& source)
{
    std::map<uint32_t, std::vector<SpecOverride>> sets;
    auto each = [&](uint32_t gpu, const std::string& name, const std::string& rest)
    {
        std::vector<SpecOverride> overrides;
        // --set's examples would name fields a GPU set refuses: give a GPU's own.
        std::istringstream items(rest);
        for (std::string item; std::getline(items, item, ',');)
        {
            if (item.find('=') == std::string::npos)
            {
                throw SpecError(source,
                                "gpu-set",
                                name + ": '" + item
                                    + "' is not PATH=VALUE; e.g. gpu.hbm_bandwidth_GBps=0.5x, "
                                      "gpu.power.board_limit_w=400 or gpu.sm_count=100");
            }
        }
        try
        {
            overrides = SpecOverride::ParseList(rest, source);
        }
        catch (const SpecError& e)
        {
            throw SpecError(source, "gpu-set", name + ": " + e.GetMessage());
        }
        // What is costed again on the GPU: its kernels (and their energy), not its host's
        // launches, its links' energy or a memory capacity of its own.
        const std::vector<std::string> notOwn = {"gpu.host",
                                                 "gpu.hbm_gib",
                                                 "gpu.power.nvlink_pj_per_byte",
                                                 "gpu.power.network_pj_per_byte"};
        for (const auto& o : overrides)
        {
            const std::string& path = o.GetPath();
            if (path.rfind("gpu.", 0) != 0)
            {
                throw SpecError(source,
                                "gpu-set",
                                name + ": '" + o.GetText()
                                    + "': a GPU's own fields only (gpu.*); --set changes the "
                                      "model and the network");
            }
            for (const std::string& field : notOwn)
            {
                if (path == field || path.rfind(field + ".", 0) == 0)
                {
                    throw SpecError(source,
                                    "gpu-set",
                                    name + ": '" + o.GetText() + "': " + field
                                        + " is not one GPU's own in the model (its kernels are; "
                                          "the host's launches, the links' energy and the memory "
                                          "verdict are the job's); --set changes every GPU's");
                }
            }
        }
        sets[gpu] = std::move(overrides);
    };
    ForEachGpuItem(text,
                   ';',
                   gpus,
                   source,
                   "gpu-set",
                   "gpu<i>:PATH=VALUE[,PATH=VALUE...], e.g. gpu3:gpu.hbm_bandwidth_GBps=0.5x (GPU "
                   "3's HBM at half its bandwidth)",
                   each);
    return sets;
}

GpuSpec
GpuVariantOf(const std::string& source,
             const std::vector<SpecOverride>& overrides,
             uint32_t gpu,
             const std::string& origin)
{
    const std::string name = "gpu" + std::to_string(gpu);
    GpuSpec spec;
    try
    {
        spec = HardwareSpec::Load(source, overrides).gpu;
    }
    catch (const SpecError& e)
    {
        throw SpecError(origin,
                        "gpu-set",
                        name + ": " + (e.GetField().empty() ? "" : "'" + e.GetField() + "': ")
                            + e.GetMessage());
    }
    return spec;
}

std::string
SlowGpusText(const std::map<uint32_t, double>& speeds)
{
    std::string out;
    for (const auto& [gpu, speed] : speeds)
    {
        out += (out.empty() ? "gpu" : ",gpu") + std::to_string(gpu) + ":" + FormatNumber(speed);
    }
    return out;
}

void
CheckFaultSelectors(const std::vector<FaultOption>& faults,
                    const NetworkSpec& network,
                    uint32_t gpus,
                    const std::string& name,
                    const std::string& source,
                    const std::string& option)
{
    if (faults.empty())
    {
        return;
    }
    Ptr<Topology> topology = Topology::Build(network, gpus, name);
    for (const auto& f : faults)
    {
        try
        {
            topology->SelectLinks(f.selector, source);
        }
        catch (const SpecError& e)
        {
            throw SpecError(source, option, e.GetMessage());
        }
    }
}

void
CheckHardwareFaults(const NetworkSpec& network,
                    std::size_t count,
                    uint32_t gpus,
                    const std::string& name,
                    const std::string& file)
{
    if (count == 0)
    {
        return;
    }
    NetworkSpec healthy = network;
    healthy.faults.clear();
    Ptr<Topology> topology = Topology::Build(healthy, gpus, name);
    for (std::size_t i = 0; i < count && i < network.faults.size(); ++i)
    {
        try
        {
            topology->SelectLinks(network.faults[i].link, file);
        }
        catch (const SpecError& e)
        {
            throw SpecError(file, "network.faults[" + std::to_string(i) + "].link", e.GetMessage());
        }
    }
}

std::map<uint32_t, double>
ParseSlowGpus(const std::string& text, uint64_t gpus, const std::string& source)
{
    std::map<uint32_t, double> speeds;
    auto each = [&](uint32_t gpu, const std::string& name, const std::string& value)
    {
        double speed = 0;
        if (!ParseFiniteNumber(value, speed) || !(speed >= TraceReplayer::kMinSpeed && speed <= 1))
        {
            throw SpecError(source,
                            "slow-gpus",
                            "speed '" + value + "' of " + name
                                + ": allowed: 1e-6 to 1 (the share of its compute speed left)");
        }
        speeds[gpu] = speed;
    };
    ForEachGpuItem(text,
                   ',',
                   gpus,
                   source,
                   "slow-gpus",
                   "gpu<i>:SPEED, e.g. gpu3:0.5 (GPU 3 at half its compute speed)",
                   each);
    return speeds;
}

} // namespace rapidllm
} // namespace ns3
