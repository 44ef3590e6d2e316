//===- PartitionFeatures.cpp - --gnn-partition-features -------------------===//
//
// P³'s feature-dimension partitioning of layer 1, in its full-graph form
// (Passes.td has the contract): the first layer runs on this process's
// feature columns over the whole graph up to its first contraction, one
// reduce-scatter sums the partials into the owners' rows, and the rest is
// row-partitioned.
//
//===----------------------------------------------------------------------===//

#include "gnn/IR/GNNOps.h"
#include "gnn/Transforms/Passes.h"

#include "mlir/IR/IRMapping.h"

namespace mlir::gnn {
#define GEN_PASS_DEF_GNNPARTITIONFEATURES
#include "gnn/Transforms/Passes.h.inc"
} // namespace mlir::gnn

using namespace mlir;
using namespace mlir::gnn;

namespace {

/// Moves layer 1's column-separable ops onto the whole graph and inserts
/// the syncs, then the row collectives of the rest.
class FeaturePartitioner {
public:
  FeaturePartitioner(func::FuncOp model, Value graph, Value whole)
      : model(model), graph(graph), whole(whole) {}

  LogicalResult run(InputOp features);

  RowCollectives collectives;
  int64_t syncs = 0;
  std::string syncWidths;

private:
  /// Every vertex's rows (or every edge's) of `v`, which the shard's ops do
  /// not compute: degrees and edge data read again on the whole graph, edge
  /// tensors recomputed there, other vertex tensors all-gathered.
  FailureOr<Value> toWhole(Value v);
  /// Moves `op` onto the whole graph, its other operands through toWhole.
  LogicalResult moveToWhole(Operation *op, ValueRange inputs);
  /// Splits `av` at the sums `sums` of its body: the ops before them on the
  /// whole graph, a reduce-scatter per sum, the ops after them on the own
  /// rows.
  LogicalResult split(ApplyVertexOp av,
                      const DenseMap<Value, ColumnKind> &kinds,
                      llvm::SetVector<Value> sums);
  /// A vertex stage like `av` on `onGraph` computing its body values
  /// `yields` from the ops of its body they need; the body values
  /// `preset[i].first` are read from the new inputs `preset[i].second`,
  /// and `av`'s inputs through `mapInput`.
  FailureOr<ApplyVertexOp>
  subStage(ApplyVertexOp av, Value onGraph, ArrayRef<Value> yields,
           ArrayRef<std::pair<Value, Value>> preset,
           function_ref<FailureOr<Value>(Value)> mapInput);

  func::FuncOp model;
  Value graph, whole;
  /// The top-level values on the whole graph and their column kinds.
  DenseMap<Value, ColumnKind> kindOf;
  DenseMap<Value, Value> wholeOf;
};

FailureOr<Value> FeaturePartitioner::toWhole(Value v) {
  if (kindOf.count(v))
    return v;
  if (Value w = wholeOf.lookup(v))
    return w;
  Operation *def = v.getDefiningOp();
  if (!def)
    return failure();
  Value w;
  if (isa<VertexTensorType>(v.getType()) && !isa<DegreeOp>(def)) {
    w = collectives.allRows(graph, v);
  } else if (isa<DegreeOp, InputOp, ScatterOp, ApplyEdgeOp>(def)) {
    FailureOr<Value> cloned =
        cloneOnWhole(v, graph, whole, [&](Value in) { return toWhole(in); });
    if (failed(cloned))
      return failure();
    w = *cloned;
  } else {
    return def->emitOpError()
           << "is read by layer 1's ops on the feature shard, which run on "
              "the whole graph, but cannot be recomputed there";
  }
  kindOf[w] = ColumnKind::Replicated;
  wholeOf[v] = w;
  return w;
}

LogicalResult FeaturePartitioner::moveToWhole(Operation *op,
                                              ValueRange inputs) {
  for (Value in : inputs) {
    FailureOr<Value> w = toWhole(in);
    if (failed(w))
      return failure();
    op->replaceUsesOfWith(in, *w);
  }
  op->setOperand(0, whole);
  return success();
}

FailureOr<ApplyVertexOp>
FeaturePartitioner::subStage(ApplyVertexOp av, Value onGraph,
                             ArrayRef<Value> yields,
                             ArrayRef<std::pair<Value, Value>> preset,
                             function_ref<FailureOr<Value>(Value)> mapInput) {
  Block &body = av.getBody().front();
  DenseSet<Value> given;
  for (auto &[v, in] : preset)
    given.insert(v);
  // The body ops the yields need, and the block arguments they read.
  DenseSet<Operation *> needed;
  llvm::SetVector<BlockArgument> args;
  SmallVector<Value> work(yields);
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (given.contains(v))
      continue;
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      args.insert(arg);
      continue;
    }
    if (needed.insert(v.getDefiningOp()).second)
      llvm::append_range(work, v.getDefiningOp()->getOperands());
  }
  SmallVector<Value> inputs, params, from;
  for (auto &[v, in] : preset) {
    inputs.push_back(in);
    from.push_back(v);
  }
  unsigned numInputs = av.getInputs().size();
  for (BlockArgument arg : body.getArguments()) {
    if (!args.contains(arg) || arg.getArgNumber() >= numInputs)
      continue;
    FailureOr<Value> in = mapInput(av.getInputs()[arg.getArgNumber()]);
    if (failed(in))
      return failure();
    inputs.push_back(*in);
    from.push_back(arg);
  }
  for (BlockArgument arg : body.getArguments())
    if (args.contains(arg) && arg.getArgNumber() >= numInputs) {
      params.push_back(av.getParams()[arg.getArgNumber() - numInputs]);
      from.push_back(arg);
    }
  SmallVector<Type> types;
  for (Value y : yields)
    types.push_back(
        rowTensorOf<ApplyVertexOp>(cast<RankedTensorType>(y.getType())));
  OpBuilder b(av);
  auto stage =
      b.create<ApplyVertexOp>(av.getLoc(), types, onGraph, inputs, params);
  stage->setDiscardableAttrs(av->getDiscardableAttrDictionary());
  Block &fresh = stage.getBody().front();
  IRMapping map;
  for (auto [v, arg] : llvm::zip_equal(from, fresh.getArguments()))
    map.map(v, arg);
  b.setInsertionPointToEnd(&fresh);
  for (Operation &op : body.without_terminator())
    if (needed.contains(&op))
      b.clone(op, map);
  SmallVector<Value> yielded;
  for (Value y : yields)
    yielded.push_back(map.lookup(y));
  b.create<YieldOp>(av.getLoc(), yielded);
  return stage;
}

LogicalResult
FeaturePartitioner::split(ApplyVertexOp av,
                          const DenseMap<Value, ColumnKind> &kinds,
                          llvm::SetVector<Value> sums) {
  auto yield = cast<YieldOp>(av.getBody().front().getTerminator());
  // A partial yielded is summed right away (P³'s sync after the first
  // contraction); feature-shard results stay on the whole graph.
  SmallVector<Value> shardYields;
  for (Value y : yield.getValues()) {
    ColumnKind k = kinds.lookup(y);
    if (k == ColumnKind::Partial)
      sums.insert(y);
    else if (k == ColumnKind::Shard && !llvm::is_contained(shardYields, y))
      shardYields.push_back(y);
  }
  SmallVector<Value> before(sums.begin(), sums.end());
  llvm::append_range(before, shardYields);
  FailureOr<ApplyVertexOp> first =
      subStage(av, whole, before, {}, [&](Value in) { return toWhole(in); });
  if (failed(first))
    return failure();
  SmallVector<std::pair<Value, Value>> summed;
  Operation *after = *first;
  for (auto [i, v] : llvm::enumerate(sums)) {
    ReduceScatterOp rs =
        collectives.ownSums(graph, cast<OpResult>(first->getResult(i)), after);
    // Which sync it is: the lowering moves its rows, and its adjoint's,
    // at the level the batch needs them (gnnrtReduceScatterWhole).
    rs.setSyncAttr(OpBuilder(rs).getI64IntegerAttr(syncs));
    after = rs;
    summed.push_back({v, rs.getResult()});
    llvm::raw_string_ostream(syncWidths)
        << (syncs++ ? ", " : "") << rowTypeOf(rs.getType());
  }
  for (auto [i, y] : llvm::enumerate(shardYields))
    kindOf[first->getResult(sums.size() + i)] = ColumnKind::Shard;

  // The own rows' part: what the sums feed, and what needs no feature.
  SmallVector<Value> rest;
  for (Value y : yield.getValues()) {
    ColumnKind k = kinds.lookup(y);
    if ((k == ColumnKind::Summed || k == ColumnKind::Replicated) &&
        !llvm::is_contained(rest, y))
      rest.push_back(y);
  }
  ApplyVertexOp second;
  if (!rest.empty()) {
    FailureOr<ApplyVertexOp> s =
        subStage(av, graph, rest, summed,
                 [](Value in) -> FailureOr<Value> { return in; });
    if (failed(s))
      return failure();
    second = *s;
    second->moveAfter(after);
  }
  for (auto [r, y] : llvm::zip_equal(av.getResults(), yield.getValues())) {
    Value to;
    if (auto *it = llvm::find(shardYields, y); it != shardYields.end())
      to = first->getResult(sums.size() + (it - shardYields.begin()));
    else if (auto *it = llvm::find(rest, y); it != rest.end())
      to = second.getResult(it - rest.begin());
    else
      to = summed[llvm::find(sums, y) - sums.begin()].second;
    r.replaceAllUsesWith(to);
  }
  av.erase();
  return success();
}

LogicalResult FeaturePartitioner::run(InputOp features) {
  features->setOperand(0, whole);
  kindOf[features.getResult()] = ColumnKind::Shard;
  SmallVector<Operation *> ops;
  for (Operation &op : model.getBody().front())
    ops.push_back(&op);
  auto onShard = [&](Value v) {
    auto it = kindOf.find(v);
    return it != kindOf.end() && it->second != ColumnKind::Replicated;
  };
  for (Operation *op : ops) {
    if (op == features || !llvm::any_of(op->getOperands(), onShard))
      continue;
    if (isa<ScatterOp, GatherOp>(op)) {
      if (auto g = dyn_cast<GatherOp>(op))
        if (failed(verifySummable(g, g.getAcc(),
                                  kindOf.lookup(g.getInput()) ==
                                      ColumnKind::Partial)))
          return failure();
      op->setOperand(0, whole);
      kindOf[op->getResult(0)] = kindOf.lookup(op->getOperand(1));
      continue;
    }
    if (isa<ApplyEdgeOp, ApplyVertexOp>(op)) {
      ValueRange inputs = isa<ApplyEdgeOp>(op)
                              ? cast<ApplyEdgeOp>(op).getInputs()
                              : cast<ApplyVertexOp>(op).getInputs();
      SmallVector<ColumnKind> inKinds;
      SmallVector<Value> others;
      for (Value in : inputs) {
        auto it = kindOf.find(in);
        inKinds.push_back(it == kindOf.end() ? ColumnKind::Replicated
                                             : it->second);
        if (it == kindOf.end())
          others.push_back(in);
      }
      auto av = dyn_cast<ApplyVertexOp>(op);
      DenseMap<Value, ColumnKind> kinds;
      llvm::SetVector<Value> sums;
      if (failed(classifyColumns(op, inKinds, /*allowSums=*/av != nullptr,
                                 kinds, &sums)))
        return failure();
      Operation *yield = op->getRegion(0).front().getTerminator();
      bool needsSum =
          !sums.empty() || llvm::any_of(yield->getOperands(), [&](Value y) {
            return kinds.lookup(y) == ColumnKind::Partial ||
                   kinds.lookup(y) == ColumnKind::Summed;
          });
      if (av && needsSum) {
        if (failed(split(av, kinds, sums)))
          return failure();
        continue;
      }
      if (failed(moveToWhole(op, others)))
        return failure();
      for (auto [r, y] :
           llvm::zip_equal(op->getResults(), yield->getOperands()))
        kindOf[r] = kinds.lookup(y);
      continue;
    }
    return op->emitOpError()
           << "reads every vertex's feature columns of this process (layer "
              "1 before its first contraction), which it cannot work on: "
              "feature partitioning needs the first contraction's partials "
              "summed (by a gnn.linear whose weight has the features as its "
              "rows) before anything else";
  }
  if (!syncs)
    return model.emitError()
           << "has no contraction of the features (a gnn.linear whose weight "
              "has the features as its rows), which feature partitioning "
              "splits; use --gnn-partition-rows";
  collectives.insert(model);
  return success();
}

struct GNNPartitionFeatures
    : public mlir::gnn::impl::GNNPartitionFeaturesBase<GNNPartitionFeatures> {
  using GNNPartitionFeaturesBase::GNNPartitionFeaturesBase;

  void runOnOperation() final;
};

void GNNPartitionFeatures::runOnOperation() {
  func::FuncOp model = getUndifferentiatedModel(
      getOperation(), "run --gnn-partition-features before --gnn-autodiff");
  if (!model)
    return signalPassFailure();
  if (model->hasAttr(GNNDialect::kPartitionAttrName)) {
    model.emitError() << "is partitioned already";
    return signalPassFailure();
  }
  InputOp features;
  for (auto in : model.getBody().front().getOps<InputOp>())
    if (in.getName() == "features")
      features = in;
  if (!features) {
    model.emitError() << "has no 'features' input, which feature "
                         "partitioning splits";
    return signalPassFailure();
  }
  Value graph = features.getGraph();
  OpBuilder b(graph.getContext());
  b.setInsertionPointAfterValue(graph);
  auto whole = b.create<GraphOp>(graph.getLoc(), graph.getType());
  whole.setWhole(true);
  model->setAttr(GNNDialect::kPartitionAttrName,
                 StringAttr::get(&getContext(), "features"));

  FeaturePartitioner partitioner(model, graph, whole);
  if (failed(partitioner.run(features)) || failed(verifyPartition(model)))
    return signalPassFailure();
  const RowCollectives &c = partitioner.collectives;
  InFlightDiagnostic remark = model.emitRemark();
  remark << "feature partitioning: layer 1 on the feature columns up to "
         << partitioner.syncs << " sync(s) (rows of " << partitioner.syncWidths
         << "); " << c.gathered.size() << " all-gather(s)";
  if (!c.gathered.empty())
    remark << " (rows of " << c.gatheredWidths() << ")";
  remark << ", " << c.reduceScatters << " reduce-scatter(s) in all";
}

} // namespace
