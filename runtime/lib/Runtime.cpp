//===- Runtime.cpp - context, data access, parameters, optimizers ---------===//

#include "Context.h"
#include "gnnrt/GNNRuntime.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

using namespace gnnrt;

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

namespace gnnrt {

static std::string fatalPrefix;
static void (*fatalAbort)(int) = nullptr;

void setFatalHandler(const std::string &prefix, void (*abort)(int code)) {
  fatalPrefix = prefix;
  fatalAbort = abort;
}

[[noreturn]] void fatal(const std::string &message) {
  std::fflush(stdout);
  std::fprintf(stderr, "error: %s%s\n", fatalPrefix.c_str(), message.c_str());
  if (fatalAbort) {
    std::fflush(stderr);
    fatalAbort(1);
  }
  std::exit(1);
}

void needElements(int64_t have, int64_t want, const std::string &what) {
  if (have < want)
    fatal(what + ": buffer of " + std::to_string(have) + " elements, " +
          std::to_string(want) + " needed");
}

void needGraphIndex(const DeviceGraph &graph, int which, int64_t edges,
                    const char *what) {
  static const char *const names[] = {"sources", "destinations",
                                      "CSR's edge ids", "CSR's destinations"};
  if (!graph.index[which] && edges > 0)
    fatal(std::string(what) + " needs the graph's " + names[which] +
          " (index " + std::to_string(which) +
          "), which were not built: the model description's graph-arrays "
          "record does not name them");
}

void needRange(int64_t begin, int64_t end, int64_t n, const std::string &what) {
  if (begin < 0 || end < begin || end > n)
    fatal(what + " [" + std::to_string(begin) + ", " + std::to_string(end) +
          ") of " + std::to_string(n));
}

void needGraphRows(gnnrtContext *ctx, int64_t side, int64_t lo, int64_t hi,
                   const char *what) {
  // No rows read no edges (a row chunk may be empty on a small graph).
  if (ctx->graphOnStorage && lo < hi &&
      !ctx->graphOnStorage->covers(static_cast<int>(side != 0), lo, hi))
    fatal(std::string(what) +
          ": the graph is out of core and no window "
          "(gnnrtGraphWindow) holds the " +
          (side ? "destination" : "source") + " rows [" + std::to_string(lo) +
          ", " + std::to_string(hi) +
          ") (the program reads edges outside its row chunks)");
}

bool envFlag(const char *name, bool unset) {
  const char *env = std::getenv(name);
  if (!env)
    return unset;
  if (std::strcmp(env, "0") != 0 && std::strcmp(env, "1") != 0)
    fatal(std::string(name) + ": expected 0 or 1 but got '" + env + "'");
  return std::strcmp(env, "1") == 0;
}

int64_t ParamInfo::size() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

double uniform01(uint64_t seed, uint64_t a, uint64_t b, uint64_t c) {
  uint64_t h = mix64(
      mix64(mix64(seed ^ mix64(a)) ^ mix64(b + 0x632be59bd9b4e019ULL)) ^ c);
  return static_cast<double>(h >> 11) * (1.0 / 9007199254740992.0);
}

uint64_t hashText(const std::string &s) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : s)
    h = (h ^ c) * 1099511628211ULL;
  return h;
}

bool isFeatureShard(const gnnrtContext *ctx, const ParamInfo &p) {
  return ctx->featureTotal >= 0 && !p.dims.empty() && p.dims[0] == -1;
}

void initParams(gnnrtContext *ctx, uint64_t seed) {
  ctx->params.clear();
  ctx->grads.clear();
  ctx->opt.clear();
  for (const ParamInfo &p : ctx->model.params) {
    int64_t n = p.size();
    // A feature shard (feature partitioning) holds the rows of this
    // process's feature columns: the values those rows have in one process,
    // drawn by their index in the whole parameter.
    int64_t first = 0, whole = n;
    if (isFeatureShard(ctx, p)) {
      const int64_t rowSize = n / std::max<int64_t>(p.shape[0], 1);
      first = ctx->featureBegin * rowSize;
      whole = ctx->featureTotal * rowSize;
    }
    std::vector<float> init(n);
    uint64_t key = hashText(p.name);
    double limit = 0.0;
    if (p.init == "glorot") {
      int64_t fanOut = p.shape.empty() ? 1 : p.shape.back();
      int64_t fanIn =
          p.shape.size() >= 2 ? whole / std::max<int64_t>(fanOut, 1) : whole;
      if (p.shape.size() < 2)
        fanOut = whole;
      limit = std::sqrt(6.0 / static_cast<double>(fanIn + fanOut));
    }
    for (int64_t i = 0; i < n; ++i) {
      double u = uniform01(seed, key, 0x1417, static_cast<uint64_t>(first + i));
      double x = 0.0;
      if (p.init == "glorot")
        x = (2.0 * u - 1.0) * limit;
      else if (p.init == "ones")
        x = 1.0;
      else if (p.init == "constant")
        x = p.value;
      else if (p.init == "uniform")
        x = (2.0 * u - 1.0) * p.value;
      else if (p.init == "normal") {
        double u2 =
            uniform01(seed, key, 0x2417, static_cast<uint64_t>(first + i));
        x = p.value * std::sqrt(-2.0 * std::log(1.0 - u)) *
            std::cos(6.283185307179586 * u2);
      }
      init[i] = static_cast<float>(x);
    }
    auto buf = std::make_unique<Buffer>(*ctx->device, n);
    ctx->device->copy(buf->data, MemoryTier::Device, init.data(),
                      MemoryTier::Host,
                      n * static_cast<int64_t>(sizeof(float)));
    ctx->params.push_back(std::move(buf));
    ctx->grads.push_back(std::make_unique<Buffer>(*ctx->device, n));
    ctx->opt.emplace_back();
  }
}

void zeroGrads(gnnrtContext *ctx) {
  for (auto &g : ctx->grads)
    ctx->device->fill(g->data, 0,
                      g->size * static_cast<int64_t>(sizeof(float)));
}

void accuracyCounts(const gnnrtContext *ctx, int split, int64_t &hit,
                    int64_t &total) {
  const Dataset &ds = ctx->ds;
  hit = total = 0;
  if (!ctx->logits)
    return;
  const int64_t C = ds.numClasses;
  std::vector<char> staging;
  const auto *logits = static_cast<const float *>(ctx->device->hostView(
      ctx->logits, ds.numVertices * C * static_cast<int64_t>(sizeof(float)),
      staging));
  for (int64_t v = 0; v < ds.numVertices; ++v) {
    if (!ds.masks[split][v] || ds.labels[v] < 0)
      continue;
    const float *row = logits + v * C;
    int64_t best = 0;
    for (int64_t c = 1; c < C; ++c)
      if (row[c] > row[best])
        best = c;
    hit += best == ds.labels[v];
    ++total;
  }
}

double accuracy(const gnnrtContext *ctx, int split) {
  int64_t hit, total;
  accuracyCounts(ctx, split, hit, total);
  return total ? static_cast<double>(hit) / static_cast<double>(total) : 0.0;
}

} // namespace gnnrt

//===----------------------------------------------------------------------===//
// C ABI: data access
//===----------------------------------------------------------------------===//

template <typename T, typename M>
static void view(M *result, T *data, int64_t n) {
  result->allocated = data;
  result->aligned = data;
  result->offset = 0;
  result->sizes[0] = n;
  result->strides[0] = 1;
}

extern "C" {

uint64_t gnnrtGetAPIVersion(void) { return GNNRT_API_VERSION; }

int64_t gnnrtDim(gnnrtContext *ctx, int64_t which) {
  switch (which) {
  case 0:
    return ctx->ds.numVertices;
  case 1:
    return ctx->ds.numEdges;
  case 2:
    return ctx->ds.numFeatures;
  case 3:
    return ctx->ds.numClasses;
  case 4:
    return sourcesOf(ctx->ds);
  case 5:
    return ctx->wholeEdges >= 0 ? ctx->wholeEdges : ctx->ds.numEdges;
  case 6: // the first of the own rows among every vertex's
    return ctx->rowStarts.empty() ? 0 : ctx->rowStarts[rowsComm(ctx).rank()];
  case 7: // the first of the process's feature columns
    return ctx->featureTotal >= 0 ? ctx->featureBegin : 0;
  case 8: // the dataset's feature columns
    return ctx->featureTotal >= 0 ? ctx->featureTotal : ctx->ds.numFeatures;
  default:
    fatal("gnnrtDim: unknown dimension " + std::to_string(which));
  }
}

int64_t gnnrtLevelRows(gnnrtContext *ctx, int64_t level) {
  const std::vector<int64_t> &rows = ctx->ds.levelRows;
  if (level < 0)
    fatal("gnnrtLevelRows: no level " + std::to_string(level));
  return level < static_cast<int64_t>(rows.size()) ? rows[level]
                                                   : ctx->ds.numVertices;
}

void gnnrtUseGraph(gnnrtContext *ctx, int64_t which) {
  // One process holds the whole graph as its own rows' (S = V).
  if (which == 1 && !ctx->device->hasWholeGraph() &&
      sourcesOf(ctx->ds) == ctx->ds.numVertices)
    return;
  ctx->device->selectGraph(static_cast<int>(which));
}

// The graph's arrays are the device's copies. Compiled code only reads them
// (the descriptors have no const).

void _mlir_ciface_gnnrtGraphOffsets(gnnrtMemRefI64 *result, gnnrtContext *ctx,
                                    int64_t side) {
  const DeviceGraph &g = ctx->device->graph();
  view(result, const_cast<int64_t *>(g.offsets[side == 1 ? 1 : 0]),
       g.rowsOn(side == 1 ? 1 : 0) + 1);
}

void gnnrtGraphWindow(gnnrtContext *ctx, int64_t side, int64_t lo, int64_t hi) {
  const DeviceGraph &g = ctx->device->graph();
  if (side != 0 && side != 1)
    fatal("gnnrtGraphWindow: no side " + std::to_string(side));
  needRange(lo, hi, g.rowsOn(side), "gnnrtGraphWindow: rows");
  if (!ctx->graphOnStorage)
    return;
  std::string error;
  if (!ctx->graphOnStorage->open(*ctx->device, static_cast<int>(side), lo, hi,
                                 error))
    fatal("the graph out of core: " + error);
}

void _mlir_ciface_gnnrtGraphIndex(gnnrtMemRefI32 *result, gnnrtContext *ctx,
                                  int64_t which) {
  if (which < 0 || which > 3)
    fatal("gnnrtGraphIndex: unknown index " + std::to_string(which));
  const DeviceGraph &g = ctx->device->graph();
  if (ctx->graphOnStorage && !g.index[which] && g.numEdges > 0)
    fatal("gnnrtGraphIndex: the graph is out of core and no window "
          "(gnnrtGraphWindow) holds index " +
          std::to_string(which) +
          " (a kernel reads edges outside its row "
          "chunks)");
  if (!g.index[which] && g.numEdges > 0)
    fatal("gnnrtGraphIndex: index " + std::to_string(which) +
          " was not built: the model description's graph-arrays record "
          "does not name it");
  view(result, const_cast<int32_t *>(g.index[which]), g.numEdges);
}

void _mlir_ciface_gnnrtVertexIds(gnnrtMemRefI32 *result, gnnrtContext *ctx) {
  static int32_t none = 0; // an empty view's (valid) address
  const int64_t n = static_cast<int64_t>(ctx->vertexIds.size());
  if (n == 0) {
    view(result, &none, 0);
    return;
  }
  if (ctx->device->deviceMemoryIsHostMemory()) {
    view(result, ctx->vertexIds.data(), n);
    return;
  }
  static_assert(sizeof(int32_t) == sizeof(float));
  if (!ctx->vertexIdsOnDevice) {
    ctx->vertexIdsOnDevice = std::make_unique<Buffer>(*ctx->device, n);
    ctx->device->copy(ctx->vertexIdsOnDevice->data, MemoryTier::Device,
                      ctx->vertexIds.data(), MemoryTier::Host,
                      n * static_cast<int64_t>(sizeof(int32_t)));
  }
  view(result, reinterpret_cast<int32_t *>(ctx->vertexIdsOnDevice->data), n);
}

static const LongRowTable &longRowsOf(gnnrtContext *ctx, int64_t side,
                                      const char *entry) {
  if (side != 0 && side != 1)
    fatal(std::string(entry) + ": no side " + std::to_string(side));
  return ctx->device->graph().longRows[side];
}

void _mlir_ciface_gnnrtGraphLongRows(gnnrtMemRefI32 *result, gnnrtContext *ctx,
                                     int64_t side, int64_t which) {
  const LongRowTable &t = longRowsOf(ctx, side, "gnnrtGraphLongRows");
  if (which != 0 && which != 1)
    fatal("gnnrtGraphLongRows: unknown array " + std::to_string(which));
  if (which == 0)
    view(result, const_cast<int32_t *>(t.rows), t.numRows);
  else
    view(result, const_cast<int32_t *>(t.pieceRow), t.numPieces);
}

void _mlir_ciface_gnnrtGraphPieceOffsets(gnnrtMemRefI64 *result,
                                         gnnrtContext *ctx, int64_t side) {
  const LongRowTable &t = longRowsOf(ctx, side, "gnnrtGraphPieceOffsets");
  view(result, const_cast<int64_t *>(t.pieceOffsets),
       t.pieceOffsets ? t.numRows + 1 : 0);
}

int64_t gnnrtGraphPieceEdges(gnnrtContext *ctx, int64_t side) {
  return longRowsOf(ctx, side, "gnnrtGraphPieceEdges").pieceEdges;
}

/// ctx->pieceScratch[which] with at least `count` elements.
static float *pieceScratch(gnnrtContext *ctx, int which, int64_t count,
                           const char *entry) {
  if (count < 0)
    fatal(std::string(entry) + ": negative count " + std::to_string(count));
  return grownBuffer(*ctx->device, ctx->pieceScratch[which], count);
}

void _mlir_ciface_gnnrtPieceScratch(gnnrtMemRefF32 *result, gnnrtContext *ctx,
                                    int64_t count) {
  view(result, pieceScratch(ctx, 0, count, "gnnrtPieceScratch"), count);
}

void _mlir_ciface_gnnrtPieceScratchI32(gnnrtMemRefI32 *result,
                                       gnnrtContext *ctx, int64_t count) {
  static_assert(sizeof(int32_t) == sizeof(float));
  view(result,
       reinterpret_cast<int32_t *>(
           pieceScratch(ctx, 1, count, "gnnrtPieceScratchI32")),
       count);
}

int64_t gnnrtDropoutParam(gnnrtContext *ctx, int64_t op, double rate,
                          int64_t which) {
  if (ctx->dropoutOverride >= 0.0)
    rate = ctx->dropoutOverride;
  const bool on = ctx->training && rate > 0.0;
  switch (which) {
  case 0:
    // Split by rows or features, compiled code draws element i of the
    // single-process tensor (its global row and column, gnnrtDim 6 to 8):
    // every process the run's seed, for the single-process masks.
    // So does the program that is not partitioned on a part of the graph
    // (gnnrtVertexIds: its rows' global ids).
    return static_cast<int64_t>(dropoutKey(globalMaskSeed(ctx),
                                           static_cast<uint64_t>(ctx->step),
                                           static_cast<uint64_t>(op)));
  case 1:
    return on ? static_cast<int64_t>(rate * 16777216.0) : 0;
  case 3:
    // Elements numbered locally on several processes (an edge stage's):
    // each process's own stream.
    return static_cast<int64_t>(dropoutKey(maskSeed(ctx),
                                           static_cast<uint64_t>(ctx->step),
                                           static_cast<uint64_t>(op)));
  case 2: {
    const float scale = on ? static_cast<float>(1.0 / (1.0 - rate)) : 1.0f;
    uint32_t bits;
    std::memcpy(&bits, &scale, sizeof bits);
    return bits;
  }
  default:
    fatal("gnnrtDropoutParam: unknown parameter " + std::to_string(which));
  }
}

namespace {

/// Stops the run where gnnrtTileInput registered a slot that `entry`, which
/// runs a kernel or a tile but fetches no tile inputs, would leave for an
/// unrelated launch.
void noTileInputs(gnnrtContext *ctx, const char *entry) {
  if (!ctx->tileInputs.empty())
    fatal(std::string(entry) + ": gnnrtTileInput registered slot " +
          std::to_string(ctx->tileInputs.front()) +
          " for a tile, but no gnnrtParallelForRangeFetch runs it");
}

} // namespace

void gnnrtParallelFor(gnnrtContext *ctx,
                      void (*kernel)(gnnrtContext *, int64_t, int64_t),
                      int64_t n) {
  noTileInputs(ctx, "gnnrtParallelFor");
  if (n < 0)
    fatal("gnnrtParallelFor: " + std::to_string(n) + " rows");
  ctx->device->launch(ctx, kernel, 0, n);
}

/// `kernel` over rows [begin, end) for `entry`, whose start must be a
/// multiple of GNNRT_PARALLEL_CHUNK when `aligned`.
static void launchRows(gnnrtContext *ctx, const char *entry,
                       void (*kernel)(gnnrtContext *, int64_t, int64_t),
                       int64_t begin, int64_t end, bool aligned) {
  noTileInputs(ctx, entry);
  if (begin < 0 || end < begin ||
      (aligned && begin % GNNRT_PARALLEL_CHUNK != 0))
    fatal(std::string(entry) + ": rows [" + std::to_string(begin) + ", " +
          std::to_string(end) + ") (the start must " +
          (aligned ? "be a multiple of " +
                         std::to_string(GNNRT_PARALLEL_CHUNK) + " and not be"
                   : std::string("not be")) +
          " after the end)");
  ctx->device->launch(ctx, kernel, begin, end);
}

void gnnrtParallelForRange(gnnrtContext *ctx,
                           void (*kernel)(gnnrtContext *, int64_t, int64_t),
                           int64_t begin, int64_t end) {
  launchRows(ctx, "gnnrtParallelForRange", kernel, begin, end, true);
}

void gnnrtParallelForRows(gnnrtContext *ctx,
                          void (*kernel)(gnnrtContext *, int64_t, int64_t),
                          int64_t begin, int64_t end) {
  launchRows(ctx, "gnnrtParallelForRows", kernel, begin, end, false);
}

void _mlir_ciface_gnnrtView(gnnrtMemRefF32 *result, gnnrtContext *,
                            gnnrtMemRefF32 *buffer, int64_t offset,
                            int64_t count) {
  if (offset < 0 || count < 0 || offset > buffer->sizes[0] - count)
    fatal("gnnrtView: elements [" + std::to_string(offset) + ", " +
          std::to_string(offset + count) + ") of a buffer of " +
          std::to_string(buffer->sizes[0]));
  view(result, buffer->aligned + buffer->offset + offset, count);
}

void _mlir_ciface_gnnrtBuffer(gnnrtMemRefF32 *result, gnnrtContext *ctx,
                              int64_t slot, int64_t numElements) {
  if (slot < 0)
    fatal("gnnrtBuffer: negative slot");
  // An explicit fetch only (GNNRuntime.h): the program's copies are all the
  // slow tier's traffic.
  if (ctx->spill && ctx->spill->isEvicted(slot))
    fatal("gnnrtBuffer: slot " + std::to_string(slot) +
          " is evicted to the spill file (gnnrtFetch it first)");
  if (ctx->spill && ctx->spill->isSource(slot))
    fatal("gnnrtBuffer: slot " + std::to_string(slot) +
          " holds the features (gnnrtFeaturesChunks)");
  if (static_cast<size_t>(slot) >= ctx->buffers.size())
    ctx->buffers.resize(slot + 1);
  auto &buf = ctx->buffers[slot];
  if (ctx->spill && ctx->spill->isChunked(slot)) {
    // Taken as a plain buffer after chunks (the other function, or a later
    // buffer in the slot): the chunks' contents are dead.
    if (ctx->spill->hasChunksOut(slot))
      fatal("gnnrtBuffer: slot " + std::to_string(slot) +
            " has chunks out (gnnrtFetchChunk or gnnrtDropChunk them first)");
    ctx->spill->discardChunks(slot, *ctx->device, *buf);
    buf.reset();
  }
  if (!buf || buf->size < numElements || buf->released) {
    // GNNRT_TRACE_BUFFERS=1 prints each slot's growth; 0 or unset, nothing.
    static const bool trace = envFlag("GNNRT_TRACE_BUFFERS", false);
    if (trace)
      std::fprintf(stderr, "gnnrt: slot %lld: %lld -> %lld floats\n",
                   static_cast<long long>(slot),
                   static_cast<long long>(buf ? buf->size : 0),
                   static_cast<long long>(numElements));
    if (ctx->spill && ctx->spill->hasEvictedRanges(slot))
      fatal("gnnrtBuffer: slot " + std::to_string(slot) + " grows to " +
            std::to_string(numElements) +
            " floats while ranges of it are out (gnnrtFetchRange them or "
            "gnnrtDrop it first)");
    if (ctx->spill)
      ctx->spill->discardRanges(slot, *ctx->device, buf.get());
    // Mini-batches (ctx->slotHeadroom): a slot that grows takes a quarter
    // more, so that the next batches' slightly larger sizes fit instead of
    // each allocating (and clearing) the slot anew.
    const int64_t size = buf && ctx->slotHeadroom
                             ? std::max(numElements, buf->size + buf->size / 4)
                             : numElements;
    buf.reset(); // free first: the peak is the new size, not both
    buf = std::make_unique<Buffer>(*ctx->device, size);
    ctx->bytesAllocated += size * 4;
  }
  view(result, buf->data, numElements);
}

/// gnnrtBufferChunks, and gnnrtBufferEdgeChunks with `bounds`; `entry`
/// names the entry point in messages.
static void takeChunkedSlot(const char *entry, gnnrtMemRefF32 *result,
                            gnnrtContext *ctx, int64_t slot,
                            int64_t numElements, int64_t rows, int64_t chunks,
                            const std::vector<int64_t> *bounds) {
  const std::string what =
      std::string(entry) + ": slot " + std::to_string(slot);
  if (slot < 0 || numElements < 0 || rows < 0 || chunks < 1 || chunks > 4096 ||
      rows > INT32_MAX ||
      (rows == 0 ? numElements != 0 : numElements % rows != 0))
    fatal(what + ": " + std::to_string(numElements) + " floats in " +
          std::to_string(rows) + " rows and " + std::to_string(chunks) +
          " chunks");
  if (!ctx->spill)
    fatal(what + ": no spill store (the run has no --spill-dir and the model "
                 "no placement plan)");
  if (ctx->spill->isEvicted(slot))
    fatal(what + " is evicted whole (gnnrtFetch it first)");
  if (ctx->spill->isSource(slot))
    fatal(what + " holds the features (gnnrtFeaturesChunks)");
  if (static_cast<size_t>(slot) >= ctx->buffers.size())
    ctx->buffers.resize(slot + 1);
  auto &buf = ctx->buffers[slot];
  const int64_t rowElements = rows == 0 ? 0 : numElements / rows;
  std::string error;
  if (buf && !buf->released) { // a plain buffer before: its contents are dead
    if (ctx->spill->hasEvictedRanges(slot))
      fatal(what + " has ranges out (gnnrtFetchRange them first)");
    ctx->spill->discardRanges(slot, *ctx->device, buf.get());
    ctx->spill->discard(slot);
    buf.reset();
  }
  if (buf && buf->size < numElements) {
    if (ctx->spill->hasChunksOut(slot))
      fatal(what + " grows to " + std::to_string(numElements) +
            " floats while chunks of it are out");
    ctx->spill->discardChunks(slot, *ctx->device, *buf);
    buf.reset();
  }
  if (!buf) {
    buf = std::make_unique<Buffer>(*ctx->device, numElements,
                                   /*released=*/true);
    ctx->bytesAllocated += numElements * 4;
  }
  if (!ctx->spill->takeChunks(slot, *ctx->device, *buf, rows, rowElements,
                              chunks, error, bounds))
    fatal(std::string(entry) + ": " + error);
  view(result, buf->data, numElements);
}

void _mlir_ciface_gnnrtBufferChunks(gnnrtMemRefF32 *result, gnnrtContext *ctx,
                                    int64_t slot, int64_t numElements,
                                    int64_t rows, int64_t chunks) {
  takeChunkedSlot("gnnrtBufferChunks", result, ctx, slot, numElements, rows,
                  chunks, nullptr);
}

void _mlir_ciface_gnnrtBufferEdgeChunks(gnnrtMemRefF32 *result,
                                        gnnrtContext *ctx, int64_t slot,
                                        int64_t numElements, int64_t chunks) {
  const std::string what =
      "gnnrtBufferEdgeChunks: slot " + std::to_string(slot);
  if (chunks < 1 || chunks > 4096)
    fatal(what + ": " + std::to_string(chunks) + " chunks");
  if (!ctx->device->deviceMemoryIsHostMemory())
    fatal(what + ": not supported on the " + std::string(ctx->device->name()) +
          " device");
  const DeviceGraph &g = ctx->device->graph();
  const int64_t E = g.numEdges, V = g.numVertices;
  if (!g.offsets[1])
    fatal(what + ": no graph is bound");
  // Chunk c: the in-edges of destination chunk c (contiguous in the CSC).
  std::vector<int64_t> bounds(chunks + 1);
  for (int64_t c = 0; c <= chunks; ++c)
    bounds[c] = g.offsets[1][gnnrtChunkRowBound(V, chunks, c)];
  takeChunkedSlot("gnnrtBufferEdgeChunks", result, ctx, slot, numElements, E,
                  chunks, &bounds);
}

void _mlir_ciface_gnnrtBufferI32(gnnrtMemRefI32 *result, gnnrtContext *ctx,
                                 int64_t slot, int64_t numElements) {
  // Shares the float slots' storage (same element size).
  gnnrtMemRefF32 f;
  _mlir_ciface_gnnrtBuffer(&f, ctx, slot, numElements);
  view(result, reinterpret_cast<int32_t *>(f.aligned), numElements);
}

namespace {

/// Whether `slot` has a buffer or is evicted; stops the run with `entry`'s
/// name when gnnrtBuffer never allocated it.
bool checkSlotKnown(gnnrtContext *ctx, const char *entry, int64_t slot) {
  const bool evicted = ctx->spill && ctx->spill->isEvicted(slot);
  if (slot < 0 ||
      (!evicted && (static_cast<size_t>(slot) >= ctx->buffers.size() ||
                    !ctx->buffers[slot])))
    fatal(std::string(entry) + ": slot " + std::to_string(slot) +
          " was never allocated (no gnnrtBuffer call for it)");
  return evicted;
}

} // namespace

/// Stops the run when `slot` is chunked (whole-slot copies of a chunked
/// slot are refused: its chunks move).
static void refuseChunked(gnnrtContext *ctx, const char *entry, int64_t slot) {
  if (ctx->spill && ctx->spill->isChunked(slot))
    fatal(std::string(entry) + ": slot " + std::to_string(slot) +
          " is chunked (gnnrtBufferChunks): its chunks move, not the slot");
}

void gnnrtEvict(gnnrtContext *ctx, int64_t slot) {
  refuseChunked(ctx, "gnnrtEvict", slot);
  if (checkSlotKnown(ctx, "gnnrtEvict", slot))
    return; // already in the slow tier
  if (ctx->spill && ctx->spill->hasEvictedRanges(slot))
    fatal("gnnrtEvict: slot " + std::to_string(slot) +
          " has ranges out (gnnrtFetchRange them first)");
  if (!ctx->spill)
    fatal("gnnrtEvict: slot " + std::to_string(slot) +
          ": no --spill-dir to evict it to (the run was started without one)");
  std::string error;
  if (!ctx->spill->evict(slot, *ctx->device, ctx->buffers[slot], error))
    fatal("gnnrtEvict: " + error);
}

void gnnrtFetch(gnnrtContext *ctx, int64_t slot) {
  refuseChunked(ctx, "gnnrtFetch", slot);
  if (!checkSlotKnown(ctx, "gnnrtFetch", slot))
    return; // resident
  std::string error;
  if (!ctx->spill->fetch(slot, *ctx->device, ctx->buffers[slot], error))
    fatal("gnnrtFetch: " + error);
}

void gnnrtDrop(gnnrtContext *ctx, int64_t slot, int64_t keepCopy) {
  if (slot < 0)
    fatal("gnnrtDrop: negative slot");
  const bool known = static_cast<size_t>(slot) < ctx->buffers.size();
  std::unique_ptr<Buffer> none;
  std::unique_ptr<Buffer> &buf = known ? ctx->buffers[slot] : none;
  if (keepCopy) {
    std::string error;
    if (!ctx->spill)
      fatal("gnnrtDrop: slot " + std::to_string(slot) +
            ": no --spill-dir, so no copy of it to drop to");
    refuseChunked(ctx, "gnnrtDrop", slot);
    if (ctx->spill->isEvicted(slot))
      return; // already only in the slow tier
    if (!ctx->spill->dropToCopy(slot, buf, error))
      fatal("gnnrtDrop: " + error);
    return;
  }
  if (ctx->spill && ctx->spill->isSource(slot)) {
    // The features: every chunk out, the slot still theirs.
    ctx->spill->discardChunks(slot, *ctx->device, *buf);
    return;
  }
  if (ctx->spill) {
    if (buf)
      ctx->spill->discardChunks(slot, *ctx->device, *buf);
    ctx->spill->discardRanges(slot, *ctx->device, buf.get());
    ctx->spill->discard(slot);
  }
  buf.reset();
}

namespace {

/// The chunked slot's buffer for chunk entry point `entry`.
Buffer &chunkBuffer(gnnrtContext *ctx, const char *entry, int64_t slot) {
  if (!ctx->spill || slot < 0 ||
      static_cast<size_t>(slot) >= ctx->buffers.size() || !ctx->buffers[slot] ||
      !ctx->spill->isChunked(slot))
    fatal(std::string(entry) + ": slot " + std::to_string(slot) +
          " is not chunked (no gnnrtBufferChunks for it)");
  return *ctx->buffers[slot];
}

} // namespace

void gnnrtFetchChunk(gnnrtContext *ctx, int64_t slot, int64_t chunk) {
  Buffer &buf = chunkBuffer(ctx, "gnnrtFetchChunk", slot);
  std::string error;
  if (!ctx->spill->fetchChunk(slot, *ctx->device, buf, chunk, error))
    fatal("gnnrtFetchChunk: " + error);
}

void gnnrtFetchChunkFor(gnnrtContext *ctx, int64_t slot, int64_t chunk,
                        int64_t side, int64_t outChunk) {
  Buffer &buf = chunkBuffer(ctx, "gnnrtFetchChunkFor", slot);
  fetchTileInput(ctx, buf, slot, chunk, side, outChunk);
}

void _mlir_ciface_gnnrtSpmmRowsFetch(gnnrtContext *ctx, int64_t slot,
                                     int64_t chunk, int64_t side, int64_t mean,
                                     gnnrtMemRefF32 *weights,
                                     gnnrtMemRefF32 *in, gnnrtMemRefF32 *out,
                                     int64_t width, int64_t begin, int64_t end,
                                     int64_t inBegin, int64_t inEnd) {
  noTileInputs(ctx, "gnnrtSpmmRowsFetch");
  Buffer &buf = chunkBuffer(ctx, "gnnrtSpmmRowsFetch", slot);
  aggregateTile(ctx, buf, slot, chunk, side, mean, weights, in, out, width,
                begin, end, inBegin, inEnd);
}

void gnnrtParallelForRangeFetch(gnnrtContext *ctx, int64_t slot, int64_t chunk,
                                int64_t side, int64_t loInt, int64_t hiInt,
                                int64_t inOrder,
                                void (*kernel)(gnnrtContext *, int64_t,
                                               int64_t),
                                int64_t begin, int64_t end) {
  if (side != 0 && side != 1)
    fatal("gnnrtParallelForRangeFetch: side " + std::to_string(side) +
          " (expected 0, sources, or 1, destinations)");
  std::vector<int64_t> slots{slot};
  slots.insert(slots.end(), ctx->tileInputs.begin(), ctx->tileInputs.end());
  ctx->tileInputs.clear();
  launchTile(ctx, slots, chunk, side, loInt, hiInt, inOrder != 0, kernel, begin,
             end, [&](int64_t s) -> Buffer & {
               return chunkBuffer(ctx, "gnnrtParallelForRangeFetch", s);
             });
}

void gnnrtTileInput(gnnrtContext *ctx, int64_t slot) {
  chunkBuffer(ctx, "gnnrtTileInput", slot);
  ctx->tileInputs.push_back(slot);
}

void gnnrtEvictChunk(gnnrtContext *ctx, int64_t slot, int64_t chunk) {
  Buffer &buf = chunkBuffer(ctx, "gnnrtEvictChunk", slot);
  std::string error;
  if (!ctx->spill->evictChunk(slot, *ctx->device, buf, chunk, error))
    fatal("gnnrtEvictChunk: " + error);
}

void gnnrtDropChunk(gnnrtContext *ctx, int64_t slot, int64_t chunk,
                    int64_t keepCopy) {
  Buffer &buf = chunkBuffer(ctx, "gnnrtDropChunk", slot);
  std::string error;
  if (!ctx->spill->dropChunk(slot, *ctx->device, buf, chunk, keepCopy != 0,
                             error))
    fatal("gnnrtDropChunk: " + error);
}

void gnnrtDropAll(gnnrtContext *ctx) {
  for (size_t slot = 0; slot < ctx->buffers.size(); ++slot)
    gnnrtDrop(ctx, static_cast<int64_t>(slot), 0);
  if (ctx->spill)
    ctx->spill->discardAll();
}

namespace {

/// The resident buffer of `slot` for a range entry point `entry`; stops the
/// run when there is none or no spill directory.
Buffer &rangeBuffer(gnnrtContext *ctx, const char *entry, int64_t slot) {
  if (slot < 0 || static_cast<size_t>(slot) >= ctx->buffers.size() ||
      !ctx->buffers[slot])
    fatal(std::string(entry) + ": slot " + std::to_string(slot) +
          " has no resident buffer (never allocated, or evicted whole)");
  if (!ctx->spill)
    fatal(std::string(entry) + ": slot " + std::to_string(slot) +
          ": no --spill-dir (the run was started without one)");
  refuseChunked(ctx, entry, slot);
  return *ctx->buffers[slot];
}

} // namespace

void gnnrtEvictRange(gnnrtContext *ctx, int64_t slot, int64_t offset,
                     int64_t count) {
  Buffer &buf = rangeBuffer(ctx, "gnnrtEvictRange", slot);
  std::string error;
  if (!ctx->spill->evictRange(slot, *ctx->device, buf, offset, count, error))
    fatal("gnnrtEvictRange: " + error);
}

void gnnrtFetchRange(gnnrtContext *ctx, int64_t slot, int64_t offset,
                     int64_t count) {
  Buffer &buf = rangeBuffer(ctx, "gnnrtFetchRange", slot);
  std::string error;
  if (!ctx->spill->fetchRange(slot, *ctx->device, buf, offset, count, error))
    fatal("gnnrtFetchRange: " + error);
}

void gnnrtDropRange(gnnrtContext *ctx, int64_t slot, int64_t offset,
                    int64_t count, int64_t keepCopy) {
  Buffer &buf = rangeBuffer(ctx, "gnnrtDropRange", slot);
  std::string error;
  if (!ctx->spill->dropRange(slot, *ctx->device, buf, offset, count,
                             keepCopy != 0, error))
    fatal("gnnrtDropRange: " + error);
}

void _mlir_ciface_gnnrtParam(gnnrtMemRefF32 *result, gnnrtContext *ctx,
                             int64_t index) {
  if (index < 0 || static_cast<size_t>(index) >= ctx->params.size())
    fatal("gnnrtParam: no parameter #" + std::to_string(index));
  view(result, ctx->params[index]->data, ctx->params[index]->size);
}

void _mlir_ciface_gnnrtGrad(gnnrtMemRefF32 *result, gnnrtContext *ctx,
                            int64_t index) {
  if (index < 0 || static_cast<size_t>(index) >= ctx->grads.size())
    fatal("gnnrtGrad: no parameter #" + std::to_string(index));
  view(result, ctx->grads[index]->data, ctx->grads[index]->size);
}

void _mlir_ciface_gnnrtFeatures(gnnrtMemRefF32 *result, gnnrtContext *ctx) {
  if (!ctx->features)
    fatal("gnnrtFeatures: the features are out of core (on storage, read by "
          "gnnrtFeaturesChunks), not in memory");
  view(result, ctx->features->data, ctx->features->size);
}

void _mlir_ciface_gnnrtFeaturesChunks(gnnrtMemRefF32 *result, gnnrtContext *ctx,
                                      int64_t slot, int64_t chunks) {
  const std::string what = "gnnrtFeaturesChunks: slot " + std::to_string(slot);
  if (slot < 0 || chunks < 1 || chunks > 4096)
    fatal(what + ", " + std::to_string(chunks) + " chunks");
  if (ctx->featuresFile.fd < 0 || !ctx->spill)
    fatal(what + ": the run keeps its features in memory (the program was "
                 "compiled with them out of core: its model description's "
                 "features-out-of-core record was not read)");
  const int64_t V = ctx->ds.numVertices, F = ctx->ds.numFeatures;
  if (static_cast<size_t>(slot) >= ctx->buffers.size())
    ctx->buffers.resize(slot + 1);
  auto &buf = ctx->buffers[slot];
  if (buf && !ctx->spill->isSource(slot))
    fatal(what + " holds a buffer of the program");
  if (!buf) {
    buf = std::make_unique<Buffer>(*ctx->device, V * F, /*released=*/true);
    ctx->bytesAllocated += V * F * 4;
  }
  std::string error;
  if (!ctx->spill->takeSourceChunks(
          slot, *ctx->device, *buf, V, F, chunks, ctx->featuresFile.fd,
          ctx->featuresFile.offset, ctx->featuresFile.name, error,
          &ctx->vertexIds))
    fatal("gnnrtFeaturesChunks: " + error);
  view(result, buf->data, V * F);
}

void _mlir_ciface_gnnrtDegree(gnnrtMemRefF32 *result, gnnrtContext *ctx,
                              int64_t dir) {
  const DeviceGraph &g = ctx->device->graph();
  view(result, const_cast<float *>(g.degree[dir == 0 ? 0 : 1]), g.numVertices);
}

// The edge inputs are the device's copies, read-only like the graph.

void _mlir_ciface_gnnrtEdgeDataF32(gnnrtMemRefF32 *result, gnnrtContext *ctx,
                                   int64_t index) {
  const std::vector<DeviceEdgeInput> &inputs = ctx->device->edgeData();
  if (index < 0 || static_cast<size_t>(index) >= inputs.size())
    fatal("gnnrtEdgeDataF32: no edge input #" + std::to_string(index));
  const DeviceEdgeInput &d = inputs[index];
  view(result, const_cast<float *>(d.f32), d.f32Size);
}

void _mlir_ciface_gnnrtEdgeDataI32(gnnrtMemRefI32 *result, gnnrtContext *ctx,
                                   int64_t index) {
  const std::vector<DeviceEdgeInput> &inputs = ctx->device->edgeData();
  if (index < 0 || static_cast<size_t>(index) >= inputs.size())
    fatal("gnnrtEdgeDataI32: no edge input #" + std::to_string(index));
  const DeviceEdgeInput &d = inputs[index];
  view(result, const_cast<int32_t *>(d.i32), d.i32Size);
}

void _mlir_ciface_gnnrtSetOutput(gnnrtContext *ctx, gnnrtMemRefF32 *logits,
                                 float loss) {
  ctx->logits = logits->aligned + logits->offset;
  ctx->loss = loss;
}

void _mlir_ciface_gnnrtLevelInput(gnnrtMemRefF32 *result, gnnrtContext *ctx,
                                  int64_t cut, int64_t rowSize) {
  const std::string what = "gnnrtLevelInput: cut " + std::to_string(cut);
  if (cut < 0 || static_cast<size_t>(cut) >= ctx->levelInputs.size() ||
      !ctx->levelInputs[cut])
    fatal(what + " is not bound (a level function runs only in a layer-wise "
                 "evaluation, whose driver binds the cuts it reads)");
  const gnnrt::Buffer &buf = *ctx->levelInputs[cut];
  if (rowSize < 0 || buf.size != ctx->ds.numVertices * rowSize)
    fatal(what + " holds " + std::to_string(buf.size) + " floats, not " +
          std::to_string(ctx->ds.numVertices) + " rows of " +
          std::to_string(rowSize));
  view(result, buf.data, buf.size);
}

void _mlir_ciface_gnnrtSetLevelOutput(gnnrtContext *ctx, int64_t cut,
                                      gnnrtMemRefF32 *rows, int64_t rowSize) {
  if (cut < 0 || cut > (int64_t{1} << 20) || rowSize < 0)
    fatal("gnnrtSetLevelOutput: cut " + std::to_string(cut) + ", rows of " +
          std::to_string(rowSize));
  if (static_cast<size_t>(cut) >= ctx->levelOutputs.size())
    ctx->levelOutputs.resize(cut + 1, {nullptr, 0});
  ctx->levelOutputs[cut] = {rows->aligned + rows->offset, rowSize};
}

} // extern "C"
