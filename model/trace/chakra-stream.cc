/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "chakra-stream.h"

#include "trace-error.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/gzip_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/message_lite.h>
#include <google/protobuf/util/delimited_message_util.h>
#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <stdexcept>

namespace ns3 {
namespace rapidllm {

ChakraOutputStream::ChakraOutputStream(std::string* out, bool gzip)
    : m_string(std::make_unique<google::protobuf::io::StringOutputStream>(out))
{
    google::protobuf::io::ZeroCopyOutputStream* sink = m_string.get();
    if (gzip)
    {
        // zlib's gzip wrapper without a header of ours: a zero time stamp, so equal input gives
        // equal bytes.
        google::protobuf::io::GzipOutputStream::Options options;
        options.format = google::protobuf::io::GzipOutputStream::GZIP;
        options.compression_level = 6;
        options.compression_strategy = Z_DEFAULT_STRATEGY;
        m_gzip = std::make_unique<google::protobuf::io::GzipOutputStream>(sink, options);
        sink = m_gzip.get();
    }
    m_coded = std::make_unique<google::protobuf::io::CodedOutputStream>(sink);
    m_coded->SetSerializationDeterministic(true);
}

ChakraOutputStream::~ChakraOutputStream()
{
    // A stream abandoned by an exception: release it without reporting (Close reports).
    m_coded.reset();
    m_gzip.reset();
    m_string.reset();
}

void
ChakraOutputStream::Write(const google::protobuf::MessageLite& message)
{
    if (!google::protobuf::util::SerializeDelimitedToCodedStream(message, m_coded.get()))
    {
        throw std::runtime_error("protobuf: cannot serialize a " + message.GetTypeName());
    }
}

void
ChakraOutputStream::Close()
{
    if (m_coded)
    {
        m_coded.reset(); // flushes into the gzip or string stream
        if (m_gzip && !m_gzip->Close())
        {
            throw std::runtime_error(
                std::string("zlib deflate failed: ")
                + (m_gzip->ZlibErrorMessage() ? m_gzip->ZlibErrorMessage() : "unknown error"));
        }
        m_gzip.reset();
        m_string.reset(); // trims the string to what was written
    }
}

std::string
GzipBytes(const std::string& bytes)
{
    std::string out;
    {
        google::protobuf::io::StringOutputStream sink(&out);
        google::protobuf::io::GzipOutputStream::Options options;
        options.format = google::protobuf::io::GzipOutputStream::GZIP;
        options.compression_level = 6;
        options.compression_strategy = Z_DEFAULT_STRATEGY;
        google::protobuf::io::GzipOutputStream gzip(&sink, options);
        bool written = true;
        {
            // WriteRaw takes an int: feed large inputs in chunks.
            google::protobuf::io::CodedOutputStream coded(&gzip);
            for (size_t pos = 0; pos < bytes.size();)
            {
                size_t chunk = std::min<size_t>(bytes.size() - pos, 1u << 30);
                coded.WriteRaw(bytes.data() + pos, static_cast<int>(chunk));
                pos += chunk;
            }
            coded.Trim();
            written = !coded.HadError();
        }
        if (!gzip.Close() || !written)
        {
            throw std::runtime_error("zlib deflate failed");
        }
    }
    return out;
}

bool
IsGzip(const std::string& bytes)
{
    return bytes.size() >= 2 && static_cast<uint8_t>(bytes[0]) == 0x1f
           && static_cast<uint8_t>(bytes[1]) == 0x8b;
}

std::string
GunzipBytes(const std::string& bytes, const std::string& file, int64_t rank)
{
    // Our own inflate loop rather than protobuf's GzipInputStream: it tells a truncated stream
    // from corrupt data and from trailing garbage, and caps the inflated size.
    auto fail = [&file, rank](const std::string& what)
    {
        throw TraceError(file, rank, TraceError::kNone, "gzip: " + what);
    };
    z_stream z;
    std::memset(&z, 0, sizeof(z));
    if (inflateInit2(&z, 15 + 16) != Z_OK)
    {
        fail("zlib inflateInit2 failed");
    }
    std::string out;
    size_t inPos = 0;
    int status = Z_OK;
    char buffer[1 << 16];
    try
    {
        while (true)
        {
            if (z.avail_in == 0 && inPos < bytes.size())
            {
                size_t chunk = std::min<size_t>(bytes.size() - inPos, 1u << 30);
                z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data() + inPos));
                z.avail_in = static_cast<uInt>(chunk);
                inPos += chunk;
            }
            z.next_out = reinterpret_cast<Bytef*>(buffer);
            z.avail_out = sizeof(buffer);
            status = inflate(&z, Z_NO_FLUSH);
            size_t produced = sizeof(buffer) - z.avail_out;
            if (out.size() + produced > kChakraMaxInflatedBytes)
            {
                fail("decompresses to more than " + std::to_string(kChakraMaxInflatedBytes)
                     + " bytes");
            }
            out.append(buffer, produced);
            if (status == Z_STREAM_END)
            {
                if (z.avail_in == 0 && inPos == bytes.size())
                {
                    break;
                }
                // Another gzip member follows (concatenated .gz files are valid gzip).
                if (z.avail_in < 2 || z.next_in[0] != 0x1f || z.next_in[1] != 0x8b)
                {
                    fail("unexpected bytes after the end of the compressed stream");
                }
                inflateReset(&z);
                continue;
            }
            if (status == Z_NEED_DICT || status == Z_DATA_ERROR)
            {
                fail(std::string("corrupt compressed data")
                     + (z.msg ? std::string(": ") + z.msg : ""));
            }
            if (status == Z_MEM_ERROR)
            {
                fail("out of memory");
            }
            if (status == Z_BUF_ERROR || (status == Z_OK && produced == 0 && z.avail_in == 0))
            {
                if (z.avail_in == 0 && inPos == bytes.size())
                {
                    fail("truncated compressed stream (the file ends before the gzip trailer)");
                }
            }
        }
    }
    catch (...)
    {
        inflateEnd(&z);
        throw;
    }
    inflateEnd(&z);
    return out;
}

ChakraInputStream::ChakraInputStream(const std::string& bytes,
                                     const std::string& file,
                                     uint32_t rank)
    : m_file(file)
    , m_rank(rank)
    , m_data(&bytes)
    , m_pos(0)
{
    if (IsGzip(bytes))
    {
        m_inflated = GunzipBytes(bytes, file, rank);
        m_data = &m_inflated;
    }
}

bool
ChakraInputStream::Empty() const
{
    return m_data->empty();
}

void
ChakraInputStream::Fail(const std::string& message) const
{
    throw TraceError(m_file, m_rank, TraceError::kNone, message);
}

bool
ChakraInputStream::Next(size_t messageNumber, ChakraMessage& message)
{
    const std::string& data = *m_data;
    size_t& pos = m_pos;
    if (pos == data.size())
    {
        return false;
    }
    size_t start = pos;
    uint64_t value = 0;
    for (int i = 0;; ++i)
    {
        if (pos == data.size())
        {
            Fail("truncated length prefix of message " + std::to_string(messageNumber) + " at byte "
                 + std::to_string(start) + " (the file ends inside it)");
        }
        auto b = static_cast<uint8_t>(data[pos++]);
        value |= static_cast<uint64_t>(b & 0x7f) << (7 * i);
        if (!(b & 0x80))
        {
            break;
        }
        if (i == 4)
        {
            Fail("malformed length prefix of message " + std::to_string(messageNumber) + " at byte "
                 + std::to_string(start) + " (longer than a varint32)");
        }
    }
    if (value > std::numeric_limits<uint32_t>::max())
    {
        Fail("oversized length prefix of message " + std::to_string(messageNumber) + " at byte "
             + std::to_string(start) + " (" + std::to_string(value) + " does not fit a varint32)");
    }
    const auto length = static_cast<uint32_t>(value);
    if (length > kChakraMaxMessageBytes)
    {
        Fail("oversized length prefix of message " + std::to_string(messageNumber) + " at byte "
             + std::to_string(start) + ": " + std::to_string(length) + " bytes (at most "
             + std::to_string(kChakraMaxMessageBytes) + " allowed)");
    }
    if (length > data.size() - pos)
    {
        Fail("message " + std::to_string(messageNumber) + " at byte " + std::to_string(start)
             + " announces " + std::to_string(length) + " bytes but only "
             + std::to_string(data.size() - pos)
             + " remain (truncated file or corrupt length prefix)");
    }
    message.data = data.data() + pos;
    message.length = length;
    message.offset = pos;
    pos += length;
    return true;
}

} // namespace rapidllm
} // namespace ns3
