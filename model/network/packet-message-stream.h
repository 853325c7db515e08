/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_PACKET_MESSAGE_STREAM_H
#define RAPIDLLM_PACKET_MESSAGE_STREAM_H

#include "ns3/packet-message-header.h"
#include "ns3/packet.h"
#include "ns3/socket.h"

#include <cstdint>
#include <deque>
#include <functional>
#include <limits>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief The sending half of a message stream over one TCP connection: messages queue up and
 * are written, each after its 16-byte PacketMessageHeader, as the socket's send buffer allows.
 */
class MessageStreamWriter
{
  public:
    /** The reserved message id of the warm-up frame. */
    static constexpr uint64_t kWarmUpId = std::numeric_limits<uint64_t>::max();

    /**
     * \return the warm-up frame: a header with the reserved id and no payload, which a
     * connection sends first (MessageStreamReader skips it)
     */
    static Ptr<Packet> WarmUpFrame();

    /**
     * \brief Queues a message behind those not yet fully written.
     * \param id message id \param bytes payload size (may be 0)
     */
    void Enqueue(uint64_t id, uint64_t bytes);

    /**
     * \brief Writes as much of the queue into \p socket as its send buffer takes (a message's
     * header and first bytes go in one write; a header is never split).
     * \param socket a connected socket
     */
    void Push(Ptr<Socket> socket);

    /** \return whether every queued message is fully written */
    bool IsEmpty() const;

  private:
    /** \brief A message waiting to be written. */
    struct OutMessage
    {
        uint64_t id = 0;         //!< message id
        uint64_t bytes = 0;      //!< payload size
        uint64_t left = 0;       //!< payload bytes not yet given to TCP
        bool headerSent = false; //!< its frame header is in the socket
    };

    std::deque<OutMessage> m_queue; //!< messages not yet fully written
};

/**
 * \ingroup rapid-llm
 * \brief The receiving half of a message stream: reassembles the byte stream of one accepted
 * TCP socket into messages (header, then that many payload bytes), whatever the segment
 * boundaries.
 */
class MessageStreamReader
{
  public:
    /**
     * \brief Reads everything \p socket holds and calls \p onMessage with the id of every
     * message whose last byte has arrived, in stream order (the warm-up frame excepted).
     * \param socket the accepted socket \param onMessage the completion callback
     */
    void Read(Ptr<Socket> socket, const std::function<void(uint64_t)>& onMessage);

  private:
    uint8_t m_header[PacketMessageHeader::kSize] = {}; //!< frame header bytes so far
    uint32_t m_headerHave = 0;                         //!< bytes of header read
    uint64_t m_id = 0;                                 //!< current message id
    uint64_t m_left = 0;                               //!< payload bytes still to read
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_PACKET_MESSAGE_STREAM_H
