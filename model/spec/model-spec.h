/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_MODEL_SPEC_H
#define RAPIDLLM_MODEL_SPEC_H

#include <cstdint>
#include <string>
#include <vector>

namespace ns3 {
namespace rapidllm {

class SpecOverride;

/** \brief Normalization layer type. */
enum class NormType
{
    LAYER_NORM, //!< LayerNorm with weight and bias (GPT)
    RMS_NORM    //!< RMSNorm with weight only (Llama)
};

/** \brief MLP activation; a gated MLP (SwiGLU) has two input projections. */
enum class Activation
{
    GELU,         //!< GELU, one input projection (GPT)
    SWIGLU,       //!< SiLU-gated, two input projections (Llama)
    SQUARED_RELU, //!< relu(x)^2, one input projection (Nemotron; So et al., Primer, 2021)
    GEGLU         //!< GELU-gated, two input projections (Gemma; Shazeer, 2020)
};

/** \brief How positions enter the model. */
enum class PositionEmbedding
{
    LEARNED, //!< a learned s x h table (GPT)
    ROPE     //!< rotary embedding applied to Q and K (Llama)
};

/**
 * \ingroup rapid-llm
 * \brief The shape of a decoder-only transformer, dense or mixture-of-experts.
 */
struct ModelSpec
{
    std::string name;                         //!< preset name or file stem
    uint32_t layers = 0;                      //!< decoder layers
    uint32_t hidden = 0;                      //!< model width h
    uint32_t heads = 0;                       //!< attention heads a
    uint32_t kvHeads = 0;                     //!< KV heads (GQA/MQA; = heads for MHA)
    uint32_t headDim = 0;                     //!< per-head width (usually h / a)
    uint32_t ffn = 0;                         //!< dense MLP width
    NormType norm = NormType::LAYER_NORM;     //!< normalization
    Activation activation = Activation::GELU; //!< MLP activation
    PositionEmbedding position = PositionEmbedding::LEARNED; //!< position encoding
    bool bias = true;                                        //!< linear layers have biases (GPT)
    bool dropout = false;        //!< dropout after attention, projections and MLP (GPT)
    uint32_t vocab = 0;          //!< vocabulary V
    bool tiedEmbeddings = false; //!< LM head shares the embedding
    uint32_t maxSequence = 0;    //!< longest sequence (learned table size)
    uint32_t experts = 0;        //!< MoE experts per layer (0 = dense)
    uint32_t topK = 0;           //!< experts each token visits
    uint32_t expertFfn = 0;      //!< each expert's MLP width
    /** MoE: width of the shared expert(s) every token runs beside its routed ones (0: none) */
    uint32_t sharedExpertFfn = 0;
    uint32_t firstDenseLayers = 0; //!< MoE: leading layers with the dense MLP of width ffn
    uint32_t moeLayerStep = 1;     //!< MoE: after them, layer i is MoE when (i + 1) % step == 0
    uint32_t slidingWindow = 0;    //!< causal sliding window of the windowed layers (0: none)
    uint32_t windowPattern = 0;    //!< every windowPattern-th layer attends fully (0: none does)
    /**
     * Multi-head latent attention (DeepSeek-V2, Liu et al. 2024): the width of the compressed
     * key/value latent every token caches (0: ordinary attention). headDim is then the query and
     * key head width, rope part included.
     */
    uint32_t kvLoraRank = 0;
    uint32_t qLoraRank = 0;    //!< MLA: width of the compressed query (0: Q from the hidden state)
    uint32_t ropeHeadDim = 0;  //!< MLA: the rotary part of headDim, one key per token for all heads
    uint32_t valueHeadDim = 0; //!< MLA: per-head value width (0: headDim)
    /**
     * Multi-token prediction modules trained beside the model (DeepSeek-V3 section 2.2; its
     * num_nextn_predict_layers, Megatron-core's mtp_num_layers): module k predicts token i + k + 1
     * from the previous depth's hidden state and token i + k's embedding through one decoder
     * layer, sharing the embedding and the output head. Training only; not in ParameterCount.
     */
    uint32_t mtpLayers = 0;

    /** \return true when the MLP is gated (two input projections) */
    bool IsGated() const;
    /** \return true for a mixture-of-experts model */
    bool IsMoe() const;
    /** \return true when attention is multi-head latent attention (kvLoraRank > 0) */
    bool IsMla() const;
    /** \return the per-head width of the values (valueHeadDim under MLA, else headDim) */
    uint32_t ValueDim() const;
    /** \return parameters of one layer's attention block: projections, biases, MLA's norms */
    uint64_t AttentionParameters() const;
    /**
     * \brief Whether decoder layer \p layer (0-based) is a mixture of experts: in a MoE model
     * every layer from firstDenseLayers on whose (layer + 1) is a multiple of moeLayerStep
     * (DeepSeek's first_k_dense_replace, Qwen's decoder_sparse_step, Llama 4's interleave step);
     * the others run the dense MLP.
     */
    bool IsMoeLayer(uint32_t layer) const;
    /** \return the number of mixture-of-experts layers */
    uint32_t MoeLayers() const;
    /**
     * \brief The sliding window of decoder layer \p layer (0-based): Mistral windows every
     * layer, Gemma-2 and GPT-OSS every other one, Gemma-3 five of every six.
     * \param layer the layer \return its window in tokens, 0 when it attends to every key
     */
    uint32_t WindowOf(uint32_t layer) const;
    /** \return true when some layer has a sliding window */
    bool HasWindow() const;

    /**
     * \return parameters of one decoder layer, a mixture-of-experts one (all experts and the
     * shared expert counted) when \p moe and the model has experts, else one with the dense MLP
     */
    uint64_t LayerParameters(bool moe) const;
    /** \return parameters of the embedding (and position table), counted once */
    uint64_t EmbeddingParameters() const;
    /** \return every parameter of the model */
    uint64_t ParameterCount() const;

    /**
     * \brief Loads a model preset by name ("gpt3-175b"), a YAML file by path, or a Hugging Face
     * config.json (HuggingFaceConfig). A YAML file may name a `base:` (SpecDocument).
     * \param nameOrPath a preset name or a path
     * \return the spec; throws SpecError on bad input
     */
    static ModelSpec Load(const std::string& nameOrPath);

    /**
     * \brief Loads as Load(nameOrPath), then applies the "model." overrides (the others are
     * for the hardware and skipped) before the typed parse, so every check applies to them.
     * \param nameOrPath a preset name or a path
     * \param overrides e.g. SpecOverride::ParseList("model.layers=40,gpu.hbm_gib=160")
     * \return the spec; throws SpecError naming the override that set a bad field
     */
    static ModelSpec Load(const std::string& nameOrPath,
                          const std::vector<SpecOverride>& overrides);

    /**
     * \brief Parses YAML text (or a Hugging Face config's JSON text).
     * \param text the document
     * \param source the file or preset name used in errors
     * \return the spec
     */
    static ModelSpec Parse(const std::string& text, const std::string& source);

    /** \return true when every field is equal (add new fields to it) */
    bool operator==(const ModelSpec& other) const;
    /** \return true when a field differs */
    bool operator!=(const ModelSpec& other) const;

    /**
     * \brief Checks that the fields are consistent; throws SpecError naming \p source.
     * \param source the file or preset name used in errors
     */
    void Validate(const std::string& source) const;
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_MODEL_SPEC_H
