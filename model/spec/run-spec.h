/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_RUN_SPEC_H
#define RAPIDLLM_RUN_SPEC_H

#include "data-type.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ns3 {
namespace rapidllm {

struct GpuSpec;
struct ModelSpec;
class SpecReader;

/**
 * \return vLLM's default max_num_batched_tokens for an online server on \p gpu (V1's
 * EngineArgs.get_batch_defaults): 8192 on GPUs of 70 GiB or more except the A100 (vLLM PR 17885:
 * a larger budget lowered its throughput), 2048 otherwise
 */
uint32_t VllmDefaultTokenBudget(const GpuSpec& gpu);

/** \brief What the job does. */
enum class RunMode
{
    TRAINING, //!< one iteration over the global batch
    INFERENCE //!< one request: prefill, then decode
};

/** \brief Activation recomputation (Korthikanti et al. 2022). */
enum class Recompute
{
    NONE,      //!< keep every activation
    SELECTIVE, //!< recompute the attention core only
    FULL       //!< keep each layer's input, rerun its forward before its backward
};

/**
 * \brief The fused attention kernels a run's software uses (with RunSpec::flashAttention):
 * FlashAttention-2, MPT's 2022 FlashAttention in Triton, Hopper's warp-specialized kernels
 * (FlashAttention-3; cuDNN's sm90 fused attention, which Transformer Engine prefers on Hopper),
 * or the GPU's own: the Hopper kernels where it has them, else FlashAttention-2.
 */
enum class FusedAttention
{
    AUTO,       //!< the GPU's: flash3 on Hopper, flash elsewhere ("auto")
    FLASH2,     //!< FlashAttention-2 ("flash")
    TRITON2022, //!< FlashAttention in Triton (2022), as in MPT ("triton2022")
    FLASH3      //!< FlashAttention-3 / cuDNN on Hopper ("flash3")
};

/**
 * \ingroup rapid-llm
 * \brief How the training framework lays out weights, gradients and optimizer state in device
 * memory (bytes per parameter for 16-bit training; d = data-parallel ranks).
 */
enum class MemoryLayout
{
    AUTO,      //!< MEGATRON with ZeRO stage 0 or 1, DEEPSPEED with 2 or 3 (only those shard more)
    MEGATRON,  //!< Megatron-LM: fp32 main gradients for bf16, 18 B, or 6 + 12/d with its
               //!< distributed optimizer (= ZeRO stage 1); fp16: 20 B, or 4 + 16/d
    DEEPSPEED, //!< DeepSpeed ZeRO and PyTorch FSDP mixed precision: 2 + 2 + 12 B, sharded by
               //!< the ZeRO stage (Rajbhandari et al. 2020)
    APEX       //!< NeMo 1.0's distributed_fused_adam (Apex DistributedFusedAdam): bf16 weights,
               //!< an fp32 gradient buffer and fp32 moments with a 16-bit remainder of the fp32
               //!< master weights, 6 + 10/d (zero 1 only)
};

/**
 * \ingroup rapid-llm
 * \brief The hybrid parallel layout of a job.
 */
struct ParallelSpec
{
    uint32_t tp = 1; //!< tensor parallel degree
    uint32_t pp = 1; //!< pipeline stages
    uint32_t dp = 1; //!< data parallel degree
    uint32_t cp = 1; //!< context parallel degree (ring attention)
    uint32_t ep = 1; //!< expert parallel degree
    /**
     * Expert tensor-parallel degree: 0 (the default) or tp shards each expert over the
     * tensor-parallel ranks; 1 with tp > 1 keeps experts whole and folds the expert groups over
     * the tensor- and context-parallel ranks (Megatron-core's MoE parallel folding).
     */
    uint32_t etp = 0;
    bool sequenceParallel = false; //!< Megatron sequence parallelism (needs tp > 1 to matter)
    uint32_t zeroStage = 0;        //!< ZeRO stage 0-3 (3 = FSDP)
    uint32_t virtualStages = 1;    //!< interleaved schedule: model chunks per pipeline rank
    uint32_t firstStageLayers = 0; //!< decoder layers on the first stage (0: an even share)
    uint32_t lastStageLayers = 0;  //!< decoder layers on the last stage (0: an even share)
    bool embeddingInSplit = false; //!< the embedding takes one layer's place on the first chunk
    bool lossInSplit = false;      //!< the LM head and loss take one layer's place on the last
    std::string rankOrder = "tp-cp-ep-dp-pp"; //!< fastest-varying first (Megatron-LM)
    /**
     * Pipeline schedule: 1f1b (PipeDream-Flush, Megatron's interleaved form with vpp > 1),
     * zb-h1 (Qi et al., ICLR 2024: the backward pass split into its input-gradient and
     * weight-gradient halves, the latter deferred into the pipeline's bubbles) or zb-v (the
     * same split on two model chunks a rank placed in a V)
     */
    std::string schedule = "1f1b";

    /** \return whether the schedule defers weight gradients (zb-h1, zb-v) */
    bool ZeroBubble() const;

    /**
     * \return whether the model chunks sit in a V (zb-v): rank s holds virtual stages s and
     * 2 pp - 1 - s, so the first holds both the embedding and the LM head
     */
    bool VShape() const;

    /**
     * \param chunk a model chunk of a rank (0 to vpp - 1)
     * \param stage the rank's pipeline stage
     * \return the chunk's virtual stage: chunk x pp + stage (Megatron's interleaving), or in a V
     * 2 pp - 1 - stage for the second chunk
     */
    uint32_t VirtualStageOf(uint32_t chunk, uint32_t stage) const;

    /** \return the pipeline stage that holds virtual stage \p vstage */
    uint32_t StageOfVirtual(uint32_t vstage) const;

    /** \return the pipeline stage with the last virtual stage (LM head, loss): pp - 1, 0 in a V */
    uint32_t HeadStage() const;

    /** \return the number of GPUs the layout needs: tp x cp x dp x pp (ep folds into dp) */
    uint64_t Gpus() const;

    /**
     * \return the ranks of a stage that hold the same dense parameters and reduce their
     * gradients together: dp x cp (context-parallel ranks see different tokens of the same
     * sequences; Megatron-LM's data-parallel group "with context parallel")
     */
    uint32_t DenseReplicas() const;

    /** \return the ranks of a stage that hold the same experts: tp x cp x dp / (etp x ep) */
    uint32_t ExpertReplicas() const;

    /** \return the expert tensor-parallel degree in force: etp, or tp where etp is 0 */
    uint32_t ExpertTp() const;

    /**
     * \return true when the expert groups span the tensor- and context-parallel ranks (etp 1
     * with tp > 1): an expert group is then tp x cp x (ep / (tp x cp)) ranks, and the expert
     * data-parallel group the rest of dp
     */
    bool FoldedExperts() const;

    /**
     * \brief Decoder layers pipeline stage \p stage holds (all its model chunks together).
     *
     * The first and the last stage hold firstStageLayers and lastStageLayers when those are
     * set, as Megatron-LM's --decoder-first-pipeline-num-layers and
     * --decoder-last-pipeline-num-layers do (Llama-3 405B: 126 layers on 16 stages, 7 on the
     * first and the last); the other stages share the remaining layers evenly. With
     * embeddingInSplit or lossInSplit (Megatron-LM's --account-for-embedding-in-pipeline-split
     * and --account-for-loss-in-pipeline-split) the embedding and the loss count as one layer
     * each and every model chunk gets the same share: the first chunk of the first stage and
     * the last chunk of the last stage hold one decoder layer fewer (Llama-3.1 405B on 8 stages
     * of 8 chunks: 126 + 2 = 128, two per chunk, one on the first and the last).
     * \param layers the model's decoder layers (the layout validated against them)
     * \param stage a pipeline stage
     * \return its layers
     */
    uint32_t StageLayers(uint32_t layers, uint32_t stage) const;

    /**
     * \param layers the model's decoder layers
     * \param vstage a virtual stage (VirtualStageOf)
     * \return its layers: its stage's layers divided evenly among the stage's model chunks
     */
    uint32_t VirtualStageLayers(uint32_t layers, uint32_t vstage) const;

    /**
     * \param layers the model's decoder layers
     * \param vstage a virtual stage (VirtualStageOf)
     * \return the global index of its first layer: the layers of the virtual stages before it
     */
    uint32_t FirstLayerOf(uint32_t layers, uint32_t vstage) const;

    /** \return true when the stages may hold different layer counts (first or last stage's
     *  layers set, or the embedding or the loss counted in the split) */
    bool UnevenStages() const;

    /**
     * \brief The layers of the first and last stages where \p layers do not split evenly over
     * pp x vpp chunks: the other stages a share each and the first and last what is left, the
     * first the larger half (the last also holds the LM head) and at most a chunk more than a
     * share; of the splits, the one whose fullest stage holds the fewest layers, then the one
     * leaving the first and last the fewest (126 layers on 16 stages: 7, 8 x 14, 7, as Meta
     * trained Llama-3 405B).
     * \param layers the model's decoder layers
     * \param first set to the first stage's layers \param last set to the last stage's
     * \return false when no split exists (pp < 2, a stage would hold no layer or part of a
     * chunk, or the first more than a chunk above a share)
     */
    bool UnevenSplit(uint32_t layers, uint32_t& first, uint32_t& last) const;

    /** \return the layer places the embedding and the loss take in the split (0 to 2) */
    uint32_t SplitExtraLayers() const;

    /** \return true when every field is equal (add new fields to it) */
    bool operator==(const ParallelSpec& other) const;
};

/**
 * \ingroup rapid-llm
 * \brief Everything about a job except the model and the machine.
 */
struct RunSpec
{
    RunMode mode = RunMode::TRAINING;      //!< training or inference
    ParallelSpec parallel;                 //!< layout
    Recompute recompute = Recompute::NONE; //!< activation recomputation
    DataType dtype = DataType::BF16;       //!< GEMMs' type (the rest: ActivationType)
    uint32_t microBatch = 1;               //!< training: sequences per micro-batch
    uint32_t globalBatch = 1;              //!< training: sequences per iteration
    uint32_t sequence = 2048;              //!< training: tokens per sequence
    bool flashAttention = true;            //!< fused FlashAttention, else unfused softmax
    FusedAttention fusedAttention = FusedAttention::AUTO; //!< with flashAttention: which kernels
    bool overlapGradReduce = true;  //!< DP gradient reduction overlaps the backward
    bool overlapTpReduce = true;    //!< TP input-gradient reduction overlaps the wgrad GEMM
    uint64_t bucketBytes = 0;       //!< DP gradient bucket (0: the framework's, GradBucketBytes)
    uint32_t batch = 1;             //!< inference: concurrent requests
    uint32_t promptTokens = 128;    //!< inference: prompt length
    uint32_t generatedTokens = 128; //!< inference: tokens generated per request
    /**
     * Inference: the first tokens of each prompt whose keys and values are in the cache already
     * (prefix caching of a shared system prompt or an earlier turn: vLLM's automatic prefix
     * caching, SGLang's RadixAttention), so the prefill computes the rest of the prompt only,
     * attending to them too. 0: none.
     */
    uint32_t cachedPrefix = 0;
    /**
     * Inference, with a cached prefix: it is the same for every request of the batch (a system
     * prompt they share), so its keys and values are stored once, not once per request, as
     * paged prefix caching shares its blocks.
     */
    bool sharedPrefix = false;
    /**
     * Inference, with a cached prefix: the batch's requests fall into this many groups, the
     * requests of a group sharing one prefix (each of several system prompts), its keys and
     * values stored once for the group as paged prefix caching shares its blocks: the batch
     * holds min(prefixGroups, batch) copies. 0: each request holds its own (shared_prefix is
     * one group).
     */
    uint32_t prefixGroups = 0;
    /**
     * Inference, with a shared prefix: each decode step reads the prefix's keys and values once
     * for the whole batch and each request's own once, then merges the two partial results
     * (cascade attention: FlashInfer's, and vLLM V1's for a long common prefix), instead of
     * reading the prefix once per request.
     */
    bool cascadeAttention = false;
    /**
     * Inference: the KV cache's element type: auto (the activation type), fp8 (vLLM's
     * kv_cache_dtype fp8, TensorRT-LLM's and SGLang's FP8 KV cache), int8 (lmdeploy's
     * quant_policy 8, TensorRT-LLM's INT8 KV cache) or int4 (lmdeploy's quant_policy 4). A
     * one-byte cache holds twice the tokens of a 16-bit one, a half-byte one four times; the
     * decode attention reads it and dequantizes it in registers.
     */
    std::string kvCacheDtype = "auto";
    /**
     * The share of each GPU's memory the job may use (0: the engine's: vLLM's
     * gpu_memory_utilization default, 0.9, under engine vllm; else 1): vLLM sizes its KV cache so
     * that weights, activations, cache and the rest stay within it (SGLang's mem_fraction_static
     * is the same idea). The memory verdict's capacity.
     */
    double gpuMemoryUtilization = 0;
    /**
     * Inference: the tokens of the forward an engine profiles before it sizes its KV cache, whose
     * activations stay reserved beside the job's own (vLLM's profile run at
     * max_num_batched_tokens; 0: the engine's, ProfileTokensOn)
     */
    uint32_t profileTokens = 0;
    /**
     * Inference: the pass that samples the first token: prefill (its last position), decode (a
     * first decode step fed the last prompt token, as TurboMind), or auto (the engine's).
     */
    std::string firstToken = "auto";
    bool splitKvDecode = true; //!< decode attention split over the KV (else per head)
    /**
     * Inference with a pipeline: batches in flight through the stages, the batch split evenly
     * among them (0 = auto: one per stage, as pipelined serving engines keep them (vLLM's
     * virtual engines); 1: the whole batch passes the stages at a time). At most the batch.
     */
    uint32_t inflightBatches = 0;
    MemoryLayout memoryLayout = MemoryLayout::AUTO; //!< training: the framework's memory layout
    /**
     * Mixture of experts, training and prefill: tokens the busiest expert receives over the
     * mean (1 = balanced, as Megatron-LM's dropless routing with its load-balancing loss aims
     * for; at most experts / top-k). A measured imbalance; capacity-factor padding maps to it
     * as doc/workload-model.md says (not the capacity factor itself).
     */
    double moeImbalance = 1.0;
    /**
     * Inference: speculative decoding's draft tokens per step (0: none). A draft module of one
     * decoder layer beside the model (DeepSeek-V3's multi-token prediction module, or an
     * EAGLE head: a projection, one layer and the shared head) proposes specTokens tokens one at
     * a time, and one pass of the model verifies them all.
     */
    uint32_t specTokens = 0;
    /**
     * Speculative decoding: the probability that a draft token is accepted, given the ones
     * before it were (a property of the draft, the model and the text; DeepSeek-V3 reports
     * 85-90% for its second token, section 5.4.3).
     */
    double specAcceptance = 0;
    /**
     * Inference, chunked prefill beside the decode (set by the serving study's chunked
     * batching, not a job setting): each decode pass also prefills chunkSequences other
     * requests' prompts, chunkTokens tokens of each, after chunkPrefix of their tokens already
     * in the cache, as vLLM V1's and SGLang's schedulers put waiting prompts into the running
     * decode steps. 0: none.
     */
    uint32_t chunkSequences = 0;
    uint32_t chunkTokens = 0; //!< chunked prefill: tokens of each chunk
    uint32_t chunkPrefix = 0; //!< chunked prefill: each chunk's tokens already in the cache
    /**
     * How the host issues the kernels (doc/workload-model.md, "Host dispatch"): auto (the
     * engine's), none (an ideal host), eager (PyTorch eager: one framework op at a time),
     * graphs (one CUDA graph launch per step), engine (a C++ loop launching each kernel).
     */
    std::string dispatch = "auto";
    /** The serving engine family (none, lmdeploy, vllm, hf): its dispatch and per-iteration
     * host time (the hardware file's gpu.host.iteration_us) */
    std::string engine = "none";
    /**
     * Training with dtype fp8: how Transformer Engine scales each tensor it casts to fp8:
     * delayed (the amax of earlier steps, one read of the tensor) or current (its own amax,
     * a second read before the cast).
     */
    std::string fp8Scaling = "delayed";
    /**
     * Training in fp8: the linear layers' weights are kept in fp8 with their transposes (true,
     * NVIDIA's NeMo 2.0 and Megatron-Bridge recipes' fp8_param_gather: 2 bytes a weight, as in
     * bf16), or in bf16 beside Transformer Engine's cached fp8 copies (false, Megatron-LM without
     * --fp8-param-gather: 2 more bytes per linear-layer weight). Memory only.
     */
    bool fp8Params = true;
    /**
     * Training: the type of the gradient buffer, which the data-parallel reduction carries:
     * auto (the framework's: fp32 for Megatron-LM with bf16 weights and for Apex's
     * DistributedFusedAdam, else the weights' type), fp32, or the weights' 16-bit type (bf16
     * or fp16: Megatron's grad_reduce_in_fp32 false).
     */
    std::string mainGrads = "auto";
    /**
     * Training: Transformer Engine's tensor-parallel communication overlap: none, or
     * userbuffers (Megatron's tp_comm_overlap: the sequence-parallel all-gathers run as a ring
     * exchange beside the chunks of the GEMM that consumes them, the reduce-scatters pipelined
     * with the chunks of the GEMM that produces them). Needs tp > 1 and sequence parallelism.
     */
    std::string tpCommOverlap = "none";
    /**
     * Training with ZeRO 1-2: when every rank gathers the parameters the others updated: auto
     * (the framework's: overlap for the megatron and apex layouts, after_step for deepspeed),
     * overlap (Megatron's overlap_param_gather, Apex's overlap_param_sync: a layer's gather runs
     * beside the next step's forward and the layer's first forward waits for it) or after_step
     * (at the end of the optimizer step, exposed).
     */
    std::string paramGather = "auto";
    /**
     * Training with expert parallelism: each micro-batch's forward pass runs beside another
     * micro-batch's backward pass where the pipeline schedule puts them next to each other
     * (Megatron-core's overlap_moe_expert_parallel_comm, NeMo's moe_a2a_overlap, the combined
     * 1F1B schedule; DeepSeek-V3's DualPipe overlaps the same way), so that one's expert
     * all-to-alls run while the other computes. Megatron requires expert parallelism, no full
     * recomputation, at most one MTP layer and, with a pipeline, virtual stages.
     */
    bool moeA2aOverlap = false;

    /**
     * \return the batches in flight: 1 in training or without a pipeline, else
     * inflightBatches, or for 0 the smaller of pp and the batch
     */
    uint32_t InflightBatches() const;
    /**
     * \return the copies of the cached prefix the batch's KV cache holds apart from its
     * requests' own tokens: 1 with sharedPrefix, min(prefixGroups, batch) with groups, else 0
     * (each request holds its own)
     */
    uint32_t PrefixCopies() const;
    /**
     * \param m an in-flight batch (0 .. InflightBatches() - 1)
     * \return its requests: batch / InflightBatches(), the first (batch % InflightBatches()) one
     *         more
     */
    uint32_t InflightBatchSize(uint32_t m) const;

    /**
     * \return the tokens a decode pass yields: 1, or with speculative decoding the expected
     * accepted drafts plus the one the verification samples, (1 - a^(k+1)) / (1 - a) for k
     * drafts of acceptance a (Leviathan et al., ICML 2023, eq. 1); k + 1 when a is 1
     */
    double TokensPerDecodePass() const;
    /**
     * \return the decode passes after the first token: generated - 1, or with speculative
     * decoding ceil((generated - 1) / TokensPerDecodePass())
     */
    uint32_t DecodePasses() const;

    /** \return the dispatch in force: dispatch, or for auto the engine's (none without one) */
    std::string ResolvedDispatch() const;

    /**
     * \return whether the prefill samples the first token: firstToken, or for auto the
     * engine's (TurboMind's first decode step for lmdeploy, the prefill for every other)
     */
    bool FirstTokenFromPrefill() const;

    /**
     * \return whether fp8 training keeps the linear weights in fp8 (fp8Params in force): only
     * with a distributed optimizer (ZeRO 1 or more), as Megatron-LM asserts of
     * --fp8-param-gather (arguments.py: "only supported with distributed optimizer"); without
     * one, bf16 weights beside Transformer Engine's fp8 copies
     */
    bool KeepsFp8Params() const;

    /** \return the memory layout in force: AUTO resolved by the ZeRO stage */
    MemoryLayout ResolvedMemoryLayout() const;

    /** \return whether ZeRO's parameter gather overlaps the next forward (paramGather resolved) */
    bool OverlapParamGather() const;

    /**
     * \return the gradient buffer's type: mainGrads, or for auto the framework's (fp32 for
     * Megatron-LM with bf16 weights, which accumulates and reduces bf16 training's gradients in
     * fp32, and for Apex, whose grad_sync_dtype defaults to its fp32 state; else the weights')
     */
    DataType GradientType() const;
    /**
     * \return the data-parallel gradient bucket: bucketBytes if set; else with overlap PyTorch
     * DDP's 25 MiB, and without it the whole buffer in one reduction (UINT64_MAX), as
     * Megatron-LM's DDP reduces it after the backward pass ("If false, single synchronous
     * communication call is used instead": megatron/core/distributed, Bucket)
     */
    uint64_t GradBucketBytes() const;

    /**
     * \return the type of everything but the linear layers' GEMMs (activations, attention,
     * norms, element-wise kernels, communication, weights and gradients): bf16 when dtype is
     * fp8 (Transformer Engine's FP8 recipe runs only the linear layers' GEMMs in fp8; FP8
     * inference engines keep activations and the KV cache in 16 bits), fp16 when dtype is int4
     * (weight-only int4, W4A16), else dtype
     */
    DataType ActivationType() const;

    /** \return the KV cache's element type: kvCacheDtype, or for auto ActivationType() */
    DataType KvCacheType() const;

    /**
     * \return the share of each GPU's memory the job may use: gpuMemoryUtilization, or for 0
     * the engine's (0.9 for vllm in inference, vLLM's EngineArgs default; else 1)
     */
    double MemoryShare() const;

    /**
     * \param gpu the GPU \return the tokens whose activations the memory verdict reserves at
     * least: profileTokens, or for 0 the engine's (vllm in inference: VllmDefaultTokenBudget;
     * other engines and training: none, 0)
     */
    uint32_t ProfileTokensOn(const GpuSpec& gpu) const;

    /** \return the attention setting's text: auto, flash, flash3, triton2022 or standard */
    std::string AttentionName() const;

    /**
     * \brief Sets flashAttention and fusedAttention from an attention setting's text.
     * \param name auto, flash, flash3, triton2022 or standard (already checked against
     * Choices("attention"))
     */
    void SetAttention(const std::string& name);

    /** \return micro-batches per pipeline per iteration: globalBatch / (microBatch x dp) */
    uint32_t MicroBatches() const;

    /**
     * \brief Checks the settings against each other and against the model; throws SpecError
     * naming \p source, the field and the numbers that clash. Beyond divisibility it checks that
     * a learned-position model gets no sequence longer than its position table, and that the
     * tensors the settings imply stay far inside 64-bit byte counts (so no product of counts
     * wraps downstream).
     * \param model the model the job runs
     * \param source the file or "command line"
     */
    void Validate(const ModelSpec& model, const std::string& source) const;

    /**
     * \brief Parses a run file (YAML). Unknown or bad fields throw SpecError.
     * \param text the document
     * \param source the name used in errors
     * \return the spec (not yet validated against a model)
     */
    static RunSpec Parse(const std::string& text, const std::string& source);

    /**
     * \brief Reads the run settings of a mapping (a run file, or the run part of a job file,
     * JobSpec); the caller calls Finish() on \p reader.
     * \param reader the mapping
     * \return the spec
     */
    static RunSpec Read(SpecReader& reader);

    /**
     * \brief Past a rotary model's context: what a command notes (the prediction runs, as
     * rotary positions have no table, but the model was not trained that long and RoPE
     * scaling is not modelled). A learned-position model refuses such a run (Finish).
     * \param model the model
     * \return "" within its max_sequence, else the note's text
     */
    std::string ContextNote(const ModelSpec& model) const;

    /** \return true when every field is equal (add new fields to it) */
    bool operator==(const RunSpec& other) const;
    /** \return true when a field differs */
    bool operator!=(const RunSpec& other) const;

    /**
     * \brief The allowed values of a text field of a run spec (the YAML key, e.g. "attention"
     * or "decode_attention"), the one list that run files and the command line both check.
     * \param field the field: mode, dtype, recompute, attention, grad_reduce, tp_reduce,
     *        decode_attention, first_token, dispatch, engine, fp8_scaling, main_grads,
     *        kv_cache_dtype or tp_comm_overlap
     * \return the values, the default first
     */
    static std::vector<std::string> Choices(const std::string& field);

  private:
    /** Throws when a learned-position model gets more tokens than its position table. */
    void CheckPositions(const ModelSpec& model, const std::string& source) const;
    /** Throws when the tensors the settings imply are beyond 64-bit byte counts. */
    void CheckSizes(const ModelSpec& model, const std::string& source) const;
};

/** \return "training" or "inference" */
std::string ToString(RunMode mode);
/** \return "auto", "megatron", "deepspeed" or "apex" */
std::string ToString(MemoryLayout layout);
/** \return the memory layout names, in enum order */
std::vector<std::string> MemoryLayoutNames();
/**
 * \param name "auto", "megatron", "deepspeed" or "apex"
 * \param layout set when \p name is one of them
 * \return whether it was
 */
bool ParseMemoryLayout(const std::string& name, MemoryLayout& layout);
/** \return "none", "selective" or "full" */
std::string ToString(Recompute recompute);
/** \return the recomputation names, in enum order */
std::vector<std::string> RecomputeNames();
/**
 * \param name "none", "selective" or "full"
 * \param recompute set when \p name is one of them
 * \return whether it was
 */
bool ParseRecompute(const std::string& name, Recompute& recompute);

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_RUN_SPEC_H
