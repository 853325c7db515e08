/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// The indexed min-heap of the flow network's transmission ends, alone (no topology, no
// simulator): after any sequence of inserts, key changes up and down and removals, the top is
// the smallest (key, item) of an ordered reference set, every entry is ordered after its parent,
// and draining yields the reference order (equal keys by item, whatever the insertion order).

#include "ns3/indexed-min-heap.h"
#include "ns3/test.h"

#include <map>
#include <random>
#include <set>
#include <utility>

using namespace ns3;
using namespace ns3::rapidllm;

namespace {

/** \return whether every entry of \p heap is not before its parent */
bool
HeapOrdered(const IndexedMinHeap& heap)
{
    const auto& e = heap.GetEntries();
    for (std::size_t i = 1; i < e.size(); ++i)
    {
        if (IndexedMinHeap::Before(e[i], e[(i - 1) / 2]))
        {
            return false;
        }
    }
    return true;
}

} // namespace

/**
 * \brief Random operations against a std::set of (key, item): same top, size, membership and
 * keys after every step, heap order kept.
 */
class HeapRandomTestCase : public TestCase
{
  public:
    HeapRandomTestCase()
        : TestCase("random updates keep the heap equal to an ordered reference set")
    {}

  private:
    void
    DoRun() override
    {
        std::mt19937_64 rng(2024);
        std::uniform_int_distribution<uint32_t> item(0, 199);
        std::uniform_int_distribution<int> op(0, 9);
        // Few distinct keys, so that ties (decided by item) are frequent.
        std::uniform_int_distribution<int> key(0, 50);
        IndexedMinHeap heap;
        std::set<std::pair<double, uint32_t>> ref;
        std::map<uint32_t, double> keyOf;
        int mismatches = 0;
        for (int step = 0; step < 20000; ++step)
        {
            const uint32_t i = item(rng);
            if (op(rng) < 7)
            {
                const double k = key(rng) * 0.25;
                if (keyOf.count(i))
                {
                    ref.erase({keyOf[i], i});
                }
                keyOf[i] = k;
                ref.insert({k, i});
                heap.Set(i, k);
            }
            else
            {
                if (keyOf.count(i))
                {
                    ref.erase({keyOf[i], i});
                    keyOf.erase(i);
                }
                heap.Erase(i); // absent items: nothing happens
            }
            if (heap.GetSize() != ref.size() || heap.Contains(i) != (keyOf.count(i) > 0)
                || (keyOf.count(i) && heap.GetKey(i) != keyOf[i]) || !HeapOrdered(heap))
            {
                ++mismatches;
            }
            if (!ref.empty()
                && (heap.Top().key != ref.begin()->first || heap.Top().item != ref.begin()->second))
            {
                ++mismatches;
            }
        }
        NS_TEST_ASSERT_MSG_EQ(mismatches, 0, "heap and reference agree at every step");
        // Drain: the reference order.
        while (!ref.empty())
        {
            NS_TEST_ASSERT_MSG_EQ(heap.Top().item, ref.begin()->second, "drain order");
            heap.Erase(heap.Top().item);
            ref.erase(ref.begin());
        }
        NS_TEST_ASSERT_MSG_EQ(heap.IsEmpty(), true, "drained");
    }
};

/**
 * \brief Hand-checked cases: equal keys come out by item whatever the insertion order; moving a
 * key down brings an item to the top, moving it up sends it behind; Clear empties.
 */
class HeapTiesTestCase : public TestCase
{
  public:
    HeapTiesTestCase()
        : TestCase("equal keys by item; keys move both ways")
    {}

  private:
    void
    DoRun() override
    {
        IndexedMinHeap heap;
        for (uint32_t i : {7u, 3u, 9u, 1u, 5u})
        {
            heap.Set(i, 1.0);
        }
        std::vector<uint32_t> order;
        while (!heap.IsEmpty())
        {
            order.push_back(heap.Top().item);
            heap.Erase(heap.Top().item);
        }
        NS_TEST_ASSERT_MSG_EQ((order == std::vector<uint32_t>{1, 3, 5, 7, 9}), true, "by item");

        heap.Set(4, 4.0);
        heap.Set(2, 2.0);
        heap.Set(8, 8.0);
        NS_TEST_ASSERT_MSG_EQ(heap.Top().item, 2u, "smallest key");
        heap.Set(8, 1.0);
        NS_TEST_ASSERT_MSG_EQ(heap.Top().item, 8u, "moved down to the top");
        heap.Set(8, 9.0);
        NS_TEST_ASSERT_MSG_EQ(heap.Top().item, 2u, "moved up behind");
        heap.Erase(2);
        NS_TEST_ASSERT_MSG_EQ(heap.Top().item, 4u, "next");
        NS_TEST_ASSERT_MSG_EQ(heap.Contains(2), false, "erased");
        NS_TEST_ASSERT_MSG_EQ(heap.Contains(1000), false, "never seen");
        heap.Clear();
        NS_TEST_ASSERT_MSG_EQ(heap.IsEmpty(), true, "cleared");
        NS_TEST_ASSERT_MSG_EQ(heap.Contains(4), false, "cleared items");
    }
};

/** \brief The indexed min-heap's test suite. */
class IndexedMinHeapTestSuite : public TestSuite
{
  public:
    IndexedMinHeapTestSuite()
        : TestSuite("rapid-llm-indexed-min-heap", UNIT)
    {
        AddTestCase(new HeapRandomTestCase, TestCase::QUICK);
        AddTestCase(new HeapTiesTestCase, TestCase::QUICK);
    }
};

static IndexedMinHeapTestSuite g_indexedMinHeapTestSuite;
