//===- Budget.h - gnn-compile's row chunks under a budget -------*- C++ -*-===//
//
// Under --mem-budget or --buffer-budget without --row-chunks, gnn-compile
// compiles with the fewest row chunks whose buffer placement fits
// (docs/MemoryBudget.md, "Row chunks of the steps").
//
//===----------------------------------------------------------------------===//

#ifndef GNN_TOOLS_GNNCOMPILE_BUDGET_H
#define GNN_TOOLS_GNNCOMPILE_BUDGET_H

#include "gnn/Pipelines/Pipelines.h"

#include "mlir/IR/BuiltinOps.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace mlir::gnn {

/// What findRowChunks found: whether a row chunk count fits and which
/// (else the one whose least plan is smallest, `least` bytes, the op named
/// `largestOp` being the largest; 1 and no least plan when the error is
/// another than the least plan's).
struct RowChunkSearch {
  bool fits = false;
  int64_t chunks = 1;
  uint64_t least = std::numeric_limits<uint64_t>::max();
  std::string largestOp;
  /// Whether some count's least plan was a fused gather's (whose edge caches
  /// may be what held it), not only the smallest one's.
  bool fusedGatherLimited = false;
  /// With `fits`: the bytes the training step's plan moves per step (its
  /// fetches, evictions and graph windows, from the placement's remark).
  uint64_t moved = 0;
  /// With `fits`: whether every function's buffers fit at once (each
  /// placement remark is "none": nothing is moved, dropped or planned).
  bool everySlotFits = false;
};

/// The fewest row chunks (1, 2, 4, ... 64) with which `lowering` (its other
/// options as set) places the buffers of `module` within the budget, each
/// count tried on a copy of the module with its diagnostics kept back; the
/// chunk tiling runs first under `memBudget` when set. Leaves
/// lowering.rowChunks at the last count tried.
/// With the graph out of core (lowering.graphOutOfCore) the counts start
/// at 2, each count's windows are sized by `indptr` (the dataset's, when
/// read: lowering.graphWindowEdges), and a count whose resident state
/// exceeds the budget goes on to the next (larger counts take smaller
/// windows). Counts above `maxChunks` are not tried (the CUDA target: 1).
RowChunkSearch findRowChunks(MLIRContext &context, ModuleOp module,
                             const GNNOptimizeOptions &options,
                             GNNToLLVMOptions &lowering,
                             std::optional<int64_t> memBudget, bool optimize,
                             const std::vector<int64_t> *indptr = nullptr,
                             int64_t maxChunks = 64);

} // namespace mlir::gnn

#endif // GNN_TOOLS_GNNCOMPILE_BUDGET_H
