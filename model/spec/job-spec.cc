/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "job-spec.h"

#include "preset-registry.h"
#include "spec-error.h"
#include "spec-reader.h"

#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

namespace ns3 {
namespace rapidllm {

namespace {
/** \return a model or hardware reference: a preset name, or a path relative to \p directory */
std::string
Reference(SpecReader& r, const std::string& key, const std::string& kind, const std::string& dir)
{
    const std::string value = r.GetString(key);
    if (value.empty())
    {
        r.Fail(key, "expected a preset name or a file path");
    }
    std::string text;
    std::filesystem::path path(value);
    if (PresetRegistry::Find(kind, value, text) || !path.is_relative() || dir.empty())
    {
        return value;
    }
    // A bare name that is no file beside the job file is a misspelt preset, and is told so.
    const std::filesystem::path beside = std::filesystem::path(dir) / path;
    std::error_code ec;
    const bool looksLikePath = value.find('/') != std::string::npos || path.extension() == ".yaml"
                               || path.extension() == ".yml";
    return looksLikePath || std::filesystem::exists(beside, ec) ? beside.string() : value;
}

/**
 * \return the text of an option a key stands for (--fault, --slow-gpus, --gpu-set): one
 * text, or a list of items joined by \p separator
 */
std::string
OptionText(SpecReader& r,
           const std::string& key,
           const std::string& example,
           const std::string& separator = ",")
{
    const YAML::Node node = r.GetNode(key);
    if (node.IsScalar())
    {
        return node.Scalar();
    }
    std::string text;
    bool texts = node.IsSequence();
    for (std::size_t i = 0; texts && i < node.size(); ++i)
    {
        texts = node[i].IsScalar();
        text += (i > 0 ? separator : "") + (texts ? node[i].Scalar() : "");
    }
    if (!texts)
    {
        r.Fail(key, "expected one text or a list of texts, e.g. " + example);
    }
    return text;
}
} // namespace

bool
JobSpec::Gives(const std::string& path) const
{
    return m_given.count(path) > 0;
}

ModelSpec
JobSpec::LoadModel() const
{
    if (model.empty())
    {
        throw SpecError(m_source, "model", "the job file names no model");
    }
    return ModelSpec::Load(model, overrides);
}

HardwareSpec
JobSpec::LoadHardware() const
{
    if (hardware.empty())
    {
        throw SpecError(m_source, "hardware", "the job file names no hardware");
    }
    return HardwareSpec::Load(hardware, overrides);
}

JobSpec
JobSpec::Parse(const std::string& text, const std::string& source, const std::string& directory)
{
    YAML::Node root = ParseYaml(text, source);
    SpecReader r(root, source);
    JobSpec job;
    job.m_source = source;
    if (root.IsMap())
    {
        for (const auto& item : root)
        {
            const std::string key = item.first.Scalar();
            if (item.second.IsNull())
            {
                continue;
            }
            job.m_given.insert(key);
            if (key == "parallel" && item.second.IsMap())
            {
                for (const auto& inner : item.second)
                {
                    if (!inner.second.IsNull())
                    {
                        job.m_given.insert("parallel." + inner.first.Scalar());
                    }
                }
            }
        }
    }
    if (r.Has("model"))
    {
        job.model = Reference(r, "model", "models", directory);
    }
    if (r.Has("hardware"))
    {
        job.hardware = Reference(r, "hardware", "hardware", directory);
    }
    if (r.Has("set"))
    {
        YAML::Node set = r.GetNode("set");
        const int line = r.LineOf("set");
        auto parse = [&](const std::function<void()>& f)
        {
            try
            {
                f();
            }
            catch (const SpecError& e)
            {
                throw SpecError(source, "set", e.GetMessage(), line);
            }
        };
        if (set.IsScalar())
        {
            parse(
                [&]()
                {
                    job.overrides = SpecOverride::ParseList(set.Scalar(), source);
                });
        }
        else if (set.IsSequence())
        {
            for (const auto& item : set)
            {
                if (!item.IsScalar())
                {
                    r.Fail("set", "expected a list of PATH=VALUE texts, e.g. [gpu.hbm_gib=160]");
                }
                parse(
                    [&]()
                    {
                        job.overrides.push_back(SpecOverride::Parse(item.Scalar(), source));
                        SpecOverride::RejectRepeatedPaths(job.overrides, source);
                    });
            }
        }
        else
        {
            r.Fail("set", "expected PATH=VALUE texts, e.g. [gpu.hbm_gib=160, model.layers=40]");
        }
    }
    job.gpus = r.GetCount("gpus", 1, 0);
    job.backend = r.GetString("backend", "");
    job.routing = r.GetString("routing", "");
    if (r.Has("fault"))
    {
        job.fault = OptionText(r, "fault", "[gpu0-gpu1:0.5, tier:infiniband:0.5@2ms]");
    }
    if (r.Has("slow_gpus"))
    {
        job.slowGpus = OptionText(r, "slow_gpus", "[gpu3:0.9, gpu7:0.5]");
    }
    if (r.Has("gpu_set"))
    {
        job.gpuSet =
            OptionText(r,
                       "gpu_set",
                       "[\"gpu3:gpu.hbm_bandwidth_GBps=0.5x\", \"gpu5:gpu.clock_mhz=0.9x\"]",
                       ";");
    }
    job.run = RunSpec::Read(r);
    r.Finish();
    return job;
}

JobSpec
JobSpec::Load(const std::string& path)
{
    return Parse(ReadSpecFile(path, "run", "a job file"),
                 path,
                 std::filesystem::path(path).parent_path().string());
}

} // namespace rapidllm
} // namespace ns3
