//===- RowSplitTest.cpp - row partitioning's splits
//------------------------===//
//
// Equal-vertex and equal-edge splits, ROC's features (the digest's worked
// example) and its online model: fitted to times a known linear cost makes,
// it recovers the cost and splits it evenly.
//
//===----------------------------------------------------------------------===//

#include "RowSplit.h"

#include <gtest/gtest.h>

#include <random>

using namespace gnnrt;

namespace {

void expectSplit(const std::vector<int64_t> &p, int64_t V, int parts) {
  ASSERT_EQ(p.size(), static_cast<size_t>(parts + 1));
  EXPECT_EQ(p.front(), 0);
  EXPECT_EQ(p.back(), V);
  for (int r = 0; r < parts; ++r)
    EXPECT_LT(p[r], p[r + 1]) << "part " << r << " is empty";
}

TEST(RowSplit, EqualVertices) {
  EXPECT_EQ(equalVertexSplit(10, 4), (std::vector<int64_t>{0, 2, 5, 7, 10}));
  expectSplit(equalVertexSplit(5, 5), 5, 5);
}

TEST(RowSplit, EqualEdgesBalanceInEdges) {
  // Vertex 0 has 90 in-edges, the 9 others one each.
  std::vector<int64_t> indptr{0, 90};
  for (int v = 1; v < 10; ++v)
    indptr.push_back(indptr.back() + 1);
  std::vector<int64_t> p = equalEdgeSplit(indptr, 2);
  expectSplit(p, 10, 2);
  EXPECT_EQ(p[1], 1); // the heavy vertex alone
  // More parts than the edges allow still gives every part a vertex.
  expectSplit(equalEdgeSplit(indptr, 10), 10, 10);
}

TEST(RowSplit, RocFeaturesOfThePapersExample) {
  // DIGEST-neugraph-roc.md: v1 with neighbours {3, 4, 6, 8}, d_in = 602, a
  // warp of 32: x = (1, 4, 3, 3, 76).
  const int32_t n[] = {3, 4, 6, 8};
  EXPECT_EQ(rocFeatures(n, 4, 602, 32), (RocFeatures{1, 4, 3, 3, 76}));
  EXPECT_EQ(rocFeatures(n, 0, 602, 32), (RocFeatures{1, 0, 0, 0, 0}));
}

TEST(RowSplit, RocLearnsACostAndBalancesIt) {
  // 400 vertices with random degrees; time = 2 us per vertex + 0.5 us per
  // neighbour (x1, x2).
  std::mt19937 rng(7);
  std::vector<RocFeatures> x(400);
  for (auto &f : x) {
    const double deg = static_cast<double>(rng() % 50);
    f = {1, deg, deg / 3, deg / 3, deg};
  }
  // Skewed: the last quarter is ten times as dense.
  for (int v = 300; v < 400; ++v)
    for (int i = 1; i < kRocFeatures; ++i)
      x[v][i] *= 10;
  RocPartitioner roc(x);
  auto truth = [&](int64_t lo, int64_t hi) {
    const RocFeatures s = roc.features(lo, hi);
    return 2e-6 * s[0] + 0.5e-6 * s[1];
  };
  EXPECT_FALSE(roc.fit());
  // Measurements of a few splits, as the epochs would give them.
  for (const std::vector<int64_t> &p :
       {equalVertexSplit(400, 4), std::vector<int64_t>{0, 50, 200, 350, 400},
        std::vector<int64_t>{0, 10, 320, 380, 400}})
    for (int r = 0; r < 4; ++r)
      roc.observe(p[r], p[r + 1], truth(p[r], p[r + 1]));
  ASSERT_TRUE(roc.fit());
  for (int i = 0; i < kRocFeatures; ++i)
    EXPECT_GE(roc.weights()[i], 0.0);
  EXPECT_NEAR(roc.predict(0, 400), truth(0, 400), 1e-3 * truth(0, 400));
  std::vector<int64_t> p = roc.split(4);
  expectSplit(p, 400, 4);
  double most = 0, least = 1e9;
  for (int r = 0; r < 4; ++r) {
    most = std::max(most, truth(p[r], p[r + 1]));
    least = std::min(least, truth(p[r], p[r + 1]));
  }
  // Balanced within one vertex's cost, and better than equal vertices.
  EXPECT_LT(most - least, 2 * (2e-6 + 0.5e-6 * 490));
  EXPECT_LT(roc.predictedMax(p), roc.predictedMax(equalVertexSplit(400, 4)));
}

} // namespace
