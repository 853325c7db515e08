/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// rapid-llm presets: lists the built-in model and hardware presets.

#include "cli-commands.h"
#include "ns3/hardware-spec.h"
#include "ns3/model-spec.h"
#include "ns3/preset-registry.h"
#include "ns3/report-output.h"

#include <iomanip>
#include <iostream>

namespace ns3 {
namespace rapidllm {

int
RunPresetsCommand(const CliArgs& args)
{
    if (args.Flag("csv"))
    {
        // One table: a row per preset, the columns of the other kind left empty.
        std::cout << CsvLine({"kind",
                              "name",
                              "parameters",
                              "layers",
                              "hidden",
                              "heads",
                              "kv_heads",
                              "moe",
                              "gpu",
                              "hbm_gib",
                              "hbm_bandwidth_GBps"});
        for (const auto& name : PresetRegistry::Names("models"))
        {
            ModelSpec m = ModelSpec::Load(name);
            std::cout << CsvLine({"model",
                                  name,
                                  std::to_string(m.ParameterCount()),
                                  std::to_string(m.layers),
                                  std::to_string(m.hidden),
                                  std::to_string(m.heads),
                                  std::to_string(m.kvHeads),
                                  m.IsMoe() ? "true" : "false",
                                  "",
                                  "",
                                  ""});
        }
        for (const auto& name : PresetRegistry::Names("hardware"))
        {
            HardwareSpec h = HardwareSpec::Load(name);
            std::cout << CsvLine({"hardware",
                                  name,
                                  "",
                                  "",
                                  "",
                                  "",
                                  "",
                                  "",
                                  h.gpu.name,
                                  FormatNumber(h.gpu.hbmBytes / double(1ull << 30)),
                                  FormatNumber(h.gpu.hbmBandwidthBps / 1e9)});
        }
        return 0;
    }
    std::cout << "Models (--model):\n";
    for (const auto& name : PresetRegistry::Names("models"))
    {
        ModelSpec m = ModelSpec::Load(name);
        std::cout << "  " << std::left << std::setw(16) << name << std::right << std::fixed
                  << std::setprecision(1) << std::setw(8) << m.ParameterCount() / 1e9
                  << "B params  layers " << m.layers << "  hidden " << m.hidden << "  heads "
                  << m.heads << "/" << m.kvHeads << (m.IsMoe() ? "  MoE" : "")
                  << (m.HasWindow() ? "  window " + std::to_string(m.slidingWindow) : "") << "\n";
    }
    std::cout << "Hardware (--hardware):\n";
    for (const auto& name : PresetRegistry::Names("hardware"))
    {
        HardwareSpec h = HardwareSpec::Load(name);
        std::cout << "  " << std::left << std::setw(16) << name << std::right << h.gpu.name << ", "
                  << FormatNumber(h.gpu.hbmBytes / double(1ull << 30)) << " GiB at "
                  << FormatNumber(h.gpu.hbmBandwidthBps / 1e9) << " GB/s\n";
    }
    return 0;
}

static CliCommandRegistrar g_presetsCommand(
    "presets",
    "list the built-in model and hardware presets",
    "Lists the built-in presets usable as --model and --hardware.",
    RunPresetsCommand);

} // namespace rapidllm
} // namespace ns3
