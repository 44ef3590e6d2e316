//===- GNNGradients.cpp - gradient rules of the row-level ops -------------===//
//
// RowGradientOpInterface implementations: each builds, per operand, the row
// gradient d loss / d operand from d loss / d result with gnn row ops. Scalar
// operands an element-wise op broadcast get their gradient summed back
// (`gnn.reduce_sum`). These rules are mirrored, independently, by the NumPy
// executor (python/gnnc/executor.py) that the compiled programs are checked
// against.
//
//===----------------------------------------------------------------------===//

#include "gnn/IR/GNNOps.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::gnn;

#include "gnn/IR/GNNInterfaces.cpp.inc"

namespace {

RankedTensorType rowType(Value v) {
  return cast<RankedTensorType>(v.getType());
}

Value scalarConstant(OpBuilder &b, Location loc, double x) {
  auto type = RankedTensorType::get({}, b.getF32Type());
  return b.create<ConstantOp>(
      loc, type, DenseElementsAttr::get(type, b.getF32FloatAttr(x).getValue()));
}

template <typename OpTy>
Value binary(OpBuilder &b, Location loc, Value lhs, Value rhs) {
  return b.create<OpTy>(loc, broadcastRowType(rowType(lhs), rowType(rhs)), lhs,
                        rhs);
}

/// Sums `grad` (of the result's shape) back to `operand`'s shape when the op
/// broadcast that operand.
Value reduceTo(OpBuilder &b, Location loc, Value grad, Value operand) {
  RankedTensorType gt = rowType(grad), ot = rowType(operand);
  if (gt == ot)
    return grad;
  return b.create<ReduceSumOp>(loc, ot, grad);
}

} // namespace

//===----------------------------------------------------------------------===//
// Element-wise unary ops: d x = g * f'(x)
//===----------------------------------------------------------------------===//

LogicalResult ReluOp::buildRowGradients(OpBuilder &b, Value g,
                                        SmallVectorImpl<Value> &grads) {
  Value s = b.create<StepOp>(getLoc(), getInput());
  grads.push_back(b.create<MulOp>(getLoc(), rowType(g), g, s));
  return success();
}

LogicalResult StepOp::buildRowGradients(OpBuilder &, Value,
                                        SmallVectorImpl<Value> &grads) {
  grads.push_back(Value()); // zero almost everywhere
  return success();
}

LogicalResult StopGradientOp::buildRowGradients(OpBuilder &, Value,
                                                SmallVectorImpl<Value> &grads) {
  grads.push_back(Value()); // by definition
  return success();
}

LogicalResult SigmoidOp::buildRowGradients(OpBuilder &b, Value g,
                                           SmallVectorImpl<Value> &grads) {
  Location loc = getLoc();
  Value one = scalarConstant(b, loc, 1.0);
  Value y = getResult();
  Value omy = binary<SubOp>(b, loc, one, y);
  Value d = binary<MulOp>(b, loc, y, omy);
  grads.push_back(binary<MulOp>(b, loc, g, d));
  return success();
}

LogicalResult TanhOp::buildRowGradients(OpBuilder &b, Value g,
                                        SmallVectorImpl<Value> &grads) {
  Location loc = getLoc();
  Value y = getResult();
  Value y2 = binary<MulOp>(b, loc, y, y);
  Value d = binary<SubOp>(b, loc, scalarConstant(b, loc, 1.0), y2);
  grads.push_back(binary<MulOp>(b, loc, g, d));
  return success();
}

LogicalResult ExpOp::buildRowGradients(OpBuilder &b, Value g,
                                       SmallVectorImpl<Value> &grads) {
  grads.push_back(binary<MulOp>(b, getLoc(), g, getResult()));
  return success();
}

LogicalResult LogOp::buildRowGradients(OpBuilder &b, Value g,
                                       SmallVectorImpl<Value> &grads) {
  grads.push_back(binary<DivOp>(b, getLoc(), g, getInput()));
  return success();
}

LogicalResult NegOp::buildRowGradients(OpBuilder &b, Value g,
                                       SmallVectorImpl<Value> &grads) {
  grads.push_back(b.create<NegOp>(getLoc(), g));
  return success();
}

LogicalResult SqrtOp::buildRowGradients(OpBuilder &b, Value g,
                                        SmallVectorImpl<Value> &grads) {
  Location loc = getLoc();
  Value half = binary<MulOp>(b, loc, g, scalarConstant(b, loc, 0.5));
  grads.push_back(binary<DivOp>(b, loc, half, getResult()));
  return success();
}

LogicalResult RsqrtOp::buildRowGradients(OpBuilder &b, Value g,
                                         SmallVectorImpl<Value> &grads) {
  // d/dx x^-1/2 = -1/2 * y / x.
  Location loc = getLoc();
  Value t = binary<MulOp>(b, loc, g, getResult());
  Value u = binary<DivOp>(b, loc, t, getInput());
  grads.push_back(binary<MulOp>(b, loc, u, scalarConstant(b, loc, -0.5)));
  return success();
}

LogicalResult EluOp::buildRowGradients(OpBuilder &b, Value g,
                                       SmallVectorImpl<Value> &grads) {
  // f'(x) = x > 0 ? 1 : y + 1 = s + (1 - s) * (y + 1) with s = step(x).
  Location loc = getLoc();
  Value one = scalarConstant(b, loc, 1.0);
  Value s = b.create<StepOp>(loc, getInput());
  Value yp1 = binary<AddOp>(b, loc, getResult(), one);
  Value oms = binary<SubOp>(b, loc, one, s);
  Value d = binary<AddOp>(b, loc, s, binary<MulOp>(b, loc, oms, yp1));
  grads.push_back(binary<MulOp>(b, loc, g, d));
  return success();
}

LogicalResult LeakyReluOp::buildRowGradients(OpBuilder &b, Value g,
                                             SmallVectorImpl<Value> &grads) {
  // f'(x) = s + alpha (1 - s) with s = step(x).
  Location loc = getLoc();
  double alpha = getAlpha().convertToDouble();
  Value s = b.create<StepOp>(loc, getInput());
  Value oms = binary<SubOp>(b, loc, scalarConstant(b, loc, 1.0), s);
  Value d = binary<AddOp>(
      b, loc, s, binary<MulOp>(b, loc, oms, scalarConstant(b, loc, alpha)));
  grads.push_back(binary<MulOp>(b, loc, g, d));
  return success();
}

LogicalResult DropoutOp::buildRowGradients(OpBuilder &b, Value g,
                                           SmallVectorImpl<Value> &grads) {
  // The same mask, applied to the gradient: mask * g / (1 - rate).
  if (!getMaskId())
    return emitOpError() << "needs a mask_id to be differentiated (run "
                            "--gnn-autodiff, which numbers the dropouts)";
  auto d = b.create<DropoutOp>(getLoc(), g.getType(), g, getRateAttr(),
                               getMaskIdAttr());
  grads.push_back(d);
  return success();
}

//===----------------------------------------------------------------------===//
// Element-wise binary ops
//===----------------------------------------------------------------------===//

LogicalResult AddOp::buildRowGradients(OpBuilder &b, Value g,
                                       SmallVectorImpl<Value> &grads) {
  grads.push_back(reduceTo(b, getLoc(), g, getLhs()));
  grads.push_back(reduceTo(b, getLoc(), g, getRhs()));
  return success();
}

LogicalResult SubOp::buildRowGradients(OpBuilder &b, Value g,
                                       SmallVectorImpl<Value> &grads) {
  grads.push_back(reduceTo(b, getLoc(), g, getLhs()));
  Value neg = b.create<NegOp>(getLoc(), g);
  grads.push_back(reduceTo(b, getLoc(), neg, getRhs()));
  return success();
}

LogicalResult MulOp::buildRowGradients(OpBuilder &b, Value g,
                                       SmallVectorImpl<Value> &grads) {
  Location loc = getLoc();
  grads.push_back(
      reduceTo(b, loc, binary<MulOp>(b, loc, g, getRhs()), getLhs()));
  grads.push_back(
      reduceTo(b, loc, binary<MulOp>(b, loc, g, getLhs()), getRhs()));
  return success();
}

LogicalResult DivOp::buildRowGradients(OpBuilder &b, Value g,
                                       SmallVectorImpl<Value> &grads) {
  // d lhs = g / rhs; d rhs = -g * lhs / rhs^2 = -(d lhs) * result.
  Location loc = getLoc();
  Value dl = binary<DivOp>(b, loc, g, getRhs());
  grads.push_back(reduceTo(b, loc, dl, getLhs()));
  Value t = binary<MulOp>(b, loc, dl, getResult());
  grads.push_back(reduceTo(b, loc, b.create<NegOp>(loc, t), getRhs()));
  return success();
}

LogicalResult ConstantOp::buildRowGradients(OpBuilder &, Value,
                                            SmallVectorImpl<Value> &) {
  return success(); // no operands
}

//===----------------------------------------------------------------------===//
// Linear
//===----------------------------------------------------------------------===//

LogicalResult LinearOp::buildRowGradients(OpBuilder &b, Value g,
                                          SmallVectorImpl<Value> &grads) {
  // d x = W g (contracting W's trailing dimensions). The weight's gradient,
  // sum_r x_r (x) g_r, is one GEMM over all rows that the pass emits
  // (gnn.outer_sum); here it is left null.
  grads.push_back(b.create<LinearTransposeOp>(getLoc(), getInput().getType(), g,
                                              getWeight()));
  grads.push_back(Value());
  return success();
}

LogicalResult TypedLinearOp::buildRowGradients(OpBuilder &b, Value g,
                                               SmallVectorImpl<Value> &grads) {
  // d x = W[t] g; no gradient for the type; the weight's gradient is the
  // pass's gnn.typed_outer_sum (a grouped GEMM over the rows).
  grads.push_back(b.create<TypedLinearTransposeOp>(
      getLoc(), getInput().getType(), g, getType(), getWeight()));
  grads.push_back(Value());
  grads.push_back(Value());
  return success();
}

LogicalResult PlaceByTypeOp::buildRowGradients(OpBuilder &b, Value g,
                                               SmallVectorImpl<Value> &grads) {
  // d input = g[type]; no gradient for the type.
  grads.push_back(
      b.create<TakeByTypeOp>(getLoc(), getInput().getType(), g, getType()));
  grads.push_back(Value());
  return success();
}

LogicalResult TakeByTypeOp::buildRowGradients(OpBuilder &b, Value g,
                                              SmallVectorImpl<Value> &grads) {
  // d input = g in the type's slot, zero in the others.
  grads.push_back(
      b.create<PlaceByTypeOp>(getLoc(), getInput().getType(), g, getType()));
  grads.push_back(Value());
  return success();
}

LogicalResult ConcatOp::buildRowGradients(OpBuilder &b, Value g,
                                          SmallVectorImpl<Value> &grads) {
  int64_t offset = 0;
  for (Value in : getInputs()) {
    auto type = cast<RankedTensorType>(in.getType());
    grads.push_back(
        b.create<SliceOp>(getLoc(), type, g, b.getI64IntegerAttr(offset)));
    offset += type.getShape().back();
  }
  return success();
}

LogicalResult RowDotOp::buildRowGradients(OpBuilder &b, Value g,
                                          SmallVectorImpl<Value> &grads) {
  // d lhs = g (broadcast over the last dimension) * rhs, and symmetrically.
  Location loc = getLoc();
  auto type = cast<RankedTensorType>(getLhs().getType());
  Value spread = g;
  if (type.getRank() == 2)
    spread = b.create<BroadcastHeadsOp>(loc, type, g);
  grads.push_back(binary<MulOp>(b, loc, spread, getRhs()));
  grads.push_back(binary<MulOp>(b, loc, spread, getLhs()));
  return success();
}

LogicalResult
BroadcastHeadsOp::buildRowGradients(OpBuilder &b, Value g,
                                    SmallVectorImpl<Value> &grads) {
  // d input[h] = sum_f g[h, f]: a row_dot with ones.
  auto type = cast<RankedTensorType>(g.getType());
  if (!type.hasStaticShape())
    return emitOpError() << "needs a static result shape to be differentiated";
  Location loc = getLoc();
  auto ones = b.create<ConstantOp>(
      loc, type,
      DenseElementsAttr::get(type, b.getF32FloatAttr(1.0).getValue()));
  grads.push_back(b.create<RowDotOp>(loc, getInput().getType(), g, ones));
  return success();
}
