//===- ShareContractions.cpp - --gnn-share-contractions -------------------===//
//
// A stage that computes a contraction an earlier stage of the same kind has
// already computed from the same rows and parameters reads the earlier
// stage's result instead: the earlier stage yields it. Autodiff's backward
// stages recompute their forward body, and a gradient rule that reads a
// linear's output (ReLU's step of a pre-activation) would otherwise redo the
// forward GEMM over every row. See Passes.td for the contract.
//
//===----------------------------------------------------------------------===//

#include "gnn/IR/GNNOps.h"
#include "gnn/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OperationSupport.h"

namespace mlir::gnn {
#define GEN_PASS_DEF_GNNSHARECONTRACTIONS
#include "gnn/Transforms/Passes.h.inc"
} // namespace mlir::gnn

using namespace mlir;
using namespace mlir::gnn;

namespace {

bool isContraction(Operation *op) { return isa<LinearOp, TypedLinearOp>(op); }

/// The values of `later`'s body that `earlier`'s body computes too, mapped to
/// the earlier body's value: block arguments bound to the same outer value
/// (or to one of `earlier`'s results, which maps to the value it yields),
/// then, in order, every op whose operands map and that has an equivalent op
/// (same name, attributes, properties and types) over the mapped operands.
template <typename StageOp>
DenseMap<Value, Value> matchBodies(StageOp earlier, StageOp later) {
  DenseMap<Value, Value> map;
  Block &eb = earlier.getBody().front(), &lb = later.getBody().front();
  auto bindArgs = [&](ValueRange laterOuter, ValueRange earlierOuter,
                      unsigned laterBase, unsigned earlierBase) {
    for (auto [i, v] : llvm::enumerate(laterOuter)) {
      Value to;
      for (auto [j, w] : llvm::enumerate(earlierOuter))
        if (v == w) {
          to = eb.getArgument(earlierBase + j);
          break;
        }
      if (!to)
        if (auto r = dyn_cast<OpResult>(v); r && r.getOwner() == earlier)
          to = earlier.getYield().getValues()[r.getResultNumber()];
      if (to)
        map[lb.getArgument(laterBase + i)] = to;
    }
  };
  unsigned li = later.getInputs().size(), ei = earlier.getInputs().size();
  bindArgs(later.getInputs(), earlier.getInputs(), 0, 0);
  bindArgs(later.getParams(), earlier.getParams(), li, ei);

  auto mapped = [&](Value lhs, Value rhs) {
    return success(map.lookup(lhs) == rhs);
  };
  for (Operation &op : lb.without_terminator()) {
    if (op.getNumRegions() != 0 ||
        !llvm::all_of(op.getOperands(),
                      [&](Value v) { return map.contains(v); }))
      continue;
    for (Operation &cand : eb.without_terminator()) {
      if (cand.getName() != op.getName())
        continue;
      if (!OperationEquivalence::isEquivalentTo(
              &op, &cand, mapped, nullptr,
              OperationEquivalence::IgnoreLocations))
        continue;
      for (auto [l, e] : llvm::zip(op.getResults(), cand.getResults()))
        map[l] = e;
      break;
    }
  }
  return map;
}

/// Shares the contractions of `later` that `earlier` computes too. Returns the
/// rebuilt later stage, or null when there was nothing to share (`earlier` is
/// then unchanged too).
template <typename StageOp>
StageOp share(StageOp &earlier, StageOp later) {
  DenseMap<Value, Value> map = matchBodies(earlier, later);
  SmallVector<Operation *> shared;
  for (Operation &op : later.getBody().front().without_terminator())
    if (isContraction(&op) && !op.use_empty() &&
        map.contains(op.getResult(0)))
      shared.push_back(&op);
  if (shared.empty())
    return nullptr;

  // The earlier stage's result for each shared value: one it yields
  // already, or a new one.
  SmallVector<Value> newYields;
  SmallVector<std::pair<Operation *, int>> source; // op, result or -1-k
  for (Operation *op : shared) {
    Value v = map.lookup(op->getResult(0));
    int index = -1;
    for (auto [i, y] : llvm::enumerate(earlier.getYield().getValues()))
      if (y == v) {
        index = static_cast<int>(i);
        break;
      }
    if (index < 0) {
      auto it = llvm::find(newYields, v);
      index = -1 - static_cast<int>(it - newYields.begin());
      if (it == newYields.end())
        newYields.push_back(v);
    }
    source.push_back({op, index});
  }
  unsigned firstNew = earlier->getNumResults();
  for (Operation *op : shared) {
    auto width = cast<RankedTensorType>(op->getResult(0).getType());
    InFlightDiagnostic d = op->emitRemark()
                           << "shared: the "
                           << (isa<TypedLinearOp>(op) ? "typed linear" : "linear")
                           << " (rows of " << width
                           << ") is read from an earlier stage, not recomputed";
    d.attachNote(earlier.getLoc()) << "computed by this stage";
  }
  if (!newYields.empty())
    earlier = appendStageResults(earlier, newYields);

  SmallVector<Value> extraInputs, replace;
  for (auto [op, index] : source) {
    unsigned r = index >= 0 ? index : firstNew + (-1 - index);
    extraInputs.push_back(earlier->getResult(r));
    replace.push_back(op->getResult(0));
  }
  return rebuildStage(later, extraInputs, replace);
}

template <typename StageOp>
void shareAll(Block &block) {
  SmallVector<StageOp> stages;
  for (Operation &op : block)
    if (auto s = dyn_cast<StageOp>(&op))
      stages.push_back(s);
  for (unsigned b = 1; b < stages.size(); ++b)
    for (unsigned a = b; a-- > 0;) {
      if (stages[a].getGraph() != stages[b].getGraph())
        continue;
      if (StageOp rebuilt = share(stages[a], stages[b]))
        stages[b] = rebuilt;
    }
}

struct GNNShareContractionsPass
    : gnn::impl::GNNShareContractionsBase<GNNShareContractionsPass> {
  void runOnOperation() override {
    getOperation().walk([](func::FuncOp fn) {
      for (Block &block : fn.getBody()) {
        shareAll<ApplyVertexOp>(block);
        shareAll<ApplyEdgeOp>(block);
      }
    });
  }
};

} // namespace
