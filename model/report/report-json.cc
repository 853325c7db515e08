/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "report-json.h"

#include <cmath>

namespace ns3 {
namespace rapidllm {

std::string
DumpJson(const Json& value)
{
    // nlohmann-json writes a non-finite number as null; replace keeps a stray byte in a name
    // from turning the whole report into an exception.
    return value.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

void
to_json(Json& j, const MemoryReport& m)
{
    const RankMemory& w = m.worst;
    j = Json::object();
    j["feasible"] = m.feasible;
    if (!m.feasible)
    {
        j["reason"] = m.reason;
    }
    j["peak_bytes"] = w.peak;
    j["capacity_bytes"] = m.capacity;
    j["weights"] = w.weights;
    j["gradients"] = w.gradients;
    j["optimizer"] = w.optimizer;
    j["activations"] = w.activations;
    j["kv_cache"] = w.kvCache;
    j["framework"] = w.framework;
    j["stage"] = w.stage;
    // Every stage as the peak's (memory --csv's rows): a stage short of the peak's fits or
    // not on its own.
    Json stages = Json::array();
    for (const RankMemory& r : m.stages)
    {
        stages.push_back({{"stage", r.stage},
                          {"peak_bytes", r.peak},
                          {"weights", r.weights},
                          {"gradients", r.gradients},
                          {"optimizer", r.optimizer},
                          {"activations", r.activations},
                          {"kv_cache", r.kvCache},
                          {"framework", r.framework}});
    }
    j["stages"] = stages;
    if (!m.assumption.empty())
    {
        j["assumption"] = m.assumption;
    }
}

void
to_json(Json& j, const LinkStats& s)
{
    // Whole bytes as an integer (a float lost nothing, but read as one: 20132659200.0).
    const bool whole = s.bytes >= 0 && s.bytes < 0x1p64 && s.bytes == std::floor(s.bytes);
    j = {{"link", s.name},
         {"bytes", whole ? Json(static_cast<uint64_t>(s.bytes)) : Json(s.bytes)},
         {"busy_s", s.busyTimeS},
         {"utilization", s.utilization}};
}

void
to_json(Json& j, const OperatorCost& c)
{
    const KernelTiling& t = c.tiling;
    j = Json::object();
    j["time_s"] = c.timeS;
    j["tflops"] = c.FlopRate() / 1e12;
    j["bound"] = ToString(c.SlowestLevel());
    j["overhead_dominated"] = c.bound == BoundLevel::LAUNCH;
    j["waves"] = c.waves;
    j["sm_utilization"] = c.smUtilization;
    j["utilization"] = c.utilization;
    if (c.clockHz > 0)
    {
        j["clock_mhz"] = c.clockHz / 1e6;
        j["power_w"] = c.powerW;
        j["energy_j"] = c.energyJ;                // what the kernel adds to the idle board
        j["board_energy_j"] = c.powerW * c.timeS; // the board's whole energy while it runs
    }
    j["tile"] = {{"m", t.blockM},
                 {"n", t.blockN},
                 {"k", t.blockK},
                 {"stages", t.stages},
                 {"split_k", t.splitK},
                 {"threads", t.threads},
                 {"blocks_per_sm", t.blocksPerSm},
                 {"smem_bytes", t.smemPerBlock}};
    j["tiles"] = c.tiles;
    j["kernels"] = c.kernels;
    j["flops"] = c.flops;
    j["bytes"] = {{"smem", c.smemBytes}, {"l2", c.l2Bytes}, {"hbm", c.hbmBytes}};
    j["level_time_s"] = {{"compute", c.computeTimeS},
                         {"smem", c.smemTimeS},
                         {"l2", c.l2TimeS},
                         {"hbm", c.hbmTimeS},
                         {"overhead", c.overheadTimeS}};
}

} // namespace rapidllm
} // namespace ns3
