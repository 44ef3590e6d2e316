//===- DeferTransposes.cpp - --gnn-defer-transposes -----------------------===//
//
// A backward stage's transposed contraction (the gradient g W^T of its
// forward linear) moves into a stage of its own right before the first op
// that reads it, so that rows which die in between are released before the
// product is allocated. See Passes.td for the contract.
//
//===----------------------------------------------------------------------===//

#include "gnn/IR/GNNOps.h"
#include "gnn/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

namespace mlir::gnn {
#define GEN_PASS_DEF_GNNDEFERTRANSPOSES
#include "gnn/Transforms/Passes.h.inc"
} // namespace mlir::gnn

using namespace mlir;
using namespace mlir::gnn;

namespace {

/// Elements of a row type, or -1 when a dimension is dynamic.
int64_t staticElements(Type row) {
  auto t = cast<RankedTensorType>(row);
  return t.hasStaticShape() ? t.getNumElements() : -1;
}

/// Moves the deferrable transposes of `stage` (see Passes.td); returns the
/// rebuilt stage, `stage` when nothing moved, or null when everything did
/// (the stage is erased).
ApplyVertexOp defer(ApplyVertexOp stage) {
  Block &body = stage.getBody().front();
  Block *block = stage->getBlock();
  unsigned numInputs = stage.getInputs().size();
  SmallVector<unsigned> moved;
  for (auto [k, y] : llvm::enumerate(stage.getYield().getValues())) {
    Operation *op = y.getDefiningOp();
    if (!op || op->getBlock() != &body ||
        !isa<LinearTransposeOp, TypedLinearTransposeOp>(op) || !y.hasOneUse())
      continue;
    Value result = stage->getResult(k);
    // The first reader, in the stage's block.
    Operation *first = nullptr;
    bool sameBlock = true;
    for (Operation *user : result.getUsers()) {
      Operation *top = block->findAncestorOpInBlock(*user);
      if (!top) {
        sameBlock = false;
        break;
      }
      if (!first || top->isBeforeInBlock(first))
        first = top;
    }
    if (!first || !sameBlock || first == stage->getNextNode())
      continue;
    // The weights it reads must not be updated in between (an optimizer
    // update writes the parameter's buffer in place).
    bool updated = false;
    for (Operation *op = stage->getNextNode(); op != first;
         op = op->getNextNode())
      updated |= isa<OptimizerUpdateOp>(op);
    if (updated)
      continue;
    // Its operands outside the stage: rows the stage reads or yields, and
    // the stage's parameters.
    SmallVector<Value> rows, params;
    SmallVector<Value> bodyRows, bodyParams;
    bool mappable = true;
    for (Value v : op->getOperands()) {
      if (auto arg = dyn_cast<BlockArgument>(v); arg && arg.getOwner() == &body) {
        unsigned i = arg.getArgNumber();
        if (i < numInputs) {
          rows.push_back(stage.getInputs()[i]);
          bodyRows.push_back(v);
        } else {
          params.push_back(stage.getParams()[i - numInputs]);
          bodyParams.push_back(v);
        }
        continue;
      }
      auto it = llvm::find(stage.getYield().getValues(), v);
      if (it == stage.getYield().getValues().end()) {
        mappable = false;
        break;
      }
      rows.push_back(stage->getResult(it - stage.getYield().getValues().begin()));
      bodyRows.push_back(v);
    }
    if (!mappable)
      continue;
    // Deferring keeps the row operand alive longer: not worth it when it is
    // wider than the product.
    int64_t out = staticElements(y.getType());
    int64_t in = staticElements(op->getOperand(0).getType());
    if (out >= 0 && in >= 0 && in > out)
      continue;

    OpBuilder b(first);
    auto fresh = b.create<ApplyVertexOp>(stage.getLoc(), result.getType(),
                                         stage.getGraph(), rows, params);
    Block &nb = fresh.getBody().front();
    IRMapping map;
    for (auto [i, v] : llvm::enumerate(bodyRows))
      map.map(v, nb.getArgument(i));
    for (auto [i, v] : llvm::enumerate(bodyParams))
      map.map(v, nb.getArgument(bodyRows.size() + i));
    OpBuilder nbb = OpBuilder::atBlockEnd(&nb);
    Operation *clone = nbb.clone(*op, map);
    nbb.create<YieldOp>(op->getLoc(), clone->getResults());
    result.replaceAllUsesWith(fresh.getResult(0));
    fresh->emitRemark() << "deferred: the " << op->getName()
                        << " (rows of " << y.getType()
                        << ") is computed here, right before its first reader, "
                           "not in its stage";
    moved.push_back(static_cast<unsigned>(k));
  }
  if (moved.empty())
    return stage;
  if (moved.size() == stage->getNumResults()) { // nothing else to compute
    stage.erase();
    return nullptr;
  }
  return dropStageResults(stage, moved);
}

struct GNNDeferTransposesPass
    : gnn::impl::GNNDeferTransposesBase<GNNDeferTransposesPass> {
  void runOnOperation() override {
    getOperation().walk([](func::FuncOp fn) {
      for (Block &block : fn.getBody()) {
        SmallVector<ApplyVertexOp> stages(block.getOps<ApplyVertexOp>());
        for (ApplyVertexOp stage : stages)
          defer(stage);
      }
    });
  }
};

} // namespace
