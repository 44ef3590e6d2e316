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

namespace {
/// The DP's states: the layouts, with rows after columns apart (a suffix
/// cannot follow them: the feature-partitioned program has none).
enum State { Rep, Rows, Cols, Suffix, RowsAfterCols, kStates };
} // namespace
static_assert(Rep == static_cast<int>(LevelLayout::Replicated) &&
                  Rows == static_cast<int>(LevelLayout::Rows) &&
                  Cols == static_cast<int>(LevelLayout::Columns) &&
                  Suffix == static_cast<int>(LevelLayout::ReplicatedSuffix),
              "a layout is its state");

/// The states in the order ties are broken: fewer replicated levels, rows
/// before columns.
static constexpr State kTieOrder[kStates] = {Rows, Cols, RowsAfterCols, Suffix,
                                             Rep};

static LevelLayout layoutOf(State s) {
  switch (s) {
  case Rep:
    return LevelLayout::Replicated;
  case Cols:
    return LevelLayout::Columns;
  case Suffix:
    return LevelLayout::ReplicatedSuffix;
  default:
    return LevelLayout::Rows;
  }
}

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

/// Level j's own cost in state `s`, in seconds.
static double levelSeconds(const LayerPlanInput &in, size_t j, State s) {
  switch (s) {
  case Rep:
    return in.levels[j].work / in.flopsPerSecond;
  case Suffix:
    return j == 0 ? kInfinity : in.levels[j].work / in.flopsPerSecond;
  case Rows:
  case RowsAfterCols:
    return in.levels[j].rowsBytes / in.bytesPerSecond;
  case Cols:
    return j == 0 && in.columnsBytes ? *in.columnsBytes / in.bytesPerSecond
                                     : kInfinity;
  default:
    return kInfinity;
  }
}

/// Whether the lowering executes level j - 1 in `from` followed by level j
/// in `to`.
static bool executable(State from, State to) {
  switch (to) {
  case Rep:
    return from == Rep;
  case Rows:
    return from == Rep || from == Rows;
  case RowsAfterCols:
    return from == Cols || from == RowsAfterCols;
  case Suffix:
    return from == Rows || from == Suffix;
  default:
    return false;
  }
}

/// The re-layout's own cost into level j: a replicated suffix's all-gather.
static double transitionSeconds(const LayerPlanInput &in, size_t j, State from,
                                State to) {
  return from == Rows && to == Suffix
             ? in.levels[j].gatherBytes / in.bytesPerSecond
             : 0;
}

double mlir::gnn::chainSeconds(const LayerPlanInput &in,
                               ArrayRef<LevelLayout> layouts) {
  assert(layouts.size() == in.levels.size() && "one layout per level");
  double total = 0;
  State prev = Rep;
  for (size_t j = 0; j < layouts.size(); ++j) {
    State s = static_cast<State>(layouts[j]);
    if (s == Rows && j > 0 && (prev == Cols || prev == RowsAfterCols))
      s = RowsAfterCols;
    if (j > 0 && !executable(prev, s))
      return kInfinity;
    total += levelSeconds(in, j, s) +
             (j > 0 ? transitionSeconds(in, j, prev, s) : 0);
    prev = s;
  }
  return total;
}

LayerPlan mlir::gnn::planLayers(const LayerPlanInput &in) {
  const size_t n = in.levels.size();
  assert(n > 0 && "a model has a level");
  // best[j][s]: the least cost of levels 0..j with level j in layout s;
  // from[j][s]: level j - 1's layout on that chain.
  std::vector<std::array<double, kStates>> best(n);
  std::vector<std::array<int, kStates>> from(n);
  for (size_t j = 0; j < n; ++j)
    for (int s = 0; s < kStates; ++s) {
      const auto to = static_cast<State>(s);
      best[j][s] = kInfinity;
      from[j][s] = -1;
      const double own = levelSeconds(in, j, to);
      if (own == kInfinity)
        continue;
      if (j == 0) {
        best[j][s] = own;
        continue;
      }
      // A tie keeps the earlier predecessor (kTieOrder).
      for (State prev : kTieOrder) {
        const int p = prev;
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
  for (State s : kTieOrder)
    if (last < 0 || best[n - 1][s] < best[n - 1][last])
      last = s;
  LayerPlan plan;
  plan.layouts.resize(n);
  for (size_t j = n; j-- > 0;) {
    plan.layouts[j] = layoutOf(static_cast<State>(last));
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
      plan.bytes += *in.columnsBytes;
      plan.columns = true;
      break;
    }
  }
  plan.seconds =
      chainSeconds(in, plan.layouts) + in.fixedBytes / in.bytesPerSecond;
  return plan;
}
