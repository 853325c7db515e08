/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// rapid-llm gemm: the predicted time of one (batched) GEMM on one GPU, and why: the tiling the
// model picks, waves, SM utilization, traffic at each memory level and the bounding level.

#include "cli-commands.h"
#include "ns3/command-line.h"
#include "ns3/gpu-compute-model.h"
#include "ns3/hardware-spec.h"
#include "ns3/spec-error.h"
#include "ns3/spec-reader.h"

#include <cstdio>
#include <iostream>
#include <string>

namespace ns3 {
namespace rapidllm {

namespace {

/** Formats a double with printf's %.*g (locale-independent, deterministic). */
std::string
Num(double value, int digits = 6)
{
    char buffer[64];
    std::snprintf(buffer, sizeof(buffer), "%.*g", digits, value);
    return buffer;
}

/** Parses a positive dimension given as a string option. */
uint64_t
ParseDim(const std::string& name, const std::string& text)
{
    size_t used = 0;
    unsigned long long value = 0;
    try
    {
        value = std::stoull(text, &used);
    }
    catch (const std::exception&)
    {
        used = 0;
    }
    if (text.empty() || used != text.size() || value == 0 || text[0] == '-')
    {
        throw SpecError(
            "command line", "--" + name, "must be a positive integer, got '" + text + "'");
    }
    return value;
}

} // namespace

int
RunGemmCommand(int argc, char** argv)
{
    std::string hardware = "a100-sxm-80gb";
    std::string m;
    std::string n;
    std::string k;
    std::string batch = "1";
    std::string dtype = "bf16";
    bool json = false;
    ns3::CommandLine cmd("rapid-llm gemm");
    cmd.Usage("Predicts one GEMM C[m x n] = A[m x k] B[k x n] (times --batch) on one GPU: time, "
              "TFLOP/s, the tiling chosen, waves, SM utilization and the bounding level.");
    cmd.AddValue("hardware", "hardware preset name or YAML file", hardware);
    cmd.AddValue("m", "rows of A and C (tokens)", m);
    cmd.AddValue("n", "columns of B and C (output features)", n);
    cmd.AddValue("k", "reduction dimension (input features)", k);
    cmd.AddValue("batch", "independent GEMMs in one batched launch", batch);
    cmd.AddValue("dtype", "operand type: " + JoinNames(DataTypeNames()), dtype);
    cmd.AddValue("json", "print one JSON object", json);
    CheckOptions(argc, argv, {"hardware", "m", "n", "k", "batch", "dtype", "json"});
    cmd.Parse(argc, argv);

    if (m.empty() || n.empty() || k.empty())
    {
        throw SpecError("command line", "--m/--n/--k", "all three GEMM dimensions are required");
    }
    uint64_t mv = ParseDim("m", m);
    uint64_t nv = ParseDim("n", n);
    uint64_t kv = ParseDim("k", k);
    uint64_t bv = ParseDim("batch", batch);
    DataType type;
    if (!ParseDataType(dtype, type))
    {
        throw SpecError("command line",
                        "--dtype",
                        "unknown data type '" + dtype
                            + "'; allowed: " + JoinNames(DataTypeNames()));
    }
    HardwareSpec hw = HardwareSpec::Load(hardware);
    Ptr<GpuComputeModel> model = CreateObject<GpuComputeModel>();
    model->SetGpu(hw.gpu);
    OperatorCost c = model->Gemm(mv, nv, kv, type, bv);
    const KernelTiling& t = c.tiling;
    double tflops = c.FlopRate() / 1e12;

    if (json)
    {
        std::cout << "{\"hardware\":\"" << hw.name << "\",\"m\":" << mv << ",\"n\":" << nv
                  << ",\"k\":" << kv << ",\"batch\":" << bv << ",\"dtype\":\"" << ToString(type)
                  << "\",\"time_s\":" << Num(c.timeS, 9) << ",\"tflops\":" << Num(tflops)
                  << ",\"bound\":\"" << ToString(c.SlowestLevel()) << "\",\"overhead_dominated\":"
                  << (c.bound == BoundLevel::LAUNCH ? "true" : "false")
                  << ",\"waves\":" << Num(c.waves) << ",\"sm_utilization\":" << Num(c.smUtilization)
                  << ",\"utilization\":" << Num(c.utilization) << ",\"tile\":{\"m\":" << t.blockM
                  << ",\"n\":" << t.blockN << ",\"k\":" << t.blockK << ",\"stages\":" << t.stages
                  << ",\"split_k\":" << t.splitK << ",\"threads\":" << t.threads
                  << ",\"blocks_per_sm\":" << t.blocksPerSm << ",\"smem_bytes\":" << t.smemPerBlock
                  << "},\"tiles\":" << c.tiles << ",\"kernels\":" << c.kernels
                  << ",\"flops\":" << Num(c.flops, 12)
                  << ",\"bytes\":{\"smem\":" << Num(c.smemBytes, 12)
                  << ",\"l2\":" << Num(c.l2Bytes, 12) << ",\"hbm\":" << Num(c.hbmBytes, 12)
                  << "},\"level_time_s\":{\"compute\":" << Num(c.computeTimeS, 9)
                  << ",\"smem\":" << Num(c.smemTimeS, 9) << ",\"l2\":" << Num(c.l2TimeS, 9)
                  << ",\"hbm\":" << Num(c.hbmTimeS, 9)
                  << ",\"overhead\":" << Num(c.overheadTimeS, 9) << "}}\n";
        return 0;
    }
    std::cout << "GEMM " << mv << " x " << nv << " x " << kv
              << (bv > 1 ? " (batch " + std::to_string(bv) + ")" : std::string()) << " "
              << ToString(type) << " on " << hw.gpu.name << "\n"
              << "  time            " << Num(c.timeS * 1e3, 5) << " ms\n"
              << "  throughput      " << Num(tflops, 5) << " TFLOP/s ("
              << Num(100 * c.utilization, 3) << "% of peak)\n"
              << "  bound           " << ToString(c.SlowestLevel())
              << (c.bound == BoundLevel::LAUNCH ? " (but the fixed launch overhead dominates)" : "")
              << "\n"
              << "  tile            " << t.blockM << " x " << t.blockN << " x " << t.blockK << ", "
              << t.stages << " stages"
              << (t.splitK > 1 ? ", split-K " + std::to_string(t.splitK) : "") << ", " << t.threads
              << " threads, " << t.blocksPerSm << " block(s)/SM\n"
              << "  tiles           " << c.tiles << " in " << Num(c.waves, 4) << " waves\n"
              << "  SM utilization  " << Num(100 * c.smUtilization, 4) << "%\n"
              << "  traffic         smem " << Num(c.smemBytes / 1e9, 4) << " GB, L2 "
              << Num(c.l2Bytes / 1e9, 4) << " GB, HBM " << Num(c.hbmBytes / 1e9, 4) << " GB\n"
              << "  level times     compute " << Num(c.computeTimeS * 1e3, 4) << " ms, smem "
              << Num(c.smemTimeS * 1e3, 4) << " ms, L2 " << Num(c.l2TimeS * 1e3, 4) << " ms, HBM "
              << Num(c.hbmTimeS * 1e3, 4) << " ms, overhead " << Num(c.overheadTimeS * 1e3, 4)
              << " ms\n";
    return 0;
}

static CliCommandRegistrar g_gemmCommand("gemm",
                                         "predict one GEMM's time, tiling and bounding level",
                                         RunGemmCommand);

} // namespace rapidllm
} // namespace ns3
