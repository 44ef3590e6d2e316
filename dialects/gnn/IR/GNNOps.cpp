//===- GNNOps.cpp - gnn dialect operations --------------------------------===//

#include "gnn/IR/GNNOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::gnn;

#define GET_OP_CLASSES
#include "gnn/IR/GNNOps.cpp.inc"

/// Shapes are equal, dimension by dimension (`?` only equals `?`).
static bool sameShape(ArrayRef<int64_t> a, ArrayRef<int64_t> b) {
  return a == b;
}

/// A row that element-wise ops broadcast: `tensor<f32>` or `tensor<1xf32>`.
static bool isScalarRow(RankedTensorType type) {
  return type.getRank() == 0 ||
         (type.getRank() == 1 && type.getDimSize(0) == 1);
}

RankedTensorType mlir::gnn::broadcastRowType(RankedTensorType lhs,
                                             RankedTensorType rhs) {
  if (lhs == rhs)
    return lhs;
  if (isScalarRow(lhs) && isScalarRow(rhs)) // tensor<f32> vs tensor<1xf32>
    return lhs.getRank() ? lhs : rhs;
  if (isScalarRow(rhs))
    return lhs;
  if (isScalarRow(lhs))
    return rhs;
  return {};
}

//===----------------------------------------------------------------------===//
// InputOp
//===----------------------------------------------------------------------===//

bool InputOp::isVertexInputName(StringRef name) {
  return name == "features" || name == "labels" || name == "train_mask" ||
         name == "val_mask" || name == "test_mask";
}

std::optional<int64_t> InputOp::getLevelInputIndex(StringRef name) {
  int64_t k;
  if (!name.consume_front("level.") || name.empty() ||
      !llvm::all_of(name, llvm::isDigit) || name.getAsInteger(10, k))
    return std::nullopt;
  return k;
}

LogicalResult InputOp::verify() {
  StringRef name = getName();
  Type type = getResult().getType();
  if (name.empty())
    return emitOpError() << "input name must not be empty";
  if (getLevelInputIndex(name)) {
    auto fn = (*this)->getParentOfType<FunctionOpInterface>();
    if (!fn || !fn->hasAttr(GNNDialect::kEvalLevelAttrName))
      return emitOpError() << "input '" << name
                           << "' is a cut of a layer-wise evaluation, read "
                              "only in a function with "
                           << GNNDialect::kEvalLevelAttrName
                           << " (--gnn-split-eval-levels)";
    auto vertexType = dyn_cast<VertexTensorType>(type);
    if (!vertexType || !vertexType.getElementType().isF32())
      return emitOpError() << "input '" << name
                           << "' must be a vertex tensor of f32 but got "
                           << type;
    return success();
  }
  if (!isVertexInputName(name)) {
    auto edgeType = dyn_cast<EdgeTensorType>(type);
    if (!edgeType)
      return emitOpError() << "input '" << name
                           << "' is not a vertex input (features, labels, "
                              "train_mask, val_mask, test_mask) so it is edge "
                              "data and needs an edge tensor type, but got "
                           << type;
    if (!llvm::all_of(name,
                      [](char c) { return llvm::isAlnum(c) || c == '_'; }))
      return emitOpError() << "edge data name '" << name
                           << "' must contain only letters, digits and '_'";
    Type elt = edgeType.getElementType();
    if (!elt.isF32() && !elt.isInteger(32))
      return emitOpError() << "edge data '" << name
                           << "' must have f32 or i32 elements but got " << elt;
    return success();
  }
  auto vertexType = dyn_cast<VertexTensorType>(type);
  if (!vertexType)
    return emitOpError() << "input '" << name
                         << "' needs a vertex tensor type but got " << type;
  if (name == "features") {
    if (!vertexType.getElementType().isF32() || vertexType.getRowRank() != 1)
      return emitOpError() << "input 'features' must be "
                              "'!gnn.vtensor<Fxf32>' but got "
                           << type;
    return success();
  }
  Type expected = name == "labels" ? IntegerType::get(getContext(), 64)
                                   : IntegerType::get(getContext(), 1);
  auto expectedType = VertexTensorType::get({}, expected);
  if (vertexType != expectedType)
    return emitOpError() << "input '" << name << "' must be " << expectedType
                         << " but got " << type;
  return success();
}

//===----------------------------------------------------------------------===//
// DegreeOp
//===----------------------------------------------------------------------===//

LogicalResult DegreeOp::verify() {
  auto type = getResult().getType();
  if (!type.getElementType().isF32() ||
      type.getRowShape() != ArrayRef<int64_t>{1})
    return emitOpError() << "result must be '!gnn.vtensor<1xf32>' but got "
                         << type;
  return success();
}

//===----------------------------------------------------------------------===//
// ScatterOp / GatherOp
//===----------------------------------------------------------------------===//

LogicalResult ScatterOp::verify() {
  auto in = getInput().getType();
  auto out = getResult().getType();
  if (in.getRowType() != out.getRowType())
    return emitOpError() << "result rows " << out.getRowType()
                         << " must equal the input rows " << in.getRowType();
  return success();
}

LogicalResult GatherOp::verify() {
  auto in = getInput().getType();
  auto out = getResult().getType();
  if (in.getRowType() != out.getRowType())
    return emitOpError() << "result rows " << out.getRowType()
                         << " must equal the input rows " << in.getRowType();
  if (!in.getElementType().isF32())
    return emitOpError() << "'" << stringifyAccumulator(getAcc())
                         << "' gathers f32 rows but the input has "
                         << in.getElementType() << " elements";
  return success();
}

//===----------------------------------------------------------------------===//
// ApplyEdgeOp / ApplyVertexOp
//===----------------------------------------------------------------------===//

/// Creates the body block: one argument per input row, then per parameter.
static void buildStage(OpBuilder &builder, OperationState &state,
                       TypeRange resultTypes, Value graph, ValueRange inputs,
                       ValueRange params) {
  state.addOperands(graph);
  state.addOperands(inputs);
  state.addOperands(params);
  state.addTypes(resultTypes);
  Region *body = state.addRegion();
  Block *block = new Block();
  body->push_back(block);
  for (Value input : inputs) {
    Type type = input.getType();
    if (auto v = dyn_cast<VertexTensorType>(type))
      block->addArgument(v.getRowType(), input.getLoc());
    else if (auto e = dyn_cast<EdgeTensorType>(type))
      block->addArgument(e.getRowType(), input.getLoc());
    else
      block->addArgument(type, input.getLoc());
  }
  for (Value param : params)
    block->addArgument(param.getType(), param.getLoc());
}

void ApplyEdgeOp::build(OpBuilder &builder, OperationState &state,
                        TypeRange resultTypes, Value graph, ValueRange inputs,
                        ValueRange params) {
  buildStage(builder, state, resultTypes, graph, inputs, params);
  state.getOrAddProperties<Properties>().operandSegmentSizes = {
      1, static_cast<int32_t>(inputs.size()),
      static_cast<int32_t>(params.size())};
}

void ApplyVertexOp::build(OpBuilder &builder, OperationState &state,
                          TypeRange resultTypes, Value graph, ValueRange inputs,
                          ValueRange params) {
  buildStage(builder, state, resultTypes, graph, inputs, params);
  state.getOrAddProperties<Properties>().operandSegmentSizes = {
      1, static_cast<int32_t>(inputs.size()),
      static_cast<int32_t>(params.size())};
}

RankedTensorType mlir::gnn::rowTypeOf(Type type) {
  if (auto v = dyn_cast<VertexTensorType>(type))
    return v.getRowType();
  if (auto e = dyn_cast<EdgeTensorType>(type))
    return e.getRowType();
  return {};
}

/// Checks the region of a stage against its operands and results.
static LogicalResult verifyStage(Operation *op, ValueRange inputs,
                                 ValueRange params, Region &body) {
  if (op->getNumResults() == 0)
    return op->emitOpError() << "must produce at least one result";
  Block &block = body.front();
  unsigned expected = inputs.size() + params.size();
  if (block.getNumArguments() != expected)
    return op->emitOpError()
           << "body must have " << expected << " arguments (" << inputs.size()
           << " rows + " << params.size() << " parameters) but has "
           << block.getNumArguments();
  for (auto [i, input] : llvm::enumerate(inputs)) {
    RankedTensorType row = rowTypeOf(input.getType());
    Type argType = block.getArgument(i).getType();
    if (argType != row)
      return op->emitOpError()
             << "body argument #" << i << " must be the row type " << row
             << " of input #" << i << " (" << input.getType() << ") but is "
             << argType;
  }
  for (auto [i, param] : llvm::enumerate(params)) {
    unsigned argNo = inputs.size() + i;
    Type argType = block.getArgument(argNo).getType();
    if (argType != param.getType())
      return op->emitOpError()
             << "body argument #" << argNo << " must have the type "
             << param.getType() << " of parameter #" << i << " but is "
             << argType;
  }
  auto yield = block.empty() ? YieldOp() : dyn_cast<YieldOp>(block.back());
  if (!yield)
    return op->emitOpError() << "body must end with 'gnn.yield'";
  if (yield.getValues().size() != op->getNumResults())
    return yield.emitOpError()
           << "yields " << yield.getValues().size() << " values but the "
           << op->getName() << " has " << op->getNumResults() << " results";
  for (auto [i, pair] :
       llvm::enumerate(llvm::zip(yield.getValues(), op->getResults()))) {
    auto [value, result] = pair;
    RankedTensorType row = rowTypeOf(result.getType());
    if (value.getType() != row)
      return yield.emitOpError()
             << "operand #" << i << " has type " << value.getType()
             << " but result #" << i << " (" << result.getType()
             << ") has rows of type " << row;
  }
  return success();
}

LogicalResult ApplyEdgeOp::verifyRegions() {
  return verifyStage(*this, getInputs(), getParams(), getBody());
}

LogicalResult ApplyVertexOp::verifyRegions() {
  return verifyStage(*this, getInputs(), getParams(), getBody());
}

void FusedGatherOp::build(OpBuilder &builder, OperationState &state,
                          TypeRange resultTypes, Value graph,
                          ValueRange srcInputs, ValueRange dstInputs,
                          ValueRange edgeInputs, ValueRange params,
                          Accumulator acc, Side side, bool withArg) {
  SmallVector<Value> inputs(srcInputs);
  llvm::append_range(inputs, dstInputs);
  llvm::append_range(inputs, edgeInputs);
  SmallVector<Type> types(resultTypes);
  if (withArg) {
    auto row = cast<VertexTensorType>(resultTypes.front());
    types.push_back(VertexTensorType::get(
        builder.getContext(), row.getRowShape(), builder.getI32Type()));
  }
  buildStage(builder, state, types, graph, inputs, params);
  // buildStage added the graph and the inputs as one run; the segments
  // split them.
  auto &props = state.getOrAddProperties<Properties>();
  props.operandSegmentSizes = {1, static_cast<int32_t>(srcInputs.size()),
                               static_cast<int32_t>(dstInputs.size()),
                               static_cast<int32_t>(edgeInputs.size()),
                               static_cast<int32_t>(params.size())};
  props.resultSegmentSizes = {static_cast<int32_t>(resultTypes.size()),
                              withArg ? 1 : 0};
  props.acc = AccumulatorAttr::get(builder.getContext(), acc);
  props.side = SideAttr::get(builder.getContext(), side);
}

SmallVector<Value> FusedGatherOp::getRowInputs() {
  SmallVector<Value> inputs(getSrcInputs());
  llvm::append_range(inputs, getDstInputs());
  llvm::append_range(inputs, getEdgeInputs());
  return inputs;
}

LogicalResult EdgeSelectOp::verify() {
  if (getArg().getType().getShape() != getValue().getType().getShape())
    return emitOpError() << "arg and value rows must have the same shape";
  if (!isa<ApplyEdgeOp, FusedGatherOp>((*this)->getParentOp()))
    return emitOpError()
           << "is only meaningful at an edge (in 'gnn.apply_edge' "
              "or 'gnn.fused_gather')";
  return success();
}

void mlir::gnn::eraseDeadRowOps(Block &body) {
  SmallVector<Operation *> ops;
  for (Operation &op : body.without_terminator())
    ops.push_back(&op);
  for (Operation *op : llvm::reverse(ops))
    if (op->use_empty())
      op->erase();
}

template <typename StageOp>
StageOp mlir::gnn::rebuildStage(StageOp stage, ValueRange extraInputs,
                                ArrayRef<Value> replace) {
  Block &old = stage.getBody().front();
  // Read the hoisted values from the new rows: placeholders first, so that
  // the old definitions die.
  OpBuilder b(stage);
  SmallVector<BlockArgument> extraArgs;
  for (Value in : extraInputs)
    extraArgs.push_back(old.addArgument(rowTypeOf(in.getType()), in.getLoc()));
  for (auto [v, arg] : llvm::zip(replace, extraArgs))
    Value(v).replaceAllUsesWith(arg);
  eraseDeadRowOps(old);

  SmallVector<Value> inputs, params;
  SmallVector<BlockArgument> keptInputs, keptParams;
  unsigned numInputs = stage.getInputs().size();
  for (BlockArgument arg : old.getArguments()) {
    if (arg.use_empty())
      continue;
    unsigned i = arg.getArgNumber();
    if (i < numInputs) {
      inputs.push_back(stage.getInputs()[i]);
      keptInputs.push_back(arg);
    } else if (i < old.getNumArguments() - extraArgs.size()) {
      params.push_back(stage.getParams()[i - numInputs]);
      keptParams.push_back(arg);
    }
  }
  for (auto [in, arg] : llvm::zip(extraInputs, extraArgs)) {
    if (arg.use_empty())
      continue;
    inputs.push_back(in);
    keptInputs.push_back(arg);
  }
  auto fresh = b.create<StageOp>(stage.getLoc(), stage.getResultTypes(),
                                 stage.getGraph(), inputs, params);
  fresh->setDiscardableAttrs(stage->getDiscardableAttrDictionary());
  Block &body = fresh.getBody().front();
  unsigned k = 0;
  for (BlockArgument arg : keptInputs)
    arg.replaceAllUsesWith(body.getArgument(k++));
  for (BlockArgument arg : keptParams)
    arg.replaceAllUsesWith(body.getArgument(k++));
  body.getOperations().splice(body.end(), old.getOperations());
  stage.replaceAllUsesWith(fresh.getResults());
  stage.erase();
  return fresh;
}

template ApplyEdgeOp mlir::gnn::rebuildStage(ApplyEdgeOp, ValueRange,
                                             ArrayRef<Value>);
template ApplyVertexOp mlir::gnn::rebuildStage(ApplyVertexOp, ValueRange,
                                               ArrayRef<Value>);

/// A stage like `stage` (graph, inputs, parameters, attributes) with result
/// types `types`, placed before it; `stage`'s body moves into it.
template <typename StageOp>
static StageOp moveIntoNewStage(StageOp stage, TypeRange types) {
  OpBuilder b(stage);
  auto fresh = b.create<StageOp>(stage.getLoc(), types, stage.getGraph(),
                                 stage.getInputs(), stage.getParams());
  fresh->setDiscardableAttrs(stage->getDiscardableAttrDictionary());
  Block &body = fresh.getBody().front(), &old = stage.getBody().front();
  for (auto [from, to] : llvm::zip(old.getArguments(), body.getArguments()))
    from.replaceAllUsesWith(to);
  body.getOperations().splice(body.end(), old.getOperations());
  return fresh;
}

template <typename StageOp>
StageOp mlir::gnn::appendStageResults(StageOp stage, ArrayRef<Value> extra) {
  SmallVector<Type> types(stage->getResultTypes());
  for (Value v : extra)
    types.push_back(rowTensorOf<StageOp>(cast<RankedTensorType>(v.getType())));
  StageOp fresh = moveIntoNewStage(stage, types);
  auto yield = cast<YieldOp>(fresh.getBody().front().getTerminator());
  SmallVector<Value> yielded(yield.getValues());
  llvm::append_range(yielded, extra);
  yield->setOperands(yielded);
  stage.replaceAllUsesWith(
      fresh.getResults().take_front(stage->getNumResults()));
  stage.erase();
  return fresh;
}

template ApplyEdgeOp mlir::gnn::appendStageResults(ApplyEdgeOp,
                                                   ArrayRef<Value>);
template ApplyVertexOp mlir::gnn::appendStageResults(ApplyVertexOp,
                                                     ArrayRef<Value>);

template <typename StageOp>
StageOp mlir::gnn::dropStageResults(StageOp stage, ArrayRef<unsigned> drop) {
  SmallVector<Type> types;
  SmallVector<Value> kept;
  SmallVector<unsigned> keptIndices;
  for (auto [i, r] : llvm::enumerate(stage->getResults())) {
    if (llvm::is_contained(drop, i)) {
      assert(r.use_empty() && "dropping a result that is read");
      continue;
    }
    types.push_back(r.getType());
    kept.push_back(r);
    keptIndices.push_back(i);
  }
  StageOp fresh = moveIntoNewStage(stage, types);
  // The yield's operands after the arguments' replacement.
  auto yield = cast<YieldOp>(fresh.getBody().front().getTerminator());
  SmallVector<Value> yielded;
  for (unsigned i : keptIndices)
    yielded.push_back(yield.getValues()[i]);
  yield->setOperands(yielded);
  for (auto [from, to] : llvm::zip(kept, fresh.getResults()))
    from.replaceAllUsesWith(to);
  stage.erase();
  // Drops the body ops and the inputs and parameters only the dropped
  // results needed.
  return rebuildStage(fresh, ValueRange(), ArrayRef<Value>());
}

template ApplyEdgeOp mlir::gnn::dropStageResults(ApplyEdgeOp,
                                                 ArrayRef<unsigned>);
template ApplyVertexOp mlir::gnn::dropStageResults(ApplyVertexOp,
                                                   ArrayRef<unsigned>);

YieldOp FusedGatherOp::getYield() {
  return cast<YieldOp>(getBody().front().getTerminator());
}

bool mlir::gnn::isFusableRowOp(Operation *op) {
  if (auto c = dyn_cast<ConstantOp>(op))
    return c.getValue().isSplat();
  return isa<ReluOp, StepOp, StopGradientOp, NegOp, ExpOp, LogOp, SqrtOp,
             RsqrtOp, SigmoidOp, TanhOp, EluOp, LeakyReluOp, AddOp, SubOp,
             MulOp, DivOp, BroadcastHeadsOp, EdgeSelectOp, ReduceSumOp,
             RowDotOp, PlaceByTypeOp, TakeByTypeOp>(op);
}

LogicalResult FusedGatherOp::verifyRegions() {
  if (getOuts().empty())
    return emitOpError() << "must produce at least one result";
  if (Value arg = getArg()) {
    if (getAcc() != Accumulator::Max && getAcc() != Accumulator::Min)
      return emitOpError() << "has an 'arg' result but accumulates with '"
                           << stringifyAccumulator(getAcc())
                           << "' (max and min only)";
    auto a = cast<VertexTensorType>(arg.getType());
    if (getOuts().size() != 1 || !a.getElementType().isInteger(32) ||
        a.getRowShape() !=
            cast<VertexTensorType>(getOuts()[0].getType()).getRowShape())
      return emitOpError()
             << "'arg' must have i32 rows of the result's shape (one result)";
  }
  Block &block = getBody().front();
  unsigned expected = getRowInputs().size() + getParams().size();
  if (block.getNumArguments() != expected)
    return emitOpError() << "body must have " << expected << " arguments ("
                         << getRowInputs().size() << " rows + "
                         << getParams().size() << " parameters) but has "
                         << block.getNumArguments();
  auto yield = dyn_cast<YieldOp>(block.back());
  if (!yield || yield.getValues().size() != getOuts().size())
    return emitOpError() << "body must yield one row per result";
  for (auto [i, pair] :
       llvm::enumerate(llvm::zip(yield.getValues(), getOuts()))) {
    auto [value, out] = pair;
    RankedTensorType row = cast<VertexTensorType>(out.getType()).getRowType();
    if (value.getType() != row)
      return yield.emitOpError()
             << "operand #" << i << " has type " << value.getType()
             << " but result #" << i << " (" << out.getType()
             << ") has rows of type " << row;
  }
  for (auto [i, input] : llvm::enumerate(getRowInputs()))
    if (block.getArgument(i).getType() != rowTypeOf(input.getType()))
      return emitOpError() << "body argument #" << i << " must be the row type "
                           << rowTypeOf(input.getType()) << " of input #" << i;
  for (Operation &op : getBody().front().without_terminator())
    if (!isFusableRowOp(&op))
      return op.emitOpError()
             << "cannot be in a 'gnn.fused_gather' body (element-wise ops, "
                "splat constants, broadcast_heads, edge_select, reduce_sum "
                "and row_dot only)";
  return success();
}

//===----------------------------------------------------------------------===//
// Row-level ops
//===----------------------------------------------------------------------===//

LogicalResult LinearOp::verify() {
  auto in = getInput().getType();
  auto weight = getWeight().getType();
  auto out = getResult().getType();
  if (weight.getRank() <= in.getRank())
    return emitOpError() << "weight " << weight << " must have more than the "
                         << in.getRank() << " dimensions of the input row "
                         << in;
  ArrayRef<int64_t> lead = weight.getShape().take_front(in.getRank());
  ArrayRef<int64_t> tail = weight.getShape().drop_front(in.getRank());
  if (!sameShape(lead, in.getShape()))
    return emitOpError() << "weight " << weight
                         << " must start with the input row shape of " << in;
  if (!sameShape(tail, out.getShape()))
    return emitOpError() << "result " << out << " must have the shape of the "
                         << "trailing weight dimensions of " << weight;
  return success();
}

LogicalResult TypedLinearOp::verify() {
  auto in = getInput().getType();
  auto weight = getWeight().getType();
  auto out = getResult().getType();
  if (weight.getRank() <= in.getRank() + 1)
    return emitOpError() << "weight " << weight
                         << " must be [types, row shape..., result shape...]"
                         << " for the input row " << in;
  ArrayRef<int64_t> lead =
      weight.getShape().drop_front().take_front(in.getRank());
  ArrayRef<int64_t> tail = weight.getShape().drop_front(in.getRank() + 1);
  if (!sameShape(lead, in.getShape()))
    return emitOpError() << "weight " << weight
                         << " must continue its type dimension with the input "
                            "row shape of "
                         << in;
  if (!sameShape(tail, out.getShape()))
    return emitOpError() << "result " << out << " must have the shape of the "
                         << "trailing weight dimensions of " << weight;
  return success();
}

LogicalResult gnn::verifyBroadcastRows(Operation *op) {
  auto lhs = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
  auto rhs = dyn_cast<RankedTensorType>(op->getOperand(1).getType());
  auto out = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!lhs || !rhs || !out)
    return success(); // the operand and result constraints report these
  RankedTensorType expected = broadcastRowType(lhs, rhs);
  if (!expected)
    return op->emitOpError()
           << "operands " << lhs << " and " << rhs
           << " must have the same shape or one must be a scalar row "
              "(tensor<f32> or tensor<1xf32>)";
  if (out != expected)
    return op->emitOpError()
           << "result must be " << expected << " but is " << out;
  return success();
}

OpFoldResult ConstantOp::fold(FoldAdaptor adaptor) { return getValue(); }

LogicalResult ConcatOp::verify() {
  if (getInputs().empty())
    return emitOpError() << "needs at least one operand";
  auto first = cast<RankedTensorType>(getInputs().front().getType());
  if (first.getRank() == 0)
    return emitOpError() << "cannot concatenate scalar rows";
  int64_t total = 0;
  for (auto [i, value] : llvm::enumerate(getInputs())) {
    auto type = cast<RankedTensorType>(value.getType());
    if (type.getRank() != first.getRank() ||
        !sameShape(type.getShape().drop_back(), first.getShape().drop_back()))
      return emitOpError() << "operand #" << i << " " << type
                           << " must match operand #0 " << first
                           << " in every dimension but the last";
    int64_t last = type.getShape().back();
    if (ShapedType::isDynamic(last) || ShapedType::isDynamic(total))
      total = ShapedType::kDynamic;
    else
      total += last;
  }
  SmallVector<int64_t> shape(first.getShape().drop_back());
  shape.push_back(total);
  auto expected = RankedTensorType::get(shape, first.getElementType());
  if (getResult().getType() != expected)
    return emitOpError() << "result must be " << expected << " but is "
                         << getResult().getType();
  return success();
}

LogicalResult RowDotOp::verify() {
  auto lhs = getLhs().getType();
  if (lhs.getRank() != 1 && lhs.getRank() != 2)
    return emitOpError() << "operands must be vector or heads x F rows but are "
                         << lhs;
  SmallVector<int64_t> shape = lhs.getRank() == 1
                                   ? SmallVector<int64_t>{1}
                                   : SmallVector<int64_t>{lhs.getDimSize(0)};
  auto expected = RankedTensorType::get(shape, lhs.getElementType());
  if (getResult().getType() != expected)
    return emitOpError() << "result must be " << expected << " but is "
                         << getResult().getType();
  return success();
}

LogicalResult BroadcastHeadsOp::verify() {
  auto in = getInput().getType();
  auto out = getResult().getType();
  if (in.getRank() != 1)
    return emitOpError() << "input must be per-head scalars tensor<Hxf32> but "
                            "is "
                         << in;
  if (out.getRank() != 2 || out.getDimSize(0) != in.getDimSize(0))
    return emitOpError() << "result must be tensor<" << in.getDimSize(0)
                         << "xFxf32> but is " << out;
  return success();
}

/// The slotted row of place_by_type/take_by_type: `slotted` must be the
/// row `row` with a static leading dimension of T >= 1 slots.
static LogicalResult verifySlots(Operation *op, RankedTensorType slotted,
                                 RankedTensorType row, StringRef which) {
  SmallVector<int64_t> shape{slotted.getRank() ? slotted.getDimSize(0) : 0};
  llvm::append_range(shape, row.getShape());
  if (slotted.getRank() != row.getRank() + 1 ||
      ShapedType::isDynamic(slotted.getDimSize(0)) ||
      slotted.getDimSize(0) < 1 ||
      slotted.getShape().drop_front() != row.getShape())
    return op->emitOpError()
           << which << " must be the row " << row
           << " with a static leading dimension of T >= 1 types, but is "
           << slotted;
  return success();
}

LogicalResult PlaceByTypeOp::verify() {
  return verifySlots(*this, getResult().getType(), getInput().getType(),
                     "result");
}

LogicalResult TakeByTypeOp::verify() {
  return verifySlots(*this, getInput().getType(), getResult().getType(),
                     "input");
}

LogicalResult DropoutOp::verify() {
  double rate = getRate().convertToDouble();
  if (!(rate >= 0.0 && rate < 1.0))
    return emitOpError() << "rate must be in [0, 1) but is " << rate;
  return success();
}

//===----------------------------------------------------------------------===//
// Training ops
//===----------------------------------------------------------------------===//

/// Logits f32 vectors, labels i64 scalars, mask i1 scalars.
static LogicalResult verifyLossOperands(Operation *op, VertexTensorType logits,
                                        VertexTensorType labels,
                                        VertexTensorType mask) {
  if (!logits.getElementType().isF32() || logits.getRowRank() != 1)
    return op->emitOpError()
           << "logits must be '!gnn.vtensor<Cxf32>' but are " << logits;
  if (!labels.getElementType().isInteger(64) || labels.getRowRank() != 0)
    return op->emitOpError()
           << "labels must be '!gnn.vtensor<i64>' but are " << labels;
  if (!mask.getElementType().isInteger(1) || mask.getRowRank() != 0)
    return op->emitOpError()
           << "mask must be '!gnn.vtensor<i1>' but is " << mask;
  return success();
}

LogicalResult SoftmaxCrossEntropyOp::verify() {
  return verifyLossOperands(*this, getLogits().getType(), getLabels().getType(),
                            getMask().getType());
}

LogicalResult AccuracyOp::verify() {
  return verifyLossOperands(*this, getLogits().getType(), getLabels().getType(),
                            getMask().getType());
}

LogicalResult OptimizerUpdateOp::verify() {
  if (getName().empty())
    return emitOpError() << "parameter name must not be empty";
  return success();
}

//===----------------------------------------------------------------------===//
// Gradient ops
//===----------------------------------------------------------------------===//

LogicalResult LinearTransposeOp::verify() {
  auto in = getInput().getType();
  auto weight = getWeight().getType();
  auto out = getResult().getType();
  if (weight.getRank() <= in.getRank())
    return emitOpError() << "weight " << weight << " must have more than the "
                         << in.getRank() << " dimensions of the input row "
                         << in;
  int64_t lead = weight.getRank() - in.getRank();
  if (!sameShape(weight.getShape().drop_front(lead), in.getShape()))
    return emitOpError() << "weight " << weight
                         << " must end with the input row shape of " << in;
  if (!sameShape(weight.getShape().take_front(lead), out.getShape()))
    return emitOpError() << "result " << out << " must have the shape of the "
                         << "leading weight dimensions of " << weight;
  return success();
}

LogicalResult ReduceSumOp::verify() {
  if (!isScalarRow(getResult().getType()))
    return emitOpError()
           << "result must be tensor<f32> or tensor<1xf32> but is "
           << getResult().getType();
  return success();
}

LogicalResult SumRowsOp::verify() {
  RankedTensorType row = rowTypeOf(getInput().getType());
  if (!row.getElementType().isF32() || row != getResult().getType())
    return emitOpError() << "result must be the row type " << row
                         << " of the input but is " << getResult().getType();
  return success();
}

LogicalResult OuterSumOp::verify() {
  Type x = getInput().getType(), g = getGrad().getType();
  if (isa<VertexTensorType>(x) != isa<VertexTensorType>(g))
    return emitOpError() << "operands must both be vertex or both edge tensors "
                            "but are "
                         << x << " and " << g;
  RankedTensorType xr = rowTypeOf(x), gr = rowTypeOf(g);
  SmallVector<int64_t> shape(xr.getShape());
  llvm::append_range(shape, gr.getShape());
  auto expected = RankedTensorType::get(shape, xr.getElementType());
  if (getResult().getType() != expected)
    return emitOpError() << "result must be " << expected << " but is "
                         << getResult().getType();
  return success();
}

LogicalResult SoftmaxCrossEntropyGradOp::verify() {
  if (failed(verifyLossOperands(*this, getLogits().getType(),
                                getLabels().getType(), getMask().getType())))
    return failure();
  if (getResult().getType() != getLogits().getType())
    return emitOpError() << "result must have the logits' type "
                         << getLogits().getType() << " but is "
                         << getResult().getType();
  return success();
}

LogicalResult TypedLinearTransposeOp::verify() {
  auto in = getInput().getType();
  auto weight = getWeight().getType();
  auto out = getResult().getType();
  if (weight.getRank() != 1 + out.getRank() + in.getRank() ||
      !sameShape(weight.getShape().drop_front(1 + out.getRank()),
                 in.getShape()) ||
      !sameShape(weight.getShape().drop_front().take_front(out.getRank()),
                 out.getShape()))
    return emitOpError() << "weight " << weight << " must be [types, "
                         << "result shape..., input shape...] for input " << in
                         << " and result " << out;
  return success();
}

LogicalResult SliceOp::verify() {
  auto in = getInput().getType();
  auto out = getResult().getType();
  int64_t offset = getOffset();
  if (in.getRank() == 0 || in.getRank() != out.getRank() ||
      !sameShape(in.getShape().drop_back(), out.getShape().drop_back()))
    return emitOpError() << "result " << out << " must have the shape of " << in
                         << " but in the last dimension";
  int64_t last = in.getShape().back(), size = out.getShape().back();
  if (offset < 0 || ShapedType::isDynamic(size) ||
      (!ShapedType::isDynamic(last) && offset + size > last))
    return emitOpError() << "slice [" << offset << ", " << offset << " + "
                         << size << ") is outside the last dimension of " << in;
  return success();
}

LogicalResult TypedOuterSumOp::verify() {
  Type x = getInput().getType(), t = getType().getType(),
       g = getGrad().getType();
  RankedTensorType xr = rowTypeOf(x), tr = rowTypeOf(t), gr = rowTypeOf(g);
  if (!tr.getElementType().isInteger(32) || tr.getRank() != 0)
    return emitOpError() << "type operand must have i32 scalar rows but is "
                         << t;
  auto out = getResult().getType();
  SmallVector<int64_t> shape{out.getRank() ? out.getDimSize(0) : 0};
  llvm::append_range(shape, xr.getShape());
  llvm::append_range(shape, gr.getShape());
  auto expected = RankedTensorType::get(shape, xr.getElementType());
  if (out.getRank() == 0 || out != expected)
    return emitOpError()
           << "result must be [types, input row..., grad row...] = " << expected
           << " but is " << out;
  return success();
}

LogicalResult GatherGradOp::verify() {
  if (getAcc() != Accumulator::Max && getAcc() != Accumulator::Min)
    return emitOpError() << "routes the gradients of max and min gathers only";
  auto in = getInput().getType();
  if (in.getRowType() != getGrad().getType().getRowType() ||
      getResult().getType() != in)
    return emitOpError()
           << "gradient, input and result must have the same rows";
  return success();
}
