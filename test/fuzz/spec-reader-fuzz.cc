/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// libFuzzer target for the spec readers (opt-in: configure with clang++ and -DRAPIDLLM_FUZZ=ON,
// build the spec-reader-fuzz target, run it on a corpus directory; test/fuzz/README.md).
//
// The first input byte picks the reader, the rest is its text:
//   0 model YAML, 1 hardware YAML, 2 run file, 3 job file, 4 Hugging Face config.json,
//   5 a model over the llama2-7b preset (`base:`), 6 hardware over h100-sxm-80gb (`base:`),
//   7 overrides (comma-separated) on the h100-sxm-80gb and mixtral-8x7b presets.
// Properties checked on every input:
//  - the reader returns or throws an ns3::rapidllm::Error (any other exception aborts; ASan and
//    UBSan catch memory errors and undefined behaviour; -timeout catches hangs);
//  - whatever it accepts keeps the physical bounds of test/spec-bounds-check.h (positive sizes
//    and rates, efficiencies in (0, 1], no wrapped parameter count).

#include "ns3/hardware-spec.h"
#include "ns3/job-spec.h"
#include "ns3/model-spec.h"
#include "ns3/rapidllm-error.h"
#include "ns3/run-spec.h"
#include "ns3/spec-override.h"

#include "../spec-bounds-check.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

using namespace ns3::rapidllm;

namespace {

[[noreturn]] void
Violation(const std::string& what)
{
    std::fprintf(stderr, "spec-reader-fuzz: property violated: %s\n", what.c_str());
    std::abort();
}

void
Check(const std::string& broken, const char* what)
{
    if (!broken.empty())
    {
        Violation(std::string(what) + ": " + broken);
    }
}

void
FuzzOne(uint8_t selector, const std::string& text)
{
    switch (selector % 8)
    {
        case 0:
            Check(bounds::CheckModel(ModelSpec::Parse(text, "fuzz.yaml")), "model");
            break;
        case 1:
            Check(bounds::CheckHardware(HardwareSpec::Parse(text, "fuzz.yaml")), "hardware");
            break;
        case 2:
            Check(bounds::CheckRun(RunSpec::Parse(text, "fuzz.yaml")), "run");
            break;
        case 3:
            Check(bounds::CheckRun(JobSpec::Parse(text, "fuzz.yaml").run), "job");
            break;
        case 4:
            Check(bounds::CheckModel(ModelSpec::Parse(text, "fuzz.json")), "config.json");
            break;
        case 5:
            Check(bounds::CheckModel(ModelSpec::Parse("base: llama2-7b\n" + text, "fuzz.yaml")),
                  "model over a base");
            break;
        case 6:
            Check(bounds::CheckHardware(
                      HardwareSpec::Parse("base: h100-sxm-80gb\n" + text, "fuzz.yaml")),
                  "hardware over a base");
            break;
        default:
        {
            const auto overrides = SpecOverride::ParseList(text, "fuzz");
            Check(bounds::CheckHardware(HardwareSpec::Load("h100-sxm-80gb", overrides)),
                  "hardware with overrides");
            Check(bounds::CheckModel(ModelSpec::Load("mixtral-8x7b", overrides)),
                  "model with overrides");
        }
    }
}

} // namespace

extern "C" int
LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    if (size == 0)
    {
        return 0;
    }
    const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
    try
    {
        FuzzOne(data[0], text);
    }
    catch (const Error&)
    {
        // A clear error is a correct answer to bad input.
    }
    catch (const std::exception& e)
    {
        Violation(std::string("an exception that is not a rapidllm::Error: ") + e.what());
    }
    return 0;
}
