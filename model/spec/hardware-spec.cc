/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "hardware-spec.h"

#include "preset-registry.h"
#include "spec-document.h"
#include "spec-reader.h"

namespace ns3 {
namespace rapidllm {

namespace {
/** The typed parse of a hardware file's tree. */
HardwareSpec
ReadHardware(const YAML::Node& root, const std::string& source)
{
    SpecReader r(root, source);
    HardwareSpec h;
    r.Has("base"); // merged before the typed read, but a field of the file all the same
    h.name = r.GetName("name");
    SpecReader gpu = r.GetMap("gpu");
    h.gpu = GpuSpec::Read(gpu);
    h.gpu.source = source;
    SpecReader network = r.GetMap("network");
    h.network = NetworkSpec::Read(network);
    r.Finish();
    return h;
}

/** \return the spec the document describes */
HardwareSpec
ReadHardware(const SpecDocument& document)
{
    HardwareSpec h;
    document.Read(
        [&h](const YAML::Node& root, const std::string& source)
        {
            h = ReadHardware(root, source);
        });
    h.gpu.source = document.GetOrigin();
    return h;
}
} // namespace

HardwareSpec
HardwareSpec::Parse(const std::string& text, const std::string& source)
{
    return ReadHardware(SpecDocument::Parse("hardware", text, source));
}

std::string
HardwareSpec::GpuLabel() const
{
    std::string text;
    return name.empty() || PresetRegistry::Find("hardware", name, text)
               ? gpu.name
               : gpu.name + " (" + name + ")";
}

HardwareSpec
HardwareSpec::Load(const std::string& nameOrPath)
{
    return ReadHardware(SpecDocument::Load("hardware", nameOrPath, "hardware"));
}

HardwareSpec
HardwareSpec::Load(const std::string& nameOrPath, const std::vector<SpecOverride>& overrides)
{
    SpecDocument document = SpecDocument::Load("hardware", nameOrPath, "hardware");
    document.Apply(overrides);
    return ReadHardware(document);
}

bool
HardwareSpec::operator==(const HardwareSpec& o) const
{
    return name == o.name && gpu == o.gpu && network == o.network;
}

bool
HardwareSpec::operator!=(const HardwareSpec& o) const
{
    return !(*this == o);
}

} // namespace rapidllm
} // namespace ns3
