//===- ElementMath.h - one element of a gnn row op --------------*- C++ -*-===//
//
// Scalar arith/math for one element of an element-wise gnn op, shared by the
// row loops (StageLowering) and the fused-gather kernels; the dropout mask
// of one element, the runtime's formula.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_LIB_CONVERSION_GNNTORUNTIME_ELEMENTMATH_H
#define GNN_LIB_CONVERSION_GNNTORUNTIME_ELEMENTMATH_H

#include "mlir/IR/Builders.h"

namespace mlir::gnn {

/// Element-wise row ops: one result element from the operands' elements at
/// the same position (scalar rows broadcast).
bool isElementwise(Operation *op);

/// A broadcast_heads with a static head width: it joins element-wise runs of
/// its result shape, element j reading element j / width of its operand.
bool spreadsHeads(Operation *op);

/// One element of the element-wise op `op` from its operands' elements `v`.
Value emitElement(OpBuilder &b, Location l, Operation *op, ValueRange v);

/// One element of a dropout applied inline: x * scale where the mask keeps
/// flat element `index`, else 0 (gnnrtDropoutParam's formula); `params` are
/// the step's key, threshold and scale bits.
Value emitDropoutElement(OpBuilder &ob, Location loc, Value x, Value index,
                         ArrayRef<Value> params);

} // namespace mlir::gnn

#endif // GNN_LIB_CONVERSION_GNNTORUNTIME_ELEMENTMATH_H
