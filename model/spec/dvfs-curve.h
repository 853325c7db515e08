/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_DVFS_CURVE_H
#define RAPIDLLM_DVFS_CURVE_H

#include <string>
#include <vector>

namespace ns3 {
namespace rapidllm {

class SpecReader;

/**
 * \ingroup rapid-llm
 * \brief One point of a GPU's measured DVFS curve: the SM clock locked at a value, the board's
 * power with nothing running and its core voltage there.
 */
struct DvfsPoint
{
    double clockHz = 0;  //!< the locked SM clock
    double idleW = 0;    //!< board power with no kernel running at that clock, W
    double voltageV = 0; //!< core supply voltage at that clock (0: not measured)

    /** \return true when every field is equal */
    bool
    operator==(const DvfsPoint& o) const
    {
        return clockHz == o.clockHz && idleW == o.idleW && voltageV == o.voltageV;
    }
};

/**
 * \ingroup rapid-llm
 * \brief A GPU's measured DVFS curve (a hardware file's gpu.power.dvfs): how its idle power and
 * core voltage change with the SM clock, linear between the measured points and flat beyond
 * them. The power model takes from it the idle power at a lowered clock and the voltage that
 * scales the energy of an operation.
 */
class DvfsCurve
{
  public:
    DvfsCurve() = default;

    /**
     * \brief Reads \p key of \p parent: a list of {mhz, idle_w, mv (optional, on every point or
     * none)}, clocks ascending and the last at \p boostClockHz, its idle power falling from there
     * by no more than \p idleW (the board's at the boost clock).
     * \param parent the power section
     * \param key the list's key
     * \param boostClockHz the GPU's boost clock
     * \param idleW the board's idle power at the boost clock, W
     * \return the curve (a SpecError naming the field on a bad one)
     */
    static DvfsCurve Read(SpecReader& parent,
                          const std::string& key,
                          double boostClockHz,
                          double idleW);

    /** \return whether the curve has no points (no measurement) */
    bool
    Empty() const
    {
        return m_points.empty();
    }

    /** \return whether the points carry voltages */
    bool
    HasVoltage() const
    {
        return !m_points.empty() && m_points.front().voltageV > 0;
    }

    /** \return the measured idle power at \p clockHz, W (the curve must not be empty) */
    double IdleW(double clockHz) const;

    /** \return the measured core voltage at \p clockHz, V (HasVoltage() must hold) */
    double VoltageV(double clockHz) const;

    /** \return the points, ascending by clock */
    const std::vector<DvfsPoint>&
    Points() const
    {
        return m_points;
    }

    /** \return true when the points are equal */
    bool
    operator==(const DvfsCurve& o) const
    {
        return m_points == o.m_points;
    }

  private:
    /** \return \p field at \p clockHz, linear between the points, flat beyond the ends */
    double At(double clockHz, double DvfsPoint::*field) const;

    std::vector<DvfsPoint> m_points; //!< ascending by clock
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_DVFS_CURVE_H
