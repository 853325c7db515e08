/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef RAPIDLLM_PACKET_CAPTURE_H
#define RAPIDLLM_PACKET_CAPTURE_H

#include "ns3/pcap-file-wrapper.h"
#include "ns3/ptr.h"

#include <string>
#include <vector>

namespace ns3 {
namespace rapidllm {

class PacketFabric;
class Topology;

/**
 * \ingroup rapid-llm
 * \brief pcap captures of a packet network, one file per directed link
 * (PREFIX-SRC-DST.pcap, PPP framing), each frame recorded as the link starts sending it, with
 * its headers only (PPP, IPv4, TCP and a message's 16-byte frame header: the first 64 bytes),
 * for Wireshark or tcpdump.
 */
class PacketCapture
{
  public:
    /** Bytes of each frame kept: PPP 2 + IPv4 20 + TCP 20 + the message header 16, rounded up. */
    static constexpr uint32_t kSnapLength = 64;
    /** Bytes of a pcap file's global header: a file this long holds no frame. */
    static constexpr uint64_t kFileHeader = 24;

    /**
     * \brief Checks that the files of \p prefix can be created: its folder exists.
     * \throw SpecError naming PacketNetwork::Pcap, the folder and the prefix
     */
    static void CheckPrefix(const std::string& prefix);

    /**
     * \brief Opens one file per installed directed link of \p fabric (truncated), or of the
     * links \p links selects, and records every frame its device sends from now on.
     * \param prefix the files' prefix \param links link selectors as Topology::SelectLinks reads
     *        them, separated by ';' ("" = every link)
     * \param topology the topology \param fabric its packet fabric
     * \throw SpecError naming PacketNetwork::Pcap (or PcapLinks) and what is wrong
     */
    void Start(const std::string& prefix,
               const std::string& links,
               const Topology& topology,
               PacketFabric& fabric);

    /** \brief Closes the files (what was recorded stays; a link that sent nothing leaves none). */
    void Stop();

    /** \return the file of each directed link ("" where there is none) */
    const std::vector<std::string>& GetFiles() const;

  private:
    std::vector<Ptr<PcapFileWrapper>> m_files; //!< open files
    std::vector<std::string> m_names;          //!< per directed link
};

} // namespace rapidllm
} // namespace ns3

#endif // RAPIDLLM_PACKET_CAPTURE_H
