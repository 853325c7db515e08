/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// rapid-llm gemm: the predicted time of one (batched) GEMM on one GPU, and why: the tiling the
// model picks, waves, SM utilization, traffic at each memory level and the bounding level.

#include "cli-commands.h"
#include "cli-job-options.h"
#include "ns3/gpu-compute-model.h"
#include "ns3/hardware-spec.h"
#include "ns3/job-echo.h"
#include "ns3/report-json.h"
#include "ns3/report-output.h"
#include "ns3/spec-error.h"

#include <cmath>
#include <iostream>
#include <string>

namespace ns3 {
namespace rapidllm {

int
RunGemmCommand(const CliArgs& args)
{
    const uint64_t m = args.Count("m");
    const uint64_t n = args.Count("n");
    const uint64_t k = args.Count("k");
    const uint64_t batch = args.Count("batch");
    // The operands' bytes (fp32 at most) must stay far inside 64-bit counts downstream.
    const long double bytes =
        4.0L * batch * ((long double) m * k + (long double) k * n + (long double) m * n);
    if (bytes > std::ldexp(1.0L, 60))
    {
        // Named by the option that made it so large: --batch where one matrix alone fits,
        // else the largest dimension.
        const bool one = bytes / batch <= std::ldexp(1.0L, 60);
        const char* largest = batch > 1 && one   ? "batch"
                              : m >= n && m >= k ? "m"
                              : n >= k           ? "n"
                                                 : "k";
        throw SpecError(kCommandLine,
                        largest,
                        "batch x (m x k + k x n + m x n) elements would take more than 2^60 "
                        "bytes; reduce --m, --n, --k or --batch");
    }
    DataType type;
    ParseDataType(args.Text("dtype"), type);
    std::vector<SpecOverride> overrides;
    HardwareSpec hw =
        LoadHardwareWithSet(args, "gemm takes its shape from --m, --n and --k", overrides);
    RefuseUnrunnableType(hw.gpu, type, args.Text("hardware"), TypeUse::GEMM);
    const std::string cudaCores = hw.gpu.CudaCoreNote(type);
    if (!cudaCores.empty())
    {
        std::cerr << "rapid-llm gemm: note: " << cudaCores << "\n";
    }
    Ptr<GpuComputeModel> model = KernelModel(args, hw, overrides);
    OperatorCost c = model->Gemm(m, n, k, type, batch);
    const KernelTiling& t = c.tiling;
    const double tflops = c.FlopRate() / 1e12;

    if (args.Flag("json"))
    {
        Json j = {{"hardware", hw.name},
                  {"m", m},
                  {"n", n},
                  {"k", k},
                  {"batch", batch},
                  {"dtype", ToString(type)},
                  {"clock", args.Text("clock")}};
        // The version, and ns-3 defaults from the environment, as every command echoes them.
        j["version"] = RapidLlmVersion();
        EchoAttributeDefaults(j);
        if (!overrides.empty())
        {
            j["set"] = OverridesJson(overrides);
        }
        j.update(Json(c));
        std::cout << DumpJson(j);
        return 0;
    }
    if (args.Flag("csv"))
    {
        std::cout << CsvLine({"hardware",
                              "m",
                              "n",
                              "k",
                              "batch",
                              "dtype",
                              "time_s",
                              "tflops",
                              "utilization",
                              "bound",
                              "overhead_dominated",
                              "tile_m",
                              "tile_n",
                              "tile_k",
                              "stages",
                              "split_k",
                              "threads",
                              "blocks_per_sm",
                              "tiles",
                              "waves",
                              "sm_utilization",
                              "flops",
                              "smem_bytes",
                              "l2_bytes",
                              "hbm_bytes",
                              "compute_s",
                              "smem_s",
                              "l2_s",
                              "hbm_s",
                              "overhead_s",
                              "clock_mhz",
                              "power_w",
                              "energy_j",
                              "board_energy_j",
                              "tile_smem_bytes"});
        const bool clock = c.clockHz > 0;
        std::cout << CsvLine({hw.name,
                              std::to_string(m),
                              std::to_string(n),
                              std::to_string(k),
                              std::to_string(batch),
                              ToString(type),
                              FormatNumber(c.timeS),
                              FormatNumber(tflops),
                              FormatNumber(c.utilization),
                              ToString(c.SlowestLevel()),
                              c.bound == BoundLevel::LAUNCH ? "true" : "false",
                              std::to_string(t.blockM),
                              std::to_string(t.blockN),
                              std::to_string(t.blockK),
                              std::to_string(t.stages),
                              std::to_string(t.splitK),
                              std::to_string(t.threads),
                              std::to_string(t.blocksPerSm),
                              std::to_string(c.tiles),
                              FormatNumber(c.waves),
                              FormatNumber(c.smUtilization),
                              FormatExact(c.flops),
                              FormatExact(c.smemBytes),
                              FormatExact(c.l2Bytes),
                              FormatExact(c.hbmBytes),
                              FormatNumber(c.computeTimeS),
                              FormatNumber(c.smemTimeS),
                              FormatNumber(c.l2TimeS),
                              FormatNumber(c.hbmTimeS),
                              FormatNumber(c.overheadTimeS),
                              clock ? FormatNumber(c.clockHz / 1e6) : "",
                              clock ? FormatNumber(c.powerW) : "",
                              clock ? FormatNumber(c.energyJ) : "",
                              clock ? FormatNumber(c.powerW * c.timeS) : "",
                              // The tile's shared memory (JSON tile.smem_bytes); smem_bytes
                              // above is the traffic (JSON bytes.smem).
                              std::to_string(t.smemPerBlock)});
        return 0;
    }
    std::cout << "GEMM " << m << " x " << n << " x " << k
              << (batch > 1 ? " (batch " + std::to_string(batch) + ")" : std::string()) << " "
              << ToString(type) << " on " << hw.GpuLabel() << "\n"
              << "  time            " << FormatNumber(c.timeS * 1e3, 5) << " ms\n"
              << "  throughput      " << FormatNumber(tflops, 5) << " TFLOP/s ("
              << FormatNumber(100 * c.utilization, 3) << "% of peak"
              << (c.clockHz > 0 ? " at its " + FormatNumber(c.clockHz / 1e6, 4) + " MHz clock"
                                : std::string())
              << ")\n"
              << "  bound           " << ToString(c.SlowestLevel())
              << (c.bound == BoundLevel::LAUNCH ? " (but the fixed launch overhead dominates)" : "")
              << "\n"
              << "  tile            " << t.blockM << " x " << t.blockN << " x " << t.blockK << ", "
              << t.stages << " stages"
              << (t.splitK > 1 ? ", split-K " + std::to_string(t.splitK) : "") << ", " << t.threads
              << " threads, " << t.blocksPerSm << " block(s)/SM\n"
              << "  tiles           " << c.tiles << " in " << FormatNumber(c.waves, 4) << " waves\n"
              << "  SM utilization  " << FormatNumber(100 * c.smUtilization, 4) << "%\n"
              << "  traffic         smem " << FormatNumber(c.smemBytes / 1e9, 4) << " GB, L2 "
              << FormatNumber(c.l2Bytes / 1e9, 4) << " GB, HBM "
              << FormatNumber(c.hbmBytes / 1e9, 4) << " GB\n"
              << "  level times     compute " << FormatNumber(c.computeTimeS * 1e3, 4)
              << " ms, smem " << FormatNumber(c.smemTimeS * 1e3, 4) << " ms, L2 "
              << FormatNumber(c.l2TimeS * 1e3, 4) << " ms, HBM "
              << FormatNumber(c.hbmTimeS * 1e3, 4) << " ms, overhead "
              << FormatNumber(c.overheadTimeS * 1e3, 4) << " ms\n";
    if (c.clockHz > 0)
    {
        // Under sustained load (the compute model's default clock policy).
        std::cout << "  clock           " << FormatNumber(c.clockHz / 1e6, 4) << " MHz"
                  << (c.clockHz < hw.gpu.power.TopClockHz()
                          ? " (power limited)"
                          : (hw.gpu.power.clockLockHz > 0 ? " (locked)" : " (boost)"))
                  << ", board " << FormatNumber(c.powerW, 4) << " W, energy "
                  << FormatNumber(c.powerW * c.timeS * 1e3, 4) << " mJ ("
                  << FormatNumber(c.energyJ * 1e3, 4) << " above the idle board)\n";
    }
    return 0;
}

static CliCommandRegistrar g_gemmCommand(
    "gemm",
    "predict one GEMM's time, tiling and bounding level",
    "Predicts one GEMM C[m x n] = A[m x k] B[k x n] (times --batch) on one GPU: time, TFLOP/s, "
    "the tiling chosen, waves, SM utilization and the bounding level.",
    RunGemmCommand);

} // namespace rapidllm
} // namespace ns3
