/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "hopper-attention-kernel-model.h"

#include "attention-tiling.h"
#include "gpu-kernel-common.h"
#include "ns3/log.h"
#include "ns3/spec-error.h"

#include <algorithm>
#include <string>

namespace ns3 {
namespace rapidllm {
namespace kernel {

NS_LOG_COMPONENT_DEFINE("RapidLlmHopperAttentionKernelModel");

namespace {

/** Rows of the query tile one consumer warpgroup owns: the M of a warpgroup MMA. */
constexpr uint32_t kWarpgroupRows = 64;
/** Threads of one warpgroup. */
constexpr uint32_t kWarpgroupThreads = 128;
/** Registers the producer warpgroup keeps (it hands the rest to the consumers). */
constexpr uint32_t kProducerRegisters = 24;
/** Registers a consumer thread needs besides its accumulators (addresses, row statistics). */
constexpr uint32_t kConsumerOverheadRegisters = 32;
/** CUDA-core operations per score element of the backward's element-wise work: P from S and
 *  the log-sum-exp (one FMA), dS = P * (dP - D) (two), P and dS to 16 bits (one, paired). */
constexpr double kBackwardOpsPerScore = 4;

/** Throws unless \p g has what the warp-specialized kernels need and \p type is theirs. */
void
RequireHopper(const GpuSpec& g, DataType type)
{
    if (type == DataType::FP32 || type == DataType::TF32)
    {
        throw SpecError(g.Origin(),
                        "attention",
                        "the Hopper attention kernels (--attention=flash3) take fp16, bf16 or fp8, "
                        "not "
                            + ToString(type)
                            + " (--dtype); --attention=flash or auto runs FlashAttention-2's");
    }
    if (!g.warpSpecialized)
    {
        throw SpecError(g.Origin(),
                        "gpu.warp_specialized",
                        "the Hopper attention kernels (--attention=flash3) need a GPU with "
                        "warp-specialized warpgroup MMAs (warp_specialized: true); use "
                        "--attention=flash on this GPU");
    }
    if (g.sfuOpsPerClockPerSm == 0)
    {
        throw SpecError(g.Origin(),
                        "gpu.sfu_ops_per_clock_per_sm",
                        "the Hopper attention kernels need the special-function (exp2) rate per "
                        "SM and clock, a whole number (16 on sm80/sm90)");
    }
}

/** The fastest of the tilings a kernel model offers; none fitting is an error. */
class FastestTiling
{
  public:
    /** Keeps \p c if it is the fastest so far (the first of equals). */
    void
    Offer(const OperatorCost& c)
    {
        if (!m_found || c.timeS < m_best.timeS * (1 - 1e-12))
        {
            m_best = c;
            m_found = true;
        }
    }

    /** \return the fastest; throws SpecError naming \p pass and the head dimension if none fit */
    const OperatorCost&
    Best(const GpuSpec& g, const std::string& pass, uint64_t headDim) const
    {
        if (!m_found)
        {
            throw SpecError(g.Origin(),
                            "attention",
                            "no Hopper attention " + pass + " tiling fits head dimension "
                                + std::to_string(headDim)
                                + " in this GPU's shared memory and registers "
                                  "(shared_memory_per_block_kib, registers_per_sm, "
                                  "max_threads_per_sm); --attention=flash runs "
                                  "FlashAttention-2's kernel");
        }
        return m_best;
    }

  private:
    OperatorCost m_best;  //!< the fastest so far
    bool m_found = false; //!< whether any tiling fit
};

/** \return the registers one of \p consumers consumer warpgroups' threads may use */
uint32_t
ConsumerRegisters(const GpuSpec& g, uint32_t consumers)
{
    const uint32_t perThread = g.registersPerSm / kWarpgroupThreads;
    const uint32_t share = (perThread - kProducerRegisters) / consumers;
    return std::min<uint32_t>(255, share / 8 * 8);
}

} // namespace

OperatorCost
HopperAttentionForward(const GpuSpec& g, const AttentionShape& s, DataType type)
{
    RequireHopper(g, type);
    const uint32_t sms = g.smCount;
    const auto [b, d, bh, tensor, peak, perSmRate, perSmVector, smemRate] =
        RatesOf(g, s, type, false);
    (void) perSmVector;
    const double sfuRate = g.sfuOpsPerClockPerSm * g.clockHz;
    const double pairs = ScoredPairs(s);
    FastestTiling fastest;
    static const uint32_t kConsumers[] = {2, 3};
    static const uint32_t kBc[] = {64, 80, 128, 176};
    for (uint32_t consumers : kConsumers)
    {
        const uint32_t br = kWarpgroupRows * consumers;
        for (uint32_t bc : kBc)
        {
            // Q resident, K and V in a two-stage TMA ring; O leaves through Q's buffer.
            const auto smem = uint64_t((br * d + 2.0 * 2 * bc * d) * b);
            // Per consumer thread: its share of S (fp32), of P (16-bit pairs) and of O (fp32).
            const double regs = bc / 2.0 + bc / 4.0 + s.headDim / 2.0 + kConsumerOverheadRegisters;
            if (smem > g.sharedMemoryPerBlockBytes || regs > ConsumerRegisters(g, consumers))
            {
                continue;
            }
            const uint32_t threads = kWarpgroupThreads * (consumers + 1);
            const BlockPairs visited = VisitedBlocks(s, br, bc);
            const uint64_t ctas = uint64_t(bh) * visited.queryBlocks;
            const double totalPairs = visited.total * bh;
            const double avgPairs = totalPairs / double(ctas);
            // The MMAs of a pair at the GEMM's per-SM rate, then its exponentials on the
            // special-function units, in series: FlashAttention-3's own accounting (its
            // exponentials take half the MMAs' cycles at head dimension 128) and its published
            // rates at head dimensions 64, 128 and 256, which follow the sum, not the larger of the
            // two. The rest of the softmax runs under the other warpgroup's MMAs (ping-pong).
            const double tMma = 4.0 * br * bc * d / perSmRate;
            const double tExp = double(br) * bc / sfuRate;
            const double cPair = tMma + tExp;
            // Each warpgroup reads its Q rows, and all of K and V, from shared memory.
            const double smemPair = (br * d + 2.0 * consumers * bc * d) * b;
            const double sPair = smemPair / smemRate;
            const double x = std::max(cPair, sPair);
            const double tCompute =
                std::max(WaveTime(ctas, sms, 1, avgPairs * cPair), double(visited.most) * cPair);
            const double tSmem =
                std::max(WaveTime(ctas, sms, 1, avgPairs * sPair), double(visited.most) * sPair);
            const double tSm =
                std::max(WaveTime(ctas, sms, 1, avgPairs * x), double(visited.most) * x);
            const FusedAttentionIo io = FusedAttentionIoOf(s, bh, d, b);
            const double l2Bytes = 2 * io.q + io.lse + totalPairs * 2.0 * bc * d * b;
            const double l2Rate = L2Rate(g, ctas);
            const double tL2 = l2Bytes / l2Rate;
            const double tHbm = io.forward / HbmRate(g, l2Rate);
            const double waves = double(CeilDiv(ctas, uint64_t(sms)));
            const double overhead = g.launchOverheadS + waves * g.memoryLatencyS;
            OperatorCost c = FusedAttentionCost({"attention_fwd",
                                                 overhead,
                                                 0.0,
                                                 tSm,
                                                 tL2,
                                                 tHbm,
                                                 tCompute,
                                                 tSmem,
                                                 4.0 * s.batch * s.heads * d * pairs,
                                                 totalPairs * smemPair,
                                                 l2Bytes,
                                                 io.forward},
                                                tensor,
                                                peak);
            SetFlashTiling(c, br, bc, s.headDim, threads, 1, smem, ctas, sms);
            c.smUtilization = tCompute > 0 ? totalPairs * cPair / (sms * tCompute) : 0.0;
            ApplyBound(c);
            fastest.Offer(c);
        }
    }
    const OperatorCost& best = fastest.Best(g, "forward", s.headDim);
    NS_LOG_LOGIC("hopper forward " << best.tiling.blockM << "x" << best.tiling.blockN << ", "
                                   << best.timeS << " s, " << best.bound << " bound");
    return best;
}

OperatorCost
HopperAttentionBackward(const GpuSpec& g, const AttentionShape& s, DataType type)
{
    RequireHopper(g, type);
    const GpuEfficiency& e = g.efficiency;
    const uint32_t sms = g.smCount;
    const auto [b, d, bh, tensor, peak, perSmRate, perSmVector, smemRate] =
        RatesOf(g, s, type, false);
    const double sfuRate = g.sfuOpsPerClockPerSm * g.clockHz;
    // CUDA-core operations per second (a fused multiply-add is two of the vector FLOPs).
    const double perSmOps = perSmVector / 2;
    const uint32_t consumers = 2;
    FastestTiling fastest;
    static const uint32_t kBr[] = {64, 128};
    static const uint32_t kBc[] = {64, 128};
    static const uint32_t kStages[] = {2, 1};
    for (uint32_t br : kBr)
    {
        for (uint32_t bc : kBc)
        {
            for (uint32_t stages : kStages)
            {
                // K and V resident; Q and dO in a TMA ring; P and dS staged for the transposed
                // MMAs; dQ's fp32 partial staged for its reduction into the L2.
                const auto smem = uint64_t(2.0 * bc * d * b + stages * 2.0 * br * d * b
                                           + 2.0 * br * bc * b + br * d * 4.0);
                // Per consumer thread: its share of dK and dV (fp32) and of S and dP (fp32).
                const double regs = 2.0 * bc * d / (kWarpgroupThreads * consumers)
                                    + 2.0 * br * bc / (kWarpgroupThreads * consumers)
                                    + kConsumerOverheadRegisters;
                if (smem > g.sharedMemoryPerBlockBytes || regs > ConsumerRegisters(g, consumers))
                {
                    continue;
                }
                const uint32_t threads = kWarpgroupThreads * (consumers + 1);
                const BlockPairs visited = VisitedBlocks(s, br, bc);
                const uint64_t ctas = uint64_t(bh) * visited.kvBlocks;
                const double totalPairs = visited.total * bh;
                const double avgPairs = totalPairs / double(ctas);
                const double scores = double(br) * bc;
                const double tMma = 10.0 * br * bc * d / perSmRate;
                const double tExp = scores / sfuRate;
                const double tOps = kBackwardOpsPerScore * scores / perSmOps;
                const double cPair = tMma + tExp + tOps;
                // Operand reads of the five MMAs, the warpgroups splitting the key block: Q and
                // dO by each warpgroup twice, K three times and V once over the pair, P^T and
                // dS^T once each and dS by each warpgroup for dQ; the P and dS stores; dQ's
                // fp32 partial written and read back by its TMA reduction.
                const double smemPair = 4.0 * consumers * br * d * b + 3.0 * bc * d * b
                                        + (2.0 + consumers + 2.0) * scores * b + 2.0 * br * d * 4.0;
                const double sPair = smemPair / smemRate;
                const double x = std::max(cPair, sPair);
                const double tCompute = WaveTime(ctas, sms, 1, avgPairs * cPair);
                const double tSmem = WaveTime(ctas, sms, 1, avgPairs * sPair);
                const double tSm = WaveTime(ctas, sms, 1, avgPairs * x);
                const FusedAttentionIo io = FusedAttentionIoOf(s, bh, d, b);
                // Q and dO per pair, dQ's fp32 reduction (read and write) per pair, K and V once.
                const double l2Bytes =
                    totalPairs * (2.0 * br * d * b + 2.0 * br * d * 4.0) + 2.0 * io.kv;
                const double l2Rate = L2Rate(g, ctas);
                const double tL2 = l2Bytes / l2Rate;
                const double tHbm = io.backward / HbmRate(g, l2Rate);
                const double side = (io.pre + io.post) / (g.hbmBandwidthBps * e.hbm);
                const double waves = double(CeilDiv(ctas, uint64_t(sms)));
                const double overhead =
                    3 * (g.launchOverheadS + g.memoryLatencyS) + waves * g.memoryLatencyS;
                OperatorCost c =
                    FusedAttentionCost({"attention_bwd",
                                        overhead,
                                        side,
                                        tSm,
                                        tL2,
                                        tHbm,
                                        tCompute,
                                        tSmem,
                                        2.5 * (4.0 * s.batch * s.heads * d * ScoredPairs(s)),
                                        totalPairs * smemPair,
                                        l2Bytes + io.pre + io.post,
                                        io.backward + io.pre + io.post},
                                       tensor,
                                       peak);
                SetFlashTiling(c, br, bc, s.headDim, threads, 1, smem, ctas, sms);
                c.tiling.stages = stages;
                c.kernels = 3;
                c.smUtilization = tCompute > 0 ? totalPairs * cPair / (sms * tCompute) : 0.0;
                ApplyBound(c);
                fastest.Offer(c);
            }
        }
    }
    const OperatorCost& best = fastest.Best(g, "backward", s.headDim);
    NS_LOG_LOGIC("hopper backward " << best.tiling.blockM << "x" << best.tiling.blockN << ", "
                                    << best.timeS << " s, " << best.bound << " bound");
    return best;
}

bool
HopperAttentionFits(const GpuSpec& g, uint64_t headDim, DataType type)
{
    // The tilings depend on the head dimension and the GPU's resources, not on the lengths.
    AttentionShape s;
    s.queryLen = 128;
    s.kvLen = 128;
    s.headDim = headDim;
    s.kernel = AttentionKernel::HOPPER;
    try
    {
        HopperAttentionForward(g, s, type);
        HopperAttentionBackward(g, s, type);
    }
    catch (const SpecError&)
    {
        return false;
    }
    return true;
}

} // namespace kernel
} // namespace rapidllm
} // namespace ns3
