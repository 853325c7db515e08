/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_HOST_SPEC_H
#define RAPIDLLM_HOST_SPEC_H

#include <map>
#include <string>
#include <vector>

namespace ns3 {
namespace rapidllm {

class SpecReader;

/** \return the serving-engine families a run may name ("none" first): none, lmdeploy, vllm, hf */
std::vector<std::string> EngineNames();

/**
 * \ingroup rapid-llm
 * \brief The host side of a GPU: what it costs the CPU thread that drives one GPU to issue its
 * work, per dispatch mode (a hardware file's optional `gpu.host` section).
 *
 * Every kernel is issued by a host thread before it can start; the thread issues in program
 * order and waits where the program reads a result back (the sampled token of a decode step).
 * Each value's source is written next to it in the preset file. A GPU without a `host` section
 * has an ideal host (nothing costs host time).
 */
struct HostSpec
{
    double eagerOpS = 0;     //!< eager PyTorch: Python, dispatcher and launch of one framework op
    double launchS = 0;      //!< one cudaLaunchKernel from a C++ loop (an engine)
    double graphLaunchS = 0; //!< one cudaGraphLaunch (a whole captured step)
    double stepSyncS = 0;    //!< reading a step's result back: D2H copy and stream-sync wake-up
    /** engine family -> host time of its scheduler, sampling and bookkeeping per iteration */
    std::map<std::string, double> iterationS;

    /** \return whether the section was given */
    bool
    Has() const
    {
        return eagerOpS > 0 || launchS > 0 || graphLaunchS > 0 || stepSyncS > 0
               || !iterationS.empty();
    }

    /** \return the per-iteration host time of \p engine (0 when not listed) */
    double IterationS(const std::string& engine) const;

    /**
     * \brief Reads the `host` mapping of a GPU; unknown keys throw SpecError.
     * \param reader the mapping \return the spec
     */
    static HostSpec Read(SpecReader& reader);

    /** \return true when every field is equal */
    bool operator==(const HostSpec& other) const;
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_HOST_SPEC_H
