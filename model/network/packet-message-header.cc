/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "packet-message-header.h"

namespace ns3 {
namespace rapidllm {

NS_OBJECT_ENSURE_REGISTERED(PacketMessageHeader);

TypeId
PacketMessageHeader::GetTypeId()
{
    static TypeId tid = TypeId("ns3::rapidllm::PacketMessageHeader")
                            .SetParent<Header>()
                            .SetGroupName("RapidLlm")
                            .AddConstructor<PacketMessageHeader>();
    return tid;
}

TypeId
PacketMessageHeader::GetInstanceTypeId() const
{
    return GetTypeId();
}

PacketMessageHeader::PacketMessageHeader() = default;

PacketMessageHeader::PacketMessageHeader(uint64_t id, uint64_t length)
    : m_id(id)
    , m_length(length)
{}

uint64_t
PacketMessageHeader::GetId() const
{
    return m_id;
}

uint64_t
PacketMessageHeader::GetLength() const
{
    return m_length;
}

PacketMessageHeader
PacketMessageHeader::Decode(const uint8_t* bytes)
{
    uint64_t id = 0;
    uint64_t length = 0;
    for (int i = 0; i < 8; ++i)
    {
        id = (id << 8) | bytes[i];
        length = (length << 8) | bytes[8 + i];
    }
    return PacketMessageHeader(id, length);
}

uint32_t
PacketMessageHeader::GetSerializedSize() const
{
    return kSize;
}

void
PacketMessageHeader::Serialize(Buffer::Iterator start) const
{
    start.WriteHtonU64(m_id);
    start.WriteHtonU64(m_length);
}

uint32_t
PacketMessageHeader::Deserialize(Buffer::Iterator start)
{
    m_id = start.ReadNtohU64();
    m_length = start.ReadNtohU64();
    return kSize;
}

void
PacketMessageHeader::Print(std::ostream& os) const
{
    os << "message " << m_id << " length " << m_length;
}

} // namespace rapidllm
} // namespace ns3
