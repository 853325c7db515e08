/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_NCCL_COLLECTIVE_H
#define RAPIDLLM_NCCL_COLLECTIVE_H

#include "collective-algorithm.h"

#include <cstdint>
#include <string>
#include <vector>

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
 * \brief NCCL's algorithms that run inside one node here.
 */
enum class NcclAlgorithm : uint8_t
{
    RING, //!< a ring over the group (NCCL's default inside a node)
    NVLS, //!< NVLink SHARP: the NVSwitch reduces and multicasts (Hopper with NVSwitch, 3+ GPUs)
};

/** \return "ring" or "nvls" */
std::string ToString(NcclAlgorithm algorithm);

/**
 * \ingroup rapid-llm
 * \brief What NCCL's own cost model predicts for one collective with one algorithm and protocol.
 */
struct NcclEstimate
{
    NcclAlgorithm algorithm = NcclAlgorithm::RING; //!< the algorithm
    NcclProtocol protocol = NcclProtocol::SIMPLE;  //!< the protocol
    double latencyS = 0;        //!< base latency + steps x per-step latency, seconds
    double bandwidthFactor = 1; //!< bus bandwidth the protocol reaches over the link's
    double algBytesPerS = 0;    //!< algorithm bandwidth: bytes / (time - latency)
    double linkBytesPerS = 0;   //!< the link's payload rate the messages run at (Choose)
    double timeS = 0;           //!< latency + bytes / algorithm bandwidth, seconds
    /** Rings across nodes the bytes are split over (CrossNodeRings; 1 inside a node) */
    uint32_t rings = 1;
};

/**
 * \ingroup rapid-llm
 * \brief NCCL's all-to-all: grouped sends and receives (an ncclSend and an ncclRecv per peer in
 * one group), run by one point-to-point kernel whose protocol is LL up to
 * NCCL_P2P_LL_THRESHOLD (16 KiB) a peer, else Simple (NCCL 2.20.3, src/enqueue.cc). NCCL's
 * tuning model has no entry for it: the kernel pays its protocol's base latency (the ring's,
 * src/graph/tuning.cc) and one step's latency, as the peers' transfers run together on the
 * point-to-point channels; LL carries 4 data bytes in each 8-byte store.
 * \param bytesPerPeer the bytes each rank sends each peer \param network across the network
 * \return the estimate: protocol, latency and bandwidth factor (no bandwidth or time)
 */
NcclEstimate NcclAllToAllEstimate(uint64_t bytesPerPeer, bool network);

/**
 * \ingroup rapid-llm
 * \brief The rings NCCL's channels run for a group across nodes: where every node holds at
 * least k of its members, k rings, the i-th entering and leaving each node through its members
 * rotated by i, so each ring crosses between nodes through other GPUs, and so other NICs (NCCL's
 * inter-node graph gives each channel its own NIC); one ring, in \p members' order, otherwise.
 * \param view the network \param members the group's ranks \param endpoints their endpoints
 * \return the rings (each a permutation of \p members)
 */
std::vector<std::vector<uint32_t>> CrossNodeRings(const NetworkView& view,
                                                  const std::vector<uint32_t>& members,
                                                  const std::vector<uint32_t>& endpoints);

/**
 * \ingroup rapid-llm
 * \brief NCCL's tuning model for a ring (NCCL 2.20.3, src/graph/tuning.cc): base latency per
 * protocol, per-step latency per protocol and link kind (NVLink or network), and the share of
 * the link bandwidth each protocol reaches; LL128's ceiling per channel.
 * \param op all-reduce, reduce-scatter or all-gather \param ranks the group size
 * \param bytes the size (CollectiveRequest::bytes) \param network whether the ring's steps cross
 * the network (one rank per node) rather than NVLink \param busBytesPerS the ring graph's bus
 * bandwidth (channels x bandwidth per channel, or the link's payload rate when the hardware
 * file gives no NCCL graph) \param protocol the protocol \param ll128CeilingBytesPerS LL128's
 * bus bandwidth ceiling (channels x its ceiling per channel; 0 = none) \param nodes the nodes
 * the ring's ranks are on, which pick LL's ceiling and LL128's share across the network (0:
 * one rank per node)
 * \return the estimate
 */
NcclEstimate NcclRingEstimate(CollectiveOp op,
                              uint32_t ranks,
                              uint64_t bytes,
                              bool network,
                              double busBytesPerS,
                              NcclProtocol protocol,
                              double ll128CeilingBytesPerS = 0,
                              uint32_t nodes = 0);

/**
 * \ingroup rapid-llm
 * \brief NCCL's tuning model for NVLS inside one node (NCCL 2.20.3, src/graph/tuning.cc and
 * src/graph/search.cc): one channel per GPU (the heads), each at the fastest of NCCL's sm90
 * intra-node speeds for which (heads + 1) x speed fits one GPU's NVLink bandwidth (every
 * channel loads every GPU's NVSwitch link, the head's twice: ncclTopoSearchTryNvls); algorithm
 * bandwidth = heads x speed x 5/6; latency = NVLS's NVLink latency (23 us), no base latency.
 * \param op all-reduce, reduce-scatter or all-gather \param ranks GPUs (heads)
 * \param bytes the size \param gpuNvlinkBytesPerS one GPU's NVLink payload rate
 * \return the estimate (protocol Simple)
 */
NcclEstimate NcclNvlsEstimate(CollectiveOp op,
                              uint32_t ranks,
                              uint64_t bytes,
                              double gpuNvlinkBytesPerS);

/**
 * \ingroup rapid-llm
 * \brief A collective as NCCL runs it (registered as "nccl"): NCCL's own choice of algorithm
 * (ring, or NVLS where the dimension's NCCL graph has NVLink SHARP) and protocol (LL, LL128 or
 * Simple) per op, group size, size and link kind, by NCCL's cost model (NcclRingEstimate,
 * NcclNvlsEstimate: the fastest wins), then that algorithm with its costs.
 *
 * The network charges each message its path latency; a hardware file sets its NVLink and
 * network latencies to the per-step latency of NCCL's LL protocol (the shortest a step can
 * take). On top, each rank pays before its first message the protocol's base latency and
 * its extra per-step latency over LL for every step of the ring, and the messages carry the
 * bytes the protocol puts on the wire (bytes / its bandwidth factor: LL's flags, LL128's
 * 8 flag bytes per 128, and the ring graph's bus bandwidth below the link's). NVLS runs as
 * one message per ordered pair whose bytes put on each GPU's NVLink the time NCCL's NVLS
 * bandwidth gives (the switch's reduction and multicast are not messages of their own).
 * All-reduce, reduce-scatter and all-gather; broadcast and reduce as a pipelined chain along
 * each ring (across nodes one ring per NIC, as the all-reduce's); all-to-all as NCCL's grouped
 * sends and receives (NcclAllToAllEstimate: its latency, then direct's pairwise messages).
 * NCCL's tree is not chosen (within a node NCCL's model picks the ring or NVLS). The Protocol
 * attribute forces one protocol (as NCCL_PROTO does), the Algorithm attribute one algorithm
 * (as NCCL_ALGO does).
 */
class NcclCollective : public CollectiveAlgorithm
{
  public:
    /** \brief Register this type. \return the TypeId */
    static TypeId GetTypeId();

    bool Supports(CollectiveOp op, uint32_t ranks, std::string& why) const override;
    uint32_t GetDefaultChunks(CollectiveOp op, uint64_t bytes) const override;
    uint64_t GetPieceBytes(CollectiveOp op, uint64_t bytes) const override;
    void AddMessages(ScheduleBuilder& b, const CollectiveCall& call) const override;
    void AddFluid(ScheduleBuilder& b, const CollectiveCall& call) const override;
    uint64_t CountMessages(const ScheduleBuilder& b, const CollectiveCall& call) const override;
    std::string Describe(const std::string& name,
                         const ScheduleBuilder& b,
                         const CollectiveCall& call) const override;
    uint32_t GetSmCount(const ScheduleBuilder& b, const CollectiveCall& call) const override;
    uint32_t GetP2pSmCount(const ScheduleBuilder& b,
                           const CollectiveCall& communicator) const override;

    /**
     * \brief NCCL's choice for \p call on \p b's network.
     * \param b the builder \param call the call \return the chosen protocol's estimate
     */
    NcclEstimate Choose(const ScheduleBuilder& b, const CollectiveCall& call) const;

  private:
    /**
     * The channels NCCL builds for \p call's members as a communicator: 2 x the graph's rings
     * inside one NVSwitch dimension, the network's channels per GPU in a node across it (at
     * most 16); 0 where neither applies. \param network set when the members span a fat tree
     */
    uint64_t CommunicatorChannels(const ScheduleBuilder& b,
                                  const CollectiveCall& call,
                                  bool& network) const;
    /** Writes the prologue, then the ring's messages or fluid form with the wire bytes. */
    void Write(ScheduleBuilder& b, const CollectiveCall& call, bool fluid) const;

    std::string m_protocol = "auto";  //!< attribute Protocol
    std::string m_algorithm = "auto"; //!< attribute Algorithm
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_NCCL_COLLECTIVE_H
