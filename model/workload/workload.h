/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_WORKLOAD_H
#define RAPIDLLM_WORKLOAD_H

#include "ns3/model-spec.h"
#include "ns3/operator-cost.h"
#include "ns3/run-spec.h"
#include "parallel-layout.h"
#include "workload-graph.h"

#include <functional>
#include <vector>

namespace ns3 {
namespace rapidllm {

/** \brief Gives a compute node's cost (the compute model, or a test's rule). */
using OperatorCoster = std::function<OperatorCost(const OperatorDesc&)>;

/**
 * \ingroup rapid-llm
 * \brief What every rank of a job executes: one graph per pipeline stage, shared by all the
 * ranks of that stage (they differ only in which groups their communication names, which the
 * layout resolves per rank).
 */
struct Workload
{
    ModelSpec model;                //!< the model
    RunSpec run;                    //!< the run settings
    ParallelLayout layout;          //!< rank mapping and groups
    std::vector<StageGraph> stages; //!< graph per pipeline stage

    /** \return the graph \p rank executes */
    const StageGraph& GraphOf(uint32_t rank) const;

    /** \return the model FLOPs of one step summed over every rank */
    double TotalModelFlops() const;

    /**
     * \param stage a pipeline stage
     * \return inference: the node of \p stage's graph that samples the first token (the last
     * sampling kernel of the first batch in flight, not a draft module's: the first token of every
     * request of it);
     * UINT32_MAX where the stage samples nothing (training, or a stage before the last)
     */
    uint32_t FirstTokenNode(uint32_t stage) const;

    /**
     * \brief Builds the graphs of a training iteration or an inference request.
     * \param model the model (validated)
     * \param run the run settings; validated against the model here (throws SpecError)
     * \param coster fills each compute node's duration; may be empty (durations stay 0)
     * \return the workload
     */
    static Workload Build(const ModelSpec& model,
                          const RunSpec& run,
                          const OperatorCoster& coster = nullptr);
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_WORKLOAD_H
