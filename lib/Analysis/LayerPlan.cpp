//===- LayerPlan.cpp - per-layer partitioning by dynamic programming ------===//
//
// The DP of LayerPlan.h: f_j(s), the least cost of levels 0..j with level j
// in layout s, from f_{j-1} over the executable re-layouts.
//
//===----------------------------------------------------------------------===//

#include "gnn/Analysis/LayerPlan.h"

#include <array>
#include <cassert>
#include <limits>
#include <vector>

using namespace llvm;
using namespace mlir;
using namespace mlir::gnn;

static constexpr double kInfinity = std::numeric_limits<double>::infinity();
static constexpr int kLayouts = 3;
/// The layouts in the order ties are broken.
static constexpr int kTieOrder[kLayouts] = {
    static_cast<int>(LevelLayout::Rows), static_cast<int>(LevelLayout::Columns),
    static_cast<int>(LevelLayout::Replicated)};

StringRef mlir::gnn::stringifyLevelLayout(LevelLayout layout) {
  switch (layout) {
  case LevelLayout::Replicated:
    return "replicated";
  case LevelLayout::Rows:
    return "rows";
  case LevelLayout::Columns:
    return "columns";
  }
  return "?";
}

/// Level j's own cost in `layout`, in seconds.
static double levelSeconds(const LayerPlanInput &in, size_t j,
                           LevelLayout layout) {
  switch (layout) {
  case LevelLayout::Replicated:
    return in.levels[j].work / in.flopsPerSecond;
  case LevelLayout::Rows:
    return in.levels[j].rowsBytes / in.bytesPerSecond;
  case LevelLayout::Columns:
    return j == 0 && in.columnsBytes >= 0 ? in.columnsBytes / in.bytesPerSecond
                                          : kInfinity;
  }
  return kInfinity;
}

/// Whether the lowering executes level j - 1 in `from` followed by level j
/// in `to` (the re-layout's bytes are in the levels' costs).
static bool executable(LevelLayout from, LevelLayout to) {
  if (to == LevelLayout::Replicated)
    return from == LevelLayout::Replicated;
  return to == LevelLayout::Rows;
}

double mlir::gnn::chainSeconds(const LayerPlanInput &in,
                               ArrayRef<LevelLayout> layouts) {
  assert(layouts.size() == in.levels.size() && "one layout per level");
  double total = 0;
  for (size_t j = 0; j < layouts.size(); ++j) {
    if (j > 0 && !executable(layouts[j - 1], layouts[j]))
      return kInfinity;
    total += levelSeconds(in, j, layouts[j]);
  }
  return total;
}

LayerPlan mlir::gnn::planLayers(const LayerPlanInput &in) {
  const size_t n = in.levels.size();
  assert(n > 0 && "a model has a level");
  // best[j][s]: the least cost of levels 0..j with level j in layout s;
  // from[j][s]: level j - 1's layout on that chain.
  std::vector<std::array<double, kLayouts>> best(n);
  std::vector<std::array<int, kLayouts>> from(n);
  for (size_t j = 0; j < n; ++j)
    for (int s = 0; s < kLayouts; ++s) {
      const auto to = static_cast<LevelLayout>(s);
      best[j][s] = kInfinity;
      from[j][s] = -1;
      const double own = levelSeconds(in, j, to);
      if (own == kInfinity)
        continue;
      if (j == 0) {
        best[j][s] = own;
        continue;
      }
      // A tie keeps the earlier predecessor: rows, columns, replicated
      // (fewer replicated levels).
      for (int p : kTieOrder)
        if (executable(static_cast<LevelLayout>(p), to) &&
            best[j - 1][p] + own < best[j][s]) {
          best[j][s] = best[j - 1][p] + own;
          from[j][s] = p;
        }
    }
  // The last level's layout: the cheapest, ties as above.
  int last = -1;
  for (int s : kTieOrder)
    if (last < 0 || best[n - 1][s] < best[n - 1][last])
      last = s;
  LayerPlan plan;
  plan.layouts.resize(n);
  for (size_t j = n; j-- > 0;) {
    plan.layouts[j] = static_cast<LevelLayout>(last);
    last = from[j][last];
  }
  plan.bytes = in.fixedBytes;
  for (size_t j = 0; j < n; ++j) {
    switch (plan.layouts[j]) {
    case LevelLayout::Replicated:
      plan.redundantWork += in.levels[j].work;
      ++plan.replicated;
      break;
    case LevelLayout::Rows:
      plan.bytes += in.levels[j].rowsBytes;
      break;
    case LevelLayout::Columns:
      plan.bytes += in.columnsBytes;
      plan.columns = true;
      break;
    }
  }
  plan.seconds =
      chainSeconds(in, plan.layouts) + in.fixedBytes / in.bytesPerSecond;
  return plan;
}
