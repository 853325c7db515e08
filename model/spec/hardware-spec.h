/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_HARDWARE_SPEC_H
#define RAPIDLLM_HARDWARE_SPEC_H

#include "gpu-spec.h"
#include "network-spec.h"

#include <string>
#include <vector>

namespace ns3 {
namespace rapidllm {

class SpecOverride;

/**
 * \ingroup rapid-llm
 * \brief A machine: one GPU type and the cluster network joining the GPUs.
 */
struct HardwareSpec
{
    std::string name;    //!< preset name or file stem
    GpuSpec gpu;         //!< every GPU of the cluster
    NetworkSpec network; //!< the multi-dimensional network

    /**
     * \brief Loads a hardware preset by name ("a100-sxm-80gb") or a YAML file by path.
     * \param nameOrPath a preset name, or a path to a YAML file
     * \return the spec; throws SpecError on bad input (unknown presets list the valid names)
     */
    static HardwareSpec Load(const std::string& nameOrPath);

    /**
     * \brief Loads as Load(nameOrPath), then applies the "gpu." and "network." overrides (the
     * others are for the model and skipped) before the typed parse, so every check applies to
     * them: "gpu.hbm_bandwidth_GBps=0.5x", "network.infiniband.oversubscription=2".
     * \param nameOrPath a preset name, or a path to a YAML file
     * \param overrides the overrides, in order
     * \return the spec; throws SpecError naming the override that set a bad field
     */
    static HardwareSpec Load(const std::string& nameOrPath,
                             const std::vector<SpecOverride>& overrides);

    /**
     * \brief Parses YAML text.
     * \param text the document
     * \param source the file or preset name used in errors
     * \return the spec
     */
    static HardwareSpec Parse(const std::string& text, const std::string& source);

    /**
     * \return the GPU as a report's header names it: its product name, followed by the
     * machine's own name where that is not a preset's ("NVIDIA A100-SXM4-80GB (a100-24)" for a
     * file with `base: a100-sxm-80gb` and `name: a100-24`), so that a variant is not shown as
     * the part it was derived from
     */
    std::string GpuLabel() const;

    /** \return true when every field is equal */
    bool operator==(const HardwareSpec& other) const;
    /** \return true when a field differs */
    bool operator!=(const HardwareSpec& other) const;
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_HARDWARE_SPEC_H
