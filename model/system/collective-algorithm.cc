/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "collective-algorithm.h"

#include "ns3/spec-error.h"

#include <algorithm>

namespace ns3 {
namespace rapidllm {

NS_OBJECT_ENSURE_REGISTERED(CollectiveAlgorithm);

TypeId
CollectiveAlgorithm::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::rapidllm::CollectiveAlgorithm").SetParent<Object>().SetGroupName("RapidLlm");
    return tid;
}

CollectiveAlgorithm::CollectiveAlgorithm() = default;
CollectiveAlgorithm::~CollectiveAlgorithm() = default;

void
CollectiveAlgorithm::Check(CollectiveOp op, uint32_t ranks, const std::string& field) const
{
    std::string why;
    if (!Supports(op, ranks, why))
    {
        throw SpecError("collective", field, why);
    }
}

uint32_t
CollectiveAlgorithm::GetDefaultChunks(CollectiveOp op, uint64_t bytes) const
{
    return 1;
}

std::string
CollectiveAlgorithm::Describe(const std::string& name,
                              const ScheduleBuilder& b,
                              const CollectiveCall& call) const
{
    return name;
}

bool
CollectiveAlgorithm::ComposesDimensions() const
{
    return false;
}

uint32_t
CollectiveAlgorithm::PipelineChunks(uint64_t bytes, uint32_t maxChunks)
{
    return static_cast<uint32_t>(std::clamp<uint64_t>(bytes >> 20, 1, std::max(maxChunks, 1u)));
}

} // namespace rapidllm
} // namespace ns3
