/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "hardware-spec.h"

#include "preset-registry.h"
#include "spec-reader.h"

namespace ns3 {
namespace rapidllm {

HardwareSpec
HardwareSpec::Parse(const std::string& text, const std::string& source)
{
    YAML::Node root = ParseYaml(text, source);
    SpecReader r(root, source);
    HardwareSpec h;
    h.name = r.GetString("name");
    SpecReader gpu = r.GetMap("gpu");
    h.gpu = GpuSpec::Read(gpu);
    SpecReader network = r.GetMap("network");
    h.network = NetworkSpec::Read(network);
    r.Finish();
    return h;
}

HardwareSpec
HardwareSpec::Load(const std::string& nameOrPath)
{
    std::string source;
    std::string text = PresetRegistry::Resolve("hardware", nameOrPath, "hardware", source);
    return Parse(text, source);
}

} // namespace rapidllm
} // namespace ns3
