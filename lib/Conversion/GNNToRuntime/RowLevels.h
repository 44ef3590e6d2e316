//===- RowLevels.h - the rows each step of a training step needs -*- C++
//-*-===//
//
// Issue 21's program on blocks (docs/MiniBatch.md, "The program on
// blocks"). A sampled batch orders its vertices by the hop that reached
// them, the seeds first, and each vertex is expanded once: level l's rows
// are the first n_l (gnnrtLevelRows: n_0 every vertex of the batch, ...,
// n_L its seeds), and the in-edges of a row below n_l come from rows below
// n_{l-1}. So a step need not compute every row: the loss reads the seeds'
// logits (the train mask's rows), an aggregation to the destinations of
// level l reads its sources at level l - 1, and so on back to the
// features; and in the backward pass a gradient is zero beyond the rows its
// value was needed at, so a sum over the rows (a weight's gradient) and an
// aggregation to the sources can stop there (DGL's blocks and PyG's
// trim_to_layer, derived by the compiler from the training step itself).
//
// The plan gives every step over the vertices the level of the rows it
// computes, and for a sum to the sources the level of the destinations
// its edges must reach (a tile [0, n_t) of gnnrtSpmmRows or of the fused
// kernel); where a result is read at more rows than its step computes it
// is zero there (its support), and the plan says which rows to zero. On a
// whole graph every n_l is |V|: the same program computes every row.
//
// Two analyses over the function's top-level ops: the support (forward:
// the rows beyond which a value is zero: the train mask's rows for the
// loss gradient, carried through the element-wise bodies by whether each
// op keeps a zero row zero) and the need (backward: the rows each value is
// read at, from the readers' levels). A value is computed on max(need,
// support) (the fewer rows). Steps the lowering does not restrict (edge
// steps, unfused gathers, tensor sums) compute every row and read every
// row of their operands.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_LIB_CONVERSION_GNNTORUNTIME_ROWLEVELS_H
#define GNN_LIB_CONVERSION_GNNTORUNTIME_ROWLEVELS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <optional>

namespace mlir::gnn {

struct LevelPlan {
  /// A step restricted to the first rows: the level of the rows it
  /// computes, and for a sum to the sources the level of the destinations
  /// its edges reach (their other ends; nothing: every edge).
  struct Step {
    int64_t rows = 0;
    std::optional<int64_t> inputs;
  };
  /// A result that readers read at more rows than its step computes, zero
  /// there: rows [n_from, n_to) to zero after the step.
  struct Fill {
    Value value;
    int64_t from, to;
  };
  int64_t numLevels = 0;
  llvm::DenseMap<Operation *, Step> steps;
  /// The level of the rows each collective between the own rows and the
  /// whole graph (feature partitioning) moves.
  llvm::DenseMap<Operation *, int64_t> collectives;
  llvm::DenseMap<Operation *, SmallVector<Fill>> fills;
};

/// The plan of training step `fn` for a model of `numLevels` hops, whose
/// fused gathers `cachePairs` (writer, reader) may share per-edge values
/// (edge caches: a writer then computes at least the rows whose edges its
/// readers reach). The ops `everyRow` compute every row (steps the lowering
/// cannot restrict).
LevelPlan
planRowLevels(func::FuncOp fn, int64_t numLevels,
              ArrayRef<std::pair<Operation *, Operation *>> cachePairs = {},
              const llvm::DenseSet<Operation *> &everyRow = {});

/// The hops of neighbour reads on the longest path from the data to each
/// result of `body`'s ops, in order (the model description's `hops` is the
/// most of eval's: GNNToRuntime.cpp's hopsRecord says how edge values
/// count): a value of hop k is needed at level k's rows of a sampled batch.
/// Stops at an op that reduces over all vertices and returns it (null when
/// none does).
Operation *valueHops(Block &body, llvm::DenseMap<Value, int64_t> &hops);

} // namespace mlir::gnn

#endif // GNN_LIB_CONVERSION_GNNTORUNTIME_ROWLEVELS_H
