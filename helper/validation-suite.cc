/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "validation-suite.h"

#include "collective-probe.h"
#include "job-options.h"
#include "ns3/csv-table.h"
#include "ns3/gpu-compute-model.h"
#include "ns3/hardware-spec.h"
#include "ns3/spec-error.h"
#include "rapid-llm-helper.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <functional>
#include <map>

namespace ns3 {
namespace rapidllm {

namespace {
/** The largest collective a table's row may name: 1 PiB. */
constexpr uint64_t kMaxBytes = uint64_t(1) << 50;
/** The NeMo table's precision labels. */
const std::vector<std::string> kNemoPrecisions = {"bf16", "fp8", "fp8-cs", "not_stated"};

/** \return the published table \p csv, which must hold rows (else SpecError) */
CsvTable
LoadTable(const std::string& csv)
{
    CsvTable t = CsvTable::Load(csv);
    if (t.Rows() == 0)
    {
        throw SpecError(csv, "", "holds no measurements, only its header");
    }
    return t;
}

/**
 * Runs \p body on each row of \p t. A row whose settings the model refuses (an unknown model, a
 * layout its checks reject) is reported at the table's file and line, not only by the field.
 */
void
ForEachRow(const CsvTable& t, const std::function<void(std::size_t)>& body)
{
    for (std::size_t i = 0; i < t.Rows(); ++i)
    {
        try
        {
            body(i);
        }
        catch (const SpecError& e)
        {
            if (e.GetFile() == t.Path())
            {
                throw;
            }
            // An error without a file names a field of the row; one from elsewhere (the run
            // settings, a model's YAML) keeps its own place after the row's.
            throw SpecError(t.Path(),
                            e.GetFile().empty() ? e.GetField() : "",
                            e.GetFile().empty() ? e.GetMessage() : e.what(),
                            t.Line(i));
        }
    }
}

/** Predicts one configuration with the A100-80GB preset, fp16 (or the hardware and type given). */
RunReport
Predict(const ModelSpec& model,
        RunSpec run,
        double& wall,
        const std::string& hardware = "a100-sxm-80gb",
        DataType dtype = DataType::FP16)
{
    auto start = std::chrono::steady_clock::now();
    Ptr<RapidLlmHelper> helper = CreateObject<RapidLlmHelper>();
    helper->SetModel(model);
    helper->SetHardware(HardwareSpec::Load(hardware));
    run.dtype = dtype;
    helper->SetRun(run);
    RunReport report = helper->Run();
    wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return report;
}

/**
 * Times one collective of a measured table among the first \p gpus GPUs of the H100 preset's
 * network (NCCL's choice of algorithm and protocol), as a row labelled "op N GPUs S B".
 */
ValidationRow
CollectiveRow(const NetworkSpec& h100,
              const std::string& op,
              const std::string& field,
              uint64_t bytes,
              uint32_t gpus,
              double publishedS)
{
    CollectiveProbeConfig c;
    c.op = ParseCollectiveOp(op, field);
    c.bytes = bytes;
    c.gpus = gpus;
    auto start = std::chrono::steady_clock::now();
    CollectiveProbeResult r = RunCollectiveProbe(h100, c, "h100-sxm-80gb");
    ValidationRow row;
    row.wallS = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    row.label = op + " " + std::to_string(gpus) + " GPUs " + std::to_string(bytes) + " B";
    row.published = publishedS;
    row.predicted = r.timeS;
    return row;
}
/**
 * \return the layout and batch of row \p i of the NeMo table on \p gpus GPUs, as published:
 * TP, PP, CP, EP (blank: 1), VP (blank: none), the rest data parallel, sequence parallelism with
 * TP > 1, global and micro batch, sequence length
 */
/**
 * \return the data-parallel degree of row \p i of \p t: \p gpus over \p model (the product of
 * the row's other degrees), which must divide it; else SpecError naming the row
 */
uint32_t
DataParallel(const CsvTable& t, std::size_t i, uint32_t gpus, uint64_t model)
{
    if (gpus % model != 0)
    {
        throw SpecError(t.Path(),
                        "gpus",
                        std::to_string(gpus)
                            + " GPUs are not a multiple of the row's other "
                              "parallel degrees' product, "
                            + std::to_string(model),
                        t.Line(i));
    }
    return static_cast<uint32_t>(gpus / model);
}

RunSpec
NemoRowLayout(const CsvTable& t, std::size_t i, uint32_t gpus)
{
    RunSpec run;
    run.parallel.tp = static_cast<uint32_t>(t.Count(i, "tp"));
    run.parallel.pp = static_cast<uint32_t>(t.Count(i, "pp"));
    run.parallel.cp = static_cast<uint32_t>(t.Count(i, "cp"));
    if (!t.Blank(i, "ep"))
    {
        run.parallel.ep = static_cast<uint32_t>(t.Count(i, "ep"));
    }
    run.parallel.dp =
        DataParallel(t, i, gpus, uint64_t(run.parallel.tp) * run.parallel.pp * run.parallel.cp);
    run.parallel.sequenceParallel = run.parallel.tp > 1;
    if (!t.Blank(i, "vp"))
    {
        run.parallel.virtualStages = static_cast<uint32_t>(t.Count(i, "vp"));
    }
    run.globalBatch = static_cast<uint32_t>(t.Count(i, "global_batch"));
    run.microBatch = static_cast<uint32_t>(t.Count(i, "micro_batch"));
    run.sequence = static_cast<uint32_t>(t.Count(i, "seq_len"));
    // Transformer Engine's attention on Hopper: cuDNN's fused attention, which it prefers to
    // FlashAttention on sm90 "for performance reasons" (transformer_engine/pytorch/attention/
    // dot_product_attention/utils.py, get_attention_backend), a warp-specialized kernel.
    run.SetAttention("flash3");
    return run;
}
/**
 * \return row \p i of the NeMo table (model \p model on \p gpus GPUs) predicted with \p run in
 * the row's precision (fp8, or bf16 where it says so) on the H100 preset, in set \p set with
 * metric \p metric, against the derived step time
 */
ValidationRow
PredictNemoRow(const CsvTable& t,
               std::size_t i,
               const std::string& model,
               uint32_t gpus,
               const RunSpec& run,
               const std::string& set,
               const std::string& metric)
{
    ValidationRow row;
    row.set = set;
    row.label = t.Text(i, "release") + " " + model + " " + std::to_string(gpus) + " GPUs";
    row.metric = metric;
    row.published = t.Positive(i, "step_s");
    const DataType type =
        t.Choice(i, "precision", kNemoPrecisions) == "bf16" ? DataType::BF16 : DataType::FP8;
    const RunReport report = Predict(ModelSpec::Load(model), run, row.wallS, "h100-sxm-80gb", type);
    row.predicted = report.stepTimeS;
    row.fits = report.feasible;
    return row;
}
} // namespace

double
ValidationRow::Error() const
{
    return (predicted - published) / published;
}

bool
ValidationSummary::Meets(const ValidationBar& bar) const
{
    return rows > 0 && mean <= bar.mean && worst <= bar.worst;
}

const std::vector<ValidationBar>&
ValidationSuite::Bars()
{
    // ML.ENERGY measured eager PyTorch at batch 1, where the host sets the time per token (host
    // dispatch gives it: latency_per_token_s). Its energy and power bars wait for a sourced
    // figure of the power an A100 draws while its memory-bound decode kernels run
    // (doc/validation.md, "Where the missing energy is not": one GPU in Zeus's window, gaps
    // already charged above a measured A100-SXM4 with a CUDA context and one idling at its
    // boost clock, HBM2E physics ~60 pJ/B).
    static const std::string hostDispatch =
        "the measured boards draw 190-235 W; the missing energy follows the bytes the decode "
        "kernels stream (114-132 pJ/B above the estimated 60), not the gaps between launches "
        "(88 W, above a measured A100-SXM4 with a CUDA context, 76 W, or idling at its boost "
        "clock, 82 W); no A100 energy per HBM byte or bandwidth-bound kernel's board power "
        "was found to set it";
    static const std::vector<ValidationBar> bars{
        // Issue 12's bars for the tables it keeps: Megatron SC21 mean <= 4% (largest 8%),
        // lmdeploy time per token mean <= 6%, first token mean <= 8%.
        {"iteration_s", 0.04, 0.08, ""},
        {"tpot_s", 0.06, 0.15, ""},
        {"first_token_s", 0.08, 0.20, ""},
        {"latency_per_token_s", 0.15, 0.20, ""},
        {"avg_power_w", 0.20, 0.30, hostDispatch},
        {"energy_per_token_j", 0.20, 0.30, hostDispatch},
        {"energy_at_measured_time_j", 0.20, 0.30, hostDispatch},
        {"h100_step_s",
         0.08,
         0.15,
         "Transformer Engine's FP8 recipe, cuDNN's Hopper attention, its context-parallel ring, "
         "userbuffers TP overlap and the SMs NCCL's kernels take from the GEMMs they overlap are "
         "modelled; every row is fast, the Megatron-Bridge rows (25.x, 26.02) by 10.2-14.8% on "
         "8-64 GPUs and 18.3-21.5% for Llama-3.1 405B on 1,024, the 24.07 rows by 6.0-26.8%, "
         "with every kernel at or below the rates public H100 measurements give, attention's "
         "backward excepted (7-14% above cuDNN's 2026 rate, its forward 9-18% below); the gap "
         "is outside the kernels and differs by release (Llama-3-8B on 8 GPUs is measured "
         "17-20% slower in 24.07 than in 25.x, the layouts explain 0.4-2.9%)"},
        {"h100_moe_step_s",
         0.08,
         0.15,
         "the model runs Megatron's MoE layer as router, dispatch and combine all-to-alls, "
         "the token dispatcher's permutation and sorting kernels, grouped expert GEMMs and "
         "their FP8 casts; the fine-grained models are fast, Qwen3-30B-A3B on 16 GPUs 2.5-2.8x "
         "(the published rows reach 6% of the FP8 peak) and gpt-oss-120b (bf16, 64 GPUs) by "
         "34-40%, Qwen3-235B-A22B on 256 (EP32 folded over TP2 x DP16, its all-to-alls across "
         "4 nodes, overlapped with the other micro-batch's pass as its recipe's "
         "moe_a2a_overlap does) 13% fast, as the dense Megatron-Bridge rows are; not "
         "modelled: Transformer Engine's per-expert launches in its grouped linear layers, "
         "the host synchronisation of each layer's dispatch, the router's auxiliary-loss "
         "kernels; doc/validation.md"},
        {"h100_bf16_step_s",
         0.08,
         0.15,
         "the same benchmark's A100 rows show the FSDP and attention parts (a100_bf16_step_s); "
         "the H100 rows are a further 20-30% fast: a 2023 software stack on a new GPU; "
         "doc/validation.md"},
        {"a100_bf16_step_s",
         0.08,
         0.15,
         "the small models' short-sequence rows are fast (FSDP's framework time is not "
         "modelled) and the long-sequence rows 1-26% fast: MPT's 2022 Triton attention kernel "
         "is modelled by its tiling, not its backward's register spilling or fp32 atomics; "
         "doc/validation.md"},
        // nccl-tests' own 4-GPU H100 all-reduce from 2 MiB (NCCL's ring graph, protocols and
        // NVLS; mean 3.4%, largest 5.6% when added).
        {"nccl_tests_s", 0.05, 0.08, ""},
        // Issue 12's bar for one node's NCCL all-reduce and all-gather, 8 KiB to 1 GiB.
        {"nccl_tests_hgx_s",
         0.10,
         1.00,
         "below 1 MiB nccl-tests' time is a 22-28 us floor (one host thread issuing NCCL's launch "
         "on every GPU; 14-16 us with a CUDA graph on the same GPUs) that no sourced constant "
         "models yet, and the all-gather runs 8-30% slower than NCCL's own tuning model (the "
         "ring's bus bandwidth) predicts; the all-reduce from 1 MiB is within 11% (mean 4%)"},
        // Fused attention kernels on one H100 (flash-attention-h100.csv): Hopper's warp-
        // specialized kernels (FlashAttention-3, cuDNN) against both sources, 2024 and 2026.
        {"hopper_attention_s", 0.15, 0.35, ""},
        {"flash2_kernel_s",
         0.10,
         0.20,
         "FlashAttention-2 runs its Ampere mma.sync tiling on Hopper, at the preset's mma.sync "
         "share of the tensor rate (0.653, Luo et al. 2025), and is still 6-38% fast: its "
         "H100 kernel is shared-memory bound in the model, and its measured H100 forward "
         "matches its A100 forward per SM and clock; doc/validation.md"},
        {"collective_s",
         0.10,
         1.00,
         "XLA's timing sits above NCCL's own: a 12-35 us per-execution floor below 1 MiB, "
         "and 2-/4-GPU groups (run 4 and 2 at once) at 250/307 GB/s bus bandwidth where "
         "nccl-tests reaches ~365 on the same GPUs; NCCL's ring graph, protocols and NVLS are "
         "modelled (nccl-tests' 4-GPU H100 all-reduce from 2 MiB: mean 3.4%)"}};
    return bars;
}

ValidationSummary
ValidationSuite::Summarize(const std::vector<ValidationRow>& rows, const std::string& metric)
{
    ValidationSummary s;
    double sum = 0;
    for (const auto& r : rows)
    {
        if (r.metric != metric)
        {
            continue;
        }
        const double e = std::fabs(r.Error());
        sum += e;
        ++s.rows;
        s.notFitting += r.fits ? 0 : 1;
        if (e >= s.worst)
        {
            s.worst = e;
            s.worstLabel = r.label;
        }
    }
    s.mean = s.rows > 0 ? sum / s.rows : 0;
    return s;
}

std::string
ValidationSuite::DataDir()
{
    const std::string source = std::string(RAPIDLLM_SOURCE_DIR) + "/data/validation";
    std::error_code ec;
    if (std::filesystem::is_directory(source, ec))
    {
        return source;
    }
    // Installed without the source tree: <prefix>/bin/<program> next to
    // <prefix>/share/rapid-llm/validation (where `cmake --install` puts the tables).
    const std::filesystem::path program = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (!ec)
    {
        const std::filesystem::path installed =
            program.parent_path().parent_path() / "share" / "rapid-llm" / "validation";
        if (std::filesystem::is_directory(installed, ec))
        {
            return installed.string();
        }
    }
    return source;
}

std::vector<ValidationRow>
ValidationSuite::RunTraining(const std::string& csv, uint32_t maxGpus)
{
    const CsvTable t = LoadTable(csv);
    std::vector<ValidationRow> rows;
    ForEachRow(
        t,
        [&](std::size_t i)
        {
            const auto gpus = static_cast<uint32_t>(t.Count(i, "gpus", 1, JobOptions::kMaxGpus));
            if (maxGpus > 0 && gpus > maxGpus)
            {
                return;
            }
            const std::string model = t.Text(i, "model");
            RunSpec run;
            run.parallel.tp = static_cast<uint32_t>(t.Count(i, "tp"));
            run.parallel.pp = static_cast<uint32_t>(t.Count(i, "pp"));
            run.parallel.dp = DataParallel(t, i, gpus, uint64_t(run.parallel.tp) * run.parallel.pp);
            run.globalBatch = static_cast<uint32_t>(t.Count(i, "global_batch"));
            run.microBatch = static_cast<uint32_t>(t.Count(i, "micro_batch"));
            run.sequence = 2048;
            run.recompute = Recompute::FULL;
            run.flashAttention = false; // 2021: unfused softmax attention
            run.overlapGradReduce =
                t.Choice(i, "grad_reduce", {"overlap", "after_backward"}) == "overlap";
            run.overlapTpReduce = t.Choice(i, "tp_reduce", {"overlap", "blocking"}) == "overlap";
            const auto perVirtual =
                static_cast<uint32_t>(t.Count(i, "layers_per_virtual_stage", 0));
            if (perVirtual > 0)
            {
                const uint32_t layers = ModelSpec::Load(model).layers;
                if (layers % (uint64_t(run.parallel.pp) * perVirtual) != 0)
                {
                    throw SpecError(t.Path(),
                                    "layers_per_virtual_stage",
                                    std::to_string(perVirtual) + " does not divide " + model + "'s "
                                        + std::to_string(layers) + " layers over pp "
                                        + std::to_string(run.parallel.pp) + " evenly",
                                    t.Line(i));
                }
                run.parallel.virtualStages = layers / (run.parallel.pp * perVirtual);
            }
            ValidationRow row;
            row.set = "megatron-sc21";
            row.label = model + " tp" + std::to_string(run.parallel.tp) + " pp"
                        + std::to_string(run.parallel.pp) + " " + std::to_string(gpus) + " GPUs";
            row.metric = "iteration_s";
            row.published = t.Positive(i, "iteration_s");
            const RunReport report = Predict(ModelSpec::Load(model), run, row.wallS);
            row.predicted = report.stepTimeS;
            row.fits = report.feasible;
            rows.push_back(row);
        });
    return rows;
}

std::vector<ValidationRow>
ValidationSuite::RunInference(const std::string& csv, uint32_t maxGenerated)
{
    const CsvTable t = LoadTable(csv);
    std::vector<ValidationRow> rows;
    ForEachRow(t,
               [&](std::size_t i)
               {
                   RunSpec run;
                   run.mode = RunMode::INFERENCE;
                   run.parallel.tp = static_cast<uint32_t>(t.Count(i, "tp"));
                   run.batch = static_cast<uint32_t>(t.Count(i, "batch"));
                   run.promptTokens = static_cast<uint32_t>(t.Count(i, "prompt"));
                   run.generatedTokens = static_cast<uint32_t>(t.Count(i, "generated"));
                   run.firstToken = t.Choice(i, "first_token_pass", {"auto", "prefill", "decode"});
                   run.splitKvDecode =
                       t.Choice(i, "decode_attention", {"split_kv", "per_head"}) == "split_kv";
                   run.engine = "lmdeploy"; // TurboMind's C++ loop launches each kernel
                   if (maxGenerated > 0 && run.generatedTokens > maxGenerated)
                   {
                       return;
                   }
                   const std::string model = t.Text(i, "model");
                   double wall = 0;
                   RunReport report = Predict(ModelSpec::Load(model), run, wall);
                   ValidationRow row;
                   row.set = "lmdeploy";
                   row.label = model + " tp" + std::to_string(run.parallel.tp) + " batch "
                               + std::to_string(run.batch) + " " + std::to_string(run.promptTokens)
                               + "/" + std::to_string(run.generatedTokens);
                   row.wallS = wall;
                   if (!t.Blank(i, "first_token_ms"))
                   {
                       row.metric = "first_token_s";
                       row.published = t.Positive(i, "first_token_ms") / 1e3;
                       row.predicted = report.ttftS;
                       rows.push_back(row);
                   }
                   row.metric = "tpot_s";
                   row.published = t.Positive(i, "tpot_ms") / 1e3;
                   row.predicted = report.tpotS;
                   rows.push_back(row);
               });
    return rows;
}

std::vector<ValidationRow>
ValidationSuite::RunEnergy(const std::string& csv)
{
    const CsvTable t = LoadTable(csv);
    std::vector<ValidationRow> rows;
    ForEachRow(
        t,
        [&](std::size_t i)
        {
            // ML.ENERGY 2023 (mlenergy-llama2-energy.md): FastChat over Hugging Face transformers,
            // eager PyTorch 2.0.1, fp16, one A100, batch 1, up to 512 new tokens; the published
            // averages per response. Attention is the unfused eager kernels; the first token comes
            // from the prefill forward. Prompt lengths are not published: 128 tokens (a 512-token
            // prompt raises the predicted energy per token by 3%, the prefill being short).
            RunSpec run;
            run.mode = RunMode::INFERENCE;
            run.parallel.tp = static_cast<uint32_t>(t.Count(i, "gpus", 1, JobOptions::kMaxGpus));
            run.batch = static_cast<uint32_t>(t.Count(i, "batch"));
            run.promptTokens = 128;
            const double generated = t.Positive(i, "response_length_tokens");
            run.generatedTokens = static_cast<uint32_t>(std::lround(generated));
            run.firstToken = "prefill";
            run.flashAttention = false;
            run.engine = "hf"; // transformers generate(): eager PyTorch, one op at a time
            std::string model = t.Text(i, "model");
            const std::string chat = "-chat";
            if (model.size() > chat.size()
                && model.compare(model.size() - chat.size(), chat.size(), chat) == 0)
            {
                model.resize(model.size() - chat.size()); // same weights shapes as the base model
            }
            double wall = 0;
            RunReport report = Predict(ModelSpec::Load(model), run, wall);
            const double measuredS = t.Positive(i, "latency_s");
            const double tokens = double(run.generatedTokens) * run.batch;
            ValidationRow row;
            row.set = "mlenergy";
            row.label = model + " " + t.Text(i, "task") + " " + std::to_string(run.generatedTokens)
                        + " tok";
            row.wallS = wall;
            row.metric = "energy_per_token_j";
            row.published = t.Positive(i, "energy_per_token_j");
            row.predicted = report.energyPerTokenJ;
            rows.push_back(row);
            // The same energy with the boards' idle power over the measured latency instead of the
            // predicted one: the energy the work takes at the measured time (where the prediction
            // is longer, the difference's idle energy comes off).
            const double idleW = HardwareSpec::Load("a100-sxm-80gb").gpu.power.WaitingW();
            row.metric = "energy_at_measured_time_j";
            row.predicted =
                (report.energyJ + idleW * report.gpus * (measuredS - report.stepTimeS)) / tokens;
            rows.push_back(row);
            row.metric = "avg_power_w";
            row.published = t.Positive(i, "avg_power_w");
            row.predicted = report.avgPowerW;
            rows.push_back(row);
            // The time per generated token: eager PyTorch at batch 1 is launch-bound, so this is
            // the host dispatch's check.
            row.metric = "latency_per_token_s";
            row.published = t.Positive(i, "ms_per_token") / 1e3;
            row.predicted = report.stepTimeS / tokens;
            rows.push_back(row);
        });
    return rows;
}

std::vector<ValidationRow>
ValidationSuite::RunCollectives(const std::string& csv, uint64_t minBytes, uint64_t maxBytes)
{
    // XLA's measured table for sm_90 (xla-h100-collectives.md): each entry is the median of 20
    // runs of one collective on f32 data, 8/n groups of n GPUs at once in one 8x H100 node
    // (every GPU in one group, so on NVSwitch the groups do not share links): one group is
    // run here. NCCL chose the algorithm and protocol.
    const CsvTable t = LoadTable(csv);
    const HardwareSpec h100 = HardwareSpec::Load("h100-sxm-80gb");
    std::vector<ValidationRow> rows;
    ForEachRow(t,
               [&](std::size_t i)
               {
                   const auto bytes = t.Count(i, "size_bytes", 0, kMaxBytes);
                   if (bytes < minBytes || bytes > maxBytes)
                   {
                       return;
                   }
                   ValidationRow row =
                       CollectiveRow(h100.network,
                                     t.Text(i, "collective"),
                                     "collective",
                                     bytes,
                                     static_cast<uint32_t>(
                                         t.Count(i, "devices_per_group", 1, JobOptions::kMaxGpus)),
                                     t.Positive(i, "time_us") * 1e-6);
                   row.set = "xla-h100-nccl";
                   row.metric = "collective_s";
                   rows.push_back(row);
               });
    return rows;
}

std::vector<ValidationRow>
ValidationSuite::RunNcclTests(const std::string& csv, uint64_t minBytes)
{
    // nccl-tests' all-reduce on 4x H100 (nccl-tests-h100-4gpu-allreduce.md): one process
    // drives the four GPUs; NCCL chose the algorithm and protocol.
    const CsvTable t = LoadTable(csv);
    const HardwareSpec h100 = HardwareSpec::Load("h100-sxm-80gb");
    std::vector<ValidationRow> rows;
    ForEachRow(
        t,
        [&](std::size_t i)
        {
            const auto bytes = t.Count(i, "size_bytes", 0, kMaxBytes);
            if (bytes < minBytes)
            {
                return;
            }
            ValidationRow row = CollectiveRow(
                h100.network, "all-reduce", "op", bytes, 4, t.Positive(i, "oop_time_us") * 1e-6);
            row.set = "nccl-tests-h100";
            row.metric = "nccl_tests_s";
            rows.push_back(row);
        });
    return rows;
}

std::vector<ValidationRow>
ValidationSuite::RunNcclTestsSlices(const std::string& csv, uint64_t minBytes, uint64_t maxBytes)
{
    // nccl-tests on slices of one 8x H100 HGX node (nccl-tests-h100-hgx-slices.md): one process
    // and one thread drive the slice's GPUs; NCCL chose the algorithm and protocol.
    const CsvTable t = LoadTable(csv);
    const HardwareSpec h100 = HardwareSpec::Load("h100-sxm-80gb");
    std::vector<ValidationRow> rows;
    ForEachRow(t,
               [&](std::size_t i)
               {
                   const auto bytes = t.Count(i, "size_bytes", 0, kMaxBytes);
                   const auto gpus =
                       static_cast<uint32_t>(t.Count(i, "gpus", 1, JobOptions::kMaxGpus));
                   const std::string source = t.Text(i, "source_file");
                   if (bytes < minBytes || bytes > maxBytes
                       || (source == "results/scaling.txt" && gpus == 4))
                   {
                       return;
                   }
                   ValidationRow row = CollectiveRow(h100.network,
                                                     t.Text(i, "op"),
                                                     "op",
                                                     bytes,
                                                     gpus,
                                                     t.Positive(i, "oop_time_us") * 1e-6);
                   row.set = "nccl-tests-hgx";
                   row.metric = "nccl_tests_hgx_s";
                   rows.push_back(row);
               });
    return rows;
}

std::vector<ValidationRow>
ValidationSuite::RunAttentionKernels(const std::string& csv)
{
    // FlashAttention-3's Figures 5 and 6 and a 2026 run of its benchmark
    // (flash-attention-h100.md): short timed runs, so the model runs at the boost clock.
    const CsvTable t = LoadTable(csv);
    Ptr<GpuComputeModel> model = CreateObject<GpuComputeModel>();
    model->SetGpu(HardwareSpec::Load("h100-sxm-80gb").gpu);
    model->SetClockPolicy(ClockPolicy::BOOST);
    std::vector<ValidationRow> rows;
    ForEachRow(
        t,
        [&](std::size_t i)
        {
            const std::string kernel = t.Choice(i, "kernel", {"flash2", "flash3", "cudnn"});
            const bool backward = t.Choice(i, "pass", {"forward", "backward"}) == "backward";
            AttentionShape a;
            a.batch = t.Count(i, "batch");
            a.heads = t.Count(i, "heads");
            a.kvHeads = a.heads;
            a.queryLen = t.Count(i, "seq_len");
            a.kvLen = a.queryLen;
            a.headDim = t.Count(i, "head_dim");
            a.causal = t.Choice(i, "causal", {"yes", "no"}) == "yes";
            a.kernel = kernel == "flash2" ? AttentionKernel::FLASH2 : AttentionKernel::HOPPER;
            // The paper's FLOP count: 4 b h s^2 d forward, halved under the mask; 2.5x backward.
            const double flops = 4.0 * a.batch * a.heads * double(a.queryLen) * a.kvLen * a.headDim
                                 * (a.causal ? 0.5 : 1.0) * (backward ? 2.5 : 1.0);
            auto start = std::chrono::steady_clock::now();
            const OperatorCost c = backward ? model->AttentionBackward(a, DataType::BF16)
                                            : model->AttentionForward(a, DataType::BF16);
            ValidationRow row;
            row.wallS =
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            row.set = "attention-h100";
            row.label = t.Text(i, "source") + " " + kernel + (backward ? " bwd" : " fwd")
                        + (a.causal ? " causal" : "") + " d" + std::to_string(a.headDim) + " s"
                        + std::to_string(a.queryLen);
            row.metric = kernel == "flash2" ? "flash2_kernel_s" : "hopper_attention_s";
            row.published = flops / (t.Positive(i, "tflops") * 1e12);
            row.predicted = c.timeS;
            rows.push_back(row);
        });
    return rows;
}

std::vector<ValidationRow>
ValidationSuite::RunNemoH100(const std::string& csv, uint32_t maxGpus)
{
    // NVIDIA's NeMo / Megatron-Bridge DGX-H100 pre-training rows (nemo-h100-training.md) whose
    // model has a preset: dense Llama-2/3 and GPT-3 175B, FP8 (the 25.09 rows state no precision;
    // the same rows are FP8-CS in 25.11). Settings as published (TP, PP, CP, VP, global and
    // micro batch, sequence, FSDP); the recipes' defaults: flash attention, sequence parallelism
    // with TP > 1, Megatron's distributed optimizer (ZeRO-1) unless FSDP, no recomputation
    // (selective where the recipe says so).
    const CsvTable t = LoadTable(csv);
    std::vector<ValidationRow> rows;
    ForEachRow(
        t,
        [&](std::size_t i)
        {
            std::string model = t.Text(i, "model");
            if (model == "llama3.1-405b")
            {
                model = "llama3-405b"; // the same shape
            }
            const std::vector<std::string> known = {"llama2-7b",
                                                    "llama2-13b",
                                                    "llama2-70b",
                                                    "llama3-8b",
                                                    "llama3-70b",
                                                    "llama3-405b",
                                                    "gpt3-5b",
                                                    "gpt3-20b",
                                                    "gpt3-175b",
                                                    "nemotron-8b",
                                                    "nemotron-22b",
                                                    "nemotron-340b"};
            const std::string precision = t.Choice(i, "precision", kNemoPrecisions);
            if (std::find(known.begin(), known.end(), model) == known.end() || precision == "bf16")
            {
                return;
            }
            const auto gpus = static_cast<uint32_t>(t.Count(i, "gpus", 1, JobOptions::kMaxGpus));
            if (maxGpus > 0 && gpus > maxGpus)
            {
                return;
            }
            RunSpec run = NemoRowLayout(t, i, gpus);
            run.parallel.zeroStage = t.Choice(i, "fsdp", {"yes", "no"}) == "yes" ? 3 : 1;
            // The distributed optimizer's parameter gather overlaps the next forward: Megatron-
            // Bridge's CommOverlapConfig turns overlap_param_gather on with dp > 1
            // (training/comm_overlap.py, _get_optimizer_overlap_cfgs); NeMo 1.0's recipes set
            // Apex's overlap_param_sync (NeMo-Framework-Launcher conf/training/llama/*.yaml).
            run.paramGather = run.parallel.zeroStage == 1 ? "overlap" : "auto";
            if (t.Text(i, "release") == "24.07" && model == "nemotron-340b")
            {
                // nemotron/nemotron_340b.yaml: Megatron-core's distributed optimizer
                // (mcore_distributed_optim) with grad_sync_dtype bf16.
                run.mainGrads = "bf16";
            }
            else if (t.Text(i, "release") == "24.07")
            {
                // NeMo 1.0's recipes train with distributed_fused_adam (Apex), not Megatron-core's
                // distributed optimizer (NeMo-Framework-Launcher
                // conf/training/{llama,gpt3,nemotron}/
                // *.yaml). Its Llama and GPT-3 H100 FP8 example scripts sync the gradients in bf16
                // (examples/training/{llama,gpt}/h100/*_fp8*.sh:
                // +training.model.optim.grad_sync_dtype=bf16; nemo-h100-training.md); the Nemotron
                // ones (examples/training/nemotron/h100/nemotron_{8b,22b}_fp8.sh) and their yamls
                // leave Apex's default, the fp32 main gradients.
                run.memoryLayout = MemoryLayout::APEX;
                run.mainGrads = model.rfind("nemotron-", 0) == 0 ? "auto" : "bf16";
                if (model.rfind("gpt3-", 0) == 0)
                {
                    // gpt3/{5b,20b,175b}_fp8_performance.yaml: activations_checkpoint_granularity:
                    // selective (the core attention).
                    run.recompute = Recompute::SELECTIVE;
                }
            }
            else
            {
                // NeMo 2.0 / Megatron-Bridge performance scripts reduce FP8 runs' gradients in bf16
                // (scripts/performance: "recipe.trainer.plugins.grad_reduce_in_fp32 = False").
                run.mainGrads = "bf16";
            }
            if (model == "llama3-405b")
            {
                // Megatron-Bridge's llama31_405b recipe counts the embedding and the loss as one
                // layer each in the pipeline split (account_for_embedding_in_pipeline_split,
                // account_for_loss_in_pipeline_split): 126 + 2 over PP8 x VP8, 2 per model chunk.
                run.parallel.embeddingInSplit = true;
                run.parallel.lossInSplit = true;
            }
            // Transformer Engine's userbuffers TP overlap where the row's recipe turns it on:
            // Megatron-Bridge's Llama-3-70B H100 recipes (COMM_OVERLAP_CONFIG_MAP, fp8:
            // userbuffers_fp8_h100_h8192_tp4_mbs1_seqlen8192), NeMo-Framework-Launcher's
            // gpt3/175b_fp8_performance.yaml and llama/llama3_70b.yaml (ub_tp_comm_overlap: true);
            // its llama/llama2_70b.yaml turns it off (nemo-h100-training.md).
            if (run.parallel.tp > 1 && model != "llama2-70b")
            {
                run.tpCommOverlap = "userbuffers";
            }
            // The rows labelled FP8-CS run Transformer Engine's current scaling; the others
            // (24.07's "FP8", 25.09's unstated, 26.02's "FP8") keep its default, delayed scaling.
            run.fp8Scaling = precision == "fp8-cs" ? "current" : "delayed";
            rows.push_back(PredictNemoRow(t, i, model, gpus, run, "nemo-h100", "h100_step_s"));
        });
    return rows;
}

std::vector<ValidationRow>
ValidationSuite::RunNemoH100Moe(const std::string& csv, uint32_t maxGpus)
{
    // The MoE rows of the same table (nemo-h100-training.md): Megatron-Bridge's recipes, token
    // dropless with the token distribution force-balanced ("In MoE training benchmarks, we
    // force-balance the token distribution among experts": imbalance 1), Megatron's
    // distributed optimizer with bf16 gradient reduction, the published TP, PP, VP, EP, batch
    // and sequence. The Qwen3 recipes (Megatron-Bridge scripts/performance/configs/qwen3:
    // qwen3_workload_base_configs.py, qwen3_llm_pretrain.py; recipes/qwen/qwen3_moe.py) keep
    // experts whole (expert_tensor_parallel_size 1: the 235B rows fold EP32 over TP2 x DP16),
    // turn on the TP communication overlap, and count the 235B model's embedding and loss in
    // its pipeline split (94 + 2 layers over PP8 x VP4). gpt-oss-120b runs in bf16, EP8 over
    // PP4 x DP16 with whole experts (gpt_oss_workload_base_configs.py: H100 BF16 V1/V2), its
    // gradients reduced in bf16 and its router force-balanced (gpt_oss_llm_pretrain.py,
    // set_gpt_oss_common_configs); its recipe's recomputation of the norms and the expert
    // activation (recompute_modules) is not modelled.
    const CsvTable t = LoadTable(csv);
    std::vector<ValidationRow> rows;
    ForEachRow(t,
               [&](std::size_t i)
               {
                   const std::string model = t.Text(i, "model");
                   if (t.Choice(i, "arch", {"dense", "moe"}) != "moe"
                       || (model != "qwen3-30b-a3b" && model != "qwen3-235b-a22b"
                           && model != "gpt-oss-120b"))
                   {
                       return;
                   }
                   const auto gpus =
                       static_cast<uint32_t>(t.Count(i, "gpus", 1, JobOptions::kMaxGpus));
                   if (maxGpus > 0 && gpus > maxGpus)
                   {
                       return;
                   }
                   RunSpec run = NemoRowLayout(t, i, gpus);
                   run.parallel.zeroStage = 1;
                   run.paramGather = "overlap"; // as the dense rows (RunNemoH100)
                   run.parallel.etp = 1;
                   run.mainGrads = "bf16";
                   run.fp8Scaling = t.Choice(i, "precision", kNemoPrecisions) == "fp8-cs"
                                        ? "current"
                                        : "delayed";
                   if (run.parallel.tp > 1)
                   {
                       run.tpCommOverlap = "userbuffers";
                   }
                   if (model == "qwen3-235b-a22b")
                   {
                       run.parallel.embeddingInSplit = true;
                       run.parallel.lossInSplit = true;
                       // QWEN3_235B_A22B_PRETRAIN_CONFIG_H100_*_V1/V2: moe_a2a_overlap=True
                       // (Megatron's overlap_moe_expert_parallel_comm with delay_wgrad_compute);
                       // the 30B and gpt-oss H100 configs leave it off.
                       run.moeA2aOverlap = true;
                   }
                   rows.push_back(
                       PredictNemoRow(t, i, model, gpus, run, "nemo-h100-moe", "h100_moe_step_s"));
               });
    return rows;
}

std::vector<ValidationRow>
ValidationSuite::RunFoundry(const std::string& csv, const std::string& gpu, uint32_t maxGpus)
{
    // MosaicML LLM Foundry's MPT benchmarks (llmfoundry-h100-bf16-training.md): PyTorch FSDP
    // FULL_SHARD over every GPU, no tensor or pipeline parallelism, BF16, the published micro
    // batch, global batch and activation checkpointing; each run's model carries a learned
    // position table of its max_seq_len (the published num_params say so). Attention is MPT's
    // attn_impl: triton, the 2022 FlashAttention in Triton that LLM Foundry ships
    // (llmfoundry/models/layers/flash_attn_triton.py), modelled by its own tiling.
    const CsvTable t = LoadTable(csv);
    std::vector<ValidationRow> rows;
    std::vector<uint32_t> microBatches;
    ForEachRow(t,
               [&](std::size_t i)
               {
                   const auto gpus =
                       static_cast<uint32_t>(t.Count(i, "gpus", 1, JobOptions::kMaxGpus));
                   if (maxGpus > 0 && gpus > maxGpus)
                   {
                       return;
                   }
                   const std::string name = t.Text(i, "model");
                   ModelSpec model = ModelSpec::Load(name);
                   RunSpec run;
                   run.parallel.dp = gpus;
                   run.parallel.zeroStage = 3;
                   run.sequence = static_cast<uint32_t>(t.Count(i, "seq_len"));
                   model.maxSequence = run.sequence;
                   run.microBatch = static_cast<uint32_t>(t.Count(i, "micro_batch"));
                   run.globalBatch = static_cast<uint32_t>(t.Count(i, "global_batch"));
                   run.recompute =
                       t.Choice(i, "activation_checkpointing", {"true", "false"}) == "true"
                           ? Recompute::FULL
                           : Recompute::NONE;
                   run.SetAttention("triton2022");
                   ValidationRow row;
                   row.set = "foundry-" + gpu;
                   row.label = name + " seq " + std::to_string(run.sequence) + " "
                               + std::to_string(gpus) + " GPUs";
                   row.metric = gpu + "_bf16_step_s";
                   row.published =
                       t.Positive(i, "global_batch_tokens") / t.Positive(i, "throughput_tok_s");
                   const RunReport report =
                       Predict(model, run, row.wallS, gpu + "-sxm-80gb", DataType::BF16);
                   row.predicted = report.stepTimeS;
                   row.fits = report.feasible;
                   rows.push_back(row);
                   microBatches.push_back(run.microBatch);
               });
    // A configuration measured at more than one micro-batch is told apart by it (two rows of
    // mpt-125m seq 2048 on 8 A100s read alike).
    std::map<std::string, uint32_t> seen;
    for (const ValidationRow& r : rows)
    {
        ++seen[r.label];
    }
    for (std::size_t k = 0; k < rows.size(); ++k)
    {
        if (seen[rows[k].label] > 1)
        {
            rows[k].label += " mbs " + std::to_string(microBatches[k]);
        }
    }
    return rows;
}

} // namespace rapidllm
} // namespace ns3
