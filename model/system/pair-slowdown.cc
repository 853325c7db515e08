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

PairSlowdown::PairSlowdown(const PairLoad& load, double rate)
    : m_load(load)
    , m_rate(rate)
{
    double slowAlone = 0; // the slowed pieces' seconds at the pair's rate
    double slowTaken = 0; // and as they went
    for (const auto& p : m_load.pieces)
    {
        const bool slowed = PairLoad::IsSlowed(p, m_rate);
        if (slowed)
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
        m_stays = slowed;
    }
    m_share = slowTaken > 0 ? slowAlone / slowTaken : 1;
    if (m_stays && m_load.othersLeftS >= 0)
    {
        // what they had left is a backlog too: they leave when it has drained
        m_stays = false;
        m_lostS += m_load.othersLeftS;
    }
}

bool
PairSlowdown::IsSlowed() const
{
    return m_slowed;
}

double
PairSlowdown::Paced(double from, double bytes)
{
    const auto& pieces = m_load.pieces;
    // from only grows: skip the pieces wholly before it once
    while (m_piece < pieces.size() && m_pieceStart + pieces[m_piece].bytes <= from)
    {
        m_pieceStart += pieces[m_piece].bytes;
        ++m_piece;
    }
    double seconds = 0;
    double at = from;
    const double to = from + bytes;
    double pieceStart = m_pieceStart;
    for (std::size_t i = m_piece; i < pieces.size(); ++i)
    {
        const auto& p = pieces[i];
        const double pieceEnd = pieceStart + p.bytes;
        if (pieceEnd > at && p.bytes > 0)
        {
            const double upto = std::min(pieceEnd, to);
            seconds += (upto - at) * p.seconds / p.bytes;
            at = upto;
            if (at >= to)
            {
                return seconds;
            }
        }
        pieceStart = pieceEnd;
    }
    return seconds + (to - at) / m_rate;
}

double
PairSlowdown::Transmit(double startS, double bytes)
{
    const double alone = bytes / m_rate;
    if (!m_slowed)
    {
        return alone;
    }
    if (m_stays)
    {
        const double seconds = Paced(m_sent, bytes);
        m_sent += bytes;
        return seconds;
    }
    if (m_arrived)
    {
        // it had the link alone since the pair's last message
        m_backlogS = std::max(0.0, m_backlogS - std::max(0.0, startS - m_lastEndS));
    }
    else if (startS + alone > m_slowStartS)
    {
        // it came when it did beside the streams and had the link alone until now
        m_arrived = true;
        m_backlogS = std::max(0.0, m_lostS - std::max(0.0, startS - m_slowStartS));
    }
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
    m_sent += bytes;
    m_lastEndS = std::max(m_lastEndS, startS + seconds);
    return seconds;
}

} // namespace rapidllm
} // namespace ns3
