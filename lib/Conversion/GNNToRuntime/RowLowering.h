//===- RowLowering.h - row ops of a stage body ------------------*- C++ -*-===//
//
// One function per row op that is not part of an element-wise run
// (StageLowering forms the runs): constants, linear and its transpose,
// typed linear, row reductions, row_dot, broadcast_heads, concat/slice, a
// dropout of a parameter row. Each reads its operands' Tensors from Buffers
// and binds its result to a new one.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_LIB_CONVERSION_GNNTORUNTIME_ROWLOWERING_H
#define GNN_LIB_CONVERSION_GNNTORUNTIME_ROWLOWERING_H

#include "Buffers.h"

#include "gnn/IR/GNNOps.h"

namespace mlir::gnn {

class RowLowering {
public:
  RowLowering(LoweringBuilder &lb, Buffers &buffers)
      : lb(lb), buffers(buffers) {}

  /// Lowers row op `op` of a stage over `rows` rows.
  LogicalResult lower(Operation *op, Value rows);

  /// The runtime's op number of a dropout: its mask id (shared by the
  /// forward and backward), else a number of its own.
  int64_t dropoutId(DropoutOp d);

private:
  /// The result of `op`: `rows` rows when an operand has rows, else one.
  Tensor allocResult(Operation *op, Value rows, SmallVector<Value> dims);

  /// Stores element j of each own row r of `out` (at r * rowSize + j): what
  /// `element` computes from r, the row's value `perRow` gives (when set)
  /// and j.
  void
  storeEachElement(const Tensor &out,
                   function_ref<Value(OpBuilder &, Location, Value r)> perRow,
                   function_ref<Value(OpBuilder &, Location, Value r,
                                      Value rowValue, Value j)>
                       element);

  LogicalResult lowerConstant(ConstantOp op);
  LogicalResult lowerLinear(LinearOp op);
  LogicalResult lowerLinearTranspose(LinearTransposeOp op);
  LogicalResult lowerReduceSum(ReduceSumOp op);
  LogicalResult lowerTypedLinear(TypedLinearOp op);
  LogicalResult lowerTypedLinearTranspose(TypedLinearTransposeOp op);
  LogicalResult lowerRowDot(RowDotOp op, Value rows);
  LogicalResult lowerBroadcastHeads(BroadcastHeadsOp op, Value rows);
  /// place_by_type / take_by_type (unfused): the types checked first.
  LogicalResult lowerSlots(Operation *op, Value rows);
  LogicalResult lowerConcatOrSlice(Operation *op, Value rows);
  LogicalResult lowerDropout(DropoutOp op);

  LoweringBuilder &lb;
  Buffers &buffers;
  DenseMap<Operation *, int64_t> unnumberedDropouts;
};

} // namespace mlir::gnn

#endif // GNN_LIB_CONVERSION_GNNTORUNTIME_ROWLOWERING_H
