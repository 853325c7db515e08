/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// The max-min solver alone (no topology, no simulator): exact weighted max-min allocations on
// hand-solved cases (shared bottleneck, parking lot, weights), a class of w identical flows
// equal to one flow of weight w, the incremental solve equal to a from-scratch allocation
// (written independently here) through random arrivals, departures and capacity changes, and
// the work it saves: unrelated components and frozen flows are not recomputed.

#include "ns3/max-min-solver.h"
#include "ns3/test.h"
#include "test-require.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <vector>

using namespace ns3;
using namespace ns3::rapidllm;

namespace {

/** \brief A flow as the reference sees it. */
struct RefFlow
{
    std::vector<uint32_t> links; //!< path
    uint32_t weight = 1;         //!< member flows
};

/**
 * \return the weighted max-min per-member rates of \p flows over capacities \p cap, by naive
 * progressive filling: fix every flow of the link with the smallest share, repeat
 */
std::vector<double>
Reference(const std::vector<RefFlow>& flows, const std::vector<double>& cap)
{
    std::vector<double> rate(flows.size(), -1);
    std::vector<double> left = cap;
    std::size_t fixedCount = 0;
    while (fixedCount < flows.size())
    {
        std::map<uint32_t, double> unfixed; // link -> weight without a rate
        for (std::size_t f = 0; f < flows.size(); ++f)
        {
            if (rate[f] < 0)
            {
                for (uint32_t l : flows[f].links)
                {
                    unfixed[l] += flows[f].weight;
                }
            }
        }
        double best = std::numeric_limits<double>::infinity();
        uint32_t bottleneck = 0;
        for (const auto& [l, w] : unfixed)
        {
            const double share = std::max(left[l], 0.0) / w;
            if (share < best)
            {
                best = share;
                bottleneck = l;
            }
        }
        for (std::size_t f = 0; f < flows.size(); ++f)
        {
            const auto& p = flows[f].links;
            if (rate[f] < 0 && std::find(p.begin(), p.end(), bottleneck) != p.end())
            {
                rate[f] = best;
                ++fixedCount;
                for (uint32_t l : p)
                {
                    left[l] -= best * flows[f].weight;
                }
            }
        }
    }
    return rate;
}

/** \return a solver over links of the given capacities */
MaxMinSolver
Solver(const std::vector<double>& cap)
{
    MaxMinSolver s;
    s.Reset(static_cast<uint32_t>(cap.size()));
    for (uint32_t l = 0; l < cap.size(); ++l)
    {
        s.SetCapacity(l, cap[l]);
    }
    return s;
}

/** \return whether a and b agree to 1e-9 relative */
bool
Near(double a, double b)
{
    return std::fabs(a - b) <= 1e-9 * std::max(std::fabs(a), std::fabs(b));
}

} // namespace

/**
 * \brief Hand-solved allocations. Shared bottleneck: link 0 (10) carries A and B, link 1 (4)
 * carries B and C: link 1 is the bottleneck at 2 (B, C), A gets the 8 left on link 0. Parking
 * lot: three links of 12, a long flow over all, one short flow on the outer links and two on
 * the middle one: the middle link gives 4 to its three flows, the outer short flows get 8.
 */
class SolverHandSolvedTestCase : public TestCase
{
  public:
    SolverHandSolvedTestCase()
        : TestCase("max-min rates equal hand-solved allocations")
    {}

  private:
    void
    DoRun() override
    {
        {
            MaxMinSolver s = Solver({10, 4});
            const uint32_t a = s.AddFlow({0});
            const uint32_t b = s.AddFlow({0, 1});
            const uint32_t c = s.AddFlow({1});
            NS_TEST_ASSERT_MSG_EQ(s.GetRate(a), 0.0, "no rate before Solve");
            RAPIDLLM_REQUIRE_EQ(s.Solve().size(), 3u, "three new flows recomputed");
            NS_TEST_ASSERT_MSG_EQ_TOL(s.GetRate(a), 8.0, 1e-12, "A");
            NS_TEST_ASSERT_MSG_EQ_TOL(s.GetRate(b), 2.0, 1e-12, "B");
            NS_TEST_ASSERT_MSG_EQ_TOL(s.GetRate(c), 2.0, 1e-12, "C");
            NS_TEST_ASSERT_MSG_EQ(s.NeedsSolve(), false, "clean");
            RAPIDLLM_REQUIRE_EQ(s.Solve().size(), 0u, "nothing to do");
            // C leaves: link 1 (4, B alone) is still below link 0's share (10 / 2): B gets 4
            // and A the 6 left on link 0.
            s.RemoveFlow(c);
            s.Solve();
            NS_TEST_ASSERT_MSG_EQ_TOL(s.GetRate(b), 4.0, 1e-12, "B after C left");
            NS_TEST_ASSERT_MSG_EQ_TOL(s.GetRate(a), 6.0, 1e-12, "A after C left");
        }
        {
            const double c = 12;
            MaxMinSolver s = Solver({c, c, c});
            std::vector<uint32_t> f;
            f.push_back(s.AddFlow({0, 1, 2})); // long
            f.push_back(s.AddFlow({0}));
            f.push_back(s.AddFlow({1}));
            f.push_back(s.AddFlow({1}));
            f.push_back(s.AddFlow({2}));
            s.Solve();
            const double expected[] = {c / 3, 2 * c / 3, c / 3, c / 3, 2 * c / 3};
            for (int i = 0; i < 5; ++i)
            {
                NS_TEST_ASSERT_MSG_EQ_TOL(s.GetRate(f[i]), expected[i], 1e-12, "flow " << i);
            }
        }
    }
};

/**
 * \brief Weights. One link of 12: a weight-2 flow and a weight-1 flow get 4 per member (8 and
 * 4 in all). Parking lot with weights, links of 12: a long flow of weight 2 over links 0-2, a
 * flow of weight 3 on link 0 and one of weight 1 on link 1. Link 0 has the smallest unit share
 * (12 / 5 = 2.4 against 12 / 3 = 4 on link 1): the long flow and the link-0 flow get 2.4 per
 * member; link 1 then has 12 - 2 x 2.4 = 7.2 left for its weight-1 flow.
 */
class SolverWeightsTestCase : public TestCase
{
  public:
    SolverWeightsTestCase()
        : TestCase("a flow of weight w gets w unit shares and counts w times")
    {}

  private:
    void
    DoRun() override
    {
        {
            MaxMinSolver s = Solver({12});
            const uint32_t heavy = s.AddFlow({0}, 2);
            const uint32_t light = s.AddFlow({0}, 1);
            s.Solve();
            NS_TEST_ASSERT_MSG_EQ_TOL(s.GetRate(heavy), 4.0, 1e-12, "per member");
            NS_TEST_ASSERT_MSG_EQ_TOL(s.GetRate(light), 4.0, 1e-12, "unit share");
            NS_TEST_ASSERT_MSG_EQ(s.GetWeight(heavy), 2u, "weight kept");
        }
        {
            MaxMinSolver s = Solver({12, 12, 12});
            const uint32_t lng = s.AddFlow({0, 1, 2}, 2);
            const uint32_t on0 = s.AddFlow({0}, 3);
            const uint32_t on1 = s.AddFlow({1}, 1);
            s.Solve();
            NS_TEST_ASSERT_MSG_EQ_TOL(s.GetRate(lng), 2.4, 1e-12, "long, per member");
            NS_TEST_ASSERT_MSG_EQ_TOL(s.GetRate(on0), 2.4, 1e-12, "link-0 flow, per member");
            NS_TEST_ASSERT_MSG_EQ_TOL(s.GetRate(on1), 7.2, 1e-12, "link-1 flow takes the rest");
        }
        {
            // SetWeight: members join a flow after it was solved. Link 0 (12) carries A
            // (weight 1) and B; link 1 (30) carries C alone, another component.
            MaxMinSolver s = Solver({12, 30});
            const uint32_t a = s.AddFlow({0});
            const uint32_t b = s.AddFlow({0});
            const uint32_t c = s.AddFlow({1});
            s.Solve();
            NS_TEST_ASSERT_MSG_EQ_TOL(s.GetRate(b), 6.0, 1e-12, "B alone: half of link 0");
            s.SetWeight(b, 3); // B now stands for 3 flows: 4 members of 3 each
            NS_TEST_ASSERT_MSG_EQ(s.NeedsSolve(), true, "a weight change needs a solve");
            RAPIDLLM_REQUIRE_EQ(s.Solve().size(), 2u, "only link 0's flows recomputed");
            NS_TEST_ASSERT_MSG_EQ_TOL(s.GetRate(a), 3.0, 1e-12, "A: a quarter of link 0");
            NS_TEST_ASSERT_MSG_EQ_TOL(s.GetRate(b), 3.0, 1e-12, "each member of B");
            NS_TEST_ASSERT_MSG_EQ_TOL(s.GetRate(c), 30.0, 1e-12, "C untouched");
            s.SetWeight(b, 3);
            NS_TEST_ASSERT_MSG_EQ(s.NeedsSolve(), false, "the same weight changes nothing");
            s.SetWeight(b, 1);
            s.Solve();
            NS_TEST_ASSERT_MSG_EQ_TOL(s.GetRate(a), 6.0, 1e-12, "back to half");
            NS_TEST_ASSERT_MSG_EQ(s.GetWeight(b), 1u, "weight 1 again");
        }
    }
};

/**
 * \brief A class of w identical flows equals one flow of weight w: on random networks, every
 * member of a weighted flow gets the rate each of the w separate flows gets.
 */
class SolverClassEquivalenceTestCase : public TestCase
{
  public:
    SolverClassEquivalenceTestCase()
        : TestCase("one flow of weight w equals w identical flows")
    {}

  private:
    void
    DoRun() override
    {
        std::mt19937_64 rng(77);
        std::uniform_real_distribution<double> capacity(1, 100);
        std::uniform_int_distribution<uint32_t> link(0, 11);
        std::uniform_int_distribution<uint32_t> length(1, 4);
        std::uniform_int_distribution<uint32_t> weight(1, 4);
        int mismatches = 0;
        for (int trial = 0; trial < 50; ++trial)
        {
            std::vector<double> cap(12);
            for (auto& c : cap)
            {
                c = capacity(rng);
            }
            MaxMinSolver weighted = Solver(cap);
            MaxMinSolver expanded = Solver(cap);
            std::vector<std::pair<uint32_t, std::vector<uint32_t>>> classes; // handle, members
            for (int f = 0; f < 15; ++f)
            {
                std::set<uint32_t> path;
                const uint32_t n = length(rng);
                while (path.size() < n)
                {
                    path.insert(link(rng));
                }
                const std::vector<uint32_t> links(path.begin(), path.end());
                const uint32_t w = weight(rng);
                std::vector<uint32_t> members;
                for (uint32_t i = 0; i < w; ++i)
                {
                    members.push_back(expanded.AddFlow(links));
                }
                classes.emplace_back(weighted.AddFlow(links, w), members);
            }
            weighted.Solve();
            expanded.Solve();
            for (const auto& [h, members] : classes)
            {
                for (uint32_t m : members)
                {
                    mismatches += Near(weighted.GetRate(h), expanded.GetRate(m)) ? 0 : 1;
                }
            }
        }
        NS_TEST_ASSERT_MSG_EQ(mismatches, 0, "members of a class equal the separate flows");
    }
};

/**
 * \brief Incremental against from scratch: random arrivals (weights 1-3, paths of 1 to 9
 * links, so some exceed the inline path storage), departures and capacity changes, a Solve()
 * after each batch. Every rate then equals the reference allocation of the flows present, the
 * allocation is feasible and every flow has a saturated link on which no flow gets more per
 * member; Solve() reports each recomputed flow with its previous rate.
 */
class SolverIncrementalTestCase : public TestCase
{
  public:
    SolverIncrementalTestCase()
        : TestCase("incremental solves equal from-scratch allocations")
    {}

  private:
    void
    DoRun() override
    {
        std::mt19937_64 rng(12345);
        const uint32_t links = 24;
        std::uniform_real_distribution<double> capacity(1e9, 50e9);
        std::uniform_int_distribution<uint32_t> link(0, links - 1);
        std::uniform_int_distribution<uint32_t> length(1, 9);
        std::uniform_int_distribution<uint32_t> weight(1, 3);
        std::uniform_int_distribution<int> coin(0, 99);
        std::vector<double> cap(links);
        for (auto& c : cap)
        {
            c = capacity(rng);
        }
        MaxMinSolver s = Solver(cap);
        std::map<uint32_t, RefFlow> present; // handle -> flow
        int checks = 0;
        int mismatches = 0;
        int infeasible = 0;
        int noBottleneck = 0;
        int wrongOld = 0;
        uint64_t departureOnlySolved = 0;
        uint64_t departureOnlyPresent = 0;
        for (int batch = 0; batch < 400; ++batch)
        {
            std::map<uint32_t, double> before;
            for (const auto& [h, f] : present)
            {
                before[h] = s.GetRate(h);
            }
            const int kind = coin(rng);
            bool arrivals = false;
            if (kind < 45 || present.size() < 5)
            {
                arrivals = true;
                const int n = 1 + coin(rng) % 6;
                for (int i = 0; i < n; ++i)
                {
                    std::set<uint32_t> path;
                    const uint32_t len = length(rng);
                    while (path.size() < len)
                    {
                        path.insert(link(rng));
                    }
                    RefFlow f;
                    f.links.assign(path.begin(), path.end());
                    std::shuffle(f.links.begin(), f.links.end(), rng);
                    f.weight = weight(rng);
                    const uint32_t h = s.AddFlow(f.links, f.weight);
                    NS_TEST_ASSERT_MSG_EQ(present.count(h), 0u, "fresh handle");
                    present[h] = f;
                    before[h] = 0;
                }
            }
            else if (kind < 92)
            {
                const int n = 1 + coin(rng) % 4;
                for (int i = 0; i < n && !present.empty(); ++i)
                {
                    auto it = present.begin();
                    std::advance(it, coin(rng) % present.size());
                    s.RemoveFlow(it->first);
                    before.erase(it->first);
                    present.erase(it);
                }
            }
            else
            {
                arrivals = true; // a capacity change recomputes in full, like arrivals
                const uint32_t l = link(rng);
                cap[l] = capacity(rng);
                s.SetCapacity(l, cap[l]);
            }
            const auto& changes = s.Solve();
            if (!arrivals)
            {
                departureOnlySolved += changes.size();
                departureOnlyPresent += present.size();
            }
            for (const auto& c : changes)
            {
                wrongOld += c.oldRate == before[c.flow] ? 0 : 1;
            }
            // Compare with the reference.
            std::vector<RefFlow> flows;
            std::vector<uint32_t> handles;
            for (const auto& [h, f] : present)
            {
                flows.push_back(f);
                handles.push_back(h);
            }
            const std::vector<double> ref = Reference(flows, cap);
            std::vector<double> load(links, 0);
            std::vector<double> maxOn(links, 0);
            for (std::size_t i = 0; i < flows.size(); ++i)
            {
                const double r = s.GetRate(handles[i]);
                ++checks;
                mismatches += Near(r, ref[i]) ? 0 : 1;
                for (uint32_t l : flows[i].links)
                {
                    load[l] += r * flows[i].weight;
                    maxOn[l] = std::max(maxOn[l], r);
                }
            }
            for (uint32_t l = 0; l < links; ++l)
            {
                infeasible += load[l] <= cap[l] * (1 + 1e-9) ? 0 : 1;
            }
            for (std::size_t i = 0; i < flows.size(); ++i)
            {
                const double r = s.GetRate(handles[i]);
                bool found = false;
                for (uint32_t l : flows[i].links)
                {
                    found = found || (load[l] >= cap[l] * (1 - 1e-9) && r >= maxOn[l] * (1 - 1e-9));
                }
                noBottleneck += found ? 0 : 1;
            }
            RAPIDLLM_REQUIRE_EQ(s.GetFlowCount(), present.size(), "flow count");
        }
        NS_TEST_ASSERT_MSG_GT(checks, 5000, "enough rates checked");
        NS_TEST_ASSERT_MSG_EQ(mismatches, 0, "incremental rates equal the reference");
        NS_TEST_ASSERT_MSG_EQ(infeasible, 0, "no link over capacity");
        NS_TEST_ASSERT_MSG_EQ(noBottleneck, 0, "every flow has a bottleneck");
        NS_TEST_ASSERT_MSG_EQ(wrongOld, 0, "Solve reports the rates before");
        NS_TEST_ASSERT_MSG_LT(departureOnlySolved,
                              departureOnlyPresent,
                              "departures alone recompute less than everything");
    }
};

/**
 * \brief What an update recomputes. Disjoint components: a flow arriving on an unrelated link
 * recomputes itself only. Frozen flows: ten flows of rate 1 (each limited by a link of its own)
 * and two fast flows share a link of 100 (45 each); when a fast flow leaves, only the other
 * fast flow is recomputed (to 90) and the slow ones keep their rates exactly; an arrival then
 * recomputes the whole component.
 */
class SolverScopeTestCase : public TestCase
{
  public:
    SolverScopeTestCase()
        : TestCase("solves are confined to the component and skip frozen flows")
    {}

  private:
    void
    DoRun() override
    {
        {
            MaxMinSolver s = Solver({10, 10});
            for (int i = 0; i < 50; ++i)
            {
                s.AddFlow({0});
            }
            RAPIDLLM_REQUIRE_EQ(s.Solve().size(), 50u, "first component");
            const uint32_t other = s.AddFlow({1});
            const auto& changes = s.Solve();
            RAPIDLLM_REQUIRE_EQ(changes.size(), 1u, "only the new flow");
            NS_TEST_ASSERT_MSG_EQ(changes[0].flow, other, "the new flow");
            NS_TEST_ASSERT_MSG_EQ(s.GetSolveCount(), 2u, "two solves");
            NS_TEST_ASSERT_MSG_EQ(s.GetSolvedFlowCount(), 51u, "51 flows recomputed");
        }
        {
            std::vector<double> cap(11, 1.0);
            cap[10] = 100; // the shared link
            MaxMinSolver s = Solver(cap);
            std::vector<uint32_t> slow;
            for (uint32_t i = 0; i < 10; ++i)
            {
                slow.push_back(s.AddFlow({10, i}));
            }
            const uint32_t fast1 = s.AddFlow({10});
            const uint32_t fast2 = s.AddFlow({10});
            s.Solve();
            NS_TEST_ASSERT_MSG_EQ_TOL(s.GetRate(fast1), 45.0, 1e-12, "fast");
            NS_TEST_ASSERT_MSG_EQ_TOL(s.GetRate(slow[0]), 1.0, 1e-12, "slow");
            s.RemoveFlow(fast1);
            const auto& changes = s.Solve();
            RAPIDLLM_REQUIRE_EQ(changes.size(), 1u, "slow flows frozen");
            NS_TEST_ASSERT_MSG_EQ(changes[0].flow, fast2, "the other fast flow");
            NS_TEST_ASSERT_MSG_EQ(changes[0].oldRate, 45.0, "its rate before");
            NS_TEST_ASSERT_MSG_EQ_TOL(s.GetRate(fast2), 90.0, 1e-12, "takes what is left");
            NS_TEST_ASSERT_MSG_EQ(s.GetRate(slow[3]), 1.0, "frozen rate kept exactly");
            const uint32_t again = s.AddFlow({10});
            NS_TEST_ASSERT_MSG_EQ(again, fast1, "the last freed handle is reused first");
            RAPIDLLM_REQUIRE_EQ(s.Solve().size(), 12u, "an arrival recomputes the component");
            NS_TEST_ASSERT_MSG_EQ_TOL(s.GetRate(again), 45.0, 1e-12, "shares again");
        }
    }
};

/**
 * \brief Capacities: halving a link's capacity halves its flows' rates at the next Solve; a
 * capacity of 0 stalls them at rate 0; Invalidate() recomputes every flow.
 */
class SolverCapacityTestCase : public TestCase
{
  public:
    SolverCapacityTestCase()
        : TestCase("capacity changes reach the flows at the next solve")
    {}

  private:
    void
    DoRun() override
    {
        MaxMinSolver s = Solver({8, 8});
        const uint32_t a = s.AddFlow({0});
        const uint32_t b = s.AddFlow({0, 1});
        const uint32_t c = s.AddFlow({1});
        s.Solve();
        NS_TEST_ASSERT_MSG_EQ_TOL(s.GetRate(a), 4.0, 1e-12, "a");
        s.SetCapacity(0, 4);
        NS_TEST_ASSERT_MSG_EQ(s.NeedsSolve(), true, "dirty");
        s.Solve();
        NS_TEST_ASSERT_MSG_EQ_TOL(s.GetRate(a), 2.0, 1e-12, "a halved");
        NS_TEST_ASSERT_MSG_EQ_TOL(s.GetRate(b), 2.0, 1e-12, "b halved");
        NS_TEST_ASSERT_MSG_EQ_TOL(s.GetRate(c), 6.0, 1e-12, "c takes the rest of link 1");
        s.SetCapacity(0, 0);
        s.Solve();
        NS_TEST_ASSERT_MSG_EQ(s.GetRate(a), 0.0, "stalled");
        NS_TEST_ASSERT_MSG_EQ(s.GetRate(b), 0.0, "stalled");
        NS_TEST_ASSERT_MSG_EQ_TOL(s.GetRate(c), 8.0, 1e-12, "c alone on link 1");
        s.SetCapacity(0, 0); // unchanged: nothing to do
        NS_TEST_ASSERT_MSG_EQ(s.NeedsSolve(), false, "no change, no work");
        s.Invalidate();
        RAPIDLLM_REQUIRE_EQ(s.Solve().size(), 3u, "Invalidate recomputes every flow");
        NS_TEST_ASSERT_MSG_EQ(s.GetCapacity(1), 8.0, "capacity kept");
    }
};

/** \brief The max-min solver's test suite. */
class MaxMinSolverTestSuite : public TestSuite
{
  public:
    MaxMinSolverTestSuite()
        : TestSuite("rapid-llm-max-min-solver", UNIT)
    {
        AddTestCase(new SolverHandSolvedTestCase, TestCase::QUICK);
        AddTestCase(new SolverWeightsTestCase, TestCase::QUICK);
        AddTestCase(new SolverClassEquivalenceTestCase, TestCase::QUICK);
        AddTestCase(new SolverIncrementalTestCase, TestCase::QUICK);
        AddTestCase(new SolverScopeTestCase, TestCase::QUICK);
        AddTestCase(new SolverCapacityTestCase, TestCase::QUICK);
    }
};

static MaxMinSolverTestSuite g_maxMinSolverTestSuite;
