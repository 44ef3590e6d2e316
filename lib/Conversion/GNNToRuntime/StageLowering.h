//===- StageLowering.h - apply_vertex / apply_edge bodies -------*- C++ -*-===//
//
// A stage's body runs over all its rows (vertices or edges). Runs of
// element-wise ops with one row shape become one loop nest each (a kernel
// over the rows, through the KernelEmitter, when the run reads per-row
// values): intermediates stay in registers, results are stored only when
// read after the run, or summed per chunk when only summed over the rows,
// or written over an operand that dies in the run. The other ops go to
// RowLowering one by one.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_LIB_CONVERSION_GNNTORUNTIME_STAGELOWERING_H
#define GNN_LIB_CONVERSION_GNNTORUNTIME_STAGELOWERING_H

#include "KernelEmitter.h"
#include "RowLowering.h"

#include "llvm/ADT/SmallPtrSet.h"

namespace mlir::gnn {

class StageLowering {
public:
  StageLowering(LoweringBuilder &lb, Buffers &buffers, KernelEmitter &kernels,
                RowLowering &rowOps)
      : lb(lb), buffers(buffers), kernels(kernels), rowOps(rowOps) {}

  /// Lowers stage `op` (its body `body`, reading `inputs` per row and
  /// `params` once) over the vertices, or the edges when `edges` is set.
  LogicalResult lowerStage(Operation *op, Region &body, ValueRange inputs,
                           ArrayRef<Value> params, bool edges);
  /// `t`'s one row repeated over `rows` rows, in a new buffer.
  Tensor broadcastRows(const Tensor &t, Value rows);

private:
  struct Run;
  /// Element-wise ops of one row shape in one loop nest.
  LogicalResult lowerRun(ArrayRef<Operation *> group, Value rows);
  /// The run's shape, whether it has rows, and its external operands.
  void analyzeRun(Run &run);
  /// Buffers for the run's results read after it (stored, summed per chunk,
  /// or written over a dying operand).
  void assignRunResults(Run &run);
  /// The loop nest over rows [begin, end) with operands `ins`, results
  /// `outBufs` and `sumBufs`, row size `size` and dropout masks `masks`;
  /// `ids` (memref<?xi32>, gnnrtVertexIds) numbers the rows for the masks
  /// when set.
  void emitRunRows(const Run &run, Value begin, Value end, ArrayRef<Tensor> ins,
                   const DenseMap<Value, Value> &outBufs,
                   const DenseMap<Value, Value> &sumBufs, Value size,
                   ArrayRef<Value> masks, Value ids = Value());
  /// The run over every row as a kernel (operands through the emitter).
  void launchRun(const Run &run);

  /// Whether result `r` of run `group` is only summed over the rows after the
  /// stage: every use outside the run a yield whose stage result only feeds
  /// sum_rows (bias and attention gradients).
  bool onlySummed(Value r, const llvm::SmallPtrSetImpl<Operation *> &group,
                  Value rows);
  /// Whether nothing reads slot buffer `buf` after the run `group` of the
  /// current stage, whose first op has index `first`.
  bool diesIn(Value buf, const llvm::SmallPtrSetImpl<Operation *> &group,
              int64_t first);

  LoweringBuilder &lb;
  Buffers &buffers;
  KernelEmitter &kernels;
  RowLowering &rowOps;
  /// The stage being lowered (null at the top level), and whether its rows
  /// are the edges.
  Operation *stage = nullptr;
  bool edgeStage = false;
};

} // namespace mlir::gnn

#endif // GNN_LIB_CONVERSION_GNNTORUNTIME_STAGELOWERING_H
