//===- GraphOnStorageTest.cpp - the graph's per-edge arrays out of core ---===//
//
// The graph out of core (GraphOnStorage.h): the loader's check of
// indices.npy by blocks, the CSR the start-up writes to the spill file in
// blocks, and the windows the kernels read, against the arrays built in
// memory from the same CSC.
//
//===----------------------------------------------------------------------===//

#include "GraphOnStorage.h"
#include "Context.h"
#include "Npy.h"
#include "RandomGraph.h"
#include "TempDir.h"

#include <gtest/gtest.h>

#include <random>

using namespace gnnrt;
using gnnrt::test::TempDir;

namespace {

/// Writes the CSC of `ds` as `dir`/indptr.npy and indices.npy.
void writeGraph(const std::string &dir, const Dataset &ds) {
  std::string error;
  ASSERT_TRUE(writeNpy(dir + "/indptr.npy", DType::I64,
                       {static_cast<int64_t>(ds.indptr.size())},
                       ds.indptr.data(), error))
      << error;
  ASSERT_TRUE(writeNpy(dir + "/indices.npy", DType::I32,
                       {static_cast<int64_t>(ds.indices.size())},
                       ds.indices.data(), error))
      << error;
}

/// The arrays bindDataset builds in memory, written out independently: the
/// destinations of the CSC, and the CSR's offsets, edge ids (ascending
/// within a source) and destinations.
struct Reference {
  std::vector<int32_t> dst, csrEdge, csrDst;
  std::vector<int64_t> srcOffsets;
  explicit Reference(const Dataset &ds) {
    const int64_t V = ds.numVertices, E = ds.numEdges;
    dst.resize(E);
    srcOffsets.assign(V + 1, 0);
    for (int64_t v = 0; v < V; ++v)
      for (int64_t e = ds.indptr[v]; e < ds.indptr[v + 1]; ++e) {
        dst[e] = static_cast<int32_t>(v);
        ++srcOffsets[ds.indices[e] + 1];
      }
    for (int64_t u = 0; u < V; ++u)
      srcOffsets[u + 1] += srcOffsets[u];
    std::vector<std::vector<int32_t>> out(V);
    for (int64_t e = 0; e < E; ++e)
      out[ds.indices[e]].push_back(static_cast<int32_t>(e));
    for (int64_t u = 0; u < V; ++u)
      for (int32_t e : out[u]) {
        csrEdge.push_back(e);
        csrDst.push_back(dst[e]);
      }
  }
};

/// A context whose device holds `ds`'s offsets and degrees and whose graph
/// is out of core (CSR blocks of at most `blockEdges` edges).
std::unique_ptr<gnnrtContext> outOfCore(const std::string &dir, Dataset &ds,
                                        int64_t blockEdges) {
  auto ctx = std::make_unique<gnnrtContext>();
  std::string error;
  ctx->spill = SpillStore::open(dir, error);
  EXPECT_TRUE(ctx->spill) << error;
  Dataset loaded;
  EXPECT_TRUE(loadGraphOnStorage(dir, loaded, ctx->indicesFile, error))
      << error;
  ctx->graphOnStorage =
      GraphOnStorage::create(ctx->indicesFile, loaded.indptr, 0xF,
                             ctx->spill->file(), error, blockEdges);
  EXPECT_TRUE(ctx->graphOnStorage) << error;
  GraphArrays g;
  g.dstOffsets = loaded.indptr;
  g.srcOffsets = ctx->graphOnStorage->takeSourceOffsets();
  g.edgesOnStorage = loaded.numEdges;
  g.inDegree.assign(loaded.numVertices, 1.0f);
  g.outDegree.assign(loaded.numVertices, 1.0f);
  ctx->device->bindGraph(std::move(g));
  ctx->graphOnStorage->useOffsets(ctx->device->graph().offsets[0],
                                  ctx->device->graph().offsets[1]);
  ctx->ds = std::move(loaded);
  return ctx;
}

TEST(RuntimeGraphOnStorage, WindowsHoldTheArraysBuiltInMemory) {
  TempDir dir;
  ASSERT_FALSE(dir.path.empty());
  std::mt19937 rng(7);
  Dataset ds = randomDataset(3000, 40000, rng);
  writeGraph(dir.path, ds);
  const Reference want(ds);
  // Blocks of 777 edges: many passes, blocks that end inside a window.
  auto ctx = outOfCore(dir.path, ds, 777);
  ASSERT_TRUE(ctx->graphOnStorage);
  const DeviceGraph &bound = ctx->device->graph();
  EXPECT_TRUE(std::equal(want.srcOffsets.begin(), want.srcOffsets.end(),
                         bound.offsets[0]));
  EXPECT_TRUE(ctx->ds.indices.empty()) << "the sources stay on storage";
  const DeviceGraph &g = ctx->device->graph();
  EXPECT_EQ(g.numEdges, ds.numEdges);
  std::uniform_int_distribution<int64_t> row(0, 3000);
  int64_t read = 0, windows = 0;
  for (int round = 0; round < 40; ++round) {
    int64_t lo = row(rng), hi = row(rng);
    if (lo > hi)
      std::swap(lo, hi);
    const int side = round % 2;
    gnnrtGraphWindow(ctx.get(), side, lo, hi);
    const std::vector<int64_t> &offsets =
        side == 1 ? ds.indptr : want.srcOffsets;
    const int64_t first = offsets[lo], last = offsets[hi];
    if (lo < hi) {
      ++windows;
      read += (last - first) * 4 * (side == 1 ? 1 : 2);
    }
    for (int64_t e = first; e < last; ++e) {
      if (side == 1) {
        ASSERT_EQ(g.index[0][e], ds.indices[e]) << "edge " << e;
        ASSERT_EQ(g.index[1][e], want.dst[e]) << "edge " << e;
      } else {
        ASSERT_EQ(g.index[2][e], want.csrEdge[e]) << "position " << e;
        ASSERT_EQ(g.index[3][e], want.csrDst[e]) << "position " << e;
      }
    }
    // The same window again reads nothing.
    gnnrtGraphWindow(ctx.get(), side, lo, hi);
    EXPECT_EQ(ctx->graphOnStorage->counters().readBytes, read);
    EXPECT_EQ(ctx->graphOnStorage->counters().windows, windows);
  }
  EXPECT_EQ(ctx->spill->counters().readBytes, 0) << "not the slots'";
}

TEST(RuntimeGraphOnStorage, WindowBytesAreTheLargestRowChunks) {
  std::mt19937 rng(8);
  Dataset ds = randomDataset(5000, 60000, rng, /*skewDestinations=*/true);
  const Reference r(ds);
  for (int64_t chunks : {1, 2, 3, 8, 64}) {
    int64_t most[2] = {0, 0};
    for (int64_t k = 0; k < chunks; ++k) {
      auto bound = [&](int64_t i) {
        return i == chunks ? int64_t(5000) : 5000 * i / chunks / 32 * 32;
      };
      most[1] =
          std::max(most[1], ds.indptr[bound(k + 1)] - ds.indptr[bound(k)]);
      most[0] = std::max(most[0],
                         r.srcOffsets[bound(k + 1)] - r.srcOffsets[bound(k)]);
    }
    const std::array<int64_t, 2> got =
        GraphOnStorage::mostChunkEdges(ds.indptr, r.srcOffsets, chunks);
    EXPECT_EQ(got[0], most[0]) << chunks << " chunks";
    EXPECT_EQ(got[1], most[1]) << chunks << " chunks";
    // Each array padded by GraphOnStorage::kPadding entries.
    const int64_t pad = GraphOnStorage::kPadding;
    EXPECT_EQ(GraphOnStorage::windowBytes(got, 0xF),
              4 * (2 * (most[1] + pad) + 2 * (most[0] + pad)));
    EXPECT_EQ(GraphOnStorage::windowBytes(got, 0x9),
              4 * (most[1] + pad + most[0] + pad))
        << "sources and CSR destinations";
  }
}

TEST(RuntimeGraphOnStorage, TheLoaderChecksTheSourcesByBlocks) {
  TempDir dir;
  ASSERT_FALSE(dir.path.empty());
  std::mt19937 rng(9);
  Dataset ds = randomDataset(200, 2000, rng);
  std::string error;
  {
    Dataset bad = ds;
    bad.indices[1234] = 200;
    writeGraph(dir.path, bad);
    Dataset out;
    IndicesOnStorage indices;
    EXPECT_FALSE(loadGraphOnStorage(dir.path, out, indices, error));
    EXPECT_EQ(error, "indices.npy: vertex id 200 out of range [0, 200)");
  }
  {
    // Two sources of one destination swapped.
    Dataset bad = ds;
    int64_t v = 0;
    while (bad.indptr[v + 1] - bad.indptr[v] < 2 ||
           bad.indices[bad.indptr[v]] == bad.indices[bad.indptr[v] + 1])
      ++v;
    const int64_t e = bad.indptr[v];
    std::swap(bad.indices[e], bad.indices[e + 1]);
    writeGraph(dir.path, bad);
    Dataset out;
    IndicesOnStorage indices;
    EXPECT_FALSE(loadGraphOnStorage(dir.path, out, indices, error));
    EXPECT_EQ(error,
              "indices.npy: sources not ascending within a destination (edge " +
                  std::to_string(e + 1) + ")");
  }
  {
    Dataset bad = ds;
    bad.indptr.back() += 1;
    writeGraph(dir.path, bad);
    Dataset out;
    IndicesOnStorage indices;
    EXPECT_FALSE(loadGraphOnStorage(dir.path, out, indices, error));
    EXPECT_NE(error.find("indptr.npy: indptr[-1]"), std::string::npos) << error;
  }
}

// The loader reads indices.npy by blocks of 4 Mi edges: the order within a
// destination is checked across a block's first edge too, and a destination
// that starts there is not compared with the one before.
TEST(RuntimeGraphOnStorage, TheAscendingCheckSpansBlocks) {
  TempDir dir;
  ASSERT_FALSE(dir.path.empty());
  constexpr int64_t kBlock = int64_t(4) << 20, E = kBlock + 10;
  Dataset ds;
  ds.indices.assign(E, 1);
  std::fill(ds.indices.begin(), ds.indices.begin() + kBlock - 1, 0);
  ds.indices[kBlock - 1] = 1; // then 0 at the next block's first edge
  ds.indices[kBlock] = 0;
  std::string error;
  for (bool split : {false, true}) {
    // One destination holding every edge, or a second starting at kBlock.
    ds.indptr = split ? std::vector<int64_t>{0, kBlock, E}
                      : std::vector<int64_t>{0, E, E};
    writeGraph(dir.path, ds);
    Dataset out;
    IndicesOnStorage indices;
    EXPECT_EQ(loadGraphOnStorage(dir.path, out, indices, error), split)
        << error;
    if (!split) {
      EXPECT_EQ(error, "indices.npy: sources not ascending within a "
                       "destination (edge " +
                           std::to_string(kBlock) + ")");
    }
  }
}

TEST(RuntimeGraphOnStorageDeathTest, EdgesOutsideTheWindowsAreAnError) {
  TempDir dir;
  ASSERT_FALSE(dir.path.empty());
  std::mt19937 rng(10);
  Dataset ds = randomDataset(500, 5000, rng);
  writeGraph(dir.path, ds);
  auto ctx = outOfCore(dir.path, ds, 1 << 20);
  gnnrtMemRefI32 index;
  EXPECT_EXIT(_mlir_ciface_gnnrtGraphIndex(&index, ctx.get(), 0),
              testing::ExitedWithCode(1),
              "gnnrtGraphIndex: the graph is out of core and no window");
  gnnrtGraphWindow(ctx.get(), 1, 64, 128);
  _mlir_ciface_gnnrtGraphIndex(&index, ctx.get(), 0);
  EXPECT_EXIT(_mlir_ciface_gnnrtGraphIndex(&index, ctx.get(), 2),
              testing::ExitedWithCode(1), "holds index 2");
  std::vector<float> rows(500 * 4, 1.0f), out(500 * 4);
  gnnrtMemRefF32 none{}, in{rows.data(), rows.data(), 0, {500 * 4}, {1}},
      result{out.data(), out.data(), 0, {500 * 4}, {1}};
  _mlir_ciface_gnnrtSpmmRows(ctx.get(), 1, 0, &none, &in, &result, 4, 64, 128,
                             0, 500);
  // An empty row chunk (a small graph in many chunks) reads no edges.
  gnnrtGraphWindow(ctx.get(), 1, 64, 64);
  _mlir_ciface_gnnrtSpmmRows(ctx.get(), 1, 0, &none, &in, &result, 4, 64, 64, 0,
                             500);
  gnnrtGraphWindow(ctx.get(), 1, 64, 128);
  EXPECT_EXIT(
      _mlir_ciface_gnnrtSpmmRows(ctx.get(), 1, 0, &none, &in, &result, 4, 32,
                                 128, 0, 500),
      testing::ExitedWithCode(1),
      "gnnrtSpmmRows: the graph is out of core and no window "
      "\\(gnnrtGraphWindow\\) holds the destination rows \\[32, 128\\)");
  EXPECT_EXIT(
      _mlir_ciface_gnnrtSpmm(ctx.get(), 1, 0, 1, &none, &in, &result, 4),
      testing::ExitedWithCode(1),
      "gnnrtSpmm: reads every edge, but the graph is out of core");
  EXPECT_EXIT(gnnrtGraphWindow(ctx.get(), 1, 100, 501),
              testing::ExitedWithCode(1), "gnnrtGraphWindow: rows");
}

} // namespace
