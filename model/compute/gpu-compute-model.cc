/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "gpu-compute-model.h"

#include "attention-kernel-choice.h"
#include "attention-kernel-model.h"
#include "decode-attention-kernel-model.h"
#include "elementwise-kernel-model.h"
#include "gemm-kernel-model.h"
#include "hopper-attention-kernel-model.h"
#include "ns3/boolean.h"
#include "ns3/enum.h"
#include "ns3/log.h"
#include "ns3/spec-error.h"
#include "ns3/uinteger.h"
#include "triton-attention-kernel-model.h"

namespace ns3 {
namespace rapidllm {

NS_LOG_COMPONENT_DEFINE("RapidLlmGpuComputeModel");
NS_OBJECT_ENSURE_REGISTERED(GpuComputeModel);

TypeId
GpuComputeModel::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::rapidllm::GpuComputeModel")
            .SetParent<Object>()
            .SetGroupName("RapidLlm")
            .AddConstructor<GpuComputeModel>()
            .AddAttribute("EnableSplitK",
                          "Consider split-K for GEMMs with fewer output tiles than SMs "
                          "(as cuBLAS does for skinny GEMMs).",
                          BooleanValue(true),
                          MakeBooleanAccessor(&GpuComputeModel::m_enableSplitK),
                          MakeBooleanChecker())
            .AddAttribute("MaxSplitK",
                          "Largest split-K factor considered.",
                          UintegerValue(16),
                          MakeUintegerAccessor(&GpuComputeModel::m_maxSplitK),
                          MakeUintegerChecker<uint32_t>(1, 64))
            .AddAttribute("ClockPolicy",
                          "Which clock kernels run at on a GPU with a power model: sustained (a "
                          "busy GPU; a kernel whose board power would exceed the limit runs at "
                          "the clock where it meets it) or boost (short bursts from idle, as in "
                          "microbenchmarks of a few milliseconds).",
                          EnumValue(static_cast<int>(ClockPolicy::SUSTAINED)),
                          MakeEnumAccessor(&GpuComputeModel::SetClockPolicyValue,
                                           &GpuComputeModel::GetClockPolicyValue),
                          MakeEnumChecker(static_cast<int>(ClockPolicy::SUSTAINED),
                                          "sustained",
                                          static_cast<int>(ClockPolicy::BOOST),
                                          "boost"));
    return tid;
}

GpuComputeModel::GpuComputeModel()
    : m_hasGpu(false)
    , m_enableSplitK(true)
    , m_maxSplitK(16)
    , m_clockPolicy(ClockPolicy::SUSTAINED)
{}

GpuComputeModel::GpuComputeModel(const GpuSpec& gpu)
    : GpuComputeModel()
{
    SetGpu(gpu);
}

Ptr<GpuComputeModel>
GpuComputeModel::WithSmCount(uint32_t sms, double clockHz)
{
    sms = std::max<uint32_t>(1, std::min(sms, m_gpu.smCount));
    if (sms == m_gpu.smCount && clockHz <= 0)
    {
        return Ptr<GpuComputeModel>(this);
    }
    Ptr<GpuComputeModel>& fewer = m_fewerSms[{sms, clockHz}];
    if (!fewer)
    {
        GpuSpec g = m_gpu;
        // The rates the spec gives for the whole GPU are its SMs' sum (the kernel models take
        // one SM's share of them): the fewer SMs keep their own share, not the whole. The L2's
        // share follows the SMs too (each SM's port); device memory stays whole (fewer SMs can
        // still fill it).
        const double share = double(sms) / m_gpu.smCount;
        for (auto& [type, flops] : g.tensorFlops)
        {
            flops *= share;
        }
        for (auto& [type, flops] : g.vectorFlops)
        {
            flops *= share;
        }
        g.l2BandwidthBps *= share;
        g.smCount = sms;
        if (clockHz > 0 && g.power.Has())
        {
            g.power.boostClockHz = clockHz; // run there: the boost policy below
        }
        fewer = CreateObject<GpuComputeModel>(g);
        fewer->m_enableSplitK = m_enableSplitK;
        fewer->m_maxSplitK = m_maxSplitK;
        fewer->m_clockPolicy = clockHz > 0 ? ClockPolicy::BOOST : m_clockPolicy;
    }
    return fewer;
}

void
GpuComputeModel::SetGpu(const GpuSpec& gpu)
{
    if (gpu.smCount == 0 || gpu.clockHz <= 0 || gpu.hbmBandwidthBps <= 0 || gpu.l2BandwidthBps <= 0
        || gpu.smemBytesPerClockPerSm <= 0)
    {
        throw SpecError(gpu.Origin().empty() ? "gpu" : gpu.Origin(),
                        "gpu",
                        "the compute model needs sm_count, clock_mhz, l2_bandwidth_GBps, "
                        "hbm_bandwidth_GBps and smem_bytes_per_clock_per_sm to be positive");
    }
    m_gpu = gpu;
    m_hasGpu = true;
    m_gemmCache.clear();
    m_attentionKernels.clear();
    m_fewerSms.clear();
    NS_LOG_DEBUG("GPU " << gpu.name << ": " << gpu.smCount << " SMs at " << gpu.clockHz / 1e6
                        << " MHz, HBM " << gpu.hbmBandwidthBps / 1e9 << " GB/s, L2 "
                        << gpu.l2BandwidthBps / 1e9 << " GB/s");
}

const GpuSpec&
GpuComputeModel::GetGpu() const
{
    return m_gpu;
}

void
GpuComputeModel::SetClockPolicy(ClockPolicy policy)
{
    m_clockPolicy = policy;
    m_gemmCache.clear();
    m_attentionKernels.clear();
    m_fewerSms.clear();
}

ClockPolicy
GpuComputeModel::GetClockPolicy() const
{
    return m_clockPolicy;
}

void
GpuComputeModel::SetClockPolicyValue(int policy)
{
    SetClockPolicy(static_cast<ClockPolicy>(policy));
}

int
GpuComputeModel::GetClockPolicyValue() const
{
    return static_cast<int>(m_clockPolicy);
}

size_t
GpuComputeModel::CacheSize() const
{
    return m_gemmCache.size();
}

void
GpuComputeModel::ClearCache()
{
    m_gemmCache.clear();
    m_attentionKernels.clear();
    m_fewerSms.clear();
}

size_t
GpuComputeModel::GemmKeyHash::operator()(const GemmKey& key) const
{
    // FNV-1a style mixing of the five fields; only used for lookups, never iterated.
    uint64_t h = 1469598103934665603ull;
    for (uint64_t v : {key.m, key.n, key.k, key.batch, uint64_t(key.type)})
    {
        h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
        h *= 1099511628211ull;
    }
    return static_cast<size_t>(h);
}

void
GpuComputeModel::Check(const std::string& what, std::initializer_list<uint64_t> dims) const
{
    if (!m_hasGpu)
    {
        throw SpecError("compute model", what, "no GPU set; call SetGpu first");
    }
    for (uint64_t d : dims)
    {
        if (d == 0)
        {
            throw SpecError("compute model", what, "every dimension must be at least 1");
        }
    }
}

OperatorCost
GpuComputeModel::AtClock(DataType type,
                         const std::function<OperatorCost(const GpuSpec&)>& eval) const
{
    return kernel::RunAtClock(m_gpu, m_clockPolicy, type, eval);
}

OperatorCost
GpuComputeModel::GemmWithTiling(uint64_t m,
                                uint64_t n,
                                uint64_t k,
                                DataType type,
                                uint64_t batch,
                                const KernelTiling& tiling) const
{
    Check("gemm", {m, n, k, batch});
    OperatorCost c;
    if (!kernel::GemmCostWithTiling(m_gpu, m, n, k, type, batch, tiling, c))
    {
        throw SpecError("compute model",
                        "tiling",
                        "the tiling " + std::to_string(tiling.blockM) + "x"
                            + std::to_string(tiling.blockN) + "x" + std::to_string(tiling.blockK)
                            + " with " + std::to_string(tiling.stages)
                            + " stages does not fit on an SM of " + m_gpu.name);
    }
    return AtClock(type,
                   [&](const GpuSpec& g)
                   {
                       OperatorCost at;
                       kernel::GemmCostWithTiling(g, m, n, k, type, batch, tiling, at);
                       return at;
                   });
}

OperatorCost
GpuComputeModel::Gemm(uint64_t m, uint64_t n, uint64_t k, DataType type, uint64_t batch)
{
    Check("gemm", {m, n, k, batch});
    GemmKey key{m, n, k, batch, static_cast<int>(type)};
    auto it = m_gemmCache.find(key);
    if (it != m_gemmCache.end())
    {
        return it->second;
    }
    kernel::GemmSearchOptions options;
    options.splitK = m_enableSplitK;
    options.maxSplitK = m_maxSplitK;
    // cuBLAS picks the kernel for the shape, not for the clock: the tiling is the fastest at
    // the boost clock (the rated clock without a power model) and keeps it at lower clocks.
    const GpuSpec& rated = m_gpu;
    const KernelTiling tiling =
        kernel::BestGemmCost(rated.power.Has() ? rated.AtClock(rated.power.boostClockHz) : rated,
                             m,
                             n,
                             k,
                             type,
                             batch,
                             options)
            .tiling;
    OperatorCost cost = AtClock(type,
                                [&](const GpuSpec& g)
                                {
                                    OperatorCost at;
                                    kernel::GemmCostWithTiling(g, m, n, k, type, batch, tiling, at);
                                    return at;
                                });
    m_gemmCache.emplace(key, cost);
    NS_LOG_DEBUG("gemm memo miss " << m << "x" << n << "x" << k << " batch " << batch << ": "
                                   << m_gemmCache.size() << " shapes memoized");
    return cost;
}

void
GpuComputeModel::CheckAttention(const AttentionShape& s) const
{
    Check("attention", {s.batch, s.heads, s.kvHeads, s.queryLen, s.kvLen, s.headDim});
    if (s.heads % s.kvHeads != 0 || s.queryLen > s.kvLen)
    {
        throw SpecError("compute model",
                        "attention",
                        "heads must be a multiple of kvHeads and queryLen at most kvLen");
    }
}

AttentionKernel
GpuComputeModel::AttentionKernelFor(const AttentionShape& s, DataType type)
{
    const auto key = std::make_tuple(int(s.kernel), int(type), s.headDim);
    auto it = m_attentionKernels.find(key);
    if (it == m_attentionKernels.end())
    {
        it = m_attentionKernels
                 .emplace(key, ResolveAttentionKernel(m_gpu, s.kernel, type, s.headDim))
                 .first;
    }
    return it->second;
}

OperatorCost
GpuComputeModel::AttentionForward(const AttentionShape& s, DataType type)
{
    CheckAttention(s);
    return AtClock(type,
                   [&](const GpuSpec& g)
                   {
                       switch (AttentionKernelFor(s, type))
                       {
                           case AttentionKernel::TRITON2022:
                               return kernel::TritonAttentionForward(g, s, type);
                           case AttentionKernel::HOPPER:
                               return kernel::HopperAttentionForward(g, s, type);
                           default:
                               return kernel::FlashAttentionForward(g, s, type);
                       }
                   });
}

OperatorCost
GpuComputeModel::AttentionBackward(const AttentionShape& s, DataType type)
{
    CheckAttention(s);
    return AtClock(type,
                   [&](const GpuSpec& g)
                   {
                       switch (AttentionKernelFor(s, type))
                       {
                           case AttentionKernel::TRITON2022:
                               return kernel::TritonAttentionBackward(g, s, type);
                           case AttentionKernel::HOPPER:
                               return kernel::HopperAttentionBackward(g, s, type);
                           default:
                               return kernel::FlashAttentionBackward(g, s, type);
                       }
                   });
}

OperatorCost
GpuComputeModel::UnfusedAttentionForward(const AttentionShape& s, DataType type)
{
    return kernel::UnfusedAttention(*this, s, type, false);
}

OperatorCost
GpuComputeModel::UnfusedAttentionBackward(const AttentionShape& s, DataType type)
{
    return kernel::UnfusedAttention(*this, s, type, true);
}

void
GpuComputeModel::CheckDecode(
    uint64_t batch, uint64_t heads, uint64_t kvHeads, uint64_t kvLen, uint64_t headDim) const
{
    Check("decode_attention", {batch, heads, kvHeads, kvLen, headDim});
    if (heads % kvHeads != 0)
    {
        throw SpecError("compute model", "decode_attention", "heads must be a multiple of kvHeads");
    }
}

OperatorCost
GpuComputeModel::DecodeAttention(uint64_t batch,
                                 uint64_t heads,
                                 uint64_t kvHeads,
                                 uint64_t kvLen,
                                 uint64_t headDim,
                                 DataType type,
                                 uint64_t valueDim,
                                 bool latent,
                                 uint32_t cacheBits)
{
    CheckDecode(batch, heads, kvHeads, kvLen, headDim);
    return AtClock(
        type,
        [&](const GpuSpec& g)
        {
            return kernel::SplitKvDecodeAttention(
                g, batch, heads, kvHeads, kvLen, headDim, type, valueDim, latent, cacheBits);
        });
}

OperatorCost
GpuComputeModel::DecodeAttentionPerHead(uint64_t batch,
                                        uint64_t heads,
                                        uint64_t kvHeads,
                                        uint64_t kvLen,
                                        uint64_t headDim,
                                        DataType type,
                                        uint64_t valueDim,
                                        bool latent,
                                        uint32_t cacheBits)
{
    CheckDecode(batch, heads, kvHeads, kvLen, headDim);
    return AtClock(
        type,
        [&](const GpuSpec& g)
        {
            return kernel::PerHeadDecodeAttention(
                g, batch, heads, kvHeads, kvLen, headDim, type, valueDim, latent, cacheBits);
        });
}

OperatorCost
GpuComputeModel::Elementwise(const std::string& kind,
                             double flops,
                             double bytesRead,
                             double bytesWritten) const
{
    Check(kind, {});
    return AtClock(DataType::FP32,
                   [&](const GpuSpec& g)
                   {
                       return kernel::Roofline(g, kind, flops, bytesRead, bytesWritten);
                   });
}

OperatorCost
GpuComputeModel::ElementwiseBackward(const OperatorCost& forward,
                                     double elements,
                                     DataType type) const
{
    Check(forward.kind + "_bwd", {});
    return AtClock(DataType::FP32,
                   [&](const GpuSpec& g)
                   {
                       return kernel::ElementwiseBackwardKernel(g, forward, elements, type);
                   });
}

OperatorCost
GpuComputeModel::LayerNorm(uint64_t tokens, uint64_t hidden, DataType type) const
{
    return RunElementwise("layernorm", &kernel::LayerNormKernel, type, tokens, hidden);
}

OperatorCost
GpuComputeModel::RmsNorm(uint64_t tokens, uint64_t hidden, DataType type) const
{
    return RunElementwise("rmsnorm", &kernel::RmsNormKernel, type, tokens, hidden);
}

OperatorCost
GpuComputeModel::Softmax(uint64_t rows, uint64_t cols, DataType type) const
{
    return RunElementwise("softmax", &kernel::SoftmaxKernel, type, rows, cols);
}

OperatorCost
GpuComputeModel::Gelu(uint64_t elements, DataType type) const
{
    return RunElementwise("gelu", &kernel::GeluKernel, type, elements);
}

OperatorCost
GpuComputeModel::SquaredRelu(uint64_t elements, DataType type) const
{
    return RunElementwise("squared_relu", &kernel::SquaredReluKernel, type, elements);
}

OperatorCost
GpuComputeModel::GeGlu(uint64_t tokens, uint64_t ffnHidden, DataType type) const
{
    return RunElementwise("geglu", &kernel::GeGluKernel, type, tokens, ffnHidden);
}

OperatorCost
GpuComputeModel::SwiGlu(uint64_t tokens, uint64_t ffnHidden, DataType type) const
{
    return RunElementwise("swiglu", &kernel::SwiGluKernel, type, tokens, ffnHidden);
}

OperatorCost
GpuComputeModel::Rope(
    uint64_t tokens, uint64_t heads, uint64_t kvHeads, uint64_t headDim, DataType type) const
{
    return RunElementwise("rope", &kernel::RopeKernel, type, tokens, heads, kvHeads, headDim);
}

OperatorCost
GpuComputeModel::ResidualAdd(uint64_t elements, DataType type) const
{
    return RunElementwise("residual_add", &kernel::ResidualAddKernel, type, elements);
}

OperatorCost
GpuComputeModel::EmbeddingLookup(uint64_t tokens, uint64_t hidden, DataType type) const
{
    return RunElementwise("embedding", &kernel::EmbeddingLookupKernel, type, tokens, hidden);
}

OperatorCost
GpuComputeModel::CrossEntropy(uint64_t tokens, uint64_t vocab, DataType type) const
{
    return RunElementwise("cross_entropy", &kernel::CrossEntropyKernel, type, tokens, vocab);
}

OperatorCost
GpuComputeModel::AdamUpdate(uint64_t params, DataType paramType, DataType gradType) const
{
    Check("adam", {params});
    return AtClock(DataType::FP32,
                   [&](const GpuSpec& g)
                   {
                       return kernel::AdamUpdateKernel(g, params, paramType, gradType);
                   });
}

} // namespace rapidllm
} // namespace ns3
