/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "gpu-compute-model.h"

#include "ns3/boolean.h"
#include "ns3/log.h"
#include "ns3/spec-error.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <cmath>

namespace ns3 {
namespace rapidllm {

NS_LOG_COMPONENT_DEFINE("RapidLlmGpuComputeModel");
NS_OBJECT_ENSURE_REGISTERED(GpuComputeModel);

namespace {

/** \return ceil(a / b) for positive integers */
inline uint64_t
CeilDiv(uint64_t a, uint64_t b)
{
    return (a + b - 1) / b;
}

/**
 * Wave schedule of equal tiles over the SMs: full waves run \p perSm blocks on every SM; the
 * busiest SM of a partial last wave runs ceil(R / SMs) blocks. \p tileWork is one block's
 * time with the SM to itself. Returns the time of the busiest SM.
 */
inline double
Schedule(uint64_t tiles, uint32_t sms, uint32_t perSm, double tileWork)
{
    uint64_t slots = uint64_t(sms) * perSm;
    uint64_t full = tiles / slots;
    uint64_t rest = tiles % slots;
    return (double(full) * perSm + double(CeilDiv(rest, sms))) * tileWork;
}

/** Records a FlashAttention kernel's tiling (two-stage, \p br x \p bc blocks) and its waves. */
void
SetFlashTiling(OperatorCost& c,
               uint32_t br,
               uint32_t bc,
               uint32_t headDim,
               uint32_t threads,
               uint32_t perSm,
               uint64_t smem,
               uint64_t ctas,
               uint32_t sms)
{
    c.tiling.blockM = br;
    c.tiling.blockN = bc;
    c.tiling.blockK = headDim;
    c.tiling.stages = 2;
    c.tiling.threads = threads;
    c.tiling.blocksPerSm = perSm;
    c.tiling.smemPerBlock = smem;
    c.tiles = ctas;
    c.waves = double(ctas) / (double(sms) * perSm);
}

/** Sets the bound: the level with the longest time (launch if the overhead exceeds all). */
void
ApplyBound(OperatorCost& c)
{
    c.bound = c.SlowestLevel();
    if (c.overheadTimeS > std::max({c.computeTimeS, c.smemTimeS, c.l2TimeS, c.hbmTimeS}))
    {
        c.bound = BoundLevel::LAUNCH;
    }
}

} // namespace

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
                          MakeUintegerChecker<uint32_t>(1, 64));
    return tid;
}

GpuComputeModel::GpuComputeModel()
    : m_hasGpu(false)
    , m_enableSplitK(true)
    , m_maxSplitK(16)
{}

GpuComputeModel::GpuComputeModel(const GpuSpec& gpu)
    : GpuComputeModel()
{
    SetGpu(gpu);
}

void
GpuComputeModel::SetGpu(const GpuSpec& gpu)
{
    if (gpu.smCount == 0 || gpu.clockHz <= 0 || gpu.hbmBandwidthBps <= 0 || gpu.l2BandwidthBps <= 0
        || gpu.smemBytesPerClockPerSm <= 0)
    {
        throw SpecError(gpu.name.empty() ? "gpu" : gpu.name,
                        "gpu",
                        "the compute model needs sm_count, clock_mhz, l2_bandwidth_GBps, "
                        "hbm_bandwidth_GBps and smem_bytes_per_clock_per_sm to be positive");
    }
    m_gpu = gpu;
    m_hasGpu = true;
    m_gemmCache.clear();
}

const GpuSpec&
GpuComputeModel::GetGpu() const
{
    return m_gpu;
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

double
GpuComputeModel::MatmulPeak(DataType type, bool& tensor) const
{
    double peak = m_gpu.TensorFlops(type);
    tensor = peak > 0;
    if (!tensor)
    {
        // CUDA cores only for a type the GPU lists (VectorFlops would fall back to fp32, but a
        // GPU without fp8 support cannot run an fp8 GEMM at any rate).
        auto it = m_gpu.vectorFlops.find(type);
        peak = it == m_gpu.vectorFlops.end() ? 0.0 : it->second;
    }
    if (peak <= 0)
    {
        throw SpecError(m_gpu.name,
                        "gpu.tensor_tflops",
                        "no tensor or vector FLOP rate for data type " + ToString(type));
    }
    return peak;
}

void
GpuComputeModel::SetBound(OperatorCost& c)
{
    ApplyBound(c);
}

namespace {

/** The numbers of one evaluated GEMM tiling (a POD, cheap to copy during the search). */
struct GemmEval
{
    double timeS = 0;         //!< total time
    double smemBytes = 0;     //!< shared-memory bytes
    double l2Bytes = 0;       //!< L2 bytes
    double hbmBytes = 0;      //!< HBM bytes
    double computeTimeS = 0;  //!< compute time
    double smemTimeS = 0;     //!< shared-memory time
    double l2TimeS = 0;       //!< L2 time
    double hbmTimeS = 0;      //!< HBM time
    double overheadTimeS = 0; //!< overhead
    KernelTiling tiling;      //!< the tiling with occupancy
    uint64_t tiles = 0;       //!< blocks
    double waves = 0;         //!< waves
    uint32_t kernels = 1;     //!< kernels
    double smUtilization = 0; //!< SM utilization
};

/**
 * Evaluates one GEMM tiling on \p g at the matmul rate \p peak (tensor cores if \p tensor);
 * returns false if the tiling does not fit an SM. Fills a POD so that the search over
 * candidates does no allocation.
 */
bool
EvaluateGemmTiling(const GpuSpec& g,
                   double peak,
                   bool tensor,
                   uint64_t m,
                   uint64_t n,
                   uint64_t k,
                   DataType type,
                   uint64_t batch,
                   KernelTiling t,
                   GemmEval& c)
{
    const GpuEfficiency& e = g.efficiency;
    const double b = BytesOf(type);
    const uint32_t sms = g.smCount;
    if (t.blockM == 0 || t.blockN == 0 || t.blockK == 0 || t.stages < 2 || t.splitK == 0)
    {
        return false;
    }

    // Occupancy: shared memory (the multi-stage operand buffers), registers (fp32 accumulators
    // plus fragments and addresses), threads and the block limit.
    t.smemPerBlock = uint64_t(t.blockM + t.blockN) * t.blockK * uint64_t(b) * t.stages;
    if (t.smemPerBlock > g.sharedMemoryPerBlockBytes)
    {
        return false;
    }
    t.threads = std::clamp<uint32_t>(t.blockM * t.blockN / 64, 128, 256);
    uint32_t regs = CeilDiv(uint64_t(t.blockM) * t.blockN, t.threads) + 64;
    if (regs > 255)
    {
        return false;
    }
    uint64_t bySmem = g.sharedMemoryPerSmBytes / t.smemPerBlock;
    uint64_t byRegs = g.registersPerSm / (uint64_t(regs) * t.threads);
    uint64_t byThreads = g.maxThreadsPerSm / t.threads;
    t.blocksPerSm = static_cast<uint32_t>(
        std::min<uint64_t>({bySmem, byRegs, byThreads, uint64_t(g.maxBlocksPerSm)}));
    if (t.blocksPerSm == 0)
    {
        return false;
    }

    const double eff = tensor ? e.tensor : e.vector;
    const double perSmRate = peak / sms * eff;
    const double smemRate = g.smemBytesPerClockPerSm * g.clockHz * e.smem;
    const double latency = g.memoryLatencyS;

    const uint64_t kSlice = CeilDiv(k, t.splitK);
    const uint64_t kIters = CeilDiv(kSlice, t.blockK);
    const uint64_t tm = CeilDiv(m, t.blockM);
    const uint64_t tn = CeilDiv(n, t.blockN);
    const uint64_t tiles = tm * tn * batch * t.splitK;
    const uint64_t slots = uint64_t(sms) * t.blocksPerSm;

    // One main-loop step of one block: MMA time, and shared-memory traffic: the A and B slabs
    // written once (cp.async/TMA) and read by every warp (or warpgroup) that needs them.
    const double stepFlops = 2.0 * t.blockM * t.blockN * t.blockK;
    const double cStep = stepFlops / perSmRate;
    const uint32_t wm = std::min(t.blockM, g.mmaTileM);
    const uint32_t wn = std::min(t.blockN, g.mmaTileN);
    const double aSlab = double(t.blockM) * t.blockK * b;
    const double bSlab = double(t.blockN) * t.blockK * b;
    const double smemStep =
        aSlab + bSlab + aSlab * CeilDiv(t.blockN, wn) + bSlab * CeilDiv(t.blockM, wm);
    const double sStep = smemStep / smemRate;

    // Wave schedule. A block's step cannot be shorter than the memory latency divided by the
    // loads in flight ((stages - 1) per block): Little's law for the software pipeline.
    const uint64_t full = tiles / slots;
    const uint64_t rest = tiles % slots;
    const uint64_t lastPerSm = CeilDiv(rest, sms);
    const double x = std::max(cStep, sStep);
    const double fill = latency / (t.stages - 1);
    double tSm = double(full) * kIters * std::max(t.blocksPerSm * x, fill);
    if (rest > 0)
    {
        tSm += double(kIters) * std::max(lastPerSm * x, fill);
    }
    const double tCompute = Schedule(tiles, sms, t.blocksPerSm, kIters * cStep);
    const double tSmem = Schedule(tiles, sms, t.blocksPerSm, kIters * sStep);

    // L2 <-> SM traffic: every tile streams its A and B slabs; C (or fp32 partials) written.
    // With thread-block clusters (Hopper), TMA multicasts the larger slab from one L2 read to
    // the cluster's blocks that share it.
    const double active = double(std::min<uint64_t>(tiles, sms));
    const double partials = t.splitK > 1 ? double(m) * n * batch * t.splitK * 4.0 : 0.0;
    const double cBytes = double(m) * n * batch * b;
    const double shared = std::max(aSlab, bSlab);
    const double l2Step = aSlab + bSlab - shared * (1.0 - 1.0 / g.clusterMulticast);
    const double l2Bytes = double(tiles) * kIters * l2Step + (t.splitK > 1 ? partials : cBytes);
    const double l2Rate = g.l2BandwidthBps * e.l2 * active / sms;
    const double tL2 = l2Bytes / l2Rate;

    // HBM traffic: compulsory A, B, C, plus re-reads when the operands do not stay in L2. The
    // blocks in flight cover a near-square patch of r x c tiles (swizzled raster); A's row
    // panels are reused across a sweep if they fit in half the L2, else re-read per sweep.
    const double aOne = double(m) * k * b;
    const double bOne = double(k) * n * b;
    const double l2Half = 0.5 * double(g.l2Bytes);
    double aReads = 1;
    double bReads = 1;
    if (aOne + bOne > l2Half)
    {
        uint64_t inFlight = std::min<uint64_t>(tm * tn, slots);
        uint64_t r =
            std::min<uint64_t>(tm, std::max<uint64_t>(1, uint64_t(std::sqrt(double(inFlight)))));
        uint64_t cc = std::min<uint64_t>(tn, std::max<uint64_t>(1, CeilDiv(inFlight, r)));
        aReads = double(r) * t.blockM * k * b <= l2Half ? 1.0 : double(CeilDiv(tn, cc));
        bReads = bOne <= l2Half ? 1.0 : double(CeilDiv(tm, r));
    }
    double hbmBytes = (aOne * aReads + bOne * bReads) * batch + (t.splitK > 1 ? partials : cBytes);
    const double hbmRate = std::min(g.hbmBandwidthBps * e.hbm, l2Rate);
    double tHbm = hbmBytes / hbmRate;

    // Not overlapped with the main loop, per wave: the first loads' latency (pipeline fill),
    // staging the fp32 accumulators through shared memory, and the burst of C stores.
    const uint64_t waves = CeilDiv(tiles, slots);
    const double outBytes = t.splitK > 1 ? 4.0 : b;
    const double concurrent = double(std::min<uint64_t>(tiles, slots));
    const double staging = 2.0 * t.blocksPerSm * t.blockM * t.blockN * 4.0 / smemRate;
    const double burst = concurrent * t.blockM * t.blockN * outBytes / (g.hbmBandwidthBps * e.hbm);
    double overhead = g.launchOverheadS + double(waves) * (latency + staging + burst);

    uint32_t kernels = 1;
    if (t.splitK > 1)
    {
        // A separate reduction kernel reads the fp32 partials and writes C.
        double bytes = partials + cBytes;
        hbmBytes += bytes;
        double tReduce = bytes / (g.hbmBandwidthBps * e.hbm);
        tHbm += tReduce;
        overhead += g.launchOverheadS + latency;
        kernels = 2;
    }

    double body = std::max({tSm, tL2, tHbm});
    c.timeS = overhead + body;
    c.smemBytes = double(tiles) * kIters * smemStep;
    c.l2Bytes = l2Bytes;
    c.hbmBytes = hbmBytes;
    c.computeTimeS = tCompute;
    c.smemTimeS = tSmem;
    c.l2TimeS = tL2;
    // A pipeline too shallow for the latency waits on memory: charge that wait to HBM.
    c.hbmTimeS = tSm > std::max(tCompute, tSmem) * (1 + 1e-9) ? std::max(tHbm, tSm) : tHbm;
    c.overheadTimeS = overhead;
    c.tiling = t;
    c.tiles = tiles;
    c.waves = double(tiles) / double(slots);
    c.kernels = kernels;
    c.smUtilization = tCompute > 0 ? double(tiles) * kIters * cStep / (sms * tCompute) : 0.0;
    return true;
}

/** Fills an OperatorCost from an evaluated GEMM tiling. */
void
FillGemmCost(uint64_t m,
             uint64_t n,
             uint64_t k,
             uint64_t batch,
             double peak,
             bool tensor,
             const GemmEval& e,
             OperatorCost& c)
{
    c.kind = "gemm";
    c.timeS = e.timeS;
    c.flops = 2.0 * m * n * k * batch;
    c.smemBytes = e.smemBytes;
    c.l2Bytes = e.l2Bytes;
    c.hbmBytes = e.hbmBytes;
    c.computeTimeS = e.computeTimeS;
    c.smemTimeS = e.smemTimeS;
    c.l2TimeS = e.l2TimeS;
    c.hbmTimeS = e.hbmTimeS;
    c.overheadTimeS = e.overheadTimeS;
    c.tensorCores = tensor;
    c.utilization = c.flops / c.timeS / peak;
    c.tiling = e.tiling;
    c.tiles = e.tiles;
    c.waves = e.waves;
    c.kernels = e.kernels;
    c.smUtilization = e.smUtilization;
    ApplyBound(c);
}

} // namespace

OperatorCost
GpuComputeModel::GemmWithTiling(uint64_t m,
                                uint64_t n,
                                uint64_t k,
                                DataType type,
                                uint64_t batch,
                                const KernelTiling& tiling) const
{
    Check("gemm", {m, n, k, batch});
    bool tensor = false;
    const double peak = MatmulPeak(type, tensor);
    GemmEval e;
    if (!EvaluateGemmTiling(m_gpu, peak, tensor, m, n, k, type, batch, tiling, e))
    {
        throw SpecError("compute model",
                        "tiling",
                        "the tiling " + std::to_string(tiling.blockM) + "x"
                            + std::to_string(tiling.blockN) + "x" + std::to_string(tiling.blockK)
                            + " with " + std::to_string(tiling.stages)
                            + " stages does not fit on an SM of " + m_gpu.name);
    }
    OperatorCost c;
    FillGemmCost(m, n, k, batch, peak, tensor, e, c);
    return c;
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

    // Candidate tilings, in a fixed order (ties keep the first): block tiles of 16..256 rows
    // (small ones only for skinny M, like cuBLAS's GEMV-like kernels), 64..256 columns, K
    // steps of 64 or 128 bytes per row, 2..5 pipeline stages, and split-K for GEMMs with fewer
    // tiles than SMs.
    static const uint32_t kBlockM[] = {256, 128, 64, 32, 16};
    static const uint32_t kBlockN[] = {256, 128, 64};
    static const uint32_t kStepBytes[] = {128, 64};
    static const uint32_t kSplits[] = {1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64};
    const uint32_t bytes = BytesOf(type);
    const uint32_t sms = m_gpu.smCount;
    bool tensor = false;
    const double peak = MatmulPeak(type, tensor);

    GemmEval best;
    bool found = false;
    GemmEval c;
    for (size_t i = 0; i < sizeof(kBlockM) / sizeof(kBlockM[0]); ++i)
    {
        const uint32_t bm = kBlockM[i];
        if (bm < 64 && m > 2 * uint64_t(bm))
        {
            continue; // a small tile only pays off when M itself is small
        }
        if (bm > 16 && i + 1 < sizeof(kBlockM) / sizeof(kBlockM[0]) && kBlockM[i + 1] >= m)
        {
            continue; // a smaller tile already covers M with less padding
        }
        for (uint32_t bn : kBlockN)
        {
            uint64_t outTiles = CeilDiv(m, bm) * CeilDiv(n, bn) * batch;
            for (uint32_t stepBytes : kStepBytes)
            {
                uint32_t bk = std::max<uint32_t>(8, stepBytes / bytes);
                for (uint32_t split : kSplits)
                {
                    if (split > 1
                        && (!m_enableSplitK || split > m_maxSplitK
                            || outTiles * split > 2 * uint64_t(sms)
                            || CeilDiv(k, split) < 2 * uint64_t(bk)))
                    {
                        break;
                    }
                    // Deepest pipeline first, so that a tie keeps the deeper one (it hides
                    // more latency jitter than the model's mean latency shows).
                    for (uint32_t stages = 5; stages >= 2; --stages)
                    {
                        KernelTiling t;
                        t.blockM = bm;
                        t.blockN = bn;
                        t.blockK = bk;
                        t.stages = stages;
                        t.splitK = split;
                        if (!EvaluateGemmTiling(m_gpu, peak, tensor, m, n, k, type, batch, t, c))
                        {
                            continue; // too much shared memory; fewer stages may fit
                        }
                        if (!found || c.timeS < best.timeS * (1 - 1e-12))
                        {
                            best = c;
                            found = true;
                        }
                    }
                }
            }
        }
    }
    if (!found)
    {
        throw SpecError(m_gpu.name, "gpu", "no GEMM tiling fits this GPU's SM");
    }
    NS_LOG_LOGIC("gemm " << m << "x" << n << "x" << k << " -> " << best.timeS << " s");
    OperatorCost cost;
    FillGemmCost(m, n, k, batch, peak, tensor, best, cost);
    m_gemmCache.emplace(key, cost);
    return cost;
}

OperatorCost
GpuComputeModel::Elementwise(const std::string& kind,
                             double flops,
                             double bytesRead,
                             double bytesWritten) const
{
    Check(kind, {});
    const GpuSpec& g = m_gpu;
    OperatorCost c;
    c.kind = kind;
    c.flops = flops;
    double vector = g.VectorFlops(DataType::FP32);
    c.computeTimeS = vector > 0 ? flops / (vector * g.efficiency.vector) : 0.0;
    c.hbmBytes = bytesRead + bytesWritten;
    c.l2Bytes = c.hbmBytes;
    c.hbmTimeS = c.hbmBytes / (g.hbmBandwidthBps * g.efficiency.hbm);
    c.l2TimeS = c.l2Bytes / (g.l2BandwidthBps * g.efficiency.l2);
    c.overheadTimeS = g.launchOverheadS + g.memoryLatencyS;
    c.timeS = c.overheadTimeS + std::max({c.computeTimeS, c.hbmTimeS, c.l2TimeS});
    c.utilization = vector > 0 ? flops / c.timeS / vector : 0.0;
    c.tensorCores = false;
    c.smUtilization = 1.0;
    SetBound(c);
    return c;
}

OperatorCost
GpuComputeModel::LayerNorm(uint64_t tokens, uint64_t hidden, DataType type) const
{
    Check("layernorm", {tokens, hidden});
    double e = double(tokens) * hidden;
    double b = BytesOf(type);
    // mean, variance (two passes in registers), normalize, scale and shift: ~8 FLOP/element.
    return Elementwise("layernorm", 8 * e, e * b + 2.0 * hidden * b, e * b + tokens * 8.0);
}

OperatorCost
GpuComputeModel::RmsNorm(uint64_t tokens, uint64_t hidden, DataType type) const
{
    Check("rmsnorm", {tokens, hidden});
    double e = double(tokens) * hidden;
    double b = BytesOf(type);
    // sum of squares, rsqrt, normalize, scale: ~5 FLOP/element.
    return Elementwise("rmsnorm", 5 * e, e * b + hidden * b, e * b + tokens * 4.0);
}

OperatorCost
GpuComputeModel::Softmax(uint64_t rows, uint64_t cols, DataType type) const
{
    Check("softmax", {rows, cols});
    double e = double(rows) * cols;
    double b = BytesOf(type);
    // max, subtract, exp (counted as ~8 FLOP on the special-function unit), sum, divide.
    return Elementwise("softmax", 12 * e, e * b, e * b);
}

OperatorCost
GpuComputeModel::Gelu(uint64_t elements, DataType type) const
{
    Check("gelu", {elements});
    double e = double(elements);
    double b = BytesOf(type);
    // tanh approximation: x^3, two FMAs, tanh (~8), multiply and add: ~14 FLOP/element.
    return Elementwise("gelu", 14 * e, e * b, e * b);
}

OperatorCost
GpuComputeModel::SwiGlu(uint64_t tokens, uint64_t ffnHidden, DataType type) const
{
    Check("swiglu", {tokens, ffnHidden});
    double e = double(tokens) * ffnHidden;
    double b = BytesOf(type);
    // silu(gate) = gate * sigmoid(gate) (exp ~8, add, divide, multiply) times up: ~12 FLOP.
    return Elementwise("swiglu", 12 * e, 2 * e * b, e * b);
}

OperatorCost
GpuComputeModel::Rope(
    uint64_t tokens, uint64_t heads, uint64_t kvHeads, uint64_t headDim, DataType type) const
{
    Check("rope", {tokens, heads, kvHeads, headDim});
    double e = double(tokens) * (heads + kvHeads) * headDim;
    double b = BytesOf(type);
    // each element: two multiplies and an add with the rotated partner; cos/sin table read.
    double table = double(tokens) * headDim * 4.0;
    return Elementwise("rope", 3 * e, e * b + table, e * b);
}

OperatorCost
GpuComputeModel::ResidualAdd(uint64_t elements, DataType type) const
{
    Check("residual_add", {elements});
    double e = double(elements);
    double b = BytesOf(type);
    return Elementwise("residual_add", e, 2 * e * b, e * b);
}

OperatorCost
GpuComputeModel::EmbeddingLookup(uint64_t tokens, uint64_t hidden, DataType type) const
{
    Check("embedding", {tokens, hidden});
    double e = double(tokens) * hidden;
    double b = BytesOf(type);
    return Elementwise("embedding", 0, e * b + tokens * 8.0, e * b);
}

OperatorCost
GpuComputeModel::CrossEntropy(uint64_t tokens, uint64_t vocab, DataType type) const
{
    Check("cross_entropy", {tokens, vocab});
    double e = double(tokens) * vocab;
    double b = BytesOf(type);
    // fused: read the logits, softmax statistics, loss, and write the logits' gradient.
    return Elementwise("cross_entropy", 14 * e, e * b + tokens * 8.0, e * b + tokens * 4.0);
}

OperatorCost
GpuComputeModel::AdamUpdate(uint64_t params, DataType paramType, DataType gradType) const
{
    Check("adam", {params});
    double p = double(params);
    // fp32 master weight, first and second moments read and written; gradient read; the
    // compute copy of the weight written. ~12 FLOP per parameter (moments, bias correction,
    // sqrt, divide, weight decay).
    double read = p * (3 * 4.0 + BytesOf(gradType));
    double written = p * (3 * 4.0 + BytesOf(paramType));
    return Elementwise("adam", 12 * p, read, written);
}

OperatorCost
GpuComputeModel::AttentionForward(const AttentionShape& s, DataType type)
{
    Check("attention", {s.batch, s.heads, s.kvHeads, s.queryLen, s.kvLen, s.headDim});
    if (s.heads % s.kvHeads != 0 || s.queryLen > s.kvLen)
    {
        throw SpecError("compute model",
                        "attention",
                        "heads must be a multiple of kvHeads and queryLen at most kvLen");
    }
    const GpuSpec& g = m_gpu;
    const GpuEfficiency& e = g.efficiency;
    const uint32_t sms = g.smCount;
    const double b = BytesOf(type);
    const double d = double(s.headDim);
    bool tensor = false;
    const double peak = MatmulPeak(type, tensor);
    const double perSmRate = peak / sms * (tensor ? e.tensor : e.vector);
    const double perSmVector = g.VectorFlops(DataType::FP32) / sms * e.vector;
    const double smemRate = g.smemBytesPerClockPerSm * g.clockHz * e.smem;
    const uint64_t offset = s.kvLen - s.queryLen;

    // Useful work: each query sees offset + its index + 1 keys when causal.
    double pairs = s.causal
                       ? double(s.queryLen) * offset + double(s.queryLen) * (s.queryLen + 1) / 2.0
                       : double(s.queryLen) * s.kvLen;
    const double bh = double(s.batch) * s.heads;
    OperatorCost best;
    bool found = false;
    static const uint32_t kBr[] = {128, 64};
    static const uint32_t kBc[] = {128, 64, 32};
    for (uint32_t br : kBr)
    {
        for (uint32_t bc : kBc)
        {
            // Q tile resident; K and V double-buffered. One warp per 16 query rows.
            uint64_t smem = uint64_t((br * d + 2.0 * 2 * bc * d) * b);
            uint32_t threads = 32 * br / 16;
            uint32_t regs = CeilDiv(uint64_t(br) * (s.headDim + bc), threads) + 48;
            if (smem > g.sharedMemoryPerBlockBytes || regs > 255)
            {
                continue;
            }
            uint32_t perSm = static_cast<uint32_t>(
                std::min<uint64_t>({g.sharedMemoryPerSmBytes / smem,
                                    g.registersPerSm / (uint64_t(regs) * threads),
                                    g.maxThreadsPerSm / threads,
                                    g.maxBlocksPerSm}));
            if (perSm == 0)
            {
                continue;
            }
            uint64_t qBlocks = CeilDiv(s.queryLen, br);
            uint64_t kvBlocks = CeilDiv(s.kvLen, bc);
            double blockPairs = 0;
            uint64_t maxPairs = 0;
            for (uint64_t i = 0; i < qBlocks; ++i)
            {
                uint64_t visited = kvBlocks;
                if (s.causal)
                {
                    uint64_t lastKey = offset + std::min<uint64_t>((i + 1) * br, s.queryLen) - 1;
                    visited = std::min<uint64_t>(kvBlocks, lastKey / bc + 1);
                }
                blockPairs += double(visited);
                maxPairs = std::max(maxPairs, visited);
            }
            uint64_t ctas = uint64_t(bh) * qBlocks;
            double totalPairs = blockPairs * bh;
            double avgPairs = totalPairs / double(ctas);
            // Per block pair: QK^T and PV on tensor cores, then the online softmax (exp counted
            // as ~8 FLOP, plus max, scale, sum) on the CUDA cores, not overlapped (FA2).
            double cPair = 4.0 * br * bc * d / perSmRate + 12.0 * br * bc / perSmVector;
            double warps = threads / 32.0;
            double smemPair = 2.0 * bc * d * b * (1 + warps);
            double sPair = smemPair / smemRate;
            double x = std::max(cPair, sPair);
            double tCompute =
                std::max(Schedule(ctas, sms, perSm, avgPairs * cPair), double(maxPairs) * cPair);
            double tSmem =
                std::max(Schedule(ctas, sms, perSm, avgPairs * sPair), double(maxPairs) * sPair);
            double tSm = std::max(Schedule(ctas, sms, perSm, avgPairs * x), double(maxPairs) * x);
            double active = double(std::min<uint64_t>(ctas, sms));
            double qo = bh * s.queryLen * d * b;
            double lse = bh * s.queryLen * 4.0;
            double l2Bytes = 2 * qo + lse + totalPairs * 2.0 * bc * d * b;
            double l2Rate = g.l2BandwidthBps * e.l2 * active / sms;
            double kv = 2.0 * s.batch * s.kvHeads * s.kvLen * d * b;
            double hbmBytes = 2 * qo + lse + kv;
            double tL2 = l2Bytes / l2Rate;
            double tHbm = hbmBytes / std::min(g.hbmBandwidthBps * e.hbm, l2Rate);
            double waves = double(CeilDiv(ctas, uint64_t(sms) * perSm));
            double overhead = g.launchOverheadS + waves * g.memoryLatencyS;
            OperatorCost c;
            c.kind = "attention_fwd";
            c.timeS = overhead + std::max({tSm, tL2, tHbm});
            c.flops = 4.0 * s.batch * s.heads * d * pairs;
            c.smemBytes = totalPairs * smemPair;
            c.l2Bytes = l2Bytes;
            c.hbmBytes = hbmBytes;
            c.computeTimeS = tCompute;
            c.smemTimeS = tSmem;
            c.l2TimeS = tL2;
            c.hbmTimeS = tHbm;
            c.overheadTimeS = overhead;
            c.tensorCores = tensor;
            c.utilization = c.flops / c.timeS / peak;
            SetFlashTiling(c, br, bc, s.headDim, threads, perSm, smem, ctas, sms);
            c.smUtilization = tCompute > 0 ? totalPairs * cPair / (sms * tCompute) : 0.0;
            SetBound(c);
            if (!found || c.timeS < best.timeS * (1 - 1e-12))
            {
                best = c;
                found = true;
            }
        }
    }
    if (!found)
    {
        throw SpecError(g.name,
                        "attention",
                        "no attention tiling fits head dimension " + std::to_string(s.headDim));
    }
    return best;
}

OperatorCost
GpuComputeModel::AttentionBackward(const AttentionShape& s, DataType type)
{
    // Same block structure as the forward pass, parallel over key/value blocks: five block
    // matmuls per pair (S, dP, dV, dK, dQ) instead of two, dQ accumulated in fp32 through L2.
    OperatorCost fwd = AttentionForward(s, type);
    const GpuSpec& g = m_gpu;
    const GpuEfficiency& e = g.efficiency;
    const uint32_t sms = g.smCount;
    const double b = BytesOf(type);
    const double d = double(s.headDim);
    bool tensor = false;
    const double peak = MatmulPeak(type, tensor);
    const double perSmRate = peak / sms * (tensor ? e.tensor : e.vector);
    const double perSmVector = g.VectorFlops(DataType::FP32) / sms * e.vector;
    const double smemRate = g.smemBytesPerClockPerSm * g.clockHz * e.smem;
    const double bh = double(s.batch) * s.heads;
    const uint32_t br = 64;
    const uint32_t bc = fwd.tiling.blockN >= 128 && s.headDim <= 64 ? 128 : 64;
    const uint64_t offset = s.kvLen - s.queryLen;

    uint64_t qBlocks = CeilDiv(s.queryLen, br);
    uint64_t kvBlocks = CeilDiv(s.kvLen, bc);
    double blockPairs = 0;
    for (uint64_t i = 0; i < qBlocks; ++i)
    {
        uint64_t visited = kvBlocks;
        if (s.causal)
        {
            uint64_t lastKey = offset + std::min<uint64_t>((i + 1) * br, s.queryLen) - 1;
            visited = std::min<uint64_t>(kvBlocks, lastKey / bc + 1);
        }
        blockPairs += double(visited);
    }
    uint64_t ctas = uint64_t(bh) * kvBlocks;
    double totalPairs = blockPairs * bh;
    // K, V, dK, dV tiles resident; Q and dO double-buffered.
    uint64_t smem = uint64_t((2.0 * bc * d + 2 * 2.0 * br * d) * b + double(br) * bc * b);
    uint32_t threads = 256;
    uint32_t perSm = static_cast<uint32_t>(std::max<uint64_t>(
        1,
        std::min<uint64_t>({g.sharedMemoryPerSmBytes / std::max<uint64_t>(smem, 1),
                            g.maxThreadsPerSm / threads,
                            g.maxBlocksPerSm})));
    double cPair = 10.0 * br * bc * d / perSmRate + 16.0 * br * bc / perSmVector;
    double smemPair = (2.0 * br * d * b) * (1 + threads / 32.0) + 2.0 * br * bc * b;
    double sPair = smemPair / smemRate;
    double avgPairs = totalPairs / double(ctas);
    double tCompute = Schedule(ctas, sms, perSm, avgPairs * cPair);
    double tSmem = Schedule(ctas, sms, perSm, avgPairs * sPair);
    double tSm = Schedule(ctas, sms, perSm, avgPairs * std::max(cPair, sPair));
    double active = double(std::min<uint64_t>(ctas, sms));
    double qSize = bh * s.queryLen * d * b;
    double kvSize = 2.0 * s.batch * s.kvHeads * s.kvLen * d * b;
    // Q and dO per pair, dQ fp32 read-modify-write per pair, K/V once per block, dK/dV out.
    double l2Bytes = totalPairs * (2.0 * br * d * b + 2.0 * br * d * 4.0) + 2.0 * kvSize;
    double l2Rate = g.l2BandwidthBps * e.l2 * active / sms;
    double hbmMain = 2 * qSize + bh * s.queryLen * 8.0 + kvSize + kvSize + qSize / b * 4.0;
    double tL2 = l2Bytes / l2Rate;
    double tHbm = hbmMain / std::min(g.hbmBandwidthBps * e.hbm, l2Rate);
    // Preprocessing D = rowsum(dO * O) and the dQ fp32 -> type conversion: two streaming
    // kernels.
    double pre = 2 * qSize + bh * s.queryLen * 4.0;
    double post = qSize / b * 4.0 + qSize;
    double side = (pre + post) / (g.hbmBandwidthBps * e.hbm);
    double waves = double(CeilDiv(ctas, uint64_t(sms) * perSm));
    double overhead = 3 * (g.launchOverheadS + g.memoryLatencyS) + waves * g.memoryLatencyS;

    OperatorCost c;
    c.kind = "attention_bwd";
    c.timeS = overhead + side + std::max({tSm, tL2, tHbm});
    c.flops = 2.5 * fwd.flops;
    c.smemBytes = totalPairs * smemPair;
    c.l2Bytes = l2Bytes + pre + post;
    c.hbmBytes = hbmMain + pre + post;
    c.computeTimeS = tCompute;
    c.smemTimeS = tSmem;
    c.l2TimeS = tL2;
    c.hbmTimeS = tHbm + side;
    c.overheadTimeS = overhead;
    c.tensorCores = tensor;
    c.utilization = c.flops / c.timeS / peak;
    SetFlashTiling(c, br, bc, s.headDim, threads, perSm, smem, ctas, sms);
    c.kernels = 3;
    c.smUtilization = tCompute > 0 ? totalPairs * cPair / (sms * tCompute) : 0.0;
    SetBound(c);
    return c;
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
                                 DataType type)
{
    CheckDecode(batch, heads, kvHeads, kvLen, headDim);
    const GpuSpec& g = m_gpu;
    const GpuEfficiency& e = g.efficiency;
    const uint32_t sms = g.smCount;
    const double b = BytesOf(type);
    const double d = double(headDim);
    bool tensor = false;
    const double peak = MatmulPeak(type, tensor);
    const double groups = double(batch) * kvHeads;
    // The query heads sharing a KV head form the rows of one small MMA (padded to 16 rows).
    const double rows = std::max<double>(16.0, double(heads / kvHeads));
    const double kvBytes = 2.0 * groups * kvLen * d * b;
    OperatorCost best;
    bool found = false;
    for (uint32_t split = 1; split <= 256; split *= 2)
    {
        if (split > 1 && CeilDiv(kvLen, split) < 64)
        {
            break;
        }
        uint64_t ctas = uint64_t(groups) * split;
        double active = double(std::min<uint64_t>(ctas, sms));
        double share = active / sms;
        double partials = split > 1 ? double(batch) * heads * split * (d + 2) * 4.0 : 0.0;
        double out = double(batch) * heads * d * b;
        double hbmBytes = kvBytes + out + double(batch) * heads * d * b + partials;
        double l2Rate = g.l2BandwidthBps * e.l2 * share;
        double tHbm = hbmBytes / std::min(g.hbmBandwidthBps * e.hbm, l2Rate);
        double tL2 = hbmBytes / l2Rate;
        double tCompute =
            4.0 * groups * rows * kvLen * d / (peak * e.tensor * share)
            + 12.0 * batch * heads * kvLen / (g.VectorFlops(DataType::FP32) * e.vector * share);
        double overhead = g.launchOverheadS + g.memoryLatencyS;
        double combine = 0;
        if (split > 1)
        {
            combine = partials / (g.hbmBandwidthBps * e.hbm);
            overhead += g.launchOverheadS + g.memoryLatencyS;
        }
        OperatorCost c;
        c.kind = "decode_attention";
        c.timeS = overhead + combine + std::max({tCompute, tHbm, tL2});
        c.flops = 4.0 * batch * heads * kvLen * d;
        c.l2Bytes = hbmBytes + partials;
        c.hbmBytes = hbmBytes + partials;
        c.smemBytes = kvBytes;
        c.computeTimeS = tCompute;
        c.l2TimeS = tL2;
        c.hbmTimeS = tHbm + combine;
        c.overheadTimeS = overhead;
        c.tensorCores = tensor;
        c.utilization = c.flops / c.timeS / peak;
        c.tiling.blockM = static_cast<uint32_t>(rows);
        c.tiling.blockN = static_cast<uint32_t>(CeilDiv(kvLen, split));
        c.tiling.blockK = headDim;
        c.tiling.splitK = split;
        c.tiling.threads = 128;
        c.tiles = ctas;
        c.waves = double(ctas) / sms;
        c.kernels = split > 1 ? 2 : 1;
        c.smUtilization = share;
        SetBound(c);
        if (!found || c.timeS < best.timeS * (1 - 1e-12))
        {
            best = c;
            found = true;
        }
    }
    return best;
}

OperatorCost
GpuComputeModel::DecodeAttentionPerHead(uint64_t batch,
                                        uint64_t heads,
                                        uint64_t kvHeads,
                                        uint64_t kvLen,
                                        uint64_t headDim,
                                        DataType type)
{
    CheckDecode(batch, heads, kvHeads, kvLen, headDim);
    const GpuSpec& g = m_gpu;
    const GpuEfficiency& e = g.efficiency;
    const double b = BytesOf(type);
    const double d = double(headDim);
    const uint64_t ctas = batch * heads;
    const double share = double(std::min<uint64_t>(ctas, g.smCount)) / g.smCount;
    const double perHead = 2.0 * kvLen * d * b;    // K and V of one head
    const double io = 2.0 * batch * heads * d * b; // the query in, the output out
    const double hbmBytes = double(batch) * kvHeads * perHead + io;
    const double l2Bytes = double(ctas) * perHead + io;
    const double l2Rate = g.l2BandwidthBps * e.l2 * share;
    const double tHbm = hbmBytes / std::min(g.hbmBandwidthBps * e.hbm, l2Rate);
    const double tL2 = l2Bytes / l2Rate;
    // Q K^T and P V as fp32 FMAs, plus the softmax (max, exp, sum, scale).
    const double flops = 4.0 * ctas * kvLen * d;
    const double tCompute =
        (flops + 12.0 * ctas * kvLen) / (g.VectorFlops(DataType::FP32) * e.vector * share);
    OperatorCost c;
    c.kind = "decode_attention";
    c.overheadTimeS = g.launchOverheadS + g.memoryLatencyS;
    c.timeS = c.overheadTimeS + std::max({tCompute, tHbm, tL2});
    c.flops = flops;
    c.hbmBytes = hbmBytes;
    c.l2Bytes = l2Bytes;
    c.smemBytes = 0;
    c.computeTimeS = tCompute;
    c.l2TimeS = tL2;
    c.hbmTimeS = tHbm;
    c.tensorCores = false;
    c.utilization = c.flops / c.timeS / g.VectorFlops(DataType::FP32);
    c.tiling.blockM = 1;
    c.tiling.blockN = static_cast<uint32_t>(kvLen);
    c.tiling.blockK = static_cast<uint32_t>(headDim);
    c.tiling.splitK = 1;
    c.tiling.threads = kvLen < 2048 ? 128 : 256;
    c.tiles = ctas;
    c.waves = double(ctas) / g.smCount;
    c.kernels = 1;
    c.smUtilization = share;
    SetBound(c);
    return c;
}

} // namespace rapidllm
} // namespace ns3
