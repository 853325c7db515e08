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
    INT8,
    INT4 //!< GEMM weights only (W4A16: GPTQ, AWQ), dequantized to fp16 for the multiply
};

/**
 * \return bytes per element of \p type (TF32 is stored as 4 bytes; int4 packs two elements a
 * byte and gives 1: WeightBytesOf has its weights' size)
 */
uint32_t BytesOf(DataType type);

/** \return bits per element of \p type: 4 for int4 (two elements a byte), else 8 x BytesOf */
uint32_t BitsOf(DataType type);

/**
 * \return the bytes one weight of \p type takes in memory: int4's half byte and a 16-bit scale
 * per group of 128 along the reduction dimension (GPTQ's and AWQ's default group size), else
 * BytesOf(type)
 */
double WeightBytesOf(DataType type);

/**
 * \return the type a GEMM over \p type multiplies in: fp16 for int4 (weight-only kernels such
 * as Marlin dequantize the weights to fp16 in registers and run fp16 MMAs), else \p type
 */
DataType MmaTypeOf(DataType type);

/** \return whether \p type is a weight-only type (int4): the activations stay in 16 bits */
bool IsWeightOnly(DataType type);

/** \return the lower-case name ("bf16") */
std::string ToString(DataType type);

/** \return every type's name, for error messages and YAML keys */
std::vector<std::string> DataTypeNames();

/** \return the names of the types a GPU has FLOP rates for (every type but int4) */
std::vector<std::string> RateTypeNames();

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
