//===- LayerPlan.h - per-layer partitioning by dynamic programming -*- C++
//-*-===//
//
// gnn-compile --partition auto's choice of a layout for each level of the
// model (a level is a hop: the ops between two reads at edge sources,
// docs/Distributed.md): replicated (every process computes the level for
// every vertex from every vertex's rows, no collective), split by rows
// (MG-GCN: the level's all-gathers and the reduce-scatters of their
// gradients) or, for the first level only, split by feature columns (P³:
// one sum-sync after the first contraction). Replicated levels are a
// prefix, or a suffix entered from a split level through an all-gather of
// what the suffix reads (its cost, the level's gatherBytes), or both. The
// digest's §4.1 suggests the formulation: each level a stage choosing its
// layout, with per-level costs plus re-layout costs, the cheapest chain by
// dynamic programming.
//
// The costs are per epoch and per process, in seconds at a link bandwidth
// and a compute rate: a split level moves its bytes, a replicated one
// computes the work the other processes would have done. Both scale by
// (N - 1) / N with N processes, so the choice does not depend on N. The
// re-layouts the lowering executes are replicated -> replicated,
// replicated -> rows (the rows of every vertex are there already: free),
// rows -> rows, columns -> rows (the sync, in the columns' cost) and rows
// -> replicated suffix (an all-gather, the level's gatherBytes), after
// which every level is replicated; columns -> replicated, a suffix after
// levels split by columns and then rows (the feature-partitioned program
// has none) and a split level after a replicated suffix are not built, so
// they are infinite here.
// LLVM Support only.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_ANALYSIS_LAYERPLAN_H
#define GNN_ANALYSIS_LAYERPLAN_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <limits>
#include <optional>

namespace mlir::gnn {

enum class LevelLayout { Replicated, Rows, Columns, ReplicatedSuffix };

/// A level's layout as the remarks name it.
llvm::StringRef stringifyLevelLayout(LevelLayout layout);

/// What one level costs per epoch in each layout.
struct LevelCosts {
  /// Bytes its collectives move split by rows (times (N - 1) / N).
  double rowsBytes = 0;
  /// Floating-point operations of the level for every vertex, forward and
  /// backward (a replicated process does (N - 1) / N of them beyond its
  /// share).
  double work = 0;
  /// Bytes of the all-gathers (and their gradients' reduce-scatters) that
  /// start a replicated suffix at this level after a split one; infinite
  /// where no such program was lowered.
  double gatherBytes = std::numeric_limits<double>::infinity();
};

struct LayerPlanInput {
  /// Levels 0 to L (the last one the logits' level or the replicated loss).
  llvm::SmallVector<LevelCosts> levels;
  /// Level 0 split by feature columns: its bytes (the sync and what else
  /// changes; they may be negative: the sharded weight's gradient is not
  /// summed), none where the model refuses it.
  std::optional<double> columnsBytes;
  /// Bytes moved every epoch whatever the layouts (the gradients' sum).
  double fixedBytes = 0;
  double bytesPerSecond = 1, flopsPerSecond = 1;
};

struct LayerPlan {
  llvm::SmallVector<LevelLayout> layouts;
  /// The predicted epoch's share that depends on the layouts.
  double seconds = 0, bytes = 0, redundantWork = 0;
  /// The levels replicated as a prefix, the first of a replicated suffix
  /// (0: none), and whether level 0 is by columns.
  int64_t replicated = 0, replicatedFrom = 0;
  bool columns = false;
};

/// The cheapest chain of layouts by dynamic programming over the levels
/// (ties: fewer replicated levels, then rows before columns). Levels must
/// not be empty.
LayerPlan planLayers(const LayerPlanInput &in);

/// The cost of a given chain (infinite where a re-layout is not executable
/// or columns is not at level 0 or refused): what the DP minimises, for
/// tests and reports.
double chainSeconds(const LayerPlanInput &in,
                    llvm::ArrayRef<LevelLayout> layouts);

} // namespace mlir::gnn

#endif // GNN_ANALYSIS_LAYERPLAN_H
