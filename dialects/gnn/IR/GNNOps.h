//===- GNNOps.h - gnn dialect operations ------------------------*- C++ -*-===//

#ifndef GNN_IR_GNNOPS_H
#define GNN_IR_GNNOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/RegionKindInterface.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "gnn/IR/GNNDialect.h"
#include "gnn/IR/GNNTypes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::gnn {
class YieldOp;

/// Element-wise binary ops (gnn.add, sub, mul, div): both operands of the
/// result's shape, or one a scalar row broadcast over the other.
LogicalResult verifyBroadcastRows(Operation *op);
template <typename ConcreteType>
class BroadcastRows : public OpTrait::TraitBase<ConcreteType, BroadcastRows> {
public:
  static LogicalResult verifyTrait(Operation *op) {
    return verifyBroadcastRows(op);
  }
};
} // namespace mlir::gnn

#include "gnn/IR/GNNInterfaces.h.inc"

#define GET_OP_CLASSES
#include "gnn/IR/GNNOps.h.inc"

namespace mlir::gnn {
/// The result type of an element-wise binary op on rows of these types: the
/// common shape, or the other operand's when one is a scalar row
/// (`tensor<f32>` or `tensor<1xf32>`; between those two, `tensor<1xf32>`);
/// null when they do not broadcast.
RankedTensorType broadcastRowType(RankedTensorType lhs, RankedTensorType rhs);

/// Row ops a `gnn.fused_gather` body may hold: element-wise ops, splat
/// constants, `gnn.broadcast_heads`, `gnn.edge_select` and the row
/// reductions `gnn.reduce_sum` and `gnn.row_dot`.
bool isFusableRowOp(Operation *op);

/// Erases the ops of a stage body (all pure) whose results nothing reads,
/// last to first, so that chains of dead ops go too.
void eraseDeadRowOps(Block &body);

/// The row tensor type of the stage kind `StageOp` (ApplyVertexOp or
/// ApplyEdgeOp) with rows of `row`.
template <typename StageOp>
Type rowTensorOf(RankedTensorType row) {
  if constexpr (std::is_same_v<StageOp, ApplyVertexOp>)
    return VertexTensorType::get(row.getShape(), row.getElementType());
  else
    return EdgeTensorType::get(row.getShape(), row.getElementType());
}

/// Recreates a stage (ApplyVertexOp or ApplyEdgeOp) with `extraInputs`
/// appended to its inputs, `replace[i]` (a value of the old body) read from
/// the row of `extraInputs[i]`, and the inputs and parameters nothing reads
/// any more dropped. The old stage is erased.
template <typename StageOp>
StageOp rebuildStage(StageOp stage, ValueRange extraInputs,
                     ArrayRef<Value> replace);

/// Recreates a stage yielding the body values `extra` as further results
/// after its own. The old stage is erased.
template <typename StageOp>
StageOp appendStageResults(StageOp stage, ArrayRef<Value> extra);

/// Recreates a stage without its results `drop` (which nothing may read),
/// erasing the body ops and dropping the inputs and parameters only they
/// needed. The old stage is erased.
template <typename StageOp>
StageOp dropStageResults(StageOp stage, ArrayRef<unsigned> drop);

/// The row type of a vertex or edge tensor type; null for other types.
RankedTensorType rowTypeOf(Type type);

/// Which vertices a vertex tensor has rows for in a partitioned function
/// (`gnn.partition`, docs/Distributed.md), and what they hold: the
/// process's own vertices (`Own`), or every vertex, either gathered (the
/// same rows on every process: a `gnn.all_gather`'s, or what an op of the
/// whole graph computes from such rows), partial (this process's sums over
/// its edges or its feature columns: an aggregation to the source, a
/// contraction of a feature shard, and sums of those) or a feature shard
/// (this process's columns of the features and of what is computed from
/// them column by column, `--gnn-partition-features`). Edge tensors of the
/// whole graph have the spaces `Gathered` and `Shard` too. Every tensor of a
/// function that is not partitioned is `Own` (one process owns every
/// vertex).
enum class VertexSpace { Own, Gathered, Partial, Shard };
VertexSpace getVertexSpace(Value v);

/// The partitioning of the function that is or holds `op`: "rows",
/// "features" or empty.
StringRef getPartition(Operation *op);

/// Whether `op` is, or is in, a function --gnn-partition-rows partitioned.
bool isRowPartitioned(Operation *op);

/// Whether `op` is, or is in, a function --gnn-partition-features
/// partitioned.
bool isFeaturePartitioned(Operation *op);

/// Whether the function `fn` has ops on the whole graph (`gnn.graph
/// whole`): feature partitioning's first layer or replicated layers.
bool usesWholeGraph(Operation *fn);

/// Whether `graph` is a `gnn.graph whole` (every vertex and every edge).
bool isWholeGraph(Value graph);

/// How the values of a stage body on the whole graph of a feature-partitioned
/// function relate to the unpartitioned ones (P³'s column separability,
/// DIGEST-mggcn-granndis-p3.md §3.6): the same on every process
/// (`Replicated`), this process's feature columns (`Shard`), its partial
/// sum over them (`Partial`), a weight's rows of this process's feature
/// columns (`ShardedWeight`), or a value that needs the sum of the partials
/// first (`Summed`: the part of a stage that runs on the own rows after the
/// sync).
enum class ColumnKind { Replicated, Shard, Partial, ShardedWeight, Summed };

/// The column kinds of a stage body's values (block arguments first: the
/// inputs' from `inputKinds`, the parameters' from their `gnn.dims`).
/// Where `allowSums` is set, a partial that an op cannot take (a bias, a
/// non-linearity, a second contraction) is recorded in `sums` and the op
/// becomes `Summed`; otherwise that is an error. Fails with an error on the
/// op that is not column-separable.
LogicalResult classifyColumns(Operation *stage, ArrayRef<ColumnKind> inputKinds,
                              bool allowSums,
                              llvm::DenseMap<Value, ColumnKind> &kinds,
                              llvm::SetVector<Value> *sums = nullptr);

/// Fails with an error on `op` when it aggregates `partial` sums over the
/// feature columns with a maximum or minimum (not the partial of the
/// maximum); sums and means add up.
LogicalResult verifySummable(Operation *op, Accumulator acc, bool partial);

/// Checks that the vertex tensors of a row-partitioned function `fn` are
/// read where their rows are: a scatter from the source, a fused gather's
/// `src` inputs and a max/min gather's gradient at the source read
/// `Gathered` rows, `gnn.reduce_scatter` and the `gnn.apply_vertex` stages
/// that only add (gradient sums) `Partial` rows, every other reader `Own`
/// rows; aggregations to the source sum (partial means and maxima do not
/// add up), and the model's forward has no reduction over all vertices.
/// In a feature-partitioned function, the ops of the whole graph read
/// `Shard`, `Gathered` or `Partial` rows and their bodies are column-
/// separable (`classifyColumns`); the rest is checked as above.
LogicalResult verifyPartition(Operation *fn);
} // namespace mlir::gnn

#endif // GNN_IR_GNNOPS_H
