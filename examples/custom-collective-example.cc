/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// A researcher's own collective algorithm, written and registered in this file only: a
// bidirectional ring all-reduce. The buffer is split in two halves; one half runs NCCL's ring
// all-reduce clockwise, the other counter-clockwise, both at once. On a ring of full-duplex
// links a one-way ring leaves every link's other direction idle, so the bidirectional one
// halves the bandwidth term and keeps the latency term:
//
//   ring:               T = 2(n-1)/n x S/B     + 2(n-1) a
//   bidirectional ring: T = 2(n-1)/n x S/(2B)  + 2(n-1) a
//
// It is registered under the name "bidirectional-ring", so a request, the replayer's
// CollectiveAlgorithm attribute, `rapid-llm collective --algorithm` (with the class in a loaded
// library) or a hardware file's `network.dimensions.<name>.collective` can choose it. Here we
// run it next to the built-in ring on the same ring network through the public API, print both
// times, and check them against the closed forms above (exit status 1 if either is off by more
// than 1%).
//
//   build/bin/custom-collective-example [--gpus=8] [--mib=256]

#include "ns3/collective-algorithm.h"
#include "ns3/collective-algorithms.h"
#include "ns3/collective-engine.h"
#include "ns3/command-line.h"
#include "ns3/network-backend.h"
#include "ns3/ring-collective.h"
#include "ns3/routing-policy.h"
#include "ns3/simulator.h"
#include "ns3/topology.h"

#include <cmath>
#include <iomanip>
#include <iostream>

using namespace ns3;
using namespace ns3::rapidllm;

/**
 * \brief Bidirectional ring all-reduce: half the buffer around the ring in each direction, both
 * halves at once.
 */
class BidirectionalRing : public CollectiveAlgorithm
{
  public:
    /** \brief Register this type. \return the TypeId */
    static TypeId
    GetTypeId()
    {
        static TypeId tid = TypeId("ns3::example::BidirectionalRing")
                                .SetParent<CollectiveAlgorithm>()
                                .AddConstructor<BidirectionalRing>();
        return tid;
    }

    bool
    Supports(CollectiveOp op, uint32_t ranks, std::string& why) const override
    {
        why = "bidirectional-ring runs all-reduce only, not " + ToString(op);
        return op == CollectiveOp::ALL_REDUCE;
    }

    void
    AddMessages(ScheduleBuilder& b, const CollectiveCall& call) const override
    {
        const std::vector<uint32_t>& clockwise = call.members;
        const std::vector<uint32_t> counter(clockwise.rbegin(), clockwise.rend());
        const uint64_t halves[2] = {call.bytes / 2, call.bytes - call.bytes / 2};
        // Both directions start from the same readiness; a rank is done when both are.
        std::vector<ScheduleBuilder::Step> start;
        for (uint32_t r : clockwise)
        {
            start.push_back(b.GetReady(r));
        }
        std::vector<std::vector<ScheduleBuilder::Step>> done(clockwise.size());
        for (int direction = 0; direction < 2; ++direction)
        {
            for (std::size_t i = 0; i < clockwise.size(); ++i)
            {
                b.SetReady(clockwise[i], start[i]);
            }
            const auto& order = direction == 0 ? clockwise : counter;
            RingCollective::AddPass(b, order, halves[direction], true);  // reduce-scatter
            RingCollective::AddPass(b, order, halves[direction], false); // all-gather
            for (std::size_t i = 0; i < clockwise.size(); ++i)
            {
                done[i].push_back(b.GetReady(clockwise[i]));
            }
        }
        for (std::size_t i = 0; i < clockwise.size(); ++i)
        {
            b.SetReady(clockwise[i], b.Join(clockwise[i], done[i]));
        }
    }
};

// One line makes the algorithm available by name everywhere.
static TypeRegistrar<CollectiveAlgorithm> g_bidirectionalRing("bidirectional-ring",
                                                              BidirectionalRing::GetTypeId());

/** \return completion time of an all-reduce of \p bytes among every GPU with \p algorithm */
static double
AllReduceTime(const NetworkSpec& spec, const std::string& algorithm, uint64_t bytes)
{
    Ptr<NetworkBackend> net = NetworkBackend::Create("flow");
    net->SetTopology(Topology::Build(spec, 0));
    net->SetRouting(RoutingPolicy::Create(spec.routing));
    Ptr<CollectiveEngine> engine = CreateObject<CollectiveEngine>();
    engine->SetBackend(net);
    CollectiveRequest request;
    request.op = CollectiveOp::ALL_REDUCE;
    request.bytes = bytes;
    request.algorithm = algorithm;
    for (uint32_t i = 0; i < net->GetView().GetEndpointCount(); ++i)
    {
        request.endpoints.push_back(i);
    }
    double end = -1;
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
    uint32_t gpus = 8;
    uint64_t mib = 256;
    CommandLine cmd(__FILE__);
    cmd.AddValue("gpus", "GPUs on the ring", gpus);
    cmd.AddValue("mib", "MiB per rank", mib);
    cmd.Parse(argc, argv);

    const double bandwidth = 50e9; // per link and direction
    const double latency = 1e-6;   // per link
    NetworkDimensionSpec ring;
    ring.name = "ring";
    ring.kind = TopologyKind::RING;
    ring.size = gpus;
    ring.bandwidthBps = bandwidth;
    ring.latencyS = latency;
    NetworkSpec spec;
    spec.dimensions.push_back(ring);
    spec.routing = "dimension-order";
    const uint64_t bytes = mib << 20;
    const double n = gpus;

    std::cout << "Collective algorithms known: ";
    for (const auto& name : CollectiveAlgorithmNames())
    {
        std::cout << name << " ";
    }
    std::cout << "\nAll-reduce of " << mib << " MiB per rank on a ring of " << gpus
              << " GPUs (50 GB/s, 1 us per link)\n";

    struct Row
    {
        const char* label;     //!< what runs
        std::string algorithm; //!< the request's algorithm
        bool preferred;        //!< the dimension's `collective` names bidirectional-ring
        double closedForm;     //!< expected time, s
    };

    const double ringForm = 2 * (n - 1) / n * bytes / bandwidth + 2 * (n - 1) * latency;
    const double biForm = 2 * (n - 1) / n * bytes / (2 * bandwidth) + 2 * (n - 1) * latency;
    const Row rows[] = {
        {"ring", "ring", false, ringForm},
        {"bidirectional-ring", "bidirectional-ring", false, biForm},
        {"auto, dimension prefers it", "auto", true, biForm},
    };
    bool ok = true;
    std::cout << std::fixed << std::setprecision(3);
    for (const Row& row : rows)
    {
        NetworkSpec s = spec;
        if (row.preferred)
        {
            s.dimensions[0].collective = "bidirectional-ring";
        }
        const double t = AllReduceTime(s, row.algorithm, bytes);
        const double error = std::abs(t / row.closedForm - 1);
        ok = ok && error < 0.01;
        std::cout << "  " << std::left << std::setw(28) << row.label << std::right << std::setw(9)
                  << t * 1e3 << " ms  (closed form " << row.closedForm * 1e3 << " ms, "
                  << std::setprecision(2) << error * 100 << "% off)\n"
                  << std::setprecision(3);
    }
    std::cout << (ok ? "both match their closed forms\n" : "MISMATCH with the closed forms\n");
    return ok ? 0 : 1;
}
