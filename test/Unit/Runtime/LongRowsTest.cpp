//===- LongRowsTest.cpp - long rows split into pieces ---------------------===//
//
// The split (LongRows.h) on hand-made and random skewed graphs: every long
// row's positions covered by its pieces exactly, short rows at most a piece,
// pieces near the cap; GNNRT_PIECE_EDGES's override.
//
//===----------------------------------------------------------------------===//

#include "LongRows.h"
#include "RandomGraph.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <random>

using namespace gnnrt;

TEST(RuntimeLongRows, LongRowsArePiecedOnceEach) {
  // Degrees 0, 3, 10, 1, 25, 9 with pieces of at least 4: rows 2, 4 and 5
  // are long; edges in them 44, at most 4 pieces -> pieces of 11; only row 4
  // (25 > 11) is split, in 3 pieces.
  const std::vector<int64_t> offsets = {0, 0, 3, 13, 14, 39, 48};
  LongRowSplit s = splitLongRows(offsets, 4, 4);
  EXPECT_EQ(s.pieceEdges, 11);
  EXPECT_EQ(s.longRows, std::vector<int32_t>({4}));
  EXPECT_EQ(s.pieceOffsets, std::vector<int64_t>({0, 3}));
  EXPECT_EQ(s.pieceRow, std::vector<int32_t>({0, 0, 0}));

  // The defaults on a skewed graph: every long row's positions covered by
  // its pieces exactly, short rows at most a piece, pieces near the cap.
  std::mt19937 rng(5);
  const Dataset ds = randomDataset(20000, 400000, rng, true);
  s = splitLongRows(ds.indptr);
  EXPECT_GE(s.pieceEdges, 256);
  ASSERT_EQ(s.pieceOffsets.size(), s.longRows.size() + 1);
  size_t next = 0;
  for (int64_t v = 0; v + 1 < static_cast<int64_t>(ds.indptr.size()); ++v) {
    const int64_t degree = ds.indptr[v + 1] - ds.indptr[v];
    if (next < s.longRows.size() && s.longRows[next] == v) {
      const int64_t pieces = s.pieceOffsets[next + 1] - s.pieceOffsets[next];
      EXPECT_GT(degree, s.pieceEdges);
      EXPECT_LT((pieces - 1) * s.pieceEdges, degree);
      EXPECT_GE(pieces * s.pieceEdges, degree);
      for (int64_t p = s.pieceOffsets[next]; p < s.pieceOffsets[next + 1]; ++p)
        ASSERT_EQ(s.pieceRow[p], static_cast<int32_t>(next));
      ++next;
    } else {
      EXPECT_LE(degree, s.pieceEdges) << "row " << v;
    }
  }
  EXPECT_EQ(next, s.longRows.size());
  EXPECT_GT(s.longRows.size(), 0u);
  EXPECT_LE(s.numPieces(), 16384 + static_cast<int64_t>(s.longRows.size()));
  EXPECT_EQ(s.pieceOffsets.back(), s.numPieces());

  // No long rows: nothing split; an empty graph.
  s = splitLongRows({0, 1, 2, 3});
  EXPECT_TRUE(s.longRows.empty());
  EXPECT_EQ(s.numPieces(), 0);
  s = splitLongRows({0});
  EXPECT_TRUE(s.longRows.empty());
}

TEST(RuntimeLongRows, MinimumPieceFromTheEnvironment) {
  unsetenv("GNNRT_PIECE_EDGES");
  EXPECT_EQ(longRowMinPiece(256), 256);
  EXPECT_EQ(longRowMinPiece(0), 0);
  setenv("GNNRT_PIECE_EDGES", "3", 1);
  EXPECT_EQ(longRowMinPiece(0), 3);
  EXPECT_EQ(longRowMinPiece(256), 3);
  // Not a positive number: the fallback.
  for (const char *bad : {"0", "-2", "x", "3x", ""}) {
    setenv("GNNRT_PIECE_EDGES", bad, 1);
    EXPECT_EQ(longRowMinPiece(7), 7) << "'" << bad << "'";
  }
  unsetenv("GNNRT_PIECE_EDGES");
}
