//===- Kernels.cpp - the CPU device: gather, scatter, SpMM, GEMM, loss ----===//
//
// Forward gathers run over destination rows of the CSC (backward ones over
// source rows of the CSR), one thread per block of rows: every output row has
// one writer, so there are no atomics and results do not depend on the
// schedule (the reduction order within a row is the CSC order).
//
//===----------------------------------------------------------------------===//

#include "CPU/Kernels.h"
#include "Context.h"
#include "gnnrt/GNNRuntime.h"

#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
#include <vector>

using namespace gnnrt;

namespace gnnrt::cpu {

namespace {

inline float *ptr(gnnrtMemRefF32 *m) { return m->aligned + m->offset; }
inline int32_t *ptr(gnnrtMemRefI32 *m) { return m->aligned + m->offset; }

void need(int64_t have, int64_t want, const std::string &what) {
  needElements(have, want, what);
}

/// The edges reducing into vertex v, in CSC position order.
struct Segments {
  const int64_t *offsets;
  const int32_t *edges; // null: edges are offsets[v] .. offsets[v+1]
  int64_t edge(int64_t i) const { return edges ? edges[i] : i; }
};

/// The segments of the rows [begin, end) of `side` (every row: end -1).
/// With `edgeIds` false the caller reads no edge's value (an unweighted
/// SpMM): the segments' edge ids need not have been built. An SpMM to the
/// sources (`csr`) reads the CSR's destinations too.
Segments segmentsOf(const DeviceGraph &graph, int64_t side, const char *what,
                    bool edgeIds = true, bool csr = false, int64_t begin = 0,
                    int64_t end = -1) {
  if (side == 1)
    return {graph.offsets[1], nullptr};
  const int64_t *offsets = graph.offsets[0];
  if (end < 0)
    end = graph.numSources;
  const int64_t edges = end > begin ? offsets[end] - offsets[begin] : 0;
  if (edgeIds)
    needGraphIndex(graph, 2, edges, what);
  if (csr)
    needGraphIndex(graph, 3, edges, what);
  return {offsets, graph.index[2]};
}

} // namespace

void cpuScatter(const DeviceGraph &graph, int64_t side, gnnrtMemRefF32 *in,
                gnnrtMemRefF32 *out, int64_t width) {
  const int64_t V = graph.numVertices, E = graph.numEdges;
  need(in->sizes[0], graph.rowsOn(side) * width, "gnnrtScatter input");
  need(out->sizes[0], E * width, "gnnrtScatter output");
  const float *x = ptr(in);
  float *y = ptr(out);
  if (side == 1) {
    const int64_t *indptr = graph.offsets[1];
#pragma omp parallel for schedule(dynamic, 64)
    for (int64_t v = 0; v < V; ++v) {
      const float *row = x + v * width;
      for (int64_t e = indptr[v]; e < indptr[v + 1]; ++e) {
        float *dst = y + e * width;
#pragma omp simd
        for (int64_t i = 0; i < width; ++i)
          dst[i] = row[i];
      }
    }
    return;
  }
  const int32_t *src = graph.index[0];
#pragma omp parallel for schedule(static, 1024)
  for (int64_t e = 0; e < E; ++e) {
    const float *row = x + static_cast<int64_t>(src[e]) * width;
    float *dst = y + e * width;
#pragma omp simd
    for (int64_t i = 0; i < width; ++i)
      dst[i] = row[i];
  }
}

void cpuGather(const DeviceGraph &graph, int64_t acc, int64_t side,
               gnnrtMemRefF32 *in, gnnrtMemRefF32 *out, gnnrtMemRefI32 *arg,
               int64_t width) {
  const int64_t V = graph.rowsOn(side), E = graph.numEdges;
  need(in->sizes[0], E * width, "gnnrtGather input");
  need(out->sizes[0], V * width, "gnnrtGather output");
  const bool extremum = acc == 2 || acc == 3;
  if (extremum && arg->sizes[0] > 0)
    need(arg->sizes[0], V * width, "gnnrtGather arg");
  const float *x = ptr(in);
  float *y = ptr(out);
  int32_t *a = extremum && arg->sizes[0] > 0 ? ptr(arg) : nullptr;
  const Segments seg = segmentsOf(graph, side, "gnnrtGather");
#pragma omp parallel for schedule(dynamic, 64)
  for (int64_t v = 0; v < V; ++v) {
    float *o = y + v * width;
    const int64_t begin = seg.offsets[v], end = seg.offsets[v + 1];
    if (begin == end) {
      for (int64_t i = 0; i < width; ++i)
        o[i] = 0.0f;
      if (a)
        for (int64_t i = 0; i < width; ++i)
          a[v * width + i] = -1;
      continue;
    }
    if (!extremum) {
      for (int64_t i = 0; i < width; ++i)
        o[i] = 0.0f;
      for (int64_t j = begin; j < end; ++j) {
        const float *row = x + seg.edge(j) * width;
#pragma omp simd
        for (int64_t i = 0; i < width; ++i)
          o[i] += row[i];
      }
      if (acc == 1) {
        const float inv = 1.0f / static_cast<float>(end - begin);
        for (int64_t i = 0; i < width; ++i)
          o[i] *= inv;
      }
      continue;
    }
    const int64_t first = seg.edge(begin);
    for (int64_t i = 0; i < width; ++i)
      o[i] = x[first * width + i];
    if (a)
      for (int64_t i = 0; i < width; ++i)
        a[v * width + i] = static_cast<int32_t>(first);
    for (int64_t j = begin + 1; j < end; ++j) {
      const int64_t e = seg.edge(j);
      const float *row = x + e * width;
      for (int64_t i = 0; i < width; ++i) {
        // Strict comparison: ties keep the earlier (lower CSC position) edge.
        const bool better = acc == 2 ? row[i] > o[i] : row[i] < o[i];
        if (better) {
          o[i] = row[i];
          if (a)
            a[v * width + i] = static_cast<int32_t>(e);
        }
      }
    }
  }
}

void cpuGatherArgBackward(const DeviceGraph &graph, int64_t side,
                          gnnrtMemRefF32 *gradOut, gnnrtMemRefI32 *arg,
                          gnnrtMemRefF32 *gradEdges, int64_t width) {
  const int64_t V = graph.rowsOn(side), E = graph.numEdges;
  need(gradOut->sizes[0], V * width, "gnnrtGatherArgBackward gradient");
  need(arg->sizes[0], V * width, "gnnrtGatherArgBackward arg");
  need(gradEdges->sizes[0], E * width, "gnnrtGatherArgBackward output");
  const float *g = ptr(gradOut);
  const int32_t *a = ptr(arg);
  float *ge = ptr(gradEdges);
  const Segments seg = segmentsOf(graph, side, "gnnrtGatherArgBackward");
  // Each edge belongs to one segment, so writing per segment is race-free.
#pragma omp parallel for schedule(dynamic, 64)
  for (int64_t v = 0; v < V; ++v) {
    for (int64_t j = seg.offsets[v]; j < seg.offsets[v + 1]; ++j) {
      const int64_t e = seg.edge(j);
      for (int64_t i = 0; i < width; ++i)
        ge[e * width + i] = a[v * width + i] == e ? g[v * width + i] : 0.0f;
    }
  }
}

namespace {

/// How spmmChunk prefetches: the row of the edge `rows` positions ahead, its
/// first `lines` cache lines of the pass's columns.
struct SpmmPrefetch {
  int64_t rows;
  int64_t lines;
};

/// GNNRT_SPMM_PREFETCH=ROWS,LINES overrides the rule below for every width
/// (ROWS 0: no prefetch), to tune another machine or to measure the rule
/// against another setting in one run (bench/gcn_arxiv.py); a pass has at
/// most 8 lines (128 columns).
std::optional<SpmmPrefetch> prefetchOverride() {
  static const std::optional<SpmmPrefetch> fixed =
      []() -> std::optional<SpmmPrefetch> {
    const char *env = std::getenv("GNNRT_SPMM_PREFETCH");
    if (!env || !*env)
      return std::nullopt;
    long long rows = -1, lines = -1;
    int used = 0;
    if (std::sscanf(env, "%lld,%lld%n", &rows, &lines, &used) != 2 ||
        env[used] != '\0' || rows < 0 || rows > 4096 || lines < 1 || lines > 8)
      fatal(std::string("GNNRT_SPMM_PREFETCH: expected ROWS,LINES (rows "
                        "ahead in [0, 4096], lines of a row in [1, 8]) but "
                        "got '") +
            env + "'");
    return SpmmPrefetch{rows, lines};
  }();
  return fixed;
}

/// The rows an edge reads are scattered over the whole input, so the loop
/// is bound by how many of their cache lines are in flight: about 256 per
/// thread, counting at most 16 lines of a row (a wider row is read in
/// passes of 128 columns, and the hardware streams the pass's neighbour
/// lines), between 16 and 64 rows ahead, every line of the pass. Measured
/// with gnnrt-bench on the arxiv-shaped RMAT graph, 2 threads, Zen 5
/// (docs/MemoryBudget.md, "Cache blocking"): F = 128 best at 32 rows ahead
/// (1.5x the 8 rows and 4 lines of before), F = 256 at 16, F <= 64 at 64.
SpmmPrefetch prefetchFor(int64_t width) {
  constexpr int64_t kLinesInFlight = 256, kFloatsPerLine = 16;
  if (std::optional<SpmmPrefetch> fixed = prefetchOverride())
    return *fixed;
  const int64_t lines =
      std::min<int64_t>((width + kFloatsPerLine - 1) / kFloatsPerLine, 16);
  return {
      std::clamp<int64_t>(kLinesInFlight / std::max<int64_t>(lines, 1), 16, 64),
      8};
}

/// One aggregation's operands: out row v = sum over the positions j of its
/// segment of w[edge(j)] * in[other[j]] (w = 1 when null), times `scale`.
/// `other` is indexed by position (the CSR's destinations for a to-src
/// aggregation), so only weighted aggregations read the edge ids.
struct SpmmOperands {
  Segments seg;
  const int32_t *other;
  const float *w;
  const float *x;
  int64_t width;
  int64_t lastPosition;
  /// The input row `x` holds first: row u is at x + (u - base) * width (a
  /// stage of a row-partitioned SpMM holds only the rows it received).
  int64_t base = 0;
  /// The output row `y` holds first (a stage of the sums to the sources
  /// writes only its range).
  int64_t outBase = 0;
  /// How spmmChunk prefetches: prefetchFor(width), set once per call by
  /// spmmTile and spmmTiled (not per row).
  SpmmPrefetch prefetch{0, 1};
};

/// `op` with its prefetch set for its width.
SpmmOperands withPrefetch(const SpmmOperands &op) {
  SpmmOperands o = op;
  o.prefetch = prefetchFor(op.width);
  return o;
}

/// Columns [col, col + N) of one output row, accumulated in registers (N is
/// a multiple of 16 and at most 128: eight 512-bit registers) and stored once,
/// instead of a load and a store of the output per edge and element.
/// With `accumulate`, the sum starts from the row so far, so that a row
/// computed in tiles adds its edges in the same order as a whole one: the
/// same floats, bit for bit.
template <int64_t N, bool Indirect>
inline void spmmChunk(const SpmmOperands &op, int64_t begin, int64_t end,
                      int64_t col, float scale, float *o, bool accumulate) {
  const int32_t *other = op.other, *edges = op.seg.edges;
  const float *w = op.w, *x = op.x + col;
  const int64_t width = op.width, last = op.lastPosition;
  const int64_t ahead = op.prefetch.rows,
                span = std::min<int64_t>(N, op.prefetch.lines * 16);
  alignas(64) float acc[N];
#pragma omp simd
  for (int64_t i = 0; i < N; ++i)
    acc[i] = accumulate ? o[col + i] : 0.0f;
  for (int64_t j = begin; j < end; ++j) {
    if (ahead > 0 && j + ahead < last) {
      const float *row =
          x + (static_cast<int64_t>(other[j + ahead]) - op.base) * width;
      for (int64_t i = 0; i < span; i += 16)
        __builtin_prefetch(row + i, 0, 3);
    }
    const float c = w ? w[Indirect ? edges[j] : j] : 1.0f;
    const float *row = x + (static_cast<int64_t>(other[j]) - op.base) * width;
#pragma omp simd aligned(acc : 64)
    for (int64_t i = 0; i < N; ++i)
      acc[i] += c * row[i];
  }
#pragma omp simd
  for (int64_t i = 0; i < N; ++i)
    o[col + i] = acc[i] * scale;
}

/// Columns [col, width) (fewer than 16) of one output row, in memory.
inline void spmmTail(const SpmmOperands &op, int64_t begin, int64_t end,
                     int64_t col, float scale, float *o, bool accumulate) {
  if (!accumulate)
    for (int64_t i = col; i < op.width; ++i)
      o[i] = 0.0f;
  for (int64_t j = begin; j < end; ++j) {
    const float c = op.w ? op.w[op.seg.edge(j)] : 1.0f;
    const float *row =
        op.x + (static_cast<int64_t>(op.other[j]) - op.base) * op.width;
    for (int64_t i = col; i < op.width; ++i)
      o[i] += c * row[i];
  }
  for (int64_t i = col; i < op.width; ++i)
    o[i] *= scale;
}

/// One output row from the positions [begin, end) of its segment: column
/// chunks of 128, 64, 32 and 16 (a pass over the edges each, their indices
/// staying in L1) and a tail of fewer than 16 columns.
template <bool Indirect>
inline void spmmRow(const SpmmOperands &op, int64_t begin, int64_t end,
                    float scale, float *o, bool accumulate) {
  const int64_t width = op.width;
  int64_t col = 0;
  for (; col + 128 <= width; col += 128)
    spmmChunk<128, Indirect>(op, begin, end, col, scale, o, accumulate);
  if (col + 64 <= width) {
    spmmChunk<64, Indirect>(op, begin, end, col, scale, o, accumulate);
    col += 64;
  }
  if (col + 32 <= width) {
    spmmChunk<32, Indirect>(op, begin, end, col, scale, o, accumulate);
    col += 32;
  }
  if (col + 16 <= width) {
    spmmChunk<16, Indirect>(op, begin, end, col, scale, o, accumulate);
    col += 16;
  }
  if (col < width)
    spmmTail(op, begin, end, col, scale, o, accumulate);
}

/// Output row v from the edges whose other end lies in [lo, hi) (a
/// contiguous range of its segment: the other ends ascend within a segment;
/// the loader checks it for the CSC, bindDataset builds the CSR so; found by
/// binary search). A row's range from lo = 0 is stored, a later one added;
/// a mean divides by the whole row's count at the range ending at V.
template <bool Indirect>
inline void spmmRowRange(const SpmmOperands &op, int64_t mean, int64_t v,
                         int32_t lo, int32_t hi, int64_t V, float *y) {
  const int64_t *offsets = op.seg.offsets;
  const int32_t *other = op.other;
  const int64_t rowBegin = offsets[v], rowEnd = offsets[v + 1];
  const int64_t begin =
      lo == 0 ? rowBegin
              : std::lower_bound(other + rowBegin, other + rowEnd, lo) - other;
  const int64_t end =
      hi == V ? rowEnd
              : std::lower_bound(other + begin, other + rowEnd, hi) - other;
  const float scale = hi == V && mean && rowEnd > rowBegin
                          ? 1.0f / static_cast<float>(rowEnd - rowBegin)
                          : 1.0f;
  spmmRow<Indirect>(op, begin, end, scale, y + (v - op.outBase) * op.width,
                    lo > 0);
}

/// A tile after an input chunk's first adds to its output rows: each row
/// is loaded before its edges are added, a miss per line of a row that the
/// edges' prefetch does not cover. Its lines (at most 16) are prefetched
/// for writing this many rows ahead.
constexpr int64_t kOutputRowsAhead = 4;

inline void prefetchOutputRow(const SpmmOperands &op, float *y, int64_t v) {
  const float *row = y + (v - op.outBase) * op.width;
  const int64_t floats = std::min<int64_t>(op.width, 256);
  for (int64_t i = 0; i < floats; i += 16)
    __builtin_prefetch(row + i, 1, 3);
}

/// Output rows [begin, end) from the input rows [lo, hi) (gnnrtSpmmRows).
template <bool Indirect>
void spmmTile(const SpmmOperands &op, int64_t mean, int64_t begin, int64_t end,
              int32_t lo, int32_t hi, int64_t V, float *y) {
  const SpmmOperands tile = withPrefetch(op);
#pragma omp parallel for schedule(dynamic, 64)
  for (int64_t v = begin; v < end; ++v) {
    if (lo > 0 && v + kOutputRowsAhead < end)
      prefetchOutputRow(tile, y, v + kOutputRowsAhead);
    spmmRowRange<Indirect>(tile, mean, v, lo, hi, V, y);
  }
}

/// The P x P chunk tiling (gnnrtSpmm's `chunks`): vertex chunk c is
/// [floor(c V / P), floor((c + 1) V / P)). For each output chunk, the input
/// chunks in turn (spmmRowRange).
template <bool Indirect>
void spmmTiled(const SpmmOperands &op, int64_t mean, int64_t V, int64_t P,
               float *y) {
  auto bound = [&](int64_t c) { return c * V / P; };
  const SpmmOperands tiles = withPrefetch(op);
#pragma omp parallel
  for (int64_t j = 0; j < P; ++j)
    for (int64_t i = 0; i < P; ++i) {
      const int32_t lo = static_cast<int32_t>(bound(i)),
                    hi = static_cast<int32_t>(bound(i + 1));
#pragma omp for schedule(dynamic, 64)
      for (int64_t v = bound(j); v < bound(j + 1); ++v) {
        if (lo > 0 && v + kOutputRowsAhead < bound(j + 1))
          prefetchOutputRow(tiles, y, v + kOutputRowsAhead);
        spmmRowRange<Indirect>(tiles, mean, v, lo, hi, V, y);
      }
    }
}

} // namespace

/// The operands of an SpMM to `side`, their sizes checked (`entry` names
/// the entry point in the messages).
static SpmmOperands spmmOperands(const DeviceGraph &graph, int64_t side,
                                 gnnrtMemRefF32 *weights, gnnrtMemRefF32 *in,
                                 gnnrtMemRefF32 *out, int64_t width,
                                 const std::string &entry, int64_t begin,
                                 int64_t end) {
  const int64_t V = graph.rowsOn(side), E = graph.numEdges;
  need(in->sizes[0], graph.rowsOn(1 - side) * width,
       (entry + " input").c_str());
  need(out->sizes[0], V * width, (entry + " output").c_str());
  const bool weighted = weights->sizes[0] > 0;
  if (weighted)
    need(weights->sizes[0], E, (entry + " weights").c_str());
  const Segments seg = segmentsOf(graph, side, entry.c_str(), weighted,
                                  /*csr=*/true, begin, end);
  return SpmmOperands{seg,
                      side == 1 ? graph.index[0] : graph.index[3],
                      weighted ? ptr(weights) : nullptr,
                      ptr(in),
                      width,
                      seg.offsets[V]};
}

void cpuSpmm(const DeviceGraph &graph, int64_t side, int64_t mean,
             int64_t chunks, gnnrtMemRefF32 *weights, gnnrtMemRefF32 *in,
             gnnrtMemRefF32 *out, int64_t width) {
  // Output rows V, input rows In (equal but in a row-partitioned program).
  const int64_t V = graph.rowsOn(side), In = graph.rowsOn(1 - side);
  if (chunks < 1)
    fatal("gnnrtSpmm: " + std::to_string(chunks) + " chunks");
  if (chunks > 1 && V != In)
    fatal("gnnrtSpmm: chunk tiling of a row-partitioned graph");
  // More chunks than vertices would only add empty ones.
  const int64_t P = std::min<int64_t>(chunks, std::max<int64_t>(V, 1));
  const SpmmOperands op =
      spmmOperands(graph, side, weights, in, out, width, "gnnrtSpmm", 0, V);
  const Segments &seg = op.seg;
  float *y = ptr(out);
  if (P > 1) {
    if (seg.edges)
      spmmTiled<true>(op, mean, V, P, y);
    else
      spmmTiled<false>(op, mean, V, P, y);
  } else if (seg.edges) {
    spmmTile<true>(op, mean, 0, V, 0, static_cast<int32_t>(In), In, y);
  } else {
    spmmTile<false>(op, mean, 0, V, 0, static_cast<int32_t>(In), In, y);
  }
}

void cpuSpmmRows(const DeviceGraph &graph, int64_t side, int64_t mean,
                 gnnrtMemRefF32 *weights, gnnrtMemRefF32 *in,
                 gnnrtMemRefF32 *out, int64_t width, int64_t begin, int64_t end,
                 int64_t inBegin, int64_t inEnd) {
  const int64_t V = graph.rowsOn(1 - side); // the input rows' end
  const SpmmOperands op = spmmOperands(graph, side, weights, in, out, width,
                                       "gnnrtSpmmRows", begin, end);
  const auto lo = static_cast<int32_t>(inBegin),
             hi = static_cast<int32_t>(inEnd);
  if (op.seg.edges)
    spmmTile<true>(op, mean, begin, end, lo, hi, V, ptr(out));
  else
    spmmTile<false>(op, mean, begin, end, lo, hi, V, ptr(out));
}

/// A staged SpMM's edge weights: null without (an empty memref), else
/// checked to hold one per edge of `graph`.
static const float *stageWeights(const DeviceGraph &graph,
                                 gnnrtMemRefF32 *weights, const char *what) {
  if (weights->sizes[0] == 0)
    return nullptr;
  need(weights->sizes[0], graph.numEdges, what);
  return ptr(weights);
}

void cpuSpmmStage(const DeviceGraph &graph, int64_t mean,
                  gnnrtMemRefF32 *weights, const float *rows, int64_t lo,
                  int64_t hi, gnnrtMemRefF32 *out, int64_t width, int64_t end) {
  const int64_t V = graph.numVertices, S = graph.numSources;
  needRange(lo, hi, S, "gnnrtSpmmBroadcast: stage rows");
  needRange(0, end, V, "gnnrtSpmmBroadcast: own rows");
  need(out->sizes[0], V * width, "gnnrtSpmmBroadcast output");
  SpmmOperands op{segmentsOf(graph, 1, "gnnrtSpmmBroadcast"),
                  graph.index[0],
                  stageWeights(graph, weights, "gnnrtSpmmBroadcast weights"),
                  rows,
                  width,
                  graph.offsets[1][V]};
  op.base = lo;
  spmmTile<false>(op, mean, 0, end, static_cast<int32_t>(lo),
                  static_cast<int32_t>(hi), S, ptr(out));
}

void cpuSpmmSourceStage(const DeviceGraph &graph, gnnrtMemRefF32 *weights,
                        gnnrtMemRefF32 *in, int64_t lo, int64_t hi, float *rows,
                        int64_t width) {
  const int64_t V = graph.numVertices, S = graph.numSources;
  needRange(lo, hi, S, "gnnrtSpmmReduce: stage rows");
  need(in->sizes[0], V * width, "gnnrtSpmmReduce input");
  const float *w = stageWeights(graph, weights, "gnnrtSpmmReduce weights");
  const Segments seg = segmentsOf(graph, 0, "gnnrtSpmmReduce", w != nullptr,
                                  /*csr=*/true, lo, hi);
  SpmmOperands op{seg, graph.index[3], w, ptr(in), width, seg.offsets[S]};
  op.outBase = lo;
  spmmTile<true>(op, /*mean=*/0, lo, hi, 0, static_cast<int32_t>(V), V, rows);
}

namespace {

/// The rows of op(A) and C that one sgemm takes. OpenBLAS packs its
/// operands into per-thread buffers of 128 MiB, and for a tall A with a
/// narrow B (the first linear: |V| x F times F x h) it packed every row of
/// A (a k-panel at a time): 85 MB more resident at the arxiv shape, 246 MB
/// at Reddit's, which no memory budget counts. In blocks of this many rows
/// it packs a block at a time (2.7 and 5.4 MB), and ran as fast or faster
/// (docs/MemoryBudget.md, "What the BLAS keeps").
constexpr int64_t kGemmRowBlock = 4096;

/// OpenBLAS runs a product of at most this many multiply-adds (m n k) on
/// one thread; a block keeps at least this many per thread.
constexpr int64_t kGemmSmall = int64_t(1) << 18;

/// The rows of a block: kGemmRowBlock, or more where n k is so small that
/// such a block would run on one thread (its packing is small then).
int64_t gemmRowBlock(int64_t n, int64_t k) {
  const int64_t perRow = std::max<int64_t>(n * k, 1);
  return std::max(kGemmRowBlock,
                  kGemmSmall * omp_get_max_threads() / perRow + 1);
}

/// C = alpha op(A) op(B) + beta C, row-major, in blocks of gemmRowBlock
/// rows of C: the same products as one call, up to the BLAS kernels'
/// rounding (where a row sits in a block changes the last bits).
void blockedSgemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
                  float alpha, const float *a, int64_t lda, const float *b,
                  int64_t ldb, float beta, float *c, int64_t ldc) {
  const int64_t block = gemmRowBlock(n, k);
  for (int64_t r = 0; r < m; r += block) {
    const int64_t rows = std::min(block, m - r);
    // Row r of op(A): row r of A, or column r of A transposed.
    const float *ar = transA ? a + r : a + r * lda;
    cblas_sgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans,
                transB ? CblasTrans : CblasNoTrans, static_cast<int>(rows),
                static_cast<int>(n), static_cast<int>(k), alpha, ar,
                static_cast<int>(lda), b, static_cast<int>(ldb), beta,
                c + r * ldc, static_cast<int>(ldc));
  }
}

} // namespace

void cpuGemm(int64_t transA, int64_t transB, int64_t m, int64_t n, int64_t k,
             float alpha, gnnrtMemRefF32 *a, gnnrtMemRefF32 *b, float beta,
             gnnrtMemRefF32 *c) {
  // OpenBLAS's CBLAS takes int dimensions: the loader bounds |V| and |E| at
  // INT32_MAX and the verifier rows at 2^24, so this holds for every model.
  if (m < 0 || n < 0 || k < 0 || m > INT32_MAX || n > INT32_MAX ||
      k > INT32_MAX)
    fatal("gnnrtGemm: dimensions " + std::to_string(m) + " x " +
          std::to_string(n) + " x " + std::to_string(k) +
          " outside BLAS's int range");
  need(a->sizes[0], m * k, "gnnrtGemm A");
  need(b->sizes[0], k * n, "gnnrtGemm B");
  need(c->sizes[0], m * n, "gnnrtGemm C");
  if (m == 0 || n == 0)
    return;
  if (k == 0) {
    float *cp = ptr(c);
    for (int64_t i = 0; i < m * n; ++i)
      cp[i] = beta == 0.0f ? 0.0f : beta * cp[i];
    return;
  }
  blockedSgemm(transA, transB, m, n, k, alpha, ptr(a), transA ? m : k, ptr(b),
               transB ? k : n, beta, ptr(c), n);
}

/// out[j] = sum over rows r of in[r, j]. Each thread sums a contiguous
/// block of rows row-major (vectorised over j) into blocks of 64 rows, whose
/// sums it adds to its partial; the partials are added in thread order, so the
/// result depends only on the thread count.
void cpuSumRows(int64_t rows, int64_t width, gnnrtMemRefF32 *in,
                gnnrtMemRefF32 *out, bool accumulate) {
  need(in->sizes[0], rows * width, "gnnrtSumRows input");
  need(out->sizes[0], width, "gnnrtSumRows output");
  const float *x = ptr(in);
  float *y = ptr(out);
  if (!accumulate)
    for (int64_t j = 0; j < width; ++j)
      y[j] = 0.0f;
  if (rows == 0 || width == 0)
    return;
  constexpr int64_t kBlock = 64;
  const int64_t blocks = (rows + kBlock - 1) / kBlock;
  const int threads =
      static_cast<int>(std::min<int64_t>(omp_get_max_threads(), blocks));
  std::vector<float> partial(static_cast<size_t>(threads) * width * 2, 0.0f);
#pragma omp parallel num_threads(threads)
  {
    const int t = omp_get_thread_num();
    float *acc = partial.data() + static_cast<size_t>(t) * width * 2;
    float *block = acc + width;
    const int64_t b0 = blocks * t / threads, b1 = blocks * (t + 1) / threads;
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t r0 = b * kBlock, r1 = std::min(rows, r0 + kBlock);
      const float *row = x + r0 * width;
      for (int64_t j = 0; j < width; ++j)
        block[j] = row[j];
      for (int64_t r = r0 + 1; r < r1; ++r) {
        row += width;
        for (int64_t j = 0; j < width; ++j)
          block[j] += row[j];
      }
      for (int64_t j = 0; j < width; ++j)
        acc[j] += block[j];
    }
  }
  for (int t = 0; t < threads; ++t)
    for (int64_t j = 0; j < width; ++j)
      y[j] += partial[static_cast<size_t>(t) * width * 2 + j];
}

namespace {

/// Rows grouped by type (a counting sort): rows of type t are
/// order[offsets[t] .. offsets[t+1]), in ascending row order. Types outside
/// [0, numTypes) stop the run. The storage is reused from call to call, so
/// epochs after the first allocate nothing.
struct TypeGroups {
  std::vector<int64_t> &offsets, &order;
  TypeGroups(const int32_t *t, int64_t rows, int64_t numTypes)
      : offsets(scratch().first), order(scratch().second) {
    offsets.assign(numTypes + 1, 0);
    order.resize(rows);
    for (int64_t r = 0; r < rows; ++r) {
      if (t[r] < 0 || t[r] >= numTypes)
        fatal("edge type " + std::to_string(t[r]) + " of edge " +
              std::to_string(r) + " outside [0, " + std::to_string(numTypes) +
              ") of the typed linear's weight");
      ++offsets[t[r] + 1];
    }
    for (int64_t i = 0; i < numTypes; ++i)
      offsets[i + 1] += offsets[i];
    std::vector<int64_t> &fill = scratchFill();
    fill.assign(offsets.begin(), offsets.end() - 1);
    for (int64_t r = 0; r < rows; ++r)
      order[fill[t[r]]++] = r;
  }
  int64_t size(int64_t tau) const { return offsets[tau + 1] - offsets[tau]; }
  int64_t numTypes() const { return offsets.size() - 1; }
  static std::pair<std::vector<int64_t>, std::vector<int64_t>> &scratch() {
    static std::pair<std::vector<int64_t>, std::vector<int64_t>> s;
    return s;
  }
  static std::vector<int64_t> &scratchFill() {
    static std::vector<int64_t> s;
    return s;
  }
};

/// Packing buffers of the grouped GEMMs, reused from call to call.
std::vector<float> &packA() {
  static std::vector<float> s;
  return s;
}
std::vector<float> &packB() {
  static std::vector<float> s;
  return s;
}

/// Copies the rows of one group into a contiguous block (or back).
void gatherRows(const float *src, float *dst, const int64_t *rows, int64_t n,
                int64_t width) {
#pragma omp parallel for schedule(static, 256)
  for (int64_t i = 0; i < n; ++i)
    std::memcpy(dst + i * width, src + rows[i] * width, width * sizeof(float));
}
void scatterRows(const float *src, float *dst, const int64_t *rows, int64_t n,
                 int64_t width) {
#pragma omp parallel for schedule(static, 256)
  for (int64_t i = 0; i < n; ++i)
    std::memcpy(dst + rows[i] * width, src + i * width, width * sizeof(float));
}

/// For each type `tau` with `m` rows: packs those rows of `in` (`inWidth`
/// wide), calls `gemm(tau, m, packedIn, packedOut)` and unpacks the
/// `outWidth`-wide product into the same rows of `out`.
template <typename Gemm>
void perTypeRowGemm(const TypeGroups &groups, const float *in, int64_t inWidth,
                    float *out, int64_t outWidth, Gemm gemm) {
  std::vector<float> &packedIn = packA(), &packedOut = packB();
  for (int64_t tau = 0, e = groups.numTypes(); tau < e; ++tau) {
    int64_t m = groups.size(tau);
    if (!m)
      continue;
    const int64_t *idx = groups.order.data() + groups.offsets[tau];
    // In blocks of rows, so that the packed copies stay small (they are
    // the runtime's, outside the budget's counts).
    const int64_t block = gemmRowBlock(outWidth, inWidth);
    for (int64_t r = 0; r < m; r += block) {
      const int64_t rows = std::min(block, m - r);
      packedIn.resize(rows * inWidth);
      packedOut.resize(rows * outWidth);
      gatherRows(in, packedIn.data(), idx + r, rows, inWidth);
      gemm(tau, rows, packedIn.data(), packedOut.data());
      scatterRows(packedOut.data(), out, idx + r, rows, outWidth);
    }
  }
}

} // namespace

// The typed linear as a grouped GEMM: the rows of each type are packed, one
// sgemm per type, the results unpacked.
void cpuTypedGemm(gnnrtContext *ctx, int64_t rows, int64_t k, int64_t n,
                  int64_t numTypes, gnnrtMemRefF32 *x, gnnrtMemRefI32 *types,
                  gnnrtMemRefF32 *w, gnnrtMemRefF32 *out) {
  (void)ctx;
  need(x->sizes[0], rows * k, "gnnrtTypedGemm x");
  need(types->sizes[0], rows, "gnnrtTypedGemm types");
  need(w->sizes[0], numTypes * k * n, "gnnrtTypedGemm w");
  need(out->sizes[0], rows * n, "gnnrtTypedGemm out");
  TypeGroups groups(ptr(types), rows, numTypes);
  const float *wt = ptr(w);
  perTypeRowGemm(groups, ptr(x), k, ptr(out), n,
                 [&](int64_t tau, int64_t m, const float *px, float *py) {
                   blockedSgemm(false, false, m, n, k, 1.0f, px, k,
                                wt + tau * k * n, n, 0.0f, py, n);
                 });
}

void cpuTypedGemmTranspose(gnnrtContext *ctx, int64_t rows, int64_t k,
                           int64_t n, int64_t numTypes, gnnrtMemRefF32 *g,
                           gnnrtMemRefI32 *types, gnnrtMemRefF32 *w,
                           gnnrtMemRefF32 *gx) {
  (void)ctx;
  need(g->sizes[0], rows * n, "gnnrtTypedGemmTranspose g");
  need(types->sizes[0], rows, "gnnrtTypedGemmTranspose types");
  need(w->sizes[0], numTypes * k * n, "gnnrtTypedGemmTranspose w");
  need(gx->sizes[0], rows * k, "gnnrtTypedGemmTranspose gx");
  TypeGroups groups(ptr(types), rows, numTypes);
  const float *wt = ptr(w);
  perTypeRowGemm(groups, ptr(g), n, ptr(gx), k,
                 [&](int64_t tau, int64_t m, const float *pg, float *px) {
                   blockedSgemm(false, true, m, k, n, 1.0f, pg, n,
                                wt + tau * k * n, n, 0.0f, px, k);
                 });
}

void cpuTypedOuterSum(gnnrtContext *ctx, int64_t rows, int64_t k, int64_t n,
                      int64_t numTypes, gnnrtMemRefF32 *x,
                      gnnrtMemRefI32 *types, gnnrtMemRefF32 *g,
                      gnnrtMemRefF32 *gw) {
  (void)ctx;
  need(x->sizes[0], rows * k, "gnnrtTypedOuterSum x");
  need(types->sizes[0], rows, "gnnrtTypedOuterSum types");
  need(g->sizes[0], rows * n, "gnnrtTypedOuterSum g");
  need(gw->sizes[0], numTypes * k * n, "gnnrtTypedOuterSum gw");
  TypeGroups groups(ptr(types), rows, numTypes);
  std::vector<float> &packedX = packA(), &packedG = packB();
  for (int64_t tau = 0; tau < numTypes; ++tau) {
    int64_t m = groups.size(tau);
    float *out = ptr(gw) + tau * k * n;
    if (!m) {
      std::memset(out, 0, k * n * sizeof(float));
      continue;
    }
    const int64_t *idx = groups.order.data() + groups.offsets[tau];
    // The sum over the type's rows in blocks of them, each added to the
    // last (the packed copies stay small).
    const int64_t block = gemmRowBlock(k, n);
    for (int64_t r = 0; r < m; r += block) {
      const int64_t rows = std::min(block, m - r);
      packedX.resize(rows * k);
      packedG.resize(rows * n);
      gatherRows(ptr(x), packedX.data(), idx + r, rows, k);
      gatherRows(ptr(g), packedG.data(), idx + r, rows, n);
      cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, k, n, rows, 1.0f,
                  packedX.data(), k, packedG.data(), n, r == 0 ? 0.0f : 1.0f,
                  out, n);
    }
  }
}

float cpuSoftmaxCrossEntropy(gnnrtContext *ctx, gnnrtMemRefF32 *logits,
                             gnnrtMemRefF32 *grad, int64_t classes,
                             int64_t split, int64_t begin, int64_t end) {
  const Dataset &ds = ctx->ds;
  const int64_t V = ds.numVertices;
  need(logits->sizes[0], V * classes, "gnnrtSoftmaxCrossEntropy logits");
  const bool wantGrad = grad->sizes[0] > 0;
  if (wantGrad)
    need(grad->sizes[0], V * classes, "gnnrtSoftmaxCrossEntropy gradient");
  if (split < 0 || split > 2)
    fatal("gnnrtSoftmaxCrossEntropy: unknown split");
  const float *z = ptr(logits);
  float *gz = wantGrad ? ptr(grad) : nullptr;
  const uint8_t *mask = ds.masks[split].data();
  // The loss is the mean over the split's labelled vertices of all ranks
  // (ctx->lossCount, shared preloading), else of this one.
  int64_t count = ctx->lossCount[split];
  if (count < 0) {
    count = 0;
    for (int64_t v = 0; v < V; ++v)
      count += mask[v] && ds.labels[v] >= 0;
  }
  const double inv = count ? 1.0 / static_cast<double>(count) : 0.0;
  double total = 0.0;
#pragma omp parallel for schedule(static, 256) reduction(+ : total)
  for (int64_t v = begin; v < end; ++v) {
    const float *row = z + v * classes;
    float *grow = gz ? gz + v * classes : nullptr;
    const int64_t y = ds.labels[v];
    if (!mask[v] || y < 0) {
      if (grow)
        for (int64_t c = 0; c < classes; ++c)
          grow[c] = 0.0f;
      continue;
    }
    if (y >= classes)
      fatal("label " + std::to_string(y) + " >= number of logits " +
            std::to_string(classes));
    // One f32 exponential per logit (kept in the gradient row), summed in
    // double.
    float mx = row[0];
    for (int64_t c = 1; c < classes; ++c)
      mx = std::max(mx, row[c]);
    double sum = 0.0;
    for (int64_t c = 0; c < classes; ++c) {
      const float e = std::exp(row[c] - mx);
      if (grow)
        grow[c] = e;
      sum += e;
    }
    const double lse = mx + std::log(sum);
    total += lse - row[y];
    if (grow) {
      const float scale = static_cast<float>(inv / sum);
      for (int64_t c = 0; c < classes; ++c)
        grow[c] *= scale;
      grow[y] -= static_cast<float>(inv);
    }
  }
  return static_cast<float>(total * inv);
}

void cpuDropout(gnnrtContext *ctx, int64_t op, double rate, gnnrtMemRefF32 *in,
                gnnrtMemRefF32 *out) {
  const int64_t n = in->sizes[0];
  need(out->sizes[0], n, "gnnrtDropout output");
  if (ctx->dropoutOverride >= 0.0)
    rate = ctx->dropoutOverride;
  const float *x = ptr(in);
  float *y = ptr(out);
  if (!ctx->training || rate <= 0.0) {
    if (x != y)
      for (int64_t i = 0; i < n; ++i)
        y[i] = x[i];
    return;
  }
  const float scale = static_cast<float>(1.0 / (1.0 - rate));
  const uint64_t key =
      dropoutKey(globalMaskSeed(ctx), static_cast<uint64_t>(ctx->step),
                 static_cast<uint64_t>(op));
  // Keep an element when its 24-bit draw is at least rate * 2^24.
  const uint32_t threshold = dropoutThreshold(rate);
#pragma omp parallel for schedule(static, 4096)
  for (int64_t i = 0; i < n; ++i)
    y[i] = dropoutDraw(key, static_cast<uint64_t>(i)) >= threshold
               ? x[i] * scale
               : 0.0f;
}

} // namespace gnnrt::cpu
