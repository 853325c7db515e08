/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// The deterministic mutation fuzz test of the input readers (CI's small-budget companion of the
// libFuzzer targets in test/fuzz/). Every preset, run and job file, Hugging Face config and
// override list, and a real trace set, is damaged many ways with a fixed-seed generator: lines
// deleted, duplicated, swapped or re-indented, numbers replaced by extremes (0, -1, 1e308,
// 2^32, nan, huge digit strings), values by the wrong type, bytes flipped, files truncated
// and spliced. Every case must either be accepted within the physical bounds of
// spec-bounds-check.h or rejected with an ns3::rapidllm::Error: never another exception, never
// a crash (which would end the runner).

#include "job-fixtures.h"
#include "ns3/chakra-trace-reader.h"
#include "ns3/chakra-trace-writer.h"
#include "ns3/comm-groups.h"
#include "ns3/hardware-spec.h"
#include "ns3/job-spec.h"
#include "ns3/model-spec.h"
#include "ns3/preset-registry.h"
#include "ns3/rapidllm-error.h"
#include "ns3/run-spec.h"
#include "ns3/spec-override.h"
#include "ns3/test.h"
#include "ns3/trace-error.h"
#include "ns3/workload-trace.h"
#include "ns3/workload.h"
#include "spec-bounds-check.h"

#include <fstream>
#include <functional>
#include <sstream>

using namespace ns3;
using namespace ns3::rapidllm;

namespace {

/** A fixed-seed xorshift generator: the same cases on every machine and every run. */
class Rng
{
  public:
    explicit Rng(uint64_t seed)
        : m_state(seed)
    {}

    uint64_t
    Next()
    {
        m_state ^= m_state << 13;
        m_state ^= m_state >> 7;
        m_state ^= m_state << 17;
        return m_state;
    }

    /** \return a number in [0, n) (n > 0) */
    std::size_t
    Below(std::size_t n)
    {
        return static_cast<std::size_t>(Next() % n);
    }

  private:
    uint64_t m_state; //!< the state
};

/** Values that break parsers: extremes, non-numbers, wrong types, YAML oddities. */
const std::vector<std::string>&
Extremes()
{
    static const std::vector<std::string> values = {
        "0",
        "-1",
        "1e308",
        "-1e308",
        "1e-300",
        "4294967296",
        "4294967295",
        "18446744073709551616",
        "9223372036854775807",
        "99999999999999999999999999999999",
        "nan",
        ".nan",
        "inf",
        ".inf",
        "-.inf",
        "0.5",
        "2.5",
        "0x10",
        "1_000",
        "abc",
        "~",
        "null",
        "true",
        "[]",
        "[1, 2]",
        "{}",
        "{a: 1}",
        "''",
        "!!binary AAAA",
        "&a 1",
        "*a",
        "auto",
        std::string(10000, '9'),
        std::string(10000, 'x'),
    };
    return values;
}

/** \return the lines of \p text (without their newlines) */
std::vector<std::string>
Lines(const std::string& text)
{
    std::vector<std::string> lines;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line))
    {
        lines.push_back(line);
    }
    return lines;
}

/** \return \p lines joined with newlines */
std::string
Join(const std::vector<std::string>& lines)
{
    std::string text;
    for (const auto& line : lines)
    {
        text += line + "\n";
    }
    return text;
}

/** \return \p text with one damage chosen by \p rng */
std::string
MutateOnce(const std::string& text, Rng& rng)
{
    if (text.empty())
    {
        return Extremes()[rng.Below(Extremes().size())];
    }
    std::vector<std::string> lines = Lines(text);
    const std::size_t n = std::max<std::size_t>(lines.size(), 1);
    lines.resize(n);
    const std::string& extreme = Extremes()[rng.Below(Extremes().size())];
    switch (rng.Below(10))
    {
        case 0: // delete a line
            lines.erase(lines.begin() + rng.Below(n));
            return Join(lines);
        case 1:
        { // duplicate a line (often a duplicate key)
            const std::size_t i = rng.Below(n);
            lines.insert(lines.begin() + i, lines[i]);
            return Join(lines);
        }
        case 2: // swap two lines
            std::swap(lines[rng.Below(n)], lines[rng.Below(n)]);
            return Join(lines);
        case 3:
        case 4:
        { // replace a number with an extreme
            std::vector<std::pair<std::size_t, std::size_t>> numbers;
            for (std::size_t i = 0; i < text.size();)
            {
                if (std::isdigit(static_cast<unsigned char>(text[i])))
                {
                    std::size_t j = i;
                    while (j < text.size()
                           && (std::isalnum(static_cast<unsigned char>(text[j])) || text[j] == '.'
                               || text[j] == '+' || text[j] == '-'))
                    {
                        ++j;
                    }
                    numbers.emplace_back(i, j - i);
                    i = j;
                }
                else
                {
                    ++i;
                }
            }
            if (numbers.empty())
            {
                return text + extreme;
            }
            const auto [at, length] = numbers[rng.Below(numbers.size())];
            return text.substr(0, at) + extreme + text.substr(at + length);
        }
        case 5:
        { // replace a value (after ": ") by an extreme or the wrong type
            const std::size_t i = rng.Below(n);
            const auto colon = lines[i].find(": ");
            if (colon == std::string::npos)
            {
                lines[i] += ": " + extreme;
            }
            else
            {
                lines[i] = lines[i].substr(0, colon + 2) + extreme;
            }
            return Join(lines);
        }
        case 6: // truncate
            return text.substr(0, rng.Below(text.size()));
        case 7:
        { // insert or overwrite random bytes
            std::string out = text;
            for (std::size_t k = 1 + rng.Below(4); k > 0; --k)
            {
                const char c = static_cast<char>(rng.Next());
                const std::size_t at = rng.Below(out.size());
                if (rng.Below(2) == 0)
                {
                    out[at] = c;
                }
                else
                {
                    out.insert(out.begin() + at, c);
                }
            }
            return out;
        }
        case 8:
        { // re-indent a line
            const std::size_t i = rng.Below(n);
            if (rng.Below(2) == 0)
            {
                lines[i] = "  " + lines[i];
            }
            else if (lines[i].compare(0, 2, "  ") == 0)
            {
                lines[i] = lines[i].substr(2);
            }
            else
            {
                lines[i] = "- " + lines[i];
            }
            return Join(lines);
        }
        default:
        { // delete a range of characters
            const std::size_t at = rng.Below(text.size());
            return text.substr(0, at) + text.substr(std::min(text.size(), at + 1 + rng.Below(40)));
        }
    }
}

/** \return \p text with one to three damages */
std::string
Mutate(const std::string& text, Rng& rng)
{
    std::string out = text;
    for (std::size_t k = 1 + rng.Below(3); k > 0; --k)
    {
        out = MutateOnce(out, rng);
    }
    return out;
}

/** \return the text of a file */
std::string
ReadFile(const std::string& path)
{
    std::ifstream in(path);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

/** Counts outcomes and keeps the first failures with the input that caused them. */
class Outcomes
{
  public:
    /**
     * \brief Runs \p parse on one input: a returned "" (accepted within bounds) or an Error is
     * fine; a bound broken or any other exception is a failure.
     */
    void
    Run(const std::string& label,
        const std::string& input,
        const std::function<std::string()>& parse)
    {
        try
        {
            const std::string broken = parse();
            if (broken.empty())
            {
                ++accepted;
            }
            else
            {
                Fail(label, input, "accepted outside physical bounds: " + broken);
            }
        }
        catch (const Error&)
        {
            ++rejected;
        }
        catch (const std::exception& e)
        {
            Fail(label, input, std::string("an exception that is not an Error: ") + e.what());
        }
    }

    uint64_t accepted = 0;             //!< inputs accepted within bounds
    uint64_t rejected = 0;             //!< inputs rejected with an Error
    std::vector<std::string> failures; //!< the first failures, described

  private:
    void
    Fail(const std::string& label, const std::string& input, const std::string& what)
    {
        if (failures.size() < 5)
        {
            failures.push_back(label + ": " + what + "\n--- input (first 400 bytes) ---\n"
                               + input.substr(0, 400));
        }
        else
        {
            failures.push_back(label + ": " + what);
        }
    }
};

} // namespace

/**
 * \brief Mutated model, hardware, run and job files, Hugging Face configs, `base:` variants and
 * override lists: accepted within physical bounds or rejected with an Error.
 */
class SpecMutationTestCase : public TestCase
{
  public:
    SpecMutationTestCase()
        : TestCase("mutated spec files are accepted within bounds or rejected with an Error")
    {}

  private:
    void
    DoRun() override
    {
        Rng rng(0x5DEECE66Dull);
        Outcomes out;
        const int perInput = 150;

        for (const auto& name : PresetRegistry::Names("models"))
        {
            std::string text;
            PresetRegistry::Find("models", name, text);
            for (int i = 0; i < perInput; ++i)
            {
                const std::string input = Mutate(text, rng);
                out.Run("model " + name,
                        input,
                        [&]()
                        {
                            return bounds::CheckModel(ModelSpec::Parse(input, "m.yaml"));
                        });
            }
        }
        for (const auto& name : PresetRegistry::Names("hardware"))
        {
            std::string text;
            PresetRegistry::Find("hardware", name, text);
            for (int i = 0; i < 4 * perInput; ++i)
            {
                const std::string input = Mutate(text, rng);
                out.Run("hardware " + name,
                        input,
                        [&]()
                        {
                            return bounds::CheckHardware(HardwareSpec::Parse(input, "h.yaml"));
                        });
            }
        }
        const std::string run =
            "mode: training\ndtype: bf16\nparallel:\n  tp: 8\n  pp: 8\n  dp: 16\n  cp: 1\n"
            "  ep: 1\n  sp: true\n  zero: 1\n  vpp: 2\n  rank_order: tp-cp-ep-dp-pp\n"
            "recompute: full\nmicro_batch: 1\nglobal_batch: 1536\nsequence: 2048\n"
            "attention: flash\ngrad_reduce: overlap\ntp_reduce: blocking\nbucket_mib: 25\n"
            "batch: 4\nprompt: 128\ngenerated: 16\ndecode_attention: per_head\n"
            "first_token: decode\n";
        const std::string job = "model: llama2-70b\nhardware: h100-sxm-80gb\n"
                                "set: [gpu.hbm_gib=160, model.layers=40]\ngpus: 64\n"
                                "backend: flow\nrouting: ecmp\n"
                                + run;
        for (int i = 0; i < 4 * perInput; ++i)
        {
            const std::string input = Mutate(run, rng);
            out.Run("run file",
                    input,
                    [&]()
                    {
                        return bounds::CheckRun(RunSpec::Parse(input, "r.yaml"));
                    });
            const std::string jobInput = Mutate(job, rng);
            out.Run("job file",
                    jobInput,
                    [&]()
                    {
                        const JobSpec j = JobSpec::Parse(jobInput, "j.yaml");
                        std::string broken = bounds::CheckRun(j.run);
                        if (broken.empty() && !j.model.empty() && !j.hardware.empty())
                        {
                            broken = bounds::CheckModel(j.LoadModel())
                                     + bounds::CheckHardware(j.LoadHardware());
                        }
                        return broken;
                    });
        }
        for (const char* folder : {"Llama-2-7b-hf", "Mixtral-8x7B-v0.1", "Qwen2-7B", "gpt2"})
        {
            const std::string text = ReadFile(std::string(RAPIDLLM_SOURCE_DIR) + "/test/data/hf/"
                                              + folder + "/config.json");
            NS_TEST_ASSERT_MSG_EQ(text.empty(), false, folder);
            for (int i = 0; i < 2 * perInput; ++i)
            {
                const std::string input = Mutate(text, rng);
                out.Run(std::string("config.json ") + folder,
                        input,
                        [&]()
                        {
                            return bounds::CheckModel(ModelSpec::Parse(input, "config.json"));
                        });
            }
        }
        const std::string modelChild = "base: llama2-7b\nname: v\nlayers: 40\nmoe:\n"
                                       "  experts: 8\n  top_k: 2\n";
        const std::string hwChild = "base: h100-sxm-80gb\nname: v\ngpu:\n  hbm_gib: 160\n"
                                    "  efficiency:\n    hbm: 0.8\nnetwork:\n  dimensions:\n"
                                    "    - name: infiniband\n      oversubscription: 2\n"
                                    "    - name: ethernet\n      topology: ring\n"
                                    "      size: 4\n      bandwidth_GBps: 25\n"
                                    "      latency_ns: 5000\n";
        for (int i = 0; i < 4 * perInput; ++i)
        {
            const std::string m = Mutate(modelChild, rng);
            out.Run("model over a base",
                    m,
                    [&]()
                    {
                        return bounds::CheckModel(ModelSpec::Parse(m, "v.yaml"));
                    });
            const std::string h = Mutate(hwChild, rng);
            out.Run("hardware over a base",
                    h,
                    [&]()
                    {
                        return bounds::CheckHardware(HardwareSpec::Parse(h, "v.yaml"));
                    });
        }

        // Override lists: real paths with extreme values and scales, and damaged texts.
        const std::vector<std::string> paths = {"gpu.hbm_gib",
                                                "gpu.hbm_bandwidth_GBps",
                                                "gpu.sm_count",
                                                "gpu.clock_mhz",
                                                "gpu.tensor_tflops.bf16",
                                                "gpu.l2_mib",
                                                "gpu.shared_memory_per_block_kib",
                                                "gpu.efficiency.tensor",
                                                "gpu.launch_overhead_us",
                                                "network.infiniband.oversubscription",
                                                "network.infiniband.size",
                                                "network.nvlink.bandwidth_GBps",
                                                "network.dimensions[0].latency_ns",
                                                "network.dimensions[1].leaf_size",
                                                "network.routing",
                                                "model.layers",
                                                "model.hidden",
                                                "model.heads",
                                                "model.kv_heads",
                                                "model.moe.experts",
                                                "model.moe.top_k",
                                                "model.max_sequence"};
        for (int i = 0; i < 8 * perInput; ++i)
        {
            std::string list;
            for (std::size_t k = 1 + rng.Below(3); k > 0; --k)
            {
                const std::string& value = Extremes()[rng.Below(Extremes().size())];
                const char* scales[] = {"0.5x", "2x", "0x", "-1x", "1e308x", "1e-300x", "nanx"};
                list += (list.empty() ? "" : ",") + paths[rng.Below(paths.size())] + "="
                        + (rng.Below(3) == 0 ? scales[rng.Below(7)] : value);
            }
            if (rng.Below(4) == 0)
            {
                list = Mutate(list, rng);
            }
            out.Run(
                "overrides",
                list,
                [&]()
                {
                    const auto overrides = SpecOverride::ParseList(list, "test");
                    std::string broken;
                    try
                    {
                        broken =
                            bounds::CheckHardware(HardwareSpec::Load("h100-sxm-80gb", overrides));
                    }
                    catch (const Error&)
                    {}
                    return broken + bounds::CheckModel(ModelSpec::Load("mixtral-8x7b", overrides));
                });
        }

        for (const auto& f : out.failures)
        {
            NS_TEST_EXPECT_MSG_EQ(f, "", "a spec input broke a reader");
        }
        NS_TEST_EXPECT_MSG_EQ(out.failures.size(), 0u, "no failure");
        // The damage is real: much is rejected; and the test reaches acceptance paths too.
        NS_TEST_EXPECT_MSG_GT(out.rejected, out.accepted / 4, "damage is detected");
        NS_TEST_EXPECT_MSG_GT(out.accepted, 500u, "acceptance paths reached");
    }
};

/**
 * \brief A real trace set (a small GPT job on TP2 PP2 DP2) truncated, flipped, spliced across
 * ranks and its communicator groups damaged: a graph, or a TraceError.
 */
class TraceMutationTestCase : public TestCase
{
  public:
    TraceMutationTestCase()
        : TestCase("damaged trace files give a graph or a TraceError")
    {}

  private:
    void
    DoRun() override
    {
        const ModelSpec model = fixture::SmallModel("gpt-1.7b", 2);
        const RunSpec run = fixture::TrainingJob(2, 2, 2, 1, 4, 256);
        const Workload w = Workload::Build(model,
                                           run,
                                           [](const OperatorDesc& op)
                                           {
                                               OperatorCost c;
                                               c.timeS = 1e-6 + op.ModelFlops() / 1e14;
                                               return c;
                                           });
        const uint32_t world = w.layout.Ranks();
        const CommGroups groups = WorkloadCommGroups(w);
        std::vector<std::string> files;
        for (uint32_t r = 0; r < world; ++r)
        {
            files.push_back(ChakraTraceWriter::EncodeRank(RankTrace(w, r), world, r % 2 == 1));
        }
        const std::string groupsJson = groups.ToJson();

        Rng rng(0xC0FFEEull);
        Outcomes out;
        for (int i = 0; i < 1200; ++i)
        {
            const uint32_t rank = static_cast<uint32_t>(rng.Below(world));
            std::string bytes = files[rank];
            switch (rng.Below(5))
            {
                case 0: // truncate
                    bytes.resize(rng.Below(bytes.size()));
                    break;
                case 1: // flip bytes
                    for (std::size_t k = 1 + rng.Below(8); k > 0; --k)
                    {
                        bytes[rng.Below(bytes.size())] ^= static_cast<char>(1 + rng.Below(255));
                    }
                    break;
                case 2:
                { // splice: the head of one rank's file and the tail of another's
                    const std::string& other = files[rng.Below(world)];
                    bytes = bytes.substr(0, rng.Below(bytes.size()))
                            + other.substr(rng.Below(other.size()));
                    break;
                }
                case 3:
                { // a chunk duplicated
                    const std::size_t at = rng.Below(bytes.size());
                    const std::size_t length = 1 + rng.Below(64);
                    bytes.insert(at, bytes.substr(at, length));
                    break;
                }
                default: // two files back to back
                    bytes += files[rng.Below(world)];
                    break;
            }
            out.Run("rank file",
                    bytes,
                    [&]()
                    {
                        ExecutionTrace t =
                            ChakraTraceReader::DecodeRank(bytes, "fuzz.et", rank, &groups, world);
                        return t.TopologicalOrder().size() == t.GetNNodes()
                                   ? std::string()
                                   : std::string("an accepted graph with a cycle");
                    });
            const std::string json = Mutate(groupsJson, rng);
            out.Run("comm_groups.json",
                    json,
                    [&]()
                    {
                        CommGroups::FromJson(json, "fuzz.comm_groups.json");
                        return std::string();
                    });
        }
        for (const auto& f : out.failures)
        {
            NS_TEST_EXPECT_MSG_EQ(f, "", "a trace input broke the reader");
        }
        NS_TEST_EXPECT_MSG_EQ(out.failures.size(), 0u, "no failure");
        NS_TEST_EXPECT_MSG_GT(out.rejected, 1000u, "damage is detected");
    }
};

/** \brief The mutation fuzz suite (fixed seeds, a few seconds). */
class SpecFuzzTestSuite : public TestSuite
{
  public:
    SpecFuzzTestSuite()
        : TestSuite("rapid-llm-input-fuzz", UNIT)
    {
        AddTestCase(new SpecMutationTestCase, TestCase::QUICK);
        AddTestCase(new TraceMutationTestCase, TestCase::QUICK);
    }
};

static SpecFuzzTestSuite g_specFuzzTestSuite; //!< registers the suite
