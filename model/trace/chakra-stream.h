/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_CHAKRA_STREAM_H
#define RAPIDLLM_CHAKRA_STREAM_H

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace google {
namespace protobuf {
class MessageLite;
namespace io {
class CodedOutputStream;
class GzipOutputStream;
class StringOutputStream;
} // namespace io
} // namespace protobuf
} // namespace google

namespace ns3 {
namespace rapidllm {

/**
 * \ingroup rapid-llm
 * \brief The framing of a Chakra ET file, shared by the writer and the reader: a stream of
 * protobuf messages, each preceded by its length as a varint32 (Chakra's protoio), optionally
 * gzip-compressed as a whole.
 *
 * Writing uses protobuf's own delimited-message and gzip streams; reading checks every length
 * prefix itself so that damage is reported with the message number and byte offset.
 */
class ChakraOutputStream
{
  public:
    /**
     * \brief Starts a stream that appends to \p out.
     * \param out the file's bytes (appended to; must outlive the stream)
     * \param gzip compress with gzip (level 6, no time stamp: deterministic)
     */
    ChakraOutputStream(std::string* out, bool gzip);
    ~ChakraOutputStream();

    ChakraOutputStream(const ChakraOutputStream&) = delete;
    ChakraOutputStream& operator=(const ChakraOutputStream&) = delete;

    /**
     * \brief Appends one message with its varint32 length prefix (deterministic serialization).
     * \param message the message
     */
    void Write(const google::protobuf::MessageLite& message);

    /** \brief Flushes the stream (and writes the gzip trailer); no Write after. */
    void Close();

  private:
    std::unique_ptr<google::protobuf::io::StringOutputStream> m_string; //!< over the string
    std::unique_ptr<google::protobuf::io::GzipOutputStream> m_gzip;     //!< gzip, or null
    std::unique_ptr<google::protobuf::io::CodedOutputStream> m_coded;   //!< the framing
};

/** \brief One framed message of a Chakra stream: where its body is. */
struct ChakraMessage
{
    const char* data = nullptr; //!< first byte of the body
    uint32_t length = 0;        //!< body length
    size_t offset = 0;          //!< byte offset of the body in the (decompressed) data
};

/**
 * \ingroup rapid-llm
 * \brief Reads the length-prefixed messages of a Chakra ET file (inflated first when it starts
 * with the gzip magic bytes), naming the file, rank, message number and byte offset of any
 * damage in a TraceError.
 */
class ChakraInputStream
{
  public:
    /**
     * \param bytes the file's content (gzip is detected by its magic bytes); must outlive the
     * stream unless it is gzip (then the stream holds the inflated copy)
     * \param file the name used in errors
     * \param rank the rank used in errors
     * \throws TraceError when gzip data is corrupt, truncated or too large
     */
    ChakraInputStream(const std::string& bytes, const std::string& file, uint32_t rank);

    /** \return true if the (decompressed) data is empty */
    bool Empty() const;

    /**
     * \brief Reads the next message's length prefix and steps over its body.
     * \param messageNumber the message's index in the file, for errors
     * \param message set to the message's body
     * \return false at a clean end of the data
     * \throws TraceError on a truncated, malformed or oversized prefix or a body past the end
     */
    bool Next(size_t messageNumber, ChakraMessage& message);

  private:
    /** Throws a TraceError about this file. */
    [[noreturn]] void Fail(const std::string& message) const;

    const std::string& m_file; //!< name for errors
    uint32_t m_rank;           //!< rank for errors
    std::string m_inflated;    //!< the decompressed data of a gzip file
    const std::string* m_data; //!< the data read
    size_t m_pos;              //!< next byte
};

/** Largest single message a Chakra stream accepts (a real trace's node is a few hundred bytes). */
constexpr uint32_t kChakraMaxMessageBytes = 64u << 20;
/** Largest decompressed size of one gzip file accepted (guards against gzip bombs). */
constexpr uint64_t kChakraMaxInflatedBytes = 16ull << 30;

/**
 * \brief gzip-compresses bytes (zlib level 6, no time stamp), as ChakraOutputStream does.
 * \param bytes input
 * \return the gzip stream
 */
std::string GzipBytes(const std::string& bytes);

/**
 * \brief Inflates a gzip stream (possibly several members back to back).
 * \param bytes gzip data
 * \param file name used in errors
 * \param rank rank used in errors, or TraceError::kNone
 * \return the decompressed bytes
 * \throws TraceError when the data is corrupt, truncated or inflates past
 * kChakraMaxInflatedBytes
 */
std::string GunzipBytes(const std::string& bytes, const std::string& file, int64_t rank);

/** \return true if \p bytes start with the gzip magic bytes */
bool IsGzip(const std::string& bytes);

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_CHAKRA_STREAM_H
