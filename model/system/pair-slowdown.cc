/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "pair-slowdown.h"

#include <algorithm>

namespace ns3 {
namespace rapidllm {

bool
PairLoad::IsSlowed(const Piece& piece, double rate)
{
    return piece.seconds > piece.bytes / rate * (1 + 1e-4) + 2e-9;
}

bool
PairLoad::IsSlowedAtEnd(double rate) const
{
    return !pieces.empty() && IsSlowed(pieces.back(), rate);
}

PairSlowdown::PairSlowdown(const PairLoad& load, double rate)
    : m_rate(rate)
{
    double slowAlone = 0; // the slowed pieces' seconds at the pair's rate
    double slowTaken = 0; // and as they went
    for (const auto& p : load.pieces)
    {
        if (PairLoad::IsSlowed(p, m_rate))
        {
            if (!m_slowed)
            {
                m_slowStartS = p.startS;
            }
            m_slowed = true;
            m_lostS += p.seconds - p.bytes / m_rate;
            slowAlone += p.bytes / m_rate;
            slowTaken += p.seconds;
        }
    }
    m_share = slowTaken > 0 ? slowAlone / slowTaken : 1;
    if (load.IsSlowedAtEnd(m_rate))
    {
        // still there at the last byte: what they had left is part of the backlog
        m_lostS += std::max(0.0, load.othersLeftS);
    }
}

bool
PairSlowdown::IsSlowed() const
{
    return m_slowed;
}

double
PairSlowdown::Transmit(double startS, double bytes)
{
    const double whole = bytes / m_rate;
    if (!m_slowed)
    {
        return whole;
    }
    double head = 0; // seconds it went alone before the others came
    if (m_arrived)
    {
        // it had the link alone since the pair's last message
        m_backlogS = std::max(0.0, m_backlogS - std::max(0.0, startS - m_lastEndS));
    }
    else if (startS + whole > m_slowStartS)
    {
        // it came when it did beside the streams and had the link alone until now; a message
        // already going when they came went alone until then (it was charged its share
        // throughout: a 2-GPU all-reduce of two 1 ms messages, joined by a transfer near the
        // end of the first, walked 28% past its messages)
        m_arrived = true;
        m_backlogS = std::max(0.0, m_lostS - std::max(0.0, startS - m_slowStartS));
        head = std::max(0.0, m_slowStartS - startS);
    }
    const double alone = whole - head;
    double seconds = alone;
    if (m_backlogS > 0 && m_share < 1)
    {
        // beside it the message goes at its share and the backlog drains at the rest
        const double drain = alone * (1 - m_share) / m_share;
        if (m_backlogS >= drain)
        {
            seconds = alone / m_share;
            m_backlogS -= drain;
        }
        else
        {
            const double together = m_backlogS / (1 - m_share);
            seconds = together + (alone - m_share * together);
            m_backlogS = 0;
        }
    }
    m_lastEndS = std::max(m_lastEndS, startS + head + seconds);
    return head + seconds;
}

} // namespace rapidllm
} // namespace ns3
