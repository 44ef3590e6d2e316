//===- LongRows.cpp - long rows of an aggregation split into pieces -------===//

#include "LongRows.h"

#include <algorithm>
#include <cstdlib>

using namespace gnnrt;

LongRowSplit gnnrt::splitLongRows(const std::vector<int64_t> &offsets,
                                  int64_t minPiece, int64_t maxPieces) {
  LongRowSplit split;
  const int64_t V = offsets.empty() ? 0 : offsets.size() - 1;
  auto degree = [&](int64_t v) { return offsets[v + 1] - offsets[v]; };
  int64_t longEdges = 0;
  for (int64_t v = 0; v < V; ++v)
    if (degree(v) > minPiece)
      longEdges += degree(v);
  split.pieceEdges = std::max(minPiece, (longEdges + maxPieces - 1) /
                                            std::max<int64_t>(maxPieces, 1));
  const int64_t P = split.pieceEdges;
  split.pieceOffsets.push_back(0);
  for (int64_t v = 0; v < V; ++v) {
    if (degree(v) <= P)
      continue;
    const int64_t pieces = (degree(v) + P - 1) / P;
    const auto index = static_cast<int32_t>(split.longRows.size());
    split.longRows.push_back(static_cast<int32_t>(v));
    split.pieceRow.insert(split.pieceRow.end(), pieces, index);
    split.pieceOffsets.push_back(split.pieceOffsets.back() + pieces);
  }
  return split;
}

LongRowTable gnnrt::hostTable(const LongRowSplit &split) {
  LongRowTable t;
  t.pieceEdges = split.pieceEdges;
  t.numRows = static_cast<int64_t>(split.longRows.size());
  t.numPieces = split.numPieces();
  t.rows = split.longRows.data();
  t.pieceOffsets = split.pieceOffsets.data();
  t.pieceRow = split.pieceRow.data();
  return t;
}

int64_t gnnrt::longRowMinPiece(int64_t fallback) {
  const char *env = std::getenv("GNNRT_PIECE_EDGES");
  if (!env || !*env)
    return fallback;
  char *end = nullptr;
  const long long n = std::strtoll(env, &end, 10);
  return end && *end == '\0' && n > 0 ? static_cast<int64_t>(n) : fallback;
}
