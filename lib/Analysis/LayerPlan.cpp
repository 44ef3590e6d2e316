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
static constexpr int kLayouts = 4;
/// The layouts in the order ties are broken (fewer replicated levels).
static constexpr int kTieOrder[kLayouts] = {
    static_cast<int>(LevelLayout::Rows), static_cast<int>(LevelLayout::Columns),
    static_cast<int>(LevelLayout::ReplicatedSuffix),
    static_cast<int>(LevelLayout::Replicated)};

StringRef mlir::gnn::stringifyLevelLayout(LevelLayout layout) {
  switch (layout) {
  case LevelLayout::Replicated:
    return "replicated";
  case LevelLayout::Rows:
    return "rows";
  case LevelLayout::Columns:
    return "columns";
  case LevelLayout::ReplicatedSuffix:
    return "replicated (after an all-gather)";
  }
  return "?";
}

/// Level j's own cost in `layout`, in seconds.
static double levelSeconds(const LayerPlanInput &in, size_t j,
                           LevelLayout layout) {
  switch (layout) {
  case LevelLayout::Replicated:
    return in.levels[j].work / in.flopsPerSecond;
  case LevelLayout::ReplicatedSuffix:
    return j == 0 ? kInfinity : in.levels[j].work / in.flopsPerSecond;
  case LevelLayout::Rows:
    return in.levels[j].rowsBytes / in.bytesPerSecond;
  case LevelLayout::Columns:
    return j == 0 && in.columnsBytes >= 0 ? in.columnsBytes / in.bytesPerSecond
                                          : kInfinity;
  }
  return kInfinity;
}

/// Whether the lowering executes level j - 1 in `from` followed by level j
/// in `to`.
static bool executable(LevelLayout from, LevelLayout to) {
  switch (to) {
  case LevelLayout::Replicated:
    return from == LevelLayout::Replicated;
  case LevelLayout::Rows:
    return from != LevelLayout::ReplicatedSuffix;
  case LevelLayout::Columns:
    return false;
  case LevelLayout::ReplicatedSuffix:
    return from == LevelLayout::Rows || from == LevelLayout::ReplicatedSuffix;
  }
  return false;
}

/// The re-layout's own cost into level j: a replicated suffix's all-gather.
static double transitionSeconds(const LayerPlanInput &in, size_t j,
                                LevelLayout from, LevelLayout to) {
  return from == LevelLayout::Rows && to == LevelLayout::ReplicatedSuffix
             ? in.levels[j].gatherBytes / in.bytesPerSecond
             : 0;
}

double mlir::gnn::chainSeconds(const LayerPlanInput &in,
                               ArrayRef<LevelLayout> layouts) {
  assert(layouts.size() == in.levels.size() && "one layout per level");
  double total = 0;
  for (size_t j = 0; j < layouts.size(); ++j) {
    if (j > 0 && !executable(layouts[j - 1], layouts[j]))
      return kInfinity;
    total += levelSeconds(in, j, layouts[j]) +
             (j > 0 ? transitionSeconds(in, j, layouts[j - 1], layouts[j]) : 0);
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
      for (int p : kTieOrder) {
        const auto prev = static_cast<LevelLayout>(p);
        if (!executable(prev, to))
          continue;
        const double cost =
            best[j - 1][p] + own + transitionSeconds(in, j, prev, to);
        if (cost < best[j][s]) {
          best[j][s] = cost;
          from[j][s] = p;
        }
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
    case LevelLayout::ReplicatedSuffix:
      plan.redundantWork += in.levels[j].work;
      if (plan.layouts[j - 1] == LevelLayout::Rows) {
        plan.replicatedFrom = static_cast<int64_t>(j);
        plan.bytes += in.levels[j].gatherBytes;
      }
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
