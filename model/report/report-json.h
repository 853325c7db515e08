/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_REPORT_JSON_H
#define RAPIDLLM_REPORT_JSON_H

#include "ns3/memory-model.h"
#include "ns3/network-stats.h"
#include "ns3/operator-cost.h"

#include <nlohmann/json.hpp>

#include <string>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief The JSON value of every report (nlohmann-json, keys kept in the order written so that
 * the output reads like the text report). Each report type has one `to_json` next to it; every
 * `--json` output is one of these values, written by DumpJson.
 */
using Json = nlohmann::ordered_json;

/**
 * \brief The one way reports are written as JSON text: two-space indented with a final newline,
 * numbers with full round-trip precision, strings escaped (invalid UTF-8 replaced), and a NaN or
 * infinity written as null (never as the invalid `nan`/`inf`).
 * \param value the report
 * \return the text
 */
std::string DumpJson(const Json& value);

/**
 * \brief The memory verdict of a job (the rank with the highest peak): the same object in
 * `rapid-llm memory --json` and in the "memory" field of `rapid-llm run --json`.
 * \param j the JSON value to fill \param m the report
 */
void to_json(Json& j, const MemoryReport& m);

/**
 * \brief One link's load in a list of the most loaded: name, bytes (a whole number where they
 * are one, as a collective's own bytes), busy time and utilization; the same object wherever
 * such a list is printed (collective, study faults).
 * \param j the JSON value to fill \param s the link
 */
void to_json(Json& j, const LinkStats& s);

/**
 * \brief One operator's predicted cost: time, rate, the bounding level, the tiling chosen and
 * the traffic and time at each memory level (what `rapid-llm gemm --json` prints); with a
 * power model also the clock it runs at, the board power and its dynamic energy.
 * \param j the JSON value to fill \param c the cost
 */
void to_json(Json& j, const OperatorCost& c);

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_REPORT_JSON_H
