/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_JOB_SPEC_H
#define RAPIDLLM_JOB_SPEC_H

#include "hardware-spec.h"
#include "model-spec.h"
#include "run-spec.h"
#include "spec-override.h"

#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief A job file: the whole job as a user keeps it, one YAML file holding what the job
 * options of the command line say (`rapid-llm run --run=job.yaml`).
 *
 * Keys (all optional; doc/model-specs.md has the table of option names): `model`,
 * `hardware` (preset names or files; a relative path is relative to the job file), `set`
 * (overrides, a list or one comma-separated text), `gpus`, `backend`, `routing`, `fault`,
 * `slow_gpus` and `gpu_set` (the options' text, one text or a list of items), and every
 * key of a run file (RunSpec: mode, dtype, parallel: {tp, pp, dp, cp, ep, sp, zero, fsdp, vpp,
 * rank_order}, recompute, micro_batch, global_batch, sequence, batch, prompt, generated,
 * attention, grad_reduce, tp_reduce, param_gather, decode_attention, first_token, inflight_batches,
 * bucket_mib, ...).
 * Gives() says which keys the file gave, so that the command line can override exactly those and
 * keep its own defaults for the rest.
 */
struct JobSpec
{
    std::string model;                   //!< model preset or file ("" = not given)
    std::string hardware;                //!< hardware preset or file ("" = not given)
    std::vector<SpecOverride> overrides; //!< `set:`, in order
    uint32_t gpus = 0;                   //!< GPUs of the job (0 = not given)
    std::string backend;                 //!< network backend name ("" = not given)
    std::string routing;                 //!< routing policy name ("" = the hardware's)
    std::string fault;                   //!< link faults as --fault writes them ("" = none)
    std::string slowGpus;                //!< slow GPUs as --slow-gpus writes them ("" = none)
    std::string gpuSet;                  //!< GPUs of their own spec as --gpu-set writes them
    RunSpec run;                         //!< the run settings (defaults where not given)

    /**
     * \param path a key path of the file: "model", "gpus", "micro_batch", "parallel.tp", ...
     * \return whether the file gives it
     */
    bool Gives(const std::string& path) const;

    /** \return the model with the overrides applied; throws SpecError if `model` is not given */
    ModelSpec LoadModel() const;
    /** \return the hardware with the overrides applied; throws SpecError if not given */
    HardwareSpec LoadHardware() const;

    /**
     * \brief Reads a job file.
     * \param path the file
     * \return the job; throws SpecError naming the file, line and key on bad input
     */
    static JobSpec Load(const std::string& path);

    /**
     * \brief Parses a job file's text.
     * \param text the YAML document
     * \param source the name used in errors
     * \param directory where relative model and hardware paths are looked up ("" = as given)
     * \return the job
     */
    static JobSpec Parse(const std::string& text,
                         const std::string& source,
                         const std::string& directory = "");

  private:
    std::string m_source;          //!< the file, for errors
    std::set<std::string> m_given; //!< key paths the file gives
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_JOB_SPEC_H
