/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_DATA_TYPE_H
#define RAPIDLLM_DATA_TYPE_H

#include <cstdint>
#include <string>
#include <vector>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief Numeric formats an operator can compute in; they select the peak FLOP rate and the
 * bytes per element.
 */
enum class DataType
{
    FP32,
    TF32,
    FP16,
    BF16,
    FP8,
    INT8
};

/** \return bytes per element of \p type (TF32 is stored as 4 bytes) */
uint32_t BytesOf(DataType type);

/** \return the lower-case name ("bf16") */
std::string ToString(DataType type);

/** \return every type's name, for error messages and YAML keys */
std::vector<std::string> DataTypeNames();

/**
 * \brief Parses a lower-case name.
 * \param name e.g. "bf16"
 * \param[out] type the parsed type
 * \return false if \p name is not a known type
 */
bool ParseDataType(const std::string& name, DataType& type);

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_DATA_TYPE_H
