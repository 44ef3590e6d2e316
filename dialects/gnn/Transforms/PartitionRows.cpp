//===- PartitionRows.cpp - --gnn-partition-rows ---------------------------===//
//
// MG-GCN's 1D row partitioning made explicit in the model (Passes.td has
// the contract): all-gathers before the reads at edge sources,
// reduce-scatters after the aggregations to them; with replicate=k, the
// ops before the k-th level of aggregations on the whole graph.
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

/// The level of `op`'s results from its operands' (`levelOfValue`): the
/// most reads at an edge's source on a path from the inputs (a layer's
/// hop), a scatter from the source and a fused gather's `src` inputs adding
/// one.
static int64_t levelOf(Operation *op,
                       function_ref<int64_t(Value)> levelOfValue) {
  int64_t l = 0;
  for (Value in : op->getOperands())
    l = std::max(l, levelOfValue(in));
  if (auto s = dyn_cast<ScatterOp>(op); s && s.getSide() == Side::Src)
    return l + 1;
  if (auto fg = dyn_cast<FusedGatherOp>(op))
    for (Value in : fg.getSrcInputs())
      l = std::max(l, levelOfValue(in) + 1);
  return l;
}

/// The model's forward by level: each value's level (levelOf), the values
/// that depend on the features, and the top-level ops among those that
/// give vertex or edge tensors, in order.
struct ForwardLevels {
  explicit ForwardLevels(func::FuncOp model);

  DenseMap<Value, int64_t> level;
  DenseSet<Value> fromFeatures;
  SmallVector<Operation *> rowOps;
  /// The highest level of those ops.
  int64_t most = 0;
};

ForwardLevels::ForwardLevels(func::FuncOp model) {
  for (Operation &op : model.getBody().front()) {
    const int64_t l = levelOf(&op, [&](Value v) { return level.lookup(v); });
    bool features = false;
    for (Value in : op.getOperands())
      features |= fromFeatures.contains(in);
    if (auto in = dyn_cast<InputOp>(op))
      features = in.getName() == "features";
    for (Value r : op.getResults()) {
      level[r] = l;
      if (features)
        fromFeatures.insert(r);
    }
    if (features && op.getNumResults() &&
        isa<VertexTensorType, EdgeTensorType>(op.getResult(0).getType())) {
      most = std::max(most, l);
      rowOps.push_back(&op);
    }
  }
}

/// Moves the forward ops that depend on the features and lie in the
/// levels below `levels` or from `from` on (when positive) onto the whole
/// graph (replicated on every process); the own rows' ops read their
/// results at the sources directly and elsewhere through gnn.own_rows, and
/// the whole graph's ops read the own rows' results through gnn.all_gather.
class Replicator {
public:
  Replicator(func::FuncOp model, Value graph, Value whole, int64_t levels,
             int64_t from)
      : model(model), graph(graph), whole(whole), levels(levels), from(from) {
    llvm::raw_string_ostream os(flags);
    if (levels)
      os << "replicate=" << levels;
    if (from)
      os << (levels ? " " : "") << "replicate-from=" << from;
  }

  LogicalResult run(RowCollectives &collectives);

  int64_t moved = 0, ownReads = 0, mostLevels = 0;

private:
  /// Every vertex's rows of `v`, which the own rows' ops compute: degrees,
  /// inputs and stages that need no feature recomputed on the whole graph,
  /// other vertex tensors all-gathered.
  FailureOr<Value> toWhole(Value v, RowCollectives &collectives);
  /// The own rows of `w`, a replicated value.
  Value ownRows(Value w);

  /// Whether the ops of level `l` are replicated.
  bool replicates(int64_t l) const {
    return l < levels || (from > 0 && l >= from);
  }

  func::FuncOp model;
  Value graph, whole;
  int64_t levels, from;
  std::string flags; // "replicate=K replicate-from=M", for the diagnostics
  DenseSet<Value> replicated, fromFeatures;
  DenseMap<Value, Value> wholeOf, ownOf;
};

FailureOr<Value> Replicator::toWhole(Value v, RowCollectives &collectives) {
  if (replicated.contains(v))
    return v;
  if (Value w = wholeOf.lookup(v))
    return w;
  Operation *def = v.getDefiningOp();
  if (!def)
    return failure();
  Value w;
  if (auto in = dyn_cast<InputOp>(def);
      in && !InputOp::isVertexInputName(in.getName())) {
    return def->emitOpError()
           << "is edge data read by a replicated layer (--gnn-partition-rows "
           << flags
           << "), which the runtime binds for the own rows' edges only: "
              "replicate fewer levels";
  }
  // Edges and what depends on no feature are recomputed; a vertex tensor
  // of the split levels below a replicated suffix is all-gathered once.
  if (isa<DegreeOp, ScatterOp, ApplyEdgeOp, ApplyVertexOp>(def) &&
      def->getNumOperands() && def->getOperand(0) == graph &&
      (isa<EdgeTensorType>(v.getType()) || !fromFeatures.contains(v))) {
    FailureOr<Value> cloned = cloneOnWhole(
        v, graph, whole, [&](Value in) { return toWhole(in, collectives); });
    if (failed(cloned))
      return failure();
    w = *cloned;
  } else if (isa<VertexTensorType>(v.getType())) {
    w = collectives.allRows(graph, v);
  } else {
    return def->emitOpError()
           << "is read by a replicated layer (--gnn-partition-rows " << flags
           << ") but cannot be recomputed on the whole graph";
  }
  replicated.insert(w);
  wholeOf[v] = w;
  return w;
}

Value Replicator::ownRows(Value w) {
  Value &own = ownOf[w];
  if (!own) {
    OpBuilder b(w.getContext());
    b.setInsertionPointAfterValue(w);
    own = b.create<OwnRowsOp>(w.getLoc(), w.getType(), graph, w);
    ++ownReads;
  }
  return own;
}

LogicalResult Replicator::run(RowCollectives &collectives) {
  SmallVector<Operation *> ops;
  for (Operation &op : model.getBody().front())
    ops.push_back(&op);
  ForwardLevels forward(model);
  fromFeatures = forward.fromFeatures;
  mostLevels = forward.most;
  const SmallVector<Operation *> &candidates = forward.rowOps;
  // A vertex tensor moves with its level; an edge tensor with its readers,
  // when they all move (a scatter from the destination at a layer's start
  // belongs to the next hop's edges; one read on both sides is recomputed
  // on the whole graph by toWhole).
  DenseSet<Operation *> moving;
  for (Operation *op : llvm::reverse(candidates)) {
    const bool edges = isa<EdgeTensorType>(op->getResult(0).getType());
    if (edges ? !op->use_empty() && llvm::all_of(op->getUsers(),
                                                 [&](Operation *u) {
                                                   return moving.contains(u);
                                                 })
              : replicates(forward.level.lookup(op->getResult(0))))
      moving.insert(op);
  }
  SmallVector<Operation *> toMove;
  for (Operation *op : candidates)
    if (moving.contains(op))
      toMove.push_back(op);
  if (levels > mostLevels + 1)
    return model.emitError()
           << "the model has " << mostLevels
           << " level(s) of neighbour reads from the features: "
              "--gnn-partition-rows replicate="
           << levels << " asks for more than " << mostLevels + 1;
  if (from > mostLevels)
    return model.emitError()
           << "the model has levels 0 to " << mostLevels
           << " of neighbour reads from the features: --gnn-partition-rows "
              "replicate-from="
           << from << " replicates none";
  for (Operation *op : toMove) {
    if (!op->getNumOperands() || op->getOperand(0) != graph)
      return op->emitOpError()
             << "cannot run on the whole graph (--gnn-partition-rows " << flags
             << "): only inputs, scatters, stages and aggregations do";
    for (OpOperand &use : op->getOpOperands()) {
      Value in = use.get();
      if (use.getOperandNumber() == 0 ||
          !isa<VertexTensorType, EdgeTensorType>(in.getType()))
        continue;
      FailureOr<Value> w = toWhole(in, collectives);
      if (failed(w))
        return failure();
      use.set(*w);
    }
    op->setOperand(0, whole);
    for (Value r : op->getResults())
      replicated.insert(r);
    ++moved;
  }
  // The own rows' readers of a replicated value.
  for (Operation *op : ops) {
    if (replicated.contains(op->getNumResults() ? op->getResult(0) : Value()))
      continue;
    for (OpOperand &use : op->getOpOperands()) {
      if (!replicated.contains(use.get()))
        continue;
      // Every vertex's rows are what a read at the sources needs.
      bool atSources = false;
      if (auto s = dyn_cast<ScatterOp>(op))
        atSources = s.getSide() == Side::Src;
      if (auto fg = dyn_cast<FusedGatherOp>(op))
        atSources = llvm::is_contained(fg.getSrcInputs(), use.get()) &&
                    !llvm::is_contained(fg.getDstInputs(), use.get()) &&
                    !llvm::is_contained(fg.getEdgeInputs(), use.get());
      if (!atSources)
        use.set(ownRows(use.get()));
    }
  }
  return success();
}

} // namespace

SmallVector<LevelWork> mlir::gnn::levelWork(func::FuncOp model,
                                            int64_t features, int64_t classes) {
  const ForwardLevels forward(model);
  DenseSet<Value> featureWide;
  SmallVector<LevelWork> work;
  // The floats of a row of `v` (a vertex or edge tensor, or a row).
  auto floats = [&](Value v) {
    Type t = v.getType();
    RankedTensorType row = isa<VertexTensorType, EdgeTensorType>(t)
                               ? rowTypeOf(t)
                               : dyn_cast<RankedTensorType>(t);
    if (!row)
      return 1.0;
    double n = 1;
    for (int64_t d : row.getShape())
      n *= static_cast<double>(
          ShapedType::isDynamic(d)
              ? (featureWide.contains(v) ? features : classes)
              : d);
    return n;
  };
  // A stage body's operations per row; its values' feature widths first.
  auto bodyWork = [&](Operation *stage, ValueRange inputs) {
    Block &body = stage->getRegion(0).front();
    for (auto [arg, in] : llvm::zip(body.getArguments(), inputs))
      if (featureWide.contains(in))
        featureWide.insert(arg);
    double ops = 0;
    for (Operation &op : body.without_terminator()) {
      const bool linear = isa<LinearOp, TypedLinearOp>(op);
      if (!linear && llvm::any_of(op.getOperands(), [&](Value v) {
            return featureWide.contains(v);
          }))
        for (Value r : op.getResults())
          featureWide.insert(r);
      for (Value r : op.getResults())
        ops += linear ? 2 * floats(op.getOperand(0)) * floats(r) : floats(r);
    }
    Operation *yield = body.getTerminator();
    for (auto [r, y] : llvm::zip(stage->getResults(), yield->getOperands()))
      if (featureWide.contains(y))
        featureWide.insert(r);
    return ops;
  };
  for (Operation *rowOp : forward.rowOps) {
    Operation &op = *rowOp;
    if (auto in = dyn_cast<InputOp>(op))
      featureWide.insert(in.getResult()); // the features
    const int64_t l = forward.level.lookup(op.getResult(0));
    if (work.size() <= static_cast<size_t>(l))
      work.resize(l + 1);
    LevelWork &w = work[l];
    if (auto s = dyn_cast<ScatterOp>(op)) {
      if (featureWide.contains(s.getInput()))
        featureWide.insert(s.getResult());
      w.perEdge += floats(s.getResult());
    } else if (auto g = dyn_cast<GatherOp>(op)) {
      if (featureWide.contains(g.getInput()))
        featureWide.insert(g.getResult());
      w.perEdge += floats(g.getInput());
    } else if (auto av = dyn_cast<ApplyVertexOp>(op)) {
      w.perVertex += bodyWork(av, av.getInputs());
    } else if (auto ae = dyn_cast<ApplyEdgeOp>(op)) {
      w.perEdge += bodyWork(ae, ae.getInputs());
    } else if (auto fg = dyn_cast<FusedGatherOp>(op)) {
      SmallVector<Value> ins(fg.getSrcInputs());
      llvm::append_range(ins, fg.getDstInputs());
      llvm::append_range(ins, fg.getEdgeInputs());
      w.perEdge += bodyWork(fg, ins);
      for (Value r : fg.getResults())
        w.perEdge += floats(r); // the accumulation
    }
  }
  return work;
}

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

  model->setAttr(GNNDialect::kPartitionAttrName,
                 StringAttr::get(&getContext(), "rows"));
  RowCollectives collectives;
  std::optional<Replicator> replicator;
  const int64_t prefix = replicate, from = replicateFrom;
  if (prefix < 0 || from < 0) {
    model.emitError() << "--gnn-partition-rows replicate=" << prefix
                      << " replicate-from=" << from
                      << ": the levels replicated are 0 or more";
    return signalPassFailure();
  }
  if (from > 0 && from <= prefix) {
    model.emitError() << "--gnn-partition-rows replicate-from=" << from
                      << " starts inside the " << prefix
                      << " level(s) replicate= replicates: with the rows "
                         "split in between, it must exceed them";
    return signalPassFailure();
  }
  if (prefix > 0 || from > 0) {
    Value graph;
    for (auto in : model.getBody().front().getOps<InputOp>())
      if (in.getName() == "features")
        graph = in.getGraph();
    if (!graph) {
      model.emitError() << "has no 'features' input, from which "
                           "--gnn-partition-rows replicates layers";
      return signalPassFailure();
    }
    OpBuilder b(graph.getContext());
    b.setInsertionPointAfterValue(graph);
    auto whole = b.create<GraphOp>(graph.getLoc(), graph.getType());
    whole.setWhole(true);
    replicator.emplace(model, graph, whole, prefix, from);
    if (failed(replicator->run(collectives)))
      return signalPassFailure();
  }
  collectives.insert(model);
  // What the partition cannot split (aggregations to the source other than
  // sums, readouts in the forward) is refused here, naming the op.
  if (failed(verifyPartition(model)))
    return signalPassFailure();
  InFlightDiagnostic remark = model.emitRemark();
  remark << "row partitioning: ";
  if (replicator) {
    remark << replicator->moved << " op(s) of the levels";
    if (prefix)
      remark << " below " << prefix;
    if (prefix && from)
      remark << " and";
    if (from)
      remark << " from " << from << " on";
    remark << " replicated on the whole graph (" << replicator->ownReads
           << " own-rows read(s)); ";
  }
  remark << collectives.gathered.size() << " all-gather(s) in the forward";
  if (!collectives.gathered.empty())
    remark << " (rows of " << collectives.gatheredWidths() << ")";
  remark << ", " << collectives.reduceScatters << " reduce-scatter(s)";
  if (collectives.reduceScatters)
    remark << " (rows of " << collectives.sums << ")";
}

} // namespace
