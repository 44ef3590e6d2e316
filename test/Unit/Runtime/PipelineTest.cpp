//===- PipelineTest.cpp - P³'s pipeline: its order and its staleness
//-------===//

#include "Pipeline.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <utility>
#include <vector>

using namespace gnnrt;

namespace {

/// Each batch runs `segments` segments: a yield between two.
std::function<void(int64_t, int)> segmentsJob(int segments,
                                              std::vector<int> *done) {
  return [segments, done](int64_t batch, int) {
    for (int s = 1; s < segments; ++s)
      PipelineScheduler::yield();
    (*done)[batch] = 1;
  };
}

} // namespace

// Three segments a batch (P³'s two syncs): round r runs MF(r), then the
// middle segment of r - 1 and the last of r - 2: 2F2B's static order, three
// batches in flight, drained at the end.
TEST(Pipeline, TwoForwardTwoBackwardOrder) {
  std::vector<int> done(6, 0);
  PipelineScheduler scheduler(3, 1);
  scheduler.keepTrace();
  for (int b = 0; b < 6; ++b)
    scheduler.submit(segmentsJob(3, &done));
  scheduler.drain();
  std::vector<std::pair<int64_t, int>> got;
  for (const PipelineScheduler::Segment &s : scheduler.trace())
    got.push_back({s.batch, s.segment});
  const std::vector<std::pair<int64_t, int>> want = {
      {0, 0},                  // round 0
      {1, 0}, {0, 1},          // round 1
      {2, 0}, {1, 1}, {0, 2},  // round 2
      {3, 0}, {2, 1}, {1, 2},  // round 3
      {4, 0}, {3, 1}, {2, 2},  // round 4
      {5, 0}, {4, 1}, {3, 2},  // round 5
      {5, 1}, {4, 2}, {5, 2}}; // drained
  EXPECT_EQ(got, want);
  EXPECT_EQ(scheduler.mostInFlight(), 3);
  EXPECT_EQ(scheduler.segments(), 18);
  EXPECT_EQ(done, std::vector<int>(6, 1));
}

// More segments than lanes: a round without a new batch makes room, so no
// more than three batches are ever in flight, and each batch's segments run
// in order, one lane at a time.
TEST(Pipeline, NeverMoreBatchesInFlightThanLanes) {
  const int batches = 9, segments = 5;
  std::atomic<int> active{0}, inFlight{0}, mostActive{0}, mostInFlight{0};
  std::vector<int> lastSegment(batches, -1);
  PipelineScheduler scheduler(3, 1);
  for (int b = 0; b < batches; ++b)
    scheduler.submit([&](int64_t batch, int lane) {
      EXPECT_TRUE(PipelineScheduler::onLane());
      EXPECT_LT(lane, 3);
      mostInFlight = std::max(mostInFlight.load(), ++inFlight);
      for (int s = 0; s < segments; ++s) {
        mostActive = std::max(mostActive.load(), ++active);
        EXPECT_EQ(lastSegment[batch], s - 1);
        lastSegment[batch] = s;
        --active;
        if (s + 1 < segments)
          PipelineScheduler::yield();
      }
      --inFlight;
    });
  scheduler.drain();
  EXPECT_EQ(mostActive.load(), 1);
  EXPECT_EQ(mostInFlight.load(), 3);
  EXPECT_EQ(scheduler.mostInFlight(), 3);
  EXPECT_EQ(lastSegment, std::vector<int>(batches, segments - 1));
  EXPECT_FALSE(PipelineScheduler::onLane());
  PipelineScheduler::yield(); // not a lane: returns at once
}

// The update rule on a quadratic toy, f(w) = 1/2 sum_i a_i (w_i - b_i)^2:
// the pipeline with the weight stash (each batch reads its version in its
// first segment and updates the two parameters in two later segments) gives
// delayed SGD, w_{t+1} = w_t - lr grad f(w_{t-3}), exactly; plain SGD
// differs.
TEST(Pipeline, StashedWeightsGiveDelayedSGD) {
  const std::vector<float> a = {1.0f, 3.0f, 0.5f, 2.0f},
                           b = {0.3f, -1.2f, 2.0f, 0.7f};
  const float lr = 0.1f;
  const int steps = 24;
  // Parameter 0 is w[0, 2), parameter 1 w[2, 4).
  auto gradient = [&](const std::vector<float> &w) {
    std::vector<float> g(4);
    for (int i = 0; i < 4; ++i)
      g[i] = a[i] * (w[i] - b[i]);
    return g;
  };
  auto reference = [&](int staleness) {
    std::vector<std::vector<float>> w = {{1.0f, 1.0f, 1.0f, 1.0f}};
    for (int t = 0; t < steps; ++t) {
      const std::vector<float> g = gradient(w[std::max(t - staleness, 0)]);
      std::vector<float> next = w.back();
      for (int i = 0; i < 4; ++i)
        next[i] = next[i] - lr * g[i];
      w.push_back(next);
    }
    return w.back();
  };

  std::vector<float> master = {1.0f, 1.0f, 1.0f, 1.0f};
  WeightStash stash(3, {{1.0f, 1.0f}, {1.0f, 1.0f}});
  std::vector<std::vector<float>> laneWeights(3, std::vector<float>(4));
  {
    PipelineScheduler scheduler(3, 1);
    for (int t = 0; t < steps; ++t)
      scheduler.submit([&](int64_t batch, int lane) {
        std::vector<float> &w = laneWeights[lane];
        const int64_t version = stash.versionFor(batch);
        for (size_t p = 0; p < 2; ++p) {
          const std::vector<float> &v = stash.param(version, p);
          std::copy(v.begin(), v.end(), w.begin() + 2 * p);
        }
        stash.started(batch);
        const std::vector<float> g = gradient(w);
        PipelineScheduler::yield();
        for (int i = 2; i < 4; ++i)
          master[i] = master[i] - lr * g[i];
        stash.record(batch, 1, master.data() + 2, 2);
        PipelineScheduler::yield();
        for (int i = 0; i < 2; ++i)
          master[i] = master[i] - lr * g[i];
        stash.record(batch, 0, master.data(), 2);
        stash.finish(batch);
      });
  }
  EXPECT_EQ(master, reference(3));
  EXPECT_NE(master, reference(0));
  EXPECT_LE(stash.mostHeld(), 4u);
}

// A batch that updates only some parameters: the next version takes the
// others from the one before.
TEST(Pipeline, StashCarriesParametersABatchLeftAlone) {
  WeightStash stash(1, {{1.0f}, {2.0f}});
  const float three = 3.0f;
  stash.started(0);
  stash.record(0, 1, &three, 1);
  stash.finish(0);
  EXPECT_EQ(stash.param(1, 0), std::vector<float>{1.0f});
  EXPECT_EQ(stash.param(1, 1), std::vector<float>{3.0f});
  EXPECT_EQ(stash.versionFor(0), 0);
  EXPECT_EQ(stash.versionFor(2), 1);
  stash.started(1); // batch 2 reads version 1: version 0 goes
  EXPECT_EQ(stash.held(), 1u);
}

TEST(PipelineDeathTest, ADroppedVersionStopsTheRun) {
  WeightStash stash(1, {{1.0f}});
  stash.started(0);
  stash.finish(0);
  stash.started(1);
  EXPECT_DEATH(stash.param(0, 0), "no complete version 0");
  EXPECT_DEATH(stash.param(2, 0), "no complete version 2");
}
