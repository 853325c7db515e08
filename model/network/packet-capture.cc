/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "packet-capture.h"

#include "ns3/boolean.h"
#include "ns3/net-device.h"
#include "ns3/packet-fabric.h"
#include "ns3/simulator.h"
#include "ns3/spec-error.h"
#include "ns3/topology.h"
#include "ns3/trace-helper.h"

#include <algorithm>
#include <filesystem>
#include <sstream>

namespace ns3 {
namespace rapidllm {

namespace {

/** Writes a frame the device is starting to send. */
void
Record(Ptr<PcapFileWrapper> file, Ptr<const Packet> packet)
{
    file->Write(Simulator::Now(), packet);
}

} // namespace

void
PacketCapture::CheckPrefix(const std::string& prefix)
{
    const std::filesystem::path folder = std::filesystem::path(prefix).parent_path();
    std::error_code ec;
    if (prefix.empty() || prefix.back() == '/'
        || (!folder.empty() && !std::filesystem::is_directory(folder, ec)))
    {
        throw SpecError(
            "network",
            "PacketNetwork::Pcap",
            "'" + prefix
                + "': a file prefix in an existing folder, e.g. out/run (files "
                  "out/run-gpu0-nvlink.sw0.pcap, ...)"
                + (folder.empty() || prefix.back() == '/'
                       ? std::string()
                       : "; '" + folder.string()
                             + (std::filesystem::exists(folder, ec) ? "' is not a folder"
                                                                    : "' does not exist")));
    }
}

void
PacketCapture::Start(const std::string& prefix,
                     const std::string& links,
                     const Topology& topology,
                     PacketFabric& fabric)
{
    Stop();
    CheckPrefix(prefix);
    std::vector<bool> chosen(topology.GetLinkCount(), links.empty());
    std::stringstream selectors(links);
    std::string selector;
    while (std::getline(selectors, selector, ';'))
    {
        for (uint32_t l : topology.SelectLinks(selector, "PacketNetwork", "PcapLinks"))
        {
            chosen[l] = true;
        }
    }
    m_names.assign(topology.GetLinkCount(), "");
    for (uint32_t l = 0; l < topology.GetLinkCount(); ++l)
    {
        Ptr<NetDevice> device = fabric.GetLinkDevice(l);
        if (!chosen[l] || !device)
        {
            continue; // not selected, or not installed (dead both ways)
        }
        const TopologyLink& link = topology.GetLink(l);
        const std::string name = prefix + "-" + topology.GetNode(link.src).name + "-"
                                 + topology.GetNode(link.dst).name + ".pcap";
        Ptr<PcapFileWrapper> file = CreateObject<PcapFileWrapper>();
        file->SetAttribute("NanosecMode", BooleanValue(true)); // frames are tens of ns apart
        file->Open(name, std::ios::out | std::ios::binary);
        if (file->Fail())
        {
            throw SpecError("network", "PacketNetwork::Pcap", "cannot create '" + name + "'");
        }
        file->Init(PcapHelper::DLT_PPP, kSnapLength);
        device->TraceConnectWithoutContext("PhyTxBegin", MakeBoundCallback(&Record, file));
        m_files.push_back(file);
        m_names[l] = name;
    }
}

void
PacketCapture::Stop()
{
    for (auto& f : m_files)
    {
        f->Close();
    }
    m_files.clear();
    // A link that sent nothing leaves no file (a run on a few GPUs of a large fabric).
    for (auto& name : m_names)
    {
        std::error_code ec;
        if (!name.empty() && std::filesystem::file_size(name, ec) == kFileHeader && !ec)
        {
            std::filesystem::remove(name, ec);
            name.clear();
        }
    }
}

const std::vector<std::string>&
PacketCapture::GetFiles() const
{
    return m_names;
}

} // namespace rapidllm
} // namespace ns3
