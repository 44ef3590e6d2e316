//===- LayerPlanTest.cpp - per-layer partitioning's DP --------------------===//
//
// Brute force over every chain of layouts is the oracle: on random levels
// the DP's chain costs what the cheapest executable chain costs, and its
// reported bytes and redundant work are the chain's. The limits behave:
// free communication splits every level by rows, free compute replicates
// every level, a cheap first-layer sync picks columns, and a chain never
// replicates after a split level (the lowering has no such re-layout).
//
//===----------------------------------------------------------------------===//

#include "gnn/Analysis/LayerPlan.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

using namespace mlir::gnn;

namespace {

LayerPlanInput randomInput(std::mt19937 &rng, unsigned levels) {
  std::uniform_real_distribution<double> u(0.0, 10.0);
  LayerPlanInput in;
  for (unsigned j = 0; j < levels; ++j)
    in.levels.push_back({u(rng) * 1e6, u(rng) * 1e9,
                         rng() % 4 == 0
                             ? std::numeric_limits<double>::infinity()
                             : u(rng) * 1e6});
  if (rng() % 3 != 0)
    in.columnsBytes = (u(rng) - 2) * 1e6; // negative too: a shard's gradient

  in.fixedBytes = u(rng) * 1e3;
  in.bytesPerSecond = 1e9 * (0.1 + u(rng));
  in.flopsPerSecond = 1e10 * (0.1 + u(rng));
  return in;
}

/// The cheapest chain's cost over all 4^n chains.
double bruteForce(const LayerPlanInput &in) {
  const size_t n = in.levels.size();
  double best = std::numeric_limits<double>::infinity();
  std::vector<LevelLayout> chain(n);
  size_t count = 1;
  for (size_t j = 0; j < n; ++j)
    count *= 4;
  for (size_t code = 0; code < count; ++code) {
    size_t c = code;
    for (size_t j = 0; j < n; ++j, c /= 4)
      chain[j] = static_cast<LevelLayout>(c % 4);
    best = std::min(best, chainSeconds(in, chain));
  }
  return best;
}

TEST(LayerPlan, EqualsBruteForce) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 500; ++trial) {
    LayerPlanInput in = randomInput(rng, 1 + trial % 7);
    LayerPlan plan = planLayers(in);
    const double chain = chainSeconds(in, plan.layouts);
    EXPECT_NEAR(chain, bruteForce(in), 1e-12 * (1 + chain)) << trial;
    EXPECT_NEAR(plan.seconds, chain + in.fixedBytes / in.bytesPerSecond,
                1e-12 * (1 + chain));
    // The reported bytes and work are the chain's.
    double bytes = in.fixedBytes, work = 0;
    for (size_t j = 0; j < in.levels.size(); ++j) {
      if (plan.layouts[j] == LevelLayout::Rows)
        bytes += in.levels[j].rowsBytes;
      else if (plan.layouts[j] == LevelLayout::Columns)
        bytes += *in.columnsBytes;
      else
        work += in.levels[j].work;
      if (plan.layouts[j] == LevelLayout::ReplicatedSuffix &&
          plan.layouts[j - 1] == LevelLayout::Rows)
        bytes += in.levels[j].gatherBytes;
    }
    EXPECT_DOUBLE_EQ(plan.bytes, bytes);
    EXPECT_DOUBLE_EQ(plan.redundantWork, work);
  }
}

TEST(LayerPlan, ReplicatesAPrefixAndASuffix) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 200; ++trial) {
    LayerPlan plan = planLayers(randomInput(rng, 1 + trial % 6));
    // A prefix of Replicated, then split levels, then a suffix entered
    // from rows: never replicated after split, never split after a suffix.
    bool split = false, suffix = false;
    for (size_t j = 0; j < plan.layouts.size(); ++j) {
      LevelLayout l = plan.layouts[j];
      if (l == LevelLayout::Replicated)
        EXPECT_FALSE(split || suffix) << trial;
      else if (l == LevelLayout::ReplicatedSuffix)
        EXPECT_TRUE(j > 0 &&
                    (suffix || plan.layouts[j - 1] == LevelLayout::Rows))
            << trial;
      else
        EXPECT_FALSE(suffix) << trial;
      split |= l == LevelLayout::Rows || l == LevelLayout::Columns;
      suffix |= l == LevelLayout::ReplicatedSuffix;
    }
    for (size_t j = 1; j < plan.layouts.size(); ++j)
      EXPECT_NE(plan.layouts[j], LevelLayout::Columns);
    EXPECT_EQ(plan.columns, plan.layouts[0] == LevelLayout::Columns);
    if (plan.replicatedFrom) {
      EXPECT_EQ(plan.layouts[plan.replicatedFrom],
                LevelLayout::ReplicatedSuffix);
    }
  }
}

TEST(LayerPlan, SuffixWhenItsGatherIsCheap) {
  // Three split levels of 4 MB each, replicated work dear at level 0 and
  // cheap after: entering a suffix at level 1 for 1 MB beats splitting.
  LayerPlanInput in;
  in.levels = {{4e6, 1e12, 1e6}, {4e6, 1e3, 1e6}, {4e6, 1e3, 1e6}};
  in.bytesPerSecond = 1e9;
  in.flopsPerSecond = 1e10;
  LayerPlan plan = planLayers(in);
  EXPECT_EQ(plan.replicated, 0);
  EXPECT_EQ(plan.replicatedFrom, 1);
  EXPECT_EQ(plan.bytes, 4e6 + 1e6);
  // Without a lowered suffix (gatherBytes infinite) the levels split.
  for (LevelCosts &c : in.levels)
    c.gatherBytes = std::numeric_limits<double>::infinity();
  LayerPlan rows = planLayers(in);
  EXPECT_EQ(rows.replicatedFrom, 0);
  EXPECT_EQ(rows.bytes, 12e6);
}

TEST(LayerPlan, Limits) {
  LayerPlanInput in;
  in.levels = {{4e6, 1e9}, {2e6, 5e8}, {1e6, 2e9}};
  in.columnsBytes = 3e6;
  // Communication free: every level by rows (columns costs as much: 0).
  in.bytesPerSecond = std::numeric_limits<double>::infinity();
  in.flopsPerSecond = 1e10;
  LayerPlan rows = planLayers(in);
  EXPECT_EQ(rows.replicated, 0);
  EXPECT_FALSE(rows.columns);
  // Compute free: every level replicated, no bytes but the fixed ones.
  in.bytesPerSecond = 1e9;
  in.flopsPerSecond = std::numeric_limits<double>::infinity();
  LayerPlan all = planLayers(in);
  EXPECT_EQ(all.replicated, 3);
  EXPECT_EQ(all.bytes, 0);
  // Level 0's work dear, its sync by columns cheap: columns, then rows.
  in.flopsPerSecond = 1e6;
  in.columnsBytes = 1e5;
  LayerPlan cols = planLayers(in);
  EXPECT_TRUE(cols.columns);
  EXPECT_EQ(cols.replicated, 0);
  EXPECT_EQ(cols.bytes, 1e5 + 2e6 + 1e6);
  // Refused columns are never chosen.
  in.columnsBytes.reset();
  EXPECT_FALSE(planLayers(in).columns);
  // A cheap first level replicated, the dear ones split: a prefix of one.
  in.levels = {{4e6, 1e3}, {2e6, 5e12}, {1e6, 2e12}};
  in.flopsPerSecond = 1e10;
  LayerPlan prefix = planLayers(in);
  EXPECT_EQ(prefix.replicated, 1);
  EXPECT_EQ(prefix.layouts[1], LevelLayout::Rows);
}

TEST(LayerPlan, NoSuffixAfterColumns) {
  // Columns is cheap at level 0, a suffix cheap from level 2: the two do
  // not combine (the feature-partitioned program has no suffix), so the
  // plan is columns then rows, or rows then the suffix, whichever is
  // cheaper, never both.
  LayerPlanInput in;
  in.levels = {{10, 1e9, std::numeric_limits<double>::infinity()},
               {10, 1e9, 10},
               {10, 1, 0}};
  in.columnsBytes = 5;
  in.bytesPerSecond = 1;
  in.flopsPerSecond = 1;
  LayerPlan plan = planLayers(in);
  EXPECT_FALSE(plan.columns && plan.replicatedFrom);
  EXPECT_EQ(plan.replicatedFrom, 2); // rows, rows, suffix: 20 + 1
  EXPECT_DOUBLE_EQ(plan.seconds, 21);
  EXPECT_EQ(chainSeconds(in, {LevelLayout::Columns, LevelLayout::Rows,
                              LevelLayout::ReplicatedSuffix}),
            std::numeric_limits<double>::infinity());
  // A negative columns cost is a cost, not a refusal.
  in.columnsBytes = -100;
  EXPECT_TRUE(planLayers(in).columns);
}

TEST(LayerPlan, TiesSplitByRows) {
  LayerPlanInput in;
  in.levels = {{1e6, 1e6}, {1e6, 1e6}};
  in.columnsBytes = 1e6;
  in.bytesPerSecond = 1;
  in.flopsPerSecond = 1;
  LayerPlan plan = planLayers(in);
  EXPECT_EQ(plan.replicated, 0);
  EXPECT_FALSE(plan.columns);
}

} // namespace
