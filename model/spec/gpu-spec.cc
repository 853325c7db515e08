/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "gpu-spec.h"

#include "spec-reader.h"

namespace ns3 {
namespace rapidllm {

double
GpuSpec::TensorFlops(DataType type) const
{
    auto it = tensorFlops.find(type);
    return it == tensorFlops.end() ? 0.0 : it->second;
}

double
GpuSpec::VectorFlops(DataType type) const
{
    auto it = vectorFlops.find(type);
    if (it != vectorFlops.end())
    {
        return it->second;
    }
    it = vectorFlops.find(DataType::FP32);
    return it == vectorFlops.end() ? 0.0 : it->second;
}

double
GpuSpec::TensorJoulesPerFlop(DataType type) const
{
    auto it = power.tensorJPerFlop.find(type);
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
    for (const auto& name : DataTypeNames())
    {
        if (reader.Has(name))
        {
            DataType type;
            ParseDataType(name, type);
            rates[type] = reader.GetPositive(name) * scale;
        }
    }
    reader.Finish();
    if (rates.empty())
    {
        parent.Fail(key,
                    "needs at least one data type; allowed keys: " + JoinNames(DataTypeNames()));
    }
    return rates;
}
} // namespace

GpuSpec
GpuSpec::Read(SpecReader& r)
{
    GpuSpec g;
    g.name = r.GetString("name");
    g.smCount = r.GetCount("sm_count");
    g.clockHz = r.GetPositive("clock_mhz") * 1e6;
    g.tensorFlops = ReadRates(r, "tensor_tflops", true);
    g.vectorFlops = ReadRates(r, "vector_tflops", true);
    g.registersPerSm = r.GetCount("registers_per_sm");
    g.maxThreadsPerSm = r.GetCount("max_threads_per_sm");
    g.maxBlocksPerSm = r.GetCount("max_blocks_per_sm");
    g.sharedMemoryPerSmBytes =
        static_cast<uint64_t>(r.GetSize("shared_memory_per_sm_kib", kMaxKib) * 1024);
    g.sharedMemoryPerBlockBytes =
        static_cast<uint64_t>(r.GetSize("shared_memory_per_block_kib", kMaxKib) * 1024);
    if (g.sharedMemoryPerBlockBytes > g.sharedMemoryPerSmBytes)
    {
        r.Fail("shared_memory_per_block_kib", "cannot exceed shared_memory_per_sm_kib");
    }
    g.smemBytesPerClockPerSm = r.GetPositive("smem_bytes_per_clock_per_sm");
    g.l2Bytes = static_cast<uint64_t>(r.GetSize("l2_mib", kMaxMib) * 1024 * 1024);
    g.l2BandwidthBps = r.GetPositive("l2_bandwidth_GBps") * 1e9;
    g.hbmBytes = static_cast<uint64_t>(r.GetSize("hbm_gib", kMaxGib) * 1024 * 1024 * 1024);
    g.hbmBandwidthBps = r.GetPositive("hbm_bandwidth_GBps") * 1e9;
    g.launchOverheadS = r.GetInRange("launch_overhead_us", 0, 1e6) * 1e-6;
    // Optional (added for the tile-based compute model; older files stay valid).
    g.memoryLatencyS = r.GetInRange("memory_latency_ns", 0, 1e6, 0) * 1e-9;
    g.mmaTileM = r.GetCount("mma_tile_m", 8, 64);
    g.mmaTileN = r.GetCount("mma_tile_n", 8, 64);
    g.clusterMulticast = r.GetCount("cluster_multicast", 1, 1);
    g.warpSpecialized = r.GetBool("warp_specialized", false);
    g.ratedClockHz = g.clockHz;
    SpecReader e = r.GetMap("efficiency");
    g.efficiency.tensor = e.GetInRange("tensor", 0.01, 1.0);
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
        if (w.boostClockHz < g.clockHz)
        {
            p.Fail("boost_clock_mhz",
                   "cannot be below clock_mhz (the clock the rates are quoted at)");
        }
        w.limitW = p.GetInRange("board_limit_w", 1, 1e5);
        w.idleW = p.GetInRange("idle_w", 0, 1e5);
        if (w.idleW >= w.limitW)
        {
            p.Fail("idle_w", "must be below board_limit_w");
        }
        // Energies in pJ (per FLOP, per byte): at most 1 uJ per unit, far above any GPU.
        w.tensorJPerFlop = ReadRates(p, "tensor_pj_per_flop", true, 1e-12);
        w.vectorJPerFlop = p.GetInRange("vector_pj_per_flop", 0, 1e6) * 1e-12;
        w.hbmJPerByte = p.GetInRange("hbm_pj_per_byte", 0, 1e6) * 1e-12;
        w.nvlinkJPerByte = p.GetInRange("nvlink_pj_per_byte", 0, 1e6, 0) * 1e-12;
        w.networkJPerByte = p.GetInRange("network_pj_per_byte", 0, 1e6, 0) * 1e-12;
        p.Finish();
    }
    r.Finish();
    return g;
}

} // namespace rapidllm
} // namespace ns3
