/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_STUDY_JSON_H
#define RAPIDLLM_STUDY_JSON_H

#include "ns3/collective-probe.h"
#include "ns3/cross-validation.h"
#include "ns3/layout-sweep.h"
#include "ns3/report-json.h"
#include "ns3/validation-suite.h"

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief One validation row: the configuration, the published and predicted values and the
 * relative error (no wall time: the same inputs give the same JSON).
 * \param j the JSON value to fill \param r the row
 */
void to_json(Json& j, const ValidationRow& r);

/**
 * \ingroup rapid-llm
 * \brief One layout of a sweep: the layout, its memory verdict and, when it fits, its timing.
 * \param j the JSON value to fill \param p the point
 */
void to_json(Json& j, const SweepPoint& p);

/**
 * \ingroup rapid-llm
 * \brief One collective's result: algorithm, routing, messages, time and bandwidths (as
 * nccl-tests define them) and the most loaded links.
 * \param j the JSON value to fill \param r the result
 */
void to_json(Json& j, const CollectiveProbeResult& r);

/**
 * \ingroup rapid-llm
 * \brief One cross-validation row: both completion times, their relative difference and the
 * packet network's counters (no wall times: they are behind `--timing`).
 * \param j the JSON value to fill \param r the row
 */
void to_json(Json& j, const XvalRow& r);

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_STUDY_JSON_H
