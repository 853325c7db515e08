/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "hf-model-config.h"

#include "spec-error.h"
#include "spec-reader.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <map>
#include <set>

namespace ns3 {
namespace rapidllm {

namespace {

using Json = nlohmann::json;

/** The families a config can belong to, by model_type, with their architectures names. */
const std::map<std::string, std::string> kArchitectures = {
    {"LlamaForCausalLM", "llama"},
    {"MistralForCausalLM", "mistral"},
    {"MixtralForCausalLM", "mixtral"},
    {"Qwen2ForCausalLM", "qwen2"},
    {"Qwen3ForCausalLM", "qwen3"},
    {"Qwen2MoeForCausalLM", "qwen2_moe"},
    {"Qwen3MoeForCausalLM", "qwen3_moe"},
    {"GPT2LMHeadModel", "gpt2"},
    {"GPTNeoXForCausalLM", "gpt_neox"},
    {"GptOssForCausalLM", "gpt_oss"},
    {"GemmaForCausalLM", "gemma"},
    {"Gemma2ForCausalLM", "gemma2"},
    {"Gemma3ForCausalLM", "gemma3_text"},
    {"DeepseekV2ForCausalLM", "deepseek_v2"},
    {"DeepseekV3ForCausalLM", "deepseek_v3"},
};

/** Typed access to the keys of one config object; errors name the key and the file. */
class ConfigReader
{
  public:
    ConfigReader(const Json& json, const std::string& source)
        : m_json(json)
        , m_source(source)
    {}

    bool
    Has(const std::string& key) const
    {
        return m_json.contains(key) && !m_json.at(key).is_null();
    }

    [[noreturn]] void
    Fail(const std::string& key, const std::string& message) const
    {
        throw SpecError(m_source, key, message);
    }

    /** \return a whole number in [minimum, 2^32 - 1] */
    uint64_t
    Count(const std::string& key, uint64_t minimum = 1) const
    {
        if (!Has(key))
        {
            Fail(key, "missing; a " + m_family + " config gives it");
        }
        const Json& value = m_json.at(key);
        double number = 0;
        if (value.is_number_unsigned())
        {
            const auto u = value.get<uint64_t>();
            number = u > SpecReader::kMaxCount ? 1e300 : static_cast<double>(u);
        }
        else if (value.is_number())
        {
            number = value.get<double>();
        }
        else
        {
            Fail(key, "expected a whole number, got " + value.dump());
        }
        if (!std::isfinite(number) || number != std::floor(number)
            || number < static_cast<double>(minimum)
            || number > static_cast<double>(SpecReader::kMaxCount))
        {
            Fail(key,
                 "must be a whole number from " + std::to_string(minimum) + " to "
                     + std::to_string(SpecReader::kMaxCount) + ", got " + value.dump());
        }
        return static_cast<uint64_t>(number);
    }

    uint64_t
    Count(const std::string& key, uint64_t minimum, uint64_t fallback) const
    {
        return Has(key) ? Count(key, minimum) : fallback;
    }

    /** \return a number (for rates and factors) */
    double
    Number(const std::string& key, double fallback) const
    {
        if (!Has(key))
        {
            return fallback;
        }
        const Json& value = m_json.at(key);
        if (!value.is_number() || !std::isfinite(value.get<double>()))
        {
            Fail(key, "expected a number, got " + value.dump());
        }
        return value.get<double>();
    }

    bool
    Bool(const std::string& key, bool fallback) const
    {
        if (!Has(key))
        {
            return fallback;
        }
        const Json& value = m_json.at(key);
        if (!value.is_boolean())
        {
            Fail(key, "expected true or false, got " + value.dump());
        }
        return value.get<bool>();
    }

    /** \return the whole numbers of a list (absent or null: empty); anything else fails */
    std::vector<uint64_t>
    CountList(const std::string& key) const
    {
        std::vector<uint64_t> counts;
        if (!Has(key))
        {
            return counts;
        }
        const Json& value = m_json.at(key);
        if (!value.is_array())
        {
            Fail(key, "expected a list of whole numbers, got " + value.dump());
        }
        for (const Json& item : value)
        {
            if (!item.is_number_unsigned())
            {
                Fail(key, "expected a list of whole numbers, got " + value.dump());
            }
            counts.push_back(item.get<uint64_t>());
        }
        return counts;
    }

    /** \return a required list of text values */
    std::vector<std::string>
    TextList(const std::string& key) const
    {
        const Json& value = m_json.at(key);
        if (!value.is_array())
        {
            Fail(key, "expected a list, got " + value.dump());
        }
        std::vector<std::string> out;
        for (const Json& item : value)
        {
            if (!item.is_string())
            {
                Fail(key, "expected a list of text values, got " + item.dump());
            }
            out.push_back(item.get<std::string>());
        }
        return out;
    }

    std::string
    Text(const std::string& key, const std::string& fallback) const
    {
        if (!Has(key))
        {
            return fallback;
        }
        const Json& value = m_json.at(key);
        if (!value.is_string())
        {
            Fail(key, "expected a text value, got " + value.dump());
        }
        return value.get<std::string>();
    }

    void
    SetFamily(const std::string& family)
    {
        m_family = family;
    }

  private:
    const Json& m_json;   //!< the config object
    std::string m_source; //!< the file
    std::string m_family; //!< model_type, for messages
};

/** \return the name the model's reports carry */
std::string
NameOf(const ConfigReader& r, const std::string& source)
{
    std::string name = r.Text("_name_or_path", "");
    while (!name.empty() && name.back() == '/')
    {
        name.pop_back();
    }
    if (!name.empty())
    {
        return std::filesystem::path(name).filename().string();
    }
    std::filesystem::path path(source);
    if (path.stem() == "config" && !path.parent_path().filename().empty())
    {
        return path.parent_path().filename().string();
    }
    return path.stem().empty() ? "hf-model" : path.stem().string();
}

/**
 * Reads layer_types ("sliding_attention" / "full_attention" per layer) into the model file's
 * sliding window: every layer windowed, or all but every k-th (sliding_window_pattern k); any
 * other arrangement is refused, naming the key.
 */
void
ReadLayerTypes(const ConfigReader& r, uint64_t positions, YAML::Node& m)
{
    const std::vector<std::string> types = r.TextList("layer_types");
    const uint64_t layers = r.Count("num_hidden_layers");
    if (types.size() != layers)
    {
        r.Fail("layer_types",
               std::to_string(types.size()) + " entries for num_hidden_layers = "
                   + std::to_string(layers) + "; give one per layer");
    }
    std::vector<std::size_t> full;
    for (std::size_t i = 0; i < types.size(); ++i)
    {
        if (types[i] == "full_attention")
        {
            full.push_back(i);
        }
        else if (types[i] != "sliding_attention")
        {
            r.Fail("layer_types",
                   "'" + types[i] + "' at layer " + std::to_string(i)
                       + " is not modelled; allowed: sliding_attention, full_attention");
        }
    }
    if (full.size() == types.size())
    {
        return; // every layer attends fully
    }
    const uint64_t window = r.Count("sliding_window");
    if (window >= positions)
    {
        return; // a window no query exceeds
    }
    const std::size_t k = full.empty() ? 0 : full.front() + 1;
    for (std::size_t i = 0; i < types.size(); ++i)
    {
        if ((k > 0 && (i + 1) % k == 0) != (types[i] == "full_attention"))
        {
            r.Fail("layer_types",
                   "windowed and full layers in another arrangement than every layer windowed, "
                   "or all but every k-th, are not modelled (layer "
                       + std::to_string(i) + " is '" + types[i] + "')");
        }
    }
    m["sliding_window"] = window;
    if (k > 0)
    {
        m["sliding_window_pattern"] = k;
    }
}

/**
 * \return a model file's moe: section with the config's expert count (key \p expertsKey), its
 * num_experts_per_tok (1 to the count) and each expert's width \p expertFfn
 */
YAML::Node
ReadExperts(const ConfigReader& r, const std::string& expertsKey, uint64_t expertFfn)
{
    const uint64_t experts = r.Count(expertsKey, 2);
    const uint64_t topK = r.Count("num_experts_per_tok");
    if (topK > experts)
    {
        r.Fail("num_experts_per_tok",
               "must be between 1 and " + expertsKey + " (" + std::to_string(experts) + ")");
    }
    YAML::Node moe(YAML::NodeType::Map);
    moe["experts"] = experts;
    moe["top_k"] = topK;
    moe["expert_ffn"] = expertFfn;
    return moe;
}

/**
 * Reads Qwen's mixture of experts (qwen2_moe, qwen3_moe): num_experts of width
 * moe_intermediate_size, Qwen2-MoE's shared expert, and the dense layers among them: layer i
 * is MoE when (i + 1) is a multiple of decoder_sparse_step and i is not in mlp_only_layers,
 * which the model holds as leading dense layers (0 .. k-1) only.
 */
void
ReadQwenMoe(const ConfigReader& r, const std::string& type, YAML::Node& m)
{
    const uint64_t layers = r.Count("num_hidden_layers");
    const uint64_t step = r.Count("decoder_sparse_step", 1, 1);
    const std::vector<uint64_t> dense = r.CountList("mlp_only_layers");
    for (size_t i = 0; i < dense.size(); ++i)
    {
        if (dense[i] != i)
        {
            r.Fail("mlp_only_layers",
                   "dense layers other than the first ones (0, 1, ..., k-1) are not modelled");
        }
    }
    if (dense.size() >= layers || step > layers)
    {
        r.Fail(dense.size() >= layers ? "mlp_only_layers" : "decoder_sparse_step",
               "leaves no mixture-of-experts layer among the " + std::to_string(layers));
    }
    const uint64_t expertFfn = r.Count("moe_intermediate_size");
    YAML::Node moe = ReadExperts(r, "num_experts", expertFfn);
    if (type == "qwen2_moe")
    {
        // Every token also runs one shared expert (its sigmoid gate's hidden weights are not
        // counted).
        moe["shared_expert_ffn"] = r.Count("shared_expert_intermediate_size");
    }
    if (!dense.empty() || step > 1)
    {
        // intermediate_size is the dense layers' MLP.
        moe["first_dense_layers"] = uint64_t(dense.size());
        moe["layer_step"] = step;
    }
    else
    {
        // Every layer is MoE: the dense intermediate_size is unused; ffn is the experts'
        // width, as in Mixtral's config.
        m["ffn"] = expertFfn;
    }
    m["moe"] = moe;
}

/** Reads a family with RMSNorm, rotary positions and a SiLU-gated MLP. */
void
ReadLlamaFamily(const ConfigReader& r, const std::string& type, YAML::Node& m)
{
    const uint64_t heads = r.Count("num_attention_heads");
    m["layers"] = r.Count("num_hidden_layers");
    m["hidden"] = r.Count("hidden_size");
    m["heads"] = heads;
    m["kv_heads"] = r.Count("num_key_value_heads", 1, heads);
    if (r.Has("head_dim"))
    {
        m["head_dim"] = r.Count("head_dim");
    }
    const uint64_t ffn = r.Count("intermediate_size");
    m["ffn"] = ffn;
    const bool gemma = type == "gemma" || type == "gemma2" || type == "gemma3_text";
    if (gemma)
    {
        // Gemma's MLP is GELU-gated (GeGLU); transformers reads hidden_activation first.
        const std::string key = r.Has("hidden_activation") ? "hidden_activation" : "hidden_act";
        const std::string act = r.Text(key, "gelu_pytorch_tanh");
        if (act.compare(0, 4, "gelu") != 0)
        {
            r.Fail(key,
                   "'" + act
                       + "': a Gemma MLP gated by another activation than GELU is not "
                         "modelled; allowed: gelu_pytorch_tanh, gelu, ...");
        }
        m["activation"] = "geglu";
    }
    else
    {
        const std::string act = r.Text("hidden_act", "silu");
        if (act != "silu" && act != "swish")
        {
            r.Fail("hidden_act",
                   "'" + act + "': a " + type
                       + " MLP gated by another activation than SiLU is not modelled; allowed: "
                         "silu");
        }
        m["activation"] = "swiglu";
    }
    m["norm"] = "rmsnorm";
    m["position"] = "rope";
    // Llama may put biases on attention or MLP; ModelSpec's bias is on every linear layer.
    // Qwen2's Q/K/V biases (h + 2 kv_heads x head_dim per layer) are not counted.
    bool bias = false;
    if (type == "llama")
    {
        const bool attention = r.Bool("attention_bias", false);
        const bool mlp = r.Bool("mlp_bias", false);
        if (attention != mlp)
        {
            r.Fail("mlp_bias",
                   "biases on the attention but not the MLP (or the reverse) are not modelled; "
                   "attention_bias and mlp_bias must be equal");
        }
        bias = attention;
    }
    if (type == "gpt_oss")
    {
        // Biases on the attention projections and on every expert's projections.
        bias = r.Bool("attention_bias", false);
    }
    const bool qwen3 = type == "qwen3" || type == "qwen3_moe";
    const bool qwen2 = type == "qwen2" || type == "qwen2_moe";
    if (qwen3 && r.Bool("attention_bias", false))
    {
        r.Fail("attention_bias",
               "biases on the attention but not the MLP are not modelled (Qwen3's MLP has "
               "none); allowed: false");
    }
    m["bias"] = bias;
    m["dropout"] = r.Number("attention_dropout", 0) > 0;
    m["vocab"] = r.Count("vocab_size");
    m["tied_embeddings"] = r.Bool("tie_word_embeddings", gemma);
    const uint64_t positions = r.Count("max_position_embeddings");
    m["max_sequence"] = positions;
    // Which layers are windowed: layer_types where the config lists them (transformers writes
    // it for gpt-oss, Gemma and newer configs of the others), else Mistral and Mixtral window
    // every layer, gpt-oss every other one (GptOssConfig's default layer_types), Qwen2/Qwen3
    // the layers from max_window_layers on when use_sliding_window is set, which is not read
    // here, and the other families none (transformers' Llama and Gemma-1 ignore the key).
    const bool qwen = qwen2 || qwen3;
    if (r.Has("layer_types"))
    {
        ReadLayerTypes(r, positions, m);
    }
    else if ((type == "gemma2" || type == "gemma3_text" || type == "gpt_oss")
             && r.Has("sliding_window") && r.Count("sliding_window") < positions)
    {
        // Without layer_types, Gemma-2 and gpt-oss window every other layer (the even ones)
        // and Gemma-3 all but every sliding_window_pattern-th (6 in its configs).
        m["sliding_window"] = r.Count("sliding_window");
        m["sliding_window_pattern"] =
            type == "gemma3_text" ? r.Count("sliding_window_pattern", 2, 6) : uint64_t(2);
    }
    else if ((qwen ? r.Bool("use_sliding_window", false) : type == "mistral" || type == "mixtral")
             && r.Has("sliding_window") && r.Count("sliding_window") < positions)
    {
        if (qwen)
        {
            r.Fail("sliding_window",
                   std::to_string(r.Count("sliding_window"))
                       + ": Qwen's sliding window on the layers from max_window_layers on is not "
                         "modelled; set use_sliding_window to false for full attention");
        }
        m["sliding_window"] = r.Count("sliding_window");
    }
    if (type == "mixtral" || type == "gpt_oss")
    {
        m["moe"] = ReadExperts(r, "num_local_experts", ffn);
    }
    if (type == "qwen2_moe" || type == "qwen3_moe")
    {
        ReadQwenMoe(r, type, m);
    }
}

/** Reads GPT-2: LayerNorm, learned positions, GELU, biases, tied embeddings. */
void
ReadGpt2(const ConfigReader& r, YAML::Node& m)
{
    const uint64_t hidden = r.Count("n_embd");
    m["layers"] = r.Count("n_layer");
    m["hidden"] = hidden;
    m["heads"] = r.Count("n_head");
    // n_inner null means 4 x n_embd (GPT2MLP).
    const uint64_t ffn = r.Has("n_inner") ? r.Count("n_inner") : 4 * hidden;
    if (ffn > SpecReader::kMaxCount)
    {
        r.Fail("n_embd", "4 x n_embd (the default n_inner) exceeds 4294967295");
    }
    m["ffn"] = ffn;
    const std::string act = r.Text("activation_function", "gelu_new");
    if (act.compare(0, 4, "gelu") != 0)
    {
        r.Fail("activation_function",
               "'" + act + "' is not modelled; allowed: gelu, gelu_new, gelu_fast, ...");
    }
    m["activation"] = "gelu";
    m["norm"] = "layernorm";
    m["position"] = "learned";
    m["bias"] = true;
    m["dropout"] = r.Number("resid_pdrop", 0.1) > 0 || r.Number("attn_pdrop", 0.1) > 0
                   || r.Number("embd_pdrop", 0.1) > 0;
    m["vocab"] = r.Count("vocab_size");
    m["tied_embeddings"] = r.Bool("tie_word_embeddings", true);
    m["max_sequence"] = r.Count("n_positions");
}

/** Reads GPT-NeoX: LayerNorm, rotary (possibly partial), GELU, biases. */
void
ReadGptNeox(const ConfigReader& r, YAML::Node& m)
{
    m["layers"] = r.Count("num_hidden_layers");
    m["hidden"] = r.Count("hidden_size");
    m["heads"] = r.Count("num_attention_heads");
    m["ffn"] = r.Count("intermediate_size");
    const std::string act = r.Text("hidden_act", "gelu");
    if (act.compare(0, 4, "gelu") != 0)
    {
        r.Fail("hidden_act", "'" + act + "' is not modelled; allowed: gelu, gelu_fast, ...");
    }
    const double rotary = r.Number("rotary_pct", 0.25);
    if (rotary <= 0 || rotary > 1)
    {
        r.Fail("rotary_pct", "must be above 0 and at most 1");
    }
    m["activation"] = "gelu";
    m["norm"] = "layernorm";
    m["position"] = "rope";
    m["bias"] = r.Bool("attention_bias", true);
    m["dropout"] = r.Number("attention_dropout", 0) > 0 || r.Number("hidden_dropout", 0) > 0;
    m["vocab"] = r.Count("vocab_size");
    m["tied_embeddings"] = r.Bool("tie_word_embeddings", false);
    m["max_sequence"] = r.Count("max_position_embeddings");
}

/**
 * Reads DeepSeek-V2 and -V3 (deepseek_v2, deepseek_v3): multi-head latent attention, and
 * n_routed_experts of width moe_intermediate_size with n_shared_experts beside them, after
 * first_k_dense_replace dense layers. V3's multi-token prediction module
 * (num_nextn_predict_layers), which transformers does not run either, is not modelled.
 */
void
ReadDeepseek(const ConfigReader& r, YAML::Node& m)
{
    const uint64_t heads = r.Count("num_attention_heads");
    m["layers"] = r.Count("num_hidden_layers");
    m["hidden"] = r.Count("hidden_size");
    m["heads"] = heads;
    if (r.Count("num_key_value_heads", 1, heads) != heads)
    {
        r.Fail("num_key_value_heads",
               "latent attention expands keys and values per head; allowed: num_attention_heads ("
                   + std::to_string(heads) + ")");
    }
    const uint64_t nope = r.Count("qk_nope_head_dim");
    const uint64_t rope = r.Count("qk_rope_head_dim");
    m["head_dim"] = nope + rope;
    YAML::Node mla(YAML::NodeType::Map);
    mla["kv_lora_rank"] = r.Count("kv_lora_rank");
    mla["q_lora_rank"] = r.Count("q_lora_rank", 1, 0); // null in DeepSeek-V2-Lite: no latent
    mla["rope_head_dim"] = rope;
    mla["v_head_dim"] = r.Count("v_head_dim");
    m["mla"] = mla;
    m["ffn"] = r.Count("intermediate_size");
    const std::string act = r.Text("hidden_act", "silu");
    if (act != "silu")
    {
        r.Fail("hidden_act", "'" + act + "': allowed: silu");
    }
    m["activation"] = "swiglu";
    m["norm"] = "rmsnorm";
    m["position"] = "rope";
    if (r.Bool("attention_bias", false))
    {
        r.Fail("attention_bias",
               "biases on the attention but not the MLP are not modelled; allowed: false");
    }
    m["bias"] = false;
    m["dropout"] = r.Number("attention_dropout", 0) > 0;
    m["vocab"] = r.Count("vocab_size");
    m["tied_embeddings"] = r.Bool("tie_word_embeddings", false);
    m["max_sequence"] = r.Count("max_position_embeddings");
    // DeepSeek-V3's multi-token prediction modules (absent in V2: none).
    const uint64_t mtp = r.Count("num_nextn_predict_layers", 0, 0);
    if (mtp > 0)
    {
        m["mtp_layers"] = mtp;
    }
    if (!r.Has("n_routed_experts"))
    {
        return; // a dense model
    }
    // DeepSeek's rule: layer i is MoE when i >= first_k_dense_replace and i % moe_layer_freq ==
    // 0; the model's (i + 1) % step == 0 is the same rule for a frequency of 1 only.
    if (r.Count("moe_layer_freq", 1, 1) != 1)
    {
        r.Fail("moe_layer_freq",
               "a mixture of experts on every k-th layer only is not "
               "modelled for DeepSeek configs; allowed: 1");
    }
    const uint64_t layers = r.Count("num_hidden_layers");
    const uint64_t dense = r.Count("first_k_dense_replace", 0, 0);
    if (dense >= layers)
    {
        r.Fail("first_k_dense_replace",
               "leaves no mixture-of-experts layer among the " + std::to_string(layers));
    }
    const uint64_t expertFfn = r.Count("moe_intermediate_size");
    YAML::Node moe = ReadExperts(r, "n_routed_experts", expertFfn);
    const uint64_t shared = r.Count("n_shared_experts", 0, 0);
    if (shared > 0)
    {
        // The shared experts run as one MLP of their summed width (DeepseekV2MoE).
        moe["shared_expert_ffn"] = shared * expertFfn;
    }
    if (dense > 0)
    {
        moe["first_dense_layers"] = dense;
    }
    else
    {
        m["ffn"] = expertFfn;
    }
    m["moe"] = moe;
}

} // namespace

std::vector<std::string>
HuggingFaceConfig::ModelTypes()
{
    return {"llama",
            "mistral",
            "mixtral",
            "qwen2",
            "qwen2_moe",
            "qwen3",
            "qwen3_moe",
            "gpt2",
            "gpt_neox",
            "gpt_oss",
            "gemma",
            "gemma2",
            "gemma3_text",
            "deepseek_v2",
            "deepseek_v3"};
}

bool
HuggingFaceConfig::IsConfig(const std::string& text, const std::string& source)
{
    const auto first = text.find_first_not_of(" \t\r\n");
    const bool jsonName = source.size() >= 5 && source.compare(source.size() - 5, 5, ".json") == 0;
    if (first == std::string::npos || text[first] != '{')
    {
        return jsonName;
    }
    if (!Json::accept(text))
    {
        return jsonName;
    }
    const Json json = Json::parse(text);
    return json.is_object() && (json.contains("model_type") || json.contains("architectures"));
}

YAML::Node
HuggingFaceConfig::ToModelTree(const std::string& text, const std::string& source)
{
    Json json;
    // JSON lets a key repeat (the last one wins); a config that gives num_hidden_layers twice
    // is a damaged one, refused as a YAML file's repeated key is.
    std::vector<std::set<std::string>> keys; // per open object
    std::string repeated;
    auto watch = [&](int /* depth */, Json::parse_event_t event, Json& parsed)
    {
        if (event == Json::parse_event_t::object_start)
        {
            keys.emplace_back();
        }
        else if (event == Json::parse_event_t::object_end && !keys.empty())
        {
            keys.pop_back();
        }
        else if (event == Json::parse_event_t::key && !keys.empty() && repeated.empty()
                 && !keys.back().insert(parsed.get<std::string>()).second)
        {
            repeated = parsed.get<std::string>();
        }
        return true;
    };
    try
    {
        json = Json::parse(text, watch);
    }
    catch (const Json::exception& e)
    {
        throw SpecError(
            source, "", std::string("not a valid JSON Hugging Face config: ") + e.what());
    }
    if (!repeated.empty())
    {
        throw SpecError(source, repeated, "is given twice; a key appears once in a config");
    }
    if (!json.is_object())
    {
        throw SpecError(source, "", "a Hugging Face config is a JSON object");
    }
    ConfigReader r(json, source);
    std::string type = r.Text("model_type", "");
    if (type.empty() && r.Has("architectures"))
    {
        const Json& archs = json.at("architectures");
        if (!archs.is_array() || archs.empty() || !archs[0].is_string())
        {
            r.Fail("architectures", "expected a list of class names, got " + archs.dump());
        }
        auto it = kArchitectures.find(archs[0].get<std::string>());
        if (it == kArchitectures.end())
        {
            std::vector<std::string> known;
            for (const auto& [name, family] : kArchitectures)
            {
                known.push_back(name);
            }
            r.Fail("architectures",
                   "'" + archs[0].get<std::string>()
                       + "' is not supported; supported: " + JoinNames(known));
        }
        type = it->second;
    }
    if (type.empty())
    {
        r.Fail("model_type",
               "missing (and no architectures); supported: " + JoinNames(ModelTypes()));
    }
    r.SetFamily(type);
    YAML::Node m(YAML::NodeType::Map);
    m["name"] = NameOf(r, source);
    if (type == "llama" || type == "mistral" || type == "mixtral" || type == "qwen2"
        || type == "qwen2_moe" || type == "qwen3" || type == "qwen3_moe" || type == "gpt_oss"
        || type == "gemma" || type == "gemma2" || type == "gemma3_text")
    {
        ReadLlamaFamily(r, type, m);
    }
    else if (type == "deepseek_v2" || type == "deepseek_v3")
    {
        ReadDeepseek(r, m);
    }
    else if (type == "gpt2")
    {
        ReadGpt2(r, m);
    }
    else if (type == "gpt_neox")
    {
        ReadGptNeox(r, m);
    }
    else
    {
        r.Fail("model_type",
               "'" + type + "' is not supported; supported: " + JoinNames(ModelTypes()));
    }
    return m;
}

} // namespace rapidllm
} // namespace ns3
