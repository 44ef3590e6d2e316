//===- SelectiveLoad.h - NeuGraph's selective loading of chunks -*- C++ -*-===//
//
// Issue 18 (NeuGraph §3.2, the digest's §2.3): a tile of an aggregation
// reads its input chunk at the other ends of its rows' edges only. When the
// chunk is in the slow tier and the fraction θ of its rows those edges reach
// is small, reading only those rows moves θ of the bytes. NeuGraph filters
// iff θ < T_copy / (T_copy + T_trans), T_copy the throughput of the filter
// and T_trans that of a bulk transfer, both measured.
//
// On the CPU the slow tier is storage (the spill file, features.npy) and
// the fast tier resident memory: a bulk transfer is one read of the chunk,
// the filter one read per run of consecutive rows the tile needs, written at
// the rows' places (so the tile's kernel indexes them unchanged). T_trans is
// measured as the bytes per second of one 4 MiB read of the spill file,
// T_copy as those of rows of the chunk's width read one by one at every
// other row of the same 4 MiB: once per run for T_trans, once per row width
// for T_copy, before the first tile that needs it, the best of five each.
// (NeuGraph's GPU copies the selected rows into a staging buffer on the host
// and transfers that; the formula charges both stages. Here the filter's
// reads are also its transfer, so the rule is conservative: it filters a
// little less often than the costs alone would.)
//
//===----------------------------------------------------------------------===//

#ifndef GNNRT_SELECTIVELOAD_H
#define GNNRT_SELECTIVELOAD_H

#include "Spill.h"
#include "gnnrt/GNNRuntime.h"

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

struct gnnrtContext;

namespace gnnrt {

struct Buffer;
struct DeviceGraph;

/// Runs [first, end) of rows, ascending and disjoint.
using RowRuns = std::vector<std::pair<int64_t, int64_t>>;

/// The rows of input range [inLo, inHi) that the edges of rows [lo, hi) on
/// `side` (1: in-edges of destinations, 0: out-edges of sources) reach, as
/// runs counted from inLo; returns how many rows. False (and nothing) when
/// the graph has no array of those edges' other ends. `marks` is scratch.
bool tileInputRows(const DeviceGraph &g, int side, int64_t lo, int64_t hi,
                   int64_t inLo, int64_t inHi, std::vector<uint8_t> &marks,
                   RowRuns &runs, int64_t &rows);

/// NeuGraph's rule: filter iff theta < tCopy / (tCopy + tTrans).
inline bool shouldFilter(double theta, double tCopy, double tTrans) {
  return tCopy > 0 && tTrans > 0 && theta < tCopy / (tCopy + tTrans);
}

/// The run's selective loading: its mode, throughputs and counts.
class SelectiveLoader {
public:
  enum class Mode { Auto, Always, Never };
  Mode mode = Mode::Auto;

  /// T_trans and T_copy for rows of `rowBytes` (bytes per second), measured
  /// on `file` the first time; false with a message on a failed write or
  /// read of the probe.
  bool throughputs(SpillFile &file, int64_t rowBytes, double &tCopy,
                   double &tTrans, std::string &error);

  /// Tiles whose input chunk was out when fetched: read filtered, read
  /// whole by the rule (or mode), or whole because their edges were not at
  /// hand (the graph out of core with another window open, a device whose
  /// memory the host cannot read).
  int64_t filtered = 0, whole = 0, noEdges = 0;
  /// The sum of θ over the tiles whose θ was computed (not with mode
  /// never), and their count.
  double thetaSum = 0;
  int64_t thetaCount = 0;
  /// Scratch of tileInputRows.
  std::vector<uint8_t> marks;

  /// The "selective" member of the --json summary's "memory" object, with
  /// the spill store's count of the bytes the filtered reads skipped.
  std::string json(const SpillCounters &spilled) const;

  /// Parses --selective-loads' value; false when it is none of auto,
  /// always, never.
  static bool parseMode(const std::string &text, Mode &mode);

private:
  double tTrans = 0;
  std::map<int64_t, double> tCopy; // by row bytes
  bool probed = false;
  SpillExtent probe; // 4 MiB of the spill file
};

/// gnnrtFetchChunkFor: fetches chunk `chunk` of chunked slot `slot` (buffer
/// `buf`) for the tile of an aggregation on `side` whose rows are output
/// chunk `outChunk`, reading only the rows the tile's edges reach when the
/// rule says so. Stops the run on a failed read.
void fetchTileInput(gnnrtContext *ctx, Buffer &buf, int64_t slot, int64_t chunk,
                    int64_t side, int64_t outChunk);

/// gnnrtSpmmRowsFetch: the tile gnnrtSpmmRows(side, mean, weights, in, out,
/// width, begin, end, inBegin, inEnd) whose input rows [inBegin, inEnd) are
/// chunk `chunk` of slot `slot` (`in` its buffer `buf`), fetched as
/// fetchTileInput does; a chunk that is out is read in sub-chunks by the
/// prefetch thread while the tile computes on those already read
/// (TilePipeline.h).
void aggregateTile(gnnrtContext *ctx, Buffer &buf, int64_t slot, int64_t chunk,
                   int64_t side, int64_t mean, gnnrtMemRefF32 *weights,
                   gnnrtMemRefF32 *in, gnnrtMemRefF32 *out, int64_t width,
                   int64_t begin, int64_t end, int64_t inBegin, int64_t inEnd);

/// gnnrtParallelForRangeFetch: the tile of a compiled kernel over rows
/// [begin, end) on `side` whose input range is kernel integers `loInt` and
/// `hiInt` (set to chunk `chunk` of each slot of `slots`, whose buffers
/// `bufferOf` gives), each fetched as fetchTileInput does; where a chunk is
/// out, the prefetch thread reads them in sub-chunks while the kernel runs
/// over each range of input rows already read (the integers set to the
/// range, and back after). With `inOrder` the ranges run in the input's
/// order.
void launchTile(gnnrtContext *ctx, const std::vector<int64_t> &slots,
                int64_t chunk, int64_t side, int64_t loInt, int64_t hiInt,
                bool inOrder, void (*kernel)(gnnrtContext *, int64_t, int64_t),
                int64_t begin, int64_t end,
                const std::function<Buffer &(int64_t)> &bufferOf);

} // namespace gnnrt

#endif // GNNRT_SELECTIVELOAD_H
