/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// Workload -> Chakra traces: the written set reads back identical, every send meets its
// receive on the peer rank, and every member of a group issues the same collectives on it.

#include "job-fixtures.h"
#include "ns3/chakra-trace-reader.h"
#include "ns3/model-spec.h"
#include "ns3/test.h"
#include "ns3/workload-trace.h"
#include "ns3/workload.h"
#include "test-require.h"

#include <filesystem>
#include <map>
#include <set>
#include <tuple>

using namespace ns3;
using namespace ns3::rapidllm;

/**
 * \brief Writes the traces of layouts using every parallel axis, reads them back and checks the
 * cross-rank contracts a replayer relies on.
 */
class WorkloadTraceTestCase : public TestCase
{
  public:
    WorkloadTraceTestCase()
        : TestCase("workload traces round-trip and match across ranks")
    {}

  private:
    void
    Check(const ModelSpec& model, const RunSpec& run, const std::string& label)
    {
        // A deterministic duration rule stands in for the compute model here.
        Workload w = Workload::Build(model,
                                     run,
                                     [](const OperatorDesc& op)
                                     {
                                         OperatorCost c;
                                         c.timeS = 1e-6 + op.ModelFlops() / 1e14;
                                         c.hbmBytes = 64.0 * (1 + int(op.type)) + op.backward;
                                         return c;
                                     });
        auto dir = std::filesystem::temp_directory_path() / ("rapidllm-wt-" + label);
        std::filesystem::create_directories(dir);
        const std::string prefix = (dir / "t").string();
        WriteWorkloadTraces(w, prefix);
        TraceSet set = ChakraTraceReader::ReadTraceSet(prefix);
        RAPIDLLM_REQUIRE_EQ(set.ranks.size(), w.layout.Ranks(), label << ": one file per rank");

        std::multiset<std::tuple<int, int, int, uint64_t>> sends;
        std::multiset<std::tuple<int, int, int, uint64_t>> recvs;
        // (group, rank) -> sequence of (type, bytes)
        std::map<uint32_t, std::map<uint32_t, std::vector<std::pair<int, uint64_t>>>> colls;
        for (uint32_t r = 0; r < set.ranks.size(); ++r)
        {
            const ExecutionTrace& t = set.ranks[r];
            NS_TEST_ASSERT_MSG_EQ((t == RankTrace(w, r)), true, label << ": rank " << r);
            for (const auto& n : t.GetNodes())
            {
                if (n.type == TraceNodeType::COMM_SEND)
                {
                    NS_TEST_ASSERT_MSG_EQ(n.commSrc, int(r), "send source");
                    sends.insert({n.commSrc, n.commDst, n.commTag, n.bytes});
                }
                else if (n.type == TraceNodeType::COMM_RECV)
                {
                    NS_TEST_ASSERT_MSG_EQ(n.commDst, int(r), "receive destination");
                    recvs.insert({n.commSrc, n.commDst, n.commTag, n.bytes});
                }
                else if (n.type == TraceNodeType::COMM_COLL)
                {
                    NS_TEST_ASSERT_MSG_EQ(set.groups.Has(n.group), true, "group exists");
                    colls[n.group][r].push_back({int(n.commType), n.bytes});
                }
            }
        }
        NS_TEST_EXPECT_MSG_EQ((sends == recvs), true, label << ": every send meets its receive");
        for (const auto& [group, byRank] : colls)
        {
            const auto& members = set.groups.Get(group);
            NS_TEST_EXPECT_MSG_EQ(byRank.size(), members.size(), label << ": all members");
            for (uint32_t m : members)
            {
                NS_TEST_EXPECT_MSG_EQ((byRank.count(m) && byRank.at(m) == byRank.begin()->second),
                                      true,
                                      label << ": group " << group << " rank " << m);
            }
        }
        std::filesystem::remove_all(dir);
    }

    void
    DoRun() override
    {
        ModelSpec gpt = ModelSpec::Load("gpt-1.7b");
        RunSpec a = fixture::TrainingJob(2, 2, 2, 1, 8, 512);
        a.parallel.virtualStages = 2;
        a.parallel.sequenceParallel = true;
        Check(gpt, a, "tp-pp-dp-vpp-sp");
        RunSpec b = a;
        b.parallel.virtualStages = 1;
        b.parallel.sequenceParallel = false;
        b.parallel.tp = 1;
        b.parallel.cp = 2;
        b.parallel.zeroStage = 3;
        Check(gpt, b, "cp-zero3");
        RunSpec c = fixture::TrainingJob(1, 2, 4, 1, 4, 256);
        c.parallel.ep = 2;
        Check(fixture::SmallModel("mixtral-8x7b", 4), c, "ep");
        // Uneven stages: 10 layers as 3, 2, 2, 3, in training and in inference.
        RunSpec u = fixture::TrainingJob(1, 4, 2, 1, 8, 256);
        u.parallel.firstStageLayers = 3;
        u.parallel.lastStageLayers = 3;
        Check(fixture::SmallModel("gpt-1.7b", 10), u, "uneven-stages");
        RunSpec ui = fixture::InferenceJob(1, 4, 2, 32, 4);
        ui.parallel.firstStageLayers = 3;
        ui.parallel.lastStageLayers = 3;
        Check(fixture::SmallModel("gpt-1.7b", 10), ui, "uneven-stages-inference");
        RunSpec d = fixture::InferenceJob(2, 2, 2, 32, 4);
        Check(gpt, d, "inference");
        d.firstToken = "decode";
        Check(gpt, d, "inference, first token from a decode step");
    }
};

/** \brief The workload trace test suite. */
class WorkloadTraceTestSuite : public TestSuite
{
  public:
    WorkloadTraceTestSuite()
        : TestSuite("rapid-llm-workload-trace", UNIT)
    {
        AddTestCase(new WorkloadTraceTestCase, TestCase::QUICK);
    }
};

static WorkloadTraceTestSuite g_workloadTraceTestSuite; //!< registers the suite
