/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_VALIDATION_SUITE_H
#define RAPIDLLM_VALIDATION_SUITE_H

#include <cstdint>
#include <string>
#include <vector>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief One published measurement next to its prediction.
 */
struct ValidationRow
{
    std::string set;      //!< "megatron-sc21", "lmdeploy" or "mlenergy"
    std::string label;    //!< the configuration, e.g. "gpt-1.7b tp1 pp1 32 GPUs"
    std::string metric;   //!< "iteration_s", "first_token_s" or "tpot_s"
    double published = 0; //!< the measurement
    double predicted = 0; //!< our prediction
    double wallS = 0;     //!< wall time of the prediction
    bool fits = true;     //!< training rows: whether the measured configuration fits in memory

    /** \return (predicted - published) / published */
    double Error() const;
};

/**
 * \ingroup rapid-llm
 * \brief The accuracy a metric must reach over its published rows: mean and largest absolute
 * relative error.
 */
struct ValidationBar
{
    std::string metric;  //!< "iteration_s", "first_token_s", "tpot_s", "energy_per_token_j", ...
    double mean = 0;     //!< bound on the mean |error|
    double worst = 0;    //!< bound on every row's |error|
    std::string pending; //!< why the bar is not enforced yet (empty: it is enforced)
};

/**
 * \ingroup rapid-llm
 * \brief How the rows of one metric came out.
 */
struct ValidationSummary
{
    uint32_t rows = 0;       //!< rows of the metric
    double mean = 0;         //!< mean |error|
    double worst = 0;        //!< largest |error|
    std::string worstLabel;  //!< the row with the largest error
    uint32_t notFitting = 0; //!< rows whose measured configuration the memory model refuses

    /** \return whether \p bar holds (a metric without rows does not) */
    bool Meets(const ValidationBar& bar) const;
};

/**
 * \ingroup rapid-llm
 * \brief Runs the published tables of data/validation/ through `RapidLlmHelper` with the A100
 * preset: one efficiency set for every row, the settings each row's source states, nothing else.
 */
class ValidationSuite
{
  public:
    /**
     * \return the folder of the published tables: the source tree's data/validation, or, when
     *         that is gone, an installed program's <prefix>/share/rapid-llm/validation
     */
    static std::string DataDir();

    /**
     * \brief Megatron-LM SC21 Table 1 (training iteration time).
     * \param csv the table
     * \param maxGpus skip rows with more GPUs (0 = none skipped)
     * \return the rows run
     */
    static std::vector<ValidationRow> RunTraining(const std::string& csv, uint32_t maxGpus = 0);

    /**
     * \brief lmdeploy's Llama-2 benchmark (first-token latency and time per output token).
     * \param csv the table
     * \param maxGenerated skip rows generating more tokens (0 = none skipped)
     * \return the rows run (two per request with a first-token latency)
     */
    static std::vector<ValidationRow> RunInference(const std::string& csv,
                                                   uint32_t maxGenerated = 0);

    /**
     * \brief ML.ENERGY's Llama-2 energy per response on one A100 (HF transformers, batch 1):
     * per request three rows: energy per generated token at the predicted time
     * (energy_per_token_j), the same with the GPU's idle power over the measured latency
     * instead of the predicted one (energy_at_measured_time_j: what is left once the host
     * time the model does not yet have is put back), and the average board power (avg_power_w).
     * \param csv the table
     * \return the rows run
     */
    static std::vector<ValidationRow> RunEnergy(const std::string& csv);

    /**
     * \brief NVIDIA's NeMo DGX-H100 pre-training table (nemo-h100-training.csv): the step time
     * of every dense FP8 row whose model has a preset, with the h100-sxm-80gb preset.
     * \param csv the table \param maxGpus skip rows with more GPUs (0 = none skipped)
     * \return the rows run (metric h100_step_s)
     */
    static std::vector<ValidationRow> RunNemoH100(const std::string& csv, uint32_t maxGpus = 0);

    /**
     * \brief The same table's mixture-of-experts rows whose model has a preset: Qwen3-30B-A3B
     * (EP8 within dp) and Qwen3-235B-A22B (EP32 folded over TP2 x DP16, whole experts). A
     * separate set (metric h100_moe_step_s): printed, no bar.
     * \param csv the table \param maxGpus skip rows with more GPUs (0 = none skipped)
     * \return the rows run
     */
    static std::vector<ValidationRow> RunNemoH100Moe(const std::string& csv, uint32_t maxGpus = 0);

    /**
     * \brief MosaicML LLM Foundry's MPT training tables, BF16, PyTorch FSDP
     * (llmfoundry-h100-bf16-training.csv, llmfoundry-a100-bf16-training.csv): the step time of
     * every row on the GPU's 80 GB SXM preset.
     * \param csv the table \param gpu "h100" or "a100"
     * \param maxGpus skip rows with more GPUs (0 = none skipped)
     * \return the rows run (metric <gpu>_bf16_step_s)
     */
    static std::vector<ValidationRow> RunFoundry(const std::string& csv,
                                                 const std::string& gpu,
                                                 uint32_t maxGpus = 0);

    /**
     * \brief A measured table of one node's collectives (xla-h100-collectives.csv: all-reduce
     * and all-gather among 2, 4 and 8 H100 on NVSwitch): the collective's time on the
     * h100-sxm-80gb preset's network, as `rapid-llm collective` measures it, for the sizes from
     * \p minBytes to \p maxBytes.
     * \param csv the table \param minBytes smallest size \param maxBytes largest size
     * \return the rows run (metric collective_s)
     */
    static std::vector<ValidationRow> RunCollectives(const std::string& csv,
                                                     uint64_t minBytes = 8192,
                                                     uint64_t maxBytes = 1ull << 30);

    /**
     * \brief nccl-tests' all_reduce_perf on 4x H100 (NCCL 2.26.2,
     * nccl-tests-h100-4gpu-allreduce.csv), out-of-place time, rows from \p minBytes (below
     * 2 MiB its time is the host thread launching four GPUs, which is not modelled).
     * \param csv the table \param minBytes smallest size
     * \return the rows run (metric nccl_tests_s)
     */
    static std::vector<ValidationRow> RunNcclTests(const std::string& csv,
                                                   uint64_t minBytes = 2ull << 20);
    /**
     * \brief nccl-tests' all_reduce_perf and all_gather_perf on 2-, 4- and 6-GPU slices of one 8x
     * H100 HGX node (NCCL 2.29.2, nccl-tests-h100-hgx-slices.csv), out-of-place time of the rows
     * from \p minBytes to \p maxBytes (the scaling run's 4-GPU rows are left out: the quiet run
     * holds the same GPUs and sizes).
     * \param csv the table \param minBytes smallest size \param maxBytes largest size
     * \return the rows run (metric nccl_tests_hgx_s)
     */
    static std::vector<ValidationRow> RunNcclTestsSlices(const std::string& csv,
                                                         uint64_t minBytes = 8192,
                                                         uint64_t maxBytes = 1ull << 30);

    /**
     * \brief Published fused attention kernel rates on one H100 (flash-attention-h100.csv:
     * FlashAttention-3's figures and a 2026 run of its benchmark):
     * each row's kernel time against the compute model's at the boost clock (short timed
     * runs), FlashAttention-2 rows with its FlashAttention-2 kernel (metric flash2_kernel_s),
     * FlashAttention-3 and cuDNN rows with its Hopper kernel (metric hopper_attention_s).
     * \param csv the table
     * \return the rows run
     */
    static std::vector<ValidationRow> RunAttentionKernels(const std::string& csv);

    /**
     * \return the bars each metric must meet: training iteration time mean 6% / max 10%,
     * time per output token 8% / 15%, first-token latency 12% / 20%, average power 20% / 30%;
     * energy per token 20% / 30% (pending host dispatch)
     */
    static const std::vector<ValidationBar>& Bars();

    /**
     * \param rows predicted rows
     * \param metric the metric to summarize
     * \return the mean and largest absolute error of the rows of \p metric
     */
    static ValidationSummary Summarize(const std::vector<ValidationRow>& rows,
                                       const std::string& metric);
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_VALIDATION_SUITE_H
