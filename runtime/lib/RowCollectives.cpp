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
#include "Sampler.h"
#include "gnnrt/GNNRuntime.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

using namespace gnnrt;

/// Each process's rows of `width` floats: counts and first elements.
static void rowBlocks(const gnnrtContext *ctx, int64_t width,
                      std::vector<int64_t> &counts,
                      std::vector<int64_t> &displs) {
  const int size = rowsComm(ctx).size();
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
  const int size = rowsComm(ctx).size(), rank = rowsComm(ctx).rank();
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
/// P³'s shares of a batch (ctx->shareLevels) are split but closed: the own
/// rows' graph reads only the own rows, and the own rows' collectives
/// (sharesAreClosed) need no other process's.
static bool rowsAreSplit(const gnnrtContext *ctx) {
  return rowsComm(ctx).size() > 1 && !ctx->rowStarts.empty() &&
         ctx->shareLevels.empty();
}

static bool sharesAreClosed(const gnnrtContext *ctx) {
  return !ctx->shareLevels.empty();
}

/// The first of this process's rows among every vertex's (a contiguous
/// split; closed shares place the own rows by level band instead).
static int64_t firstOwnRow(const gnnrtContext *ctx) {
  return ctx->rowStarts.empty() ? 0 : ctx->rowStarts[rowsComm(ctx).rank()];
}

/// Calls f(ownRow, row, count) for each run of this process's first
/// `count` rows among every vertex's `rows`: one run at its first row, or
/// closed shares' runs by level band (forEachShareRun).
template <typename F>
static void forEachOwnRun(const gnnrtContext *ctx, int64_t count, F f) {
  if (sharesAreClosed(ctx))
    forEachShareRun(ctx->shareLevels, rowsComm(ctx).rank(), count, f);
  else if (count > 0)
    f(0, firstOwnRow(ctx), count);
}

/// `in`'s own rows among zero rows of every vertex, in `out` (S rows).
static void padOwnRows(const gnnrtContext *ctx, const float *in, float *out,
                       int64_t width) {
  std::fill(out, out + sourcesOf(ctx->ds) * width, 0.0f);
  forEachOwnRun(ctx, ctx->ds.numVertices,
                [&](int64_t own, int64_t row, int64_t count) {
                  std::copy(in + own * width, in + (own + count) * width,
                            out + row * width);
                });
}

/// The own rows of every vertex's rows `all`, in `out` (V rows).
static void takeOwnRows(const gnnrtContext *ctx, const float *all, float *out,
                        int64_t width) {
  forEachOwnRun(ctx, ctx->ds.numVertices,
                [&](int64_t own, int64_t row, int64_t count) {
                  std::copy(all + row * width, all + (row + count) * width,
                            out + own * width);
                });
}

/// A stage buffer of at least `floats` floats.
static float *stageBuffer(gnnrtContext *ctx, int64_t floats, int which = 0) {
  return grownBuffer(*ctx->device, ctx->stageBuffers[which], floats);
}

/// A memref descriptor of `rows` rows of `width` floats at `data`.
static gnnrtMemRefF32 rowsMemRef(float *data, int64_t rows, int64_t width) {
  gnnrtMemRefF32 m{};
  m.allocated = m.aligned = data;
  m.sizes[0] = rows * width;
  m.strides[0] = 1;
  return m;
}

/// Grows two stage buffers (the context's unless `buffers`) to the largest
/// part's rows of `rowFloats` floats; returns that part's row count.
static int64_t
growStageBuffers(gnnrtContext *ctx, int64_t rowFloats,
                 std::unique_ptr<Buffer> (*buffers)[2] = nullptr) {
  const std::vector<int64_t> &p = ctx->rowStarts;
  int64_t most = 0;
  for (size_t r = 0; r + 1 < p.size(); ++r)
    most = std::max(most, p[r + 1] - p[r]);
  for (auto &b : buffers ? *buffers : ctx->stageBuffers)
    grownBuffer(*ctx->device, b, most * rowFloats);
  return most;
}

/// A staged input's one stage where the rows are not split: every source's
/// rows are the own rows `own` (one process, a closure), or closed shares'
/// own rows among zeros in `buffer`.
static gnnrtMemRefF32 oneStageRows(gnnrtContext *ctx, const char *entry,
                                   gnnrtMemRefF32 *own, int64_t width,
                                   std::unique_ptr<Buffer> &buffer) {
  if (width < 0)
    fatal(std::string(entry) + ": negative width");
  const int64_t S = sourcesOf(ctx->ds);
  // The kernel reads every source's row of the own rows.
  needElements(own->sizes[0],
               std::max(ctx->ds.numVertices, sharesAreClosed(ctx) ? 0 : S) *
                   width,
               std::string(entry) + " own rows");
  if (!sharesAreClosed(ctx))
    return *own;
  float *all = grownBuffer(*ctx->device, buffer, S * width);
  padOwnRows(ctx, own->aligned + own->offset, all, width);
  return rowsMemRef(all, S, width);
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
  growStageBuffers(ctx, width);
  return ctx->rowStarts;
}

/// Stage `stage` of a loop of broadcast stages: stage j's rows are the own
/// rows `own` on their owner (j = the rank), else `buffers[j % 2]`, and
/// `floats(j)` of them move. Stage 0 issues its broadcast; each stage waits
/// for its own and issues stage j + 1's into the other buffer (stage
/// j - 1's, whose kernel has read it). Returns stage `stage`'s rows.
template <typename Floats>
static float *broadcastStage(gnnrtContext *ctx, Request (&pending)[2],
                             int64_t stage, float *own,
                             std::unique_ptr<Buffer> (&buffers)[2],
                             Floats floats) {
  const int size = rowsComm(ctx).size(), rank = rowsComm(ctx).rank();
  auto rowsOf = [&](int64_t j) {
    return j == rank ? own : buffers[j % 2]->data;
  };
  auto issue = [&](int64_t j) {
    pending[j % 2] =
        rowsComm(ctx).iBroadcast(rowsOf(j), floats(j), static_cast<int>(j));
  };
  if (stage == 0)
    issue(0);
  rowsComm(ctx).wait(pending[stage % 2]);
  if (stage + 1 < size)
    issue(stage + 1);
  return rowsOf(stage);
}

extern "C" {

void _mlir_ciface_gnnrtAllGatherRows(gnnrtContext *ctx, gnnrtMemRefF32 *in,
                                     gnnrtMemRefF32 *out, int64_t width) {
  checkRowCollective(ctx, "gnnrtAllGatherRows", in, out, width);
  const float *x = in->aligned + in->offset;
  float *y = out->aligned + out->offset;
  const int64_t count = ctx->ds.numVertices * width;
  if (sharesAreClosed(ctx)) {
    padOwnRows(ctx, x, y, width);
    return;
  }
  if (!rowsAreSplit(ctx)) {
    std::copy(x, x + count, y);
    return;
  }
  if (width == 0)
    return;
  // In rows: a graph's floats overflow MPI's int counts before its rows do.
  std::vector<int64_t> counts, displs;
  rowBlocks(ctx, 1, counts, displs);
  rowsComm(ctx).allGatherV(x, ctx->ds.numVertices, y, counts.data(),
                           displs.data(), width);
}

/// Process j's rows of `level` (-1: all of them): a prefix of its rows on
/// a co-batch (ctx->rowLevels), else every one.
static int64_t rowsOfLevel(const gnnrtContext *ctx, int j, int64_t level) {
  const int64_t all = ctx->rowStarts[j + 1] - ctx->rowStarts[j];
  if (level < 0 || ctx->rowLevels.empty())
    return all;
  const std::vector<int64_t> &levels = ctx->rowLevels[j];
  return level < static_cast<int64_t>(levels.size())
             ? std::min(all, levels[level])
             : all;
}

/// The most rows of process j that any part of the reduce loop in progress
/// sends (its level's, rowsOfLevel; 0 without parts).
static int64_t partRows(const gnnrtContext *ctx, int j) {
  int64_t rows = 0;
  for (const auto &part : ctx->kernelStages.parts)
    rows = std::max(rows, rowsOfLevel(ctx, j, part.level));
  return rows;
}

/// gnnrtSpmmBroadcast over the own rows [0, end) (gnnrtSpmmBroadcastRows:
/// a sampled batch's level), whose edges read sources of `sourceLevel` (-1:
/// any); `entry` names the entry point.
static void spmmBroadcast(gnnrtContext *ctx, int64_t mean,
                          gnnrtMemRefF32 *weights, gnnrtMemRefF32 *in,
                          gnnrtMemRefF32 *out, int64_t width, int64_t end,
                          int64_t sourceLevel, const char *entry) {
  const int size = rowsComm(ctx).size(), rank = rowsComm(ctx).rank();
  const int64_t V = ctx->ds.numVertices, S = sourcesOf(ctx->ds);
  if (end < 0 || end > V)
    fatal(std::string(entry) + ": rows [0, " + std::to_string(end) +
          ") beyond the " + std::to_string(V) + " own rows");
  if (sharesAreClosed(ctx)) {
    // The own rows among zeros: the edges read no other.
    float *all = stageBuffer(ctx, S * width);
    padOwnRows(ctx, in->aligned + in->offset, all, width);
    gnnrtMemRefF32 rows = rowsMemRef(all, S, width);
    ctx->device->spmmRows(ctx, 1, mean, weights, &rows, out, width, 0, end, 0,
                          S);
    return;
  }
  if (!rowsAreSplit(ctx)) {
    ctx->device->spmmRows(ctx, 1, mean, weights, in, out, width, 0, end, 0, S);
    return;
  }
  const std::vector<int64_t> &p = prepareStages(ctx, entry, in, width);
  float *own = in->aligned + in->offset;
  // Stage j's rows: the rank's own at j = rank, else a receive buffer by
  // parity (BC1, BC2), free again once stage j - 1's sums are done.
  auto rowsOf = [&](int j) {
    return j == rank ? own : ctx->stageBuffers[j % 2]->data;
  };
  // Stage j's rows that the edges read: a co-batch's process's rows of the
  // sources' level (a prefix of its rows); the rest of the stage's range is
  // never read.
  Request pending[2];
  auto issue = [&](int j) {
    pending[j % 2] = rowsComm(ctx).iBroadcast(
        rowsOf(j), rowsOfLevel(ctx, j, sourceLevel) * width, j);
  };
  issue(0);
  for (int j = 0; j < size; ++j) {
    rowsComm(ctx).wait(pending[j % 2]);
    if (j + 1 < size)
      issue(j + 1); // in flight during stage j's sums
    ctx->device->spmmStage(ctx, mean, weights, rowsOf(j), p[j], p[j + 1], out,
                           width, end);
  }
}

void _mlir_ciface_gnnrtSpmmBroadcast(gnnrtContext *ctx, int64_t mean,
                                     gnnrtMemRefF32 *weights,
                                     gnnrtMemRefF32 *in, gnnrtMemRefF32 *out,
                                     int64_t width) {
  spmmBroadcast(ctx, mean, weights, in, out, width, ctx->ds.numVertices, -1,
                "gnnrtSpmmBroadcast");
}

void _mlir_ciface_gnnrtSpmmBroadcastRows(gnnrtContext *ctx, int64_t mean,
                                         gnnrtMemRefF32 *weights,
                                         gnnrtMemRefF32 *in,
                                         gnnrtMemRefF32 *out, int64_t width,
                                         int64_t end, int64_t sourceLevel) {
  if (sourceLevel < 0)
    fatal("gnnrtSpmmBroadcastRows: no level " + std::to_string(sourceLevel));
  spmmBroadcast(ctx, mean, weights, in, out, width, end, sourceLevel,
                "gnnrtSpmmBroadcastRows");
}

int64_t gnnrtStageCount(gnnrtContext *ctx) {
  return rowsAreSplit(ctx) ? rowsComm(ctx).size() : 1;
}

int64_t gnnrtStageStart(gnnrtContext *ctx, int64_t stage) {
  const int64_t count = gnnrtStageCount(ctx);
  if (stage < 0 || stage > count)
    fatal("gnnrtStageStart: stage " + std::to_string(stage) + " of " +
          std::to_string(count));
  if (!rowsAreSplit(ctx))
    return stage == 0 ? 0 : sourcesOf(ctx->ds);
  checkRowStarts(ctx, "gnnrtStageStart");
  return ctx->rowStarts[stage];
}

int64_t gnnrtStageLevelEnd(gnnrtContext *ctx, int64_t stage, int64_t level) {
  const int64_t count = gnnrtStageCount(ctx);
  if (stage < 0 || stage >= count)
    fatal("gnnrtStageLevelEnd: stage " + std::to_string(stage) + " of " +
          std::to_string(count));
  if (!rowsAreSplit(ctx))
    return gnnrtStageStart(ctx, stage + 1);
  checkRowStarts(ctx, "gnnrtStageLevelEnd");
  // At least the rows any of a reduce loop's parts sends (a level past
  // the batch's bands counts every row).
  const int j = static_cast<int>(stage);
  return ctx->rowStarts[stage] +
         std::max(rowsOfLevel(ctx, j, level), partRows(ctx, j));
}

/// The stage's rows of every vertex's rows at `data` as a memref that row u
/// of every vertex's is read or written at u * width of (the data shifted
/// by the stage's first row: as an address, since the shifted pointer
/// points at no object of its own).
static gnnrtMemRefF32 stageMemRef(const gnnrtContext *ctx, float *data,
                                  int64_t stage, int64_t width) {
  const std::vector<int64_t> &p = ctx->rowStarts;
  const uintptr_t shifted =
      reinterpret_cast<uintptr_t>(data) -
      static_cast<uintptr_t>(p[stage] * width) * sizeof(float);
  return rowsMemRef(reinterpret_cast<float *>(shifted), p[stage + 1], width);
}

/// Checks that `stage` is the one a staged kernel's loop asks next.
static void checkStage(gnnrtContext *ctx, const char *entry, int64_t stage) {
  const int64_t count = gnnrtStageCount(ctx);
  const int64_t expected = stage == 0 ? 0 : ctx->kernelStages.next;
  if (stage < 0 || stage >= count || stage != expected)
    fatal(std::string(entry) + ": stage " + std::to_string(stage) +
          " asked, stage " + std::to_string(expected) + " expected, of " +
          std::to_string(count));
}

/// Checks the own rows, their width and the sources' level a staged
/// kernel's loop gives at `stage`: at stage 0 they are kept (and the stage
/// buffers grown for that width), later they must be the same.
static void keepStageOwnRows(gnnrtContext *ctx, const char *entry,
                             gnnrtMemRefF32 *own, int64_t width,
                             int64_t sourceLevel, int64_t stage) {
  auto &state = ctx->kernelStages;
  if (stage == 0) {
    prepareStages(ctx, entry, own, width);
    state.own = own->aligned + own->offset;
    state.width = width;
    state.sourceLevel = sourceLevel;
  } else if (state.own != own->aligned + own->offset || state.width != width ||
             state.sourceLevel != sourceLevel) {
    fatal(std::string(entry) + ": stage " + std::to_string(stage) +
          " of other own rows, width or level than stage 0's (width " +
          std::to_string(width) + " against " + std::to_string(state.width) +
          ", level " + std::to_string(sourceLevel) + " against " +
          std::to_string(state.sourceLevel) + ")");
  }
}

void _mlir_ciface_gnnrtStageRows(gnnrtMemRefF32 *result, gnnrtContext *ctx,
                                 gnnrtMemRefF32 *own, int64_t width,
                                 int64_t stage, int64_t sourceLevel) {
  const char *entry = "gnnrtStageRows";
  auto &state = ctx->kernelStages;
  checkStage(ctx, entry, stage);
  if (!rowsAreSplit(ctx)) {
    *result = oneStageRows(ctx, entry, own, width, ctx->stageBuffers[0]);
    return;
  }
  const int size = rowsComm(ctx).size();
  keepStageOwnRows(ctx, entry, own, width, sourceLevel, stage);
  float *rows = broadcastStage(
      ctx, state.pending, stage, const_cast<float *>(state.own),
      ctx->stageBuffers, [&](int64_t j) {
        return rowsOfLevel(ctx, static_cast<int>(j), sourceLevel) * width;
      });
  state.next = stage + 1 < size ? stage + 1 : 0;
  *result = stageMemRef(ctx, rows, stage, width);
}

/// Checks that a reduce stage's part is the one stage 0 gave (keepReducePart).
static void checkReducePart(const gnnrtContext *ctx, const char *entry,
                            int64_t stage, int64_t part, const float *ownRows,
                            int64_t width, int64_t rowOffset,
                            int64_t totalWidth,
                            std::optional<int64_t> level = std::nullopt) {
  const auto &state = ctx->kernelStages;
  const bool known = part < static_cast<int64_t>(state.parts.size());
  if (!known || state.parts[part].own != ownRows ||
      state.parts[part].width != width ||
      state.parts[part].rowOffset != rowOffset ||
      state.totalWidth != totalWidth ||
      (level && state.parts[part].level != *level))
    fatal(std::string(entry) + ": stage " + std::to_string(stage) + " part " +
          std::to_string(part) +
          (known ? " of other own rows, width or place than stage 0's"
                 : " that stage 0 did not give (gnnrtReduceStageRows first)"));
}

/// Checks a reduce stage's part: its own rows (`own`, of `width` floats) and
/// its floats [rowOffset, rowOffset + width) of a row of `totalWidth`.
static float *reducePartRows(gnnrtContext *ctx, const char *entry,
                             gnnrtMemRefF32 *own, int64_t width, int64_t part,
                             int64_t rowOffset, int64_t totalWidth) {
  if (width < 0 || part < 0 || rowOffset < 0 || totalWidth < rowOffset + width)
    fatal(std::string(entry) + ": part " + std::to_string(part) + " of " +
          std::to_string(width) + " floats at " + std::to_string(rowOffset) +
          " of " + std::to_string(totalWidth));
  needElements(own->sizes[0], ctx->ds.numVertices * width,
               std::string(entry) + " own rows");
  return own->aligned + own->offset;
}

/// Keeps a reduce stage's part at stage 0 (the parts side by side in rows
/// of `totalWidth`, in order) and checks that every later call gives the
/// same own rows, width and place.
static void keepReducePart(gnnrtContext *ctx, const char *entry, int64_t stage,
                           int64_t part, const float *ownRows, int64_t width,
                           int64_t rowOffset, int64_t totalWidth,
                           int64_t level) {
  auto &state = ctx->kernelStages;
  if (stage == 0 && part == 0) {
    state.parts.clear();
    state.totalWidth = totalWidth;
  }
  if (stage == 0 && part == static_cast<int64_t>(state.parts.size())) {
    if (part > 0 &&
        rowOffset < state.parts.back().rowOffset + state.parts.back().width)
      fatal(std::string(entry) + ": part " + std::to_string(part) + " at " +
            std::to_string(rowOffset) + " overlaps part " +
            std::to_string(part - 1) + "'s floats");
    state.parts.push_back({ownRows, rowOffset, width, level});
  }
  checkReducePart(ctx, entry, stage, part, ownRows, width, rowOffset,
                  totalWidth, level);
}

void _mlir_ciface_gnnrtReduceStageRows(gnnrtMemRefF32 *result,
                                       gnnrtContext *ctx, gnnrtMemRefF32 *own,
                                       int64_t width, int64_t stage,
                                       int64_t part, int64_t rowOffset,
                                       int64_t totalWidth, int64_t level) {
  const char *entry = "gnnrtReduceStageRows";
  if (level < -1)
    fatal(std::string(entry) + ": level " + std::to_string(level));
  checkStage(ctx, entry, stage);
  float *ownRows =
      reducePartRows(ctx, entry, own, width, part, rowOffset, totalWidth);
  if (rowsAreSplit(ctx))
    checkRowStarts(ctx, entry);
  if (stage == 0 && part == 0 && rowsAreSplit(ctx)) {
    // Every reduce of an earlier loop is done (its last send waited).
    ctx->kernelStages.most = growStageBuffers(ctx, totalWidth);
  }
  keepReducePart(ctx, entry, stage, part, ownRows, width, rowOffset, totalWidth,
                 level);
  if (!rowsAreSplit(ctx)) {
    // Closed shares: every source's sums, of which the own rows are kept
    // (each part at its offset of the buffer); else the own rows are all
    // (every source's).
    const int64_t S = sourcesOf(ctx->ds);
    if (!sharesAreClosed(ctx))
      needElements(own->sizes[0], S * width, std::string(entry) + " own rows");
    *result = sharesAreClosed(ctx)
                  ? rowsMemRef(stageBuffer(ctx, S * totalWidth) + S * rowOffset,
                               S, width)
                  : *own;
    return;
  }
  auto &state = ctx->kernelStages;
  if (part == 0) {
    // Stage j - 2's reduces used this parity's buffer.
    for (Request &r : state.reducing[stage % 2])
      rowsComm(ctx).wait(r);
    state.reducing[stage % 2].clear();
  }
  *result = stageMemRef(ctx,
                        stage == rowsComm(ctx).rank()
                            ? ownRows
                            : ctx->stageBuffers[stage % 2]->data +
                                  state.most * rowOffset,
                        stage, width);
}

void _mlir_ciface_gnnrtReduceStageSend(gnnrtContext *ctx, gnnrtMemRefF32 *own,
                                       int64_t width, int64_t stage,
                                       int64_t part, int64_t parts,
                                       int64_t rowOffset, int64_t totalWidth) {
  const char *entry = "gnnrtReduceStageSend";
  auto &state = ctx->kernelStages;
  checkStage(ctx, entry, stage);
  float *ownRows =
      reducePartRows(ctx, entry, own, width, part, rowOffset, totalWidth);
  if (part >= parts)
    fatal(std::string(entry) + ": part " + std::to_string(part) + " of " +
          std::to_string(parts));
  checkReducePart(ctx, entry, stage, part, ownRows, width, rowOffset,
                  totalWidth);
  if (!rowsAreSplit(ctx)) {
    // gnnrtReduceStageRows gave the buffer of every source's sums.
    if (sharesAreClosed(ctx))
      takeOwnRows(ctx,
                  ctx->stageBuffers[0]->data + sourcesOf(ctx->ds) * rowOffset,
                  ownRows, width);
    return;
  }
  const int size = rowsComm(ctx).size(), rank = rowsComm(ctx).rank();
  float *rows = stage == rank ? ownRows
                              : ctx->stageBuffers[stage % 2]->data +
                                    state.most * rowOffset;
  // Stage j's partial sums of its owner's rows of the part's level (the
  // rest are zero) to their owner, in place there, while stage j + 1
  // computes; the owner's own rows beyond them are zero.
  const int64_t level = state.parts[part].level;
  const int64_t count = rowsOfLevel(ctx, static_cast<int>(stage), level);
  if (stage == rank)
    std::fill(ownRows + count * width, ownRows + ctx->ds.numVertices * width,
              0.0f);
  state.reducing[stage % 2].push_back(rowsComm(ctx).iReduce(
      rows, rows, count * width, static_cast<int>(stage), ReduceOp::Sum));
  if (part + 1 < parts)
    return;
  state.next = stage + 1 < size ? stage + 1 : 0;
  if (stage + 1 == size) {
    for (auto &pending : state.reducing) {
      for (Request &r : pending)
        rowsComm(ctx).wait(r);
      pending.clear();
    }
    // The loop is over: a later loop's gnnrtReduceStageSources never sizes
    // its stages by these parts (it finds none before its own).
    state.parts.clear();
  }
}

void _mlir_ciface_gnnrtReduceStageSources(gnnrtMemRefF32 *result,
                                          gnnrtContext *ctx,
                                          gnnrtMemRefF32 *own, int64_t width,
                                          int64_t stage) {
  const char *entry = "gnnrtReduceStageSources";
  auto &state = ctx->kernelStages;
  const int64_t count = gnnrtStageCount(ctx);
  if (width < 0)
    fatal(std::string(entry) + ": negative width");
  const int64_t expected = stage == 0 ? 0 : state.sourcesNext;
  if (stage < 0 || stage >= count || stage != expected)
    fatal(std::string(entry) + ": stage " + std::to_string(stage) +
          " asked, stage " + std::to_string(expected) + " expected, of " +
          std::to_string(count));
  if (!rowsAreSplit(ctx)) {
    *result = oneStageRows(ctx, entry, own, width, state.sourceBuffers[0]);
    return;
  }
  const int size = rowsComm(ctx).size();
  needElements(own->sizes[0], ctx->ds.numVertices * width,
               std::string(entry) + " own rows");
  checkRowStarts(ctx, entry);
  const float *ownRows = own->aligned + own->offset;
  if (stage == 0) {
    growStageBuffers(ctx, width, &state.sourceBuffers);
    state.sourcesOwn = ownRows;
    state.sourcesWidth = width;
  } else if (state.sourcesOwn != ownRows || state.sourcesWidth != width) {
    fatal(std::string(entry) + ": stage " + std::to_string(stage) +
          " of other own rows or width than stage 0's (width " +
          std::to_string(width) + " against " +
          std::to_string(state.sourcesWidth) + ")");
  }
  // Stage j's sources that the kernel sums for: those of the reduce's
  // parts' lowest level (gnnrtReduceStageRows gave the parts before this
  // call, gnnrtStageLevelEnd ends the kernel's range there), a prefix of
  // the owner's rows on a co-batch; the rest are never read.
  auto sourceRows = [&](int64_t j) {
    return state.parts.empty() ? ctx->rowStarts[j + 1] - ctx->rowStarts[j]
                               : partRows(ctx, static_cast<int>(j));
  };
  float *rows = broadcastStage(
      ctx, state.sourcesPending, stage, const_cast<float *>(state.sourcesOwn),
      state.sourceBuffers, [&](int64_t j) { return sourceRows(j) * width; });
  state.sourcesNext = stage + 1 < size ? stage + 1 : 0;
  *result = stageMemRef(ctx, rows, stage, width);
}

/// gnnrtSpmmReduce whose sums are zero beyond the sources' `level` (-1:
/// none); `entry` names the entry point.
static void spmmReduce(gnnrtContext *ctx, gnnrtMemRefF32 *weights,
                       gnnrtMemRefF32 *in, gnnrtMemRefF32 *out, int64_t width,
                       int64_t level, const char *entry) {
  const int size = rowsComm(ctx).size(), rank = rowsComm(ctx).rank();
  if (sharesAreClosed(ctx)) {
    // Every source's sums, of which only the own rows are non-zero.
    float *all = stageBuffer(ctx, sourcesOf(ctx->ds) * width);
    gnnrtMemRefF32 rows = rowsMemRef(all, sourcesOf(ctx->ds), width);
    ctx->device->spmm(ctx, 0, 0, 1, weights, in, &rows, width);
    takeOwnRows(ctx, all, out->aligned + out->offset, width);
    return;
  }
  if (!rowsAreSplit(ctx)) {
    ctx->device->spmm(ctx, 0, 0, 1, weights, in, out, width);
    return;
  }
  const std::vector<int64_t> &p = prepareStages(ctx, entry, out, width);
  float *own = out->aligned + out->offset;
  // Stage j's sources whose sums may be non-zero: a co-batch's owner's rows
  // of the level (a prefix of its rows).
  auto reduced = [&](int j) { return rowsOfLevel(ctx, j, level); };
  // Stage j: this rank's partial sums of the part j's sources, into the
  // owner's rows (in place) or a send buffer by parity, then reduced to
  // the owner while stage j + 1 computes.
  Request pending[2];
  for (int j = 0; j < size; ++j) {
    rowsComm(ctx).wait(pending[j % 2]); // stage j - 2's buffer is free again
    float *rows = j == rank ? own : ctx->stageBuffers[j % 2]->data;
    const int64_t count = reduced(j);
    ctx->device->spmmSourceStage(ctx, weights, in, p[j], p[j] + count, rows,
                                 width);
    pending[j % 2] = rowsComm(ctx).iReduce(rows, j == rank ? own : rows,
                                           count * width, j, ReduceOp::Sum);
  }
  rowsComm(ctx).wait(pending[0]);
  rowsComm(ctx).wait(pending[1]);
  std::fill(own + reduced(rank) * width, own + ctx->ds.numVertices * width,
            0.0f);
}

void _mlir_ciface_gnnrtSpmmReduce(gnnrtContext *ctx, gnnrtMemRefF32 *weights,
                                  gnnrtMemRefF32 *in, gnnrtMemRefF32 *out,
                                  int64_t width) {
  spmmReduce(ctx, weights, in, out, width, -1, "gnnrtSpmmReduce");
}

void _mlir_ciface_gnnrtSpmmReduceRows(gnnrtContext *ctx,
                                      gnnrtMemRefF32 *weights,
                                      gnnrtMemRefF32 *in, gnnrtMemRefF32 *out,
                                      int64_t width, int64_t level) {
  if (level < 0)
    fatal("gnnrtSpmmReduceRows: no level " + std::to_string(level));
  spmmReduce(ctx, weights, in, out, width, level, "gnnrtSpmmReduceRows");
}

void _mlir_ciface_gnnrtReduceScatterRows(gnnrtContext *ctx, gnnrtMemRefF32 *in,
                                         gnnrtMemRefF32 *out, int64_t width) {
  checkRowCollective(ctx, "gnnrtReduceScatterRows", out, in, width);
  const float *x = in->aligned + in->offset;
  float *y = out->aligned + out->offset;
  if (sharesAreClosed(ctx)) {
    takeOwnRows(ctx, x, y, width); // the others' partials are zero here
    return;
  }
  if (!rowsAreSplit(ctx)) {
    std::copy(x, x + ctx->ds.numVertices * width, y);
    return;
  }
  std::vector<int64_t> counts, displs;
  rowBlocks(ctx, width, counts, displs);
  rowsComm(ctx).reduceScatterV(x, y, counts.data(), ReduceOp::Sum);
}

/// Share r's first rows at `level` (gnnrtLevelRows of the share); `entry`
/// names the entry point in messages.
static int64_t shareRows(const gnnrtContext *ctx, int r, int64_t level,
                         const char *entry) {
  const std::vector<int64_t> &rows = ctx->shareLevels[r];
  if (level < 0)
    fatal(std::string(entry) + ": no level " + std::to_string(level));
  return level < static_cast<int64_t>(rows.size())
             ? rows[level]
             : ctx->rowStarts[r + 1] - ctx->rowStarts[r];
}

/// Copies share r's first `count` rows between the whole graph's rows
/// `whole` (placed by level band) and `packed` (in the share's order, one
/// after another): into `packed` when `pack`, else out of it.
static void moveShareRows(const gnnrtContext *ctx, int r, int64_t count,
                          float *whole, float *packed, int64_t width,
                          bool pack) {
  forEachShareRun(ctx->shareLevels, r, count,
                  [&](int64_t row, int64_t at, int64_t n) {
                    float *w = whole + at * width, *p = packed + row * width;
                    if (pack)
                      std::copy(w, w + n * width, p);
                    else
                      std::copy(p, p + n * width, w);
                  });
}

/// P³'s sync: the all-to-all of shares' rows. On a lane of the pipeline
/// (Pipeline.h) it is issued without waiting and ends the batch's segment:
/// other batches' segments run until this batch's next one waits for it.
static void exchangeShares(gnnrtContext *ctx, const float *send,
                           const std::vector<int64_t> &sendCounts,
                           const std::vector<int64_t> &sendDispls, float *recv,
                           const std::vector<int64_t> &recvCounts,
                           const std::vector<int64_t> &recvDispls,
                           int64_t width) {
  if (!PipelineScheduler::onLane()) {
    rowsComm(ctx).allToAllV(send, sendCounts.data(), sendDispls.data(), recv,
                            recvCounts.data(), recvDispls.data(), width);
    return;
  }
  Request request =
      rowsComm(ctx).iAllToAllV(send, sendCounts.data(), sendDispls.data(), recv,
                               recvCounts.data(), recvDispls.data(), width);
  PipelineScheduler::yield();
  rowsComm(ctx).wait(request);
}

void _mlir_ciface_gnnrtAllGatherWhole(gnnrtContext *ctx, gnnrtMemRefF32 *in,
                                      gnnrtMemRefF32 *out, int64_t width,
                                      int64_t level) {
  if (!sharesAreClosed(ctx))
    return _mlir_ciface_gnnrtAllGatherRows(ctx, in, out, width);
  checkRowCollective(ctx, "gnnrtAllGatherWhole", in, out, width);
  const int size = rowsComm(ctx).size(), rank = rowsComm(ctx).rank();
  // P³'s push: the owner's first rows to every process, each landing at
  // its share's places.
  std::vector<int64_t> sendCounts(
      size, shareRows(ctx, rank, level, "gnnrtAllGatherWhole")),
      sendDispls(size, 0), recvCounts(size), recvDispls(size);
  int64_t received = 0;
  for (int r = 0; r < size; ++r) {
    recvCounts[r] = shareRows(ctx, r, level, "gnnrtAllGatherWhole");
    recvDispls[r] = received;
    received += recvCounts[r];
  }
  float *blocks = stageBuffer(ctx, received * width);
  exchangeShares(ctx, in->aligned + in->offset, sendCounts, sendDispls, blocks,
                 recvCounts, recvDispls, width);
  float *y = out->aligned + out->offset;
  std::fill(y, y + sourcesOf(ctx->ds) * width, 0.0f);
  for (int r = 0; r < size; ++r)
    moveShareRows(ctx, r, recvCounts[r], y, blocks + recvDispls[r] * width,
                  width, false);
}

void _mlir_ciface_gnnrtReduceScatterWhole(gnnrtContext *ctx, gnnrtMemRefF32 *in,
                                          gnnrtMemRefF32 *out, int64_t width,
                                          int64_t level) {
  if (!sharesAreClosed(ctx))
    return _mlir_ciface_gnnrtReduceScatterRows(ctx, in, out, width);
  checkRowCollective(ctx, "gnnrtReduceScatterWhole", out, in, width);
  const int size = rowsComm(ctx).size(), rank = rowsComm(ctx).rank();
  // P³'s pull: each process's partial rows of share r to its owner r,
  // which sums the processes' blocks in rank order.
  const int64_t own = shareRows(ctx, rank, level, "gnnrtReduceScatterWhole");
  std::vector<int64_t> sendCounts(size), sendDispls(size),
      recvCounts(size, own), recvDispls(size);
  int64_t sent = 0;
  for (int r = 0; r < size; ++r) {
    sendCounts[r] = shareRows(ctx, r, level, "gnnrtReduceScatterWhole");
    sendDispls[r] = sent;
    sent += sendCounts[r];
    recvDispls[r] = r * own;
  }
  float *packed = stageBuffer(ctx, sent * width, 1);
  for (int r = 0; r < size; ++r)
    moveShareRows(ctx, r, sendCounts[r], in->aligned + in->offset,
                  packed + sendDispls[r] * width, width, true);
  float *blocks = stageBuffer(ctx, size * own * width);
  exchangeShares(ctx, packed, sendCounts, sendDispls, blocks, recvCounts,
                 recvDispls, width);
  float *y = out->aligned + out->offset;
  std::copy(blocks, blocks + own * width, y);
  for (int r = 1; r < size; ++r) {
    const float *b = blocks + r * own * width;
    for (int64_t i = 0; i < own * width; ++i)
      y[i] += b[i];
  }
  std::fill(y + own * width, y + ctx->ds.numVertices * width, 0.0f);
}

/// The rows each level of the model computes on the whole graph
/// (gnnrtLevelRows of the own rows): closed shares' by level band, a
/// batch's own when it is the whole graph, else every vertex.
int64_t gnnrtWholeLevelRows(gnnrtContext *ctx, int64_t level) {
  if (level < 0)
    fatal("gnnrtWholeLevelRows: no level " + std::to_string(level));
  if (sharesAreClosed(ctx))
    return shareLevelRows(ctx->shareLevels, level);
  if (sourcesOf(ctx->ds) == ctx->ds.numVertices)
    return gnnrtLevelRows(ctx, level);
  return sourcesOf(ctx->ds);
}

void _mlir_ciface_gnnrtOwnRows(gnnrtContext *ctx, gnnrtMemRefF32 *in,
                               gnnrtMemRefF32 *out, int64_t width) {
  checkRowCollective(ctx, "gnnrtOwnRows", out, in, width);
  takeOwnRows(ctx, in->aligned + in->offset, out->aligned + out->offset, width);
}

void _mlir_ciface_gnnrtPadRows(gnnrtContext *ctx, gnnrtMemRefF32 *in,
                               gnnrtMemRefF32 *out, int64_t width) {
  checkRowCollective(ctx, "gnnrtPadRows", in, out, width);
  padOwnRows(ctx, in->aligned + in->offset, out->aligned + out->offset, width);
}

} // extern "C"
