/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "graph-emitter.h"
#include "pipeline-schedule.h"
#include "stage-builders.h"
#include "transformer-layer.h"
#include "weight-gradient-store.h"

#include <algorithm>
#include <map>
#include <stdexcept>

namespace ns3 {
namespace rapidllm {

namespace {

/**
 * Builds one stage; keeps the running state of the gradient buckets and the activations kept
 * per (micro-batch, chunk) between a forward pass and its backward pass.
 */
class TrainingStageBuilder
{
  public:
    TrainingStageBuilder(const ModelSpec& model, const RunSpec& run, uint32_t stage, StageGraph& g)
        : m_model(model)
        , m_run(run)
        , m_stage(stage)
        , m_graph(g)
        , m_e(g)
        , m_layer(model, run, run.sequence / run.parallel.cp, run.microBatch)
        , m_shapes(m_layer.Shapes())
    {
        const auto& p = run.parallel;
        m_virtualStages = p.pp * p.virtualStages;
        m_microBatches = run.MicroBatches();
        m_rows = uint64_t(run.sequence / p.cp) * run.microBatch;
        m_eb = m_shapes.elementBytes;
        m_gb = BytesOf(run.GradientType());
        m_gradCollective =
            p.zeroStage >= 1 ? CollectiveKind::REDUCE_SCATTER : CollectiveKind::ALL_REDUCE;
    }

    /** \brief Emits the stage's graph: \p schedule's steps, or the run's schedule's if null. */
    void
    Build(const std::vector<ScheduleStep>* schedule)
    {
        if (OverlapsParamGather())
        {
            GatherParamsAhead();
        }
        const auto& p = m_run.parallel;
        std::vector<ScheduleStep> steps;
        if (schedule)
        {
            steps = *schedule;
        }
        else if (p.VShape())
        {
            // Made for all the ranks at once (Workload::Build).
            throw std::logic_error("BuildTrainingStage: zb-v needs its ZeroBubbleVSchedules");
        }
        else if (p.ZeroBubble())
        {
            steps = ZeroBubbleH1Schedule(p.pp, m_stage, m_microBatches);
        }
        else
        {
            steps = PipelineSchedule(p.pp, p.virtualStages, m_stage, m_microBatches);
        }
        // The weight passes that end the step (a zero-bubble schedule's) run apart, grouped.
        std::size_t trailing = steps.size();
        while (trailing > 0 && steps[trailing - 1].pass == SchedulePass::WEIGHT)
        {
            --trailing;
        }
        for (std::size_t i = 0; i < trailing; ++i)
        {
            if (m_run.moeA2aOverlap && i + 1 < trailing && Independent(steps[i], steps[i + 1]))
            {
                // Megatron's combined 1F1B: the two passes run as two chains of the stream, so
                // that either's kernels run while the other waits for its all-to-alls (or for
                // anything else it waits for); the next step waits for both.
                const uint32_t fork = m_e.LastStream();
                Emit(steps[i]);
                const uint32_t first = m_e.LastStream();
                m_e.BranchFrom(fork);
                Emit(steps[++i]);
                m_e.StreamWaitsFor(first);
                continue;
            }
            Emit(steps[i]);
        }
        TrailingWeightPasses(std::vector<ScheduleStep>(steps.begin() + trailing, steps.end()));
        OptimizerStep();
    }

  private:
    /**
     * \return whether two neighbouring steps are a forward and a backward pass of different
     * micro-batches or model chunks, which share nothing on this rank (a chunk's backward pass
     * after its own forward pass follows it through the stream)
     */
    static bool
    Independent(const ScheduleStep& a, const ScheduleStep& b)
    {
        const bool passes =
            (a.pass == SchedulePass::FORWARD && b.pass == SchedulePass::BACKWARD)
            || (a.pass == SchedulePass::BACKWARD && b.pass == SchedulePass::FORWARD);
        return passes && (a.microBatch != b.microBatch || a.chunk != b.chunk);
    }

    /** \brief Emits one step of the pipeline schedule. */
    void
    Emit(const ScheduleStep& step)
    {
        Noted(step,
              [&]()
              {
                  switch (step.pass)
                  {
                      case SchedulePass::FORWARD:
                          Forward(step.microBatch, step.chunk);
                          break;
                      case SchedulePass::BACKWARD:
                          Backward(step.microBatch, step.chunk);
                          break;
                      case SchedulePass::WEIGHT:
                          WeightPass(step.microBatch, step.chunk);
                          break;
                  }
              });
    }

    /** \brief Runs \p emit and notes the nodes it emitted as (part of) \p step
     * (StageGraph::passes). */
    template<typename F>
    void
    Noted(const ScheduleStep& step, F emit)
    {
        const auto begin = static_cast<uint32_t>(m_graph.nodes.size());
        emit();
        m_graph.passes.push_back({step, begin, static_cast<uint32_t>(m_graph.nodes.size())});
    }

    /** \return a new store for \p key's weight gradients (a layer, or kHeadParams) in micro-batch
     *  \p mb's weight pass of chunk \p chunk */
    WeightGradientStore*
    DeferTo(uint32_t mb, uint32_t chunk, int32_t key)
    {
        return &m_weightPasses[{mb, chunk}].emplace_back(key, WeightGradientStore()).second;
    }

    uint32_t
    VirtualStage(uint32_t chunk) const
    {
        return m_run.parallel.VirtualStageOf(chunk, m_stage);
    }

    /**
     * \return where virtual stage \p vstage sits along the pipeline from this rank: +1 the next
     * stage, -1 the previous, 0 this rank (a V's turn, handed over in the stream's order)
     */
    int32_t
    Towards(uint32_t vstage) const
    {
        return static_cast<int32_t>(m_run.parallel.StageOfVirtual(vstage))
               - static_cast<int32_t>(m_stage);
    }

    uint32_t
    Tag(uint32_t mb, uint32_t vstage, bool backward) const
    {
        return (mb * m_virtualStages + vstage) * 2 + (backward ? 1 : 0);
    }

    bool
    ZeroThree() const
    {
        return m_run.parallel.zeroStage == 3 && m_run.parallel.DenseReplicas() > 1;
    }

    /**
     * ZeRO-1/2 with the parameter gather overlapped (RunSpec::OverlapParamGather): the
     * parameters updated at the end of the previous step are gathered during this step's
     * forward pass instead of at the end of the optimizer step.
     */
    bool
    OverlapsParamGather() const
    {
        const auto& p = m_run.parallel;
        return p.zeroStage >= 1 && p.zeroStage <= 2 && m_run.OverlapParamGather();
    }

    /**
     * Issues the gathers of the parameters this stage updated, one layer at a time in the order
     * the forward pass first uses them (the embedding, each model chunk's layers, the final
     * norm and LM head), each after the previous one on its group: Megatron-core's
     * overlap_param_gather dispatches a bucket's all-gather when the forward pre-hook of the
     * previous bucket's first module waits for that one (DistributedDataParallel's forward
     * pre-hook, ParamAndGradBuffer's next_param_gather_bucket_group). The layer's first forward
     * waits for its gather (WaitForParams). The previous step's update is the steady state's
     * cause of these gathers; a one-step graph issues them at its start.
     */
    void
    GatherParamsAhead()
    {
        const auto& p = m_run.parallel;
        uint32_t lastDense = GraphEmitter::NONE;
        uint32_t lastExpert = GraphEmitter::NONE;
        auto gather = [&](int32_t key,
                          uint64_t dense,
                          uint64_t denseLinear,
                          uint64_t expert,
                          uint64_t expertLinear)
        {
            m_e.SetContext(Phase::FORWARD, 0, key >= 0 ? key : -1);
            std::vector<uint32_t>& ids = m_paramGathers[key];
            // One chain per group: the dense parameters over dp x cp, the experts' over EDP.
            auto issue = [&](const char* label,
                             GroupKind group,
                             uint64_t params,
                             uint64_t linear,
                             uint32_t replicas,
                             uint32_t& last)
            {
                if (params > 0 && replicas > 1)
                {
                    last = m_e.Async(label,
                                     CollectiveKind::ALL_GATHER,
                                     group,
                                     ParamGatherBytes(params, linear),
                                     last);
                    ids.push_back(last);
                }
            };
            issue("ag_params", GroupKind::DP, dense, denseLinear, p.DenseReplicas(), lastDense);
            issue("ag_expert_params",
                  GroupKind::EDP,
                  expert,
                  expertLinear,
                  p.ExpertReplicas(),
                  lastExpert);
        };
        const uint64_t mtpProjection = 2 * m_shapes.hidden * m_shapes.hidden / p.tp;
        for (uint32_t chunk = 0; chunk < p.virtualStages; ++chunk)
        {
            const uint32_t vstage = VirtualStage(chunk);
            if (vstage == 0)
            {
                gather(kEmbeddingParams, m_shapes.embeddingParams, 0, 0, 0);
            }
            const uint32_t firstLayer = p.FirstLayerOf(m_model.layers, vstage);
            for (uint32_t i = 0; i < p.VirtualStageLayers(m_model.layers, vstage); ++i)
            {
                const auto layer = static_cast<int32_t>(firstLayer + i);
                gather(layer,
                       m_shapes.LayerParams(layer) - m_shapes.ExpertParams(layer),
                       m_shapes.LinearParams(layer) - m_shapes.ExpertLinearParams(layer),
                       m_shapes.ExpertParams(layer),
                       m_shapes.ExpertLinearParams(layer));
            }
            if (vstage + 1 == m_virtualStages)
            {
                gather(kHeadParams, m_shapes.finalNormParams + m_shapes.headParams, 0, 0, 0);
                for (uint32_t k = 0; k < m_shapes.mtpLayers; ++k)
                {
                    const int32_t layer = m_shapes.MtpLayer(k);
                    gather(layer,
                           m_shapes.LayerParams(layer) - m_shapes.ExpertParams(layer)
                               + m_shapes.mtpParams + (k == 0 ? MtpEmbeddingCopy() : 0),
                           m_shapes.LinearParams(layer) - m_shapes.ExpertLinearParams(layer)
                               + mtpProjection,
                           m_shapes.ExpertParams(layer),
                           m_shapes.ExpertLinearParams(layer));
                }
            }
        }
    }

    /**
     * Bytes of all-gathering \p params parameters, \p linear of them linear layers' weights.
     * With fp8 parameters those travel in fp8, 1 byte each: under fp8_param_gather
     * Megatron-core's parameter buffer holds Transformer Engine's fp8 weights as uint8 and
     * gathers them so; each rank then builds the transposes itself. The rest (norms,
     * embeddings, the LM head, biases) travel in the model's type.
     */
    uint64_t
    ParamGatherBytes(uint64_t params, uint64_t linear) const
    {
        if (m_run.KeepsFp8Params())
        {
            return (params - linear) * m_eb + linear;
        }
        return params * m_eb;
    }

    /** The forward pass's first use of \p key's parameters waits for their gather. */
    void
    WaitForParams(int32_t key)
    {
        auto it = m_paramGathers.find(key);
        if (it != m_paramGathers.end())
        {
            m_e.StreamWaitsFor(it->second);
            m_paramGathers.erase(it);
        }
    }

    /** Parameters of the emitting layer that are not experts (reduced over dp x cp). */
    uint64_t
    DenseLayerParams() const
    {
        return m_shapes.LayerParams(m_e.Layer()) - m_shapes.ExpertParams(m_e.Layer());
    }

    uint64_t
    DenseLayerBytes() const
    {
        return DenseLayerParams() * m_eb;
    }

    /** Gradient bytes of one layer's dense (non-expert) parameters, in the gradient type. */
    uint64_t
    DenseLayerGradBytes() const
    {
        return DenseLayerParams() * m_gb;
    }

    /**
     * ZeRO-3: gathers the layer's parameters before its first operator. The gather is issued
     * after \p prefetchAfter, the end of the layer before the previous one: FSDP prefetches the
     * next layer's parameters while the current layer computes (PyTorch FSDP's implicit forward
     * and its backward prefetch, Zhao et al., VLDB 2023), so at most two layers' parameters are
     * gathered at once: the memory is held from the prefetch on (the activation traversal
     * follows the emission order, in which the layer before this one runs in between). In the
     * backward pass (\p backward) the layer's unsharded gradients are held too, from its
     * gather until their reduce-scatter (LayerGradients), as FSDP and DeepSpeed hold them.
     */
    void
    GatherLayer(uint32_t prefetchAfter, bool backward = false)
    {
        if (!ZeroThree())
        {
            return;
        }
        uint32_t ag = m_e.Async("ag_params",
                                CollectiveKind::ALL_GATHER,
                                GroupKind::DP,
                                DenseLayerBytes(),
                                prefetchAfter);
        m_e.AddMemory(prefetchAfter, static_cast<int64_t>(DenseLayerBytes()));
        if (backward)
        {
            m_e.AddMemory(ag, static_cast<int64_t>(DenseLayerGradBytes()));
        }
        m_e.StreamWaitsFor(ag);
    }

    /**
     * ZeRO-3: gathers \p params parameters outside the decoder layers (FSDP's root unit: the
     * embedding, the final norm and LM head, a prediction module's embedding copy) before
     * their first use in the forward pass; they stay gathered until their backward
     * (RootGradients), as FSDP keeps its root unit unsharded between the two.
     */
    void
    GatherRoot(uint64_t params)
    {
        if (!ZeroThree() || params == 0)
        {
            return;
        }
        const uint32_t ag = m_e.Async("ag_params",
                                      CollectiveKind::ALL_GATHER,
                                      GroupKind::DP,
                                      params * m_eb,
                                      m_e.LastStream());
        m_e.AddMemory(ag, static_cast<int64_t>(params * m_eb));
        m_e.StreamWaitsFor(ag);
    }

    /**
     * The gradients of \p params parameters outside the decoder layers became final at node
     * \p after in micro-batch \p mb: ZeRO-3 reduce-scatters them every micro-batch, as a
     * layer's, and frees their gathered copy (GatherRoot); otherwise those reduced
     * (ReducesGradients) join the data-parallel buckets.
     */
    void
    RootGradients(uint32_t mb, uint32_t after, uint64_t params)
    {
        if (ZeroThree())
        {
            if (params > 0)
            {
                m_e.Async("rs_grads",
                          CollectiveKind::REDUCE_SCATTER,
                          GroupKind::DP,
                          params * m_gb,
                          after);
                m_e.AddMemory(after, -static_cast<int64_t>(params * m_eb));
            }
        }
        else if (ReducesGradients(mb))
        {
            AddGradients(after, params * m_gb, GroupKind::DP);
        }
    }

    /** ZeRO-3: releases the gathered parameters after the layer's last operator. */
    void
    ReleaseLayer()
    {
        if (ZeroThree())
        {
            m_e.AddMemory(m_e.LastStream(), -static_cast<int64_t>(DenseLayerBytes()));
        }
    }

    void
    Forward(uint32_t mb, uint32_t chunk)
    {
        const uint32_t vstage = VirtualStage(chunk);
        // Embedding, final norm, LM head and loss: not Transformer Engine linear layers, they
        // run in the activation type (bf16 under an fp8 recipe).
        const DataType dt = m_run.ActivationType();
        m_e.SetContext(Phase::FORWARD, mb, -1);
        if (vstage > 0 && Towards(vstage - 1) != 0)
        {
            m_e.Recv("recv_act",
                     GroupKind::PP,
                     Towards(vstage - 1),
                     Tag(mb, vstage, false),
                     m_layer.InputBytes());
        }
        else if (vstage == 0)
        {
            WaitForParams(kEmbeddingParams);
            GatherRoot(m_shapes.embeddingParams);
            int64_t mask = m_model.dropout ? int64_t(m_rows * m_shapes.hidden) : 0;
            m_e.Compute(
                "embedding", MakeElementwise(OpType::EMBEDDING, m_rows, m_shapes.hidden, dt), mask);
            m_held[{mb, chunk}] += mask;
            if (m_run.parallel.tp > 1)
            {
                bool sp = m_run.parallel.sequenceParallel;
                m_e.Blocking("ar_embedding",
                             sp ? CollectiveKind::REDUCE_SCATTER : CollectiveKind::ALL_REDUCE,
                             GroupKind::TP,
                             m_eb * m_rows * m_shapes.hidden);
            }
        }
        const uint32_t firstLayer = m_run.parallel.FirstLayerOf(m_model.layers, vstage);
        const uint32_t layers = m_run.parallel.VirtualStageLayers(m_model.layers, vstage);
        uint32_t prefetchAfter = m_e.LastStream();
        for (uint32_t i = 0; i < layers; ++i)
        {
            const int32_t layer = static_cast<int32_t>(firstLayer + i);
            m_e.SetContext(Phase::FORWARD, mb, layer);
            const uint32_t layerStart = m_e.LastStream();
            GatherLayer(prefetchAfter);
            prefetchAfter = layerStart;
            WaitForParams(layer);
            m_layerHeld[{mb, layer}] = m_layer.Forward(m_e, m_run.recompute);
            ReleaseLayer();
        }
        m_e.SetContext(Phase::FORWARD, mb, -1);
        if (vstage + 1 == m_virtualStages)
        {
            WaitForParams(kHeadParams);
            GatherRoot(m_shapes.headParams + m_shapes.finalNormParams
                       + (m_shapes.mtpLayers > 0 ? MtpEmbeddingCopy() : 0));
            HeadForward(mb, chunk);
            for (uint32_t k = 0; k < m_shapes.mtpLayers; ++k)
            {
                MtpForward(mb, k);
            }
        }
        else if (Towards(vstage + 1) != 0)
        {
            m_e.Send("send_act",
                     GroupKind::PP,
                     Towards(vstage + 1),
                     Tag(mb, vstage + 1, false),
                     m_layer.InputBytes(),
                     m_e.LastStream());
        }
    }

    /** \return whether sequence parallelism shards the norms' rows (tp > 1) */
    bool
    SequenceParallel() const
    {
        return m_run.parallel.sequenceParallel && m_run.parallel.tp > 1;
    }

    /** \return the rows a norm sees: this rank's sequence shard under sequence parallelism */
    uint64_t
    NormRows() const
    {
        return SequenceParallel() ? m_rows / m_run.parallel.tp : m_rows;
    }

    /**
     * The labels of one output head's operators: the model's, or a prediction module's (which
     * shares the head's weights).
     */
    struct HeadLabels
    {
        const char* norm;        //!< the final norm
        const char* gather;      //!< its output gathered under sequence parallelism
        const char* logits;      //!< the vocabulary-parallel LM head
        const char* loss;        //!< the cross-entropy
        const char* lossReduce;  //!< its tensor-parallel reductions
        const char* lossBwd;     //!< the cross-entropy's backward
        const char* dgrad;       //!< the head's input gradient
        const char* dgradReduce; //!< its tensor-parallel reduction
        const char* wgrad;       //!< the head's weight gradient
        const char* normBwd;     //!< the final norm's backward
    };

    /** The model's head. */
    static constexpr HeadLabels kHead{"final_norm",
                                      "ag_head",
                                      "logits",
                                      "cross_entropy",
                                      "ar_loss",
                                      "cross_entropy_bwd",
                                      "logits_dgrad",
                                      "ar_logits_dgrad",
                                      "logits_wgrad",
                                      "final_norm_bwd"};
    /** A prediction module's. */
    static constexpr HeadLabels kMtpHead{"mtp_final_norm",
                                         "ag_mtp_head",
                                         "mtp_logits",
                                         "mtp_cross_entropy",
                                         "ar_mtp_loss",
                                         "mtp_cross_entropy_bwd",
                                         "mtp_logits_dgrad",
                                         "ar_mtp_logits_dgrad",
                                         "mtp_logits_wgrad",
                                         "mtp_final_norm_bwd"};

    /**
     * Final norm, LM head (vocabulary-parallel) and cross-entropy, labelled \p l. Embedding,
     * final norm, LM head and loss are not Transformer Engine linear layers: they run in the
     * activation type (bf16 under an fp8 recipe).
     * \return the bytes kept for the backward pass
     */
    int64_t
    EmitHeadForward(const HeadLabels& l)
    {
        const DataType dt = m_run.ActivationType();
        const uint64_t h = m_shapes.hidden;
        const OpType norm = NormOpOf(m_model.norm);
        const bool sp = SequenceParallel();
        const uint64_t normRows = NormRows();
        int64_t held = 0;
        held += m_eb * normRows * h;
        m_e.Compute(l.norm, MakeElementwise(norm, normRows, h, dt), m_eb * normRows * h);
        if (sp)
        {
            m_e.Blocking(l.gather, CollectiveKind::ALL_GATHER, GroupKind::TP, m_eb * m_rows * h);
        }
        held += m_eb * normRows * h;
        m_e.Compute(l.logits, MakeGemm(m_rows, m_shapes.vocab, h, dt), m_eb * normRows * h);
        // The loss keeps the fp32 softmax of its vocabulary shard for the backward pass.
        int64_t softmax = 4 * int64_t(m_rows * m_shapes.vocab);
        held += softmax;
        m_e.Compute(
            l.loss, MakeElementwise(OpType::CROSS_ENTROPY, m_rows, m_shapes.vocab, dt), softmax);
        if (m_run.parallel.tp > 1)
        {
            // Vocabulary-parallel cross-entropy: all-reduces of the row max, the sum of
            // exponentials and the target logit (fp32, one value per row each).
            m_e.Blocking(l.lossReduce, CollectiveKind::ALL_REDUCE, GroupKind::TP, 3 * 4 * m_rows);
        }
        return held;
    }

    /**
     * The backward pass of EmitHeadForward(\p l), its weight gradient deferred into \p deferTo
     * where one is given.
     * \return the head's weight-gradient node (GraphEmitter::NONE when deferred)
     */
    uint32_t
    EmitHeadBackward(const HeadLabels& l, WeightGradientStore* deferTo = nullptr)
    {
        const DataType dt = m_run.ActivationType();
        const uint64_t h = m_shapes.hidden;
        const OpType norm = NormOpOf(m_model.norm);
        const bool sp = SequenceParallel();
        const uint64_t normRows = NormRows();
        m_e.Compute(l.lossBwd,
                    MakeElementwise(OpType::CROSS_ENTROPY, m_rows, m_shapes.vocab, dt, true));
        uint32_t dgrad = m_e.Compute(l.dgrad, MakeGemm(m_rows, h, m_shapes.vocab, dt));
        uint32_t reduce = GraphEmitter::NONE;
        if (m_run.parallel.tp > 1)
        {
            reduce = m_e.Async(l.dgradReduce,
                               sp ? CollectiveKind::REDUCE_SCATTER : CollectiveKind::ALL_REDUCE,
                               GroupKind::TP,
                               m_eb * m_rows * h,
                               dgrad);
        }
        const OperatorDesc wgradOp = MakeGemm(m_shapes.vocab, h, m_rows, dt);
        uint32_t wgrad = GraphEmitter::NONE;
        if (deferTo != nullptr)
        {
            // Its input, the final norm's output (gathered under sequence parallelism), and
            // the logits' gradient of the rank's vocabulary shard.
            deferTo->Add(l.wgrad,
                         wgradOp,
                         -1,
                         m_eb * int64_t(m_rows * h),
                         sp,
                         m_eb * int64_t(m_rows * m_shapes.vocab));
        }
        else
        {
            wgrad = m_e.Compute(l.wgrad, wgradOp);
        }
        if (reduce != GraphEmitter::NONE)
        {
            m_e.StreamWaitsFor(reduce);
        }
        m_e.Compute(l.normBwd, MakeElementwise(norm, normRows, h, dt, true));
        return wgrad;
    }

    /** The model's final norm, LM head and loss on micro-batch \p mb's model chunk \p chunk. */
    void
    HeadForward(uint32_t mb, uint32_t chunk)
    {
        m_held[{mb, chunk}] += EmitHeadForward(kHead);
    }

    void
    HeadBackward(uint32_t mb, uint32_t chunk)
    {
        // Zero bubble: the head's weight gradient waits for the micro-batch's weight pass,
        // first in it (the reference implementation's WeightGradStore defers the output
        // layer's too).
        WeightGradientStore* deferred = nullptr;
        if (m_run.parallel.ZeroBubble())
        {
            deferred = DeferTo(mb, chunk, kHeadParams);
        }
        const uint32_t wgrad = EmitHeadBackward(kHead, deferred);
        if (!deferred)
        {
            HeadGradients(mb, wgrad);
        }
        const int64_t held = m_held[{mb, chunk}];
        m_e.AddMemory(m_e.LastStream(), -(deferred ? deferred->FreedAtBackwardEnd(held) : held));
        m_held.erase({mb, chunk});
    }

    /** The LM head's and the final norm's gradients became final at node \p wgrad. */
    void
    HeadGradients(uint32_t mb, uint32_t wgrad)
    {
        RootGradients(mb, wgrad, m_shapes.headParams + m_shapes.finalNormParams);
    }

    /**
     * Multi-token prediction module \p k (Megatron-core's MultiTokenPredictionLayer) on the
     * last stage's rows of micro-batch \p mb: the next tokens' embedding and the previous
     * depth's hidden state, each normalized, concatenated and projected from 2h to h by a
     * column-parallel linear whose output is gathered over the tensor-parallel group (and
     * scattered back to the sequence shards under sequence parallelism); one decoder layer; its
     * final norm, the shared output head and a cross-entropy loss.
     */
    void
    MtpForward(uint32_t mb, uint32_t k)
    {
        const int32_t layer = m_shapes.MtpLayer(k);
        m_e.SetContext(Phase::FORWARD, mb, layer);
        GatherLayer(m_e.LastStream());
        WaitForParams(layer);
        const DataType at = m_run.ActivationType();
        const uint64_t h = m_shapes.hidden;
        const bool sp = SequenceParallel();
        const uint64_t normRows = NormRows();
        const OpType norm = NormOpOf(m_model.norm);
        int64_t held = 0;
        m_e.Compute("mtp_embedding", MakeElementwise(OpType::EMBEDDING, m_rows, h, at));
        if (m_run.parallel.tp > 1)
        {
            m_e.Blocking("ar_mtp_embedding",
                         sp ? CollectiveKind::REDUCE_SCATTER : CollectiveKind::ALL_REDUCE,
                         GroupKind::TP,
                         m_eb * m_rows * h);
        }
        for (const char* label : {"mtp_enorm", "mtp_hnorm"})
        {
            held += m_eb * normRows * h;
            m_e.Compute(label, MakeElementwise(norm, normRows, h, at), m_eb * normRows * h);
        }
        if (sp)
        {
            m_e.Blocking(
                "ag_mtp_proj", CollectiveKind::ALL_GATHER, GroupKind::TP, m_eb * m_rows * 2 * h);
        }
        m_e.Compute("mtp_proj", MakeGemm(m_rows, h / m_run.parallel.tp, 2 * h, m_run.dtype));
        if (m_run.parallel.tp > 1)
        {
            // gather_from_tensor_model_parallel_region: the projection's columns.
            m_e.Blocking(
                "ag_mtp_hidden", CollectiveKind::ALL_GATHER, GroupKind::TP, m_eb * m_rows * h);
        }
        m_layerHeld[{mb, layer}] = m_layer.Forward(m_e, m_run.recompute);
        ReleaseLayer();
        held += EmitHeadForward(kMtpHead);
        m_mtpHeld[{mb, k}] = held;
    }

    /** The backward pass of MtpForward(\p mb, \p k), its gradients reduced as a layer's. */
    void
    MtpBackward(uint32_t mb, uint32_t k)
    {
        const int32_t layer = m_shapes.MtpLayer(k);
        m_e.SetContext(Phase::BACKWARD, mb, layer);
        const DataType at = m_run.ActivationType();
        const DataType dt = m_run.dtype;
        const uint64_t h = m_shapes.hidden;
        const uint32_t tp = m_run.parallel.tp;
        const bool sp = SequenceParallel();
        const uint64_t normRows = NormRows();
        const OpType norm = NormOpOf(m_model.norm);
        const CollectiveKind reduce =
            sp ? CollectiveKind::REDUCE_SCATTER : CollectiveKind::ALL_REDUCE;
        // Into the shared output head's gradient: no gradients of its own.
        EmitHeadBackward(kMtpHead);
        GatherLayer(m_e.LastStream(), true);
        std::vector<uint32_t> wgrads;
        m_layer.Backward(m_e, m_run.recompute, m_layerHeld[{mb, layer}], &wgrads);
        m_layerHeld.erase({mb, layer});
        // The projection: its output gradient split back to the columns (under sequence
        // parallelism first gathered from the shards), its input gathered again for the weight
        // gradient, its input gradient reduced.
        if (sp)
        {
            m_e.Blocking(
                "ag_mtp_hidden_grad", CollectiveKind::ALL_GATHER, GroupKind::TP, m_eb * m_rows * h);
        }
        const uint32_t projDgrad =
            m_e.Compute("mtp_proj_dgrad", MakeGemm(m_rows, 2 * h, h / tp, dt));
        uint32_t pending = GraphEmitter::NONE;
        if (tp > 1)
        {
            pending = m_e.Async(
                "ar_mtp_proj_dgrad", reduce, GroupKind::TP, m_eb * m_rows * 2 * h, projDgrad);
        }
        if (sp)
        {
            m_e.Blocking("ag_mtp_proj_bwd",
                         CollectiveKind::ALL_GATHER,
                         GroupKind::TP,
                         m_eb * m_rows * 2 * h);
        }
        // The layer's weight gradients precede it on the stream.
        const uint32_t wgrad = m_e.Compute("mtp_proj_wgrad", MakeGemm(h / tp, 2 * h, m_rows, dt));
        if (pending != GraphEmitter::NONE)
        {
            m_e.StreamWaitsFor(pending);
        }
        m_e.Compute("mtp_norms_bwd", MakeElementwise(norm, 2 * normRows, h, at, true));
        const uint32_t emb = m_e.Compute("mtp_embedding_bwd",
                                         MakeElementwise(OpType::EMBEDDING, m_rows, h, at, true));
        ReleaseLayer();
        m_e.AddMemory(m_e.LastStream(), -m_mtpHeld[{mb, k}]);
        m_mtpHeld.erase({mb, k});
        LayerGradients(mb, layer, wgrad, m_shapes.mtpParams);
        if (k == 0)
        {
            RootGradients(mb, emb, MtpEmbeddingCopy());
        }
    }

    /**
     * \return the parameters of the prediction modules' copy of the word embedding: on a
     * pipeline the last stage embeds their tokens with its own copy (StageParameters), unless
     * the tied LM head already is one
     */
    uint64_t
    MtpEmbeddingCopy() const
    {
        return m_shapes.mtpLayers > 0 && m_stage > 0 && !m_model.tiedEmbeddings
                   ? m_shapes.embeddingParams
                   : 0;
    }

    bool
    IsLastMicroBatch(uint32_t mb) const
    {
        return mb + 1 == m_microBatches;
    }

    /**
     * Whether micro-batch \p mb's gradients are reduced: the last one's, which carry the
     * step's sum; every one's under ZeRO-2, whose ranks keep only their shard of the
     * gradients (DeepSpeed's engine reduces "during non gradient accumulation boundaries as
     * well" once gradients are partitioned, deepspeed/runtime/engine.py allreduce_gradients).
     */
    bool
    ReducesGradients(uint32_t mb) const
    {
        return IsLastMicroBatch(mb) || m_run.parallel.zeroStage == 2;
    }

    void
    Backward(uint32_t mb, uint32_t chunk)
    {
        const uint32_t vstage = VirtualStage(chunk);
        // Embedding, final norm, LM head and loss: not Transformer Engine linear layers, they
        // run in the activation type (bf16 under an fp8 recipe).
        const DataType dt = m_run.ActivationType();
        m_e.SetContext(Phase::BACKWARD, mb, -1);
        if (vstage + 1 == m_virtualStages)
        {
            for (uint32_t k = m_shapes.mtpLayers; k-- > 0;)
            {
                MtpBackward(mb, k);
            }
            m_e.SetContext(Phase::BACKWARD, mb, -1);
            HeadBackward(mb, chunk);
        }
        else if (Towards(vstage + 1) != 0)
        {
            m_e.Recv("recv_grad",
                     GroupKind::PP,
                     Towards(vstage + 1),
                     Tag(mb, vstage, true),
                     m_layer.InputBytes());
        }
        const uint32_t firstLayer = m_run.parallel.FirstLayerOf(m_model.layers, vstage);
        uint32_t prefetchAfter = m_e.LastStream();
        for (uint32_t i = m_run.parallel.VirtualStageLayers(m_model.layers, vstage); i-- > 0;)
        {
            const int32_t layer = static_cast<int32_t>(firstLayer + i);
            m_e.SetContext(Phase::BACKWARD, mb, layer);
            const uint32_t layerStart = m_e.LastStream();
            GatherLayer(prefetchAfter, true);
            prefetchAfter = layerStart;
            std::vector<uint32_t> wgrads;
            if (m_run.parallel.ZeroBubble())
            {
                // The weight gradients wait for this micro-batch's weight pass.
                m_e.DeferWeightGradients(DeferTo(mb, chunk, layer));
            }
            m_layer.Backward(m_e, m_run.recompute, m_layerHeld[{mb, layer}], &wgrads);
            m_e.DeferWeightGradients(nullptr);
            m_layerHeld.erase({mb, layer});
            ReleaseLayer();
            if (!wgrads.empty())
            {
                LayerGradients(mb, layer, wgrads.back(), 0);
            }
        }
        m_e.SetContext(Phase::BACKWARD, mb, -1);
        if (vstage == 0)
        {
            uint32_t emb =
                m_e.Compute("embedding_bwd",
                            MakeElementwise(OpType::EMBEDDING, m_rows, m_shapes.hidden, dt, true));
            m_e.AddMemory(emb, -m_held[{mb, chunk}]);
            m_held.erase({mb, chunk});
            RootGradients(mb, emb, m_shapes.embeddingParams);
        }
        else if (Towards(vstage - 1) != 0)
        {
            m_e.Send("send_grad",
                     GroupKind::PP,
                     Towards(vstage - 1),
                     Tag(mb, vstage - 1, true),
                     m_layer.InputBytes(),
                     m_e.LastStream());
        }
        if (ReducesGradients(mb) && !m_run.parallel.ZeroBubble())
        {
            FlushBucket();
        }
    }

    /**
     * A zero-bubble schedule's weight pass of micro-batch \p mb on model chunk \p chunk: the
     * weight gradients its backward pass deferred, layer by layer in the order it reached them.
     * The last micro-batch's is one of the passes that end the step (TrailingWeightPasses),
     * which flush the buckets.
     */
    void
    WeightPass(uint32_t mb, uint32_t chunk)
    {
        auto it = m_weightPasses.find({mb, chunk});
        for (const auto& [key, store] : it->second)
        {
            EmitWeights(mb, key, store);
        }
        m_weightPasses.erase(it);
    }

    /**
     * Emits micro-batch \p mb's deferred weight gradients of \p key (a decoder layer, or
     * kHeadParams) and hands the gradients they finish to the reduction.
     */
    void
    EmitWeights(uint32_t mb, int32_t key, const WeightGradientStore& store)
    {
        m_e.SetContext(Phase::WEIGHT, mb, key >= 0 ? key : -1);
        const uint32_t last = store.Emit(m_e);
        if (key == kHeadParams)
        {
            HeadGradients(mb, last);
            return;
        }
        LayerGradients(mb, key, last, 0);
    }

    /**
     * The weight passes that end the step (\p passes, after the last backward): a model chunk's
     * at a time, in the order the schedule reaches them, grouped by layer, each layer's over the
     * micro-batches, so that its gradients are final (and reduced) before the next layer's
     * weight passes run, as the reference implementation's WeightGradStore.clear() orders them
     * (sail-sg/zero-bubble-pipeline-parallelism).
     */
    void
    TrailingWeightPasses(const std::vector<ScheduleStep>& passes)
    {
        std::vector<uint32_t> chunks;
        for (const ScheduleStep& w : passes)
        {
            if (std::find(chunks.begin(), chunks.end(), w.chunk) == chunks.end())
            {
                chunks.push_back(w.chunk);
            }
        }
        for (uint32_t chunk : chunks)
        {
            std::vector<uint32_t> mbs;
            for (const ScheduleStep& w : passes)
            {
                if (w.chunk == chunk)
                {
                    mbs.push_back(w.microBatch);
                }
            }
            const std::size_t layers = m_weightPasses.at({mbs.front(), chunk}).size();
            for (std::size_t k = 0; k < layers; ++k)
            {
                for (uint32_t mb : mbs)
                {
                    const auto& [key, store] = m_weightPasses.at({mb, chunk}).at(k);
                    Noted({SchedulePass::WEIGHT, mb, chunk},
                          [&]()
                          {
                              EmitWeights(mb, key, store);
                          });
                }
            }
            for (uint32_t mb : mbs)
            {
                m_weightPasses.erase({mb, chunk});
            }
        }
        if (!passes.empty())
        {
            FlushBucket();
        }
    }

    /**
     * The gradients of decoder layer \p layer (the emitting one), and \p extra more dense
     * parameters, became final at node \p wgrad in micro-batch \p mb: ZeRO-3 reduce-scatters
     * them every micro-batch, otherwise those reduced (ReducesGradients) join the
     * data-parallel buckets; the experts' reduce over the expert data-parallel group.
     */
    void
    LayerGradients(uint32_t mb, int32_t layer, uint32_t wgrad, uint64_t extra)
    {
        const uint64_t dense = DenseLayerGradBytes() + extra * m_gb;
        if (ZeroThree())
        {
            // ZeRO-3 / FSDP reduce-scatters each layer's gradients every micro-batch, and
            // frees the unsharded ones (GatherLayer).
            const uint32_t rs =
                m_e.Async("rs_grads", CollectiveKind::REDUCE_SCATTER, GroupKind::DP, dense, wgrad);
            m_e.AddMemory(rs, -static_cast<int64_t>(DenseLayerGradBytes()));
        }
        else if (ReducesGradients(mb))
        {
            AddGradients(wgrad, dense, GroupKind::DP);
        }
        if (m_shapes.ExpertParams(layer) > 0 && ReducesGradients(mb)
            && m_run.parallel.ExpertReplicas() > 1)
        {
            // Expert gradients reduce over the expert data-parallel group, scattered there
            // by a distributed optimizer as the dense ones are over dp x cp; each layer's as it
            // becomes final with overlap, else all of them after the backward pass in one call.
            const uint64_t bytes = m_shapes.ExpertParams(layer) * m_gb;
            if (m_run.overlapGradReduce)
            {
                m_pending.push_back(
                    m_e.Async(ExpertGradsLabel(), m_gradCollective, GroupKind::EDP, bytes, wgrad));
            }
            else
            {
                m_expertDeferred += bytes;
            }
        }
    }

    /**
     * Gradients of \p bytes (a layer's, which become final together here) became final at node
     * \p after: they join the current bucket, which is full at bucket_mib (a bucket holds whole
     * layers, never a part of one, as a DDP bucket never splits a parameter). With overlap a full
     * bucket is reduced at once (PyTorch DDP); otherwise the buckets wait for the end of the
     * backward pass (Megatron-LM's DDP; by default one bucket, the whole buffer).
     */
    void
    AddGradients(uint32_t after, uint64_t bytes, GroupKind group)
    {
        if (m_run.parallel.DenseReplicas() == 1 || bytes == 0 || ZeroThree())
        {
            return;
        }
        m_bucketBytes += bytes;
        m_bucketAfter = after;
        if (m_bucketBytes >= m_run.GradBucketBytes())
        {
            FlushBucket();
        }
    }

    /** \return the expert gradients' reduction: scattered under a distributed optimizer */
    const char*
    ExpertGradsLabel() const
    {
        return m_run.parallel.zeroStage >= 1 ? "rs_expert_grads" : "ar_expert_grads";
    }

    void
    FlushBucket()
    {
        if (m_bucketBytes == 0)
        {
            return;
        }
        if (m_run.overlapGradReduce)
        {
            m_pending.push_back(m_e.Async(
                "grad_bucket", m_gradCollective, GroupKind::DP, m_bucketBytes, m_bucketAfter));
        }
        else
        {
            m_deferred.push_back(m_bucketBytes);
        }
        m_bucketBytes = 0;
    }

    void
    OptimizerStep()
    {
        m_e.SetContext(Phase::OPTIMIZER, 0, -1);
        FlushBucket();
        // Megatron-LM's DDP reduces the whole gradient buffer after the backward pass in one
        // call (or its buckets of bucket_mib, where given).
        for (uint64_t bytes : m_deferred)
        {
            m_pending.push_back(
                m_e.Async("grad_bucket", m_gradCollective, GroupKind::DP, bytes, m_e.LastStream()));
        }
        if (m_expertDeferred > 0)
        {
            m_pending.push_back(m_e.Async(ExpertGradsLabel(),
                                          m_gradCollective,
                                          GroupKind::EDP,
                                          m_expertDeferred,
                                          m_e.LastStream()));
            m_expertDeferred = 0;
        }
        m_e.StreamWaitsFor(m_pending);
        const auto& p = m_run.parallel;
        if (p.sequenceParallel && p.tp > 1)
        {
            // Under sequence parallelism the parameters every TP rank holds whole (norms, MLA's
            // down-projection, the router) saw only the rank's rows: their gradients are summed
            // over the group in one flattened all-reduce after the data-parallel reduction
            // (Megatron-LM's finalize_model_grads, _allreduce_layernorm_grads).
            const uint64_t replicated = StageTpReplicatedParameters(m_model, m_run, m_stage);
            m_e.Blocking(
                "ar_sp_grads", CollectiveKind::ALL_REDUCE, GroupKind::TP, replicated * m_gb);
        }
        if ((m_model.tiedEmbeddings || m_shapes.mtpLayers > 0) && p.HeadStage() != 0
            && (m_stage == 0 || m_stage == p.HeadStage()))
        {
            // The word embedding's two copies (the first stage's embedding, the last stage's
            // tied LM head or prediction modules' embedding) sum their gradients before the
            // update (Megatron-LM's embedding group: finalize_model_grads'
            // _allreduce_word_embedding_grads). Between two ranks that is one whole gradient
            // each way, as a two-rank ring all-reduce moves.
            const uint64_t bytes = m_shapes.vocab * m_shapes.hidden * m_gb;
            const int32_t toOther = m_stage == 0 ? -1 : +1; // along the pipeline, wrapping
            const uint32_t tag = m_microBatches * m_virtualStages * 2; // after every pipeline tag
            m_e.Send("send_embedding_grad", GroupKind::PP, toOther, tag, bytes, m_e.LastStream());
            m_e.Recv(StageGraph::kEmbeddingGradRecv, GroupKind::PP, toOther, tag, bytes);
        }
        const uint64_t params = StageParameters(m_model, m_run, m_stage);
        const uint64_t expert = StageExpertParameters(m_model, m_run, m_stage);
        const uint64_t dense = params - expert;
        // ZeRO shards the dense parameters' state over dp x cp and the experts' over
        // dp x cp / ep (the memory model's split).
        const uint64_t shard =
            p.zeroStage >= 1 ? dense / p.DenseReplicas() + expert / p.ExpertReplicas() : params;
        m_e.Compute("optimizer",
                    MakeOptimizer(shard, m_run.ActivationType(), m_run.GradientType()));
        if (m_run.dtype == DataType::FP8)
        {
            // Transformer Engine keeps bf16 weights and casts each linear layer's weight to fp8
            // (with its transpose for the input-gradient GEMM) once per step, on the first
            // micro-batch; charged here, after the update that makes them stale.
            const uint64_t params = StageLinearParameters(m_model, m_run, m_stage);
            const uint64_t h = m_shapes.hidden;
            const uint64_t rows = params / h;
            if (rows > 0)
            {
                m_e.Compute("fp8_weight_cast",
                            MakeElementwise(Fp8CastType(m_run), rows, h, DataType::BF16));
            }
        }
        if (p.zeroStage >= 1 && p.zeroStage <= 2 && !OverlapsParamGather())
        {
            // ZeRO-1/2: every rank gathers the parameters the others updated, each over the
            // group that sharded them.
            const uint64_t linear = StageLinearParameters(m_model, m_run, m_stage);
            const uint64_t expertLinear = StageExpertLinearParameters(m_model, m_run, m_stage);
            if (p.DenseReplicas() > 1)
            {
                m_e.Blocking("ag_params",
                             CollectiveKind::ALL_GATHER,
                             GroupKind::DP,
                             ParamGatherBytes(dense, linear - expertLinear));
            }
            if (expert > 0 && p.ExpertReplicas() > 1)
            {
                m_e.Blocking("ag_expert_params",
                             CollectiveKind::ALL_GATHER,
                             GroupKind::EDP,
                             ParamGatherBytes(expert, expertLinear));
            }
        }
    }

    static constexpr int32_t kEmbeddingParams = -1; //!< m_paramGathers key of the embedding
    /** m_paramGathers' and m_weightPasses' key of the final norm and the LM head */
    static constexpr int32_t kHeadParams = -2;

    const ModelSpec& m_model;
    const RunSpec& m_run;
    uint32_t m_stage;
    StageGraph& m_graph;
    GraphEmitter m_e;
    TransformerLayer m_layer;
    const LayerShapes& m_shapes;
    uint32_t m_virtualStages = 1;
    uint32_t m_microBatches = 1;
    uint64_t m_rows = 0;
    int64_t m_eb = 2; //!< bytes per weight and activation element
    int64_t m_gb = 2; //!< bytes per gradient element (RunSpec::GradientType())
    CollectiveKind m_gradCollective;
    std::map<std::pair<uint32_t, uint32_t>, int64_t> m_held;     //!< (mb, chunk) -> bytes
    std::map<std::pair<uint32_t, int32_t>, int64_t> m_layerHeld; //!< (mb, layer) -> bytes
    std::map<std::pair<uint32_t, uint32_t>, int64_t> m_mtpHeld;  //!< (mb, module) -> bytes
    /**
     * Zero bubble: each (micro-batch, chunk)'s deferred weight gradients in backward order, by
     * decoder layer (or kHeadParams for the LM head)
     */
    std::map<std::pair<uint32_t, uint32_t>, std::vector<std::pair<int32_t, WeightGradientStore>>>
        m_weightPasses;
    uint64_t m_bucketBytes = 0;
    uint64_t m_expertDeferred = 0; //!< expert gradients left for after the backward pass
    uint32_t m_bucketAfter = GraphEmitter::NONE;
    std::vector<uint32_t> m_pending;  //!< gradient collectives the optimizer waits for
    std::vector<uint64_t> m_deferred; //!< gradient bytes reduced after the backward pass
    /** Parameter gathers not yet waited for, by layer (or kEmbeddingParams, kHeadParams) */
    std::map<int32_t, std::vector<uint32_t>> m_paramGathers;
};

} // namespace

StageGraph
BuildTrainingStage(const ModelSpec& model,
                   const RunSpec& run,
                   uint32_t stage,
                   std::size_t expectedNodes,
                   const std::vector<ScheduleStep>* schedule)
{
    StageGraph g;
    g.stage = stage;
    g.nodes.reserve(expectedNodes);
    TrainingStageBuilder builder(model, run, stage, g);
    builder.Build(schedule);
    return g;
}

} // namespace rapidllm
} // namespace ns3
