/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_PACKET_MESSAGE_HEADER_H
#define RAPIDLLM_PACKET_MESSAGE_HEADER_H

#include "ns3/header.h"

#include <cstdint>

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief The frame that starts every message on a PacketNetwork TCP connection: the message
 * id and its payload length (16 bytes, network byte order).
 *
 * TCP is a byte stream; this length prefix is how the receiver finds where each message ends
 * (and so when to fire its delivery callback) without any side channel to the sender.
 */
class PacketMessageHeader : public Header
{
  public:
    /** \brief Register this type. \return the TypeId */
    static TypeId GetTypeId();
    TypeId GetInstanceTypeId() const override;

    /** Bytes on the wire. */
    static constexpr uint32_t kSize = 16;

    PacketMessageHeader();
    /** \param id message id \param length payload bytes that follow */
    PacketMessageHeader(uint64_t id, uint64_t length);

    /** \return the message id */
    uint64_t GetId() const;
    /** \return the payload bytes that follow the header */
    uint64_t GetLength() const;

    /**
     * \brief Decodes a header from raw stream bytes.
     * \param bytes kSize bytes
     * \return the header
     */
    static PacketMessageHeader Decode(const uint8_t* bytes);

    uint32_t GetSerializedSize() const override;
    void Serialize(Buffer::Iterator start) const override;
    uint32_t Deserialize(Buffer::Iterator start) override;
    void Print(std::ostream& os) const override;

  private:
    uint64_t m_id = 0;     //!< message id
    uint64_t m_length = 0; //!< payload bytes
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_PACKET_MESSAGE_HEADER_H
