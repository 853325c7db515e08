/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_LAYOUT_SWEEP_H
#define RAPIDLLM_LAYOUT_SWEEP_H

#include "ns3/hardware-spec.h"
#include "ns3/model-spec.h"
#include "ns3/run-report.h"
#include "ns3/run-spec.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ns3 {
namespace rapidllm {

/** How a sweep's layouts split the decoder layers over the pipeline stages. */
enum class PipelineSplit
{
    EVEN,          //!< layers / (pp x vpp) per model chunk; other layouts are skipped
    FIRST_LAST,    //!< where that fails, fewer layers on the first and the last stage
    EMBEDDING_LOSS //!< the embedding and the loss count as one layer each (pp >= 2)
};

/** \return the allowed names of PipelineSplit: even, first-last, embedding-loss */
std::vector<std::string> PipelineSplitNames();

/**
 * \param name one of PipelineSplitNames()
 * \return its value; throws std::invalid_argument for any other name
 */
PipelineSplit ParsePipelineSplit(const std::string& name);

/**
 * \ingroup rapid-llm
 * \brief The training layouts a sweep tries: every combination of the listed degrees, micro-batch
 * sizes and recomputation modes on a number of GPUs (or on each of several) (dp = gpus / (tp x pp x
 * cp); expert parallelism splits the dp ranks of each stage, as Megatron-LM's does without MoE
 * folding).
 */
struct SweepSpace
{
    uint32_t gpus = 8; //!< GPUs of the job
    /**
     * GPU counts to try (e.g. 32, 64, 128), each with every layout: how the job scales; empty:
     * gpus alone
     */
    std::vector<uint32_t> gpuCounts;
    std::vector<uint32_t> tp{1, 2, 4, 8};              //!< tensor parallel degrees
    std::vector<uint32_t> pp;                          //!< pipeline degrees (empty: every divisor)
    std::vector<uint32_t> cp{1};                       //!< context parallel degrees
    std::vector<uint32_t> ep{1};                       //!< expert parallel degrees (MoE models)
    std::vector<uint32_t> microBatch{1, 2, 4};         //!< micro-batch sizes
    std::vector<uint32_t> virtualStages{1};            //!< virtual stages per rank (interleaving)
    std::vector<Recompute> recompute{Recompute::FULL}; //!< recomputation modes
    /**
     * Pipeline schedules (ParallelSpec::schedule) to try, each with every layout: zb-h1 runs on
     * the layouts with a pipeline and one model chunk per stage, zb-v on those with two, and
     * each is ruled out on the others
     */
    std::vector<std::string> schedules{"1f1b"};
    /**
     * Compute types to try (e.g. bf16 and fp8), each with every layout; empty: the base run's.
     * fp8 takes the base's fp8 scaling, the others TE's default (no fp8 casts to scale)
     */
    std::vector<DataType> dtypes;
    /**
     * How layouts split the layers over their stages. EVEN (the default) skips the layouts whose
     * layers do not divide into pp x vpp chunks. FIRST_LAST gives such layouts fewer layers on
     * the first and the last stage (ParallelSpec::UnevenSplit), as Meta trained Llama-3 405B.
     * EMBEDDING_LOSS counts the embedding and the loss as one layer each in every layout with a
     * pipeline, as Megatron-Bridge's Llama-3.1 405B recipe does. A base run that sets its own
     * uneven split keeps it for every layout (layouts it does not fit are skipped).
     */
    PipelineSplit pipelineSplit = PipelineSplit::EVEN;
};

/**
 * \param base a run \param dtype a compute type
 * \return \p base computing in \p dtype: its fp8 scaling kept for fp8, Transformer Engine's
 * default otherwise (no fp8 casts to scale), as a sweep over compute types runs it
 */
RunSpec TypedRun(const RunSpec& base, DataType dtype);

/**
 * \ingroup rapid-llm
 * \brief One layout of a sweep and what became of it.
 */
struct SweepPoint
{
    RunSpec run;          //!< the layout (the base run with the swept fields set)
    uint32_t machine = 0; //!< the machine it ran on: its index among the sweep's (0 with one)
    RunReport report;     //!< memory verdict always; the timing when it fits (report.feasible)
};

/**
 * \ingroup rapid-llm
 * \brief Predicts every valid layout of a SweepSpace for a training job, on one machine or on
 * each of several, and ranks them: the layouts that fit by step time, then those that do not by
 * peak memory. Layouts the model or
 * batch rule out (heads not divisible by tp, layers by pp unless SweepSpace::unevenStages,
 * global batch by micro-batch x dp) are skipped and counted. Memory is checked before the (slower)
 * replay, so layouts that cannot run cost little.
 */
class LayoutSweep
{
  public:
    /**
     * \param model the model
     * \param hardware the machine
     * \param base the run settings every layout shares (global batch, sequence, dtype, ...)
     * \param space the layouts to try
     * \param backend network backend of the replays ("flow" or "packet")
     */
    LayoutSweep(const ModelSpec& model,
                const HardwareSpec& hardware,
                const RunSpec& base,
                const SweepSpace& space,
                const std::string& backend = "flow");

    /**
     * \brief A sweep of every layout on each of several machines (the same number of GPUs of
     * each), ranked together: which machine and layout train the job fastest.
     * \param model the model
     * \param machines the machines (at least one); a machine whose GPU lists no rate for one of
     *        the compute types tries the others (GetRuledOut)
     * \param base the run settings every layout shares
     * \param space the layouts to try on each machine
     * \param backend network backend of the replays ("flow" or "packet")
     */
    LayoutSweep(const ModelSpec& model,
                const std::vector<HardwareSpec>& machines,
                const RunSpec& base,
                const SweepSpace& space,
                const std::string& backend = "flow");

    /**
     * \brief Slows the same GPUs in every layout (RapidLlmHelper::SetSlowGpus): a GPU is a place
     * in the machine, so each layout gives it another rank's work.
     * \param speeds GPU -> the share of its compute speed left (each GPU below every GPU count)
     */
    void SetSlowGpus(const std::map<uint32_t, double>& speeds);

    /**
     * \brief Gives the same GPUs their own spec in every layout (RapidLlmHelper::SetGpuVariants),
     * per machine.
     * \param variants per machine (by index; missing: none), GPU -> its spec
     */
    void SetGpuVariants(const std::vector<std::map<uint32_t, GpuSpec>>& variants);

    /** \return the ranked points (best first); deterministic for the same inputs */
    std::vector<SweepPoint> Run();

    /** \return layouts skipped as invalid in the last Run() or Candidates() */
    uint32_t GetSkipped() const;

    /**
     * \return why the layouts skipped in the last Run() or Candidates() were: the first three
     * distinct reasons, each with the first layout it ruled out and how many more it did, e.g.
     * "tp 16, pp 1, cp 1, ep 1, mbs 1: tp: heads (24) must be divisible by tp (16) (and 2 more
     * layouts)", and how many more reasons there were ("" when none was skipped)
     */
    std::string GetSkipReasons() const;

    /**
     * \return the spec field (RunSpec::Validate's, as "tp" or "pp") that every layout the model
     * refused in the last Run() or Candidates() was refused on ("" when they differ or none was;
     * layouts that do not divide the GPUs are not refusals of a field)
     */
    std::string GetSkipField() const;

    /**
     * \return the layouts of the space that pass RunSpec::Validate, in a fixed order, the
     * machine outermost, then the GPU count (a layout's index in it names the layout in a
     * sweep's results.csv)
     */
    std::vector<RunSpec> Candidates();

    /**
     * \param candidate an index into the last Candidates()
     * \return the index of the machine that candidate runs on
     */
    uint32_t GetMachine(uint64_t candidate) const;

    /**
     * \return the machines (by index) and compute types not tried in the last Candidates():
     * the machine's GPU lists no rate for the type (an A100 and fp8)
     */
    std::vector<std::pair<uint32_t, DataType>> GetRuledOut() const;

    /**
     * \brief Predicts one layout: its memory, and its timing when it fits.
     * \param run the layout (one of Candidates())
     * \param machine the machine it runs on (GetMachine of its index)
     * \return the point
     */
    SweepPoint Evaluate(const RunSpec& run, uint32_t machine = 0) const;

  private:
    /**
     * \brief Derives what follows from a layout's degrees (sequence parallelism and TP overlap
     * only where tp > 1, the uneven stage split) and validates it.
     * \param[in,out] run the layout \param[out] field the spec field refused, when it is ruled
     * out \param[out] why the reason
     * \return false if the model or batch rules it out
     */
    bool Complete(RunSpec& run, std::string& field, std::string& why) const;

    /**
     * \param dtypes the compute types to try \param gpus the GPUs
     * \return the valid layouts of the space in them on \p gpus, in results.csv's order (the
     * skipped ones counted)
     */
    std::vector<RunSpec> Layouts(const std::vector<DataType>& dtypes, uint32_t gpus);

    ModelSpec m_model;                    //!< the model
    std::vector<HardwareSpec> m_machines; //!< the machines
    RunSpec m_base;                       //!< shared settings
    SweepSpace m_space;                   //!< what to try
    std::string m_backend;                //!< network backend
    uint32_t m_skipped = 0;               //!< invalid layouts in the last Run()
    /** A reason layouts were skipped for. */
    struct SkipNote
    {
        std::string field;  //!< the spec field refused ("" when a layout did not divide the GPUs)
        std::string reason; //!< why, with the field
        std::string layout; //!< the first layout it ruled out ("" when the reason names it)
        uint32_t more = 0;  //!< other layouts it ruled out
    };

    /**
     * \brief Records one skipped layout: \p layout (or "") refused on \p field (or "") for \p why.
     * The first three distinct reasons with a field and the first three without are kept, with
     * the first layout each ruled out.
     */
    void NoteSkip(const std::string& layout, const std::string& field, const std::string& why);

    std::vector<SkipNote> m_skipReasons;                    //!< the first distinct reasons
    uint32_t m_moreSkipReasons = 0;                         //!< distinct reasons beyond those
    std::string m_skipField;                                //!< the last refused field
    bool m_skipFieldMixed = false;                          //!< refusals of more than one field
    std::vector<uint32_t> m_machineOf;                      //!< each candidate's machine
    std::vector<std::pair<uint32_t, DataType>> m_ruledOut;  //!< machines and types not tried
    std::map<uint32_t, double> m_slowGpus;                  //!< SetSlowGpus
    std::vector<std::map<uint32_t, GpuSpec>> m_gpuVariants; //!< SetGpuVariants, per machine
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_LAYOUT_SWEEP_H
