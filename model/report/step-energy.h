/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_STEP_ENERGY_H
#define RAPIDLLM_STEP_ENERGY_H

#include "ns3/hardware-spec.h"
#include "ns3/workload.h"

#include <functional>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief The GPU energy of one step of a job (training iteration or inference request), summed
 * over every GPU, split by where it goes.
 *
 * Every GPU draws its idle power for the whole step; on top of it each kernel's dynamic energy
 * (its FLOPs and HBM bytes at the energies of the hardware preset, at the clock the power model
 * gave it) and each byte it sends at the per-byte energy of the link (NVLink inside the
 * innermost network dimension, the network beyond it).
 */
struct StepEnergy
{
    double idleJ = 0;        //!< idle power x step time x GPUs
    double computeJ = 0;     //!< dynamic energy of every kernel of every GPU
    double nvlinkJ = 0;      //!< bytes sent inside the innermost dimension x energy per byte
    double networkJ = 0;     //!< bytes sent across outer dimensions x energy per byte
    double nvlinkBytes = 0;  //!< bytes the GPUs sent inside the innermost dimension
    double networkBytes = 0; //!< bytes the GPUs sent across outer dimensions

    /** \return the whole step's energy, J */
    double TotalJ() const;
};

/**
 * \brief Bytes one member of a group of \p members sends for a collective over a buffer of
 * \p bytes, as ring algorithms (and NCCL's bus bandwidth) count them: all-reduce 2(n-1)/n of
 * the buffer, all-gather, reduce-scatter, all-to-all and broadcast (n-1)/n.
 * \param kind the collective
 * \param members group size
 * \param bytes the whole buffer
 * \return bytes sent by each member
 */
double BytesSentPerMember(CollectiveKind kind, uint32_t members, double bytes);

/**
 * \brief The energy of one step of \p w.
 *
 * Communication bytes are counted from the workload's collectives and sends (what each rank
 * sends, by the formula of BytesSentPerMember), not from the network backend's statistics: a
 * replay folds symmetric ranks and times repeated tensor-parallel collectives once, so its
 * link counters hold only part of the traffic. A group whose members all sit in one domain of
 * the innermost network dimension (ranks fill it first) sends over NVLink, any other over the
 * network (an upper bound for hierarchical collectives, whose intra-node legs cost less).
 * Each node's energy and bytes count its WorkNode::energyShareUnits: where the graph times the
 * busiest rank's routed experts (an imbalance, a rank whose experts may receive no token), the
 * step's energy is every rank's own work, the average rank's.
 *
 * \param w the workload (its graphs)
 * \param dynamicEnergy the dynamic energy of one operator (from the compute model)
 * \param hardware the GPU (idle power, per-byte energies) and the network (innermost domain)
 * \param stepTimeS the step time
 * \return the energy; zero with a GPU without a power model
 */
StepEnergy EstimateStepEnergy(const Workload& w,
                              const std::function<double(const OperatorDesc&)>& dynamicEnergy,
                              const HardwareSpec& hardware,
                              double stepTimeS);

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_STEP_ENERGY_H
