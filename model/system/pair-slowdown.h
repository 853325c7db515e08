/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_PAIR_SLOWDOWN_H
#define RAPIDLLM_PAIR_SLOWDOWN_H

#include <vector>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief How the transfers of one (source, destination) pair of a fluid collective went beside
 * other traffic: what its message floor's walk slows that pair's messages by.
 */
struct PairLoad
{
    /** \brief One transfer, or a stretch of one at one rate. */
    struct Piece
    {
        double bytes = 0;   //!< its bytes
        double seconds = 0; //!< transmitting, at least bytes / the pair's rate
        double startS = 0;  //!< when it started transmitting, from the collective's start
    };

    std::vector<Piece> pieces; //!< in the order the pair sent them (a stream: one per rate)
    /**
     * Others slowing the last piece: the link seconds they still had to go at its last byte
     * (their bytes left on the pair's links / the pair's rate)
     */
    double othersLeftS = 0;

    /**
     * \return whether \p piece took longer than at \p rate (bytes/s), beyond a nanosecond's
     * rounding
     */
    static bool IsSlowed(const Piece& piece, double rate);

    /** \return whether the last piece took longer than at \p rate: others were still there */
    bool IsSlowedAtEnd(double rate) const;
};

/**
 * \ingroup rapid-llm
 * \brief The times of a pair's messages when its streams (PairLoad) shared their links with
 * other traffic.
 *
 * Others are a finite backlog: the link seconds they took from the pair's streams, from when
 * the first slowed stream started, and those they still had to go at its last byte if they
 * were still there (PairLoad::othersLeftS). The messages share the link with it at the
 * streams' share while it lasts, and it drains alone while the pair has nothing on the link;
 * a message already on the link when the first slowed stream started goes alone until then.
 * So a collective whose messages leave gaps lets a transfer beside it pass in the gaps, as
 * max-min sharing between its messages and that transfer does, where the streams, never idle,
 * shared the link with it all along.
 */
class PairSlowdown
{
  public:
    /**
     * \param load how the pair's streams went \param rate the pair's rate alone (bytes/s)
     */
    PairSlowdown(const PairLoad& load, double rate);

    /** \return whether the streams were slowed at all (else messages take bytes / rate) */
    bool IsSlowed() const;

    /**
     * \brief The pair's next message in the order the pair sends them.
     * \param startS when it starts transmitting, from the collective's start
     * \param bytes its bytes
     * \return its transmitting seconds
     */
    double Transmit(double startS, double bytes);

  private:
    double m_rate;           //!< alone, bytes/s
    bool m_slowed = false;   //!< any piece slowed
    double m_slowStartS = 0; //!< when the first slowed piece started
    double m_lostS = 0;      //!< link seconds the others took from the streams
    double m_share = 1;      //!< the pair's share of the link beside them
    bool m_arrived = false;  //!< the backlog is there
    double m_backlogS = 0;   //!< link seconds of the others left
    double m_lastEndS = 0;   //!< the pair's last message's last byte
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_PAIR_SLOWDOWN_H
