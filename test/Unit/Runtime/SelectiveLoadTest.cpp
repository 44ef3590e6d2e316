//===- SelectiveLoadTest.cpp - NeuGraph's selective loading ---------------===//
//
// The rows a tile reads (tileInputRows) equal a brute force over the edge
// list on both sides, also through the CSR's edge ids; NeuGraph's rule
// filters iff θ < T_copy / (T_copy + T_trans) (0.5 at equal throughputs);
// gnnrtFetchChunkFor reads exactly those rows of a chunk that is out (bit
// for bit at their places, the bytes counted and the rest counted as
// skipped), reads it whole with --selective-loads never or when the rule
// says so, leaves a resident chunk alone, and a partial chunk cannot be
// evicted but is read whole by gnnrtFetchChunk.
//
//===----------------------------------------------------------------------===//

#include "SelectiveLoad.h"
#include "Context.h"
#include "Device.h"
#include "RandomGraph.h"
#include "TempDir.h"
#include "gnnrt/GNNRuntime.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <random>
#include <set>

using namespace gnnrt;

namespace {

/// The rows of [inLo, inHi) that edges of rows [lo, hi) on `side` reach,
/// from the dataset's edge list.
std::set<int64_t> bruteForce(const Dataset &ds, int side, int64_t lo,
                             int64_t hi, int64_t inLo, int64_t inHi) {
  std::set<int64_t> rows;
  for (int64_t d = 0; d < ds.numVertices; ++d)
    for (int64_t e = ds.indptr[d]; e < ds.indptr[d + 1]; ++e) {
      const int64_t s = ds.indices[e];
      const int64_t row = side ? d : s, other = side ? s : d;
      if (row >= lo && row < hi && other >= inLo && other < inHi)
        rows.insert(other - inLo);
    }
  return rows;
}

std::set<int64_t> expand(const RowRuns &runs) {
  std::set<int64_t> rows;
  for (auto [a, b] : runs)
    for (int64_t r = a; r < b; ++r)
      rows.insert(r);
  return rows;
}

/// A context with a spill store in `dir` and the random graph `ds` bound.
std::unique_ptr<gnnrtContext> boundContext(const std::string &dir,
                                           const Dataset &ds) {
  auto ctx = std::make_unique<gnnrtContext>();
  std::string error;
  ctx->spill = SpillStore::open(dir, error);
  EXPECT_TRUE(ctx->spill) << error;
  ctx->ds = ds;
  EXPECT_TRUE(bindDataset(ctx.get(), error)) << error;
  return ctx;
}

} // namespace

TEST(SelectiveLoad, TileRowsEqualBruteForceOnBothSides) {
  std::mt19937 rng(3);
  for (bool skew : {false, true}) {
    const Dataset ds = randomDataset(2000, 9000, rng, skew);
    test::TempDir dir("gnnrt-selective-test");
    auto ctx = boundContext(dir.path, ds);
    DeviceGraph g = ctx->device->graph();
    DeviceGraph byEdgeIds = g; // the destinations through the CSR's ids
    byEdgeIds.index[3] = nullptr;
    std::vector<uint8_t> marks;
    RowRuns runs;
    constexpr int64_t K = 5;
    for (int side : {0, 1})
      for (int64_t k = 0; k < K; ++k)
        for (int64_t c = 0; c < K; ++c) {
          const int64_t lo = gnnrtChunkRowBound(2000, K, k),
                        hi = gnnrtChunkRowBound(2000, K, k + 1);
          const int64_t inLo = gnnrtChunkRowBound(2000, K, c),
                        inHi = gnnrtChunkRowBound(2000, K, c + 1);
          const std::set<int64_t> want =
              bruteForce(ds, side, lo, hi, inLo, inHi);
          for (const DeviceGraph *graph : {&g, &byEdgeIds}) {
            if (side == 1 && graph == &byEdgeIds)
              continue;
            int64_t rows = -1;
            ASSERT_TRUE(tileInputRows(*graph, side, lo, hi, inLo, inHi, marks,
                                      runs, rows));
            EXPECT_EQ(expand(runs), want)
                << "side " << side << " tile " << k << ", " << c;
            EXPECT_EQ(rows, static_cast<int64_t>(want.size()));
            for (size_t i = 1; i < runs.size(); ++i)
              EXPECT_LT(runs[i - 1].second, runs[i].first) << "maximal runs";
          }
        }
    DeviceGraph none = g;
    none.index[0] = nullptr;
    int64_t rows;
    EXPECT_FALSE(tileInputRows(none, 1, 0, 10, 0, 10, marks, runs, rows));
  }
}

TEST(SelectiveLoad, TheRuleIsNeuGraphs) {
  EXPECT_TRUE(shouldFilter(0.49, 1e9, 1e9));
  EXPECT_FALSE(shouldFilter(0.5, 1e9, 1e9)) << "0.5 at equal throughputs";
  EXPECT_TRUE(shouldFilter(0.24, 1e9, 3e9));
  EXPECT_FALSE(shouldFilter(0.25, 1e9, 3e9));
  EXPECT_FALSE(shouldFilter(0.0, 0.0, 1e9)) << "nothing measured";
}

TEST(SelectiveLoad, FetchChunkForReadsOnlyTheTilesRows) {
  std::mt19937 rng(11);
  constexpr int64_t V = 3000, kWidth = 24, K = 4;
  const Dataset ds = randomDataset(V, 5000, rng);
  test::TempDir dir("gnnrt-selective-test");
  auto ctx = boundContext(dir.path, ds);
  gnnrtMemRefF32 m;
  _mlir_ciface_gnnrtBufferChunks(&m, ctx.get(), 0, V * kWidth, V, K);
  float *p = m.aligned + m.offset;
  std::vector<float> want(V * kWidth);
  std::uniform_real_distribution<float> u(-1, 1);
  for (float &x : want)
    x = u(rng);
  for (int64_t c = 0; c < K; ++c) {
    gnnrtFetchChunk(ctx.get(), 0, c);
    const int64_t b = gnnrtChunkRowBound(V, K, c),
                  e = gnnrtChunkRowBound(V, K, c + 1);
    std::memcpy(p + b * kWidth, want.data() + b * kWidth, (e - b) * kWidth * 4);
    gnnrtEvictChunk(ctx.get(), 0, c);
  }
  ctx->selective.mode = SelectiveLoader::Mode::Always;
  std::vector<uint8_t> marks;
  RowRuns runs;
  int64_t expectRead = 0, expectSkipped = 0;
  for (int side : {1, 0})
    for (int64_t k = 0; k < K; ++k)
      for (int64_t c = 0; c < K; ++c) {
        const int64_t inLo = gnnrtChunkRowBound(V, K, c),
                      inHi = gnnrtChunkRowBound(V, K, c + 1);
        const std::set<int64_t> need =
            bruteForce(ds, side, gnnrtChunkRowBound(V, K, k),
                       gnnrtChunkRowBound(V, K, k + 1), inLo, inHi);
        const SpillCounters before = ctx->spill->counters();
        gnnrtFetchChunkFor(ctx.get(), 0, c, side, k);
        const SpillCounters after = ctx->spill->counters();
        const int64_t bytes = static_cast<int64_t>(need.size()) * kWidth * 4;
        EXPECT_EQ(after.readBytes - before.readBytes, bytes);
        EXPECT_EQ(after.selectiveSkippedBytes - before.selectiveSkippedBytes,
                  (inHi - inLo) * kWidth * 4 - bytes);
        expectRead += bytes;
        expectSkipped += (inHi - inLo) * kWidth * 4 - bytes;
        for (int64_t r : need)
          ASSERT_EQ(std::memcmp(p + (inLo + r) * kWidth,
                                want.data() + (inLo + r) * kWidth, kWidth * 4),
                    0)
              << "row " << inLo + r << " (tile " << k << ", " << c << ")";
        // A second fetch of the partial chunk for the tile reads it whole.
        if (k == 0 && c == 1) {
          EXPECT_EXIT(gnnrtEvictChunk(ctx.get(), 0, c),
                      testing::ExitedWithCode(1),
                      "holds only the rows a tile reads");
          gnnrtFetchChunk(ctx.get(), 0, c);
          EXPECT_EQ(std::memcmp(p + inLo * kWidth, want.data() + inLo * kWidth,
                                (inHi - inLo) * kWidth * 4),
                    0);
          expectRead += (inHi - inLo) * kWidth * 4 - bytes;
          const SpillCounters whole = ctx->spill->counters();
          gnnrtFetchChunkFor(ctx.get(), 0, c, side, k); // resident
          EXPECT_EQ(ctx->spill->counters().readBytes, whole.readBytes);
        }
        gnnrtDropChunk(ctx.get(), 0, c, 1);
      }
  EXPECT_EQ(ctx->selective.filtered, 2 * K * K);
  EXPECT_EQ(ctx->spill->counters().selectiveSkippedBytes, expectSkipped);
  EXPECT_GT(expectSkipped, 0) << "a sparse graph: tiles skip rows";
  // Never: whole chunks.
  ctx->selective.mode = SelectiveLoader::Mode::Never;
  const SpillCounters before = ctx->spill->counters();
  gnnrtFetchChunkFor(ctx.get(), 0, 2, 1, 0);
  EXPECT_EQ(ctx->spill->counters().readBytes - before.readBytes,
            (gnnrtChunkRowBound(V, K, 3) - gnnrtChunkRowBound(V, K, 2)) *
                kWidth * 4);
  EXPECT_EQ(ctx->selective.whole, 1);
  gnnrtDropChunk(ctx.get(), 0, 2, 1);
  // Auto: the throughputs are measured once per row width, and the
  // decision follows the rule on them.
  ctx->selective.mode = SelectiveLoader::Mode::Auto;
  gnnrtFetchChunkFor(ctx.get(), 0, 3, 1, 1);
  const std::string json = ctx->selective.json(ctx->spill->counters());
  EXPECT_NE(json.find("\"row_bytes\": 96"), std::string::npos) << json;
  EXPECT_EQ(ctx->selective.filtered + ctx->selective.whole, 2 * K * K + 2);
  EXPECT_GE(ctx->spill->counters().readBytes, expectRead);
}

TEST(SelectiveLoadDeathTest, MisuseIsAnError) {
  std::mt19937 rng(2);
  const Dataset ds = randomDataset(300, 900, rng);
  test::TempDir dir("gnnrt-selective-test");
  auto ctx = boundContext(dir.path, ds);
  gnnrtMemRefF32 m;
  _mlir_ciface_gnnrtBufferChunks(&m, ctx.get(), 0, 300 * 4, 300, 3);
  EXPECT_EXIT(gnnrtFetchChunkFor(ctx.get(), 0, 0, 2, 0),
              testing::ExitedWithCode(1), "gnnrtFetchChunkFor: side 2");
  EXPECT_EXIT(gnnrtFetchChunkFor(ctx.get(), 0, 0, 1, 3),
              testing::ExitedWithCode(1), "not output chunk 3");
  EXPECT_EXIT(gnnrtFetchChunkFor(ctx.get(), 1, 0, 1, 0),
              testing::ExitedWithCode(1), "slot 1 is not chunked");
}

// gnnrtBufferEdgeChunks (ABI 17): per-edge values chunked by destination
// chunk. Chunk c is the edges [indptr[b_c], indptr[b_{c+1}]) of the bound
// graph's CSC; chunks round-trip through the spill file bit for bit at their
// places, an evicted chunk gives its pages back, and gnnrtFetchChunkFor
// refuses the slot (its chunks are not rows of vertices).
TEST(SelectiveLoad, EdgeChunksAreTheDestinationChunksEdges) {
  std::mt19937 rng(17);
  constexpr int64_t V = 4000, kWidth = 4, K = 5;
  const Dataset ds = randomDataset(V, 30000, rng, /*skew=*/true);
  const int64_t E = static_cast<int64_t>(ds.indices.size());
  test::TempDir dir("gnnrt-selective-test");
  auto ctx = boundContext(dir.path, ds);
  const int64_t live0 = ctx->device->memoryCounters().live;
  gnnrtMemRefF32 m;
  _mlir_ciface_gnnrtBufferEdgeChunks(&m, ctx.get(), 0, E * kWidth, K);
  EXPECT_EQ(ctx->device->memoryCounters().live, live0) << "a take is free";
  ASSERT_EQ(m.sizes[0], E * kWidth);
  float *p = m.aligned + m.offset;
  std::vector<float> want(E * kWidth);
  std::uniform_real_distribution<float> u(-1, 1);
  for (float &x : want)
    x = u(rng);
  auto edgeBound = [&](int64_t c) {
    return ds.indptr[gnnrtChunkRowBound(V, K, c)];
  };
  for (int64_t c = 0; c < K; ++c) {
    gnnrtFetchChunk(ctx.get(), 0, c);
    std::memcpy(p + edgeBound(c) * kWidth, want.data() + edgeBound(c) * kWidth,
                (edgeBound(c + 1) - edgeBound(c)) * kWidth * 4);
  }
  const SpillCounters before = ctx->spill->counters();
  for (int64_t c = 0; c < K; ++c)
    gnnrtEvictChunk(ctx.get(), 0, c);
  EXPECT_EQ(ctx->spill->counters().writtenBytes - before.writtenBytes,
            E * kWidth * 4)
      << "the chunks cover the edges once";
  EXPECT_EQ(ctx->device->memoryCounters().live, live0);
  // Chunk 2 alone: exactly its edges come back.
  gnnrtFetchChunk(ctx.get(), 0, 2);
  EXPECT_EQ(ctx->spill->counters().readBytes - before.readBytes,
            (edgeBound(3) - edgeBound(2)) * kWidth * 4);
  EXPECT_EQ(std::memcmp(p + edgeBound(2) * kWidth,
                        want.data() + edgeBound(2) * kWidth,
                        (edgeBound(3) - edgeBound(2)) * kWidth * 4),
            0);
  for (int64_t c : {0, 1, 3, 4})
    gnnrtFetchChunk(ctx.get(), 0, c);
  EXPECT_EQ(std::memcmp(p, want.data(), E * kWidth * 4), 0);
  // The same take again changes nothing; a take by rows (other bounds) is
  // refused while a chunk is out, and redefines the chunks once none is.
  _mlir_ciface_gnnrtBufferEdgeChunks(&m, ctx.get(), 0, E * kWidth, K);
  EXPECT_EQ(m.aligned + m.offset, p);
  EXPECT_EQ(std::memcmp(p, want.data(), E * kWidth * 4), 0);
  EXPECT_EXIT(gnnrtFetchChunkFor(ctx.get(), 0, 1, 1, 0),
              testing::ExitedWithCode(1),
              "gnnrtFetchChunkFor: slot 0 is not chunked by rows");
  gnnrtEvictChunk(ctx.get(), 0, 1);
  EXPECT_EXIT(
      _mlir_ciface_gnnrtBufferChunks(&m, ctx.get(), 0, E * kWidth, E, K),
      testing::ExitedWithCode(1),
      "gnnrtBufferChunks: slot 0 is taken with other chunks while chunks of "
      "it are out");
  gnnrtDropChunk(ctx.get(), 0, 1, 0);
  _mlir_ciface_gnnrtBufferChunks(&m, ctx.get(), 0, E * kWidth, E, K);
  EXPECT_EQ(ctx->device->memoryCounters().live, live0)
      << "every chunk absent after the new take";
  EXPECT_EXIT(
      _mlir_ciface_gnnrtBufferEdgeChunks(&m, ctx.get(), 1, E * kWidth + 1, K),
      testing::ExitedWithCode(1),
      "gnnrtBufferEdgeChunks: slot 1: [0-9]+ floats in [0-9]+ rows");
  EXPECT_EXIT(
      _mlir_ciface_gnnrtBufferEdgeChunks(&m, ctx.get(), 1, E * kWidth, 0),
      testing::ExitedWithCode(1), "gnnrtBufferEdgeChunks: slot 1: 0 chunks");
}

// gnnrtParallelForRangeFetch (ABI 23): a compiled kernel's tile whose input
// chunks are out runs once per sub-chunk with its kernel integers set to the
// sub-chunk's input rows, and the integers are set back after. The kernel
// here sums, for each destination row, its in-edges' source rows within
// [lo, hi) of two inputs: the call's slot and one gnnrtTileInput registered.
// Over the visits the sums are the brute force's, and with inOrder every
// visit runs its sub-chunks in the input's order.
namespace {

struct KernelTile {
  const Dataset *ds = nullptr;
  const float *in[2] = {nullptr, nullptr};
  float *out = nullptr;
  int64_t width = 0;
  std::mutex mutex;
  std::vector<int64_t> los; // each launch's lo, in order
};
KernelTile kernelTile;

void sumInEdgesKernel(gnnrtContext *ctx, int64_t begin, int64_t end) {
  const int64_t lo = gnnrtKernelIntGet(ctx, 0), hi = gnnrtKernelIntGet(ctx, 1);
  KernelTile &t = kernelTile;
  {
    std::lock_guard<std::mutex> lock(t.mutex);
    if (t.los.empty() || t.los.back() != lo)
      t.los.push_back(lo);
  }
  // As a fused gather's kernel: a row starts at the first input rows (lo =
  // 0) and is finished (here negated) at the last (hi = |V|).
  const int64_t V = t.ds->numVertices;
  for (int64_t d = begin; d < end; ++d) {
    float *row = t.out + d * t.width;
    if (lo == 0)
      std::fill(row, row + t.width, 0.0f);
    for (int64_t e = t.ds->indptr[d]; e < t.ds->indptr[d + 1]; ++e) {
      const int64_t s = t.ds->indices[e];
      if (s >= lo && s < hi)
        for (int64_t j = 0; j < t.width; ++j)
          row[j] += t.in[0][s * t.width + j] - 2 * t.in[1][s * t.width + j];
    }
    if (hi == V)
      for (int64_t j = 0; j < t.width; ++j)
        row[j] = -row[j];
  }
}

} // namespace

TEST(SelectiveLoad, KernelTilesRunOncePerSubChunk) {
  std::mt19937 rng(23);
  constexpr int64_t V = 2048, kWidth = 8, K = 4;
  const Dataset ds = randomDataset(V, 12000, rng);
  test::TempDir dir("gnnrt-selective-test");
  auto ctx = boundContext(dir.path, ds);
  std::vector<float> want[2];
  std::uniform_int_distribution<int> u(-8, 8); // exact sums in any order
  for (int64_t slot : {0, 1}) {
    gnnrtMemRefF32 m;
    _mlir_ciface_gnnrtBufferChunks(&m, ctx.get(), slot, V * kWidth, V, K);
    float *p = m.aligned + m.offset;
    kernelTile.in[slot] = p;
    want[slot].resize(V * kWidth);
    for (float &x : want[slot])
      x = static_cast<float>(u(rng));
    for (int64_t c = 0; c < K; ++c) {
      gnnrtFetchChunk(ctx.get(), slot, c);
      const int64_t b = gnnrtChunkRowBound(V, K, c),
                    e = gnnrtChunkRowBound(V, K, c + 1);
      std::memcpy(p + b * kWidth, want[slot].data() + b * kWidth,
                  (e - b) * kWidth * 4);
      gnnrtEvictChunk(ctx.get(), slot, c);
    }
  }
  ctx->selective.mode = SelectiveLoader::Mode::Always;
  ctx->pipeline.gain = 1e9; // never turned off: every visit in sub-chunks
  std::vector<float> out(V * kWidth);
  // What the kernel computes for rows [first, last) from input rows
  // [lo, hi): the in-edges' sums, negated where hi = V.
  auto bruteSums = [&](int64_t lo, int64_t hi, int64_t first, int64_t last) {
    std::vector<float> sums(V * kWidth);
    for (int64_t d = first; d < last; ++d)
      for (int64_t e = ds.indptr[d]; e < ds.indptr[d + 1]; ++e) {
        const int64_t src = ds.indices[e];
        if (src >= lo && src < hi)
          for (int64_t j = 0; j < kWidth; ++j)
            sums[d * kWidth + j] +=
                want[0][src * kWidth + j] - 2 * want[1][src * kWidth + j];
      }
    if (hi == V)
      for (float &x : sums)
        x = -x;
    return sums;
  };
  kernelTile.ds = &ds;
  kernelTile.out = out.data();
  kernelTile.width = kWidth;
  const int64_t c = 2, k = 1; // input chunk c, output rows chunk k
  const int64_t inLo = gnnrtChunkRowBound(V, K, c),
                inHi = gnnrtChunkRowBound(V, K, c + 1);
  const int64_t begin = gnnrtChunkRowBound(V, K, k),
                end = gnnrtChunkRowBound(V, K, k + 1);
  const std::vector<float> brute = bruteSums(inLo, inHi, begin, end);
  constexpr int kVisits = 6;
  for (int visit = 0; visit < kVisits; ++visit) {
    std::fill(out.begin(), out.end(), 0.0f);
    kernelTile.los.clear();
    gnnrtKernelInt(ctx.get(), 0, inLo);
    gnnrtKernelInt(ctx.get(), 1, inHi);
    gnnrtTileInput(ctx.get(), 1);
    gnnrtParallelForRangeFetch(ctx.get(), 0, c, 1, 0, 1, /*inOrder=*/1,
                               sumInEdgesKernel, begin, end);
    EXPECT_EQ(out, brute) << "visit " << visit;
    EXPECT_EQ(gnnrtKernelIntGet(ctx.get(), 0), inLo);
    EXPECT_EQ(gnnrtKernelIntGet(ctx.get(), 1), inHi);
    const std::vector<int64_t> &los = kernelTile.los;
    EXPECT_EQ(los.size(), visit == TilePipeline::kProfiledVisits ? 1u : 4u)
        << "the baseline visit runs whole";
    ASSERT_FALSE(los.empty());
    EXPECT_TRUE(std::is_sorted(los.begin(), los.end())) << "visit " << visit;
    EXPECT_EQ(los.front(), inLo);
    gnnrtDropChunk(ctx.get(), 0, c, 1);
    gnnrtDropChunk(ctx.get(), 1, c, 1);
  }
  EXPECT_EQ(ctx->pipeline.tiles, kVisits - 1);
  EXPECT_EQ(ctx->selective.filtered, 2 * kVisits) << "both inputs filtered";
  // Without inOrder, the swap heuristic orders the sub-chunks once they are
  // profiled, but the first input chunk's sub-chunk with row 0 stays first
  // (the kernel starts its rows there) and the last chunk's sub-chunk with
  // the last row stays last (it finishes them there); the sums are the
  // same.
  bool firstMoved = false, lastMoved = false;
  ctx->pipeline.subChunks = 8; // 6 or 7 free sub-chunks to reorder
  // Every output chunk's tile of the first and the last input chunk (each
  // tile its own random order).
  for (int64_t chunk : {int64_t(0), K - 1})
    for (int64_t rows = 0; rows < K; ++rows) {
      const int64_t lo = gnnrtChunkRowBound(V, K, chunk),
                    hi = gnnrtChunkRowBound(V, K, chunk + 1);
      const int64_t first = gnnrtChunkRowBound(V, K, rows),
                    last = gnnrtChunkRowBound(V, K, rows + 1);
      const std::vector<float> sums = bruteSums(lo, hi, first, last);
      for (int visit = 0; visit < kVisits; ++visit) {
        // Chunk 0's first sub-chunk resets the rows; the others add to them.
        std::fill(out.begin(), out.end(), chunk == 0 ? 1.0f : 0.0f);
        kernelTile.los.clear();
        gnnrtKernelInt(ctx.get(), 0, lo);
        gnnrtKernelInt(ctx.get(), 1, hi);
        gnnrtTileInput(ctx.get(), 1);
        gnnrtParallelForRangeFetch(ctx.get(), 0, chunk, 1, 0, 1,
                                   /*inOrder=*/0, sumInEdgesKernel, first,
                                   last);
        EXPECT_TRUE(std::equal(out.begin() + first * kWidth,
                               out.begin() + last * kWidth,
                               sums.begin() + first * kWidth))
            << "chunk " << chunk << ", rows " << rows << ", visit " << visit;
        const std::vector<int64_t> &los = kernelTile.los;
        ASSERT_FALSE(los.empty());
        if (chunk == 0)
          EXPECT_EQ(los.front(), 0) << "visit " << visit;
        else
          EXPECT_EQ(los.back(), *std::max_element(los.begin(), los.end()))
              << "visit " << visit;
        (chunk == 0 ? firstMoved : lastMoved) |=
            !std::is_sorted(los.begin(), los.end());
        gnnrtDropChunk(ctx.get(), 0, chunk, 1);
        gnnrtDropChunk(ctx.get(), 1, chunk, 1);
      }
    }
  EXPECT_TRUE(firstMoved && lastMoved)
      << "the other sub-chunks were reordered (seeded by the tile): "
      << firstMoved << lastMoved;
  // The kernel integers must be the chunk's rows; an input once; a chunked
  // slot.
  gnnrtKernelInt(ctx.get(), 0, inLo);
  gnnrtKernelInt(ctx.get(), 1, inHi - 1);
  EXPECT_EXIT(gnnrtParallelForRangeFetch(ctx.get(), 0, c, 1, 0, 1, 0,
                                         sumInEdgesKernel, begin, end),
              testing::ExitedWithCode(1), "are not chunk 2 of slot 0");
  EXPECT_EXIT(gnnrtParallelForRangeFetch(ctx.get(), 0, c, 1, 0, 0, 0,
                                         sumInEdgesKernel, begin, end),
              testing::ExitedWithCode(1),
              "kernel integers #0 and #0 are not the tile's input range");
  gnnrtKernelInt(ctx.get(), 1, inHi);
  EXPECT_EXIT(gnnrtParallelForRangeFetch(ctx.get(), 0, c, 1, 0, 1, 0,
                                         sumInEdgesKernel, begin + 1, end),
              testing::ExitedWithCode(1), "the start must be a multiple");
  EXPECT_EXIT(
      {
        gnnrtTileInput(ctx.get(), 0);
        gnnrtParallelForRangeFetch(ctx.get(), 0, c, 1, 0, 1, 0,
                                   sumInEdgesKernel, begin, end);
      },
      testing::ExitedWithCode(1), "slot 0 is the tile's input twice");
  EXPECT_EXIT(gnnrtTileInput(ctx.get(), 5), testing::ExitedWithCode(1),
              "gnnrtTileInput: slot 5 is not chunked");
  // A registration no fetching launch takes is an error at the next launch.
  EXPECT_EXIT(
      {
        gnnrtTileInput(ctx.get(), 1);
        gnnrtParallelForRange(ctx.get(), sumInEdgesKernel, begin, end);
      },
      testing::ExitedWithCode(1),
      "gnnrtParallelForRange: gnnrtTileInput registered slot 1 for a tile, "
      "but no gnnrtParallelForRangeFetch runs it");
}
