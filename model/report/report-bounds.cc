/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "report-bounds.h"

#include "ns3/rapidllm-error.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace ns3 {
namespace rapidllm {

namespace {
/** Relative slack for rounding in the figures' arithmetic. */
constexpr double kSlack = 1e-9;

[[noreturn]] void
Fail(const std::string& what)
{
    throw Error("internal check failed: " + what
                + "; this is a bug or an input beyond the model's range, please report it");
}
} // namespace

void
CheckReportBounds(const RunReport& report, const GpuSpec& gpu, DataType dtype)
{
    std::ostringstream os;
    os.precision(4);
    if (!std::isfinite(report.stepTimeS) || report.stepTimeS <= 0)
    {
        os << "step time " << report.stepTimeS << " s is not a positive number";
        Fail(os.str());
    }
    if (!(report.mfu >= 0 && report.mfu <= 1 + kSlack))
    {
        os << "MFU " << report.mfu << " is outside [0, 1]";
        Fail(os.str());
    }
    const double peak = gpu.PeakFlops(dtype);
    if (peak > 0 && !(report.tflopsPerGpu * 1e12 <= peak * (1 + kSlack)))
    {
        os << report.tflopsPerGpu << " TFLOP/s per GPU exceeds the " << gpu.name << "'s "
           << ToString(dtype) << " peak of " << peak / 1e12 << " TFLOP/s";
        Fail(os.str());
    }
}

} // namespace rapidllm
} // namespace ns3
