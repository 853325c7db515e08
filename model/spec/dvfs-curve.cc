/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "dvfs-curve.h"

#include "spec-reader.h"

#include <sstream>

namespace ns3 {
namespace rapidllm {

DvfsCurve
DvfsCurve::Read(SpecReader& parent, const std::string& key, double boostClockHz, double idleW)
{
    DvfsCurve curve;
    std::vector<DvfsPoint>& points = curve.m_points;
    for (SpecReader& q : parent.GetMapList(key))
    {
        DvfsPoint d;
        d.clockHz = q.GetPositive("mhz") * 1e6;
        d.idleW = q.GetInRange("idle_w", 0, 1e5);
        q.Finish();
        if (!points.empty() && d.clockHz <= points.back().clockHz)
        {
            q.Fail("mhz", "must be above the previous point's (the points ascend by clock)");
        }
        if (d.clockHz > boostClockHz)
        {
            q.Fail("mhz", "must be at most boost_clock_mhz");
        }
        points.push_back(d);
    }
    if (points.empty() || points.back().clockHz != boostClockHz)
    {
        parent.Fail(key,
                    "must end at boost_clock_mhz (where idle_w is measured): its last point's mhz "
                    "is the boost clock");
    }
    // A board's idle power falls with its clock (the voltage falls with it). A measured curve is
    // not exactly monotonic (the H100's reads 0.01 W more at 1890 than at 1980 MHz), so a point
    // may read up to 1% above the boost clock's; more is a curve turned upside down.
    const double boostIdleW = points.back().idleW;
    for (const DvfsPoint& d : points)
    {
        if (d.idleW > 1.01 * boostIdleW)
        {
            std::ostringstream os;
            os << "reads " << d.idleW << " W at " << d.clockHz / 1e6
               << " MHz, above the boost clock's " << boostIdleW
               << " W: idle power falls with the clock (up to 1% above it is taken as "
                  "measurement noise)";
            parent.Fail(key, os.str());
        }
        if (curve.FallW(d.clockHz) > idleW)
        {
            std::ostringstream os;
            os << "falls by " << curve.FallW(d.clockHz) << " W from the boost clock to "
               << d.clockHz / 1e6 << " MHz, more than idle_w (" << idleW << " W)";
            parent.Fail(key, os.str());
        }
    }
    return curve;
}

double
DvfsCurve::IdleW(double clockHz) const
{
    if (clockHz <= m_points.front().clockHz)
    {
        return m_points.front().idleW;
    }
    for (std::size_t i = 1; i < m_points.size(); ++i)
    {
        const DvfsPoint& a = m_points[i - 1];
        const DvfsPoint& b = m_points[i];
        if (clockHz <= b.clockHz)
        {
            const double t = (clockHz - a.clockHz) / (b.clockHz - a.clockHz);
            return a.idleW + t * (b.idleW - a.idleW);
        }
    }
    return m_points.back().idleW;
}

} // namespace rapidllm
} // namespace ns3
