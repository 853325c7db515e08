/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "gpu-spec.h"

#include "spec-reader.h"

#include <algorithm>
#include <set>
#include <sstream>

namespace ns3 {
namespace rapidllm {

const std::string&
GpuSpec::Origin() const
{
    return source.empty() ? name : source;
}

double
GpuSpec::TensorFlops(DataType type) const
{
    // A weight-only int4 GEMM multiplies in fp16 (its rates are fp16's).
    auto it = tensorFlops.find(MmaTypeOf(type));
    return it == tensorFlops.end() ? 0.0 : it->second;
}

double
GpuSpec::VectorFlops(DataType type) const
{
    auto it = vectorFlops.find(MmaTypeOf(type));
    if (it != vectorFlops.end())
    {
        return it->second;
    }
    it = vectorFlops.find(DataType::FP32);
    return it == vectorFlops.end() ? 0.0 : it->second;
}

std::string
GpuSpec::CudaCoreNote(DataType type) const
{
    if (TensorFlops(type) > 0 || !Runs(type))
    {
        return "";
    }
    const std::string name = ToString(type);
    std::string note = this->name + " lists no tensor_tflops." + name
                       + ": GEMMs run on its CUDA cores (vector_tflops." + name + ")";
    if (type == DataType::FP32 && TensorFlops(DataType::TF32) > 0)
    {
        note += ", as PyTorch's default fp32 matmuls do; --dtype=tf32 uses its tensor cores";
    }
    return note;
}

bool
GpuSpec::Runs(DataType type) const
{
    type = MmaTypeOf(type);
    for (const auto* rates : {&tensorFlops, &vectorFlops})
    {
        const auto it = rates->find(type);
        if (it != rates->end() && it->second > 0)
        {
            return true;
        }
    }
    return false;
}

std::string
GpuSpec::ListedTypes() const
{
    std::set<DataType> types;
    for (const auto* rates : {&tensorFlops, &vectorFlops})
    {
        for (const auto& [type, flops] : *rates)
        {
            if (flops > 0)
            {
                types.insert(type);
            }
        }
    }
    std::string listed;
    for (DataType type : types)
    {
        listed += (listed.empty() ? "" : ", ") + ToString(type);
    }
    return listed;
}

double
GpuSpec::PeakFlops(DataType type) const
{
    type = MmaTypeOf(type);
    double peak = std::max(TensorFlops(type), VectorFlops(type));
    if (type == DataType::FP32)
    {
        peak = std::max(peak, TensorFlops(DataType::TF32));
    }
    if (peak > 0)
    {
        return peak;
    }
    for (const auto* rates : {&tensorFlops, &vectorFlops})
    {
        for (const auto& entry : *rates)
        {
            peak = std::max(peak, entry.second);
        }
    }
    return peak;
}

double
GpuEfficiency::Tensor(DataType type) const
{
    // int8's main loop is fp8's: the same doubled work per step from the same slabs.
    return (type == DataType::FP8 || type == DataType::INT8) && tensorFp8 > 0 ? tensorFp8 : tensor;
}

bool
GpuEfficiency::operator==(const GpuEfficiency& o) const
{
    return tensor == o.tensor && tensorFp8 == o.tensorFp8 && vector == o.vector && hbm == o.hbm
           && l2 == o.l2 && smem == o.smem;
}

bool
GpuPower::operator==(const GpuPower& o) const
{
    return boostClockHz == o.boostClockHz && clockLockHz == o.clockLockHz && limitW == o.limitW
           && idleW == o.idleW && tensorJPerFlop == o.tensorJPerFlop
           && vectorJPerFlop == o.vectorJPerFlop && hbmJPerByte == o.hbmJPerByte
           && nvlinkJPerByte == o.nvlinkJPerByte && networkJPerByte == o.networkJPerByte
           && dvfs == o.dvfs;
}

double
GpuPower::IdleWAt(double clockHz) const
{
    if (dvfs.Empty())
    {
        return idleW;
    }
    return idleW - dvfs.FallW(clockHz);
}

bool
GpuSpec::operator==(const GpuSpec& o) const
{
    return name == o.name && smCount == o.smCount && clockHz == o.clockHz
           && tensorFlops == o.tensorFlops && vectorFlops == o.vectorFlops
           && registersPerSm == o.registersPerSm && maxThreadsPerSm == o.maxThreadsPerSm
           && maxBlocksPerSm == o.maxBlocksPerSm
           && sharedMemoryPerSmBytes == o.sharedMemoryPerSmBytes
           && sharedMemoryPerBlockBytes == o.sharedMemoryPerBlockBytes
           && smemBytesPerClockPerSm == o.smemBytesPerClockPerSm
           && sfuOpsPerClockPerSm == o.sfuOpsPerClockPerSm && mmaSyncFraction == o.mmaSyncFraction
           && l2Bytes == o.l2Bytes && l2BandwidthBps == o.l2BandwidthBps && hbmBytes == o.hbmBytes
           && hbmBandwidthBps == o.hbmBandwidthBps && launchOverheadS == o.launchOverheadS
           && memoryLatencyS == o.memoryLatencyS && mmaTileM == o.mmaTileM && mmaTileN == o.mmaTileN
           && clusterMulticast == o.clusterMulticast && efficiency == o.efficiency
           && ratedClockHz == o.ratedClockHz && warpSpecialized == o.warpSpecialized
           && power == o.power && host == o.host;
}

bool
GpuSpec::operator!=(const GpuSpec& o) const
{
    return !(*this == o);
}

double
GpuSpec::TensorJoulesPerFlop(DataType type) const
{
    auto it = power.tensorJPerFlop.find(MmaTypeOf(type));
    if (it != power.tensorJPerFlop.end())
    {
        return it->second;
    }
    const double peak = TensorFlops(type);
    for (DataType ref : {DataType::FP16, DataType::BF16})
    {
        auto r = power.tensorJPerFlop.find(ref);
        if (peak > 0 && r != power.tensorJPerFlop.end() && TensorFlops(ref) > 0)
        {
            return r->second * TensorFlops(ref) / peak;
        }
    }
    return 0.0;
}

GpuSpec
GpuSpec::AtClock(double hz) const
{
    GpuSpec g = *this;
    if (g.ratedClockHz <= 0)
    {
        g.ratedClockHz = clockHz;
    }
    const double scale = hz / clockHz;
    g.clockHz = hz;
    for (auto& r : g.tensorFlops)
    {
        r.second *= scale;
    }
    for (auto& r : g.vectorFlops)
    {
        r.second *= scale;
    }
    g.l2BandwidthBps *= scale;
    return g;
}

namespace {
// Bounds on memory sizes, far above any GPU (an H100 has 80 GiB of HBM, 50 MiB of L2, 228 KiB
// of shared memory per SM) and far below where a byte count would wrap.
constexpr double kMaxGib = 1 << 20; //!< 1 PiB of device memory
constexpr double kMaxMib = 1 << 20; //!< 1 TiB of cache
constexpr double kMaxKib = 1 << 20; //!< 1 GiB of shared memory
// Bounds on rates, orders of magnitude above any GPU (an H100: 1.83 GHz, 1979 dense fp8
// TFLOP/s, 3.35 TB/s of HBM) and far below where a conversion to per-second units overflows.
constexpr double kMaxClockMhz = 1e6;      //!< 1 THz
constexpr double kMaxTflops = 1e6;        //!< 1 EFLOP/s per GPU
constexpr double kMaxGBps = 1e9;          //!< 1 EB/s
constexpr double kMaxBytesPerClock = 1e6; //!< shared-memory bytes per clock per SM
// Lower bounds, orders of magnitude below any GPU (an A100's slowest DVFS clock is 210 MHz, its
// L2 and HBM move TB/s): below them a kernel takes hours and the replay runs away.
constexpr double kMinClockMhz = 10;
constexpr double kMinGBps = 1;
constexpr double kMinTflops = 1e-3; //!< 1 GFLOP/s (1e-300 passed, and the replay ran away)
// The energy per operation scales with the clock squared across the DVFS range ([CMOS] in the
// presets); a boost clock beyond twice the rated one is outside any GPU's range (H100 SXM: 1830
// rated, 1980 boost).
constexpr double kMaxBoostOverRated = 2;

/** \return a size in bytes: \p unit bytes per unit, at least one byte after conversion */
uint64_t
ReadBytes(SpecReader& r, const std::string& key, double maxUnits, double unit)
{
    const double bytes = r.GetSize(key, maxUnits) * unit;
    if (bytes < 1)
    {
        r.Fail(key, "is less than one byte");
    }
    return static_cast<uint64_t>(bytes);
}

/** Reads a {dtype: number} mapping (e.g. TFLOP/s), each value multiplied by \p scale. */
std::map<DataType, double>
ReadRates(SpecReader& parent, const std::string& key, bool required, double scale = 1e12)
{
    std::map<DataType, double> rates;
    if (!required && !parent.Has(key))
    {
        return rates;
    }
    SpecReader reader = parent.GetMap(key);
    for (const auto& name : RateTypeNames())
    {
        if (reader.Has(name))
        {
            DataType type;
            ParseDataType(name, type);
            rates[type] = reader.GetInRange(name, kMinTflops, kMaxTflops) * scale;
        }
    }
    reader.Finish();
    if (rates.empty())
    {
        parent.Fail(key,
                    "needs at least one data type; allowed keys: " + JoinNames(RateTypeNames()));
    }
    return rates;
}
} // namespace

GpuSpec
GpuSpec::Read(SpecReader& r)
{
    GpuSpec g;
    g.name = r.GetName("name");
    g.smCount = r.GetCount("sm_count");
    g.clockHz = r.GetInRange("clock_mhz", kMinClockMhz, kMaxClockMhz) * 1e6;
    g.tensorFlops = ReadRates(r, "tensor_tflops", true);
    g.vectorFlops = ReadRates(r, "vector_tflops", true);
    if (g.vectorFlops.count(DataType::FP32) == 0)
    {
        // Element-wise, softmax and norm kernels run at it, and other types' vector work falls
        // back to it: without it they would take forever (or an infinite time).
        r.Fail("vector_tflops",
               "needs fp32: the CUDA cores' rate, which the element-wise kernels run at");
    }
    g.registersPerSm = r.GetCount("registers_per_sm");
    g.maxThreadsPerSm = r.GetCount("max_threads_per_sm");
    g.maxBlocksPerSm = r.GetCount("max_blocks_per_sm");
    g.sharedMemoryPerSmBytes = ReadBytes(r, "shared_memory_per_sm_kib", kMaxKib, 1024);
    g.sharedMemoryPerBlockBytes = ReadBytes(r, "shared_memory_per_block_kib", kMaxKib, 1024);
    if (g.sharedMemoryPerBlockBytes > g.sharedMemoryPerSmBytes)
    {
        r.Fail("shared_memory_per_block_kib", "cannot exceed shared_memory_per_sm_kib");
    }
    g.smemBytesPerClockPerSm = r.GetSize("smem_bytes_per_clock_per_sm", kMaxBytesPerClock);
    g.l2Bytes = ReadBytes(r, "l2_mib", kMaxMib, 1024.0 * 1024);
    g.l2BandwidthBps = r.GetInRange("l2_bandwidth_GBps", kMinGBps, kMaxGBps) * 1e9;
    g.hbmBytes = ReadBytes(r, "hbm_gib", kMaxGib, 1024.0 * 1024 * 1024);
    g.hbmBandwidthBps = r.GetInRange("hbm_bandwidth_GBps", kMinGBps, kMaxGBps) * 1e9;
    g.launchOverheadS = r.GetInRange("launch_overhead_us", 0, 1e6) * 1e-6;
    // Optional (added for the tile-based compute model; older files stay valid).
    g.memoryLatencyS = r.GetInRange("memory_latency_ns", 0, 1e6, 0) * 1e-9;
    g.mmaTileM = r.GetCount("mma_tile_m", 8, 64);
    g.mmaTileN = r.GetCount("mma_tile_n", 8, 64);
    g.clusterMulticast = r.GetCount("cluster_multicast", 1, 1);
    g.warpSpecialized = r.GetBool("warp_specialized", false);
    g.sfuOpsPerClockPerSm = r.GetCount("sfu_ops_per_clock_per_sm", 1, 0);
    g.mmaSyncFraction = r.GetInRange("mma_sync_fraction", 0.01, 1.0, 1.0);
    g.ratedClockHz = g.clockHz;
    SpecReader e = r.GetMap("efficiency");
    g.efficiency.tensor = e.GetInRange("tensor", 0.01, 1.0);
    g.efficiency.tensorFp8 = e.GetInRange("tensor_fp8", 0.01, 1.0, 0.0);
    g.efficiency.vector = e.GetInRange("vector", 0.01, 1.0);
    g.efficiency.hbm = e.GetInRange("hbm", 0.01, 1.0);
    g.efficiency.l2 = e.GetInRange("l2", 0.01, 1.0);
    g.efficiency.smem = e.GetInRange("smem", 0.01, 1.0);
    e.Finish();
    if (r.Has("power"))
    {
        SpecReader p = r.GetMap("power");
        GpuPower& w = g.power;
        w.boostClockHz = p.GetPositive("boost_clock_mhz") * 1e6;
        if (w.boostClockHz < g.clockHz || w.boostClockHz > kMaxBoostOverRated * g.clockHz)
        {
            std::ostringstream os;
            os << w.boostClockHz / 1e6 << " MHz is outside " << g.clockHz / 1e6 << " to "
               << kMaxBoostOverRated * g.clockHz / 1e6
               << " MHz: from clock_mhz (the clock the rates are quoted at) to twice it (a GPU's "
                  "DVFS range, over which the energy per operation scales as the clock squared)";
            p.Fail("boost_clock_mhz", os.str());
        }
        // A clock lock (0: none) from a quarter of the boost clock (the lowest a power limit
        // may bring a kernel to) to the boost clock.
        w.clockLockHz = p.GetInRange("clock_lock_mhz", 0, 1e6, 0) * 1e6;
        if (w.clockLockHz > 0
            && (w.clockLockHz < 0.25 * w.boostClockHz || w.clockLockHz > w.boostClockHz))
        {
            std::ostringstream os;
            os << w.clockLockHz / 1e6 << " MHz is outside " << 0.25 * w.boostClockHz / 1e6 << " to "
               << w.boostClockHz / 1e6
               << " MHz: 0 (no lock) or from a quarter of boost_clock_mhz to it";
            p.Fail("clock_lock_mhz", os.str());
        }
        w.limitW = p.GetInRange("board_limit_w", 1, 1e5);
        w.idleW = p.GetInRange("idle_w", 0, 1e5);
        if (w.idleW >= w.limitW)
        {
            std::ostringstream os;
            os << w.idleW << " W must be below board_limit_w, " << w.limitW
               << " W: the idle board draws less than its limit";
            p.Fail("idle_w", os.str());
        }
        // Energies in pJ (per FLOP, per byte): at most 1 uJ per unit, far above any GPU.
        w.tensorJPerFlop = ReadRates(p, "tensor_pj_per_flop", true, 1e-12);
        w.vectorJPerFlop = p.GetInRange("vector_pj_per_flop", 0, 1e6) * 1e-12;
        w.hbmJPerByte = p.GetInRange("hbm_pj_per_byte", 0, 1e6) * 1e-12;
        w.nvlinkJPerByte = p.GetInRange("nvlink_pj_per_byte", 0, 1e6, 0) * 1e-12;
        w.networkJPerByte = p.GetInRange("network_pj_per_byte", 0, 1e6, 0) * 1e-12;
        if (p.Has("dvfs"))
        {
            w.dvfs = DvfsCurve::Read(p, "dvfs", w.boostClockHz, w.idleW);
        }
        p.Finish();
    }
    if (r.Has("host"))
    {
        SpecReader h = r.GetMap("host");
        g.host = HostSpec::Read(h);
    }
    r.Finish();
    return g;
}

} // namespace rapidllm
} // namespace ns3
