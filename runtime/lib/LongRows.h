//===- LongRows.h - long rows of an aggregation split into pieces -*- C++
//-*-===//
//
// A GPU warp per output row leaves a skewed graph's hubs (rows of thousands
// of edges) to one warp each, which then finishes long after the rest: the
// aggregation's time is its longest row's. So rows longer than a piece are
// split into pieces of `pieceEdges` positions, a warp per piece writes a
// partial row, and a second pass adds each long row's partials in piece
// order (fixed: the result does not depend on the schedule). The CUDA
// device's SpMM and the compiled fused gathers (gnnrtGraphLongRows) use the
// split; the CPU device builds it only for tests (GNNRT_PIECE_EDGES). Host
// code, computed once per graph and side at bindGraph.
//
//===----------------------------------------------------------------------===//

#ifndef GNNRT_LONGROWS_H
#define GNNRT_LONGROWS_H

#include <cstdint>
#include <vector>

namespace gnnrt {

struct LongRowSplit {
  /// Rows of more than this many positions are split; the pieces have this
  /// many (the last of a row fewer).
  int64_t pieceEdges = 0;
  /// The long rows, ascending.
  std::vector<int32_t> longRows;
  /// Long row i's pieces are pieceOffsets[i] .. pieceOffsets[i+1].
  std::vector<int64_t> pieceOffsets;
  /// Each piece's index into longRows.
  std::vector<int32_t> pieceRow;
  int64_t numPieces() const { return static_cast<int64_t>(pieceRow.size()); }
};

/// A split's arrays where a device keeps them (host or GPU memory): what
/// the CUDA device's SpMM and the compiled fused gathers read
/// (DeviceGraph::longRows). pieceEdges 0: no row is split.
struct LongRowTable {
  int64_t pieceEdges = 0;
  int64_t numRows = 0, numPieces = 0;
  const int32_t *rows = nullptr;         // [numRows]
  const int64_t *pieceOffsets = nullptr; // [numRows + 1]
  const int32_t *pieceRow = nullptr;     // [numPieces]
};

/// `split`'s table over its own vectors (host memory).
LongRowTable hostTable(const LongRowSplit &split);

/// The split of the segments `offsets` (|V| + 1 entries): pieces of
/// max(minPiece, ceil(edges in rows longer than minPiece / maxPieces))
/// positions, so that there are at most about `maxPieces` pieces (their
/// partial rows are scratch memory) plus one per long row.
LongRowSplit splitLongRows(const std::vector<int64_t> &offsets,
                           int64_t minPiece = 256, int64_t maxPieces = 16384);

/// The smallest piece a device splits rows into: GNNRT_PIECE_EDGES where it
/// is set to a positive number (tests split short rows so), else
/// `fallback` (0: the device splits no row).
int64_t longRowMinPiece(int64_t fallback);

} // namespace gnnrt

#endif // GNNRT_LONGROWS_H
