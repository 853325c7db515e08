/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// Spec variants: overrides by path, `base:` inheritance, Hugging Face model configs and job
// files. Each variant is compared with a second path to the same spec (the preset with the
// field set by hand, a hand-written full copy, the published parameter count), every field
// at once through the specs' equality operators.

#include "ns3/abort.h"
#include "ns3/hardware-spec.h"
#include "ns3/job-spec.h"
#include "ns3/model-spec.h"
#include "ns3/preset-registry.h"
#include "ns3/spec-error.h"
#include "ns3/spec-override.h"
#include "ns3/test.h"
#include "scratch-dir.h"
#include "spec-error-check.h"
#include "test-require.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>

using namespace ns3;
using namespace ns3::rapidllm;

namespace {

namespace fs = std::filesystem;

/** \return the overrides of a comma-separated list */
std::vector<SpecOverride>
Set(const std::string& text)
{
    return SpecOverride::ParseList(text, "test");
}

/** \return \p text with the first \p from replaced by \p to (which must be there) */
std::string
With(std::string text, const std::string& from, const std::string& to)
{
    const auto at = text.find(from);
    NS_ABORT_MSG_IF(at == std::string::npos, "'" << from << "' not in the text");
    return text.replace(at, from.size(), to);
}

/** \return the text of a preset */
std::string
Preset(const std::string& kind, const std::string& name)
{
    std::string text;
    NS_ABORT_MSG_UNLESS(PresetRegistry::Find(kind, name, text), name);
    return text;
}

/** \return the path of a Hugging Face config fixture */
std::string
HfConfig(const std::string& folder)
{
    return std::string(RAPIDLLM_SOURCE_DIR) + "/test/data/hf/" + folder + "/config.json";
}

} // namespace

/**
 * \brief An override changes exactly the named field: the overridden spec equals the preset
 * with that one field set by hand, and differs from the preset.
 */
class OverrideTestCase : public TestCase
{
  public:
    OverrideTestCase()
        : TestCase("an override changes exactly the named field")
    {}

  private:
    void
    DoRun() override
    {
        const HardwareSpec h100 = HardwareSpec::Load("h100-sxm-80gb");
        // Scale: 3350 GB/s x 0.5.
        HardwareSpec expected = h100;
        expected.gpu.hbmBandwidthBps = 1675e9;
        HardwareSpec got = HardwareSpec::Load("h100-sxm-80gb", Set("gpu.hbm_bandwidth_GBps=0.5x"));
        NS_TEST_EXPECT_MSG_EQ((got == expected), true, "HBM bandwidth scaled by 0.5");
        NS_TEST_EXPECT_MSG_EQ((got != h100), true, "and nothing else");
        // A value.
        expected = h100;
        expected.gpu.hbmBytes = 160ull << 30;
        got = HardwareSpec::Load("h100-sxm-80gb", Set("gpu.hbm_gib=160"));
        NS_TEST_EXPECT_MSG_EQ((got == expected), true, "HBM 160 GiB");
        // A network dimension by name, and the same by index.
        expected = h100;
        NS_TEST_ASSERT_MSG_EQ(expected.network.dimensions[1].name, "infiniband", "preset layout");
        expected.network.dimensions[1].oversubscription = 2;
        got = HardwareSpec::Load("h100-sxm-80gb", Set("network.infiniband.oversubscription=2"));
        NS_TEST_EXPECT_MSG_EQ((got == expected), true, "fat tree 2:1 by dimension name");
        got = HardwareSpec::Load("h100-sxm-80gb", Set("network.dimensions[1].oversubscription=2"));
        NS_TEST_EXPECT_MSG_EQ((got == expected), true, "fat tree 2:1 by index");
        // Several at once; a count scaled; a field the preset does not give is added.
        expected = h100;
        expected.gpu.hbmBytes = 120ull << 30;
        expected.gpu.smCount = 66;
        expected.gpu.efficiency.hbm = 0.8;
        expected.network.dimensions[0].bandwidthBps = 900e9;
        expected.network.dimensions[0].collective = "ring";
        expected.network.routing = "ecmp";
        got = HardwareSpec::Load("h100-sxm-80gb",
                                 Set("gpu.hbm_gib=120, gpu.sm_count=0.5x,gpu.efficiency.hbm=0.8,"
                                     "network.nvlink.bandwidth_GBps=2x,"
                                     "network.nvlink.collective=ring,network.routing=ecmp"));
        NS_TEST_EXPECT_MSG_EQ((got == expected), true, "six overrides at once");
        // A network's optional list the preset does not give is added, as any absent field.
        expected = h100;
        expected.network.faults.push_back({"gpu0-nvlink.sw0", 0.5});
        got = HardwareSpec::Load("h100-sxm-80gb",
                                 Set("network.faults=[{link: gpu0-nvlink.sw0, "
                                     "bandwidth_factor: 0.5}]"));
        NS_TEST_EXPECT_MSG_EQ((got == expected), true, "a fault added to the network");
        // One list sets a path once: a second would silently win (found by fuzzing).
        NS_TEST_EXPECT_MSG_EQ(ThrowsWith<SpecError>(
                                  [&]()
                                  {
                                      Set("gpu.hbm_gib=100,gpu.sm_count=0.5x,gpu.hbm_gib=120");
                                  },
                                  {"'gpu.hbm_gib' is given twice", "give each path once"}),
                              true,
                              "a path set twice in one list");

        // The model: "model." paths; hardware overrides are skipped by the model and back.
        const ModelSpec llama = ModelSpec::Load("llama2-7b");
        ModelSpec expectedModel = llama;
        expectedModel.layers = 40;
        expectedModel.kvHeads = 8;
        const auto both = Set("model.layers=40,gpu.hbm_gib=160,model.kv_heads=8");
        NS_TEST_EXPECT_MSG_EQ((ModelSpec::Load("llama2-7b", both) == expectedModel),
                              true,
                              "model layers and kv_heads");
        expected = h100;
        expected.gpu.hbmBytes = 160ull << 30;
        NS_TEST_EXPECT_MSG_EQ((HardwareSpec::Load("h100-sxm-80gb", both) == expected),
                              true,
                              "model overrides skipped by the hardware");
        // A dense model made a mixture of experts by two overrides (a new section).
        expectedModel = llama;
        expectedModel.experts = 8;
        expectedModel.topK = 2;
        expectedModel.expertFfn = llama.ffn;
        NS_TEST_EXPECT_MSG_EQ(
            (ModelSpec::Load("llama2-7b", Set("model.moe.experts=8,model.moe.top_k=2"))
             == expectedModel),
            true,
            "moe section added");
        // A list value keeps its commas.
        const auto shape = Set("network.torus.shape=[4, 4],model.layers=2");
        NS_TEST_EXPECT_MSG_EQ(shape.size(), 2u, "commas inside [] belong to the value");
        NS_TEST_EXPECT_MSG_EQ((shape[0].GetTarget() == SpecOverride::Target::HARDWARE),
                              true,
                              "network paths target the hardware");
        NS_TEST_EXPECT_MSG_EQ((shape[1].GetTarget() == SpecOverride::Target::MODEL),
                              true,
                              "model paths target the model");
    }
};

/**
 * \brief Bad overrides give a SpecError naming the path, what is there and the value: bad
 * syntax, unknown fields (listing the known ones), bad values (the normal checks), unknown
 * dimension names (listing the dimensions), scales of what is not a number.
 */
class OverrideErrorTestCase : public TestCase
{
  public:
    OverrideErrorTestCase()
        : TestCase("bad overrides name the path, the fields there and the value")
    {}

  private:
    void
    DoRun() override
    {
        auto hw = [](const std::string& text)
        {
            return [text]()
            {
                HardwareSpec::Load("h100-sxm-80gb", Set(text));
            };
        };
        auto model = [](const std::string& text)
        {
            return [text]()
            {
                ModelSpec::Load("llama2-7b", Set(text));
            };
        };
        struct Case
        {
            std::string what;                 //!< the damage
            std::function<void()> parse;      //!< what throws
            std::vector<std::string> needles; //!< what the message names
        };

        const std::vector<Case> cases = {
            {"no '='", hw("gpu.hbm_gib"), {"gpu.hbm_gib", "PATH=VALUE", "set"}},
            {"no value", hw("gpu.hbm_gib="), {"gpu.hbm_gib=", "no value"}},
            {"empty entry", hw("gpu.hbm_gib=1,,"), {"empty entry"}},
            {"a model field without model.",
             model("hidden=8192"),
             {"hidden=8192", "model., gpu. or network.", "model.hidden"}},
            {"an empty component", hw("gpu..hbm_gib=1"), {"empty component"}},
            {"a whole section", hw("gpu=1"), {"gpu=1", "whole spec section"}},
            {"an unknown GPU field",
             hw("gpu.hbm_gbi=160"),
             {"preset 'h100-sxm-80gb'",
              "gpu.hbm_gbi",
              "unknown field",
              "hbm_gib",
              "hbm_bandwidth_GBps",
              "override 'gpu.hbm_gbi=160'"}},
            {"a value of the wrong type",
             hw("gpu.hbm_gib=abc"),
             {"gpu.hbm_gib", "expected a number", "abc", "override 'gpu.hbm_gib=abc'"}},
            {"a value out of range",
             hw("gpu.efficiency.hbm=1.5"),
             {"gpu.efficiency.hbm", "between 0.01 and 1", "1.5"}},
            {"a size that would wrap",
             hw("gpu.hbm_gib=1e308"),
             {"gpu.hbm_gib", "at most 1048576", "1e308"}},
            {"an unknown dimension",
             hw("network.ib.oversubscription=2"),
             {"network.ib.oversubscription", "'ib'", "nvlink, infiniband", "routing"}},
            {"a field of another topology",
             hw("network.nvlink.oversubscription=2"),
             {"network.dimensions[0].oversubscription", "unknown field", "bandwidth_GBps"}},
            {"an index out of range",
             hw("network.dimensions[5].size=2"),
             {"network.dimensions", "has 2 entries"}},
            {"a scale of text", hw("gpu.name=2x"), {"gpu.name", "scales a number", "NVIDIA H100"}},
            {"a scale of an absent field",
             hw("gpu.hbm_bandwith_GBps=0.5x"),
             {"hbm_bandwith_GBps", "(did you mean 'hbm_bandwidth_GBps'?)", "no number to scale"}},
            {"a scale that is not finite", hw("gpu.hbm_gib=infx"), {"finite"}},
            {"a count scaled to a fraction",
             hw("gpu.sm_count=0.3x"),
             {"gpu.sm_count", "whole number", "39.6", "gpu.sm_count=0.3x"}},
            {"a scale to zero", hw("gpu.clock_mhz=0x"), {"gpu.clock_mhz", "between 10", "got 0"}},
            {"a model field inconsistent with another",
             model("model.heads=7"),
             {"heads", "divisible", "model.heads=7"}},
            {"a model count beyond 32 bits",
             model("model.layers=4294967320"),
             {"layers", "4294967320", "from 1 to 4294967295"}},
        };
        for (const auto& c : cases)
        {
            NS_TEST_EXPECT_MSG_EQ(ThrowsWith(c.parse, c.needles), true, c.what);
        }
    }
};

/**
 * \brief `base:` inheritance: a file holding only the changed fields equals the hand-written
 * full copy and the preset with the override; lists of named mappings merge by name, other
 * lists are replaced; chains resolve, cycles and missing names are errors; an error in an
 * inherited field names the base file.
 */
class InheritanceTestCase : public TestCase
{
  public:
    InheritanceTestCase()
        : TestCase("base: inheritance equals the hand-written copy")
    {}

  private:
    void
    DoRun() override
    {
        ScratchDir dir("spec-base");
        const std::string h100Text = Preset("hardware", "h100-sxm-80gb");

        // The H100 with half the HBM bandwidth, three ways.
        const std::string variant = dir.Put("h100-half.yaml",
                                            "base: h100-sxm-80gb\n"
                                            "name: h100-hbm-half\n"
                                            "gpu:\n"
                                            "  hbm_bandwidth_GBps: 1675\n");
        const HardwareSpec inherited = HardwareSpec::Load(variant);
        const HardwareSpec copy = HardwareSpec::Parse(
            With(With(h100Text, "hbm_bandwidth_GBps: 3350", "hbm_bandwidth_GBps: 1675"),
                 "name: h100-sxm-80gb",
                 "name: h100-hbm-half"),
            "copy.yaml");
        HardwareSpec overridden =
            HardwareSpec::Load("h100-sxm-80gb", Set("gpu.hbm_bandwidth_GBps=0.5x"));
        overridden.name = "h100-hbm-half";
        NS_TEST_EXPECT_MSG_EQ((inherited == copy), true, "base: equals the full copy");
        NS_TEST_EXPECT_MSG_EQ((inherited == overridden), true, "base: equals the override");
        NS_TEST_EXPECT_MSG_EQ(inherited.name, "h100-hbm-half", "the variant's own name");
        // Reports name the variant beside the part it derives from; a preset by its part.
        NS_TEST_EXPECT_MSG_EQ(
            inherited.GpuLabel(), "NVIDIA H100-SXM5-80GB (h100-hbm-half)", "the header's GPU");
        NS_TEST_EXPECT_MSG_EQ(
            HardwareSpec::Load("h100-sxm-80gb").GpuLabel(), "NVIDIA H100-SXM5-80GB", "a preset's");

        // A dimension changed by name: the other dimension and its other fields stay.
        const std::string oversub = dir.Put("h100-2to1.yaml",
                                            "base: h100-sxm-80gb\n"
                                            "name: h100-2to1\n"
                                            "network:\n"
                                            "  dimensions:\n"
                                            "    - name: infiniband\n"
                                            "      oversubscription: 2\n");
        HardwareSpec expected =
            HardwareSpec::Load("h100-sxm-80gb", Set("network.infiniband.oversubscription=2"));
        expected.name = "h100-2to1";
        NS_TEST_EXPECT_MSG_EQ(
            (HardwareSpec::Load(oversub) == expected), true, "dimensions merged by name");

        // `~` removes the base's value: an optional section reads as absent, a required field
        // as missing, named at the inheriting file's line.
        const std::string unpowered = dir.Put(
            "h100-unpowered.yaml", "base: h100-sxm-80gb\nname: unpowered\ngpu:\n  power: ~\n");
        NS_TEST_EXPECT_MSG_EQ(HardwareSpec::Load(unpowered).gpu.power.Has(),
                              false,
                              "no power model without the base's");
        NS_TEST_EXPECT_MSG_EQ(HardwareSpec::Load("h100-sxm-80gb").gpu.power.Has(), true, "");
        const std::string unsized = dir.Put(
            "h100-unsized.yaml", "base: h100-sxm-80gb\nname: unsized\ngpu:\n  sm_count: ~\n");
        const std::string why = ErrorOf(
            [&]()
            {
                HardwareSpec::Load(unsized);
            });
        for (const char* needle :
             {"h100-unsized.yaml:4", "field 'gpu.sm_count'", "missing required field"})
        {
            NS_TEST_EXPECT_MSG_NE(why.find(needle), std::string::npos, "a required field: " + why);
        }
        // A dimension's name misspelt in an inheriting file: named as such, not appended as a
        // new dimension (which then broke the base's outermost 'auto' size).
        const std::string dimTypo = dir.Put("h100-dimtypo.yaml",
                                            "base: h100-sxm-80gb\nname: dimtypo\nnetwork:\n"
                                            "  dimensions:\n    - name: nvlnk\n"
                                            "      bandwidth_GBps: 900\n");
        const std::string dimWhy = ErrorOf(
            [&]()
            {
                HardwareSpec::Load(dimTypo);
            });
        NS_TEST_EXPECT_MSG_NE(dimWhy.find("h100-dimtypo.yaml:5"), std::string::npos, dimWhy);
        NS_TEST_EXPECT_MSG_NE(dimWhy.find("is it 'nvlink' misspelt?"), std::string::npos, dimWhy);
        // Truncated too (it was taken for a new dimension, as infiniband2 is).
        const std::string dimCut = dir.Put("h100-dimcut.yaml",
                                           "base: h100-sxm-80gb\nname: dimcut\nnetwork:\n"
                                           "  dimensions:\n    - name: infiniban\n"
                                           "      bandwidth_GBps: 25\n");
        const std::string cutWhy = ErrorOf(
            [&]()
            {
                HardwareSpec::Load(dimCut);
            });
        NS_TEST_EXPECT_MSG_NE(
            cutWhy.find("is it 'infiniband' misspelt?"), std::string::npos, cutWhy);
        // A required field misspelt: the error names the misspelling and its line.
        const std::string typo =
            dir.Put("h100-typo.yaml",
                    "base: h100-sxm-80gb\nname: typo\ngpu:\n  sm_count: ~\n  sm_cuont: 132\n");
        const std::string misspelt = ErrorOf(
            [&]()
            {
                HardwareSpec::Load(typo);
            });
        NS_TEST_EXPECT_MSG_NE(misspelt.find("is 'sm_cuont', line 5, a misspelling of it?"),
                              std::string::npos,
                              misspelt);

        // A dimension of another kind: `~` removes the fat tree's own fields, which a torus
        // does not have (they were unknown fields); a misspelt one still is, at its line, as
        // any unknown field of an inheriting file is.
        const std::string torus = dir.Put("a100-torus.yaml",
                                          "base: a100-sxm-80gb\nname: torus\nnetwork:\n"
                                          "  dimensions:\n    - name: infiniband\n"
                                          "      topology: torus\n      shape: [4, 4]\n"
                                          "      size: 16\n      leaf_size: ~\n"
                                          "      oversubscription: ~\n");
        NS_TEST_EXPECT_MSG_EQ(int(HardwareSpec::Load(torus).network.dimensions.at(1).kind),
                              int(TopologyKind::TORUS),
                              "a fat tree made a torus");
        for (const char* line : {"      oversubscriptoin: ~\n", "      bandwith_GBps: 100\n"})
        {
            const std::string typo =
                dir.Put("a100-typo.yaml",
                        std::string("base: a100-sxm-80gb\nname: typo\nnetwork:\n  dimensions:\n"
                                    "    - name: infiniband\n")
                            + line);
            const std::string err = ErrorOf(
                [&]()
                {
                    HardwareSpec::Load(typo);
                });
            NS_TEST_EXPECT_MSG_NE(err.find("a100-typo.yaml:6: field"), std::string::npos, err);
            NS_TEST_EXPECT_MSG_NE(err.find("unknown field"), std::string::npos, err);
        }

        // A chain: a file over a file over a preset, the middle one by a relative path.
        dir.Put("chain/middle.yaml",
                "base: h100-sxm-80gb\nname: middle\ngpu:\n  hbm_bandwidth_GBps: 1675\n");
        const std::string top =
            dir.Put("chain/top.yaml", "base: middle.yaml\nname: top\ngpu:\n  hbm_gib: 160\n");
        expected =
            HardwareSpec::Load("h100-sxm-80gb", Set("gpu.hbm_bandwidth_GBps=0.5x,gpu.hbm_gib=160"));
        expected.name = "top";
        NS_TEST_EXPECT_MSG_EQ((HardwareSpec::Load(top) == expected), true, "a chain of bases");
        // Overrides apply after inheritance.
        expected.gpu.hbmBytes = 40ull << 30;
        NS_TEST_EXPECT_MSG_EQ((HardwareSpec::Load(top, Set("gpu.hbm_gib=0.25x")) == expected),
                              true,
                              "overrides over a base chain");

        // A new dimension name is appended; a list of unnamed entries (faults) is replaced.
        const std::string own = With(With(h100Text, "size: auto", "size: 4"),
                                     "routing: dimension-order",
                                     "routing: dimension-order\n  faults:\n"
                                     "    - {link: gpu0-gpu1, bandwidth_factor: 0.5}\n"
                                     "    - {link: gpu2-gpu3, bandwidth_factor: 0.5}");
        const std::string ownPath = dir.Put("own.yaml", own);
        const std::string grown = dir.Put("grown.yaml",
                                          "base: own.yaml\n"
                                          "name: grown\n"
                                          "network:\n"
                                          "  faults:\n"
                                          "    - {link: gpu4-gpu5, bandwidth_factor: 0}\n"
                                          "  dimensions:\n"
                                          "    - name: ethernet\n"
                                          "      topology: ring\n"
                                          "      size: auto\n"
                                          "      bandwidth_GBps: 25\n"
                                          "      latency_ns: 5000\n");
        const HardwareSpec g = HardwareSpec::Load(grown);
        const HardwareSpec o = HardwareSpec::Load(ownPath);
        RAPIDLLM_REQUIRE_EQ(g.network.dimensions.size(), 3u, "a dimension appended");
        NS_TEST_EXPECT_MSG_EQ((g.network.dimensions[0] == o.network.dimensions[0]
                               && g.network.dimensions[1] == o.network.dimensions[1]),
                              true,
                              "the base's dimensions kept in order");
        NS_TEST_EXPECT_MSG_EQ(g.network.dimensions[2].name, "ethernet", "the new one outermost");
        NS_TEST_EXPECT_MSG_EQ(g.network.dimensions[2].size, 0u, "auto size");
        RAPIDLLM_REQUIRE_EQ(g.network.faults.size(), 1u, "faults replaced as a whole");
        NS_TEST_EXPECT_MSG_EQ(g.network.faults[0].link, "gpu4-gpu5", "the file's fault");
        NS_TEST_EXPECT_MSG_EQ(o.network.faults.size(), 2u, "the base has two");

        // Models: a preset base, and a Hugging Face config as base.
        const std::string deep =
            dir.Put("deep.yaml", "base: llama2-7b\nname: llama2-deep\nlayers: 40\n");
        ModelSpec expectedModel = ModelSpec::Load("llama2-7b", Set("model.layers=40"));
        expectedModel.name = "llama2-deep";
        NS_TEST_EXPECT_MSG_EQ((ModelSpec::Load(deep) == expectedModel), true, "model base");
        NS_TEST_EXPECT_MSG_EQ(
            (ModelSpec::Parse("base: llama2-7b\nname: llama2-deep\nlayers: 40\n", "text")
             == expectedModel),
            true,
            "model base from text");
        const std::string fromHf =
            dir.Put("from-hf.yaml", "base: " + HfConfig("Llama-2-7b-hf") + "\nname: llama2-7b\n");
        NS_TEST_EXPECT_MSG_EQ((ModelSpec::Load(fromHf) == ModelSpec::Load("llama2-7b")),
                              true,
                              "a Hugging Face config as base");

        // Errors.
        dir.Put("x.yaml", "base: y.yaml\nname: x\n");
        dir.Put("y.yaml", "base: x.yaml\nname: y\n");
        const std::string self = dir.Put("self.yaml", "base: self.yaml\nname: s\n");
        const std::string nameless = dir.Put("nameless.yaml", "base: h100-sxm-80gb\n");
        const std::string missing = dir.Put("missing.yaml", "base: nowhere.yaml\nname: m\n");
        const std::string badBase =
            dir.Put("bad-base.yaml", With(h100Text, "  hbm_gib: 79.65", "  hbm_gib: -80"));
        // The line of the bad field in the base file, counted from the preset's text.
        const std::string badLine =
            "bad-base.yaml:"
            + std::to_string(1
                             + std::count(h100Text.begin(),
                                          h100Text.begin() + h100Text.find("  hbm_gib: 79.65"),
                                          '\n'));
        const std::string overBad =
            dir.Put("over-bad.yaml", "base: bad-base.yaml\nname: o\ngpu:\n  sm_count: 100\n");
        const std::string dup = dir.Put("dup.yaml",
                                        "base: h100-sxm-80gb\nname: d\nnetwork:\n  dimensions:\n"
                                        "    - {name: nvlink, size: 4}\n"
                                        "    - {name: nvlink, size: 2}\n");
        const std::string x = dir.Path() + "/x.yaml";
        NS_TEST_EXPECT_MSG_EQ(ThrowsWith(
                                  [&]()
                                  {
                                      HardwareSpec::Load(x);
                                  },
                                  {"cycle", "x.yaml -> ", "y.yaml -> ", "base"}),
                              true,
                              "a cycle names the chain");
        NS_TEST_EXPECT_MSG_EQ(ThrowsWith(
                                  [&]()
                                  {
                                      HardwareSpec::Load(self);
                                  },
                                  {"cycle", "self.yaml -> "}),
                              true,
                              "a file that is its own base");
        NS_TEST_EXPECT_MSG_EQ(ThrowsWith(
                                  [&]()
                                  {
                                      HardwareSpec::Load(nameless);
                                  },
                                  {"nameless.yaml", "name", "gives its own name"}),
                              true,
                              "a variant without a name");
        NS_TEST_EXPECT_MSG_EQ(ThrowsWith(
                                  [&]()
                                  {
                                      HardwareSpec::Load(missing);
                                  },
                                  {"missing.yaml:1", "base", "nowhere.yaml"}),
                              true,
                              "a base that does not exist");
        NS_TEST_EXPECT_MSG_EQ(ThrowsWith(
                                  [&]()
                                  {
                                      HardwareSpec::Load(overBad);
                                  },
                                  {badLine, "gpu.hbm_gib", "-80"}),
                              true,
                              "an inherited bad field names the base file and its line");
        NS_TEST_EXPECT_MSG_EQ(ThrowsWith(
                                  [&]()
                                  {
                                      HardwareSpec::Load(dup);
                                  },
                                  {"dup.yaml", "nvlink", "twice"}),
                              true,
                              "a name given twice cannot merge by name");
        NS_TEST_EXPECT_MSG_EQ(ThrowsWith(
                                  [&]()
                                  {
                                      HardwareSpec::Parse("base: [1]\nname: x\n", "list.yaml");
                                  },
                                  {"list.yaml:1", "base", "preset name or a file path"}),
                              true,
                              "a base that is not a name");
    }
};

/**
 * \brief Hugging Face configs: Llama-2-7B's equals the llama2-7b preset and Mixtral's the
 * mixtral-8x7b preset (all but the name); Qwen2-7B, GPT-2 and GPT-NeoX-20B have their
 * published parameter counts; what ModelSpec cannot represent is an error naming the key.
 */
class HuggingFaceTestCase : public TestCase
{
  public:
    HuggingFaceTestCase()
        : TestCase("Hugging Face configs load as the presets and published sizes")
    {}

  private:
    void
    DoRun() override
    {
        ModelSpec llama = ModelSpec::Load(HfConfig("Llama-2-7b-hf"));
        NS_TEST_EXPECT_MSG_EQ(llama.name, "Llama-2-7b-hf", "named after its folder");
        llama.name = "llama2-7b";
        NS_TEST_EXPECT_MSG_EQ((llama == ModelSpec::Load("llama2-7b")), true, "Llama-2-7B");
        // Published: 6,738,415,616 parameters (meta-llama/Llama-2-7b-hf safetensors index).
        NS_TEST_EXPECT_MSG_EQ(llama.ParameterCount(), 6738415616ull, "Llama-2-7B size");

        ModelSpec mixtral = ModelSpec::Load(HfConfig("Mixtral-8x7B-v0.1"));
        mixtral.name = "mixtral-8x7b";
        NS_TEST_EXPECT_MSG_EQ((mixtral == ModelSpec::Load("mixtral-8x7b")), true, "Mixtral");

        // Qwen2-7B: published 7,615,616,512 parameters, of which the Q/K/V biases we do not
        // count are 28 layers x (3584 + 2 x 4 x 128).
        const ModelSpec qwen = ModelSpec::Load(HfConfig("Qwen2-7B"));
        NS_TEST_EXPECT_MSG_EQ(qwen.layers, 28u, "Qwen2 layers");
        NS_TEST_EXPECT_MSG_EQ(qwen.kvHeads, 4u, "Qwen2 GQA");
        NS_TEST_EXPECT_MSG_EQ(qwen.headDim, 128u, "Qwen2 head width 3584 / 28");
        NS_TEST_EXPECT_MSG_EQ((qwen.position == PositionEmbedding::ROPE && qwen.IsGated()
                               && qwen.norm == NormType::RMS_NORM && !qwen.bias
                               && !qwen.tiedEmbeddings && !qwen.IsMoe()),
                              true,
                              "Qwen2 architecture");
        NS_TEST_EXPECT_MSG_EQ(
            qwen.ParameterCount(), 7615616512ull - 28ull * (3584 + 2 * 4 * 128), "Qwen2-7B size");

        // Qwen3: the MoE config gives the qwen3-30b-a3b preset (its dense intermediate_size is
        // unused: every layer is MoE); Qwen3-8B has its published 6.95 B parameters outside the
        // embeddings (QK-norm's 2 x 128 weights a layer are not counted).
        ModelSpec qwen3Moe = ModelSpec::Load(HfConfig("Qwen3-30B-A3B"));
        qwen3Moe.name = "qwen3-30b-a3b";
        NS_TEST_EXPECT_MSG_EQ(
            (qwen3Moe == ModelSpec::Load("qwen3-30b-a3b")), true, "Qwen3-30B-A3B preset");
        const ModelSpec qwen3 = ModelSpec::Load(HfConfig("Qwen3-8B"));
        NS_TEST_EXPECT_MSG_EQ((qwen3.headDim == 128 && qwen3.kvHeads == 8 && !qwen3.bias
                               && !qwen3.tiedEmbeddings && !qwen3.IsMoe()),
                              true,
                              "Qwen3-8B architecture");
        const double nonEmbedding =
            double(qwen3.ParameterCount() - 2ull * qwen3.vocab * qwen3.hidden);
        NS_TEST_EXPECT_MSG_EQ_TOL(nonEmbedding / 1e9, 6.95, 0.01, "Qwen3-8B without embeddings");

        // GPT-2 small: published 124,439,808 parameters (tied embeddings, learned positions).
        const ModelSpec gpt2 = ModelSpec::Load(HfConfig("gpt2"));
        NS_TEST_EXPECT_MSG_EQ(gpt2.ParameterCount(), 124439808ull, "GPT-2 size");
        NS_TEST_EXPECT_MSG_EQ((gpt2.position == PositionEmbedding::LEARNED && !gpt2.IsGated()
                               && gpt2.norm == NormType::LAYER_NORM && gpt2.bias
                               && gpt2.tiedEmbeddings && gpt2.dropout && gpt2.ffn == 3072
                               && gpt2.maxSequence == 1024),
                              true,
                              "GPT-2 architecture");

        // GPT-NeoX-20B (EleutherAI/gpt-neox-20b config.json): Black et al. 2022 give
        // 20,554,567,680 parameters. Given as text (content sniffing, no .json name).
        const std::string neox =
            R"({"architectures": ["GPTNeoXForCausalLM"], "bos_token_id": 0, "eos_token_id": 0,
                "hidden_act": "gelu_fast", "hidden_size": 6144, "initializer_range": 0.02,
                "intermediate_size": 24576, "layer_norm_eps": 1e-05,
                "max_position_embeddings": 2048, "model_type": "gpt_neox",
                "num_attention_heads": 64, "num_hidden_layers": 44, "rotary_emb_base": 10000,
                "rotary_pct": 0.25, "tie_word_embeddings": false, "torch_dtype": "float16",
                "transformers_version": "4.24.0.dev0", "use_cache": true,
                "use_parallel_residual": true, "vocab_size": 50432})";
        const ModelSpec neox20b = ModelSpec::Parse(neox, "gpt-neox-20b");
        NS_TEST_EXPECT_MSG_EQ(neox20b.ParameterCount(), 20554567680ull, "GPT-NeoX-20B size");
        NS_TEST_EXPECT_MSG_EQ((neox20b.position == PositionEmbedding::ROPE), true, "NeoX rotary");

        // Qwen1.5-MoE-A2.7B (Qwen/Qwen1.5-MoE-A2.7B config.json; the Qwen team's release post
        // "Qwen1.5-MoE: Matching 7B Model Performance with 1/3 Activated Parameters" gives 14.3 B
        // parameters): 60 experts of width 1408, top-4, one shared expert of width 5632.
        const std::string qwenMoe =
            R"({"architectures": ["Qwen2MoeForCausalLM"], "model_type": "qwen2_moe",
                "hidden_size": 2048, "intermediate_size": 5632, "num_hidden_layers": 24,
                "num_attention_heads": 16, "num_key_value_heads": 16, "vocab_size": 151936,
                "max_position_embeddings": 8192, "num_experts": 60, "num_experts_per_tok": 4,
                "moe_intermediate_size": 1408, "shared_expert_intermediate_size": 5632,
                "decoder_sparse_step": 1, "use_sliding_window": false, "sliding_window": 32768,
                "tie_word_embeddings": false, "hidden_act": "silu"})";
        const ModelSpec a27 = ModelSpec::Parse(qwenMoe, "qwen1.5-moe-a2.7b");
        NS_TEST_EXPECT_MSG_EQ_TOL(a27.ParameterCount() / 1e9, 14.3, 0.05, "Qwen1.5-MoE size");
        NS_TEST_EXPECT_MSG_EQ((a27.experts == 60 && a27.topK == 4 && a27.expertFfn == 1408
                               && a27.sharedExpertFfn == 5632 && a27.MoeLayers() == 24),
                              true,
                              "Qwen1.5-MoE architecture");
        // Dense layers first (mlp_only_layers 0 and 1), then every second layer a MoE one: the
        // dense layers' MLP is intermediate_size wide.
        const ModelSpec mixed =
            ModelSpec::Parse(With(qwenMoe,
                                  R"("decoder_sparse_step": 1,)",
                                  R"("decoder_sparse_step": 2, "mlp_only_layers": [0, 1],)"),
                             "mixed");
        NS_TEST_EXPECT_MSG_EQ((mixed.firstDenseLayers == 2 && mixed.moeLayerStep == 2
                               && mixed.ffn == 5632 && !mixed.IsMoeLayer(0) && !mixed.IsMoeLayer(1)
                               && !mixed.IsMoeLayer(2) && mixed.IsMoeLayer(3)
                               && mixed.MoeLayers() == 11),
                              true,
                              "layers 3, 5, ..., 23 are MoE");
        NS_TEST_EXPECT_MSG_EQ(ThrowsWith(
                                  [&]
                                  {
                                      ModelSpec::Parse(With(qwenMoe,
                                                            R"("decoder_sparse_step": 1,)",
                                                            R"("mlp_only_layers": [1, 5],)"),
                                                       "odd");
                                  },
                                  {"mlp_only_layers", "first ones"}),
                              true,
                              "dense layers in the middle are refused");

        // DeepSeek-V3 and DeepSeek-V2-Lite (deepseek-ai's config.json files): multi-head latent
        // attention, shared and routed experts after leading dense layers; they give the
        // presets, whose sizes (671B, 15.7B) the preset test checks against the papers.
        const std::string v3 =
            R"({"architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3",
                "hidden_size": 7168, "intermediate_size": 18432, "num_hidden_layers": 61,
                "num_attention_heads": 128, "num_key_value_heads": 128, "vocab_size": 129280,
                "max_position_embeddings": 163840, "q_lora_rank": 1536, "kv_lora_rank": 512,
                "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128,
                "n_routed_experts": 256, "n_shared_experts": 1, "num_experts_per_tok": 8,
                "moe_intermediate_size": 2048, "first_k_dense_replace": 3, "moe_layer_freq": 1,
                "num_nextn_predict_layers": 1, "hidden_act": "silu", "attention_bias": false,
                "tie_word_embeddings": false})";
        ModelSpec deepseekV3 = ModelSpec::Parse(v3, "deepseek-v3");
        NS_TEST_EXPECT_MSG_EQ((deepseekV3.IsMla() && deepseekV3.headDim == 192
                               && deepseekV3.ValueDim() == 128 && deepseekV3.MoeLayers() == 58),
                              true,
                              "DeepSeek-V3 architecture");
        NS_TEST_EXPECT_MSG_EQ((deepseekV3 == ModelSpec::Load("deepseek-v3")), true, "V3 preset");
        const std::string lite =
            R"({"architectures": ["DeepseekV2ForCausalLM"], "model_type": "deepseek_v2",
                "hidden_size": 2048, "intermediate_size": 10944, "num_hidden_layers": 27,
                "num_attention_heads": 16, "num_key_value_heads": 16, "vocab_size": 102400,
                "max_position_embeddings": 163840, "q_lora_rank": null, "kv_lora_rank": 512,
                "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128,
                "n_routed_experts": 64, "n_shared_experts": 2, "num_experts_per_tok": 6,
                "moe_intermediate_size": 1408, "first_k_dense_replace": 1, "moe_layer_freq": 1,
                "hidden_act": "silu", "attention_bias": false, "tie_word_embeddings": false})";
        ModelSpec v2Lite = ModelSpec::Parse(lite, "deepseek-v2-lite");
        NS_TEST_EXPECT_MSG_EQ((v2Lite.qLoraRank == 0 && v2Lite.sharedExpertFfn == 2816),
                              true,
                              "V2-Lite: no query latent, two shared experts as one MLP");
        NS_TEST_EXPECT_MSG_EQ((v2Lite == ModelSpec::Load("deepseek-v2-lite")), true, "the preset");
        NS_TEST_EXPECT_MSG_EQ(
            ThrowsWith(
                [&]
                {
                    ModelSpec::Parse(With(v3, "\"moe_layer_freq\": 1", "\"moe_layer_freq\": 2"),
                                     "freq");
                },
                {"moe_layer_freq", "allowed: 1"}),
            true,
            "MoE on every second layer is refused");
        NS_TEST_EXPECT_MSG_EQ(ThrowsWith(
                                  [&]
                                  {
                                      ModelSpec::Parse(With(v3,
                                                            "\"num_key_value_heads\": 128",
                                                            "\"num_key_value_heads\": 8"),
                                                       "gqa");
                                  },
                                  {"num_key_value_heads", "allowed: num_attention_heads (128)"}),
                              true,
                              "latent attention with grouped KV heads is refused");
        const std::string mlaYaml = "name: m\nlayers: 2\nhidden: 256\nheads: 4\nhead_dim: 48\n"
                                    "ffn: 512\nactivation: swiglu\nnorm: rmsnorm\n"
                                    "position: rope\nvocab: 1000\nmax_sequence: 512\n"
                                    "mla:\n  kv_lora_rank: 64\n  rope_head_dim: 16\n";
        const ModelSpec small = ModelSpec::Parse(mlaYaml, "mla.yaml");
        NS_TEST_EXPECT_MSG_EQ((small.kvHeads == 4 && small.ValueDim() == 48), true, "defaults");
        // V3's multi-token prediction module (num_nextn_predict_layers); a model file's
        // mtp_layers, within its range.
        NS_TEST_EXPECT_MSG_EQ(
            (deepseekV3.mtpLayers == 1 && v2Lite.mtpLayers == 0 && small.mtpLayers == 0),
            true,
            "one module in V3, none in V2-Lite or by default");
        NS_TEST_EXPECT_MSG_EQ(
            ModelSpec::Parse(mlaYaml + "mtp_layers: 2\n", "mtp.yaml").mtpLayers, 2u, "two depths");
        NS_TEST_EXPECT_MSG_EQ(ThrowsWith(
                                  [&]
                                  {
                                      ModelSpec::Parse(mlaYaml + "mtp_layers: 17\n", "mtp.yaml");
                                  },
                                  {"mtp.yaml", "mtp_layers", "allowed: 0 to 16"}),
                              true,
                              "more depths than allowed");
        NS_TEST_EXPECT_MSG_EQ(ThrowsWith(
                                  [&]
                                  {
                                      ModelSpec::Parse(
                                          With(mlaYaml, "rope_head_dim: 16", "rope_head_dim: 48"),
                                          "mla.yaml");
                                  },
                                  {"mla.yaml", "rope_head_dim", "allowed: 0 to head_dim - 1"}),
                              true,
                              "a rotary part as wide as the head");
        NS_TEST_EXPECT_MSG_EQ(ThrowsWith(
                                  [&]
                                  {
                                      ModelSpec::Parse(
                                          With(mlaYaml, "heads: 4\n", "heads: 4\nkv_heads: 2\n"),
                                          "mla.yaml");
                                  },
                                  {"mla.yaml", "kv_heads", "must equal heads (4)"}),
                              true,
                              "latent attention with fewer KV heads");
        NS_TEST_EXPECT_MSG_EQ(ThrowsWith(
                                  [&]
                                  {
                                      ModelSpec::Parse(
                                          With(mlaYaml, "position: rope", "position: learned"),
                                          "mla.yaml");
                                  },
                                  {"mla.yaml", "rope_head_dim", "need position: rope"}),
                              true,
                              "a rotary part without rotary positions");
        // A check across fields names the line of the field it blames.
        NS_TEST_EXPECT_MSG_EQ(ThrowsWith(
                                  [&]
                                  {
                                      ModelSpec::Parse("name: t\nlayers: 2\nhidden: 512\nheads: "
                                                       "8\nkv_heads: 3\nffn: 1024\nactivation: "
                                                       "gelu\nnorm: layernorm\nposition: "
                                                       "learned\nvocab: 100\nmax_sequence: 64\n",
                                                       "kv.yaml");
                                  },
                                  {"kv.yaml:5: field 'kv_heads'", "multiple of kv_heads (3)"}),
                              true,
                              "the line of kv_heads");

        // gpt-oss-120b (openai/gpt-oss-120b config.json; OpenAI's model card gives 116.8 B
        // parameters): 128 experts of width 2880, top-4, biases, a 128-token window on every
        // other layer (layer_types).
        std::string types;
        for (int i = 0; i < 36; ++i)
        {
            types += std::string(i > 0 ? ", " : "")
                     + (i % 2 == 0 ? "\"sliding_attention\"" : "\"full_attention\"");
        }
        const std::string oss =
            R"({"architectures": ["GptOssForCausalLM"], "model_type": "gpt_oss",
                "hidden_size": 2880, "intermediate_size": 2880, "num_hidden_layers": 36,
                "num_local_experts": 128, "num_experts_per_tok": 4, "num_attention_heads": 64,
                "num_key_value_heads": 8, "head_dim": 64, "sliding_window": 128,
                "hidden_act": "silu", "max_position_embeddings": 131072,
                "attention_bias": true, "attention_dropout": 0.0, "vocab_size": 201088,
                "tie_word_embeddings": false, "layer_types": [)"
            + types + "]}";
        const ModelSpec gptOss = ModelSpec::Parse(oss, "gpt-oss-120b");
        NS_TEST_EXPECT_MSG_EQ_TOL(gptOss.ParameterCount() / 1e9, 116.8, 0.05, "gpt-oss-120b size");
        NS_TEST_EXPECT_MSG_EQ((gptOss.WindowOf(0) == 128 && gptOss.WindowOf(1) == 0
                               && gptOss.windowPattern == 2 && gptOss.experts == 128
                               && gptOss.topK == 4 && gptOss.bias),
                              true,
                              "gpt-oss-120b architecture");
        NS_TEST_EXPECT_MSG_EQ((gptOss == ModelSpec::Load("gpt-oss-120b")), true, "the preset");
        NS_TEST_EXPECT_MSG_EQ(
            ThrowsWith(
                [&]
                {
                    std::string odd = oss;
                    odd.replace(odd.find("\"full_attention\""), 16, "\"sliding_attention\"");
                    ModelSpec::Parse(odd, "odd");
                },
                {"layer_types", "every k-th", "layer 5"}),
            true,
            "an irregular window arrangement");
        NS_TEST_EXPECT_MSG_EQ(ThrowsWith(
                                  [&]
                                  {
                                      ModelSpec::Parse(With(oss,
                                                            "\"num_hidden_layers\": 36",
                                                            "\"num_hidden_layers\": 12"),
                                                       "short");
                                  },
                                  {"layer_types", "36 entries", "num_hidden_layers = 12"}),
                              true,
                              "layer_types of another length");

        // Gemma 2 9B (google/gemma-2-9b config.json; the Gemma 2 report gives 8,324,201,984
        // non-embedding and 917,962,752 embedding parameters): a GELU-gated MLP, tied
        // embeddings, a 4,096-token window on every other layer. Its extra post-norms (2 x
        // 3,584 weights a layer) are not counted.
        const std::string gemma2 =
            R"({"architectures": ["Gemma2ForCausalLM"], "model_type": "gemma2",
                "hidden_size": 3584, "intermediate_size": 14336, "num_hidden_layers": 42,
                "num_attention_heads": 16, "num_key_value_heads": 8, "head_dim": 256,
                "hidden_activation": "gelu_pytorch_tanh", "max_position_embeddings": 8192,
                "sliding_window": 4096, "vocab_size": 256000})";
        const ModelSpec g2 = ModelSpec::Parse(gemma2, "gemma-2-9b");
        NS_TEST_EXPECT_MSG_EQ_TOL(g2.ParameterCount() / 9242164736.0, 1.0, 1e-4, "Gemma 2 9B size");
        NS_TEST_EXPECT_MSG_EQ((g2.activation == Activation::GEGLU && g2.IsGated()
                               && g2.tiedEmbeddings && g2.WindowOf(0) == 4096
                               && g2.WindowOf(1) == 0),
                              true,
                              "Gemma 2 architecture");
        const ModelSpec g3 = ModelSpec::Parse(
            R"({"model_type": "gemma3_text", "hidden_size": 64, "num_hidden_layers": 12,
                "num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 100,
                "max_position_embeddings": 64, "sliding_window": 16})",
            "gemma-3");
        NS_TEST_EXPECT_MSG_EQ((g3.WindowOf(4) == 16 && g3.WindowOf(5) == 0 && g3.WindowOf(11) == 0
                               && g3.WindowOf(6) == 16),
                              true,
                              "Gemma 3: every sixth layer full");

        // Overrides apply to a config as to a YAML model.
        ModelSpec shallow = ModelSpec::Load(HfConfig("Llama-2-7b-hf"), Set("model.layers=16"));
        NS_TEST_EXPECT_MSG_EQ(shallow.layers, 16u, "override of a config");

        // What cannot be represented.
        ScratchDir dir("spec-hf");
        const std::string llamaText = R"({"model_type": "llama", "hidden_size": 64,
            "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 128,
            "vocab_size": 100, "max_position_embeddings": 64})";
        // Mistral v0.1 windows every layer (sliding_window shorter than the positions); a
        // window as long as the positions is full attention.
        const ModelSpec mistral = ModelSpec::Parse(
            With(llamaText, "\"llama\"", "\"mistral\", \"sliding_window\": 32"), "mistral");
        NS_TEST_EXPECT_MSG_EQ(mistral.slidingWindow, 32u, "Mistral's window");
        NS_TEST_EXPECT_MSG_EQ(
            (mistral.WindowOf(0) == 32 && mistral.WindowOf(1) == 32), true, "every layer windowed");
        const ModelSpec unwindowed = ModelSpec::Parse(
            With(llamaText, "\"llama\"", "\"mistral\", \"sliding_window\": 64"), "mistral");
        NS_TEST_EXPECT_MSG_EQ(unwindowed.HasWindow(), false, "a window of every position");
        // transformers' Llama ignores a sliding_window key (it windowed every layer here).
        NS_TEST_EXPECT_MSG_EQ(
            ModelSpec::Parse(With(llamaText, "\"llama\"", "\"llama\", \"sliding_window\": 32"),
                             "llama")
                .HasWindow(),
            false,
            "Llama ignores sliding_window");
        // gpt-oss without layer_types: its config class's default, every other layer windowed.
        std::string ossDefault = oss.substr(0, oss.find(", \"layer_types\"")) + "}";
        const ModelSpec ossNoTypes = ModelSpec::Parse(ossDefault, "gpt-oss");
        NS_TEST_EXPECT_MSG_EQ((ossNoTypes.WindowOf(0) == 128 && ossNoTypes.WindowOf(1) == 0),
                              true,
                              "gpt-oss's default layer types");
        struct Case
        {
            std::string what;                 //!< the damage
            std::string text;                 //!< the config
            std::vector<std::string> needles; //!< what the message names
        };

        const std::vector<Case> cases = {
            {"another family",
             With(llamaText, "\"llama\"", "\"bert\""),
             {"model_type",
              "'bert'",
              "llama, mistral, mixtral, qwen2, qwen2_moe, qwen3, qwen3_moe, gpt2"}},
            {"an unknown architecture",
             R"({"architectures": ["BertModel"]})",
             {"architectures", "BertModel", "LlamaForCausalLM"}},
            {"Qwen2's sliding window on the upper layers",
             With(llamaText,
                  "\"llama\"",
                  "\"qwen2\", \"use_sliding_window\": true, \"sliding_window\": 32"),
             {"sliding_window", "32", "max_window_layers", "use_sliding_window"}},
            {"a GELU-gated Llama",
             With(llamaText, "\"llama\"", "\"llama\", \"hidden_act\": \"gelu\""),
             {"hidden_act", "gelu", "silu"}},
            {"attention biases without MLP biases",
             With(llamaText, "\"llama\"", "\"llama\", \"attention_bias\": true"),
             {"mlp_bias", "attention_bias"}},
            {"a count as text",
             With(llamaText, "\"num_hidden_layers\": 2", "\"num_hidden_layers\": \"2\""),
             {"num_hidden_layers", "expected a whole number", "\"2\""}},
            {"a count beyond 32 bits",
             With(llamaText, "\"hidden_size\": 64", "\"hidden_size\": 4294967296"),
             {"hidden_size", "4294967296", "from 1 to 4294967295"}},
            {"a missing key",
             With(llamaText, "\"vocab_size\": 100,", ""),
             {"vocab_size", "missing", "llama"}},
            {"a ReLU GPT-2",
             R"({"model_type": "gpt2", "activation_function": "relu", "n_embd": 64,
                 "n_layer": 2, "n_head": 4, "n_positions": 64, "vocab_size": 100})",
             {"activation_function", "relu"}},
            {"top-k above the experts",
             With(llamaText,
                  "\"llama\"",
                  "\"mixtral\", \"num_local_experts\": 4, \"num_experts_per_tok\": 5"),
             {"num_experts_per_tok", "num_local_experts (4)"}},
            {"Qwen3 MoE with no MoE layer among its 2",
             With(llamaText,
                  "\"llama\"",
                  "\"qwen3_moe\", \"num_experts\": 4, \"num_experts_per_tok\": 2, "
                  "\"moe_intermediate_size\": 32, \"decoder_sparse_step\": 3"),
             {"decoder_sparse_step", "leaves no mixture-of-experts layer"}},
            {"Qwen3 MoE with a dense layer after a MoE one",
             With(llamaText,
                  "\"llama\"",
                  "\"qwen3_moe\", \"num_experts\": 4, \"num_experts_per_tok\": 2, "
                  "\"moe_intermediate_size\": 32, \"mlp_only_layers\": [1]"),
             {"mlp_only_layers", "first ones"}},
            {"Qwen3 attention biases",
             With(llamaText, "\"llama\"", "\"qwen3\", \"attention_bias\": true"),
             {"attention_bias", "allowed: false"}},
            {"a JSON syntax error", "{\"model_type\": \"llama\",", {"bad.json", "JSON"}},
            {"a key given twice",
             With(llamaText, "\"llama\"", "\"llama\", \"num_hidden_layers\": 3"),
             {"bad.json", "num_hidden_layers", "given twice"}},
        };
        for (const auto& c : cases)
        {
            const std::string path = dir.Put("bad.json", c.text);
            NS_TEST_EXPECT_MSG_EQ(ThrowsWith(
                                      [&]()
                                      {
                                          ModelSpec::Load(path);
                                      },
                                      c.needles),
                                  true,
                                  c.what);
        }
        // A JSON file that is one of our own model specs reads as YAML (JSON is YAML).
        const std::string ours =
            dir.Put("ours.json",
                    R"({"name": "tiny", "layers": 2, "hidden": 64, "heads": 4, "ffn": 256,
                "activation": "gelu", "norm": "layernorm", "position": "learned",
                "vocab": 100, "max_sequence": 32})");
        NS_TEST_EXPECT_MSG_EQ(ModelSpec::Load(ours).hidden, 64u, "our spec as JSON");
    }
};

/**
 * \brief A job file gives every job option: the model, hardware and overrides it names load
 * as with the options, the run settings equal those set by hand, and Gives() lists exactly
 * the keys given.
 */
class JobSpecTestCase : public TestCase
{
  public:
    JobSpecTestCase()
        : TestCase("job files give every job option and say which they gave")
    {}

  private:
    void
    DoRun() override
    {
        ScratchDir dir("spec-job");
        dir.Put("models/tiny.yaml",
                "name: tiny\nlayers: 4\nhidden: 64\nheads: 4\nffn: 256\nactivation: gelu\n"
                "norm: layernorm\nposition: learned\nvocab: 100\nmax_sequence: 2048\n");
        const std::string training = dir.Put("training.yaml",
                                             "model: models/tiny.yaml\n"
                                             "hardware: h100-sxm-80gb\n"
                                             "set: [gpu.hbm_gib=160, model.layers=8]\n"
                                             "gpus: 16\n"
                                             "backend: packet\n"
                                             "routing: ecmp\n"
                                             "mode: training\n"
                                             "dtype: fp16\n"
                                             "parallel:\n"
                                             "  tp: 2\n"
                                             "  pp: 2\n"
                                             "  dp: 4\n"
                                             "  cp: 1\n"
                                             "  ep: 1\n"
                                             "  sp: true\n"
                                             "  zero: 1\n"
                                             "  vpp: 2\n"
                                             "  rank_order: tp-dp-cp-ep-pp\n"
                                             "recompute: selective\n"
                                             "micro_batch: 2\n"
                                             "global_batch: 64\n"
                                             "sequence: 1024\n"
                                             "attention: standard\n"
                                             "grad_reduce: after_backward\n"
                                             "tp_reduce: blocking\n"
                                             "bucket_mib: 50\n");
        const JobSpec job = JobSpec::Load(training);
        RunSpec expected;
        expected.mode = RunMode::TRAINING;
        expected.dtype = DataType::FP16;
        expected.parallel.tp = 2;
        expected.parallel.pp = 2;
        expected.parallel.dp = 4;
        expected.parallel.sequenceParallel = true;
        expected.parallel.zeroStage = 1;
        expected.parallel.virtualStages = 2;
        expected.parallel.rankOrder = "tp-dp-cp-ep-pp";
        expected.recompute = Recompute::SELECTIVE;
        expected.microBatch = 2;
        expected.globalBatch = 64;
        expected.sequence = 1024;
        expected.flashAttention = false;
        expected.overlapGradReduce = false;
        expected.overlapTpReduce = false;
        expected.bucketBytes = 50ull << 20;
        NS_TEST_EXPECT_MSG_EQ((job.run == expected), true, "every training setting");
        NS_TEST_EXPECT_MSG_EQ(job.model, dir.Path() + "/models/tiny.yaml", "relative model");
        NS_TEST_EXPECT_MSG_EQ(job.hardware, "h100-sxm-80gb", "preset hardware");
        NS_TEST_EXPECT_MSG_EQ(job.gpus, 16u, "gpus");
        NS_TEST_EXPECT_MSG_EQ(job.backend + " " + job.routing, "packet ecmp", "network");
        NS_TEST_EXPECT_MSG_EQ(job.overrides.size(), 2u, "overrides");
        const ModelSpec model = job.LoadModel();
        NS_TEST_EXPECT_MSG_EQ(model.layers, 8u, "model override applied");
        NS_TEST_EXPECT_MSG_EQ(job.LoadHardware().gpu.hbmBytes, 160ull << 30, "hardware override");
        job.run.Validate(model, training);
        for (const char* key : {"model",
                                "hardware",
                                "set",
                                "gpus",
                                "parallel.tp",
                                "parallel.rank_order",
                                "micro_batch",
                                "global_batch",
                                "sequence"})
        {
            NS_TEST_EXPECT_MSG_EQ(job.Gives(key), true, key);
        }
        for (const char* key : {"batch", "prompt", "generated", "first_token", "parallel.fsdp"})
        {
            NS_TEST_EXPECT_MSG_EQ(job.Gives(key), false, key);
        }

        const JobSpec inference = JobSpec::Parse("model: llama2-7b\nmode: inference\n"
                                                 "parallel: {tp: 4}\nbatch: 8\nprompt: 512\n"
                                                 "generated: 64\ndecode_attention: per_head\n"
                                                 "first_token: decode\n"
                                                 "set: model.layers=16\n",
                                                 "inference.yaml");
        RunSpec expectedInference;
        expectedInference.mode = RunMode::INFERENCE;
        expectedInference.parallel.tp = 4;
        expectedInference.batch = 8;
        expectedInference.promptTokens = 512;
        expectedInference.generatedTokens = 64;
        expectedInference.splitKvDecode = false;
        expectedInference.firstToken = "decode";
        NS_TEST_EXPECT_MSG_EQ((inference.run == expectedInference), true, "inference settings");
        NS_TEST_EXPECT_MSG_EQ(inference.LoadModel().layers, 16u, "set as one text");
        NS_TEST_EXPECT_MSG_EQ(inference.hardware, "", "hardware not given");
        NS_TEST_EXPECT_MSG_EQ(inference.Gives("hardware"), false, "not given");

        // Errors name the job file, the key and what is allowed.
        NS_TEST_EXPECT_MSG_EQ(ThrowsWith(
                                  [&]()
                                  {
                                      JobSpec::Parse("model: llama2-7b\nmbs: 2\n", "job.yaml");
                                  },
                                  {"job.yaml:2", "mbs", "unknown field", "micro_batch", "model"}),
                              true,
                              "an option name that is not a key");
        NS_TEST_EXPECT_MSG_EQ(ThrowsWith(
                                  [&]()
                                  {
                                      JobSpec::Parse("set: [gpu.hbm_gib]\n", "job.yaml");
                                  },
                                  {"job.yaml:1", "set", "PATH=VALUE"}),
                              true,
                              "a malformed override");
        NS_TEST_EXPECT_MSG_EQ(ThrowsWith(
                                  [&]()
                                  {
                                      JobSpec::Parse("gpus: 0\n", "job.yaml");
                                  },
                                  {"job.yaml:1", "gpus", "from 1"}),
                              true,
                              "zero GPUs");
        NS_TEST_EXPECT_MSG_EQ(ThrowsWith(
                                  [&]()
                                  {
                                      JobSpec::Parse("mode: training\n", "job.yaml").LoadModel();
                                  },
                                  {"job.yaml", "model", "names no model"}),
                              true,
                              "no model to load");
        NS_TEST_EXPECT_MSG_EQ(ThrowsWith(
                                  [&]()
                                  {
                                      JobSpec::Load(dir.Path());
                                  },
                                  {"directory"}),
                              true,
                              "a directory as job file");
    }
};

/** \brief The spec-variant test suite. */
class SpecVariantsTestSuite : public TestSuite
{
  public:
    SpecVariantsTestSuite()
        : TestSuite("rapid-llm-spec-variants", UNIT)
    {
        AddTestCase(new OverrideTestCase, TestCase::QUICK);
        AddTestCase(new OverrideErrorTestCase, TestCase::QUICK);
        AddTestCase(new InheritanceTestCase, TestCase::QUICK);
        AddTestCase(new HuggingFaceTestCase, TestCase::QUICK);
        AddTestCase(new JobSpecTestCase, TestCase::QUICK);
    }
};

static SpecVariantsTestSuite g_specVariantsTestSuite; //!< registers the suite
