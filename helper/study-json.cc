/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "study-json.h"

namespace ns3 {
namespace rapidllm {

void
to_json(Json& j, const ValidationRow& r)
{
    j = Json::object();
    j["set"] = r.set;
    j["config"] = r.label;
    j["metric"] = r.metric;
    j["published"] = r.published;
    j["predicted"] = r.predicted;
    j["error"] = r.Error();
    j["fits"] = r.fits; // false: the memory model refuses the measured configuration
}

void
to_json(Json& j, const SweepPoint& p)
{
    j = Json::object();
    j["tp"] = p.run.parallel.tp;
    j["pp"] = p.run.parallel.pp;
    j["dp"] = p.run.parallel.dp;
    j["vpp"] = p.run.parallel.virtualStages;
    j["mbs"] = p.run.microBatch;
    j["recompute"] = ToString(p.run.recompute);
    j["feasible"] = p.report.feasible;
    j["reason"] = p.report.reason;
    j["peak_bytes"] = p.report.memory.peak;
    if (p.report.feasible)
    {
        j["step_time_s"] = p.report.stepTimeS;
        j["tflops_per_gpu"] = p.report.tflopsPerGpu;
        j["mfu"] = p.report.mfu;
    }
}

void
to_json(Json& j, const CollectiveProbeResult& r)
{
    j = Json::object();
    j["algorithm"] = r.algorithm;
    j["routing"] = r.routing;
    j["messages"] = r.messages;
    j["time_s"] = r.timeS;
    j["algorithm_bandwidth_GBps"] = r.algorithmBandwidthBps / 1e9;
    j["bus_bandwidth_GBps"] = r.busBandwidthBps / 1e9;
    if (r.packet)
    {
        // Retransmissions after drops are what a slow packet run is made of.
        j["data_packets"] = r.dataPackets;
        j["packet_drops"] = r.drops;
    }
    j["most_loaded_links"] = r.mostLoaded;
}

void
to_json(Json& j, const XvalRow& r)
{
    j = Json::object();
    j["workload"] = r.workload;
    j["flow_s"] = r.flow.timeS;
    j["packet_s"] = r.packet.timeS;
    j["rel_diff"] = r.relDiff;
    j["packet_data_packets"] = r.packet.dataPackets;
    j["packet_drops"] = r.packet.drops;
    j["messages"] = r.flow.messages;
}

} // namespace rapidllm
} // namespace ns3
