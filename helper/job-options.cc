/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "job-options.h"

#include "ns3/command-line.h"
#include "ns3/job-spec.h"
#include "ns3/network-backend.h"
#include "ns3/preset-registry.h"
#include "ns3/routing-policy.h"
#include "ns3/spec-error.h"
#include "ns3/spec-override.h"
#include "ns3/spec-reader.h"
#include "ns3/topology.h"
#include "rapid-llm-helper.h"

#include <algorithm>
#include <cstdio>
#include <tuple>

namespace ns3 {
namespace rapidllm {

const char* const kCommandLine = "command line";

namespace {

/** Builds the table once; the choices are read when used (after any plugin is loaded). */
std::vector<OptionSpec>
MakeDeclarations()
{
    using O = OptionSpec;
    const uint64_t kMaxGpus = JobOptions::kMaxGpus;
    const uint64_t kMaxCount = JobOptions::kMaxCount;
    auto runChoices = [](const std::string& field)
    {
        return [field]()
        {
            return RunSpec::Choices(field);
        };
    };
    return {
        // What runs, and on which machine.
        O::Text("model",
                "model preset name or YAML file",
                "gpt3-175b",
                []()
                {
                    return PresetRegistry::Names("models");
                }),
        O::Text("hardware",
                "hardware preset name or YAML file",
                "a100-sxm-80gb",
                []()
                {
                    return PresetRegistry::Names("hardware");
                }),
        O::Text("run",
                "job file (YAML, doc/model-specs.md): the job's options (model, hardware, set, "
                "gpus, backend, routing, mode, parallel with rank_order, batch, ...); options "
                "given on the command line override it",
                ""),
        O::Text("set",
                "spec overrides by path, PATH=VALUE or PATH=FACTORx[,...], e.g. "
                "gpu.hbm_bandwidth_GBps=0.5x, gpu.hbm_gib=160, "
                "network.infiniband.oversubscription=2, model.layers=40",
                ""),
        O::Text("fault",
                "link faults SELECTOR[:FACTOR][@TIME][,...]: SELECTOR is A-B (both directions), "
                "A>B, A (every link of node A) or tier:DIMENSION (every link of a network "
                "dimension), nodes gpu<i> or switch names; FACTOR the bandwidth left, 0 = dead "
                "(the default) or 1e-6 to 1; @TIME (e.g. @2ms) starts it mid-run",
                ""),
        O::Text("slow-gpus",
                "GPUs that compute slower than the others (a throttled or faulty GPU, a "
                "straggler): gpu<i>:SPEED[,...], SPEED the share of its compute speed left, from "
                "1e-6 to 1 (its kernels take 1 / SPEED as long; its links and host are "
                "unchanged; every rank is then replayed)",
                ""),
        O::Text(
            "gpu-set",
            "GPUs of their own spec (a degraded HBM, a power cap or a locked clock on one GPU): "
            "gpu<i>:PATH=VALUE[,PATH=VALUE...][;gpu<j>:...], PATH a gpu. field as --set "
            "names it, e.g. gpu3:gpu.hbm_bandwidth_GBps=0.5x or "
            "gpu3:gpu.power.board_limit_w=400 (its kernels are costed again on it; every "
            "rank is then replayed)",
            ""),
        // The parallel layout.
        O::Count("gpus", "GPUs in the job (default tp x pp x dp x cp)", 1, kMaxGpus, ""),
        O::Count("tp", "tensor parallel degree", 1, kMaxGpus, "1"),
        O::Count("pp", "pipeline parallel stages", 1, kMaxGpus, "1"),
        O::Count("dp", "data parallel degree (default: gpus / (tp x pp x cp))", 1, kMaxGpus, ""),
        O::Count("cp",
                 "context parallel degree (training only: inference runs the whole prompt on every "
                 "rank)",
                 1,
                 kMaxGpus,
                 "1"),
        O::Count("ep", "expert parallel degree (divides the experts and dp)", 1, kMaxGpus, "1"),
        O::Count("etp",
                 "expert tensor parallel degree: tp (the default: experts sharded like the MLP) or "
                 "1 (whole experts; in training the expert groups fold over the tensor- and "
                 "context-parallel ranks, Megatron-core's MoE parallel folding; in inference "
                 "ep = tp, the experts spread over the tensor-parallel group)",
                 1,
                 kMaxGpus,
                 ""),
        O::Count("vpp",
                 "virtual pipeline stages per rank (interleaved 1F1B; zb-v: 2)",
                 1,
                 kMaxCount,
                 "1")
            .Mode("training"),
        O::Choice("pp-schedule",
                  "pipeline schedule: 1f1b (PipeDream-Flush; interleaved with vpp > 1), zb-h1 "
                  "(zero bubble, Qi et al. 2024: each backward pass split into its input and "
                  "weight gradients, the weight gradients deferred into the bubbles; vpp 1) or "
                  "zb-v (the same split on two model chunks a rank in a V, the first rank "
                  "holding the embedding and the LM head, the passes ordered on their predicted "
                  "times; vpp 2)",
                  runChoices("pp_schedule"),
                  "1f1b")
            .Field("pp_schedule")
            .Mode("training"),
        O::Flag("sp", "sequence parallelism (where tp > 1)", "false"),
        O::Text("rank-order",
                "how ranks map onto the parallel groups, fastest-varying first (Megatron-LM: "
                "tp-cp-ep-dp-pp)",
                "tp-cp-ep-dp-pp")
            .Field("rank_order"),
        O::Count("first-stage-layers",
                 "decoder layers on the first pipeline stage (0: an even share)",
                 0,
                 kMaxCount,
                 "0")
            .Field("first_stage_layers"),
        O::Count("last-stage-layers",
                 "decoder layers on the last pipeline stage (0: an even share)",
                 0,
                 kMaxCount,
                 "0")
            .Field("last_stage_layers"),
        O::Flag("embedding-in-pipeline-split",
                "the embedding counts as one layer in the pipeline split (Megatron-LM's "
                "--account-for-embedding-in-pipeline-split)",
                "false")
            .Field("embedding_in_pipeline_split"),
        O::Flag("loss-in-pipeline-split",
                "the LM head and loss count as one layer in the pipeline split (Megatron-LM's "
                "--account-for-loss-in-pipeline-split)",
                "false")
            .Field("loss_in_pipeline_split"),
        O::Count("zero", "ZeRO stage", 0, 3, "0").Mode("training"),
        O::Flag("fsdp", "fully sharded data parallel (ZeRO-3)", "false").Mode("training"),
        // The run.
        O::Choice("mode", "what the job does", runChoices("mode"), "training"),
        O::Choice("recompute", "activation recomputation", runChoices("recompute"), "none")
            .Mode("training"),
        O::Count("mbs", "micro-batch size (sequences)", 1, kMaxCount, "1")
            .Field("micro_batch")
            .Mode("training"),
        O::Count("gbs", "global batch size (sequences; default mbs x dp)", 1, kMaxCount, "")
            .Field("global_batch")
            .Mode("training"),
        O::Count("seq", "sequence length (tokens)", 1, kMaxCount, "2048")
            .Field("sequence")
            .Mode("training"),
        O::Count("batch", "inference: concurrent sequences", 1, kMaxCount, "1").Mode("inference"),
        O::Count("prompt", "inference: prompt tokens", 1, kMaxCount, "128").Mode("inference"),
        O::Count("gen", "inference: generated tokens", 1, kMaxCount, "128")
            .Field("generated")
            .Mode("inference"),
        O::Count("cached-prefix",
                 "inference: the first tokens of each prompt already in the KV cache (prefix "
                 "caching of a shared system prompt or an earlier turn: vLLM's automatic prefix "
                 "caching, SGLang's RadixAttention); the prefill computes the rest, attending to "
                 "them",
                 0,
                 kMaxCount,
                 "0")
            .Field("cached_prefix")
            .Mode("inference"),
        O::Flag("shared-prefix",
                "inference: the cached prefix is the same for every request of the batch (a "
                "shared system prompt), its keys and values stored once (needs --cached-prefix)",
                "false")
            .Field("shared_prefix")
            .Mode("inference"),
        O::Count("prefix-groups",
                 "inference, with --cached-prefix: the batch's requests fall into this many "
                 "groups, each sharing one prefix (several system prompts), its keys and values "
                 "stored once for the group: min(groups, batch) copies (0: each request its own; "
                 "--shared-prefix is one group)",
                 0,
                 kMaxCount,
                 "0")
            .Field("prefix_groups")
            .Mode("inference"),
        O::Flag("cascade-attention",
                "inference, with --shared-prefix: each decode step reads the shared prefix's keys "
                "and values once for the batch, then each request's own, and merges the two "
                "(cascade attention: FlashInfer, vLLM V1 with a long common prefix)",
                "false")
            .Field("cascade_attention")
            .Mode("inference"),
        O::Choice("kv-cache-dtype",
                  "inference: the KV cache's element type: auto (the activations' 16 bits), fp8 "
                  "(vLLM's --kv-cache-dtype fp8, TensorRT-LLM, SGLang), int8 (lmdeploy's "
                  "quant_policy 8): one byte holds twice the tokens and halves the decode "
                  "attention's reads, or int4 (lmdeploy's quant_policy 4): half a byte, four "
                  "times the tokens",
                  runChoices("kv_cache_dtype"),
                  "auto")
            .Field("kv_cache_dtype")
            .Mode("inference"),
        O::Real("gpu-memory-utilization",
                "the share of each GPU's memory the job may use, weights, activations and KV "
                "cache together (vLLM's --gpu-memory-utilization; 0: the engine's, 0.9 under "
                "--engine=vllm as vLLM's default, else 1)",
                0,
                1,
                "0")
            .Field("gpu_memory_utilization"),
        O::Count("profile-tokens",
                 "inference: the tokens of the forward the engine profiles before it sizes its KV "
                 "cache, whose activations the memory verdict keeps reserved (vLLM's profile run "
                 "at max_num_batched_tokens; 0: the engine's, under --engine=vllm its default "
                 "budget, 8192 on GPUs of 70 GiB or more but the A100, else 2048; none for the "
                 "other engines)",
                 0,
                 kMaxCount,
                 "0")
            .Field("profile_tokens")
            .Mode("inference"),
        O::Choice("decode-attention",
                  "inference: decode attention kernel: split_kv (flash-decoding) or per_head "
                  "(one thread block per sequence and query head, FasterTransformer/TurboMind "
                  "2023)",
                  runChoices("decode_attention"),
                  "split_kv")
            .Field("decode_attention")
            .Mode("inference"),
        O::Count("inflight-batches",
                 "inference with a pipeline: batches in flight through the stages, the batch "
                 "split evenly among them (0: one per stage, as pipelined serving engines; 1: "
                 "the whole batch passes the stages at a time)",
                 0,
                 kMaxCount,
                 "0")
            .Field("inflight_batches")
            .Mode("inference"),
        O::Count("spec-tokens",
                 "inference: speculative decoding's draft tokens per step, proposed one at a time "
                 "by a one-layer draft module (DeepSeek-V3's multi-token prediction module, an "
                 "EAGLE head) and verified by one pass of the model (0: none; needs "
                 "--spec-acceptance)",
                 0,
                 16,
                 "0")
            .Field("spec_tokens")
            .Mode("inference"),
        O::Real("spec-acceptance",
                "inference: the probability a draft token is accepted given the ones before it "
                "(DeepSeek-V3 reports 0.85-0.9 for its second token); with --spec-tokens, above "
                "0 and at most 1 (0, the default, is none given; 1e-6 prices the drafts alone)",
                0,
                1,
                "0")
            .Field("spec_acceptance")
            .Mode("inference"),
        O::Choice("first-token",
                  "inference: the pass that samples the first token: auto (the engine's: decode "
                  "for lmdeploy, else prefill), prefill, or decode (a first decode step after a "
                  "prefill of all but the last prompt token, as TurboMind)",
                  runChoices("first_token"),
                  "auto")
            .Field("first_token")
            .Mode("inference"),
        O::Choice("dispatch",
                  "how the host issues kernels: auto (the engine's), none (ideal host), eager "
                  "(PyTorch eager, per framework op), graphs (one CUDA graph per step), engine (a "
                  "C++ loop, per kernel); costs in the hardware file's gpu.host",
                  runChoices("dispatch"),
                  "auto"),
        O::Choice("engine",
                  "serving engine family: none, lmdeploy (TurboMind), vllm or hf (transformers "
                  "generate): its dispatch and per-iteration host time",
                  runChoices("engine"),
                  "none"),
        O::Choice("dtype",
                  "compute type: the linear layers' GEMMs and weights (fp8: Transformer Engine's "
                  "recipe, the rest bf16; int8 and int4 inference only, int4 weight-only: GPTQ or "
                  "AWQ int4 weights with fp16 activations)",
                  runChoices("dtype"),
                  "bf16"),
        O::Choice("fp8-scaling",
                  "training with --dtype=fp8: Transformer Engine's scaling of each fp8 cast: "
                  "delayed (amax history, one read of the tensor) or current (the tensor's own "
                  "amax, read twice)",
                  runChoices("fp8_scaling"),
                  "delayed")
            .Field("fp8_scaling")
            .Mode("training"),
        O::Flag("fp8-params",
                "training with --dtype=fp8: the linear weights kept in fp8 with their transposes "
                "(true: NVIDIA's NeMo 2.0 / Megatron-Bridge recipes' fp8_param_gather, 2 bytes a "
                "weight) or in bf16 beside Transformer Engine's fp8 copies (false: Megatron-LM "
                "without --fp8-param-gather, 2 more bytes per linear weight, and the distributed "
                "optimizer's parameter gather moves bf16, 2 bytes a weight instead of 1)",
                "true")
            .Field("fp8_params")
            .Mode("training"),
        O::Choice(
            "attention",
            "attention kernels: auto (the GPU's: flash3 on Hopper, flash elsewhere), flash "
            "(FlashAttention-2), flash3 (Hopper's warp-specialized kernels: FlashAttention-3, "
            "cuDNN's fused attention that Transformer Engine runs on Hopper), triton2022 (the 2022 "
            "FlashAttention in Triton that MPT / LLM Foundry runs) or standard (unfused)",
            runChoices("attention"),
            "auto"),
        O::Choice("grad-reduce",
                  "DP gradient reduction: overlap (with backward) or after_backward",
                  runChoices("grad_reduce"),
                  "overlap")
            .Field("grad_reduce")
            .Mode("training"),
        O::Choice("tp-reduce",
                  "TP reduction of input gradients: overlap (with the weight-gradient GEMM) or "
                  "blocking",
                  runChoices("tp_reduce"),
                  "overlap")
            .Field("tp_reduce")
            .Mode("training"),
        O::Choice("memory-layout",
                  "the training framework's memory layout of weights, gradients and optimizer "
                  "state: auto (megatron with ZeRO 0-1, deepspeed with 2-3), megatron, deepspeed, "
                  "apex (NeMo 1.0's distributed_fused_adam)",
                  MemoryLayoutNames,
                  "auto")
            .Field("memory_layout")
            .Mode("training"),
        O::Choice("main-grads",
                  "the gradient buffer's type, which the data-parallel reduction carries: auto "
                  "(the framework's: fp32 for Megatron-LM with bf16 weights and for apex, else "
                  "the weights'), fp32, or the weights' bf16 / fp16 (Megatron's "
                  "grad_reduce_in_fp32 off)",
                  runChoices("main_grads"),
                  "auto")
            .Field("main_grads")
            .Mode("training"),
        O::Choice("tp-comm-overlap",
                  "Transformer Engine's tensor-parallel communication overlap: none, or "
                  "userbuffers (Megatron's tp_comm_overlap: sequence-parallel all-gathers as a "
                  "ring exchange beside the GEMM's chunks, reduce-scatters pipelined with them; "
                  "needs --tp > 1 and --sp)",
                  runChoices("tp_comm_overlap"),
                  "none")
            .Field("tp_comm_overlap")
            .Mode("training"),
        O::Choice("param-gather",
                  "ZeRO 1-2: when the updated parameters are gathered: auto (overlap for the "
                  "megatron and apex layouts, after_step for deepspeed), overlap (Megatron's "
                  "overlap_param_gather: beside the next step's forward, one layer ahead) or "
                  "after_step (at the end of the optimizer step)",
                  runChoices("param_gather"),
                  "auto")
            .Field("param_gather")
            .Mode("training"),
        O::Flag("moe-a2a-overlap",
                "expert parallelism: a micro-batch's forward pass runs beside another's backward "
                "pass, so that one's all-to-alls hide behind the other's compute (Megatron's "
                "--overlap-moe-expert-parallel-comm; needs vpp > 1 with a pipeline)",
                "false")
            .Field("moe_a2a_overlap")
            .Mode("training"),
        O::Real("moe-imbalance",
                "mixture of experts: tokens the busiest expert receives over the mean (1 = "
                "balanced)",
                1,
                1e6,
                "1")
            .Field("moe_imbalance"),
        // Shape overrides of the model.
        O::Count("layers", "override the model's layer count", 1, kMaxCount, ""),
        O::Count("hidden", "override the model's hidden size", 1, kMaxCount, ""),
        O::Count("heads", "override the model's attention heads", 1, kMaxCount, ""),
        O::Count("kv-heads", "override the model's KV heads", 1, kMaxCount, "").Field("kv_heads"),
        O::Count("ffn", "override the model's MLP width", 1, kMaxCount, ""),
        O::Count("vocab", "override the model's vocabulary", 1, kMaxCount, ""),
    };
}

/** \return a SpecError about option \p name */
SpecError
OptionError(const std::string& name, const std::string& message)
{
    return SpecError(kCommandLine, name, message);
}

} // namespace

const std::vector<OptionSpec>&
JobOptions::GetDeclarations()
{
    static const std::vector<OptionSpec> declarations = MakeDeclarations();
    return declarations;
}

const OptionSpec*
JobOptions::Find(const std::string& name)
{
    for (const auto& o : GetDeclarations())
    {
        if (o.name == name)
        {
            return &o;
        }
    }
    return nullptr;
}

JobOptions::JobOptions() = default;

const OptionSpec&
JobOptions::Option(const std::string& name) const
{
    const OptionSpec* option = Find(name);
    if (!option)
    {
        std::vector<std::string> known;
        for (const auto& o : GetDeclarations())
        {
            known.push_back(o.name);
        }
        throw OptionError("",
                          "unknown job option '" + name + "'; job options: " + JoinNames(known));
    }
    return *option;
}

void
JobOptions::SetDefault(const std::string& name, const std::string& value)
{
    const OptionSpec& option = Option(name);
    if (!value.empty())
    {
        const std::string why = option.Check(value);
        if (!why.empty())
        {
            throw OptionError(name, "default '" + value + "' " + why);
        }
    }
    m_defaults[name] = value;
}

void
JobOptions::Set(const std::string& name, const std::string& value)
{
    const OptionSpec& option = Option(name);
    if (value.empty())
    {
        throw OptionError(name, "needs a value (--" + name + "=VALUE): " + option.Allowed());
    }
    const std::string why = option.Check(value);
    if (!why.empty())
    {
        throw OptionError(name, "'" + value + "' " + why);
    }
    m_given[name] = value;
}

bool
JobOptions::Has(const std::string& name) const
{
    Option(name);
    return m_given.count(name) > 0;
}

std::string
JobOptions::Get(const std::string& name) const
{
    const OptionSpec& option = Option(name);
    auto given = m_given.find(name);
    if (given != m_given.end())
    {
        return given->second;
    }
    auto file = m_fromFile.find(name);
    if (file != m_fromFile.end())
    {
        return file->second;
    }
    auto fallback = m_defaults.find(name);
    return fallback != m_defaults.end() ? fallback->second : option.fallback;
}

void
JobOptions::AddTo(CommandLine& cmd)
{
    for (const auto& o : GetDeclarations())
    {
        const std::string name = o.name;
        const bool flag = o.kind == OptionKind::FLAG;
        cmd.AddValue(name,
                     o.HelpText(o.help, false, true, false),
                     Callback<bool, std::string>(
                         [this, name, flag](std::string value)
                         {
                             // --sp alone means --sp=true, as in the rapid-llm command.
                             value = value.empty() && flag ? "true" : value;
                             const auto [it, first] = m_parsed.emplace(name, value);
                             if (!first)
                             {
                                 // As the command: a second value would silently win.
                                 throw OptionError(name,
                                                   "given twice ('" + it->second + "' and '" + value
                                                       + "'); give it once");
                             }
                             Set(name, value);
                             return true;
                         }),
                     Get(name));
    }
}

uint64_t
JobOptions::Count(const std::string& name) const
{
    const std::string text = Get(name);
    uint64_t value = 0;
    if (!ParseWholeNumber(text, value))
    {
        const OptionSpec& option = Option(name);
        throw OptionError(name,
                          "is required (--" + name + "=VALUE: " + option.help + "; "
                              + option.Allowed() + ")");
    }
    return value;
}

bool
JobOptions::Flag(const std::string& name) const
{
    bool value = false;
    ParseBoolean(Get(name), value);
    return value;
}

ModelSpec
JobOptions::LoadModel(const std::string& source, std::vector<SpecOverride> overrides) const
{
    // The shape options are the model file's fields as overrides after --set's, so that they
    // act as `--set=model.heads=N` does: a head width or KV head count the file gives stays, a
    // derived one follows.
    std::vector<std::pair<std::string, std::string>> given; // option, as named
    for (const auto& [option, field] : {std::make_pair("layers", "layers"),
                                        std::make_pair("hidden", "hidden"),
                                        std::make_pair("heads", "heads"),
                                        std::make_pair("kv-heads", "kv_heads"),
                                        std::make_pair("ffn", "ffn"),
                                        std::make_pair("vocab", "vocab")})
    {
        if (Get(option).empty())
        {
            continue;
        }
        const std::string value = std::to_string(Count(option));
        const std::string named = "--" + std::string(option) + "=" + value;
        overrides.push_back(
            SpecOverride::Parse("model." + std::string(field) + "=" + value, kCommandLine)
                .Named(named));
        given.emplace_back(option, named);
    }
    try
    {
        return ModelSpec::Load(source, overrides);
    }
    catch (const SpecError& e)
    {
        // A field one option set is that option's error.
        for (const auto& [option, named] : given)
        {
            const std::string tag = " (set by override '" + named + "')";
            const std::string& message = e.GetMessage();
            if (message.size() > tag.size()
                && message.compare(message.size() - tag.size(), tag.size(), tag) == 0)
            {
                throw OptionError(option, message.substr(0, message.size() - tag.size()));
            }
        }
        throw;
    }
}

void
JobOptions::ReadJobFile()
{
    m_fileRead = true;
    const std::string path = Get("run");
    if (path.empty())
    {
        return;
    }
    const JobSpec file = JobSpec::Load(path);
    const RunSpec& r = file.run;
    const ParallelSpec& p = r.parallel;
    auto number = [](uint64_t v)
    {
        return std::to_string(v);
    };
    auto flag = [](bool v)
    {
        return std::string(v ? "true" : "false");
    };
    auto real = [](double v)
    {
        char buf[32];
        std::snprintf(buf, sizeof(buf), "%.17g", v);
        return std::string(buf);
    };
    // option, key path in the file, the file's value as the option writes it
    const std::vector<std::tuple<std::string, std::string, std::string>> keys = {
        {"model", "model", file.model},
        {"hardware", "hardware", file.hardware},
        {"fault", "fault", file.fault},
        {"slow-gpus", "slow_gpus", file.slowGpus},
        {"gpu-set", "gpu_set", file.gpuSet},
        {"gpus", "gpus", number(file.gpus)},
        {"mode", "mode", ToString(r.mode)},
        {"dtype", "dtype", ToString(r.dtype)},
        {"tp", "parallel.tp", number(p.tp)},
        {"pp", "parallel.pp", number(p.pp)},
        {"dp", "parallel.dp", number(p.dp)},
        {"cp", "parallel.cp", number(p.cp)},
        {"ep", "parallel.ep", number(p.ep)},
        {"etp", "parallel.etp", number(p.etp)},
        {"sp", "parallel.sp", flag(p.sequenceParallel)},
        {"zero", "parallel.zero", number(p.zeroStage)},
        {"fsdp", "parallel.fsdp", flag(p.zeroStage == 3)},
        {"vpp", "parallel.vpp", number(p.virtualStages)},
        {"rank-order", "parallel.rank_order", p.rankOrder},
        {"pp-schedule", "parallel.pp_schedule", p.schedule},
        {"first-stage-layers", "parallel.first_stage_layers", number(p.firstStageLayers)},
        {"last-stage-layers", "parallel.last_stage_layers", number(p.lastStageLayers)},
        {"embedding-in-pipeline-split",
         "parallel.embedding_in_pipeline_split",
         flag(p.embeddingInSplit)},
        {"loss-in-pipeline-split", "parallel.loss_in_pipeline_split", flag(p.lossInSplit)},
        {"recompute", "recompute", ToString(r.recompute)},
        {"mbs", "micro_batch", number(r.microBatch)},
        {"gbs", "global_batch", number(r.globalBatch)},
        {"seq", "sequence", number(r.sequence)},
        {"batch", "batch", number(r.batch)},
        {"prompt", "prompt", number(r.promptTokens)},
        {"gen", "generated", number(r.generatedTokens)},
        {"cached-prefix", "cached_prefix", number(r.cachedPrefix)},
        {"shared-prefix", "shared_prefix", flag(r.sharedPrefix)},
        {"prefix-groups", "prefix_groups", number(r.prefixGroups)},
        {"cascade-attention", "cascade_attention", flag(r.cascadeAttention)},
        {"kv-cache-dtype", "kv_cache_dtype", r.kvCacheDtype},
        {"gpu-memory-utilization", "gpu_memory_utilization", real(r.gpuMemoryUtilization)},
        {"profile-tokens", "profile_tokens", number(r.profileTokens)},
        {"attention", "attention", r.AttentionName()},
        {"grad-reduce", "grad_reduce", r.overlapGradReduce ? "overlap" : "after_backward"},
        {"tp-reduce", "tp_reduce", r.overlapTpReduce ? "overlap" : "blocking"},
        {"decode-attention", "decode_attention", r.splitKvDecode ? "split_kv" : "per_head"},
        {"inflight-batches", "inflight_batches", number(r.inflightBatches)},
        {"spec-tokens", "spec_tokens", number(r.specTokens)},
        {"spec-acceptance", "spec_acceptance", real(r.specAcceptance)},
        {"first-token", "first_token", r.firstToken},
        {"dispatch", "dispatch", r.dispatch},
        {"engine", "engine", r.engine},
        {"fp8-scaling", "fp8_scaling", r.fp8Scaling},
        {"fp8-params", "fp8_params", flag(r.fp8Params)},
        {"memory-layout", "memory_layout", ToString(r.memoryLayout)},
        {"main-grads", "main_grads", r.mainGrads},
        {"tp-comm-overlap", "tp_comm_overlap", r.tpCommOverlap},
        {"param-gather", "param_gather", r.paramGather},
        {"moe-a2a-overlap", "moe_a2a_overlap", flag(r.moeA2aOverlap)},
        {"moe-imbalance", "moe_imbalance", real(r.moeImbalance)},
    };
    for (const auto& [option, key, value] : keys)
    {
        if (file.Gives(key))
        {
            m_fromFile[option] = value;
            m_fileKeys[option] = key;
        }
    }
    for (const auto& o : file.overrides)
    {
        m_fileOverrides.push_back(o.GetText());
    }
    m_fileBackend = file.backend;
    m_fileRouting = file.routing;
    m_fileBucketBytes = file.Gives("bucket_mib") ? r.bucketBytes : 0;
}

ResolvedJob
JobOptions::ToSpecs() const
{
    if (!m_fileRead && !Get("run").empty())
    {
        JobOptions withFile = *this;
        withFile.ReadJobFile();
        return withFile.ToSpecs();
    }
    try
    {
        return Resolve();
    }
    catch (const SpecError& e)
    {
        // A value the job file gave (and the command line did not) is the job file's error
        // (an error of an option's value names the command line, or no file at all).
        if (e.GetFile() == kCommandLine || e.GetFile().empty())
        {
            for (const auto& [name, key] : m_fileKeys)
            {
                const OptionSpec& o = Option(name);
                if (!Has(name) && (o.name == e.GetField() || o.field == e.GetField()))
                {
                    throw SpecError(Get("run"), key, e.GetMessage());
                }
            }
        }
        throw;
    }
}

ResolvedJob
JobOptions::Resolve() const
{
    ResolvedJob job;
    RunSpec& run = job.run;
    ModelSpec& model = job.model;
    job.jobFile = Get("run");
    job.backend = m_fileBackend;
    job.routing = m_fileRouting;
    run.mode = Get("mode") == "training" ? RunMode::TRAINING : RunMode::INFERENCE;
    // Options of the other run mode would be silently ignored: they are errors.
    const std::string mode = ToString(run.mode);
    for (const auto& [name, value] : m_given)
    {
        const OptionSpec& option = Option(name);
        if (!option.mode.empty() && option.mode != mode)
        {
            throw OptionError(name,
                              "does not apply to --mode=" + mode + " (it sets " + option.mode
                                  + " only); drop it or use --mode=" + option.mode);
        }
    }
    // ... and so are the job file's keys of the other mode.
    for (const auto& [name, key] : m_fileKeys)
    {
        const OptionSpec& option = Option(name);
        if (!option.mode.empty() && option.mode != mode && !Has(name))
        {
            throw SpecError(job.jobFile,
                            key,
                            "does not apply to mode " + mode + " (it sets " + option.mode
                                + " only); drop it or set mode: " + option.mode);
        }
    }
    // The job file's overrides first, then the command line's (a later one wins).
    std::vector<SpecOverride> overrides;
    for (const auto& text : m_fileOverrides)
    {
        overrides.push_back(SpecOverride::Parse(text, job.jobFile));
    }
    if (!Get("set").empty())
    {
        for (const auto& o : SpecOverride::ParseList(Get("set"), kCommandLine))
        {
            overrides.push_back(o);
        }
    }
    for (const auto& o : overrides)
    {
        job.overrides.push_back(o.GetText());
    }
    job.modelSource = Get("model");
    job.hardwareSource = Get("hardware");
    model = LoadModel(job.modelSource, overrides);
    job.hardware = HardwareSpec::Load(job.hardwareSource, overrides);
    try
    {
        // The routing policy is looked up by name when the network is built; name its file now.
        RoutingPolicy::Create(job.hardware.network.routing);
    }
    catch (const SpecError& e)
    {
        throw SpecError(job.hardwareSource, "network.routing", e.GetMessage());
    }
    // A job file's routing and backend are looked up when the job runs: name the file now.
    for (const auto& [key, name] :
         {std::make_pair("routing", &job.routing), std::make_pair("backend", &job.backend)})
    {
        if (name->empty() || job.jobFile.empty())
        {
            continue;
        }
        try
        {
            if (std::string(key) == "routing")
            {
                RoutingPolicy::Create(*name);
            }
            else
            {
                NetworkBackend::Create(*name);
            }
        }
        catch (const SpecError& e)
        {
            throw SpecError(job.jobFile, key, e.GetMessage());
        }
    }
    if (!Get("fault").empty())
    {
        job.faults = ParseFaultOption(Get("fault"), kCommandLine);
        Ptr<FaultSchedule> schedule;
        AddFaults(job.faults, job.hardware.network, schedule, kCommandLine);
        if (schedule)
        {
            job.timedFaults = schedule->GetFaults();
        }
    }

    if (model.IsMoe() && !Get("ffn").empty() && model.expertFfn != model.ffn)
    {
        // --ffn on a mixture of experts sets the experts' width too.
        model.expertFfn = model.ffn;
        try
        {
            model.Validate(kCommandLine);
        }
        catch (const SpecError& e)
        {
            throw OptionError("ffn", e.GetMessage());
        }
    }

    // Counts are declared within 32 bits (degrees within the network's 2^24 endpoints); the
    // products below are formed in 64 bits and checked before they are stored.
    auto& p = run.parallel;
    p.tp = static_cast<uint32_t>(Count("tp"));
    p.pp = static_cast<uint32_t>(Count("pp"));
    p.cp = static_cast<uint32_t>(Count("cp"));
    p.ep = static_cast<uint32_t>(Count("ep"));
    if (!Get("etp").empty()) // on the command line or in the job file
    {
        p.etp = static_cast<uint32_t>(Count("etp"));
    }
    if (p.etp == 1 && run.mode != RunMode::TRAINING && !Has("ep"))
    {
        // Serving keeps whole experts in the tensor-parallel group, ep = tp (RunSpec::Validate):
        // implied, as `study serving --etp=1` implies it.
        p.ep = p.tp * p.cp;
    }
    p.virtualStages = static_cast<uint32_t>(Count("vpp"));
    p.schedule = Get("pp-schedule");
    // Both on the command line and contradicting each other (a command-line --fsdp overrides a
    // job file's zero, as any option does).
    if (Flag("fsdp") && Has("fsdp") && Has("zero") && Count("zero") != 3)
    {
        throw OptionError(
            "fsdp", "is ZeRO-3, but --zero=" + Get("zero") + " is given too; drop one of them");
    }
    p.zeroStage = Flag("fsdp") ? 3 : static_cast<uint32_t>(Count("zero"));
    p.sequenceParallel = Flag("sp");
    p.rankOrder = Get("rank-order");
    p.firstStageLayers = static_cast<uint32_t>(Count("first-stage-layers"));
    p.lastStageLayers = static_cast<uint32_t>(Count("last-stage-layers"));
    p.embeddingInSplit = Flag("embedding-in-pipeline-split");
    p.lossInSplit = Flag("loss-in-pipeline-split");
    const uint64_t modelParallel = uint64_t(p.tp) * p.pp * p.cp;
    const uint64_t maxGpus = Option("gpus").maximum;
    const bool haveGpus = !Get("gpus").empty();
    const bool haveDp = !Get("dp").empty();
    if (haveDp)
    {
        p.dp = static_cast<uint32_t>(Count("dp"));
    }
    else if (haveGpus)
    {
        const uint64_t gpus = Count("gpus");
        if (gpus % modelParallel != 0)
        {
            throw OptionError("gpus",
                              std::to_string(gpus) + " GPUs must be divisible by tp x pp x cp ("
                                  + std::to_string(modelParallel) + ")");
        }
        p.dp = static_cast<uint32_t>(gpus / modelParallel);
    }
    else
    {
        p.dp = 1;
    }
    if (p.Gpus() > maxGpus)
    {
        throw OptionError(haveDp ? "dp" : "tp",
                          "tp x pp x dp x cp = " + std::to_string(p.Gpus())
                              + " GPUs; allowed: at most " + std::to_string(maxGpus));
    }
    try
    {
        // The network's own limit (host memory), named by the option that set the count.
        Topology::CheckEndpoints(p.Gpus(), kCommandLine);
    }
    catch (const SpecError& e)
    {
        throw OptionError(haveGpus ? "gpus" : haveDp ? "dp" : "tp", e.GetMessage());
    }
    if (haveGpus && p.Gpus() != Count("gpus"))
    {
        throw OptionError("gpus",
                          std::to_string(Count("gpus")) + " GPUs must equal tp x pp x dp x cp ("
                              + std::to_string(p.Gpus()) + ")");
    }

    ParseRecompute(Get("recompute"), run.recompute);
    ParseDataType(Get("dtype"), run.dtype);
    // Transformer Engine's fp8 scaling and fp8 weights mean nothing without fp8 GEMMs: silently
    // ignoring them would hide a mistyped job.
    for (const char* fp8Only : {"fp8-scaling", "fp8-params"})
    {
        if ((Has(fp8Only) || m_fromFile.count(fp8Only) > 0) && run.dtype != DataType::FP8)
        {
            throw OptionError(fp8Only,
                              "applies to --dtype=fp8 only (dtype is " + Get("dtype")
                                  + "); drop it or use --dtype=fp8");
        }
    }
    run.SetAttention(Get("attention"));
    run.overlapGradReduce = Get("grad-reduce") == "overlap";
    run.overlapTpReduce = Get("tp-reduce") == "overlap";
    run.microBatch = static_cast<uint32_t>(Count("mbs"));
    if (!Get("gbs").empty())
    {
        run.globalBatch = static_cast<uint32_t>(Count("gbs"));
    }
    else
    {
        const uint64_t gbs = uint64_t(run.microBatch) * p.dp;
        const uint64_t maxGbs = Option("gbs").maximum;
        if (gbs > maxGbs)
        {
            throw OptionError("mbs",
                              "the default global batch mbs x dp = "
                                  + std::to_string(run.microBatch) + " x " + std::to_string(p.dp)
                                  + " = " + std::to_string(gbs) + " exceeds "
                                  + std::to_string(maxGbs) + "; give --gbs");
        }
        run.globalBatch = static_cast<uint32_t>(gbs);
    }
    run.sequence = static_cast<uint32_t>(Count("seq"));
    run.batch = static_cast<uint32_t>(Count("batch"));
    run.promptTokens = static_cast<uint32_t>(Count("prompt"));
    run.generatedTokens = static_cast<uint32_t>(Count("gen"));
    run.cachedPrefix = static_cast<uint32_t>(Count("cached-prefix"));
    run.sharedPrefix = Flag("shared-prefix");
    run.prefixGroups = static_cast<uint32_t>(Count("prefix-groups"));
    run.cascadeAttention = Flag("cascade-attention");
    run.kvCacheDtype = Get("kv-cache-dtype");
    {
        double share = 0;
        ParseFiniteNumber(Get("gpu-memory-utilization"), share);
        run.gpuMemoryUtilization = share;
    }
    run.profileTokens = static_cast<uint32_t>(Count("profile-tokens"));
    run.splitKvDecode = Get("decode-attention") == "split_kv";
    run.inflightBatches = static_cast<uint32_t>(Count("inflight-batches"));
    run.specTokens = static_cast<uint32_t>(Count("spec-tokens"));
    {
        double acceptance = 0;
        ParseFiniteNumber(Get("spec-acceptance"), acceptance);
        run.specAcceptance = acceptance;
    }
    run.firstToken = Get("first-token");
    run.dispatch = Get("dispatch");
    run.engine = Get("engine");
    run.fp8Scaling = Get("fp8-scaling");
    run.fp8Params = Flag("fp8-params");
    run.mainGrads = Get("main-grads");
    run.tpCommOverlap = Get("tp-comm-overlap");
    run.paramGather = Get("param-gather");
    run.moeA2aOverlap = Flag("moe-a2a-overlap");
    // Only ZeRO-1/2 gather updated parameters after the step (ZeRO-3 gathers each layer when it
    // runs, without ZeRO every rank updates them all): a setting that changes nothing is a
    // mistyped job.
    if ((Has("param-gather") || m_fromFile.count("param-gather") > 0) && run.paramGather != "auto"
        && (p.zeroStage < 1 || p.zeroStage > 2))
    {
        throw OptionError("param-gather",
                          run.paramGather + " applies to --zero=1 or 2 (zero is "
                              + std::to_string(p.zeroStage) + "); drop it or use auto");
    }
    ParseMemoryLayout(Get("memory-layout"), run.memoryLayout);
    {
        double imbalance = 1;
        ParseFiniteNumber(Get("moe-imbalance"), imbalance);
        run.moeImbalance = imbalance;
    }
    if (m_fileBucketBytes > 0)
    {
        run.bucketBytes = m_fileBucketBytes;
    }
    run.Validate(model, kCommandLine);
    if (!Get("slow-gpus").empty())
    {
        job.slowGpus = ParseSlowGpus(Get("slow-gpus"), p.Gpus(), kCommandLine);
    }
    for (const auto& [gpu, items] : ParseGpuSets(Get("gpu-set"), p.Gpus(), kCommandLine))
    {
        // The job's hardware with the GPU's own overrides after the job's.
        std::vector<SpecOverride> all = overrides;
        all.insert(all.end(), items.begin(), items.end());
        const GpuSpec spec = GpuVariantOf(job.hardwareSource, all, gpu, kCommandLine);
        job.gpuVariants[gpu] = spec;
        for (const auto& o : items)
        {
            job.gpuSets[gpu].push_back(o.GetText());
        }
    }
    const auto fromOptions = static_cast<std::size_t>(std::count_if(job.faults.begin(),
                                                                    job.faults.end(),
                                                                    [](const FaultOption& f)
                                                                    {
                                                                        return !f.timed;
                                                                    }));
    CheckHardwareFaults(job.hardware.network,
                        job.hardware.network.faults.size() - fromOptions,
                        p.Gpus(),
                        job.hardware.name,
                        job.hardwareSource);
    if (!job.faults.empty())
    {
        // Each --fault selector must name links of the job's network: checked here, so that the
        // error names the option rather than the hardware file it was added to.
        HardwareSpec healthy = job.hardware;
        healthy.network.faults.resize(healthy.network.faults.size() - fromOptions);
        try
        {
            CheckFaultSelectors(job.faults, healthy.network, p.Gpus(), healthy.name, kCommandLine);
        }
        catch (const SpecError& e)
        {
            throw OptionError("fault", e.GetMessage());
        }
    }
    return job;
}

std::string
JobOptions::DescribeError(const std::exception& e)
{
    const auto* spec = dynamic_cast<const SpecError*>(&e);
    // From the command line, or of no file (a --model or --hardware that names no preset or
    // readable file), as the command words them.
    if (spec && (spec->GetFile() == kCommandLine || spec->GetFile().empty())
        && !spec->GetField().empty())
    {
        for (const auto& o : GetDeclarations())
        {
            if (o.name == spec->GetField() || o.field == spec->GetField())
            {
                return "option --" + o.name + ": " + spec->GetMessage();
            }
        }
    }
    return e.what();
}

void
JobOptions::Apply(Ptr<RapidLlmHelper> helper) const
{
    ResolvedJob job = ToSpecs();
    helper->SetModel(job.model);
    helper->SetHardware(job.hardware);
    helper->SetRun(job.run);
    helper->SetTimedFaults(job.timedFaults);
    helper->SetSlowGpus(job.slowGpus);
    helper->SetGpuVariants(job.gpuVariants);
    if (!job.backend.empty())
    {
        helper->SetBackend(job.backend);
    }
    if (!job.routing.empty())
    {
        helper->SetRoutingPolicy(job.routing);
    }
}

std::string
SmCountNote()
{
    return "gpu.sm_count sets the SMs, not the GPU's rates: tensor_tflops, vector_tflops and "
           "l2_bandwidth_GBps are its totals, shared by the SMs (more SMs alone are not a faster "
           "GPU; scale those with it for one)";
}

std::string
SmCountNote(const std::vector<std::string>& texts)
{
    // The GPU's rates are totals: SMs given alone split the same throughput over more of them.
    bool sms = false;
    bool rates = false;
    for (const std::string& o : texts)
    {
        sms = sms || o.rfind("gpu.sm_count=", 0) == 0;
        rates = rates || o.rfind("gpu.tensor_tflops", 0) == 0;
    }
    return sms && !rates ? SmCountNote() : std::string();
}

std::string
ResolvedJob::CostedFor() const
{
    std::string gpu;
    for (const std::string& o : overrides)
    {
        if (o.rfind("gpu.", 0) == 0)
        {
            gpu += (gpu.empty() ? " with " : ",") + o;
        }
    }
    return hardwareSource + gpu;
}

std::vector<std::string>
ResolvedJob::ReplayNotes() const
{
    std::vector<std::string> notes = hardware.network.Notes();
    if (!hardware.gpu.host.Has() && (run.ResolvedDispatch() != "none" || run.engine != "none"))
    {
        // The section is optional: without it the host is ideal, whatever the job names.
        notes.push_back(hardware.name + " has no gpu.host section (its launch and engine costs): "
                        + "the host issues kernels for free, so dispatch " + run.ResolvedDispatch()
                        + " and engine " + run.engine
                        + " cost nothing; give the section (doc/hardware-spec.md) to price them");
    }
    return notes;
}

std::vector<std::string>
ResolvedJob::Notes() const
{
    std::vector<std::string> notes;
    const std::string context = run.ContextNote(model);
    if (!context.empty())
    {
        notes.push_back(context);
    }
    const uint32_t tp = run.parallel.tp;
    if (run.mode == RunMode::TRAINING && tp > model.kvHeads && !model.IsMla())
    {
        // LayerShapes gives each rank one KV head, so tp / kv_heads ranks compute each.
        notes.push_back("tp " + std::to_string(tp) + " is above " + model.name + "'s "
                        + std::to_string(model.kvHeads) + " KV heads: each is replicated on "
                        + std::to_string(tp / model.kvHeads)
                        + " ranks, as vLLM does in serving (Megatron-LM refuses such a layout: "
                          "its num_query_groups must be a multiple of tp)");
    }
    if (run.parallel.sequenceParallel && tp == 1)
    {
        notes.push_back("sequence parallelism splits activations over the tensor-parallel "
                        "group: at tp 1 it changes nothing (the input echoes sp false)");
    }
    if (run.mode == RunMode::TRAINING && model.position == PositionEmbedding::LEARNED
        && model.maxSequence > run.sequence
        && double(model.maxSequence - run.sequence) * model.hidden * 16 >= double(1ull << 30))
    {
        // The table is the model's; a preset's may be longer than the run needs (the MPT
        // presets' is the longest benchmarked, LLM Foundry sizing it to each run's max_seq_len):
        // said where the rows beyond hold a GiB or more of training state (16 bytes a parameter).
        notes.push_back(model.name + "'s learned position table has "
                        + std::to_string(model.maxSequence) + " rows (max_sequence), "
                        + std::to_string(model.maxSequence - run.sequence)
                        + " more than the sequence needs; a model configured for this sequence "
                          "holds fewer: --set=model.max_sequence="
                        + std::to_string(run.sequence));
    }
    if (run.mode == RunMode::TRAINING && run.dtype == DataType::FP8
        && (model.hidden % 16 != 0 || (model.ffn / tp) % 16 != 0 || model.ffn % tp != 0))
    {
        // Transformer Engine asserts fp8 GEMM shapes divisible by 16 (its
        // assert_dim_for_fp8_exec); nothing here prices the bf16 fallback a user would make.
        notes.push_back("Transformer Engine runs a GEMM in fp8 only where the widths it multiplies "
                        "divide by 16: hidden "
                        + std::to_string(model.hidden) + " and the MLP's "
                        + std::to_string(model.ffn) + " over tp " + std::to_string(tp)
                        + " do not all; such a layer would have to run in bf16, and is priced "
                          "in fp8 here");
    }
    if (run.mode == RunMode::INFERENCE && run.parallel.sequenceParallel && tp > 1
        && ((uint64_t(run.promptTokens) * run.batch) % tp != 0 || run.batch % tp != 0))
    {
        // Training refuses a sequence that does not divide; a request's rows are what they are.
        notes.push_back("sequence parallelism splits a step's rows (prefill "
                        + std::to_string(uint64_t(run.promptTokens) * run.batch) + ", decode "
                        + std::to_string(run.batch) + ") over tp " + std::to_string(tp)
                        + ": where they do not divide, each rank's share is rounded up (the "
                          "last padded)");
    }
    if (run.mode == RunMode::TRAINING && run.parallel.zeroStage > 0
        && run.parallel.DenseReplicas() == 1
        && (model.experts == 0 || run.parallel.ExpertReplicas() == 1))
    {
        notes.push_back("ZeRO-" + std::to_string(run.parallel.zeroStage)
                        + " shards over the data-parallel group, one rank here (dp x cp = 1): it "
                          "shards nothing; "
                        + (run.ResolvedMemoryLayout() == MemoryLayout::DEEPSPEED
                               ? std::string("the step still takes DeepSpeed's memory layout, "
                                             "ZeRO-2 and 3 being DeepSpeed's or FSDP's (--zero=0 "
                                             "or 1 keeps Megatron-LM's)")
                               : std::string("the step is as without it")));
    }
    if (run.moeImbalance > 1.0 && model.experts > 0 && run.parallel.ep == 1)
    {
        char f[32];
        std::snprintf(f, sizeof(f), "%g", run.moeImbalance);
        notes.push_back("moe imbalance " + std::string(f)
                        + " changes nothing at ep 1: every rank holds every expert and computes "
                          "every routed copy, however they spread");
    }
    // The innermost network dimension (a node's NVLink domain): whole domains, and tensor-
    // parallel groups (consecutive ranks) inside them, are what a machine is bought as.
    const auto& dims = hardware.network.dimensions;
    if (dims.size() > 1 && dims.front().size > 1)
    {
        const uint64_t domain = dims.front().size;
        const uint64_t gpus = run.parallel.Gpus();
        const std::string name = dims.front().name;
        if (gpus > domain && gpus % domain != 0)
        {
            notes.push_back(std::to_string(gpus) + " GPUs do not fill whole " + name
                            + " domains of " + std::to_string(domain) + ": "
                            + std::to_string(gpus / domain) + " full and one of "
                            + std::to_string(gpus % domain));
        }
        if (tp > 1 && (tp < domain ? domain % tp != 0 : tp % domain != 0))
        {
            notes.push_back("tp " + std::to_string(tp) + " and the " + name + " domain of "
                            + std::to_string(domain) + " GPUs do not divide one another: some "
                            + "tensor-parallel groups cross the domain's edge onto "
                            + dims[1].name);
        }
    }
    const std::string sms = SmCountNote(overrides);
    if (!sms.empty())
    {
        notes.push_back(sms);
    }
    const std::string cudaCores = hardware.gpu.CudaCoreNote(run.dtype);
    if (!cudaCores.empty())
    {
        notes.push_back(cudaCores);
    }
    return notes;
}

} // namespace rapidllm
} // namespace ns3
