/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// Speed of the ns-3 packet-level network against the flow-level network (a timed program):
//  1. a bulk TCP transfer over one PointToPoint link with PacketNetwork's settings: data
//     packets per wall second (the ns-3 scale every packet-level number is measured against);
//  2. the 64-GPU 256 MiB ring all-reduce of `rapid-llm xval` on both backends: wall times,
//     speed-up of the flow network (target >= 100x) and the packet backend's data packets per
//     wall second.
// Usage: packet-network-bench [--quick] (16 MiB instead of 256 MiB in part 2)

#include "ns3/cross-validation.h"
#include "ns3/nstime.h"

#include <cstdio>
#include <cstring>
#include <ctime>

using namespace ns3;
using namespace ns3::rapidllm;

int
main(int argc, char** argv)
{
    const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
    Time::SetResolution(Time::PS);

    // 1. One link, one bulk message.
    {
        NetworkDimensionSpec d;
        d.name = "link";
        d.kind = TopologyKind::RING;
        d.size = 2;
        d.bandwidthBps = 25e9;
        d.latencyS = 1e-6;
        d.wireEfficiency = 0.94;
        NetworkSpec net;
        net.dimensions.push_back(d);
        net.routing = "dimension-order";
        const uint64_t bytes = 256ull << 20;
        CollectiveSchedule s(2);
        s.AddSend(0, 1, bytes, {});
        XvalWorkload w = ScheduleWorkload(s, {0, 1});
        w.name = "bulk-one-link";
        w.network = net;
        w.endpoints = 2;
        XvalRun flow = RunXvalWorkload(w, "flow");
        const std::clock_t cpu0 = std::clock();
        XvalRun packet = RunXvalWorkload(w, "packet");
        const double cpu = double(std::clock() - cpu0) / CLOCKS_PER_SEC;
        std::printf("bulk transfer, one 25 GB/s link, 256 MiB\n"
                    "  simulated: flow %.3f us, packet %.3f us (%.2f%%)\n"
                    "  packet backend: %llu data packets in %.3f s wall = %.0f packets/s "
                    "(%.3f s CPU = %.0f packets/CPU-s)\n",
                    flow.timeS * 1e6,
                    packet.timeS * 1e6,
                    (flow.timeS - packet.timeS) / packet.timeS * 100,
                    static_cast<unsigned long long>(packet.dataPackets),
                    packet.wallS,
                    packet.dataPackets / packet.wallS,
                    cpu,
                    packet.dataPackets / cpu);
    }

    // 2. The 64-GPU ring all-reduce of the cross-validation table.
    const std::string name = quick ? "ring-allreduce-64gpu-16MiB" : "ring-allreduce-64gpu-256MiB";
    for (const auto& w : XvalWorkloads(false))
    {
        if (w.name != name)
        {
            continue;
        }
        const std::clock_t cpu0 = std::clock();
        XvalRow row = CrossValidate(w);
        const double cpu = double(std::clock() - cpu0) / CLOCKS_PER_SEC;
        std::printf("%s\n"
                    "  simulated: flow %.3f us, packet %.3f us (%+.2f%%)\n"
                    "  wall: flow %.4f s, packet %.3f s, flow is %.0fx faster\n"
                    "  packet backend: %llu data packets, %.0f packets/s of wall time (both "
                    "backends: %.3f s CPU)\n",
                    name.c_str(),
                    row.flow.timeS * 1e6,
                    row.packet.timeS * 1e6,
                    row.relDiff * 100,
                    row.flow.wallS,
                    row.packet.wallS,
                    row.packet.wallS / row.flow.wallS,
                    static_cast<unsigned long long>(row.packet.dataPackets),
                    row.packet.dataPackets / row.packet.wallS,
                    cpu);
    }
    return 0;
}
