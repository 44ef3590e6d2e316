//===- GNNPartition.cpp - vertex spaces of partitioned functions ---------===//
//
// What a partitioned function's tensors hold on each process
// (docs/Distributed.md) and the checks that its ops read them where they
// are: row partitioning (MG-GCN) and feature partitioning (P³).
//
//===----------------------------------------------------------------------===//

#include "gnn/IR/GNNOps.h"
#include "gnn/IR/GNNTypes.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

using namespace mlir;
using namespace mlir::gnn;

//===----------------------------------------------------------------------===//
// Partitioning modes
//===----------------------------------------------------------------------===//

StringRef mlir::gnn::getPartition(Operation *op) {
  auto fn = dyn_cast<FunctionOpInterface>(op);
  if (!fn)
    fn = op->getParentOfType<FunctionOpInterface>();
  if (!fn)
    return "";
  auto mode = fn->getAttrOfType<StringAttr>(GNNDialect::kPartitionAttrName);
  return mode ? mode.getValue() : "";
}

bool mlir::gnn::isRowPartitioned(Operation *op) {
  return getPartition(op) == "rows";
}

bool mlir::gnn::isFeaturePartitioned(Operation *op) {
  return getPartition(op) == "features";
}

bool mlir::gnn::usesWholeGraph(Operation *fn) {
  bool whole = false;
  fn->walk([&](GraphOp g) { whole |= g.getWhole(); });
  return whole;
}

bool mlir::gnn::isWholeGraph(Value graph) {
  auto def = graph.getDefiningOp<GraphOp>();
  return def && def.getWhole();
}

/// The graph `op` runs on: its first graph operand, or null.
static Value graphOf(Operation *op) {
  for (Value v : op->getOperands())
    if (isa<GraphType>(v.getType()))
      return v;
  return {};
}

LogicalResult GraphOp::verify() {
  if (getWhole() && getPartition(*this).empty())
    return emitOpError() << "'whole' is only valid in a partitioned function "
                            "('"
                         << GNNDialect::kPartitionAttrName
                         << " = \"rows\"' or \"features\")";
  return success();
}

//===----------------------------------------------------------------------===//
// Column kinds (feature partitioning)
//===----------------------------------------------------------------------===//

/// A row of one element (`tensor<f32>`, `tensor<1xf32>`): broadcast over
/// the other operand of an element-wise op, so it may meet a feature shard.
static bool isScalarRow(Type t) {
  auto r = dyn_cast<RankedTensorType>(t);
  return r && r.hasStaticShape() && r.getNumElements() == 1;
}

/// The column kind of a stage parameter: a function argument whose first
/// dimension is bound to the features (`gnn.dims = ["features", ...]`) has
/// only this process's feature columns' rows.
static ColumnKind paramKind(Value param) {
  auto arg = dyn_cast<BlockArgument>(param);
  if (!arg)
    return ColumnKind::Replicated;
  auto fn = dyn_cast<FunctionOpInterface>(arg.getOwner()->getParentOp());
  if (!fn || !isFeaturePartitioned(fn))
    return ColumnKind::Replicated;
  auto dims = fn.getArgAttrOfType<ArrayAttr>(arg.getArgNumber(),
                                             GNNDialect::kDimsAttrName);
  if (!dims || dims.empty())
    return ColumnKind::Replicated;
  auto first = dyn_cast<StringAttr>(dims[0]);
  if (!first || first.getValue() != kDimFeatures)
    return ColumnKind::Replicated;
  return dims.size() >= 2 ? ColumnKind::ShardedWeight : ColumnKind::Shard;
}

/// The kind of `op`'s result from its operands' (none of them `Summed`,
/// not all `Replicated`), or nullopt when `op` cannot work on them column
/// by column.
static std::optional<ColumnKind> columnRule(Operation &op,
                                            ArrayRef<ColumnKind> in) {
  using K = ColumnKind;
  auto is = [&](unsigned i, K k) { return in[i] == k; };
  auto scalar = [&](unsigned i) {
    return isScalarRow(op.getOperand(i).getType());
  };
  // The backward of a row-partitioned function's replicated layers: an op
  // linear in a partial gradient, whose other operands every process has
  // (a dropout's mask is the same on every process), keeps it partial.
  if (!isFeaturePartitioned(&op)) {
    const size_t partials = llvm::count(in, K::Partial);
    const bool othersReplicated =
        partials + static_cast<size_t>(llvm::count(in, K::Replicated)) ==
        in.size();
    if (isa<DropoutOp, BroadcastHeadsOp, SliceOp, ConcatOp>(op) &&
        partials == in.size())
      return K::Partial;
    if (isa<LinearOp, TypedLinearOp, LinearTransposeOp, TypedLinearTransposeOp>(
            op) &&
        is(0, K::Partial) && partials == 1 && othersReplicated)
      return K::Partial;
    if (isa<RowDotOp>(op) && partials == 1 && othersReplicated)
      return K::Partial;
    if (isa<EdgeSelectOp>(op) && is(1, K::Partial) && partials == 1 &&
        othersReplicated)
      return K::Partial;
  }
  if (isa<ReluOp, SigmoidOp, TanhOp, ExpOp, LogOp, SqrtOp, RsqrtOp, StepOp,
          EluOp, LeakyReluOp, DropoutOp>(op))
    return is(0, K::Shard) ? std::optional(K::Shard) : std::nullopt;
  if (isa<NegOp, StopGradientOp>(op)) // linear: a partial stays one
    return is(0, K::Shard) || is(0, K::Partial) ? std::optional(in[0])
                                                : std::nullopt;
  if (isa<AddOp, SubOp, MulOp, DivOp>(op)) {
    if (is(0, K::Shard) && is(1, K::Shard))
      return K::Shard;
    // A scalar broadcast over a feature shard acts on each column.
    if ((is(0, K::Shard) && is(1, K::Replicated) && scalar(1)) ||
        (is(1, K::Shard) && is(0, K::Replicated) && scalar(0) &&
         !isa<DivOp>(op)))
      return K::Shard;
    // Partials add up; scaled by what every process has, they stay partial.
    if (isa<AddOp, SubOp>(op))
      return is(0, K::Partial) && is(1, K::Partial) ? std::optional(K::Partial)
                                                    : std::nullopt;
    if ((is(0, K::Partial) && is(1, K::Replicated)) ||
        (is(1, K::Partial) && is(0, K::Replicated) && isa<MulOp>(op)))
      return K::Partial;
    return std::nullopt;
  }
  if (isa<LinearOp>(op))
    return is(0, K::Shard) && is(1, K::ShardedWeight)
               ? std::optional(K::Partial)
               : std::nullopt;
  if (isa<LinearTransposeOp>(op)) {
    if (is(0, K::Replicated) && is(1, K::ShardedWeight))
      return K::Shard;
    // The backward of a replicated layer: a partial gradient through a
    // weight every process has stays partial.
    return is(0, K::Partial) && is(1, K::Replicated) ? std::optional(K::Partial)
                                                     : std::nullopt;
  }
  if (isa<ReduceSumOp>(op))
    return is(0, K::Shard) || is(0, K::Partial) ? std::optional(K::Partial)
                                                : std::nullopt;
  return std::nullopt;
}

namespace {
/// Why a stage body is not column-separable: the op and the reason.
struct ColumnError {
  Operation *op = nullptr;
  std::string why;
};
} // namespace

/// classifyColumns without its diagnostic: fills `error` instead.
static bool classify(Operation *stage, ArrayRef<ColumnKind> inputKinds,
                     bool allowSums, DenseMap<Value, ColumnKind> &kinds,
                     llvm::SetVector<Value> *sums, ColumnError &error) {
  using K = ColumnKind;
  // A stage's operands are its graph, then one per block argument.
  Block &body = stage->getRegion(0).front();
  for (BlockArgument arg : body.getArguments())
    kinds[arg] = arg.getArgNumber() < inputKinds.size()
                     ? inputKinds[arg.getArgNumber()]
                     : paramKind(stage->getOperand(1 + arg.getArgNumber()));
  for (Operation &op : body) {
    SmallVector<K> in;
    for (Value v : op.getOperands())
      in.push_back(kinds.lookup(v));
    auto has = [&](K k) { return llvm::is_contained(in, k); };
    auto fail = [&](std::string why) {
      error = {&op, std::move(why)};
      return false;
    };
    if (op.hasTrait<OpTrait::IsTerminator>()) {
      if (has(K::ShardedWeight))
        return fail("yields a weight's rows of this process's feature "
                    "columns, which only a contraction may read");
      continue;
    }
    K out = K::Replicated;
    if (has(K::Summed)) {
      if (has(K::Shard) || has(K::ShardedWeight))
        return fail("reads this process's feature columns after the sum of "
                    "the partials (P³: only the layer-1 ops before the sync "
                    "see the feature shard)");
      // A partial next to a summed value is summed too.
      if (has(K::Partial)) {
        if (!allowSums)
          return fail("needs the sum of the processes' partials of a "
                      "contraction over the feature columns first");
        for (auto [v, k] : llvm::zip_equal(op.getOperands(), in))
          if (k == K::Partial)
            sums->insert(v);
      }
      out = K::Summed;
    } else if (!llvm::all_of(in, [](K k) { return k == K::Replicated; })) {
      std::optional<K> rule = columnRule(op, in);
      if (rule) {
        out = *rule;
      } else if (has(K::Partial) && !has(K::Shard) && !has(K::ShardedWeight)) {
        // A bias, a non-linearity or a second contraction of a partial:
        // the sum of the partials first (P³'s sync).
        if (!allowSums)
          return fail("needs the sum of the processes' partials of a "
                      "contraction over the feature columns first (a bias, a "
                      "non-linearity or a second contraction after the "
                      "first; --gnn-partition-features puts the sync here)");
        for (auto [v, k] : llvm::zip_equal(op.getOperands(), in))
          if (k == K::Partial)
            sums->insert(v);
        out = K::Summed;
      } else if (has(K::ShardedWeight) &&
                 !isa<LinearOp, LinearTransposeOp>(op)) {
        return fail("reads a weight's rows of this process's feature columns, "
                    "which only gnn.linear may contract with the feature "
                    "shard");
      } else {
        return fail(
            "is not column-separable: it would combine this process's "
            "feature columns with values that are not split the same way "
            "(P³ splits layer 1 along the features: its ops before the "
            "first contraction must work column by column, and that "
            "contraction's weight must have the features as its rows)");
      }
    }
    for (Value r : op.getResults())
      kinds[r] = out;
  }
  return true;
}

LogicalResult mlir::gnn::classifyColumns(Operation *stage,
                                         ArrayRef<ColumnKind> inputKinds,
                                         bool allowSums,
                                         DenseMap<Value, ColumnKind> &kinds,
                                         llvm::SetVector<Value> *sums) {
  ColumnError error;
  if (classify(stage, inputKinds, allowSums, kinds, sums, error))
    return success();
  return error.op->emitOpError() << error.why;
}

//===----------------------------------------------------------------------===//
// Vertex spaces
//===----------------------------------------------------------------------===//

static ColumnKind kindOfSpace(VertexSpace s) {
  switch (s) {
  case VertexSpace::Shard:
    return ColumnKind::Shard;
  case VertexSpace::Partial:
    return ColumnKind::Partial;
  case VertexSpace::Own: // not readable on the whole graph: the verifier says
  case VertexSpace::Gathered:
    return ColumnKind::Replicated;
  }
  llvm_unreachable("a vertex space");
}

/// The vertex (or edge) tensors a stage reads, in the order of its body's
/// first block arguments (the parameters follow).
static OperandRange stageInputs(Operation *stage) {
  if (auto fg = dyn_cast<FusedGatherOp>(stage))
    return stage->getOperands().slice(1, fg.getSrcInputs().size() +
                                             fg.getDstInputs().size() +
                                             fg.getEdgeInputs().size());
  if (auto av = dyn_cast<ApplyVertexOp>(stage))
    return av.getInputs();
  return cast<ApplyEdgeOp>(stage).getInputs();
}

namespace {
/// The vertex spaces computed so far: a space depends on its operands'
/// (a whole graph's stage on its inputs'), which a long chain of stages with
/// shared inputs (a deep model's replicated levels) would otherwise
/// recompute exponentially often.
using SpaceCache = DenseMap<Value, VertexSpace>;

/// While alive (verifyPartition: the IR does not change), getVertexSpace
/// keeps what it computes in one cache.
class SpaceCacheScope {
public:
  SpaceCacheScope() : previous(active) { active = &cache; }
  ~SpaceCacheScope() { active = previous; }
  static SpaceCache *current() { return active; }

private:
  static thread_local SpaceCache *active;
  SpaceCache cache;
  SpaceCache *previous;
};
thread_local SpaceCache *SpaceCacheScope::active = nullptr;
} // namespace

static VertexSpace vertexSpace(Value v, SpaceCache &cache);

/// The column kinds of a whole-graph stage's inputs.
static SmallVector<ColumnKind> inputKindsOf(Operation *stage,
                                            SpaceCache &cache) {
  SmallVector<ColumnKind> kinds;
  for (Value v : stageInputs(stage))
    kinds.push_back(kindOfSpace(vertexSpace(v, cache)));
  return kinds;
}

static SmallVector<ColumnKind> inputKindsOf(Operation *stage) {
  if (SpaceCache *cache = SpaceCacheScope::current())
    return inputKindsOf(stage, *cache);
  SpaceCache cache;
  return inputKindsOf(stage, cache);
}

/// The space of result `v` of an op of the whole graph.
static VertexSpace wholeGraphSpace(Operation *def, Value v, SpaceCache &cache) {
  // Feature partitioning reads the process's feature columns there; a
  // row-partitioned function's replicated layers read every column.
  if (auto in = dyn_cast<InputOp>(def))
    return in.getName() == "features" && isFeaturePartitioned(def)
               ? VertexSpace::Shard
               : VertexSpace::Gathered;
  if (auto s = dyn_cast<ScatterOp>(def))
    return vertexSpace(s.getInput(), cache);
  if (auto g = dyn_cast<GatherOp>(def))
    return vertexSpace(g.getInput(), cache);
  if (auto gg = dyn_cast<GatherGradOp>(def))
    return vertexSpace(gg.getGrad(), cache);
  if (def->getNumRegions() == 1 &&
      isa<ApplyVertexOp, ApplyEdgeOp, FusedGatherOp>(def)) {
    DenseMap<Value, ColumnKind> kinds;
    ColumnError error;
    if (!classify(def, inputKindsOf(def, cache), /*allowSums=*/false, kinds,
                  nullptr, error))
      return VertexSpace::Gathered; // the verifier reports it
    Operation *yield = def->getRegion(0).front().getTerminator();
    unsigned i = cast<OpResult>(v).getResultNumber();
    if (i >= yield->getNumOperands()) // a fused gather's `arg`
      return VertexSpace::Gathered;
    switch (kinds.lookup(yield->getOperand(i))) {
    case ColumnKind::Shard:
      return VertexSpace::Shard;
    case ColumnKind::Partial:
      return VertexSpace::Partial;
    default:
      return VertexSpace::Gathered;
    }
  }
  return VertexSpace::Gathered; // degrees, and what only reads those
}

/// getVertexSpace without the cache lookup.
static VertexSpace computeSpace(Value v, SpaceCache &cache) {
  Operation *def = v.getDefiningOp();
  if (!def || !isa<VertexTensorType, EdgeTensorType>(v.getType()))
    return VertexSpace::Own;
  if (Value graph = graphOf(def); graph && isWholeGraph(graph))
    return wholeGraphSpace(def, v, cache);
  if (!isa<VertexTensorType>(v.getType()))
    return VertexSpace::Own;
  if (isa<AllGatherOp>(def))
    return VertexSpace::Gathered;
  if (isa<PadRowsOp>(def))
    return VertexSpace::Partial;
  if (auto g = dyn_cast<GatherOp>(def))
    return g.getSide() == Side::Src ? VertexSpace::Partial : VertexSpace::Own;
  if (auto fg = dyn_cast<FusedGatherOp>(def))
    return fg.getSide() == Side::Src ? VertexSpace::Partial : VertexSpace::Own;
  if (auto av = dyn_cast<ApplyVertexOp>(def))
    return av.getInputs().empty() ? VertexSpace::Own
                                  : vertexSpace(av.getInputs().front(), cache);
  return VertexSpace::Own;
}

static VertexSpace vertexSpace(Value v, SpaceCache &cache) {
  if (auto it = cache.find(v); it != cache.end())
    return it->second;
  const VertexSpace s = computeSpace(v, cache);
  cache[v] = s;
  return s;
}

VertexSpace mlir::gnn::getVertexSpace(Value v) {
  if (SpaceCache *cache = SpaceCacheScope::current())
    return vertexSpace(v, *cache);
  SpaceCache cache;
  return vertexSpace(v, cache);
}

/// A vertex space as the diagnostics name it.
static StringRef spaceName(VertexSpace s) {
  switch (s) {
  case VertexSpace::Own:
    return "the process's own vertices";
  case VertexSpace::Gathered:
    return "every vertex, gathered";
  case VertexSpace::Partial:
    return "every vertex, partial sums";
  case VertexSpace::Shard:
    return "every vertex, this process's feature columns";
  }
  llvm_unreachable("a vertex space");
}

/// Whether `av` only adds its inputs (no parameters, every body op a
/// gnn.add): the one stage that may run on `Partial` rows.
static bool onlyAdds(ApplyVertexOp av) {
  if (!av.getParams().empty())
    return false;
  return llvm::all_of(av.getBody().front().without_terminator(),
                      [](Operation &op) { return isa<AddOp>(op); });
}

LogicalResult mlir::gnn::verifySummable(Operation *op, Accumulator acc,
                                        bool partial) {
  if (!partial || acc == Accumulator::Sum || acc == Accumulator::Mean)
    return success();
  return op->emitOpError()
         << "aggregates partial sums over the feature columns with '"
         << stringifyAccumulator(acc)
         << "', which does not add up over the processes: the sum of the "
            "partials must come first";
}

/// An op of the whole graph in a feature-partitioned function: it reads
/// feature shards, gathered rows or partials of every vertex, and a stage's
/// body works column by column.
static LogicalResult verifyWholeGraphOp(Operation *op) {
  auto needWhole = [&](ValueRange vs, StringRef what) -> LogicalResult {
    for (Value v : vs) {
      VertexSpace s = getVertexSpace(v);
      if (s != VertexSpace::Own)
        continue;
      return op->emitOpError()
             << "runs on the whole graph but reads " << what
             << " with the rows of " << spaceName(s)
             << " (every vertex's rows come from gnn.all_gather or from ops "
                "of the whole graph)";
    }
    return success();
  };
  if (auto in = dyn_cast<InputOp>(op)) {
    if (InputOp::isVertexInputName(in.getName()) && in.getName() != "features")
      return op->emitOpError()
             << "reads '" << in.getName()
             << "' of every vertex, which a partitioned function keeps with "
                "the own rows (the loss runs there)";
    return success();
  }
  if (isa<DegreeOp>(op))
    return success();
  if (auto s = dyn_cast<ScatterOp>(op))
    return needWhole(s.getInput(), "its input");
  auto needSummable = [&](Accumulator acc, bool partial) {
    return verifySummable(op, acc, partial);
  };
  if (auto g = dyn_cast<GatherOp>(op))
    return failure(
        failed(needWhole(g.getInput(), "its input")) ||
        failed(needSummable(g.getAcc(), getVertexSpace(g.getInput()) ==
                                            VertexSpace::Partial)));
  if (auto gg = dyn_cast<GatherGradOp>(op))
    return failure(
        failed(needWhole(gg.getGrad(), "its gradient")) ||
        failed(needWhole(gg.getInput(), "its input")) ||
        failed(needSummable(gg.getAcc(), getVertexSpace(gg.getInput()) ==
                                             VertexSpace::Partial)));
  if (isa<ApplyVertexOp, ApplyEdgeOp, FusedGatherOp>(op)) {
    if (failed(needWhole(stageInputs(op), "an input")))
      return failure();
    DenseMap<Value, ColumnKind> kinds;
    if (failed(
            classifyColumns(op, inputKindsOf(op), /*allowSums=*/false, kinds)))
      return failure();
    if (auto fg = dyn_cast<FusedGatherOp>(op))
      for (Value y : fg.getBody().front().getTerminator()->getOperands())
        if (failed(needSummable(fg.getAcc(),
                                kinds.lookup(y) == ColumnKind::Partial)))
          return failure();
    return success();
  }
  return op->emitOpError()
         << "cannot run on the whole graph (gnn.graph whole): only the "
            "inputs, degrees, scatters, stages and aggregations of a "
            "feature-partitioned first layer or of replicated layers do";
}

/// A feature-partitioned function's parameters bound to the features hold
/// this process's feature columns' rows: only a first dimension may be
/// bound so, and only the whole graph's stages read such a parameter.
static LogicalResult verifyFeatureShards(FunctionOpInterface fn) {
  if (fn.isExternal())
    return success();
  for (BlockArgument arg : fn.getArguments()) {
    auto dims = fn.getArgAttrOfType<ArrayAttr>(arg.getArgNumber(),
                                               GNNDialect::kDimsAttrName);
    if (!dims)
      continue;
    bool shard = false;
    for (auto [d, attr] : llvm::enumerate(dims)) {
      auto name = dyn_cast<StringAttr>(attr);
      if (!name || name.getValue() != kDimFeatures)
        continue;
      if (d != 0)
        return fn.emitOpError()
               << "binds parameter #" << arg.getArgNumber() << "'s dimension "
               << d
               << " to the features, which a feature-partitioned function "
                  "splits: only a weight's first dimension (its rows) may be";
      shard = true;
    }
    if (!shard)
      continue;
    for (OpOperand &use : arg.getUses()) {
      Operation *user = use.getOwner();
      Value graph = graphOf(user);
      if (isa<OptimizerUpdateOp>(user) || (graph && isWholeGraph(graph)))
        continue;
      // A stage's operands are its graph, then one per block argument: a
      // parameter its body does not read is no read.
      if (isa<ApplyVertexOp, ApplyEdgeOp, FusedGatherOp>(user) &&
          user->getRegion(0)
              .front()
              .getArgument(use.getOperandNumber() - 1)
              .use_empty())
        continue;
      return user->emitOpError()
             << "reads parameter #" << arg.getArgNumber()
             << ", whose rows are this process's feature columns, outside the "
                "whole graph's first layer";
    }
  }
  return success();
}

LogicalResult mlir::gnn::verifyPartition(Operation *fn) {
  if (fn->getNumRegions() != 1 || fn->getRegion(0).empty())
    return success();
  SpaceCacheScope spaces;
  const bool features = isFeaturePartitioned(fn);
  if (features)
    if (auto f = dyn_cast<FunctionOpInterface>(fn))
      if (failed(verifyFeatureShards(f)))
        return failure();
  // Stage bodies work on rows, not on vertex tensors: the top level only.
  for (Operation &top : fn->getRegion(0).front()) {
    Operation *op = &top;
    // The function's attributes are verified before its ops: spaces are
    // only read from ops that are well formed.
    if (failed(op->getName().verifyInvariants(op)))
      return failure();
    if (Value graph = graphOf(op); graph && isWholeGraph(graph)) {
      if (failed(verifyWholeGraphOp(op)))
        return failure();
      continue;
    }
    auto need = [&](Value v, VertexSpace want,
                    StringRef what) -> LogicalResult {
      if (!isa<VertexTensorType>(v.getType()) || getVertexSpace(v) == want)
        return success();
      return op->emitOpError()
             << "reads " << what << " with the rows of "
             << spaceName(getVertexSpace(v)) << " but needs the rows of "
             << spaceName(want)
             << " (row partitioning: a source's rows come from "
                "gnn.all_gather, an aggregation to the source goes through "
                "gnn.reduce_scatter)";
    };
    auto needAll = [&](ValueRange vs, VertexSpace want,
                       StringRef what) -> LogicalResult {
      for (Value v : vs)
        if (failed(need(v, want, what)))
          return failure();
      return success();
    };
    // Partial means and maxima over a process's edges do not add up.
    auto needSum = [&](Accumulator acc, Side side) -> LogicalResult {
      if (side != Side::Src || acc == Accumulator::Sum)
        return success();
      return op->emitOpError()
             << "aggregates with '" << stringifyAccumulator(acc)
             << "' to the source, which a row-partitioned function cannot: "
                "only partial sums add up over the processes";
    };
    // Reductions over the vertices in a backward: parameter gradients, which
    // the runtime sums over the processes unless they are feature shards.
    if (isa<SumRowsOp, OuterSumOp, TypedOuterSumOp>(op)) {
      if (fn->hasAttr(GNNDialect::kModelAttrName))
        return op->emitOpError()
               << "reduces over all vertices in the forward, which a "
                  "partitioned function does not split yet (each process "
                  "would reduce only its own rows)";
      SmallVector<VertexSpace> spaces;
      for (Value v : op->getOperands())
        if (isa<VertexTensorType, EdgeTensorType>(v.getType()))
          spaces.push_back(getVertexSpace(v));
      auto all = [&](VertexSpace s) {
        return llvm::all_of(spaces, [&](VertexSpace t) { return t == s; });
      };
      auto pair = [&](VertexSpace a, VertexSpace b) {
        return isa<OuterSumOp>(op) && spaces.size() == 2 &&
               ((spaces[0] == a && spaces[1] == b) ||
                (spaces[0] == b && spaces[1] == a));
      };
      bool shardGradient = pair(VertexSpace::Shard, VertexSpace::Gathered);
      // A replicated layer's weight gradient: every vertex's rows against
      // the process's partial gradients, which add up over the processes.
      bool replicatedGradient =
          pair(VertexSpace::Gathered, VertexSpace::Partial);
      // A sum of rows is linear: partials add up. An outer sum is bilinear:
      // two partials do not (feature partitioning's sums are of one kind).
      if (all(VertexSpace::Own) || replicatedGradient ||
          (all(VertexSpace::Partial) && (features || isa<SumRowsOp>(op))) ||
          (features &&
           ((isa<SumRowsOp>(op) && all(VertexSpace::Shard)) || shardGradient)))
        continue;
      VertexSpace shown = VertexSpace::Own;
      for (VertexSpace s : spaces)
        if (s != VertexSpace::Own)
          shown = s;
      return op->emitOpError()
             << "reduces rows of " << spaceName(shown)
             << ", whose sum over the processes is not the gradient (own "
                "rows, partial sums, or a feature shard against every "
                "vertex's gathered rows are)";
    }
    // On the own rows' graph nothing reads a feature shard or an edge of the
    // whole graph.
    for (Value v : op->getOperands()) {
      if (!isa<VertexTensorType, EdgeTensorType>(v.getType()))
        continue;
      VertexSpace s = getVertexSpace(v);
      if (s == VertexSpace::Shard ||
          (isa<EdgeTensorType>(v.getType()) && s != VertexSpace::Own))
        return op->emitOpError()
               << "reads a tensor of the whole graph (" << spaceName(s)
               << ") outside it: feature partitioning sums layer 1's partials "
                  "with gnn.reduce_scatter before the own rows read them";
    }
    if (auto s = dyn_cast<ScatterOp>(op)) {
      if (failed(need(s.getInput(),
                      s.getSide() == Side::Src ? VertexSpace::Gathered
                                               : VertexSpace::Own,
                      "its input")))
        return failure();
    } else if (auto g = dyn_cast<GatherOp>(op)) {
      if (failed(needSum(g.getAcc(), g.getSide())))
        return failure();
    } else if (auto fg = dyn_cast<FusedGatherOp>(op)) {
      if (failed(needSum(fg.getAcc(), fg.getSide())) ||
          failed(needAll(fg.getSrcInputs(), VertexSpace::Gathered,
                         "a src input")) ||
          failed(needAll(fg.getDstInputs(), VertexSpace::Own, "a dst input")))
        return failure();
    } else if (auto gg = dyn_cast<GatherGradOp>(op)) {
      if (failed(needSum(gg.getAcc(), gg.getSide())) ||
          failed(need(gg.getGrad(),
                      gg.getSide() == Side::Src ? VertexSpace::Gathered
                                                : VertexSpace::Own,
                      "its gradient")))
        return failure();
    } else if (auto av = dyn_cast<ApplyVertexOp>(op)) {
      VertexSpace space = av.getNumResults() ? getVertexSpace(av.getResult(0))
                                             : VertexSpace::Own;
      if (space == VertexSpace::Gathered ||
          (space == VertexSpace::Partial && !onlyAdds(av)))
        return op->emitOpError()
               << "runs on the rows of " << spaceName(space)
               << ", which in a row-partitioned function only a stage that "
                  "adds partial sums may do";
      if (failed(needAll(av.getInputs(), space, "an input")))
        return failure();
    } else if (!isa<AllGatherOp, ReduceScatterOp, OwnRowsOp, PadRowsOp>(op)) {
      // The row ops' operands are checked by their verifiers.
      if (failed(needAll(op->getOperands(), VertexSpace::Own, "an operand")))
        return failure();
    }
  }
  return success();
}

/// The two collectives: in a partitioned function, on the own rows' graph,
/// f32 rows of the vertex space `from`.
static LogicalResult verifyRowCollective(Operation *op, Value graph,
                                         Value input, VertexSpace from,
                                         StringRef whatFrom) {
  if (getPartition(op).empty())
    return op->emitOpError()
           << "is only valid in a partitioned function ('"
           << GNNDialect::kPartitionAttrName << " = \"rows\"' or \"features\")";
  if (isWholeGraph(graph))
    return op->emitOpError() << "moves the own rows, not the whole graph's";
  if (!cast<VertexTensorType>(input.getType()).getElementType().isF32())
    return op->emitOpError() << "moves f32 rows only";
  if (getVertexSpace(input) != from)
    return op->emitOpError() << "needs the rows of " << whatFrom;
  return success();
}

LogicalResult AllGatherOp::verify() {
  return verifyRowCollective(*this, getGraph(), getInput(), VertexSpace::Own,
                             "the process's own vertices");
}

LogicalResult OwnRowsOp::verify() {
  return verifyRowCollective(
      *this, getGraph(), getInput(), VertexSpace::Gathered,
      "every vertex, gathered (an op of the whole graph's replicated layers)");
}

LogicalResult PadRowsOp::verify() {
  return verifyRowCollective(*this, getGraph(), getInput(), VertexSpace::Own,
                             "the process's own vertices");
}

LogicalResult ReduceScatterOp::verify() {
  return verifyRowCollective(
      *this, getGraph(), getInput(), VertexSpace::Partial,
      "every vertex, partial sums (an aggregation to the source, a "
      "contraction of a feature shard, or gradient sums of an all-gather)");
}
