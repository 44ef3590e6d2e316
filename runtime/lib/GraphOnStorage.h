//===- GraphOnStorage.h - the graph's per-edge arrays out of core -*- C++ -*-//
//
// Issue 18's graph out of core (docs/MemoryBudget.md, "The graph out of
// core"): the per-edge arrays stay on storage and the kernels read windows
// of them. A window is the edges of a range of rows on one side: on the
// destination side (CSC) the sources of rows [lo, hi) are indices.npy's
// range [indptr[lo], indptr[hi]), read with one pread, and their
// destinations are computed from indptr; on the source side (CSR) the edge
// ids and destinations of rows [lo, hi) are a range of the CSR, which the
// start-up builds once into the spill file. The device's graph points into
// the windows (the arrays' pointers shifted by the window's first edge), so
// the kernels index them by edge as before, within the window's edges
// only. The row offsets and degrees stay in memory.
//
//===----------------------------------------------------------------------===//

#ifndef GNNRT_GRAPHONSTORAGE_H
#define GNNRT_GRAPHONSTORAGE_H

#include "Dataset.h"
#include "Spill.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace gnnrt {

class Device;
struct Buffer;

/// What the windows read, for the --json summary.
struct GraphWindowCounters {
  int64_t readBytes = 0; // of indices.npy and the spill file's CSR
  int64_t windows = 0;   // windows read (a window asked for again is not)
  double seconds = 0;    // the training's time in the reads (wall clock)
};

class GraphOnStorage {
public:
  /// The fewest edges of a block of the CSR that create() builds in memory
  /// (and of its reads of indices.npy): blocks are as large as the largest
  /// window (buildBlockEdges), so that the start-up takes no more memory
  /// than the windows, but not smaller than this.
  static constexpr int64_t kMinBlockEdges = int64_t(1) << 16;
  /// Entries after a window's edges that may be read (never used): the
  /// kernels' prefetches look up to 8 positions ahead.
  static constexpr int64_t kPadding = 64;

  /// Takes over the open indices.npy of `indices` and writes the CSR
  /// arrays the program reads (`arrays`: the graph-arrays mask, bit 2 the
  /// edge ids, bit 3 the destinations) to `spill` in blocks of whole
  /// sources of at most `blockEdges` edges (or one source's), each block a
  /// pass over indices.npy read `blockEdges` at a time. Null with a
  /// one-line message on a failed read or write.
  static std::unique_ptr<GraphOnStorage>
  create(IndicesOnStorage &indices, const std::vector<int64_t> &dstOffsets,
         unsigned arrays, SpillFile &spill, std::string &error,
         int64_t blockEdges);
  ~GraphOnStorage();

  /// Makes the arrays of the rows [lo, hi) of `side` (0 sources: CSR, 1
  /// destinations: CSC) resident on `device` and points the device's graph
  /// at them, replacing the side's window before (no read when it is the
  /// same). An empty range frees the side's window. False with a message on
  /// a failed read.
  bool open(Device &device, int side, int64_t lo, int64_t hi,
            std::string &error);
  /// Whether the side's window holds the rows [lo, hi).
  bool covers(int side, int64_t lo, int64_t hi) const {
    return windows[side != 0].lo <= lo && hi <= windows[side != 0].hi &&
           windows[side != 0].lo < windows[side != 0].hi;
  }
  const GraphWindowCounters &counters() const { return counted; }

  /// The CSR offsets over the sources ([V+1]), counted by the check of
  /// indices.npy, for the device's graph (moved out: call useOffsets next).
  std::vector<int64_t> takeSourceOffsets() { return std::move(srcOffsets); }
  /// The row offsets of each side ([V+1], by side: 0 sources, 1
  /// destinations) that the windows use from now on, the device's copies
  /// (kept for the run): its own are freed.
  void useOffsets(const int64_t *sources, const int64_t *destinations);

  /// The most edges of a row chunk of a program in `chunks` chunks
  /// (RowChunks.h's boundaries) on each side: [0] out-edges (by
  /// `srcOffsets`), [1] in-edges (by `dstOffsets`).
  static std::array<int64_t, 2>
  mostChunkEdges(const std::vector<int64_t> &dstOffsets,
                 const std::vector<int64_t> &srcOffsets, int64_t chunks);
  /// The most bytes the windows of such a program take at once (both sides
  /// open), for the arrays of `arrays` (graph-arrays mask).
  static int64_t windowBytes(const std::array<int64_t, 2> &mostEdges,
                             unsigned arrays);
  /// The edges of create()'s blocks for windows of `mostEdges`.
  static int64_t buildBlockEdges(const std::array<int64_t, 2> &mostEdges) {
    return std::max({mostEdges[0], mostEdges[1], kMinBlockEdges});
  }
  /// What create() takes in memory with blocks of `blockEdges` of a graph
  /// of `numEdges` edges: a block of each CSR array the program reads and
  /// of sources read, and the block's cursors (0 when it reads no CSR).
  static int64_t buildBytes(int64_t numEdges, int64_t blockEdges,
                            unsigned arrays);

private:
  GraphOnStorage() = default;
  /// Reads positions [first, last) of CSR array `which` (0 edge ids, 1
  /// destinations) into `out`.
  bool readCsr(int which, int64_t first, int64_t last, int32_t *out,
               std::string &error);

  int fd = -1;
  int64_t dataOffset = 0;
  std::string name;
  /// Its own offsets until useOffsets; then the device's, at `offsets`
  /// (by side).
  std::vector<int64_t> dstOffsets, srcOffsets;
  const int64_t *offsets[2] = {};
  unsigned arrays = 0;
  SpillFile *spill = nullptr;
  /// The CSR's blocks in the spill file: the first position of each, and
  /// its extent per array.
  std::vector<int64_t> blockStarts;
  std::vector<SpillExtent> blocks[2];
  struct Window {
    int64_t lo = 0, hi = 0;
    /// Per array of the side (CSC: sources, destinations; CSR: edge ids,
    /// destinations); null when the program does not read it. Padded by
    /// kPadding entries: kernels prefetch a few positions ahead of the one
    /// they read.
    std::unique_ptr<Buffer> data[2];
  };
  Window windows[2];
  GraphWindowCounters counted;
};

} // namespace gnnrt

#endif // GNNRT_GRAPHONSTORAGE_H
