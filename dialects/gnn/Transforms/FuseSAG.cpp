//===- FuseSAG.cpp - --gnn-fuse-sag ---------------------------------------===//
//
// Scatter -> element-wise ApplyEdge -> Gather becomes one gnn.fused_gather
// (NeuGraph's Fused-Gather, §3.4; Passes.td has the contract).
//
//===----------------------------------------------------------------------===//

#include "gnn/IR/GNNOps.h"
#include "gnn/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::gnn {
#define GEN_PASS_DEF_GNNFUSESAG
#include "gnn/Transforms/Passes.h.inc"
} // namespace mlir::gnn

using namespace mlir;
using namespace mlir::gnn;

namespace {

/// The first op of `ae`'s body a fused_gather cannot hold, or null.
Operation *firstUnfusable(ApplyEdgeOp ae) {
  for (Operation &op : ae.getBody().front().without_terminator())
    if (!isFusableRowOp(&op))
      return &op;
  return nullptr;
}

/// Whether a body value of type `t` can be computed per element of a
/// `result` row: the same number of elements, one element (broadcast), or
/// per-head scalars of a `heads x F` result.
bool broadcastsTo(RankedTensorType t, RankedTensorType result) {
  if (!t.hasStaticShape() || t.getNumElements() == 1)
    return t.hasStaticShape() || t == result;
  if (t.getShape() == result.getShape())
    return true;
  return result.getRank() == 2 && t.getRank() == 1 &&
         t.getDimSize(0) == result.getDimSize(0);
}

/// One fusion: the edge stages whose bodies are inlined into one
/// fused_gather and the operands it reads.
class Fusion {
public:
  explicit Fusion(GatherOp gather) : gather(gather) {}

  /// Collects the stages and operands; on failure `reason` says why.
  LogicalResult plan() {
    Value in = gather.getInput();
    if (auto sc = in.getDefiningOp<ScatterOp>()) {
      // A plain scatter: the body only forwards the row.
      (sc.getSide() == Side::Src ? src : dst).insert(sc.getInput());
      return success();
    }
    auto ae = in.getDefiningOp<ApplyEdgeOp>();
    if (!ae) {
      reason = "its input is not a scatter or an edge stage";
      return failure();
    }
    if (Operation *bad = firstUnfusable(ae)) {
      reason = ("the edge stage computes '" + bad->getName().getStringRef() +
                "', which is not element-wise")
                   .str();
      return failure();
    }
    return collect(ae);
  }

  /// Builds the fused_gather (with the chosen edges of a max/min when
  /// `withArg`) and replaces the gather with it.
  FusedGatherOp rewrite(bool withArg = false) {
    OpBuilder b(gather);
    auto fused = b.create<FusedGatherOp>(
        gather.getLoc(), gather.getType(), gather.getGraph(),
        src.getArrayRef(), dst.getArrayRef(), edge.getArrayRef(),
        params.getArrayRef(), gather.getAcc(), gather.getSide(), withArg);
    Block &body = fused.getBody().front();
    OpBuilder bb = OpBuilder::atBlockEnd(&body);
    Value in = gather.getInput();
    Value row;
    if (auto sc = in.getDefiningOp<ScatterOp>())
      row = rowArg(body, sc);
    else
      row = emit(bb, body, cast<OpResult>(in));
    bb.create<YieldOp>(gather.getLoc(), ValueRange{row});
    // The inlined bodies' rows for other results are not needed here.
    SmallVector<Operation *> ops;
    for (Operation &op : body.without_terminator())
      ops.push_back(&op);
    for (Operation *op : llvm::reverse(ops))
      if (op->use_empty())
        op->erase();
    gather.getResult().replaceAllUsesWith(fused.getResult());
    gather.erase();
    return fused;
  }

  unsigned numStages() const { return stages.size(); }
  unsigned numOps() const {
    unsigned n = 0;
    for (ApplyEdgeOp ae : stages)
      n += ae.getBody().front().getOperations().size() - 1;
    return n;
  }

  std::string reason;

private:
  /// An edge stage whose rows feed the fusion is inlined when it is
  /// element-wise and nothing but gathers and edge stages read it (so it
  /// dies once they are fused); otherwise its edge tensor is read.
  static bool inlinable(ApplyEdgeOp p) {
    if (firstUnfusable(p))
      return false;
    return llvm::all_of(p->getUsers(), [](Operation *u) {
      return isa<GatherOp, ApplyEdgeOp>(u);
    });
  }

  LogicalResult collect(ApplyEdgeOp ae) {
    if (!stages.insert(ae))
      return success();
    auto result = cast<RankedTensorType>(
        cast<VertexTensorType>(gather.getType()).getRowType());
    for (Operation &op : ae.getBody().front().without_terminator())
      for (Value v : op.getResults())
        if (!broadcastsTo(cast<RankedTensorType>(v.getType()), result)) {
          reason = "a row of type " + typeString(v.getType()) +
                   " does not broadcast to the gathered row " +
                   typeString(result);
          return failure();
        }
    for (auto [arg, in] : llvm::zip(ae.getInputArgs(), ae.getInputs())) {
      if (arg.use_empty())
        continue;
      if (auto sc = in.getDefiningOp<ScatterOp>()) {
        (sc.getSide() == Side::Src ? src : dst).insert(sc.getInput());
        continue;
      }
      auto p = in.getDefiningOp<ApplyEdgeOp>();
      if (p && inlinable(p)) {
        if (failed(collect(p)))
          return failure();
        continue;
      }
      edge.insert(in);
    }
    for (auto [arg, p] : llvm::zip(ae.getParamArgs(), ae.getParams()))
      if (!arg.use_empty())
        params.insert(p);
    return success();
  }

  static std::string typeString(Type t) {
    std::string s;
    llvm::raw_string_ostream os(s);
    os << t;
    return s;
  }

  /// The fused body's argument for the rows of `sc`.
  Value rowArg(Block &body, ScatterOp sc) {
    unsigned i = sc.getSide() == Side::Src
                     ? llvm::find(src, sc.getInput()) - src.begin()
                     : src.size() + (llvm::find(dst, sc.getInput()) -
                                     dst.begin());
    return body.getArgument(i);
  }

  /// Clones the body of `r`'s stage into `body` (once) and returns the row
  /// it yields for `r`.
  Value emit(OpBuilder &bb, Block &body, OpResult r) {
    auto ae = cast<ApplyEdgeOp>(r.getOwner());
    auto it = emitted.find(ae);
    if (it == emitted.end()) {
      IRMapping map;
      for (auto [arg, in] : llvm::zip(ae.getInputArgs(), ae.getInputs())) {
        if (arg.use_empty())
          continue;
        if (auto sc = in.getDefiningOp<ScatterOp>()) {
          map.map(arg, rowArg(body, sc));
        } else if (auto p = in.getDefiningOp<ApplyEdgeOp>();
                   p && stages.contains(p)) {
          map.map(arg, emit(bb, body, cast<OpResult>(in)));
        } else {
          map.map(arg, body.getArgument(src.size() + dst.size() +
                                        (llvm::find(edge, in) - edge.begin())));
        }
      }
      unsigned base = src.size() + dst.size() + edge.size();
      for (auto [arg, p] : llvm::zip(ae.getParamArgs(), ae.getParams()))
        if (!arg.use_empty())
          map.map(arg,
                  body.getArgument(base + (llvm::find(params, p) -
                                           params.begin())));
      for (Operation &op : ae.getBody().front().without_terminator())
        bb.clone(op, map);
      SmallVector<Value> yielded;
      for (Value v : ae.getYield().getValues())
        yielded.push_back(map.lookup(v));
      it = emitted.try_emplace(ae, std::move(yielded)).first;
    }
    return it->second[r.getResultNumber()];
  }

  GatherOp gather;
  llvm::SetVector<ApplyEdgeOp> stages;
  llvm::SetVector<Value> src, dst, edge, params;
  DenseMap<Operation *, SmallVector<Value>> emitted;
};

/// Erases edge stages and scatters nothing reads any more.
void eraseDeadEdgeOps(Operation *root) {
  bool changed = true;
  while (changed) {
    changed = false;
    SmallVector<Operation *> dead;
    root->walk([&](Operation *op) {
      if (isa<ApplyEdgeOp, ScatterOp>(op) && op->use_empty())
        dead.push_back(op);
    });
    for (Operation *op : dead)
      op->erase();
    changed = !dead.empty();
  }
}

/// Whether every reader of `edges` will be fused: gathers that plan, and
/// element-wise edge stages read only by such gathers.
bool readersFuse(Value edges) {
  auto gatherFuses = [](Operation *u) {
    auto g = dyn_cast<GatherOp>(u);
    return g && succeeded(Fusion(g).plan());
  };
  return llvm::all_of(edges.getUsers(), [&](Operation *u) {
    if (isa<GatherOp>(u))
      return gatherFuses(u);
    auto ae = dyn_cast<ApplyEdgeOp>(u);
    return ae && !firstUnfusable(ae) &&
           llvm::all_of(ae->getUsers(), gatherFuses);
  });
}

/// The backward of a max/min gather without an |E|-sized tensor: the
/// forward gather, fused, also yields the edge it chose per element, and
/// the `gather_grad` becomes an edge stage selecting the gradient on that
/// edge (`gnn.edge_select`), which the readers' fusions inline.
void fuseGatherGrad(GatherGradOp gg) {
  GatherOp fwd;
  for (Operation *u : gg.getInput().getUsers())
    if (auto g = dyn_cast<GatherOp>(u);
        g && g.getAcc() == gg.getAcc() && g.getSide() == gg.getSide())
      fwd = g;
  if (!fwd) {
    gg.emitRemark() << "not fused: no forward gather of the same edges";
    return;
  }
  Fusion f(fwd);
  if (failed(f.plan())) {
    gg.emitRemark() << "not fused: the forward gather is not fused ("
                    << f.reason << ")";
    return;
  }
  fwd.emitRemark() << "fused: with the chosen edges, for the backward pass";
  FusedGatherOp fused = f.rewrite(/*withArg=*/true);

  OpBuilder b(gg);
  Location loc = gg.getLoc();
  Value graph = gg.getGraph();
  auto rows = [&](Value v) {
    auto t = cast<VertexTensorType>(v.getType());
    return b.create<ScatterOp>(
        loc, EdgeTensorType::get(t.getRowShape(), t.getElementType()), graph,
        v, gg.getSide());
  };
  Value arg = rows(fused.getArg()), grad = rows(gg.getGrad());
  auto select = b.create<ApplyEdgeOp>(loc, TypeRange{gg.getType()}, graph,
                                      ValueRange{arg, grad}, ValueRange{});
  {
    Block &body = select.getBody().front();
    OpBuilder bb = OpBuilder::atBlockEnd(&body);
    Value picked = bb.create<EdgeSelectOp>(loc, body.getArgument(0),
                                           body.getArgument(1));
    bb.create<YieldOp>(loc, ValueRange{picked});
  }
  gg.getResult().replaceAllUsesWith(select.getResult(0));
  if (!readersFuse(select.getResult(0))) {
    select.getResult(0).replaceAllUsesWith(gg.getResult());
    select.erase();
    gg.emitRemark() << "not fused: a reader of the routed gradient is not "
                       "fused";
    return;
  }
  gg.emitRemark() << "fused: the gradient is routed per edge through the "
                     "forward's chosen edges";
  gg.erase();
}

struct GNNFuseSAG : public mlir::gnn::impl::GNNFuseSAGBase<GNNFuseSAG> {
  using GNNFuseSAGBase::GNNFuseSAGBase;

  void runOnOperation() final {
    SmallVector<GatherGradOp> grads;
    getOperation().walk([&](GatherGradOp gg) { grads.push_back(gg); });
    for (GatherGradOp gg : grads)
      fuseGatherGrad(gg);
    eraseDeadEdgeOps(getOperation());

    SmallVector<GatherOp> gathers;
    getOperation().walk([&](GatherOp g) { gathers.push_back(g); });
    for (GatherOp g : gathers) {
      Fusion f(g);
      if (failed(f.plan())) {
        g.emitRemark() << "not fused: " << f.reason;
        continue;
      }
      InFlightDiagnostic remark = g.emitRemark();
      remark << "fused: scatter";
      if (f.numStages())
        remark << ", " << f.numStages() << " edge stage(s) of " << f.numOps()
               << " ops";
      remark << " and gather " << stringifyAccumulator(g.getAcc())
             << " into one fused_gather";
      remark.report();
      f.rewrite();
    }
    eraseDeadEdgeOps(getOperation());
  }
};

} // namespace
