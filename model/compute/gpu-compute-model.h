/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_GPU_COMPUTE_MODEL_H
#define RAPIDLLM_GPU_COMPUTE_MODEL_H

#include "attention-shape.h"
#include "gpu-power-model.h"
#include "ns3/data-type.h"
#include "ns3/gpu-spec.h"
#include "ns3/object.h"
#include "operator-cost.h"

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief Tile-based GPU compute model: the time of each operator of an LLM on one GPU, with the
 * reason (FLOPs and bytes at each memory level, the bounding level, waves, occupancy).
 *
 * GEMMs enumerate thread-block tilings and pipeline depths that fit the SM (shared memory,
 * registers, threads, blocks), schedule the tiles in waves over the SMs, count the traffic at
 * each level from tile reuse, and keep the fastest tiling, as cuBLAS's heuristic would.
 * Attention follows its kernel's tiling (FlashAttention-2, Triton, Hopper); elementwise
 * operators are rooflines. All calibration comes from the GpuSpec (one set per GPU). Results
 * are memoized and deterministic.
 *
 * On a GPU with a power model (GpuSpec::power) every kernel runs at the clock its power allows
 * (ClockPolicy attribute): at the boost clock, unless under sustained load its board power would
 * exceed the limit, in which case at the highest clock that keeps it within; each cost carries
 * that clock, its dynamic energy and the board power.
 *
 * This class is the facade: it checks shapes, memoizes GEMMs and holds the attributes; the
 * kernel models live in their own files (gemm-kernel-model.h, attention-kernel-model.h,
 * decode-attention-kernel-model.h, elementwise-kernel-model.h) over what they share
 * (gpu-kernel-common.h).
 */
class GpuComputeModel : public Object
{
  public:
    /**
     * \brief Registers the type and its attributes.
     * \return the TypeId
     */
    static TypeId GetTypeId();

    /** \brief An empty model; call SetGpu before asking for costs. */
    GpuComputeModel();

    /**
     * \brief A model of \p gpu.
     * \param gpu the GPU (its efficiency factors are the calibration)
     */
    explicit GpuComputeModel(const GpuSpec& gpu);

    /**
     * \brief Replaces the GPU and forgets memoized results.
     * \param gpu the GPU
     */
    void SetGpu(const GpuSpec& gpu);

    /** \return the GPU */
    const GpuSpec& GetGpu() const;

    /**
     * \brief Sets the clock policy (ClockPolicy attribute) and forgets memoized results.
     * \param policy SUSTAINED (a busy GPU at its power limit) or BOOST (short bursts)
     */
    void SetClockPolicy(ClockPolicy policy);
    /** \return the clock policy */
    ClockPolicy GetClockPolicy() const;

    /**
     * \brief The same model on fewer SMs: what a kernel gets while a concurrent communication
     * kernel keeps the rest (Transformer Engine's set_sm_margin). Attributes are copied; the
     * model is kept, so its memo serves later calls.
     * \param sms SMs left (clamped to 1 .. the GPU's count)
     * \param clockHz the clock its kernels run at (0: the clock policy's, as on the whole GPU)
     * \return the model (this one when \p sms is the GPU's count and no clock is given)
     */
    Ptr<GpuComputeModel> WithSmCount(uint32_t sms, double clockHz = 0);

    /**
     * \brief C[m x n] = A[m x k] B[k x n], \p batch times (batched GEMM), with the best tiling.
     * \param m rows of A and C (tokens)
     * \param n columns of B and C (output features)
     * \param k the reduction dimension (input features)
     * \param type operand type (output in the same type, fp32 accumulation)
     * \param batch independent GEMMs of the same shape in one launch
     * \return the cost; memoized by shape and type
     */
    OperatorCost Gemm(uint64_t m, uint64_t n, uint64_t k, DataType type, uint64_t batch = 1);

    /**
     * \brief The cost of a GEMM with a given tiling (blockM, blockN, blockK, stages, splitK),
     * to show what the heuristic trades off; threads and occupancy are derived.
     * \param m rows
     * \param n columns
     * \param k reduction dimension
     * \param type operand type
     * \param batch batched GEMMs
     * \param tiling the tiling to evaluate
     * \return the cost; throws SpecError if the tiling does not fit on an SM
     */
    OperatorCost GemmWithTiling(uint64_t m,
                                uint64_t n,
                                uint64_t k,
                                DataType type,
                                uint64_t batch,
                                const KernelTiling& tiling) const;

    /**
     * \brief Fused attention forward by the shape's kernel (ResolveAttentionKernel):
     * FlashAttention-2 (S = QK^T, online softmax, O = PV, tiled over query and key/value blocks;
     * causal blocks above the diagonal are skipped), MPT's Triton kernel or Hopper's. \param shape
     * the call \param type Q/K/V/O type \return the cost
     */
    OperatorCost AttentionForward(const AttentionShape& shape, DataType type);

    /**
     * \brief Fused attention backward by the shape's kernel (recomputes S and P; dQ accumulated
     * in fp32), including its preprocessing (rowsum(dO*O)) and dQ conversion kernels.
     * \param shape the call
     * \param type tensor type
     * \return the cost
     */
    OperatorCost AttentionBackward(const AttentionShape& shape, DataType type);

    /**
     * \brief Unfused attention forward (Megatron-LM before FlashAttention): Q K^T and P V as
     * batched GEMMs over the full s x s matrix, a softmax and, with \c shape.dropout, a dropout
     * kernel, run one after another.
     * \param shape the call (causal and kvHeads do not change the unfused kernels)
     * \param type tensor type
     * \return the kernels' costs summed
     */
    OperatorCost UnfusedAttentionForward(const AttentionShape& shape, DataType type);

    /**
     * \brief Unfused attention backward: four batched GEMMs (dP, dV, dQ, dK), the dropout and
     * softmax backward kernels.
     * \param shape the call
     * \param type tensor type
     * \return the kernels' costs summed
     */
    OperatorCost UnfusedAttentionBackward(const AttentionShape& shape, DataType type);

    /**
     * \brief One decode step's attention: each query token reads its sequence's KV cache
     * (memory bound); the cache is split over thread blocks (flash-decoding) to fill the SMs.
     * \param batch sequences (one new token each)
     * \param heads query heads
     * \param kvHeads key/value heads
     * \param kvLen cached tokens per sequence
     * \param headDim head dimension
     * \param type the queries' and outputs' type, which the kernel computes in
     * \param valueDim value head dimension (0: headDim)
     * \param latent keys and values are one cached vector (MLA's latent), read once
     * \param cacheBits bits of a cached element (0: type's; 8: an fp8 or int8 cache, 4: an int4
     * one, dequantized in registers)
     * \return the cost
     */
    OperatorCost DecodeAttention(uint64_t batch,
                                 uint64_t heads,
                                 uint64_t kvHeads,
                                 uint64_t kvLen,
                                 uint64_t headDim,
                                 DataType type,
                                 uint64_t valueDim = 0,
                                 bool latent = false,
                                 uint32_t cacheBits = 0);

    /**
     * \brief One decode step's attention as FasterTransformer's masked multi-head attention
     * kernel runs it (TurboMind until late 2023): one thread block per sequence and query head
     * walks the whole KV cache on the CUDA cores. Query heads sharing a KV head (GQA) each read
     * it: the L2 serves the repeats (the group's blocks run side by side), so HBM sees each KV
     * head once and the SMs see it once per query head. Few blocks leave SMs idle.
     * \param batch sequences (one new token each)
     * \param heads query heads
     * \param kvHeads key/value heads
     * \param kvLen cached tokens per sequence
     * \param headDim head dimension
     * \param type the queries' and outputs' type, which the kernel computes in
     * \param valueDim value head dimension (0: headDim)
     * \param latent keys and values are one cached vector (MLA's latent), read once
     * \param cacheBits bits of a cached element (0: type's; 8: an fp8 or int8 cache, 4: an int4
     * one, dequantized in registers)
     * \return the cost
     */
    OperatorCost DecodeAttentionPerHead(uint64_t batch,
                                        uint64_t heads,
                                        uint64_t kvHeads,
                                        uint64_t kvLen,
                                        uint64_t headDim,
                                        DataType type,
                                        uint64_t valueDim = 0,
                                        bool latent = false,
                                        uint32_t cacheBits = 0);

    /**
     * \brief A roofline kernel on the CUDA cores: max(vector time, HBM time) plus overheads.
     * \param kind the operator name for reports
     * \param flops arithmetic (FP32 on CUDA cores)
     * \param bytesRead bytes read from device memory
     * \param bytesWritten bytes written
     * \return the cost
     */
    OperatorCost Elementwise(const std::string& kind,
                             double flops,
                             double bytesRead,
                             double bytesWritten) const;

    /**
     * \brief The backward of an element-wise kernel: reads the saved input and the incoming
     * gradient, writes the input gradient, with twice the forward's arithmetic.
     * \param forward the forward kernel's cost (its kind names the backward: kind + "_bwd")
     * \param elements elements of the input
     * \param type tensor type
     * \return the cost
     */
    OperatorCost ElementwiseBackward(const OperatorCost& forward,
                                     double elements,
                                     DataType type) const;

    /** \return LayerNorm forward over \p tokens x \p hidden (mean, variance, scale, shift) */
    OperatorCost LayerNorm(uint64_t tokens, uint64_t hidden, DataType type) const;
    /** \return RMSNorm forward over \p tokens x \p hidden */
    OperatorCost RmsNorm(uint64_t tokens, uint64_t hidden, DataType type) const;
    /** \return a row softmax over \p rows x \p cols (unfused attention, router) */
    OperatorCost Softmax(uint64_t rows, uint64_t cols, DataType type) const;
    /** \return GELU (tanh form) over \p elements */
    OperatorCost Gelu(uint64_t elements, DataType type) const;
    /** \return squared ReLU, relu(x)^2, over \p elements */
    OperatorCost SquaredRelu(uint64_t elements, DataType type) const;
    /** \return SwiGLU: silu(gate) * up over \p tokens x \p ffnHidden outputs */
    OperatorCost SwiGlu(uint64_t tokens, uint64_t ffnHidden, DataType type) const;
    /** \return GeGLU: gelu(gate) * up over \p tokens x \p ffnHidden outputs */
    OperatorCost GeGlu(uint64_t tokens, uint64_t ffnHidden, DataType type) const;
    /** \return rotary embedding applied to the query and key heads of \p tokens tokens */
    OperatorCost Rope(
        uint64_t tokens, uint64_t heads, uint64_t kvHeads, uint64_t headDim, DataType type) const;
    /** \return a residual add of \p elements */
    OperatorCost ResidualAdd(uint64_t elements, DataType type) const;
    /** \return gathering \p tokens rows of a \p hidden wide embedding table */
    OperatorCost EmbeddingLookup(uint64_t tokens, uint64_t hidden, DataType type) const;
    /**
     * \return one fused pass of softmax (and loss or sampling) over \p tokens x \p vocab logits
     */
    OperatorCost CrossEntropy(uint64_t tokens, uint64_t vocab, DataType type) const;
    /**
     * \brief Mixed-precision Adam step over \p params parameters: fp32 master weights and
     * moments, gradients in \p gradType, and a copy of the weights back in \p paramType.
     * \param params parameters updated by this GPU
     * \param paramType the compute copy of the weights
     * \param gradType the gradients
     * \return the cost
     */
    OperatorCost AdamUpdate(uint64_t params, DataType paramType, DataType gradType) const;

    /** \return memoized GEMM shapes */
    size_t CacheSize() const;
    /** \brief Forgets memoized results. */
    void ClearCache();

  private:
    /** Memo key of one GEMM. */
    struct GemmKey
    {
        uint64_t m;     //!< rows
        uint64_t n;     //!< columns
        uint64_t k;     //!< depth
        uint64_t batch; //!< batch
        int type;       //!< data type

        /** \return true if equal */
        bool
        operator==(const GemmKey& o) const
        {
            return m == o.m && n == o.n && k == o.k && batch == o.batch && type == o.type;
        }
    };

    /** Hash of a GemmKey. */
    struct GemmKeyHash
    {
        /** \return the hash */
        size_t operator()(const GemmKey& key) const;
    };

    /** The ClockPolicy attribute's setter (ns-3 enum attributes hold an int). */
    void SetClockPolicyValue(int policy);
    /** \return the ClockPolicy attribute as an int */
    int GetClockPolicyValue() const;
    /** Throws SpecError if no GPU is set or \p what has a zero dimension. */
    void Check(const std::string& what, std::initializer_list<uint64_t> dims) const;
    /** Check() for a fused attention shape, heads a multiple of kvHeads, queryLen <= kvLen. */
    void CheckAttention(const AttentionShape& s) const;
    /** Check() for a decode attention shape, and query heads a multiple of the KV heads. */
    void CheckDecode(
        uint64_t batch, uint64_t heads, uint64_t kvHeads, uint64_t kvLen, uint64_t headDim) const;
    /** \return kernel::RunAtClock of \p eval on this GPU under this model's clock policy */
    OperatorCost AtClock(DataType type,
                         const std::function<OperatorCost(const GpuSpec&)>& eval) const;

    /**
     * \brief Checks \p dims under the name \p what, then runs an element-wise kernel model
     * kernel(gpu, dims..., type) at the clock an fp32-energy kernel gets.
     * \return the cost
     */
    template<typename Kernel, typename... Dims>
    OperatorCost
    RunElementwise(const std::string& what, Kernel kernel, DataType type, Dims... dims) const
    {
        Check(what, {static_cast<uint64_t>(dims)...});
        return AtClock(DataType::FP32,
                       [&](const GpuSpec& g)
                       {
                           return kernel(g, dims..., type);
                       });
    }

    /** \return the kernel \p s's attention runs (ResolveAttentionKernel, memoized) */
    AttentionKernel AttentionKernelFor(const AttentionShape& s, DataType type);

    GpuSpec m_gpu;             //!< the GPU
    bool m_hasGpu;             //!< whether SetGpu was called
    bool m_enableSplitK;       //!< consider split-K for GEMMs with fewer tiles than SMs
    uint32_t m_maxSplitK;      //!< largest split-K factor considered
    ClockPolicy m_clockPolicy; //!< which clock kernels run at
    std::unordered_map<GemmKey, OperatorCost, GemmKeyHash> m_gemmCache; //!< memo
    /** AttentionKernelFor's memo, by setting, type and head dimension */
    std::map<std::tuple<int, int, uint64_t>, AttentionKernel> m_attentionKernels;
    /** WithSmCount's models, by SMs and clock */
    std::map<std::pair<uint32_t, double>, Ptr<GpuComputeModel>> m_fewerSms;
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_GPU_COMPUTE_MODEL_H
