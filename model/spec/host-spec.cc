/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "host-spec.h"

#include "spec-reader.h"

namespace ns3 {
namespace rapidllm {

std::vector<std::string>
EngineNames()
{
    return {"none", "lmdeploy", "vllm", "hf"};
}

double
HostSpec::IterationS(const std::string& engine) const
{
    auto it = iterationS.find(engine);
    return it == iterationS.end() ? 0.0 : it->second;
}

HostSpec
HostSpec::Read(SpecReader& r)
{
    // Microseconds; at most a second per launch, far above any host.
    HostSpec h;
    h.eagerOpS = r.GetInRange("eager_op_us", 0, 1e6, 0) * 1e-6;
    h.launchS = r.GetInRange("launch_us", 0, 1e6, 0) * 1e-6;
    h.graphLaunchS = r.GetInRange("graph_launch_us", 0, 1e6, 0) * 1e-6;
    h.stepSyncS = r.GetInRange("step_sync_us", 0, 1e6, 0) * 1e-6;
    if (r.Has("iteration_us"))
    {
        SpecReader it = r.GetMap("iteration_us");
        for (const auto& name : EngineNames())
        {
            if (name != "none" && it.Has(name))
            {
                h.iterationS[name] = it.GetInRange(name, 0, 1e6) * 1e-6;
            }
        }
        it.Finish();
    }
    r.Finish();
    return h;
}

bool
HostSpec::operator==(const HostSpec& o) const
{
    return eagerOpS == o.eagerOpS && launchS == o.launchS && graphLaunchS == o.graphLaunchS
           && stepSyncS == o.stepSyncS && iterationS == o.iterationS;
}

} // namespace rapidllm
} // namespace ns3
