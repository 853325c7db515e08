/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_GEMM_KERNEL_MODEL_H
#define RAPIDLLM_GEMM_KERNEL_MODEL_H

#include "ns3/data-type.h"
#include "ns3/gpu-spec.h"
#include "operator-cost.h"

#include <cstdint>

namespace ns3 {
namespace rapidllm {
namespace kernel {

/**
 * \ingroup rapid-llm
 * \brief Which tilings the GEMM search considers beyond the block tiles and pipeline depths.
 */
struct GemmSearchOptions
{
    bool splitK = true;      //!< consider split-K for GEMMs with fewer output tiles than SMs
    uint32_t maxSplitK = 16; //!< largest split-K factor considered
};

/**
 * \ingroup rapid-llm
 * \brief The cost of C[m x n] = A[m x k] B[k x n] (\p batch times) with one thread-block
 * tiling: occupancy from shared memory, registers and threads; tiles scheduled in waves over
 * the SMs; shared-memory, L2 and HBM traffic from tile reuse; a separate reduction kernel for
 * split-K. The caller has checked the shape (every dimension at least 1).
 * \param g the GPU
 * \param m rows
 * \param n columns
 * \param k reduction dimension
 * \param type operand type
 * \param batch batched GEMMs
 * \param tiling blockM, blockN, blockK, stages and splitK (threads and occupancy are derived)
 * \param cost receives the cost
 * \return false if the tiling does not fit an SM (\p cost is then unspecified)
 */
bool GemmCostWithTiling(const GpuSpec& g,
                        uint64_t m,
                        uint64_t n,
                        uint64_t k,
                        DataType type,
                        uint64_t batch,
                        const KernelTiling& tiling,
                        OperatorCost& cost);

/**
 * \ingroup rapid-llm
 * \brief The fastest tiling of a GEMM, as cuBLAS's heuristic would pick it: block tiles of
 * 16..256 rows and 64..256 columns, K steps of 64 or 128 bytes, 2..5 pipeline stages and, for
 * GEMMs with fewer tiles than SMs, split-K.
 * \param g the GPU
 * \param m rows
 * \param n columns
 * \param k reduction dimension
 * \param type operand type
 * \param batch batched GEMMs
 * \param options the split-K search
 * \return the cost; throws SpecError if no tiling fits the GPU's SM
 */
OperatorCost BestGemmCost(const GpuSpec& g,
                          uint64_t m,
                          uint64_t n,
                          uint64_t k,
                          DataType type,
                          uint64_t batch,
                          const GemmSearchOptions& options);

} // namespace kernel
} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_GEMM_KERNEL_MODEL_H
