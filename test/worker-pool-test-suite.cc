/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// The worker pool: every item's result comes back; a worker that dies (killed as the machine
// kills a process out of memory) is replaced and its item run again once, and an item whose
// worker dies twice ends the run with a WorkerLost, not an internal error.

#include "ns3/test.h"
#include "ns3/worker-pool.h"
#include "scratch-dir.h"

#include <signal.h>

#include <filesystem>
#include <fstream>
#include <map>

using namespace ns3;
using namespace ns3::rapidllm;

/**
 * \ingroup rapid-llm-tests
 * \brief A killed worker's item runs again in a new worker; killed twice, the run ends.
 */
class WorkerPoolRetryTestCase : public TestCase
{
  public:
    WorkerPoolRetryTestCase()
        : TestCase("a killed worker is replaced and its item rerun once; twice ends the run")
    {}

  private:
    void
    DoRun() override
    {
        const ScratchDir scratch("worker-pool");
        const std::string marker = scratch.Path() + "/killed-once";
        WorkerPool pool(2);
        std::map<uint64_t, std::string> results;
        const bool complete = pool.Run(
            {0, 1, 2, 3, 4},
            [&](uint64_t item)
            {
                if (item == 2 && !std::filesystem::exists(marker))
                {
                    std::ofstream(marker) << "x";
                    ::raise(SIGKILL); // the first worker to run item 2 dies
                }
                return std::to_string(item * item);
            },
            [&](uint64_t item, const std::string& result)
            {
                results[item] = result;
            });
        NS_TEST_EXPECT_MSG_EQ(complete, true, "every item ran");
        NS_TEST_EXPECT_MSG_EQ(results.size(), 5u, "five results");
        NS_TEST_EXPECT_MSG_EQ(results[2], "4", "item 2 ran again in a new worker");
        NS_TEST_EXPECT_MSG_EQ(results[4], "16", "the others as well");

        // An item that kills every worker it runs on: a WorkerLost naming it, after one retry.
        std::string lost;
        try
        {
            pool.Run(
                {0, 1},
                [](uint64_t item)
                {
                    if (item == 1)
                    {
                        ::raise(SIGKILL);
                    }
                    return std::string("ok");
                },
                [](uint64_t, const std::string&) {});
        }
        catch (const WorkerLost& e)
        {
            lost = e.what();
        }
        NS_TEST_EXPECT_MSG_NE(lost.find("item 1 died (signal 9), twice"), std::string::npos, lost);
    }
};

/**
 * \ingroup rapid-llm-tests
 * \brief The worker pool's recovery from lost workers.
 */
class WorkerPoolTestSuite : public TestSuite
{
  public:
    WorkerPoolTestSuite()
        : TestSuite("rapid-llm-worker-pool", UNIT)
    {
        AddTestCase(new WorkerPoolRetryTestCase, TestCase::QUICK);
    }
};

static WorkerPoolTestSuite g_workerPoolTestSuite;
