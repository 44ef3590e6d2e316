//===- RowLevels.cpp - the rows each step of a training step needs --------===//
//
// RowLevels.h. Levels: level l stands for the first n_l rows, with
// n_0 >= n_1 >= ... >= n_L; a higher level is fewer rows.
//
//===----------------------------------------------------------------------===//

#include "RowLevels.h"

#include "gnn/IR/GNNOps.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::gnn;

namespace {

bool isRowTensor(Value v) {
  return isa<VertexTensorType, EdgeTensorType>(v.getType());
}

/// The support of each yielded row of an element-wise `body` whose block
/// arguments' rows are zero beyond levels `args`: a row beyond the level
/// of an op's result is zero wherever its operands' are (ops that keep a
/// zero row zero: max over the factors of a product, min over the terms of
/// a sum); any other op may make a zero row non-zero (level 0).
SmallVector<int64_t> bodySupport(Block &body, ArrayRef<int64_t> args,
                                 int64_t numLevels) {
  DenseMap<Value, int64_t> level;
  for (auto [arg, l] : llvm::zip(body.getArguments(), args))
    level[arg] = l;
  auto of = [&](Value v) { return level.lookup(v); };
  for (Operation &op : body.without_terminator()) {
    int64_t l = 0;
    if (isa<ReluOp, TanhOp, NegOp, SqrtOp, StepOp, EluOp, StopGradientOp,
            LeakyReluOp, DropoutOp, BroadcastHeadsOp, ReduceSumOp, SliceOp,
            DivOp, PlaceByTypeOp, TakeByTypeOp>(op)) {
      // f(0) = 0; a quotient of a zero numerator; a zero row placed in its
      // type's slot or taken from it.
      l = of(op.getOperand(0));
    } else if (isa<MulOp, RowDotOp, LinearOp, LinearTransposeOp, TypedLinearOp,
                   TypedLinearTransposeOp>(op)) {
      for (Value o : op.getOperands())
        l = std::max(l, of(o)); // zero if any factor is
    } else if (auto sel = dyn_cast<EdgeSelectOp>(op)) {
      l = of(sel.getValue());
    } else if (isa<AddOp, SubOp, ConcatOp>(op)) {
      l = numLevels;
      for (Value o : op.getOperands())
        l = std::min(l, of(o)); // zero where every term is
    }
    for (Value r : op.getResults())
      level[r] = l;
  }
  SmallVector<int64_t> result;
  for (Value y : body.getTerminator()->getOperands())
    result.push_back(of(y));
  return result;
}

class Planner {
public:
  Planner(func::FuncOp fn, int64_t numLevels,
          ArrayRef<std::pair<Operation *, Operation *>> cachePairs,
          const DenseSet<Operation *> &everyRow)
      : fn(fn), L(numLevels), everyRow(everyRow) {
    plan.numLevels = numLevels;
    for (auto [writer, reader] : cachePairs)
      readersOf[writer].push_back(reader);
  }

  LevelPlan run() {
    Block &body = fn.getBody().front();
    for (Operation &op : body.without_terminator())
      forward(op);
    for (Operation &op : llvm::reverse(body.getOperations()))
      backward(op);
    return std::move(plan);
  }

private:
  func::FuncOp fn;
  int64_t L;
  const DenseSet<Operation *> &everyRow;
  LevelPlan plan;
  /// Rows beyond n_support are zero.
  DenseMap<Value, int64_t> support;
  /// Rows below n_need are read (no entry: none).
  DenseMap<Value, int64_t> need;
  /// The loss op that computes a loss gradient along with the loss.
  DenseMap<Operation *, Operation *> gradOfLoss;
  /// Fused gathers that may keep per-edge values for later ones (edge
  /// caches), and the level of the destinations whose edges each fused
  /// gather reaches.
  DenseMap<Operation *, SmallVector<Operation *>> readersOf;
  DenseMap<Operation *, int64_t> edgeReach;

  int64_t supportOf(Value v) const { return support.lookup(v); }
  int64_t needOf(Value v) const {
    auto it = need.find(v);
    return it == need.end() ? L : it->second;
  }
  /// The rows computed for `v`: those read, less those known to be zero.
  int64_t rowsOf(Value v) const { return std::max(needOf(v), supportOf(v)); }
  void read(Value v, int64_t level) {
    if (!isRowTensor(v))
      return;
    level = std::clamp<int64_t>(level, 0, L);
    auto [it, inserted] = need.try_emplace(v, level);
    if (!inserted)
      it->second = std::min(it->second, level);
  }
  void readAll(Operation &op) {
    for (Value v : op.getOperands())
      read(v, 0);
  }
  static int64_t below(int64_t level) {
    return std::max<int64_t>(level - 1, 0);
  }

  /// A step computing `rows`: its results read at more rows are zero there.
  void restrict(Operation &op, int64_t rows, std::optional<int64_t> inputs,
                ValueRange results) {
    if (rows == 0 && !inputs)
      return;
    plan.steps[&op] = {rows, inputs};
    for (Value r : results)
      if (isRowTensor(r) && needOf(r) < rows)
        plan.fills[&op].push_back({r, rows, needOf(r)});
  }
  /// The fewest rows that serve every result.
  int64_t rowsOfAll(ValueRange results) const {
    int64_t rows = L;
    for (Value r : results)
      if (isRowTensor(r))
        rows = std::min(rows, rowsOf(r));
    return rows;
  }

  void forward(Operation &op) {
    auto set = [&](Value v, int64_t l) {
      support[v] = std::clamp<int64_t>(l, 0, L);
    };
    if (auto in = dyn_cast<InputOp>(op)) {
      // A batch's train mask is set on its seeds alone (the last level).
      set(in.getResult(), in.getName() == "train_mask" ? L : 0);
    } else if (auto g = dyn_cast<SoftmaxCrossEntropyGradOp>(op)) {
      set(g.getResult(), supportOf(g.getMask()));
    } else if (isa<ApplyVertexOp, ApplyEdgeOp>(op)) {
      auto inputs = isa<ApplyVertexOp>(op) ? cast<ApplyVertexOp>(op).getInputs()
                                           : cast<ApplyEdgeOp>(op).getInputs();
      SmallVector<int64_t> args;
      for (Value v : inputs)
        args.push_back(supportOf(v));
      Block &body = op.getRegion(0).front();
      args.resize(body.getNumArguments(), 0); // the parameters
      for (auto [r, l] : llvm::zip(op.getResults(), bodySupport(body, args, L)))
        set(r, l);
    } else if (auto s = dyn_cast<ScatterOp>(op)) {
      // Edges to the destinations beyond a level are zero where their
      // destinations' rows are; sources give no such prefix.
      set(s.getResult(),
          s.getSide() == Side::Dst ? supportOf(s.getInput()) : 0);
    } else if (auto g = dyn_cast<GatherOp>(op)) {
      // To the sources: a source beyond n_{l-1} has no edge to a
      // destination below n_l.
      int64_t l = supportOf(g.getInput());
      set(g.getResult(), g.getSide() == Side::Dst ? l : below(l));
    } else if (auto fg = dyn_cast<FusedGatherOp>(op)) {
      const bool toDst = fg.getSide() == Side::Dst;
      SmallVector<int64_t> args;
      for (Value v : fg.getSrcInputs())
        args.push_back(toDst ? 0 : supportOf(v));
      for (Value v : fg.getDstInputs())
        args.push_back(toDst ? supportOf(v) : below(supportOf(v)));
      for (Value v : fg.getEdgeInputs())
        args.push_back(toDst ? supportOf(v) : below(supportOf(v)));
      Block &body = fg.getBody().front();
      args.resize(body.getNumArguments(), 0);
      for (auto [r, l] : llvm::zip(fg.getOuts(), bodySupport(body, args, L)))
        set(r, l);
    } else if (auto add = dyn_cast<TensorAddOp>(op)) {
      int64_t l = L;
      for (Value v : add->getOperands())
        l = std::min(l, supportOf(v));
      set(add->getResult(0), l);
    } else if (isa<AllGatherOp, ReduceScatterOp>(op)) {
      // Level l's rows of the own rows and of the whole graph are the same
      // vertices (the whole graph's are every process's).
      set(op.getResult(0), supportOf(op.getOperand(1)));
    }
    // Anything else: support 0 (no entry).
    if (auto loss = dyn_cast<SoftmaxCrossEntropyOp>(op))
      for (Operation *user : loss.getLogits().getUsers())
        if (auto g = dyn_cast<SoftmaxCrossEntropyGradOp>(user))
          if (g->getBlock() == loss->getBlock() &&
              g.getLabels() == loss.getLabels() &&
              g.getMask() == loss.getMask())
            gradOfLoss[g] = loss;
  }

  void backward(Operation &op) {
    if (everyRow.contains(&op)) {
      readAll(op);
      return;
    }
    if (isa<AllGatherOp, ReduceScatterOp>(op)) {
      // Moves the rows its readers read, from its input's.
      Value result = op.getResult(0);
      const int64_t rows = rowsOf(result);
      read(op.getOperand(1), rows);
      plan.collectives[&op] = rows;
      if (needOf(result) < rows)
        plan.fills[&op].push_back({result, rows, needOf(result)});
      return;
    }
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      // The logits are the seeds' (the train mask's rows).
      for (Value v : ret.getOperands())
        read(v, L);
      return;
    }
    if (auto loss = dyn_cast<SoftmaxCrossEntropyOp>(op)) {
      const int64_t rows = supportOf(loss.getMask());
      read(loss.getLogits(), rows);
      SmallVector<Value> grads;
      for (auto &[grad, of] : gradOfLoss)
        if (of == &op)
          grads.push_back(grad->getResult(0));
      restrict(op, rows, std::nullopt, grads);
      return;
    }
    if (auto g = dyn_cast<SoftmaxCrossEntropyGradOp>(op)) {
      // With its loss: computed by the loss's call (above); alone: every
      // row.
      if (!gradOfLoss.count(&op))
        readAll(op);
      return;
    }
    if (auto av = dyn_cast<ApplyVertexOp>(op)) {
      const int64_t rows = rowsOfAll(av.getResults());
      for (Value v : av.getInputs())
        read(v, rows);
      restrict(op, rows, std::nullopt, av.getResults());
      return;
    }
    if (auto fg = dyn_cast<FusedGatherOp>(op)) {
      SmallVector<Value> results(fg.getOuts());
      if (Value arg = fg.getArg())
        results.push_back(arg);
      int64_t rows = rowsOfAll(results);
      // A kernel that keeps per-edge values for later ones writes them for
      // the edges of its rows: at least those its readers reach (a writer
      // to the sources, every edge).
      const bool writes = readersOf.count(&op) != 0;
      for (Operation *reader : readersOf.lookup(&op))
        rows = std::min(rows, edgeReach.lookup(reader));
      if (writes && fg.getSide() == Side::Src)
        rows = 0;
      if (fg.getSide() == Side::Dst) {
        // The in-edges of rows below n_l come from sources below n_{l-1}.
        for (Value v : fg.getSrcInputs())
          read(v, below(rows));
        for (Value v : fg.getDstInputs())
          read(v, rows);
        for (Value v : fg.getEdgeInputs())
          read(v, rows);
        edgeReach[&op] = rows;
        restrict(op, rows, std::nullopt, results);
        return;
      }
      for (Value v : fg.getSrcInputs())
        read(v, rows);
      // A sum to the sources skips the edges whose body rows are zero:
      // those to destinations beyond the level where the body's
      // destination and edge operands are (their rows as read).
      std::optional<int64_t> inputs;
      if (fg.getAcc() == Accumulator::Sum && !writes) {
        SmallVector<int64_t> args(fg.getSrcInputs().size(), 0);
        for (Value v : fg.getDstInputs())
          args.push_back(supportOf(v));
        for (Value v : fg.getEdgeInputs())
          args.push_back(supportOf(v));
        Block &body = fg.getBody().front();
        args.resize(body.getNumArguments(), 0);
        int64_t t = L;
        for (int64_t l : bodySupport(body, args, L))
          t = std::min(t, l);
        if (t > 0)
          inputs = t;
      }
      // Otherwise every edge: their destinations are below n_1 (the rows
      // with in-edges).
      const int64_t reach = inputs ? *inputs : std::min<int64_t>(1, L);
      for (Value v : fg.getDstInputs())
        read(v, reach);
      for (Value v : fg.getEdgeInputs())
        read(v, reach);
      edgeReach[&op] = reach;
      restrict(op, rows, inputs, results);
      return;
    }
    if (auto os = dyn_cast<OuterSumOp>(op)) {
      // A sum over the rows where both factors may be non-zero.
      const int64_t rows =
          std::max(supportOf(os.getInput()), supportOf(os.getGrad()));
      read(os.getInput(), rows);
      read(os.getGrad(), rows);
      restrict(op, rows, std::nullopt, {});
      return;
    }
    if (auto sr = dyn_cast<SumRowsOp>(op)) {
      const int64_t rows = supportOf(sr.getInput());
      read(sr.getInput(), rows);
      restrict(op, rows, std::nullopt, {});
      return;
    }
    // Steps over every row (and edge).
    readAll(op);
  }
};

} // namespace

LevelPlan mlir::gnn::planRowLevels(
    func::FuncOp fn, int64_t numLevels,
    ArrayRef<std::pair<Operation *, Operation *>> cachePairs,
    const DenseSet<Operation *> &everyRow) {
  return Planner(fn, numLevels, cachePairs, everyRow).run();
}

Operation *mlir::gnn::valueHops(Block &body, DenseMap<Value, int64_t> &hops) {
  // An edge value's hops from each endpoint.
  struct Depth {
    int64_t fromSrc = 0, fromDst = 0;
    int64_t most() const { return std::max(fromSrc, fromDst); }
  };
  DenseMap<Value, Depth> depth;
  for (Operation &op : body.getOperations()) {
    if (isa<SumRowsOp, OuterSumOp, TypedOuterSumOp>(op))
      return &op;
    Depth d;
    for (Value v : op.getOperands()) {
      Depth o = depth.lookup(v);
      d.fromSrc = std::max(d.fromSrc, o.fromSrc);
      d.fromDst = std::max(d.fromDst, o.fromDst);
    }
    if (auto scatter = dyn_cast<ScatterOp>(op)) {
      (scatter.getSide() == Side::Src ? d.fromDst : d.fromSrc) += 1;
    } else if (auto gather = dyn_cast<GatherOp>(op)) {
      // An aggregation is right only at rows whose edges are all there (a
      // block's destinations): at least one hop, also where what it sums
      // does not depend on a neighbour (a degree from edge weights).
      const int64_t h = std::max<int64_t>(
          gather.getSide() == Side::Src ? d.fromSrc : d.fromDst, 1);
      d = {h, h};
    } else if (auto fused = dyn_cast<FusedGatherOp>(op)) {
      // Its own side's rows are read at the vertex itself, the other side's
      // one hop away, its edge inputs from both ends.
      auto most = [&](ValueRange values, int64_t hop) {
        int64_t h = 0;
        for (Value v : values)
          h = std::max(h, depth.lookup(v).most() + hop);
        return h;
      };
      const bool toSrc = fused.getSide() == Side::Src;
      int64_t h = std::max(most(fused.getSrcInputs(), toSrc ? 0 : 1),
                           most(fused.getDstInputs(), toSrc ? 1 : 0));
      for (Value e : fused.getEdgeInputs()) {
        Depth o = depth.lookup(e);
        h = std::max(h, toSrc ? o.fromSrc : o.fromDst);
      }
      h = std::max<int64_t>(h, 1); // an aggregation, as a gather's
      d = {h, h};
    } else if (llvm::any_of(op.getResultTypes(),
                            llvm::IsaPred<VertexTensorType>)) {
      d = {d.most(), d.most()};
    }
    for (Value r : op.getResults()) {
      depth[r] = d;
      hops[r] = d.most();
    }
  }
  return nullptr;
}
