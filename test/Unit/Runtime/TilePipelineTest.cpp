//===- TilePipelineTest.cpp - NeuGraph's sub-chunk pipeline ---------------===//
//
// The prefetch thread reads sub-chunk j + 1 while sub-chunk j computes (a
// read that waits for a compute to have started finishes); each compute
// follows its read, in the order given; a failed read stops the computes
// after it and names the failure; a tile's plan is pipelined while it is
// profiled, then one unpipelined baseline, then whichever was faster; the
// profiled order keeps the pinned first and last sub-chunks and is a
// permutation.
//
//===----------------------------------------------------------------------===//

#include "TilePipeline.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <numeric>
#include <thread>

using namespace gnnrt;

TEST(TilePipeline, ReadsOverlapComputesInOrder) {
  TilePipeline pipe;
  std::atomic<int> computing{-1};
  std::vector<int> events; // +j read done (seen by compute), -j-1 computed
  std::vector<std::atomic<bool>> read(4);
  const std::vector<unsigned> order{0, 2, 1, 3};
  std::string error;
  ASSERT_TRUE(pipe.run(
      {0, 0, 1, 0}, order,
      [&](unsigned j, std::string &message) {
        // The second read waits until the first compute has started: it
        // finishes only if reads run beside computes.
        if (j == 2) {
          const auto t0 = std::chrono::steady_clock::now();
          while (computing.load() != 0)
            if (std::chrono::steady_clock::now() - t0 >
                std::chrono::seconds(10)) {
              message = "read 2 never saw compute 0 start";
              return false;
            }
        }
        read[j] = true;
        return true;
      },
      [&](unsigned j) {
        EXPECT_TRUE(read[j]) << "compute " << j << " before its read";
        computing = static_cast<int>(j);
        if (j == 0) // hold compute 0 until read 2 is done
          while (!read[2])
            std::this_thread::yield();
        events.push_back(static_cast<int>(j));
      },
      error))
      << error;
  EXPECT_EQ(events, (std::vector<int>{0, 2, 1, 3}));
  EXPECT_EQ(pipe.tiles, 1);
}

TEST(TilePipeline, AFailedReadStopsTheComputesAfterIt) {
  TilePipeline pipe;
  std::vector<unsigned> computed;
  std::string error;
  EXPECT_FALSE(pipe.run(
      {0, 0, 1, 0}, {0, 1, 2, 3},
      [&](unsigned j, std::string &message) {
        if (j == 2)
          message = "disk on fire";
        return j != 2;
      },
      [&](unsigned j) { computed.push_back(j); }, error));
  EXPECT_EQ(error, "disk on fire");
  EXPECT_EQ(computed, (std::vector<unsigned>{0, 1}));
  // The thread is free again: the next tile runs.
  computed.clear();
  EXPECT_TRUE(pipe.run(
      {0, 1, 1, 0}, {0, 1}, [](unsigned, std::string &) { return true; },
      [&](unsigned j) { computed.push_back(j); }, error));
  EXPECT_EQ(computed, (std::vector<unsigned>{0, 1}));
}

TEST(TilePipeline, PlansProfileThenMeasureABaselineThenChoose) {
  TilePipeline pipe;
  auto visit = [&](const TilePipeline::Key &key) {
    std::string error;
    ASSERT_TRUE(pipe.run(
        key, pipe.orderFor(key, 5, true, true),
        [](unsigned j, std::string &) {
          // Heterogeneous: even sub-chunks read long, odd ones compute long.
          std::this_thread::sleep_for(std::chrono::milliseconds(j % 2 ? 1 : 6));
          return true;
        },
        [](unsigned j) {
          std::this_thread::sleep_for(std::chrono::milliseconds(j % 2 ? 6 : 1));
        },
        error));
  };
  const TilePipeline::Key slow{1, 0, 1, 0}, fast{1, 1, 1, 0};
  for (const TilePipeline::Key &key : {slow, fast}) {
    for (int v = 0; v < TilePipeline::kProfiledVisits; ++v) {
      EXPECT_EQ(pipe.planFor(key), TilePipeline::Plan::Pipelined);
      std::vector<unsigned> order = pipe.orderFor(key, 5, true, true);
      EXPECT_TRUE(std::is_sorted(order.begin(), order.end()))
          << "in order while profiled";
      visit(key);
    }
    EXPECT_EQ(pipe.planFor(key), TilePipeline::Plan::Baseline);
  }
  pipe.recordBaseline(slow, 1e-6); // unpipelined was faster
  pipe.recordBaseline(fast, 10.0); // pipelined was faster
  EXPECT_EQ(pipe.planFor(slow), TilePipeline::Plan::Unpipelined);
  EXPECT_EQ(pipe.planFor(fast), TilePipeline::Plan::Pipelined);
  EXPECT_EQ(pipe.offTiles, 1);
  // The fixed order: sub-chunk 0 first, 4 last, a permutation between.
  std::vector<unsigned> order = pipe.orderFor(fast, 5, true, true);
  ASSERT_EQ(order.size(), 5u);
  EXPECT_EQ(order.front(), 0u);
  EXPECT_EQ(order.back(), 4u);
  std::vector<unsigned> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, (std::vector<unsigned>{0, 1, 2, 3, 4}));
  EXPECT_EQ(pipe.orderFor(fast, 5, true, true), order) << "fixed";
}
