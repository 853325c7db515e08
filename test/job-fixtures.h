/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_TEST_JOB_FIXTURES_H
#define RAPIDLLM_TEST_JOB_FIXTURES_H

// The jobs tests and benchmarks build, in one place: small models cut from the presets, run
// settings from a layout, and the large jobs the issues set speed targets on. Header-only, so
// that test suites and bench/ programs include it alike.

#include "ns3/hardware-spec.h"
#include "ns3/model-spec.h"
#include "ns3/run-spec.h"

#include <cstdint>
#include <string>

namespace ns3 {
namespace rapidllm {
namespace fixture {

/**
 * \brief A preset GPU without its power model, so that kernels run at the rated clock and
 * their costs come out in closed form.
 * \param preset the hardware preset
 * \return the GPU
 */
inline GpuSpec
RatedGpu(const std::string& preset)
{
    GpuSpec g = HardwareSpec::Load(preset).gpu;
    g.power = GpuPower();
    return g;
}

/**
 * \brief A preset model with fewer layers (everything else as the preset has it).
 * \param preset the model preset
 * \param layers decoder layers kept
 * \return the model
 */
inline ModelSpec
SmallModel(const std::string& preset, uint32_t layers)
{
    ModelSpec m = ModelSpec::Load(preset);
    m.layers = layers;
    return m;
}

/** \return GPT 1.7B cut to 4 layers: the small dense model most tests train */
inline ModelSpec
SmallGpt()
{
    return SmallModel("gpt-1.7b", 4);
}

/**
 * \brief A training run: the layout and batch given, every other setting at its default
 * (bf16, flash attention, no recomputation).
 * \param tp tensor parallel degree
 * \param pp pipeline stages
 * \param dp data parallel degree
 * \param mbs micro-batch size
 * \param gbs global batch size
 * \param sequence tokens per sequence
 * \return the run
 */
inline RunSpec
TrainingJob(
    uint32_t tp, uint32_t pp, uint32_t dp, uint32_t mbs, uint32_t gbs, uint32_t sequence = 2048)
{
    RunSpec run;
    run.parallel.tp = tp;
    run.parallel.pp = pp;
    run.parallel.dp = dp;
    run.microBatch = mbs;
    run.globalBatch = gbs;
    run.sequence = sequence;
    return run;
}

/**
 * \brief An inference run (one request batch: prefill, then decode steps).
 * \param tp tensor parallel degree
 * \param pp pipeline stages
 * \param batch concurrent sequences
 * \param prompt prompt tokens
 * \param generated generated tokens
 * \return the run
 */
inline RunSpec
InferenceJob(uint32_t tp, uint32_t pp, uint32_t batch, uint32_t prompt, uint32_t generated)
{
    RunSpec run;
    run.mode = RunMode::INFERENCE;
    run.parallel.tp = tp;
    run.parallel.pp = pp;
    run.batch = batch;
    run.promptTokens = prompt;
    run.generatedTokens = generated;
    return run;
}

/**
 * \return the layout of Megatron-LM's GPT-3 175B row on 1024 A100s (Narayanan et al. SC21):
 * TP8 PP8 DP16, micro-batch 1, global batch 1536, 2048 tokens; the workload issue's speed
 * target
 */
inline RunSpec
Gpt3On1024Gpus()
{
    return TrainingJob(8, 8, 16, 1, 1536);
}

/**
 * \return the layout of Megatron-LM's 1008B row on 3072 GPUs: TP8 PP64 DP6, micro-batch 1,
 * global batch 3072, 2048 tokens
 */
inline RunSpec
Gpt1008bOn3072Gpus()
{
    return TrainingJob(8, 64, 6, 1, 3072);
}

/**
 * \return the layout Meta trained Llama-3 405B with on 16,384 H100s (Llama 3 paper, Table 4):
 * TP8 PP16 DP128, 8192 tokens, 16 sequences per data-parallel rank (global batch 2048); its 126
 * layers as 7 on the first and the last stage and 8 on the others
 */
inline RunSpec
Llama3_405bOn16384Gpus()
{
    RunSpec run = TrainingJob(8, 16, 128, 1, 2048, 8192);
    run.parallel.firstStageLayers = 7;
    run.parallel.lastStageLayers = 7;
    return run;
}

} // namespace fixture
} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_TEST_JOB_FIXTURES_H
