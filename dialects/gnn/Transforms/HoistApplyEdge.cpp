//===- HoistApplyEdge.cpp - --gnn-hoist-apply-edge ------------------------===//
//
// Moves the work of an edge stage that depends only on the source row (or
// only on the destination row) and parameters into a vertex stage before the
// scatters (NeuGraph §3.4; Passes.td has the contract).
//
//===----------------------------------------------------------------------===//

#include "gnn/IR/GNNOps.h"
#include "gnn/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::gnn {
#define GEN_PASS_DEF_GNNHOISTAPPLYEDGE
#include "gnn/Transforms/Passes.h.inc"
} // namespace mlir::gnn

using namespace mlir;
using namespace mlir::gnn;

namespace {

/// What a value of an edge body depends on, as a bit set: nothing but
/// parameters and constants (0), the source row, the destination row, edge
/// data (or anything else that differs per edge).
enum Dep : unsigned { kSrc = 1, kDst = 2, kEdge = 4 };

bool isOneSide(unsigned d) { return d == kSrc || d == kDst; }

/// The dependence of every value of `ae`'s body.
DenseMap<Value, unsigned> dependences(ApplyEdgeOp ae) {
  DenseMap<Value, unsigned> dep;
  Block &body = ae.getBody().front();
  for (auto [arg, in] : llvm::zip(ae.getInputArgs(), ae.getInputs())) {
    auto sc = in.getDefiningOp<ScatterOp>();
    dep[arg] = !sc ? kEdge : sc.getSide() == Side::Src ? kSrc : kDst;
  }
  for (BlockArgument arg : ae.getParamArgs())
    dep[arg] = 0;
  for (Operation &op : body.without_terminator()) {
    unsigned d = 0;
    for (Value v : op.getOperands())
      d |= dep.lookup(v);
    // A dropout draws per edge: what depends on it cannot move to a vertex.
    if (isa<DropoutOp>(op))
      d |= kEdge;
    for (Value r : op.getResults())
      dep[r] = d;
  }
  return dep;
}

/// The ops that contract or reduce a row (everything else in an edge body is
/// element-wise, a constant, a broadcast or a concat).
bool isContraction(Operation *op) {
  return isa<LinearOp, TypedLinearOp, RowDotOp>(op);
}

/// Splits one linear (or row_dot) whose input mixes a one-side operand with
/// something else: over `+`/`-`, `L(a ± b) = L(a) ± L(b)`; over `concat`,
/// `W·(a ‖ b) = W·(a ‖ 0) + W·(0 ‖ b)` with the parts grouped by side.
/// Returns true when it changed the body.
bool splitOne(ApplyEdgeOp ae, const DenseMap<Value, unsigned> &dep) {
  Block &body = ae.getBody().front();
  for (Operation &op : body.without_terminator()) {
    Value x, w;
    if (auto lin = dyn_cast<LinearOp>(op)) {
      x = lin.getInput();
      w = lin.getWeight();
    } else if (auto dot = dyn_cast<RowDotOp>(op)) {
      x = dot.getLhs();
      w = dot.getRhs();
      if (dep.lookup(x) == 0)
        std::swap(x, w);
    } else {
      continue;
    }
    if (dep.lookup(w) != 0 || isOneSide(dep.lookup(x)))
      continue;
    Operation *def = x.getDefiningOp();
    if (!def)
      continue;
    OpBuilder b(&op);
    Location loc = op.getLoc();
    auto apply = [&](Value in) -> Value {
      IRMapping map;
      map.map(x, in);
      return b.clone(op, map)->getResult(0);
    };
    if (isa<AddOp, SubOp>(def)) {
      Value lhs = def->getOperand(0), rhs = def->getOperand(1);
      if (lhs.getType() != x.getType() || rhs.getType() != x.getType() ||
          dep.lookup(lhs) == dep.lookup(rhs) ||
          !(isOneSide(dep.lookup(lhs)) || isOneSide(dep.lookup(rhs))))
        continue;
      Value l = apply(lhs), r = apply(rhs);
      Value sum = isa<AddOp>(def)
                      ? b.create<AddOp>(loc, l.getType(), l, r).getResult()
                      : b.create<SubOp>(loc, l.getType(), l, r).getResult();
      op.getResult(0).replaceAllUsesWith(sum);
      op.erase();
      return true;
    }
    auto cat = dyn_cast<ConcatOp>(def);
    if (!cat)
      continue;
    // Group the parts by what they depend on; the others become zeros.
    llvm::SetVector<unsigned> groups;
    for (Value part : cat.getInputs())
      groups.insert(dep.lookup(part));
    if (groups.size() < 2 ||
        llvm::none_of(groups, [](unsigned d) { return isOneSide(d); }))
      continue;
    if (llvm::any_of(cat.getInputs(), [](Value part) {
          return !cast<RankedTensorType>(part.getType()).hasStaticShape();
        })) {
      op.emitRemark() << "not split over concat: a part's width is dynamic";
      continue;
    }
    Value total;
    for (unsigned g : groups) {
      SmallVector<Value> parts;
      for (Value part : cat.getInputs()) {
        if (dep.lookup(part) == g) {
          parts.push_back(part);
          continue;
        }
        auto t = cast<RankedTensorType>(part.getType());
        parts.push_back(b.create<ConstantOp>(
            loc, DenseElementsAttr::get(t, b.getF32FloatAttr(0.0f))));
      }
      Value padded = b.create<ConcatOp>(loc, x.getType(), parts);
      Value term = apply(padded);
      total =
          total ? b.create<AddOp>(loc, term.getType(), total, term).getResult()
                : term;
    }
    op.getResult(0).replaceAllUsesWith(total);
    op.erase();
    return true;
  }
  return false;
}

/// FLOPs per row of a contraction.
int64_t contractionFlops(Operation *op) {
  auto elems = [](Value v) {
    auto t = cast<RankedTensorType>(v.getType());
    return t.hasStaticShape() ? t.getNumElements() : int64_t(-1);
  };
  if (auto lin = dyn_cast<LinearOp>(op)) {
    int64_t w = elems(lin.getWeight());
    return w < 0 ? -1 : 2 * w;
  }
  if (auto dot = dyn_cast<RowDotOp>(op)) {
    int64_t n = elems(dot.getLhs());
    return n < 0 ? -1 : 2 * n;
  }
  return -1;
}

/// NeuGraph's placement: when every input of `stage` is a result of one
/// earlier vertex stage, the work joins that stage (the previous layer's
/// ApplyVertex), which then also yields `stage`'s rows. Returns the values
/// that replace `stage`'s results.
SmallVector<Value> mergeIntoProducer(ApplyVertexOp stage, bool &joined) {
  joined = false;
  SmallVector<Value> results(stage.getResults());
  ApplyVertexOp prev;
  for (Value in : stage.getInputs()) {
    auto p = in.getDefiningOp<ApplyVertexOp>();
    if (!p || (prev && p != prev))
      return results;
    prev = p;
  }
  if (!prev || prev->getBlock() != stage->getBlock())
    return results;

  SmallVector<Value> params(prev.getParams());
  llvm::append_range(params, stage.getParams());
  SmallVector<Type> types(prev.getResultTypes());
  llvm::append_range(types, stage.getResultTypes());
  OpBuilder b(prev);
  auto merged = b.create<ApplyVertexOp>(prev.getLoc(), types, prev.getGraph(),
                                        prev.getInputs(), params);
  merged->setDiscardableAttrs(prev->getDiscardableAttrDictionary());
  Block &body = merged.getBody().front();
  Block &old = prev.getBody().front();
  IRMapping map;
  for (auto [from, to] : llvm::zip(old.getArguments(), body.getArguments()))
    map.map(from, to);
  OpBuilder bb = OpBuilder::atBlockEnd(&body);
  for (Operation &op : old.without_terminator())
    bb.clone(op, map);
  SmallVector<Value> yielded;
  for (Value v : prev.getYield().getValues())
    yielded.push_back(map.lookupOrDefault(v));
  // The stage's rows are the producer's yielded rows.
  Block &sb = stage.getBody().front();
  for (auto [arg, in] : llvm::zip(stage.getInputArgs(), stage.getInputs()))
    map.map(arg, yielded[cast<OpResult>(in).getResultNumber()]);
  for (auto [arg, i] :
       llvm::zip(stage.getParamArgs(),
                 llvm::seq<unsigned>(0, stage.getParams().size())))
    map.map(arg, body.getArgument(prev.getInputs().size() +
                                  prev.getParams().size() + i));
  for (Operation &op : sb.without_terminator())
    bb.clone(op, map);
  for (Value v : stage.getYield().getValues())
    yielded.push_back(map.lookupOrDefault(v));
  bb.create<YieldOp>(prev.getLoc(), yielded);

  unsigned n = prev.getNumResults();
  prev.replaceAllUsesWith(merged.getResults().take_front(n));
  prev.erase();
  stage.erase();
  joined = true;
  return SmallVector<Value>(merged.getResults().drop_front(n));
}

/// Reports each contraction an edge stage keeps per edge, with the reason.
void reportLeft(ApplyEdgeOp ae) {
  DenseMap<Value, unsigned> dep = dependences(ae);
  for (Operation &op : ae.getBody().front().without_terminator()) {
    if (!isContraction(&op))
      continue;
    unsigned d = dep.lookup(op.getResult(0));
    if (d & kEdge)
      op.emitRemark() << "not hoisted: depends on edge data";
    else if (d == (kSrc | kDst))
      op.emitRemark() << "not hoisted: mixes the source and destination rows";
  }
}

/// GG-NN's typed product out of its edge stage: an edge stage that only
/// computes `typed_linear(x, type, W)` of a scattered row x (static K), an
/// edge input `type` and a parameter W (T x K x N, static T), read only by
/// sum and mean gathers, becomes the row placed in its type's slot (a T x K
/// row per edge, no contraction), and each gather's rows one linear with W
/// over the vertices:
///   sum_e W[type_e] x_e = linear(sum_e place_by_type(x_e, type_e), W)
/// (a mean likewise). The per-edge grouped GEMM (2 K N FLOPs an edge)
/// becomes a GEMM over the vertices (2 T K N a vertex) and the aggregation
/// fuses (no edge tensor). False where the stage does not match.
bool typedSlots(ApplyEdgeOp ae) {
  Block &body = ae.getBody().front();
  if (ae->getNumResults() != 1 ||
      !llvm::hasSingleElement(body.without_terminator()))
    return false;
  auto tl = dyn_cast<TypedLinearOp>(body.front());
  if (!tl || ae.getYield().getValues()[0] != tl.getResult())
    return false;
  auto x = dyn_cast<BlockArgument>(tl.getInput());
  auto t = dyn_cast<BlockArgument>(tl.getType());
  auto w = dyn_cast<BlockArgument>(tl.getWeight());
  const unsigned numInputs = ae.getInputs().size();
  if (!x || !t || !w || x.getArgNumber() >= numInputs ||
      t.getArgNumber() >= numInputs || w.getArgNumber() < numInputs ||
      !ae.getInputs()[x.getArgNumber()].getDefiningOp<ScatterOp>())
    return false;
  auto rowType = cast<RankedTensorType>(tl.getInput().getType());
  auto weightType = cast<RankedTensorType>(tl.getWeight().getType());
  if (!rowType.hasStaticShape() || weightType.isDynamicDim(0))
    return false;
  SmallVector<GatherOp> gathers;
  for (Operation *user : ae->getResult(0).getUsers()) {
    auto g = dyn_cast<GatherOp>(user);
    if (!g ||
        (g.getAcc() != Accumulator::Sum && g.getAcc() != Accumulator::Mean))
      return false;
    gathers.push_back(g);
  }
  if (gathers.empty())
    return false;
  const int64_t types = weightType.getDimSize(0);
  SmallVector<int64_t> slotShape{types};
  llvm::append_range(slotShape, rowType.getShape());
  Type f32 = rowType.getElementType();
  Location loc = ae.getLoc();
  OpBuilder b(ae);
  auto place = b.create<ApplyEdgeOp>(
      loc, TypeRange{EdgeTensorType::get(slotShape, f32)}, ae.getGraph(),
      ValueRange{ae.getInputs()[x.getArgNumber()],
                 ae.getInputs()[t.getArgNumber()]},
      ValueRange{});
  {
    Block &pb = place.getBody().front();
    OpBuilder bb = OpBuilder::atBlockEnd(&pb);
    Value slots = bb.create<PlaceByTypeOp>(
        loc, RankedTensorType::get(slotShape, f32), pb.getArgument(0),
        pb.getArgument(1));
    bb.create<YieldOp>(loc, ValueRange{slots});
  }
  Value weight = ae.getParams()[w.getArgNumber() - numInputs];
  for (GatherOp g : gathers) {
    b.setInsertionPoint(g);
    Value sums =
        b.create<GatherOp>(loc, VertexTensorType::get(slotShape, f32),
                           g.getGraph(), place.getResult(0), g.getAcc(),
                           g.getSide());
    auto result = cast<VertexTensorType>(g.getType());
    auto stage = b.create<ApplyVertexOp>(loc, TypeRange{result}, g.getGraph(),
                                         ValueRange{sums}, ValueRange{weight});
    Block &vb = stage.getBody().front();
    OpBuilder vbb = OpBuilder::atBlockEnd(&vb);
    Value y = vbb.create<LinearOp>(loc, result.getRowType(), vb.getArgument(0),
                                   vb.getArgument(1));
    vbb.create<YieldOp>(loc, ValueRange{y});
    g.getResult().replaceAllUsesWith(stage.getResult(0));
    g.erase();
  }
  ae.emitRemark() << "typed product by slots: each edge's row placed in its "
                     "type's slot of "
                  << types
                  << ", the linear over the vertices after the aggregation";
  ae.erase();
  return true;
}

struct GNNHoistApplyEdge
    : public mlir::gnn::impl::GNNHoistApplyEdgeBase<GNNHoistApplyEdge> {
  using GNNHoistApplyEdgeBase::GNNHoistApplyEdgeBase;

  void runOnOperation() final {
    SmallVector<ApplyEdgeOp> stages;
    getOperation().walk([&](ApplyEdgeOp ae) { stages.push_back(ae); });
    for (ApplyEdgeOp ae : stages)
      if (!typedSlots(ae))
        hoist(ae);
    // Scatters whose rows no stage reads any more.
    getOperation().walk([](ScatterOp sc) {
      if (sc->use_empty())
        sc.erase();
    });
  }

  void hoist(ApplyEdgeOp ae) {
    while (splitOne(ae, dependences(ae)))
      ;
    eraseDeadRowOps(ae.getBody().front());
    DenseMap<Value, unsigned> dep = dependences(ae);
    Block &body = ae.getBody().front();

    // The frontier: one-side values computed in the body and read by
    // something that is not of the same side (or yielded).
    // A value that only relabels a row (stop_gradient of a block argument)
    // costs nothing per edge: hoisting it would add a vertex stage and a
    // scatter for no work saved.
    std::function<bool(Value)> isFree = [&](Value v) {
      if (isa<BlockArgument>(v))
        return true;
      auto sg = v.getDefiningOp<StopGradientOp>();
      return sg && isFree(sg.getInput());
    };
    SmallVector<Value> frontier;
    for (Operation &op : body.without_terminator()) {
      Value r = op.getResult(0);
      unsigned d = dep.lookup(r);
      if (op.getNumResults() != 1 || !isOneSide(d) || isFree(r))
        continue;
      if (llvm::any_of(r.getUsers(), [&](Operation *u) {
            return isa<YieldOp>(u) || dep.lookup(u->getResult(0)) != d;
          }))
        frontier.push_back(r);
    }
    if (frontier.empty()) {
      reportLeft(ae);
      return;
    }

    // The backward slice of the frontier within the body, in body order.
    llvm::SetVector<Operation *> slice;
    std::function<void(Value)> collect = [&](Value v) {
      Operation *def = v.getDefiningOp();
      if (!def || slice.contains(def))
        return;
      for (Value o : def->getOperands())
        collect(o);
      slice.insert(def);
    };
    for (Value v : frontier)
      collect(v);
    llvm::SetVector<Value> vertexInputs, params; // of the new vertex stage
    llvm::SetVector<BlockArgument> usedArgs;
    for (Operation *op : slice)
      for (Value o : op->getOperands())
        if (auto arg = dyn_cast<BlockArgument>(o))
          usedArgs.insert(arg);
    unsigned numInputs = ae.getInputs().size();
    for (BlockArgument arg : usedArgs) {
      unsigned i = arg.getArgNumber();
      if (i < numInputs)
        vertexInputs.insert(
            ae.getInputs()[i].getDefiningOp<ScatterOp>().getInput());
      else
        params.insert(ae.getParams()[i - numInputs]);
    }

    // The vertex stage: the slice on every vertex, yielding the frontier.
    OpBuilder b(ae);
    Location loc = ae.getLoc();
    SmallVector<Type> resultTypes;
    for (Value v : frontier) {
      auto t = cast<RankedTensorType>(v.getType());
      resultTypes.push_back(
          VertexTensorType::get(t.getShape(), t.getElementType()));
    }
    auto stage = b.create<ApplyVertexOp>(loc, resultTypes, ae.getGraph(),
                                         vertexInputs.getArrayRef(),
                                         params.getArrayRef());
    Block &vb = stage.getBody().front();
    IRMapping map;
    for (BlockArgument arg : usedArgs) {
      unsigned i = arg.getArgNumber();
      if (i < numInputs) {
        Value v = ae.getInputs()[i].getDefiningOp<ScatterOp>().getInput();
        map.map(arg, vb.getArgument(llvm::find(vertexInputs, v) -
                                    vertexInputs.begin()));
      } else {
        Value p = ae.getParams()[i - numInputs];
        map.map(arg, vb.getArgument(vertexInputs.size() +
                                    (llvm::find(params, p) - params.begin())));
      }
    }
    OpBuilder vbb = OpBuilder::atBlockEnd(&vb);
    for (Operation *op : slice)
      vbb.clone(*op, map);
    SmallVector<Value> yielded;
    for (Value v : frontier)
      yielded.push_back(map.lookup(v));
    vbb.create<YieldOp>(loc, yielded);

    // Scatter the new vertex rows to the side they came from.
    SmallVector<Value> scattered;
    unsigned numSrc = 0, numDst = 0;
    bool joined;
    SmallVector<Value> rows = mergeIntoProducer(stage, joined);
    for (auto [v, r] : llvm::zip(frontier, rows)) {
      Side side = dep.lookup(v) == kSrc ? Side::Src : Side::Dst;
      (side == Side::Src ? numSrc : numDst) += 1;
      auto t = cast<RankedTensorType>(v.getType());
      scattered.push_back(b.create<ScatterOp>(
          loc, EdgeTensorType::get(t.getShape(), t.getElementType()),
          ae.getGraph(), r, side));
    }
    int64_t flops = 0;
    bool flopsKnown = true;
    for (Operation *op : slice) {
      if (!isContraction(op))
        continue;
      int64_t f = contractionFlops(op);
      flopsKnown &= f >= 0;
      flops += f;
    }
    InFlightDiagnostic remark = ae.emitRemark();
    remark << "hoisted " << slice.size() << " ops to "
           << (joined ? "the producing vertex stage" : "a new vertex stage")
           << ": " << numSrc << " source-side and " << numDst
           << " destination-side rows now scattered";
    if (flopsKnown && flops)
      remark << "; " << flops << " contraction FLOPs per edge now per vertex";
    else if (flops || !flopsKnown)
      remark << "; contractions now per vertex";
    remark.report();
    reportLeft(rebuildStage(ae, scattered, frontier));
  }
};

} // namespace
