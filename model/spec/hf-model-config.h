/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_HF_MODEL_CONFIG_H
#define RAPIDLLM_HF_MODEL_CONFIG_H

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief Reads a Hugging Face `config.json` as a model spec, so that `--model=config.json`
 * describes a published model without a hand-written YAML copy.
 *
 * Supported families (model_type, or architectures when model_type is absent): llama,
 * mistral, mixtral, qwen2 (RMSNorm, rotary positions, SiLU-gated MLP), gpt2 (LayerNorm,
 * learned positions, GELU, biases, tied embeddings) and gpt_neox (LayerNorm, rotary, GELU,
 * biases). The config becomes the tree of a model YAML file, which the normal model parse then
 * checks. What ModelSpec cannot represent is an error naming the config key: another
 * model_type, a non-SiLU gated MLP, sliding-window attention shorter than the positions,
 * attention and MLP biases that differ (Llama family), a non-GELU GPT-2/NeoX activation.
 * Approximations, documented in doc/model-specs.md: Qwen2's Q/K/V biases (0.002% of its
 * parameters) are not counted, GPT-NeoX's parallel residual and partial rotary run as the
 * sequential layer (same operators and FLOPs), RoPE scaling changes no cost.
 */
class HuggingFaceConfig
{
  public:
    /**
     * \param text the file's text
     * \param source the file name
     * \return true for a JSON object with a model_type or architectures key, or for a file
     *         named *.json that is not valid JSON (so that its syntax error is reported)
     */
    static bool IsConfig(const std::string& text, const std::string& source);

    /**
     * \brief Converts a config to the tree of a model YAML file (name, layers, hidden, ...).
     * The name is `_name_or_path`'s last component, else the file's stem (for config.json, its
     * folder's name).
     * \param text the JSON text
     * \param source the file name, for errors
     * \return the tree; throws SpecError naming the config key on what cannot be represented
     */
    static YAML::Node ToModelTree(const std::string& text, const std::string& source);

    /** \return the supported model_type values */
    static std::vector<std::string> ModelTypes();
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_HF_MODEL_CONFIG_H
