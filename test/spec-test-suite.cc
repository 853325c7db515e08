/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// Specs and presets: every preset loads, GPT parameter counts follow Megatron-LM's formula, and
// each class of bad input gives a SpecError naming the file, field and what is allowed.

#include "ns3/abort.h"
#include "ns3/hardware-spec.h"
#include "ns3/model-spec.h"
#include "ns3/preset-registry.h"
#include "ns3/run-spec.h"
#include "ns3/spec-error.h"
#include "ns3/spec-override.h"
#include "ns3/spec-reader.h"
#include "ns3/test.h"
#include "spec-error-check.h"
#include "test-require.h"

#include <algorithm>
#include <cmath>
#include <functional>

using namespace ns3;
using namespace ns3::rapidllm;

/**
 * \brief Each GPT preset's parameter count equals Megatron-LM SC21's
 * P = 12 l h^2 (1 + 13/(12h) + (V+s)/(12 l h)), up to the final LayerNorm the formula omits.
 */
class GptParameterCountTestCase : public TestCase
{
  public:
    GptParameterCountTestCase()
        : TestCase("GPT presets match Megatron-LM's parameter formula")
    {}

  private:
    void
    DoRun() override
    {
        struct Row
        {
            const char* name;
            double billions; // the name the paper gives the model
        };

        const Row rows[] = {{"gpt-1.7b", 1.7},
                            {"gpt-3.6b", 3.6},
                            {"gpt-7.5b", 7.5},
                            {"gpt-18.4b", 18.4},
                            {"gpt-39.1b", 39.1},
                            {"gpt-76.1b", 76.1},
                            {"gpt-145.6b", 145.6},
                            {"gpt-310.1b", 310.1},
                            {"gpt-529.6b", 529.6},
                            {"gpt-1008b", 1008},
                            {"gpt3-175b", 175},
                            {"gpt-22b", 22}};
        for (const auto& row : rows)
        {
            ModelSpec m = ModelSpec::Load(row.name);
            double l = m.layers;
            double h = m.hidden;
            double formula =
                12 * l * h * h * (1 + 13 / (12 * h) + (m.vocab + m.maxSequence) / (12 * l * h));
            double counted = static_cast<double>(m.ParameterCount());
            NS_TEST_ASSERT_MSG_EQ_TOL(counted, formula, 2.0 * h + 1, row.name);
            // The formula reproduces the name the paper gives (to its rounding).
            double tolerance = 0.005 * row.billions + 0.05;
            NS_TEST_ASSERT_MSG_EQ_TOL(formula / 1e9, row.billions, tolerance, row.name);
        }
    }
};

/** \brief Llama and Mixtral presets have their published sizes. */
class LlamaParameterCountTestCase : public TestCase
{
  public:
    LlamaParameterCountTestCase()
        : TestCase("Llama, Mixtral and Qwen3 presets have their published parameter counts")
    {}

  private:
    void
    DoRun() override
    {
        // Published totals (Hugging Face model cards / papers), in billions.
        struct Row
        {
            const char* name;
            double billions;
        };

        const Row rows[] = {{"llama2-7b", 6.74},
                            {"llama2-13b", 13.02},
                            {"llama2-70b", 68.98},
                            {"llama3-8b", 8.03},
                            {"llama3-70b", 70.55},
                            {"llama3-405b", 405.85},
                            {"mixtral-8x7b", 46.70},
                            {"qwen3-30b-a3b", 30.5},
                            {"qwen3-235b-a22b", 235.0},
                            {"deepseek-v2-lite", 15.7},
                            {"deepseek-v3", 671.0}};
        for (const auto& row : rows)
        {
            ModelSpec m = ModelSpec::Load(row.name);
            NS_TEST_ASSERT_MSG_EQ_TOL(
                m.ParameterCount() / 1e9, row.billions, row.billions * 0.005, row.name);
        }
    }
};

/** \brief Every hardware preset loads, with the figures the issue quotes. */
class HardwarePresetTestCase : public TestCase
{
  public:
    HardwarePresetTestCase()
        : TestCase("hardware presets load with their published figures")
    {}

  private:
    void
    DoRun() override
    {
        // The presets the issue quotes are there (others may be added), and every preset loads.
        const std::vector<std::string> names = PresetRegistry::Names("hardware");
        for (const char* quoted :
             {"a100-sxm-40gb", "a100-sxm-80gb", "h100-sxm-80gb", "h200-sxm-141gb"})
        {
            NS_TEST_ASSERT_MSG_EQ(
                std::count(names.begin(), names.end(), quoted), 1, quoted << " listed once");
        }
        for (const std::string& name : names)
        {
            NS_TEST_ASSERT_MSG_GT(HardwareSpec::Load(name).gpu.smCount, 0u, name << " loads");
        }
        HardwareSpec a = HardwareSpec::Load("a100-sxm-80gb");
        NS_TEST_ASSERT_MSG_EQ(a.gpu.smCount, 108, "A100 SMs");
        NS_TEST_ASSERT_MSG_EQ_TOL(a.gpu.TensorFlops(DataType::BF16), 312e12, 1, "A100 bf16");
        NS_TEST_ASSERT_MSG_EQ_TOL(a.gpu.hbmBandwidthBps, 2039e9, 1, "A100-80 HBM");
        RAPIDLLM_REQUIRE_EQ(a.network.dimensions.size(), 2, "NVSwitch x fat tree");
        NS_TEST_ASSERT_MSG_EQ_TOL(a.network.dimensions[0].bandwidthBps, 300e9, 1, "NVLink3");
        NS_TEST_ASSERT_MSG_EQ_TOL(a.network.dimensions[1].bandwidthBps, 25e9, 1, "HDR");
        HardwareSpec a40 = HardwareSpec::Load("a100-sxm-40gb");
        NS_TEST_ASSERT_MSG_EQ_TOL(a40.gpu.hbmBandwidthBps, 1555e9, 1, "A100-40 HBM");
        HardwareSpec h = HardwareSpec::Load("h100-sxm-80gb");
        NS_TEST_ASSERT_MSG_EQ(h.gpu.smCount, 132, "H100 SMs");
        NS_TEST_ASSERT_MSG_EQ_TOL(h.gpu.TensorFlops(DataType::BF16), 989e12, 1, "H100 bf16");
        NS_TEST_ASSERT_MSG_EQ_TOL(h.network.dimensions[0].bandwidthBps, 450e9, 1, "NVLink4");
        HardwareSpec h2 = HardwareSpec::Load("h200-sxm-141gb");
        NS_TEST_ASSERT_MSG_EQ_TOL(h2.gpu.hbmBandwidthBps, 4800e9, 1, "H200 HBM");
        NS_TEST_ASSERT_MSG_EQ_TOL(h2.gpu.hbmBytes / 1048576.0,
                                  143771,
                                  30,
                                  "H200 capacity: the 143,771 MiB nvidia-smi reports");
    }
};

/**
 * \brief Bad input of every class gives a SpecError whose message names the source, the field
 * and what is allowed.
 */
class SpecErrorTestCase : public TestCase
{
  public:
    SpecErrorTestCase()
        : TestCase("bad specs give clear errors")
    {}

  private:
    /** Parses \p text as a model and checks the error mentions every one of \p parts. */
    void
    ExpectModelError(const std::string& text, const std::vector<std::string>& parts)
    {
        bool thrown = false;
        try
        {
            ModelSpec::Parse(text, "bad.yaml");
        }
        catch (const SpecError& e)
        {
            thrown = true;
            std::string what = e.what();
            NS_TEST_EXPECT_MSG_NE(what.find("bad.yaml"), std::string::npos, what);
            for (const auto& p : parts)
            {
                NS_TEST_EXPECT_MSG_NE(what.find(p), std::string::npos, "'" + p + "' in: " + what);
            }
        }
        NS_TEST_EXPECT_MSG_EQ(thrown, true, "no error for: " + text);
    }

    void
    DoRun() override
    {
        const std::string good = "name: x\nlayers: 2\nhidden: 64\nheads: 4\nffn: 256\n"
                                 "activation: gelu\nnorm: layernorm\nposition: learned\n"
                                 "vocab: 100\nmax_sequence: 32\n";
        ModelSpec ok = ModelSpec::Parse(good, "good.yaml");
        NS_TEST_ASSERT_MSG_EQ(ok.headDim, 16, "head_dim defaults to hidden/heads");

        // Unknown field: names it, its line, and the known fields.
        ExpectModelError(good + "hiden: 3\n", {"hiden", ":11", "unknown field", "hidden"});
        // Wrong type.
        ExpectModelError("name: x\nlayers: many\n", {"layers", "expected a number", ":2"});
        // Missing field.
        ExpectModelError("name: x\nlayers: 2\n", {"hidden", "missing"});
        // Non-positive value.
        std::string zero = good;
        zero.replace(zero.find("layers: 2"), 9, "layers: 0");
        ExpectModelError(zero, {"layers", "from 1 to 4294967295", "got 0"});
        // Not a whole number.
        std::string frac = good;
        frac.replace(frac.find("heads: 4"), 8, "heads: 2.5");
        ExpectModelError(frac, {"heads", "whole number"});
        // Disallowed choice lists the allowed values.
        std::string choice = good;
        choice.replace(choice.find("norm: layernorm"), 15, "norm: batchnorm");
        ExpectModelError(choice, {"norm", "batchnorm", "layernorm, rmsnorm"});
        // Inconsistent values.
        ExpectModelError(good + "kv_heads: 3\n", {"kv_heads", "multiple"});
        // YAML syntax error.
        ExpectModelError("name: [x\n", {"YAML syntax error"});
        // A sliding window: every layer, or all but every k-th (Gemma-2 and GPT-OSS: k = 2).
        const ModelSpec mistral = ModelSpec::Parse(good + "sliding_window: 8\n", "w.yaml");
        NS_TEST_EXPECT_MSG_EQ(
            (mistral.WindowOf(0) == 8 && mistral.WindowOf(1) == 8), true, "every layer windowed");
        const ModelSpec alternating =
            ModelSpec::Parse(good + "sliding_window: 8\nsliding_window_pattern: 2\n", "a.yaml");
        NS_TEST_EXPECT_MSG_EQ((alternating.WindowOf(0) == 8 && alternating.WindowOf(1) == 0),
                              true,
                              "every second layer full");
        NS_TEST_EXPECT_MSG_EQ(ok.HasWindow(), false, "no window by default");
        ExpectModelError(good + "sliding_window: 32\n",
                         {"sliding_window", "max_sequence (32)", "leave the key out"});
        ExpectModelError(good + "sliding_window_pattern: 2\n",
                         {"sliding_window_pattern", "needs sliding_window"});
        ExpectModelError(good + "sliding_window: 8\nsliding_window_pattern: 1\n",
                         {"sliding_window_pattern", "from 2"});

        // Unknown preset lists the valid names.
        bool thrown = false;
        try
        {
            ModelSpec::Load("gpt-4");
        }
        catch (const SpecError& e)
        {
            thrown = true;
            std::string what = e.what();
            NS_TEST_EXPECT_MSG_NE(what.find("gpt3-175b"), std::string::npos, what);
            // model/ names the field; the command line maps it to its option when printing.
            NS_TEST_EXPECT_MSG_EQ(e.GetField(), "model", what);
            NS_TEST_EXPECT_MSG_EQ(what.find("--"), std::string::npos, what);
        }
        NS_TEST_EXPECT_MSG_EQ(thrown, true, "unknown preset accepted");

        // A missing file is named.
        thrown = false;
        try
        {
            HardwareSpec::Load("/nonexistent/hw.yaml");
        }
        catch (const SpecError& e)
        {
            thrown = true;
            NS_TEST_EXPECT_MSG_NE(
                std::string(e.what()).find("/nonexistent/hw.yaml"), std::string::npos, e.what());
        }
        NS_TEST_EXPECT_MSG_EQ(thrown, true, "missing file accepted");

        // Hardware: bad efficiency range and bad topology name.
        std::string hw;
        PresetRegistry::Find("hardware", "a100-sxm-80gb", hw);
        std::string badEff = hw;
        badEff.replace(badEff.find("tensor: 0."), 10, "tensor: 1.7");
        thrown = false;
        try
        {
            HardwareSpec::Parse(badEff, "hw.yaml");
        }
        catch (const SpecError& e)
        {
            thrown = true;
            std::string what = e.what();
            NS_TEST_EXPECT_MSG_NE(what.find("gpu.efficiency.tensor"), std::string::npos, what);
            NS_TEST_EXPECT_MSG_NE(what.find("between"), std::string::npos, what);
        }
        NS_TEST_EXPECT_MSG_EQ(thrown, true, "efficiency > 1 accepted");
        std::string badTopo = hw;
        badTopo.replace(badTopo.find("topology: fat_tree"), 18, "topology: hypercube");
        thrown = false;
        try
        {
            HardwareSpec::Parse(badTopo, "hw.yaml");
        }
        catch (const SpecError& e)
        {
            thrown = true;
            std::string what = e.what();
            NS_TEST_EXPECT_MSG_NE(
                what.find("network.dimensions[1].topology"), std::string::npos, what);
            NS_TEST_EXPECT_MSG_NE(what.find("fat_tree"), std::string::npos, what);
        }
        NS_TEST_EXPECT_MSG_EQ(thrown, true, "unknown topology accepted");
    }
};

/** \brief Run settings are checked against each other and against the model. */
class RunSpecTestCase : public TestCase
{
  public:
    RunSpecTestCase()
        : TestCase("run settings are validated against the model")
    {}

  private:
    /** Validates \p run against \p model and returns the error text ("" if none). */
    std::string
    ErrorOf(const RunSpec& run, const ModelSpec& model)
    {
        try
        {
            run.Validate(model, "run.yaml");
        }
        catch (const SpecError& e)
        {
            return e.what();
        }
        return "";
    }

    void
    DoRun() override
    {
        ModelSpec gpt = ModelSpec::Load("gpt3-175b");
        RunSpec run = RunSpec::Parse("parallel: {tp: 8, pp: 8, dp: 16}\nmicro_batch: 1\n"
                                     "global_batch: 1536\nrecompute: full\n",
                                     "run.yaml");
        NS_TEST_ASSERT_MSG_EQ(ErrorOf(run, gpt), "", "175B TP8 PP8 DP16 is valid");
        NS_TEST_ASSERT_MSG_EQ(run.parallel.Gpus(), 1024, "GPUs");
        NS_TEST_ASSERT_MSG_EQ(run.MicroBatches(), 96, "micro-batches per pipeline");

        RunSpec badTp = run;
        badTp.parallel.tp = 7;
        NS_TEST_EXPECT_MSG_NE(ErrorOf(badTp, gpt).find("heads (96) must be divisible by tp (7)"),
                              std::string::npos,
                              ErrorOf(badTp, gpt));
        RunSpec badPp = run;
        badPp.parallel.pp = 5;
        NS_TEST_EXPECT_MSG_NE(ErrorOf(badPp, gpt).find("layers (96)"), std::string::npos, "pp");
        RunSpec badBatch = run;
        badBatch.globalBatch = 1000;
        NS_TEST_EXPECT_MSG_NE(
            ErrorOf(badBatch, gpt).find("global batch (1000)"), std::string::npos, "gbs");
        RunSpec badEp = run;
        badEp.parallel.ep = 2;
        NS_TEST_EXPECT_MSG_NE(ErrorOf(badEp, gpt).find("mixture-of-experts"),
                              std::string::npos,
                              "ep on a dense model");

        bool thrown = false;
        try
        {
            RunSpec::Parse("parallel: {tp: 2, zero: 5}\n", "run.yaml");
        }
        catch (const SpecError& e)
        {
            thrown = std::string(e.what()).find("parallel.zero") != std::string::npos;
        }
        NS_TEST_EXPECT_MSG_EQ(thrown, true, "zero stage 5 accepted");

        // The measured software's behaviour: defaults are today's, the options name the others.
        NS_TEST_EXPECT_MSG_EQ(run.overlapTpReduce && run.FirstTokenFromPrefill()
                                  && run.splitKvDecode,
                              true,
                              "defaults");
        // The first-token pass follows the engine unless set: TurboMind's first decode step for
        // lmdeploy, the prefill for the others; a setting wins over the engine.
        NS_TEST_EXPECT_MSG_EQ(run.firstToken, "auto", "first_token defaults to auto");
        for (const std::string& engine : EngineNames())
        {
            RunSpec e = RunSpec::Parse("engine: " + engine + "\n", "run.yaml");
            NS_TEST_EXPECT_MSG_EQ(e.FirstTokenFromPrefill(), (engine != "lmdeploy"), engine);
            RunSpec set =
                RunSpec::Parse("engine: " + engine + "\nfirst_token: prefill\n", "run.yaml");
            NS_TEST_EXPECT_MSG_EQ(set.FirstTokenFromPrefill(), true, engine + " with prefill");
        }
        RunSpec old = RunSpec::Parse("tp_reduce: blocking\nfirst_token: decode\n"
                                     "decode_attention: per_head\n",
                                     "run.yaml");
        NS_TEST_EXPECT_MSG_EQ(old.overlapTpReduce || old.FirstTokenFromPrefill()
                                  || old.splitKvDecode,
                              false,
                              "2021-2023 behaviour parsed");
        std::string message;
        try
        {
            RunSpec::Parse("decode_attention: paged\n", "run.yaml");
        }
        catch (const SpecError& e)
        {
            message = e.what();
        }
        NS_TEST_EXPECT_MSG_NE(message.find("split_kv, per_head"), std::string::npos, message);
        // Transformer Engine's fp8 scaling: delayed unless a run file says current.
        NS_TEST_EXPECT_MSG_EQ(run.fp8Scaling, "delayed", "fp8_scaling defaults to delayed");
        NS_TEST_EXPECT_MSG_EQ(
            RunSpec::Parse("fp8_scaling: current\n", "run.yaml").fp8Scaling, "current", "parsed");
        message.clear();
        try
        {
            RunSpec::Parse("fp8_scaling: mxfp8\n", "run.yaml");
        }
        catch (const SpecError& e)
        {
            message = e.what();
        }
        NS_TEST_EXPECT_MSG_NE(message.find("fp8_scaling"), std::string::npos, message);
        NS_TEST_EXPECT_MSG_NE(message.find("delayed, current"), std::string::npos, message);
        // The gradient buffer's type: the framework's unless a run file names it.
        NS_TEST_EXPECT_MSG_EQ(run.mainGrads, "auto", "main_grads defaults to auto");
        NS_TEST_EXPECT_MSG_EQ(
            RunSpec::Parse("main_grads: bf16\n", "run.yaml").mainGrads, "bf16", "parsed");
        NS_TEST_EXPECT_MSG_EQ(run.tpCommOverlap, "none", "tp_comm_overlap defaults to none");
        NS_TEST_EXPECT_MSG_EQ(
            RunSpec::Parse("tp_comm_overlap: userbuffers\n", "run.yaml").tpCommOverlap,
            "userbuffers",
            "parsed");

        // Uneven pipeline stages and the framework's memory layout, from a run file.
        RunSpec uneven = RunSpec::Parse("parallel: {tp: 8, pp: 16, first_stage_layers: 7, "
                                        "last_stage_layers: 7}\nmemory_layout: deepspeed\n",
                                        "run.yaml");
        NS_TEST_EXPECT_MSG_EQ(uneven.parallel.firstStageLayers * 100
                                  + uneven.parallel.lastStageLayers,
                              707u,
                              "first and last stage layers");
        NS_TEST_EXPECT_MSG_EQ(ErrorOf(uneven, ModelSpec::Load("llama3-405b")), "", "126 on 16");
        RunSpec counted = RunSpec::Parse("parallel: {tp: 8, pp: 8, vpp: 8, "
                                         "embedding_in_pipeline_split: true, "
                                         "loss_in_pipeline_split: true}\nglobal_batch: 8\n",
                                         "run.yaml");
        NS_TEST_EXPECT_MSG_EQ((counted.parallel.embeddingInSplit && counted.parallel.lossInSplit),
                              true,
                              "embedding and loss in the split");
        NS_TEST_EXPECT_MSG_EQ(ErrorOf(counted, ModelSpec::Load("llama3-405b")), "", "128 on 64");
        NS_TEST_EXPECT_MSG_EQ(ToString(uneven.memoryLayout), "deepspeed", "memory layout");
        NS_TEST_EXPECT_MSG_EQ(ToString(RunSpec().ResolvedMemoryLayout()), "megatron", "default");
        message.clear();
        try
        {
            RunSpec::Parse("memory_layout: fsdp2\n", "run.yaml");
        }
        catch (const SpecError& e)
        {
            message = e.what();
        }
        NS_TEST_EXPECT_MSG_NE(
            message.find("auto, megatron, deepspeed"), std::string::npos, message);
        // Counts that do not fit 32 bits are refused, not wrapped (4294967320 is 24 + 2^32).
        for (const char* text :
             {"parallel: {pp: 4294967320}\n", "global_batch: 4294967296\n", "generated: 1e10\n"})
        {
            message.clear();
            try
            {
                RunSpec::Parse(text, "run.yaml");
            }
            catch (const SpecError& e)
            {
                message = e.what();
            }
            NS_TEST_EXPECT_MSG_NE(
                message.find("to 4294967295, got"), std::string::npos, text << ": " << message);
        }
    }
};

/**
 * \brief Numbers that would wrap, duplicate keys, impossible sizes and too-long sequences in the
 * YAML readers: each is a SpecError naming the file, the field (and line), the value and the
 * allowed range, never a silently different spec.
 */
class YamlBadInputTestCase : public TestCase
{
  public:
    YamlBadInputTestCase()
        : TestCase("out-of-range and duplicate YAML values are rejected, naming the field")
    {}

  private:
    /** One bad input: what to parse and what the message must contain. */
    struct Case
    {
        std::string what;                 //!< the class of damage
        std::function<void()> parse;      //!< parses the bad text
        std::vector<std::string> needles; //!< what the message names
    };

    /** \return \p text with the first \p from replaced by \p to */
    static std::string
    With(std::string text, const std::string& from, const std::string& to)
    {
        const std::size_t at = text.find(from);
        NS_ABORT_MSG_IF(at == std::string::npos, "'" << from << "' not in the test text");
        return text.replace(at, from.size(), to);
    }

    void
    DoRun() override
    {
        const std::string model = "name: x\nlayers: 2\nhidden: 64\nheads: 4\nffn: 256\n"
                                  "activation: gelu\nnorm: layernorm\nposition: learned\n"
                                  "vocab: 100\nmax_sequence: 32\n";
        std::string hw;
        PresetRegistry::Find("hardware", "a100-sxm-80gb", hw);
        auto parseModel = [](std::string text)
        {
            return [text]()
            {
                ModelSpec::Parse(text, "m.yaml");
            };
        };
        auto parseHw = [](std::string text)
        {
            return [text]()
            {
                HardwareSpec::Parse(text, "h.yaml");
            };
        };
        const std::string range = "from 1 to 4294967295";
        const std::vector<Case> cases = {
            // 2^32 + 24 used to wrap to 24 and give the preset's report.
            {"layers above 2^32",
             parseModel(With(model, "layers: 2", "layers: 4294967320")),
             {"m.yaml:2", "layers", "4294967320", range}},
            {"heads of 2^32 (wrapped to 0, then a division by 0)",
             parseModel(With(model, "heads: 4", "heads: 4294967296")),
             {"m.yaml:4", "heads", "4294967296", range}},
            {"kv_heads of 2^32",
             parseModel(model + "kv_heads: 4294967296\n"),
             {"m.yaml:11", "kv_heads", "4294967296", range}},
            {"hidden beyond 32 bits",
             parseModel(With(model, "hidden: 64", "hidden: 8589934656")),
             {"hidden", "8589934656", range}},
            {"ffn beyond 32 bits",
             parseModel(With(model, "ffn: 256", "ffn: 4294967552")),
             {"ffn", "4294967552", range}},
            {"vocab beyond 32 bits",
             parseModel(With(model, "vocab: 100", "vocab: 4294967396")),
             {"vocab", "4294967396", range}},
            {"a shape whose parameters overflow 64-bit counts",
             parseModel(With(With(model, "hidden: 64", "hidden: 4294967292"),
                             "layers: 2",
                             "layers: 4294967295")),
             {"m.yaml", "parameters", "2^56"}},
            {"two dimensions of one name (overrides and tier faults reached the first only)",
             parseHw(With(hw, "- name: infiniband", "- name: nvlink")),
             {"h.yaml", "network.dimensions[1].name", "'nvlink' names dimension 0 too"}},
            {"a duplicate key (yaml-cpp keeps the first silently)",
             parseModel(model + "layers: 3\n"),
             {"m.yaml:11", "layers", "duplicate key", "line 2"}},
            // Found by the mutation fuzz test: yaml-cpp 0.7 allocates until memory runs out on a
            // document whose first token is ','.
            {"a document starting with ','",
             parseHw("# a comment\n,\n" + hw),
             {"h.yaml:2", "YAML syntax error", "cannot start with ','"}},
            {"a second document starting with ','",
             parseModel(model + "---\n  ,x\n"),
             {"m.yaml", "cannot start with ','"}},
            {"a duplicate key in a nested mapping",
             parseHw(With(hw, "  hbm_gib:", "  hbm_gib: 80\n  hbm_gib:")),
             {"h.yaml", "gpu.hbm_gib", "duplicate key"}},
            // 1e308 GiB used to become 0 bytes ("0.00 GiB").
            {"hbm_gib of 1e308",
             parseHw(With(hw, "hbm_gib: 80", "hbm_gib: 1e308")),
             {"h.yaml", "gpu.hbm_gib", "1e308", "at most 1048576"}},
            // Found by the mutation fuzz test: a tiny size became 0 bytes, a huge rate inf.
            {"hbm_gib of 1e-300 (0 bytes)",
             parseHw(With(hw, "hbm_gib: 80", "hbm_gib: 1e-300")),
             {"h.yaml", "gpu.hbm_gib", "less than one byte"}},
            {"a tensor rate of 1e308 TFLOP/s (inf FLOP/s)",
             parseHw(With(hw, "bf16: 312", "bf16: 1e308")),
             {"h.yaml", "gpu.tensor_tflops.bf16", "between 0.001 and 1e+06", "1e308"}},
            // Found by fuzzing: 1e-300 TFLOP/s passed, and the replay ran away.
            {"a tensor rate of 1e-300 TFLOP/s",
             parseHw(With(hw, "bf16: 312", "bf16: 1e-300")),
             {"h.yaml", "gpu.tensor_tflops.bf16", "between 0.001 and 1e+06", "1e-300"}},
            {"a link of 1e308 GB/s (inf bytes/s)",
             parseHw(With(hw, "bandwidth_GBps: 300", "bandwidth_GBps: 1e308")),
             {"h.yaml", "network.dimensions[0].bandwidth_GBps", "between 0.001 and 1e+09"}},
            {"a soft fault of 1e-12 (a replay that never ends)",
             parseHw(With(hw,
                          "  dimensions:",
                          "  faults: [{link: gpu0-gpu1, bandwidth_factor: 1e-12}]\n"
                          "  dimensions:")),
             {"h.yaml", "bandwidth_factor", "below 1e-06", "give 0 for a dead link"}},
            {"a link of 1e-12 GB/s (a replay that runs into its watchdog)",
             parseHw(With(hw, "bandwidth_GBps: 300", "bandwidth_GBps: 1e-12")),
             {"h.yaml", "network.dimensions[0].bandwidth_GBps", "between 0.001 and 1e+09"}},
            {"one link's fault twice (the last silently won)",
             parseHw(With(hw,
                          "  dimensions:",
                          "  faults: [{link: gpu0-gpu1, bandwidth_factor: 0.5},\n"
                          "           {link: gpu0-gpu1, bandwidth_factor: 0.25}]\n"
                          "  dimensions:")),
             {"h.yaml", "network.faults[1].link", "given twice"}},
            {"a fault's factor misspelt (reported as bandwidth_factor missing)",
             parseHw(With(hw,
                          "  dimensions:",
                          "  faults: [{link: gpu0-gpu1, factor: 0.5}]\n"
                          "  dimensions:")),
             {"h.yaml", "network.faults[0].factor", "unknown field", "bandwidth_factor, link"}},
            {"a gradient bucket of 1e-300 MiB (0 bytes)",
             []()
             {
                 RunSpec::Parse("bucket_mib: 1e-300\n", "run.yaml");
             },
             {"run.yaml", "bucket_mib", "less than one byte"}},
            {"a network dimension of 2^32 endpoints",
             parseHw(With(hw, "size: 8", "size: 4294967296")),
             {"h.yaml", "size", "4294967296", range}},
            {"a directory given as the model",
             []()
             {
                 ModelSpec::Load("/");
             },
             {"model", "'/'", "directory"}},
            // Found by fuzzing: an empty name began reports with " training on"; a newline
            // in one broke their lines.
            {"an empty name",
             parseModel(With(model, "name: x", "name: \"\"")),
             {"m.yaml", "name", "at least one character"}},
            {"a name with a newline",
             parseModel(With(model, "name: x", "name: \"a\\nb\"")),
             {"m.yaml", "name", "no control characters"}},
            // Found by fuzzing: an empty algorithm name ran as the default, silently.
            {"an empty collective algorithm",
             parseHw(With(hw, "collective: nccl", "collective: \"\"")),
             {"h.yaml", "collective", "empty"}},
            // Found by fuzzing: a second document was ignored (the first's layers ran).
            {"two YAML documents",
             parseModel(model + "---\nlayers: 6\n"),
             {"m.yaml:12", "2 YAML documents"}},
            // Found by fuzzing: the element-wise kernels' rate left out, they cost infinite time.
            {"no fp32 vector rate",
             parseHw(With(hw, "    fp32: 19.5\n", "")),
             {"h.yaml", "gpu.vector_tflops", "needs fp32"}},
            // Found by fuzzing: 30 levels of aliases of aliases (600 bytes) hung the reader,
            // which walked 2^30 values.
            {"aliases of aliases (a billion laughs)",
             parseModel(
                 []()
                 {
                     std::string text = "base: gpt-1.7b\nx0: &a0 [1]\n";
                     for (int i = 1; i <= 30; ++i)
                     {
                         text += "x" + std::to_string(i) + ": &a" + std::to_string(i) + " [*a"
                                 + std::to_string(i - 1) + ", *a" + std::to_string(i - 1) + "]\n";
                     }
                     return text;
                 }()),
             {"m.yaml", "more than 100000 values", "aliases"}},
        };
        for (const auto& c : cases)
        {
            NS_TEST_EXPECT_MSG_EQ(ThrowsWith<SpecError>(c.parse, c.needles), true, c.what);
        }

        // A learned-position model has no embedding past its table: training sequence and
        // inference prompt + generated tokens are bounded by max_sequence (32 here).
        ModelSpec m = ModelSpec::Parse(model, "m.yaml");
        RunSpec training;
        training.globalBatch = 1;
        training.sequence = 32;
        m.Validate("m.yaml");
        training.Validate(m, "run.yaml");
        training.sequence = 33;
        NS_TEST_EXPECT_MSG_EQ(ThrowsWith<SpecError>(
                                  [&]()
                                  {
                                      training.Validate(m, "run.yaml");
                                  },
                                  {"run.yaml", "sequence", "33", "max_sequence 32", "1 to 32"}),
                              true,
                              "a sequence beyond the learned positions");
        RunSpec inference;
        inference.mode = RunMode::INFERENCE;
        inference.promptTokens = 24;
        inference.generatedTokens = 8;
        inference.Validate(m, "run.yaml");
        inference.generatedTokens = 9;
        NS_TEST_EXPECT_MSG_EQ(ThrowsWith<SpecError>(
                                  [&]()
                                  {
                                      inference.Validate(m, "run.yaml");
                                  },
                                  {"generated", "24 + 9", "max_sequence 32"}),
                              true,
                              "prompt + generated beyond the learned positions");
        // Rotary positions have no table: the same lengths are fine.
        m.position = PositionEmbedding::ROPE;
        training.Validate(m, "run.yaml");
        inference.Validate(m, "run.yaml");
        // mbs x dp is formed in 64 bits: 65536 x 65536 used to wrap to 0 and divide by it.
        RunSpec wide;
        wide.microBatch = 65536;
        wide.parallel.dp = 65536;
        wide.globalBatch = 65536;
        wide.sequence = 8;
        NS_TEST_EXPECT_MSG_EQ(ThrowsWith<SpecError>(
                                  [&]()
                                  {
                                      wide.Validate(m, "run.yaml");
                                  },
                                  {"global_batch", "micro-batch x dp (4294967296)"}),
                              true,
                              "mbs x dp beyond 32 bits");
        // A RunSpec built in code is checked as Parse checks a file: a count of 0 or an
        // unknown schedule is a SpecError naming its field (vpp 0 and an inference batch of 0
        // divided by zero; an unknown schedule and 0 generated tokens ran).
        struct Zero
        {
            const char* field;
            std::function<void(RunSpec&)> set;
        };
        for (const Zero& z : {Zero{"vpp",
                                   [](RunSpec& r)
                                   {
                                       r.parallel.virtualStages = 0;
                                   }},
                              Zero{"tp",
                                   [](RunSpec& r)
                                   {
                                       r.parallel.tp = 0;
                                   }},
                              Zero{"micro_batch",
                                   [](RunSpec& r)
                                   {
                                       r.microBatch = 0;
                                   }},
                              Zero{"batch",
                                   [](RunSpec& r)
                                   {
                                       r.mode = RunMode::INFERENCE;
                                       r.batch = 0;
                                   }},
                              Zero{"generated",
                                   [](RunSpec& r)
                                   {
                                       r.mode = RunMode::INFERENCE;
                                       r.promptTokens = 8;
                                       r.generatedTokens = 0;
                                   }},
                              Zero{"pp_schedule",
                                   [](RunSpec& r)
                                   {
                                       r.parallel.schedule = "bogus";
                                   }}})
        {
            RunSpec r = training;
            r.sequence = 8;
            z.set(r);
            NS_TEST_EXPECT_MSG_EQ(ThrowsWith<SpecError>(
                                      [&]()
                                      {
                                          r.Validate(m, "run.yaml");
                                      },
                                      {"run.yaml", z.field}),
                                  true,
                                  z.field);
        }
    }
};

/** \brief The spec test suite. */
/**
 * \brief A missing field's hint names a key one slip away, not another field of the section that
 * differs by a word (vector_pj_per_flop named as a misspelt tensor_pj_per_flop).
 */
class MisspeltKeyTestCase : public TestCase
{
  public:
    MisspeltKeyTestCase()
        : TestCase("a misspelling is a slip in each word, not another word")
    {}

  private:
    void
    DoRun() override
    {
        NS_TEST_EXPECT_MSG_EQ(
            LooksMisspelt("tensr_pj_per_flop", "tensor_pj_per_flop"), true, "slip");
        NS_TEST_EXPECT_MSG_EQ(
            LooksMisspelt("tensor_pj_per_flops", "tensor_pj_per_flop"), true, "s");
        NS_TEST_EXPECT_MSG_EQ(LooksMisspelt("hbm_gb", "hbm_gib"), true, "a letter");
        NS_TEST_EXPECT_MSG_EQ(
            LooksMisspelt("vector_pj_per_flop", "tensor_pj_per_flop"), false, "another word");
        NS_TEST_EXPECT_MSG_EQ(
            LooksMisspelt("tensor_pj_per_flop", "tensor_pj_per_flop"), false, "=");
        // An unknown key's list of the known ones names base, which a file may give.
        NS_TEST_EXPECT_MSG_EQ(ThrowsWith(
                                  []
                                  {
                                      HardwareSpec::Parse("base: h100-sxm-80gb\nname: x\ngpus: 3\n",
                                                          "x.yaml");
                                  },
                                  {"unknown field; known fields here: base, gpu"}),
                              true,
                              "base is known");
    }
};

/**
 * \brief A dimension's nccl section is NCCL's graph for `collective: nccl` alone: elsewhere it
 * is named as unused (it was silently ignored), and its ring graph is given as a pair (a lone
 * channel_GBps was an unknown field whose list of known ones left it out).
 */
class NcclSectionTestCase : public TestCase
{
  public:
    NcclSectionTestCase()
        : TestCase("an nccl section where the dimension runs another algorithm is named unused")
    {}

  private:
    void
    DoRun() override
    {
        const HardwareSpec h100 = HardwareSpec::Load("h100-sxm-80gb");
        NS_TEST_EXPECT_MSG_EQ(h100.network.Notes().size(), 0u, "the preset runs nccl");
        const HardwareSpec ring = HardwareSpec::Load(
            "h100-sxm-80gb", SpecOverride::ParseList("network.nvlink.collective=ring", "test"));
        const std::vector<std::string> notes = ring.network.Notes();
        RAPIDLLM_REQUIRE_EQ(notes.size(), 1u, "nvlink's section");
        NS_TEST_EXPECT_MSG_NE(
            notes[0].find("nvlink's nccl section is not used"), std::string::npos, notes[0]);
        NS_TEST_EXPECT_MSG_EQ(
            ThrowsWith(
                []
                {
                    HardwareSpec::Load(
                        "h100-sxm-80gb",
                        SpecOverride::ParseList("network.nvlink.nccl.channel_GBps=10", "test"));
                },
                {"ring_channels", "missing required field"}),
            true,
            "channel_GBps alone names its pair");
        NS_TEST_EXPECT_MSG_EQ(
            ThrowsWith(
                []
                {
                    HardwareSpec::Load(
                        "h100-sxm-80gb",
                        SpecOverride::ParseList(
                            "network.nvlink.nccl={channels_per_gpu: 4, ll128_channel_GBps: 20}",
                            "test"));
                },
                {"ll128_channel_GBps", "give it with sm or ring_channels"}),
            true,
            "a ring graph's field without the graph is said to be one, not unknown");
    }
};

class SpecTestSuite : public TestSuite
{
  public:
    SpecTestSuite()
        : TestSuite("rapid-llm-spec", UNIT)
    {
        AddTestCase(new GptParameterCountTestCase, TestCase::QUICK);
        AddTestCase(new LlamaParameterCountTestCase, TestCase::QUICK);
        AddTestCase(new HardwarePresetTestCase, TestCase::QUICK);
        AddTestCase(new SpecErrorTestCase, TestCase::QUICK);
        AddTestCase(new RunSpecTestCase, TestCase::QUICK);
        AddTestCase(new YamlBadInputTestCase, TestCase::QUICK);
        AddTestCase(new NcclSectionTestCase, TestCase::QUICK);
        AddTestCase(new MisspeltKeyTestCase, TestCase::QUICK);
    }
};

static SpecTestSuite g_specTestSuite; //!< registers the suite
