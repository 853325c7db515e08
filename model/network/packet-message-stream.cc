/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "packet-message-stream.h"

#include <algorithm>

namespace ns3 {
namespace rapidllm {

namespace {
/** The warm-up frame's bytes: a header with the reserved id and length 0. */
const uint8_t kWarmUpFrame[PacketMessageHeader::kSize] = {
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0};
} // namespace

Ptr<Packet>
MessageStreamWriter::WarmUpFrame()
{
    return Create<Packet>(kWarmUpFrame, PacketMessageHeader::kSize);
}

void
MessageStreamWriter::Enqueue(uint64_t id, uint64_t bytes)
{
    OutMessage m;
    m.id = id;
    m.bytes = bytes;
    m.left = bytes;
    m_queue.push_back(m);
}

bool
MessageStreamWriter::IsEmpty() const
{
    return m_queue.empty();
}

void
MessageStreamWriter::Push(Ptr<Socket> socket)
{
    while (!m_queue.empty())
    {
        OutMessage& m = m_queue.front();
        uint32_t room = socket->GetTxAvailable();
        if (!m.headerSent)
        {
            if (room < PacketMessageHeader::kSize)
            {
                return;
            }
            const auto part = static_cast<uint32_t>(
                std::min<uint64_t>(m.left, room - PacketMessageHeader::kSize));
            Ptr<Packet> p = Create<Packet>(part);
            p->AddHeader(PacketMessageHeader(m.id, m.bytes));
            if (socket->Send(p) < 0)
            {
                return;
            }
            m.headerSent = true;
            m.left -= part;
        }
        else
        {
            if (room == 0)
            {
                return;
            }
            const auto part = static_cast<uint32_t>(std::min<uint64_t>(m.left, room));
            if (socket->Send(Create<Packet>(part)) < 0)
            {
                return;
            }
            m.left -= part;
        }
        if (m.left == 0)
        {
            m_queue.pop_front();
        }
    }
}

void
MessageStreamReader::Read(Ptr<Socket> socket, const std::function<void(uint64_t)>& onMessage)
{
    Ptr<Packet> p;
    while ((p = socket->Recv()))
    {
        const uint32_t size = p->GetSize();
        uint32_t offset = 0;
        while (offset < size)
        {
            if (m_headerHave < PacketMessageHeader::kSize)
            {
                const uint32_t n =
                    std::min<uint32_t>(PacketMessageHeader::kSize - m_headerHave, size - offset);
                p->CreateFragment(offset, n)->CopyData(m_header + m_headerHave, n);
                m_headerHave += n;
                offset += n;
                if (m_headerHave < PacketMessageHeader::kSize)
                {
                    break;
                }
                PacketMessageHeader h = PacketMessageHeader::Decode(m_header);
                m_id = h.GetId();
                m_left = h.GetLength();
            }
            else
            {
                const auto n = static_cast<uint32_t>(std::min<uint64_t>(m_left, size - offset));
                m_left -= n;
                offset += n;
            }
            if (m_left == 0)
            {
                m_headerHave = 0;
                if (m_id != MessageStreamWriter::kWarmUpId)
                {
                    onMessage(m_id);
                }
            }
        }
    }
}

} // namespace rapidllm
} // namespace ns3
