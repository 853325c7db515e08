/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "collective-op.h"

#include "ns3/spec-error.h"
#include "ns3/spec-reader.h"

namespace ns3 {
namespace rapidllm {

namespace {
const CollectiveOp kAllOps[] = {CollectiveOp::ALL_REDUCE,
                                CollectiveOp::REDUCE_SCATTER,
                                CollectiveOp::ALL_GATHER,
                                CollectiveOp::ALL_TO_ALL,
                                CollectiveOp::BROADCAST,
                                CollectiveOp::REDUCE,
                                CollectiveOp::SEND_RECV};
} // namespace

std::string
ToString(CollectiveOp op)
{
    switch (op)
    {
        case CollectiveOp::ALL_REDUCE:
            return "all-reduce";
        case CollectiveOp::REDUCE_SCATTER:
            return "reduce-scatter";
        case CollectiveOp::ALL_GATHER:
            return "all-gather";
        case CollectiveOp::ALL_TO_ALL:
            return "all-to-all";
        case CollectiveOp::BROADCAST:
            return "broadcast";
        case CollectiveOp::REDUCE:
            return "reduce";
        case CollectiveOp::SEND_RECV:
            return "send-recv";
    }
    return "all-reduce";
}

std::vector<std::string>
CollectiveOpNames()
{
    std::vector<std::string> names;
    for (auto op : kAllOps)
    {
        names.push_back(ToString(op));
    }
    return names;
}

CollectiveOp
ParseCollectiveOp(const std::string& name, const std::string& field)
{
    for (auto op : kAllOps)
    {
        if (ToString(op) == name)
        {
            return op;
        }
    }
    throw SpecError("collective",
                    field,
                    "unknown collective '" + name
                        + "'; allowed: " + JoinNames(CollectiveOpNames()));
}

bool
ToCollectiveOp(CollectiveType type, CollectiveOp& op)
{
    switch (type)
    {
        case CollectiveType::ALL_REDUCE:
        case CollectiveType::BARRIER:
            op = CollectiveOp::ALL_REDUCE;
            return true;
        case CollectiveType::REDUCE:
            op = CollectiveOp::REDUCE;
            return true;
        case CollectiveType::ALL_GATHER:
            op = CollectiveOp::ALL_GATHER;
            return true;
        case CollectiveType::BROADCAST:
            op = CollectiveOp::BROADCAST;
            return true;
        case CollectiveType::ALL_TO_ALL:
            op = CollectiveOp::ALL_TO_ALL;
            return true;
        case CollectiveType::REDUCE_SCATTER:
        case CollectiveType::REDUCE_SCATTER_BLOCK:
            op = CollectiveOp::REDUCE_SCATTER;
            return true;
        case CollectiveType::GATHER:
        case CollectiveType::SCATTER:
            return false;
    }
    return false;
}

std::string
UnreplayableCollective(CollectiveType type)
{
    return "collective type " + ToString(type)
           + " cannot be replayed (replay runs ALL_REDUCE, REDUCE_SCATTER, ALL_GATHER, "
             "ALL_TO_ALL, BROADCAST, REDUCE and BARRIER)";
}

double
BusBandwidthFactor(CollectiveOp op, uint32_t n)
{
    if (n == 0)
    {
        return 0;
    }
    switch (op)
    {
        case CollectiveOp::ALL_REDUCE:
            return 2.0 * (n - 1) / n;
        case CollectiveOp::REDUCE_SCATTER:
        case CollectiveOp::ALL_GATHER:
        case CollectiveOp::ALL_TO_ALL:
            return double(n - 1) / n;
        case CollectiveOp::BROADCAST:
        case CollectiveOp::REDUCE:
        case CollectiveOp::SEND_RECV:
            return 1.0;
    }
    return 1.0;
}

} // namespace rapidllm
} // namespace ns3
