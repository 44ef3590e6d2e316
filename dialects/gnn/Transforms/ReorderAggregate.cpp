//===- ReorderAggregate.cpp - --gnn-reorder-aggregate ---------------------===//
//
// Moves a linear across a sum/mean aggregation when the aggregation then runs
// at a narrower width (Passes.td has the contract and the cost model).
//
//===----------------------------------------------------------------------===//

#include "gnn/IR/GNNOps.h"
#include "gnn/Support/DatasetMeta.h"
#include "gnn/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cmath>

namespace mlir::gnn {
#define GEN_PASS_DEF_GNNREORDERAGGREGATE
#include "gnn/Transforms/Passes.h.inc"
} // namespace mlir::gnn

using namespace mlir;
using namespace mlir::gnn;

namespace {

/// An aggregation the pass can move a linear across.
struct Candidate {
  GatherOp gather;
  ScatterOp scatter;
  ApplyEdgeOp scale;    // the per-edge scaling stage, or null
  unsigned scaleRowArg; // its block argument holding the scattered row
  bool passThrough;     // `scale` only forwards the row (CommNet)
  ApplyVertexOp user;
  unsigned userInput;
  LinearOp linear;
};

/// The scattered row of `ae` when its body is `yield row * scalar` (either
/// operand order) with `row` a block argument fed by a scatter.
std::optional<unsigned> scaledRowArg(ApplyEdgeOp ae) {
  Block &b = ae.getBody().front();
  auto yield = cast<YieldOp>(b.getTerminator());
  if (yield.getValues().size() != 1 || !ae.getParams().empty())
    return std::nullopt;
  auto mul = yield.getValues()[0].getDefiningOp<MulOp>();
  if (!mul || &b.front() != mul.getOperation() ||
      mul->getNextNode() != yield.getOperation())
    return std::nullopt;
  for (auto [row, scale] : {std::pair{mul.getLhs(), mul.getRhs()},
                            std::pair{mul.getRhs(), mul.getLhs()}}) {
    auto rowArg = dyn_cast<BlockArgument>(row);
    auto scaleArg = dyn_cast<BlockArgument>(scale);
    if (!rowArg || !scaleArg || rowArg.getOwner() != &b ||
        scaleArg.getOwner() != &b || row.getType() != mul.getType())
      continue;
    auto st = cast<RankedTensorType>(scale.getType());
    if (st.getNumElements() != 1 || !st.hasStaticShape())
      continue;
    if (ae.getInputs()[rowArg.getArgNumber()].getDefiningOp<ScatterOp>())
      return rowArg.getArgNumber();
  }
  return std::nullopt;
}

/// The scattered row of `ae` when its body only yields it (a pass-through
/// stage, CommNet's ApplyEdge).
std::optional<unsigned> passThroughArg(ApplyEdgeOp ae) {
  Block &b = ae.getBody().front();
  auto yield = cast<YieldOp>(b.getTerminator());
  if (yield.getValues().size() != 1 || &b.front() != yield.getOperation())
    return std::nullopt;
  auto arg = dyn_cast<BlockArgument>(yield.getValues()[0]);
  if (!arg || arg.getOwner() != &b || arg.getArgNumber() >= ae.getInputs().size() ||
      !ae.getInputs()[arg.getArgNumber()].getDefiningOp<ScatterOp>())
    return std::nullopt;
  return arg.getArgNumber();
}

std::optional<Candidate> match(GatherOp g) {
  if (g.getAcc() != Accumulator::Sum && g.getAcc() != Accumulator::Mean)
    return std::nullopt;
  Candidate c{g, {}, {}, 0, false, {}, 0, {}};
  Side want = g.getSide() == Side::Dst ? Side::Src : Side::Dst;
  Value in = g.getInput();
  if (auto sc = in.getDefiningOp<ScatterOp>()) {
    c.scatter = sc;
  } else if (auto ae = in.getDefiningOp<ApplyEdgeOp>()) {
    std::optional<unsigned> arg = scaledRowArg(ae);
    if (!arg) {
      arg = passThroughArg(ae);
      c.passThrough = arg.has_value();
    }
    if (!arg || !in.hasOneUse() || ae.getNumResults() != 1)
      return std::nullopt;
    c.scale = ae;
    c.scaleRowArg = *arg;
    c.scatter = ae.getInputs()[*arg].getDefiningOp<ScatterOp>();
  } else {
    return std::nullopt;
  }
  if (!c.scatter || c.scatter.getSide() != want)
    return std::nullopt;
  Value acc = g.getResult();
  if (!acc.hasOneUse())
    return std::nullopt;
  OpOperand &use = *acc.getUses().begin();
  c.user = dyn_cast<ApplyVertexOp>(use.getOwner());
  if (!c.user)
    return std::nullopt;
  c.userInput = use.getOperandNumber() - 1; // after the graph operand
  if (c.userInput >= c.user.getInputs().size())
    return std::nullopt;
  BlockArgument arg = c.user.getBody().front().getArgument(c.userInput);
  if (!arg.hasOneUse())
    return std::nullopt;
  c.linear = dyn_cast<LinearOp>(*arg.getUsers().begin());
  if (!c.linear || c.linear.getInput() != arg)
    return std::nullopt;
  auto w = dyn_cast<BlockArgument>(c.linear.getWeight());
  if (!w || w.getArgNumber() < c.user.getInputs().size())
    return std::nullopt; // the weight must be a stage parameter
  return c;
}

struct GNNReorderAggregate
    : public mlir::gnn::impl::GNNReorderAggregateBase<GNNReorderAggregate> {
  using GNNReorderAggregateBase::GNNReorderAggregateBase;

  /// K and N of the candidate's linear; -1 when a `?` cannot be resolved.
  static std::pair<int64_t, int64_t> widths(Candidate &c, int64_t numFeatures,
                                            int64_t numClasses) {
    auto weightArg = cast<BlockArgument>(c.linear.getWeight());
    Value weight =
        c.user
            .getParams()[weightArg.getArgNumber() - c.user.getInputs().size()];
    auto type = cast<RankedTensorType>(weight.getType());
    ArrayAttr dims;
    if (auto fnArg = dyn_cast<BlockArgument>(weight))
      if (auto fn =
              dyn_cast<FunctionOpInterface>(fnArg.getOwner()->getParentOp()))
        dims = fn.getArgAttrOfType<ArrayAttr>(fnArg.getArgNumber(),
                                              GNNDialect::kDimsAttrName);
    unsigned rank = c.linear.getInput().getType().getRank();
    int64_t k = 1, n = 1;
    for (unsigned i = 0; i < type.getRank(); ++i) {
      int64_t d = type.getDimSize(i);
      if (ShapedType::isDynamic(d)) {
        StringRef bind = dims && i < dims.size()
                             ? cast<StringAttr>(dims[i]).getValue()
                             : StringRef();
        d = bind == kDimFeatures  ? numFeatures
            : bind == kDimClasses ? numClasses
                                  : 0;
        if (d <= 0)
          return {-1, -1};
      }
      (i < rank ? k : n) *= d;
    }
    return {k, n};
  }

  void runOnOperation() final {
    if (mode != "auto" && mode != "always" && mode != "never") {
      getOperation().emitError() << "gnn-reorder-aggregate: mode must be auto, "
                                    "always or never but is '"
                                 << mode << "'";
      return signalPassFailure();
    }
    // Option ranges: a width as large as a row may be (GNNTypes.cpp), a
    // positive finite degree (a negative one would invert every decision).
    constexpr int64_t kMaxWidth = int64_t(1) << 24;
    for (auto [name, value] : {std::pair{"features", features.getValue()},
                               std::pair{"classes", classes.getValue()}})
      if (value < 0 || value > kMaxWidth) {
        getOperation().emitError()
            << "gnn-reorder-aggregate: option " << name
            << " must be in [0, " << kMaxWidth << "] but is " << value;
        return signalPassFailure();
      }
    if (!(avgDegree > 0.0) || !std::isfinite(avgDegree) || avgDegree > 1e12) {
      getOperation().emitError()
          << "gnn-reorder-aggregate: option avg-degree must be a number in "
             "(0, 1e12] but is "
          << avgDegree.getValue();
      return signalPassFailure();
    }
    int64_t numFeatures = features, numClasses = classes;
    double degree = avgDegree;
    if (!meta.empty()) {
      std::string error;
      FailureOr<DatasetMeta> m = readDatasetMeta(meta, error);
      if (failed(m)) {
        getOperation().emitError() << "gnn-reorder-aggregate: " << error;
        return signalPassFailure();
      }
      if (m->numFeatures > 0)
        numFeatures = m->numFeatures;
      if (m->numClasses > 0)
        numClasses = m->numClasses;
      if (m->numVertices > 0)
        degree = static_cast<double>(m->numEdges) /
                 static_cast<double>(m->numVertices);
    }

    SmallVector<Candidate> candidates;
    getOperation().walk([&](GatherOp g) {
      if (std::optional<Candidate> c = match(g))
        candidates.push_back(*c);
    });
    for (Candidate &c : candidates) {
      // Widths K (aggregated rows) and N (the linear's result) from the
      // weight's shape, its `?` dimensions bound by the parameter's gnn.dims.
      auto [k, n] = widths(c, numFeatures, numClasses);
      if (keepFirst && !afterContraction(c.scatter.getInput())) {
        c.gather.emitRemark() << "aggregation not reordered: no contraction "
                                 "precedes it (keep-first)";
        continue;
      }
      if (mode == "never") {
        c.gather.emitRemark() << "aggregation not reordered: mode=never";
        continue;
      }
      if (mode == "auto") {
        if (k < 0 || n < 0) {
          c.gather.emitRemark()
              << "aggregation not reordered: a width is unknown (give "
                 "features=, classes= or meta=)";
          continue;
        }
        // Per vertex: aggregation FLOPs forward + backward, 2 x degree x
        // width each; the GEMM (2 K N) is the same either way.
        double before = 4.0 * degree * static_cast<double>(k);
        double after = 4.0 * degree * static_cast<double>(n);
        if (!(after < before)) {
          c.gather.emitRemark()
              << "aggregation not reordered: it would run at width " << n
              << " instead of " << k << " (cost per vertex " << after << " vs "
              << before << " FLOPs)";
          continue;
        }
        c.gather.emitRemark()
            << "aggregation reordered: width " << k << " -> " << n
            << " (cost per vertex " << before << " -> " << after
            << " FLOPs, avg degree " << degree << ")";
      } else {
        c.gather.emitRemark() << "aggregation reordered: mode=always";
      }
      rewrite(c);
    }
  }

  /// Whether a contraction (a `gnn.linear` or `gnn.typed_linear`, in a
  /// stage's body) computed `v`, through any chain of ops (conservatively:
  /// any contraction in a stage that `v` depends on).
  static bool afterContraction(Value v) {
    SmallVector<Value> work = {v};
    llvm::SmallPtrSet<Operation *, 16> seen;
    while (!work.empty()) {
      Operation *op = work.pop_back_val().getDefiningOp();
      if (!op || !seen.insert(op).second)
        continue;
      if (isa<LinearOp, TypedLinearOp>(op))
        return true;
      bool linear = false;
      op->walk([&](Operation *inner) {
        linear |= isa<LinearOp, TypedLinearOp>(inner);
      });
      if (linear)
        return true;
      for (Value operand : op->getOperands())
        work.push_back(operand);
    }
    return false;
  }

  void rewrite(Candidate &c) {
    OpBuilder b(c.scatter);
    Location loc = c.linear.getLoc();
    Value graph = c.gather.getGraph();
    Value h = c.scatter.getInput();
    Block &userBody = c.user.getBody().front();
    auto weightArg = cast<BlockArgument>(c.linear.getWeight());
    Value weight =
        c.user
            .getParams()[weightArg.getArgNumber() - c.user.getInputs().size()];
    RankedTensorType outRow = c.linear.getType();
    auto vOut =
        VertexTensorType::get(outRow.getShape(), outRow.getElementType());
    auto eOut = EdgeTensorType::get(outRow.getShape(), outRow.getElementType());

    // h W on the vertices.
    auto pre = b.create<ApplyVertexOp>(loc, TypeRange{vOut}, graph,
                                       ValueRange{h}, ValueRange{weight});
    {
      OpBuilder::InsertionGuard guard(b);
      Block &body = pre.getBody().front();
      b.setInsertionPointToStart(&body);
      Value y = b.create<LinearOp>(loc, outRow, body.getArgument(0),
                                   body.getArgument(1));
      b.create<YieldOp>(loc, ValueRange{y});
    }
    Value scattered = b.create<ScatterOp>(
        c.scatter.getLoc(), eOut, graph, pre.getResult(0), c.scatter.getSide());
    Value edges = scattered;
    if (c.scale && !c.passThrough) {
      SmallVector<Value> inputs(c.scale.getInputs());
      inputs[c.scaleRowArg] = scattered;
      b.setInsertionPoint(c.scale);
      auto scale = b.create<ApplyEdgeOp>(c.scale.getLoc(), TypeRange{eOut},
                                         graph, inputs, ValueRange{});
      Block &body = scale.getBody().front();
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&body);
      auto oldMul = cast<MulOp>(c.scale.getBody().front().front());
      auto oldBlock = &c.scale.getBody().front();
      auto map = [&](Value v) {
        return body.getArgument(cast<BlockArgument>(v).getArgNumber());
      };
      (void)oldBlock;
      Value lhs = map(oldMul.getLhs()), rhs = map(oldMul.getRhs());
      Value m = b.create<MulOp>(
          oldMul.getLoc(),
          broadcastRowType(cast<RankedTensorType>(lhs.getType()),
                           cast<RankedTensorType>(rhs.getType())),
          lhs, rhs);
      b.create<YieldOp>(loc, ValueRange{m});
      edges = scale.getResult(0);
    }
    b.setInsertionPoint(c.gather);
    Value gathered = b.create<GatherOp>(c.gather.getLoc(), vOut, graph, edges,
                                        c.gather.getAcc(), c.gather.getSide());
    // The consumer reads the aggregated product instead of computing it.
    c.user->setOperand(1 + c.userInput, gathered);
    BlockArgument arg = userBody.getArgument(c.userInput);
    arg.setType(outRow);
    c.linear.getResult().replaceAllUsesWith(arg);
    c.linear.erase();
    c.gather.erase();
    if (c.scale)
      c.scale.erase();
    if (c.scatter->use_empty())
      c.scatter.erase();
  }
};

} // namespace
