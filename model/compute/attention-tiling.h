/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_ATTENTION_TILING_H
#define RAPIDLLM_ATTENTION_TILING_H

#include "attention-shape.h"
#include "ns3/data-type.h"
#include "ns3/gpu-spec.h"
#include "operator-cost.h"

#include <cstdint>

namespace ns3 {
namespace rapidllm {
namespace kernel {

/**
 * \ingroup rapid-llm
 * \brief Records a tiled attention kernel's tiling (two-stage, \p br x \p bc blocks) and its
 * waves in \p c.
 */
void SetFlashTiling(OperatorCost& c,
                    uint32_t br,
                    uint32_t bc,
                    uint32_t headDim,
                    uint32_t threads,
                    uint32_t perSm,
                    uint64_t smem,
                    uint64_t ctas,
                    uint32_t sms);

/**
 * \ingroup rapid-llm
 * \brief The (query block, key/value block) pairs a tiled attention kernel computes. */
struct BlockPairs
{
    uint64_t queryBlocks = 0; //!< query blocks of br rows
    uint64_t kvBlocks = 0;    //!< key/value blocks of bc columns
    double total = 0;         //!< pairs visited over all query blocks (one head)
    uint64_t most = 0;        //!< the most pairs one query block visits
};

/**
 * \ingroup rapid-llm
 * \return the query-key pairs one head of one sequence scores: every pair, or under a causal
 * mask each query's own key and the keys before it, within a sliding window at most the last
 * `window` of them (the queries are the last queryLen of kvLen)
 */
double ScoredPairs(const AttentionShape& s);

/**
 * \ingroup rapid-llm
 * \brief The block pairs of one head with \p br x \p bc blocks: every key/value block, or under
 * a causal mask only those at or left of the diagonal, and within a sliding window only those
 * that reach into it (the queries are the last queryLen of the kvLen tokens).
 */
BlockPairs VisitedBlocks(const AttentionShape& s, uint32_t br, uint32_t bc);

/**
 * \ingroup rapid-llm
 * \brief What a FlashAttention kernel's time is made of, the same forward and backward. */
struct FlashRates
{
    double b;           //!< bytes per element
    double d;           //!< head dimension
    double bh;          //!< sequences x query heads: the independent problems
    bool tensor;        //!< whether the matmuls run on tensor cores
    double peak;        //!< the matmul peak of the type, whole GPU
    double perSmRate;   //!< calibrated matmul rate of one SM
    double perSmVector; //!< calibrated fp32 CUDA-core rate of one SM (the softmax)
    double smemRate;    //!< calibrated shared-memory bandwidth of one SM
};

/**
 * \ingroup rapid-llm
 * \return the rates of \p s in \p type on \p g; a kernel whose matmuls are warp-level
 * mma.sync (\p warpMma: FlashAttention-2, the 2022 Triton kernel) gets the GPU's mma.sync share
 * of the tensor rate (GpuSpec::mmaSyncFraction)
 */
FlashRates RatesOf(const GpuSpec& g, const AttentionShape& s, DataType type, bool warpMma);

/**
 * \ingroup rapid-llm
 * \brief What a fused attention kernel moves to and from HBM whatever its tiling: each tensor
 * once (FlashAttention's IO), in FlashAttention-2's and Triton's kernels alike.
 */
struct FusedAttentionIo
{
    double q;        //!< Q bytes (and O's, dO's, dQ's)
    double kv;       //!< K and V bytes
    double lse;      //!< the softmax's log-sum-exp, fp32 per query row
    double forward;  //!< forward: Q in, O and LSE out, K and V in
    double backward; //!< backward's main kernel: Q, dO, LSE and D in, K and V in, dK and dV
                     //!< out, dQ's fp32 accumulator out
    double pre;      //!< backward's preprocessing D = rowsum(dO * O): dO and O in, D out
    double post;     //!< backward's dQ conversion: the fp32 accumulator in, dQ out
};

/**
 * \ingroup rapid-llm
 * \return the HBM traffic of attention \p s over \p bh sequence-heads, head dimension \p d
 * (as the kernel pads it), \p b bytes per element
 */
FusedAttentionIo FusedAttentionIoOf(const AttentionShape& s, double bh, double d, double b);

/**
 * \ingroup rapid-llm
 * \brief The level times and traffic of a fused attention kernel (its main kernel plus any
 * streaming side kernels), from which its OperatorCost is assembled.
 */
struct FusedAttentionParts
{
    const char* kind; //!< "attention_fwd" or "attention_bwd"
    double overheadS; //!< launches and wave latencies
    double sideS;     //!< streaming side kernels (HBM bound), 0 if none
    double tSm;       //!< the main kernel's SM time
    double tL2;       //!< its L2 time
    double tHbm;      //!< its HBM time
    double computeS;  //!< its matmul and softmax time
    double smemS;     //!< its shared-memory time
    double flops;     //!< useful FLOPs
    double smemBytes; //!< shared-memory traffic
    double l2Bytes;   //!< L2 traffic, side kernels included
    double hbmBytes;  //!< HBM traffic, side kernels included
};

/**
 * \ingroup rapid-llm
 * \return the cost of \p p: overhead + side kernels + the main kernel's slowest level, with
 *         its traffic and level times (tiling, kernels and bound are the caller's)
 * \param p the parts \param tensor whether the matmuls run on tensor cores
 * \param peak the matmul peak of the type, whole GPU
 */
OperatorCost FusedAttentionCost(const FusedAttentionParts& p, bool tensor, double peak);

} // namespace kernel
} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_ATTENTION_TILING_H
