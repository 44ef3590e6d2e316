//===- Autodiff.cpp - --gnn-autodiff --------------------------------------===//
//
// Reverse mode over a gnn model: the whole-graph ops get their adjoints
// (scatter <-> gather), each stage a backward stage of its kind that
// recomputes the forward body and applies the row ops' gradient rules
// (RowGradientOpInterface). See Passes.td for the contract.
//
//===----------------------------------------------------------------------===//

#include "gnn/IR/GNNOps.h"
#include "gnn/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::gnn {
#define GEN_PASS_DEF_GNNAUTODIFF
#include "gnn/Transforms/Passes.h.inc"
} // namespace mlir::gnn

using namespace mlir;
using namespace mlir::gnn;

namespace {

constexpr llvm::StringLiteral kTrainStep = GNNDialect::kTrainStepName;
constexpr llvm::StringLiteral kEval = GNNDialect::kEvalName;

/// Adds two rows inside a stage body (shapes equal or one a scalar row).
Value addRows(OpBuilder &b, Location loc, Value x, Value y) {
  return b.create<AddOp>(loc,
                         broadcastRowType(cast<RankedTensorType>(x.getType()),
                                          cast<RankedTensorType>(y.getType())),
                         x, y);
}

/// Builds one stage `Op` whose body is `fn(builder, rowArgs, paramArgs)`
/// returning the yielded rows; results are row tensors of the yields' types.
template <typename Op>
Op buildStage(
    OpBuilder &b, Location loc, Value graph, ValueRange inputs,
    ValueRange params,
    function_ref<SmallVector<Value>(OpBuilder &, ValueRange, ValueRange)> fn) {
  auto block = std::make_unique<Block>();
  for (Value in : inputs)
    block->addArgument(rowTypeOf(in.getType()), loc);
  for (Value p : params)
    block->addArgument(p.getType(), loc);
  OpBuilder bb(b.getContext()); // the block is not in a region yet
  bb.setInsertionPointToEnd(block.get());
  SmallVector<Value> yields =
      fn(bb, block->getArguments().take_front(inputs.size()),
         block->getArguments().drop_front(inputs.size()));
  bb.create<YieldOp>(loc, yields);
  SmallVector<Type> resultTypes;
  for (Value y : yields)
    resultTypes.push_back(rowTensorOf<Op>(cast<RankedTensorType>(y.getType())));
  auto op = b.create<Op>(loc, resultTypes, graph, inputs, params);
  Region &body = op.getBody();
  body.getBlocks().clear();
  body.push_back(block.release());
  return op;
}

class Differentiator {
public:
  Differentiator(func::FuncOp fn, Value graph)
      : fn(fn), ownGraph(graph), graph(graph) {}

  LogicalResult run(Operation *lossOp, Value logits);

  /// The gradient of function argument `i`, or null.
  Value paramGrad(unsigned i) { return grads.lookup(fn.getArgument(i)); }

private:
  void markRequiresGrad();
  void accumulate(OpBuilder &b, Location loc, Value target, Value grad);
  LogicalResult diffOp(OpBuilder &b, Operation *op);
  LogicalResult diffGather(OpBuilder &b, GatherOp op, Value g);
  template <typename Op>
  LogicalResult diffStage(OpBuilder &b, Op op);

  /// The graph `v` is a tensor of: its op's (a feature-partitioned
  /// function's first layer runs on `gnn.graph whole`).
  Value graphOf(Value v) const;

  func::FuncOp fn;
  Value ownGraph;
  Value graph; // the graph of the op being differentiated
  llvm::DenseSet<Value> requiresGrad;
  llvm::DenseMap<Value, Value> grads;
};

void Differentiator::markRequiresGrad() {
  for (BlockArgument arg : fn.getArguments())
    requiresGrad.insert(arg);
  for (Operation &op : fn.getBody().front()) {
    bool any = llvm::any_of(op.getOperands(),
                            [&](Value v) { return requiresGrad.contains(v); });
    if (any)
      for (Value r : op.getResults())
        requiresGrad.insert(r);
  }
}

Value Differentiator::graphOf(Value v) const {
  Operation *def = v.getDefiningOp();
  if (def && def->getNumOperands() &&
      isa<GraphType>(def->getOperand(0).getType()))
    return def->getOperand(0);
  return ownGraph;
}

void Differentiator::accumulate(OpBuilder &b, Location loc, Value target,
                                Value grad) {
  if (!grad || !requiresGrad.contains(target))
    return;
  Value &slot = grads[target];
  if (!slot) {
    slot = grad;
    return;
  }
  Value prev = slot;
  if (isa<RankedTensorType>(target.getType())) {
    slot = b.create<TensorAddOp>(loc, prev, grad);
    return;
  }
  auto body = [&](OpBuilder &bb, ValueRange rows, ValueRange) {
    return SmallVector<Value>{addRows(bb, loc, rows[0], rows[1])};
  };
  if (isa<VertexTensorType>(target.getType()))
    slot = buildStage<ApplyVertexOp>(b, loc, graphOf(target), {prev, grad}, {},
                                     body)
               .getResult(0);
  else
    slot =
        buildStage<ApplyEdgeOp>(b, loc, graphOf(target), {prev, grad}, {}, body)
            .getResult(0);
}

LogicalResult Differentiator::diffGather(OpBuilder &b, GatherOp op, Value g) {
  Location loc = op.getLoc();
  Value input = op.getInput();
  if (!requiresGrad.contains(input))
    return success();
  Value vertexGrad = g;
  switch (op.getAcc()) {
  case Accumulator::Sum:
    break;
  case Accumulator::Mean: {
    // d edge = scatter(d out / degree): every edge of a vertex shares it.
    auto degType = VertexTensorType::get({1}, b.getF32Type());
    Value deg = b.create<DegreeOp>(loc, degType, graph,
                                   op.getSide() == Side::Dst ? Direction::In
                                                             : Direction::Out);
    vertexGrad = buildStage<ApplyVertexOp>(
                     b, loc, graph, {g, deg}, {},
                     [&](OpBuilder &bb, ValueRange rows, ValueRange) {
                       return SmallVector<Value>{bb.create<DivOp>(
                           loc, rows[0].getType(), rows[0], rows[1])};
                     })
                     .getResult(0);
    break;
  }
  case Accumulator::Max:
  case Accumulator::Min: {
    // The gradient goes to the edge the gather chose (lowest CSC position
    // among ties), recomputed from the gather's input.
    Value edgeGrad = b.create<GatherGradOp>(loc, input.getType(), graph, g,
                                            input, op.getAcc(), op.getSide());
    accumulate(b, loc, input, edgeGrad);
    return success();
  }
  }
  Value edgeGrad = b.create<ScatterOp>(loc, input.getType(), graph, vertexGrad,
                                       op.getSide());
  accumulate(b, loc, input, edgeGrad);
  return success();
}

template <typename Op>
LogicalResult Differentiator::diffStage(OpBuilder &b, Op op) {
  Location loc = op.getLoc();
  SmallVector<Value> resultGrads;
  bool anyGrad = false;
  for (Value r : op.getResults()) {
    resultGrads.push_back(grads.lookup(r));
    anyGrad |= static_cast<bool>(resultGrads.back());
  }
  if (!anyGrad)
    return success();
  ValueRange inputs = op.getInputs();
  ValueRange params = op.getParams();

  // Backward stage: inputs = forward inputs + result gradients; params = the
  // forward's params. Outputs: input gradients, per-row parameter
  // contributions, and (x, g) pairs of linears with a parameter weight.
  SmallVector<Value> bwInputs(inputs.begin(), inputs.end());
  SmallVector<unsigned> gradResultIndex;
  for (auto [i, g] : llvm::enumerate(resultGrads))
    if (g) {
      bwInputs.push_back(g);
      gradResultIndex.push_back(i);
    }

  enum class Kind {
    InputGrad,
    ParamContribution,
    LinearX,
    LinearG,
    TypedX,
    TypedG
  };
  struct Out {
    Kind kind;
    unsigned index; // input index / param index
  };
  SmallVector<Out> outs;
  // Linears whose x is a forward input are reduced against that input.
  SmallVector<std::pair<unsigned, Value>> linearXInputs; // param, input
  SmallVector<Value> typedTypes;   // the edge-type input of each typed linear
  SmallVector<Value> typedXInputs; // forward inputs used as a typed x
  LogicalResult status = success();

  auto body = [&](OpBuilder &bb, ValueRange rows,
                  ValueRange paramArgs) -> SmallVector<Value> {
    SmallVector<Value> yields;
    IRMapping map;
    Block &fwd = op.getBody().front();
    for (unsigned i = 0; i < inputs.size(); ++i)
      map.map(fwd.getArgument(i), rows[i]);
    for (unsigned i = 0; i < params.size(); ++i)
      map.map(fwd.getArgument(inputs.size() + i), paramArgs[i]);
    SmallVector<Operation *> cloned;
    for (Operation &inner : fwd.without_terminator())
      cloned.push_back(bb.clone(inner, map));

    // Which recomputed values depend on something that needs a gradient.
    llvm::DenseSet<Value> needs;
    for (unsigned i = 0; i < inputs.size(); ++i)
      if (requiresGrad.contains(inputs[i]))
        needs.insert(rows[i]);
    for (unsigned i = 0; i < params.size(); ++i)
      if (requiresGrad.contains(params[i]))
        needs.insert(paramArgs[i]);
    for (Operation *c : cloned)
      if (llvm::any_of(c->getOperands(),
                       [&](Value v) { return needs.contains(v); }))
        for (Value r : c->getResults())
          needs.insert(r);

    llvm::DenseMap<Value, Value> rg;
    auto addGrad = [&](Value target, Value g) {
      if (!g || !needs.contains(target))
        return;
      Value &slot = rg[target];
      slot = slot ? addRows(bb, loc, slot, g) : g;
    };
    YieldOp fwdYield = op.getYield();
    for (auto [k, resultIndex] : llvm::enumerate(gradResultIndex))
      addGrad(map.lookup(fwdYield.getValues()[resultIndex]),
              rows[inputs.size() + k]);

    for (Operation *c : llvm::reverse(cloned)) {
      if (c->getNumResults() != 1)
        continue;
      Value g = rg.lookup(c->getResult(0));
      if (!g)
        continue;
      if (!llvm::any_of(c->getOperands(),
                        [&](Value v) { return needs.contains(v); }))
        continue;
      auto iface = dyn_cast<RowGradientOpInterface>(c);
      if (!iface) {
        status = c->emitOpError() << "has no gradient rule";
        return {};
      }
      SmallVector<Value> og;
      if (failed(iface.buildRowGradients(bb, g, og))) {
        status = failure();
        return {};
      }
      if (auto typed = dyn_cast<TypedLinearOp>(c);
          typed && needs.contains(typed.getWeight())) {
        auto warg = dyn_cast<BlockArgument>(typed.getWeight());
        auto targ = dyn_cast<BlockArgument>(typed.getType());
        if (!warg || warg.getArgNumber() < rows.size() || !targ ||
            targ.getArgNumber() >= inputs.size()) {
          status = typed.emitOpError()
                   << "weight must be a stage parameter and the type a stage "
                      "input to be differentiated";
          return {};
        }
        unsigned paramIndex = warg.getArgNumber() - rows.size();
        auto xArg = dyn_cast<BlockArgument>(typed.getInput());
        if (xArg && xArg.getArgNumber() < inputs.size()) {
          typedXInputs.push_back(inputs[xArg.getArgNumber()]);
        } else {
          outs.push_back({Kind::TypedX, paramIndex});
          yields.push_back(typed.getInput());
        }
        typedTypes.push_back(inputs[targ.getArgNumber()]);
        outs.push_back({Kind::TypedG, paramIndex});
        yields.push_back(g);
      }
      if (auto linear = dyn_cast<LinearOp>(c);
          linear && needs.contains(linear.getWeight())) {
        auto arg = dyn_cast<BlockArgument>(linear.getWeight());
        if (!arg || arg.getArgNumber() < rows.size()) {
          status = linear.emitOpError()
                   << "weight must be a stage parameter to be differentiated";
          return {};
        }
        unsigned paramIndex = arg.getArgNumber() - rows.size();
        Value x = linear.getInput();
        auto xArg = dyn_cast<BlockArgument>(x);
        if (xArg && xArg.getArgNumber() < inputs.size()) {
          linearXInputs.push_back({paramIndex, inputs[xArg.getArgNumber()]});
        } else {
          outs.push_back({Kind::LinearX, paramIndex});
          yields.push_back(x);
        }
        outs.push_back({Kind::LinearG, paramIndex});
        yields.push_back(g);
      }
      for (auto [operand, grad] : llvm::zip(c->getOperands(), og))
        addGrad(operand, grad);
    }
    for (unsigned i = 0; i < inputs.size(); ++i)
      if (Value g = rg.lookup(rows[i])) {
        outs.push_back({Kind::InputGrad, i});
        yields.push_back(g);
      }
    for (unsigned i = 0; i < params.size(); ++i)
      if (Value g = rg.lookup(paramArgs[i])) {
        outs.push_back({Kind::ParamContribution, i});
        yields.push_back(g);
      }
    return yields;
  };

  // Build the body first to learn whether anything is yielded.
  Op bw = buildStage<Op>(b, loc, graph, bwInputs, params, body);
  if (failed(status))
    return failure();
  // Gradient rules build every operand's gradient; drop the ones nothing
  // uses (an input or parameter that needs none).
  SmallVector<Operation *> bwOps;
  for (Operation &inner : bw.getBody().front().without_terminator())
    bwOps.push_back(&inner);
  for (Operation *inner : llvm::reverse(bwOps))
    if (inner->use_empty())
      inner->erase();
  // Every linear weight gradient yields its g, so an empty stage has nothing
  // to contribute.
  if (bw.getNumResults() == 0) {
    bw.erase();
    return success();
  }

  unsigned linearXInputCursor = 0, typedCursor = 0, typedXCursor = 0;
  Value pendingX;
  for (auto [out, result] : llvm::zip(outs, bw.getResults())) {
    switch (out.kind) {
    case Kind::InputGrad:
      accumulate(b, loc, inputs[out.index], result);
      break;
    case Kind::ParamContribution: {
      auto type = cast<RankedTensorType>(params[out.index].getType());
      Value sum = b.create<SumRowsOp>(loc, type, result);
      accumulate(b, loc, params[out.index], sum);
      break;
    }
    case Kind::LinearX:
    case Kind::TypedX:
      pendingX = result;
      break;
    case Kind::TypedG: {
      auto type = cast<RankedTensorType>(params[out.index].getType());
      Value x = pendingX ? pendingX : typedXInputs[typedXCursor++];
      Value dw = b.create<TypedOuterSumOp>(loc, type, x,
                                           typedTypes[typedCursor++], result);
      pendingX = Value();
      accumulate(b, loc, params[out.index], dw);
      break;
    }
    case Kind::LinearG: {
      Value x = pendingX;
      if (!x)
        x = linearXInputs[linearXInputCursor++].second;
      pendingX = Value();
      auto type = cast<RankedTensorType>(params[out.index].getType());
      Value dw = b.create<OuterSumOp>(loc, type, x, result);
      accumulate(b, loc, params[out.index], dw);
      break;
    }
    }
  }
  return success();
}

LogicalResult Differentiator::diffOp(OpBuilder &b, Operation *op) {
  graph = op->getNumOperands() && isa<GraphType>(op->getOperand(0).getType())
              ? op->getOperand(0)
              : ownGraph;
  if (auto gather = dyn_cast<GatherOp>(op)) {
    if (Value g = grads.lookup(gather.getResult()))
      return diffGather(b, gather, g);
    return success();
  }
  if (auto scatter = dyn_cast<ScatterOp>(op)) {
    Value g = grads.lookup(scatter.getResult());
    if (g && requiresGrad.contains(scatter.getInput()))
      accumulate(b, op->getLoc(), scatter.getInput(),
                 b.create<GatherOp>(op->getLoc(), scatter.getInput().getType(),
                                    graph, g, Accumulator::Sum,
                                    scatter.getSide()));
    return success();
  }
  // Row partitioning: the adjoint of an all-gather is a reduce-scatter, and
  // back.
  if (auto ag = dyn_cast<AllGatherOp>(op)) {
    Value g = grads.lookup(ag.getResult());
    if (g && requiresGrad.contains(ag.getInput()))
      accumulate(
          b, op->getLoc(), ag.getInput(),
          b.create<ReduceScatterOp>(op->getLoc(), g.getType(), graph, g));
    return success();
  }
  // A replicated layer's rows read at the own vertices: the own rows'
  // gradient, zero elsewhere, is this process's partial.
  if (auto own = dyn_cast<OwnRowsOp>(op)) {
    Value g = grads.lookup(own.getResult());
    if (g && requiresGrad.contains(own.getInput()))
      accumulate(b, op->getLoc(), own.getInput(),
                 b.create<PadRowsOp>(op->getLoc(), g.getType(), graph, g));
    return success();
  }
  if (auto rs = dyn_cast<ReduceScatterOp>(op)) {
    Value g = grads.lookup(rs.getResult());
    if (g && requiresGrad.contains(rs.getInput()))
      accumulate(b, op->getLoc(), rs.getInput(),
                 b.create<AllGatherOp>(op->getLoc(), g.getType(), graph, g,
                                       rs.getSyncAttr()));
    return success();
  }
  if (auto stage = dyn_cast<ApplyVertexOp>(op))
    return diffStage(b, stage);
  if (auto stage = dyn_cast<ApplyEdgeOp>(op))
    return diffStage(b, stage);
  if (isa<GraphOp, InputOp, DegreeOp, SoftmaxCrossEntropyOp, AccuracyOp>(op))
    return success();
  if (llvm::any_of(op->getResults(),
                   [&](Value r) { return grads.contains(r); }))
    return op->emitOpError() << "has no gradient rule";
  return success();
}

LogicalResult Differentiator::run(Operation *lossOp, Value logits) {
  markRequiresGrad();
  auto loss = dyn_cast_or_null<SoftmaxCrossEntropyOp>(lossOp);
  if (!loss)
    return fn.emitOpError() << "the loss must be computed by "
                               "'gnn.softmax_cross_entropy'";
  Operation *ret = fn.getBody().front().getTerminator();
  OpBuilder b(ret);
  Value dLogits = b.create<SoftmaxCrossEntropyGradOp>(
      loss.getLoc(), loss.getLogits().getType(), loss.getLogits(),
      loss.getLabels(), loss.getMask());
  accumulate(b, loss.getLoc(), loss.getLogits(), dLogits);
  (void)logits;
  SmallVector<Operation *> forward;
  for (Operation &op : fn.getBody().front().without_terminator())
    forward.push_back(&op);
  // Ops created during the sweep are placed before the return, after the
  // forward ops; the sweep only visits the forward ones.
  for (Operation *op : llvm::reverse(forward)) {
    if (op == dLogits.getDefiningOp())
      continue;
    if (failed(diffOp(b, op)))
      return failure();
  }
  return success();
}

struct GNNAutodiff : public mlir::gnn::impl::GNNAutodiffBase<GNNAutodiff> {
  using GNNAutodiffBase::GNNAutodiffBase;

  void runOnOperation() final {
    ModuleOp module = getOperation();
    func::FuncOp model =
        getUndifferentiatedModel(module, "was --gnn-autodiff run twice?");
    if (!model)
      return signalPassFailure();

    // Number the dropouts: the mask id ties a dropout to its recomputation
    // and its backward.
    int64_t nextMask = 0;
    model.walk([&](DropoutOp d) {
      d.setMaskIdAttr(
          IntegerAttr::get(IntegerType::get(&getContext(), 64), nextMask++));
    });

    OpBuilder b(module.getContext());
    b.setInsertionPointAfter(model);
    auto eval = cast<func::FuncOp>(b.clone(*model));
    eval.setSymName(kEval);
    eval->removeAttr(GNNDialect::kModelAttrName);
    eval.walk([&](DropoutOp d) {
      d.getResult().replaceAllUsesWith(d.getInput());
      d.erase();
    });

    auto train = cast<func::FuncOp>(b.clone(*model));
    train.setSymName(kTrainStep);
    train->removeAttr(GNNDialect::kModelAttrName);
    Block &body = train.getBody().front();
    auto ret = cast<func::ReturnOp>(body.getTerminator());
    Value lossValue = ret.getOperand(0);
    Value logits = ret.getOperand(1);
    // The model contract (verified) guarantees one gnn.graph, and the
    // loss, an f32, cannot be a parameter argument.
    Operation *lossOp = lossValue.getDefiningOp();
    GraphOp graphOp;
    train.walk([&](GraphOp g) {
      if (!g.getWhole())
        graphOp = g;
    });
    Differentiator diff(train, graphOp.getResult());
    if (failed(diff.run(lossOp, logits)))
      return signalPassFailure();

    // One optimizer step per parameter with a gradient.
    OpBuilder rb(ret);
    SmallVector<Value> results{lossValue, logits};
    for (unsigned i = 0; i < train.getNumArguments(); ++i) {
      Value p = train.getArgument(i);
      Value g = diff.paramGrad(i);
      auto name =
          train.getArgAttrOfType<StringAttr>(i, GNNDialect::kParamAttrName);
      if (!g || !name) {
        results.push_back(p);
        continue;
      }
      results.push_back(
          rb.create<OptimizerUpdateOp>(ret.getLoc(), p.getType(), name, p, g));
    }
    rb.create<func::ReturnOp>(ret.getLoc(), results);
    ret.erase();
    SmallVector<Type> resultTypes;
    for (Value r : results)
      resultTypes.push_back(r.getType());
    train.setFunctionType(FunctionType::get(
        &getContext(), train.getArgumentTypes(), resultTypes));
  }
};

} // namespace
