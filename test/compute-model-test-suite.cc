/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// The tile-based compute model: GEMM rooflines and tiling (big GEMMs compute bound, GEMVs HBM
// bound), wave quantization, split-K, memoization and determinism, attention and elementwise
// operators, and bad input.

#include "ns3/boolean.h"
#include "ns3/gpu-compute-model.h"
#include "ns3/hardware-spec.h"
#include "ns3/hopper-attention-kernel-model.h"
#include "ns3/spec-error.h"
#include "ns3/test.h"

#include <algorithm>
#include <cmath>

using namespace ns3;
using namespace ns3::rapidllm;

namespace {
/** \return a compute model of a hardware preset */
Ptr<GpuComputeModel>
ModelOf(const std::string& preset)
{
    Ptr<GpuComputeModel> model = CreateObject<GpuComputeModel>();
    model->SetGpu(HardwareSpec::Load(preset).gpu);
    return model;
}
} // namespace

/** \brief A big square GEMM reaches 220-268 TFLOP/s on A100 (the larger Llama-2 GEMMs Vidur
 * profiled run at 231-241; 267.9 is the best shape of a cuBLAS search) and is compute bound;
 * M = 1 reads the weights once and is HBM bound. H100 reaches 600-792 TFLOP/s. */
class GemmRooflineTestCase : public TestCase
{
  public:
    GemmRooflineTestCase()
        : TestCase("big GEMMs are compute bound at cuBLAS-like rates, GEMVs are HBM bound")
    {}

  private:
    void
    DoRun() override
    {
        auto a100 = ModelOf("a100-sxm-80gb");
        OperatorCost big = a100->Gemm(16384, 16384, 16384, DataType::BF16);
        NS_TEST_ASSERT_MSG_EQ(big.bound, BoundLevel::COMPUTE, "16384^3 must be compute bound");
        NS_TEST_ASSERT_MSG_GT(big.FlopRate(), 220e12, "A100 16384^3 below 220 TFLOP/s");
        NS_TEST_ASSERT_MSG_LT(big.FlopRate(), 268e12, "A100 16384^3 above the best cuBLAS shape");
        NS_TEST_ASSERT_MSG_EQ_TOL(big.flops, 2.0 * std::pow(16384.0, 3), 1.0, "FLOPs = 2mnk");
        NS_TEST_ASSERT_MSG_GT(big.smUtilization, 0.99, "75.85 waves leave little idle time");
        // Traffic ordering: shared memory sees the most bytes, HBM the fewest but at least the
        // compulsory A, B and C.
        NS_TEST_ASSERT_MSG_GT(big.smemBytes, big.l2Bytes, "smem traffic exceeds L2 traffic");
        NS_TEST_ASSERT_MSG_GT(big.l2Bytes, big.hbmBytes, "L2 traffic exceeds HBM traffic");
        NS_TEST_ASSERT_MSG_GT_OR_EQ(big.hbmBytes, 3 * 16384.0 * 16384 * 2, "compulsory bytes");

        OperatorCost gemv = a100->Gemm(1, 16384, 16384, DataType::BF16);
        NS_TEST_ASSERT_MSG_EQ(gemv.bound, BoundLevel::HBM, "M = 1 must be HBM bound");
        const GpuSpec& g = a100->GetGpu();
        double weights = 16384.0 * 16384 * 2;
        double floor = weights / (g.hbmBandwidthBps * g.efficiency.hbm);
        NS_TEST_ASSERT_MSG_GT_OR_EQ(gemv.timeS, floor, "cannot beat the weight read");
        NS_TEST_ASSERT_MSG_LT(gemv.timeS, 1.15 * floor, "should stream close to bandwidth");

        auto h100 = ModelOf("h100-sxm-80gb");
        OperatorCost hbig = h100->Gemm(16384, 16384, 16384, DataType::BF16);
        NS_TEST_ASSERT_MSG_GT(hbig.FlopRate(), 600e12, "H100 16384^3 below 600 TFLOP/s");
        NS_TEST_ASSERT_MSG_LT(hbig.FlopRate(), 792e12, "H100 16384^3 above the best cuBLAS shape");
        NS_TEST_ASSERT_MSG_GT(hbig.FlopRate(), 2.2 * big.FlopRate(), "H100 well above A100");
    }
};

/** \brief One tile more than a full wave leaves the last wave almost empty: clearly more time per
 * FLOP than a GEMM that fills its waves exactly. */
class WaveQuantizationTestCase : public TestCase
{
  public:
    WaveQuantizationTestCase()
        : TestCase("wave quantization: one tile past a full wave costs more per FLOP")
    {}

  private:
    void
    DoRun() override
    {
        auto a100 = ModelOf("a100-sxm-80gb");
        KernelTiling t;
        t.blockM = 128;
        t.blockN = 256;
        t.blockK = 64;
        t.stages = 3; // 147 KiB of shared memory: one block per SM
        const uint64_t k = 8192;
        OperatorCost full = a100->GemmWithTiling(128 * 108, 256, k, DataType::BF16, 1, t);
        OperatorCost over = a100->GemmWithTiling(128 * 109, 256, k, DataType::BF16, 1, t);
        NS_TEST_ASSERT_MSG_EQ(full.tiling.blocksPerSm, 1u, "expected one block per SM");
        NS_TEST_ASSERT_MSG_EQ(full.tiles, 108u, "108 tiles: one full wave");
        NS_TEST_ASSERT_MSG_EQ(over.tiles, 109u, "109 tiles");
        NS_TEST_ASSERT_MSG_EQ_TOL(full.waves, 1.0, 1e-12, "exactly one wave");
        NS_TEST_ASSERT_MSG_GT(over.waves, 1.0, "a second, nearly empty wave");
        NS_TEST_ASSERT_MSG_LT(over.smUtilization, 0.55, "the second wave idles 107 SMs");
        double perFlopFull = full.timeS / full.flops;
        double perFlopOver = over.timeS / over.flops;
        NS_TEST_ASSERT_MSG_GT(perFlopOver, 1.6 * perFlopFull, "partial wave not charged");

        // The heuristic sees it too: the best tiling of 109 tiles' worth of work is still
        // clearly less efficient than that of 108 (it can only trade tiles for waves).
        OperatorCost bestFull = a100->Gemm(128 * 108, 256, k, DataType::BF16);
        OperatorCost bestOver = a100->Gemm(128 * 109, 256, k, DataType::BF16);
        NS_TEST_ASSERT_MSG_GT(bestOver.timeS / bestOver.flops,
                              1.05 * bestFull.timeS / bestFull.flops,
                              "the chosen tiling should still show the quantization");
    }
};

/**
 * \brief Occupancy no block takes costs nothing: a GEMM of fewer tiles than SMs takes the same
 * time whether an SM could hold one block or several (the epilogue staged the accumulators of
 * every slot, so more shared memory made a 1 x 4096 x 4096 GEMM slower), and an attention
 * call at fp32, which FlashAttention-3 does not take, runs FlashAttention-2's kernel by default.
 */
class UnusedOccupancyTestCase : public TestCase
{
  public:
    UnusedOccupancyTestCase()
        : TestCase("unused occupancy costs nothing; auto attention at fp32 is FlashAttention-2")
    {}

  private:
    void
    DoRun() override
    {
        const GpuSpec h100 = HardwareSpec::Load("h100-sxm-80gb").gpu;
        for (const uint64_t m : {1ull, 64ull})
        {
            double before = 0;
            for (const uint32_t blocks : {1u, 2u, 4u, 8u})
            {
                GpuSpec g = h100;
                g.maxBlocksPerSm = blocks;
                Ptr<GpuComputeModel> model = CreateObject<GpuComputeModel>();
                model->SetGpu(g);
                const double t = model->Gemm(m, 4096, 4096, DataType::BF16).timeS;
                if (before > 0)
                {
                    NS_TEST_EXPECT_MSG_LT_OR_EQ(
                        t, before * (1 + 1e-12), m << " rows, " << blocks << " blocks per SM");
                }
                before = t;
            }
        }
        auto model = ModelOf("h100-sxm-80gb");
        AttentionShape s;
        s.batch = 1;
        s.heads = 16;
        s.kvHeads = 16;
        s.queryLen = 512;
        s.kvLen = 512;
        s.headDim = 192; // no Hopper tiling at fp32
        s.causal = true;
        const double fp32 = model->AttentionForward(s, DataType::FP32).timeS;
        s.kernel = AttentionKernel::FLASH2;
        NS_TEST_EXPECT_MSG_EQ(model->AttentionForward(s, DataType::FP32).timeS, fp32, "flash");
        s.kernel = AttentionKernel::HOPPER;
        bool refused = false;
        try
        {
            model->AttentionForward(s, DataType::FP32);
        }
        catch (const SpecError& e)
        {
            refused = std::string(e.what()).find("--attention=flash") != std::string::npos;
        }
        NS_TEST_EXPECT_MSG_EQ(refused, true, "flash3 asked for: refused, naming the way out");
    }
};

/** \brief Skinny GEMMs with fewer output tiles than SMs split K across blocks, and it helps. */
class SplitKTestCase : public TestCase
{
  public:
    SplitKTestCase()
        : TestCase("split-K fills the SMs for skinny GEMMs")
    {}

  private:
    void
    DoRun() override
    {
        auto a100 = ModelOf("a100-sxm-80gb");
        OperatorCost c = a100->Gemm(16, 1024, 16384, DataType::BF16);
        NS_TEST_ASSERT_MSG_GT(c.tiling.splitK, 1u, "expected split-K");
        NS_TEST_ASSERT_MSG_EQ(c.kernels, 2u, "split-K adds a reduction kernel");
        KernelTiling noSplit = c.tiling;
        noSplit.splitK = 1;
        OperatorCost plain = a100->GemmWithTiling(16, 1024, 16384, DataType::BF16, 1, noSplit);
        NS_TEST_ASSERT_MSG_LT(c.timeS, plain.timeS, "split-K should be faster here");

        Ptr<GpuComputeModel> noSplitModel = CreateObject<GpuComputeModel>();
        noSplitModel->SetAttribute("EnableSplitK", BooleanValue(false));
        noSplitModel->SetGpu(a100->GetGpu());
        OperatorCost d = noSplitModel->Gemm(16, 1024, 16384, DataType::BF16);
        NS_TEST_ASSERT_MSG_EQ(d.tiling.splitK, 1u, "attribute disables split-K");
        NS_TEST_ASSERT_MSG_GT_OR_EQ(d.timeS, c.timeS, "disabling an option cannot help");
    }
};

/** \brief The chosen tiling respects the SM's limits and is the fastest candidate at the boost
 * clock (cuBLAS picks by shape, not by clock); under sustained load the same tiling runs, at the
 * clock its power allows, never faster than at the boost clock. */
class TilingFitsTestCase : public TestCase
{
  public:
    TilingFitsTestCase()
        : TestCase("chosen tilings fit shared memory, registers and threads, and are fastest")
    {}

  private:
    void
    DoRun() override
    {
        for (const char* preset : {"a100-sxm-80gb", "h100-sxm-80gb"})
        {
            auto model = ModelOf(preset);
            model->SetClockPolicy(ClockPolicy::BOOST);
            auto sustained = ModelOf(preset);
            const GpuSpec& g = model->GetGpu();
            const uint64_t shapes[][3] = {{4096, 12288, 4096},
                                          {1, 22016, 4096},
                                          {333, 777, 1234},
                                          {8192, 1024, 65536},
                                          {2048, 2048, 128}};
            for (const auto& s : shapes)
            {
                OperatorCost c = model->Gemm(s[0], s[1], s[2], DataType::BF16);
                const KernelTiling& t = c.tiling;
                NS_TEST_ASSERT_MSG_LT_OR_EQ(
                    t.smemPerBlock, g.sharedMemoryPerBlockBytes, "block shared memory");
                NS_TEST_ASSERT_MSG_LT_OR_EQ(
                    t.smemPerBlock * t.blocksPerSm, g.sharedMemoryPerSmBytes, "SM shared memory");
                NS_TEST_ASSERT_MSG_LT_OR_EQ(
                    t.threads * t.blocksPerSm, g.maxThreadsPerSm, "threads");
                NS_TEST_ASSERT_MSG_GT_OR_EQ(t.stages, 2u, "pipelined");
                NS_TEST_ASSERT_MSG_GT(c.timeS, g.launchOverheadS, "at least the launch");
                OperatorCost held = sustained->Gemm(s[0], s[1], s[2], DataType::BF16);
                NS_TEST_ASSERT_MSG_EQ(held.tiling.blockM, t.blockM, "same tile when sustained");
                NS_TEST_ASSERT_MSG_EQ(held.tiling.blockN, t.blockN, "same tile when sustained");
                NS_TEST_ASSERT_MSG_EQ(held.tiling.splitK, t.splitK, "same split when sustained");
                NS_TEST_ASSERT_MSG_GT_OR_EQ(held.timeS, c.timeS * (1 - 1e-12), "no faster");
                NS_TEST_ASSERT_MSG_LT_OR_EQ(held.powerW, g.power.limitW * (1 + 1e-9), "limit");
                // A few alternative tilings are never faster than the choice.
                for (uint32_t bm : {64u, 128u, 256u})
                {
                    for (uint32_t bn : {64u, 128u, 256u})
                    {
                        KernelTiling alt;
                        alt.blockM = bm;
                        alt.blockN = bn;
                        alt.blockK = 64;
                        alt.stages = 3;
                        try
                        {
                            OperatorCost a =
                                model->GemmWithTiling(s[0], s[1], s[2], DataType::BF16, 1, alt);
                            NS_TEST_ASSERT_MSG_GT_OR_EQ(
                                a.timeS * (1 + 1e-9), c.timeS, "heuristic missed a faster tiling");
                        }
                        catch (const SpecError&)
                        {
                            // does not fit this GPU
                        }
                    }
                }
            }
        }
    }
};

/** \brief Results are memoized and identical across calls and instances. */
class MemoTestCase : public TestCase
{
  public:
    MemoTestCase()
        : TestCase("GEMM costs are memoized and deterministic")
    {}

  private:
    void
    DoRun() override
    {
        auto a = ModelOf("a100-sxm-80gb");
        auto b = ModelOf("a100-sxm-80gb");
        NS_TEST_ASSERT_MSG_EQ(a->CacheSize(), 0u, "empty cache");
        OperatorCost x = a->Gemm(4096, 12288, 4096, DataType::BF16);
        NS_TEST_ASSERT_MSG_EQ(a->CacheSize(), 1u, "one entry");
        OperatorCost y = a->Gemm(4096, 12288, 4096, DataType::BF16);
        NS_TEST_ASSERT_MSG_EQ(a->CacheSize(), 1u, "hit does not add");
        OperatorCost z = b->Gemm(4096, 12288, 4096, DataType::BF16);
        NS_TEST_ASSERT_MSG_EQ(x.timeS, y.timeS, "memo hit identical");
        NS_TEST_ASSERT_MSG_EQ(x.timeS, z.timeS, "another instance identical");
        NS_TEST_ASSERT_MSG_EQ(x.tiling.blockM, z.tiling.blockM, "same tiling");
        a->Gemm(4096, 12288, 4096, DataType::FP16);
        a->Gemm(4096, 12288, 4096, DataType::BF16, 2);
        NS_TEST_ASSERT_MSG_EQ(a->CacheSize(), 3u, "type and batch are part of the key");
        OperatorCost batched = a->Gemm(4096, 12288, 4096, DataType::BF16, 2);
        NS_TEST_ASSERT_MSG_EQ_TOL(batched.flops, 2 * x.flops, 1.0, "batch doubles the FLOPs");
        NS_TEST_ASSERT_MSG_GT(batched.timeS, 1.8 * x.timeS, "batch of 2 takes about twice as long");
        a->ClearCache();
        NS_TEST_ASSERT_MSG_EQ(a->CacheSize(), 0u, "cleared");
    }
};

/** \brief MPT's 2022 FlashAttention in Triton: 128 x 128 blocks and one stage, so each block's
 * loads add to its matmuls; slower than FlashAttention-2 on a long causal sequence. */
class TritonAttentionTestCase : public TestCase
{
  public:
    TritonAttentionTestCase()
        : TestCase("Triton (2022) attention: one-stage tiling, slower than FlashAttention-2")
    {}

  private:
    void
    DoRun() override
    {
        auto a100 = ModelOf("a100-sxm-80gb");
        const GpuSpec& g = a100->GetGpu();
        // MPT-7B at 16k tokens, micro batch 1: 32 heads of 128.
        AttentionShape s;
        s.batch = 1;
        s.heads = 32;
        s.kvHeads = 32;
        s.queryLen = 16384;
        s.kvLen = 16384;
        s.headDim = 128;
        s.causal = true;
        OperatorCost fa2 = a100->AttentionForward(s, DataType::BF16);
        OperatorCost fa2Bwd = a100->AttentionBackward(s, DataType::BF16);
        s.kernel = AttentionKernel::TRITON2022;
        OperatorCost fwd = a100->AttentionForward(s, DataType::BF16);
        OperatorCost bwd = a100->AttentionBackward(s, DataType::BF16);
        NS_TEST_ASSERT_MSG_EQ(fwd.tiling.blockM, 128u, "BLOCK_M");
        NS_TEST_ASSERT_MSG_EQ(fwd.tiling.blockN, 128u, "BLOCK_N");
        NS_TEST_ASSERT_MSG_EQ(fwd.tiling.stages, 1u, "num_stages=1");
        NS_TEST_ASSERT_MSG_EQ(fwd.tiling.threads, 256u, "8 warps for head dimension 128");
        NS_TEST_ASSERT_MSG_EQ(fwd.tiles, 32u * 128, "one program per query block and head");
        NS_TEST_ASSERT_MSG_EQ_TOL(fwd.flops, fa2.flops, 1.0, "the same useful work");
        NS_TEST_ASSERT_MSG_EQ(bwd.kernels, 4u, "zero dQ, preprocess, main, convert dQ");
        // 32 heads cannot fill 108 SMs with one program per head: autotune picks the
        // sequence-parallel program, one per key block and head.
        NS_TEST_ASSERT_MSG_EQ(bwd.tiles, 32u * 128, "sequence-parallel backward");
        // One stage, one program per SM: the last query block's program walks 128 key blocks
        // and waits for its K tile, its rescale factor and its V tile on each, on top of the
        // matmuls, rather than the larger of the two.
        NS_TEST_ASSERT_MSG_EQ(fwd.tiling.blocksPerSm, 1u, "registers allow one program");
        NS_TEST_ASSERT_MSG_GT_OR_EQ(
            fwd.timeS, fwd.computeTimeS + 128 * 3 * g.memoryLatencyS, "loads add to the matmuls");
        NS_TEST_ASSERT_MSG_GT_OR_EQ(fwd.timeS, fwd.l2TimeS, "no faster than its L2 traffic");
        NS_TEST_ASSERT_MSG_LT(fa2.timeS,
                              fa2.computeTimeS + 128 * 3 * g.memoryLatencyS,
                              "FlashAttention-2 overlaps its loads");
        // FlashAttention-2 is 1.3-2.5x faster than the Triton kernel (Dao 2023): slower here,
        // forward and backward, but not by an order of magnitude.
        NS_TEST_ASSERT_MSG_GT(fwd.timeS, fa2.timeS, "Triton forward slower than FA2");
        NS_TEST_ASSERT_MSG_GT(bwd.timeS, fa2Bwd.timeS, "Triton backward slower than FA2");
        NS_TEST_ASSERT_MSG_LT(
            fwd.timeS + bwd.timeS, 4 * (fa2.timeS + fa2Bwd.timeS), "within a small factor of FA2");
        // Head dimensions above 128 are refused, as the kernel asserts.
        s.headDim = 256;
        bool thrown = false;
        try
        {
            a100->AttentionForward(s, DataType::BF16);
        }
        catch (const SpecError&)
        {
            thrown = true;
        }
        NS_TEST_ASSERT_MSG_EQ(thrown, true, "head dimension 256 is refused");
    }
};

/**
 * \brief Hopper's warp-specialized attention (FlashAttention-3, cuDNN sm90): on a long sequence
 * each block pair costs its warpgroup MMAs at the GEMM's per-SM rate plus its exponentials at
 * the special-function rate; it needs a warp-specialized GPU with that rate.
 */
class HopperAttentionTestCase : public TestCase
{
  public:
    HopperAttentionTestCase()
        : TestCase("Hopper attention: MMAs plus exponentials per block pair, sm90 only")
    {}

  private:
    void
    DoRun() override
    {
        auto h100 = ModelOf("h100-sxm-80gb");
        const GpuSpec& g = h100->GetGpu();
        // 16k tokens of 16 heads of 128, no mask: every block pair is full.
        AttentionShape s;
        s.batch = 1;
        s.heads = 16;
        s.kvHeads = 16;
        s.queryLen = 16384;
        s.kvLen = 16384;
        s.headDim = 128;
        s.causal = false;
        const OperatorCost fa2 = h100->AttentionForward(s, DataType::BF16);
        s.kernel = AttentionKernel::HOPPER;
        const OperatorCost fwd = h100->AttentionForward(s, DataType::BF16);
        const OperatorCost bwd = h100->AttentionBackward(s, DataType::BF16);
        NS_TEST_ASSERT_MSG_EQ_TOL(fwd.flops, fa2.flops, 1.0, "the same useful work");
        NS_TEST_ASSERT_MSG_EQ_TOL(bwd.flops, 2.5 * fwd.flops, 1.0, "backward = 2.5x forward");
        NS_TEST_ASSERT_MSG_EQ(fwd.tiling.blockM % 64, 0u, "whole warpgroups of 64 query rows");
        NS_TEST_ASSERT_MSG_EQ(fwd.tiling.blocksPerSm, 1u, "one warp-specialized block per SM");
        NS_TEST_ASSERT_MSG_EQ(fwd.bound, BoundLevel::COMPUTE, "MMA and exponential bound");
        // The closed form: pairs x (MMAs + exponentials) spread over the SMs, at the GEMM's
        // per-SM tensor rate and 16 exponentials per SM and clock, at the clock it ran at.
        const double clock = fwd.clockHz > 0 ? fwd.clockHz : g.clockHz;
        const double perSmMma =
            g.TensorFlops(DataType::BF16) / g.smCount * g.efficiency.tensor * clock / g.clockHz;
        const double perSmExp = g.sfuOpsPerClockPerSm * clock;
        const double scores = 16.0 * 16384 * 16384;
        const double ideal = (4.0 * 128 * scores / perSmMma + scores / perSmExp) / g.smCount;
        NS_TEST_ASSERT_MSG_GT_OR_EQ(fwd.computeTimeS, ideal * (1 - 1e-9), "no faster than that");
        NS_TEST_ASSERT_MSG_LT(fwd.computeTimeS, ideal * 1.05, "within wave quantization of it");
        // Faster than FlashAttention-2's mma.sync tiling on the same GPU, slower than the MMAs
        // alone.
        NS_TEST_ASSERT_MSG_LT(fwd.timeS, fa2.timeS, "FlashAttention-3 beats FlashAttention-2");
        NS_TEST_ASSERT_MSG_GT(
            fwd.timeS, 4.0 * 128 * scores / (perSmMma * g.smCount), "exponentials are not free");
        NS_TEST_ASSERT_MSG_GT(bwd.timeS, 2.5 * fwd.timeS * 0.8, "backward: 2.5x the MMAs");
        // The default kernel is the GPU's: Hopper's here, FlashAttention-2's on A100.
        AttentionShape autoShape = s;
        autoShape.kernel = AttentionKernel::AUTO;
        NS_TEST_ASSERT_MSG_EQ(h100->AttentionForward(autoShape, DataType::BF16).timeS,
                              fwd.timeS,
                              "auto on H100 is the Hopper kernel");
        auto a100 = ModelOf("a100-sxm-80gb");
        AttentionShape fa2Shape = s;
        fa2Shape.kernel = AttentionKernel::FLASH2;
        NS_TEST_ASSERT_MSG_EQ(a100->AttentionBackward(autoShape, DataType::BF16).timeS,
                              a100->AttentionBackward(fa2Shape, DataType::BF16).timeS,
                              "auto on A100 is FlashAttention-2");
        // A warp-specialized GPU whose shared memory holds no Hopper tiling for the head
        // dimension (an Ada-class 99 KiB a block): auto falls back to FlashAttention-2 for both
        // passes, as libraries do (it was refused, training and all).
        GpuSpec small = g;
        small.sharedMemoryPerBlockBytes = 99 * 1024;
        auto ada = CreateObject<GpuComputeModel>();
        ada->SetGpu(small);
        NS_TEST_ASSERT_MSG_EQ(kernel::HopperAttentionFits(small, s.headDim, DataType::BF16),
                              false,
                              "no Hopper tiling in 99 KiB");
        NS_TEST_ASSERT_MSG_EQ(ada->AttentionBackward(autoShape, DataType::BF16).timeS,
                              ada->AttentionBackward(fa2Shape, DataType::BF16).timeS,
                              "auto falls back to FlashAttention-2");
        // The special-function rate scales the exponentials' share.
        GpuSpec slow = g;
        slow.sfuOpsPerClockPerSm = 8;
        auto halfSfu = CreateObject<GpuComputeModel>();
        halfSfu->SetGpu(slow);
        NS_TEST_ASSERT_MSG_GT(halfSfu->AttentionForward(s, DataType::BF16).timeS,
                              fwd.timeS * 1.1,
                              "half the exponential rate costs more than 10%");
        // A GPU without warpgroup MMAs, or without the exponential rate, is refused by name.
        for (const std::string& field : {"gpu.warp_specialized", "gpu.sfu_ops_per_clock_per_sm"})
        {
            GpuSpec other =
                field == "gpu.warp_specialized" ? ModelOf("a100-sxm-80gb")->GetGpu() : g;
            other.sfuOpsPerClockPerSm = field == "gpu.warp_specialized" ? 16 : 0;
            auto m = CreateObject<GpuComputeModel>();
            m->SetGpu(other);
            std::string message;
            try
            {
                m->AttentionForward(s, DataType::BF16);
            }
            catch (const SpecError& e)
            {
                message = e.what();
            }
            NS_TEST_ASSERT_MSG_NE(message.find(field), std::string::npos, "error names " + field);
        }
    }
};

/**
 * \brief A causal sliding window: each query scores min(position + 1, window) keys (counted one
 * by one here), every fused kernel skips the blocks left of the window, a window no query
 * exceeds changes nothing, and the time falls with the pairs.
 */
class SlidingWindowAttentionTestCase : public TestCase
{
  public:
    SlidingWindowAttentionTestCase()
        : TestCase("sliding-window attention scores and skips what the window excludes")
    {}

  private:
    void
    DoRun() override
    {
        auto a100 = ModelOf("a100-sxm-80gb");
        auto h100 = ModelOf("h100-sxm-80gb");
        AttentionShape s;
        s.batch = 2;
        s.heads = 16;
        s.kvHeads = 16;
        s.headDim = 128;
        s.causal = true;
        // Whole sequences and a chunk of queries at the end of a longer context.
        const uint64_t shapes[][3] = {{16384, 16384, 4096}, {4096, 4096, 1000}, {512, 8192, 4096}};
        for (const auto& [q, kv, w] : shapes)
        {
            s.queryLen = q;
            s.kvLen = kv;
            s.window = w;
            double pairs = 0;
            for (uint64_t j = kv - q; j < kv; ++j)
            {
                pairs += double(std::min<uint64_t>(j + 1, w));
            }
            for (AttentionKernel kernel :
                 {AttentionKernel::FLASH2, AttentionKernel::TRITON2022, AttentionKernel::HOPPER})
            {
                s.kernel = kernel;
                auto& model = kernel == AttentionKernel::HOPPER ? h100 : a100;
                const OperatorCost windowed = model->AttentionForward(s, DataType::BF16);
                NS_TEST_EXPECT_MSG_EQ_TOL(windowed.flops / (4.0 * 2 * 16 * 128 * pairs),
                                          1.0,
                                          1e-12,
                                          "scored pairs, q " << q << " kv " << kv << " w " << w);
                AttentionShape full = s;
                full.window = 0;
                const OperatorCost all = model->AttentionForward(full, DataType::BF16);
                NS_TEST_EXPECT_MSG_LT(windowed.timeS, all.timeS, "a window skips blocks");
                NS_TEST_EXPECT_MSG_GT(windowed.timeS / all.timeS,
                                      0.8 * windowed.flops / all.flops,
                                      "time falls no faster than the pairs");
                NS_TEST_EXPECT_MSG_LT(model->AttentionBackward(s, DataType::BF16).timeS,
                                      model->AttentionBackward(full, DataType::BF16).timeS,
                                      "the backward skips them too");
                AttentionShape wide = s;
                wide.window = kv;
                NS_TEST_EXPECT_MSG_EQ(model->AttentionForward(wide, DataType::BF16).timeS,
                                      all.timeS,
                                      "a window of every key is full attention");
            }
        }
    }
};

/**
 * \brief Hopper issues warp-level mma.sync below its warpgroup rate (mma_sync_fraction): the
 * kernels built on it (FlashAttention-2, the 2022 Triton kernel) get that share of the tensor
 * rate for their matmuls, the warpgroup (Hopper) kernels and every A100 kernel the full one.
 */
class MmaSyncRateTestCase : public TestCase
{
  public:
    MmaSyncRateTestCase()
        : TestCase("mma.sync kernels run at the GPU's mma.sync share of the tensor rate")
    {}

  private:
    void
    DoRun() override
    {
        GpuSpec h100 = HardwareSpec::Load("h100-sxm-80gb").gpu;
        NS_TEST_ASSERT_MSG_EQ_TOL(h100.mmaSyncFraction, 0.653, 1e-12, "the preset's share");
        NS_TEST_EXPECT_MSG_EQ(HardwareSpec::Load("a100-sxm-80gb").gpu.mmaSyncFraction,
                              1.0,
                              "A100's tensor rate is mma.sync's");
        GpuSpec full = h100;
        full.mmaSyncFraction = 1.0;
        Ptr<GpuComputeModel> slow = CreateObject<GpuComputeModel>();
        slow->SetGpu(h100);
        Ptr<GpuComputeModel> fast = CreateObject<GpuComputeModel>();
        fast->SetGpu(full);
        AttentionShape s;
        s.batch = 2;
        s.heads = 16;
        s.kvHeads = 16;
        s.queryLen = 8192;
        s.kvLen = 8192;
        s.headDim = 64;
        for (AttentionKernel kernel : {AttentionKernel::FLASH2, AttentionKernel::TRITON2022})
        {
            s.kernel = kernel;
            const OperatorCost a = slow->AttentionForward(s, DataType::BF16);
            const OperatorCost b = fast->AttentionForward(s, DataType::BF16);
            NS_TEST_EXPECT_MSG_GT(a.computeTimeS, b.computeTimeS * 1.05, "matmuls slower");
            NS_TEST_EXPECT_MSG_GT_OR_EQ(a.timeS, b.timeS, "never faster");
            NS_TEST_EXPECT_MSG_GT_OR_EQ(slow->AttentionBackward(s, DataType::BF16).computeTimeS,
                                        fast->AttentionBackward(s, DataType::BF16).computeTimeS,
                                        "backward too");
        }
        s.kernel = AttentionKernel::HOPPER;
        NS_TEST_EXPECT_MSG_EQ(slow->AttentionForward(s, DataType::BF16).timeS,
                              fast->AttentionForward(s, DataType::BF16).timeS,
                              "warpgroup kernels are not mma.sync");
    }
};

/** \brief FlashAttention: causal skips about half the blocks, the backward pass does 2.5x the
 * FLOPs, decode attention reads the KV cache at HBM speed. */
class AttentionTestCase : public TestCase
{
  public:
    AttentionTestCase()
        : TestCase("attention forward, backward and decode")
    {}

  private:
    void
    DoRun() override
    {
        auto a100 = ModelOf("a100-sxm-80gb");
        AttentionShape s;
        s.batch = 4;
        s.heads = 32;
        s.kvHeads = 32;
        s.queryLen = 4096;
        s.kvLen = 4096;
        s.headDim = 128;
        s.causal = false;
        OperatorCost full = a100->AttentionForward(s, DataType::BF16);
        NS_TEST_ASSERT_MSG_EQ_TOL(full.flops, 4.0 * 4 * 32 * 4096.0 * 4096 * 128, 1.0, "FLOPs");
        NS_TEST_ASSERT_MSG_EQ(full.bound, BoundLevel::COMPUTE, "long attention is compute bound");
        // FlashAttention-2 reaches ~50-75% of the A100 peak in the forward pass (Dao 2023).
        NS_TEST_ASSERT_MSG_GT(full.utilization, 0.45, "too slow for FA2");
        NS_TEST_ASSERT_MSG_LT(full.utilization, 0.80, "faster than FA2 gets");
        s.causal = true;
        OperatorCost causal = a100->AttentionForward(s, DataType::BF16);
        double ratio = causal.timeS / full.timeS;
        NS_TEST_ASSERT_MSG_GT(ratio, 0.45, "causal skips at most half");
        NS_TEST_ASSERT_MSG_LT(ratio, 0.62, "causal should skip the blocks above the diagonal");
        OperatorCost bwd = a100->AttentionBackward(s, DataType::BF16);
        NS_TEST_ASSERT_MSG_EQ_TOL(bwd.flops, 2.5 * causal.flops, 1.0, "backward = 2.5x forward");
        NS_TEST_ASSERT_MSG_GT(bwd.timeS, 2.0 * causal.timeS, "backward slower than 2x forward");
        NS_TEST_ASSERT_MSG_LT(bwd.timeS, 4.5 * causal.timeS, "backward too slow");

        // GQA with 8 KV heads instead of 32 reads 24 heads' K and V less: 2 x 4 sequences x 24
        // heads x 4096 tokens x 128 x 2 bytes, and nothing else changes in HBM.
        AttentionShape gqa = s;
        gqa.kvHeads = 8;
        NS_TEST_ASSERT_MSG_EQ_TOL(causal.hbmBytes
                                      - a100->AttentionForward(gqa, DataType::BF16).hbmBytes,
                                  2.0 * 4 * 24 * 4096 * 128 * 2,
                                  1.0,
                                  "GQA saves exactly the K/V bytes of 24 heads");

        // Unfused attention materializes the s x s scores: the Q K^T GEMM writes them, the
        // softmax reads and writes them, the P V GEMM reads them (4 passes of 2 bytes), and it
        // does the full matrix's multiplies (no causal skipping) in three kernels.
        const double scores = 4.0 * 32 * 4096 * 4096;
        OperatorCost unfused = a100->UnfusedAttentionForward(s, DataType::BF16);
        NS_TEST_ASSERT_MSG_EQ(unfused.kernels, 3u, "Q K^T, softmax, P V");
        NS_TEST_ASSERT_MSG_GT_OR_EQ(unfused.hbmBytes, 4 * scores * 2, "scores round trips");
        NS_TEST_ASSERT_MSG_GT_OR_EQ(unfused.flops, full.flops, "the full matrix");
        NS_TEST_ASSERT_MSG_GT(unfused.timeS, 2 * causal.timeS, "far slower than FlashAttention");
        // Its backward: dP, dV, dQ, dK GEMMs (twice the forward's multiplies) and the softmax
        // backward.
        OperatorCost unfusedBwd = a100->UnfusedAttentionBackward(s, DataType::BF16);
        NS_TEST_ASSERT_MSG_EQ(unfusedBwd.kernels, 5u, "four GEMMs and the softmax backward");
        NS_TEST_ASSERT_MSG_GT_OR_EQ(unfusedBwd.flops, 2 * full.flops, "twice the multiplies");

        // Decode: 32 sequences x 4096 cached tokens of Llama-2-7B (32 KV heads x 128).
        OperatorCost dec = a100->DecodeAttention(32, 32, 32, 4096, 128, DataType::BF16);
        const GpuSpec& g = a100->GetGpu();
        double cache = 2.0 * 32 * 32 * 4096 * 128 * 2;
        NS_TEST_ASSERT_MSG_EQ(dec.bound, BoundLevel::HBM, "decode attention is HBM bound");
        NS_TEST_ASSERT_MSG_GT_OR_EQ(dec.hbmBytes, cache, "reads the whole cache");
        // Beyond the cache only the queries, outputs and split partials: under 1% here.
        NS_TEST_ASSERT_MSG_LT(dec.hbmBytes, 1.01 * cache, "reads the cache once");
        NS_TEST_ASSERT_MSG_GT(dec.timeS, cache / (g.hbmBandwidthBps * g.efficiency.hbm), "BW");
        NS_TEST_ASSERT_MSG_LT(dec.timeS,
                              1.2 * cache / (g.hbmBandwidthBps * g.efficiency.hbm) + 20e-6,
                              "close to streaming the cache");
        // One sequence alone must split the cache over blocks to use the SMs.
        OperatorCost one = a100->DecodeAttention(1, 32, 8, 32768, 128, DataType::BF16);
        NS_TEST_ASSERT_MSG_GT(one.tiling.splitK, 1u, "flash-decoding splits the KV cache");

        // MLA's absorbed decode (DeepSeek-V3: 576-wide latent, values its first 512) against
        // FlashMLA's published peaks on H800 SXM5, whose SMs and HBM are H100 SXM's
        // (github.com/deepseek-ai/FlashMLA, README of February 2025: up to 3000 GB/s
        // memory-bound, 580 TFLOPS compute-bound; 660 TFLOPS with the kernel of April 2025).
        // Not a calibration: nothing was fitted to them.
        auto h100 = ModelOf("h100-sxm-80gb");
        // TP 8 (16 heads a rank), 128 sequences of 8192 tokens: the latent streams from HBM.
        OperatorCost stream =
            h100->DecodeAttention(128, 16, 1, 8192, 576, DataType::BF16, 512, true);
        NS_TEST_ASSERT_MSG_EQ_TOL(stream.hbmBytes / stream.timeS / 1e9, 3000, 300, "GB/s");
        // All 128 heads on one GPU, 128 sequences of 4096: compute bound.
        OperatorCost busy =
            h100->DecodeAttention(128, 128, 1, 4096, 576, DataType::BF16, 512, true);
        NS_TEST_ASSERT_MSG_EQ(busy.bound, BoundLevel::COMPUTE, "128 query rows per latent");
        NS_TEST_ASSERT_MSG_EQ_TOL(busy.flops / busy.timeS / 1e12, 620, 100, "TFLOP/s");
    }
};

/**
 * \brief The per-head decode kernel (one thread block per sequence and query head): with one
 * query head per KV head and many blocks it streams the cache like the split-KV kernel; under
 * GQA every query head reads its group's cache through L2; with few blocks most SMs idle.
 */
class DecodePerHeadTestCase : public TestCase
{
  public:
    DecodePerHeadTestCase()
        : TestCase("per-head decode attention: HBM-bound for MHA, L2-bound under GQA")
    {}

  private:
    void
    DoRun() override
    {
        auto a100 = ModelOf("a100-sxm-80gb");
        const GpuSpec& g = a100->GetGpu();
        const auto fp16 = DataType::FP16;
        // Llama-2-7B, 64 sequences of 1152 cached tokens: 64 x 32 blocks, HBM bound.
        OperatorCost mha = a100->DecodeAttentionPerHead(64, 32, 32, 1152, 128, fp16);
        OperatorCost mhaSplit = a100->DecodeAttention(64, 32, 32, 1152, 128, fp16);
        NS_TEST_EXPECT_MSG_EQ(mha.bound, BoundLevel::HBM, "MHA streams the cache");
        NS_TEST_EXPECT_MSG_EQ_TOL(mha.timeS / mhaSplit.timeS, 1.0, 0.1, "like split-KV");
        // Llama-2-70B at TP4 (16 query heads, 2 KV heads per GPU): each of the 8 query heads of
        // a group reads the group's cache.
        OperatorCost gqa = a100->DecodeAttentionPerHead(64, 16, 2, 1152, 128, fp16);
        OperatorCost gqaSplit = a100->DecodeAttention(64, 16, 2, 1152, 128, fp16);
        NS_TEST_EXPECT_MSG_EQ_TOL(gqa.l2Bytes / gqa.hbmBytes, 8.0, 0.05, "8 reads per KV head");
        NS_TEST_EXPECT_MSG_EQ(gqa.bound, BoundLevel::L2, "GQA repeats are served by L2");
        NS_TEST_EXPECT_MSG_GT(gqa.timeS, 2 * gqaSplit.timeS, "slower than one read per group");
        // One sequence, 16 blocks on 108 SMs: the L2 share of 16 SMs bounds the rate.
        OperatorCost few = a100->DecodeAttentionPerHead(1, 16, 2, 2048, 128, fp16);
        const double rate = g.l2BandwidthBps * g.efficiency.l2 * 16 / g.smCount;
        NS_TEST_EXPECT_MSG_GT_OR_EQ(few.timeS, few.l2Bytes / rate, "16 SMs busy");
        NS_TEST_EXPECT_MSG_EQ_TOL(few.smUtilization, 16.0 / 108, 1e-9, "SM utilization");
    }
};

/** \brief Elementwise operators are rooflines; tiny ones are dominated by the launch. */
class ElementwiseTestCase : public TestCase
{
  public:
    ElementwiseTestCase()
        : TestCase("elementwise operators: HBM rooflines and launch-bound tiny kernels")
    {}

  private:
    void
    DoRun() override
    {
        auto a100 = ModelOf("a100-sxm-80gb");
        const GpuSpec& g = a100->GetGpu();
        double bw = g.hbmBandwidthBps * g.efficiency.hbm;
        OperatorCost norm = a100->RmsNorm(4096, 4096, DataType::BF16);
        NS_TEST_ASSERT_MSG_EQ(norm.bound, BoundLevel::HBM, "RMSNorm is HBM bound");
        double bytes = 2.0 * 4096 * 4096 * 2;
        NS_TEST_ASSERT_MSG_GT_OR_EQ(norm.hbmBytes, bytes, "reads and writes the activations");
        NS_TEST_ASSERT_MSG_EQ_TOL(norm.timeS,
                                  norm.hbmBytes / bw + g.launchOverheadS + g.memoryLatencyS,
                                  1e-12,
                                  "roofline time");
        OperatorCost add = a100->ResidualAdd(4096, DataType::BF16);
        NS_TEST_ASSERT_MSG_EQ(add.bound, BoundLevel::LAUNCH, "a 4096-element add is launch bound");
        OperatorCost adam = a100->AdamUpdate(1000000000, DataType::BF16, DataType::BF16);
        NS_TEST_ASSERT_MSG_EQ_TOL(adam.hbmBytes, 1e9 * 28, 1.0, "Adam moves 28 B/param");
        // Each kernel moves its tensors once (counted by hand: what it must read and write,
        // 2-byte elements) plus at most a small extra (norm weights and row statistics, token
        // ids, the rotary table), and streams them at the HBM rate after one launch.
        const auto bf16 = DataType::BF16;
        struct Row
        {
            OperatorCost c;    //!< the kernel
            double compulsory; //!< bytes of its input and output tensors
            double extra;      //!< the most it may move beyond them, as a fraction
        };

        const Row rows[] = {
            {a100->LayerNorm(4096, 4096, bf16), 2.0 * 4096 * 4096 * 2, 0.01},       // x in, y out
            {a100->Softmax(2048, 2048, bf16), 2.0 * 2048 * 2048 * 2, 0.0},          // rows in, out
            {a100->Gelu(1 << 22, bf16), 2.0 * (1 << 22) * 2, 0.0},                  // x in, y out
            {a100->SquaredRelu(1 << 22, bf16), 2.0 * (1 << 22) * 2, 0.0},           // x in, y out
            {a100->SwiGlu(4096, 11008, bf16), 3.0 * 4096 * 11008 * 2, 0.0},         // gate, up, out
            {a100->GeGlu(4096, 11008, bf16), 3.0 * 4096 * 11008 * 2, 0.0},          // gate, up, out
            {a100->Rope(4096, 32, 8, 128, bf16), 2.0 * 4096 * 40 * 128 * 2, 0.03},  // q, k in/out
            {a100->EmbeddingLookup(4096, 4096, bf16), 2.0 * 4096 * 4096 * 2, 0.01}, // rows
            {a100->CrossEntropy(4096, 32000, bf16), 2.0 * 4096 * 32000 * 2, 0.01},  // logits, grad
        };
        for (const Row& r : rows)
        {
            const OperatorCost& c = r.c;
            NS_TEST_ASSERT_MSG_GT_OR_EQ(c.hbmBytes, r.compulsory, c.kind << " compulsory bytes");
            NS_TEST_ASSERT_MSG_LT_OR_EQ(
                c.hbmBytes, r.compulsory * (1 + r.extra), c.kind << " moves little else");
            NS_TEST_ASSERT_MSG_EQ(c.bound, BoundLevel::HBM, c.kind << " is HBM bound");
            const double stream = r.compulsory / bw + g.launchOverheadS;
            NS_TEST_ASSERT_MSG_GT_OR_EQ(c.timeS, stream, c.kind << " faster than HBM");
            NS_TEST_ASSERT_MSG_LT_OR_EQ(c.timeS,
                                        (1 + r.extra) * stream + g.memoryLatencyS * (1 + 1e-9),
                                        c.kind << " streams at the HBM rate");
            NS_TEST_ASSERT_MSG_EQ(c.tensorCores, false, c.kind << " runs on CUDA cores");
        }
        // A backward kernel reads the saved input and the incoming gradient, writes one.
        OperatorCost gelu = a100->Gelu(1 << 22, bf16);
        OperatorCost geluBwd = a100->ElementwiseBackward(gelu, 1 << 22, bf16);
        NS_TEST_ASSERT_MSG_EQ(geluBwd.kind, "gelu_bwd", "named after the forward");
        NS_TEST_ASSERT_MSG_EQ_TOL(geluBwd.hbmBytes, 3.0 * (1 << 22) * 2, 1.0, "3 tensors");
        // Squared ReLU: max and a multiply per element, against GELU's tanh form.
        NS_TEST_EXPECT_MSG_EQ_TOL(
            a100->SquaredRelu(1 << 22, bf16).flops, 2.0 * (1 << 22), 1.0, "2 FLOP/element");
    }
};

/** \brief Bad input is a SpecError, never a crash. */
class ComputeBadInputTestCase : public TestCase
{
  public:
    ComputeBadInputTestCase()
        : TestCase("bad compute-model input raises SpecError")
    {}

  private:
    void
    DoRun() override
    {
        Ptr<GpuComputeModel> empty = CreateObject<GpuComputeModel>();
        bool thrown = false;
        try
        {
            empty->Gemm(1, 1, 1, DataType::BF16);
        }
        catch (const SpecError&)
        {
            thrown = true;
        }
        NS_TEST_ASSERT_MSG_EQ(thrown, true, "no GPU set");
        auto a100 = ModelOf("a100-sxm-80gb");
        thrown = false;
        try
        {
            a100->Gemm(0, 16, 16, DataType::BF16);
        }
        catch (const SpecError& e)
        {
            thrown = std::string(e.what()).find("at least 1") != std::string::npos;
        }
        NS_TEST_ASSERT_MSG_EQ(thrown, true, "zero dimension");
        thrown = false;
        KernelTiling huge;
        huge.blockM = 256;
        huge.blockN = 256;
        huge.blockK = 128;
        huge.stages = 5;
        try
        {
            a100->GemmWithTiling(4096, 4096, 4096, DataType::BF16, 1, huge);
        }
        catch (const SpecError& e)
        {
            thrown = std::string(e.what()).find("does not fit") != std::string::npos;
        }
        NS_TEST_ASSERT_MSG_EQ(thrown, true, "tiling too large for shared memory");
        thrown = false;
        try
        {
            AttentionShape s;
            s.heads = 6;
            s.kvHeads = 4;
            a100->AttentionForward(s, DataType::BF16);
        }
        catch (const SpecError&)
        {
            thrown = true;
        }
        NS_TEST_ASSERT_MSG_EQ(thrown, true, "heads not a multiple of kvHeads");
        thrown = false;
        try
        {
            a100->Gemm(16, 16, 16, DataType::FP8); // A100 has no FP8 rate at all
        }
        catch (const SpecError& e)
        {
            thrown = std::string(e.what()).find("fp8") != std::string::npos;
        }
        NS_TEST_ASSERT_MSG_EQ(thrown, true, "no FP8 on A100");
    }
};

/** \brief The compute-model unit tests. */
class ComputeModelTestSuite : public TestSuite
{
  public:
    ComputeModelTestSuite()
        : TestSuite("rapid-llm-compute", UNIT)
    {
        AddTestCase(new GemmRooflineTestCase, TestCase::QUICK);
        AddTestCase(new WaveQuantizationTestCase, TestCase::QUICK);
        AddTestCase(new UnusedOccupancyTestCase, TestCase::QUICK);
        AddTestCase(new SplitKTestCase, TestCase::QUICK);
        AddTestCase(new TilingFitsTestCase, TestCase::QUICK);
        AddTestCase(new MemoTestCase, TestCase::QUICK);
        AddTestCase(new AttentionTestCase, TestCase::QUICK);
        AddTestCase(new SlidingWindowAttentionTestCase, TestCase::QUICK);
        AddTestCase(new MmaSyncRateTestCase, TestCase::QUICK);
        AddTestCase(new TritonAttentionTestCase, TestCase::QUICK);
        AddTestCase(new HopperAttentionTestCase, TestCase::QUICK);
        AddTestCase(new DecodePerHeadTestCase, TestCase::QUICK);
        AddTestCase(new ElementwiseTestCase, TestCase::QUICK);
        AddTestCase(new ComputeBadInputTestCase, TestCase::QUICK);
    }
};

static ComputeModelTestSuite g_computeModelTestSuite; //!< registers the suite
