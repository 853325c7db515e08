/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_NCCL_COLLECTIVE_H
#define RAPIDLLM_NCCL_COLLECTIVE_H

#include "collective-algorithm.h"

#include <cstdint>
#include <string>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief NCCL's protocols, as its tuning model describes them.
 */
enum class NcclProtocol : uint8_t
{
    LL,     //!< low latency: 8-byte stores of 4 data bytes and a flag, no handshake
    LL128,  //!< 128-byte lines of 120 data bytes and a flag (NVLink only)
    SIMPLE, //!< bulk copies with a memory fence and a flag per chunk
};

/** \return "LL", "LL128" or "Simple" */
std::string ToString(NcclProtocol protocol);

/**
 * \ingroup rapid-llm
 * \brief What NCCL's own cost model predicts for one ring collective with one protocol.
 */
struct NcclEstimate
{
    NcclProtocol protocol = NcclProtocol::SIMPLE; //!< the protocol
    double latencyS = 0;        //!< base latency + steps x per-step latency, seconds
    double bandwidthFactor = 1; //!< bus bandwidth the protocol reaches over the link's
    double timeS = 0;           //!< latency + bytes / algorithm bandwidth, seconds
};

/**
 * \ingroup rapid-llm
 * \brief NCCL's tuning model for a ring (NCCL 2.20.3, src/graph/tuning.cc): base latency per
 * protocol, per-step latency per protocol and link kind (NVLink or network), and the share of
 * the link bandwidth each protocol reaches.
 * \param op all-reduce, reduce-scatter or all-gather \param ranks the group size
 * \param bytes the size (CollectiveRequest::bytes) \param network whether the ring's steps cross
 * the network (one rank per node) rather than NVLink \param busBytesPerS the link bandwidth a
 * rank's ring step gets (the dimension's bandwidth x wire efficiency)
 * \param protocol the protocol
 * \return the estimate
 */
NcclEstimate NcclRingEstimate(CollectiveOp op,
                              uint32_t ranks,
                              uint64_t bytes,
                              bool network,
                              double busBytesPerS,
                              NcclProtocol protocol);

/**
 * \ingroup rapid-llm
 * \brief A collective as NCCL runs it (registered as "nccl"): NCCL's own choice of protocol
 * (LL, LL128 or Simple) per op, group size, size and link kind, by NCCL's cost model
 * (NcclRingEstimate: the fastest wins), then the ring with that protocol's costs.
 *
 * The network charges each message its path latency; a hardware file sets its NVLink and
 * network latencies to the per-step latency of NCCL's LL protocol (the shortest a step can
 * take). On top, each rank pays before its first message the protocol's base latency and
 * its extra per-step latency over LL for every step of the ring, and the messages carry the
 * bytes the protocol puts on the wire (bytes / its bandwidth factor: LL's flags, LL128's
 * 8 flag bytes per 128). All-reduce, reduce-scatter and all-gather; the planner runs the other
 * ops with ring. NCCL's tree and NVLS algorithms are not chosen (within a node NCCL's model
 * picks the ring too, except NVLS on NVSwitch Hopper systems). The Protocol attribute forces
 * one protocol (as NCCL_PROTO does).
 */
class NcclCollective : public CollectiveAlgorithm
{
  public:
    /** \brief Register this type. \return the TypeId */
    static TypeId GetTypeId();

    bool Supports(CollectiveOp op, uint32_t ranks, std::string& why) const override;
    uint32_t GetDefaultChunks(CollectiveOp op, uint64_t bytes) const override;
    void AddMessages(ScheduleBuilder& b, const CollectiveCall& call) const override;
    void AddFluid(ScheduleBuilder& b, const CollectiveCall& call) const override;
    uint64_t CountMessages(const ScheduleBuilder& b, const CollectiveCall& call) const override;
    std::string Describe(const std::string& name,
                         const ScheduleBuilder& b,
                         const CollectiveCall& call) const override;

    /**
     * \brief NCCL's choice for \p call on \p b's network.
     * \param b the builder \param call the call \return the chosen protocol's estimate
     */
    NcclEstimate Choose(const ScheduleBuilder& b, const CollectiveCall& call) const;

  private:
    /** Writes the prologue, then the ring's messages or fluid form with the wire bytes. */
    void Write(ScheduleBuilder& b, const CollectiveCall& call, bool fluid) const;

    std::string m_protocol = "auto"; //!< attribute Protocol
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_NCCL_COLLECTIVE_H
