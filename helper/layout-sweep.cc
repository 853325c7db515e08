/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "layout-sweep.h"

#include "ns3/spec-error.h"
#include "ns3/string.h"
#include "rapid-llm-helper.h"

#include <algorithm>
#include <stdexcept>

namespace ns3 {
namespace rapidllm {

std::vector<std::string>
PipelineSplitNames()
{
    return {"even", "first-last", "embedding-loss"};
}

PipelineSplit
ParsePipelineSplit(const std::string& name)
{
    const std::vector<std::string> names = PipelineSplitNames();
    for (std::size_t i = 0; i < names.size(); ++i)
    {
        if (names[i] == name)
        {
            return static_cast<PipelineSplit>(i);
        }
    }
    throw std::invalid_argument("unknown pipeline split '" + name + "'");
}

LayoutSweep::LayoutSweep(const ModelSpec& model,
                         const HardwareSpec& hardware,
                         const RunSpec& base,
                         const SweepSpace& space,
                         const std::string& backend)
    : LayoutSweep(model, std::vector<HardwareSpec>{hardware}, base, space, backend)
{}

LayoutSweep::LayoutSweep(const ModelSpec& model,
                         const std::vector<HardwareSpec>& machines,
                         const RunSpec& base,
                         const SweepSpace& space,
                         const std::string& backend)
    : m_model(model)
    , m_machines(machines)
    , m_base(base)
    , m_space(space)
    , m_backend(backend)
{
    if (m_machines.empty())
    {
        throw std::invalid_argument("a layout sweep needs a machine");
    }
}

uint32_t
LayoutSweep::GetSkipped() const
{
    return m_skipped;
}

void
LayoutSweep::NoteSkip(const std::string& layout, const std::string& field, const std::string& why)
{
    if (!field.empty())
    {
        m_skipFieldMixed = m_skipFieldMixed || (!m_skipField.empty() && field != m_skipField);
        m_skipField = field;
    }
    const std::string reason = (field.empty() ? "" : field + ": ") + why;
    uint32_t ofKind = 0;
    for (SkipNote& note : m_skipReasons)
    {
        if (note.reason == reason)
        {
            ++note.more;
            return;
        }
        ofKind += note.field.empty() == field.empty() ? 1 : 0;
    }
    // Three of each kind, so that the model's refusals are not crowded out by the shapes of an
    // automatic pp list that do not divide the GPUs.
    if (ofKind < 3)
    {
        m_skipReasons.push_back({field, reason, layout, 0});
        return;
    }
    ++m_moreSkipReasons;
}

std::string
LayoutSweep::GetSkipReasons() const
{
    // The model's refusals first, then the shapes that do not divide the GPUs; three in all.
    std::vector<const SkipNote*> notes;
    for (bool refusal : {true, false})
    {
        for (const SkipNote& note : m_skipReasons)
        {
            if (note.field.empty() != refusal)
            {
                notes.push_back(&note);
            }
        }
    }
    const std::size_t shown = std::min<std::size_t>(notes.size(), 3);
    std::string text;
    for (std::size_t k = 0; k < shown; ++k)
    {
        const SkipNote& note = *notes[k];
        text += (text.empty() ? "" : "; ") + (note.layout.empty() ? "" : note.layout + ": ")
                + note.reason;
        if (note.more > 0)
        {
            text += " (and " + std::to_string(note.more) + " more layout"
                    + (note.more > 1 ? "s" : "") + ")";
        }
    }
    const std::size_t more = m_moreSkipReasons + notes.size() - shown;
    if (more > 0)
    {
        text += " (and " + std::to_string(more) + " more reason" + (more > 1 ? "s" : "") + ")";
    }
    return text;
}

std::string
LayoutSweep::GetSkipField() const
{
    return m_skipFieldMixed ? "" : m_skipField;
}

uint32_t
LayoutSweep::GetMachine(uint64_t candidate) const
{
    return m_machineOf.at(candidate);
}

std::vector<std::pair<uint32_t, DataType>>
LayoutSweep::GetRuledOut() const
{
    return m_ruledOut;
}

std::vector<RunSpec>
LayoutSweep::Candidates()
{
    if (m_base.mode != RunMode::TRAINING)
    {
        throw SpecError("sweep", "mode", "a layout sweep is for training jobs");
    }
    m_skipped = 0;
    m_skipReasons.clear();
    m_moreSkipReasons = 0;
    m_skipField.clear();
    m_skipFieldMixed = false;
    m_machineOf.clear();
    m_ruledOut.clear();
    std::vector<RunSpec> out;
    const std::vector<DataType> dtypes =
        m_space.dtypes.empty() ? std::vector<DataType>{m_base.dtype} : m_space.dtypes;
    for (uint32_t machine = 0; machine < m_machines.size(); ++machine)
    {
        std::vector<DataType> runnable;
        for (DataType dtype : dtypes)
        {
            if (m_machines[machine].gpu.Runs(dtype))
            {
                runnable.push_back(dtype);
            }
            else
            {
                m_ruledOut.emplace_back(machine, dtype);
            }
        }
        if (runnable.empty())
        {
            continue;
        }
        for (uint32_t gpus :
             m_space.gpuCounts.empty() ? std::vector<uint32_t>{m_space.gpus} : m_space.gpuCounts)
        {
            const std::vector<RunSpec> layouts = Layouts(runnable, gpus);
            out.insert(out.end(), layouts.begin(), layouts.end());
        }
        m_machineOf.resize(out.size(), machine);
    }
    return out;
}

std::vector<RunSpec>
LayoutSweep::Layouts(const std::vector<DataType>& dtypes, uint32_t gpus)
{
    std::vector<uint32_t> pps = m_space.pp;
    if (pps.empty())
    {
        for (uint32_t p = 1; p <= gpus; ++p)
        {
            const bool layersFit = m_model.layers % p == 0
                                   || m_space.pipelineSplit != PipelineSplit::EVEN
                                   || m_base.parallel.UnevenStages();
            if (gpus % p == 0 && layersFit && p <= m_model.layers)
            {
                pps.push_back(p);
            }
        }
    }
    std::vector<RunSpec> out;
    // What each tp x pp x cp shape tries, in the order a results.csv numbers the layouts: ep,
    // vpp, mbs, recompute, the compute type, then the pipeline schedule.
    RunSpec setting = m_base;
    std::vector<RunSpec> settings;
    for (uint32_t ep : m_space.ep)
    {
        for (uint32_t vpp : m_space.virtualStages)
        {
            for (uint32_t mbs : m_space.microBatch)
            {
                for (Recompute r : m_space.recompute)
                {
                    for (DataType dtype : dtypes)
                    {
                        setting.parallel.ep = ep;
                        setting.parallel.virtualStages = vpp;
                        setting.microBatch = mbs;
                        setting.recompute = r;
                        for (const std::string& schedule : m_space.schedules)
                        {
                            RunSpec typed = TypedRun(setting, dtype);
                            typed.parallel.schedule = schedule;
                            settings.push_back(typed);
                        }
                    }
                }
            }
        }
    }
    const auto perShape = static_cast<uint32_t>(settings.size());
    for (uint32_t tp : m_space.tp)
    {
        for (uint32_t pp : pps)
        {
            for (uint32_t cp : m_space.cp)
            {
                if (tp == 0 || pp == 0 || cp == 0 || gpus % (uint64_t(tp) * pp * cp) != 0)
                {
                    m_skipped += perShape;
                    if (perShape > 0)
                    {
                        NoteSkip("",
                                 "",
                                 "tp " + std::to_string(tp) + " x pp " + std::to_string(pp)
                                     + " x cp " + std::to_string(cp) + " does not divide the "
                                     + std::to_string(gpus) + " GPUs");
                    }
                    continue;
                }
                for (RunSpec run : settings)
                {
                    run.parallel.tp = tp;
                    run.parallel.pp = pp;
                    run.parallel.cp = cp;
                    run.parallel.dp = gpus / (tp * pp * cp);
                    std::string field;
                    std::string why;
                    if (Complete(run, field, why))
                    {
                        out.push_back(run);
                        continue;
                    }
                    ++m_skipped;
                    NoteSkip("tp " + std::to_string(tp) + ", pp " + std::to_string(pp) + ", cp "
                                 + std::to_string(cp) + ", ep " + std::to_string(run.parallel.ep)
                                 + ", mbs " + std::to_string(run.microBatch),
                             field,
                             why);
                }
            }
        }
    }
    return out;
}

RunSpec
TypedRun(const RunSpec& base, DataType dtype)
{
    RunSpec run = base;
    run.dtype = dtype;
    if (dtype != DataType::FP8)
    {
        run.fp8Scaling = RunSpec().fp8Scaling;
        run.fp8Params = RunSpec().fp8Params;
    }
    return run;
}

bool
LayoutSweep::Complete(RunSpec& run, std::string& field, std::string& why) const
{
    run.parallel.sequenceParallel = m_base.parallel.sequenceParallel && run.parallel.tp > 1;
    if (!run.parallel.sequenceParallel)
    {
        // Transformer Engine's TP overlap needs sequence parallelism.
        run.tpCommOverlap = "none";
    }
    if (m_space.pipelineSplit == PipelineSplit::FIRST_LAST && !m_base.parallel.UnevenStages()
        && m_model.layers % (uint64_t(run.parallel.pp) * run.parallel.virtualStages) != 0)
    {
        run.parallel.UnevenSplit(
            m_model.layers, run.parallel.firstStageLayers, run.parallel.lastStageLayers);
    }
    if (m_space.pipelineSplit == PipelineSplit::EMBEDDING_LOSS && run.parallel.pp > 1)
    {
        run.parallel.embeddingInSplit = true;
        run.parallel.lossInSplit = true;
    }
    try
    {
        run.Validate(m_model, "sweep");
        return true;
    }
    catch (const SpecError& e)
    {
        field = e.GetField();
        why = e.GetMessage();
        return false;
    }
}

void
LayoutSweep::SetSlowGpus(const std::map<uint32_t, double>& speeds)
{
    m_slowGpus = speeds;
}

void
LayoutSweep::SetGpuVariants(const std::vector<std::map<uint32_t, GpuSpec>>& variants)
{
    m_gpuVariants = variants;
}

SweepPoint
LayoutSweep::Evaluate(const RunSpec& run, uint32_t machine) const
{
    SweepPoint p;
    p.run = run;
    p.machine = machine;
    Ptr<RapidLlmHelper> helper = CreateObject<RapidLlmHelper>();
    helper->SetBackend(m_backend);
    helper->SetModel(m_model);
    helper->SetHardware(m_machines.at(machine));
    helper->SetRun(run);
    helper->SetSlowGpus(m_slowGpus);
    if (machine < m_gpuVariants.size())
    {
        helper->SetGpuVariants(m_gpuVariants[machine]);
    }
    // The memory check costs a fraction of the replay; only layouts that fit are replayed.
    p.report = helper->CheckMemory();
    if (p.report.feasible)
    {
        p.report = helper->Run();
    }
    return p;
}

std::vector<SweepPoint>
LayoutSweep::Run()
{
    std::vector<SweepPoint> points;
    const std::vector<RunSpec> candidates = Candidates();
    for (std::size_t i = 0; i < candidates.size(); ++i)
    {
        points.push_back(Evaluate(candidates[i], m_machineOf[i]));
    }
    // Fitting layouts by step time, then the rest by peak memory; ties keep the candidate order.
    std::stable_sort(points.begin(),
                     points.end(),
                     [](const SweepPoint& a, const SweepPoint& b)
                     {
                         if (a.report.feasible != b.report.feasible)
                         {
                             return a.report.feasible;
                         }
                         return a.report.feasible ? a.report.stepTimeS < b.report.stepTimeS
                                                  : a.report.memory.peak < b.report.memory.peak;
                     });
    return points;
}

} // namespace rapidllm
} // namespace ns3
