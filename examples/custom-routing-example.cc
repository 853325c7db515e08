/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// A researcher's own routing policy, chosen by name: Valiant load balancing, written and
// registered in examples/plugins/valiant-routing.cc alone (linked into this program, and also
// built as a shared library that `rapid-llm <command> --load=...` uses). Here we compare it with
// dimension-order routing on a torus running an all-to-all and a tornado pattern. (With a few
// large flows the random intermediates make hot spots of their own, so dimension order wins
// both here; what the example shows is that a policy lives entirely in user code.)
//
//   build/bin/custom-routing-example [--side=8] [--mib=64]

#include "ns3/collective-engine.h"
#include "ns3/command-line.h"
#include "ns3/network-backend.h"
#include "ns3/routing-policy.h"
#include "ns3/simulator.h"
#include "ns3/topology.h"

#include <iomanip>
#include <iostream>

using namespace ns3;
using namespace ns3::rapidllm;

/** \return completion time of a collective request under a routing policy */
static double
Run(Ptr<Topology> topology, const std::string& routing, const CollectiveRequest& request)
{
    Ptr<NetworkBackend> net = NetworkBackend::Create("flow");
    net->SetTopology(topology);
    net->SetRouting(RoutingPolicy::Create(routing));
    Ptr<CollectiveEngine> engine = CreateObject<CollectiveEngine>();
    engine->SetBackend(net);
    double end = 0;
    Simulator::ScheduleNow(
        [&]()
        {
            engine->Start(request,
                          CollectiveEngine::RankDoneCallback(),
                          CollectiveEngine::DoneCallback(
                              [&](uint64_t)
                              {
                                  end = Simulator::Now().GetSeconds();
                              }));
        });
    Simulator::Run();
    Simulator::Destroy();
    return end;
}

int
main(int argc, char** argv)
{
    uint32_t side = 8;
    uint64_t mib = 64;
    CommandLine cmd(__FILE__);
    cmd.AddValue("side", "torus side (side x side GPUs)", side);
    cmd.AddValue("mib", "MiB per rank", mib);
    cmd.Parse(argc, argv);

    NetworkDimensionSpec torus;
    torus.name = "ici";
    torus.kind = TopologyKind::TORUS;
    torus.shape = {side, side};
    torus.size = side * side;
    torus.bandwidthBps = 50e9;
    torus.latencyS = 1e-6;
    NetworkSpec spec;
    spec.dimensions.push_back(torus);
    Ptr<Topology> topology = Topology::Build(spec, 0);

    CollectiveRequest allToAll;
    allToAll.op = CollectiveOp::ALL_TO_ALL;
    allToAll.bytes = mib << 20;
    for (uint32_t i = 0; i < side * side; ++i)
    {
        allToAll.endpoints.push_back(i);
    }

    std::cout << "Routing policies known: ";
    for (const auto& n : RoutingPolicy::Names())
    {
        std::cout << n << " ";
    }
    std::cout << "\n" << side << "x" << side << " torus, " << mib << " MiB per rank\n";
    std::cout << std::fixed << std::setprecision(3);
    for (const std::string routing : {"dimension-order", "valiant"})
    {
        double a2a = Run(topology, routing, allToAll);
        // Tornado: every rank sends its whole buffer side/2 - 1 hops along X, so dimension
        // order loads every +X link with side/2 - 1 flows and leaves the -X and Y links idle
        // (Dally and Towles, "Principles and Practices of Interconnection Networks", 2004);
        // Valiant spreads it over all links at twice the path length, with random hot spots.
        double shift = 0;
        {
            Ptr<NetworkBackend> net = NetworkBackend::Create("flow");
            net->SetTopology(topology);
            net->SetRouting(RoutingPolicy::Create(routing));
            const uint32_t n = side * side;
            Simulator::ScheduleNow(
                [&]()
                {
                    for (uint32_t i = 0; i < n; ++i)
                    {
                        uint32_t x = (i % side + side / 2 - 1) % side;
                        uint32_t y = i / side;
                        net->Send(i,
                                  x + side * y,
                                  mib << 20,
                                  [&](uint64_t)
                                  {
                                      shift = Simulator::Now().GetSeconds();
                                  });
                    }
                });
            Simulator::Run();
            Simulator::Destroy();
        }
        std::cout << "  " << std::setw(16) << routing << "  all-to-all " << a2a * 1e3
                  << " ms   tornado " << shift * 1e3 << " ms\n";
    }
    return 0;
}
