//===- PartitionRows.cpp - --gnn-partition-rows ---------------------------===//
//
// MG-GCN's 1D row partitioning made explicit in the model (Passes.td has
// the contract): all-gathers before the reads at edge sources,
// reduce-scatters after the aggregations to them.
//
//===----------------------------------------------------------------------===//

#include "gnn/IR/GNNOps.h"
#include "gnn/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/MapVector.h"

namespace mlir::gnn {
#define GEN_PASS_DEF_GNNPARTITIONROWS
#include "gnn/Transforms/Passes.h.inc"
} // namespace mlir::gnn

using namespace mlir;
using namespace mlir::gnn;

namespace {

struct GNNPartitionRows
    : public mlir::gnn::impl::GNNPartitionRowsBase<GNNPartitionRows> {
  using GNNPartitionRowsBase::GNNPartitionRowsBase;

  void runOnOperation() final;
};

void GNNPartitionRows::runOnOperation() {
  func::FuncOp model = getUndifferentiatedModel(
      getOperation(), "run --gnn-partition-rows before --gnn-autodiff");
  if (!model)
    return signalPassFailure();
  if (model->hasAttr(GNNDialect::kPartitionAttrName)) {
    model.emitError() << "is partitioned already";
    return signalPassFailure();
  }

  // One all-gather per tensor read at sources, right after its definition
  // (vertex tensors are never function arguments: those are parameters).
  llvm::MapVector<Value, AllGatherOp> gathered;
  auto allRows = [&](Value graph, Value v) -> Value {
    AllGatherOp &ag = gathered[v];
    if (!ag) {
      OpBuilder b(v.getDefiningOp()->getContext());
      b.setInsertionPointAfterValue(v);
      ag = b.create<AllGatherOp>(v.getLoc(), v.getType(), graph, v);
    }
    return ag.getResult();
  };
  SmallVector<Operation *> ops;
  for (Operation &op : model.getBody().front())
    ops.push_back(&op);
  int64_t reduceScatters = 0;
  std::string widths, sums;
  for (Operation *op : ops) {
    if (auto s = dyn_cast<ScatterOp>(op)) {
      if (s.getSide() == Side::Src)
        s.getInputMutable().assign(allRows(s.getGraph(), s.getInput()));
      continue;
    }
    SmallVector<OpResult> partials;
    if (auto fg = dyn_cast<FusedGatherOp>(op)) {
      for (OpOperand &in : fg.getSrcInputsMutable())
        in.set(allRows(fg.getGraph(), in.get()));
      if (fg.getSide() == Side::Src)
        for (Value out : fg.getOuts())
          partials.push_back(cast<OpResult>(out));
    } else if (auto g = dyn_cast<GatherOp>(op)) {
      if (g.getSide() == Side::Src)
        partials.push_back(g->getResult(0));
    }
    // In result order, each after the previous.
    OpBuilder b(op->getContext());
    b.setInsertionPointAfter(op);
    for (OpResult r : partials) {
      auto rs = b.create<ReduceScatterOp>(op->getLoc(), r.getType(),
                                          op->getOperand(0), r);
      r.replaceAllUsesExcept(rs.getResult(), rs);
      ++reduceScatters;
      llvm::raw_string_ostream(sums)
          << (sums.empty() ? "" : ", ") << rowTypeOf(r.getType());
    }
  }
  for (auto &[v, ag] : gathered)
    llvm::raw_string_ostream(widths)
        << (widths.empty() ? "" : ", ") << rowTypeOf(v.getType());
  model->setAttr(GNNDialect::kPartitionAttrName,
                 StringAttr::get(&getContext(), "rows"));
  // What the partition cannot split (aggregations to the source other than
  // sums, readouts in the forward) is refused here, naming the op.
  if (failed(verifyRowPartition(model)))
    return signalPassFailure();
  InFlightDiagnostic remark = model.emitRemark();
  remark << "row partitioning: " << gathered.size()
         << " all-gather(s) in the forward";
  if (!widths.empty())
    remark << " (rows of " << widths << ")";
  remark << ", " << reduceScatters << " reduce-scatter(s)";
  if (!sums.empty())
    remark << " (rows of " << sums << ")";
}

} // namespace
