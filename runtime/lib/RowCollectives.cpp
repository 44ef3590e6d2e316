//===- RowCollectives.cpp - the C ABI of row partitioning -----------------===//
//
// Row partitioning's entry points (GNNRuntime.h, ABI 10; docs/Distributed.md):
// the all-gather and reduce-scatter of vertex rows over the processes' row
// ranges (ctx->rowStarts), and MG-GCN's staged SpMMs, whose broadcasts and
// reduces overlap the next stage's sums. Without a split (one process,
// shared preloading) they copy, or aggregate locally. The own rows of a
// replicated layer's every-vertex rows, and back, need no communication.
//
//===----------------------------------------------------------------------===//

#include "Context.h"
#include "gnnrt/GNNRuntime.h"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

using namespace gnnrt;

/// Each process's rows of `width` floats: counts and first elements.
static void rowBlocks(const gnnrtContext *ctx, int64_t width,
                      std::vector<int64_t> &counts,
                      std::vector<int64_t> &displs) {
  const int size = ctx->comm->size();
  counts.resize(size);
  displs.resize(size);
  for (int r = 0; r < size; ++r) {
    displs[r] = ctx->rowStarts[r] * width;
    counts[r] = (ctx->rowStarts[r + 1] - ctx->rowStarts[r]) * width;
  }
}

/// Stops the run unless the row split has a range per process, covers the
/// graph's sources and gives this process its own vertices' count.
static void checkRowStarts(const gnnrtContext *ctx, const char *entry) {
  const std::vector<int64_t> &p = ctx->rowStarts;
  const int size = ctx->comm->size(), rank = ctx->comm->rank();
  if (static_cast<int>(p.size()) != size + 1 || p[size] != sourcesOf(ctx->ds) ||
      p[rank + 1] - p[rank] != ctx->ds.numVertices)
    fatal(std::string(entry) +
          ": the processes' row ranges do not match "
          "this process's " +
          std::to_string(ctx->ds.numVertices) + " vertices of " +
          std::to_string(sourcesOf(ctx->ds)));
}

/// Checks the operands of the two collectives: `own` rows of the process's
/// vertices, `all` rows of every vertex.
static void checkRowCollective(const gnnrtContext *ctx, const char *entry,
                               const gnnrtMemRefF32 *own,
                               const gnnrtMemRefF32 *all, int64_t width) {
  const Dataset &ds = ctx->ds;
  if (width < 0)
    fatal(std::string(entry) + ": negative width");
  needElements(own->sizes[0], ds.numVertices * width,
               std::string(entry) + " own rows");
  needElements(all->sizes[0], sourcesOf(ds) * width,
               std::string(entry) + " rows of every vertex");
  if (!ctx->rowStarts.empty())
    checkRowStarts(ctx, entry);
}

/// Whether the row collectives move rows between processes: the driver
/// split the rows (ctx->rowStarts); else every process holds the whole
/// graph or its closure (one process, shared preloading), and they copy.
static bool rowsAreSplit(const gnnrtContext *ctx) {
  return ctx->comm->size() > 1 && !ctx->rowStarts.empty();
}

/// The set-up of a staged call (gnnrtSpmmBroadcast, gnnrtSpmmReduce):
/// checks `own`, the process's rows of `width` floats, and the split, and
/// grows the two stage buffers to the largest part's rows. Returns the
/// split's starts.
static const std::vector<int64_t> &prepareStages(gnnrtContext *ctx,
                                                 const char *entry,
                                                 const gnnrtMemRefF32 *own,
                                                 int64_t width) {
  if (width < 0)
    fatal(std::string(entry) + ": negative width");
  needElements(own->sizes[0], ctx->ds.numVertices * width,
               std::string(entry) + " own rows");
  checkRowStarts(ctx, entry);
  const std::vector<int64_t> &p = ctx->rowStarts;
  int64_t most = 0;
  for (size_t r = 0; r + 1 < p.size(); ++r)
    most = std::max(most, p[r + 1] - p[r]);
  for (auto &b : ctx->stageBuffers)
    if (!b || b->size < most * width)
      b = std::make_unique<Buffer>(*ctx->device, most * width);
  return p;
}

extern "C" {

void _mlir_ciface_gnnrtAllGatherRows(gnnrtContext *ctx, gnnrtMemRefF32 *in,
                                     gnnrtMemRefF32 *out, int64_t width) {
  checkRowCollective(ctx, "gnnrtAllGatherRows", in, out, width);
  const float *x = in->aligned + in->offset;
  float *y = out->aligned + out->offset;
  const int64_t count = ctx->ds.numVertices * width;
  if (!rowsAreSplit(ctx)) {
    std::copy(x, x + count, y);
    return;
  }
  if (width == 0)
    return;
  // In rows: a graph's floats overflow MPI's int counts before its rows do.
  std::vector<int64_t> counts, displs;
  rowBlocks(ctx, 1, counts, displs);
  ctx->comm->allGatherV(x, ctx->ds.numVertices, y, counts.data(), displs.data(),
                        width);
}

void _mlir_ciface_gnnrtSpmmBroadcast(gnnrtContext *ctx, int64_t mean,
                                     gnnrtMemRefF32 *weights,
                                     gnnrtMemRefF32 *in, gnnrtMemRefF32 *out,
                                     int64_t width) {
  const int size = ctx->comm->size(), rank = ctx->comm->rank();
  if (!rowsAreSplit(ctx)) {
    ctx->device->spmm(ctx, 1, mean, 1, weights, in, out, width);
    return;
  }
  const std::vector<int64_t> &p =
      prepareStages(ctx, "gnnrtSpmmBroadcast", in, width);
  float *own = in->aligned + in->offset;
  // Stage j's rows: the rank's own at j = rank, else a receive buffer by
  // parity (BC1, BC2), free again once stage j - 1's sums are done.
  auto rowsOf = [&](int j) {
    return j == rank ? own : ctx->stageBuffers[j % 2]->data;
  };
  Request pending[2];
  auto issue = [&](int j) {
    pending[j % 2] =
        ctx->comm->iBroadcast(rowsOf(j), (p[j + 1] - p[j]) * width, j);
  };
  issue(0);
  for (int j = 0; j < size; ++j) {
    ctx->comm->wait(pending[j % 2]);
    if (j + 1 < size)
      issue(j + 1); // in flight during stage j's sums
    ctx->device->spmmStage(ctx, mean, weights, rowsOf(j), p[j], p[j + 1], out,
                           width);
  }
}

void _mlir_ciface_gnnrtSpmmReduce(gnnrtContext *ctx, gnnrtMemRefF32 *weights,
                                  gnnrtMemRefF32 *in, gnnrtMemRefF32 *out,
                                  int64_t width) {
  const int size = ctx->comm->size(), rank = ctx->comm->rank();
  if (!rowsAreSplit(ctx)) {
    ctx->device->spmm(ctx, 0, 0, 1, weights, in, out, width);
    return;
  }
  const std::vector<int64_t> &p =
      prepareStages(ctx, "gnnrtSpmmReduce", out, width);
  float *own = out->aligned + out->offset;
  // Stage j: this rank's partial sums of the part j's sources, into the
  // owner's rows (in place) or a send buffer by parity, then reduced to
  // the owner while stage j + 1 computes.
  Request pending[2];
  for (int j = 0; j < size; ++j) {
    ctx->comm->wait(pending[j % 2]); // stage j - 2's buffer is free again
    float *rows = j == rank ? own : ctx->stageBuffers[j % 2]->data;
    ctx->device->spmmSourceStage(ctx, weights, in, p[j], p[j + 1], rows, width);
    pending[j % 2] =
        ctx->comm->iReduce(rows, j == rank ? own : rows,
                           (p[j + 1] - p[j]) * width, j, ReduceOp::Sum);
  }
  ctx->comm->wait(pending[0]);
  ctx->comm->wait(pending[1]);
}

void _mlir_ciface_gnnrtReduceScatterRows(gnnrtContext *ctx, gnnrtMemRefF32 *in,
                                         gnnrtMemRefF32 *out, int64_t width) {
  checkRowCollective(ctx, "gnnrtReduceScatterRows", out, in, width);
  const float *x = in->aligned + in->offset;
  float *y = out->aligned + out->offset;
  if (!rowsAreSplit(ctx)) {
    std::copy(x, x + ctx->ds.numVertices * width, y);
    return;
  }
  std::vector<int64_t> counts, displs;
  rowBlocks(ctx, width, counts, displs);
  ctx->comm->reduceScatterV(x, y, counts.data(), ReduceOp::Sum);
}

/// The first of this process's rows among every vertex's.
static int64_t firstOwnRow(const gnnrtContext *ctx) {
  return ctx->rowStarts.empty() ? 0 : ctx->rowStarts[ctx->comm->rank()];
}

void _mlir_ciface_gnnrtOwnRows(gnnrtContext *ctx, gnnrtMemRefF32 *in,
                               gnnrtMemRefF32 *out, int64_t width) {
  checkRowCollective(ctx, "gnnrtOwnRows", out, in, width);
  const float *x = in->aligned + in->offset + firstOwnRow(ctx) * width;
  std::copy(x, x + ctx->ds.numVertices * width, out->aligned + out->offset);
}

void _mlir_ciface_gnnrtPadRows(gnnrtContext *ctx, gnnrtMemRefF32 *in,
                               gnnrtMemRefF32 *out, int64_t width) {
  checkRowCollective(ctx, "gnnrtPadRows", in, out, width);
  float *y = out->aligned + out->offset;
  std::fill(y, y + sourcesOf(ctx->ds) * width, 0.0f);
  const float *x = in->aligned + in->offset;
  std::copy(x, x + ctx->ds.numVertices * width, y + firstOwnRow(ctx) * width);
}

} // extern "C"
