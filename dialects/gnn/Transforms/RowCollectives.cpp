//===- RowCollectives.cpp - the collectives of row partitioning -----------===//
//
// What --gnn-partition-rows inserts, shared with --gnn-partition-features
// (whose layers after the first are row-partitioned).
//
//===----------------------------------------------------------------------===//

#include "gnn/IR/GNNOps.h"
#include "gnn/Transforms/Passes.h"

#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace mlir::gnn;

Value RowCollectives::allRows(Value graph, Value v) {
  // A replicated layer's rows are every vertex's already.
  if (getVertexSpace(v) == VertexSpace::Gathered)
    return v;
  AllGatherOp &ag = gathered[v];
  if (!ag) {
    OpBuilder b(v.getContext());
    b.setInsertionPointAfterValue(v);
    ag = b.create<AllGatherOp>(v.getLoc(), v.getType(), graph, v);
  }
  return ag.getResult();
}

ReduceScatterOp RowCollectives::ownSums(Value graph, OpResult partial,
                                        Operation *after) {
  OpBuilder b(partial.getContext());
  b.setInsertionPointAfter(after ? after : partial.getOwner());
  auto rs = b.create<ReduceScatterOp>(partial.getLoc(), partial.getType(),
                                      graph, partial);
  partial.replaceAllUsesExcept(rs.getResult(), rs);
  llvm::raw_string_ostream(sums)
      << (reduceScatters++ ? ", " : "") << rowTypeOf(partial.getType());
  return rs;
}

void RowCollectives::insert(func::FuncOp model) {
  SmallVector<Operation *> ops;
  for (Operation &op : model.getBody().front())
    ops.push_back(&op);
  for (Operation *op : ops) {
    // The whole graph's ops read every vertex's rows already.
    if (op->getNumOperands() && isa<GraphType>(op->getOperand(0).getType()) &&
        isWholeGraph(op->getOperand(0)))
      continue;
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
    Operation *after = op;
    for (OpResult r : partials)
      after = ownSums(op->getOperand(0), r, after);
  }
}

FailureOr<Value>
mlir::gnn::cloneOnWhole(Value v, Value graph, Value whole,
                        function_ref<FailureOr<Value>(Value)> toWhole) {
  Operation *def = v.getDefiningOp();
  IRMapping map;
  map.map(graph, whole);
  for (Value in : def->getOperands().drop_front()) {
    if (!isa<VertexTensorType, EdgeTensorType>(in.getType()))
      continue; // a parameter
    FailureOr<Value> inWhole = toWhole(in);
    if (failed(inWhole))
      return failure();
    map.map(in, *inWhole);
  }
  // After the op and after what its operands became.
  OpBuilder b(def);
  b.setInsertionPointAfter(def);
  for (Value in : def->getOperands())
    if (Value m = map.lookupOrNull(in))
      if (Operation *mdef = m.getDefiningOp();
          mdef && mdef->getBlock() == def->getBlock() &&
          b.getInsertionPoint()->isBeforeInBlock(mdef))
        b.setInsertionPointAfter(mdef);
  return b.clone(*def, map)->getResult(cast<OpResult>(v).getResultNumber());
}

std::string RowCollectives::gatheredWidths() const {
  std::string widths;
  for (auto &[v, ag] : gathered)
    llvm::raw_string_ostream(widths)
        << (widths.empty() ? "" : ", ") << rowTypeOf(v.getType());
  return widths;
}
