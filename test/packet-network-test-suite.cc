/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// ns-3 packet-level network: a lone message costs what the link rates and latencies predict
// (switches cut through, or store and forward a frame each when set so); message framing delivers
// every message exactly once, in order, at the receiver; packets follow the routing policy's path
// hop by hop; degraded links run at their reduced rate and dead links are not installed;
// unreachable pairs are errors.

#include "detour-routing.h"
#include "network-test-spec.h"
#include "ns3/fault-schedule.h"
#include "ns3/network-error.h"
#include "ns3/packet-network.h"
#include "ns3/pcap-file.h"
#include "ns3/routing-policy.h"
#include "ns3/simulator.h"
#include "ns3/spec-error.h"
#include "ns3/string.h"
#include "ns3/test.h"
#include "ns3/topology.h"
#include "ns3/uinteger.h"
#include "test-require.h"

#include <unistd.h>

#include <filesystem>
#include <map>
#include <set>

using namespace ns3;
using namespace ns3::rapidllm;

namespace {

/** \brief One message to send at the start, or \c at seconds after it. */
struct Message
{
    uint32_t src;        //!< source endpoint
    uint32_t dst;        //!< destination endpoint
    uint64_t bytes;      //!< size
    double at = 0;       //!< send time after the start, s
    bool ordered = true; //!< in order on the pair's connection (NetworkBackend::Send)
};

/** \brief What a run observed. */
struct Outcome
{
    std::vector<double> delivered; //!< per message: delivery time after the start, s (-1 never)
    std::vector<uint64_t> order;   //!< message ids in delivery order
    uint64_t deliveries = 0;       //!< callbacks fired
    uint64_t dataPackets = 0;      //!< data segments
    uint64_t drops = 0;            //!< queue drops
    std::map<uint32_t, uint64_t> linkTx; //!< per directed link: packets transmitted
    NetworkStats stats;                  //!< the backend's statistics at the end
};

/**
 * \return the outcome of sending \p messages at once (after opening their connections) on a
 * packet network over \p spec, with the PacketNetwork \p attributes (name, value) set
 */
Outcome
RunMessages(const NetworkSpec& spec,
            uint32_t endpoints,
            const std::vector<Message>& messages,
            const std::vector<std::pair<std::string, std::string>>& attributes = {})
{
    Ptr<Topology> topo = Topology::Build(spec, endpoints);
    Ptr<PacketNetwork> net = CreateObject<PacketNetwork>();
    for (const auto& [name, value] : attributes)
    {
        net->SetAttribute(name, StringValue(value));
    }
    net->SetTopology(topo);
    net->SetRouting(RoutingPolicy::Create(spec.routing));
    Outcome out;
    out.delivered.assign(messages.size(), -1);
    std::vector<std::pair<uint32_t, uint32_t>> pairs;
    for (const auto& m : messages)
    {
        pairs.emplace_back(m.src, m.dst);
    }
    for (uint32_t l = 0; l < topo->GetLinkCount(); ++l)
    {
        Ptr<NetDevice> dev = net->GetLinkDevice(l);
        if (dev)
        {
            dev->TraceConnectWithoutContext("PhyTxBegin",
                                            Callback<void, Ptr<const Packet>>(
                                                [&out, l](Ptr<const Packet>)
                                                {
                                                    ++out.linkTx[l];
                                                }));
        }
    }
    double start = 0;
    std::vector<uint64_t> ids(messages.size());
    net->Prepare(pairs,
                 Callback<void>(
                     [&]()
                     {
                         start = Simulator::Now().GetSeconds();
                         for (std::size_t i = 0; i < messages.size(); ++i)
                         {
                             auto send = [&, i]()
                             {
                                 ids[i] =
                                     net->Send(messages[i].src,
                                               messages[i].dst,
                                               messages[i].bytes,
                                               NetworkBackend::DeliveryCallback(
                                                   [&out, &start, i](uint64_t id)
                                                   {
                                                       out.delivered[i] =
                                                           Simulator::Now().GetSeconds() - start;
                                                       out.order.push_back(id);
                                                       ++out.deliveries;
                                                   }),
                                               1,
                                               0,
                                               messages[i].ordered);
                             };
                             if (messages[i].at > 0)
                             {
                                 Simulator::Schedule(Seconds(messages[i].at), send);
                             }
                             else
                             {
                                 send();
                             }
                         }
                     }));
    Simulator::Stop(Seconds(1));
    Simulator::Run();
    out.stats = net->GetStats();
    out.dataPackets = out.stats.dataPackets;
    out.drops = out.stats.drops;
    net->Dispose();
    Simulator::Destroy();
    return out;
}

/**
 * \return the closed-form delivery time of a lone message of \p bytes over links of \p payload
 * bytes/s, \p latency of path latency: its bytes at the payload rate and the latency (switches
 * cut through), plus one full frame for each of \p stored switches that store and forward. The
 * default MTU of 4096 carries 4056 payload bytes per segment (IPv4 and TCP headers of 20 bytes
 * each, no timestamp option), 4098 bytes on the wire, sent at the payload rate x 4098 / 4056.
 */
double
LoneMessageTime(uint64_t bytes, double payload, double latency, uint32_t stored = 0)
{
    return bytes / payload + latency + stored * 4056.0 / payload;
}

} // namespace

/**
 * \brief A lone message between two GPUs on a switch costs its bytes at the payload rate and
 * the path latency (two links and the switch; the switch cuts through), within 1% (the ns-3
 * clock rounds each frame to a nanosecond).
 */
class PacketSingleMessageTestCase : public TestCase
{
  public:
    PacketSingleMessageTestCase()
        : TestCase("a lone message costs bytes over the payload rate plus path latency")
    {}

  private:
    void
    DoRun() override
    {
        NetworkSpec spec =
            OneDimension(TopologyKind::SWITCH, 2, 25, 1000).SwitchNs(200).Efficiency(0.9);
        for (uint64_t bytes : {uint64_t(1) << 20, uint64_t(16) << 20})
        {
            Outcome o = RunMessages(spec, 2, {{0, 1, bytes}});
            const double payload = 25e9 * 0.9;
            const double expected = LoneMessageTime(bytes, payload, 2e-6 + 200e-9);
            NS_TEST_ASSERT_MSG_EQ(o.deliveries, 1, "delivered once");
            NS_TEST_ASSERT_MSG_EQ_TOL(o.delivered[0] / expected, 1.0, 0.01, "time " << bytes);
            // Data segments: the message and its 16-byte frame header, plus the warm-up frame.
            const uint64_t segments = (bytes + 16 + 4055) / 4056 + 1;
            // (A message larger than the send buffer is written in pieces, and TCP may send a
            // short segment when a piece ends; no delayed-send coalescing with TcpNoDelay.)
            NS_TEST_ASSERT_MSG_GT_OR_EQ(o.dataPackets, segments, "one segment per 4056 bytes");
            // At most one short segment per send buffer's worth, and the message's last: the
            // path's window is 4 bandwidth-delay products (25 GB/s x 0.9 x 4.76 us), 428 KB.
            NS_TEST_ASSERT_MSG_LT_OR_EQ(
                o.dataPackets, segments + 2 + bytes / 428000, "no tiny segments");
            NS_TEST_ASSERT_MSG_EQ(o.drops, 0, "lossless");
            // Statistics: both links of the path carried the message; the uplink's device was
            // busy for the payload at the payload rate (headers ride in the device rate's
            // margin), the downlink towards gpu0 only with ACKs.
            Ptr<Topology> topo = Topology::Build(spec, 2);
            const std::vector<uint32_t> path =
                RoutingPolicy::Create("dimension-order")->Route(*topo, 0, 1, 0);
            RAPIDLLM_REQUIRE_EQ(path.size(), 2u, "gpu0 > switch > gpu1");
            for (uint32_t l : path)
            {
                NS_TEST_ASSERT_MSG_EQ(o.stats.links[l].bytes, double(bytes), "bytes on the path");
                NS_TEST_ASSERT_MSG_EQ_TOL(o.stats.links[l].busyTimeS / (bytes / payload),
                                          1.0,
                                          0.01,
                                          "busy time " << topo->DescribeLink(l));
            }
            const uint32_t down = topo->FindLink(topo->GetLink(path[0]).dst, 0);
            NS_TEST_ASSERT_MSG_EQ(o.stats.links[down].bytes, 0.0, "no payload towards gpu0");
            // An ACK (42 bytes on the wire) per 4098-byte segment at most: 1.0% of the time.
            NS_TEST_ASSERT_MSG_LT(
                o.stats.links[down].busyTimeS, 0.015 * bytes / payload, "ACKs only towards gpu0");
            NS_TEST_ASSERT_MSG_EQ(o.stats.connections, 1u, "one connection");
        }
    }
};

/**
 * \brief Switches cut through: a lone message across three switches of a fat tree (leaf, spine,
 * leaf) arrives at its bytes over the payload rate plus the path latency, as on the real
 * fabric; storing and forwarding (ns-3's own way) adds a full frame per switch. With the
 * sender's link at half rate, the switch still does not send a frame before its tail arrives.
 */
class PacketCutThroughTestCase : public TestCase
{
  public:
    PacketCutThroughTestCase()
        : TestCase("switches cut through; store-and-forward adds a frame per switch")
    {}

  private:
    void
    DoRun() override
    {
        NetworkSpec spec =
            OneDimension(TopologyKind::FAT_TREE, 8, 25, 1000).SwitchNs(100).Efficiency(0.9);
        spec.dimensions[0].leafSize = 4;
        const uint64_t bytes = 256 * 1024;
        const double payload = 25e9 * 0.9;
        const double latency = 4 * 1e-6 + 3 * 100e-9; // gpu0>leaf>spine>leaf>gpu7
        Outcome cut = RunMessages(spec, 8, {{0, 7, bytes}});
        RAPIDLLM_REQUIRE_EQ(cut.deliveries, 1, "delivered");
        // The nanosecond clock rounds each of the 65 frame times by up to half a nanosecond.
        NS_TEST_EXPECT_MSG_EQ_TOL(
            cut.delivered[0] / LoneMessageTime(bytes, payload, latency), 1.0, 0.003, "cut-through");
        Outcome stored =
            RunMessages(spec, 8, {{0, 7, bytes}}, {{"SwitchForwarding", "store-and-forward"}});
        RAPIDLLM_REQUIRE_EQ(stored.deliveries, 1, "delivered");
        NS_TEST_EXPECT_MSG_EQ_TOL(stored.delivered[0] / LoneMessageTime(bytes, payload, latency, 3),
                                  1.0,
                                  0.003,
                                  "store-and-forward");
        // A message of 64 full segments (with its 16-byte frame header): a leaf that sent each
        // frame on as its head arrived would deliver the last one a full frame (0.7%) early.
        NetworkSpec slow = spec;
        slow.faults.push_back({"gpu0>net.leaf0.0", 0.5});
        const uint64_t whole = 64 * 4056 - 16;
        Outcome half = RunMessages(slow, 8, {{0, 7, whole}});
        RAPIDLLM_REQUIRE_EQ(half.deliveries, 1, "delivered");
        NS_TEST_EXPECT_MSG_EQ_TOL(half.delivered[0] / LoneMessageTime(whole, payload / 2, latency),
                                  1.0,
                                  0.003,
                                  "a slow link into the switch: no frame outruns its tail");
    }
};

/**
 * \brief pcap captures: every frame a link sends is in its file (PPP framing, nanosecond
 * timestamps in order, the first 64 bytes of each frame), with the IPv4 addresses of its ends;
 * a link that sent nothing leaves no file, nor does a link PcapLinks does not select.
 */
class PacketCaptureTestCase : public TestCase
{
  public:
    PacketCaptureTestCase()
        : TestCase("pcap captures hold every frame each link sent")
    {}

  private:
    void
    DoRun() override
    {
        const std::filesystem::path dir = std::filesystem::temp_directory_path()
                                          / ("rapid-llm-pcap-" + std::to_string(::getpid()));
        std::filesystem::remove_all(dir);
        std::filesystem::create_directories(dir);
        NetworkSpec spec =
            OneDimension(TopologyKind::SWITCH, 4, 25, 1000).SwitchNs(200).Efficiency(0.9);
        const std::string prefix = (dir / "cap").string();
        Outcome o = RunMessages(spec, 4, {{0, 1, 100000}}, {{"Pcap", prefix}});
        RAPIDLLM_REQUIRE_EQ(o.deliveries, 1, "delivered");
        Ptr<Topology> topo = Topology::Build(spec, 4);
        uint64_t files = 0;
        for (uint32_t l = 0; l < topo->GetLinkCount(); ++l)
        {
            const TopologyLink& link = topo->GetLink(l);
            const std::string name = prefix + "-" + topo->GetNode(link.src).name + "-"
                                     + topo->GetNode(link.dst).name + ".pcap";
            const uint64_t sent = o.linkTx.count(l) ? o.linkTx.at(l) : 0;
            const bool sentAny = sent > 0;
            NS_TEST_EXPECT_MSG_EQ(std::filesystem::exists(name), sentAny, name);
            if (sent == 0)
            {
                continue;
            }
            ++files;
            PcapFile file;
            file.Open(name, std::ios::in | std::ios::binary);
            RAPIDLLM_REQUIRE_EQ(file.Fail(), false, "opened " << name);
            NS_TEST_EXPECT_MSG_EQ(file.GetDataLinkType(), 9u, "PPP");
            NS_TEST_EXPECT_MSG_EQ(file.IsNanoSecMode(), true, "nanoseconds");
            uint64_t records = 0;
            uint64_t full = 0;
            double last = 0;
            bool ordered = true;
            bool addressed = true;
            uint8_t data[128];
            while (true)
            {
                uint32_t sec = 0;
                uint32_t ns = 0;
                uint32_t included = 0;
                uint32_t original = 0;
                uint32_t read = 0;
                file.Read(data, sizeof(data), sec, ns, included, original, read);
                if (file.Eof() || file.Fail())
                {
                    break;
                }
                ++records;
                full += original == 4098 && included == 64 ? 1 : 0;
                const double t = sec + ns * 1e-9;
                ordered = ordered && t >= last;
                last = t;
                // PPP's IPv4 protocol number, then the IPv4 header: the ends are gpu0 and gpu1.
                const bool ends =
                    (data[17] == 0 && data[21] == 1) || (data[17] == 1 && data[21] == 0);
                addressed = addressed && data[0] == 0 && data[1] == 0x21 && ends;
            }
            NS_TEST_EXPECT_MSG_EQ(records, sent, name << ": every frame");
            NS_TEST_EXPECT_MSG_EQ(ordered, true, name << ": in time order");
            NS_TEST_EXPECT_MSG_EQ(addressed, true, name << ": IPv4 between gpu0 and gpu1");
            if (link.src == 0)
            {
                // 100,016 bytes: 24 full segments and a short one, after the handshake.
                NS_TEST_EXPECT_MSG_EQ(full, 24u, "full data frames, cut to 64 bytes");
            }
        }
        NS_TEST_EXPECT_MSG_EQ(files, 4u, "gpu0 > switch > gpu1 and the ACKs' way back");
        // Only the links PcapLinks selects: gpu0's two.
        const std::string some = (dir / "some").string();
        RunMessages(spec, 4, {{0, 1, 100000}}, {{"Pcap", some}, {"PcapLinks", "gpu0"}});
        uint64_t selected = 0;
        for (const auto& entry : std::filesystem::directory_iterator(dir))
        {
            selected += entry.path().filename().string().rfind("some-", 0) == 0 ? 1 : 0;
        }
        NS_TEST_EXPECT_MSG_EQ(selected, 2u, "gpu0's links only");
        NS_TEST_EXPECT_MSG_EQ(std::filesystem::exists(some + "-gpu0-net.sw0.pcap"), true, "up");
        std::filesystem::remove_all(dir);
    }
};

/**
 * \brief The send window is sized to the path: a lone 64 MiB message over a path of long
 * latency and high rate (bandwidth-delay product 1.8 MB, seven times the smallest window)
 * still moves at the payload rate, within 1% of the closed form, which a window below one
 * bandwidth-delay product could not. And an explicit SendBuffer of 256 KiB holds it to one
 * window per round trip, so the window really is what the attribute says.
 */
class PacketPathWindowTestCase : public TestCase
{
  public:
    PacketPathWindowTestCase()
        : TestCase("the send window covers the path's bandwidth-delay product")
    {}

  private:
    void
    DoRun() override
    {
        // 100 GB/s links of 5 us each through one switch of 200 ns.
        NetworkSpec spec =
            OneDimension(TopologyKind::SWITCH, 2, 100, 5000).SwitchNs(200).Efficiency(0.9);
        const uint64_t bytes = uint64_t(64) << 20;
        const double payload = 100e9 * 0.9;
        const double latency = 10e-6 + 200e-9;
        Outcome o = RunMessages(spec, 2, {{0, 1, bytes}});
        RAPIDLLM_REQUIRE_EQ(o.deliveries, 1, "delivered once");
        NS_TEST_ASSERT_MSG_EQ_TOL(o.delivered[0] / LoneMessageTime(bytes, payload, latency),
                                  1.0,
                                  0.01,
                                  "at the payload rate");
        // A 256 KiB window per round trip (2 x 10.2 us plus the frames): about 12.8 GB/s.
        Outcome held = RunMessages(spec, 2, {{0, 1, bytes}}, {{"SendBuffer", "262144"}});
        RAPIDLLM_REQUIRE_EQ(held.deliveries, 1, "delivered once");
        const double rtt = 2 * latency + 2 * 4056.0 / payload;
        NS_TEST_ASSERT_MSG_EQ_TOL(
            held.delivered[0] / (bytes / (262144 / rtt)), 1.0, 0.05, "one window per round trip");
    }
};

/**
 * \brief Delayed ACKs (one ACK per two segments, the default) cost nothing: a one-segment
 * message leaves its
 * ACK waiting for DelAckTimeout, and a message sent after MinRto on the same connection still
 * arrives at the closed form's time (an ACK delayed past MinRto would have set off a spurious
 * retransmission and shrunk the window to one segment). A DelAckTimeout of MinRto or more is
 * refused.
 */
class PacketDelayedAckTestCase : public TestCase
{
  public:
    PacketDelayedAckTestCase()
        : TestCase("delayed ACKs keep message times; a delay past MinRto is refused")
    {}

  private:
    void
    DoRun() override
    {
        NetworkSpec spec =
            OneDimension(TopologyKind::SWITCH, 2, 25, 1000).SwitchNs(200).Efficiency(0.9);
        const double payload = 25e9 * 0.9;
        const double latency = 2e-6 + 200e-9;
        const uint64_t bytes = uint64_t(1) << 20;
        const double later = 0.03; // 3 x MinRto
        Outcome o =
            RunMessages(spec, 2, {{0, 1, 1000}, {0, 1, bytes, later}}, {{"DelAckCount", "2"}});
        RAPIDLLM_REQUIRE_EQ(o.deliveries, 2, "both delivered");
        NS_TEST_EXPECT_MSG_LT(o.delivered[0], 2 * latency + 1e-6, "the short message");
        NS_TEST_EXPECT_MSG_EQ_TOL((o.delivered[1] - later)
                                      / LoneMessageTime(bytes, payload, latency),
                                  1.0,
                                  0.01,
                                  "the message after MinRto");
        NS_TEST_EXPECT_MSG_EQ(o.drops, 0, "lossless");
        Ptr<PacketNetwork> net = CreateObject<PacketNetwork>();
        net->SetAttribute("DelAckCount", UintegerValue(2));
        net->SetAttribute("DelAckTimeout", TimeValue(MilliSeconds(10)));
        bool refused = false;
        try
        {
            net->CheckAttributes();
        }
        catch (const SpecError& e)
        {
            refused = e.GetField() == "PacketNetwork::DelAckTimeout";
        }
        NS_TEST_EXPECT_MSG_EQ(refused, true, "a delayed ACK as long as MinRto");
    }
};

/**
 * \brief Framing: messages of awkward sizes (empty, one byte, segment boundaries) queued on
 * one connection and sent by several senders at once are each delivered exactly once, in
 * send order per connection, no earlier than the path latency.
 */
class PacketFramingTestCase : public TestCase
{
  public:
    PacketFramingTestCase()
        : TestCase("framed messages are delivered once, in order, at the receiver")
    {}

  private:
    void
    DoRun() override
    {
        NetworkSpec spec =
            OneDimension(TopologyKind::SWITCH, 4, 50, 500).SwitchNs(100).Efficiency(0.9);
        std::vector<Message> msgs;
        for (uint64_t bytes :
             {0ull, 1ull, 8931ull, 8932ull, 8933ull, 17880ull, 100000ull, 3ull, 1048576ull, 0ull})
        {
            msgs.push_back({0, 1, bytes});
            msgs.push_back({2, 1, bytes + 7});
            msgs.push_back({3, 0, bytes});
        }
        Outcome o = RunMessages(spec, 4, msgs);
        RAPIDLLM_REQUIRE_EQ(o.deliveries, msgs.size(), "every message delivered once");
        for (std::size_t i = 0; i < msgs.size(); ++i)
        {
            NS_TEST_ASSERT_MSG_GT(o.delivered[i], 1.1e-6 - 1e-12, "not before the latency");
        }
        // Per connection (every third message), deliveries follow send order.
        for (std::size_t c = 0; c < 3; ++c)
        {
            for (std::size_t i = c + 3; i < msgs.size(); i += 3)
            {
                NS_TEST_ASSERT_MSG_GT_OR_EQ(o.delivered[i], o.delivered[i - 3], "in order");
            }
        }
        std::vector<uint64_t> sorted = o.order;
        std::sort(sorted.begin(), sorted.end());
        for (std::size_t i = 0; i < sorted.size(); ++i)
        {
            NS_TEST_ASSERT_MSG_EQ(sorted[i], i, "ids 0..n-1, each once");
        }
    }
};

/**
 * \brief Routing: on a 4x4 torus with dimension-order routing, the packets of gpu0 > gpu5
 * cross exactly the links of the policy's path (X first, then Y), its ACKs the reverse path's
 * links, and no other link carries anything.
 */
class PacketRoutingTestCase : public TestCase
{
  public:
    PacketRoutingTestCase()
        : TestCase("packets follow the routing policy's path hop by hop")
    {}

  private:
    void
    DoRun() override
    {
        NetworkSpec spec =
            OneDimension(TopologyKind::TORUS, 16, 25, 1000).Shape({4, 4}).Efficiency(0.9);
        Ptr<Topology> topo = Topology::Build(spec, 16);
        Ptr<RoutingPolicy> dor = RoutingPolicy::Create("dimension-order");
        std::vector<uint32_t> data = dor->Route(*topo, 0, 5, 0);
        std::vector<uint32_t> acks = dor->Route(*topo, 5, 0, 0);
        NS_TEST_ASSERT_MSG_EQ(topo->DescribePath(data), "gpu0>gpu1>gpu5", "X then Y");
        Outcome o = RunMessages(spec, 16, {{0, 5, 1 << 20}});
        NS_TEST_ASSERT_MSG_EQ(o.deliveries, 1, "delivered");
        const uint64_t segments = o.dataPackets;
        for (uint32_t l = 0; l < topo->GetLinkCount(); ++l)
        {
            const bool onData = std::find(data.begin(), data.end(), l) != data.end();
            const bool onAcks = std::find(acks.begin(), acks.end(), l) != acks.end();
            const uint64_t tx = o.linkTx.count(l) ? o.linkTx[l] : 0;
            if (onData)
            {
                // Data segments plus the handshake's SYN and final ACK.
                NS_TEST_ASSERT_MSG_GT_OR_EQ(tx, segments, topo->DescribeLink(l));
            }
            else if (onAcks)
            {
                // One ACK per two segments (DelAckCount 2) plus the SYN-ACK.
                NS_TEST_ASSERT_MSG_GT_OR_EQ(2 * tx, segments, topo->DescribeLink(l));
            }
            else
            {
                NS_TEST_ASSERT_MSG_EQ(tx, 0, "off-path link " << topo->DescribeLink(l));
            }
        }
    }
};

/**
 * \brief Routes every flow through gpu2 (when neither end is gpu2), each leg by dimension
 * order: on one switch, gpu0 > gpu1 is gpu0>sw, sw>gpu2, gpu2>sw, sw>gpu1, visiting the switch
 * twice.
 */
class ViaGpu2Routing : public DetourRouting
{
  public:
    /** \brief Register this type. \return the TypeId */
    static TypeId
    GetTypeId()
    {
        static TypeId tid = TypeId("ns3::rapidllm::test::ViaGpu2Routing")
                                .SetParent<RoutingPolicy>()
                                .AddConstructor<ViaGpu2Routing>();
        return tid;
    }

  protected:
    uint32_t
    Middle(const Topology&, uint32_t, uint32_t, uint64_t) override
    {
        return 2;
    }
};

static RoutingPolicyRegistrar g_viaGpu2("test-via-gpu2", ViaGpu2Routing::GetTypeId());

/**
 * \brief A path that visits a node twice (Valiant routing through a GPU behind the same
 * switch) is followed hop by hop: the packets cross the intermediate GPU's links, and a small
 * message pays four link latencies, not two. (The switch's route was keyed by the address pair
 * alone, so its second hop overwrote its first and the packets went straight to gpu1.)
 */
class PacketRevisitTestCase : public TestCase
{
  public:
    PacketRevisitTestCase()
        : TestCase("packets follow a path that visits a switch twice")
    {}

  private:
    void
    DoRun() override
    {
        NetworkSpec spec = OneDimension(TopologyKind::SWITCH, 4, 25, 1000);
        NetworkSpec direct = spec;
        spec.routing = "test-via-gpu2";
        Ptr<Topology> topo = Topology::Build(spec, 4);
        const std::vector<uint32_t> path =
            RoutingPolicy::Create("test-via-gpu2")->Route(*topo, 0, 1, 0);
        NS_TEST_ASSERT_MSG_EQ(path.size(), 4u, topo->DescribePath(path));
        Outcome o = RunMessages(spec, 4, {{0, 1, 1 << 20}});
        NS_TEST_ASSERT_MSG_EQ(o.deliveries, 1, "delivered");
        for (uint32_t l : path)
        {
            const uint64_t tx = o.linkTx.count(l) ? o.linkTx[l] : 0;
            NS_TEST_EXPECT_MSG_GT_OR_EQ(
                tx, o.dataPackets, "on the path: " << topo->DescribeLink(l));
        }
        const double via = RunMessages(spec, 4, {{0, 1, 1}}).delivered[0];
        const double straight = RunMessages(direct, 4, {{0, 1, 1}}).delivered[0];
        NS_TEST_EXPECT_MSG_GT(via, 1.9 * straight, "four link latencies, not two");
        NS_TEST_EXPECT_MSG_GT(via, 4e-6, "four links of 1 us");
    }
};

/**
 * \brief Routes odd flow ids through gpu2 and even ones straight, each leg by dimension order:
 * one pair's messages alternate between two paths, as under Valiant routing.
 */
class OddViaGpu2Routing : public DetourRouting
{
  public:
    /** \brief Register this type. \return the TypeId */
    static TypeId
    GetTypeId()
    {
        static TypeId tid = TypeId("ns3::rapidllm::test::OddViaGpu2Routing")
                                .SetParent<RoutingPolicy>()
                                .AddConstructor<OddViaGpu2Routing>();
        return tid;
    }

  protected:
    uint32_t
    Middle(const Topology&, uint32_t src, uint32_t, uint64_t flowId) override
    {
        return flowId % 2 == 1 ? 2 : src;
    }
};

static RoutingPolicyRegistrar g_oddViaGpu2("test-odd-via-gpu2", OddViaGpu2Routing::GetTypeId());

/**
 * \brief A message routed onto a path its pair has no connection on yet, sent while the
 * pair's prepared connection is idle, moves that connection onto its path and costs what it
 * costs on a prepared connection of that path (within 1%): no handshake and warm-up round trip
 * inside the run, as a real fabric routes a flow without setting up a transport connection.
 * (A new connection per path made the Valiant ring all-reduce of 4 MiB on 8 GPUs take
 * 108.6 us on the packet network where the flow network gives 97.6 us.)
 */
class PacketNewPathTestCase : public TestCase
{
  public:
    PacketNewPathTestCase()
        : TestCase("a new path of a pair moves an idle connection, without a new handshake")
    {}

  private:
    void
    DoRun() override
    {
        const uint64_t bytes = 1 << 20;
        NetworkSpec spec = OneDimension(TopologyKind::SWITCH, 4, 25, 1000);
        // The reference: the path through gpu2 on a connection Prepare opened for it.
        spec.routing = "test-via-gpu2";
        const double prepared = RunMessages(spec, 4, {{0, 1, bytes}}).delivered[0];

        spec.routing = "test-odd-via-gpu2";
        Ptr<Topology> topo = Topology::Build(spec, 4);
        Ptr<PacketNetwork> net = CreateObject<PacketNetwork>();
        net->SetTopology(topo);
        net->SetRouting(RoutingPolicy::Create(spec.routing));
        double sent = -1;
        double delivered = -1;
        net->Prepare(
            {{0, 1}},
            Callback<void>(
                [&]()
                {
                    // Message 0 goes straight on the prepared connection; message 1, sent once
                    // message 0 is delivered and acknowledged, goes through gpu2.
                    net->Send(0,
                              1,
                              bytes,
                              NetworkBackend::DeliveryCallback(
                                  [&](uint64_t)
                                  {
                                      Simulator::Schedule(
                                          MicroSeconds(20),
                                          [&]()
                                          {
                                              sent = Simulator::Now().GetSeconds();
                                              net->Send(0,
                                                        1,
                                                        bytes,
                                                        NetworkBackend::DeliveryCallback(
                                                            [&](uint64_t)
                                                            {
                                                                delivered =
                                                                    Simulator::Now().GetSeconds();
                                                            }));
                                          });
                                  }));
                }));
        Simulator::Stop(Seconds(1));
        Simulator::Run();
        const uint32_t connections = net->GetConnectionCount();
        const uint32_t moved = net->GetMovedConnectionCount();
        net->Dispose();
        Simulator::Destroy();
        NS_TEST_ASSERT_MSG_GT(delivered, 0.0, "message 1 delivered");
        NS_TEST_EXPECT_MSG_EQ_TOL(delivered - sent,
                                  prepared,
                                  0.01 * prepared,
                                  "through gpu2 as on a prepared connection");
        NS_TEST_EXPECT_MSG_EQ(connections, 1u, "the prepared connection carried both");
        NS_TEST_EXPECT_MSG_EQ(moved, 1u, "moved once");
    }
};

/**
 * \brief Faults: a link at 50% doubles a message's transmission time; a dead link is not
 * installed and dimension-order routing goes the other way around the ring; an unreachable
 * pair is a NetworkError naming it.
 */
class PacketFaultTestCase : public TestCase
{
  public:
    PacketFaultTestCase()
        : TestCase("degraded links run slower, dead links are not installed")
    {}

  private:
    void
    DoRun() override
    {
        const uint64_t bytes = 8 << 20;
        NetworkSpec ring = OneDimension(TopologyKind::RING, 4, 25, 1000).Efficiency(0.9);
        Outcome healthy = RunMessages(ring, 4, {{0, 1, bytes}});
        NetworkSpec soft = ring;
        soft.faults.push_back({"gpu0-gpu1", 0.5});
        Outcome slow = RunMessages(soft, 4, {{0, 1, bytes}});
        const double tx = healthy.delivered[0] - 1e-6;
        NS_TEST_ASSERT_MSG_EQ_TOL((slow.delivered[0] - 1e-6) / tx, 2.0, 0.02, "half rate");

        NetworkSpec hard = ring;
        hard.faults.push_back({"gpu0-gpu1", 0});
        {
            Ptr<Topology> topo = Topology::Build(hard, 4);
            Ptr<PacketNetwork> net = CreateObject<PacketNetwork>();
            net->SetTopology(topo);
            net->SetRouting(RoutingPolicy::Create("dimension-order"));
            NS_TEST_ASSERT_MSG_EQ(net->GetLinkDevice(topo->FindLink(0, 1)), nullptr, "removed");
            NS_TEST_ASSERT_MSG_NE(net->GetLinkDevice(topo->FindLink(1, 2)), nullptr, "kept");
            net->Dispose();
            Simulator::Destroy();
        }
        Outcome rerouted = RunMessages(hard, 4, {{0, 1, bytes}});
        NS_TEST_ASSERT_MSG_EQ(rerouted.deliveries, 1, "delivered the other way round");
        // Three hops instead of one: two more link latencies and frames, same rate.
        NS_TEST_ASSERT_MSG_GT(rerouted.delivered[0], healthy.delivered[0] + 2e-6, "longer");
        NS_TEST_ASSERT_MSG_LT(rerouted.delivered[0], healthy.delivered[0] * 1.05, "same rate");

        // gpu0 cut off entirely.
        NetworkSpec cut = ring;
        cut.faults.push_back({"gpu0-gpu1", 0});
        cut.faults.push_back({"gpu0-gpu3", 0});
        bool threw = false;
        try
        {
            RunMessages(cut, 4, {{0, 2, 1000}});
        }
        catch (const NetworkError& e)
        {
            threw = std::string(e.what()).find("gpu0") != std::string::npos;
        }
        Simulator::Destroy();
        NS_TEST_ASSERT_MSG_EQ(threw, true, "unreachable pair named");
    }
};

/**
 * \brief Two messages of one pair sent at once: ordered, the second starts once the first has
 * left (it lands a message time later); unordered, they share the link at once on connections
 * of their own and land together, as on the flow network (NetworkBackend::Send).
 */
class PacketUnorderedTestCase : public TestCase
{
  public:
    PacketUnorderedTestCase()
        : TestCase("unordered messages of a pair share its links at once; ordered ones queue")
    {}

  private:
    void
    DoRun() override
    {
        NetworkSpec spec =
            OneDimension(TopologyKind::SWITCH, 2, 25, 1000).SwitchNs(100).Efficiency(0.9);
        const uint64_t bytes = uint64_t(4) << 20;
        const double one = bytes / (25e9 * 0.9);
        Outcome ordered = RunMessages(spec, 2, {{0, 1, bytes}, {0, 1, bytes}});
        RAPIDLLM_REQUIRE_EQ(ordered.deliveries, 2, "both delivered");
        NS_TEST_EXPECT_MSG_EQ_TOL((ordered.delivered[1] - ordered.delivered[0]) / one,
                                  1.0,
                                  0.05,
                                  "ordered: the second a message time after the first");
        Message a{0, 1, bytes};
        a.ordered = false;
        Outcome shared = RunMessages(spec, 2, {a, a});
        RAPIDLLM_REQUIRE_EQ(shared.deliveries, 2, "both delivered");
        NS_TEST_EXPECT_MSG_LT(
            std::fabs(shared.delivered[1] - shared.delivered[0]) / one, 0.1, "unordered: together");
        NS_TEST_EXPECT_MSG_EQ_TOL(
            shared.delivered[1] / ordered.delivered[1], 1.0, 0.02, "the same link time in all");
    }
};

/**
 * \brief Multipath: with ECMP on a fat tree, ordered messages of one pair hashed onto different
 * spines travel on different connections (one address slot per path), all delivered.
 */
class PacketMultipathTestCase : public TestCase
{
  public:
    PacketMultipathTestCase()
        : TestCase("ECMP paths of one pair get their own connections")
    {}

  private:
    void
    DoRun() override
    {
        NetworkSpec spec =
            OneDimension(TopologyKind::FAT_TREE, 8, 25, 1000).SwitchNs(100).Efficiency(0.9);
        spec.dimensions[0].leafSize = 4;
        spec.routing = "ecmp";
        Ptr<Topology> topo = Topology::Build(spec, 8);
        Ptr<RoutingPolicy> ecmp = RoutingPolicy::Create("ecmp");
        std::set<std::vector<uint32_t>> paths;
        std::vector<Message> msgs;
        for (uint64_t id = 0; id < 16; ++id)
        {
            paths.insert(ecmp->Route(*topo, 0, 7, id));
            msgs.push_back({0, 7, 100000});
        }
        NS_TEST_ASSERT_MSG_GT(paths.size(), 1, "ECMP spreads this pair");
        Ptr<PacketNetwork> net = CreateObject<PacketNetwork>();
        net->SetTopology(topo);
        net->SetRouting(ecmp);
        uint64_t delivered = 0;
        Simulator::ScheduleNow(
            [&]()
            {
                for (const auto& m : msgs)
                {
                    net->Send(m.src,
                              m.dst,
                              m.bytes,
                              NetworkBackend::DeliveryCallback(
                                  [&delivered](uint64_t)
                                  {
                                      ++delivered;
                                  }),
                              1,
                              0,
                              true);
                }
            });
        Simulator::Stop(Seconds(1));
        Simulator::Run();
        RAPIDLLM_REQUIRE_EQ(delivered, msgs.size(), "all delivered");
        RAPIDLLM_REQUIRE_EQ(net->GetConnectionCount(), paths.size(), "one per path");
        net->Dispose();
        Simulator::Destroy();
    }
};

/**
 * \brief Faults during the run on the packet backend: a link degraded at time t carries the
 * bytes sent before t at the full rate and the rest at the reduced rate (the closed form,
 * within 2%); a link that dies under a message loses its frames (counted as drops) and the
 * message is delivered only after the link is repaired and TCP has retransmitted.
 */
class PacketScheduledFaultTestCase : public TestCase
{
  public:
    PacketScheduledFaultTestCase()
        : TestCase("faults scheduled during the run change device rates or drop frames")
    {}

  private:
    /** \brief What one run observed. */
    struct Run
    {
        double delivered = -1; //!< delivery time after the start, s (-1: never)
        uint64_t drops = 0;    //!< frames dropped
        uint32_t applied = 0;  //!< faults applied
        uint32_t stalled = 0;  //!< messages the network knows a dead link holds, at the end
    };

    /**
     * \return the delivery of \p bytes from gpu0 to gpu1 (one 10 GB/s link, 1 us) with the
     * faults counted from the start of the transfer
     */
    static Run
    Transfer(uint64_t bytes, const std::vector<ScheduledFault>& faults)
    {
        NetworkSpec spec = OneDimension(TopologyKind::RING, 2, 10, 1000);
        Ptr<Topology> topo = Topology::Build(spec, 2);
        Ptr<PacketNetwork> net = CreateObject<PacketNetwork>();
        net->SetTopology(topo);
        net->SetRouting(RoutingPolicy::Create("dimension-order"));
        Ptr<FaultSchedule> schedule = CreateObject<FaultSchedule>();
        for (const auto& f : faults)
        {
            schedule->Add(f);
        }
        Run run;
        double start = 0;
        net->Prepare({{0, 1}},
                     Callback<void>(
                         [&]()
                         {
                             // Armed here, fault times count from the transfer's start.
                             start = Simulator::Now().GetSeconds();
                             net->SetFaultSchedule(schedule);
                             net->Send(0,
                                       1,
                                       bytes,
                                       [&](uint64_t)
                                       {
                                           run.delivered = Simulator::Now().GetSeconds() - start;
                                           Simulator::Stop();
                                       });
                         }));
        Simulator::Stop(Seconds(10));
        Simulator::Run();
        run.drops = net->GetStats().drops;
        run.applied = schedule->GetAppliedCount();
        run.stalled = net->GetStalledCount();
        net->Dispose();
        Simulator::Destroy();
        return run;
    }

    void
    DoRun() override
    {
        const uint64_t bytes = 32u << 20; // 3.36 ms at 10 GB/s
        const Run healthy = Transfer(bytes, {});
        NS_TEST_ASSERT_MSG_EQ_TOL(
            healthy.delivered / (bytes / 10e9 + 1e-6), 1.0, 0.02, "healthy transfer");
        for (double factor : {0.5, 0.2})
        {
            const Run slowed = Transfer(bytes, {{"gpu0-gpu1", factor, MilliSeconds(1), "test"}});
            // 10 MB in the first ms at 10 GB/s, the rest at factor x 10 GB/s.
            const double expected = 1e-3 + (bytes - 1e7) / (factor * 10e9) + 1e-6;
            NS_TEST_ASSERT_MSG_EQ(slowed.applied, 1u, "fault applied");
            NS_TEST_ASSERT_MSG_EQ_TOL(
                slowed.delivered / expected, 1.0, 0.02, "closed form at factor " << factor);
            NS_TEST_ASSERT_MSG_EQ(slowed.drops, 0u, "a soft fault loses nothing");
        }
        // Dead from 1 ms to 3 ms: frames are lost, TCP times out (MinRto 10 ms) and
        // retransmits once the link is back.
        const Run cut = Transfer(
            bytes,
            {{"gpu0-gpu1", 0, MilliSeconds(1), "test"}, {"gpu0-gpu1", 1, MilliSeconds(3), "test"}});
        NS_TEST_ASSERT_MSG_GT(cut.drops, 0u, "frames lost on the dead link");
        NS_TEST_ASSERT_MSG_GT(cut.delivered, healthy.delivered + 2e-3, "delivered after repair");
        NS_TEST_ASSERT_MSG_LT(cut.delivered, 0.1, "within a few retransmission timeouts");
        // Dead for good: never delivered; the run ends (TCP gives up) before the 10 s stop.
        const Run dead = Transfer(bytes, {{"gpu0-gpu1", 0, MilliSeconds(1), "test"}});
        NS_TEST_ASSERT_MSG_EQ(dead.delivered, -1.0, "never delivered over a dead link");
        NS_TEST_ASSERT_MSG_GT(dead.drops, 0u, "its frames were lost");
        // The network says a dead link holds it (the replay names the link, not a slow rate);
        // a repaired one holds nothing.
        NS_TEST_EXPECT_MSG_EQ(dead.stalled, 1u, "stalled on the dead link");
        NS_TEST_EXPECT_MSG_EQ(cut.stalled, 0u, "repaired: nothing stalled");
    }
};

/** \brief The packet network's test suite. */
class PacketNetworkTestSuite : public TestSuite
{
  public:
    PacketNetworkTestSuite()
        : TestSuite("rapid-llm-packet-network", UNIT)
    {
        AddTestCase(new PacketSingleMessageTestCase, TestCase::QUICK);
        AddTestCase(new PacketPathWindowTestCase, TestCase::QUICK);
        AddTestCase(new PacketCutThroughTestCase, TestCase::QUICK);
        AddTestCase(new PacketCaptureTestCase, TestCase::QUICK);
        AddTestCase(new PacketDelayedAckTestCase, TestCase::QUICK);
        AddTestCase(new PacketFramingTestCase, TestCase::QUICK);
        AddTestCase(new PacketRoutingTestCase, TestCase::QUICK);
        AddTestCase(new PacketRevisitTestCase, TestCase::QUICK);
        AddTestCase(new PacketNewPathTestCase, TestCase::QUICK);
        AddTestCase(new PacketFaultTestCase, TestCase::QUICK);
        AddTestCase(new PacketUnorderedTestCase, TestCase::QUICK);
        AddTestCase(new PacketMultipathTestCase, TestCase::QUICK);
        AddTestCase(new PacketScheduledFaultTestCase, TestCase::QUICK);
    }
};

static PacketNetworkTestSuite g_packetNetworkTestSuite;
