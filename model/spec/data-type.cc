/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "data-type.h"

namespace ns3 {
namespace rapidllm {

namespace {
const DataType kAllTypes[] = {DataType::FP32,
                              DataType::TF32,
                              DataType::FP16,
                              DataType::BF16,
                              DataType::FP8,
                              DataType::INT8,
                              DataType::INT4};
} // namespace

uint32_t
BytesOf(DataType type)
{
    switch (type)
    {
        case DataType::FP32:
        case DataType::TF32:
            return 4;
        case DataType::FP16:
        case DataType::BF16:
            return 2;
        case DataType::FP8:
        case DataType::INT8:
        case DataType::INT4:
            return 1;
    }
    return 4;
}

uint32_t
BitsOf(DataType type)
{
    return type == DataType::INT4 ? 4 : 8 * BytesOf(type);
}

double
WeightBytesOf(DataType type)
{
    return type == DataType::INT4 ? 0.5 + 2.0 / 128 : double(BytesOf(type));
}

DataType
MmaTypeOf(DataType type)
{
    return type == DataType::INT4 ? DataType::FP16 : type;
}

bool
IsWeightOnly(DataType type)
{
    return type == DataType::INT4;
}

std::string
ToString(DataType type)
{
    switch (type)
    {
        case DataType::FP32:
            return "fp32";
        case DataType::TF32:
            return "tf32";
        case DataType::FP16:
            return "fp16";
        case DataType::BF16:
            return "bf16";
        case DataType::FP8:
            return "fp8";
        case DataType::INT8:
            return "int8";
        case DataType::INT4:
            return "int4";
    }
    return "fp32";
}

std::vector<std::string>
DataTypeNames()
{
    std::vector<std::string> names;
    for (auto t : kAllTypes)
    {
        names.push_back(ToString(t));
    }
    return names;
}

std::vector<std::string>
RateTypeNames()
{
    std::vector<std::string> names;
    for (auto t : kAllTypes)
    {
        if (!IsWeightOnly(t))
        {
            names.push_back(ToString(t));
        }
    }
    return names;
}

bool
ParseDataType(const std::string& name, DataType& type)
{
    for (auto t : kAllTypes)
    {
        if (ToString(t) == name)
        {
            type = t;
            return true;
        }
    }
    return false;
}

} // namespace rapidllm
} // namespace ns3
