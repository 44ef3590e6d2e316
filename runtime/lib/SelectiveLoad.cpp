//===- SelectiveLoad.cpp - NeuGraph's selective loading of chunks ---------===//

#include "SelectiveLoad.h"

#include "Context.h"
#include "Device.h"
#include "GraphOnStorage.h"
#include "TilePipeline.h"

#include "gnnrt/GNNRuntime.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <numeric>

namespace gnnrt {

bool tileInputRows(const DeviceGraph &g, int side, int64_t lo, int64_t hi,
                   int64_t inLo, int64_t inHi, std::vector<uint8_t> &marks,
                   RowRuns &runs, int64_t &rows) {
  runs.clear();
  rows = 0;
  const int64_t *offsets = g.offsets[side != 0];
  // The other ends, ascending within a row: the sources of a destination
  // (CSC), the destinations of a source (CSR; or through its edge ids).
  const int32_t *ends = side ? g.index[0] : g.index[3];
  const int32_t *edgeIds = side ? nullptr : g.index[2];
  const int32_t *dst = g.index[1];
  if (!offsets || (!ends && !(edgeIds && dst)))
    return false;
  auto end = [&](int64_t e) -> int64_t {
    return ends ? ends[e] : dst[edgeIds[e]];
  };
  marks.assign(static_cast<size_t>(std::max<int64_t>(inHi - inLo, 0)), 0);
  for (int64_t r = lo; r < hi; ++r) {
    // The row's edges into [inLo, inHi): a contiguous range.
    int64_t a = offsets[r], b = offsets[r + 1];
    while (a < b) { // the first end >= inLo
      const int64_t mid = a + (b - a) / 2;
      if (end(mid) < inLo)
        a = mid + 1;
      else
        b = mid;
    }
    for (int64_t e = a; e < offsets[r + 1]; ++e) {
      const int64_t v = end(e);
      if (v >= inHi)
        break;
      marks[v - inLo] = 1;
    }
  }
  const int64_t n = inHi - inLo;
  for (int64_t i = 0; i < n;) {
    if (!marks[i]) {
      ++i;
      continue;
    }
    int64_t j = i;
    while (j < n && marks[j])
      ++j;
    runs.emplace_back(i, j);
    rows += j - i;
    i = j;
  }
  return true;
}

namespace {

using Clock = std::chrono::steady_clock;

/// The least seconds of five runs of `run`, each after `before` (not
/// timed); false when one fails.
template <typename Run, typename Before>
bool bestOfFive(Run run, Before before, double &seconds) {
  seconds = 0;
  for (int i = 0; i < 5; ++i) {
    before();
    const Clock::time_point t0 = Clock::now();
    if (!run())
      return false;
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    seconds = i == 0 ? s : std::min(seconds, s);
  }
  seconds = std::max(seconds, 1e-9);
  return true;
}

constexpr int64_t kProbeBytes = int64_t(4) << 20;

} // namespace

bool SelectiveLoader::throughputs(SpillFile &file, int64_t rowBytes,
                                  double &copy, double &trans,
                                  std::string &error) {
  rowBytes = std::clamp<int64_t>(rowBytes, 4, kProbeBytes);
  auto known = tCopy.find(rowBytes);
  if (probed && known != tCopy.end()) {
    copy = known->second;
    trans = tTrans;
    return true;
  }
  std::vector<char> host(static_cast<size_t>(kProbeBytes));
  for (int64_t i = 0; i < kProbeBytes; ++i)
    host[i] = static_cast<char>(i * 131 + 7);
  if (!probed) {
    if (!file.write(host.data(), kProbeBytes, probe, error)) {
      error = "the selective loads' probe of the spill file: " + error;
      return false;
    }
    probed = true;
    double seconds;
    if (!bestOfFive([&] { return file.read(probe, host.data(), error); }, [] {},
                    seconds))
      return false;
    tTrans = static_cast<double>(kProbeBytes) / seconds;
  }
  // Rows of `rowBytes` at every other row of the probe.
  const int64_t rows = std::max<int64_t>(kProbeBytes / (2 * rowBytes), 1);
  double seconds;
  if (!bestOfFive(
          [&] {
            for (int64_t r = 0; r < rows; ++r)
              if (!file.readPart(probe, 2 * r * rowBytes,
                                 host.data() + r * rowBytes, rowBytes, error))
                return false;
            return true;
          },
          // Under --uncached-reads each pass reads from the disk: the pages
          // its rows covered in part stay cached otherwise (File.h).
          [&] { file.dropCache(probe); }, seconds))
    return false;
  copy = tCopy[rowBytes] = static_cast<double>(rows * rowBytes) / seconds;
  trans = tTrans;
  return true;
}

std::string SelectiveLoader::json(const SpillCounters &spilled) const {
  const char *modes[] = {"auto", "always", "never"};
  std::string text;
  char line[256];
  std::snprintf(line, sizeof line,
                "\"selective\": {\"mode\": \"%s\", \"filtered\": %lld, "
                "\"whole\": %lld, \"no_edges\": %lld, \"mean_theta\": %.6g, "
                "\"skipped_bytes\": %lld, \"t_trans_bytes_per_s\": %.6g, "
                "\"t_copy\": [",
                modes[static_cast<int>(mode)], static_cast<long long>(filtered),
                static_cast<long long>(whole), static_cast<long long>(noEdges),
                thetaCount ? thetaSum / static_cast<double>(thetaCount) : 0.0,
                static_cast<long long>(spilled.selectiveSkippedBytes), tTrans);
  text += line;
  bool first = true;
  for (auto [rowBytes, copy] : tCopy) {
    std::snprintf(line, sizeof line,
                  "%s{\"row_bytes\": %lld, \"bytes_per_s\": %.6g, "
                  "\"threshold\": %.6g}",
                  first ? "" : ", ", static_cast<long long>(rowBytes), copy,
                  copy / (copy + tTrans));
    text += line;
    first = false;
  }
  return text + "]}";
}

bool SelectiveLoader::parseMode(const std::string &text, Mode &mode) {
  if (text == "auto")
    mode = Mode::Auto;
  else if (text == "always")
    mode = Mode::Always;
  else if (text == "never")
    mode = Mode::Never;
  else
    return false;
  return true;
}

namespace {

/// How a tile reads its input chunk.
enum class TileRead {
  NotOut,   // resident, partial or absent: as gnnrtFetchChunk leaves it
  NoEdges,  // out, its edges not at hand: whole
  Whole,    // out, read whole by the rule or the mode
  Filtered, // out, read at `runs` only
};

/// The read of chunk `chunk` of `slot` for the tile of rows [lo, hi) on
/// `side`; `runs` the rows to read, counted from the chunk's first (every
/// row unless filtered).
/// The rows a tile's edges reach in its input chunk (tileInputRows), kept
/// for the tile's other inputs: the same chunk of slots with the same rows.
struct TileRows {
  bool known = false, atHand = false;
  RowRuns needed;
  int64_t count = 0;
};

TileRead planTileRead(gnnrtContext *ctx, const char *entry, int64_t slot,
                      int64_t chunk, int64_t side, int64_t lo, int64_t hi,
                      RowRuns &runs, TileRows *known = nullptr) {
  SpillStore &spill = *ctx->spill;
  SelectiveLoader &sel = ctx->selective;
  int64_t rows = 0, rowElements = 0, chunks = 0;
  if (!spill.chunkShape(slot, rows, rowElements, chunks))
    fatal(std::string(entry) + ": slot " + std::to_string(slot) +
          " is not chunked by rows (no gnnrtBufferChunks for it)");
  if (side != 0 && side != 1)
    fatal(std::string(entry) + ": side " + std::to_string(side) +
          " (expected 0, sources, or 1, destinations)");
  if (chunk < 0 || chunk >= chunks)
    fatal(std::string(entry) + ": slot " + std::to_string(slot) + " has " +
          std::to_string(chunks) + " chunks, not chunk " +
          std::to_string(chunk));
  if (!spill.isChunkOut(slot, chunk))
    return TileRead::NotOut;
  const int64_t inLo = gnnrtChunkRowBound(rows, chunks, chunk);
  const int64_t inHi = gnnrtChunkRowBound(rows, chunks, chunk + 1);
  runs.assign(1, {0, inHi - inLo});
  const DeviceGraph &g = ctx->device->graph();
  const bool edgesAtHand =
      ctx->device->deviceMemoryIsHostMemory() && g.rowsOn(side) == rows &&
      g.rowsOn(1 - side) == rows &&
      (!ctx->graphOnStorage || lo == hi ||
       ctx->graphOnStorage->covers(static_cast<int>(side), lo, hi));
  if (!edgesAtHand || inHi == inLo) {
    ++sel.noEdges;
    return TileRead::NoEdges;
  }
  if (sel.mode == SelectiveLoader::Mode::Never) {
    ++sel.whole;
    return TileRead::Whole;
  }
  TileRows own;
  TileRows &tile = known ? *known : own;
  if (!tile.known) {
    tile.atHand = tileInputRows(g, static_cast<int>(side), lo, hi, inLo, inHi,
                                sel.marks, tile.needed, tile.count);
    tile.known = true;
  }
  if (!tile.atHand) {
    ++sel.noEdges;
    return TileRead::NoEdges;
  }
  const int64_t count = tile.count;
  const double theta =
      static_cast<double>(count) / static_cast<double>(inHi - inLo);
  sel.thetaSum += theta;
  ++sel.thetaCount;
  bool filter = sel.mode == SelectiveLoader::Mode::Always;
  if (!filter) {
    double tCopy, tTrans;
    std::string error;
    if (!sel.throughputs(spill.file(), rowElements * 4, tCopy, tTrans, error))
      fatal(std::string(entry) + ": " + error);
    filter = shouldFilter(theta, tCopy, tTrans);
  }
  if (!filter) {
    ++sel.whole;
    return TileRead::Whole;
  }
  ++sel.filtered;
  runs = tile.needed;
  return TileRead::Filtered;
}

/// Reads the chunk as planned, at once.
void readTileInput(gnnrtContext *ctx, const char *entry, Buffer &buf,
                   int64_t slot, int64_t chunk, TileRead how,
                   const RowRuns &runs) {
  std::string error;
  const bool ok =
      how == TileRead::Filtered
          ? ctx->spill->fetchChunkRows(slot, *ctx->device, buf, chunk, runs,
                                       error)
          : ctx->spill->fetchChunk(slot, *ctx->device, buf, chunk, error);
  if (!ok)
    fatal(std::string(entry) + ": " + error);
}

} // namespace

void fetchTileInput(gnnrtContext *ctx, Buffer &buf, int64_t slot, int64_t chunk,
                    int64_t side, int64_t outChunk) {
  int64_t rows = 0, rowElements = 0, chunks = 0;
  if (ctx->spill->chunkShape(slot, rows, rowElements, chunks) &&
      (outChunk < 0 || outChunk >= chunks))
    fatal("gnnrtFetchChunkFor: slot " + std::to_string(slot) + " has " +
          std::to_string(chunks) + " chunks, not output chunk " +
          std::to_string(outChunk));
  RowRuns runs;
  const TileRead how =
      planTileRead(ctx, "gnnrtFetchChunkFor", slot, chunk, side,
                   gnnrtChunkRowBound(rows, chunks, outChunk),
                   gnnrtChunkRowBound(rows, chunks, outChunk + 1), runs);
  readTileInput(ctx, "gnnrtFetchChunkFor", buf, slot, chunk, how, runs);
}

namespace {

/// An input of a tile: chunk `chunk` of slot `slot` (buffer `buf`).
struct TileInput {
  int64_t slot;
  Buffer *buf;
};

/// A tile whose input rows [inBegin, inEnd) are chunk `chunk` of each of
/// `inputs` and whose rows are [begin, end) on `side`: fetches the chunks
/// as fetchTileInput does and runs compute(a, b) over input ranges [a, b)
/// that make up [inBegin, inEnd): one range when no chunk is out, else
/// sub-chunks the prefetch thread reads (each input's rows of it) while the
/// calling thread computes those read before (TilePipeline.h). `site` tells
/// tiles of the same rows and input apart (their profiles). With `inOrder`
/// the sub-chunks run in the input's order (a gather that keeps the first
/// of equal values); else the range with input row 0 first, the one with
/// the last input row last and the others in the order the pipeline fixes.
void pipelineTile(gnnrtContext *ctx, const char *entry,
                  const std::vector<TileInput> &inputs, int64_t chunk,
                  int64_t side, int64_t begin, int64_t end, int64_t inBegin,
                  int64_t inEnd, int64_t site, bool inOrder,
                  const std::function<void(int64_t, int64_t)> &compute) {
  Device &device = *ctx->device;
  const DeviceGraph &g = device.graph();
  const size_t numInputs = inputs.size();
  std::vector<RowRuns> runs(numInputs);
  std::vector<TileRead> how(numInputs);
  bool anyOut = false;
  TileRows rows; // the same rows of every input's chunk
  for (size_t i = 0; i < numInputs; ++i) {
    how[i] = planTileRead(ctx, entry, inputs[i].slot, chunk, side, begin, end,
                          runs[i], &rows);
    anyOut |= how[i] != TileRead::NotOut;
  }
  TilePipeline &pipe = ctx->pipeline;
  const int64_t n = std::min(pipe.subChunks, inEnd - inBegin);
  const TilePipeline::Key key{inputs.front().slot, chunk, side, begin, site};
  const TilePipeline::Plan plan =
      anyOut && n > 1 && device.deviceMemoryIsHostMemory()
          ? pipe.planFor(key)
          : TilePipeline::Plan::Unpipelined;
  if (plan != TilePipeline::Plan::Pipelined) {
    const auto t0 = std::chrono::steady_clock::now();
    for (size_t i = 0; i < numInputs; ++i)
      readTileInput(ctx, entry, *inputs[i].buf, inputs[i].slot, chunk, how[i],
                    runs[i]);
    needGraphRows(ctx, side, begin, end, entry);
    compute(inBegin, inEnd);
    if (plan == TilePipeline::Plan::Baseline) {
      device.synchronize();
      pipe.recordBaseline(key, std::chrono::duration<double>(
                                   std::chrono::steady_clock::now() - t0)
                                   .count());
    } else if (anyOut && n > 1) {
      ++pipe.unpipelined;
    }
    return;
  }
  needGraphRows(ctx, side, begin, end, entry);
  // Sub-chunk j: input rows [a_j, a_{j+1}) and, per input that is out, the
  // runs within them.
  std::vector<int64_t> bounds(n + 1);
  for (int64_t j = 0; j <= n; ++j)
    bounds[j] = inBegin + j * (inEnd - inBegin) / n;
  std::vector<std::vector<RowRuns>> parts(numInputs, std::vector<RowRuns>(n));
  for (size_t i = 0; i < numInputs; ++i) {
    if (how[i] == TileRead::NotOut)
      continue;
    for (auto [first, last] : runs[i])
      for (int64_t j = 0; j < n; ++j) {
        const int64_t a = std::max(first, bounds[j] - inBegin);
        const int64_t b = std::min(last, bounds[j + 1] - inBegin);
        if (a < b)
          parts[i][j].emplace_back(a, b);
      }
  }
  // An input that is not out is as gnnrtFetchChunk leaves it (resident;
  // an absent or partial chunk read whole) before the others stream in.
  for (size_t i = 0; i < numInputs; ++i)
    if (how[i] == TileRead::NotOut)
      readTileInput(ctx, entry, *inputs[i].buf, inputs[i].slot, chunk, how[i],
                    runs[i]);
  std::string error;
  std::vector<int64_t> bytes(numInputs, 0);
  std::vector<bool> begun(numInputs, false);
  bool ok = true;
  for (size_t i = 0; i < numInputs && ok; ++i)
    if (how[i] != TileRead::NotOut)
      begun[i] = ok = ctx->spill->beginChunkRead(inputs[i].slot, device,
                                                 *inputs[i].buf, chunk, error);
  if (ok) {
    std::vector<unsigned> order(static_cast<size_t>(n));
    std::iota(order.begin(), order.end(), 0u);
    if (!inOrder)
      order = pipe.orderFor(key, static_cast<unsigned>(n), inBegin == 0,
                            inEnd == g.rowsOn(1 - side));
    // Bytes are counted per input by the reading thread, one sub-chunk at
    // a time.
    ok = pipe.run(
        key, order,
        [&](unsigned j, std::string &message) {
          for (size_t i = 0; i < numInputs; ++i) {
            int64_t read = 0;
            if (begun[i] && !ctx->spill->readChunkRows(
                                inputs[i].slot, device, *inputs[i].buf, chunk,
                                parts[i][j], read, message))
              return false;
            bytes[i] += read;
          }
          return true;
        },
        [&](unsigned j) { compute(bounds[j], bounds[j + 1]); }, error);
  }
  for (size_t i = 0; i < numInputs; ++i)
    if (begun[i])
      ctx->spill->endChunkRead(inputs[i].slot, device, *inputs[i].buf, chunk,
                               bytes[i], how[i] != TileRead::Filtered, !ok);
  if (!ok)
    fatal(std::string(entry) + ": " + error);
}

} // namespace

void aggregateTile(gnnrtContext *ctx, Buffer &buf, int64_t slot, int64_t chunk,
                   int64_t side, int64_t mean, gnnrtMemRefF32 *weights,
                   gnnrtMemRefF32 *in, gnnrtMemRefF32 *out, int64_t width,
                   int64_t begin, int64_t end, int64_t inBegin, int64_t inEnd) {
  const char *entry = "gnnrtSpmmRowsFetch";
  Device &device = *ctx->device;
  const DeviceGraph &g = device.graph();
  needRange(begin, end, g.rowsOn(side), std::string(entry) + ": rows");
  needRange(inBegin, inEnd, g.rowsOn(1 - side),
            std::string(entry) + ": input rows");
  int64_t rows = 0, rowElements = 0, chunks = 0;
  if (ctx->spill->chunkShape(slot, rows, rowElements, chunks) &&
      (in->aligned + in->offset != buf.data || rowElements != width ||
       chunk < 0 || chunk >= chunks ||
       inBegin != gnnrtChunkRowBound(rows, chunks, chunk) ||
       inEnd != gnnrtChunkRowBound(rows, chunks, chunk + 1)))
    fatal(std::string(entry) + ": the input is not chunk " +
          std::to_string(chunk) + " of slot " + std::to_string(slot) +
          "'s buffer (rows [" + std::to_string(inBegin) + ", " +
          std::to_string(inEnd) + ") of " + std::to_string(width) + " floats)");
  pipelineTile(ctx, entry, {{slot, &buf}}, chunk, side, begin, end, inBegin,
               inEnd, /*site=*/0, /*inOrder=*/false, [&](int64_t a, int64_t b) {
                 device.spmmRows(ctx, side, mean, weights, in, out, width,
                                 begin, end, a, b);
               });
}

void launchTile(gnnrtContext *ctx, const std::vector<int64_t> &slots,
                int64_t chunk, int64_t side, int64_t loInt, int64_t hiInt,
                bool inOrder, KernelFn kernel, int64_t begin, int64_t end,
                const std::function<Buffer &(int64_t)> &bufferOf) {
  const char *entry = "gnnrtParallelForRangeFetch";
  Device &device = *ctx->device;
  const DeviceGraph &g = device.graph();
  needRange(begin, end, g.rowsOn(side), std::string(entry) + ": rows");
  if (begin % GNNRT_PARALLEL_CHUNK != 0)
    fatal(std::string(entry) + ": rows [" + std::to_string(begin) + ", " +
          std::to_string(end) + ") (the start must be a multiple of " +
          std::to_string(GNNRT_PARALLEL_CHUNK) + ")");
  std::vector<int64_t> &ints = ctx->kernelInts;
  if (loInt < 0 || hiInt < 0 || loInt == hiInt ||
      std::max(loInt, hiInt) >= static_cast<int64_t>(ints.size()))
    fatal(std::string(entry) + ": kernel integers #" + std::to_string(loInt) +
          " and #" + std::to_string(hiInt) + " are not the tile's input range");
  const int64_t inBegin = ints[loInt], inEnd = ints[hiInt];
  std::vector<TileInput> inputs;
  for (int64_t slot : slots) {
    int64_t rows = 0, rowElements = 0, chunks = 0;
    if (!ctx->spill->chunkShape(slot, rows, rowElements, chunks) ||
        rows != g.rowsOn(1 - side) || chunk < 0 || chunk >= chunks ||
        inBegin != gnnrtChunkRowBound(rows, chunks, chunk) ||
        inEnd != gnnrtChunkRowBound(rows, chunks, chunk + 1))
      fatal(std::string(entry) + ": the tile's input rows [" +
            std::to_string(inBegin) + ", " + std::to_string(inEnd) +
            ") are not chunk " + std::to_string(chunk) + " of slot " +
            std::to_string(slot));
    if (std::any_of(inputs.begin(), inputs.end(),
                    [&](const TileInput &in) { return in.slot == slot; }))
      fatal(std::string(entry) + ": slot " + std::to_string(slot) +
            " is the tile's input twice");
    inputs.push_back({slot, &bufferOf(slot)});
  }
  pipelineTile(ctx, entry, inputs, chunk, side, begin, end, inBegin, inEnd,
               static_cast<int64_t>(reinterpret_cast<uintptr_t>(kernel)),
               inOrder, [&](int64_t a, int64_t b) {
                 ints[loInt] = a;
                 ints[hiInt] = b;
                 device.launch(ctx, kernel, begin, end);
               });
  ints[loInt] = inBegin;
  ints[hiInt] = inEnd;
}

} // namespace gnnrt
