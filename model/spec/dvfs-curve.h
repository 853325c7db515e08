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
 * \brief One point of a GPU's measured DVFS curve: the SM clock locked at a value and the
 * board's power with nothing running there.
 */
struct DvfsPoint
{
    double clockHz = 0; //!< the locked SM clock
    double idleW = 0;   //!< board power with no kernel running at that clock, W

    /** \return true when every field is equal */
    bool
    operator==(const DvfsPoint& o) const
    {
        return clockHz == o.clockHz && idleW == o.idleW;
    }
};

/**
 * \ingroup rapid-llm
 * \brief A GPU's measured DVFS curve (a hardware file's gpu.power.dvfs): how its idle power
 * changes with the SM clock, linear between the measured points and flat beyond them. The power
 * model takes from it the idle power of a board held below its boost clock.
 */
class DvfsCurve
{
  public:
    DvfsCurve() = default;

    /**
     * \brief Reads \p key of \p parent: a list of {mhz, idle_w}, clocks ascending and the last at
     * \p boostClockHz, its idle power falling from there by no more than \p idleW (the board's at
     * the boost clock) and no point above the boost clock's (beyond 1% of measurement noise).
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

    /** \return the measured idle power at \p clockHz, W (the curve must not be empty) */
    double IdleW(double clockHz) const;

    /**
     * \return how much lower the measured idle power is at \p clockHz than at the curve's last
     * point, the boost clock, W (the curve must not be empty)
     */
    double
    FallW(double clockHz) const
    {
        return m_points.back().idleW - IdleW(clockHz);
    }

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
    std::vector<DvfsPoint> m_points; //!< ascending by clock
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_DVFS_CURVE_H
