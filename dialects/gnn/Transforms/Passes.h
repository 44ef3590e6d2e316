//===- Passes.h - gnn-to-gnn passes -----------------------------*- C++ -*-===//

#ifndef GNN_TRANSFORMS_PASSES_H
#define GNN_TRANSFORMS_PASSES_H

#include "gnn/IR/GNNDialect.h"
#include "gnn/IR/GNNOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "llvm/ADT/MapVector.h"

namespace mlir::gnn {

#define GEN_PASS_DECL
#include "gnn/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "gnn/Transforms/Passes.h.inc"

/// The module's one `gnn.model` function for a pass that runs before
/// --gnn-autodiff; null after an error on the module: no such function,
/// several, or @gnn_train_step / @gnn_eval there already (`why` ends that
/// message: what the user ran out of order).
func::FuncOp getUndifferentiatedModel(ModuleOp module, StringRef why);

/// The collectives of row partitioning (--gnn-partition-rows; the layers
/// after the first of --gnn-partition-features): one `gnn.all_gather` per
/// vertex tensor read at the sources, one `gnn.reduce_scatter` after each
/// aggregation to the source; what was inserted, for the passes' remarks.
struct RowCollectives {
  /// Inserts them in `model`, skipping the ops of the whole graph.
  void insert(func::FuncOp model);
  /// The rows of every vertex of `v` (own rows), gathered once.
  Value allRows(Value graph, Value v);
  /// The owners' sums of the partials `partial`, which every reader of it
  /// reads instead; inserted after `after` (by default, `partial`'s op).
  ReduceScatterOp ownSums(Value graph, OpResult partial,
                          Operation *after = nullptr);
  /// The row types of the gathered tensors, ", "-separated.
  std::string gatheredWidths() const;

  llvm::MapVector<Value, AllGatherOp> gathered;
  int64_t reduceScatters = 0;
  std::string sums; // the reduce-scattered row types, ", "-separated
};

/// `v` recomputed on the whole graph `whole`: its op cloned with `graph`
/// replaced by `whole` and its vertex and edge tensor operands by what
/// `toWhole` gives, placed after the op and those operands (shared by the
/// partitioning passes for degrees, inputs and stages they move).
FailureOr<Value> cloneOnWhole(Value v, Value graph, Value whole,
                              function_ref<FailureOr<Value>(Value)> toWhole);

/// What one level (hop) of a model's forward computes: floating-point
/// operations per vertex and per edge (linears 2 x in x out per row,
/// other ops an operation per element), for --partition auto's per-layer
/// DP (gnn/Analysis/LayerPlan.h).
struct LevelWork {
  double perVertex = 0, perEdge = 0;
};

/// The forward's work by level, as `--gnn-partition-rows replicate=k`
/// counts levels (the ops of the levels below k are what it replicates),
/// of the ops that depend on the features. A '?' width is `features` where
/// the value has the features' width (it comes from them through no
/// linear), `classes` elsewhere.
SmallVector<LevelWork> levelWork(func::FuncOp model, int64_t features,
                                 int64_t classes);

} // namespace mlir::gnn

#endif // GNN_TRANSFORMS_PASSES_H
