//===- KernelsTest.cpp - the CPU runtime's aggregation against a reference ===//
//
// gnnrtSpmm on random graphs (skewed degrees, empty rows, both sides, mean
// and weights) at widths around every column-chunk boundary of the kernel
// (128/64/32/16 in registers, a tail below 16), against a double-precision
// loop over the edge list; gnnrtGemm and gnnrtSumRows through the context.
//
//===----------------------------------------------------------------------===//

#include "Context.h"
#include "Random.h"
#include "RandomGraph.h"
#include "gnnrt/GNNRuntime.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

using namespace gnnrt;

namespace {

/// randomDataset(V, E) bound to a context. `ds` keeps a copy of the dataset
/// as built (binding moves the graph to the context's device).
std::unique_ptr<gnnrtContext> randomGraph(int64_t V, int64_t E,
                                          std::mt19937 &rng, Dataset &ds) {
  auto ctx = std::make_unique<gnnrtContext>();
  ds = randomDataset(V, E, rng);
  ctx->ds = ds;
  std::string error;
  EXPECT_TRUE(bindDataset(ctx.get(), error)) << error;
  return ctx;
}

gnnrtMemRefF32 view(std::vector<float> &v) {
  return {v.data(), v.data(), 0, {static_cast<int64_t>(v.size())}, {1}};
}

} // namespace

TEST(RuntimeKernels, SpmmMatchesTheEdgeListAtEveryChunkBoundary) {
  std::mt19937 rng(20261122);
  const int64_t V = 300, E = 4000;
  Dataset ds;
  std::unique_ptr<gnnrtContext> ctx = randomGraph(V, E, rng, ds);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (int64_t width :
       {1, 5, 15, 16, 17, 40, 63, 64, 100, 127, 128, 129, 130, 200, 256, 602}) {
    for (int64_t side : {0, 1}) {
      for (int64_t mean : {0, 1}) {
        for (bool weighted : {false, true}) {
          std::vector<float> x(V * width), y(V * width, -7.0f), w;
          for (float &f : x)
            f = normal(rng);
          if (weighted) {
            w.resize(E);
            for (float &f : w)
              f = normal(rng);
          }
          // Reference: side 1 sums sources into destinations (CSC), side 0
          // destinations into sources (CSR).
          std::vector<double> ref(V * width, 0.0);
          std::vector<int64_t> count(V, 0);
          for (int64_t d = 0; d < V; ++d)
            for (int64_t e = ds.indptr[d]; e < ds.indptr[d + 1]; ++e) {
              const int64_t s = ds.indices[e];
              const int64_t to = side == 1 ? d : s, from = side == 1 ? s : d;
              const double c = weighted ? w[e] : 1.0;
              ++count[to];
              for (int64_t i = 0; i < width; ++i)
                ref[to * width + i] += c * x[from * width + i];
            }
          // Untiled, and tiled into P x P chunks (P = V: one vertex per
          // chunk; more chunks than vertices: as many as vertices).
          for (int64_t chunks : {1, 2, 3, 7, 300, 1000}) {
            std::fill(y.begin(), y.end(), -7.0f);
            gnnrtMemRefF32 wm = view(w), xm = view(x), ym = view(y);
            _mlir_ciface_gnnrtSpmm(ctx.get(), side, mean, chunks, &wm, &xm, &ym,
                                   width);
            for (int64_t v = 0; v < V; ++v)
              for (int64_t i = 0; i < width; ++i) {
                double want = ref[v * width + i];
                if (mean && count[v] > 0)
                  want /= static_cast<double>(count[v]);
                ASSERT_NEAR(y[v * width + i], want,
                            1e-4 * (1.0 + std::abs(want)))
                    << "width " << width << " side " << side << " mean " << mean
                    << " weighted " << weighted << " chunks " << chunks
                    << " vertex " << v << " column " << i << " (in-degree "
                    << count[v] << ")";
              }
          }
          // Row ranges (gnnrtSpmmRows; a few widths): the rows of the range
          // as the whole aggregation computes them bit for bit, the others
          // untouched.
          if (width != 1 && width != 17 && width != 128 && width != 602)
            continue;
          gnnrtMemRefF32 wm = view(w), xm = view(x), ym = view(y);
          std::fill(y.begin(), y.end(), -7.0f);
          _mlir_ciface_gnnrtSpmm(ctx.get(), side, mean, 1, &wm, &xm, &ym,
                                 width);
          const std::vector<float> whole = y;
          for (auto [b, e] : std::vector<std::pair<int64_t, int64_t>>{
                   {0, 0}, {0, 1}, {37, 180}, {299, 300}, {0, 300}}) {
            std::fill(y.begin(), y.end(), -7.0f);
            _mlir_ciface_gnnrtSpmmRows(ctx.get(), side, mean, &wm, &xm, &ym,
                                       width, b, e, 0, V);
            for (int64_t v = 0; v < V; ++v)
              for (int64_t i = 0; i < width; ++i)
                ASSERT_EQ(y[v * width + i],
                          v >= b && v < e ? whole[v * width + i] : -7.0f)
                    << "rows [" << b << ", " << e << ") vertex " << v;
            // In tiles over input ranges (row chunks): each row adds its
            // edges in the same order, so the same floats.
            std::fill(y.begin(), y.end(), -7.0f);
            const int64_t in[] = {0, 0, 37, 38, 180, V};
            for (int64_t t = 0; t + 1 < 6; ++t)
              _mlir_ciface_gnnrtSpmmRows(ctx.get(), side, mean, &wm, &xm, &ym,
                                         width, b, e, in[t], in[t + 1]);
            for (int64_t v = 0; v < V; ++v)
              for (int64_t i = 0; i < width; ++i)
                ASSERT_EQ(y[v * width + i],
                          v >= b && v < e ? whole[v * width + i] : -7.0f)
                    << "tiles of rows [" << b << ", " << e << ") vertex " << v;
          }
        }
      }
    }
  }
}

TEST(RuntimeKernelsDeathTest, SpmmRowsOutsideTheGraphIsAnError) {
  std::mt19937 rng(3);
  Dataset ds;
  std::unique_ptr<gnnrtContext> ctx = randomGraph(10, 30, rng, ds);
  std::vector<float> x(10 * 4), y(10 * 4), w;
  gnnrtMemRefF32 wm = view(w), xm = view(x), ym = view(y);
  EXPECT_EXIT(_mlir_ciface_gnnrtSpmmRows(ctx.get(), 1, 0, &wm, &xm, &ym, 4, 5,
                                         11, 0, 10),
              testing::ExitedWithCode(1),
              "gnnrtSpmmRows: rows \\[5, 11\\) of 10");
  EXPECT_EXIT(_mlir_ciface_gnnrtSpmmRows(ctx.get(), 1, 0, &wm, &xm, &ym, 4, 0,
                                         10, 6, 5),
              testing::ExitedWithCode(1),
              "gnnrtSpmmRows: input rows \\[6, 5\\) of 10");
}

// A graph bound without its CSR's edge ids (a graph-arrays record naming
// only the sources and the CSR's destinations) still aggregates to the
// destinations, and to the sources without weights (no edge's value is
// read); with weights, or gathering edge values, to the sources it stops the
// run instead of reading the CSC's order as the CSR's. Without the CSR's
// destinations an SpMM to the sources stops too; over no rows none does.
TEST(RuntimeKernelsDeathTest, AggregationToSourcesNeedsTheCsrArrays) {
  std::mt19937 rng(5);
  const int64_t V = 10, E = 30;
  for (unsigned arrays : {1u | 8u, 1u}) {
    auto ctx = std::make_unique<gnnrtContext>();
    ctx->ds = randomDataset(V, E, rng);
    std::string error;
    ASSERT_TRUE(bindDataset(ctx.get(), error, false, nullptr, arrays)) << error;
    std::vector<float> x(V * 4, 1.0f), y(V * 4), none, w(E, 0.5f),
        edges(E * 4, 1.0f);
    gnnrtMemRefF32 nm = view(none), wm = view(w), xm = view(x), ym = view(y),
                   em = view(edges);
    gnnrtMemRefI32 am = {nullptr, nullptr, 0, {0}, {1}};
    _mlir_ciface_gnnrtSpmm(ctx.get(), 1, 0, 1, &wm, &xm, &ym, 4);
    // An empty range reads no edge (an empty row chunk, whose window holds
    // no array with the graph out of core).
    _mlir_ciface_gnnrtSpmmRows(ctx.get(), 0, 0, &wm, &xm, &ym, 4, 3, 3, 0, V);
    if (arrays & 8) {
      _mlir_ciface_gnnrtSpmm(ctx.get(), 0, 0, 1, &nm, &xm, &ym, 4);
    } else {
      EXPECT_EXIT(
          _mlir_ciface_gnnrtSpmm(ctx.get(), 0, 0, 1, &nm, &xm, &ym, 4),
          testing::ExitedWithCode(1),
          "gnnrtSpmm needs the graph's CSR's destinations \\(index 3\\)");
      continue;
    }
    EXPECT_EXIT(
        _mlir_ciface_gnnrtSpmm(ctx.get(), 0, 0, 1, &wm, &xm, &ym, 4),
        testing::ExitedWithCode(1),
        "gnnrtSpmm needs the graph's CSR's edge ids \\(index 2\\), which "
        "were not built");
    EXPECT_EXIT(_mlir_ciface_gnnrtGather(ctx.get(), 0, 0, &em, &ym, &am, 4),
                testing::ExitedWithCode(1),
                "gnnrtGather needs the graph's CSR's edge ids");
  }
}

// Every edge is in exactly one of the P x P chunks: on integer values (whose
// sums float adds exactly, in any order) the tiled aggregation equals the
// untiled one bit for bit, for every P; an edge counted twice or dropped
// would show.
TEST(RuntimeKernels, ChunkTilingCountsEveryEdgeOnce) {
  std::mt19937 rng(20261125);
  const int64_t V = 257, E = 5000, width = 33;
  Dataset ds;
  std::unique_ptr<gnnrtContext> ctx = randomGraph(V, E, rng, ds);
  std::uniform_int_distribution<int> small(-8, 8);
  std::vector<float> x(V * width), w(E), ref(V * width), y(V * width);
  for (float &f : x)
    f = static_cast<float>(small(rng));
  for (float &f : w)
    f = static_cast<float>(small(rng));
  for (int64_t side : {0, 1})
    for (int64_t mean : {0, 1}) {
      gnnrtMemRefF32 wm = view(w), xm = view(x), rm = view(ref), ym = view(y);
      _mlir_ciface_gnnrtSpmm(ctx.get(), side, mean, 1, &wm, &xm, &rm, width);
      for (int64_t chunks = 2; chunks <= 40; ++chunks) {
        _mlir_ciface_gnnrtSpmm(ctx.get(), side, mean, chunks, &wm, &xm, &ym,
                               width);
        ASSERT_EQ(y, ref) << "side " << side << " mean " << mean << " chunks "
                          << chunks;
      }
      // Tiles of row chunks (gnnrtSpmmRows with input ranges, as RowChunks
      // emits them: for each output chunk the input chunks in order),
      // including empty chunks at the start (aligned boundaries on a small
      // graph) and chunks of one row.
      for (std::vector<int64_t> bounds : {std::vector<int64_t>{0, 100, V},
                                          {0, 0, 0, 64, 128, V},
                                          {0, 1, 2, 3, 200, 256, V},
                                          {0, 32, 64, 96, 128, 160, 192, V}}) {
        std::fill(y.begin(), y.end(), -7.0f);
        for (size_t j = 0; j + 1 < bounds.size(); ++j)
          for (size_t i = 0; i + 1 < bounds.size(); ++i)
            _mlir_ciface_gnnrtSpmmRows(ctx.get(), side, mean, &wm, &xm, &ym,
                                       width, bounds[j], bounds[j + 1],
                                       bounds[i], bounds[i + 1]);
        ASSERT_EQ(y, ref) << "side " << side << " mean " << mean << " tiles "
                          << bounds.size() - 1;
      }
    }
}

TEST(RuntimeKernels, BuffersAreZeroedAndAligned) {
  std::unique_ptr<Device> device = createCPUDevice();
  for (int64_t n : {int64_t(1), int64_t(1000), int64_t(3) << 20}) {
    Buffer b(*device, n);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(b.data) % 64, 0u);
    if (n * 4 >= (int64_t(4) << 20)) { // large: huge-page aligned
      EXPECT_EQ(reinterpret_cast<uintptr_t>(b.data) % (uintptr_t(2) << 20), 0u);
    }
    for (int64_t i = 0; i < n; i += 997)
      ASSERT_EQ(b.data[i], 0.0f);
  }
}

TEST(RuntimeKernels, GemmAndSumRowsRunOnTheContextsDevice) {
  gnnrtContext ctx;
  std::mt19937 rng(1234);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const int64_t m = 37, n = 19, k = 23;
  for (int64_t transA : {0, 1}) {
    for (int64_t transB : {0, 1}) {
      std::vector<float> a(m * k), b(k * n), c(m * n);
      for (std::vector<float> *v : {&a, &b, &c})
        for (float &f : *v)
          f = normal(rng);
      const std::vector<float> c0 = c;
      gnnrtMemRefF32 am = view(a), bm = view(b), cm = view(c);
      _mlir_ciface_gnnrtGemm(&ctx, transA, transB, m, n, k, 0.5f, &am, &bm,
                             2.0f, &cm);
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          double want = 2.0 * c0[i * n + j];
          for (int64_t l = 0; l < k; ++l)
            want += 0.5 * a[transA ? l * m + i : i * k + l] *
                    b[transB ? j * k + l : l * n + j];
          ASSERT_NEAR(c[i * n + j], want, 1e-4 * (1.0 + std::abs(want)))
              << "transA " << transA << " transB " << transB << " at " << i
              << ", " << j;
        }
    }
  }
  for (int64_t rows : {0, 1, 63, 64, 65, 1000}) {
    for (int64_t width : {1, 7, 130}) {
      std::vector<float> in(rows * width), out(width, -3.0f);
      for (float &f : in)
        f = normal(rng);
      gnnrtMemRefF32 im = view(in), om = view(out);
      _mlir_ciface_gnnrtSumRows(&ctx, rows, width, &im, &om);
      for (int64_t j = 0; j < width; ++j) {
        double want = 0.0;
        for (int64_t r = 0; r < rows; ++r)
          want += in[r * width + j];
        ASSERT_NEAR(out[j], want, 1e-4 * (1.0 + std::abs(want)))
            << "rows " << rows << " width " << width << " column " << j;
      }
    }
  }
}

// The CPU device's GEMMs cut a tall op(A) into blocks of 4096 rows of C:
// against a double-precision sum, every case of transposes, with beta 0
// (C's NaN never read) and 2; and long sums over k (a weight's gradient).
TEST(RuntimeKernels, TallAndLongGemmsMatchTheSum) {
  gnnrtContext ctx;
  std::mt19937 rng(4321);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  struct Shape {
    int64_t m, n, k, transA, transB;
  };
  // n k = 1920: blocks of 4096 rows on up to 30 threads (gemmRowBlock).
  const Shape shapes[] = {{9000, 40, 48, 0, 0},  {9000, 40, 48, 1, 0},
                          {9000, 40, 48, 0, 1},  {9000, 40, 48, 1, 1},
                          {6, 3, 50000, 1, 0},   {6, 3, 50000, 0, 0},
                          {100, 50, 40000, 1, 0}};
  for (const Shape &sh : shapes) {
    const auto [m, n, k, transA, transB] = sh;
    std::vector<float> a(m * k), b(k * n), c0(m * n);
    for (std::vector<float> *v : {&a, &b, &c0})
      for (float &f : *v)
        f = normal(rng);
    for (float beta : {0.0f, 2.0f}) {
      std::vector<float> c(m * n, beta == 0.0f ? NAN : 0.0f);
      if (beta != 0.0f)
        c = c0;
      gnnrtMemRefF32 am = view(a), bm = view(b), cm = view(c);
      _mlir_ciface_gnnrtGemm(&ctx, transA, transB, m, n, k, 0.5f, &am, &bm,
                             beta, &cm);
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          double want = beta * c0[i * n + j], magnitude = 1.0;
          for (int64_t l = 0; l < k; ++l) {
            const double t = 0.5 * a[transA ? l * m + i : i * k + l] *
                             b[transB ? j * k + l : l * n + j];
            want += t;
            magnitude += std::abs(t);
          }
          ASSERT_NEAR(c[i * n + j], want, 1e-5 * magnitude)
              << m << " x " << n << " x " << k << " transA " << transA
              << " transB " << transB << " beta " << beta << " at " << i << ", "
              << j;
        }
    }
  }
}

// The typed linear, its transpose and its weight gradient on the CPU
// device, with one type's rows past a GEMM block (4096: packed, multiplied
// and unpacked a block at a time; the weight gradient's sum added block by
// block), one type with a few rows and one with none, in scattered order:
// against double-precision sums.
TEST(RuntimeKernels, TypedGemmsOverBlocksMatchTheSums) {
  gnnrtContext ctx;
  std::mt19937 rng(99);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const int64_t rows = 9000, k = 40, n = 48, T = 3; // blocks as above
  std::vector<int32_t> types(rows);
  for (int64_t r = 0; r < rows; ++r)
    types[r] = r % 97 == 3 ? 2 : 0; // type 1 has no row
  std::vector<float> x(rows * k), g(rows * n), w(T * k * n);
  for (std::vector<float> *v : {&x, &g, &w})
    for (float &f : *v)
      f = normal(rng);
  std::vector<float> out(rows * n), gx(rows * k), gw(T * k * n, NAN);
  gnnrtMemRefI32 tm = {types.data(), types.data(), 0, {rows}, {1}};
  gnnrtMemRefF32 xm = view(x), gm = view(g), wm = view(w), om = view(out),
                 gxm = view(gx), gwm = view(gw);
  _mlir_ciface_gnnrtTypedGemm(&ctx, rows, k, n, T, &xm, &tm, &wm, &om);
  _mlir_ciface_gnnrtTypedGemmTranspose(&ctx, rows, k, n, T, &gm, &tm, &wm,
                                       &gxm);
  _mlir_ciface_gnnrtTypedOuterSum(&ctx, rows, k, n, T, &xm, &tm, &gm, &gwm);
  for (int64_t r = 0; r < rows; ++r) {
    const float *wt = w.data() + types[r] * k * n;
    for (int64_t j = 0; j < n; ++j) {
      double want = 0.0;
      for (int64_t i = 0; i < k; ++i)
        want += double(x[r * k + i]) * wt[i * n + j];
      ASSERT_NEAR(out[r * n + j], want, 1e-4 * (1.0 + std::abs(want)))
          << "row " << r;
    }
    for (int64_t i = 0; i < k; ++i) {
      double want = 0.0;
      for (int64_t j = 0; j < n; ++j)
        want += double(wt[i * n + j]) * g[r * n + j];
      ASSERT_NEAR(gx[r * k + i], want, 1e-4 * (1.0 + std::abs(want)))
          << "row " << r;
    }
  }
  for (int64_t t = 0; t < T; ++t)
    for (int64_t i = 0; i < k; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double want = 0.0, magnitude = 1.0;
        for (int64_t r = 0; r < rows; ++r)
          if (types[r] == t) {
            const double term = double(x[r * k + i]) * g[r * n + j];
            want += term;
            magnitude += std::abs(term);
          }
        ASSERT_NEAR(gw[(t * k + i) * n + j], want, 1e-5 * magnitude)
            << "type " << t << " at " << i << ", " << j;
      }
}

// Random.h's dropout draws (the runtime's gnnrtDropout and the compiled
// kernels draw the same): over 2^20 consecutive elements, and across the
// 2^32 boundary of the element index, each rate keeps its share of them
// within 5 sigma, and neighbouring elements are independent (both kept
// (1 - rate)^2 of the time); another key draws another mask.
TEST(RuntimeKernels, DropoutDrawsKeepTheRateAndAreIndependent) {
  constexpr int64_t kN = int64_t(1) << 20;
  const uint64_t key = gnnrt::dropoutKey(7, 3, 1);
  for (double rate : {0.1, 0.5, 0.9})
    for (uint64_t first : {uint64_t(0), (uint64_t(1) << 32) - kN / 2}) {
      const uint32_t threshold = gnnrt::dropoutThreshold(rate);
      int64_t kept = 0, pairs = 0;
      bool last = false;
      for (int64_t i = 0; i < kN; ++i) {
        const bool keep = gnnrt::dropoutDraw(key, first + i) >= threshold;
        kept += keep;
        pairs += keep && last;
        last = keep;
      }
      const double p = 1.0 - rate, q = p * p;
      EXPECT_NEAR(static_cast<double>(kept) / kN, p,
                  5 * std::sqrt(p * (1 - p) / kN))
          << "rate " << rate << " from element " << first;
      EXPECT_NEAR(static_cast<double>(pairs) / (kN - 1), q,
                  5 * std::sqrt(q * (1 - q) / kN) * 2)
          << "rate " << rate << " from element " << first;
    }
  int64_t same = 0;
  const uint64_t other = gnnrt::dropoutKey(7, 4, 1);
  for (int64_t i = 0; i < kN; ++i)
    same += (gnnrt::dropoutDraw(key, i) >= (1u << 23)) ==
            (gnnrt::dropoutDraw(other, i) >= (1u << 23));
  EXPECT_NEAR(static_cast<double>(same) / kN, 0.5, 5 * 0.5 / std::sqrt(kN));
}
