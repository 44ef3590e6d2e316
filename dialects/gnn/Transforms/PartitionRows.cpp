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

  RowCollectives collectives;
  collectives.insert(model);
  model->setAttr(GNNDialect::kPartitionAttrName,
                 StringAttr::get(&getContext(), "rows"));
  // What the partition cannot split (aggregations to the source other than
  // sums, readouts in the forward) is refused here, naming the op.
  if (failed(verifyPartition(model)))
    return signalPassFailure();
  InFlightDiagnostic remark = model.emitRemark();
  remark << "row partitioning: " << collectives.gathered.size()
         << " all-gather(s) in the forward";
  if (!collectives.gathered.empty())
    remark << " (rows of " << collectives.gatheredWidths() << ")";
  remark << ", " << collectives.reduceScatters << " reduce-scatter(s)";
  if (collectives.reduceScatters)
    remark << " (rows of " << collectives.sums << ")";
}

} // namespace
