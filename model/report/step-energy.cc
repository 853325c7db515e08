/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "step-energy.h"

#include <map>
#include <utility>

namespace ns3 {
namespace rapidllm {

double
StepEnergy::TotalJ() const
{
    return idleJ + computeJ + nvlinkJ + networkJ;
}

double
BytesSentPerMember(CollectiveKind kind, uint32_t members, double bytes)
{
    if (members <= 1)
    {
        return 0.0;
    }
    const double share = double(members - 1) / members;
    return kind == CollectiveKind::ALL_REDUCE ? 2.0 * share * bytes : share * bytes;
}

namespace {
/** The innermost-dimension domain of \p rank (ranks fill the innermost dimension first). */
uint32_t
DomainOf(uint32_t rank, uint32_t domainSize)
{
    return domainSize == 0 ? 0 : rank / domainSize;
}

/**
 * The share of the bytes \p rank sends in a \p kind collective of its \p kind group that leave
 * its domain. An all-to-all sends an equal share to every other member: the share of them
 * outside. The others run as a ring over the members in rank order (NCCL's ring enters and leaves
 * each node once): the share of its hops that cross a domain boundary (a 16-GPU group over two
 * 8-GPU nodes: 2 of 16).
 */
double
NetworkShare(const ParallelLayout& layout,
             uint32_t rank,
             GroupKind kind,
             CollectiveKind collective,
             uint32_t domainSize)
{
    const std::vector<uint32_t> members = layout.Group(rank, kind);
    const std::size_t n = members.size();
    if (n <= 1)
    {
        return 0.0;
    }
    std::size_t crossing = 0;
    if (collective == CollectiveKind::ALL_TO_ALL)
    {
        const uint32_t home = DomainOf(rank, domainSize);
        for (uint32_t member : members)
        {
            crossing += DomainOf(member, domainSize) != home ? 1 : 0;
        }
        return double(crossing) / double(n - 1);
    }
    for (std::size_t i = 0; i < n; ++i)
    {
        crossing +=
            DomainOf(members[i], domainSize) != DomainOf(members[(i + 1) % n], domainSize) ? 1 : 0;
    }
    return double(crossing) / double(n);
}
} // namespace

StepEnergy
EstimateStepEnergy(const Workload& w,
                   const std::function<double(const OperatorDesc&)>& dynamicEnergy,
                   const HardwareSpec& hardware,
                   double stepTimeS)
{
    StepEnergy e;
    const GpuPower& power = hardware.gpu.power;
    if (!power.Has())
    {
        return e;
    }
    const ParallelLayout& layout = w.layout;
    const uint32_t ranks = layout.Ranks();
    e.idleJ = power.WaitingW() * stepTimeS * ranks;
    // With one network dimension every GPU shares it (a single NVLink domain); otherwise the
    // innermost dimension is the scale-up domain (size 0: sized to the job, one domain).
    const auto& dims = hardware.network.dimensions;
    const uint32_t domainSize = dims.empty() ? 0 : dims.front().size;

    // Per stage (every rank of a stage runs the same graph): dynamic energy of its kernels,
    // bytes each rank sends per collective group, and per point-to-point peer direction.
    struct StageSums
    {
        double dynamicJ = 0;
        std::map<std::pair<GroupKind, CollectiveKind>, double> collectiveBytes;
        std::map<std::pair<GroupKind, int32_t>, double> sendBytes;
    };
    std::vector<StageSums> stages(w.stages.size());
    for (std::size_t s = 0; s < w.stages.size(); ++s)
    {
        StageSums& sums = stages[s];
        const StageGraph& g = w.stages[s];
        std::vector<double> energyOf; // per distinct operator
        energyOf.reserve(g.ops.size());
        for (const OperatorDesc& op : g.ops)
        {
            energyOf.push_back(dynamicEnergy(op));
        }
        for (const WorkNode& n : g.nodes)
        {
            switch (n.kind)
            {
                case WorkNodeKind::COMPUTE:
                    sums.dynamicJ += energyOf[n.op] * n.EnergyShare();
                    break;
                case WorkNodeKind::COLLECTIVE:
                    sums.collectiveBytes[{n.group, n.collective}] +=
                        BytesSentPerMember(n.collective, layout.GroupSize(n.group), n.commBytes)
                        * n.EnergyShare();
                    break;
                case WorkNodeKind::SEND:
                    sums.sendBytes[{n.group, n.peerOffset}] += double(n.commBytes);
                    break;
                case WorkNodeKind::RECV:
                    break;
            }
        }
    }
    for (uint32_t r = 0; r < ranks; ++r)
    {
        const StageSums& sums = stages.at(layout.Stage(r));
        e.computeJ += sums.dynamicJ;
        for (const auto& c : sums.collectiveBytes)
        {
            const double network =
                c.second * NetworkShare(layout, r, c.first.first, c.first.second, domainSize);
            e.networkBytes += network;
            e.nvlinkBytes += c.second - network;
        }
        for (const auto& p : sums.sendBytes)
        {
            // The peer as the traces name it: the coordinate along the axis plus the offset,
            // modulo the axis size.
            const int64_t size = layout.AxisSize(p.first.first);
            const int64_t coord = int64_t(layout.Coord(r, p.first.first)) + p.first.second;
            const uint32_t peer =
                layout.WithCoord(r, p.first.first, uint32_t(((coord % size) + size) % size));
            (DomainOf(peer, domainSize) == DomainOf(r, domainSize) ? e.nvlinkBytes
                                                                   : e.networkBytes) += p.second;
        }
    }
    e.nvlinkJ = e.nvlinkBytes * power.nvlinkJPerByte;
    e.networkJ = e.networkBytes * power.networkJPerByte;
    return e;
}

} // namespace rapidllm
} // namespace ns3
