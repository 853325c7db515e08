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

/** Whether every member of \p rank's \p kind group sits in \p rank's domain. */
bool
GroupIsLocal(const ParallelLayout& layout, uint32_t rank, GroupKind kind, uint32_t domainSize)
{
    const uint32_t home = DomainOf(rank, domainSize);
    for (uint32_t member : layout.Group(rank, kind))
    {
        if (DomainOf(member, domainSize) != home)
        {
            return false;
        }
    }
    return true;
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
        std::map<GroupKind, double> collectiveBytes;
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
                    sums.dynamicJ += energyOf[n.op];
                    break;
                case WorkNodeKind::COLLECTIVE:
                    sums.collectiveBytes[n.group] +=
                        BytesSentPerMember(n.collective, layout.GroupSize(n.group), n.commBytes);
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
            (GroupIsLocal(layout, r, c.first, domainSize) ? e.nvlinkBytes : e.networkBytes) +=
                c.second;
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
